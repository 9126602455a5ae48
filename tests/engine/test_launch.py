"""Launch bundle: commands and scripts checked against the public conventions of
vLLM (docs/serving/data_parallel_deployment.md, vllm/config/kv_transfer.py) and
the vLLM-Ascend Kimi-K3 tutorial, as summarised in docs/domain.md §5 and §11."""

from __future__ import annotations

import io
import json
import os
import re
import shlex
import stat
import subprocess
import zipfile
from dataclasses import replace

import pytest
import yaml

from configurator import reference
from configurator.engine.launch import build_launch, bundle_files, bundle_zip, node_command
from configurator.engine.plan import plan
from configurator.engine.serialize import plan_to_dict
from configurator.engine.types import (
    GroupLayout,
    LayoutResult,
    ParallelSpec,
    PlanRequest,
    Severity,
    TopologyKind,
)

# vllm/config/kv_transfer.py: KVTransferConfig rejects any other key
KV_KEYS = {
    "kv_connector",
    "engine_id",
    "kv_buffer_device",
    "kv_role",
    "kv_port",
    "kv_connector_extra_config",
    "kv_connector_module_path",
    "enable_permute_local_kv",
    "kv_load_failure_policy",
}
ALL_DEVICES = ",".join(str(i) for i in range(16))  # 16 logical NPUs per A3 [S1]


# Where the bundles deploy: the seeded cases carry no launch section, so each request gets the one the
# sample proposal gives the A3 cases (documents/pdf/sample.py).
NIC = "enp189s0f0"


def _launch_section(nodes: int) -> dict:
    return {
        "model_path": "/data/models/Kimi-K3",
        "served_model_name": "kimi-k3",
        "node_ips": [f"10.0.0.{11 + i}" for i in range(nodes)],
        "data_nic": NIC,
        "image": "quay.io/ascend/vllm-ascend:kimi-k3-a3",
    }


def _request(case: str, **fields) -> PlanRequest:
    """The seeded case ``case`` (configurator.reference.CASES) with a launch section and ``fields``."""
    data = {**reference.CASES[case], **fields}
    data["launch"] = {**_launch_section(data["topology"]["nodes"]), **data.get("launch", {})}
    return reference.request(data)


def layout_for(req: PlanRequest) -> LayoutResult:
    """The layout docs/domain.md §4 describes for these topologies, written out here so the bundle is
    checked against the documented layout rather than against the engine's own resolver."""
    t = req.topology
    per_node = req.server.logical_devices
    experts = req.model.num_experts

    def group(name: str, role: str, nodes: int, first: int, p: ParallelSpec) -> GroupLayout:
        return GroupLayout(name, role, nodes, first, p, nodes * per_node, experts // p.ep)

    if t.kind == TopologyKind.SINGLE:
        groups = (group("cluster", "serve", t.nodes, 0, t.parallel),)
    elif t.kind in (TopologyKind.PRIMARY_STANDBY, TopologyKind.TENANT_PAIR):
        half = t.nodes // 2
        roles = ("serve", "standby") if t.kind == TopologyKind.PRIMARY_STANDBY else ("tenant", "tenant")
        groups = (
            group("cluster-a", roles[0], half, 0, t.parallel),
            group("cluster-b", roles[1], half, half, t.parallel),
        )
    else:
        groups = (
            group("prefill", "prefill", t.prefill_nodes, 0, t.parallel),
            group("decode", "decode", t.decode_nodes, t.prefill_nodes, t.decode_parallel or t.parallel),
        )
    return LayoutResult(nodes=t.nodes, devices_per_node=per_node, groups=groups)


def _launch(req):
    return build_launch(req, layout_for(req))


def _flags(argv: tuple[str, ...]) -> dict[str, str | None]:
    """--flag value pairs of a vllm serve argv (a flag followed by another flag has no value)."""
    start = argv.index("serve") + 2  # after "serve MODEL"
    out: dict[str, str | None] = {}
    i = start
    while i < len(argv):
        if i + 1 < len(argv) and not argv[i + 1].startswith("--"):
            out[argv[i]] = argv[i + 1]
            i += 2
        else:
            out[argv[i]] = None
            i += 1
    return out


def _script_commands(text: str) -> list[list[str]]:
    """Every vllm serve command in a script, as the shell will split it."""
    joined = text.replace("\\\n", " ")
    out = []
    for line in joined.splitlines():
        words = shlex.split(line, comments=True)
        if "vllm" in words and "serve" in words:
            if words[0] == "exec":
                words = words[1:]
            if words[-1] == "&":
                words = words[:-1]
            out.append(words)
    return out


def _bash(path, env_path=None):
    env = dict(os.environ)
    if env_path:
        env["PATH"] = f"{env_path}:{env['PATH']}"
    return subprocess.run(["bash", str(path)], capture_output=True, text=True, env=env, timeout=30)


def _write(tmp_path, files):
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


# --------------------------------------------------------------------------- 4-node aggregated DP


def test_4node_master_serves_the_api_and_workers_are_headless_with_start_ranks():
    req = _request("a3-4-single")
    result = _launch(req)
    planned = plan(req)
    ips = req.launch.node_ips
    assert [n.role for n in result.nodes] == ["master", "worker", "worker", "worker"]
    scripts = [f for f in bundle_files(result) if f.startswith("node-") and f.endswith(".sh")]
    assert len(scripts) == 4
    for n in result.nodes:
        (argv,) = n.argv
        assert list(argv) == shlex.split(node_command(n))
        flags = _flags(argv)
        assert argv[:3] == ("vllm", "serve", req.launch.model_path)
        assert flags["--data-parallel-address"] == ips[0]
        assert flags["--data-parallel-rpc-port"] == str(req.launch.rpc_port)
        assert flags["--tensor-parallel-size"] == "16"
        assert flags["--data-parallel-size"] == "4"
        assert flags["--data-parallel-size-local"] == "1"
        assert "--enable-expert-parallel" in flags  # on every node [vLLM docs]
        # The seeded case serves the published MXFP4 weights, not a ModelSlim conversion:
        # vLLM reads their quantisation from config.json, so no --quantization ascend (issue 14);
        # vLLM-Ascend also detects a ModelSlim checkpoint itself (releases/v0.23.0,
        # vllm_ascend/quantization/utils.py).
        assert req.checkpoint.slug == "kimi-k3-hf-mxfp4" and "--quantization" not in flags
        # the case leaves serving to the API's defaults (engine/types.py ServingSpec, docs/api.md):
        # 131,072 tokens, 8,192 batched tokens, utilisation 0.9, and max_num_seqs sized to what the KV
        # cache holds (engine/memory.py size_admission); the engines admit the design point's sequences per DP rank:
        # the KV-bound design point's, all of them (tests/engine/test_admission.py derives the figure)
        assert req.serving.max_num_seqs == 0
        design = planned.performance.design_point
        assert design.limited_by == "kv" and design.concurrency == 4 * design.max_num_seqs_per_dp_rank
        assert flags["--max-num-seqs"] == str(design.max_num_seqs_per_dp_rank)
        assert flags["--max-num-seqs"] == str(planned.request.serving.max_num_seqs)
        assert flags["--max-model-len"] == "131072"
        assert flags["--max-num-batched-tokens"] == "8192"
        assert flags["--gpu-memory-utilization"] == "0.9"
        assert "--trust-remote-code" in flags and "--enable-prefix-caching" in flags
        assert (
            flags["--tokenizer-mode"]
            == flags["--reasoning-parser"]
            == flags["--tool-call-parser"]
            == "kimi_k3"
        )
        assert json.loads(flags["--compilation-config"]) == {"cudagraph_mode": "FULL_DECODE_ONLY"}
        assert n.env["VLLM_HOST_IP"] == n.host == ips[n.index]
        assert n.env["HCCL_IF_IP"] == n.host
        for var in ("GLOO_SOCKET_IFNAME", "TP_SOCKET_IFNAME", "HCCL_SOCKET_IFNAME"):
            assert n.env[var] == NIC
        assert n.env["HCCL_BUFFSIZE"] == "800"  # serving.comm_buffer_mb: the tutorial's §5.1.1 800
        assert n.env["ASCEND_RT_VISIBLE_DEVICES"] == ALL_DEVICES
        assert n.env["OMP_PROC_BIND"] == "false" and n.env["TASK_QUEUE_ENABLE"] == "1"
        assert n.env["PYTORCH_NPU_ALLOC_CONF"] == "expandable_segments:True"
        assert n.env["OMP_NUM_THREADS"] == "1"  # K3 tutorial §5.1.1
        assert "HCCL_OP_EXPANSION_MODE" not in n.env  # §5.1.1 sets it only on the 8P8D decode side
        # the script runs exactly the command of the summary row
        assert _script_commands(bundle_files(result)[n.script]) == [list(argv)]
    master, *workers = result.nodes
    assert "--headless" not in _flags(master.argv[0])
    assert _flags(master.argv[0])["--port"] == "8000"
    assert "--data-parallel-start-rank" not in _flags(master.argv[0])
    assert master.env["VLLM_ENGINE_READY_TIMEOUT_S"] == "7200"
    assert [(_flags(w.argv[0])["--data-parallel-start-rank"]) for w in workers] == ["1", "2", "3"]
    for w in workers:
        assert "--headless" in _flags(w.argv[0])
        assert "VLLM_ENGINE_READY_TIMEOUT_S" not in w.env
        assert w.api_ports == ()
    assert result.entrypoint == f"{ips[0]}:8000"


def test_every_script_passes_bash_syntax_check(tmp_path):
    requests = [
        _request("a3-4-single"),
        _request("a3-8-primary-standby"),
        _request("a3-8-tenant-pair"),
        _request("a3-16-8p8d"),
        reference.request(reference.CASES["a3-16-8p8d"]),  # no launch section: all placeholders
    ]
    for i, req in enumerate(requests):
        files = bundle_files(_launch(req))
        root = _write(tmp_path / str(i), files)
        for name in files:
            if name.endswith(".sh"):
                out = subprocess.run(["bash", "-n", str(root / name)], capture_output=True, text=True)
                assert out.returncode == 0, (name, out.stderr)
                assert files[name].startswith("#!/usr/bin/env bash\n")
                assert "set -euo pipefail" in files[name]


def test_a_script_with_a_placeholder_left_refuses_to_start(tmp_path):
    req = _request("a3-4-single", launch={"node_ips": []})
    result = _launch(req)
    assert "__NODE0_IP__" in result.placeholders
    root = _write(tmp_path, bundle_files(result))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    marker = tmp_path / "ran"
    (bin_dir / "vllm").write_text(f"#!/usr/bin/env bash\ntouch {marker}\n")
    (bin_dir / "vllm").chmod(0o755)
    out = _bash(root / result.nodes[1].script, env_path=bin_dir)
    assert out.returncode == 2
    assert "refusing to start" in out.stderr
    assert "__NODE0_IP__" in out.stderr and "__NODE1_IP__" in out.stderr
    assert not marker.exists()  # vllm never ran
    codes = {c.code for c in result.checks}
    assert "launch.node_ips_missing" in codes


def test_a_complete_script_execs_vllm_with_the_row_command_and_environment(tmp_path):
    result = _launch(_request("a3-4-single"))
    root = _write(tmp_path, bundle_files(result))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    record = tmp_path / "record.json"
    stub = (
        "#!/usr/bin/env python3\n"
        "import json, os, sys\n"
        f"json.dump({{'argv': sys.argv[1:], 'env': dict(os.environ)}}, open({str(record)!r}, 'w'))\n"
    )
    (bin_dir / "vllm").write_text(stub)
    (bin_dir / "vllm").chmod(0o755)
    worker = result.nodes[2]
    out = _bash(root / worker.script, env_path=bin_dir)
    assert out.returncode == 0, out.stderr
    seen = json.loads(record.read_text())
    assert seen["argv"] == list(worker.argv[0][1:])
    for key, value in worker.env.items():
        assert seen["env"][key] == value


# --------------------------------------------------------------------------- two clusters


def test_primary_standby_has_two_masters_and_a_backup_gateway():
    req = _request("a3-8-primary-standby")
    result = _launch(req)
    ips = req.launch.node_ips
    masters = [n for n in result.nodes if n.is_master]
    assert [(m.index, m.group) for m in masters] == [(0, "cluster-a"), (4, "cluster-b")]
    for n in result.nodes:
        flags = _flags(n.argv[0])
        master_ip = ips[0] if n.index < 4 else ips[4]
        assert flags["--data-parallel-address"] == master_ip
        assert ("--headless" in flags) == (not n.is_master)
        if not n.is_master:
            assert flags["--data-parallel-start-rank"] == str(n.index % 4)
    nginx = bundle_files(result)["gateway/nginx.conf"]
    assert f"server {ips[0]}:8000 max_fails=2" in nginx
    assert f"server {ips[4]}:8000 backup;" in nginx
    # POSTs that got no answer from the primary's engine are retried on the standby (nginx docs:
    # proxy_next_upstream retries non-idempotent requests only with non_idempotent)
    assert "proxy_next_upstream error timeout http_502 http_503 http_504 non_idempotent;" in nginx
    assert result.entrypoint.endswith(f":{req.launch.proxy_port}")
    # a hung collective surfaces in minutes, not after HCCL's ≈30 min default
    assert all(n.env["HCCL_EXEC_TIMEOUT"] == "204" for n in result.nodes)
    # two gateways share the clients' virtual IP over VRRP
    for state, priority in (("MASTER", "150"), ("BACKUP", "100")):
        conf = bundle_files(result)[f"gateway/keepalived-{state.lower()}.conf"]
        assert f"state {state}" in conf and f"priority {priority}" in conf and "track_script" in conf


def test_tenant_pair_routes_each_tenant_to_its_cluster():
    req = _request("a3-8-tenant-pair")
    nginx = bundle_files(_launch(req))["gateway/nginx.conf"]
    ips = req.launch.node_ips
    assert f"upstream cluster_a {{\n    server {ips[0]}:8000" in nginx
    assert f"upstream cluster_b {{\n    server {ips[4]}:8000" in nginx
    assert "backup" not in nginx
    # routing by listener: tenant 1 on the proxy port, tenant 2 on the next one, each to its own cluster
    servers = re.findall(
        r"server \{\n    listen (\d+);\n    location / \{\n        proxy_pass http://(\w+);", nginx
    )
    assert servers == [("8080", "cluster_a"), ("8081", "cluster_b")]
    # nothing a client sends picks the cluster: no request header or argument variable anywhere
    assert "$http_" not in nginx and "$arg_" not in nginx and "map " not in nginx


# --------------------------------------------------------------------------- 8P8D


def _kv(argv) -> dict:
    return json.loads(_flags(argv)["--kv-transfer-config"])


def test_8p8d_bundle_has_producer_and_consumer_ranks_with_distinct_engine_ids():
    req = _request("a3-16-8p8d")
    result = _launch(req)
    ips = req.launch.node_ips
    prefill = [n for n in result.nodes if n.role == "prefill"]
    decode = [n for n in result.nodes if n.role == "decode"]
    assert len(prefill) == len(decode) == 8
    assert len([f for f in bundle_files(result) if f.startswith("node-")]) == 16
    engine_ids = set()
    for side, nodes, master_ip, rpc in (
        ("prefill", prefill, ips[0], req.launch.rpc_port),
        ("decode", decode, ips[8], req.launch.rpc_port + 1),
    ):
        assert [int(_flags(n.argv[0])["--data-parallel-rank"]) for n in nodes] == list(range(8))
        for n in nodes:
            (argv,) = n.argv
            assert list(argv) == shlex.split(node_command(n))
            assert _script_commands(bundle_files(result)[n.script]) == [list(argv)]
            flags = _flags(argv)
            assert "--headless" not in flags and "--data-parallel-start-rank" not in flags
            assert flags["--data-parallel-address"] == master_ip  # each side its own master
            assert flags["--data-parallel-rpc-port"] == str(rpc)
            assert flags["--data-parallel-size"] == "8" and flags["--tensor-parallel-size"] == "16"
            assert flags["--mamba-cache-mode"] == "align"  # K3's KDA layers
            assert "--enable-expert-parallel" in flags
            assert n.env["VLLM_HOST_IP"] == n.host == ips[n.index]  # [S1] pitfall
            kv = _kv(argv)
            assert set(kv) <= KV_KEYS
            engine_ids.add(kv["engine_id"])
            if side == "prefill":
                assert "--enforce-eager" in flags and "--compilation-config" not in flags
                assert kv["kv_connector"] == "MultiConnector" and kv["kv_role"] == "kv_producer"
                mooncake, store = kv["kv_connector_extra_config"]["connectors"]
                for inner in (mooncake, store):
                    assert set(inner) <= KV_KEYS
                assert mooncake["kv_connector"] == "MooncakeConnectorV1"
                assert mooncake["kv_role"] == "kv_producer"
                assert mooncake["kv_port"] == req.launch.kv_port_prefill >= 36000
                sizes = mooncake["kv_connector_extra_config"]
                assert store["kv_connector"] == "AscendStoreConnector"
                assert store["kv_connector_extra_config"]["backend"] == "memcache"
                assert n.env["MMC_LOCAL_CONFIG_PATH"]
            else:
                assert "--enforce-eager" not in flags
                assert json.loads(flags["--compilation-config"]) == {"cudagraph_mode": "FULL_DECODE_ONLY"}
                assert kv["kv_connector"] == "MooncakeConnectorV1" and kv["kv_role"] == "kv_consumer"
                assert kv["kv_port"] == req.launch.kv_port_decode
                sizes = kv["kv_connector_extra_config"]
            assert sizes == {
                "prefill": {"dp_size": 8, "tp_size": 16},
                "decode": {"dp_size": 8, "tp_size": 16},
            }
    assert len(engine_ids) == 16


def test_8p8d_proxy_lists_every_endpoint_and_metaservice_comes_first():
    req = _request("a3-16-8p8d")
    result = _launch(req)
    ips = req.launch.node_ips
    proxy = bundle_files(result)["start-proxy.sh"]
    words = shlex.split(proxy.split("exec ", 1)[1].splitlines()[0])

    def values(flag):
        i = words.index(flag) + 1
        out = []
        while i < len(words) and not words[i].startswith("--"):
            out.append(words[i])
            i += 1
        return out

    assert values("--prefiller-hosts") == list(ips[:8])
    assert values("--decoder-hosts") == list(ips[8:])
    assert values("--prefiller-ports") == values("--decoder-ports") == ["8000"] * 8
    assert values("--port") == [str(req.launch.proxy_port)]
    meta = bundle_files(result)["start-memcache-metaservice.sh"]
    assert "from memcache_hybrid import MetaService; MetaService.main()" in meta
    readme = bundle_files(result)["README.md"]
    assert readme.index("start-memcache-metaservice.sh` (the KV pool") < readme.index(
        "Start the prefill scripts"
    )
    assert readme.index("Start the decode scripts") < readme.index("Start `start-proxy.sh`")


def test_prefill_script_refuses_to_start_without_the_memcache_config(tmp_path):
    result = _launch(_request("a3-16-8p8d"))
    root = _write(tmp_path, bundle_files(result))
    out = _bash(root / result.nodes[0].script)
    assert out.returncode == 2
    assert "/etc/memcache/mmc-local.conf is missing" in out.stderr


def test_kv_port_inside_mooncake_reserved_range_is_an_error():
    req = _request("a3-16-8p8d", launch={"kv_port_prefill": 30000})
    check = next(c for c in _launch(req).checks if c.code == "launch.kv_port_in_reserved_range")
    # 16 NPUs per node: Mooncake picks random ports in [20000, 36000) [vLLM-Ascend PD guide]
    assert check.severity == Severity.ERROR and check.fix == {"launch.kv_port_prefill": 36000}


# --------------------------------------------------------------------------- other files and checks


def test_prometheus_config_scrapes_every_api_endpoint():
    for req in (_request("a3-4-single"), _request("a3-16-8p8d")):
        result = _launch(req)
        config = yaml.safe_load(bundle_files(result)["monitoring/prometheus.yml"])
        jobs = {job["job_name"]: job for job in config["scrape_configs"]}
        targets = [t for sc in jobs["vllm"]["static_configs"] for t in sc["targets"]]
        expected = [f"{n.host}:{p}" for n in result.nodes for p in n.api_ports]
        assert targets == expected
        node_targets = [t for sc in jobs["node"]["static_configs"] for t in sc["targets"]]
        assert len(node_targets) == len(result.nodes)
    assert len(expected) == 16  # every 8P8D engine serves its own API


def test_readme_explains_every_script():
    result = _launch(_request("a3-8-primary-standby"))
    readme = bundle_files(result)["README.md"]
    for name in bundle_files(result):
        if name != "README.md":
            assert f"`{name}`" in readme
    assert "Start-up order" in readme and "启动顺序" in readme


def test_zip_is_deterministic_with_executable_scripts():
    files = bundle_files(_launch(_request("a3-16-8p8d")))
    first, second = bundle_zip(files), bundle_zip(dict(reversed(list(files.items()))))
    assert first == second
    with zipfile.ZipFile(io.BytesIO(first)) as zf:
        assert sorted(zf.namelist()) == sorted(files)
        for info in zf.infolist():
            assert info.date_time == (1980, 1, 1, 0, 0, 0)
            mode = info.external_attr >> 16
            assert stat.S_IMODE(mode) == (0o755 if info.filename.endswith(".sh") else 0o644)
            assert zf.read(info).decode() == files[info.filename]


def test_nvidia_servers_get_nccl_settings_and_no_ascend_flags():
    # the seeded DGX B300 (8 GPUs, 8 × InfiniBand scale-out NICs: catalog/seed/servers.yaml dgx-b300)
    # in the A3 case's place, TP8 per node
    parallel = {"tp": 8, "dp": 4, "pp": 1, "expert_parallel": True, "dp_local": 1}
    req = _request(
        "a3-4-single", server="dgx-b300", topology={"kind": "single", "nodes": 4, "parallel": parallel}
    )
    assert req.server.accelerator.software_stack == "cuda"
    result = _launch(req)
    node = result.nodes[1]
    assert node.env["NCCL_SOCKET_IFNAME"] == node.env["GLOO_SOCKET_IFNAME"] == NIC
    assert node.env["NCCL_IB_HCA"] == "mlx5"  # InfiniBand NICs
    assert node.env["CUDA_VISIBLE_DEVICES"] == "0,1,2,3,4,5,6,7"
    assert not any(k.startswith(("HCCL", "ASCEND")) for k in node.env)
    assert "--quantization" not in _flags(node.argv[0])


def test_duplicate_ips_and_port_clashes_are_errors():
    # the request boundary already refuses the port clash (configurator/io/requests.py); the engine checks a
    # request that did not pass it (a stored plan), so the clash is set on the resolved request
    req = _request("a3-4-single")
    req = replace(req, launch=replace(req.launch, node_ips=("10.0.0.1",) * 4, rpc_port=8000))
    codes = {(c.code, c.severity) for c in _launch(req).checks}
    assert ("launch.node_ip_duplicate", Severity.ERROR) in codes
    assert ("launch.port_conflict", Severity.ERROR) in codes


def test_missing_model_path_and_nic_become_placeholders_with_warnings():
    req = _request("a3-4-single", launch={"model_path": "", "data_nic": ""})
    result = _launch(req)
    assert {"__MODEL_PATH__", "__DATA_NIC__"} <= set(result.placeholders)
    assert {"launch.model_path_missing", "launch.data_nic_missing"} <= {c.code for c in result.checks}
    assert "__MODEL_PATH__" in bundle_files(result)[result.nodes[0].script]


def test_plan_carries_the_launch_rows_and_they_serialise():
    result = plan(_request("a3-4-single"))
    rows = plan_to_dict(result)["launch"]["nodes"]  # the public shape carries each start command
    assert [r["role"] for r in rows] == ["master", "worker", "worker", "worker"]
    assert {"index", "group", "role", "host", "command", "env"} <= set(rows[0])


@pytest.mark.parametrize("kind", [TopologyKind.PRIMARY_STANDBY, TopologyKind.TENANT_PAIR])
def test_bundle_files_accepts_a_request_and_layout(kind):
    req = _request(f"a3-8-{kind.value.replace('_', '-')}")
    files = bundle_files(req, layout_for(req))
    assert "gateway/nginx.conf" in files and len([f for f in files if f.startswith("node-")]) == 8
