"""``plan()``: compose the concern modules into one explained result."""

from __future__ import annotations

import dataclasses

from .capability import capability_checks
from .defaults import resolve_serving
from .economics import compute_economics
from .launch import build_launch
from .launch.build import launched_max_num_seqs
from .layout import resolve_layout
from .memory import size_admission, size_memory
from .network import size_network
from .performance import estimate_performance
from .power import size_power
from .racks import place_racks
from .speculative import serving_roles, with_draft
from .tco import compute_tco
from .types import PlanRequest, PlanResult, Severity


def plan(request: PlanRequest) -> PlanResult:
    """Size a deployment.  Never raises on a well-typed request: problems are checks."""
    # Platform-dependent serving defaults (block_size 0 → 16 on CUDA, 128 on Ascend) are
    # filled once here so every module, the launch bundle and the saved request agree.
    serving = resolve_serving(request.serving, request.server.accelerator.software_stack)
    if serving is not request.serving:
        request = dataclasses.replace(request, serving=serving)
    # The decoding engines' speculative setting feeds the step model its draft (engine/speculative.py).
    request = with_draft(request)
    layout = resolve_layout(request)
    capability = tuple(capability_checks(request))
    if any(c.severity == Severity.ERROR for c in layout.checks):
        # The layout itself is impossible: facilities can still be sized from the
        # node count, but memory and performance would be meaningless.
        network = size_network(request, layout)
        power = size_power(request, layout, network)
        racks = place_racks(request, layout, power, network)
        checks = (*capability, *layout.checks, *power.checks, *network.checks, *racks.checks)
        return PlanResult(request, layout, power=power, racks=racks, network=network, checks=checks)

    # max_num_seqs left to the defaults: what the KV cache holds at the workload's lengths (engine/memory.py size_admission)
    request = size_admission(request, layout)
    memory = size_memory(request, layout)
    network = size_network(request, layout)
    power = size_power(request, layout, network)
    racks = place_racks(request, layout, power, network)
    performance = estimate_performance(request, layout, memory)
    tco = compute_tco(request, layout, power, racks, network, performance)
    economics = compute_economics(request, performance, tco)
    launch = build_launch(request, layout, performance, memory)
    checks = (
        *capability,
        *layout.checks,
        *memory.checks,
        *power.checks,
        *network.checks,
        *racks.checks,
        *performance.checks,
        *tco.checks,
        *(economics.checks if economics else ()),
        *launch.checks,
    )
    return PlanResult(
        request,
        layout,
        memory=memory,
        power=power,
        racks=racks,
        network=network,
        performance=performance,
        tco=tco,
        launch=launch,
        economics=economics,
        checks=checks,
        serving=serving_roles(
            request, layout.groups, launched_max_num_seqs(request, performance.design_point)
        ),
    )
