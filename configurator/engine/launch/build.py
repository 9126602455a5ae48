"""``build_launch``: every node's launch command and environment, and the bundle's figures."""

from __future__ import annotations

from .. import recipes as rc
from ..figures import FigureBook
from ..types import (
    BundleContext,
    GroupSummary,
    LaunchResult,
    LayoutResult,
    NodeLaunch,
    PlanRequest,
    Source,
    TopologyKind,
)
from .checks import launch_checks, recipe_checks
from .nodes import build_aggregated, build_pd, plan_deviations, resolve_site

SOURCE_DOCS = Source("public", "vLLM data_parallel_deployment.md; vLLM-Ascend Kimi-K3 tutorial")


def build_launch(req: PlanRequest, layout: LayoutResult) -> LaunchResult:
    """Every node's launch command and environment; the bundle's files render on demand (see module doc)."""
    site = resolve_site(req, layout)
    recipe = rc.select_recipe(req)
    deviations = plan_deviations(req, layout, recipe)
    checks = launch_checks(req, layout, site)
    nodes: list[NodeLaunch] = []
    kind = req.topology.kind
    if kind == TopologyKind.DISAGGREGATED:
        entrypoint = build_pd(req, layout, site, recipe, deviations, nodes)
        services = 2 if site.ascend else 1  # + MetaService (Ascend) + proxy
    else:
        entrypoint = build_aggregated(req, layout, site, recipe, deviations, nodes)
        services = 0
    w = req.workload
    image = site.image if (req.launch.image or "").strip() else recipe.image_for(rc.hardware_of(req.server))
    checks += recipe_checks(req, layout, recipe, image)
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
        image=image,  # the recipe's image for this SoC by default (vLLM-Ascend's -a3 builds for Atlas A3)
        ascend=site.ascend,
        api_port=req.launch.api_port,
        proxy_port=req.launch.proxy_port,
        recipe=recipe.key,
        deviations=deviations,
        served_name=site.served_name,
        devices_per_node=site.devices_per_node,
        workload=(w.input_tokens, w.output_tokens, w.concurrency),
        max_num_seqs=req.serving.max_num_seqs,
        node_selector=dict(req.launch.node_selector or {}),
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
