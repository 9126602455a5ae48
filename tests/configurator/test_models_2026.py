"""The models presales teams quote in 2026: each seeded from its public config.json and planning on a server.

Expected figures are counted here from the config file, not by the importer.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from catalog.seed import loader
from configurator import reference
from configurator.engine.plan import plan
from configurator.engine.types import Severity

CONFIGS = Path(loader.CONFIG_DIR)
GIB = 2**30


def _plan(model: str, server: str, nodes: int = 1):
    req = reference.request(
        {
            "model": model,
            "server": server,
            "topology": {"kind": "single", "nodes": nodes},
            "commercial": reference.COMMERCIAL,
        }
    )
    return req, plan(req)


def _qwen3_moe_params(config: dict) -> int:
    """A qwen3_moe checkpoint's parameters: untied embedding and lm_head, per layer q/o and k/v projections,
    q/k RMSNorms, two layer RMSNorms, the router and the routed experts (gate, up, down), the final norm."""
    h, layers = config["hidden_size"], config["num_hidden_layers"]
    heads, kv, hd = config["num_attention_heads"], config["num_key_value_heads"], config["head_dim"]
    experts, inter = config["num_experts"], config["moe_intermediate_size"]
    attention = 2 * h * heads * hd + 2 * h * kv * hd + 2 * hd
    layer = attention + 2 * h + h * experts + experts * 3 * h * inter
    return 2 * config["vocab_size"] * h + layers * layer + h


def test_qwen3_coder_480b_is_its_config():
    config = json.loads(
        (CONFIGS / "Qwen--Qwen3-Coder-480B-A35B-Instruct.config.json").read_text(encoding="utf-8")
    )
    params = _qwen3_moe_params(config)
    # Model card: 480 B parameters in total, 35 B activated.
    assert params == pytest.approx(480e9, rel=0.005)
    assert reference.model("qwen3-coder-480b-a35b").weight_bytes == 2 * params


def test_qwen3_coder_480b_bf16_tp8_plans_on_eight_h20_141gb():
    """Public vLLM and SGLang runs serve the BF16 release with TP8 on 8 × H20 141 GB.  Each rank holds an
    eighth of the 960 GB of weights (120 GB) in the 139.81 GiB the runtime sees (nvidia-smi: 143771MiB)."""
    config = json.loads(
        (CONFIGS / "Qwen--Qwen3-Coder-480B-A35B-Instruct.config.json").read_text(encoding="utf-8")
    )
    weights = 2 * _qwen3_moe_params(config)
    req, result = _plan("qwen3-coder-480b-a35b", "h3c-r5500g6-h20-141")
    errors = [c.code for c in result.checks if c.severity == Severity.ERROR]
    assert not errors, errors
    group, mem = result.layout.groups[0], result.memory.groups[0]
    assert group.parallel.tp * group.parallel.pp == 8
    rank = mem.per_rank
    assert rank.device_bytes == int(139.81 * GIB)
    assert rank.weights_bytes == pytest.approx(weights / 8, rel=0.001)
    assert rank.kv_cache_bytes > 0 and mem.kv_tokens_per_dp_rank > 0
    # The 96 GB H20 cannot hold the same eighth: 120 GB > 96 GB × 0.9.
    _, small = _plan("qwen3-coder-480b-a35b", "hgx-h20-8gpu")
    assert "memory.weights_do_not_fit" in [c.code for c in small.checks if c.severity == Severity.ERROR]


def _glm4_moe_params(config: dict) -> int:
    """GLM-4.x MoE: untied embedding and lm_head; per layer q/o and biased k/v projections (attention_bias adds
    q, k, v biases), q/k RMSNorms, two RMSNorms; the first ``first_k_dense_replace`` layers a dense MLP, the
    rest the router (with its correction bias), the routed and the shared experts; the final norm.  The MTP
    layer (num_nextn_predict_layers) is not served and not counted."""
    h, layers = config["hidden_size"], config["num_hidden_layers"]
    heads, kv, hd = config["num_attention_heads"], config["num_key_value_heads"], config["head_dim"]
    experts, inter = config["n_routed_experts"], config["moe_intermediate_size"]
    dense = config["first_k_dense_replace"]
    attention = 2 * h * heads * hd + 2 * h * kv * hd + heads * hd + 2 * kv * hd + 2 * hd
    moe = h * experts + experts + (experts + config["n_shared_experts"]) * 3 * h * inter
    mlp_dense = 3 * h * config["intermediate_size"]
    per_layer = attention + 2 * h
    return 2 * config["vocab_size"] * h + layers * per_layer + dense * mlp_dense + (layers - dense) * moe + h


def test_glm_4_6_is_its_config_and_plans_on_one_h200_server_and_one_a3():
    config = json.loads((CONFIGS / "zai-org--GLM-4.6.config.json").read_text(encoding="utf-8"))
    params = _glm4_moe_params(config)
    # Model card: 355 B parameters with the MTP layer; the served model is ≈ 353 B without it.
    assert params == pytest.approx(353e9, rel=0.01)
    assert reference.model("glm-4-6").weight_bytes == pytest.approx(2 * params, rel=0.001)
    assert reference.model("glm-4-6").max_context == 202_752
    for server in ("hgx-h200-8gpu", "atlas-800-a3"):
        _, result = _plan("glm-4-6", server)
        assert not [c.code for c in result.checks if c.severity == Severity.ERROR], server
        assert result.memory.groups[0].kv_tokens_per_dp_rank > 0


def test_kimi_k2_thinking_int4_experts_plan_on_one_a3_and_0905_on_one_b300():
    """K2-Thinking's routed experts are INT4 (group 32: 4 bits + a BF16 scale a 32 weights = 4.5 bits), the rest
    BF16; 384 experts × 60 MoE layers × 3 × 7168 × 2048 weights.  The vLLM-Ascend tutorial serves it on one
    Atlas 800 A3 (TP16 + EP).  The FP8 0905 release (≈ 1.03 TB) fits one DGX B300 (8 × 288 GB)."""
    config = json.loads((CONFIGS / "moonshotai--Kimi-K2-Thinking.config.json").read_text(encoding="utf-8"))
    moe_layers = config["num_hidden_layers"] - config["first_k_dense_replace"]
    expert_weights = (
        config["n_routed_experts"] * moe_layers * 3 * config["hidden_size"] * config["moe_intermediate_size"]
    )
    model = reference.model("kimi-k2-thinking")
    assert model.expert_weight_bytes == pytest.approx(expert_weights * 4.5 / 8, rel=0.01)
    assert model.max_context == 262_144
    _, result = _plan("kimi-k2-thinking", "atlas-800-a3")
    assert not [c.code for c in result.checks if c.severity == Severity.ERROR]
    assert result.memory.groups[0].kv_tokens_per_dp_rank > 0
    _, result = _plan("kimi-k2-0905", "dgx-b300")
    assert not [c.code for c in result.checks if c.severity == Severity.ERROR]
    assert reference.model("kimi-k2-0905").max_context == 262_144


QWEN3_NEXT = "Qwen--Qwen3-Next-80B-A3B-Instruct.config.json"


def _qwen3_next_counts(config: dict) -> tuple[int, int, int]:
    """(parameters, full-attention layers, Gated DeltaNet layers) of a Qwen3-Next config, counted from the
    transformers modules: a full layer every ``full_attention_interval``-th; its q_proj also yields the output
    gate; a DeltaNet layer has in_proj_qkvz, in_proj_ba, a depthwise conv, dt_bias, A_log, a gated norm and
    out_proj; every layer is MoE with 512 experts, a router and one gated shared expert."""
    h, layers = config["hidden_size"], config["num_hidden_layers"]
    full = sum(1 for i in range(layers) if (i + 1) % config["full_attention_interval"] == 0)
    linear = layers - full
    heads, kv, hd = config["num_attention_heads"], config["num_key_value_heads"], config["head_dim"]
    attention = h * heads * hd * 2 + 2 * h * kv * hd + heads * hd * h + 2 * hd
    key_dim = config["linear_num_key_heads"] * config["linear_key_head_dim"]
    value_dim = config["linear_num_value_heads"] * config["linear_value_head_dim"]
    v_heads = config["linear_num_value_heads"]
    conv_dim = 2 * key_dim + value_dim
    delta = (
        h * (2 * key_dim + 2 * value_dim)
        + h * 2 * v_heads
        + conv_dim * config["linear_conv_kernel_dim"]
        + 2 * v_heads
        + config["linear_value_head_dim"]
        + value_dim * h
    )
    experts, inter, shared = (
        config["num_experts"],
        config["moe_intermediate_size"],
        config["shared_expert_intermediate_size"],
    )
    moe = experts * 3 * h * inter + h * experts + 3 * h * shared + h
    params = 2 * config["vocab_size"] * h + full * attention + linear * delta + layers * (moe + 2 * h) + h
    return params, full, linear


def test_qwen3_next_is_its_config():
    config = json.loads((CONFIGS / QWEN3_NEXT).read_text(encoding="utf-8"))
    params, full, linear = _qwen3_next_counts(config)
    assert (full, linear) == (12, 36)
    assert params == pytest.approx(80e9, rel=0.01)  # model card: 80 B total
    model = reference.model("qwen3-next-80b-a3b-instruct")
    assert (model.gqa_layers, model.linear_layers) == (12, 36)
    assert model.weight_bytes == 2 * params
    assert (model.num_experts, model.experts_per_token) == (512, 10)


def test_qwen3_next_plans_on_one_atlas_800_a3_with_its_deltanet_state_per_sequence():
    """vLLM sizes a Gated DeltaNet layer's state per sequence (mamba_utils.py gated_delta_net_state_shape):
    conv (kernel − 1) × conv_dim ÷ TP and temporal (v_heads ÷ TP) × head_v_dim × head_k_dim, BF16 for this
    config (no mamba_ssm_dtype: "auto" follows the model dtype).  At TP16 on one A3: 36 × (2 × 128 × 128 × 2 +
    3 × 512 × 2) = 2,469,888 B; the 12 full-attention layers hold a KV cache per token."""
    config = json.loads((CONFIGS / QWEN3_NEXT).read_text(encoding="utf-8"))
    req, result = _plan("qwen3-next-80b-a3b-instruct", "atlas-800-a3")
    assert not [c.code for c in result.checks if c.severity == Severity.ERROR]
    group, mem = result.layout.groups[0], result.memory.groups[0]
    tp = group.parallel.tp
    v_heads, dim = config["linear_num_value_heads"], config["linear_value_head_dim"]
    conv_dim = 2 * config["linear_num_key_heads"] * config["linear_key_head_dim"] + v_heads * dim
    per_layer = (
        -(-v_heads // tp) * dim * dim * 2 + (config["linear_conv_kernel_dim"] - 1) * -(-conv_dim // tp) * 2
    )
    assert tp == 16
    assert mem.per_rank.linear_state_bytes_per_seq == 36 * per_layer == 2_469_888
    assert mem.kv_tokens_per_dp_rank > 0


def test_an_fp8_checkpoint_on_ampere_is_noted_weight_only_and_computed_at_bf16():
    """Ampere (compute capability 8.0) has no FP8 tensor cores; vLLM's Fp8LinearMethod runs FP8 weights through
    Marlin there, multiplying in BF16.  The A100's dense BF16 is 312 TFLOPS (NVIDIA A100 datasheet: 624 with
    sparsity); on the H200 the same checkpoint computes in FP8 and carries no such note."""
    _, result = _plan("deepseek-v3", "dgx-a100", nodes=2)
    notes = [c for c in result.checks if c.code == "performance.fp8_weight_only"]
    assert len(notes) == 1 and notes[0].severity == Severity.OK
    assert "312 TFLOPS" in notes[0].message_en and "BF16" in notes[0].message_zh
    _, hopper = _plan("deepseek-v3", "hgx-h200-8gpu", nodes=2)
    assert not [c for c in hopper.checks if c.code == "performance.fp8_weight_only"]


def test_deepseek_v3_1_and_v3_2_plan_on_one_h200_server():
    """V3.1 is V3's architecture (FP8, 61 layers, 256 experts); V3.2 adds the lightning indexer, whose top-2,048
    selection the decode step reads (index_n_heads 64 of 128, DeepSeek-V3.2 model card)."""
    v31, v32 = reference.model("deepseek-v3-1"), reference.model("deepseek-v3-2")
    config = json.loads((CONFIGS / "deepseek-ai--DeepSeek-V3.2.config.json").read_text(encoding="utf-8"))
    assert (v32.index_topk, v32.index_n_heads, v32.index_head_dim) == (2048, 64, 128)
    assert v31.index_topk == 0
    # The indexer per layer, FP8 as the release (a byte a weight): wq_b (q_lora_rank → 64 heads × 128),
    # wk (hidden → 128), weights_proj (hidden → 64).
    layers, hidden, q_lora = config["num_hidden_layers"], config["hidden_size"], config["q_lora_rank"]
    indexer = layers * (q_lora * 64 * 128 + hidden * 128 + hidden * 64)
    assert v32.weight_bytes - v31.weight_bytes == pytest.approx(indexer, rel=0.01)
    for slug in ("deepseek-v3-1", "deepseek-v3-2"):
        _, result = _plan(slug, "hgx-h200-8gpu")
        assert not [c.code for c in result.checks if c.severity == Severity.ERROR], slug
        assert result.memory.groups[0].kv_tokens_per_dp_rank > 0


def test_qwen3_235b_2507_is_the_qwen3_235b_architecture_at_256k_and_plans_on_one_h200_server():
    base = json.loads((CONFIGS / "Qwen--Qwen3-235B-A22B.config.json").read_text(encoding="utf-8"))
    for variant in ("instruct", "thinking"):
        model = reference.model(f"qwen3-235b-a22b-{variant}-2507")
        assert model.weight_bytes == 2 * _qwen3_moe_params(base)
        assert model.max_context == 262_144
        _, result = _plan(f"qwen3-235b-a22b-{variant}-2507", "hgx-h200-8gpu")
        assert not [c.code for c in result.checks if c.severity == Severity.ERROR], variant


def test_minimax_m2_is_its_config_and_plans_on_one_h200_server():
    """minimax_m2: per layer GQA q/k/v/o with one RMSNorm over all query heads and one over all key heads
    (qk_norm_type per_layer), two layer norms, a router with its routing bias and 256 experts of width 1,536.
    The FP8 safetensors hold 228,703,644,928 values with the 128 × 128 block scales; without them the
    weights are the count below (model card: 230 B total, 10 B active)."""
    c = json.loads((CONFIGS / "MiniMaxAI--MiniMax-M2.config.json").read_text(encoding="utf-8"))
    h, layers, heads, kv, hd = (
        c["hidden_size"],
        c["num_hidden_layers"],
        c["num_attention_heads"],
        c["num_key_value_heads"],
        c["head_dim"],
    )
    experts, inter = c["num_local_experts"], c["intermediate_size"]
    attention = 2 * h * heads * hd + 2 * h * kv * hd + (heads + kv) * hd
    layer = attention + 2 * h + h * experts + experts + experts * 3 * h * inter
    params = 2 * c["vocab_size"] * h + layers * layer + h
    block_scales = layers * experts * 3 * (h // 128) * (inter // 128)
    assert params + block_scales == pytest.approx(228_703_644_928, rel=1e-4)
    model = reference.model("minimax-m2")
    assert model.total_params == params and model.weight_format == "fp8"
    _, result = _plan("minimax-m2", "hgx-h200-8gpu")
    assert not [c.code for c in result.checks if c.severity == Severity.ERROR]


def test_qwen3_vl_counts_its_vision_tower_and_plans_on_one_h200_server():
    """Qwen3-VL-235B-A22B: the Qwen3-235B text tower (counted as qwen3_moe) and the vision tower of transformers'
    Qwen3VLMoeVisionModel: Conv3d patch embedding, position table, 27 blocks, a merger and three DeepStack
    mergers (2 × 2 merge: 4 × 1,152 = 4,608 wide)."""
    config = json.loads(
        (CONFIGS / "Qwen--Qwen3-VL-235B-A22B-Instruct.config.json").read_text(encoding="utf-8")
    )
    v = config["vision_config"]
    h, inter, out = v["hidden_size"], v["intermediate_size"], v["out_hidden_size"]
    merged = 4 * h
    tail = merged * merged + merged + merged * out + out
    block = 4 * h + 3 * h * h + 3 * h + h * h + h + 2 * h * inter + inter + h
    vision = (
        3 * 2 * 16 * 16 * h
        + h
        + v["num_position_embeddings"] * h
        + v["depth"] * block
        + (2 * h + tail)
        + 3 * (2 * merged + tail)
    )
    text = _qwen3_moe_params(config["text_config"])
    model = reference.model("qwen3-vl-235b-a22b-instruct")
    assert model.has_vision and model.vision_params == vision
    assert model.weight_bytes == 2 * (text + vision)
    assert text + vision == pytest.approx(236e9, rel=0.005)  # model card: 236 B
    _, result = _plan("qwen3-vl-235b-a22b-instruct", "hgx-h200-8gpu")
    assert not [c.code for c in result.checks if c.severity == Severity.ERROR]
