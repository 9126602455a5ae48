"""Economics over load (engine/economics.py): unit cost along the performance curve and the
break-even concurrency against the model's public API price, recomputed here from the plan's
own TCO annual cost and throughput curve."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

import pytest

from configurator import reference
from configurator.engine.plan import plan
from configurator.engine.serialize import plan_to_dict

YEAR = 31_536_000
A3_4 = reference.CASES["a3-4-single"]


def _cheap(price: str) -> dict:
    """Servers at ``price`` each and the cluster busy all year, so the API crossing falls inside the curve."""
    return {**A3_4, "commercial": {"server_unit_price": price, "utilisation": "1"}}


def _saving(result, point) -> float:
    tokens = result.tco.tokens
    w = result.request.workload
    u = float(result.request.commercial.utilisation)
    tout = point.output_tokens_per_s * YEAR * u / 1e6
    tin = tout * w.input_tokens / w.output_tokens
    api = tin * float(tokens.api_price_input_per_m) + tout * float(tokens.api_price_output_per_m)
    return 1 - float(tokens.annual_cost_buy) / api


def test_unit_cost_along_the_curve_is_the_annual_cost_over_the_tokens_served():
    result = plan(reference.request(A3_4))
    econ = result.economics
    tokens = result.tco.tokens
    u = float(result.request.commercial.utilisation)
    share = float(tokens.input_cost_share)
    assert [p.concurrency for p in econ.points] == [p.concurrency for p in result.performance.curve]
    for point in econ.points:
        tout = point.output_tokens_per_s * YEAR * u / 1e6
        tin = tout * 8192 / 1024
        assert float(point.cost_per_m_output) == pytest.approx(
            float(tokens.annual_cost_buy) * (1 - share) / tout, abs=0.01
        )
        assert float(point.cost_per_m_input) == pytest.approx(
            float(tokens.annual_cost_buy) * share / tin, abs=0.01
        )
        assert float(point.saving_vs_api) == pytest.approx(_saving(result, point), abs=1e-4)
    costs = [p.cost_per_m_output for p in econ.points]
    assert costs == sorted(costs, reverse=True)  # more load, cheaper tokens


def test_break_even_concurrency_is_where_the_saving_crosses_zero():
    # a cheap cluster (¥30 k per A3, busy all year) so that the API crossing falls inside the curve
    result = plan(reference.request(_cheap("30000")))
    econ = result.economics
    pts = econ.points
    savings = [_saving(result, p) for p in pts]
    i = next(k for k, s in enumerate(savings) if s >= 0)
    assert i > 0, "the crossing must lie between two curve points for this test"
    a, b = pts[i - 1], pts[i]
    t = (0 - savings[i - 1]) / (savings[i] - savings[i - 1])
    expected = a.concurrency + t * (b.concurrency - a.concurrency)
    assert econ.break_even_concurrency == pytest.approx(expected, abs=0.06)
    check = next(c for c in result.checks if c.code == "commercial.api_break_even")
    assert f"{econ.break_even_concurrency:g}" in check.message_en
    assert "60 %" in check.message_en and "60%" in check.message_zh


def test_when_the_api_is_always_cheaper_the_check_gives_the_throughput_needed():
    # K3 on 4 × A3 without speculative decoding (the catalog's draft brings it to break-even at 53 users).
    result = plan(reference.request({**A3_4, "serving": {"speculative": {"method": ""}}}))
    econ = result.economics
    assert econ.break_even_concurrency is None
    check = next(c for c in result.checks if c.code == "commercial.api_cheaper_at_every_load")
    full = max(econ.points, key=lambda p: p.api_cost_per_year)
    need = Decimal(econ.annual_cost / full.api_cost_per_year).quantize(Decimal("0.1"))
    assert check.figures["throughput_multiple_for_break_even"] == str(need)
    assert f"{need} ×" in check.message_en


def test_economics_serialise_with_the_plan():
    data = plan_to_dict(plan(reference.request(reference.CASES["a3-16-8p8d"])))
    assert data["economics"]["points"]
    assert "economics.break_even_concurrency" in data["figures"]


def test_cached_input_is_priced_at_the_apis_cache_price_for_the_prefix_hit_share():
    # The seed gives K3 no cached-input price (catalog/seed/models.yaml kimi-k3 api_price_cached_input_per_m
    # null, S1 §3.3), so this one is set on the seeded model here; $3 / $15 per M in / out are the seed's
    # (same record, S1 §3.3).
    base = reference.request({**A3_4, "performance": {"prefix_cache_hit_rate": 0.5}})
    req = replace(base, model=replace(base.model, api_price_cached_input_per_m=Decimal("0.60")))  # vs $3
    result = plan(req)
    econ = result.economics
    usd = float(req.commercial.usd_rate)
    assert float(econ.api_price_cached_input_per_m) == pytest.approx(0.60 * usd, abs=0.01)
    u = float(req.commercial.utilisation)
    point = econ.points[-1]
    tout = point.output_tokens_per_s * YEAR * u / 1e6
    tin = tout * 8192 / 1024
    effective_in = 0.5 * 3 * usd + 0.5 * 0.60 * usd
    assert float(point.api_cost_per_year) == pytest.approx(tin * effective_in + tout * 15 * usd, rel=1e-4)
