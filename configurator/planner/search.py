"""Enumerating candidates: per server family, group sizes → shapes → serving variant → full
plan, growing the node count until feasible shapes stop getting cheaper or a gap stops closing.

:class:`Search` runs the loop and keeps what it saw; its collaborators do the steps
(:class:`RequestBuilder` the engine requests, :class:`RackChooser` the racks, :class:`Sizer`
the group sizes and shapes, :class:`ServingSearch` the serving variants, :class:`Judge` every
verdict and the ranking).
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ..engine.plan import plan
from ..engine.types import ParallelSpec, TopologyKind
from .build import RequestBuilder
from .judge import Judge, binding_constraint, pareto_front, primary_reason
from .query import PlannerCatalog, PlannerQuery
from .racks import RackChooser
from .results import (
    STAGE_CONSTRAINT,
    STAGE_FEASIBLE,
    STAGE_LAYOUT,
    STAGE_SERVING,
    Candidate,
    Evaluated,
    Family,
    OnRequest,
    PlannerResult,
    Rejection,
    Shape,
    Variant,
    evaluated_rejection,
    layout_label,
    rejection,
    short_name,
)
from .serving import ServingSearch, cheap_exhausted
from .sizing import Sizer

PATIENCE = 2  # node counts without a cheaper feasible shape before a family stops
GAP_PATIENCE = 3  # node counts without closing a serving gap before a family stops
MAX_PLANS_PER_FAMILY = 8
MAX_SHAPES_PER_FAMILY = 40  # safety nets: the stops above end a family long before these
PROJECTION_MARGIN = 2.0  # stop when a serving gap projects past 2 × max_nodes
# What a shape tells the family's search (``Search.try_shape``): go on, stop now, or stop once the
# node count's other shapes are tried.
GO_ON, STOP, STOP_AFTER = "go on", "stop", "stop after this node count"


class Search:
    """One search: the family loop, with what it evaluated, the candidates and the counters."""

    def __init__(self, query: PlannerQuery, catalog: PlannerCatalog):
        self.q = query
        self.o = query.options
        self.evaluated: list[Evaluated] = []
        self.candidates: list[Candidate] = []
        self.on_request: list[OnRequest] = []
        self.stats: dict[str, Any] = {"plans": 0, "cheap_evaluations": 0, "memory_checks": 0, "shapes": 0}
        self.build = RequestBuilder(query, catalog)
        self.racks = RackChooser(query, self.build)
        self.judge = Judge(query, self.build, self.racks)
        self.sizes = Sizer(query, self.build, self.judge, self.stats)
        self.serving = ServingSearch(query, self.build, self.judge, self.stats, self.evaluated)

    # ------------------------------------------------------------------ the family loop

    def search_family(self, fam: Family) -> None:
        """One server family: its filters, its group sizes and shapes, then node count by node count."""
        why_not = self.judge.family_filter(fam.server)
        if why_not is not None:
            fam.reject(why_not)
            return
        s = fam.server
        valid = self.sizes.group_sizes(fam, self.o.max_nodes)
        if not valid:
            return
        shapes = self.sizes.shapes(valid)
        if not shapes:
            fam.reject(
                rejection(
                    "planner.no_shape",
                    s,
                    min(valid),
                    STAGE_LAYOUT,
                    variant="ha" if self.sizes.ha else None,
                    name=short_name(s),
                    max_nodes=self.o.max_nodes,
                    smallest=min(valid),
                )
            )
            return
        self.grow(fam, shapes, valid)

    def grow(self, fam: Family, shapes: list[Shape], valid: Mapping[int, list[ParallelSpec]]) -> None:
        """Every node count in turn, its shapes tried in order, until a stop: two node counts without a
        cheaper feasible shape, a gap that stops closing, a bound or a projection that ends the family,
        or the safety nets."""
        by_nodes: dict[int, list[Shape]] = {}
        for shape in shapes:
            by_nodes.setdefault(shape.nodes, []).append(shape)
        stale = 0
        # The closest each binding constraint came (its gap: needed ÷ reached), by rejection code: adding
        # nodes trades one constraint for another (the KV cache's capacity at 2 nodes, the TPOT of a
        # wider expert-parallel group at 4), so progress is judged per constraint, not across them.
        gap_best: dict[str, float] = {}
        no_progress = tried = 0
        for n in sorted(by_nodes):
            improved = False
            gaps_here: dict[str, float] = {}
            stop = False
            for shape in by_nodes[n]:
                self.stats["shapes"] += 1
                tried += 1
                verdict, cheaper = self.try_shape(fam, shape, valid, gaps_here)
                improved = improved or cheaper
                if verdict != GO_ON:
                    stop = True
                    if verdict == STOP:
                        break
            if stop or fam.plans >= MAX_PLANS_PER_FAMILY or tried >= MAX_SHAPES_PER_FAMILY:
                break
            if fam.first_feasible is not None:
                if n > fam.first_feasible:
                    stale = 0 if improved else stale + 1
                    if stale >= PATIENCE:
                        break
            elif any(code not in gap_best or g < gap_best[code] * 0.99 for code, g in gaps_here.items()):
                for code, g in gaps_here.items():
                    gap_best[code] = min(gap_best.get(code, g), g)
                no_progress = 0
            else:
                # Nothing works yet and the gap to the target is not closing.
                no_progress += 1
                if no_progress >= GAP_PATIENCE:
                    break

    def try_shape(
        self, fam: Family, shape: Shape, valid: Mapping[int, list[ParallelSpec]], gaps_here: dict[str, float]
    ) -> tuple[str, bool]:
        """One shape: the servers' lower bounds, the serving variant, the full plan.

        Returns whether the family goes on (``GO_ON``), stops now (``STOP``) or after this node count's
        other shapes (``STOP_AFTER``), and whether the shape is a feasible one cheaper than any before;
        a serving gap met is kept in ``gaps_here`` by rejection code."""
        s = fam.server
        bound = self.judge.bound_rejection(s, shape)
        if bound is not None:
            fam.reject(bound)
            self.evaluated.append(evaluated_rejection(s, shape, "", bound))
            if bound.code != "planner.over_racks" or shape.kind == TopologyKind.SINGLE:
                return STOP, False  # servers' capex, rent and power only grow with nodes
            return GO_ON, False
        variant, why = self.serving.choose_serving(fam, shape, self.sizes.layout_pairs(shape, valid))
        if variant is None:
            if why is not None:
                gap = why.figures.get("gap")
                projected = None
                if isinstance(gap, (int, float)):
                    gaps_here[why.code] = min(gaps_here.get(why.code, gap), gap)
                    projected = self.projection(fam, shape, why, gap)
                # The projection, when it stops the family, is the fuller reason.
                fam.reject(projected or why)
                if projected is not None:
                    return STOP, False
            return (STOP if cheap_exhausted(fam) else GO_ON), False
        outcome = self.plan_shape(fam, shape, variant)
        if isinstance(outcome, OnRequest):
            # Feasible on a server without a price: its smallest deployment is listed, no more.
            self.on_request.append(outcome)
            return STOP, False
        if isinstance(outcome, Rejection):
            fam.reject(outcome)
            gap = outcome.figures.get("gap")
            if isinstance(gap, (int, float)):
                gaps_here[outcome.code] = min(gaps_here.get(outcome.code, gap), gap)
            if outcome.code.startswith("planner.engine.network.") and shape.nodes > 1:
                return STOP, False  # the cross-node fabric fails at every larger size too
            if (
                outcome.stage == STAGE_CONSTRAINT
                and outcome.code in ("planner.over_budget", "planner.over_lease", "planner.over_power")
                and shape.kind == TopologyKind.SINGLE
            ):
                return STOP_AFTER, False
            return GO_ON, False
        self.candidates.append(outcome)
        key = self.judge.sort_key(outcome)[0]
        cheaper = fam.best is None or key < fam.best
        if cheaper:
            fam.best = key
        if fam.first_feasible is None:
            fam.first_feasible = shape.nodes
        return GO_ON, cheaper

    def projection(self, fam: Family, shape: Shape, why: Rejection, gap: float) -> Rejection | None:
        """Stop a family whose serving gap cannot close within the nodes searched.

        Queueing and request-rate gaps shrink about as 1 ÷ nodes (the load
        spreads over more DP ranks); TPOT shrinks more slowly (the non-expert
        weights are read on every step whatever the node count) and TTFT not at
        all (prefill runs on one DP rank).  So nodes × gap is at most what is
        needed, and past twice the largest deployment searched there is no
        point in growing.
        """
        if why.code not in (
            "planner.concurrency_above_capacity",
            "planner.queueing",
            "planner.rate_short",
            "planner.tpot_above_target",
            "planner.ttft_above_target",
        ):
            return None
        if why.figures.get("kv_limited") and why.code in (
            "planner.concurrency_above_capacity",
            "planner.queueing",
        ):
            # A batch the KV cache limits grows faster than the node count: each rank holds fewer
            # experts, so more of its memory goes to KV (K3 at 24,576 + 1,536 tokens a request:
            # 4 × A3 at DP4 serve 44 at once, 8 × A3 at DP16 serve 256, 5.8 × for twice the
            # nodes).  nodes × gap is no lower bound there; the gap patience ends the family.
            return None
        projected = math.ceil(shape.nodes * gap)
        if projected <= PROJECTION_MARGIN * self.o.max_nodes:
            return None
        # The serving reason, its full stop dropped, and the nodes it would take.
        return rejection(
            "planner.projected",
            fam.server,
            shape.nodes,
            STAGE_SERVING,
            as_code=why.code,
            figures={**dict(why.figures), "projected_nodes": projected},
            field=why.field,
            reason_en=why.message_en[:-1],
            reason_zh=why.message_zh[:-1],
            projected=projected,
            max_nodes=self.o.max_nodes,
        )

    def plan_shape(self, fam: Family, shape: Shape, variant: Variant) -> Candidate | OnRequest | Rejection:
        s = fam.server
        rack, inline, _per = self.racks.choose_rack(s, shape)
        commercial = self.build.commercial(s, shape.nodes, rack)
        req = self.build.request(
            s,
            shape,
            variant.parallel,
            variant.decode_parallel,
            variant.serving,
            variant.concurrency,
            rack=rack,
            commercial=commercial,
        )
        self.stats["plans"] += 1
        fam.plans += 1
        result = plan(req)
        label = layout_label(variant.parallel, variant.decode_parallel)
        outcome = self.judge.judge_plan(s, shape, req, result, rack, inline, variant, label)
        if isinstance(outcome, Rejection):
            self.evaluated.append(evaluated_rejection(s, shape, label, outcome))
        elif isinstance(outcome, OnRequest):
            self.evaluated.append(
                Evaluated(
                    s.slug,
                    s.name,
                    shape,
                    label,
                    STAGE_FEASIBLE,
                    True,
                    figures={
                        "price": "on request",
                        "output_tokens_per_s": round(outcome.output_tokens_per_s, 1),
                        "ttft_s": round(outcome.ttft_s, 3),
                        "tpot_ms": round(outcome.tpot_ms, 2),
                    },
                )
            )
        else:
            self.evaluated.append(
                Evaluated(
                    s.slug,
                    s.name,
                    shape,
                    label,
                    STAGE_FEASIBLE,
                    True,
                    figures={
                        "cost_per_m": str(outcome.cost_per_m),
                        "tco_total": str(outcome.tco_total),
                        "output_tokens_per_s": round(outcome.output_tokens_per_s, 1),
                        "ttft_s": round(outcome.ttft_s, 3),
                        "tpot_ms": round(outcome.tpot_ms, 2),
                    },
                )
            )
        return outcome

    # ------------------------------------------------------------------ entry

    def run(self) -> PlannerResult:
        started = time.perf_counter()
        families = [Family(s) for s in self.q.servers]
        for fam in families:
            self.search_family(fam)
        ranked = sorted(self.candidates, key=self.judge.sort_key)
        front_ids = {c.id for c in pareto_front(ranked)}
        ranked = [replace(c, rank=i + 1, pareto=c.id in front_ids) for i, c in enumerate(ranked)]
        pareto = tuple(c for c in ranked if c.pareto)
        # A server with a priced deployment is listed with its price, never also as "on request" (a
        # larger shape of it can reach a line the price list does not price, e.g. a switch).
        priced = {c.server.slug for c in ranked}
        self.on_request = [o for o in self.on_request if o.server.slug not in priced]
        feasible_servers = priced | {o.server.slug for o in self.on_request}
        rejected = []
        reasons: dict[str, tuple[Rejection, ...]] = {}
        for fam in families:
            distinct: dict[str, Rejection] = {}
            for r in fam.reasons:
                distinct.setdefault(r.code, r)
            reasons[fam.server.slug] = tuple(distinct.values())
            if fam.server.slug not in feasible_servers:
                rejected.append(primary_reason(fam.server, fam.reasons, self.o.max_nodes))
        binding = None if ranked or self.on_request else binding_constraint(rejected, self.q)
        stats = dict(self.stats)
        stats["families"] = len(families)
        stats["feasible"] = len(ranked)
        stats["price_on_request"] = len(self.on_request)
        stats["elapsed_ms"] = round((time.perf_counter() - started) * 1000, 1)
        return PlannerResult(
            query=self.q,
            candidates=tuple(ranked),
            pareto=pareto,
            rejected=tuple(rejected),
            family_reasons=reasons,
            evaluated=tuple(self.evaluated),
            binding=binding,
            stats=stats,
            on_request=tuple(sorted(self.on_request, key=lambda o: (o.shape.nodes, o.server.slug))),
        )


def search(query: PlannerQuery, catalog: PlannerCatalog) -> PlannerResult:
    """Every feasible deployment found for ``query``, ranked, with the Pareto front and rejections."""
    return Search(query, catalog).run()
