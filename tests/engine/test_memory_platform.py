"""Per-rank memory as vLLM and vLLM-Ascend spend it, platform by platform (issue 14).

Expected figures are computed here from the public Kimi K3 config.json (tests/data/model-configs),
the vLLM-Ascend source (branch releases/v0.26.0rc: vllm_ascend/models/kimi_k3.py, vllm_ascend/utils.py)
and the public start-up logs in tests/data/vllm_startup_logs.yaml.
"""

import json
import math
from dataclasses import replace
from pathlib import Path

import pytest

from configurator import reference
from configurator.engine.launch import build_launch
from configurator.engine.layout import resolve_layout
from configurator.engine.memory import size_memory
from configurator.engine.placement import REPLICABLE_GROUPS, RULES, GroupRule
from configurator.engine.plan import plan
from configurator.engine.types import CheckpointSpec, Severity

GIB = 2**30
MIB = 2**20
TEXT = json.loads(
    (Path(__file__).resolve().parents[1] / "data/model-configs/moonshotai--Kimi-K3.config.json").read_text()
)["text_config"]

# Element counts of K3's platform-dependent groups, from the config.
H = TEXT["hidden_size"]
MOE_LAYERS = TEXT["num_hidden_layers"] - TEXT["first_k_dense_replace"]  # 92
ROUTER = MOE_LAYERS * H * TEXT["num_experts"]
LATENT = MOE_LAYERS * 2 * H * TEXT["routed_expert_hidden_size"]
MLA_A = (
    len(TEXT["linear_attn_config"]["full_attn_layers"])
    * H
    * (TEXT["q_lora_rank"] + TEXT["kv_lora_rank"] + TEXT["qk_rope_head_dim"])
)
KDA_F_A = len(TEXT["linear_attn_config"]["kda_layers"]) * H * TEXT["linear_attn_config"]["head_dim"]
GROUPS = {"router": ROUTER, "latent_moe": LATENT, "mla_a": MLA_A, "kda_f_a": KDA_F_A}


A3_4 = reference.CASES["a3-4-single"]
# max_num_seqs stated at the recipes' 16: the graph estimate below is checked at a given setting (one
# left to the defaults is sized to the KV cache, engine/memory.py size_admission)
NF_2 = {**reference.CASES["nf5868g8-2-single"], "serving": {"max_num_seqs": 16}}


def hf_checkpoint(**kw) -> CheckpointSpec:
    """The seeded Hugging Face MXFP4 release (what both seeded cases load), varied by ``kw``."""
    return replace(reference.checkpoint("kimi-k3-hf-mxfp4"), **kw)


def test_the_seeded_hf_checkpoint_counts_the_groups_of_the_public_config():
    # catalog/seed/checkpoints.yaml kimi-k3-hf-mxfp4 param_groups, against the counts made here from
    # the config: every group stored in BF16 (its group_formats).
    ck = hf_checkpoint()
    assert ck.param_groups == GROUPS
    assert ck.group_formats == dict.fromkeys(GROUPS, "bf16")
    assert (ck.weight_format, ck.quant_method) == ("mxfp4", "compressed-tensors")


def run(req):
    return size_memory(req, resolve_layout(req))


def test_vllm_ascend_replicates_router_latent_mla_a_and_kda_f_a_in_bf16():
    req = reference.request(A3_4)  # loads the seeded HF release
    assert req.checkpoint == hf_checkpoint()
    mem = run(req)
    rank = mem.groups[0].per_rank
    replicated = (ROUTER + LATENT + MLA_A + KDA_F_A) * 2
    assert replicated == 11_488_985_088
    assert rank.replicated_weights_bytes == replicated
    # The rest of the non-expert bytes (less vision and the replicated groups as stored) ÷ TP16.
    ck = req.checkpoint
    split = ck.non_expert_bytes - ck.vision_bytes - replicated
    assert rank.non_expert_weights_bytes == pytest.approx(split / 16 + replicated + ck.vision_bytes, abs=1)
    fig = mem.figures["memory.per_rank.replicated_weights_bytes"]
    assert "vllm_ascend/models/kimi_k3.py" in fig.source.ref and fig.source.kind == "public"


def test_vllm_on_gpus_keeps_only_the_mla_a_and_kda_f_a_projections_whole():
    req = reference.request(NF_2)  # loads the seeded HF release
    assert req.checkpoint == hf_checkpoint()
    rank = run(req).groups[0].per_rank
    assert rank.replicated_weights_bytes == (MLA_A + KDA_F_A) * 2 == 853_278_720


def test_modelslim_loads_the_latent_projections_as_stored_and_the_router_in_bf16():
    # _routed_latent_quant_config: the latent projections follow the checkpoint only for quant method "ascend".
    ck = hf_checkpoint(
        quant_method="ascend",
        group_formats={"router": "bf16"} | dict.fromkeys(("latent_moe", "mla_a", "kda_f_a"), "int8"),
    )
    rank = run(replace(reference.request(A3_4), checkpoint=ck)).groups[0].per_rank
    assert rank.replicated_weights_bytes == ROUTER * 2 + LATENT + MLA_A + KDA_F_A


def test_hccl_buffers_are_two_per_communicator_with_the_mc2_group_at_hccl_buffsize():
    # vllm_ascend/utils.py get_hccl_config_for_pg_options: mc2 → HCCL_BUFFSIZE (env), dp → max(…, 50) MB,
    # every other group 200 MB; HCCL allocates an input and an output buffer per communicator.
    rank = run(reference.request(A3_4)).groups[0].per_rank  # TP16 · DP4 · EP64, HCCL_BUFFSIZE 800
    assert rank.buffer_bytes - rank.non_torch_bytes == 2 * (200 + 50 + 200 + 800) * MIB
    assert rank.non_torch_bytes == int(0.13 * GIB)
    # An explicit group count keeps the old flat formula (HCCL_BUFFSIZE × groups).
    req = reference.request({**A3_4, "serving": {"comm_buffer_groups": 2}})
    assert run(req).groups[0].per_rank.buffer_bytes == 800 * MIB * 2 + int(0.13 * GIB)


@pytest.mark.parametrize(
    "version, tp, expected_gib",
    [("0.11.0", 1, 0.13), ("0.11.0", 2, 0.55), ("0.19.0", 1, 0.25), ("0.19.0", 2, 2.09)],
)
def test_nccl_non_torch_memory_by_tp_and_version_matches_the_public_logs(version, tp, expected_gib):
    # Public H100 start-ups (tests/data/vllm_startup_logs.yaml): vLLM 0.11.0 (llm-d) logs non-torch
    # 0.13 GiB at TP1 and 0.54–0.55 GiB at TP2; vLLM 0.19.0 (llm-d-planner, "Actual usage is … for
    # non-torch memory") 0.25 GiB at TP1 and 2.1 / 2.07 GiB at TP2.  Data-parallel ranks are separate
    # engines with no NCCL buffers of their own here.
    parallel = {"tp": tp, "dp": 16 // tp, "dp_local": 16 // tp}
    req = reference.request(
        {
            "model": "llama-3-1-8b",
            "server": "nf5868g8",
            "topology": {"kind": "single", "nodes": 1, "parallel": parallel},
        }
    )
    req = replace(req, serving=replace(req.serving, vllm_version=version))
    rank = run(req).groups[0].per_rank
    assert rank.buffer_bytes / GIB == pytest.approx(expected_gib, abs=0.025)


def test_graph_memory_follows_platform_version_and_eager_mode():
    a3 = run(reference.request(A3_4)).groups[0].per_rank
    assert a3.graph_bytes == 0  # vLLM-Ascend worker.py does not subtract graph memory
    gpu = reference.request(NF_2)
    # vLLM ≥ 0.21 subtracts its CUDA-graph estimate: at max_num_seqs 16 the capture sizes run to
    # min(2 × 16, 512) = 32 (vllm/config/vllm.py _set_cudagraph_sizes): 7 PIECEWISE ([1, 2, 4, 8, 16, 24,
    # 32]) + 5 FULL (those ≤ 16), 20 MiB each on vLLM 0.27 (engine_versions.GRAPH_BYTES_PER_DESCRIPTOR).
    assert gpu.serving.max_num_seqs == 16 and gpu.serving.vllm_version == "0.27.1"
    assert run(gpu).groups[0].per_rank.graph_bytes == (7 + 5) * 20 * 2**20
    # PIECEWISE only (the plan's piecewise_graphs): no FULL descriptors.
    piecewise = replace(gpu, performance=replace(gpu.performance, piecewise_graphs=True))
    assert run(piecewise).groups[0].per_rank.graph_bytes == 7 * 20 * 2**20
    old = replace(gpu, serving=replace(gpu.serving, vllm_version="0.11.0"))
    assert run(old).groups[0].per_rank.graph_bytes == 0
    eager = replace(gpu, serving=replace(gpu.serving, enforce_eager=True))
    assert run(eager).groups[0].per_rank.graph_bytes == 0


def test_activation_is_the_larger_of_forward_and_sampler_warm_up():
    req = reference.request(NF_2)  # vLLM on CUDA
    forward = 8192 * 7168 * 2 * (24 + 2 * 16)
    assert run(req).groups[0].per_rank.activation_bytes == forward  # 16 × 163,840 × 38 B is smaller
    many = replace(req, serving=replace(req.serving, max_num_seqs=2048, flashinfer_sampler=False))
    # Without FlashInfer, vLLM ≥ 0.16 masks with its Triton kernel (14 B, below the forward pass here) …
    assert run(many).groups[0].per_rank.activation_bytes == max(forward, 2048 * 163_840 * 14)
    # … and before, vLLM's PyTorch-native sort: 38 B per request per vocabulary entry (memory.py,
    # vllm/v1/sample/ops/topk_topp_sampler.py apply_top_k_top_p).
    sorted_ = replace(many, serving=replace(many.serving, vllm_version="0.15.1"))
    sampler = 2048 * 163_840 * 38
    assert sampler > forward
    assert run(sorted_).groups[0].per_rank.activation_bytes == sampler
    fi = replace(many, serving=replace(many.serving, flashinfer_sampler=True))
    assert run(fi).groups[0].per_rank.activation_bytes == max(forward, 2048 * 163_840 * 10)
    # Unset, the sampler is the version's default: FlashInfer from vLLM 0.20 (PR #40376), the
    # PyTorch-native one before (PR #26859).
    default = replace(many, serving=replace(many.serving, flashinfer_sampler=None))
    assert default.serving.vllm_version == "0.27.1"
    assert run(default).groups[0].per_rank.activation_bytes == max(forward, 2048 * 163_840 * 10)
    # Before 0.20 without FlashInfer: vLLM's Triton top-k/top-p kernel masks the FP32 logits in place
    # from 0.16 (PR #33538): BF16 logits, FP32 logits, probabilities, exponential noise = 14 B; the
    # 0.19.0 logs' peak activation is 15.5 B per entry for Llama-3.1-8B at 1,024 × 128,256.
    older = replace(default, serving=replace(default.serving, vllm_version="0.19.1"))
    assert run(older).groups[0].per_rank.activation_bytes == max(forward, 2048 * 163_840 * 14)
    oldest = replace(default, serving=replace(default.serving, vllm_version="0.15.1"))
    assert run(oldest).groups[0].per_rank.activation_bytes == sampler
    # vLLM-Ascend's _dummy_sampler_run computes the logits only (BF16, 2 B) — model_runner_v1.py.
    a3 = reference.request({**A3_4, "serving": {"max_num_seqs": 8192}})
    assert run(a3).groups[0].per_rank.activation_bytes == max(forward, 8192 * 163_840 * 2)


def test_device_memory_is_what_the_runtime_reports():
    # The seeded 910C carries the runtime's figure (catalog/seed/accelerators.yaml ascend-910c
    # runtime_memory_bytes, from the vllm-ascend PR #8289 start-up log "Free memory on device
    # (60.86/61.27 GiB)"): 61.27 GiB = 65,788,161,556 B, not the 64 GB on the data sheet.
    req = reference.request(A3_4)
    rank = run(req).groups[0].per_rank
    assert rank.device_bytes == int(61.27 * GIB) == 65_788_161_556
    # gpu_memory_utilization 0.9 (the API's default): ⌊65,788,161,556 × 0.9⌋ = 59,209,345,400
    assert rank.usable_bytes == int(int(61.27 * GIB) * 0.9) == 59_209_345_400
    # Another runtime figure is followed as given.
    acc = replace(req.server.accelerator, runtime_memory_bytes=int(60 * GIB), runtime_memory_source="log")
    rank = run(replace(req, server=replace(req.server, accelerator=acc))).groups[0].per_rank
    assert rank.device_bytes == int(60 * GIB)
    assert rank.usable_bytes == int(int(60 * GIB) * 0.9)


def test_fp8_kv_is_an_error_on_ascend_and_fine_on_gpus():
    a3 = reference.request({**A3_4, "serving": {"kv_cache_dtype": "fp8"}})
    check = next(c for c in run(a3).checks if c.code == "memory.kv_cache_dtype_unsupported")
    assert check.severity == Severity.ERROR and a3.server.name in check.message_en
    gpu = reference.request({**NF_2, "serving": {"kv_cache_dtype": "fp8"}})
    assert not [c for c in run(gpu).checks if c.code == "memory.kv_cache_dtype_unsupported"]


def test_block_size_defaults_per_platform_and_the_bundle_passes_other_values():
    a3 = reference.request(A3_4)  # block_size 0 → the platform default
    result = plan(a3)
    assert result.request.serving.block_size == 128
    argv = build_launch(result.request, result.layout).nodes[0].argv[0]
    assert "--block-size" not in argv  # 128 is vLLM-Ascend's own default
    big = reference.request({**A3_4, "serving": {"block_size": 256}})
    result = plan(big)
    argv = list(build_launch(result.request, result.layout).nodes[0].argv[0])
    assert argv[argv.index("--block-size") + 1] == "256"
    tokens = result.memory.groups[0].per_rank.kv_tokens
    # 27,648 B a token for K3's 24 MLA layers ((512 + 64) × 2 B each) + 1,280 B for the catalog DSpark
    # draft's 5 GQA layers (2 × max(1, 16 ÷ 16) heads × 64 × 2 B each; catalog/seed/drafts.yaml)
    per_token = 24 * (512 + 64) * 2 + 5 * 2 * 1 * 64 * 2
    assert (
        tokens % 256 == 0
        and tokens == math.floor(result.memory.groups[0].per_rank.kv_cache_bytes / (256 * per_token)) * 256
    )


def test_modelslim_checkpoint_adds_quantization_ascend_and_the_hf_release_does_not():
    a3 = reference.request(A3_4)
    hf = plan(replace(a3, checkpoint=hf_checkpoint()))
    assert "--quantization" not in build_launch(hf.request, hf.layout).nodes[0].argv[0]
    slim = replace(
        a3, checkpoint=hf_checkpoint(quant_method="ascend", launch_flags=("--quantization", "ascend"))
    )
    result = plan(slim)
    argv = list(build_launch(result.request, result.layout).nodes[0].argv[0])
    assert argv[argv.index("--quantization") + 1] == "ascend"


def test_a_placement_rule_names_only_groups_the_replicated_figure_names():
    # memory.per_rank.replicated_weights_bytes sums router, latent_moe, mla_a and kda_f_a by name.
    assert {r.group for rules in RULES.values() for r in rules} <= set(REPLICABLE_GROUPS)
    with pytest.raises(ValueError, match="not one of"):
        GroupRule("lm_head", "replicated", "bf16", "somewhere")
