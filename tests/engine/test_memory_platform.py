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

from configurator.engine import fixtures as fx
from configurator.engine.launch import build_launch
from configurator.engine.layout import resolve_layout
from configurator.engine.memory import size_memory
from configurator.engine.placement import REPLICABLE_GROUPS, RULES, GroupRule
from configurator.engine.plan import plan
from configurator.engine.types import CheckpointSpec, KvCacheDtype, ParallelSpec, Severity

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


def hf_checkpoint(**kw):
    k3 = fx.kimi_k3()
    base = dict(
        slug="k3-hf",
        name="Kimi K3 HF MXFP4",
        expert_bytes=k3.expert_weight_bytes,
        non_expert_bytes=k3.non_expert_weight_bytes,
        architecture="kimi_k3",
        vision_bytes=k3.vision_bytes,
        weight_format="mxfp4",
        quant_method="compressed-tensors",
        param_groups=GROUPS,
        group_formats=dict.fromkeys(GROUPS, "bf16"),
    )
    return CheckpointSpec(**(base | kw))


def run(req):
    return size_memory(req, resolve_layout(req))


def test_vllm_ascend_replicates_router_latent_mla_a_and_kda_f_a_in_bf16():
    req = replace(fx.request_k3_a3_4node(), checkpoint=hf_checkpoint())
    mem = run(req)
    rank = mem.groups[0].per_rank
    replicated = (ROUTER + LATENT + MLA_A + KDA_F_A) * 2
    assert replicated == 11_488_985_088
    assert rank.replicated_weights_bytes == replicated
    # The rest of the non-expert bytes (less vision and the replicated groups as stored) ÷ TP16.
    k3 = fx.kimi_k3()
    split = k3.non_expert_weight_bytes - k3.vision_bytes - replicated
    assert rank.non_expert_weights_bytes == pytest.approx(split / 16 + replicated + k3.vision_bytes, abs=1)
    fig = mem.figures["memory.per_rank.replicated_weights_bytes"]
    assert "vllm_ascend/models/kimi_k3.py" in fig.source.ref and fig.source.kind == "public"


def test_vllm_on_gpus_keeps_only_the_mla_a_and_kda_f_a_projections_whole():
    req = replace(fx.request_k3_nf5868g8_2node(), checkpoint=hf_checkpoint())
    rank = run(req).groups[0].per_rank
    assert rank.replicated_weights_bytes == (MLA_A + KDA_F_A) * 2 == 853_278_720


def test_modelslim_loads_the_latent_projections_as_stored_and_the_router_in_bf16():
    # _routed_latent_quant_config: the latent projections follow the checkpoint only for quant method "ascend".
    ck = hf_checkpoint(
        quant_method="ascend",
        group_formats={"router": "bf16"} | dict.fromkeys(("latent_moe", "mla_a", "kda_f_a"), "int8"),
    )
    rank = run(replace(fx.request_k3_a3_4node(), checkpoint=ck)).groups[0].per_rank
    assert rank.replicated_weights_bytes == ROUTER * 2 + LATENT + MLA_A + KDA_F_A


def test_hccl_buffers_are_two_per_communicator_with_the_mc2_group_at_hccl_buffsize():
    # vllm_ascend/utils.py get_hccl_config_for_pg_options: mc2 → HCCL_BUFFSIZE (env), dp → max(…, 50) MB,
    # every other group 200 MB; HCCL allocates an input and an output buffer per communicator.
    rank = run(fx.request_k3_a3_4node()).groups[0].per_rank  # TP16 · DP4 · EP64, HCCL_BUFFSIZE 800
    assert rank.buffer_bytes - rank.non_torch_bytes == 2 * (200 + 50 + 200 + 800) * MIB
    assert rank.non_torch_bytes == int(0.13 * GIB)
    # An explicit group count keeps the old flat formula (HCCL_BUFFSIZE × groups).
    req = fx.request_k3_a3_4node()
    req = replace(req, serving=replace(req.serving, comm_buffer_groups=2))
    assert run(req).groups[0].per_rank.buffer_bytes == 800 * MIB * 2 + int(0.13 * GIB)


@pytest.mark.parametrize("tp, expected_gib", [(1, 0.13), (2, 0.55)])
def test_nccl_non_torch_memory_by_tp_matches_the_public_logs(tp, expected_gib):
    # llm-d H100 logs (tests/data/vllm_startup_logs.yaml): non-torch 0.13 GiB at TP1, 0.55 GiB at TP2
    # (a dense model, data parallel ranks are separate engines with no NCCL buffers of their own here).
    req = fx.request_k3_nf5868g8_2node()
    req = replace(
        req,
        model=fx.llama_3_1_8b(),
        topology=replace(req.topology, nodes=1, parallel=ParallelSpec(tp=tp, dp=16 // tp, dp_local=16 // tp)),
    )
    rank = run(req).groups[0].per_rank
    assert rank.buffer_bytes / GIB == pytest.approx(expected_gib, abs=0.006)


def test_graph_memory_follows_platform_version_and_eager_mode():
    a3 = run(fx.request_k3_a3_4node()).groups[0].per_rank
    assert a3.graph_bytes == 0  # vLLM-Ascend worker.py does not subtract graph memory
    gpu = fx.request_k3_nf5868g8_2node()
    assert run(gpu).groups[0].per_rank.graph_bytes == GIB  # vLLM ≥ 0.21 subtracts the CUDA-graph pool
    old = replace(gpu, serving=replace(gpu.serving, vllm_version="0.11.0"))
    assert run(old).groups[0].per_rank.graph_bytes == 0
    eager = replace(gpu, serving=replace(gpu.serving, enforce_eager=True))
    assert run(eager).groups[0].per_rank.graph_bytes == 0


def test_activation_is_the_larger_of_forward_and_sampler_warm_up():
    req = fx.request_k3_nf5868g8_2node()  # vLLM on CUDA
    forward = 8192 * 7168 * 2 * (24 + 2 * 16)
    assert run(req).groups[0].per_rank.activation_bytes == forward  # 16 × 163,840 × 38 B is smaller
    many = replace(req, serving=replace(req.serving, max_num_seqs=2048))
    # vLLM's sampler warm-up: 38 B per request per vocabulary entry (memory.py, vllm/v1/sample).
    sampler = 2048 * 163_840 * 38
    assert sampler > forward
    assert run(many).groups[0].per_rank.activation_bytes == sampler
    fi = replace(many, serving=replace(many.serving, flashinfer_sampler=True))
    assert run(fi).groups[0].per_rank.activation_bytes == max(forward, 2048 * 163_840 * 10)
    # vLLM-Ascend's _dummy_sampler_run computes the logits only (BF16, 2 B) — model_runner_v1.py.
    a3 = fx.request_k3_a3_4node()
    a3 = replace(a3, serving=replace(a3.serving, max_num_seqs=8192))
    assert run(a3).groups[0].per_rank.activation_bytes == max(forward, 8192 * 163_840 * 2)


def test_device_memory_is_what_the_runtime_reports():
    req = fx.request_k3_a3_4node()
    acc = replace(req.server.accelerator, runtime_memory_bytes=int(61.27 * GIB), runtime_memory_source="log")
    req = replace(req, server=replace(req.server, accelerator=acc))
    rank = run(req).groups[0].per_rank
    assert rank.device_bytes == int(61.27 * GIB)
    assert rank.usable_bytes == int(int(61.27 * GIB) * 0.85)


def test_fp8_kv_is_an_error_on_ascend_and_fine_on_gpus():
    a3 = fx.request_k3_a3_4node()
    a3 = replace(a3, serving=replace(a3.serving, kv_cache_dtype=KvCacheDtype.FP8))
    check = next(c for c in run(a3).checks if c.code == "memory.kv_cache_dtype_unsupported")
    assert check.severity == Severity.ERROR and a3.server.name in check.message_en
    gpu = fx.request_k3_nf5868g8_2node()
    gpu = replace(gpu, serving=replace(gpu.serving, kv_cache_dtype=KvCacheDtype.FP8))
    assert not [c for c in run(gpu).checks if c.code == "memory.kv_cache_dtype_unsupported"]


def test_block_size_defaults_per_platform_and_the_bundle_passes_other_values():
    a3 = fx.request_k3_a3_4node()  # block_size 0 → the platform default
    result = plan(a3)
    assert result.request.serving.block_size == 128
    argv = build_launch(result.request, result.layout).nodes[0].argv[0]
    assert "--block-size" not in argv  # 128 is vLLM-Ascend's own default
    big = replace(a3, serving=replace(a3.serving, block_size=256))
    result = plan(big)
    argv = list(build_launch(result.request, result.layout).nodes[0].argv[0])
    assert argv[argv.index("--block-size") + 1] == "256"
    tokens = result.memory.groups[0].per_rank.kv_tokens
    assert (
        tokens % 256 == 0
        and tokens == math.floor(result.memory.groups[0].per_rank.kv_cache_bytes / (256 * 27_648)) * 256
    )


def test_modelslim_checkpoint_adds_quantization_ascend_and_the_hf_release_does_not():
    a3 = fx.request_k3_a3_4node()
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
