"""The per-node engine commands: site values, ``vllm serve`` flags, environment and node scripts.

Site values (node IPs, NIC, model path) come from ``req.launch``; a missing one becomes a visible
placeholder such as ``__NODE3_IP__`` and every script refuses to start until it is replaced.  A value
that fails the grammar of ``site_values`` is never written: it becomes a placeholder and an error check.
Flags and environment follow the plan's recipe (``engine/recipes.py``) plus the plan's own sizes; JSON
arguments are built with ``json.dumps`` and quoted with ``shlex.quote`` (docs/domain.md §5, §11).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .. import recipes as rc
from .. import site_values as sv
from ..names import node_name
from ..placement import serving_flags_for_checkpoint
from ..speculative import role_request, role_serving, speculative_config
from ..types import (
    BundleContext,
    GroupLayout,
    LayoutResult,
    NodeLaunch,
    ParallelSpec,
    PlanRequest,
    TopologyKind,
)
from .shell import file_exists_guard, join_argv, quote, render_command, script, template

PLACEHOLDER_MODEL_PATH = "__MODEL_PATH__"
PLACEHOLDER_NIC = "__DATA_NIC__"
PLACEHOLDER_IMAGE = "__IMAGE__"
MEMCACHE_DIR = "/etc/memcache"  # the memcache KV pool's configs, copied from memcache_hybrid/config/
MMC_LOCAL_CONF = f"{MEMCACHE_DIR}/mmc-local.conf"
MMC_META_CONF = f"{MEMCACHE_DIR}/mmc-meta.conf"
KV_PORT_STEP = 100  # kv_port offset between engines on one node (each takes kv_port … kv_port + chips)
FAILOVER_HCCL_EXEC_TIMEOUT_S = 204  # the K3 tutorial's P/D value; HCCL's default is ≈30 min


@dataclass(frozen=True)
class Site:
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


def resolve_site(req: PlanRequest, layout: LayoutResult) -> Site:
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
    return Site(
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


# ``json.dumps(value, separators=(",", ":"))`` makes this encoder on every call; one kept does the same.
_JSON = json.JSONEncoder(separators=(",", ":"), sort_keys=False)


def _json(value: Any) -> str:
    return _JSON.encode(value)


def _engine_flags(
    req: PlanRequest, recipe: rc.Recipe, role: str, p: ParallelSpec, *, cross_node: bool
) -> list[tuple[str, str | None]]:
    """The plan's sizes and the model's parsers, then the recipe's flags for ``role`` (after the parallel flags).

    Nothing platform-specific is decided here: graph mode, eager prefill, multimodal and kernel settings all
    come from the recipe (``engine/recipes.py``), so CUDA engines never inherit an Ascend choice.
    """
    req = role_request(req, role)  # xPyD: the role's own max_num_seqs, token budget and draft
    s, m = req.serving, req.model
    flags: list[tuple[str, str | None]] = []
    if p.expert_parallel and m.is_moe:
        flags.append(("--enable-expert-parallel", None))
    flags += list(_plan_sizes(req).items())
    if spec := speculative_config(req, role):
        flags.append(
            ("--speculative-config", spec)
        )  # serialised from the plan's draft (engine/speculative.py)
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
    flags += decode_graph_flags(recipe.flags_for(role), req.decode_graphs, role)
    if cross_node and p.expert_parallel and m.is_moe:
        flags += list(recipe.cross_node_flags)
    return flags


def decode_graph_flags(
    flags: list[tuple[str, str | None]], mode: str, role: str
) -> list[tuple[str, str | None]]:
    """The recipe's flags with its decode graph setting made to say what the plan costs
    (``PlanRequest.decode_graphs``): ``"full"`` keeps the recipe's; ``"eager"`` drops the recipe's CUDA-graph
    keys from ``--compilation-config`` and passes ``--enforce-eager``; ``"piecewise"`` sets
    ``cudagraph_mode`` PIECEWISE.  P/D prefill engines keep the recipe's (eager) setting.  The JSON is
    parsed and re-serialised, never edited as text.  The recipe's Ascend graph options in
    ``--additional-config`` (``enable_npugraph_ex``) stay: vLLM-Ascend switches them off itself under
    cudagraph_mode NONE or PIECEWISE (releases/v0.26.0rc ``vllm_ascend/platform.py``
    check_and_update_config)."""
    if mode == "full" or role == "prefill":
        return list(flags)
    out: list[tuple[str, str | None]] = []
    seen = False
    for name, value in flags:
        if name == "--compilation-config" and value is not None:
            seen = True
            config = dict(json.loads(value))
            if mode == "eager":
                config.pop("cudagraph_mode", None)
                config.pop("cudagraph_capture_sizes", None)
            else:
                config["cudagraph_mode"] = "PIECEWISE"
            if config:
                out.append((name, _json(config)))
            continue
        if name == "--enforce-eager" and mode == "piecewise":
            continue
        out.append((name, value))
    if mode == "eager" and ("--enforce-eager", None) not in out:
        out.append(("--enforce-eager", None))
    if mode == "piecewise" and not seen:
        out.append(("--compilation-config", _json({"cudagraph_mode": "PIECEWISE"})))
    return out


GRAPH_MODE_REASONS = {
    "eager": (
        "--enforce-eager",
        "the plan is costed in eager mode (no graph capture: every decode layer's operators launched from "
        "the host, slower, no graph memory); the recipe's decode graphs are dropped",
    ),
    "piecewise": (
        "--compilation-config",
        "the plan is costed with piecewise decode graphs (every layer's attention launched from the host "
        "between graph pieces); the recipe captures full decode graphs",
    ),
}


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


def _fill(value: str, ip: str, site: Site) -> str:
    """A recipe value with the node's address, data NIC or device list put in for its placeholder."""
    if value == rc.IP:
        return ip
    if value == rc.NIC:
        return site.nic
    if value == rc.DEVICES:
        return ",".join(str(i) for i in range(site.devices_per_node))
    return value


def _env(
    recipe: rc.Recipe,
    deviations: tuple[rc.Deviation, ...],
    role: str,
    site: Site,
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


# Stands for the node's address while a role's environment is worked out once for all its nodes (_node_envs).
_NODE_IP = "\x00node ip\x00"


def _node_envs(
    recipe: rc.Recipe,
    deviations: tuple[rc.Deviation, ...],
    role: str,
    site: Site,
    *,
    cross_node: bool,
) -> Callable[[str], dict[str, str]]:
    """:func:`_env` of each node of ``role`` by its address: worked out once, the node's address put
    where the recipe names it (sixteen nodes of a side ask for the same environment)."""
    shared = _env(recipe, deviations, role, site, _NODE_IP, cross_node=cross_node)
    if not any(v is _NODE_IP for v in shared.values()):
        return lambda ip: dict(shared)
    return lambda ip: {k: ip if v is _NODE_IP else v for k, v in shared.items()}


def _plan_sizes(req: PlanRequest) -> dict[str, str]:
    """The plan-sized flags as :func:`_engine_flags` writes them."""
    s = req.serving
    return {
        "--max-model-len": str(s.max_model_len),
        "--max-num-seqs": str(s.max_num_seqs),
        "--max-num-batched-tokens": str(s.max_num_batched_tokens),
        "--gpu-memory-utilization": f"{s.gpu_memory_utilization:g}",
    }


def _speculative_roles(req: PlanRequest) -> tuple[str, ...]:
    """The launch roles whose engines start with a --speculative-config."""
    if req.topology.kind == TopologyKind.DISAGGREGATED:
        return tuple(r for r in ("prefill", "decode") if role_serving(req.serving, r).speculative.on)
    return ("master", "worker") if req.serving.speculative.on else ()


def plan_deviations(
    req: PlanRequest,
    layout: LayoutResult,
    recipe: rc.Recipe,
    max_num_seqs: Mapping[tuple[str, ...], int] | None = None,
) -> tuple[rc.Deviation, ...]:
    """The recipe's own deviations plus the ones this plan adds, each with its reason.  ``max_num_seqs``:
    the roles whose engines launch another ``--max-num-seqs`` than ``serving.max_num_seqs`` (the design
    point's, ``build.launched_max_num_seqs``)."""
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
    if req.decode_graphs in GRAPH_MODE_REASONS:
        name, reason = GRAPH_MODE_REASONS[req.decode_graphs]
        roles = ("decode",) if req.topology.kind == TopologyKind.DISAGGREGATED else ("master", "worker")
        # the value as the scripts pass it (decode_graph_flags over the recipe's flags for that role)
        launched = dict(decode_graph_flags(recipe.flags_for(roles[0]), req.decode_graphs, roles[0]))
        value = launched.get(name) or ""
        out.append(rc.Deviation("flag", name, value, reason, roles=roles))
    spec_roles = _speculative_roles(req)
    if spec_roles:
        out = [d for d in out if d.name != "--speculative-config"]
        role = spec_roles[0]
        out.append(
            rc.Deviation(
                "flag",
                "--speculative-config",
                speculative_config(role_request(req, role), role),
                "speculative decoding with the catalog's draft, as the plan's memory and step time count it",
                roles=spec_roles,
            )
        )
    sizes = _plan_sizes(req)
    seqs_by_roles = dict(max_num_seqs or {})
    plan_value = "the plan's value (sized by its memory and performance estimate)"
    design_value = (
        "the design point's sequences per DP rank (the load the plan sells within its latency targets; the "
        "engine queues the rest)"
    )
    for flag, theirs in recipe.validated.items():
        ours = sizes.get(flag)
        if ours is None:
            continue
        values: list[tuple[tuple[str, ...], str, str]] = [(rc.ROLES, ours, plan_value)]
        if flag == "--max-num-seqs" and seqs_by_roles:
            present = (
                ("prefill", "decode")
                if req.topology.kind == TopologyKind.DISAGGREGATED
                else ("master", "worker")
            )
            others = tuple(r for r in present if not any(r in rs for rs in seqs_by_roles))
            values = [(rs, str(n), design_value) for rs, n in seqs_by_roles.items()]
            setting = (
                "the plan's max_num_seqs (the sequences of the workload's requests one DP rank's KV cache "
                "holds, or the request's own)"
            )
            values += [(others, ours, setting)] if others else []
        for where, launched_value, why in values:
            if float(launched_value) == float(theirs):
                continue
            reason = f"{why} instead of the source's {theirs}"
            out.append(rc.Deviation("flag", flag, launched_value, reason, roles=where))
    out += _source_differences(req, layout, recipe)
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


def _layout_text(g: GroupLayout) -> str:
    p = g.parallel
    return f"TP{p.tp} × DP{p.dp} over {g.nodes} node{'s' if g.nodes > 1 else ''}" + (
        ", expert parallel" if p.expert_parallel else ""
    )


def _source_differences(req: PlanRequest, layout: LayoutResult, recipe: rc.Recipe) -> list[rc.Deviation]:
    """Where the plan departs from what the recipe's source runs beyond its flags and environment: each P/D
    side's layout, the KV cache dtype, a model tutorial the generic recipe does not follow."""
    out: list[rc.Deviation] = []
    for g in layout.groups:
        want = recipe.pd_layouts.get(g.role)
        if want is None:
            continue
        tp, one_node, described = want
        if g.parallel.tp != tp or (one_node and g.nodes > 1 and g.parallel.dp > 1):
            out.append(
                rc.Deviation(
                    "other",
                    f"{g.role} layout",
                    _layout_text(g),
                    f"the plan's layout, the one its memory and performance estimates cost; the recipe "
                    f"runs {described}, which this plan has not costed",
                    roles=(g.role,),
                )
            )
    if recipe.dp_layout is not None:
        tp, dp_local, described = recipe.dp_layout
        for g in layout.groups:
            if (g.parallel.tp, g.parallel.dp_local) != (tp, dp_local):
                out.append(
                    rc.Deviation(
                        "other",
                        f"{g.name} layout",
                        _layout_text(g),
                        f"the plan's layout, the one its memory and performance estimates cost; the "
                        f"tutorial runs {described}",
                    )
                )
    dtype = req.serving.kv_cache_dtype or "auto"
    if recipe.kv_cache_dtype and dtype != recipe.kv_cache_dtype:
        out.append(
            rc.Deviation(
                "flag",
                "--kv-cache-dtype",
                None if dtype == "auto" else dtype,
                f"the plan sizes the KV cache in the model's dtype (serving.kv_cache_dtype {dtype}); the recipe "
                f"runs --kv-cache-dtype {recipe.kv_cache_dtype}: set serving.kv_cache_dtype to "
                f"{recipe.kv_cache_dtype} to follow it (the plan then sizes that cache)",
            )
        )
    related = recipe.related_tutorials.get(rc.family_of(req.model))
    if related is not None:
        out.append(rc.Deviation("other", "model tutorial", related[0], related[1]))
    return out


def node_command(node: NodeLaunch) -> str:
    """The vllm serve command(s) of a node as one shell line per engine."""
    return "\n".join(join_argv(a) for a in node.argv)


def _rank_text(k: int, dp_local: int) -> str:
    first = k * dp_local
    return f"DP rank {first}" if dp_local == 1 else f"DP ranks {first}–{first + dp_local - 1}"


def _script_name(index: int, group: GroupLayout, role: str) -> str:
    return f"node-{index:02d}-{group.name}-{role}.sh"


def build_aggregated(
    req: PlanRequest,
    layout: LayoutResult,
    site: Site,
    recipe: rc.Recipe,
    deviations: tuple[rc.Deviation, ...],
    nodes: list[NodeLaunch],
) -> str:
    lp = req.launch
    for g in layout.groups:
        p = g.parallel
        master_ip = site.ips[g.first_node]
        cross_node = g.nodes > 1
        role_flags: dict[str, list[tuple[str, str | None]]] = {}  # the master's and the workers', once each
        role_envs: dict[str, Callable[[str], dict[str, str]]] = {}
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
            if role not in role_flags:
                role_flags[role] = _engine_flags(req, recipe, role, p, cross_node=cross_node)
            flags += role_flags[role]
            argv = _argv(site.model_path, flags)
            if role not in role_envs:
                role_envs[role] = _node_envs(recipe, deviations, role, site, cross_node=cross_node)
            env = role_envs[role](ip)
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


def build_pd(
    req: PlanRequest,
    layout: LayoutResult,
    site: Site,
    recipe: rc.Recipe,
    deviations: tuple[rc.Deviation, ...],
    nodes: list[NodeLaunch],
    decode_req: PlanRequest | None = None,
) -> str:
    """``decode_req``: the request the decode engines launch (the serving settings with their
    ``--max-num-seqs``, ``build.launched_max_num_seqs``); the prefill engines launch ``req``'s."""
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
        # What every engine of the side shares, worked out once per side (sixteen nodes ask for it).
        side_req = decode_req if side == "decode" and decode_req is not None else req
        side_flags = _engine_flags(side_req, recipe, side, p, cross_node=cross_node)
        side_words = _argv("", side_flags)[3:]  # the side's flags as words, after each engine's own
        model_env = rc.model_env(req.model, recipe.connector)
        node_env = _node_envs(recipe, deviations, side, site, cross_node=cross_node)
        for k in range(g.nodes):
            index = g.first_node + k
            ip = site.ips[index]
            env = node_env(ip)
            env.update(model_env)
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
                kv = _kv_transfer_config(recipe, side, engine_id, kv_port, prefill, decode)
                # the engine's own flags, the side's, then its KV connector: _argv of them in that order
                argv = (*_argv(site.model_path, flags), *side_words, "--kv-transfer-config", _json(kv))
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


def _prelude(ctx: BundleContext) -> str:
    """What the recipe does before the exports: unset proxies, source the CANN environment."""
    recipe = rc.for_context(ctx.recipe, ctx.ascend)
    lines: list[str] = []
    if recipe.unset:
        lines.append("# Requests between nodes must not go through an HTTP proxy (tutorial).")
        lines.append("unset " + " ".join(quote(v) for v in recipe.unset))
    for path in recipe.sourced:
        # the tutorial's environment script, on the node (it may read unset variables)
        lines += ["set +u", "# shellcheck source=/dev/null", f"source {quote(path)}", "set -u"]
    return "\n".join(lines) + ("\n" if lines else "")


def _path_prepends(ctx: BundleContext) -> str:
    recipe = rc.for_context(ctx.recipe, ctx.ascend)
    return "".join(
        f"export {var}={quote(path)}${{{var}:+:${var}}}\n"
        for var, path in sorted(recipe.path_prepend.items())
    )


# Every engine of a node must run: the first to exit (for any reason) stops the others and fails the script.
MULTI_ENGINE_TAIL = template("multi-engine-tail.sh")

# What a LeaderWorkerSet pod computes where a node script holds the node's own value.  The LWS controller
# gives every container LWS_LEADER_ADDRESS (``<lws>-<group>.<subdomain>.<namespace>``) and
# LWS_WORKER_INDEX (0 for the leader) (kubernetes-sigs/lws pkg/utils/pod/pod_utils.go, AddLWSVariables).
LEADER_ADDRESS = '"$LWS_LEADER_ADDRESS"'
_ENGINE_ID_HOLE = "@@ENGINE_ID@@"


@dataclass(frozen=True)
class PodTerms:
    """How one pod template of a group computes its node's rank and engine ids from LWS_WORKER_INDEX.

    ``ranks_per_pod``: DP ranks per node (a node's first rank is ``worker index × ranks_per_pod``);
    ``engine_base``: P/D only, the engine id of the group leader's first engine (engine ids are numbered
    ``node index × engines + engine``, as :func:`build_pd` numbers them), ``None`` when engines carry none.
    """

    ranks_per_pod: int
    engines: int = 1
    engine_base: int | None = None


def _with_hole(text: str, expr: str) -> str:
    """``text`` quoted, with its one :data:`_ENGINE_ID_HOLE` replaced by the double-quoted ``expr``."""
    before, after = text.split(_ENGINE_ID_HOLE)
    return (quote(before) if before else "") + expr + (quote(after) if after else "")


def engine_words(argv: tuple[str, ...], pod: PodTerms | None = None, engine: int = 0) -> list[str]:
    """The shell words of one engine command.  On a node: every word quoted.  In a pod: the DP address,
    the DP (start) rank and the KV connector's engine id become expansions of the LWS variables, in
    double quotes so the shell computes them when the pod starts; the device-list prefix is left to the
    device plugin, which gives each container its own accelerators.

    The Mooncake connector keys a remote engine's KV by its engine id and port (vllm-ascend
    releases/v0.23.0 vllm_ascend/distributed/kv_transfer/kv_p2p/mooncake_connector.py:
    ``kv_caches_base_addr[remote_engine_id][remote_handshake_port]``), so every engine needs its own id.
    """
    if pod is None:
        return [quote(w) for w in argv]
    words: list[str] = []
    skip_prefix = "=" in argv[0] and not argv[0].startswith("-")
    for i, word in enumerate(argv):
        flag = argv[i - 1] if i else ""
        if i == 0 and skip_prefix:
            continue
        if flag == "--data-parallel-address":
            words.append(LEADER_ADDRESS)
        elif flag == "--data-parallel-start-rank":
            words.append(f'"$((LWS_WORKER_INDEX * {pod.ranks_per_pod}))"')
        elif flag == "--data-parallel-rank":
            words.append(f'"$((LWS_WORKER_INDEX * {pod.ranks_per_pod} + {engine}))"')
        elif flag == "--kv-transfer-config" and pod.engine_base is not None:
            cfg = json.loads(word)
            cfg["engine_id"] = _ENGINE_ID_HOLE
            expr = f'"$(({pod.engine_base} + LWS_WORKER_INDEX * {pod.engines} + {engine}))"'
            words.append(_with_hole(_json(cfg), expr))
        else:
            words.append(quote(word))
    return words


def _node_guard(ctx: BundleContext, node: NodeLaunch) -> str:
    return (
        file_exists_guard(MMC_LOCAL_CONF, "memcache local config")
        if node.role == "prefill" and ctx.ascend
        else ""
    )


def node_program(ctx: BundleContext, node: NodeLaunch, pod: PodTerms | None = None, engine: int = 0) -> str:
    """What a node runs after its environment: the recipe's shell steps (proxies unset, CANN and custom-op
    environments sourced, library paths), then its engine(s).  The node script (bare metal; the docker
    scripts run the node script itself) and every Kubernetes container run this same text: a pod's
    container runs engine ``engine`` with the LWS expressions of :func:`engine_words`.
    """
    pre = _prelude(ctx) + _path_prepends(ctx)
    if pod is not None:
        return pre + "exec " + " ".join(engine_words(node.argv[engine], pod, engine)) + "\n"
    if len(node.argv) == 1 and "=" not in node.argv[0][0]:
        return pre + "exec " + render_command(node.argv[0])
    # several engines on one node, each with its own devices
    lines = [
        "pids=()",
        'stop_engines() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; }',
        "trap 'stop_engines; exit 143' INT TERM",
    ]
    for a in node.argv:
        lines.append(render_command(a[1:], prefix=f"{quote(a[0])} ") + " &")
        lines.append('pids+=("$!")')
    return pre + "\n".join(lines) + "\n" + MULTI_ENGINE_TAIL


def pod_program(ctx: BundleContext, node: NodeLaunch, pod: PodTerms, engine: int = 0) -> str:
    """A container's ``bash -c`` text: the node script's checks, then :func:`node_program` for one engine
    (its environment is the node script's, set by Kubernetes: ``containers``)."""
    return "set -euo pipefail\n" + _node_guard(ctx, node) + node_program(ctx, node, pod, engine)


def node_script(ctx: BundleContext, node: NodeLaunch) -> str:
    return script(node.title, node.env, node_program(ctx, node), _node_guard(ctx, node))


# The memcache MetaService the prefill KV pool needs ([A3-PD] §5.1.2.1): one program for the node
# script and the Kubernetes sidecar.
METASERVICE_ENV = {"MMC_META_CONFIG_PATH": MMC_META_CONF}
METASERVICE_GUARD = file_exists_guard(MMC_META_CONF, "memcache MetaService config")
METASERVICE_BODY = "exec python -c " + quote("from memcache_hybrid import MetaService; MetaService.main()")


def upstream_host(node: NodeLaunch) -> str:
    """The node's address as an upstream; a stored plan's value outside the grammar becomes the
    node's placeholder (plans made before issue 13 were not validated)."""
    if sv.is_placeholder(node.host) or sv.node_address_error(node.host) is None:
        return node.host
    return f"__NODE{node.index}_IP__"
