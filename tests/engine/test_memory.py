"""Memory per rank, KV capacity and the memory checks.

Every expected figure is computed in the test from its source: the public
model configs (copies in ``tests/data/model-configs``), docs/domain.md §2/§6/§9/§12,
the seeds' serving flags, and vLLM's accounting
(available KV = total × utilisation − weights − peak activations − non-torch
buffers − graph pool; tokens = blocks × block size).  The activation and graph
terms are the engine's documented estimator (memory.py docstring), restated
here as arithmetic.
"""

import json
import math
from dataclasses import replace
from pathlib import Path

import pytest

from configurator import reference
from configurator.engine.figures import FigureBook
from configurator.engine.layout import resolve_layout
from configurator.engine.memory import (
    kv_bytes_per_token,
    linear_state_bytes_per_seq,
    size_memory,
)
from configurator.engine.types import (
    GB,
    ModelSpec,
    ParallelSpec,
    Severity,
)

GIB = 2**30
MIB = 2**20

# --- Kimi K3, from the public config (text_config) and docs/domain.md §2 -------------------
K3_CHECKPOINT = 1_560_936_091_448  # 96 shards [S1][S2]
K3_EXPERT_PARAMS = 92 * 896 * 3 * 3584 * 3072  # MoE layers × experts × (gate, up, down) × latent 3584 × 3072
K3_EXPERT = K3_EXPERT_PARAMS * 4.25 / 8  # MXFP4: 4 bits + E8M0 scale per 32 = 4.25 bits
K3_NON_EXPERT = K3_CHECKPOINT - K3_EXPERT
# catalog/seed/checkpoints.yaml kimi-k3-hf-mxfp4 vision_bytes (HF config, counted by the importer:
# MoonViT-V2 + projector, 447,367,168 params in BF16); the old hand figure was ≈401 M params.
K3_VISION = 447_367_168 * 2
K3_KV_PER_TOKEN = 24 * (512 + 64) * 2  # 24 MLA layers × (kv_lora_rank + rope) × BF16
K3_KDA_STATE_TP1 = 69 * (96 * 128 * 128 * 4 + 3 * 3 * 12_288 * 2)  # 69 KDA layers, FP32 state + BF16 conv

# The groups vLLM keeps whole on every rank (memory.py, placement.py), counted from the public config
# as test_memory_platform does: the MoE router, the latent MoE projections, the MLA a-projections
# and the KDA f_a projections; the HF release stores them in BF16 (2 B).
TEXT = json.loads(
    (Path(__file__).resolve().parents[1] / "data/model-configs/moonshotai--Kimi-K3.config.json").read_text()
)["text_config"]
_H = TEXT["hidden_size"]
_MOE_LAYERS = TEXT["num_hidden_layers"] - TEXT["first_k_dense_replace"]
ROUTER = _MOE_LAYERS * _H * TEXT["num_experts"]
LATENT = _MOE_LAYERS * 2 * _H * TEXT["routed_expert_hidden_size"]
MLA_A = (
    len(TEXT["linear_attn_config"]["full_attn_layers"])
    * _H
    * (TEXT["q_lora_rank"] + TEXT["kv_lora_rank"] + TEXT["qk_rope_head_dim"])
)
KDA_F_A = len(TEXT["linear_attn_config"]["kda_layers"]) * _H * TEXT["linear_attn_config"]["head_dim"]
# vLLM-Ascend (vllm_ascend/models/kimi_k3.py, releases/v0.26.0rc) replicates all four in BF16;
# vLLM on CUDA only the MLA a- and KDA f_a-projections (deepseek_v2.py, KDA f_a_proj ReplicatedLinear).
K3_REPLICATED_ASCEND = (ROUTER + LATENT + MLA_A + KDA_F_A) * 2  # 11,488,985,088 B
K3_REPLICATED_CUDA = (MLA_A + KDA_F_A) * 2  # 853,278,720 B
# catalog/seed/accelerators.yaml ascend-910c / ascend-910b runtime_memory_bytes: the vllm-ascend PR #8289
# start-up log's "61.27 GiB" of a 64 GB NPU, which vLLM-Ascend budgets instead of the data sheet's 64 GB.
NPU_RUNTIME = int(61.27 * GIB)  # 65,788,161,556 B


def _stated(case: dict) -> dict:
    """A seeded request with the recipes' max_num_seqs 16 stated (the K3 Atlas A3 tutorial's, §5.1.1): the
    arithmetic below is checked at a given setting; one left to the defaults is sized to the KV cache
    (engine/memory.py size_admission, tests/engine/test_admission.py)."""
    return {**case, "serving": {**case.get("serving", {}), "max_num_seqs": 16}}


def _target_only(case: dict) -> dict:
    """A seeded K3 request with speculative decoding off: the target's memory as the tutorial's vLLM-Ascend
    0.23.0 sizes it (the catalog draft's weights and KV are tests/engine/test_speculative.py's)."""
    case = _stated(case)
    return {**case, "serving": {**case["serving"], "speculative": {"method": ""}}}


A3_4 = _target_only(reference.CASES["a3-4-single"])
NF_2 = _stated(reference.CASES["nf5868g8-2-single"])
# One A2 node (resolves to TP8 / DP1): not a seeded case, because K3 does not fit on it ([S1]).
A2_ONE_NODE = {"model": "kimi-k3", "server": "atlas-800-a2", "topology": {"kind": "single", "nodes": 1}}


def codes(result, severity=None):
    return [c.code for c in result.checks if severity is None or c.severity == severity]


def only(result, code):
    found = [c for c in result.checks if c.code == code]
    assert len(found) == 1, [c.code for c in result.checks]
    return found[0]


def run(req):
    layout = resolve_layout(req)
    return size_memory(req, layout)


def activation(tokens, hidden, vocab, max_num_seqs, top_k):
    # vLLM profile_run (gpu_model_runner): the forward pass over max_num_batched_tokens, then the
    # sampler warm-up over max_num_seqs dummy requests; the peak is the larger of the two.
    # memory.py's documented estimate: forward = 24 hidden-width BF16 tensors + 2 routed copies
    # per selected expert; sampler = 38 B per request per vocabulary entry.
    forward = tokens * hidden * 2 * (24 + 2 * top_k)
    sampler = min(max_num_seqs, tokens) * vocab * 38
    return max(forward, sampler)


NON_TORCH = int(0.13 * GIB)  # runtime workspaces, public TP1 start-up logs (memory.py)
NCCL_PER_GROUP = int(0.42 * GIB)  # NCCL communicator + custom all-reduce, public TP2 logs (memory.py)
# vLLM from 0.19 (the recipes' 0.27.1 included): 0.25 GiB non-torch at TP1 and 2.1 / 2.07 GiB at TP2 in
# the public vLLM 0.19.0 H100 start-ups (engine_versions.CUDA_RUNTIME_TERMS).
NON_TORCH_VLLM_019 = int(0.25 * GIB)
NCCL_PER_GROUP_VLLM_019 = int(1.84 * GIB)


def hccl_buffers(tp, dp, ep, hccl_buffsize_mb):
    # vllm-ascend vllm_ascend/utils.py get_hccl_config_for_pg_options (releases/v0.26.0rc):
    # the MC2 group uses HCCL_BUFFSIZE, the DP group max(ceil((dp+1)·4 B / 1 MiB), 50) MB,
    # TP and EP groups 200 MB; each HCCL communicator holds an input and an output buffer.
    mb = (200 if tp > 1 else 0) + (50 if dp > 1 else 0) + (200 + hccl_buffsize_mb if ep > 1 else 0)
    return 2 * mb * MIB + NON_TORCH


def k3_per_rank_weights(tp, ep, replicated=K3_REPLICATED_ASCEND, language_model_only=False, pp=1):
    """The HF MXFP4 release on one rank: the non-expert bytes less vision and the replicated groups
    split over TP (and PP), the replicated groups whole (÷ PP), vision whole unless
    --language-model-only, the experts over EP (and PP)."""
    vision = 0 if language_model_only else K3_VISION
    language = K3_NON_EXPERT - K3_VISION - replicated
    return language / (tp * pp) + replicated / pp + vision + K3_EXPERT / (ep * pp)


# --------------------------------------------------------------------------- per-token and per-sequence cost


def test_k3_kv_bytes_per_token_is_27648_in_bf16_and_not_split_by_tp():
    # docs/domain.md §2: 24 × 576 × 2 = 27,648 B (BF16), 13,824 B (FP8); MLA latent on every TP rank.
    assert K3_KV_PER_TOKEN == 27_648
    k3 = reference.model("kimi-k3")
    assert kv_bytes_per_token(k3, tp=1) == 27_648
    assert kv_bytes_per_token(k3, tp=16) == 27_648
    assert kv_bytes_per_token(k3, tp=16, kv_cache_dtype="fp8") == 13_824


def test_deepseek_v3_kv_bytes_per_token():
    # DeepSeek-V3 config: 61 layers, all MLA, kv_lora_rank 512 + qk_rope_head_dim 64, BF16 cache.
    assert kv_bytes_per_token(reference.model("deepseek-v3"), tp=8) == 61 * 576 * 2 == 70_272


def test_k3_kda_state_per_sequence_is_449372160_bytes_at_tp1_and_split_by_tp():
    # docs/domain.md §2: 69 × (96·128·128·4 + 9·96·128·2) = 449,372,160 B.
    assert K3_KDA_STATE_TP1 == 449_372_160
    k3 = reference.model("kimi-k3")
    assert linear_state_bytes_per_seq(k3, tp=1) == 449_372_160
    assert linear_state_bytes_per_seq(k3, tp=16) == 449_372_160 // 16


@pytest.mark.parametrize("tp, kv_heads_per_rank", [(1, 8), (4, 2), (8, 1), (16, 1)])
def test_llama_gqa_kv_heads_per_rank_never_drop_below_one(tp, kv_heads_per_rank):
    # Llama-3.1-8B config: 32 layers, 8 KV heads, head_dim 4096 / 32 = 128.
    # vLLM replicates KV heads once TP exceeds them: max(1, 8 / TP).
    expected = 2 * kv_heads_per_rank * 128 * 2 * 32
    assert kv_bytes_per_token(reference.model("llama-3-1-8b"), tp=tp) == expected
    if tp == 16:
        assert expected == 16_384


def gpt_oss_like():
    # gpt-oss-120b config: 36 layers alternating full / 128-token sliding window,
    # 64 query heads, 8 KV heads, head_dim 64.
    return ModelSpec(
        slug="gpt-oss-like",
        name="gpt-oss-like",
        total_params=116_800_000_000,
        active_params=5_100_000_000,
        num_layers=36,
        hidden_size=2880,
        vocab_size=201_088,
        num_attention_heads=64,
        num_kv_heads=8,
        head_dim=64,
        gqa_layers=18,
        sliding_layers=18,
        sliding_window=128,
        num_experts=128,
        experts_per_token=4,
        moe_layers=36,
        expert_weight_bytes=60_000_000_000,
        non_expert_weight_bytes=3_000_000_000,
    )


def test_sliding_window_layers_cost_a_fixed_window_per_sequence():
    # gpt-oss is not a seeded LLM: the inline spec above, on the seeded NF5868G8 pair (no checkpoint).
    gpu = reference.request(NF_2)
    req = replace(
        gpu,
        model=gpt_oss_like(),
        checkpoint=None,
        topology=replace(gpu.topology, parallel=ParallelSpec(tp=8, dp=4, dp_local=2)),
    )
    mem = run(req)
    rank = mem.groups[0].per_rank
    # Full-attention layers per token: 2 × (8 / 8 heads) × 64 × 2 B × 18 layers.
    assert rank.kv_bytes_per_token == 2 * 1 * 64 * 2 * 18
    # Sliding layers per sequence: the 128-token window (8 blocks of 16, the CUDA default) × the same
    # per-token size.
    assert rank.sliding_window_bytes_per_seq == 2 * 1 * 64 * 2 * 18 * 128
    assert rank.linear_state_bytes_per_seq == 0
    assert rank.state_bytes_per_seq == rank.sliding_window_bytes_per_seq


# --------------------------------------------------------------------------- K3 on 4 × A3 (the validated minimum)


def test_k3_on_four_a3_fits_with_weights_split_non_expert_by_tp_and_experts_by_ep():
    req = reference.request(A3_4)  # the seeded case: the HF MXFP4 release, utilisation 0.9
    mem = run(req)
    assert codes(mem, Severity.ERROR) == []
    (g,) = mem.groups
    rank = g.per_rank

    # docs/domain.md §3: 910C package = 2 dies → 64 GB per logical NPU, of which the runtime reports
    # 61.27 GiB (NPU_RUNTIME); gpu_memory_utilization 0.9 (the API's default; the fixture's was 0.85):
    # ⌊65,788,161,556 × 0.9⌋ = 59,209,345,400.
    assert rank.device_bytes == NPU_RUNTIME == 65_788_161_556
    assert rank.usable_bytes == int(NPU_RUNTIME * 0.9) == 59_209_345_400
    assert rank.free_bytes == 65_788_161_556 - 59_209_345_400

    # docs/domain.md §6: non-expert ÷ TP16 + expert ÷ EP64 (vision tower and the groups vLLM-Ascend
    # replicates whole on every rank).
    assert rank.expert_weights_bytes == pytest.approx(K3_EXPERT / 64, abs=1)
    assert K3_REPLICATED_ASCEND == 11_488_985_088
    assert rank.replicated_weights_bytes == K3_REPLICATED_ASCEND
    assert rank.non_expert_weights_bytes == pytest.approx(
        (K3_NON_EXPERT - K3_VISION - K3_REPLICATED_ASCEND) / 16 + K3_REPLICATED_ASCEND + K3_VISION, abs=1
    )
    assert rank.weights_bytes == pytest.approx(k3_per_rank_weights(16, 64), abs=2)
    # docs/domain.md §9's "≈30 GB of weights per 64 GB rank" splits every non-expert byte over TP16;
    # the replicated groups add 11,488,985,088 × 15/16 ≈ 10.8 GB: 102,096,305,976 / 16 + 11,488,985,088
    # + 894,734,336 + 22,600,876,032 ≈ 41.37 GB.
    assert 41.3e9 < rank.weights_bytes < 41.4e9

    # Serving terms: [S1] max_num_seqs 16, vLLM default 8,192 batched tokens; HCCL_BUFFSIZE=800 MB
    # (vLLM-Ascend K3 tutorial) for MC2, 200 MB TP/EP, 50 MB DP, two buffers each; vLLM-Ascend does
    # not take graph memory out of the KV budget (worker.py determine_available_memory).
    act = activation(8192, 7168, 163_840, 16, 16)
    assert act == 8192 * 7168 * 2 * 56  # the forward pass dominates 16 × 163,840 × 38 B
    assert rank.activation_bytes == act
    buffers = hccl_buffers(16, 4, 64, 800)
    assert buffers == 2 * (200 + 50 + 200 + 800) * MIB + NON_TORCH
    assert rank.buffer_bytes == buffers
    assert rank.graph_bytes == 0

    kv = 59_209_345_400 - rank.weights_bytes - act - buffers
    assert rank.kv_cache_bytes == kv
    assert rank.kv_bytes_per_token == 27_648
    # TP16: KDA heads and conv channels split over 16 ranks.
    assert rank.state_bytes_per_seq == 449_372_160 // 16 == 28_085_760

    # vLLM: blocks = KV ÷ (block × bytes per token); tokens = blocks × 128 (Ascend block size).
    tokens = math.floor(kv / (128 * 27_648)) * 128
    assert rank.kv_tokens == tokens
    assert g.kv_tokens_per_dp_rank == tokens  # the 16 TP ranks mirror one DP rank's tokens
    # ≈ 59.21 − 41.37 − 6.58 − 2.76 = 8.51 GB of KV ÷ (128 × 27,648 B) ≈ 2,403 blocks ≈ 307,600 tokens.
    assert 300_000 < tokens < 310_000

    # A 131,072-token sequence (max_model_len, the API's default; 1,024 blocks of 128) needs its KV
    # plus its KDA state: 8.51 GB ÷ 3.65 GB → 2 full-length sequences.
    per_seq = 131_072 * 27_648 + 28_085_760
    assert g.full_len_seqs_per_dp_rank == kv // per_seq == 2
    assert g.max_num_seqs_fit is False

    # Cluster totals over 64 ranks.
    assert g.cluster_weights_bytes == rank.weights_bytes * 64
    assert g.cluster_kv_bytes == kv * 64


def test_k3_on_four_a3_warns_that_16_full_length_sequences_do_not_fit():
    # docs/domain.md §9: 16 × 131,072 ≈ 2.1 M tokens per DP rank requested (max_model_len, the API's
    # default; the fixture asked 133,120); the app must say how many fit.
    mem = run(reference.request(A3_4))
    g = mem.groups[0]
    c = only(mem, "memory.max_num_seqs_not_full_length")
    assert c.severity == Severity.WARNING
    assert "16 × 131,072 tokens requested per DP rank" in c.message_en
    assert f"only {g.full_len_seqs_per_dp_rank} full-length" in c.message_en
    assert f"{g.full_len_seqs_per_dp_rank} 条满长度请求" in c.message_zh
    assert c.field == "serving.max_num_seqs"
    assert c.fix == {"serving.max_num_seqs": g.full_len_seqs_per_dp_rank}
    assert c.figures["requested_tokens"] == 16 * 131_072 == 2_097_152
    headroom = only(mem, "memory.kv_headroom")
    assert headroom.severity == Severity.OK
    assert headroom.figures["kv_tokens"] == g.kv_tokens_per_dp_rank


def test_k3_on_four_a3_figures_carry_formula_inputs_and_source():
    mem = run(reference.request(A3_4))
    rank = mem.groups[0].per_rank
    f = mem.figures["memory.per_rank.kv_cache_bytes"]
    assert f.value == rank.kv_cache_bytes and f.unit == "B"
    assert f.formula == "usable − weights − activations − buffers − graphs"
    assert f.inputs["weights"] == rank.weights_bytes
    assert mem.figures["memory.per_rank.weights_bytes"].value == rank.weights_bytes
    assert mem.figures["memory.per_rank.activation_bytes"].source.kind == "assumed"
    assert mem.figures["memory.kv_tokens_per_dp_rank"].value == rank.kv_tokens
    assert mem.figures["memory.requested_tokens_per_dp_rank"].value == 16 * 131_072


def test_bf16_k3_weights_do_not_fit_four_a3():
    # [S1] precision rule: the FP16/BF16 weights do not fit.  At 2 bytes per parameter:
    # experts 2.72 T params ÷ EP64 + the other 57 B params ÷ TP16 ≈ 93 GB > 59.2 GB usable.
    # The seed holds no BF16 release of K3, so the seeded model is restated at 2 B per parameter
    # here (total_params 2,779,931,837,184, catalog/seed/models.yaml kimi-k3) with no checkpoint.
    non_expert_bf16 = (2_779_931_837_184 - K3_EXPERT_PARAMS) * 2
    base = reference.request(A3_4)
    bf16 = replace(
        base.model,
        weight_format="bf16",
        expert_weight_bytes=K3_EXPERT_PARAMS * 2,
        non_expert_weight_bytes=non_expert_bf16,
    )
    req = replace(base, model=bf16, checkpoint=None)
    mem = run(req)
    c = only(mem, "memory.weights_do_not_fit")
    assert c.severity == Severity.ERROR
    weights = (non_expert_bf16 - K3_VISION) / 16 + K3_VISION + K3_EXPERT_PARAMS * 2 / 64
    assert weights > 90e9
    assert c.figures["weights_bytes"] == pytest.approx(weights, abs=2)
    assert c.figures["shortfall_bytes"] == pytest.approx(weights - 59_209_345_400, abs=2)
    assert "quantised release" in c.fix_en


def test_k3_on_one_a2_server_errors_with_the_shortfall_in_gb():
    # [S1]: the classic 8-card 910B server cannot carry K3.  TP8 / EP8 on 8 × 61.27 GiB (the
    # runtime's figure, NPU_RUNTIME) at 0.9, the HF release with vLLM-Ascend's replicated groups:
    # The request names no serving fields: the A2 is validated for K3 text only (the vLLM-Ascend tutorial
    # §5.2.1 serves --language-model-only), so the serving defaults leave the vision tower out:
    # (114,480,025,400 − 894,734,336 − 11,488,985,088) ÷ 8 + 11,488,985,088
    # + 1,446,456,066,048 ÷ 8 ≈ 205.06 GB per rank vs 59.21 GB usable → ≈145.8 GB short.
    request = reference.request(A2_ONE_NODE)
    assert request.serving.language_model_only
    mem = run(request)
    c = only(mem, "memory.weights_do_not_fit")
    weights = k3_per_rank_weights(8, 8, language_model_only=True)
    shortfall = weights - int(NPU_RUNTIME * 0.9)
    assert c.figures["shortfall_bytes"] == pytest.approx(shortfall, abs=2)
    assert c.figures["shortfall_gb"] == round(shortfall / 1e9, 1)
    assert 145 < shortfall / 1e9 < 146.5
    assert f"{shortfall / 1e9:.1f} GB short per rank" in c.message_en
    assert f"每卡缺口 {shortfall / 1e9:.1f} GB" in c.message_zh
    assert c.field == "topology.nodes"
    assert mem.groups[0].kv_tokens_per_dp_rank == 0
    assert mem.groups[0].full_len_seqs_per_dp_rank == 0


def test_weights_fix_is_a_node_count_that_really_fits():
    req = reference.request(A2_ONE_NODE)
    c = only(run(req), "memory.weights_do_not_fit")
    fix = c.fix
    assert fix["topology.nodes"] > 1
    assert 896 % (fix["topology.parallel.tp"] * fix["topology.parallel.dp"]) == 0
    fixed = replace(
        req,
        topology=replace(
            req.topology,
            nodes=fix["topology.nodes"],
            parallel=ParallelSpec(
                tp=fix["topology.parallel.tp"],
                dp=fix["topology.parallel.dp"],
                dp_local=fix["topology.parallel.dp_local"],
            ),
        ),
    )
    assert codes(run(fixed), Severity.ERROR) == []
    assert codes(resolve_layout(fixed), Severity.ERROR) == []


# --------------------------------------------------------------------------- 2 × NF5868G8 [S2]


def test_nf5868g8_pair_per_gpu_weights_and_kv_budget():
    req = reference.request(NF_2)  # the seeded case: the HF MXFP4 release, utilisation 0.95
    mem = run(req)
    (g,) = mem.groups
    rank = g.per_rank
    # [S2]: 32 GPUs × 84 GB = 2,688 GB ≈ 2.68 TB.
    assert 32 * rank.device_bytes == 2_688 * GB

    # TP16 per node, EP32: non-expert ÷ 16 + expert ÷ 32; vLLM on CUDA keeps the MLA a- and KDA
    # f_a-projections whole (853,278,720 B).
    weights = k3_per_rank_weights(16, 32, replicated=K3_REPLICATED_CUDA)
    assert rank.weights_bytes == pytest.approx(weights, abs=2)
    # docs/domain.md §9 quotes ≈48.8 GB per GPU = 1.56 TB ÷ 32, as if every byte were split over
    # all 32 GPUs.  With DP2 the non-expert weights (112.7 GB without the vision tower and the
    # replicated projections) are held once per DP replica, i.e. ÷16 not ÷32 (+3.52 GB), and the
    # 0.89 GB vision tower and 0.85 GB of replicated projections sit on every GPU (+1.69 GB): ≈54.0 GB.
    naive = K3_CHECKPOINT / 32
    assert naive == pytest.approx(48.78e9, rel=1e-3)
    whole = K3_VISION + K3_REPLICATED_CUDA
    assert weights - naive == pytest.approx((K3_NON_EXPERT - whole) / 32 + whole * 31 / 32, abs=2)
    assert 53.9e9 < rank.weights_bytes < 54.1e9

    # KV budget per GPU at utilisation 0.95 (the NF5868G8 recipe's value the API defaults to; the
    # fixture's was 0.9), NCCL for the TP and EP groups, and vLLM 0.27's graph estimate: capture sizes up
    # to min(2 × 16, 512) = 32 → [1, 2, 4, 8, 16, 24, 32] PIECEWISE + [1, 2, 4, 8, 16] FULL
    # (vllm/config/vllm.py _set_cudagraph_sizes), 20 MiB a descriptor from vLLM 0.26 (engine_versions.py).
    assert req.serving.vllm_version == "0.27.1" and req.serving.max_num_seqs == 16
    graphs = (7 + 5) * 20 * 2**20
    assert rank.graph_bytes == graphs
    usable = 84 * GB * 0.95
    act = activation(8192, 7168, 163_840, 16, 16)
    kv = usable - weights - act - 2 * NCCL_PER_GROUP_VLLM_019 - NON_TORCH_VLLM_019 - graphs
    assert rank.kv_cache_bytes == pytest.approx(kv, abs=2)
    assert mem.figures["memory.per_rank.kv_cache_bytes"].value == rank.kv_cache_bytes
    # CUDA block size 16.
    assert rank.kv_tokens == math.floor(rank.kv_cache_bytes / (16 * 27_648)) * 16
    # [S2]'s "1.12 TB left" is a sum over 32 GPUs before activations, buffers and the
    # utilisation cap; the real KV pool is far smaller, and replicated on 16 TP ranks.
    # Per GPU: 79.8 − 54.0 − 6.58 − 2 × 0.45 − 0.14 − 1.07 ≈ 17.1 GB; × 32 ≈ 0.55 TB, half of [S2]'s figure.
    assert g.cluster_kv_bytes < 0.6e12
    assert g.cluster_kv_bytes == rank.kv_cache_bytes * 32


# --------------------------------------------------------------------------- other topologies


def test_8p8d_sizes_both_sides_with_ep128():
    mem = run(reference.request(_target_only(reference.CASES["a3-16-8p8d"])))
    prefill, decode = mem.groups
    assert (prefill.group, decode.group) == ("prefill", "decode")
    weights = k3_per_rank_weights(16, 128)
    assert prefill.per_rank.weights_bytes == pytest.approx(weights, abs=2)
    assert decode.per_rank == prefill.per_rank
    # HCCL_BUFFSIZE 1024 MB: the vLLM-Ascend K3 tutorial's 8P8D value the API defaults to (docs/api.md;
    # the fixture's was 800); usable = ⌊61.27 GiB × 0.9⌋.
    buffers = hccl_buffers(16, 8, 128, 1024)
    kv = int(NPU_RUNTIME * 0.9) - weights - activation(8192, 7168, 163_840, 16, 16) - buffers
    assert prefill.per_rank.kv_cache_bytes == pytest.approx(kv, abs=2)
    assert "memory.per_rank.kv_cache_bytes" in mem.figures
    assert "memory.decode.per_rank.kv_cache_bytes" in mem.figures
    assert mem.figures["memory.deployment_weights_bytes"].value == prefill.per_rank.weights_bytes * 256


def test_pair_topology_reports_identical_clusters_once():
    mem = run(reference.request(_target_only(reference.CASES["a3-8-primary-standby"])))
    a, b = mem.groups
    assert (a.group, b.group) == ("cluster-a", "cluster-b")
    assert a.per_rank == b.per_rank
    assert codes(mem).count("memory.max_num_seqs_not_full_length") == 1
    assert only(mem, "memory.max_num_seqs_not_full_length").message_en.startswith("Each cluster")


def test_a2_eight_nodes_text_only_drops_the_vision_tower_and_fits():
    # vLLM-Ascend K3 tutorial: 8 × A2, DP8 / TP8 / EP64, --language-model-only, with the ModelSlim W4A8
    # checkpoint (catalog/seed/checkpoints.yaml kimi-k3-modelslim-w4a8, assumed sizes: expert_bytes
    # 1,361,370,415,104, non_expert_bytes 60,582,055,520, vision_bytes 894,734,336; the router in BF16,
    # the latent, MLA-a and KDA-f_a projections in INT8, all four kept whole by vLLM-Ascend).
    req = reference.request(reference.CASES["a2-8-text-only-modelslim"])
    mem = run(req)
    assert codes(mem, Severity.ERROR) == []
    rank = mem.groups[0].per_rank
    replicated = ROUTER * 2 + LATENT + MLA_A + KDA_F_A  # 6,335,365,120 B
    # ⌈(60,582,055,520 − 894,734,336 − 6,335,365,120) ÷ 8⌉ + 6,335,365,120 + 1,361,370,415,104 ÷ 64
    # = 6,668,994,508 + 6,335,365,120 + 21,271,412,736 = 34,275,772,364 B (no vision tower)
    weights = (60_582_055_520 - K3_VISION - replicated) / 8 + replicated + 1_361_370_415_104 / 64
    assert rank.weights_bytes == pytest.approx(weights, abs=1) == 34_275_772_364
    with_vision = run(replace(req, serving=replace(req.serving, language_model_only=False)))
    assert with_vision.groups[0].per_rank.weights_bytes - rank.weights_bytes == K3_VISION
    assert mem.groups[0].full_len_seqs_per_dp_rank >= 1


def test_vision_workload_with_language_model_only_is_an_error():
    case = reference.CASES["a2-8-text-only-modelslim"]
    req = reference.request({**case, "workload": {"needs_vision": True}})
    c = only(run(req), "model.vision_needs_full_model")
    assert c.severity == Severity.ERROR
    assert c.field == "serving.language_model_only"
    assert c.fix == {"serving.language_model_only": False}


def test_max_model_len_beyond_the_model_context_is_an_error():
    # K3 config: max_position_embeddings 1,048,576.
    req = reference.request(A3_4)
    req = replace(req, serving=replace(req.serving, max_model_len=2_000_000))
    c = only(run(req), "model.max_model_len_exceeds_context")
    assert c.severity == Severity.ERROR
    assert c.fix == {"serving.max_model_len": 1_048_576}


def test_one_sequence_that_does_not_fit_is_an_error_vllm_refuses_to_start():
    # A 1,048,576-token sequence on 4 × A3: 1,048,576 × 27,648 B ≈ 29 GB of KV per rank,
    # more than the ≈8.5 GB left after weights, activations, buffers and graphs.
    req = reference.request(A3_4)
    req = replace(req, serving=replace(req.serving, max_model_len=1_048_576))
    mem = run(req)
    c = only(mem, "memory.one_sequence_does_not_fit")
    assert c.severity == Severity.ERROR
    rank = mem.groups[0].per_rank
    assert 1_048_576 * 27_648 > rank.kv_cache_bytes
    assert c.figures["per_seq_bytes"] == 1_048_576 * 27_648 + 28_085_760
    # The fix (a shorter max_model_len) really fits one sequence.
    fixed = replace(req, serving=replace(req.serving, max_model_len=c.fix["serving.max_model_len"]))
    assert codes(run(fixed), Severity.ERROR) == []
    assert c.fix["serving.max_model_len"] * 27_648 + 28_085_760 <= rank.kv_cache_bytes


def test_overrides_replace_the_activation_and_graph_estimates():
    req = reference.request(A3_4)
    base = run(req).groups[0].per_rank
    req = replace(req, serving=replace(req.serving, activation_bytes=2 * GIB, graph_memory_bytes=0))
    rank = run(req).groups[0].per_rank
    assert rank.activation_bytes == 2 * GIB and rank.graph_bytes == 0
    assert rank.kv_cache_bytes - base.kv_cache_bytes == (base.activation_bytes - 2 * GIB) + base.graph_bytes


def test_fp8_kv_cache_doubles_the_tokens():
    req = reference.request(A3_4)
    fp8 = run(replace(req, serving=replace(req.serving, kv_cache_dtype="fp8"))).groups[0].per_rank
    bf16 = run(req).groups[0].per_rank
    assert fp8.kv_bytes_per_token == 13_824
    assert fp8.kv_tokens == math.floor(fp8.kv_cache_bytes / (128 * 13_824)) * 128
    assert fp8.kv_tokens >= 2 * bf16.kv_tokens - 128


def test_pipeline_parallel_halves_weights_and_layers_per_stage():
    # 4 × A3 as TP16 × DP2 × PP2: EP = TP × DP = 32; each stage holds half the layers.
    req = reference.request(A3_4)
    req = replace(req, topology=replace(req.topology, parallel=ParallelSpec(tp=16, dp=2, pp=2, dp_local=1)))
    rank = run(req).groups[0].per_rank
    assert rank.expert_weights_bytes == pytest.approx(K3_EXPERT / 32 / 2, abs=1)
    # The replicated groups are whole on every rank of their stage: half of them per stage.
    split = K3_NON_EXPERT - K3_VISION - K3_REPLICATED_ASCEND
    assert rank.non_expert_weights_bytes == pytest.approx(
        split / 32 + K3_REPLICATED_ASCEND / 2 + K3_VISION, abs=1
    )
    assert rank.kv_bytes_per_token == 12 * 576 * 2  # ceil(24 MLA layers / 2) per stage
    assert rank.linear_state_bytes_per_seq == 35 * (
        6 * 128 * 128 * 4 + 3 * (36_864 // 16) * 2
    )  # ceil(69 / 2)


def test_expert_parallel_off_splits_experts_by_tp():
    req = reference.request(A3_4)
    req = replace(
        req,
        topology=replace(req.topology, parallel=ParallelSpec(tp=16, dp=4, expert_parallel=False, dp_local=1)),
    )
    rank = run(req).groups[0].per_rank
    assert rank.expert_weights_bytes == pytest.approx(K3_EXPERT / 16, abs=1)


def _requests_down_every_path():
    """Requests that take each path of the memory figures, beyond those the seeded plans take."""
    a3, gpu = reference.request(A3_4), reference.request(NF_2)
    yield "a3", a3
    yield "gpu", gpu
    yield "a2 text only", reference.request(reference.CASES["a2-8-text-only-modelslim"])
    yield (
        "typed overrides",
        replace(
            a3,
            serving=replace(
                a3.serving, activation_bytes=2 * GIB, graph_memory_bytes=GIB // 2, comm_buffer_groups=2
            ),
        ),
    )
    yield "gpu typed buffers", replace(gpu, serving=replace(gpu.serving, comm_buffer_groups=3))
    yield (
        "expert parallel off",
        replace(
            a3,
            topology=replace(
                a3.topology, parallel=ParallelSpec(tp=16, dp=4, expert_parallel=False, dp_local=1)
            ),
        ),
    )
    yield (
        "pipeline parallel",
        replace(a3, topology=replace(a3.topology, parallel=ParallelSpec(tp=16, dp=2, pp=2, dp_local=1))),
    )
    yield (
        "sliding window",
        replace(
            gpu,
            model=gpt_oss_like(),
            checkpoint=None,
            topology=replace(gpu.topology, parallel=ParallelSpec(tp=8, dp=4, dp_local=2)),
        ),
    )
    yield (
        "dense, eager",
        replace(
            gpu,
            model=reference.model("llama-3-1-8b"),
            checkpoint=None,
            serving=replace(gpu.serving, enforce_eager=True),
            topology=replace(gpu.topology, nodes=1, parallel=ParallelSpec(tp=2, dp=8, dp_local=8)),
        ),
    )
    yield "p/d", reference.request(_target_only(reference.CASES["a3-16-8p8d"]))


@pytest.mark.parametrize(
    "req", [r for _, r in _requests_down_every_path()], ids=[n for n, _ in _requests_down_every_path()]
)
def test_every_memory_figure_is_its_formula_over_its_inputs(req):
    """The figure book's catalogue formula, evaluated over the inputs put, gives each memory figure's value."""
    seen = []
    FigureBook.observer = lambda definition, variant, figure: seen.append((definition, variant, figure))
    try:
        mem = run(req)
    finally:
        FigureBook.observer = None
    seen = [x for x in seen if x[2].key.startswith("memory.")]
    assert set(mem.figures) == {f.key for _, _, f in seen}
    wrong = []
    for definition, variant, figure in seen:
        expected = definition.evaluate(variant, figure.inputs)
        if expected is not None and not math.isclose(figure.value, expected, rel_tol=1e-6, abs_tol=0.5):
            wrong.append(f"{figure.key} ({variant}): {figure.value} ≠ {figure.formula} = {expected}")
    assert not wrong, "\n".join(wrong)
    weights = mem.figures["memory.deployment_weights_bytes"]
    assert weights.value == sum(weights.inputs.values()) == sum(g.cluster_weights_bytes for g in mem.groups)


def test_memory_checks_are_bilingual():
    for req in (reference.request(A2_ONE_NODE), reference.request(A3_4)):
        for c in run(req).checks:
            assert c.message_en
            assert any("\u4e00" <= ch <= "\u9fff" for ch in c.message_zh)


def test_seeded_weight_split_matches_the_checkpoint():
    # The split must add up to the published checkpoint size, and the non-expert part is
    # BF16 (2 bytes) for the ≈57.2 B non-routed parameters (total 2,779,931,837,184 − experts).
    k3 = reference.model("kimi-k3")
    assert k3.weight_bytes == K3_CHECKPOINT
    assert k3.expert_weight_bytes == K3_EXPERT
    assert k3.vision_bytes == K3_VISION
    ck = reference.checkpoint("kimi-k3-hf-mxfp4")
    assert (ck.expert_bytes, ck.non_expert_bytes, ck.vision_bytes) == (K3_EXPERT, K3_NON_EXPERT, K3_VISION)
    assert k3.non_expert_weight_bytes / (2_779_931_837_184 - K3_EXPERT_PARAMS) == pytest.approx(2.0, rel=1e-2)
