"""Group sizes and shapes: which node counts give a valid layout whose weights and one
full-length sequence fit, and the clusters, pairs and xPyD splits built from them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..engine.checks import unworded
from ..engine.layout import layout_is_valid, propose_layout, resolve_layout
from ..engine.memory import size_memory
from ..engine.types import (
    ParallelSpec,
    PlanRequest,
    ServerSpec,
    ServingSpec,
    Severity,
    TopologyKind,
    TopologySpec,
)
from .build import RequestBuilder
from .judge import Judge
from .query import HA_AVAILABILITY, PlannerQuery
from .results import KIND_ORDER, STAGE_LAYOUT, Family, Shape, rejection, short_name

MAX_XPYD_RATIO = 3  # prefill:decode splits up to 1:3 and 3:1


class Sizer:
    """Group sizes (valid layouts whose memory fits, checks cached) and the shapes built from them."""

    def __init__(self, query: PlannerQuery, build: RequestBuilder, judge: Judge, stats: dict[str, Any]):
        self.q = query
        self.o = query.options
        self.build = build
        self.judge = judge
        self.stats = stats
        self.memory_cache: dict[tuple, tuple[bool, Any]] = {}
        self.ha = query.workload.availability_target >= HA_AVAILABILITY - 1e-12

    def layouts(self, server: ServerSpec, nodes: int) -> list[ParallelSpec]:
        """The proposed layout and a narrower-TP alternative, each valid for ``nodes``."""
        probe = PlanRequest(
            model=self.q.model,
            server=server,
            topology=TopologySpec(TopologyKind.SINGLE, nodes, ParallelSpec(1, 1)),
        )
        first = propose_layout(probe, nodes)
        out = []
        if layout_is_valid(probe, nodes, first):
            out.append(first)
        dpn = server.logical_devices
        tp = first.tp // 2
        heads = self.q.model.num_attention_heads
        if tp >= 1 and dpn % tp == 0 and (not heads or heads % tp == 0) and tp >= max(1, dpn // 4):
            alt = ParallelSpec(
                tp=tp,
                dp=nodes * dpn // tp,
                pp=1,
                expert_parallel=first.expert_parallel,
                dp_local=dpn // tp,
            )
            if alt != first and layout_is_valid(probe, nodes, alt):
                out.append(alt)
        return out

    def memory_fits(self, server: ServerSpec, nodes: int, p: ParallelSpec, serving: ServingSpec):
        """(fits, first memory error check) for one group, cached."""
        key = (server.slug, nodes, p, serving)
        if key not in self.memory_cache:
            self.stats["memory_checks"] += 1
            req = PlanRequest(
                model=self.q.model,
                server=server,
                topology=TopologySpec(TopologyKind.SINGLE, nodes, p),
                serving=serving,
                workload=self.build.workload(1),
                checkpoint=self.build.checkpoint(server),
            )
            with unworded():  # its errors only
                memory = size_memory(req, resolve_layout(req), screening=True)
            error = next((c for c in memory.checks if c.severity == Severity.ERROR), None)
            self.memory_cache[key] = (error is None, error)
        return self.memory_cache[key]

    def group_sizes(self, fam: Family, upto: int) -> dict[int, list[ParallelSpec]]:
        s = fam.server
        name = short_name(s)
        serving = self.build.generous_serving(s)
        valid: dict[int, list[ParallelSpec]] = {}
        layout_reason = memory_reason = None
        fitting_tp: set[int] = set()
        for n in range(1, upto + 1):
            layouts = self.layouts(s, n)
            if not layouts:
                if layout_reason is None:
                    layout_reason = n
                continue
            fitting = []
            for p in layouts:
                # With TP fixed, a larger group only spreads the experts thinner (EP = all its
                # devices) and keeps the KV per rank: once a size fits, every larger one does.
                if p.tp in fitting_tp:
                    fitting.append(p)
                    continue
                fits, error = self.memory_fits(s, n, p, serving)
                if fits:
                    fitting.append(p)
                    fitting_tp.add(p.tp)
                elif memory_reason is None or (memory_reason[0] < n and not valid):
                    memory_reason = (n, p, error)
            if fitting:
                valid[n] = fitting
        if not valid:
            if memory_reason is not None:
                n, p, error = memory_reason
                fam.reject(self.judge.memory_rejection(s, n, p, error, serving))
            else:
                fam.reject(
                    rejection(
                        "planner.no_valid_layout",
                        s,
                        upto,
                        STAGE_LAYOUT,
                        name=name,
                        upto=upto,
                        model=self.q.model.name,
                        experts=self.q.model.num_experts,
                        heads=self.q.model.num_attention_heads,
                        devices=s.logical_devices,
                    )
                )
        else:
            smallest = min(valid)
            # The largest size below the first fitting one names what is short (A2 × 1: memory).
            below = [n for n in range(1, smallest) if self.layouts(s, n)]
            if below:
                n = below[0]
                p = self.layouts(s, n)[0]
                fits, error = self.memory_fits(s, n, p, serving)
                if not fits:
                    fam.reject(self.judge.memory_rejection(s, n, p, error, serving))
        return valid

    def shapes(self, valid: Mapping[int, list[ParallelSpec]]) -> list[Shape]:
        kinds = {TopologyKind(k) for k in self.o.topologies} if self.o.topologies else set(TopologyKind)
        if self.ha:
            kinds &= {TopologyKind.PRIMARY_STANDBY}
        else:
            kinds -= {TopologyKind.PRIMARY_STANDBY}
        top = self.o.max_nodes
        sizes = sorted(valid)
        out: list[Shape] = []
        for g in sizes:
            if TopologyKind.SINGLE in kinds and g <= top:
                out.append(Shape(TopologyKind.SINGLE, g, (g,)))
            for kind in (TopologyKind.PRIMARY_STANDBY, TopologyKind.TENANT_PAIR):
                if kind in kinds and 2 * g <= top:
                    out.append(Shape(kind, 2 * g, (g, g)))
        if TopologyKind.DISAGGREGATED in kinds:
            for p in sizes:
                for d in sizes:
                    if p + d <= top and max(p, d) <= MAX_XPYD_RATIO * min(p, d):
                        out.append(Shape(TopologyKind.DISAGGREGATED, p + d, (p, d)))
        out.sort(key=lambda s: (s.nodes, KIND_ORDER[s.kind], s.group_nodes))
        return out

    def layout_pairs(
        self, shape: Shape, valid: Mapping[int, list[ParallelSpec]]
    ) -> list[tuple[ParallelSpec, ParallelSpec | None]]:
        first = valid[shape.group_nodes[0]]
        if shape.kind != TopologyKind.DISAGGREGATED:
            return [(p, None) for p in first]
        second = valid[shape.group_nodes[1]]
        pairs: list[tuple[ParallelSpec, ParallelSpec | None]] = [
            (p, d) for p in first for d in second if p.tp == d.tp
        ]
        return pairs or [(first[0], second[0])]
