"""Serving variants: per shape and layout, the cheapest evaluation (layout + memory +
performance, no power, racks, network or TCO) that meets the workload, escalating memory
utilisation and the KV-cache dtype only when the KV cache is what limits."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from ..engine.checks import unworded
from ..engine.layout import resolve_layout
from ..engine.memory import size_memory
from ..engine.performance import estimate_performance
from ..engine.types import ParallelSpec, PlanRequest, ServerSpec, Severity, TopologyKind
from .build import MAX_NUM_SEQS_LADDER, RequestBuilder, ceil_div
from .judge import CAPACITY_CHECKS, Judge
from .query import PlannerQuery
from .results import (
    STAGE_SERVING,
    Evaluated,
    Family,
    Rejection,
    Shape,
    Variant,
    evaluated_rejection,
    layout_label,
)

MAX_CHEAP_PER_FAMILY = 160  # a safety net: the search's own stops end a family long before it


def cheap_exhausted(fam: Family) -> bool:
    return fam.cheap >= MAX_CHEAP_PER_FAMILY


def _gap_key(r: Rejection) -> float:
    gap = r.figures.get("gap")
    return float(gap) if isinstance(gap, (int, float)) else math.inf


class ServingSearch:
    """Per shape, the serving variant (layout × memory utilisation × KV dtype × batch) that serves most."""

    def __init__(
        self,
        query: PlannerQuery,
        build: RequestBuilder,
        judge: Judge,
        stats: dict[str, Any],
        evaluated: list[Evaluated],
    ):
        self.q = query
        self.w = query.workload
        self.o = query.options
        self.build = build
        self.judge = judge
        self.stats = stats
        self.evaluated = evaluated

    def cheap(self, fam: Family, req: PlanRequest):
        """layout + memory + performance for one request (no power, racks, network, TCO): a screening
        pass, judged by its errors, its operating point and its capacity (warnings unworded, no figures,
        no design point: the variant kept is planned in full by ``plan()``)."""
        self.stats["cheap_evaluations"] += 1
        fam.cheap += 1
        with unworded():
            return self._cheap(req)

    def _cheap(self, req: PlanRequest):
        layout = resolve_layout(req)
        if any(c.severity == Severity.ERROR for c in layout.checks):
            return layout, None, None, next(c for c in layout.checks if c.severity == Severity.ERROR)
        memory = size_memory(req, layout, screening=True)
        error = next((c for c in memory.checks if c.severity == Severity.ERROR), None)
        if error is not None:
            return layout, memory, None, error
        # A first pass: the operating point and the capacity (the design point's searches are plan()'s)
        perf = estimate_performance(req, layout, memory, screening=True)
        # The capacity check is judged by serving_problem() with its gap, as plan() would raise it.
        error = next(
            (c for c in perf.checks if c.severity == Severity.ERROR and c.code not in CAPACITY_CHECKS), None
        )
        return layout, memory, perf, error

    def ladder(self, server: ServerSpec | None = None) -> list[tuple[float, str]]:
        utils = sorted(self.o.gpu_memory_utilizations)
        dtypes = self.build.kv_dtypes_for(server) if server is not None else self.o.kv_cache_dtypes
        out = [(u, dtypes[0]) for u in utils]
        if len(dtypes) > 1:
            out.append((utils[-1], dtypes[-1]))
        return out

    def covering_seqs(self, offered: int) -> int:
        return next((m for m in MAX_NUM_SEQS_LADDER if m >= offered), MAX_NUM_SEQS_LADDER[-1])

    def try_variant(self, fam: Family, server, shape, p, d, util, kv):
        """One serving variant of one layout: (Variant | None, problem, error check, request)."""
        label = layout_label(p, d)
        counted = self._counted_dp(shape, p, d)
        if self.w.concurrency is not None:
            concurrency = self.w.concurrency
            seqs = self.covering_seqs(ceil_div(concurrency, counted))
            req = self.build.request(
                server, shape, p, d, self.build.serving(server, util, kv, seqs, shape.kind), concurrency
            )
            _layout, _memory, perf, error = self.cheap(fam, req)
            if error is not None or perf is None:
                return None, None, error, req
            problem = self.judge.serving_problem(perf, concurrency, server, shape, label)
            if problem is not None:
                return None, problem, None, req
            return self._variant(p, d, req, perf), None, None, req
        # A request rate: find the smallest batch whose saturated throughput reaches it,
        # then the concurrency that delivers the rate (Little's law on the engine's figures).
        rate = float(self.w.requests_per_s or 0.0)
        last: tuple = (None, None, None, None)
        for seqs in MAX_NUM_SEQS_LADDER:
            saturated = counted * seqs
            req = self.build.request(
                server, shape, p, d, self.build.serving(server, util, kv, seqs, shape.kind), saturated
            )
            _layout, _memory, perf, error = self.cheap(fam, req)
            if error is not None or perf is None:
                return None, None, error, req
            problem = self.judge.serving_problem(perf, saturated, server, shape, label)
            kv_limited = (
                problem is not None
                and problem.code in ("planner.queueing", "planner.concurrency_above_capacity")
                and bool(problem.figures["kv_limited"])
            )
            if perf.requests_per_s >= rate * (1 - 1e-9):
                concurrency = max(
                    1, min(saturated, math.ceil(rate * saturated / max(perf.requests_per_s, 1e-9)))
                )
                req2 = replace(req, workload=self.build.workload(concurrency))
                _l2, _m2, perf2, error2 = self.cheap(fam, req2)
                problem2 = (
                    self.judge.serving_problem(perf2, concurrency, server, shape, label)
                    if perf2 is not None
                    else None
                )
                if error2 is None and perf2 is not None and problem2 is None:
                    return self._variant(p, d, req2, perf2), None, None, req2
                if problem is None:
                    return self._variant(p, d, req, perf), None, None, req
                # The rate is met; what is left is latency, which a bigger batch only worsens.
                return None, problem2 or problem, error2, req2
            latency = problem is not None and problem.code in (
                "planner.tpot_above_target",
                "planner.ttft_above_target",
            )
            last = (
                None,
                problem if latency else self.judge.rate_problem(perf, kv_limited, server, shape, label),
                None,
                req,
            )
            if kv_limited or latency:
                break  # a larger batch will not run (KV cache) or only adds latency
        return last

    def _counted_dp(self, shape: Shape, p: ParallelSpec, d: ParallelSpec | None) -> int:
        if shape.kind == TopologyKind.DISAGGREGATED:
            return (d or p).dp
        if shape.kind == TopologyKind.TENANT_PAIR:
            return 2 * p.dp
        return p.dp

    def _variant(self, p, d, req: PlanRequest, perf) -> Variant:
        return Variant(
            parallel=p,
            decode_parallel=d,
            serving=req.serving,
            concurrency=req.workload.concurrency,
            requests_per_s=perf.requests_per_s,
            output_tokens_per_s=perf.output_tokens_per_s,
            ttft_s=perf.ttft_s,
            tpot_s=perf.tpot_s,
        )

    def choose_serving(self, fam: Family, shape: Shape, pairs) -> tuple[Variant | None, Rejection | None]:
        """The best serving variant across layouts (most requests/s), or why none works."""
        s = fam.server
        best: Variant | None = None
        worst_problem = None
        for p, d in pairs:
            label = layout_label(p, d)
            chosen = None
            problem = error = None
            for util, kv in self.ladder(s):
                variant, problem, error, _req = self.try_variant(fam, s, shape, p, d, util, kv)
                if variant is not None:
                    chosen = variant
                    break
                # More memory or an FP8 KV cache helps only when the KV cache is what limits
                # (a memory error, a KV-limited batch, or TPOT from reading the KV cache).
                kv_related = (error is not None and error.code.startswith("memory.")) or (
                    problem is not None and bool(problem.figures["kv_limited"])
                )
                if not kv_related or cheap_exhausted(fam):
                    break
            if chosen is not None:
                self.evaluated.append(
                    Evaluated(
                        s.slug,
                        s.name,
                        shape,
                        label,
                        STAGE_SERVING,
                        True,
                        figures={
                            "output_tokens_per_s": round(chosen.output_tokens_per_s, 1),
                            "requests_per_s": round(chosen.requests_per_s, 4),
                            "ttft_s": round(chosen.ttft_s, 3),
                            "tpot_ms": round(chosen.tpot_s * 1000, 2),
                            "gpu_memory_utilization": chosen.serving.gpu_memory_utilization,
                            "kv_cache_dtype": chosen.serving.kv_cache_dtype,
                            "max_num_seqs": chosen.serving.max_num_seqs,
                            "concurrency": chosen.concurrency,
                        },
                    )
                )
                if best is None or chosen.requests_per_s > best.requests_per_s * (1 + 1e-9):
                    best = chosen
                continue
            rejection = self.judge.serving_rejection(s, shape, label, problem, error)
            self.evaluated.append(evaluated_rejection(s, shape, label, rejection))
            # Report the layout closest to working: a serving gap (smallest first) over an error
            # without one, so the family's gap is seen to close as it grows.
            if worst_problem is None or _gap_key(rejection) < _gap_key(worst_problem):
                worst_problem = rejection
        if best is not None:
            return best, None
        return None, worst_problem
