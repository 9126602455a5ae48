"""A load test of the delivered cluster priced as the plan prices its estimate.

``vllm bench serve`` measures the output throughput, the total token throughput and the latencies at
one concurrency.  The cost per million tokens at the measured throughput is the arithmetic of
:mod:`.tokens` over the same inputs: the plan's annual cost on its economics basis (buy, or lease when
only a lease is priced: ``economics.basis``), split between input and output tokens by their share of
accelerator time (``tco.tokens.input_cost_share``), over the tokens served in a year at the request's
``commercial.utilisation`` — :data:`.money.SECONDS_PER_YEAR` × utilisation × tokens per second.  Only the
throughput is the measurement's.

Pure: the plan's JSON (``plan_to_dict``) and the benchmark's figures in, :class:`Measured` out; every
amount a Decimal, to the cent as the plan's own cost per token.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from .money import MILLION, SECONDS_PER_YEAR, as_decimal
from .tokens import per_m

MILLISECONDS = Decimal(1000)


def _dec(value: Any) -> Decimal | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        number = as_decimal(value) if isinstance(value, int | float | Decimal) else Decimal(str(value))
    except (InvalidOperation, ValueError):
        return None
    return number if number.is_finite() else None


def cost_per_m_tokens(
    annual_cost: Decimal, share: Decimal, tokens_per_s: Decimal, utilisation: Decimal
) -> Decimal | None:
    """``annual_cost × share`` over the million tokens a year at ``tokens_per_s`` for the utilised share
    of the year: the plan's own arithmetic (``tokens.per_m`` over ``CostDrivers.m_tokens``'s year);
    None without tokens."""
    return per_m(annual_cost, share, tokens_per_s * SECONDS_PER_YEAR * utilisation / MILLION)


@dataclass(frozen=True)
class Measured:
    """What a load test measured, and its cost per million tokens on the plan's basis."""

    basis: str
    currency: str
    concurrency: int | None
    output_tokens_per_s: Decimal
    input_tokens_per_s: Decimal | None
    ttft_s: Decimal | None
    tpot_s: Decimal | None
    ttft_p90_s: Decimal | None
    ttft_p99_s: Decimal | None
    cost_per_m_output: Decimal | None
    cost_per_m_input: Decimal | None

    def figures(self) -> dict[str, dict[str, Any]]:
        """The measured values keyed as the section ``MEASURED`` names them (``measured.*``), each with
        the unit of the plan's figure it stands beside, so both columns format alike."""
        money = f"{self.currency}/M tokens"
        values = {
            "output_tokens_per_s": (self.output_tokens_per_s, "tokens/s"),
            "ttft_s": (self.ttft_s, "s"),
            "tpot_s": (self.tpot_s, "s"),
            "ttft_p90_s": (self.ttft_p90_s, "s"),
            "ttft_p99_s": (self.ttft_p99_s, "s"),
            "cost_per_m_output": (self.cost_per_m_output, money),
            "cost_per_m_input": (self.cost_per_m_input, money),
        }
        return {
            f"measured.{k}": {"value": v, "unit": unit} for k, (v, unit) in values.items() if v is not None
        }


def measured(bench: Mapping[str, Any], plan: Mapping[str, Any], request: Mapping[str, Any]) -> Measured:
    """The load test ``bench`` (``vllm bench serve`` figures: ``output_throughput``,
    ``total_token_throughput``, ``mean_ttft_ms``, ``mean_tpot_ms``, ``p90_ttft_ms`` …) priced with the
    plan's economics: ``plan`` is the plan's JSON, ``request`` the request it was planned from."""
    tco = plan.get("tco") or {}
    tokens = tco.get("tokens") or {}
    economics = plan.get("economics") or {}
    commercial = request.get("commercial") or {}
    basis = "lease" if economics.get("basis") == "lease" else "buy"
    currency = str(economics.get("currency") or tco.get("currency") or commercial.get("currency") or "CNY")
    utilisation = _dec(commercial.get("utilisation"))
    if utilisation is None:
        utilisation = _dec(tco.get("utilisation"))
    annual = _dec(tokens.get(f"annual_cost_{basis}"))
    share = _dec(tokens.get("input_cost_share")) or Decimal(0)

    out_tps = _dec(bench.get("output_throughput")) or Decimal(0)
    total_tps = _dec(bench.get("total_token_throughput"))
    in_tps = total_tps - out_tps if total_tps is not None and total_tps >= out_tps else None

    cost_out = cost_in = None
    if annual and utilisation and out_tps > 0:
        cost_out = cost_per_m_tokens(annual, 1 - share, out_tps, utilisation)
        if in_tps:
            cost_in = cost_per_m_tokens(annual, share, in_tps, utilisation)

    def seconds(key: str) -> Decimal | None:
        ms = _dec(bench.get(key))
        return ms / MILLISECONDS if ms is not None else None

    concurrency = bench.get("max_concurrency")
    return Measured(
        basis=basis,
        currency=currency,
        concurrency=int(concurrency) if isinstance(concurrency, int | float) else None,
        output_tokens_per_s=out_tps,
        input_tokens_per_s=in_tps,
        ttft_s=seconds("mean_ttft_ms"),
        tpot_s=seconds("mean_tpot_ms"),
        ttft_p90_s=seconds("p90_ttft_ms"),
        ttft_p99_s=seconds("p99_ttft_ms"),
        cost_per_m_output=cost_out,
        cost_per_m_input=cost_in,
    )
