"""Judging, ranking and explaining: whether a family, a shape, a serving variant or a full plan
meets the query, the reason (a rejection with its numbers, worded by the check catalogue:
engine/checks/catalogue/planner.py) when it does not, the order candidates are ranked in, the
Pareto front, and the reason each family and the whole search stop.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from ..drawings.fmt import format_money
from ..engine.layout import parallel_label
from ..engine.types import (
    Check,
    ParallelSpec,
    PerformanceResult,
    PlanRequest,
    PlanResult,
    RackSpec,
    ServerSpec,
    ServingSpec,
    Severity,
    TcoResult,
)
from .build import RequestBuilder, ceil_div
from .query import PlannerQuery, plain_number
from .racks import RackChooser
from .results import (
    STAGE_CONSTRAINT,
    STAGE_ENGINE,
    STAGE_FAMILY,
    STAGE_LAYOUT,
    STAGE_MEMORY,
    STAGE_SERVING,
    Candidate,
    OnRequest,
    Rejection,
    Shape,
    Variant,
    rejection,
    shape_label,
    short_name,
)

# The engine's ERROR check for a quoted concurrency above what the cluster serves at once
# (engine/performance/, capacity_concurrency).  The planner reads it as a serving gap
# (concurrency ÷ capacity) that more nodes, DP ranks or KV cache close, not as a dead end.
CAPACITY_CHECK = "performance.concurrency_above_capacity"
# A target out of reach and a load above capacity are said as one statement, an error for the load's
# sake (engine/performance/design.py unreachable_check): read as the same serving gap.
UNREACHABLE_CHECK = "performance.design_point_unreachable"
CAPACITY_CHECKS = frozenset({CAPACITY_CHECK, UNREACHABLE_CHECK})

# Request fields a user sets as constraints (used to name the binding constraint).
CONSTRAINT_FIELDS = (
    "constraints.max_capex",
    "constraints.max_lease_per_month",
    "constraints.max_power_kw",
    "constraints.max_racks",
    "constraints.air_cooled_only",
    "constraints.domestic_only",
    "workload.needs_vision",
    "workload.ttft_target_s",
    "workload.tpot_target_ms",
    "workload.requests_per_s",
    "workload.concurrency",
    "workload.context",
    "options.max_nodes",
    "constraints.currency",
    "constraints.purchase",
)


# The money ceilings the binding constraint names with both sums (its wording in the catalogue).
MONEY_CEILINGS = {
    "constraints.max_capex": "max_capex",
    "constraints.max_lease_per_month": "max_lease_per_month",
}


def _money(amount: Decimal, currency: str, lang: str) -> str:
    return format_money(amount, currency, "zh-hans" if lang == "zh" else "en")


def _gap(gap: float, kv: bool, **figures: Any) -> dict[str, Any]:
    """A serving problem's figures: its own, then ``gap`` (actual ÷ target, > 1) and ``kv_limited``
    (a bigger KV budget could help)."""
    return {**figures, "gap": round(gap, 4), "kv_limited": kv}


@dataclass(frozen=True)
class Planned:
    """A shape's full plan as :meth:`Judge.judge_plan` reads it: the server, the shape, the request and
    what ``plan()`` made of it, the rack (``inline``: capped in the request), the serving variant and
    its layout as the seeds write it."""

    server: ServerSpec
    shape: Shape
    req: PlanRequest
    result: PlanResult
    rack: RackSpec
    inline: bool
    variant: Variant
    label: str

    @property
    def shape_en(self) -> str:
        return shape_label(self.server, self.shape)

    @property
    def shape_zh(self) -> str:
        return shape_label(self.server, self.shape, "zh")

    @property
    def on_request(self) -> bool:
        """The quote prices a line on request (a server, a switch …): no cost to rank it by."""
        tco = self.result.tco
        return tco is not None and bool(tco.prices_on_request)


def _lease_month(tco: TcoResult) -> Decimal | None:
    """A month of rent; None without a lease offer in the catalog."""
    rent = tco.annual.lease_rent
    return (rent / 12).quantize(Decimal("0.01")) if rent is not None else None


def _design(perf: PerformanceResult) -> tuple[int, float]:
    """(concurrent requests, output tokens/s) carried within the latency targets; 0 out of their reach."""
    dp = perf.design_point
    if dp is None or dp.limited_by == "unreachable":
        return 0, 0.0
    return dp.concurrency, dp.output_tokens_per_s


class Judge:
    """Measures what the search found against the query's workload targets and constraints."""

    def __init__(self, query: PlannerQuery, build: RequestBuilder, racks: RackChooser):
        self.q = query
        self.w = query.workload
        self.c = query.constraints
        self.o = query.options
        self.build = build
        self.racks = racks

    # ------------------------------------------------------------------ before sizing

    def family_filter(self, s: ServerSpec) -> Rejection | None:
        """Why a whole server family is out before any sizing (no engine call), or None."""
        return self._accelerator_filter(s) or self._rack_filter(s) or self._price_filter(s)

    def _accelerator_filter(self, s: ServerSpec) -> Rejection | None:
        """Not domestic under ``domestic_only``; no vLLM on the accelerator; text only for images."""
        name = short_name(s)
        acc = s.accelerator
        if self.c.domestic_only and not acc.domestic:
            return rejection(
                "planner.not_domestic",
                s,
                0,
                STAGE_FAMILY,
                variant=None if acc.vendor else "no_vendor",
                name=name,
                accelerator=acc.name,
                vendor=acc.vendor,
            )
        # The engine's own rules (engine/capability.py), so the planner and the configurator agree.
        if acc.vllm_support == "none":
            return rejection(
                "planner.vllm_unsupported",
                s,
                0,
                STAGE_FAMILY,
                variant=None if acc.vllm_support_note else "no_note",
                name=name,
                accelerator=acc.name,
                why=acc.vllm_support_note,
            )
        if self.w.needs_vision and (s.validated_text_only or s.slug in self.q.model.text_only_servers):
            return rejection("planner.text_only_server", s, 0, STAGE_FAMILY, name=name)
        return None

    def _rack_filter(self, s: ServerSpec) -> Rejection | None:
        """No rack type holds the server within its power and cooling limits (air cooling, if asked)."""
        if self.racks.rack_options(s):
            return None
        if self.c.air_cooled_only:
            limit = self.q.site.air_cooling_kw_limit
            return rejection(
                "planner.too_hot_for_air",
                s,
                0,
                STAGE_FAMILY,
                figures={"server_kw": s.max_input_kw, "limit_kw": limit},
                name=short_name(s),
                server_kw=s.max_input_kw,
                limit=limit,
            )
        return rejection(
            "planner.no_rack",
            s,
            0,
            STAGE_FAMILY,
            figures={"server_kw": s.max_input_kw, "server_u": s.rack_units},
            name=short_name(s),
            units=s.rack_units,
            server_kw=s.max_input_kw,
        )

    def _price_filter(self, s: ServerSpec) -> Rejection | None:
        """No purchase price (buying) or no monthly lease price (leasing) in the price list."""
        commercial = self.build.commercial(s, 1, self.racks.rack_options(s)[0][0])
        listed = None if self.q.price_list else "no_list"
        # A server without a purchase price is searched all the same: its feasible deployment is listed
        # as "price on request" after the priced ones (``judge_plan``), not dropped.
        if (
            self.c.purchase == "buy"
            and commercial.server_unit_price <= 0
            and "server" not in commercial.prices_on_request
        ):
            return rejection(
                "planner.no_price",
                s,
                0,
                STAGE_FAMILY,
                variant=listed,
                name=short_name(s),
                price_list=self.q.price_list,
                currency=self.c.currency,
            )
        if self.c.purchase == "lease" and commercial.server_lease_per_month <= 0:
            return rejection(
                "planner.no_lease_price",
                s,
                0,
                STAGE_FAMILY,
                variant=listed,
                name=short_name(s),
                price_list=self.q.price_list,
                currency=self.c.currency,
            )
        return None

    def bound_rejection(self, s: ServerSpec, shape: Shape) -> Rejection | None:
        """Servers alone already exceed a ceiling: capex, rent, power, racks (monotone in nodes)."""
        n = shape.nodes
        label = shape_label(s, shape)
        label_zh = shape_label(s, shape, "zh")
        cur = self.c.currency
        rack, _inline, per = self.racks.choose_rack(s, shape)
        commercial = self.build.commercial(s, n, rack)
        if self.c.purchase == "buy" and self.c.max_capex is not None:
            low = n * commercial.server_unit_price * (1 - commercial.quote_discount)
            if low > self.c.max_capex:
                return rejection(
                    "planner.over_budget",
                    s,
                    n,
                    STAGE_CONSTRAINT,
                    variant="servers",
                    figures={"needed": str(low), "limit": str(self.c.max_capex)},
                    shape_en=label,
                    shape_zh=label_zh,
                    needed_en=_money(low, cur, "en"),
                    needed_zh=_money(low, cur, "zh"),
                    limit_en=_money(self.c.max_capex, cur, "en"),
                    limit_zh=_money(self.c.max_capex, cur, "zh"),
                )
        if self.c.purchase == "lease" and self.c.max_lease_per_month is not None:
            low = n * commercial.server_lease_per_month
            if low > self.c.max_lease_per_month:
                return rejection(
                    "planner.over_lease",
                    s,
                    n,
                    STAGE_CONSTRAINT,
                    variant="servers",
                    figures={"needed": str(low), "limit": str(self.c.max_lease_per_month)},
                    shape_en=label,
                    shape_zh=label_zh,
                    needed_en=_money(low, cur, "en"),
                    needed_zh=_money(low, cur, "zh"),
                    limit_en=_money(self.c.max_lease_per_month, cur, "en"),
                    limit_zh=_money(self.c.max_lease_per_month, cur, "zh"),
                )
        if self.c.max_power_kw is not None:
            low_kw = n * s.max_input_kw
            if low_kw > self.c.max_power_kw + 1e-9:
                return rejection(
                    "planner.over_power",
                    s,
                    n,
                    STAGE_CONSTRAINT,
                    variant="servers",
                    figures={"needed": low_kw, "limit": self.c.max_power_kw},
                    shape_en=label,
                    shape_zh=label_zh,
                    needed=low_kw,
                    limit=self.c.max_power_kw,
                )
        if self.c.max_racks is not None:
            low_racks = sum(ceil_div(g, per) for g in shape.group_nodes)
            if low_racks > self.c.max_racks:
                return rejection(
                    "planner.over_racks",
                    s,
                    n,
                    STAGE_CONSTRAINT,
                    variant="servers",
                    figures={"needed": low_racks, "limit": self.c.max_racks},
                    shape_en=label,
                    shape_zh=label_zh,
                    needed=low_racks,
                    per=per,
                    rack=rack.name,
                    limit=self.c.max_racks,
                )
        return None

    # ------------------------------------------------------------------ memory and serving

    def memory_rejection(
        self, s: ServerSpec, n: int, p: ParallelSpec, error: Check | None, serving: ServingSpec
    ) -> Rejection:
        """Why the weights, or one ``context``-token sequence, do not fit a rank of ``n`` nodes."""
        name = short_name(s)
        if error is None:
            return rejection("planner.memory_short", s, n, STAGE_MEMORY, variant="unknown", name=name, n=n)
        figures = dict(error.figures)
        if error.code == "memory.weights_do_not_fit":
            return rejection(
                "planner.memory_short",
                s,
                n,
                STAGE_MEMORY,
                figures=figures,
                name=name,
                n=n,
                short_gb=figures.get("shortfall_bytes", 0) / 1e9,
                layout=parallel_label(p),
                weights=figures.get("weights_bytes", 0),
                usable=figures.get("usable_bytes", 0),
                util=serving.gpu_memory_utilization,
            )
        if error.code == "memory.one_sequence_does_not_fit":
            return rejection(
                "planner.sequence_does_not_fit",
                s,
                n,
                STAGE_MEMORY,
                figures=figures,
                name=name,
                n=n,
                max_model_len=serving.max_model_len,
                short_gb=figures.get("shortfall_bytes", 0) / 1e9,
                layout=parallel_label(p),
            )
        return rejection(
            "planner.memory_short",
            s,
            n,
            STAGE_MEMORY,
            variant="check",
            figures=figures,
            name=name,
            n=n,
            message_en=error.message_en,
            message_zh=error.message_zh,
        )

    def serving_problem(
        self, perf: PerformanceResult, concurrency: int, s: ServerSpec, shape: Shape, label: str
    ) -> Rejection | None:
        """The first unmet serving requirement of ``shape`` at layout ``label``, or None.

        Its figures carry ``gap`` = actual ÷ target (> 1) and ``kv_limited``: whether a bigger KV
        budget could help (the KV cache limits the batch, or TPOT reads it).

        First the limit ``plan()`` enforces as an ERROR (``performance.concurrency_above_capacity``):
        the concurrent requests the deployment serves at once, Σ DP ranks × min(max_num_seqs,
        sequences the KV cache holds), and for xPyD the most the prefill pool sustains
        (``PerformanceResult.capacity_concurrency``).  Its gap is concurrency ÷ capacity.
        """
        head, head_zh = shape_label(s, shape), shape_label(s, shape, "zh")
        n = shape.nodes
        capacity = perf.capacity_concurrency
        counted = any(g.counts_toward_throughput for g in perf.groups)
        if concurrency > 0 and capacity > 0 and concurrency > capacity and counted:
            kv = any(g.counts_toward_throughput and g.batch_limited_by == "kv_capacity" for g in perf.groups)
            return rejection(
                "planner.concurrency_above_capacity",
                s,
                n,
                STAGE_SERVING,
                variant="kv" if kv else None,
                figures=_gap(concurrency / capacity, kv, concurrency=concurrency, capacity=capacity),
                shape_en=head,
                shape_zh=head_zh,
                layout=label,
                concurrency=concurrency,
                capacity=capacity,
            )
        for g in perf.groups:
            if g.counts_toward_throughput and g.batch_limited_by in ("kv_capacity", "max_num_seqs"):
                kv = g.batch_limited_by == "kv_capacity"
                return rejection(
                    "planner.queueing",
                    s,
                    n,
                    STAGE_SERVING,
                    variant=None if kv else "max_num_seqs",
                    figures=_gap(g.offered_seqs_per_dp_rank / max(g.batch_per_dp_rank, 1), kv),
                    shape_en=head,
                    shape_zh=head_zh,
                    layout=label,
                    concurrency=concurrency,
                    batch=g.batch_per_dp_rank,
                    offered=g.offered_seqs_per_dp_rank,
                )
        if perf.requests_per_s <= 0 or perf.output_tokens_per_s <= 0:
            return rejection(
                "planner.no_throughput",
                s,
                n,
                STAGE_SERVING,
                figures=_gap(1e9, False),
                shape_en=head,
                shape_zh=head_zh,
                layout=label,
            )
        return self._latency_problem(perf, s, shape, label) or self._rate_problem(perf, s, shape, label)

    def _latency_problem(
        self, perf: PerformanceResult, s: ServerSpec, shape: Shape, label: str
    ) -> Rejection | None:
        """TTFT or TPOT over its target (TPOT reads the KV cache: a bigger KV budget may help)."""
        if self.w.ttft_target_s is not None and perf.ttft_s > self.w.ttft_target_s:
            return rejection(
                "planner.ttft_above_target",
                s,
                shape.nodes,
                STAGE_SERVING,
                figures=_gap(perf.ttft_s / self.w.ttft_target_s, False),
                shape_en=shape_label(s, shape),
                shape_zh=shape_label(s, shape, "zh"),
                layout=label,
                ttft_s=perf.ttft_s,
                target=self.w.ttft_target_s,
            )
        if self.w.tpot_target_ms is not None and perf.tpot_s * 1000 > self.w.tpot_target_ms:
            return rejection(
                "planner.tpot_above_target",
                s,
                shape.nodes,
                STAGE_SERVING,
                figures=_gap(perf.tpot_s * 1000 / self.w.tpot_target_ms, True),
                shape_en=shape_label(s, shape),
                shape_zh=shape_label(s, shape, "zh"),
                layout=label,
                tpot_ms=perf.tpot_s * 1000,
                target=self.w.tpot_target_ms,
            )
        return None

    def _rate_problem(
        self, perf: PerformanceResult, s: ServerSpec, shape: Shape, label: str
    ) -> Rejection | None:
        """The request rate asked for is not reached."""
        if self.w.requests_per_s is None or perf.requests_per_s >= self.w.requests_per_s * (1 - 1e-9):
            return None
        return rejection(
            "planner.rate_short",
            s,
            shape.nodes,
            STAGE_SERVING,
            figures=_gap(self.w.requests_per_s / max(perf.requests_per_s, 1e-9), False),
            shape_en=shape_label(s, shape),
            shape_zh=shape_label(s, shape, "zh"),
            layout=label,
            rate=perf.requests_per_s,
            needed=self.w.requests_per_s,
        )

    def rate_problem(
        self, perf: PerformanceResult, kv_limited: bool, s: ServerSpec, shape: Shape, label: str
    ) -> Rejection:
        """The most requests/s the layout reaches at any batch, short of the rate asked for."""
        rate = float(self.w.requests_per_s or 0.0)
        return rejection(
            "planner.rate_short",
            s,
            shape.nodes,
            STAGE_SERVING,
            variant="at_most",
            figures=_gap(rate / max(perf.requests_per_s, 1e-9), kv_limited),
            shape_en=shape_label(s, shape),
            shape_zh=shape_label(s, shape, "zh"),
            layout=label,
            rate=perf.requests_per_s,
            needed=rate,
        )

    def serving_rejection(
        self, s: ServerSpec, shape: Shape, label: str, problem: Rejection | None, error: Check | None
    ) -> Rejection:
        """Why no serving variant of a layout works: the screening's error check, else its serving problem."""
        if error is None:
            assert problem is not None  # a variant that failed did so by an error or a problem
            return problem
        figures = {"engine_code": error.code, **dict(error.figures)}
        if error.code.startswith("memory."):
            return rejection(
                "planner.memory_short",
                s,
                shape.nodes,
                STAGE_MEMORY,
                variant="layout",
                figures=figures,
                shape_en=shape_label(s, shape),
                shape_zh=shape_label(s, shape, "zh"),
                layout=label,
                field=error.field or "workload.context",
                message_en=error.message_en,
                message_zh=error.message_zh,
            )
        return rejection(
            "planner.engine",
            s,
            shape.nodes,
            STAGE_ENGINE,
            as_code=f"planner.engine.{error.code}",
            figures=figures,
            shape_en=shape_label(s, shape),
            shape_zh=shape_label(s, shape, "zh"),
            layout=label,
            field=error.field or "workload.context",
            message_en=error.message_en,
            message_zh=error.message_zh,
        )

    # ------------------------------------------------------------------ the full plan

    def judge_plan(
        self,
        s: ServerSpec,
        shape: Shape,
        req: PlanRequest,
        result: PlanResult,
        rack: RackSpec,
        inline: bool,
        variant: Variant,
        label: str,
    ) -> Candidate | OnRequest | Rejection:
        """The full plan of a shape as a :class:`Candidate` (or, priced on request, an :class:`OnRequest`),
        or the first check or constraint it fails: an engine error, no cost to judge, a serving
        requirement, a constraint, in that order."""
        p = Planned(s, shape, req, result, rack, inline, variant, label)
        refusal = self._engine_error(p) or self._unpriceable(p)
        if refusal is not None:
            return refusal
        perf = result.performance
        assert perf is not None  # _unpriceable refuses a plan without its performance
        refusal = self.serving_problem(perf, req.workload.concurrency, s, shape, label)
        if refusal is None:
            refusal = self._over_constraint(p)
        if refusal is not None:
            return refusal
        return self._on_request(p) if p.on_request else self._candidate(p)

    def _engine_error(self, p: Planned) -> Rejection | None:
        """The plan's first error check (capacity aside: ``serving_problem`` reads it as a gap)."""
        error = next(
            (c for c in p.result.checks if c.severity == Severity.ERROR and c.code not in CAPACITY_CHECKS),
            None,
        )
        if error is None:
            return None
        return rejection(
            "planner.engine",
            p.server,
            p.shape.nodes,
            STAGE_ENGINE,
            as_code=f"planner.engine.{error.code}",
            figures={"engine_code": error.code},
            shape_en=p.shape_en,
            shape_zh=p.shape_zh,
            layout=p.label,
            field=error.field or "",
            message_en=error.message_en,
            message_zh=error.message_zh,
        )

    def _unpriceable(self, p: Planned) -> Rejection | None:
        """No cost to judge: priced on request where a budget or a lease needs the cost, or no cost
        per million tokens (no performance, or no token figures on a priced plan)."""
        tco = p.result.tco
        if p.on_request and (self.c.purchase != "buy" or self.c.max_capex is not None):
            return rejection(
                "planner.price_on_request",
                p.server,
                p.shape.nodes,
                STAGE_ENGINE,
                shape_en=p.shape_en,
                shape_zh=p.shape_zh,
                layout=p.label,
                lines=", ".join(tco.prices_on_request if tco is not None else ()),
            )
        if p.result.performance is None or (not p.on_request and (tco is None or tco.tokens is None)):
            return self._no_cost(p)
        return None

    def _no_cost(self, p: Planned) -> Rejection:
        """No cost per million tokens on the purchase basis."""
        return rejection(
            "planner.no_throughput",
            p.server,
            p.shape.nodes,
            STAGE_ENGINE,
            variant="no_cost",
            shape_en=p.shape_en,
            shape_zh=p.shape_zh,
            layout=p.label,
        )

    def _over_constraint(self, p: Planned) -> Rejection | None:
        """The first ceiling the planned figures exceed: capex or rent, site power, racks, air cooling."""
        result, tco, cur = p.result, p.result.tco, self.c.currency
        assert result.power is not None and result.racks is not None  # a plan that reached its TCO has both
        assert tco is not None  # priced or on request, a plan judged here has its TCO
        # No lease offer in the catalog: no rent (a lease request was refused for that reason).
        lease_month = _lease_month(tco)
        s, n, head, head_zh = p.server, p.shape.nodes, p.shape_en, p.shape_zh
        if self.c.purchase == "buy" and self.c.max_capex is not None and tco.capex.total > self.c.max_capex:
            return rejection(
                "planner.over_budget",
                s,
                n,
                STAGE_CONSTRAINT,
                figures={"needed": str(tco.capex.total), "limit": str(self.c.max_capex)},
                shape_en=head,
                shape_zh=head_zh,
                layout=p.label,
                needed_en=_money(tco.capex.total, cur, "en"),
                needed_zh=_money(tco.capex.total, cur, "zh"),
                limit_en=_money(self.c.max_capex, cur, "en"),
                limit_zh=_money(self.c.max_capex, cur, "zh"),
            )
        if (
            self.c.purchase == "lease"
            and self.c.max_lease_per_month is not None
            and lease_month is not None
            and lease_month > self.c.max_lease_per_month
        ):
            return rejection(
                "planner.over_lease",
                s,
                n,
                STAGE_CONSTRAINT,
                figures={"needed": str(lease_month), "limit": str(self.c.max_lease_per_month)},
                shape_en=head,
                shape_zh=head_zh,
                layout=p.label,
                needed_en=_money(lease_month, cur, "en"),
                needed_zh=_money(lease_month, cur, "zh"),
                limit_en=_money(self.c.max_lease_per_month, cur, "en"),
                limit_zh=_money(self.c.max_lease_per_month, cur, "zh"),
            )
        if self.c.max_power_kw is not None and result.power.it_kw > self.c.max_power_kw + 1e-9:
            return rejection(
                "planner.over_power",
                s,
                n,
                STAGE_CONSTRAINT,
                figures={"needed": result.power.it_kw, "limit": self.c.max_power_kw},
                shape_en=head,
                shape_zh=head_zh,
                layout=p.label,
                needed=result.power.it_kw,
                limit=self.c.max_power_kw,
            )
        if self.c.max_racks is not None and result.racks.rack_count > self.c.max_racks:
            return rejection(
                "planner.over_racks",
                s,
                n,
                STAGE_CONSTRAINT,
                figures={"needed": result.racks.rack_count, "limit": self.c.max_racks},
                shape_en=head,
                shape_zh=head_zh,
                layout=p.label,
                needed=result.racks.rack_count,
                limit=self.c.max_racks,
            )
        warnings = {c.code for c in result.checks if c.severity == Severity.WARNING}
        if self.c.air_cooled_only and (
            p.req.rack.cooling != "air" or "cooling.rack_exceeds_air_limit" in warnings
        ):
            limit = self.q.site.air_cooling_kw_limit
            return rejection(
                "planner.not_air_cooled",
                s,
                n,
                STAGE_CONSTRAINT,
                figures={"needed": result.racks.max_rack_kw, "limit": limit},
                shape_en=head,
                shape_zh=head_zh,
                layout=p.label,
                needed=result.racks.max_rack_kw,
                limit=limit,
            )
        return None

    def _on_request(self, p: Planned) -> OnRequest:
        """A feasible plan the price list prices on request: listed with its figures, not ranked."""
        perf, power, racks, tco = p.result.performance, p.result.power, p.result.racks, p.result.tco
        assert perf is not None and power is not None and racks is not None and tco is not None
        return OnRequest(
            server=p.server,
            shape=p.shape,
            parallel=p.label,
            concurrency=p.req.workload.concurrency,
            ttft_s=perf.ttft_s,
            tpot_ms=perf.tpot_s * 1000,
            output_tokens_per_s=perf.output_tokens_per_s,
            design_concurrency=_design(perf)[0],
            it_kw=power.it_kw,
            racks=racks.rack_count,
            on_request=tuple(tco.prices_on_request),
            request_json=self.build.request_json(p.server, p.shape, p.variant, p.req, p.rack, p.inline),
        )

    def _candidate(self, p: Planned) -> Candidate | Rejection:
        """A feasible priced plan as a :class:`Candidate`, its cost on the purchase basis (or no cost)."""
        perf, power, racks, tco = p.result.performance, p.result.power, p.result.racks, p.result.tco
        assert perf is not None and power is not None and racks is not None and tco is not None
        tokens = tco.tokens
        assert tokens is not None  # a priced plan with a throughput (_unpriceable)
        cost: Decimal | None
        total: Decimal | None
        annual: Decimal | None
        saving: Decimal | None
        if self.c.purchase == "buy":
            cost, total = tokens.cost_per_m_blended_buy, tco.buy_total
            annual, saving = tokens.annual_cost_buy, tokens.saving_vs_api_buy
        else:
            cost, total = tokens.cost_per_m_blended_lease, tco.lease_total
            annual, saving = tokens.annual_cost_lease, tokens.saving_vs_api_lease
        if cost is None:
            return self._no_cost(p)
        assert total is not None and annual is not None  # a lease cost per token comes with a lease offer
        warnings = tuple(
            (c.code, c.message_en, c.message_zh) for c in p.result.checks if c.severity == Severity.WARNING
        )
        s, shape, variant = p.server, p.shape, p.variant
        design_concurrency, design_tokens = _design(perf)
        return Candidate(
            id=f"{s.slug}:{shape.kind.value}:{'-'.join(str(g) for g in shape.group_nodes)}:tp{variant.parallel.tp}",
            server=s,
            shape=shape,
            parallel=variant.parallel,
            decode_parallel=variant.decode_parallel,
            serving=variant.serving,
            rack=p.rack,
            rack_inline=p.inline,
            concurrency=p.req.workload.concurrency,
            cost_per_m=cost,
            tco_total=total,
            capex=tco.capex.total,
            lease_per_month=_lease_month(tco),
            annual_cost=annual,
            output_tokens_per_s=perf.output_tokens_per_s,
            requests_per_s=perf.requests_per_s,
            ttft_s=perf.ttft_s,
            tpot_ms=perf.tpot_s * 1000,
            e2e_s=perf.ttft_s + self.w.output_tokens * perf.tpot_s,
            it_kw=power.it_kw,
            racks=racks.rack_count,
            saving_vs_api=saving,
            warnings=warnings,
            request_json=self.build.request_json(s, shape, variant, p.req, p.rack, p.inline),
            design_concurrency=design_concurrency,
            design_output_tokens_per_s=design_tokens,
        )

    # ------------------------------------------------------------------ ranking

    def sort_key(self, c: Candidate) -> tuple:
        if self.o.sort == "tco":
            return (c.tco_total, c.cost_per_m, c.shape.nodes, c.id)
        if self.o.sort == "design_capacity":
            return (-c.design_concurrency, c.cost_per_m, c.shape.nodes, c.id)
        return (c.cost_per_m, c.tco_total, c.shape.nodes, c.id)


def pareto_front(candidates: Sequence[Candidate]) -> list[Candidate]:
    """Candidates no other beats on cost per M tokens, throughput and end-to-end latency at once."""
    front = []
    for a in candidates:
        dominated = False
        for b in candidates:
            if b is a:
                continue
            no_worse = (
                b.cost_per_m <= a.cost_per_m
                and b.output_tokens_per_s >= a.output_tokens_per_s
                and b.e2e_s <= a.e2e_s
            )
            better = (
                b.cost_per_m < a.cost_per_m
                or b.output_tokens_per_s > a.output_tokens_per_s
                or b.e2e_s < a.e2e_s
            )
            if no_worse and better:
                dominated = True
                break
        if not dominated:
            front.append(a)
    return front


def primary_reason(server: ServerSpec, reasons: Sequence[Rejection], max_nodes: int) -> Rejection:
    """The reason of the deepest stage a family reached, at its smallest node count."""
    if not reasons:
        return rejection(
            "planner.not_reached",
            server,
            0,
            STAGE_LAYOUT,
            name=short_name(server),
            max_nodes=max_nodes,
        )
    deepest = max(r.stage for r in reasons)
    at = [r for r in reasons if r.stage == deepest]
    return min(at, key=lambda r: r.nodes)


def binding_constraint(rejected: Sequence[Rejection], query: PlannerQuery) -> Rejection | None:
    """The constraint to relax first: among the families that got furthest, the one that stops most.

    A family ruled out before sizing (not domestic, no lease price) says less
    about what to change than the budget that stops every family that works.
    """
    if not rejected:
        return None
    deepest = max(r.stage for r in rejected)
    counts: dict[str, list[Rejection]] = {}
    for r in (r for r in rejected if r.stage == deepest):
        counts.setdefault(r.field or r.code, []).append(r)

    def priority(item):
        fld, rs = item
        user = fld in CONSTRAINT_FIELDS
        return (-len(rs), not user, CONSTRAINT_FIELDS.index(fld) if user else 99)

    fld, rs = min(counts.items(), key=priority)
    example = min(rs, key=lambda r: _as_decimal(r.figures.get("needed")) or Decimal(10**18))
    return _binding(example, fld, len(rs), len(rejected), query.constraints.currency)


def _binding(example: Rejection, fld: str, families: int, total: int, cur: str) -> Rejection:
    """The binding constraint said with its example: what a ceiling allows against what the least
    working deployment needs, else how many families stop at the field and the example's reason."""
    needed = example.figures.get("needed")
    limit = example.figures.get("limit")
    figures = {"families": families, **dict(example.figures)}
    stage = example.stage
    if needed is not None and limit is not None and fld in MONEY_CEILINGS:
        return rejection(
            "planner.binding_constraint",
            example,
            example.nodes,
            stage,
            variant=MONEY_CEILINGS[fld],
            as_code=example.code,
            figures=figures,
            field=fld,
            limit_en=_money(Decimal(str(limit)), cur, "en"),
            limit_zh=_money(Decimal(str(limit)), cur, "zh"),
            needed_en=_money(Decimal(str(needed)), cur, "en"),
            needed_zh=_money(Decimal(str(needed)), cur, "zh"),
        )
    if needed is not None and limit is not None and fld == "constraints.max_racks":
        return rejection(
            "planner.binding_constraint",
            example,
            example.nodes,
            stage,
            variant="max_racks",
            as_code=example.code,
            figures=figures,
            field=fld,
            limit=limit,
            needed=needed,
        )
    if needed is not None and limit is not None and fld == "constraints.max_power_kw":
        return rejection(
            "planner.binding_constraint",
            example,
            example.nodes,
            stage,
            variant="max_power_kw",
            as_code=example.code,
            figures=figures,
            field=fld,
            limit=plain_number(limit),
            needed=float(needed),
        )
    return rejection(
        "planner.binding_constraint",
        example,
        example.nodes,
        stage,
        as_code=example.code,
        figures=figures,
        field=fld,
        families=families,
        total=total,
        message_en=example.message_en,
        message_zh=example.message_zh,
    )


def _as_decimal(value: Any) -> Decimal | None:
    try:
        return Decimal(str(value)) if value is not None else None
    except InvalidOperation:
        return None
