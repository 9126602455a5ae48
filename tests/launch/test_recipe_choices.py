"""What the recipes choose beyond flags: the checkpoint and image per platform and SoC, and the layouts a
recipe supports, each against the public source it encodes.

Sources: vllm-project/vllm-ascend releases/v0.23.0 docs/source/tutorials/models/DeepSeek-R1.md (§3.1 the
W8A8 checkpoint, §4.1 images ``vllm-ascend:<version>-a3`` on A3 and ``vllm-ascend:<version>`` on A2, §5.2
the multi-node environment and flags) and Kimi-K3.md §4.1 (``vllm-ascend:kimi-k3-a3`` / ``:kimi-k3``);
vllm-project/recipes main models/moonshotai/Kimi-K3.yaml (``strategy_hardware``: ``multi_node_tp_dp`` h200
supported, ``multi_node_dep`` h200 unsupported; ``min_vllm_version: "0.27.1"``) and strategies/*.yaml.
"""

from __future__ import annotations

import pytest

from configurator import reference
from configurator.engine.launch import build_launch
from configurator.engine.layout import resolve_layout
from configurator.engine.types import Severity

from .test_recipes import _flags, check_flags_exist

LAUNCH = {"model_path": "/data/models/DeepSeek-R1-W8A8", "data_nic": "enp189s0f0",
          "node_ips": ["10.0.0.11", "10.0.0.12"]}  # fmt: skip


def _build(data):
    req = reference.request(data)
    return req, build_launch(req, resolve_layout(req))


def _codes(result, severity=None):
    return {c.code for c in result.checks if severity is None or c.severity == severity}


def test_deepseek_r1_on_two_a3_serves_the_tutorials_w8a8_checkpoint():
    req, result = _build({"model": "deepseek-r1", "server": "atlas-800-a3",
                          "topology": {"kind": "single", "nodes": 2}, "launch": LAUNCH})  # fmt: skip
    # §3.1: vllm-ascend/DeepSeek-R1-W8A8, the Ascend default for the model (not the FP8 release)
    assert req.checkpoint is not None and req.checkpoint.slug == "deepseek-r1-w8a8"
    assert req.checkpoint.quant_method == "ascend" and req.checkpoint.platforms == ("ascend",)
    ctx = result.context
    assert ctx.recipe == "ascend-deepseek-r1-dp"
    assert ctx.image == "quay.io/ascend/vllm-ascend:v0.23.0-a3"  # §4.1, A3 tab
    assert "launch.checkpoint_not_for_ascend" not in _codes(result)
    tutorial_env = {  # §5.2, both tabs
        "OMP_PROC_BIND": "false", "OMP_NUM_THREADS": "1", "HCCL_BUFFSIZE": "200",
        "PYTORCH_NPU_ALLOC_CONF": "expandable_segments:True", "VLLM_ASCEND_BALANCE_SCHEDULING": "1",
        "HCCL_INTRA_PCIE_ENABLE": "1", "HCCL_INTRA_ROCE_ENABLE": "0",
    }  # fmt: skip
    assert req.serving.comm_buffer_mb == 200  # the memory estimate counts the buffer that is launched
    for node, ip in zip(result.nodes, LAUNCH["node_ips"], strict=True):
        (argv,) = node.argv
        flags = _flags(argv)
        assert flags["--quantization"] == "ascend" and flags["--seed"] == "1024"
        assert (
            "--trust-remote-code" in flags
            and flags["--compilation-config"] == '{"cudagraph_mode":"FULL_DECODE_ONLY"}'
        )
        assert "--speculative-config" not in flags  # left out, listed as a deviation
        assert {k: node.env[k] for k in tutorial_env} == tutorial_env
        assert node.env["HCCL_IF_IP"] == ip and node.env["HCCL_SOCKET_IFNAME"] == "enp189s0f0"
    assert ("--speculative-config", None) in {(d.name, d.value) for d in ctx.deviations}
    assert check_flags_exist(result) > 10


def test_deepseek_v3_on_ascend_without_a_w8a8_checkpoint_is_an_error():
    _, result = _build({"model": "deepseek-v3", "server": "atlas-800-a3",
                        "topology": {"kind": "single", "nodes": 2}})  # fmt: skip
    assert "launch.checkpoint_not_for_ascend" in _codes(result, Severity.ERROR)


@pytest.mark.parametrize(
    "server,image",
    [
        ("atlas-800-a3", "quay.io/ascend/vllm-ascend:v0.23.0-a3"),
        ("atlas-800-a2", "quay.io/ascend/vllm-ascend:v0.23.0"),
    ],
)
def test_the_release_image_follows_the_soc(server, image):
    # a model with no tutorial (generic recipe): the release image built for the server's SoC
    _, result = _build(
        {"model": "qwen3-235b-a22b", "server": server, "topology": {"kind": "single", "nodes": 1}}
    )
    assert result.context.recipe == "ascend-generic" and result.context.image == image


def test_k3_with_a_plain_release_image_is_a_clear_error_with_the_k3_image_as_fix():
    data = {**reference.CASES["a3-4-single"], "launch": {"image": "quay.io/ascend/vllm-ascend:v0.23.0-a3"}}
    _, result = _build(data)
    check = next(c for c in result.checks if c.code == "launch.image_cannot_serve_model")
    assert check.severity == Severity.ERROR and check.field == "launch.image"
    assert check.fix == {"launch.image": "quay.io/ascend/vllm-ascend:kimi-k3-a3"}
    # the K3 image of the other SoC serves the model but warns: custom operators are built per SoC
    data = {**reference.CASES["a3-4-single"], "launch": {"image": "quay.io/ascend/vllm-ascend:kimi-k3"}}
    _, result = _build(data)
    assert "launch.image_cannot_serve_model" not in _codes(result)
    assert "launch.image_for_other_soc" in _codes(result, Severity.WARNING)
    # the seeded images raise neither
    for data in (reference.CASES["a3-4-single"], reference.CASES["a2-8-text-only-modelslim"]):
        _, result = _build(data)
        assert not _codes(result) & {"launch.image_cannot_serve_model", "launch.image_for_other_soc"}
    # on CUDA a release from the recipe's min_vllm_version (0.27.1) on serves K3, an older one does not
    nf = reference.CASES["nf5868g8-2-single"]
    assert "launch.image_cannot_serve_model" not in _codes(
        _build({**nf, "launch": {"image": "vllm/vllm-openai:v0.27.1"}})[1]
    )
    assert "launch.image_cannot_serve_model" in _codes(
        _build({**nf, "launch": {"image": "vllm/vllm-openai:v0.23.0"}})[1]
    )


def test_k3_on_two_h200_warns_that_dep_is_unsupported_and_offers_tp_dp():
    req, result = _build(reference.CASES["hgx-h200-2-single"])
    p = req.topology.parallel
    assert (p.tp, p.dp, p.expert_parallel) == (8, 2, True)  # the plan's layout: multi_node_dep
    check = next(c for c in result.checks if c.code == "launch.layout_unsupported_by_recipe")
    assert check.severity == Severity.WARNING
    assert "multi_node_dep" in check.message_en and "multi_node_tp_dp" in check.message_en
    assert check.fix == {"topology.parallel.expert_parallel": False}
    # the fix applied: TP8 per node × DP2 without EP, no DeepEP flag (no experts cross nodes), no warning
    data = {**reference.CASES["hgx-h200-2-single"],
            "topology": {"kind": "single", "nodes": 2,
                         "parallel": {"tp": 8, "dp": 2, "expert_parallel": False, "dp_local": 1}}}  # fmt: skip
    _, fixed = _build(data)
    assert "launch.layout_unsupported_by_recipe" not in _codes(fixed)
    for node in fixed.nodes:
        flags = _flags(node.argv[0])
        assert flags["--tensor-parallel-size"] == "8" and flags["--data-parallel-size"] == "2"
        assert flags["--data-parallel-size-local"] == "1"
        assert "--enable-expert-parallel" not in flags and "--all2all-backend" not in flags
