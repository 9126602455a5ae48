"""``build_launch``: every node's launch command and environment, and the bundle's figures."""

from __future__ import annotations

import dataclasses
import math

from .. import recipes as rc
from ..defaults import AUTO_MAX_NUM_SEQS
from ..figures import FigureBook
from ..speculative import decode_role, role_serving
from ..types import (
    BundleContext,
    DesignPoint,
    GroupSummary,
    LaunchResult,
    LayoutResult,
    MemoryResult,
    NodeLaunch,
    PerformanceResult,
    PlanRequest,
    Severity,
    Source,
    TopologyKind,
)
from .checks import launch_checks, recipe_checks
from .nodes import build_aggregated, build_pd, plan_deviations, resolve_site

SOURCE_DOCS = Source("public", "vLLM data_parallel_deployment.md; vLLM-Ascend Kimi-K3 tutorial")


def _estimates(
    req: PlanRequest, layout: LayoutResult
) -> tuple[MemoryResult | None, PerformanceResult | None]:
    """The plan's memory and performance, for a bundle built from a request alone (plan()'s estimates)."""
    if any(c.severity == Severity.ERROR for c in layout.checks):
        return None, None
    from ..defaults import resolve_serving
    from ..memory import size_admission, size_memory
    from ..performance import estimate_performance
    from ..speculative import with_draft

    # as plan() estimates: the platform's serving defaults filled and the decoding engines' draft
    # charged, so the bundle launches the --max-num-seqs the plan's design point gives
    serving = resolve_serving(req.serving, req.server.accelerator.software_stack)
    req = size_admission(with_draft(dataclasses.replace(req, serving=serving)), layout)
    memory = size_memory(req, layout)
    return memory, estimate_performance(req, layout, memory)


# The engines' start-up wait (figure launch.load_wait_s): reading the checkpoint, then compiling and capturing
# graphs, which take about as long again on the large MoE models (the K3 recipes' ready timeouts: 3600 s on
# CUDA, 7200 s on Ascend, for ≈1.5 TB); never below the recipe's own engine-ready timeout, else 30 min.
LOAD_HEADROOM = 2.0
LOAD_FLOOR_S = 1800


def load_wait_s(req: PlanRequest, recipe: rc.Recipe, memory: MemoryResult | None, book: FigureBook) -> int:
    checkpoint = memory.checkpoint_bytes if memory is not None else 0
    ready = [int(v) for env in (recipe.env, *recipe.role_env.values()) for k, v in env.items()
             if k == "VLLM_ENGINE_READY_TIMEOUT_S"]  # fmt: skip
    ready += [int(d.value) for d in recipe.deviations if d.name == "VLLM_ENGINE_READY_TIMEOUT_S" and d.value]
    floor = max([LOAD_FLOOR_S, *ready])
    rate = req.launch.weight_read_gb_s * 1e9
    value = math.ceil(max(floor, LOAD_HEADROOM * checkpoint / rate))
    book.put(
        "launch.load_wait_s",
        value,
        source=Source("public", "vLLM recipes and vLLM-Ascend tutorial ready timeouts; site read rate"),
        floor_s=floor,
        headroom=LOAD_HEADROOM,
        checkpoint_bytes=checkpoint,
        read_bytes_per_s=rate,
    )
    return value


def launched_max_num_seqs(req: PlanRequest, design: DesignPoint | None) -> int:
    """``--max-num-seqs`` of the serving engines (aggregated, or the decode side of xPyD): the design
    point's sequences per DP rank (figure ``performance.design.max_num_seqs_per_dp_rank``), so each engine
    admits the load the plan sells and queues the rest rather than missing its latency targets.  The
    design point is searched within ``serving.max_num_seqs`` (``performance/design.py free_models``; a
    setting left to the defaults is sized to the KV cache, engine/memory.py size_admission), so the flag is the
    design point's and never above the setting the memory was sized at.  xPyD prefill engines keep the
    setting: their batch is bounded by the token budget, not by the design point."""
    setting = role_serving(req.serving, decode_role(req)).max_num_seqs  # xPyD: the decode side's own
    per_rank = design.max_num_seqs_per_dp_rank if design is not None else 0
    return min(per_rank, setting) if per_rank > 0 else setting


def build_launch(
    req: PlanRequest,
    layout: LayoutResult,
    performance: PerformanceResult | None = None,
    memory: MemoryResult | None = None,
) -> LaunchResult:
    """Every node's launch command and environment; the bundle's files render on demand (see module doc).
    ``performance`` and ``memory`` are the plan's (plan() passes them); without them the same estimates
    are made here."""
    if performance is None or memory is None:
        memory, performance = _estimates(req, layout)
    if req.serving.max_num_seqs == AUTO_MAX_NUM_SEQS:  # plan() resolves it first (memory.size_admission)
        from ..memory import size_admission

        req = size_admission(req, layout)
    design = performance.design_point if performance is not None else None
    seqs = launched_max_num_seqs(req, design)
    # the serving engines' request: the plan's serving settings with the launched --max-num-seqs
    serving = dataclasses.replace(req.serving, max_num_seqs=seqs)
    if serving.decode is not None and serving.decode.max_num_seqs is not None:
        serving = dataclasses.replace(serving, decode=dataclasses.replace(serving.decode, max_num_seqs=seqs))
    serving_req = dataclasses.replace(req, serving=serving)
    site = resolve_site(req, layout)
    recipe = rc.select_recipe(req)
    pd = req.topology.kind == TopologyKind.DISAGGREGATED
    deviations = plan_deviations(
        req, layout, recipe, max_num_seqs={("decode",) if pd else ("master", "worker"): seqs}
    )
    checks = launch_checks(req, layout, site)
    nodes: list[NodeLaunch] = []
    kind = req.topology.kind
    if kind == TopologyKind.DISAGGREGATED:
        entrypoint = build_pd(req, layout, site, recipe, deviations, nodes, decode_req=serving_req)
        services = 2 if site.ascend else 1  # + MetaService (Ascend) + proxy
    else:
        entrypoint = build_aggregated(serving_req, layout, site, recipe, deviations, nodes)
        services = 0
    book = FigureBook()
    wait = load_wait_s(req, recipe, memory, book)
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
        max_num_seqs=seqs,  # the serving engines' (benchmark.sh offers every seat)
        node_selector=dict(req.launch.node_selector or {}),
        load_wait_s=wait,
    )
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
