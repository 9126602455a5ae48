"""The launch bundle's checks: site values, placeholders and port collisions."""

from __future__ import annotations

from .. import recipes as rc
from .. import site_values as sv
from ..checks import raise_
from ..speculative import decode_role, role_serving
from ..types import Check, LaunchSpec, LayoutResult, PlanRequest, TopologyKind, TopologySpec
from .nodes import PLACEHOLDER_MODEL_PATH, PLACEHOLDER_NIC, Site


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


def launch_checks(req: PlanRequest, layout: LayoutResult, site: Site) -> list[Check]:
    lp = req.launch
    out: list[Check] = []
    n = layout.nodes or req.topology.nodes
    for field_name, problem in site.rejected:
        out.append(
            raise_(
                "launch.site_value_invalid",
                field_name=field_name,
                problem=problem,
                field_path=field_name.split("[")[0],
            )
        )
    missing_ips = [ip for ip in site.ips if ip.startswith("__")]
    if missing_ips:
        out.append(
            raise_(
                "launch.node_ips_missing",
                figures={"missing": len(missing_ips)},
                missing=len(missing_ips),
                n=n,
                shown=", ".join(missing_ips[:4]),
                more="…" if len(missing_ips) > 4 else "",
            )
        )
    if len(lp.node_ips) > n:
        out.append(raise_("launch.node_ips_extra", entered=len(lp.node_ips), n=n))
    given = [ip for ip in site.ips if not sv.is_placeholder(ip)]
    dupes = sorted({ip for ip in given if given.count(ip) > 1})
    if dupes:
        out.append(raise_("launch.node_ip_duplicate", dupes=", ".join(dupes)))
    for ip in given:
        if sv.ip_literal(ip) is None:
            out.append(raise_("launch.node_ip_not_an_address", ip=ip))
    if site.model_path == PLACEHOLDER_MODEL_PATH:
        out.append(raise_("launch.model_path_missing"))
    if site.nic == PLACEHOLDER_NIC:
        out.append(raise_("launch.data_nic_missing"))
    disaggregated = req.topology.kind == TopologyKind.DISAGGREGATED
    for name, other, port in _port_clashes(req.topology, lp):
        out.append(
            raise_("launch.port_conflict", name=name, other=other, port=port, port_field=name.split(" ")[0])
        )
    if disaggregated and site.ascend:
        floor = 20000 + site.devices_per_node * 1000
        for name, port in (
            ("launch.kv_port_prefill", lp.kv_port_prefill),
            ("launch.kv_port_decode", lp.kv_port_decode),
        ):
            if port < floor:
                out.append(
                    raise_(
                        "launch.kv_port_in_reserved_range",
                        figures={"floor": floor},
                        name=name,
                        port=port,
                        floor=floor,
                        devices_per_node=site.devices_per_node,
                        port_ok=floor if name.endswith("prefill") else floor + 200,
                    )
                )
    if disaggregated and not site.ascend:
        out.append(raise_("launch.pd_connector_unvalidated"))
    perf = req.performance
    decoding = role_serving(req.serving, decode_role(req)).speculative
    if perf.speculative_tokens > 0 and not decoding.on:
        # The estimate reads a draft the request gave only as step-model inputs (performance.*): no
        # serving.speculative names it, so the bundle has no --speculative-config to write.
        separate = perf.draft_model_gb > 0
        out.append(
            raise_(
                "launch.speculative_not_launched",
                figures={"speculative_tokens": perf.speculative_tokens},
                tokens=perf.speculative_tokens,
                kind_en="a separate draft model" if separate else "an MTP head",
                kind_zh="独立草稿模型" if separate else "MTP 头",
            )
        )
    return out


def recipe_checks(req: PlanRequest, layout: LayoutResult, recipe: rc.Recipe, image: str) -> list[Check]:
    """What the plan's recipe says about its image, its layout and its checkpoint."""
    from ..layout import parallel_field  # at call time: layout imports the launch checks' neighbours

    out: list[Check] = []
    platform = "ascend" if req.server.accelerator.software_stack == "ascend" else "cuda"
    family = rc.family_of(req.model)
    given = (req.launch.image or "").strip()
    hw = rc.hardware_of(req.server)
    if given and not rc.image_serves_family(given, platform, family):
        out.append(
            raise_(
                "launch.image_cannot_serve_model",
                given=given,
                model=req.model.name,
                image_for=recipe.image_for(hw),
            )
        )
    soc = rc.image_soc(given) if given and platform == "ascend" else None
    if soc is not None and soc != hw and hw in ("a3", "a2"):
        want = recipe.image_for(hw)
        out.append(
            raise_(
                "launch.image_for_other_soc",
                given=given,
                soc=soc.upper(),
                server=req.server.name,
                hw=hw.upper(),
                want=want,
            )
        )
    for g in layout.groups:
        found = rc.unsupported_layout(recipe, req.server, g.parallel, g.nodes)
        if found is None:
            continue
        name, supported, what = found
        pfield = parallel_field(req.topology, g.name)
        figures = {"layout": name, "supported": supported}
        gpu = rc.gpu_id(req.server).upper()
        if supported:
            out.append(
                raise_(
                    "launch.layout_unsupported_by_recipe",
                    variant="supported",
                    fix="expert_parallel_off" if supported == "multi_node_tp_dp" else None,
                    figures=figures,
                    group=g.name,
                    model=req.model.name,
                    layout=name,
                    gpu=gpu,
                    supported=supported,
                    what=what,
                    pfield=pfield,
                    expert_parallel=False,
                )
            )
        else:
            out.append(
                raise_(
                    "launch.layout_unsupported_by_recipe",
                    figures=figures,
                    group=g.name,
                    model=req.model.name,
                    layout=name,
                    gpu=gpu,
                    pfield=pfield,
                )
            )
    ckpt = req.checkpoint
    if platform == "ascend" and family == "deepseek" and (ckpt is None or ckpt.quant_method != "ascend"):
        out.append(raise_("launch.checkpoint_not_for_ascend", model=req.model.name))
    return out
