"""NVIDIA multi-node end to end from the shipped catalog: plan, price and launch (issue 19).

Expected figures come from the seed (catalog/seed/switches.yaml, price_lists.yaml: QM9700 64 × 400G, price item SW-NVIDIA-QM9700
¥260,000; HGX H200 with 8 × 400G InfiniBand ports) and from the public recipes:
vllm-project/recipes main, models/moonshotai/Kimi-K3.yaml (hopper overrides; "--all2all-backend deepep_v2
for RDMA"; "RDMA: UCX_TLS=rc,cuda_copy") and src/lib/command-synthesis.js (vllm-router for P/D).
"""

from __future__ import annotations

import json
import math
import shlex
from decimal import Decimal

import pytest

from configurator.engine.launch import bundle_files
from configurator.engine.types import Severity
from configurator.planning.plans import plan_from_json
from configurator.web.planner.services import run_search

from .test_containers import _docs, _validate
from .test_recipes import _flags, check_flags_exist

pytestmark = pytest.mark.django_db

QM9700_PRICE = Decimal("260000")  # SW-NVIDIA-QM9700 in the cny-2026 price list
H200 = "hgx-h200-8gpu"


def _errors(result):
    return [(c.code, c.message_en) for c in result.checks if c.severity == Severity.ERROR]


@pytest.mark.parametrize("nodes", [2, 4])
def test_k3_on_hgx_h200_plans_prices_and_launches_across_nodes(catalog, nodes):
    # The recipe's Hopper profile runs 5 sequences per DP rank (max-num-seqs 5), so 2 nodes (DP2) serve
    # 10 concurrent requests: quote 4 per node (8 and 16), which both sizes sustain (issue 15's capacity check).
    req, result = plan_from_json(
        {
            "model": "kimi-k3",
            "server": H200,
            "topology": {"kind": "single", "nodes": nodes},
            "workload": {"concurrency": 4 * nodes},
        }
    )
    assert _errors(result) == []
    # 8 IB ports per node → 8·n ports ≤ 64: one QM9700, priced from the list
    ib = next(r for r in result.network.rows if r.fabric == "infiniband")
    assert (ib.ports_needed, ib.switch_slug, ib.switches) == (8 * nodes, "nvidia-qm9700", 1)
    assert req.commercial.switch_unit_prices["nvidia-qm9700"] == QM9700_PRICE
    assert result.tco.switch_counts["nvidia-qm9700"] == 1
    # K3 recipe, Hopper profile: TP8 per node, DP across nodes
    assert (req.topology.parallel.tp, req.topology.parallel.dp) == (8, nodes)
    launch = result.launch
    assert launch.context.recipe == "cuda-hopper-kimi-k3"
    for node in launch.nodes:
        (argv,) = node.argv
        flags = _flags(argv)
        assert flags["--all2all-backend"] == "deepep_v2"  # experts cross nodes over RDMA
        assert flags["--moe-backend"] == "marlin" and "--disable-custom-all-reduce" in flags
        # the recipe's example batch of 5 is not the setting: the plan sizes it to the KV cache and the
        # engines admit the design point's sequences per DP rank (engine/memory.py size_admission)
        design = result.performance.design_point
        assert flags["--max-model-len"] == "32768"
        assert flags["--max-num-seqs"] == str(design.max_num_seqs_per_dp_rank) != "5"
        assert flags["--max-num-batched-tokens"] == "4096" and flags["--gpu-memory-utilization"] == "0.97"
        assert "--compilation-config" not in flags  # no Ascend FULL_DECODE_ONLY forcing on CUDA
        assert "--quantization" not in flags
        assert node.env["VLLM_USE_V2_MODEL_RUNNER"] == "1" and node.env["NCCL_IB_HCA"] == "mlx5"
        assert not any(k.startswith(("HCCL", "ASCEND")) for k in node.env)
    assert check_flags_exist(launch) > 0  # against vLLM 0.27.1, the recipe's minimum


@pytest.mark.parametrize("model", ["llama-3-3-70b", "qwen3-235b-a22b"])
def test_pd_on_two_h200_uses_nixl_across_nodes_and_vllm_router(catalog, model):
    req, result = plan_from_json(
        {"model": model, "server": H200,
         "topology": {"kind": "disaggregated", "nodes": 2, "prefill_nodes": 1, "decode_nodes": 1}}
    )  # fmt: skip
    assert _errors(result) == []
    assert result.tco.switch_counts["nvidia-qm9700"] == 1
    launch = result.launch
    roles = {n.role: n for n in launch.nodes}
    assert set(roles) == {"prefill", "decode"}
    for node in launch.nodes:
        (argv,) = node.argv
        flags = _flags(argv)
        kv = json.loads(flags["--kv-transfer-config"])
        assert kv["kv_connector"] == "NixlConnector" and kv["kv_role"] == "kv_both"
        # the side channel binds the node's own address (vLLM's default, localhost, fails across nodes)
        assert node.env["VLLM_NIXL_SIDE_CHANNEL_HOST"] == node.host
        assert node.env["UCX_TLS"] == "rc,cuda_copy" and node.env["UCX_NET_DEVICES"] == "all"
        # one engine per side on one node: no DP flags (they would be no-ops)
        assert not any(f.startswith("--data-parallel") for f in flags)
        assert "--compilation-config" not in flags and "--enforce-eager" not in flags
        if model.startswith("llama"):
            assert "--trust-remote-code" not in flags  # Llama needs no remote code (recipe base_args: [])
            assert "--async-scheduling" in flags and "--no-enable-prefix-caching" in flags
        else:
            assert "--trust-remote-code" in flags and flags["--tool-call-parser"] == "hermes"
    proxy = bundle_files(launch)["start-proxy.sh"]
    assert "toy_proxy_server" not in "".join(bundle_files(launch).values())
    words = shlex.split(proxy.split("exec ", 1)[1].splitlines()[0])
    p, d = roles["prefill"], roles["decode"]
    assert words[:4] == ["vllm-router", "--policy", "round_robin", "--vllm-pd-disaggregation"]
    assert words[words.index("--prefill") + 1] == f"http://{p.host}:{p.api_ports[0]}"
    assert words[words.index("--decode") + 1] == f"http://{d.host}:{d.api_ports[0]}"
    files = bundle_files(launch)
    # its own image, built from the pinned PyPI wheel by the bundle's Dockerfile, never installed at start
    assert "pip install" not in proxy and "vllm-router:0.1.15" in proxy
    dockerfile = files["router/Dockerfile"]
    assert "pip install --no-cache-dir --only-binary=:all: vllm-router==0.1.15" in dockerfile
    assert dockerfile.count("\nFROM ") == 1 and "https://pypi.org/project/vllm-router/0.1.15/" in dockerfile
    assert "docker image inspect 'vllm-router:0.1.15'" in files["docker/start-proxy.sh"]
    assert "docker build -t vllm-router:0.1.15 router/" in files["README.md"]
    check_flags_exist(launch)
    docs = list(_docs(bundle_files(launch)))
    assert [d["kind"] for _, d in docs].count("LeaderWorkerSet") == 2
    for _, doc in docs:
        _validate(doc)
        if doc["kind"] == "LeaderWorkerSet":
            assert doc["spec"]["leaderWorkerTemplate"]["size"] == 1  # one node per side
            pod = doc["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]
            # 8 GPUs and the RDMA HCAs (NIXL's UCX_TLS=rc needs a verbs device in the pod)
            assert pod["containers"][0]["resources"]["limits"] == {
                "nvidia.com/gpu": 8,
                "rdma/rdma_shared_device_a": 1,
            }


def test_the_auto_planner_lists_a_multi_node_nvidia_candidate_for_k3(catalog):
    result = run_search({"model": "kimi-k3"})
    nvidia = [
        c
        for c in result.candidates
        if c.server.slug.startswith(("hgx-", "dgx-")) and c.request_json["topology"]["nodes"] > 1
    ]
    assert any(c.server.slug == H200 for c in nvidia)
    # and each such candidate plans without errors from the shipped catalog
    cand = next(c for c in nvidia if c.server.slug == H200)
    _, res = plan_from_json(cand.request_json)
    assert _errors(res) == []


def _pod_templates(doc):
    tmpl = doc["spec"]["leaderWorkerTemplate"]
    return [tmpl[k] for k in ("leaderTemplate", "workerTemplate") if k in tmpl]


@pytest.mark.parametrize("server", [H200, "dgx-b200"])
def test_k3_pd_over_nixl_sets_the_ds_conv_state_layout_in_every_script_and_pod(catalog, server):
    # K3's KDA layers keep a short-convolution state (config.json linear_attn_config short_conv_kernel_size
    # 4): vLLM's NIXL worker asserts "3-read Mamba conv transfer requires DS conv state layout. Set
    # VLLM_SSM_CONV_STATE_LAYOUT=DS" (vllm nixl connector), and the K3 recipe's pd_cluster env sets it
    # (vllm-project/recipes models/moonshotai/Kimi-K3.yaml strategy_overrides.pd_cluster.env).
    req, result = plan_from_json(
        {"model": "kimi-k3", "server": server,
         "topology": {"kind": "disaggregated", "nodes": 4, "prefill_nodes": 2, "decode_nodes": 2}}
    )  # fmt: skip
    assert req.model.linear_layers > 0 and req.model.linear_conv_kernel == 4
    files = bundle_files(result.launch)
    engines = [n for n in result.launch.nodes if n.role in ("prefill", "decode")]
    assert len(engines) == 4
    for node in engines:
        assert "export VLLM_SSM_CONV_STATE_LAYOUT=DS\n" in files[node.script]
    pods = 0
    for _, doc in _docs(files):
        if doc["kind"] != "LeaderWorkerSet":
            continue
        for tmpl in _pod_templates(doc):
            for c in tmpl["spec"]["containers"]:
                assert {"name": "VLLM_SSM_CONV_STATE_LAYOUT", "value": "DS"} in c["env"]
                pods += 1
    assert pods == 4  # a leader and a worker template per side


def test_a_model_without_a_conv_state_or_without_nixl_gets_no_conv_state_layout(catalog):
    # Llama 3.3 has full attention only (no linear layers): nothing to transfer in DS layout.
    _, llama = plan_from_json(
        {"model": "llama-3-3-70b", "server": H200,
         "topology": {"kind": "disaggregated", "nodes": 2, "prefill_nodes": 1, "decode_nodes": 1}}
    )  # fmt: skip
    assert all("VLLM_SSM_CONV_STATE_LAYOUT" not in n.env for n in llama.launch.nodes)
    # K3 aggregated on H200: no KV transfer, so vLLM keeps its default layout.
    _, agg = plan_from_json({"model": "kimi-k3", "server": H200, "topology": {"kind": "single", "nodes": 2}})
    assert all("VLLM_SSM_CONV_STATE_LAYOUT" not in n.env for n in agg.launch.nodes)


def test_the_router_and_the_startup_probes_wait_as_long_as_the_checkpoint_takes_to_load(catalog):
    # vllm-project/router src/main.rs: --worker-startup-timeout-secs defaults to 600 s, while every K3 node
    # reads the whole MXFP4 checkpoint (memory.checkpoint_bytes) before it answers /health.
    pd = {"kind": "disaggregated", "nodes": 4, "prefill_nodes": 2, "decode_nodes": 2}
    slow_req, slow = plan_from_json(
        {"model": "kimi-k3", "server": H200, "topology": pd, "launch": {"weight_read_gb_s": 0.2}}
    )
    checkpoint = slow.memory.checkpoint_bytes
    assert checkpoint > 1.4e12  # ≈1.56 TB of MXFP4 weights (model card)
    # twice the read time at 0.2 GB/s (load, then compile and capture), above the recipe's 3600 s
    wait = math.ceil(2 * checkpoint / 0.2e9)
    assert wait > 3600
    files = bundle_files(slow.launch)
    words = shlex.split(files["start-proxy.sh"].split("exec ", 1)[1].splitlines()[0])
    assert words[words.index("--worker-startup-timeout-secs") + 1] == str(wait)
    probes = 0
    for _, doc in _docs(files):
        if doc["kind"] != "LeaderWorkerSet":
            continue
        for tmpl in _pod_templates(doc):
            for c in tmpl["spec"]["containers"]:
                if "readinessProbe" in c:
                    probe = c["startupProbe"]
                    assert probe["periodSeconds"] * probe["failureThreshold"] >= wait
                    assert probe["periodSeconds"] * (probe["failureThreshold"] - 1) < wait
                    probes += 1
    assert probes == 4
    # at the default 1 GB/s the load takes 2 × 1.56e12 / 1e9 ≈ 3122 s: the recipe's ready timeout (3600 s,
    # VLLM_ENGINE_READY_TIMEOUT_S of its hopper overrides) is the floor
    _, fast = plan_from_json({"model": "kimi-k3", "server": H200, "topology": pd})
    assert 2 * checkpoint / 1e9 < 3600
    words = shlex.split(bundle_files(fast.launch)["start-proxy.sh"].split("exec ", 1)[1].splitlines()[0])
    assert words[words.index("--worker-startup-timeout-secs") + 1] == "3600"
