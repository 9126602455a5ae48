"""The measured cost per million tokens: the plan's annual cost on its basis, split by the input share,
over the tokens a year of the measured throughput at the request's utilisation (engine/tco/measured.py).

The expected figures are worked out here from the stated inputs with exact fractions, not with the
engine's helpers: 8 760 h × 3 600 s a year, the utilisation the request states (never a default).
"""

from __future__ import annotations

from decimal import ROUND_HALF_EVEN, Decimal
from fractions import Fraction

from configurator.engine.tco.measured import measured

YEAR_S = 8760 * 3600


def _cents(x: Fraction) -> Decimal:
    return (Decimal(x.numerator) / Decimal(x.denominator)).quantize(Decimal("0.01"), rounding=ROUND_HALF_EVEN)


def _plan(basis: str = "buy") -> dict:
    return {
        "economics": {"basis": basis, "currency": "CNY"},
        "tco": {
            "currency": "CNY",
            "utilisation": "0.6",
            "tokens": {
                "annual_cost_buy": "1000000.00",
                "annual_cost_lease": "1800000.00",
                "input_cost_share": "0.25",
            },
        },
    }


BENCH = {
    "output_throughput": 100.0,
    "total_token_throughput": 500.0,
    "mean_ttft_ms": 250.0,
    "mean_tpot_ms": 20.0,
    "p90_ttft_ms": 410.0,
    "max_concurrency": 8,
}


def test_cost_per_token_from_the_plans_inputs_and_the_measured_throughput():
    m = measured(BENCH, _plan(), {"commercial": {"utilisation": "0.5"}})
    out_m = Fraction(100) * YEAR_S * Fraction(1, 2) / 10**6  # 1 576.8 million output tokens a year
    in_m = Fraction(400) * YEAR_S * Fraction(1, 2) / 10**6
    assert m.cost_per_m_output == _cents(Fraction(1_000_000) * Fraction(3, 4) / out_m) == Decimal("475.65")
    assert m.cost_per_m_input == _cents(Fraction(1_000_000) * Fraction(1, 4) / in_m) == Decimal("39.64")
    assert m.input_tokens_per_s == Decimal(400)
    assert (m.ttft_s, m.tpot_s, m.ttft_p90_s, m.ttft_p99_s) == (
        Decimal("0.25"),
        Decimal("0.02"),
        Decimal("0.41"),
        None,
    )
    assert m.basis == "buy" and m.concurrency == 8
    assert all(
        isinstance(v, Decimal) for v in (m.cost_per_m_output, m.cost_per_m_input, m.output_tokens_per_s)
    )


def test_lease_basis_and_the_plans_utilisation_when_the_request_states_none():
    m = measured(BENCH, _plan("lease"), {"commercial": {}})
    out_m = Fraction(100) * YEAR_S * Fraction(3, 5) / 10**6
    assert m.basis == "lease"
    assert m.cost_per_m_output == _cents(Fraction(1_800_000) * Fraction(3, 4) / out_m)


def test_no_cost_without_a_throughput_or_a_tco():
    assert (
        measured({"output_throughput": 0}, _plan(), {"commercial": {"utilisation": "0.5"}}).cost_per_m_output
        is None
    )
    m = measured(BENCH, {}, {"commercial": {"utilisation": "0.5"}})
    assert m.cost_per_m_output is None and m.cost_per_m_input is None
    assert set(m.figures()) == {
        "measured.output_tokens_per_s",
        "measured.ttft_s",
        "measured.tpot_s",
        "measured.ttft_p90_s",
    }
