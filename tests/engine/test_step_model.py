"""The step model's physics, each rule recomputed here from its source.

* compute precision from the kernels the recipe launches (catalog/seed/accelerators.yaml TFLOPS;
  the K3 Hopper recipe's ``--moe-backend marlin``, engine/recipes.py K3_HOPPER);
* speculative acceptance as vLLM reports it (vllm/v1/spec_decode/metrics.py: rate = accepted ÷
  drafted, mean acceptance length = 1 + accepted ÷ drafts) and vllm-ascend#14454's measured 5.223;
* a separate draft model's own step cost, eager or captured;
* pipeline parallelism: every stage and the hop between them;
* a closed batch decodes without prefill interference.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from configurator import reference
from configurator.engine import serving_model as sm
from configurator.engine.layout import resolve_layout
from configurator.engine.memory import size_memory
from configurator.engine.performance import estimate_performance

H200 = reference.server("hgx-h200-8gpu")
B300 = reference.server("dgx-b300")
A3 = reference.server("atlas-800-a3")


def _estimate(req):
    layout = resolve_layout(req)
    return estimate_performance(req, layout, size_memory(req, layout))


@pytest.mark.parametrize(
    ("server", "activation", "weight", "precision", "tflops"),
    [
        # Hopper has FP8 but no block-scaled (MX) tensor cores: the K3 recipe's Marlin MoE runs BF16
        (H200, "mxfp8", "mxfp4", "bf16", 989.0),
        # Blackwell lists MXFP4 TFLOPS: MXFP8 activations run on its FP8 rate
        (B300, "mxfp8", "mxfp4", "fp8", None),
        # the 910C has no FP8 path: an MXFP8 checkpoint computes in BF16 — not the INT8 rate
        (A3, "mxfp8", "mxfp4", "bf16", 280.0),
        (A3, "fp8", "fp8", "bf16", 280.0),
        # W8A8 / W4A8 ModelSlim releases run the INT8 matmul
        (A3, "int8", "w4a8", "int8", 560.0),
        (A3, "w8a8", "w8a8", "int8", 560.0),
        (H200, "fp8", "fp8", "fp8", 1979.0),
    ],
)
def test_compute_precision_follows_the_kernels_the_recipe_launches(
    server, activation, weight, precision, tflops
):
    value, used = sm.tflops_for(server, activation, weight)
    assert used == precision
    expected = tflops if tflops is not None else server.accelerator.tflops["fp8"]
    assert value == expected


def test_h200_k3_plan_computes_in_bf16():
    req = reference.request(
        {"model": "kimi-k3", "server": "hgx-h200-8gpu", "topology": {"kind": "single", "nodes": 2}}
    )
    result = _estimate(req)
    fig = result.figures["performance.tflops_per_device"]
    assert fig.inputs["precision_used"] == "bf16"
    assert fig.value == 989.0


def test_mean_accepted_length_is_vllms():
    # vllm-ascend#14454: 7 draft tokens, 60.33 % token acceptance, mean accepted length 5.223
    assert sm.accepted_tokens_per_step(7, 0.6033) == pytest.approx(5.223, abs=0.001)
    assert sm.accepted_tokens_per_step(0, 0.9) == 1.0
    # per-position acceptance (accepted at position i ÷ drafts): 1 + Σ pᵢ
    assert sm.accepted_tokens_per_step(3, 0.0, position_acceptance=(0.9, 0.7, 0.5)) == pytest.approx(3.1)


def _k3_a3(concurrency: int = 4, **perf):
    workload = {"input_tokens": 2048, "output_tokens": 1024, "concurrency": concurrency}
    req = reference.request({**reference.CASES["a3-4-single"], "workload": workload})
    return replace(req, performance=replace(req.performance, **perf))


def test_a_separate_draft_model_pays_its_own_weights_and_layers():
    base = _k3_a3(speculative_tokens=7, speculative_acceptance_rate=0.6033)
    drafted = _k3_a3(
        speculative_tokens=7, speculative_acceptance_rate=0.6033, draft_model_gb=7.12, draft_model_layers=5
    )
    eager = _k3_a3(
        speculative_tokens=7,
        speculative_acceptance_rate=0.6033,
        draft_model_gb=7.12,
        draft_model_layers=5,
        draft_graph_mode=False,
    )
    f = sm.PLATFORM_FACTORS["ascend-a3"]
    g_mtp, g_draft, g_eager = (_estimate(r).groups[0] for r in (base, drafted, eager))
    bw = A3.accelerator.memory_bandwidth_bytes_s * f.bandwidth_efficiency  # a dense read
    one = 7.12e9 / 16 / bw  # the draft's weights split over TP16, read once per proposal
    core = g_mtp.decode_step_s - _mtp_draft(g_mtp, f)
    assert g_draft.decode_step_s == pytest.approx(core + 7 * (one + 5 * f.layer_overhead_s), rel=1e-6)
    eager_extra = 7 * 5 * sm.EAGER_LAYER_OVERHEAD_S["ascend"]
    assert g_eager.decode_step_s == pytest.approx(g_draft.decode_step_s + eager_extra, rel=1e-6)
    assert g_draft.tokens_per_step == pytest.approx(1 + 7 * 0.6033)


def _mtp_draft(g, f) -> float:
    # an MTP head costs one layer's share of the step per draft token: k × core ÷ layers, so
    # step = core × (1 + k ÷ layers) − overhead × k ÷ layers
    k, layers = 7, 93
    core = (g.decode_step_s + k / layers * f.step_overhead_s) / (1 + k / layers)
    return g.decode_step_s - core


def test_pipeline_parallel_costs_every_stage_and_the_hop():
    model = reference.model("kimi-k2")
    f = sm.PLATFORM_FACTORS["hopper"]
    kw = dict(
        batch=8.0,
        mean_context=2048.0,
        kv_bytes_per_token=0,
        state_bytes_per_seq=0,
        lm_non_expert_bytes=float(model.non_expert_weight_bytes),
        tflops=989.0,
        draft_tokens=0,
        acceptance=0.0,
        eight_bit=False,
        scale_out_efficiency=0.8,
    )
    two = sm.decode_step(model, H200, sm.GroupShape(8, 1, 8, False, 2, 8, 2), f, **kw)
    # one stage holding every layer, at the micro-batch of B ÷ 2
    one = sm.decode_step(model, H200, sm.GroupShape(8, 1, 8, False, 1, 8, 1), f, **{**kw, "batch": 4.0})
    # Each stage holds half the layers and weights and runs micro-batches of B ÷ 2; a token passes both
    # stages and one hop over the scale-out NICs.
    assert two.pipeline_stages == 2
    hop_bytes = 4 * model.hidden_size * 2
    link = sm.inter_node_bytes_s_per_device(H200)[0] * 0.8
    hop = f.collective_latency_s * f.inter_node_latency_factor + hop_bytes / link
    assert two.pipeline_hop_s == pytest.approx(hop, rel=1e-9)
    stage = (
        two.layer_overhead_s
        + max(two.memory_s, two.compute_s)
        + two.tp_allreduce_s
        + two.ep_dispatch_combine_s
    )
    assert two.step_s == pytest.approx(f.step_overhead_s + 2 * stage + hop, rel=1e-9)
    assert two.layer_overhead_s == pytest.approx(model.num_layers / 2 * f.layer_overhead_s)
    # the token still crosses every layer: PP2 costs what one stage holding all layers costs at the
    # micro-batch, plus the hop — never the time of a single stage
    assert two.step_s == pytest.approx(one.step_s + hop, rel=1e-9)
    assert two.step_s > 2 * stage


def test_a_closed_batch_decodes_without_prefill_interference():
    loop = _estimate(_k3_a3(8))  # two users per DP rank
    wave = _estimate(_k3_a3(8, closed_batch=True))
    g = wave.groups[0]
    assert wave.tpot_s == pytest.approx(g.decode_step_s / g.tokens_per_step, rel=1e-9)
    assert loop.tpot_s > wave.tpot_s  # the loop's TPOT carries the other prompts' prefill chunks
    assert wave.figures["performance.tpot_s"].formula.startswith("step_s")
    # two prompts per DP rank sent together share one prefill pass (2 × 2,048 tokens fit the budget):
    # both first tokens wait for that pass — longer than one prompt's, shorter than two in a row
    f = sm.PLATFORM_FACTORS["ascend-a3"]
    fig = wave.figures["performance.ttft_s"]
    shared = fig.inputs["wave_first_token_s"]
    assert wave.ttft_s == pytest.approx(f.request_overhead_s + shared, rel=1e-6)  # no step in flight
    assert g.prefill_s < shared < 1.5 * g.prefill_s


def test_no_wait_is_added_to_ttft_outside_the_closed_loop():
    # 4 users on 4 DP ranks, one each: every user holds a slot and is alone on its rank, so no decode
    # step is in flight when its prompt arrives; TTFT = overhead + prefill
    result = _estimate(_k3_a3())
    g = result.groups[0]
    f = sm.PLATFORM_FACTORS["ascend-a3"]
    assert result.queue_wait_s == 0 and g.batch_per_dp_rank == 1
    assert result.ttft_s == pytest.approx(f.request_overhead_s + g.prefill_s, rel=1e-6)
    # 8 users: two per rank, the other one keeps the rank stepping: + half a step
    two = _estimate(_k3_a3(concurrency=8))
    g2 = two.groups[0]
    assert g2.batch_per_dp_rank == 2 and two.queue_wait_s == 0
    assert two.ttft_s == pytest.approx(f.request_overhead_s + g2.prefill_s + g2.decode_step_s / 2, rel=1e-6)


def test_an_experts_only_release_runs_its_other_gemms_in_bf16():
    # Kimi K3's release quantises the routed experts only (catalog: 1,446,456,066,048 B of MXFP4 experts,
    # 896 experts, top-16; the other 114.5 GB at 2 B a parameter).  Active routed-expert parameters:
    # 16 × 1,446,456,066,048 ÷ 896 ÷ (0.5 + 1/32 B per MXFP4 parameter) ≈ 48.62 B of the 104.19 B active.
    k3 = reference.model("kimi-k3")
    experts = 16 * 1_446_456_066_048 / 896 / (0.5 + 1 / 32)
    assert sm.expert_active_params(k3) == pytest.approx(experts, rel=1e-9)
    assert experts == pytest.approx(48.62e9, rel=1e-3)
    # On B300 the experts multiply at FP8 (MXFP8 activations, 4,500 TFLOPS in the catalog) and the
    # rest — attention, shared experts, dense layers — at BF16 (2,250 TFLOPS).
    fp8 = B300.accelerator.tflops["fp8"]
    bf16 = B300.accelerator.tflops["bf16"]
    assert sm.rest_tflops(B300, k3, fp8, "mxfp4") == bf16
    tokens, attention = 8192.0, 1.0e9
    expected = (
        tokens * 2 * experts / 8 / fp8 + tokens * (2 * (k3.active_params - experts) + attention) / 8 / bf16
    ) / (1e12 * 0.5)
    got = sm.compute_seconds(k3, tokens, attention, 8, 1, fp8, bf16, 0.5, "mxfp4")
    assert got == pytest.approx(expected, rel=1e-9)
    # … longer than the whole model at FP8 would take.
    assert got > tokens * (2 * k3.active_params + attention) / 8 / (fp8 * 1e12 * 0.5) * 1.4
    # A checkpoint quantised throughout (DeepSeek-R1 FP8) keeps one rate.
    r1 = reference.model("deepseek-r1")
    assert sm.rest_tflops(H200, r1, H200.accelerator.tflops["fp8"], "fp8") == H200.accelerator.tflops["fp8"]


def _qwen3_235b_fp8():
    from configurator.calibration import model

    return model("qwen3-235b-a22b", "fp8", "Qwen--Qwen3-235B-A22B.config.json")


def test_a_pcie_group_wider_than_two_all_reduces_through_nccl():
    # vLLM's custom all-reduce refuses more than two PCIe-only GPUs (custom_all_reduce.py "not supported
    # on more than two PCIe-only GPUs"): TP 4 over PCIe pays NCCL's 40 µs a collective (nccl#1530:
    # 40.06 µs in place on 8 × RTX 4090) and its ring's 28 GB/s bus bandwidth (nccl#1639), TP 2 the
    # custom kernel's latency and the Gen5 link's 64 GB/s a direction (1,024 Gb/s ÷ 8 ÷ 2).
    server = reference.server("pcie-4gpu-rtx-pro-6000")
    mdl = _qwen3_235b_fp8()
    f = sm.factors_for(server)
    tokens = 1024
    for tp, latency, link in ((4, 40e-6, 28e9), (2, f.collective_latency_s, 64e9)):
        shape = sm.GroupShape(tp=tp, dp=1, ep=tp, expert_parallel=False, nodes=1, devices_per_node=4)
        parts, fabric, _ = sm.comm_parts(mdl, server, shape, tokens, f, eight_bit=True)
        assert fabric == "pcie"
        assert parts.tp_base_latency_s == pytest.approx(latency)
        assert parts.tp_link_bytes_s == pytest.approx(link)
        tp_s, _, _ = sm.comm_times(mdl, server, shape, tokens, f, eight_bit=True, scale_out_efficiency=1.0)
        # Qwen3-235B: 94 layers, 2 all-reduces each, of 1,024 × 4,096 BF16 activations
        per = latency + 2 * (tp - 1) / tp * tokens * 4096 * 2 / link
        assert tp_s == pytest.approx(2 * 94 * per)


def test_nvlink_groups_keep_the_custom_all_reduce():
    shape = sm.GroupShape(tp=8, dp=1, ep=8, expert_parallel=False, nodes=1, devices_per_node=8)
    assert not sm.nccl_over_pcie(H200, shape)
    f = sm.factors_for(H200)
    parts, _, _ = sm.comm_parts(_qwen3_235b_fp8(), H200, shape, 1, f, eight_bit=True)
    assert parts.tp_base_latency_s == f.collective_latency_s


def test_every_hardware_family_has_a_readers_name():
    # the band note names the family to the customer: never its code ("ada", "blackwell")
    from configurator.engine.performance.common import FAMILY_NAMES, estimate_note

    for family in sm.FAMILIES:
        en, zh = estimate_note(family, 0.7, 1.5, False)
        assert family in FAMILY_NAMES, family
        assert FAMILY_NAMES[family][0] in en and FAMILY_NAMES[family][1] in zh


def test_a_waves_prompts_share_prefill_passes_up_to_the_batched_token_budget():
    # vLLM's scheduler fills a step up to max_num_batched_tokens from the waiting queue
    # (vllm/v1/core/sched/scheduler.py token_budget): 8 prompts of 1,000 tokens under a 4,000-token
    # budget take 2 passes, each paying the fixed cost and the weight read once, the compute and the
    # collectives of its 4 prompts; prompts 1-4 end with pass 1, 5-8 with pass 2 (mean 1.5 passes).
    pre = sm.PrefillBreakdown(
        compute_s=0.1,
        memory_s=0.05,
        comm_s=0.02,
        overhead_s=0.3,
        chunks=1,
        prefill_s=0.42,
        prompt_tokens=1000,
        chunk_tokens=4000,
    )
    per_pass = 0.3 + max(4 * 0.1, 0.05) + 4 * 0.02
    total, first_token, passes = sm.wave_prefill(pre, 8)
    assert passes == 2
    assert total == pytest.approx(2 * per_pass)
    assert first_token == pytest.approx(1.5 * per_pass)
    # one prompt is the prompt's own prefill; a wave never beats the compute its tokens need
    assert sm.wave_prefill(pre, 1) == (0.42, 0.42, 1)
    assert total >= 8 * pre.compute_s
    # a prompt longer than the budget is chunked: 3,000 tokens under 1,000 take 3 passes alone
    long = sm.PrefillBreakdown(0.3, 0.15, 0.06, 0.9, 3, 1.41, 3000, 1000)
    assert sm.wave_prefill(long, 2)[2] == 6


def test_the_tp_all_reduce_figure_names_the_fabric_the_all_reduce_crosses():
    # 2 × HGX H200: TP8 inside each node over NVLink while the EP traffic leaves over InfiniBand; the TP
    # figure named the step's EP fabric ("infiniband", a code) before
    result = _estimate(reference.request(reference.CASES["hgx-h200-2-single"]))
    fig = next(f for k, f in result.figures.items() if k.endswith("tp_allreduce_s"))
    assert fig.label_en.endswith("(NVLink)") and fig.label_zh.endswith("（NVLink）")
    # 2 × NF5868G8: TP16 inside each 16-card PCIe server runs NCCL, and says so
    result = _estimate(reference.request(reference.CASES["nf5868g8-2-single"]))
    fig = next(f for k, f in result.figures.items() if k.endswith("tp_allreduce_s"))
    assert fig.label_en.endswith("(PCIe, NCCL)") and fig.label_zh.endswith("（PCIe，NCCL）")
    assert fig.inputs["latency_s"] == pytest.approx(sm.PCIE_NCCL_ALLREDUCE_LATENCY_S)
    assert fig.inputs["link_bytes_s"] == pytest.approx(sm.PCIE_NCCL_BUS_BYTES_S)


def test_an_untied_input_embedding_is_looked_up_not_read():
    # Qwen2.5-7B-Instruct config.json: vocabulary 152,064 × hidden 3,584, "tie_word_embeddings": false.
    # vLLM's VocabParallelEmbedding gathers one row per token (vocab_parallel_embedding.py), the LM head
    # multiplies by its whole matrix: a decode step reads the weights less the 152,064 × 3,584 × 2 B table.
    from configurator.calibration import load_records, request_for

    rec = next(r for r in load_records() if r["id"] == "rtx4090-qwen2.5-7b-vllm0.25-sharegpt-c1")
    req = request_for(rec)
    assert req.model.tie_word_embeddings is False
    table = 152_064 * 3_584 * 2
    assert sm.gathered_embedding_bytes(req.model, 1, 1) == table == 1_089_994_752
    assert sm.gathered_embedding_bytes(req.model, 4, 2) == table / 8  # a vocab shard a rank, one stage's
    tied = replace(req.model, tie_word_embeddings=True)
    assert sm.gathered_embedding_bytes(tied, 1, 1) == 0.0  # the one matrix is the LM head: read whole
    result = _estimate(req)
    fig = next(f for k, f in result.figures.items() if k.endswith("bytes_per_step_per_rank"))
    assert fig.inputs["gathered_embedding_bytes"] == pytest.approx(table)
    held = fig.inputs["rank_non_expert_bytes"]
    assert fig.value == pytest.approx(
        held - table + fig.inputs["micro_batch"] * fig.inputs["kv_bytes_read_per_seq"]
    )
