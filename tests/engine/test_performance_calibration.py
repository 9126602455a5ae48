"""The performance model against published, measured serving results, cross-validated by source.

The records (tests/data/serving_benchmarks.yaml) carry their full conditions and a public source
each; the expected figures are the measurements themselves.  Each source is predicted by a fit that
never saw it (leave-one-source-out); the band stored for each hardware family
(configurator/engine/calibration_fit.json, what the page and the proposal print) must be the one
that cross-validation gives on the current data, and cover every cross-validated ratio.
"""

from __future__ import annotations

import json

import pytest

from configurator import calibration as cal
from configurator.engine import serving_model as sm

RECORDS = cal.load_records()
REQUIRED = {"id", "model", "server", "nodes", "layout", "engine", "workload", "metric", "measured", "source"}


@pytest.fixture(scope="module")
def fitted():
    return cal.calibrate(RECORDS)


def test_the_set_has_thirty_records_ten_on_ascend_with_full_conditions():
    assert len(RECORDS) >= 30
    for rec in RECORDS:
        assert REQUIRED <= set(rec), rec["id"]
        w = rec["workload"]
        assert w["input_tokens"] > 0 and w["output_tokens"] > 0 and w["concurrency"] > 0
        assert rec["measured"]["output_tokens_per_s"] > 0
        assert rec["source"].startswith(("https://", "docs/"))
    assert len({r["id"] for r in RECORDS}) == len(RECORDS)
    ascend = [r for r in RECORDS if cal.family_of(r).startswith("ascend")]
    assert len(ascend) >= 10
    # the K3-on-A3 point of vllm-ascend#14454 is in the set
    assert any(r["source"] == "https://github.com/vllm-project/vllm-ascend/pull/14454" for r in RECORDS)


def test_the_stored_fit_and_bands_are_the_cross_validation_of_the_current_data(fitted):
    families, cv = fitted
    stored = json.loads(sm.CALIBRATION_FILE.read_text(encoding="utf-8"))["families"]
    assert set(stored) == set(families)
    for name, f in families.items():
        row = stored[name]
        assert row["band_low"] == f.band_low and row["band_high"] == f.band_high, name
        assert row["sources"] == cv.sources(name) and row["records"] == len(cv.of(name)), name
        assert row["layer_overhead_s"] == pytest.approx(f.layer_overhead_s, rel=1e-3), name
        assert row["prefill_layer_overhead_s"] == pytest.approx(f.prefill_layer_overhead_s, rel=1e-3), name


def test_every_cross_validated_ratio_lies_inside_its_familys_band(fitted):
    families, cv = fitted
    for r in cv.rows:
        f = families[r.platform]
        assert f.band_low <= round(r.ratio, 2) <= f.band_high, (r.record_id, r.ratio)


def test_a_family_with_fewer_than_three_sources_is_widened_and_flagged(fitted):
    families, cv = fitted
    for name, f in families.items():
        if cv.sources(name) < sm.MIN_SOURCES:
            assert f.few_sources
            assert f.band_low <= sm.WIDE_BAND[0] and f.band_high >= sm.WIDE_BAND[1]
        else:
            assert not f.few_sources


def test_the_fitted_factors_sit_inside_their_physical_bounds(fitted):
    families, _ = fitted
    for name, f in families.items():
        for factor in sm.FITTED:
            lo, hi = sm.FIT_BOUNDS[factor]
            assert lo <= getattr(f, factor) <= hi, (name, factor)


def test_the_prefill_layer_factor_is_what_time_to_first_token_identifies_and_a_stack_shares_it(fitted):
    # The TTFT of a 1,024-token prompt of Kimi-K2-Thinking on one A3 is 474 ms at concurrency 1 (the
    # vLLM-Ascend tutorial) while its compute and weight reads take ≈ 40 ms: the rest is per-layer
    # host cost of an eager prefill, so the Ascend fit sits well above the 0.9 ms prior.  It is
    # host-side, one factor per software stack: the A2, which publishes no TTFT, carries the A3's, and
    # every CUDA family (Ampere without a record of its own included) the one fitted on Hopper's and
    # Blackwell's records together.  The decode layer cost stays each family's own.
    families, _ = fitted
    prior = sm.prior_for("ascend-a3").prefill_layer_overhead_s
    assert families["ascend-a3"].prefill_layer_overhead_s > 2 * prior
    for stack in ("ascend", "cuda"):
        shared = {f.prefill_layer_overhead_s for name, f in families.items() if sm.FAMILIES[name] == stack}
        assert len(shared) == 1, stack
    assert {name for name in sm.FAMILIES} <= set(families)
    assert families["ascend-a2"].layer_overhead_s != families["ascend-a3"].layer_overhead_s


def test_a_held_out_source_is_predicted_without_its_own_records():
    # Leaving out the only A2 source leaves the A2 family without data: it is predicted with the decode
    # layer cost of its software stack's other family (A3: vLLM-Ascend on the 910C) and the stack's
    # prefill cost, both fitted on the A3 records alone, which never saw an A2 record.
    a2 = [r for r in RECORDS if cal.family_of(r) == "ascend-a2"]
    assert len({cal.source_of(r) for r in a2}) == 1
    a3 = [r for r in RECORDS if cal.family_of(r) == "ascend-a3"]
    layer, prefill_layer = cal.fit_stack(a3, "ascend")["ascend-a3"]
    cv = cal.cross_validate(RECORDS)
    with_sibling = cal.compare_all(
        a2[:1], {"ascend-a2": sm.FamilyCalibration(layer, prefill_layer, 0.5, 2, 0, 0)}
    )
    held_out = next(r for r in cv.rows if r.record_id == a2[0]["id"])
    assert held_out.predicted_tps == pytest.approx(with_sibling[0].predicted_tps, rel=1e-9)
    # A source whose family keeps other sources is predicted by its stack's fit without it (the A2
    # records included: they move the shared prefill cost, never the A3's decode layer cost).
    k3 = next(r for r in RECORDS if r["source"].endswith("vllm-ascend/pull/14454"))
    ascend = [r for r in RECORDS if sm.FAMILIES[cal.family_of(r)] == "ascend"]
    others = [r for r in ascend if cal.source_of(r) != cal.source_of(k3)]
    layer, prefill_layer = cal.fit_stack(others, "ascend")["ascend-a3"]
    own = cal.compare_all([k3], {"ascend-a3": sm.FamilyCalibration(layer, prefill_layer, 0.5, 2, 0, 0)})
    assert next(r for r in cv.rows if r.record_id == k3["id"]).predicted_tps == pytest.approx(
        own[0].predicted_tps, rel=1e-9
    )


def test_latencies_are_compared_where_the_sources_give_them(fitted):
    _, cv = fitted
    assert len([r for r in cv.rows if r.measured_tpot_ms]) >= 25
    assert len([r for r in cv.rows if r.measured_ttft_ms]) >= 10
