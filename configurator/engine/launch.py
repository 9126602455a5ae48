"""Launch bundle: per-node start scripts, gateway/proxy, monitoring and an operator README.

Everything here is generated from the request and the layout, never written
by hand, following the public vLLM / vLLM-Ascend conventions (docs/domain.md §5, §11):

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

Files are built by construction, never by pasting text (issue 13): every shell
word goes through ``shlex.quote``; comment and README lines pass through
``site_values.one_line`` (no control or line-separator character survives);
``gateway/nginx.conf`` is rendered from a directive tree whose every token is
checked against a bare-word grammar; ``monitoring/prometheus.yml`` is
``yaml.safe_dump`` of a dict.  Site values that fail the grammar of
``site_values`` (the request boundary already refuses them with a 400) are
never written: they become placeholders with an error check.
JSON arguments are built with ``json.dumps`` and quoted with ``shlex.quote``.
"""

from __future__ import annotations

import functools
import io
import json
import re
import shlex
import zipfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from . import recipes as rc
from . import site_values as sv
from .figures import FigureBook
from .names import node_name
from .placement import serving_flags_for_checkpoint
from .types import (
    BundleContext,
    Check,
    GroupLayout,
    GroupSummary,
    LaunchResult,
    LaunchSpec,
    LayoutResult,
    NodeLaunch,
    ParallelSpec,
    PlanRequest,
    Severity,
    Source,
    TopologyKind,
    TopologySpec,
)

AREA = "launch"
ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)
PLACEHOLDER_MODEL_PATH = "__MODEL_PATH__"
PLACEHOLDER_NIC = "__DATA_NIC__"
PLACEHOLDER_IMAGE = "__IMAGE__"
MMC_LOCAL_CONF = "/etc/memcache/mmc-local.conf"
MMC_META_CONF = "/etc/memcache/mmc-meta.conf"
_README_TOKENS = {rc.IP: "the node's IP", rc.NIC: "the data NIC", rc.DEVICES: "all devices"}
GATEWAY_VIP = "__GATEWAY_VIP__"  # the clients' virtual IP, moved between the two gateways by keepalived
GATEWAY_NIC = "__GATEWAY_NIC__"
GATEWAY_CONF = "/etc/nginx/conf.d/llm-gateway.conf"  # where llm-healthcheck.sh expects nginx.conf
KV_PORT_STEP = 100  # kv_port offset between engines on one node (each takes kv_port … kv_port + chips)
NODE_EXPORTER_PORT = 9100  # node_exporter default
DEVICE_EXPORTER_PORT = {"ascend": 8082, "cuda": 9400}  # npu-exporter / dcgm-exporter defaults
FAILOVER_HCCL_EXEC_TIMEOUT_S = 204  # the K3 tutorial's P/D value; HCCL's default is ≈30 min
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
    image: str = PLACEHOLDER_IMAGE
    rejected: tuple[tuple[str, str], ...] = ()  # (field, message) of values never written


def _checked(
    value: str,
    placeholder: str,
    error: Callable[[str], str | None],
    field_name: str,
    rejected: list[tuple[str, str]],
) -> str:
    """``value`` if it passes its grammar, else ``placeholder`` (and the reason in ``rejected``)."""
    value = value.strip() if isinstance(value, str) else ""
    if not value:
        return placeholder
    problem = error(value)
    if problem is None:
        return value
    rejected.append((field_name, problem))
    return placeholder


def _site(req: PlanRequest, layout: LayoutResult) -> _Site:
    n = max(
        layout.nodes or req.topology.nodes, max((g.first_node + g.nodes for g in layout.groups), default=0)
    )
    given = req.launch.node_ips
    rejected: list[tuple[str, str]] = []
    ips = tuple(
        _checked(given[i] if i < len(given) else "", f"__NODE{i}_IP__", sv.node_address_error,
                 f"launch.node_ips[{i}]", rejected)
        for i in range(n)
    )  # fmt: skip
    model_path = _checked(
        req.launch.model_path, PLACEHOLDER_MODEL_PATH, sv.model_path_error, "launch.model_path", rejected
    )
    nic = _checked(req.launch.data_nic, PLACEHOLDER_NIC, sv.nic_error, "launch.data_nic", rejected)
    image = _checked(req.launch.image, PLACEHOLDER_IMAGE, sv.image_error, "launch.image", rejected)
    served_name = req.launch.served_model_name or req.model.slug
    if sv.served_name_error(served_name) is not None:
        rejected.append(("launch.served_model_name", sv.served_name_error(served_name) or ""))
        served_name = req.model.slug if sv.served_name_error(req.model.slug) is None else "model"
    placeholders = [ip for ip in ips if ip.startswith("__")]
    placeholders += [v for v in (model_path, nic) if v.startswith("__")]
    return _Site(
        ips=ips,
        model_path=model_path,
        nic=nic,
        served_name=served_name,
        devices_per_node=layout.devices_per_node or req.server.logical_devices,
        ascend=req.server.accelerator.software_stack == "ascend",
        placeholders=tuple(placeholders),
        image=image,
        rejected=tuple(rejected),
    )


# --------------------------------------------------------------------------- flags


def _json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=False)


def _engine_flags(
    req: PlanRequest, recipe: rc.Recipe, role: str, p: ParallelSpec, *, cross_node: bool
) -> list[tuple[str, str | None]]:
    """The plan's sizes and the model's parsers, then the recipe's flags for ``role`` (after the parallel flags).

    Nothing platform-specific is decided here: graph mode, eager prefill, multimodal and kernel settings all
    come from the recipe (``engine/recipes.py``), so CUDA engines never inherit an Ascend choice.
    """
    s, m = req.serving, req.model
    flags: list[tuple[str, str | None]] = []
    if p.expert_parallel and m.is_moe:
        flags.append(("--enable-expert-parallel", None))
    flags += [
        ("--max-model-len", str(s.max_model_len)),
        ("--max-num-seqs", str(s.max_num_seqs)),
        ("--max-num-batched-tokens", str(s.max_num_batched_tokens)),
        ("--gpu-memory-utilization", f"{s.gpu_memory_utilization:g}"),
    ]
    flags += serving_flags_for_checkpoint(req)  # --quantization / --block-size (engine/placement.py)
    if s.kv_cache_dtype not in ("auto", ""):
        flags.append(("--kv-cache-dtype", s.kv_cache_dtype))
    flags.append(
        ("--enable-prefix-caching", None) if s.enable_prefix_caching else ("--no-enable-prefix-caching", None)
    )
    if s.language_model_only:
        flags.append(("--language-model-only", None))
    if m.vllm_tokenizer_mode:
        flags.append(("--tokenizer-mode", m.vllm_tokenizer_mode))
    if m.vllm_reasoning_parser:
        flags.append(("--reasoning-parser", m.vllm_reasoning_parser))
    if m.vllm_tool_call_parser:
        flags += [("--enable-auto-tool-choice", None), ("--tool-call-parser", m.vllm_tool_call_parser)]
    flags += recipe.flags_for(role)
    if cross_node and p.expert_parallel and m.is_moe:
        flags += list(recipe.cross_node_flags)
    return flags


def _argv(model_path: str, flags: list[tuple[str, str | None]]) -> tuple[str, ...]:
    out = ["vllm", "serve", model_path]
    for flag, value in flags:
        out.append(flag)
        if value is not None:
            out.append(value)
    return tuple(out)


def _kv_transfer_config(
    recipe: rc.Recipe, side: str, engine_id: str, kv_port: int, prefill: GroupLayout, decode: GroupLayout
) -> dict[str, Any]:
    sizes = {
        "prefill": {"dp_size": prefill.parallel.dp, "tp_size": prefill.parallel.tp},
        "decode": {"dp_size": decode.parallel.dp, "tp_size": decode.parallel.tp},
    }
    if recipe.connector == "nixl":
        # vLLM's own P/D connector on CUDA; each side both sends and receives metadata [NIXL].
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


def _fill(value: str, ip: str, site: _Site) -> str:
    devices = ",".join(str(i) for i in range(site.devices_per_node))
    return {rc.IP: ip, rc.NIC: site.nic, rc.DEVICES: devices}.get(value, value)


def _env(
    recipe: rc.Recipe,
    deviations: tuple[rc.Deviation, ...],
    role: str,
    site: _Site,
    ip: str,
    *,
    cross_node: bool,
) -> dict[str, str]:
    """The recipe's environment for ``role`` on the node at ``ip``, with the bundle's recorded deviations."""
    env = {k: _fill(v, ip, site) for k, v in recipe.env_for(role).items()}
    if cross_node:
        env.update({k: _fill(v, ip, site) for k, v in recipe.cross_node_env.items()})
    for d in deviations:
        if d.kind == "env" and role in d.roles:
            if d.value is None:
                env.pop(d.name, None)
            else:
                env[d.name] = _fill(d.value, ip, site)
    return env


def plan_deviations(req: PlanRequest, layout: LayoutResult, recipe: rc.Recipe) -> tuple[rc.Deviation, ...]:
    """The recipe's own deviations plus the ones this plan adds, each with its reason."""
    out = list(recipe.deviations)
    ascend = recipe.platform == "ascend"
    if "VLLM_HOST_IP" not in recipe.env and not any(d.name == "VLLM_HOST_IP" for d in out):
        out.append(rc.HOST_IP_ADDED)
    buffsize = recipe.env.get("HCCL_BUFFSIZE")
    if ascend and buffsize and str(req.serving.comm_buffer_mb) != buffsize:
        out.append(
            rc.Deviation(
                "env",
                "HCCL_BUFFSIZE",
                str(req.serving.comm_buffer_mb),
                f"the plan's communication buffer ({req.serving.comm_buffer_mb} MB, counted in the memory "
                f"estimate) instead of the tutorial's {buffsize} MB",
            )
        )
    if ascend and req.topology.kind == TopologyKind.PRIMARY_STANDBY:
        out.append(
            rc.Deviation(
                "env",
                "HCCL_EXEC_TIMEOUT",
                str(FAILOVER_HCCL_EXEC_TIMEOUT_S),
                f"lowered to {FAILOVER_HCCL_EXEC_TIMEOUT_S} s (the tutorial's P/D value) so a hung collective "
                "fails the cluster in minutes rather than after HCCL's ≈30 min default, and the gateway's "
                "health check moves traffic to the standby",
            )
        )
    if not ascend and any(n.fabric in ("infiniband", "roce") for n in req.server.nics):
        out.append(
            rc.Deviation(
                "env",
                "NCCL_IB_HCA",
                "mlx5",
                "NCCL uses only the RDMA HCAs (prefix match on mlx5); narrow it if other HCAs exist",
            )
        )
    return tuple(out)


# --------------------------------------------------------------------------- scripts


def _script(title: str, env: Mapping[str, str], body: str, extra_guard: str = "") -> str:
    lines = [
        "#!/usr/bin/env bash",
        _comment(title),
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


def _comment(text: str) -> str:
    """One safe shell/YAML/nginx comment line: no control or line-separator character survives."""
    return "# " + sv.one_line(text)


def _render_command(argv: tuple[str, ...], prefix: str = "") -> str:
    """A readable multi-line shell command: one flag (and its value) per line."""
    head = " ".join(_quote(a) for a in argv[:3])
    parts: list[str] = []
    i = 3
    while i < len(argv):
        if i + 1 < len(argv) and not argv[i + 1].startswith("--"):
            parts.append(f"{_quote(argv[i])} {_quote(argv[i + 1])}")
            i += 2
        else:
            parts.append(_quote(argv[i]))
            i += 1
    return prefix + head + "".join(f" \\\n    {p}" for p in parts)


def _file_exists_guard(path: str, what: str) -> str:
    message = f"refusing to start: {what} {path} is missing (copy it from memcache_hybrid/config/)"
    return f"if [ ! -f {_quote(path)} ]; then\n  echo {_quote(message)} >&2\n  exit 2\nfi\n"


# --------------------------------------------------------------------------- build


def build_launch(req: PlanRequest, layout: LayoutResult) -> LaunchResult:
    """Every node's launch command and environment; the bundle's files render on demand (see module doc)."""
    site = _site(req, layout)
    recipe = rc.select_recipe(req)
    deviations = plan_deviations(req, layout, recipe)
    checks = _launch_checks(req, layout, site)
    nodes: list[NodeLaunch] = []
    kind = req.topology.kind
    if kind == TopologyKind.DISAGGREGATED:
        entrypoint = _build_pd(req, layout, site, recipe, deviations, nodes)
        services = 2 if site.ascend else 1  # + MetaService (Ascend) + proxy
    else:
        entrypoint = _build_aggregated(req, layout, site, recipe, deviations, nodes)
        services = 0
    w = req.workload
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
        image=site.image
        if (req.launch.image or "").strip()
        else recipe.image,  # the recipe's image by default
        ascend=site.ascend,
        api_port=req.launch.api_port,
        proxy_port=req.launch.proxy_port,
        recipe=recipe.key,
        deviations=deviations,
        served_name=site.served_name,
        devices_per_node=site.devices_per_node,
        workload=(w.input_tokens, w.output_tokens, w.concurrency),
        max_num_seqs=req.serving.max_num_seqs,
    )
    book = FigureBook()
    book.put("launch.scripts", len(nodes) + services, source=SOURCE_DOCS, nodes=len(nodes), services=services)
    engines = sum(len(n.argv) for n in nodes)
    if kind == TopologyKind.DISAGGREGATED:
        # every node of a side runs the same number of engines (its DP ranks)
        side = {r: [n for n in nodes if n.role == r] for r in ("prefill", "decode")}
        book.put(
            "launch.engines",
            engines,
            variant="pd",
            source=SOURCE_DOCS,
            prefill_nodes=len(side["prefill"]),
            prefill_engines_per_node=len(side["prefill"][0].argv) if side["prefill"] else 0,
            decode_nodes=len(side["decode"]),
            decode_engines_per_node=len(side["decode"][0].argv) if side["decode"] else 0,
        )
    else:
        book.put("launch.engines", engines, source=SOURCE_DOCS, nodes=len(nodes), engines_per_node=1)
    return LaunchResult(
        nodes=tuple(nodes),
        placeholders=site.placeholders,
        entrypoint=entrypoint,
        context=context,
        figures=book.figures,
        checks=tuple(checks),
    )


def _rank_text(k: int, dp_local: int) -> str:
    first = k * dp_local
    return f"DP rank {first}" if dp_local == 1 else f"DP ranks {first}–{first + dp_local - 1}"


def _script_name(index: int, group: GroupLayout, role: str) -> str:
    return f"node-{index:02d}-{group.name}-{role}.sh"


def _build_aggregated(
    req: PlanRequest,
    layout: LayoutResult,
    site: _Site,
    recipe: rc.Recipe,
    deviations: tuple[rc.Deviation, ...],
    nodes: list[NodeLaunch],
) -> str:
    lp = req.launch
    for g in layout.groups:
        p = g.parallel
        master_ip = site.ips[g.first_node]
        cross_node = g.nodes > 1
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
            if p.dp > 1 or g.nodes > 1:
                # DP flags only where there is DP: on one node with DP1 they are no-ops [DP]
                flags += [
                    ("--data-parallel-size", str(p.dp)),
                    ("--data-parallel-size-local", str(p.dp_local)),
                ]
                if not master:
                    flags.append(("--data-parallel-start-rank", str(k * p.dp_local)))
                flags += [
                    ("--data-parallel-address", master_ip),
                    ("--data-parallel-rpc-port", str(lp.rpc_port)),
                ]
            flags += _engine_flags(req, recipe, role, p, cross_node=cross_node)
            argv = _argv(site.model_path, flags)
            env = _env(recipe, deviations, role, site, ip, cross_node=cross_node)
            name = _script_name(index, g, role)
            title = (
                f"{req.model.name} on {req.server.name}: {node_name(index)} ({g.name}, {role}, "
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
    return sv.host_port(masters[0].host, lp.api_port) if masters else ""


def _build_pd(
    req: PlanRequest,
    layout: LayoutResult,
    site: _Site,
    recipe: rc.Recipe,
    deviations: tuple[rc.Deviation, ...],
    nodes: list[NodeLaunch],
) -> str:
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
        cross_node = g.nodes > 1
        for k in range(g.nodes):
            index = g.first_node + k
            ip = site.ips[index]
            env = _env(recipe, deviations, side, site, ip, cross_node=cross_node)
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
                if p.dp > 1:
                    # external load balancing: one vllm serve per DP rank [DP]
                    flags += [
                        ("--data-parallel-size", str(p.dp)),
                        ("--data-parallel-rank", str(rank)),
                        ("--data-parallel-address", master_ip),
                        ("--data-parallel-rpc-port", str(rpc_ports[side])),
                    ]
                flags += _engine_flags(req, recipe, side, p, cross_node=cross_node)
                kv = _kv_transfer_config(recipe, side, engine_id, kv_port, prefill, decode)
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
                f"{req.model.name} on {req.server.name}: {node_name(index)} ({side}, "
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

    return sv.host_port(site.ips[prefill.first_node], lp.proxy_port)


# --------------------------------------------------------------------------- rendering (on demand)


def render_bundle(result: LaunchResult) -> dict[str, str]:
    """Render every file of the bundle from a :class:`LaunchResult` (path → text)."""
    from . import launch_files as lf  # the container, Kubernetes, benchmark and failover files

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
        if ctx.topology == TopologyKind.PRIMARY_STANDBY:
            primary = sv.host_port(masters[0].host, ctx.api_port)
            files["gateway/llm-healthcheck.sh"] = lf.healthcheck_script(ctx, primary, _script)
        for state, priority, peer in (("MASTER", 150, "the second gateway runs keepalived-backup.conf"),
                                      ("BACKUP", 100, "the first gateway runs keepalived-master.conf")):  # fmt: skip
            files[f"gateway/keepalived-{state.lower()}.conf"] = lf.keepalived_conf(
                state, priority, GATEWAY_NIC, GATEWAY_VIP, peer
            )
    services = [n for n in ("start-memcache-metaservice.sh", "start-proxy.sh") if n in files]
    files.update(lf.docker_scripts(ctx, nodes, _script, services))
    files.update(lf.k8s_manifests(ctx, nodes))
    # seats behind the entrypoint: the decode side of P/D, else the first (serving) cluster
    served = next((g for g in ctx.groups if g.role == "decode"), ctx.groups[0] if ctx.groups else None)
    seats = (served.dp if served else 1) * ctx.max_num_seqs
    files["benchmark.sh"] = lf.benchmark_script(ctx, result.entrypoint, seats, _script)
    files["monitoring/prometheus.yml"] = _prometheus(ctx, nodes)
    files["README.md"] = _readme(ctx, result, files)
    return files


def _prelude(ctx: BundleContext) -> str:
    """What the recipe does before the exports: unset proxies, source the CANN environment."""
    recipe = rc.for_context(ctx.recipe, ctx.ascend)
    lines: list[str] = []
    if recipe.unset:
        lines.append("# Requests between nodes must not go through an HTTP proxy (tutorial).")
        lines.append("unset " + " ".join(_quote(v) for v in recipe.unset))
    for path in recipe.sourced:
        # the tutorial's environment script, on the node (it may read unset variables)
        lines += ["set +u", "# shellcheck source=/dev/null", f"source {_quote(path)}", "set -u"]
    return "\n".join(lines) + ("\n" if lines else "")


def _path_prepends(ctx: BundleContext) -> str:
    recipe = rc.for_context(ctx.recipe, ctx.ascend)
    return "".join(
        f"export {var}={_quote(path)}${{{var}:+:${var}}}\n"
        for var, path in sorted(recipe.path_prepend.items())
    )


# Every engine of a node must run: the first to exit (for any reason) stops the others and fails the script.
MULTI_ENGINE_TAIL = """\
# A node serves only while all of its engines run: the first engine to exit stops the others,
# and the script exits non-zero so a supervisor (systemd, Kubernetes, an operator) sees the failure.
status=0
wait -n || status=$?
echo "an engine on this node exited (status $status); stopping the others" >&2
stop_engines
wait || true
if [ "$status" -eq 0 ]; then status=1; fi
exit "$status"
"""


def _node_script(ctx: BundleContext, node: NodeLaunch) -> str:
    pre = _prelude(ctx) + _path_prepends(ctx)
    if len(node.argv) == 1 and "=" not in node.argv[0][0]:
        body = pre + "exec " + _render_command(node.argv[0])
    else:
        # several engines on one node, each with its own devices
        lines = [
            "pids=()",
            'stop_engines() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; }',
            "trap 'stop_engines; exit 143' INT TERM",
        ]
        for a in node.argv:
            lines.append(_render_command(a[1:], prefix=f"{_quote(a[0])} ") + " &")
            lines.append('pids+=("$!")')
        body = pre + "\n".join(lines) + "\n" + MULTI_ENGINE_TAIL
    extra = (
        _file_exists_guard(MMC_LOCAL_CONF, "memcache local config")
        if node.role == "prefill" and ctx.ascend
        else ""
    )
    return _script(node.title, node.env, body, extra)


def _proxy_script(ctx: BundleContext, nodes: list[NodeLaunch], proxy_host: str) -> str:
    from . import launch_files as lf

    pre = [(n.host, port) for n in nodes if n.role == "prefill" for port in n.api_ports]
    dec = [(n.host, port) for n in nodes if n.role == "decode" for port in n.api_ports]
    argv = lf.proxy_argv(ctx, pre, dec)
    recipe = rc.for_context(ctx.recipe, ctx.ascend)
    if recipe.proxy == "vllm-router":
        body = (
            "# vLLM's router (github.com/vllm-project/router): P/D aware, round robin over both sides.\n"
            "if ! command -v vllm-router >/dev/null 2>&1; then\n"
            "  echo 'refusing to start: vllm-router is not installed (pip install vllm-router)' >&2\n"
            "  exit 2\n"
            "fi\n"
            f"exec {_join(tuple(argv))}\n"
        )
    else:
        body = (
            "# Requests go to a prefill engine first, then to a decode engine (MooncakeConnectorV1).\n"
            "# The proxy ships in the vLLM-Ascend image (examples/disaggregated_prefill_v1/).\n"
            f"if [ ! -f {_quote(argv[1])} ]; then\n"
            f"  echo {_quote('refusing to start: ' + argv[1] + ' is missing; run this inside the vLLM-Ascend image')} >&2\n"
            "  exit 2\n"
            "fi\n"
            f"exec {_join(tuple(argv))}\n"
        )
    return _script(f"P/D load-balancing proxy; run on {proxy_host} after every engine is up", {}, body)


# nginx: a directive tree rendered by one function.  A node is ("#", text) for a
# comment line, ("", ) for a blank line, (name, args) for a directive, (name,
# args, children) for a block, each optionally with a trailing comment.  Every
# name and argument must be a bare nginx word (no space, ';', '{', '}', '#',
# quote or control character), so no value can end a directive or open a block.
_NGINX_WORD = re.compile(r'[A-Za-z0-9_.:\[\]/$=@~^*+-]+|""', re.ASCII)


def _nginx_word(token: str) -> str:
    if not _NGINX_WORD.fullmatch(token):
        raise ValueError(f"not a bare nginx word: {token!r}")
    return token


def _nginx_render(nodes: list[tuple], depth: int = 0) -> list[str]:
    pad = "    " * depth
    out: list[str] = []
    for node in nodes:
        if node[0] == "#":
            out.append(pad + _comment(node[1]))
        elif node[0] == "":
            out.append("")
        else:
            name, args, *rest = node
            children = rest[0] if rest and isinstance(rest[0], list) else None
            trailing = rest[-1] if rest and isinstance(rest[-1], str) else ""
            words = " ".join(_nginx_word(t) for t in (name, *args))
            if children is None:
                out.append(pad + words + ";" + (f"  {_comment(trailing)}" if trailing else ""))
            else:
                out.append(pad + words + " {")
                out += _nginx_render(children, depth + 1)
                out.append(pad + "}")
    return out


def _upstream_host(node: NodeLaunch) -> str:
    """The node's address as an upstream; a stored plan's value outside the grammar becomes the
    node's placeholder (plans made before issue 13 were not validated)."""
    if sv.is_placeholder(node.host) or sv.node_address_error(node.host) is None:
        return node.host
    return f"__NODE{node.index}_IP__"


def _upstream_name(group: str) -> str:
    return _nginx_word(group.replace("-", "_"))


def _nginx(ctx: BundleContext, masters: list[NodeLaunch]) -> str:
    from . import launch_files as lf

    port = ctx.api_port
    listen = str(int(ctx.proxy_port))
    common: list[tuple] = [
        ("proxy_http_version", ["1.1"]),
        ("proxy_set_header", ["Connection", '""']),
        ("proxy_set_header", ["Host", "$host"]),
        ("proxy_buffering", ["off"], "stream tokens as they come"),
        ("proxy_read_timeout", ["3600s"], "long reasoning answers"),
        ("proxy_connect_timeout", ["5s"]),
    ]
    if ctx.topology == TopologyKind.PRIMARY_STANDBY:
        a, b = masters[0], masters[1]
        tree: list[tuple] = [
            ("#", f"Primary/standby gateway for {ctx.model_name}: {a.group} serves, {b.group} is the hot standby."),
            ("#", "Place inside the http {} block (e.g. /etc/nginx/conf.d/) on both gateway hosts; keepalived"),
            ("#", "(keepalived-master.conf / keepalived-backup.conf) moves the clients' virtual IP between them."),
            ("#", "Active check: llm-healthcheck.sh sends the primary a one-token completion every "
                  f"{lf.HEALTH_INTERVAL_S} s and, after {lf.HEALTH_FAILS} failures, marks the primary's server "
                  "line below 'down' and reloads nginx."),
            ("#", "Passive check: a refused connection, a timeout or a 502/503/504 is retried on the standby at"),
            ("#", "once, POSTs included (non_idempotent): vLLM answers 502/503/504 only when it did not serve the "
                  "request."),
            (
                "upstream",
                ["llm_primary_standby"],
                [
                    ("server", [sv.host_port(_upstream_host(a), port), "max_fails=2", "fail_timeout=10s"]),
                    ("server", [sv.host_port(_upstream_host(b), port), "backup"]),
                    ("keepalive", ["32"]),
                ],
            ),
            ("",),
            (
                "server",
                [],
                [
                    ("listen", [listen]),
                    ("location", ["=", "/health"], [("proxy_pass", ["http://llm_primary_standby/health"])]),
                    (
                        "location",
                        ["/"],
                        [
                            ("proxy_pass", ["http://llm_primary_standby"]),
                            (
                                "proxy_next_upstream",
                                ["error", "timeout", "http_502", "http_503", "http_504", "non_idempotent"],
                            ),
                            ("proxy_next_upstream_tries", ["2"]),
                            ("proxy_next_upstream_timeout", ["30s"]),
                            *common,
                        ],
                    ),
                ],
            ),
        ]  # fmt: skip
        return "\n".join(_nginx_render(tree)) + "\n"
    tree = [
        ("#", f"Tenant-isolation gateway for {ctx.model_name}: each tenant has its own listener (port) and"),
        ("#", "its own cluster. No request header chooses the cluster, so a client cannot reach another"),
        (
            "#",
            "tenant's cluster by sending one; give each tenant only its own port (firewall or API gateway).",
        ),
        ("#", "Place inside the http {} block (e.g. /etc/nginx/conf.d/)."),
        ("",),
    ]
    for m in masters:
        tree += [
            (
                "upstream",
                [_upstream_name(m.group)],
                [
                    ("server", [sv.host_port(_upstream_host(m), port), "max_fails=2", "fail_timeout=10s"]),
                    ("keepalive", ["32"]),
                ],
            ),
            ("",),
        ]
    for i, m in enumerate(masters):
        tree += [
            ("#", f"Tenant {i + 1}: {m.group} on port {int(ctx.proxy_port) + i}."),
            (
                "server",
                [],
                [
                    ("listen", [str(int(ctx.proxy_port) + i)]),
                    ("location", ["/"], [("proxy_pass", [f"http://{_upstream_name(m.group)}"]), *common]),
                ],
            ),
            ("",),
        ]
    return "\n".join(_nginx_render(tree[:-1])) + "\n"


def _prometheus(ctx: BundleContext, nodes: list[NodeLaunch]) -> str:
    """The scrape configuration: ``yaml.safe_dump`` of a dict, under comment lines made safe."""
    stack = "ascend" if ctx.ascend else "cuda"
    exporter = "npu-exporter" if ctx.ascend else "dcgm-exporter"
    header = [
        _comment(f"Prometheus scrape configuration for {ctx.model_name} on {ctx.server_name}."),
        _comment("vLLM serves /metrics on its API port (headless workers report through their master)."),
        _comment(
            f"node_exporter ({NODE_EXPORTER_PORT}) and {exporter} ({DEVICE_EXPORTER_PORT[stack]}) use their "
            "default ports; change them here if the site differs."
        ),
    ]
    vllm_targets = [
        {
            "targets": [sv.host_port(_upstream_host(n), port)],
            "labels": {"group": n.group, "role": n.role, "node": str(n.index)},
        }
        for n in nodes
        for port in n.api_ports
    ]
    config: dict[str, Any] = {
        "global": {"scrape_interval": "15s"},
        "scrape_configs": [{"job_name": "vllm", "metrics_path": "/metrics", "static_configs": vllm_targets}],
    }
    for job, port in (("node", NODE_EXPORTER_PORT), (exporter, DEVICE_EXPORTER_PORT[stack])):
        config["scrape_configs"].append(
            {
                "job_name": job,
                "static_configs": [
                    {
                        "targets": [sv.host_port(_upstream_host(n), port)],
                        "labels": {"group": n.group, "node": str(n.index)},
                    }
                    for n in nodes
                ],
            }
        )
    body = yaml.safe_dump(config, sort_keys=False, default_flow_style=False, allow_unicode=False, width=1000)
    return "\n".join(header) + "\n" + body


def _md(text: str) -> str:
    """Free text on one Markdown line: no control characters, no table-cell breaks."""
    return sv.one_line(text).replace("|", "\\|")


def _code(text: str) -> str:
    """Inline code that no value can close early (backticks become ')."""
    return "`" + _md(text).replace("`", "'") + "`"


def _readme(ctx: BundleContext, result: LaunchResult, files: Mapping[str, str]) -> str:
    nodes = list(result.nodes)
    kind = ctx.topology
    entrypoint = result.entrypoint
    out = [
        "# " + _md(f"Launch bundle: {ctx.model_name} on {ctx.node_count} × {ctx.server_name}"),
        "",
        "启动配置包 — generated by the configurator from the quoted plan. Regenerate it after any change to",
        "the plan instead of editing the scripts; only replace the `__…__` placeholders with site values.",
        "",
        f"- Topology: {kind.value}; groups: "
        + _md(", ".join(f"{g.name} ({g.role}, {g.nodes} nodes, TP{g.tp} DP{g.dp})" for g in ctx.groups)),
        f"- Model path on every node: {_code(ctx.model_path)}; data NIC: {_code(ctx.nic)}",
        f"- Container image: {_code(ctx.image)} (`docker/` starts it on each node with the tutorial's devices)",
        f"- Clients connect to: {_code(entrypoint)}",
        "",
    ]
    recipe = rc.for_context(ctx.recipe, ctx.ascend)
    out += [
        "## Recipe / 部署配方",
        "",
        f"- {_md(recipe.title)} ({_code(recipe.key)}), for {_md(recipe.versions)}",
        f"- Source: {_md(recipe.source)}",
        *[f"- Note: {_md(n)}" for n in recipe.notes],
        "",
        "Every environment variable and `vllm serve` flag comes from this recipe or from the plan (sizes,",
        "ports, parallelism, the model's parsers). Deliberate differences from the recipe:",
        "",
    ]
    if ctx.deviations:
        out += ["| setting | in this bundle | why |", "|---|---|---|"]
        for d in ctx.deviations:
            shown = "left out" if d.value is None else _code(_README_TOKENS.get(d.value, d.value))
            where = (
                ""
                if set(d.roles) >= {"master", "worker", "prefill", "decode"}
                else f" ({', '.join(d.roles)})"
            )
            out.append(f"| {_code(d.name)}{_md(where)} | {shown} | {_md(d.reason)} |")
    else:
        out.append("None.")
    out.append("")
    gateway_placeholders = [p for p in (GATEWAY_VIP, GATEWAY_NIC) if any(p in t for t in files.values())]
    if result.placeholders or gateway_placeholders:
        out += [
            "## Placeholders to replace first / 需先替换的占位符",
            "",
            "Every script checks itself and refuses to start (exit code 2) while one of these remains:",
            "",
            *[f"- {_code(p)}" for p in result.placeholders],
            *[f"- {_code(p)} (in `gateway/keepalived-*.conf`)" for p in gateway_placeholders],
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
        out.append(f"| {_code(n.script)} | {node_name(n.index)} ({_md(n.host)}) | {_md(n.group)}: {what} |")
    extra = {
        "start-memcache-metaservice.sh": "memcache MetaService for the prefill KV pool",
        "start-proxy.sh": "load-balancing proxy listing every prefill and decode endpoint",
        "gateway/nginx.conf": "nginx gateway in front of the two clusters",
        "gateway/llm-healthcheck.sh": "active health check: a one-token completion to the primary every few seconds",
        "gateway/keepalived-master.conf": "VRRP: the clients' virtual IP on the first gateway",
        "gateway/keepalived-backup.conf": "VRRP: takes the virtual IP over if the first gateway's nginx stops",
        "benchmark.sh": "load test with the quote's workload (vllm bench serve); writes result JSON to import",
        "monitoring/prometheus.yml": "Prometheus scrape targets (vLLM, node and accelerator exporters)",
    }
    proxy_host = nodes[0].host if nodes else ""
    for name, what in extra.items():
        if name in files or name == "monitoring/prometheus.yml":
            where = {
                "start-memcache-metaservice.sh": f"{node_name(nodes[0].index)} ({_md(proxy_host)})"
                if nodes
                else "",
                "start-proxy.sh": f"{node_name(nodes[0].index)} ({_md(proxy_host)})" if nodes else "",
                "gateway/nginx.conf": "both gateway hosts",
                "gateway/llm-healthcheck.sh": "both gateway hosts (as a service)",
                "gateway/keepalived-master.conf": "the first gateway host",
                "gateway/keepalived-backup.conf": "the second gateway host",
                "benchmark.sh": "any host that reaches the endpoint",
                "monitoring/prometheus.yml": "the monitoring host",
            }[name]
            out.append(f"| `{name}` | {where} | {what} |")
    for name in ("start-memcache-metaservice.sh", "start-proxy.sh"):
        if f"docker/{name}" in files:
            out.append(
                f"| {_code('docker/' + name)} | {node_name(nodes[0].index)} ({_md(nodes[0].host)}) | runs "
                f"{_code(name)} inside the recipe's container |"
            )
    for n in nodes:
        if f"docker/{n.script}" in files:
            out.append(
                f"| {_code('docker/' + n.script)} | {node_name(n.index)} ({_md(n.host)}) | runs {_code(n.script)} "
                "inside the recipe's container |"
            )
    k8s = sorted(f for f in files if f.startswith("k8s/"))
    for f in k8s:
        what = {
            "k8s/pd-proxy.yaml": "Deployment and Service of the P/D proxy",
            "k8s/memcache-metaservice.yaml": "Deployment of the memcache MetaService (apply first)",
        }.get(f, "LeaderWorkerSet and Service for the same deployment")
        out.append(f"| {_code(f)} | `kubectl apply -f` | {what} |")
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
                f"{_md(g.name)}: start {_code(master.script)} on {node_name(master.index)} first, then the worker scripts "
                "of the group as soon as possible (the master waits up to 2 h for them)."
            )
        steps.append(f"Wait for `curl http://<master>:{ctx.api_port}/health` to return 200 on each master.")
        if "gateway/nginx.conf" in files:
            steps.append(
                f"On both gateway hosts install `gateway/nginx.conf` as `{GATEWAY_CONF}`, reload nginx "
                "(`nginx -t && nginx -s reload`) and start keepalived with its config."
            )
        if "gateway/llm-healthcheck.sh" in files:
            steps.append(
                "Run `gateway/llm-healthcheck.sh` on both gateway hosts (e.g. as a systemd service)."
            )
    out += [f"{i}. {s}" for i, s in enumerate(steps, 1)]
    out += [
        "",
        "## Check it works / 验证",
        "",
        "```bash",
        "curl " + _quote(f"http://{sv.one_line(entrypoint)}/v1/models"),
        "```",
        "",
        "## Load test / 压测",
        "",
        "`benchmark.sh` runs `vllm bench serve` against the endpoint with the quote's input/output lengths",
        "over a concurrency sweep and saves vLLM's result JSON per run; import those files into the quote.",
        "",
        "## Containers and Kubernetes / 容器与 Kubernetes",
        "",
        "`docker/<node script>` starts the recipe's image on that node with the tutorial's device mounts and",
        "runs the node script inside it. `k8s/` holds the same deployment as a LeaderWorkerSet per group",
        "(needs the LWS controller and the accelerator device plugin) with a Service for the API.",
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


def _port_clashes(topology: TopologySpec, lp: LaunchSpec) -> list[tuple[str, str, int]]:
    """Every pair of bundle ports that would collide on one host: (field, other, port).

    Each node serves ``api_port`` (and, with several engines per node in P/D, ``api_port + 1`` …); the DP
    RPC port is ``rpc_port`` (``rpc_port + 1`` for the decode side); the P/D proxy listens on ``proxy_port``
    on the prefill master, beside that node's engines; the two-cluster gateway listens on ``proxy_port``
    (and ``proxy_port + 1`` for the second tenant).
    """
    disaggregated = topology.kind == TopologyKind.DISAGGREGATED
    engines = 1
    if disaggregated:
        sides = [topology.parallel, topology.decode_parallel or topology.parallel]
        engines = max(p.dp_local for p in sides)
    ports: list[tuple[str, int]] = [("launch.api_port", lp.api_port)]
    ports += [
        (f"launch.api_port + {i} (engine {i + 1} on a node)", lp.api_port + i) for i in range(1, engines)
    ]
    ports.append(("launch.rpc_port", lp.rpc_port))
    if disaggregated:
        ports.append(("launch.rpc_port + 1 (decode side)", lp.rpc_port + 1))
    if disaggregated or topology.kind in (TopologyKind.PRIMARY_STANDBY, TopologyKind.TENANT_PAIR):
        ports.append(("launch.proxy_port", lp.proxy_port))
    if topology.kind == TopologyKind.TENANT_PAIR:
        ports.append(("launch.proxy_port + 1 (second tenant)", lp.proxy_port + 1))
    seen: dict[int, str] = {}
    out = []
    for name, port in ports:
        if port in seen:
            out.append((name, seen[port], port))
        seen.setdefault(port, name)
    return out


def launch_port_conflicts(topology: TopologySpec, lp: LaunchSpec) -> dict[str, list[str]]:
    """Port collisions as request errors (field → messages): the request boundary answers them with a 400."""
    errors: dict[str, list[str]] = {}
    for name, other, port in _port_clashes(topology, lp):
        field_name = name.split(" ")[0]
        errors.setdefault(field_name, []).append(
            f"{name} would be {port}, the same port as {other}; choose ports that do not overlap."
        )
    return errors


def _launch_checks(req: PlanRequest, layout: LayoutResult, site: _Site) -> list[Check]:
    lp = req.launch
    out: list[Check] = []
    n = layout.nodes or req.topology.nodes
    for field_name, problem in site.rejected:
        out.append(
            Check(
                "launch.site_value_invalid",
                Severity.ERROR,
                AREA,
                f"{field_name} {problem} The bundle holds a placeholder instead.",
                f"{field_name} 的取值不合规（只允许地址、网卡名、路径或镜像名的合法字符），启动包中改用占位符。",
                field=field_name.split("[")[0],
            )
        )
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
    given = [ip for ip in site.ips if not sv.is_placeholder(ip)]
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
        if sv.ip_literal(ip) is None:
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
    for name, other, port in _port_clashes(req.topology, lp):
        out.append(
            Check(
                "launch.port_conflict",
                Severity.ERROR,
                AREA,
                f"{name} and {other} are both {port}.",
                f"{name} 与 {other} 端口同为 {port}，存在冲突。",
                field=name.split(" ")[0],
            )
        )
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
                "P/D on CUDA uses vLLM's NixlConnector with vLLM's router, as the vLLM recipes do; no recipe "
                "validates this model on this GPU with P/D, so run benchmark.sh before go-live.",
                "CUDA 平台的 PD 分离按 vLLM 部署配方采用 NixlConnector 与 vLLM Router；该模型与 GPU 的 PD 组合尚无配方验证，上线前须用 benchmark.sh 压测。",
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
