"""Launch bundle: per-node start scripts, gateway/proxy, monitoring and an operator README.

Everything here is generated from the request and the layout, never written
by hand, following the public vLLM / vLLM-Ascend conventions (domain.md §5, §11):

* **Aggregated DP** (single cluster, primary/standby, tenant pair): per group,
  node 0 is the master (serves the API, no ``--headless``); every other node
  runs ``--headless --data-parallel-start-rank k × dp_local``; all share
  ``--data-parallel-address <master IP> --data-parallel-rpc-port <port>``.
  Two-cluster topologies get two independent masters and an nginx gateway
  (backup failover for primary/standby, per-tenant routing for a tenant pair).
* **xPyD**: each side is its own DP group with its own master address and RPC
  port; every node runs ``vllm serve … --data-parallel-rank r`` (external DP,
  as vLLM-Ascend's ``launch_online_dp.py`` does) with r = 0… within the side.
  Prefill engines produce KV through ``MultiConnector`` (``MooncakeConnectorV1``
  + ``AscendStoreConnector`` on memcache) and run eager; decode engines consume
  through ``MooncakeConnectorV1`` with FULL_DECODE_ONLY graphs.  A memcache
  MetaService starts before the prefill engines; a load-balancing proxy lists
  every prefill and decode endpoint.

Site values (node IPs, NIC, model path) come from ``req.launch``; a missing one
becomes a visible placeholder such as ``__NODE3_IP__``, and every script
refuses to start (exit 2, naming the placeholder) until it is replaced.
JSON arguments are built with ``json.dumps`` and quoted with ``shlex.quote``.
"""

from __future__ import annotations

import functools
import io
import ipaddress
import json
import re
import shlex
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from .placement import serving_flags_for_checkpoint
from .types import (
    Check,
    Figure,
    GroupLayout,
    LayoutResult,
    PlanRequest,
    Severity,
    Source,
    TopologyKind,
)

AREA = "launch"
ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)
PLACEHOLDER_MODEL_PATH = "__MODEL_PATH__"
PLACEHOLDER_NIC = "__DATA_NIC__"
PLACEHOLDER_IMAGE = "__IMAGE__"
MMC_LOCAL_CONF = "/etc/memcache/mmc-local.conf"
MMC_META_CONF = "/etc/memcache/mmc-meta.conf"
PD_PROXY_ASCEND = (
    "/vllm-workspace/vllm-ascend/examples/disaggregated_prefill_v1/load_balance_proxy_server_example.py"
)
KV_PORT_STEP = 100  # kv_port offset between engines on one node (each takes kv_port … kv_port + chips)
NODE_EXPORTER_PORT = 9100  # node_exporter default
DEVICE_EXPORTER_PORT = {"ascend": 8082, "cuda": 9400}  # npu-exporter / dcgm-exporter defaults
FULL_DECODE_ONLY = {"cudagraph_mode": "FULL_DECODE_ONLY"}
# Arguments repeat across nodes: memoising the quoting keeps build_launch well under a millisecond or two.
_quote = functools.lru_cache(maxsize=4096)(shlex.quote)


def _join(argv: tuple[str, ...]) -> str:
    return " ".join(_quote(a) for a in argv)


SOURCE_DOCS = Source("public", "vLLM data_parallel_deployment.md; vLLM-Ascend Kimi-K3 tutorial")

# A guard that is itself free of the pattern it looks for: '_''_' is "__" to bash
# but never matches when the script greps its own text.
GUARD = """\
# Refuse to start while a site value is still a placeholder.
placeholder_pattern='_''_[A-Z0-9][A-Z0-9_]*_''_'
left=$(grep -oE "$placeholder_pattern" "${BASH_SOURCE[0]}" | sort -u | tr '\\n' ' ' || true)
if [ -n "$left" ]; then
  echo "refusing to start: replace the placeholder(s) ${left}in ${BASH_SOURCE[0]} with this site's values" >&2
  exit 2
fi
"""


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class NodeLaunch:
    """One node of the bundle: the summary row the UI and the PDF show."""

    index: int  # node index in the deployment
    group: str  # GroupLayout.name
    role: str  # master | worker | prefill | decode
    host: str  # IP or placeholder
    is_master: bool  # hosts its group's DP master (rank 0 / the API for aggregated DP)
    dp_rank: int  # first DP rank on this node, within its group
    script: str  # file name in the bundle
    title: str  # one-line description (the script's header)
    env: Mapping[str, str]
    argv: tuple[tuple[str, ...], ...]  # one argv per engine, as the shell will see it
    api_ports: tuple[int, ...]  # HTTP ports served on this node (empty for headless workers)

    @property
    def command(self) -> str:
        """The vllm serve command(s) as one shell line per engine."""
        return "\n".join(_join(a) for a in self.argv)


@dataclass(frozen=True)
class GroupSummary:
    name: str
    role: str
    nodes: int
    tp: int
    dp: int


@dataclass(frozen=True)
class BundleContext:
    """What the bundle's non-node files need, so they can be rendered from the result alone."""

    model_name: str
    server_name: str
    node_count: int
    topology: TopologyKind
    groups: tuple[GroupSummary, ...]
    model_path: str
    nic: str
    image: str
    ascend: bool
    api_port: int
    proxy_port: int


@dataclass(frozen=True)
class LaunchResult:
    """The launch plan.  ``files`` (path → text) is rendered on first access, so
    ``plan()`` stays fast; the rows in ``nodes`` carry every command and environment."""

    nodes: tuple[NodeLaunch, ...]
    placeholders: tuple[str, ...]  # placeholders left in the bundle
    entrypoint: str  # where clients send requests (host:port), maybe a placeholder
    context: BundleContext
    figures: Mapping[str, Figure] = field(default_factory=dict)
    checks: tuple[Check, ...] = ()

    @cached_property
    def files(self) -> dict[str, str]:
        return render_bundle(self)


# --------------------------------------------------------------------------- site values


@dataclass(frozen=True)
class _Site:
    ips: tuple[str, ...]
    model_path: str
    nic: str
    served_name: str
    devices_per_node: int
    ascend: bool
    placeholders: tuple[str, ...]


def _site(req: PlanRequest, layout: LayoutResult) -> _Site:
    n = max(
        layout.nodes or req.topology.nodes, max((g.first_node + g.nodes for g in layout.groups), default=0)
    )
    given = req.launch.node_ips
    ips = tuple(
        given[i].strip() if i < len(given) and given[i].strip() else f"__NODE{i}_IP__" for i in range(n)
    )
    model_path = req.launch.model_path.strip() or PLACEHOLDER_MODEL_PATH
    nic = req.launch.data_nic.strip() or PLACEHOLDER_NIC
    placeholders = [ip for ip in ips if ip.startswith("__")]
    placeholders += [v for v in (model_path, nic) if v.startswith("__")]
    return _Site(
        ips=ips,
        model_path=model_path,
        nic=nic,
        served_name=req.launch.served_model_name or req.model.slug,
        devices_per_node=layout.devices_per_node or req.server.logical_devices,
        ascend=req.server.accelerator.software_stack == "ascend",
        placeholders=tuple(placeholders),
    )


# --------------------------------------------------------------------------- flags


def _json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=False)


def _common_flags(req: PlanRequest, site: _Site, *, pd_role: str = "") -> list[tuple[str, str | None]]:
    """Flags every engine of the deployment shares (after the parallel flags)."""
    s, m = req.serving, req.model
    flags: list[tuple[str, str | None]] = []
    if req.topology.parallel.expert_parallel and m.is_moe:
        flags.append(("--enable-expert-parallel", None))
    flags += [
        ("--max-model-len", str(s.max_model_len)),
        ("--max-num-seqs", str(s.max_num_seqs)),
        ("--max-num-batched-tokens", str(s.max_num_batched_tokens)),
        ("--gpu-memory-utilization", f"{s.gpu_memory_utilization:g}"),
        ("--trust-remote-code", None),
    ]
    flags += serving_flags_for_checkpoint(req)  # --quantization / --block-size (engine/placement.py)
    if s.kv_cache_dtype not in ("auto", ""):
        flags.append(("--kv-cache-dtype", s.kv_cache_dtype))
    flags.append(
        ("--enable-prefix-caching", None) if s.enable_prefix_caching else ("--no-enable-prefix-caching", None)
    )
    if pd_role and m.linear_layers > 0:
        flags.append(("--mamba-cache-mode", "align"))
    if s.language_model_only:
        flags.append(("--language-model-only", None))
    if m.vllm_tokenizer_mode:
        flags.append(("--tokenizer-mode", m.vllm_tokenizer_mode))
    if m.vllm_reasoning_parser:
        flags.append(("--reasoning-parser", m.vllm_reasoning_parser))
    if m.vllm_tool_call_parser:
        flags += [("--enable-auto-tool-choice", None), ("--tool-call-parser", m.vllm_tool_call_parser)]
    if pd_role == "prefill":
        flags.append(("--enforce-eager", None))
    else:
        flags.append(("--compilation-config", _json(FULL_DECODE_ONLY)))
    return flags


def _argv(model_path: str, flags: list[tuple[str, str | None]]) -> tuple[str, ...]:
    out = ["vllm", "serve", model_path]
    for flag, value in flags:
        out.append(flag)
        if value is not None:
            out.append(value)
    return tuple(out)


def _kv_transfer_config(
    req: PlanRequest, side: str, engine_id: str, kv_port: int, prefill: GroupLayout, decode: GroupLayout
) -> dict[str, Any]:
    sizes = {
        "prefill": {"dp_size": prefill.parallel.dp, "tp_size": prefill.parallel.tp},
        "decode": {"dp_size": decode.parallel.dp, "tp_size": decode.parallel.tp},
    }
    ascend = req.server.accelerator.software_stack == "ascend"
    if not ascend:
        # vLLM's own P/D connector on CUDA; each side both sends and receives metadata.
        return {"kv_connector": "NixlConnector", "kv_role": "kv_both", "engine_id": engine_id}
    if side == "prefill":
        return {
            "kv_connector": "MultiConnector",
            "kv_role": "kv_producer",
            "engine_id": engine_id,
            "kv_connector_extra_config": {
                "connectors": [
                    {
                        "kv_connector": "MooncakeConnectorV1",
                        "kv_role": "kv_producer",
                        "kv_port": kv_port,
                        "kv_connector_extra_config": sizes,
                    },
                    {
                        "kv_connector": "AscendStoreConnector",
                        "kv_role": "kv_producer",
                        "kv_connector_extra_config": {"backend": "memcache", "lookup_rpc_port": "0"},
                    },
                ]
            },
        }
    return {
        "kv_connector": "MooncakeConnectorV1",
        "kv_role": "kv_consumer",
        "engine_id": engine_id,
        "kv_port": kv_port,
        "kv_connector_extra_config": sizes,
    }


# --------------------------------------------------------------------------- environment


def _env(req: PlanRequest, site: _Site, ip: str, *, master: bool, pd_role: str = "") -> dict[str, str]:
    devices = ",".join(str(i) for i in range(site.devices_per_node))
    env: dict[str, str] = {
        "VLLM_HOST_IP": ip
    }  # every node: otherwise vLLM may bind a bridge or 127.0.0.1 [S1]
    if site.ascend:
        env.update(
            {
                "HCCL_IF_IP": ip,
                "GLOO_SOCKET_IFNAME": site.nic,
                "TP_SOCKET_IFNAME": site.nic,
                "HCCL_SOCKET_IFNAME": site.nic,
                "OMP_PROC_BIND": "false",
                "OMP_NUM_THREADS": "10",
                "PYTORCH_NPU_ALLOC_CONF": "expandable_segments:True",
                "TASK_QUEUE_ENABLE": "1",
            }
        )
        if req.server.scale_up_fabric != "hccs":
            # The A2 (HCCS) K3 tutorial says not to set AIV expansion; A3 tutorials set it.
            env["HCCL_OP_EXPANSION_MODE"] = "AIV"
        env["HCCL_BUFFSIZE"] = str(req.serving.comm_buffer_mb)
        env["HCCL_CONNECT_TIMEOUT"] = "120" if pd_role else "1800"
        if pd_role:
            env["HCCL_EXEC_TIMEOUT"] = "204"
            env["VLLM_RPC_TIMEOUT"] = "3600000"
        env["ASCEND_RT_VISIBLE_DEVICES"] = devices
        if pd_role == "prefill":
            env["MMC_LOCAL_CONFIG_PATH"] = MMC_LOCAL_CONF
            env["PYTHONHASHSEED"] = "0"  # the KV pool hashes prefixes identically on every node
    else:
        env.update({"NCCL_SOCKET_IFNAME": site.nic, "GLOO_SOCKET_IFNAME": site.nic})
        if any(n.fabric in ("infiniband", "roce") for n in req.server.nics):
            env["NCCL_IB_HCA"] = "mlx5"  # prefix match on the RDMA HCAs; narrow it if other HCAs exist
        env["CUDA_VISIBLE_DEVICES"] = devices
    if master:
        env["VLLM_ENGINE_READY_TIMEOUT_S"] = "7200"  # loading ≈1.5 TB of weights takes long
    return env


# --------------------------------------------------------------------------- scripts


def _script(title: str, env: Mapping[str, str], body: str, extra_guard: str = "") -> str:
    lines = [
        "#!/usr/bin/env bash",
        f"# {title}",
        "# Generated by the configurator; regenerate rather than edit (only replace __…__ placeholders).",
        "set -euo pipefail",
        "",
        GUARD,
    ]
    if extra_guard:
        lines.append(extra_guard)
    if env:
        lines.append("# Environment (sorted: the same script whether built now or from a stored plan)")
        lines += [f"export {k}={_quote(env[k])}" for k in sorted(env)]
        lines.append("")
    lines.append(body)
    return "\n".join(lines).rstrip("\n") + "\n"


def _render_command(argv: tuple[str, ...], prefix: str = "") -> str:
    """A readable multi-line shell command: one flag (and its value) per line."""
    head = " ".join(_quote(a) for a in argv[:3])
    parts: list[str] = []
    i = 3
    while i < len(argv):
        if i + 1 < len(argv) and not argv[i + 1].startswith("--"):
            parts.append(f"{argv[i]} {_quote(argv[i + 1])}")
            i += 2
        else:
            parts.append(argv[i])
            i += 1
    return prefix + head + "".join(f" \\\n    {p}" for p in parts)


def _file_exists_guard(path: str, what: str) -> str:
    q = _quote(path)
    return (
        f"if [ ! -f {q} ]; then\n"
        f'  echo "refusing to start: {what} {path} is missing (copy it from memcache_hybrid/config/)" >&2\n'
        "  exit 2\n"
        "fi\n"
    )


# --------------------------------------------------------------------------- build


def build_launch(req: PlanRequest, layout: LayoutResult) -> LaunchResult:
    """Every node's launch command and environment; the bundle's files render on demand (see module doc)."""
    site = _site(req, layout)
    checks = _launch_checks(req, layout, site)
    nodes: list[NodeLaunch] = []
    kind = req.topology.kind
    if kind == TopologyKind.DISAGGREGATED:
        entrypoint = _build_pd(req, layout, site, nodes)
        scripts = len(nodes) + (2 if site.ascend else 1)  # + MetaService (Ascend) + proxy
    else:
        entrypoint = _build_aggregated(req, layout, site, nodes)
        scripts = len(nodes)
    context = BundleContext(
        model_name=req.model.name,
        server_name=req.server.name,
        node_count=layout.nodes or req.topology.nodes,
        topology=kind,
        groups=tuple(
            GroupSummary(g.name, g.role, g.nodes, g.parallel.tp, g.parallel.dp) for g in layout.groups
        ),
        model_path=site.model_path,
        nic=site.nic,
        image=req.launch.image or PLACEHOLDER_IMAGE,
        ascend=site.ascend,
        api_port=req.launch.api_port,
        proxy_port=req.launch.proxy_port,
    )
    figures = {
        "launch.scripts": Figure(
            "launch.scripts",
            scripts,
            "files",
            "Start scripts in the bundle",
            "启动脚本数量",
            "one per node (+ MetaService and proxy for xPyD)",
            {"nodes": len(nodes)},
            SOURCE_DOCS,
        ),
        "launch.engines": Figure(
            "launch.engines",
            sum(len(n.argv) for n in nodes),
            "processes",
            "vllm serve processes",
            "vllm serve 进程数",
            "nodes × engines per node",
            {},
            SOURCE_DOCS,
        ),
    }
    return LaunchResult(
        nodes=tuple(nodes),
        placeholders=site.placeholders,
        entrypoint=entrypoint,
        context=context,
        figures=figures,
        checks=tuple(checks),
    )


def _rank_text(k: int, dp_local: int) -> str:
    first = k * dp_local
    return f"DP rank {first}" if dp_local == 1 else f"DP ranks {first}–{first + dp_local - 1}"


def _script_name(index: int, group: GroupLayout, role: str) -> str:
    return f"node-{index:02d}-{group.name}-{role}.sh"


def _build_aggregated(req: PlanRequest, layout: LayoutResult, site: _Site, nodes: list[NodeLaunch]) -> str:
    lp = req.launch
    common = _common_flags(req, site)
    for g in layout.groups:
        p = g.parallel
        master_ip = site.ips[g.first_node]
        for k in range(g.nodes):
            index = g.first_node + k
            ip = site.ips[index]
            master = k == 0
            role = "master" if master else "worker"
            flags: list[tuple[str, str | None]] = [("--served-model-name", site.served_name)]
            if master:
                flags += [("--host", "0.0.0.0"), ("--port", str(lp.api_port))]
            else:
                flags.append(("--headless", None))
            flags += [("--tensor-parallel-size", str(p.tp))]
            if p.pp > 1:
                flags.append(("--pipeline-parallel-size", str(p.pp)))
            flags += [
                ("--data-parallel-size", str(p.dp)),
                ("--data-parallel-size-local", str(p.dp_local)),
            ]
            if not master:
                flags.append(("--data-parallel-start-rank", str(k * p.dp_local)))
            flags += [("--data-parallel-address", master_ip), ("--data-parallel-rpc-port", str(lp.rpc_port))]
            flags += common
            argv = _argv(site.model_path, flags)
            env = _env(req, site, ip, master=master)
            name = _script_name(index, g, role)
            title = (
                f"{req.model.name} on {req.server.name}: node {index} ({g.name}, {role}, "
                f"{_rank_text(k, p.dp_local)} of {p.dp})"
            )
            nodes.append(
                NodeLaunch(
                    index=index,
                    group=g.name,
                    role=role,
                    host=ip,
                    is_master=master,
                    dp_rank=k * p.dp_local,
                    script=name,
                    title=title,
                    env=env,
                    argv=(argv,),
                    api_ports=(lp.api_port,) if master else (),
                )
            )
    masters = [n for n in nodes if n.is_master]
    if req.topology.kind in (TopologyKind.PRIMARY_STANDBY, TopologyKind.TENANT_PAIR) and len(masters) >= 2:
        return f"<gateway host>:{lp.proxy_port}"
    return f"{masters[0].host}:{lp.api_port}" if masters else ""


def _build_pd(req: PlanRequest, layout: LayoutResult, site: _Site, nodes: list[NodeLaunch]) -> str:
    lp = req.launch
    prefill = next((g for g in layout.groups if g.role == "prefill"), None)
    decode = next((g for g in layout.groups if g.role == "decode"), None)
    if prefill is None or decode is None:
        return ""
    rpc_ports = {"prefill": lp.rpc_port, "decode": lp.rpc_port + 1}
    kv_ports = {"prefill": lp.kv_port_prefill, "decode": lp.kv_port_decode}
    for g in (prefill, decode):
        side = g.role
        p = g.parallel
        master_ip = site.ips[g.first_node]
        common = _common_flags(req, site, pd_role=side)
        for k in range(g.nodes):
            index = g.first_node + k
            ip = site.ips[index]
            env = _env(req, site, ip, master=k == 0, pd_role=side)
            argvs: list[tuple[str, ...]] = []
            ports: list[int] = []
            for local in range(p.dp_local):
                rank = k * p.dp_local + local
                port = lp.api_port + local
                kv_port = kv_ports[side] + local * KV_PORT_STEP
                engine_id = str(index * p.dp_local + local)
                flags: list[tuple[str, str | None]] = [
                    ("--served-model-name", site.served_name),
                    ("--host", "0.0.0.0"),
                    ("--port", str(port)),
                    ("--tensor-parallel-size", str(p.tp)),
                ]
                if p.pp > 1:
                    flags.append(("--pipeline-parallel-size", str(p.pp)))
                flags += [
                    ("--data-parallel-size", str(p.dp)),
                    ("--data-parallel-rank", str(rank)),
                    ("--data-parallel-address", master_ip),
                    ("--data-parallel-rpc-port", str(rpc_ports[side])),
                ]
                flags += common
                kv = _kv_transfer_config(req, side, engine_id, kv_port, prefill, decode)
                flags.append(("--kv-transfer-config", _json(kv)))
                argv = _argv(site.model_path, flags)
                if p.dp_local > 1:
                    per_engine = p.tp * p.pp
                    devices = ",".join(str(d) for d in range(local * per_engine, (local + 1) * per_engine))
                    var = "ASCEND_RT_VISIBLE_DEVICES" if site.ascend else "CUDA_VISIBLE_DEVICES"
                    argv = (f"{var}={devices}", *argv)
                argvs.append(argv)
                ports.append(port)
            name = _script_name(index, g, side)
            title = (
                f"{req.model.name} on {req.server.name}: node {index} ({side}, "
                f"{_rank_text(k, p.dp_local)} of {p.dp}, master {master_ip})"
            )
            nodes.append(
                NodeLaunch(
                    index=index,
                    group=g.name,
                    role=side,
                    host=ip,
                    is_master=k == 0,
                    dp_rank=k * p.dp_local,
                    script=name,
                    title=title,
                    env=env,
                    argv=tuple(argvs),
                    api_ports=tuple(ports),
                )
            )

    return f"{site.ips[prefill.first_node]}:{lp.proxy_port}"


# --------------------------------------------------------------------------- rendering (on demand)


def render_bundle(result: LaunchResult) -> dict[str, str]:
    """Render every file of the bundle from a :class:`LaunchResult` (path → text)."""
    ctx, nodes = result.context, list(result.nodes)
    files = {n.script: _node_script(ctx, n) for n in nodes}
    if ctx.topology == TopologyKind.DISAGGREGATED and nodes:
        proxy_host = nodes[0].host  # the prefill master
        if ctx.ascend:
            files["start-memcache-metaservice.sh"] = _script(
                f"memcache MetaService for the prefill KV pool; run on {proxy_host} before any prefill engine",
                {"MMC_META_CONFIG_PATH": MMC_META_CONF},
                "exec python -c " + _quote("from memcache_hybrid import MetaService; MetaService.main()"),
                _file_exists_guard(MMC_META_CONF, "memcache MetaService config"),
            )
        files["start-proxy.sh"] = _proxy_script(ctx, nodes, proxy_host)
    masters = [n for n in nodes if n.is_master]
    if ctx.topology in (TopologyKind.PRIMARY_STANDBY, TopologyKind.TENANT_PAIR) and len(masters) >= 2:
        files["gateway/nginx.conf"] = _nginx(ctx, masters)
    files["monitoring/prometheus.yml"] = _prometheus(ctx, nodes)
    files["README.md"] = _readme(ctx, result, files)
    return files


def _node_script(ctx: BundleContext, node: NodeLaunch) -> str:
    if len(node.argv) == 1 and "=" not in node.argv[0][0]:
        body = "exec " + _render_command(node.argv[0])
    else:
        # several engines on one node: each with its own devices, then wait for all
        lines = [_render_command(a[1:], prefix=f"{a[0]} ") + " &" for a in node.argv]
        body = "\n".join(lines) + "\nwait\n"
    extra = (
        _file_exists_guard(MMC_LOCAL_CONF, "memcache local config")
        if node.role == "prefill" and ctx.ascend
        else ""
    )
    return _script(node.title, node.env, body, extra)


def _proxy_script(ctx: BundleContext, nodes: list[NodeLaunch], proxy_host: str) -> str:
    pre = [(n.host, port) for n in nodes if n.role == "prefill" for port in n.api_ports]
    dec = [(n.host, port) for n in nodes if n.role == "decode" for port in n.api_ports]
    default = PD_PROXY_ASCEND if ctx.ascend else "toy_proxy_server.py"
    argv = [
        "python",
        '"$PROXY"',
        "--host",
        "0.0.0.0",
        "--port",
        str(ctx.proxy_port),
        "--prefiller-hosts",
        *[h for h, _ in pre],
        "--prefiller-ports",
        *[str(p) for _, p in pre],
        "--decoder-hosts",
        *[h for h, _ in dec],
        "--decoder-ports",
        *[str(p) for _, p in dec],
    ]
    rendered = " ".join(a if a == '"$PROXY"' else _quote(a) for a in argv)
    body = (
        "# Requests go to a prefill engine first, then to a decode engine (MooncakeConnectorV1).\n"
        f"PROXY=${{PD_PROXY_SCRIPT:-{default}}}\n"
        f"exec {rendered}\n"
    )
    return _script(f"P/D load-balancing proxy; run on {proxy_host} after every engine is up", {}, body)


def _nginx(ctx: BundleContext, masters: list[NodeLaunch]) -> str:
    port = ctx.api_port
    listen = ctx.proxy_port
    common = (
        "        proxy_http_version 1.1;\n"
        '        proxy_set_header Connection "";\n'
        "        proxy_set_header Host $host;\n"
        "        proxy_buffering off;            # stream tokens as they come\n"
        "        proxy_read_timeout 3600s;       # long reasoning answers\n"
        "        proxy_connect_timeout 5s;\n"
    )
    if ctx.topology == TopologyKind.PRIMARY_STANDBY:
        a, b = masters[0], masters[1]
        return (
            f"# Primary/standby gateway for {ctx.model_name}: {a.group} serves, {b.group} is the hot standby.\n"
            "# Place inside the http {} block (e.g. /etc/nginx/conf.d/). A failed or refused connection\n"
            "# to the primary is retried on the standby at once; after 2 failures the primary is skipped\n"
            "# for 10 s, so failover completes well within the 30 s target.\n"
            "upstream llm_primary_standby {\n"
            f"    server {a.host}:{port} max_fails=2 fail_timeout=10s;\n"
            f"    server {b.host}:{port} backup;\n"
            "    keepalive 32;\n"
            "}\n\n"
            "server {\n"
            f"    listen {listen};\n"
            "    location = /health {\n"
            "        proxy_pass http://llm_primary_standby/health;\n"
            "    }\n"
            "    location / {\n"
            "        proxy_pass http://llm_primary_standby;\n"
            "        proxy_next_upstream error timeout http_502 http_503 http_504;\n"
            "        proxy_next_upstream_tries 2;\n"
            f"{common}"
            "    }\n"
            "}\n"
        )
    upstreams = "".join(
        f"upstream {m.group.replace('-', '_')} {{\n    server {m.host}:{port} max_fails=2 fail_timeout=10s;\n"
        "    keepalive 32;\n}\n\n"
        for m in masters
    )
    routes = "".join(f"    {m.group} {m.group.replace('-', '_')};\n" for m in masters)
    return (
        f"# Tenant-isolation gateway for {ctx.model_name}: each tenant's requests go to its own cluster.\n"
        "# Clients send the header 'X-Tenant: <cluster name>'; without it they reach "
        f"{masters[0].group}.\n"
        "# Place inside the http {} block (e.g. /etc/nginx/conf.d/).\n"
        "map $http_x_tenant $tenant_cluster {\n"
        f"    default {masters[0].group.replace('-', '_')};\n"
        f"{routes}"
        "}\n\n"
        f"{upstreams}"
        "server {\n"
        f"    listen {listen};\n"
        "    location / {\n"
        "        proxy_pass http://$tenant_cluster;\n"
        f"{common}"
        "    }\n"
        "}\n"
    )


def _prometheus(ctx: BundleContext, nodes: list[NodeLaunch]) -> str:
    stack = "ascend" if ctx.ascend else "cuda"
    exporter = "npu-exporter" if ctx.ascend else "dcgm-exporter"
    lines = [
        f"# Prometheus scrape configuration for {ctx.model_name} on {ctx.server_name}.",
        "# vLLM serves /metrics on its API port (headless workers report through their master).",
        f"# node_exporter ({NODE_EXPORTER_PORT}) and {exporter} ({DEVICE_EXPORTER_PORT[stack]}) use their default"
        " ports; change them here if the site differs.",
        "global:",
        "  scrape_interval: 15s",
        "scrape_configs:",
        "  - job_name: vllm",
        "    metrics_path: /metrics",
        "    static_configs:",
    ]
    for n in nodes:
        for port in n.api_ports:
            lines += [
                f"      - targets: ['{n.host}:{port}']",
                f"        labels: {{group: '{n.group}', role: '{n.role}', node: '{n.index}'}}",
            ]
    for job, port in (("node", NODE_EXPORTER_PORT), (exporter, DEVICE_EXPORTER_PORT[stack])):
        lines += [f"  - job_name: {job}", "    static_configs:"]
        for n in nodes:
            lines += [
                f"      - targets: ['{n.host}:{port}']",
                f"        labels: {{group: '{n.group}', node: '{n.index}'}}",
            ]
    return "\n".join(lines) + "\n"


def _readme(ctx: BundleContext, result: LaunchResult, files: Mapping[str, str]) -> str:
    nodes = list(result.nodes)
    kind = ctx.topology
    entrypoint = result.entrypoint
    out = [
        f"# Launch bundle: {ctx.model_name} on {ctx.node_count} × {ctx.server_name}",
        "",
        "启动配置包 — generated by the configurator from the quoted plan. Regenerate it after any change to",
        "the plan instead of editing the scripts; only replace the `__…__` placeholders with site values.",
        "",
        f"- Topology: {kind.value}; groups: "
        + ", ".join(f"{g.name} ({g.role}, {g.nodes} nodes, TP{g.tp} DP{g.dp})" for g in ctx.groups),
        f"- Model path on every node: `{ctx.model_path}`; data NIC: `{ctx.nic}`",
        f"- Container image: `{ctx.image}` (run with `--net=host` and every accelerator device mapped)",
        f"- Clients connect to: `{entrypoint}`",
        "",
    ]
    if result.placeholders:
        out += [
            "## Placeholders to replace first / 需先替换的占位符",
            "",
            "Every script checks itself and refuses to start (exit code 2) while one of these remains:",
            "",
            *[f"- `{p}`" for p in result.placeholders],
            "",
        ]
    out += ["## Files / 文件说明", "", "| file | run on | what it does |", "|---|---|---|"]
    for n in nodes:
        what = {
            "master": "DP master: serves the API and coordinates the group's DP ranks",
            "worker": f"headless DP worker, start rank {n.dp_rank}",
            "prefill": f"prefill engine (KV producer), DP rank {n.dp_rank}",
            "decode": f"decode engine (KV consumer), DP rank {n.dp_rank}",
        }[n.role]
        out.append(f"| `{n.script}` | node {n.index} ({n.host}) | {n.group}: {what} |")
    extra = {
        "start-memcache-metaservice.sh": "memcache MetaService for the prefill KV pool",
        "start-proxy.sh": "load-balancing proxy listing every prefill and decode endpoint",
        "gateway/nginx.conf": "nginx gateway in front of the two clusters",
        "monitoring/prometheus.yml": "Prometheus scrape targets (vLLM, node and accelerator exporters)",
    }
    proxy_host = nodes[0].host if nodes else ""
    for name, what in extra.items():
        if name in files or name == "monitoring/prometheus.yml":
            where = {
                "start-memcache-metaservice.sh": f"node {nodes[0].index} ({proxy_host})" if nodes else "",
                "start-proxy.sh": f"node {nodes[0].index} ({proxy_host})" if nodes else "",
                "gateway/nginx.conf": "the gateway host",
                "monitoring/prometheus.yml": "the monitoring host",
            }[name]
            out.append(f"| `{name}` | {where} | {what} |")
    out += ["", "## Start-up order / 启动顺序", ""]
    if kind == TopologyKind.DISAGGREGATED:
        steps = []
        if "start-memcache-metaservice.sh" in files:
            steps.append(
                "Copy `mmc-meta.conf` and `mmc-local.conf` from the installed `memcache_hybrid/config/` to "
                f"`{MMC_META_CONF}` / `{MMC_LOCAL_CONF}` on the prefill nodes and adapt them; then start "
                "`start-memcache-metaservice.sh` (the KV pool must exist before any prefill engine)."
            )
        steps += [
            "Start the prefill scripts (rank 0, the side's master, first; then ranks 1… promptly).",
            "Start the decode scripts the same way (their own master and RPC port).",
            "Wait until every engine logs that it is ready (`curl http://<host>:<port>/health` returns 200).",
            "Start `start-proxy.sh`; send requests to the proxy only.",
        ]
    else:
        steps = []
        for g in ctx.groups:
            master = next((n for n in nodes if n.group == g.name and n.is_master), None)
            if master is None:
                continue
            steps.append(
                f"{g.name}: start `{master.script}` on node {master.index} first, then the worker scripts "
                "of the group as soon as possible (the master waits up to 2 h for them)."
            )
        steps.append(f"Wait for `curl http://<master>:{ctx.api_port}/health` to return 200 on each master.")
        if "gateway/nginx.conf" in files:
            steps.append(
                "Install `gateway/nginx.conf` on the gateway host and reload nginx (`nginx -t && nginx -s reload`)."
            )
    out += [f"{i}. {s}" for i, s in enumerate(steps, 1)]
    out += [
        "",
        "## Check it works / 验证",
        "",
        "```bash",
        f"curl http://{entrypoint}/v1/models",
        "```",
        "",
        "## Monitoring / 监控",
        "",
        "Merge `monitoring/prometheus.yml` into the site's Prometheus; vLLM exports request, token and KV",
        "cache metrics on `/metrics`. Server health (power, fans) comes from the iBMC/BMC.",
        "",
        "## Stop / 停止",
        "",
        "Stop the proxy or gateway first, then the engines (Ctrl-C or `kill` the `vllm serve` process).",
        "",
        "Throughput and latency in the proposal are estimates until a load test (压测) on this cluster confirms them.",
    ]
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------- checks


_IPV4 = re.compile(r"(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}")


def _is_ip(text: str) -> bool:
    if _IPV4.fullmatch(text):
        return True
    try:
        ipaddress.ip_address(text)  # IPv6
        return True
    except ValueError:
        return False


def _launch_checks(req: PlanRequest, layout: LayoutResult, site: _Site) -> list[Check]:
    lp = req.launch
    out: list[Check] = []
    n = layout.nodes or req.topology.nodes
    missing_ips = [ip for ip in site.ips if ip.startswith("__")]
    if missing_ips:
        out.append(
            Check(
                "launch.node_ips_missing",
                Severity.OK,
                AREA,
                f"{len(missing_ips)} of {n} node IPs are not entered; the scripts hold placeholders "
                f"({', '.join(missing_ips[:4])}{'…' if len(missing_ips) > 4 else ''}) and refuse to start.",
                f"{n} 个节点中有 {len(missing_ips)} 个未填写 IP，启动脚本中保留占位符，替换前脚本拒绝启动。",
                {"missing": len(missing_ips)},
                field="launch.node_ips",
                fix_en="Enter every node's data-network IP in node order.",
                fix_zh="请按节点顺序填写各节点业务/参数面 IP。",
            )
        )
    if len(lp.node_ips) > n:
        out.append(
            Check(
                "launch.node_ips_extra",
                Severity.WARNING,
                AREA,
                f"{len(lp.node_ips)} IPs entered for {n} nodes; the extra ones are ignored.",
                f"为 {n} 个节点填写了 {len(lp.node_ips)} 个 IP，多余的将被忽略。",
                field="launch.node_ips",
            )
        )
    given = [ip for ip in site.ips if not ip.startswith("__")]
    dupes = sorted({ip for ip in given if given.count(ip) > 1})
    if dupes:
        out.append(
            Check(
                "launch.node_ip_duplicate",
                Severity.ERROR,
                AREA,
                f"Node IPs repeat ({', '.join(dupes)}); every node needs its own address.",
                f"节点 IP 重复（{', '.join(dupes)}），每个节点须使用独立地址。",
                field="launch.node_ips",
            )
        )
    for ip in given:
        if not _is_ip(ip):
            out.append(
                Check(
                    "launch.node_ip_not_an_address",
                    Severity.WARNING,
                    AREA,
                    f"'{ip}' is not an IP address; HCCL_IF_IP and VLLM_HOST_IP need the node's IP.",
                    f"“{ip}” 不是 IP 地址，HCCL_IF_IP 与 VLLM_HOST_IP 需填写节点 IP。",
                    field="launch.node_ips",
                )
            )
    if site.model_path == PLACEHOLDER_MODEL_PATH:
        out.append(
            Check(
                "launch.model_path_missing",
                Severity.OK,
                AREA,
                "The model path is not entered; the scripts hold __MODEL_PATH__ and refuse to start.",
                "未填写模型权重路径，脚本中保留 __MODEL_PATH__ 占位符，替换前拒绝启动。",
                field="launch.model_path",
                fix_en="Enter the path of the weights on the shared storage (same on every node).",
                fix_zh="请填写共享存储上的权重路径（各节点一致）。",
            )
        )
    if site.nic == PLACEHOLDER_NIC:
        out.append(
            Check(
                "launch.data_nic_missing",
                Severity.OK,
                AREA,
                "The data NIC name is not entered; the scripts hold __DATA_NIC__ and refuse to start.",
                "未填写业务网卡名称，脚本中保留 __DATA_NIC__ 占位符，替换前拒绝启动。",
                field="launch.data_nic",
                fix_en="Enter the interface that owns each node's IP (e.g. enp189s0f0).",
                fix_zh="请填写持有节点 IP 的网卡名（如 enp189s0f0）。",
            )
        )
    disaggregated = req.topology.kind == TopologyKind.DISAGGREGATED
    ports = {"launch.api_port": lp.api_port, "launch.rpc_port": lp.rpc_port}
    if disaggregated:
        ports["launch.rpc_port + 1 (decode side)"] = lp.rpc_port + 1
    if disaggregated or req.topology.kind in (TopologyKind.PRIMARY_STANDBY, TopologyKind.TENANT_PAIR):
        ports["launch.proxy_port"] = lp.proxy_port
    seen: dict[int, str] = {}
    for name, port in ports.items():
        if port in seen:
            out.append(
                Check(
                    "launch.port_conflict",
                    Severity.ERROR,
                    AREA,
                    f"{name} and {seen[port]} are both {port}.",
                    f"{name} 与 {seen[port]} 端口同为 {port}，存在冲突。",
                    field=name.split(" ")[0],
                )
            )
        seen.setdefault(port, name)
    if disaggregated and site.ascend:
        floor = 20000 + site.devices_per_node * 1000
        for name, port in (
            ("launch.kv_port_prefill", lp.kv_port_prefill),
            ("launch.kv_port_decode", lp.kv_port_decode),
        ):
            if port < floor:
                out.append(
                    Check(
                        "launch.kv_port_in_reserved_range",
                        Severity.ERROR,
                        AREA,
                        f"{name} {port} falls in [20000, {floor}), the range Mooncake picks random ports from on "
                        f"{site.devices_per_node}-NPU nodes; startup would fail intermittently.",
                        f"{name} {port} 位于 [20000, {floor}) 区间，该区间为 {site.devices_per_node} 卡节点上 "
                        "Mooncake 随机端口的保留范围，启动会偶发失败。",
                        {"floor": floor},
                        field=name,
                        fix={name: floor if name.endswith("prefill") else floor + 200},
                        fix_en=f"Use a kv_port of {floor} or above.",
                        fix_zh=f"kv_port 请设为 {floor} 及以上。",
                    )
                )
    if disaggregated and not site.ascend:
        out.append(
            Check(
                "launch.pd_connector_unvalidated",
                Severity.WARNING,
                AREA,
                "P/D on CUDA uses vLLM's NixlConnector; this combination is not validated in the sources "
                "and needs a load test before go-live.",
                "CUDA 平台的 PD 分离采用 vLLM NixlConnector，该组合未经参考资料验证，上线前须压测。",
                field="topology.kind",
            )
        )
    return out


# --------------------------------------------------------------------------- bundle


def bundle_files(
    result_or_req: LaunchResult | PlanRequest, layout: LayoutResult | None = None
) -> dict[str, str]:
    """The bundle's files (path → text) from a :class:`LaunchResult`, or from a request and its layout."""
    if isinstance(result_or_req, LaunchResult):
        return dict(result_or_req.files)
    if layout is None:
        from .layout import resolve_layout

        layout = resolve_layout(result_or_req)
    return dict(build_launch(result_or_req, layout).files)


def bundle_zip(files: Mapping[str, str]) -> bytes:
    """A zip of the bundle with fixed timestamps and modes, so equal inputs give equal bytes."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name in sorted(files):
            info = zipfile.ZipInfo(name, date_time=ZIP_EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 3  # unix, so the mode bits below are honoured
            mode = 0o755 if name.endswith(".sh") else 0o644
            info.external_attr = (0o100000 | mode) << 16
            zf.writestr(info, files[name].encode("utf-8"))
    return buffer.getvalue()
