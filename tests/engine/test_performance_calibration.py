"""The performance model against published, measured serving results, cross-validated by source.

The records (tests/data/serving_benchmarks.yaml) carry their full conditions and a public source
each; the expected figures are the measurements themselves.  Each source is predicted by a fit that
never saw it (leave-one-source-out); the band stored for each hardware family
(configurator/engine/calibration_fit.json, what the page and the proposal print) must be the one
that cross-validation gives on the current data, and cover every cross-validated ratio.
"""

from __future__ import annotations

import json
from dataclasses import replace

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
        assert row.get("sglang_prefill_layer_overhead_s", 0.0) == pytest.approx(
            f.sglang_prefill_layer_overhead_s, rel=1e-3
        ), name


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
    # vLLM's request path, estimated without the A2 source too (it has no dense one-user TTFT of its own).
    overhead = cal.estimate_request_overhead([r for r in RECORDS if r not in a2])
    assert overhead == cal.estimate_request_overhead(RECORDS)
    layer, prefill_layer = cal.fit_stack(a3, "ascend", overhead)[0]["ascend-a3"]
    cv = cal.cross_validate(RECORDS)
    with_sibling = cal.compare_all(
        a2[:1],
        {"ascend-a2": sm.FamilyCalibration(layer, prefill_layer, 0.5, 2, 0, 0, request_overhead_s=overhead)},
    )
    held_out = next(r for r in cv.rows if r.record_id == a2[0]["id"])
    assert held_out.predicted_tps == pytest.approx(with_sibling[0].predicted_tps, rel=1e-9)
    # A source whose family keeps other sources is predicted by its stack's fit without it (the A2
    # records included: they move the shared prefill cost, never the A3's decode layer cost).
    k3 = next(r for r in RECORDS if r["source"].endswith("vllm-ascend/pull/14454"))
    ascend = [r for r in RECORDS if sm.FAMILIES[cal.family_of(r)] == "ascend"]
    others = [r for r in ascend if cal.source_of(r) != cal.source_of(k3)]
    layer, prefill_layer = cal.fit_stack(others, "ascend", overhead)[0]["ascend-a3"]
    own = cal.compare_all(
        [k3],
        {"ascend-a3": sm.FamilyCalibration(layer, prefill_layer, 0.5, 2, 0, 0, request_overhead_s=overhead)},
    )
    assert next(r for r in cv.rows if r.record_id == k3["id"]).predicted_tps == pytest.approx(
        own[0].predicted_tps, rel=1e-9
    )


def test_latencies_are_compared_where_the_sources_give_them(fitted):
    _, cv = fitted
    assert len([r for r in cv.rows if r.measured_tpot_ms]) >= 25
    assert len([r for r in cv.rows if r.measured_ttft_ms]) >= 10


def test_each_record_is_read_as_its_engine_served_it():
    # SGLang runs its prefill ("extend") pass op by op, uncompiled; vLLM and vLLM-Ascend run compiled
    # layers.  The records say which engine served them.
    engines = {r["id"]: cal.engine_of(r) for r in RECORDS}
    assert engines["h200-dsr1-sglang-tp8-c8"] == "sglang"  # "SGLang v0.5.7"
    assert engines["b300-k3-sglang-tp8-8k1k-c1"] == "sglang"
    assert engines["h100-gptoss120b-vllm-tp8-1k1k-c4"] == "vllm"
    assert engines["a3-kimik2-thinking-tp16-c1"] == "vllm"  # vLLM-Ascend
    assert {cal.family_of(r) for r in RECORDS if engines[r["id"]] == "sglang"} <= {"hopper", "blackwell"}


def test_an_sglang_measurement_pays_sglangs_prefill_layer_cost_and_a_plan_never_does():
    # DeepSeek-R1 has 61 layers, the first 3 dense (config.json first_k_dense_replace = 3): 58 MoE layers.
    # Its 128-token prompt on 2 × 8 H100 is one prefill chunk, so swapping the prefill cost per MoE layer
    # from vLLM's to SGLang's adds 58 × the difference to TTFT and to nothing else at one user.
    rec = next(r for r in RECORDS if r["id"] == "h100x16-dsr1-sglang-tp16-ib-c1")
    vllm_cost, sglang_cost = 172e-6, 1.79e-3
    base = sm.FamilyCalibration(25e-6, vllm_cost, 0.5, 2, 0, 0)
    as_vllm = cal.compare(rec, {"hopper": base})
    as_sglang = cal.compare(
        rec, {"hopper": sm.FamilyCalibration(25e-6, vllm_cost, 0.5, 2, 0, 0, False, sglang_cost)}
    )
    assert as_sglang.predicted_ttft_ms - as_vllm.predicted_ttft_ms == pytest.approx(
        58 * (sglang_cost - vllm_cost) * 1000, rel=1e-6
    )
    assert as_sglang.predicted_tpot_ms == pytest.approx(as_vllm.predicted_tpot_ms, rel=1e-9)
    # A vLLM record with the same fit reads vLLM's cost, and so does every plan (factors_for_family).
    gptoss = next(r for r in RECORDS if r["id"] == "h100-gptoss120b-vllm-tp8-1k1k-c4")
    fit = sm.FamilyCalibration(25e-6, vllm_cost, 0.5, 2, 0, 0, False, sglang_cost)
    assert cal.compare(gptoss, {"hopper": fit}).predicted_ttft_ms == pytest.approx(
        cal.compare(gptoss, {"hopper": base}).predicted_ttft_ms, rel=1e-9
    )
    with sm.using_calibration({"hopper": fit}):
        assert sm.factors_for_family("hopper").prefill_layer_overhead_s == vllm_cost


def test_vllms_request_path_is_what_its_dense_one_user_ttfts_leave_and_sglang_keeps_its_own():
    # vLLM serving a dense model to one user, with a TTFT: a dense prefill has no fitted factor, so what the
    # TTFT leaves over it is the request path (API server, engine-core hand-off, detokenizer, streaming).
    # The RTX 4090 run's TTFT is not among them: the record leaves it out (prompts already cached).
    ids = {r["id"] for r in cal.request_path_records(RECORDS)}
    assert ids == {
        "h100-qwen3-8b-vllm0.11-sharegpt-c1",
        "l4-qwen2.5-7b-fp16-vllm0.27-eager-c1",
        "a100-qwen2-7b-vllm0.10-random-wave1",
    }
    prior = sm.prior_for("ampere").request_overhead_s

    def residual(rec: dict) -> float:
        return rec["measured"]["ttft_ms"] / 1000 - (cal.compare(rec, {}).predicted_ttft_ms / 1000 - prior)

    # Checked without the step model: the A100 run's 1,024-token prompt was cached but for its last 16
    # tokens (the script's test run), so its prefill is one forward pass that reads the weights as a decode
    # step does — the source's mean TTFT less its mean TPOT, 36.23 − 11.75 ms, is the path: 24.5 ms.
    a100 = next(r for r in RECORDS if r["id"] == "a100-qwen2-7b-vllm0.10-random-wave1")
    assert residual(a100) == pytest.approx(0.03623 - 0.01175, rel=0.15)
    # The estimate is the median of the three (one release's path is not another's), inside its bounds.
    residuals = sorted(residual(r) for r in cal.request_path_records(RECORDS))
    overhead = cal.estimate_request_overhead(RECORDS)
    assert overhead == pytest.approx(residuals[1], rel=1e-9)
    assert sm.REQUEST_OVERHEAD_BOUNDS[0] < overhead < sm.REQUEST_OVERHEAD_BOUNDS[1]
    assert residuals[0] > 0.015 and residuals[2] < 0.05  # 0.10 ≈ 21 ms … 0.11's chat endpoint ≈ 44 ms
    # Without such a record the prior stands.
    assert cal.estimate_request_overhead([r for r in RECORDS if r["id"] not in ids]) == 0.0
    # A vLLM record pays the estimate, an SGLang record its own (the prior), at one user exactly once.
    fit = sm.FamilyCalibration(25e-6, 180e-6, 0.5, 2, 0, 0)
    with_path = replace(fit, request_overhead_s=0.05)
    h100 = next(r for r in RECORDS if r["id"] == "h100-qwen3-8b-vllm0.11-sharegpt-c1")
    assert cal.compare(h100, {"hopper": with_path}).predicted_ttft_ms - cal.compare(
        h100, {"hopper": fit}
    ).predicted_ttft_ms == pytest.approx((0.05 - prior) * 1000, rel=1e-6)
    sglang = next(r for r in RECORDS if r["id"] == "h100x16-dsr1-sglang-tp16-ib-c1")
    assert cal.compare(sglang, {"hopper": with_path}).predicted_ttft_ms == pytest.approx(
        cal.compare(sglang, {"hopper": fit}).predicted_ttft_ms, rel=1e-9
    )
    # And every plan (it launches vLLM or vLLM-Ascend) pays the stored estimate.
    with sm.using_calibration({"hopper": with_path}):
        assert sm.factors_for_family("hopper").request_overhead_s == 0.05


def test_the_cuda_fit_gives_sglang_its_own_prefill_cost_and_vllm_the_gpt_oss_throughput(fitted):
    # The SGLang records' TTFT (R1 on H200 and H100 × 16, K3 on B300) sets SGLang's cost well above the
    # 180 µs prior; vLLM's stays near it, since gpt-oss-120b on 8 × H100 sustains 16,855 tokens/s
    # (input + output) at 64 users with TPOT 7.4 ms (InferenceX#828): 64 prefills of 1,024 tokens
    # interleave with its decode without the ≈ 75 ms stall each that SGLang's cost would charge.
    families, cv = fitted
    hopper = families["hopper"]
    prior = sm.prior_for("hopper").prefill_layer_overhead_s
    assert hopper.sglang_prefill_layer_overhead_s > 5 * prior
    assert hopper.prefill_layer_overhead_s < 2 * prior
    assert families["ascend-a3"].sglang_prefill_layer_overhead_s == 0.0  # no SGLang record on Ascend
    gptoss = [r for r in cv.rows if r.record_id.startswith("h100-gptoss120b")]
    assert len(gptoss) == 5
    assert all(0.8 <= r.ratio <= 1.25 for r in gptoss), [round(r.ratio, 2) for r in gptoss]


def test_a_measurement_on_vllm_ascends_piecewise_default_pays_the_host_dispatch_of_every_layer():
    # vLLM-Ascend before 0.21 turned vLLM's FULL_AND_PIECEWISE into PIECEWISE (releases/v0.20.2rc
    # vllm_ascend/platform.py: "Full graph is fully supported later"), splitting the decode graph at
    # every layer's attention (``vllm::mla_forward``); the Kimi-K2-Thinking tutorial (v0.20.2rc1) and the
    # Qwen3-32B suffix tutorial launch without --compilation-config, the Qwen3-235B tutorial with
    # FULL_DECODE_ONLY.  A piecewise record pays the eager dispatch cost per layer on top of the fitted
    # captured-layer cost; a FULL_DECODE_ONLY one and every plan (the recipes set FULL_DECODE_ONLY) do not.
    by_id = {r["id"]: r for r in RECORDS}
    piecewise = cal.request_for(by_id["a3-kimik2-thinking-tp16-c1"])
    full = cal.request_for(by_id["a3-qwen3-235b-w8a8-dp4tp4-c144"])
    assert piecewise.performance.piecewise_graphs and piecewise.performance.graph_mode
    assert not full.performance.piecewise_graphs
    fitted_layer = sm.factors_for(piecewise.server).layer_overhead_s
    assert sm.effective_factors(piecewise).layer_overhead_s == pytest.approx(
        fitted_layer + sm.EAGER_LAYER_OVERHEAD_S["ascend"], rel=1e-12
    )
    assert sm.effective_factors(full).layer_overhead_s == pytest.approx(fitted_layer, rel=1e-12)
    # Read as full graphs instead, the tutorial's 61-layer Kimi decode would be 61 × 0.6 ms faster a step.
    as_full = dict(by_id["a3-kimik2-thinking-tp16-c1"])
    as_full["serving"] = {k: v for k, v in as_full["serving"].items() if k != "cudagraph_mode"}
    slow, fast = cal.compare(by_id["a3-kimik2-thinking-tp16-c1"]), cal.compare(as_full)
    assert slow.predicted_tpot_ms - fast.predicted_tpot_ms == pytest.approx(61 * 0.6, rel=0.02)


def test_one_document_at_two_revisions_is_one_source():
    # the kubesimplify post: its one- and 32-user TP runs cited at 08b151e, the layout table added by a
    # later revision (00b7452); leave-one-source-out must leave all of them out together
    post = [r for r in RECORDS if "kubesimplify" in r["source"]]
    assert len({r["source"] for r in post}) == 2
    assert len({cal.source_of(r) for r in post}) == 1
    assert cal.source_of({"source": "https://github.com/vllm-project/vllm-ascend/pull/14454"}) == (
        "https://github.com/vllm-project/vllm-ascend/pull/14454"
    )


def test_ttft_under_load_is_every_record_measuring_ttft_with_more_than_one_request(fitted):
    _, cv = fitted
    loaded = cal.ttft_under_load(cv.rows)
    # from the data file itself: a measured TTFT and a concurrency (or wave) above one
    expected = {
        r["id"] for r in RECORDS if r["measured"].get("ttft_ms") and int(r["workload"]["concurrency"]) > 1
    }
    assert {r.record_id for r in loaded} == expected
    assert any(r.wave for r in loaded) and any(not r.wave for r in loaded)
    table = cal.ttft_load_table(cv)
    for r in loaded:
        # each record's line carries its own ratio, predicted ÷ measured, two decimals
        line = next(x for x in table.splitlines() if x.startswith(r.record_id))
        assert line.split()[-1] == f"{r.predicted_ttft_ms / r.measured_ttft_ms:.2f}"
    last = table.splitlines()[-1].split()
    assert last[0] == "all" and int(last[1]) == len(expected) and last[-1] == str(len(expected))
