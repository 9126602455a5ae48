"""Memory by engine version, KV tokens by KV-cache group, MXFP4 experts as the kernel holds them (issue 24).

Expected figures are worked out here from public configs, vLLM / vLLM-Ascend source and public start-up
logs (each cited beside it); the devices the catalog does not carry (H100, A100) are described inline
with the total the runtime reports.
"""

from dataclasses import replace

import pytest

from configurator import reference
from configurator.engine.engine_versions import budget_rules
from configurator.engine.memory import hybrid_kv_tokens
from configurator.engine.plan import plan
from configurator.engine.types import GIB, Severity
from configurator.io.requests import RequestError

# Runtime totals: H100 80GB 79.18 GiB (llm-d log "Free memory on device (78.57/79.18 GiB)"),
# A100-SXM4-80GB 79.25 GiB (vLLM "total_gpu_memory" log lines) — tests/data/vllm_startup_logs.yaml.
H100_GIB, A100_GIB = 79.18, 79.25


def inline_server(slug: str, name: str, gib: float, gpus: int) -> dict:
    total = round(gib * GIB)
    return {
        "slug": f"{slug}-x{gpus}",
        "name": f"{gpus} × {name}",
        "packages": gpus,
        "rack_units": 8,
        "max_input_kw": 10.0,
        "scale_up_fabric": "nvlink",
        "accelerator": {
            "slug": slug,
            "name": name,
            "memory_bytes": total,
            "runtime_memory_bytes": total,
            "memory_bandwidth_bytes_s": 2.0e12,
            "tflops": {"bf16": 312.0},
            "software_stack": "cuda",
        },
    }


# Qwen/Qwen3-32B config.json: hidden 5120, 64 layers, 64 heads, 8 KV heads, head_dim 128,
# intermediate 25600, vocab 151936, untied embeddings, BF16.
QWEN3_32B_PARAMS = (
    2 * 151936 * 5120  # embed_tokens + lm_head
    + 64 * (5120 * 64 * 128 + 2 * 5120 * 8 * 128 + 64 * 128 * 5120 + 3 * 5120 * 25600 + 2 * 5120 + 2 * 128)
    + 5120
)
QWEN3_32B = {
    "slug": "qwen3-32b-inline",
    "name": "Qwen3-32B",
    "total_params": QWEN3_32B_PARAMS,
    "active_params": QWEN3_32B_PARAMS,
    "num_layers": 64,
    "hidden_size": 5120,
    "vocab_size": 151936,
    "num_attention_heads": 64,
    "num_kv_heads": 8,
    "head_dim": 128,
    "gqa_layers": 64,
    "non_expert_weight_bytes": 2 * QWEN3_32B_PARAMS,
    "max_context": 40960,
}
# llm-d-benchmark empirical-vllm-memory-results.md (vLLM 0.11.0 API server on one H100, block 128, API
# defaults max_num_seqs 1024 / max_num_batched_tokens 8192): "Model loading took 61.03 GiB",
# "Available KV cache memory: 4.45 GiB".
LLMD_FLAGS = {
    "max_model_len": 16000,
    "max_num_seqs": 1024,
    "max_num_batched_tokens": 8192,
    "block_size": 128,
    "gpu_memory_utilization": 0.9,
}


def qwen3_32b_on_one_h100(**serving) -> dict:
    return {
        "model": QWEN3_32B,
        "server": inline_server("h100-sxm", "NVIDIA H100 80GB HBM3", H100_GIB, 1),
        "topology": {"kind": "single", "nodes": 1, "parallel": {"tp": 1, "dp": 1, "expert_parallel": False}},
        "serving": {**LLMD_FLAGS, **serving},
    }


def test_qwen3_32b_on_one_h100_fits_with_the_logged_kv_at_vllm_0_11():
    result = plan(reference.request(qwen3_32b_on_one_h100(vllm_version="0.11.0")))
    rank = result.memory.groups[0].per_rank
    assert rank.weights_bytes / GIB == pytest.approx(61.03, rel=0.002)  # the logged weights, from the config
    # vLLM 0.11 captures its CUDA graphs after sizing the KV cache: nothing subtracted for them.
    assert rank.graph_bytes == 0
    assert abs(rank.kv_cache_bytes / GIB - 4.45) / 4.45 <= 0.05
    codes = {c.code for c in result.checks if c.severity == Severity.ERROR}
    assert "memory.one_sequence_does_not_fit" not in codes


def test_the_same_start_up_on_vllm_0_21_subtracts_the_graph_pool():
    at_0_20 = plan(reference.request(qwen3_32b_on_one_h100(vllm_version="0.20.1"))).memory.groups[0]
    at_0_21 = plan(reference.request(qwen3_32b_on_one_h100(vllm_version="0.21.0"))).memory.groups[0]
    # vllm/envs.py: VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS "Enabled by default as of v0.21.0" (opt-in in
    # 0.19-0.20); both versions sample with FlashInfer, so the graph pool is the only difference.
    # What 0.21 subtracts is its own estimate, linear in the graphs it captures: at the API server's
    # max_num_seqs 1,024 / max_num_batched_tokens 8,192 the capture sizes run to min(2 × 1,024, 512) =
    # 512 (vllm/config/vllm.py _set_cudagraph_sizes: [1, 2, 4] + 8..248 step 8 + 256..512 step 16 = 51),
    # all of them ≤ max_num_seqs, so 51 PIECEWISE + 51 FULL descriptors (the "51 + 51" of vLLM 0.19's
    # llm-d-planner logs), × 0.24 MiB per layer on 0.21–0.25 for Qwen3-32B's 64 layers (0.53 GiB for 86
    # descriptors × 28 layers on 0.23.0, 0.84 GiB for 102 × 32 and 1.82 GiB for 102 × 80 on 0.19).
    expected = (51 + 51) * 64 * int(0.24 * 2**20)
    assert at_0_20.per_rank.graph_bytes == 0
    assert at_0_21.per_rank.graph_bytes == expected
    assert at_0_20.per_rank.kv_cache_bytes - at_0_21.per_rank.kv_cache_bytes == expected
    # From 0.26 each descriptor costs 20 MiB in vLLM's estimate (vllm-project/vllm#50780).
    at_0_27 = plan(reference.request(qwen3_32b_on_one_h100(vllm_version="0.27.1"))).memory.groups[0]
    assert at_0_27.per_rank.graph_bytes == (51 + 51) * 20 * 2**20
    assert budget_rules("ascend", "", "0.26.0").graphs_subtracted is False


def test_a_limit_within_the_error_band_is_a_warning_not_a_refusal():
    # One sequence of 18,000 tokens needs 18,048 (blocks of 128) × 64 layers × 2 × 8 × 128 × 2 B = 4.41 GiB,
    # within the estimate's band of the ≈ 4.6 GiB predicted: a warning, never "does not fit".
    near = plan(reference.request(qwen3_32b_on_one_h100(vllm_version="0.11.0", max_model_len=18000)))
    codes = {c.code: c.severity for c in near.checks}
    assert codes.get("memory.one_sequence_may_not_fit") == Severity.WARNING
    assert "memory.one_sequence_does_not_fit" not in codes
    # 32,000 tokens (7.8 GiB) is far outside it: llm-d's start-up was refused, and so is the plan.
    far = plan(reference.request(qwen3_32b_on_one_h100(vllm_version="0.11.0", max_model_len=32000)))
    assert "memory.one_sequence_does_not_fit" in {c.code for c in far.checks if c.severity == Severity.ERROR}


# dennislee22/vLLM-benchmarking log/vllm-120B-4gpuA10080GB-0.8GRAM-diff-nodes.log (vLLM 0.10.1.1, 4 × A100
# 80GB, TP4 across nodes): non-default args max_model_len 16384, tensor_parallel_size 4,
# gpu_memory_utilization 0.8; "max_num_batched_tokens=2048" (A100 API default, max_num_seqs 256);
# "Using FlashInfer for top-p & top-k sampling"; "Model loading took 17.2217 GiB";
# "Available KV cache memory: 45.32 GiB"; "GPU KV cache size: 2,640,144 tokens".
GPT_OSS_ON_4_A100 = {
    "model": "gpt-oss-120b",
    "server": inline_server("a100-sxm4-80gb", "NVIDIA A100-SXM4-80GB", A100_GIB, 4),
    "topology": {"kind": "single", "nodes": 1, "parallel": {"tp": 4, "dp": 1, "expert_parallel": False}},
    "serving": {
        "max_model_len": 16384,
        "gpu_memory_utilization": 0.8,
        "max_num_seqs": 256,
        "max_num_batched_tokens": 2048,
        "flashinfer_sampler": True,
        "vllm_version": "0.10.1.1",
    },
}


def test_gpt_oss_120b_mxfp4_weights_per_rank_on_a100_are_marlin_padded():
    rank = plan(reference.request(GPT_OSS_ON_4_A100)).memory.groups[0].per_rank
    # openai/gpt-oss-120b config: 36 layers × 128 experts × 3 matrices of hidden 2880 × width 2880, MXFP4
    # (4.25 bits); on A100 vLLM's Marlin path pads hidden to 3072 and the width per TP4 rank 720 → 768
    # (vllm mxfp4.py create_weights).  Attention, router, embeddings and lm_head stay BF16
    # (modules_to_not_convert) and are split by TP4.
    experts = 36 * 128 * 3 * 3072 * 768 * 4.25 / 8
    biases = 36 * 128 * (2 * 2880 + 2880) * 2 / 4
    attention = 36 * (2880 * (64 * 64 + 2 * 8 * 64) + 64 * 64 * 2880) * 2 / 4
    embeddings = 2 * 201088 * 2880 * 2 / 4
    expected = (experts + biases + attention + embeddings) / GIB
    assert rank.weights_bytes / GIB == pytest.approx(expected, rel=0.01)
    # vLLM logged 17.22 GiB per rank (issue 24).
    assert rank.weights_bytes / GIB == pytest.approx(17.22, rel=0.01)


def test_gpt_oss_120b_kv_tokens_follow_the_kv_cache_groups():
    rank = plan(reference.request(GPT_OSS_ON_4_A100)).memory.groups[0].per_rank
    # 18 full + 18 sliding layers → 2 groups of 18 (kv_cache_utils); a TP4 rank holds 2 KV heads × 64 ×
    # 2 B × K,V = 512 B per layer per token; blocks of 16 × 512 B × 18 layers; reported per group.
    blocks = rank.kv_cache_bytes // (16 * 512 * 18)
    assert rank.kv_tokens == (blocks // 2) * 16
    # Every layer costs memory per token: tokens ≈ KV bytes ÷ (512 B × 36 layers), not ÷ 18.
    assert rank.kv_tokens == pytest.approx(rank.kv_cache_bytes / (512 * 36), rel=0.001)
    # At the KV memory vLLM logged (45.32 GiB) the rule gives its 2,640,144 tokens (to the rounding of the
    # logged GiB), where counting full-attention layers only gave twice as many.
    assert hybrid_kv_tokens(int(45.32 * GIB), 512, 16, 18, 2) == pytest.approx(2_640_144, rel=0.0002)
    # End to end, from the catalog's gpt-oss-120b and the log's flags: KV memory and tokens within 5 %.
    assert rank.kv_cache_bytes / GIB == pytest.approx(45.32, rel=0.05)
    assert rank.kv_tokens == pytest.approx(2_640_144, rel=0.05)


def test_unset_version_is_the_recipes_everywhere_and_bad_ones_are_refused():
    a3 = reference.request({**reference.CASES["a3-4-single"], "serving": {"speculative": {"method": ""}}})
    assert a3.serving.vllm_version == "0.23.0"  # vLLM-Ascend K3 tutorial, releases/v0.23.0 (recipes.py)
    # With the catalog's DSpark draft (the default), the first vLLM-Ascend release that runs it
    # (catalog/seed/drafts.yaml: 0.26.0, vllm-ascend#12950), the tutorial's predating it.
    assert reference.request(reference.CASES["a3-4-single"]).serving.vllm_version == "0.26.0"
    h200 = reference.request(reference.CASES["hgx-h200-2-single"])
    assert h200.serving.vllm_version == "0.27.1"  # vllm-project/recipes Kimi-K3.yaml: vLLM ≥ 0.27.1
    with pytest.raises(RequestError) as bad:
        reference.request({**reference.CASES["a3-4-single"], "serving": {"vllm_version": "0.9.2"}})
    assert "serving.vllm_version" in bad.value.errors
    with pytest.raises(RequestError) as junk:
        reference.request({**reference.CASES["a3-4-single"], "serving": {"vllm_version": "latest; rm -rf"}})
    assert "serving.vllm_version" in junk.value.errors
    with pytest.raises(RequestError) as wrong:
        reference.request({**reference.CASES["hgx-h200-2-single"], "serving": {"engine": "vllm-ascend"}})
    assert "vLLM-Ascend does not run" in wrong.value.errors["serving.engine"][0]
    named = reference.request({**reference.CASES["a3-4-single"], "serving": {"vllm_version": "0.18.0"}})
    assert replace(named.serving, vllm_version="0.23.0") == a3.serving


@pytest.mark.parametrize(
    "full, sliding, expected",
    [
        # vllm kv_cache_utils._get_kv_cache_groups_uniform_page_size: the smaller type's layer count is the
        # group size, the last group of a type padded — Gemma-3-27B, 10 full + 52 sliding: 1 + 6 groups of 10.
        (10, 52, (10, 7)),
        # gpt-oss-120b: 18 + 18 → 2 groups of 18.
        (18, 18, (18, 2)),
        # Types within 25 % of each other use the larger count (the gpt-oss-20b + EAGLE comment: 13 full +
        # 12 sliding → groups of 13, one each).
        (13, 12, (13, 2)),
        # One attention type: no grouping (the plain per-token arithmetic).
        (32, 0, (1, 0)),
    ],
)
def test_kv_cache_groups_follow_vllm(full, sliding, expected):
    from configurator.engine.memory import kv_cache_groups
    from configurator.engine.types import ModelSpec

    model = ModelSpec(
        slug="m", name="m", total_params=0, active_params=0, num_layers=full + sliding, hidden_size=1,
        vocab_size=1, num_attention_heads=8, num_kv_heads=8, head_dim=128, gqa_layers=full,
        sliding_layers=sliding, sliding_window=1024 if sliding else 0,
    )  # fmt: skip
    assert kv_cache_groups(model) == expected
