"""Sized to the workload (issue 25): the design-point search, the advice pass, and the commercial
defaults (standby at idle power, residual value at book value).  Expected figures are computed here."""

from __future__ import annotations

import dataclasses
from decimal import Decimal

import pytest

from configurator import reference
from configurator.engine import serving_model as sm
from configurator.engine.advice import advise
from configurator.engine.performance.design import batch_cap, search
from configurator.engine.plan import plan
from configurator.engine.types import Check, Severity


def _op(c: float, *, tpot_ms_per_user: float = 2.0, base_ms: float = 40.0, ttft_s: float = 1.0):
    """A synthetic operating point whose TPOT grows by 2 ms per concurrent request."""
    tpot = (base_ms + tpot_ms_per_user * c) / 1000
    return sm.OperatingPoint(c, c, c / 10, c * 100, ttft_s, tpot, 0.0, False)


def test_the_search_finds_the_last_concurrency_within_the_tpot_target():
    # TPOT P90 = (40 + 2c) ms × the P90/mean factor ≤ 100 ms  ⇔  c ≤ (100 / factor − 40) / 2
    factor = sm.TPOT_P90_OVER_MEAN
    expected = int((100 / factor - 40) // 2)
    found, reason, unmet = search(_op, 1000, {"tpot_p90_ms": 100.0}, kv_bound=True, saturates_early=False)
    assert (found, reason, unmet) == (expected, "tpot", [])


def test_the_search_stops_at_the_kv_cache_and_names_it():
    found, reason, _ = search(_op, 7, {"tpot_p90_ms": 1000.0}, kv_bound=True, saturates_early=False)
    assert (found, reason) == (7, "kv")
    found, reason, _ = search(_op, 7, {"tpot_p90_ms": 1000.0}, kv_bound=False, saturates_early=False)
    assert (found, reason) == (7, "batch")


def test_an_unreachable_target_is_named_with_one_request():
    found, reason, unmet = search(
        _op, 100, {"tpot_p90_ms": 10.0, "ttft_p90_s": 100.0}, kv_bound=True, saturates_early=False
    )
    assert (found, reason, unmet) == (0, "unreachable", ["tpot_p90_ms"])


def test_the_step_budget_caps_the_running_batch_as_vllm_schedules_it():
    # vllm/v1/core/sched/scheduler.py: each running request takes 1 + num_spec_tokens of the token budget.
    assert batch_cap(8192, 0) == 8192
    assert batch_cap(8192, 3) == 2048
    assert batch_cap(3, 3) == 1


def _check(code, fix, severity=Severity.WARNING):
    return Check(code, severity, "x", code, code, fix=fix, fix_en=f"set {fix}")


def test_advice_keeps_only_fixes_that_clear_their_finding_and_merges_conflicts():
    base = plan(reference.request(reference.case("a3-4-single")))
    a = _check("t.a", {"serving.max_num_seqs": 5})
    b = _check("t.b", {"serving.max_num_seqs": 8})
    c = _check("t.c", {"rack.max_kw": 25.0})
    d = _check("t.d", {"workload.concurrency": 10})
    result = dataclasses.replace(base, checks=(a, b, c, d))

    # A fake engine: 8 clears both a and b, 5 clears only a, the rack fix clears nothing, the
    # requirement change clears d.
    def replan(fix):
        v = fix.get("serving.max_num_seqs")
        remaining = {"t.a", "t.b", "t.c", "t.d"}
        if v == 8:
            remaining -= {"t.a", "t.b"}
        elif v == 5:
            remaining -= {"t.a"}
        if "workload.concurrency" in fix:
            remaining -= {"t.d"}
        return dataclasses.replace(base, checks=tuple(_check(code, {}) for code in sorted(remaining)))

    out = {ch.code: ch for ch in advise(result, replan).checks}
    assert out["t.a"].fix == out["t.b"].fix == {"serving.max_num_seqs": 8}  # merged into one value
    assert out["t.c"].fix == {} and out["t.c"].fix_en == ""  # refused, and its words name the value
    assert out["t.d"].fix == {} and out["t.d"].requirement == {"workload.concurrency": 10}


def test_advice_refuses_a_fix_that_cuts_capacity_below_the_stated_load():
    base = plan(reference.request(reference.case("a3-4-single")))  # 16 users, 4 DP × 16 = 64 slots
    check = _check("t.a", {"serving.max_num_seqs": 2})
    result = dataclasses.replace(base, checks=(check,))
    smaller = plan(reference.request({**reference.case("a3-4-single"), "serving": {"max_num_seqs": 2}}))
    assert smaller.performance.capacity_concurrency == 4 * 2 < 16
    out = advise(result, lambda fix: dataclasses.replace(smaller, checks=()))
    assert out.checks[0].fix == {}


def test_a_hot_standby_is_charged_at_idle_power():
    req = reference.request(reference.case("a3-8-primary-standby"))
    result = plan(req)
    it_kw = Decimal(str(result.tco.figures["tco.it_load_kw"].value))
    standby_kw = Decimal("4") * Decimal(str(req.server.max_input_kw))  # 4 standby A3 at 16.2 kW max
    c, site = req.commercial, req.site
    average = (it_kw - standby_kw) * c.power_load_factor + standby_kw * c.standby_power_load_factor
    expected = average * 8760 * Decimal(str(site.pue)) * site.electricity_price_per_kwh
    assert float(result.tco.figures["tco.annual.electricity"].value) == pytest.approx(
        float(expected), abs=0.01
    )
    # the tenant pair serves on both clusters: every server at the serving load factor
    pair = plan(reference.request(reference.case("a3-8-tenant-pair")))
    assert (
        pair.tco.figures["tco.annual.electricity"].value > result.tco.figures["tco.annual.electricity"].value
    )


def test_the_residual_value_defaults_to_the_straight_line_book_value():
    req = reference.request(reference.case("a3-4-single"))
    c = req.commercial
    assert c.residual_value_fraction == 1 - Decimal(c.horizon_years) / Decimal(c.depreciation_years)
    stated = reference.request(
        {
            **reference.case("a3-4-single"),
            "commercial": {**reference.COMMERCIAL, "residual_value_fraction": "0.1"},
        }
    )
    assert stated.commercial.residual_value_fraction == Decimal("0.1")
