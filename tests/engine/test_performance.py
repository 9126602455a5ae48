"""Performance estimate: expected values recomputed here from the roofline of
domain.md §6/§11 with the catalog figures of [S1] (910C die: 64 GB, 1.6 TB/s,
280 TFLOPS FP16/BF16; A3: 56 × 400GE LingQu, 8 × 400GE RoCE)."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from configurator.engine import fixtures as F
from configurator.engine.performance import estimate_performance
from configurator.engine.plan import plan
from configurator.engine.serialize import to_jsonable
from configurator.engine.types import PerformanceSpec, Severity, TopologyKind, WorkloadSpec

from ._money_builders import (
    KDA_STATE_BYTES_PER_SEQ,
    MLA_KV_BYTES_PER_TOKEN,
    layout_for,
    memory_for,
    request_4node,
    request_8p8d,
    request_b300,
    request_pair,
)

K3 = F.kimi_k3()
BANDWIDTH = 1.6e12  # bytes/s per 910C die [S1]: 3.2 TB/s per package ÷ 2
TFLOPS_BF16 = 280e12  # 4.48 PFLOPS FP16 per A3 ÷ 16 dies [S1]
LINGQU_BYTES_S = 56 * 400e9 / 8  # 56 × 400GE LingQu per A3 [S1]
ROCE_BYTES_S = 8 * 400e9 / 8  # 8 × 400GE RoCE per A3 [S1]


def _estimate(req):
    layout = layout_for(req)
    return estimate_performance(req, layout, memory_for(req, layout))


def _codes(result) -> set[str]:
    return {c.code for c in result.checks}


def _prefill_s(tp: int, prompt: int = 8192) -> float:
    # 2 × active params × prompt tokens ÷ (TP × BF16 TFLOPS × MFU 0.35); the 910C table has
    # no MXFP8/FP8 entry, so the estimate falls back to BF16.
    return 2 * 104_200_000_000 * prompt / (tp * TFLOPS_BF16 * 0.35)


def _decode_step_s(tp: int, dp: int, ep: int, batch: int, nodes: int, dp_per_node: int = 1) -> float:
    non_expert_lm = K3.non_expert_weight_bytes - K3.vision_bytes  # the vision tower does not run in decode
    touched = 1 - (1 - 16 / 896) ** (batch * dp)  # top-16 of 896 experts, B × DP tokens per step
    weights = non_expert_lm / tp + touched * K3.expert_weight_bytes / ep
    kv = batch * ((8192 + 1024 / 2) * MLA_KV_BYTES_PER_TOKEN + KDA_STATE_BYTES_PER_SEQ // tp)
    memory_time = (int(weights) + int(kv)) / (BANDWIDTH * 0.6)
    if nodes == 1:
        return memory_time
    # EP dispatch + combine in MXFP8 (1 byte), 92 MoE layers, (nodes − 1)/nodes of it leaves the node,
    # over the LingQu ports (the group fits in the 384-device super-node domain) at 80 % efficiency.
    traffic = dp_per_node * batch * 16 * 7168 * 1 * 2 * 92 * (nodes - 1) / nodes
    return memory_time + traffic / (LINGQU_BYTES_S * 0.8)


def test_4node_decode_step_prefill_and_throughput_follow_the_roofline():
    req = request_4node()  # concurrency 64 over DP4 → 16 sequences per DP rank
    result = _estimate(req)
    (g,) = result.groups
    assert g.batch_per_dp_rank == 16
    assert g.batch_limited_by == "concurrency"
    step = _decode_step_s(tp=16, dp=4, ep=64, batch=16, nodes=4)
    assert result.tpot_s == pytest.approx(step, rel=1e-6)
    assert result.ttft_s == pytest.approx(_prefill_s(16), rel=1e-9)
    # aggregated: a DP rank finishes B requests per (B × prefill + output × step)
    rps = 4 * 16 / (16 * _prefill_s(16) + 1024 * step)
    assert result.requests_per_s == pytest.approx(rps, rel=1e-6)
    assert result.output_tokens_per_s == pytest.approx(rps * 1024, rel=1e-6)
    assert result.input_tokens_per_s == pytest.approx(rps * 8192, rel=1e-6)
    assert result.output_tokens_per_s_per_dp_rank == pytest.approx(rps * 1024 / 4, rel=1e-6)
    share = 16 * _prefill_s(16) / (16 * _prefill_s(16) + 1024 * step)
    assert result.prefill_time_share == pytest.approx(share, rel=1e-6)
    assert not result.measured and result.is_estimate
    assert result.figures["performance.tflops_per_device"].inputs["precision_used"] == "bf16"


def test_experts_touched_are_bounded_by_the_experts_on_the_rank():
    small = _estimate(request_4node(concurrency=4))  # B = 1 per DP rank, 4 tokens in the EP group
    assert small.groups[0].experts_touched_fraction == pytest.approx(1 - (1 - 16 / 896) ** 4)
    # short sequences so the KV cache is no limit (each still holds 28 MB of KDA state per rank):
    # 400 per DP rank touch every expert once, never more
    req = request_4node(input_tokens=128, output_tokens=16, concurrency=4 * 400)
    req = replace(req, serving=replace(req.serving, max_num_seqs=400))
    big = _estimate(req).groups[0]
    assert big.batch_per_dp_rank == 400
    assert 0.999 < big.experts_touched_fraction <= 1.0
    all_weights = (K3.non_expert_weight_bytes - K3.vision_bytes) / 16 + K3.expert_weight_bytes / 64
    assert big.weights_bytes_read_per_rank <= all_weights


def test_every_figure_is_explained_and_json_safe():
    result = _estimate(request_8p8d())
    for key, fig in result.figures.items():
        assert fig.key == key
        assert fig.label_en and fig.label_zh
        assert fig.source.kind in {"derived", "input", "assumed", "public", "seed"}
    to_jsonable(result)  # raises on NaN / infinity
    estimate_note = next(c for c in result.checks if c.code == "performance.estimate_unconfirmed")
    assert "load test" in estimate_note.message_en and "压测" in estimate_note.message_zh


def test_batch_is_capped_by_max_num_seqs_with_a_warning():
    result = _estimate(request_4node(concurrency=200))  # 50 per DP rank > --max-num-seqs 16
    g = result.groups[0]
    assert g.offered_seqs_per_dp_rank == 50
    assert g.batch_per_dp_rank == 16
    assert g.batch_limited_by == "max_num_seqs"
    check = next(c for c in result.checks if c.code == "performance.batch_limited_by_max_num_seqs")
    assert check.severity == Severity.WARNING and check.field == "serving.max_num_seqs"


def test_batch_is_capped_by_kv_capacity_for_long_contexts():
    req = request_4node(input_tokens=120_000, output_tokens=8_000, concurrency=64)
    layout = layout_for(req)
    memory = memory_for(req, layout)
    rank = memory.groups[0].per_rank
    # sequences of 128,000 tokens (in 128-token blocks) plus the KDA state that one rank holds
    per_seq = math.ceil(128_000 / 128) * 128 * MLA_KV_BYTES_PER_TOKEN + rank.state_bytes_per_seq
    fit = rank.kv_cache_bytes // per_seq
    assert 0 < fit < 16
    result = estimate_performance(req, layout, memory)
    assert result.groups[0].kv_seqs_fit_per_dp_rank == fit
    assert result.groups[0].batch_per_dp_rank == fit
    assert result.groups[0].batch_limited_by == "kv_capacity"
    assert "performance.batch_limited_by_kv" in _codes(result)


def test_primary_standby_counts_only_the_serving_cluster():
    four = _estimate(request_4node())
    pair = _estimate(request_pair(TopologyKind.PRIMARY_STANDBY))
    serving, standby = pair.groups
    assert serving.counts_toward_throughput and not standby.counts_toward_throughput
    # all 64 concurrent requests land on the serving cluster, exactly as on the 4-node plan
    assert pair.output_tokens_per_s == pytest.approx(four.output_tokens_per_s, rel=1e-9)
    assert pair.serving_dp_ranks == 4


def test_tenant_pair_counts_both_clusters_and_splits_the_concurrency():
    pair = _estimate(request_pair(TopologyKind.TENANT_PAIR))
    a, b = pair.groups
    assert a.counts_toward_throughput and b.counts_toward_throughput
    assert a.batch_per_dp_rank == b.batch_per_dp_rank == 8  # 64 requests over 8 DP ranks
    step = _decode_step_s(tp=16, dp=4, ep=64, batch=8, nodes=4)
    rps_each = 4 * 8 / (8 * _prefill_s(16) + 1024 * step)
    assert pair.output_tokens_per_s == pytest.approx(2 * rps_each * 1024, rel=1e-6)
    assert pair.serving_dp_ranks == 8


def test_8p8d_sizes_prefill_and_decode_pools_separately_and_names_the_bottleneck():
    result = _estimate(request_8p8d())  # 64 requests over 8 decode DP ranks → B = 8
    prefill, decode = result.groups
    assert prefill.role == "prefill" and decode.role == "decode"
    assert decode.batch_per_dp_rank == 8
    prefill_capacity = 8 / _prefill_s(16)  # 8 prefill DP ranks, one prompt at a time each
    step = _decode_step_s(tp=16, dp=8, ep=128, batch=8, nodes=8)
    decode_capacity = 8 * 8 / (1024 * step)
    bal = result.pd_balance
    assert bal.prefill_requests_per_s == pytest.approx(prefill_capacity, rel=1e-6)
    assert bal.decode_requests_per_s == pytest.approx(decode_capacity, rel=1e-6)
    assert result.requests_per_s == pytest.approx(min(prefill_capacity, decode_capacity), rel=1e-6)
    assert bal.bottleneck == ("decode" if decode_capacity < prefill_capacity else "prefill")
    # the suggested split balances per-node capacities: x·p = (16 − x)·d
    per_p, per_d = prefill_capacity / 8, decode_capacity / 8
    assert bal.suggested_prefill_nodes == round(16 * per_d / (per_p + per_d))
    assert bal.suggested_prefill_nodes + bal.suggested_decode_nodes == 16
    # TTFT = prefill + moving the prompt's KV to the decode ranks over 8 × 400GE RoCE
    kv = (8192 * MLA_KV_BYTES_PER_TOKEN + KDA_STATE_BYTES_PER_SEQ // 16) * 16 / (ROCE_BYTES_S * 0.8)
    assert result.ttft_s == pytest.approx(_prefill_s(16) + kv, rel=1e-6)
    assert result.prefill_time_share == pytest.approx(0.5)  # 8 of 16 nodes prefill
    if not 0.67 <= bal.ratio <= 1.5:
        check = next(c for c in result.checks if c.code == "performance.pd_imbalance")
        assert check.fix == {
            "topology.prefill_nodes": bal.suggested_prefill_nodes,
            "topology.decode_nodes": bal.suggested_decode_nodes,
        }


def test_measured_throughput_overrides_the_estimate_everywhere():
    req = request_4node(measured_output_tokens_per_s=5000.0)
    result = _estimate(req)
    assert result.measured and not result.is_estimate
    assert result.output_tokens_per_s == 5000.0
    assert result.requests_per_s == pytest.approx(5000 / 1024)
    assert result.input_tokens_per_s == pytest.approx(5000 / 1024 * 8192)
    assert result.output_tokens_per_s_per_dp_rank == pytest.approx(5000 / 4)
    assert sum(g.output_tokens_per_s for g in result.groups if g.counts_toward_throughput) == pytest.approx(
        5000
    )
    assert result.figures["performance.output_tokens_per_s"].source.kind == "input"
    group_fig = result.figures["performance.cluster.output_tokens_per_s"]
    assert group_fig.value == pytest.approx(5000) and group_fig.source.kind == "input"
    assert "performance.measured_throughput_used" in _codes(result)


def test_latency_targets_raise_warnings_on_their_fields():
    result = _estimate(request_4node(ttft_target_s=0.5, tpot_target_ms=5.0))
    fields = {
        c.field
        for c in result.checks
        if c.code in ("performance.ttft_above_target", "performance.tpot_above_target")
    }
    assert fields == {"workload.ttft_target_s", "workload.tpot_target_ms"}


def test_plan_composes_the_estimate_with_the_real_layout_and_memory():
    result = plan(F.request_k3_a3_4node())
    assert result.performance is not None
    assert result.performance.output_tokens_per_s > 0
    assert {g.group for g in result.performance.groups} == {g.name for g in result.layout.groups}


# --------------------------------------------------------------------------- sanity against published points
# domain.md §11 lists published K3 speed points on NVIDIA Blackwell.  A roofline
# ignores kernel launch gaps, attention compute and scheduling, so only the order
# of magnitude is asserted: the bounds catch unit slips (×8 bits, GB vs GiB, ×TP),
# not a few tens of per cent.


def test_b300_batch_one_tpot_is_the_order_of_the_published_8_5_ms():
    # SGLang, 8 × B300, ISL 8192 / OSL 1024, concurrency 1: TPOT 8.5 ms, TTFT 378 ms.
    result = _estimate(request_b300(concurrency=1))
    assert 2e-3 < result.tpot_s < 30e-3
    assert 0.05 < result.ttft_s < 2.0


def test_b300_batch_one_speed_is_the_order_of_vllm_gb300_111_tokens_per_s():
    # vLLM on GB300 (TP8), batch 1 ≈ 111 tokens/s; a B300 node has the same HBM bandwidth class.
    result = _estimate(request_b300(concurrency=1))
    assert 30 < 1 / result.tpot_s < 500


def test_b300_concurrency_64_tpot_is_the_order_of_the_published_40_ms():
    # SGLang, 8 × B300, concurrency 64: TPOT 40 ms.
    result = _estimate(request_b300(concurrency=64))
    assert 5e-3 < result.tpot_s < 150e-3


def test_efficiency_knobs_out_of_range_are_refused_and_the_defaults_used():
    req = replace(
        request_4node(), performance=PerformanceSpec(decode_bandwidth_efficiency=0.0, prefill_mfu=1.5)
    )
    result = _estimate(req)
    fields = {c.field for c in result.checks if c.code == "performance.knob_out_of_range"}
    assert fields == {"performance.decode_bandwidth_efficiency", "performance.prefill_mfu"}
    assert result.tpot_s == pytest.approx(_estimate(request_4node()).tpot_s)  # defaults 0.6 and 0.35


@pytest.mark.parametrize(
    "change",
    [
        {"workload": WorkloadSpec(concurrency=0, input_tokens=0, output_tokens=0)},
        {"workload": WorkloadSpec(concurrency=-3)},
        {"performance": PerformanceSpec(0.0, 0.0, 0.0, 1.0)},
    ],
)
def test_odd_but_well_typed_requests_never_raise(change):
    req = replace(request_8p8d(), **change)
    layout = layout_for(req)
    for memory in (memory_for(req, layout), None):
        result = estimate_performance(req, layout, memory)
        to_jsonable(result)
        assert result.output_tokens_per_s >= 0
    assert estimate_performance(req, replace(layout, groups=()), None).output_tokens_per_s == 0
