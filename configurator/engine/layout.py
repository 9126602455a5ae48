"""Topology → serving groups, and the checks vLLM would fail on at start-up.

``resolve_layout()`` turns a :class:`TopologySpec` into one :class:`GroupLayout`
per serving group:

* single: one group ``cluster`` (role ``serve``);
* primary_standby: ``cluster-a`` (``serve``) + ``cluster-b`` (``standby``), nodes ÷ 2 each;
* tenant_pair: ``cluster-a`` + ``cluster-b`` (both ``tenant``), nodes ÷ 2 each;
* disaggregated (xPyD): ``prefill`` with ``parallel`` and ``decode`` with
  ``decode_parallel`` (``parallel`` when that is ``None``).

``propose_layout()`` is the "auto" mode: TP across the devices of one node,
DP over the rest, expert parallelism on for MoE models (docs/domain.md §4).
"""

from __future__ import annotations

from typing import Any

from .checks import raise_
from .explain import plural, public, sentence_start, typed
from .figures import FigureBook
from .types import (
    Check,
    GroupLayout,
    LayoutResult,
    ParallelSpec,
    PlanRequest,
    ServerSpec,
    TopologyKind,
    TopologySpec,
)
from .vocabulary import group_in_text

_PAIR_KINDS = (TopologyKind.PRIMARY_STANDBY, TopologyKind.TENANT_PAIR)


# --------------------------------------------------------------------------- small helpers


def scale_up_domain(server: ServerSpec) -> int:
    """Devices reachable over the scale-up fabric (0 in the catalog means "this server")."""
    return server.scale_up_domain_devices or server.logical_devices


def parallel_label(p: ParallelSpec) -> str:
    """``DP4 / TP16 / EP64`` (PP only when > 1), the way the seeds write a layout."""
    parts = [f"DP{p.dp}", f"TP{p.tp}"]
    if p.pp > 1:
        parts.append(f"PP{p.pp}")
    if p.expert_parallel:
        parts.append(f"EP{p.ep}")
    return " / ".join(parts)


def experts_per_rank(num_experts: int, p: ParallelSpec) -> int:
    """Routed experts held by one rank: experts ÷ EP (rounded up when uneven)."""
    if num_experts <= 0:
        return 0
    ep = max(p.ep, 1)
    return -(-num_experts // ep)


def parallel_field(topology: TopologySpec, group_name: str) -> str:
    """Dotted request field holding a group's ParallelSpec."""
    if group_name == "decode" and topology.decode_parallel is not None:
        return "topology.decode_parallel"
    return "topology.parallel"


def group_signature(topology: TopologySpec, g: GroupLayout) -> tuple[int, ParallelSpec, str]:
    """Groups with equal signatures are sized and checked once: the two clusters of a
    pair topology are identical, the P and D sides of xPyD never merge."""
    side = g.name if topology.kind == TopologyKind.DISAGGREGATED else ""
    return (g.nodes, g.parallel, side)


def default_group_nodes(topology: TopologySpec) -> int:
    """Nodes of the first serving group of a topology."""
    if topology.kind in _PAIR_KINDS:
        return topology.nodes // 2
    if topology.kind == TopologyKind.DISAGGREGATED:
        return topology.prefill_nodes or topology.nodes // 2
    return topology.nodes


def nodes_fix(req: PlanRequest, group_name: str, group_nodes: int, parallel: ParallelSpec) -> dict[str, Any]:
    """A one-click fix that gives ``group_name`` ``group_nodes`` nodes with ``parallel``.

    Pair topologies double the node count; xPyD changes only the named side.
    """
    topo = req.topology
    pfield = parallel_field(topo, group_name)
    fix: dict[str, Any] = {}
    if topo.kind in _PAIR_KINDS:
        fix["topology.nodes"] = 2 * group_nodes
    elif topo.kind == TopologyKind.DISAGGREGATED:
        if group_name == "decode":
            fix["topology.decode_nodes"] = group_nodes
            fix["topology.nodes"] = topo.prefill_nodes + group_nodes
        else:
            fix["topology.prefill_nodes"] = group_nodes
            fix["topology.nodes"] = group_nodes + topo.decode_nodes
    else:
        fix["topology.nodes"] = group_nodes
    fix.update(parallel_fix(pfield, parallel))
    return fix


def nodes_fix_text(req: PlanRequest, group_name: str, group_nodes: int) -> tuple[str, str]:
    """How ``nodes_fix`` reads in English and Chinese ("Use 8 nodes (4 per cluster)")."""
    topo = req.topology
    if topo.kind in _PAIR_KINDS:
        return (
            f"Use {2 * group_nodes} nodes ({group_nodes} per cluster)",
            f"改为 {2 * group_nodes} 台（每个集群 {group_nodes} 台）",
        )
    if topo.kind == TopologyKind.DISAGGREGATED:
        return (
            f"Give {group_in_text(group_name, 'en')} {plural(group_nodes, 'node')}",
            f"{group_in_text(group_name, 'zh')}改为 {group_nodes} 台",
        )
    return f"Use {plural(group_nodes, 'node')}", f"改为 {group_nodes} 台"


def parallel_fix(pfield: str, p: ParallelSpec) -> dict[str, Any]:
    """``{"topology.parallel.tp": 16, …}`` for a proposed ParallelSpec."""
    return {
        f"{pfield}.tp": p.tp,
        f"{pfield}.dp": p.dp,
        f"{pfield}.pp": p.pp,
        f"{pfield}.dp_local": p.dp_local,
        f"{pfield}.expert_parallel": p.expert_parallel,
    }


# --------------------------------------------------------------------------- auto layout


def _choose_tp(devices_per_node: int, domain: int, heads: int, devices: int) -> int:
    if heads <= 0 or (heads % devices_per_node == 0 and devices_per_node <= domain):
        return max(devices_per_node, 1)
    limit = min(devices_per_node, domain, devices)
    for t in range(limit, 0, -1):
        if heads % t == 0 and devices % t == 0:
            return t
    return 1


def propose_layout(req: PlanRequest, nodes: int | None = None, *, stages: bool = False) -> ParallelSpec:
    """The "auto" layout for a group of ``nodes`` nodes (default: the first group's).

    TP = devices per node when the attention heads split evenly over them (else
    the largest divisor of the heads that fits the node and the scale-up
    domain), DP = the remaining devices ÷ TP, one DP rank per TP group on each
    node, expert parallelism on for MoE models.  K3 on 4 × A3 gives DP4 / TP16
    / EP64; each side of 16 × A3 8P8D gives DP8 / TP16 / EP128 (docs/domain.md §4).

    With ``stages`` (the request's "auto" mode, see :func:`auto_layout`), when
    the routed experts do not divide over EP = DP × TP (K3's 896 experts
    over 16 × 16 = 256 ranks), the group gets the fewest pipeline stages that
    make them divide: vLLM forms the expert-parallel group inside one pipeline
    stage (EP = DP × TP, see vLLM ``vllm/config/parallel.py`` and
    ``FusedMoEParallelConfig.make`` in
    ``vllm/model_executor/layers/fused_moe/config.py``, branch main).  Stages
    inside a node come first (16 × A3 becomes DP16 / TP8 / PP2 / EP128, 7
    experts per rank, each replica on one node), then stages of whole nodes
    (6 × A3: DP2 / TP16 / PP3 / EP32, flagged by ``layout.pipeline_across_nodes``).
    When no stage count works the plain layout is returned and its check says why.
    """
    dpn = max(req.server.logical_devices, 1)
    if nodes is None:
        nodes = default_group_nodes(req.topology)
    nodes = max(nodes, 1)
    devices = nodes * dpn
    tp = _choose_tp(dpn, scale_up_domain(req.server), req.model.num_attention_heads, devices)
    dp = max(devices // tp, 1)
    plain = ParallelSpec(tp=tp, dp=dp, pp=1, expert_parallel=req.model.is_moe, dp_local=max(dpn // tp, 1))
    model = req.model
    if not stages or not (model.is_moe and model.num_experts and model.num_experts % plain.ep):
        return plain
    layers = max(model.num_layers, 1)
    domain = scale_up_domain(req.server)
    heads = model.num_attention_heads
    # First, pipeline stages inside each node (TP × PP = the node's devices, one
    # DP rank per node): every model replica stays on one node, which the
    # launch bundle starts as it does any DP layout.
    for pp in range(2, min(dpn, layers) + 1):
        if dpn % pp:
            continue
        tp_in = dpn // pp
        if tp_in > domain or (heads and heads % tp_in):
            continue
        staged = ParallelSpec(tp=tp_in, dp=nodes, pp=pp, expert_parallel=True, dp_local=1)
        if model.num_experts % staged.ep == 0 and layout_is_valid(req, nodes, staged):
            return staged
    # Then stages of whole nodes (a replica spans nodes; see the layout check).
    for pp in range(2, min(nodes, layers) + 1):
        if nodes % pp or dp % pp:
            continue
        staged = ParallelSpec(tp=tp, dp=dp // pp, pp=pp, expert_parallel=True, dp_local=1)
        if model.num_experts % staged.ep == 0 and layout_is_valid(req, nodes, staged):
            return staged
    return plain


def auto_layout(req: PlanRequest, nodes: int | None = None) -> ParallelSpec:
    """The layout "auto" resolves to: :func:`propose_layout` with pipeline
    stages when expert parallelism alone cannot divide the experts, so every
    node count gets a valid layout (or the plain one, whose check says why)."""
    return propose_layout(req, nodes, stages=True)


def layout_is_valid(req: PlanRequest, nodes: int, p: ParallelSpec) -> bool:
    """True when a group of ``nodes`` with layout ``p`` passes every per-group check."""
    return not _group_problems(req, nodes, p)


def _group_problems(req: PlanRequest, nodes: int, p: ParallelSpec) -> list[str]:
    """Codes of the per-group checks that fail (cheap; used by fix searches)."""
    server, model = req.server, req.model
    dpn = server.logical_devices
    problems = []
    if p.tp <= 0 or p.dp <= 0 or p.pp <= 0:
        return ["layout.parallel_not_positive"]
    if p.world_size != nodes * dpn:
        problems.append("layout.world_size_mismatch")
    if p.tp > scale_up_domain(server):
        problems.append("layout.tp_exceeds_scale_up")
    if model.num_attention_heads and model.num_attention_heads % p.tp:
        problems.append("layout.tp_not_dividing_heads")
    if model.is_moe and p.expert_parallel and model.num_experts % p.ep:
        problems.append("layout.experts_not_divisible")
    if p.world_size == nodes * dpn and p.tp * p.pp <= dpn and p.dp_local * nodes != p.dp:
        problems.append("layout.dp_local_inconsistent")
    return problems


def _valid_nodes_near(req: PlanRequest, nodes: int, upto: int) -> tuple[int, ParallelSpec] | None:
    """The nearest group size ≥ ``nodes`` (then below it) whose auto layout is valid."""
    sizes = (*range(nodes, upto + 1), *range(nodes - 1, 0, -1))
    # A layout without pipeline stages first (the node count the engineer would
    # pick for expert parallelism), then any valid one.
    for plain_only in (True, False):
        for n in sizes:
            p = propose_layout(req, n, stages=not plain_only)
            if (p.pp == 1 or not plain_only) and layout_is_valid(req, n, p):
                return n, p
    return None


# --------------------------------------------------------------------------- checks


def _topology_groups(req: PlanRequest, checks: list[Check]) -> list[tuple[str, str, int, int, ParallelSpec]]:
    """(name, role, nodes, first_node, parallel) per group, adding topology checks."""
    topo = req.topology
    n = topo.nodes
    if topo.kind in _PAIR_KINDS:
        if n % 2:
            checks.append(raise_("layout.pair_needs_even_nodes", n=n, even=n + 1, per_cluster=(n + 1) // 2))
        half = n // 2
        if half <= 0:
            return []
        second_role = "standby" if topo.kind == TopologyKind.PRIMARY_STANDBY else "tenant"
        first_role = "serve" if topo.kind == TopologyKind.PRIMARY_STANDBY else "tenant"
        return [
            ("cluster-a", first_role, half, 0, topo.parallel),
            ("cluster-b", second_role, half, half, topo.parallel),
        ]
    if topo.kind == TopologyKind.DISAGGREGATED:
        p_nodes, d_nodes = topo.prefill_nodes, topo.decode_nodes
        decode_parallel = topo.decode_parallel or topo.parallel
        if p_nodes <= 0 or d_nodes <= 0:
            half = max(n // 2, 1)
            checks.append(
                raise_(
                    "layout.prefill_decode_missing",
                    p_nodes=p_nodes,
                    d_nodes=d_nodes,
                    missing="prefill" if p_nodes <= 0 else "decode",
                    half=half,
                    decode=max(n - half, 1),
                )
            )
        elif p_nodes + d_nodes != n:
            checks.append(
                raise_(
                    "layout.prefill_decode_mismatch",
                    p_nodes=p_nodes,
                    d_nodes=d_nodes,
                    total=p_nodes + d_nodes,
                    n=n,
                )
            )
        groups = []
        if p_nodes > 0:
            groups.append(("prefill", "prefill", p_nodes, 0, topo.parallel))
        if d_nodes > 0:
            groups.append(("decode", "decode", d_nodes, max(p_nodes, 0), decode_parallel))
        return groups
    return [("cluster", "serve", n, 0, topo.parallel)]


def _layout_fix(req: PlanRequest, group_name: str, nodes: int) -> tuple[dict[str, Any], str, str]:
    """The auto layout for this group size when it is valid, else the nearest valid group size."""
    pfield = parallel_field(req.topology, group_name)
    proposal = auto_layout(req, nodes)
    label = parallel_label(proposal)
    if layout_is_valid(req, nodes, proposal):
        return (
            parallel_fix(pfield, proposal),
            f"Use {label} ({plural(proposal.dp_local, 'DP rank')} per node)",
            f"改为 {label}（每节点 {proposal.dp_local} 个 DP rank）",
        )
    found = _valid_nodes_near(req, nodes, 2 * nodes + 8)
    if found is None:
        return parallel_fix(pfield, proposal), f"Use {label}", f"改为 {label}"
    n_ok, p_ok = found
    text_en, text_zh = nodes_fix_text(req, group_name, n_ok)
    return (
        nodes_fix(req, group_name, n_ok, p_ok),
        f"{text_en} as {parallel_label(p_ok)}",
        f"{text_zh}，{parallel_label(p_ok)}",
    )


def _group_checks(req: PlanRequest, names: list[str], nodes: int, p: ParallelSpec) -> list[Check]:
    """Checks of one group layout; ``names`` are the groups sharing it (pairs are identical)."""
    server, model = req.server, req.model
    dpn = server.logical_devices
    devices = nodes * dpn
    pfield = parallel_field(req.topology, names[0])
    who_en = " and ".join(group_in_text(g, "en") for g in names)
    who_zh = "、".join(group_in_text(g, "zh") for g in names)
    if len(names) > 1:
        who_en, who_zh = "each cluster", "每个集群"
    out: list[Check] = []
    proposal_fix, label, label_zh = _layout_fix(req, names[0], nodes)

    if p.tp <= 0 or p.dp <= 0 or p.pp <= 0:
        out.append(
            raise_(
                "layout.parallel_not_positive",
                who_en=who_en,
                tp=p.tp,
                dp=p.dp,
                pp=p.pp,
                who_zh=who_zh,
                pfield=pfield,
                proposal_en=label,
                proposal_zh=label_zh,
                proposal=proposal_fix,
            )
        )
        return out

    if p.world_size != devices:
        out.append(
            raise_(
                "layout.world_size_mismatch",
                figures={"world_size": p.world_size, "devices": devices},
                tp=p.tp,
                dp=p.dp,
                pp=p.pp,
                world_size=p.world_size,
                who_en=who_en,
                nodes=nodes,
                dpn=dpn,
                devices=devices,
                who_zh=who_zh,
                pfield=pfield,
                proposal_en=label,
                proposal_zh=label_zh,
                proposal=proposal_fix,
            )
        )

    domain = scale_up_domain(server)
    if p.tp > domain:
        out.append(
            raise_(
                "layout.tp_exceeds_scale_up",
                figures={"tp": p.tp, "scale_up_domain_devices": domain},
                tp=p.tp,
                server=server.name,
                domain=domain,
                scale_up_fabric=server.scale_up_fabric,
                pfield=pfield,
                proposal_lower=label[0].lower() + label[1:],
                proposal_zh=label_zh,
                proposal=proposal_fix,
            )
        )

    heads = model.num_attention_heads
    if heads and heads % p.tp:
        out.append(
            raise_(
                "layout.tp_not_dividing_heads",
                figures={"num_attention_heads": heads, "tp": p.tp},
                model=model.name,
                heads=heads,
                tp=p.tp,
                pfield=pfield,
                proposal_en=label,
                proposal_zh=label_zh,
                proposal=proposal_fix,
            )
        )

    if model.is_moe and p.expert_parallel and model.num_experts % p.ep:
        found = _valid_nodes_near(req, nodes, 2 * nodes + 8)
        fix, change, nodes_en, nodes_zh, layout_ok, experts_ok = "expert_parallel_off", {}, "", "", "", 0
        if found is not None:
            n_ok, p_ok = found
            fix, change = "nodes", nodes_fix(req, names[0], n_ok, p_ok)
            nodes_en, nodes_zh = nodes_fix_text(req, names[0], n_ok)
            layout_ok, experts_ok = parallel_label(p_ok), model.num_experts // p_ok.ep
        out.append(
            raise_(
                "layout.experts_not_divisible",
                fix=fix,
                figures={"num_experts": model.num_experts, "ep": p.ep},
                num_experts=model.num_experts,
                ep=p.ep,
                experts_per_rank=model.num_experts / p.ep,
                pfield=pfield,
                expert_parallel=False,
                change=change,
                nodes_en=nodes_en,
                nodes_zh=nodes_zh,
                layout_ok=layout_ok,
                experts_ok=experts_ok,
            )
        )

    if p.pp > 1 and p.tp * p.pp > dpn and p.world_size == devices:
        found = _valid_nodes_near(req, nodes, 2 * nodes + 8)
        pp_fix, change, nodes_en, nodes_zh, layout_ok = None, {}, "", "", ""
        if found is not None and found[1].pp == 1:
            n_ok, p_ok = found
            pp_fix, change = "nodes", nodes_fix(req, names[0], n_ok, p_ok)
            nodes_en, nodes_zh = nodes_fix_text(req, names[0], n_ok)
            layout_ok = parallel_label(p_ok)
        out.append(
            raise_(
                "layout.pipeline_across_nodes",
                fix=pp_fix,
                figures={"pp": p.pp, "tp": p.tp, "ep": p.ep},
                who_en=sentence_start(who_en),
                pp=p.pp,
                tp=p.tp,
                tp_pp_dpn=p.tp * p.pp // dpn,
                num_experts=model.num_experts,
                ep=p.ep,
                who_zh=who_zh,
                pfield=pfield,
                change=change,
                nodes_en=nodes_en,
                nodes_zh=nodes_zh,
                layout_ok=layout_ok,
            )
        )

    # Only meaningful once the world size is right (else the mismatch above says it all).
    if p.world_size == devices and p.tp * p.pp <= dpn and p.dp_local * nodes != p.dp:
        want = p.dp // nodes if p.dp % nodes == 0 else None
        out.append(
            raise_(
                "layout.dp_local_inconsistent",
                fix="dp_local" if want else "proposal",
                dp_local=p.dp_local,
                nodes=nodes,
                dp=p.dp,
                who_en=who_en,
                who_zh=who_zh,
                pfield=pfield,
                want=want,
                proposal_en=label,
                proposal_zh=label_zh,
                proposal=proposal_fix,
            )
        )
    return out


# --------------------------------------------------------------------------- entry point


def resolve_layout(req: PlanRequest) -> LayoutResult:
    """Build the serving groups of ``req.topology`` and check them against the model and server."""
    topo, server, model = req.topology, req.server, req.model
    dpn = server.logical_devices
    checks: list[Check] = []
    book = FigureBook()
    book.put("layout.nodes", topo.nodes, source=typed("topology.nodes"), nodes=topo.nodes)
    book.put(
        "layout.devices_per_node",
        dpn,
        packages=server.packages,
        logical_per_package=server.accelerator.logical_devices_per_package,
    )
    book.put("layout.total_devices", max(topo.nodes, 0) * dpn, nodes=max(topo.nodes, 0), devices_per_node=dpn)
    book.put(
        "layout.scale_up_domain_devices",
        scale_up_domain(server),
        scale_up_domain_devices=server.scale_up_domain_devices,
        logical_devices=server.logical_devices,
        scale_up_fabric=server.scale_up_fabric,
    )

    if topo.nodes <= 0:
        checks.append(
            raise_(
                "layout.nodes_not_positive",
                nodes=topo.nodes,
                nodes_ok=2 if topo.kind != TopologyKind.SINGLE else 1,
            )
        )
        return LayoutResult(topo.nodes, dpn, (), book.figures, tuple(checks))

    specs = _topology_groups(req, checks)
    groups = tuple(
        GroupLayout(
            name=name,
            role=role,
            nodes=nodes,
            first_node=first,
            parallel=p,
            devices=nodes * dpn,
            experts_per_rank=experts_per_rank(model.num_experts, p),
        )
        for name, role, nodes, first, p in specs
    )

    # Identical groups (the two clusters of a pair) are checked once.
    seen: dict[tuple[int, ParallelSpec, str], list[str]] = {}
    for g in groups:
        seen.setdefault(group_signature(topo, g), []).append(g.name)
    for (nodes, p, _side), names in seen.items():
        group_checks = _group_checks(req, names, nodes, p)
        checks.extend(group_checks)
        if not group_checks:
            g = next(x for x in groups if x.name == names[0])
            who_en = "Each cluster" if len(names) > 1 else sentence_start(group_in_text(names[0], "en"))
            who_zh = "每个集群" if len(names) > 1 else group_in_text(names[0], "zh")
            checks.append(
                raise_(
                    "layout.ok",
                    variant="moe" if model.is_moe else None,
                    who_en=who_en,
                    who_zh=who_zh,
                    dpn=dpn,
                    layout=parallel_label(p),
                    nodes=nodes,
                    experts_per_rank=g.experts_per_rank,
                    parallel_field=parallel_field(topo, names[0]),
                )
            )

    for g in groups:
        p = g.parallel
        group_names = {"group_en": group_in_text(g.name, "en"), "group_zh": group_in_text(g.name, "zh")}
        book.put(
            f"layout.{g.name}.devices", g.devices, label=group_names, nodes=g.nodes, devices_per_node=dpn
        )
        book.put(
            f"layout.{g.name}.parallel",
            parallel_label(p),
            label=group_names,
            source=public("vLLM docs/serving/data_parallel_deployment.md"),
            tp=p.tp,
            dp=p.dp,
            pp=p.pp,
            ep=p.ep,
            dp_local=p.dp_local,
        )
        if model.is_moe:
            book.put(
                f"layout.{g.name}.experts_per_rank",
                g.experts_per_rank,
                num_experts=model.num_experts,
                ep=p.ep,
            )
    return LayoutResult(topo.nodes, dpn, groups, book.figures, tuple(checks))
