"""Each seeded Ascend bundle against the public tutorial it follows, and every flag against the vLLM source.

The expected environment and flags below are copied by hand from the vLLM-Ascend Kimi-K3 tutorial
(github.com/vllm-project/vllm-ascend, branch releases/v0.23.0, docs/source/tutorials/models/Kimi-K3.md),
not from ``configurator/engine/recipes.py``: a bundle may differ from them only by a deviation the
bundle records (with its reason) and lists in its README.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest

from configurator import reference
from configurator.engine import recipes as rc
from configurator.engine.launch import build_launch, bundle_files
from configurator.engine.layout import resolve_layout
from documents.pdf.sample import LAUNCH_A3, sample_request_json

FLAG_DIR = Path(__file__).resolve().parents[1] / "data" / "vllm-flags"
TUTORIAL = "vllm-ascend/blob/releases/v0.23.0/docs/source/tutorials/models/Kimi-K3.md"
NIC = LAUNCH_A3["data_nic"]  # the data NIC of every request below
# Flags whose value is the plan's (sizes, parallelism, ports, the model's parsers, the checkpoint's
# --quantization: [QUANT] in engine/recipes.py, the tutorials pass none), not the tutorial's.
PLAN = {
    "--quantization",
    "--served-model-name", "--host", "--port", "--headless", "--tensor-parallel-size", "--pipeline-parallel-size",
    "--data-parallel-size", "--data-parallel-size-local", "--data-parallel-start-rank", "--data-parallel-rank",
    "--data-parallel-address", "--data-parallel-rpc-port", "--enable-expert-parallel", "--max-model-len",
    "--max-num-seqs", "--max-num-batched-tokens", "--gpu-memory-utilization", "--kv-cache-dtype",
    "--enable-prefix-caching", "--no-enable-prefix-caching", "--language-model-only", "--tokenizer-mode",
    "--reasoning-parser", "--enable-auto-tool-choice", "--tool-call-parser", "--kv-transfer-config",
}  # fmt: skip
JSON_FLAGS = {"--compilation-config", "--additional-config", "--limit-mm-per-prompt", "--kv-transfer-config"}


def _devices(n: int) -> str:
    return ",".join(str(i) for i in range(n))


def _common_a3(ip: str) -> dict[str, str]:
    # §5.1.1, both tabs
    return {
        "HCCL_IF_IP": ip,
        "GLOO_SOCKET_IFNAME": NIC,
        "TP_SOCKET_IFNAME": NIC,
        "HCCL_SOCKET_IFNAME": NIC,
        "PYTORCH_NPU_ALLOC_CONF": "expandable_segments:True",
        "OMP_PROC_BIND": "false",
        "OMP_NUM_THREADS": "1",
        "TASK_QUEUE_ENABLE": "1",
        "HCCL_BUFFSIZE": "800",
        "ASCEND_RT_VISIBLE_DEVICES": _devices(16),
    }


def tutorial_a3_4node(role: str, ip: str) -> tuple[dict[str, str], dict[str, str | None]]:
    env = _common_a3(ip)
    if role == "master":
        env["VLLM_ENGINE_READY_TIMEOUT_S"] = "7200"  # "Only the master waits for all engines"
    flags = {
        "--allowed-local-media-path": "/",
        "--trust-remote-code": None,
        "--compilation-config": '{"cudagraph_mode":"FULL_DECODE_ONLY"}',
        "--mm-processor-cache-gb": "0",
        "--additional-config": '{"enable_cpu_binding":true, "enable_flashcomm1":true}',
        "--mm-encoder-tp-mode": "data",
        "--limit-mm-per-prompt": '{"vision_chunk": 2}',
    }
    return env, flags


def tutorial_a3_8p8d(role: str, ip: str) -> tuple[dict[str, str], dict[str, str | None]]:
    # §5.1.2.2 "Create the engine templates", Prefill and Decode tabs
    env = {
        "VLLM_RPC_TIMEOUT": "3600000",
        "VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS": "30000",
        "HCCL_EXEC_TIMEOUT": "204",
        "HCCL_CONNECT_TIMEOUT": "120",
        "HCCL_IF_IP": ip,
        "GLOO_SOCKET_IFNAME": NIC,
        "TP_SOCKET_IFNAME": NIC,
        "HCCL_SOCKET_IFNAME": NIC,
        "OMP_PROC_BIND": "false",
        "OMP_NUM_THREADS": "10",
        "PYTORCH_NPU_ALLOC_CONF": "expandable_segments:True",
        "VLLM_ASCEND_ENABLE_MLAPO": "1",
        "HCCL_BUFFSIZE": "1024",
        "TASK_QUEUE_ENABLE": "1",
        "VLLM_USE_V1": "1",
        "ASCEND_RT_VISIBLE_DEVICES": _devices(16),
        "ASCEND_ENABLE_USE_FABRIC_MEM": "1",
    }
    flags: dict[str, str | None] = {
        "--seed": "1024",
        "--trust-remote-code": None,
        "--mm-encoder-tp-mode": "data",
        "--skip-mm-profiling": None,
        "--safetensors-load-strategy": "prefetch",  # the tutorial writes --safetensors_load_strategy
        "--mamba-cache-mode": "align",
        "--additional-config": '{"recompute_scheduler_enable":false}',
        "--limit-mm-per-prompt": '{"vision_chunk":2}',
    }
    if role == "prefill":
        env |= {"MMC_LOCAL_CONFIG_PATH": "/etc/memcache/mmc-local.conf", "PYTHONHASHSEED": "0",
                "ACL_OP_INIT_MODE": "1"}  # fmt: skip
        flags["--enforce-eager"] = None
    else:
        env["HCCL_OP_EXPANSION_MODE"] = "AIV"
        flags["--compilation-config"] = '{"cudagraph_mode": "FULL_DECODE_ONLY"}'
    return env, flags


def tutorial_a2_8node(role: str, ip: str) -> tuple[dict[str, str], dict[str, str | None]]:
    # §5.2.1, both tabs (identical but for --headless and the start rank)
    env = {
        "VLLM_HOST_IP": ip,
        "HCCL_IF_IP": ip,
        "GLOO_SOCKET_IFNAME": NIC,
        "TP_SOCKET_IFNAME": NIC,
        "HCCL_SOCKET_IFNAME": NIC,
        "HCCL_CONNECT_TIMEOUT": "1800",
        "HCCL_EXEC_TIMEOUT": "1800",
        "HCCL_BUFFSIZE": "256",
        "HCCL_INTRA_ROCE_ENABLE": "1",
        "VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS": "30000",
        "OMP_PROC_BIND": "false",
        "OMP_NUM_THREADS": "10",
        "PYTORCH_NPU_ALLOC_CONF": "expandable_segments:True",
        "VLLM_LOGGING_LEVEL": "INFO",
        "TASK_QUEUE_ENABLE": "1",
        "TIKTOKEN_CACHE_DIR": "/root/.cache/tiktoken-k3",
        "ASCEND_RT_VISIBLE_DEVICES": _devices(8),
    }
    flags: dict[str, str | None] = {
        "--trust-remote-code": None,
        "--mm-encoder-tp-mode": "data",
        "--skip-mm-profiling": None,
        "--limit-mm-per-prompt": '{"vision_chunk":2}',
        "--dtype": "bfloat16",
        "--compilation-config": '{"cudagraph_mode":"FULL_DECODE_ONLY","cudagraph_capture_sizes":[1,2,4,8]}',
        "--additional-config": '{"enable_flashcomm1":false,"ascend_compilation_config":{"enable_npugraph_ex":true,'
        '"enable_static_kernel":false},"enable_cpu_binding":true}',
    }
    return env, flags


def _a2_text_only() -> dict:
    """The seeded A2 case (ModelSlim W4A8, language model only) with a launch section: it has no sample
    proposal, so the sample's model path and addresses and the A2 recipe's image (§5.2.1)."""
    launch = {**sample_request_json("4node")["launch"], "image": "quay.io/ascend/vllm-ascend:kimi-k3"}
    launch["node_ips"] = [f"10.0.0.{11 + i}" for i in range(8)]
    return {**reference.CASES["a2-8-text-only-modelslim"], "launch": launch}


def _with_serving(data: dict, **serving) -> dict:
    return {**data, "serving": {**data.get("serving", {}), **serving}}


# The seeded cases (configurator.reference.CASES) with a launch section (documents/pdf/sample.py).
SEEDED = {
    "4 × A3": (lambda: sample_request_json("4node"), tutorial_a3_4node, "#511-four-node-mixed-deployment"),
    "8 × A3 pair": (lambda: sample_request_json("8node-standby"), tutorial_a3_4node,
                    "#511-four-node-mixed-deployment"),
    "16 × A3 8P8D": (lambda: sample_request_json("8p8d"), tutorial_a3_8p8d,
                     "#512-sixteen-node-pd-separation-deployment"),
    "8 × A2": (_a2_text_only, tutorial_a2_8node, "#521-eight-node-mixed-deployment"),
}  # fmt: skip


def _request(label: str):
    return reference.request(SEEDED[label][0]())


def _flags(argv: tuple[str, ...]) -> dict[str, str | None]:
    words = list(argv[argv.index("serve") + 2 :])
    out: dict[str, str | None] = {}
    i = 0
    while i < len(words):
        if i + 1 < len(words) and not words[i + 1].startswith("--"):
            out[words[i]] = words[i + 1]
            i += 2
        else:
            out[words[i]] = None
            i += 1
    return out


def _norm(flags: dict[str, str | None]) -> dict[str, object]:
    """Flag names with '-' (vLLM's parser accepts '_'); JSON values parsed, so spacing does not matter."""
    out: dict[str, object] = {}
    for k, v in flags.items():
        k = "--" + k[2:].replace("_", "-")
        out[k] = json.loads(v) if k in JSON_FLAGS and v is not None else v
    return out


def _apply(env, flags, deviations, role, ip):
    env, flags = dict(env), dict(flags)
    fill = {rc.IP: ip, rc.NIC: NIC}
    for d in deviations:
        if role not in d.roles or d.name in PLAN:  # plan-sized flags: checked against the argv below
            continue
        target = env if d.kind == "env" else flags
        if d.value is None:
            target.pop(d.name, None)
        else:
            target[d.name] = fill.get(d.value, d.value)
    return env, flags


@pytest.mark.parametrize("label", list(SEEDED))
def test_seeded_bundle_is_the_tutorial_plus_its_recorded_deviations(label):
    _, tutorial, section = SEEDED[label]
    req = _request(label)
    result = build_launch(req, resolve_layout(req))
    ctx = result.context
    recipe = rc.by_key(ctx.recipe)
    assert TUTORIAL in recipe.source and recipe.source.endswith(section)
    assert (recipe.vllm, recipe.vllm_ascend) == (
        "0.23.0",
        "0.23.0",
    )  # "validated … based on vLLM-Ascend 0.23.0"
    readme = bundle_files(result)["README.md"]
    assert recipe.source in readme
    for d in ctx.deviations:  # every deviation is listed with its reason
        assert f"`{d.name}`" in readme and d.reason.split(";")[0][:60] in readme
    for node in result.nodes:
        want_env, want_flags = tutorial(node.role, node.host)
        want_env, want_flags = _apply(want_env, want_flags, ctx.deviations, node.role, node.host)
        assert dict(node.env) == want_env, (label, node.script)
        for argv in node.argv:
            got = {k: v for k, v in _flags(argv).items() if k not in PLAN}
            assert _norm(got) == _norm(want_flags), (label, node.script)
            # a plan-sized flag that differs from the tutorial's is launched as the deviation says
            # (on the roles it names: xPyD prefill engines keep the setting)
            for d in ctx.deviations:
                if d.kind == "flag" and d.name in PLAN and node.role in d.roles:
                    assert _flags(argv)[d.name] == d.value, (label, d.name)


def test_the_deviations_are_the_reasoned_ones():
    """What each seeded bundle does differently from its tutorial section, and nothing else."""

    def devs(req):
        return {(d.name, d.value) for d in build_launch(req, resolve_layout(req)).context.deviations}

    host = ("VLLM_HOST_IP", rc.IP)  # S1's pitfall: set on every node
    # §5.1.1's four-node default batches 24576 tokens; the seeded plans size 8192 (the tutorial's own
    # 1M-context value), which the bundle launches and lists
    batch = ("--max-num-batched-tokens", "8192")
    # §5.1.1 runs 16 sequences per DP rank. With the draft the design point is held by KV capacity, above
    # 16 a DP rank, and the plan sizes max_num_seqs to it (engine/memory.py size_admission): the engines
    # launch the design point's sequences and the bundle lists them
    # (test_the_serving_engines_launch_the_design_points_sequences_per_dp_rank).
    from configurator.engine.plan import plan

    def seqs(req):
        return ("--max-num-seqs", str(plan(req).performance.design_point.max_num_seqs_per_dp_rank))

    # The tutorials start no draft; the plans run the catalog's K3 DSpark draft (catalog/seed/drafts.yaml),
    # launched as the vLLM recipes' Ascend 910C entry does (vllm-project/recipes#842): method, the draft's
    # repository, 7 tokens, the draft eager.
    spec = (
        "--speculative-config",
        json.dumps(
            {
                "method": "dspark",
                "model": "RadixArk/Kimi-K3-DSpark",
                "num_speculative_tokens": 7,
                "enforce_eager": True,
            },
            separators=(",", ":"),
        ),
    )
    four, pair = _request("4 × A3"), _request("8 × A3 pair")
    assert seqs(four) != ("--max-num-seqs", "16")
    assert devs(four) == {host, ("--allowed-local-media-path", None), batch, spec, seqs(four)}
    # the pair lowers HCCL's ≈30 min execution timeout so a hung collective fails over
    assert devs(pair) == {host, ("--allowed-local-media-path", None),
                          ("HCCL_EXEC_TIMEOUT", "204"), batch, spec, seqs(pair)}  # fmt: skip
    # the seeded 8P8D and A2 requests leave the buffer to the tutorial (1024 MB §5.1.2.2, 256 MB §5.2.1);
    # §5.1.2.2 runs a 133120-token context, the plan 131072
    ctx_len = ("--max-model-len", "131072")
    # §5.1.2.2's engines run 16 sequences a DP rank; with the draft the 8P8D design point stops at the
    # prefill side's capacity (89 users over the 8 decode DP ranks: ceil(89 / 8) = 12), which the decode
    # engines launch; the prefill engines run the plan's setting, sized to the KV cache
    pd = _request("16 × A3 8P8D")
    assert seqs(pd) == ("--max-num-seqs", "12")
    prefill_seqs = ("--max-num-seqs", str(plan(pd).request.serving.max_num_seqs))
    assert devs(pd) == {
        host,
        ("VLLM_ENGINE_READY_TIMEOUT_S", "7200"),
        ctx_len,
        spec,
        seqs(pd),
        prefill_seqs,
    }
    a2_req = _request("8 × A2")
    a2_devs = {("VLLM_ENGINE_READY_TIMEOUT_S", "7200")}  # the draft's runs are on A3 only: no draft on A2
    if a2_req.serving.max_model_len != 262144:  # §5.2.1: 262144
        a2_devs.add(("--max-model-len", str(a2_req.serving.max_model_len)))
    assert devs(a2_req) == a2_devs
    # a request that sizes the communication buffer at 800 MB (counted in the memory estimate) launches
    # 800 and records it as a deviation from either section
    pd_800 = reference.request(_with_serving(SEEDED["16 × A3 8P8D"][0](), comm_buffer_mb=800))
    assert devs(pd_800) == {
        host,
        ("VLLM_ENGINE_READY_TIMEOUT_S", "7200"),
        ("HCCL_BUFFSIZE", "800"),
        ctx_len,
        spec,
        seqs(pd_800),
        ("--max-num-seqs", str(plan(pd_800).request.serving.max_num_seqs)),
    }
    assert build_launch(pd_800, resolve_layout(pd_800)).nodes[0].env["HCCL_BUFFSIZE"] == "800"
    a2_800 = reference.request(_with_serving(_a2_text_only(), comm_buffer_mb=800))
    assert devs(a2_800) == a2_devs | {("HCCL_BUFFSIZE", "800")}
    # at the tutorial's own buffer size the 8P8D bundle keeps 1024
    req = _request("16 × A3 8P8D")
    assert req.serving.comm_buffer_mb == 1024
    assert ("HCCL_BUFFSIZE", "800") not in devs(req)
    assert build_launch(req, resolve_layout(req)).nodes[0].env["HCCL_BUFFSIZE"] == "1024"


def test_8p8d_and_a2_scripts_carry_the_tutorials_shell_steps():
    pd_req = _request("16 × A3 8P8D")
    pd = bundle_files(build_launch(pd_req, resolve_layout(pd_req)))
    prefill = pd["node-00-prefill-prefill.sh"]
    # §5.1.2.2: proxies unset, Mooncake's library path in front of LD_LIBRARY_PATH
    assert "unset ftp_proxy FTP_PROXY https_proxy HTTPS_PROXY http_proxy HTTP_PROXY" in prefill
    assert (
        "export LD_LIBRARY_PATH=/usr/local/Ascend/ascend-toolkit/latest/python/site-packages/mooncake"
        "${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" in prefill
    )
    a2_req = _request("8 × A2")
    a2 = bundle_files(build_launch(a2_req, resolve_layout(a2_req)))
    master = a2["node-00-cluster-master.sh"]
    # §5.2.1: the CANN and the K3 custom-op environments are sourced before vllm serve
    assert "\nsource /usr/local/Ascend/ascend-toolkit/set_env.sh\n" in master
    assert (
        "source /vllm-workspace/vllm-ascend/vllm_ascend/_cann_ops_custom/vendors/custom_transformer/bin/set_env.bash"
        in master
    )
    assert "export PYTHONPATH=/vllm-workspace/vllm-ascend${PYTHONPATH:+:$PYTHONPATH}" in master
    assert master.index("set_env.sh") < master.index("exec vllm serve")
    # the seeded A2 case serves the ModelSlim W4A8 conversion: the checkpoint's flag (engine/placement.py)
    assert a2_req.checkpoint.slug == "kimi-k3-modelslim-w4a8" and "--quantization ascend" in master


# --------------------------------------------------------------------------- flags exist in the named version


def _flag_list(version: str) -> dict[str, dict]:
    doc = json.loads((FLAG_DIR / f"vllm-{version}.json").read_text())
    assert doc["version"] == version and "arg_utils.py" in doc["source"]
    return doc["flags"]


def _ascend_keys(version: str) -> dict[str, list[str]]:
    doc = json.loads((FLAG_DIR / f"vllm-ascend-{version}-additional-config.json").read_text())
    assert doc["version"] == version and "ascend_config.py" in doc["source"]
    return doc["additional_config"]


def check_flags_exist(result) -> int:
    recipe = rc.by_key(result.context.recipe)
    known = _flag_list(recipe.vllm)
    checked = 0
    for node in result.nodes:
        for argv in node.argv:
            for flag, value in _flags(argv).items():
                name = "--" + flag[2:].replace("_", "-")
                assert name in known, f"{flag} is not a vllm serve flag in vLLM {recipe.vllm}"
                choices = known[name].get("choices")
                if choices:
                    assert value in choices, f"{flag} {value} not in {choices} (vLLM {recipe.vllm})"
                if name == "--additional-config":
                    keys = _ascend_keys(recipe.vllm_ascend)
                    cfg = json.loads(value)
                    assert set(cfg) <= set(keys["top_level"]), cfg
                    for k in cfg.get("ascend_compilation_config", {}):
                        assert k in keys["ascend_compilation_config"]
                checked += 1
    return checked


@pytest.mark.parametrize("label", list(SEEDED))
def test_every_flag_of_every_seeded_bundle_exists_in_the_recipes_vllm_version(label):
    req = _request(label)
    assert check_flags_exist(build_launch(req, resolve_layout(req))) > 20


def test_flag_lists_catch_a_flag_that_does_not_exist():
    known = _flag_list("0.23.0")
    # negative controls: a typo, a flag only in a later vLLM, and --no- on a flag that has none
    assert "--enable-prefix-cache" not in known
    assert "deepep_v2" not in known["--all2all-backend"]["choices"]  # added after 0.23.0
    assert "deepep_v2" in _flag_list("0.27.1")["--all2all-backend"]["choices"]
    assert "--no-headless" not in known and "--no-enable-prefix-caching" in known
    assert re.fullmatch(r"--[a-z0-9-]+", "--safetensors-load-strategy")


def test_recipe_selection_by_platform_gpu_generation_family_and_topology():
    from configurator.engine.types import TopologyKind

    a3, a2, nf = (
        reference.server("atlas-800-a3"),
        reference.server("atlas-800-a2"),
        reference.server("nf5868g8"),
    )
    k3, ds, llama = (
        reference.model("kimi-k3"),
        reference.model("deepseek-v3"),
        reference.model("llama-3-1-8b"),
    )
    single, pd = TopologyKind.SINGLE, TopologyKind.DISAGGREGATED
    assert rc.recipe_for(k3, a3, single).key == "ascend-a3-kimi-k3-dp"
    assert rc.recipe_for(k3, a3, pd).key == "ascend-a3-kimi-k3-pd"
    assert rc.recipe_for(k3, a2, single).key == "ascend-a2-kimi-k3-dp"
    # DeepSeek-R1 / V3 (one architecture) follow the vLLM-Ascend DeepSeek-R1 tutorial on A3 and A2
    assert rc.recipe_for(ds, a3, single).key == "ascend-deepseek-r1-dp"
    assert rc.recipe_for(ds, a2, single).key == "ascend-deepseek-r1-dp"
    assert rc.recipe_for(llama, a3, single).key == "ascend-generic"  # no tutorial: the generic recipe
    # RTX PRO 6000D is not the B200/B300 profile of the K3 recipe: only its base arguments
    assert rc.recipe_for(k3, nf, single).key == "cuda-kimi-k3"
    assert rc.recipe_for(ds, nf, pd).key == "cuda-deepseek-pd"
    assert (
        rc.recipe_for(llama, nf, single).key == "cuda-generic"
    )  # the Llama recipe profiles Hopper/Blackwell
    h200 = replace(nf, accelerator=reference.accelerator("h200-sxm"))
    assert rc.recipe_for(llama, h200, single).key == "cuda-llama-3.3"
    assert rc.recipe_for(k3, h200, single).key == "cuda-hopper-kimi-k3"
    # The generation is the accelerator record's (catalog/seed/accelerators.yaml), not read from its slug:
    # the same slug without a generation takes the generic CUDA recipes.
    unknown = replace(h200, accelerator=replace(h200.accelerator, generation=""))
    assert rc.hardware_of(unknown) == "any" and rc.recipe_for(k3, unknown, single).key == "cuda-kimi-k3"
    # Likewise the model family: the record's recipe_family, not a slug prefix.
    variant = replace(k3, slug="k3-finetune", recipe_family="")
    assert rc.recipe_for(variant, h200, single).key == "cuda-generic"
    assert rc.recipe_for(replace(variant, recipe_family="kimi-k3"), h200, single).key == "cuda-hopper-kimi-k3"
    assert rc.recipe_for(replace(llama, slug="my-llama", recipe_family="llama"), h200, single).key == (
        "cuda-llama-3.3"
    )
    # the recipes that need remote code say so; Llama's does not
    assert ("--trust-remote-code", None) in rc.by_key("cuda-deepseek").flags
    assert ("--trust-remote-code", None) not in rc.by_key("cuda-llama-3.3").flags


@pytest.mark.django_db
@pytest.mark.parametrize(
    "data,buffsize",
    [
        # HCCL_BUFFSIZE per tutorial section: 800 (§5.1.1), 1024 (§5.1.2.2), 256 (§5.2.1)
        ({"server": "atlas-800-a3", "topology": {"kind": "single", "nodes": 4}}, "800"),
        ({"server": "atlas-800-a3",
          "topology": {"kind": "disaggregated", "nodes": 16, "prefill_nodes": 8, "decode_nodes": 8}}, "1024"),
        # The A2 tutorial serves the ModelSlim W4A8 conversion; the 1.56 TB MXFP4 release leaves no room
        # for one 262,144-token sequence once the replicated weights are counted (issue 14).
        ({"server": "atlas-800-a2", "topology": {"kind": "single", "nodes": 8},
          "checkpoint": "kimi-k3-modelslim-w4a8",
          "serving": {"language_model_only": True, "max_model_len": 262144}}, "256"),
    ],
)  # fmt: skip
def test_a_request_that_leaves_the_buffer_unset_gets_the_tutorials_value(catalog, data, buffsize):
    from configurator.planning.plans import plan_from_json

    req, result = plan_from_json({"model": "kimi-k3", **data})
    assert not [c.code for c in result.checks if c.severity.value == "error"]
    assert req.serving.comm_buffer_mb == int(buffsize)  # the memory estimate counts what is launched
    assert {n.env["HCCL_BUFFSIZE"] for n in result.launch.nodes} == {buffsize}
    assert "HCCL_BUFFSIZE" not in {d.name for d in result.launch.context.deviations}
    assert check_flags_exist(result.launch) > 0


def _seqs(node) -> set[str]:
    return {a[a.index("--max-num-seqs") + 1] for a in node.argv}


@pytest.mark.parametrize("name", ["a3-4-single", "a3-16-8p8d", "hgx-h200-2-single"])
def test_the_serving_engines_launch_the_design_points_sequences_per_dp_rank(name):
    # performance/design.py: the design point's sequences per DP rank = ceil(design concurrency / serving
    # DP ranks); the engines admit that many (one source: the plan's own figure).  The design point is
    # searched within serving.max_num_seqs, at which memory is sized (memory.py: sampler warm-up, graph
    # capture sizes), so the flag never exceeds it; a setting left unset is sized to the KV cache.
    from configurator.engine.plan import plan

    req = reference.request(reference.case(name))
    result = plan(req)
    design = result.performance.design_point
    per_rank = -(-design.concurrency // design.serving_dp_ranks)
    assert result.performance.figures["performance.design.max_num_seqs_per_dp_rank"].value == per_rank
    setting = result.request.serving.max_num_seqs
    assert req.serving.max_num_seqs == 0 and per_rank <= setting  # left to the plan, sized there
    expected = str(per_rank)
    serving = [n for n in result.launch.nodes if n.role != "prefill"]
    assert serving and all(_seqs(n) == {expected} for n in serving)
    # xPyD prefill engines keep the setting (their batch is the token budget's)
    assert all(_seqs(n) == {str(setting)} for n in result.launch.nodes if n.role == "prefill")
    if name == "a3-4-single":
        # 4 × A3 (DP4) with the catalog's K3 draft: speculative decoding emits several tokens a step, so the
        # TPOT target no longer holds the design point; KV capacity does, above the tutorial's 16 a DP rank.
        # The engines launch it and the README lists the difference from the tutorial with its reason.
        assert per_rank > 16 and design.limited_by == "kv" and per_rank == design.kv_seqs_fit_per_dp_rank
        assert design.tpot_p90_s * 1000 <= design.targets["tpot_p90_ms"]
        readme = bundle_files(result.launch)["README.md"]
        assert f"| `--max-num-seqs` | `{per_rank}` | the design point's sequences per DP rank" in readme
        assert "instead of the source's 16" in readme


def _readme_rows(result) -> dict[str, str]:
    """The README's deviation table: setting (as shown) → the rest of the row."""
    readme = bundle_files(result.launch)["README.md"]
    table = readme.split("Deliberate differences from the recipe:", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    return {r.split(" | ", 1)[0].lstrip("| "): r for r in rows}


def test_k3_pd_on_b200_lists_the_recipes_layout_and_fp8_kv_cache_it_does_not_run():
    # vllm-project/recipes models/moonshotai/Kimi-K3.yaml: hardware_overrides.blackwell passes
    # --kv-cache-dtype fp8; strategy_overrides.pd_cluster runs prefill "tep, tp: 8" and decode "dep, tp: 1".
    from configurator.engine.plan import plan

    req = reference.request({"model": "kimi-k3", "server": "dgx-b200",
                             "topology": {"kind": "disaggregated", "nodes": 4, "prefill_nodes": 2, "decode_nodes": 2}})  # fmt: skip
    result = plan(req)
    assert req.serving.kv_cache_dtype in ("auto", "")
    rows = _readme_rows(result)
    assert "left out" in rows["`--kv-cache-dtype`"] and "--kv-cache-dtype fp8" in rows["`--kv-cache-dtype`"]
    groups = {g.role: g for g in result.layout.groups}
    for role, recipe_tp in (("prefill", 8), ("decode", 1)):
        g = groups[role]
        row = rows[f"`{role} layout` ({role})"]
        assert f"TP{g.parallel.tp} × DP{g.parallel.dp} over {g.nodes} nodes" in row
        assert f"TP{recipe_tp} " in row  # what the recipe runs instead
    for node in result.launch.nodes:  # and the engines indeed run without it
        for argv in node.argv:
            assert "--kv-cache-dtype" not in argv
    # following the recipe's FP8 KV cache removes that row
    fp8 = plan(reference.request({**reference.CASES["hgx-h200-2-single"], "server": "dgx-b200",
                                  "serving": {"kv_cache_dtype": "fp8"}}))  # fmt: skip
    assert "`--kv-cache-dtype`" not in _readme_rows(fp8)


def test_the_generic_ascend_bundle_names_the_qwen3_235b_tutorial_it_does_not_follow():
    # vllm-project/vllm-ascend docs/source/tutorials/models/Qwen3-235B-A22B.md §3.1 lists Atlas 800I A2
    # and A3 nodes and §5.1 serves it on one node (TP8, expert parallel)
    from configurator.engine.plan import plan

    result = plan(reference.request({"model": "qwen3-235b-a22b", "server": "atlas-800-a2",
                                     "topology": {"kind": "single", "nodes": 1}}))  # fmt: skip
    assert result.launch.context.recipe == "ascend-generic"
    row = _readme_rows(result)["`model tutorial`"]
    assert "tutorials/models/Qwen3-235B-A22B.md" in row and "…" not in row
    readme = bundle_files(result.launch)["README.md"]
    assert "No vLLM-Ascend tutorial covers this model" not in readme


def test_deepseek_r1_on_two_a3_lists_the_tp16_layout_the_tutorial_does_not_show():
    # vLLM-Ascend DeepSeek-R1.md §5.2, Node 0 and Node 1 tabs: --tensor-parallel-size 4,
    # --data-parallel-size 4, --data-parallel-size-local 2 (8 NPUs a node)
    from configurator.engine.plan import plan

    result = plan(reference.request({"model": "deepseek-r1", "server": "atlas-800-a3",
                                     "topology": {"kind": "single", "nodes": 2}}))  # fmt: skip
    (g,) = result.layout.groups
    assert (g.parallel.tp, g.parallel.dp_local) != (4, 2)
    row = _readme_rows(result)["`cluster layout`"]
    assert (
        f"TP{g.parallel.tp} × DP{g.parallel.dp} over 2 nodes" in row
        and "TP4 with two DP ranks per node" in row
    )
