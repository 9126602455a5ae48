"""The design capacity carried through the cross-validated error band (performance/design.py).

The band is the family's leave-one-source-out predicted ÷ measured throughput
(``configurator/engine/calibration_fit.json``, docs/performance.md §3).  At its high end the hardware
runs every step and prefill pass ``band_high`` × slower than estimated; in the closed loop every
latency at a given concurrency then grows by that factor, so the design point of that hardware is the
estimate's design point within the targets ÷ ``band_high`` (``scaled_targets``).  The plan-level tests
check that equivalence through the request itself: a request stating the divided targets plans the
same concurrency as the conservative end.
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from configurator import reference, sections
from configurator.engine import serving_model as sm
from configurator.engine.performance.design import DEFAULT_TARGETS, band_concurrency, scaled_targets
from configurator.engine.plan import plan
from configurator.engine.serialize import plan_to_dict

FIT = Path(__file__).resolve().parents[2] / "configurator" / "engine" / "calibration_fit.json"


def _point(c: float) -> sm.OperatingPoint:
    """A closed loop (hand-made): c requests/s, 100 output tokens each, TTFT 0.2 s and TPOT 10 ms per
    concurrent user, no queue (TPOT P90 = 1.08 × mean, TTFT P90 = 1.3 × mean: serving_model)."""
    return sm.OperatingPoint(c, c, c, 100 * c, 0.2 * c, 0.01 * c, 0.0, False)


def test_scaled_targets_divide_every_latency_target():
    assert scaled_targets({"ttft_p90_s": 10.0, "tpot_p90_ms": 100.0}, 1.25) == {
        "ttft_p90_s": 8.0,
        "tpot_p90_ms": 80.0,
    }


@pytest.mark.parametrize(
    ("factor", "expected"),
    [
        # TPOT P90 = 10.8 ms × c; within 100 ms ÷ 1.25 = 80 ms: c ≤ 80 / 10.8 = 7.4 → 7
        (1.25, 7),
        # within 100 ÷ 0.8 = 125 ms: c ≤ 11.6 → 11 (TTFT P90 0.26 s × 11 = 2.9 s ≤ 10 ÷ 0.8)
        (0.8, 11),
        # a hardware twice as slow: 50 ms → c ≤ 4.6 → 4
        (2.0, 4),
    ],
)
def test_band_concurrency_on_a_hand_made_loop(factor, expected):
    targets = {"ttft_p90_s": 10.0, "tpot_p90_ms": 100.0}
    c, tps = band_concurrency(_point, 64, targets, factor, 100, kv_bound=True, saturates_early=False)
    assert c == expected
    # requests/s at c is c (the hand-made loop), × 100 output tokens, ÷ the factor: the slower hardware
    assert tps == pytest.approx(expected * 100 / factor)


def test_band_concurrency_is_zero_when_one_request_misses():
    # TPOT P90 at one user 10.8 ms; a hardware 10 × slower misses the 100 ms target at once
    assert band_concurrency(
        _point, 64, {"tpot_p90_ms": 100.0}, 10.0, 100, kv_bound=True, saturates_early=False
    ) == (
        0,
        0.0,
    )


@pytest.fixture(scope="module")
def a3():
    return plan(reference.request(reference.case("a3-4-single")))


def test_a3_band_is_the_families_cross_validated_band(a3):
    fit = json.loads(FIT.read_text(encoding="utf-8"))["families"]["ascend-a3"]
    dp = a3.performance.design_point
    assert (dp.band_low, dp.band_high) == (fit["band_low"], fit["band_high"])
    assert 0 < dp.concurrency_low <= dp.concurrency <= dp.concurrency_high


def test_conservative_end_is_the_design_point_of_the_divided_targets(a3):
    """Independent route: the request states the default targets ÷ band_high (docs/performance.md §8:
    TTFT P90 10 s, TPOT P90 100 ms assumed when none is set) and plans its own design point."""
    dp = a3.performance.design_point
    assert dp.targets_assumed
    for factor, concurrency, tps in (
        (dp.band_high, dp.concurrency_low, dp.output_tokens_per_s_low),
        (dp.band_low, dp.concurrency_high, dp.output_tokens_per_s_high),
    ):
        case = reference.case("a3-4-single")
        case["workload"] = {
            **case.get("workload", {}),
            "ttft_p90_target_s": DEFAULT_TARGETS["ttft_p90_s"] / factor,
            "tpot_p90_target_ms": DEFAULT_TARGETS["tpot_p90_ms"] / factor,
        }
        other = plan(reference.request(case)).performance.design_point
        assert other.concurrency == concurrency
        assert tps == pytest.approx(other.output_tokens_per_s / factor, rel=1e-9)


def test_cost_per_token_at_the_conservative_end(a3):
    """annual cost × output share ÷ output tokens a year at the conservative throughput (engine/economics.py
    module doc), in Decimal, from the plan's own TCO figures."""
    dp = a3.performance.design_point
    tokens = a3.tco.tokens
    c = a3.request.commercial
    out_tps = Decimal(str(round(dp.output_tokens_per_s_low, 6)))
    per_year = out_tps * 31_536_000 * Decimal(str(c.utilisation)) / 1_000_000
    expected = (tokens.annual_cost_buy * (1 - Decimal(str(tokens.input_cost_share))) / per_year).quantize(
        Decimal("0.01")
    )
    e = a3.economics
    assert e.design_conservative is not None
    assert e.design_conservative.concurrency == dp.concurrency_low
    assert e.design_conservative.cost_per_m_output == expected
    # slower hardware, fewer tokens for the same annual cost: dearer than the expected figure
    assert e.design_conservative.cost_per_m_output > e.design.cost_per_m_output
    assert a3.economics.figures["economics.design_conservative.cost_per_m_output"].value == expected


@pytest.mark.parametrize("lang", ["en", "zh-hans"])
def test_design_section_rows_label_both_ends(a3, lang):
    figures = plan_to_dict(a3)["figures"]
    rows = {r["key"]: r for r in sections.rows(sections.DESIGN, figures, lang)}
    dp = a3.performance.design_point
    band = rows["performance.design.concurrency_range"]
    assert band["text"] == f"{dp.concurrency_low:,}–{dp.concurrency_high:,}"
    expected_label = rows["economics.design.cost_per_m_output"]["label"]
    conservative_label = rows["economics.design_conservative.cost_per_m_output"]["label"]
    if lang == "en":
        assert "(expected)" in expected_label and "(conservative)" in conservative_label
    else:
        assert "预期" in expected_label and "保守" in conservative_label
        # the customer's language only: no Latin letters in the Chinese labels of the band
        for key in (
            "performance.design.concurrency_range",
            "economics.design_conservative.cost_per_m_output",
        ):
            assert not any("a" <= ch.lower() <= "z" for ch in rows[key]["label"].replace("Token", ""))
