"""Judging, ranking and explaining: whether a family, a shape, a serving variant or a full plan
meets the query, the message (English and Chinese, with the numbers) when it does not, the order
candidates are ranked in, the Pareto front, and the reason each family and the whole search stop.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal, InvalidOperation
from typing import Any

from ..drawings.fmt import format_money
from ..engine.formatting import format_bytes_gb
from ..engine.layout import parallel_label
from ..engine.types import ParallelSpec, PlanResult, ServerSpec, ServingSpec, Severity
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


def _gb(value: float) -> str:
    return format_bytes_gb(value, 1)


def _money(amount: Decimal, currency: str, lang: str) -> str:
    return format_money(amount, currency, "zh-hans" if lang == "zh" else "en")


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
        name = short_name(s)
        acc = s.accelerator

        def reject(code, fld, en, zh, **figures):
            return Rejection(s.slug, s.name, 0, code, fld, STAGE_FAMILY, en, zh, figures)

        if self.c.domestic_only and not acc.domestic:
            return reject(
                "planner.not_domestic",
                "constraints.domestic_only",
                f"{name}: {acc.name} ({acc.vendor or 'foreign vendor'}) is not domestic (Xinchuang) hardware.",
                f"{name}：{acc.name}（{acc.vendor or '国外厂商'}）不属于国产（信创）硬件。",
            )
        # The engine's own rules (engine/capability.py), so the planner and the configurator agree.
        if acc.vllm_support == "none":
            why = acc.vllm_support_note or "not in vLLM's supported hardware"
            return reject(
                "planner.vllm_unsupported",
                "server",
                f"{name}: vLLM does not run on {acc.name} ({why}).",
                f"{name}：vLLM 不支持 {acc.name}（{why}）。",
            )
        if self.w.needs_vision and (s.validated_text_only or s.slug in self.q.model.text_only_servers):
            return reject(
                "planner.text_only_server",
                "workload.needs_vision",
                f"{name}: serves text only (validated with --language-model-only); image input needs the "
                "vision encoder.",
                f"{name}：仅验证了纯文本服务（--language-model-only），图片输入需要加载视觉编码器。",
            )
        rack = self.racks.rack_options(s)
        if not rack and self.c.air_cooled_only:
            limit = self.q.site.air_cooling_kw_limit
            return reject(
                "planner.too_hot_for_air",
                "constraints.air_cooled_only",
                f"{name}: {s.max_input_kw:g} kW per server is over the site's air-cooling limit of {limit:g} kW "
                "per rack (or no air-cooled rack type holds it).",
                f"{name}：单台 {s.max_input_kw:g} kW，超过机房风冷单柜上限 {limit:g} kW（或没有可容纳它的风冷机柜）。",
                server_kw=s.max_input_kw,
                limit_kw=limit,
            )
        if not rack:
            return reject(
                "planner.no_rack",
                "rack",
                f"{name}: no rack type in the catalog holds a {s.rack_units}U, {s.max_input_kw:g} kW server "
                "within its power and cooling limits.",
                f"{name}：目录中没有能在功率与散热上限内容纳该服务器（{s.rack_units}U，{s.max_input_kw:g} kW）的机柜。",
                server_kw=s.max_input_kw,
                server_u=s.rack_units,
            )
        commercial = self.build.commercial(s, 1, rack[0][0])
        list_name = self.q.price_list or f"{self.c.currency} (none in force)"
        # A server without a purchase price is searched all the same: its feasible deployment is listed
        # as "price on request" after the priced ones (``judge_plan``), not dropped.
        if (
            self.c.purchase == "buy"
            and commercial.server_unit_price <= 0
            and "server" not in commercial.prices_on_request
        ):
            return reject(
                "planner.no_price",
                "constraints.currency",
                f"{name}: no purchase price in price list {list_name}.",
                f"{name}：价格表 {list_name} 中没有采购价格。",
            )
        if self.c.purchase == "lease" and commercial.server_lease_per_month <= 0:
            return reject(
                "planner.no_lease_price",
                "constraints.purchase",
                f"{name}: no monthly lease price in price list {list_name}.",
                f"{name}：价格表 {list_name} 中没有月租价格。",
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

        def reject(code, fld, en, zh, **figures):
            return Rejection(s.slug, s.name, n, code, fld, STAGE_CONSTRAINT, en, zh, figures)

        if self.c.purchase == "buy" and self.c.max_capex is not None:
            low = n * commercial.server_unit_price * (1 - commercial.quote_discount)
            if low > self.c.max_capex:
                return reject(
                    "planner.over_budget",
                    "constraints.max_capex",
                    f"{label}: the servers alone cost {_money(low, cur, 'en')}, over the budget of "
                    f"{_money(self.c.max_capex, cur, 'en')}.",
                    f"{label_zh}：仅服务器即需 {_money(low, cur, 'zh')}，超出预算 {_money(self.c.max_capex, cur, 'zh')}。",
                    needed=str(low),
                    limit=str(self.c.max_capex),
                )
        if self.c.purchase == "lease" and self.c.max_lease_per_month is not None:
            low = n * commercial.server_lease_per_month
            if low > self.c.max_lease_per_month:
                return reject(
                    "planner.over_lease",
                    "constraints.max_lease_per_month",
                    f"{label}: the rent is {_money(low, cur, 'en')} a month, over the ceiling of "
                    f"{_money(self.c.max_lease_per_month, cur, 'en')}.",
                    f"{label_zh}：月租 {_money(low, cur, 'zh')}，超出上限 {_money(self.c.max_lease_per_month, cur, 'zh')}。",
                    needed=str(low),
                    limit=str(self.c.max_lease_per_month),
                )
        if self.c.max_power_kw is not None:
            low_kw = n * s.max_input_kw
            if low_kw > self.c.max_power_kw + 1e-9:
                return reject(
                    "planner.over_power",
                    "constraints.max_power_kw",
                    f"{label}: the servers alone draw {low_kw:,.1f} kW at maximum input, over the site's "
                    f"{self.c.max_power_kw:,.1f} kW.",
                    f"{label_zh}：仅服务器最大输入功率即达 {low_kw:,.1f} kW，超过机房可用 {self.c.max_power_kw:,.1f} kW。",
                    needed=low_kw,
                    limit=self.c.max_power_kw,
                )
        if self.c.max_racks is not None:
            low_racks = sum(ceil_div(g, per) for g in shape.group_nodes)
            if low_racks > self.c.max_racks:
                return reject(
                    "planner.over_racks",
                    "constraints.max_racks",
                    f"{label}: needs at least {low_racks} rack{'s' if low_racks != 1 else ''} ({per} server"
                    f"{'s' if per != 1 else ''} per {rack.name}), over the limit of {self.c.max_racks}.",
                    f"{label_zh}：至少需要 {low_racks} 个机柜（{rack.name} 每柜 {per} 台），超过上限 {self.c.max_racks} 个。",
                    needed=low_racks,
                    limit=self.c.max_racks,
                )
        return None

    # ------------------------------------------------------------------ memory and serving

    def memory_rejection(
        self, s: ServerSpec, n: int, p: ParallelSpec, error, serving: ServingSpec
    ) -> Rejection:
        name = short_name(s)
        label = parallel_label(p)
        figures = dict(error.figures) if error is not None else {}
        if error is not None and error.code == "memory.weights_do_not_fit":
            short = figures.get("shortfall_bytes", 0)
            en = (
                f"{name} × {n}: memory short by {short / 1e9:,.1f} GB per rank ({label}: weights "
                f"{_gb(figures.get('weights_bytes', 0))} > usable {_gb(figures.get('usable_bytes', 0))} at "
                f"{serving.gpu_memory_utilization:g} utilisation)."
            )
            zh = (
                f"{name} × {n}：每卡显存缺口 {short / 1e9:,.1f} GB（{label}：权重 "
                f"{_gb(figures.get('weights_bytes', 0))} > 可用 {_gb(figures.get('usable_bytes', 0))}，"
                f"利用率 {serving.gpu_memory_utilization:g}）。"
            )
            code = "planner.memory_short"
        elif error is not None and error.code == "memory.one_sequence_does_not_fit":
            short = figures.get("shortfall_bytes", 0)
            en = (
                f"{name} × {n}: one {serving.max_model_len:,}-token sequence does not fit: KV cache short by "
                f"{short / 1e9:,.1f} GB per rank ({label})."
            )
            zh = (
                f"{name} × {n}：放不下一条 {serving.max_model_len:,} tokens 的请求，每卡 KV 缓存缺口 "
                f"{short / 1e9:,.1f} GB（{label}）。"
            )
            code = "planner.sequence_does_not_fit"
        else:
            en = f"{name} × {n}: {error.message_en if error else 'memory does not fit.'}"
            zh = f"{name} × {n}：{error.message_zh if error else '显存不足。'}"
            code = "planner.memory_short"
        return Rejection(s.slug, s.name, n, code, "workload.context", STAGE_MEMORY, en, zh, figures)

    def serving_problem(self, perf, concurrency: int) -> tuple[str, str, str, str, float, str, dict] | None:
        """(code, field, en, zh, gap, limit, figures) of the first unmet serving requirement.

        ``gap`` = actual ÷ target (> 1); ``limit`` says what a bigger KV budget
        could help with: "kv" (the KV cache limits the batch), else "".

        First the limit ``plan()`` enforces as an ERROR (``performance.concurrency_above_capacity``):
        the concurrent requests the deployment serves at once, Σ DP ranks × min(max_num_seqs,
        sequences the KV cache holds), and for xPyD the most the prefill pool sustains
        (``PerformanceResult.capacity_concurrency``).  Its gap is concurrency ÷ capacity.
        """
        capacity = perf.capacity_concurrency
        counted = any(g.counts_toward_throughput for g in perf.groups)
        if concurrency > 0 and capacity > 0 and concurrency > capacity and counted:
            kv = any(g.counts_toward_throughput and g.batch_limited_by == "kv_capacity" for g in perf.groups)
            return (
                "planner.concurrency_above_capacity",
                "workload.concurrency",
                f"{concurrency:,} concurrent requests exceed the {capacity:,} this deployment serves at once "
                f"({'the KV cache limits the batch' if kv else 'the prefill pool or --max-num-seqs limits it'})",
                f"{concurrency:,} 路并发超过本部署可同时服务的 {capacity:,} 路"
                f"（{'受 KV 缓存限制' if kv else '受预填充能力或 --max-num-seqs 限制'}）",
                concurrency / capacity,
                "kv" if kv else "",
                {"concurrency": concurrency, "capacity": capacity},
            )
        for g in perf.groups:
            if g.counts_toward_throughput and g.batch_limited_by in ("kv_capacity", "max_num_seqs"):
                what = "KV cache" if g.batch_limited_by == "kv_capacity" else "--max-num-seqs"
                return (
                    "planner.queueing",
                    "workload.concurrency",
                    f"{concurrency:,} concurrent requests queue: the {what} runs {g.batch_per_dp_rank} sequences "
                    f"per DP rank, {g.offered_seqs_per_dp_rank} offered",
                    f"{concurrency:,} 路并发需排队：每个 DP rank 受{'KV 缓存' if what == 'KV cache' else ' --max-num-seqs '}"
                    f"限制只能运行 {g.batch_per_dp_rank} 条，需承载 {g.offered_seqs_per_dp_rank} 条",
                    g.offered_seqs_per_dp_rank / max(g.batch_per_dp_rank, 1),
                    "kv" if g.batch_limited_by == "kv_capacity" else "",
                    {},
                )
        if perf.requests_per_s <= 0 or perf.output_tokens_per_s <= 0:
            return (
                "planner.no_throughput",
                "workload.concurrency",
                "no decode throughput",
                "无解码吞吐",
                1e9,
                "",
                {},
            )
        if self.w.ttft_target_s is not None and perf.ttft_s > self.w.ttft_target_s:
            return (
                "planner.ttft_above_target",
                "workload.ttft_target_s",
                f"TTFT {perf.ttft_s:.2f} s over the {self.w.ttft_target_s:g} s target",
                f"首字延迟 {perf.ttft_s:.2f} 秒，超过目标 {self.w.ttft_target_s:g} 秒",
                perf.ttft_s / self.w.ttft_target_s,
                "",
                {},
            )
        if self.w.tpot_target_ms is not None and perf.tpot_s * 1000 > self.w.tpot_target_ms:
            return (
                "planner.tpot_above_target",
                "workload.tpot_target_ms",
                f"TPOT {perf.tpot_s * 1000:.1f} ms over the {self.w.tpot_target_ms:g} ms target",
                f"每字延迟 {perf.tpot_s * 1000:.1f} 毫秒，超过目标 {self.w.tpot_target_ms:g} 毫秒",
                perf.tpot_s * 1000 / self.w.tpot_target_ms,
                "kv",
                {},
            )
        if self.w.requests_per_s is not None and perf.requests_per_s < self.w.requests_per_s * (1 - 1e-9):
            return (
                "planner.rate_short",
                "workload.requests_per_s",
                f"{perf.requests_per_s:,.2f} requests/s, short of the {self.w.requests_per_s:g} requests/s needed",
                f"每秒 {perf.requests_per_s:,.2f} 个请求，低于所需 {self.w.requests_per_s:g} 个",
                self.w.requests_per_s / max(perf.requests_per_s, 1e-9),
                "",
                {},
            )
        return None

    def rate_problem(self, perf, kv_limited: bool) -> tuple[str, str, str, str, float, str, dict]:
        rate = float(self.w.requests_per_s or 0.0)
        return (
            "planner.rate_short",
            "workload.requests_per_s",
            f"{perf.requests_per_s:,.2f} requests/s at most, short of the {rate:g} requests/s needed",
            f"最多每秒 {perf.requests_per_s:,.2f} 个请求，低于所需 {rate:g} 个",
            rate / max(perf.requests_per_s, 1e-9),
            "kv" if kv_limited else "",
            {},
        )

    def serving_rejection(self, s: ServerSpec, shape: Shape, label: str, problem, error) -> Rejection:
        head = shape_label(s, shape)
        head_zh = shape_label(s, shape, "zh")
        if error is not None:
            code = (
                "planner.memory_short" if error.code.startswith("memory.") else f"planner.engine.{error.code}"
            )
            return Rejection(
                s.slug,
                s.name,
                shape.nodes,
                code,
                error.field or "workload.context",
                STAGE_MEMORY if error.code.startswith("memory.") else STAGE_ENGINE,
                f"{head} ({label}): {error.message_en}",
                f"{head_zh}（{label}）：{error.message_zh}",
                {"engine_code": error.code, **dict(error.figures)},
            )
        code, fld, en, zh, gap, limit, figures = problem
        return Rejection(
            s.slug,
            s.name,
            shape.nodes,
            code,
            fld,
            STAGE_SERVING,
            f"{head} ({label}): {en}.",
            f"{head_zh}（{label}）：{zh}。",
            {**figures, "gap": round(gap, 4), "kv_limited": limit == "kv"},
        )

    # ------------------------------------------------------------------ the full plan

    def judge_plan(self, s, shape, req, result: PlanResult, rack, inline, variant, label, head, head_zh):
        """The full plan of a shape as a :class:`Candidate`, or the first check or constraint it fails."""
        cur = self.c.currency

        def reject(code, fld, stage, en, zh, **figures):
            return Rejection(
                s.slug,
                s.name,
                shape.nodes,
                code,
                fld,
                stage,
                f"{head} ({label}): {en}",
                f"{head_zh}（{label}）：{zh}",
                figures,
            )

        error = next(
            (c for c in result.checks if c.severity == Severity.ERROR and c.code not in CAPACITY_CHECKS),
            None,
        )
        if error is not None:
            return reject(
                f"planner.engine.{error.code}",
                error.field or "",
                STAGE_ENGINE,
                error.message_en,
                error.message_zh,
                engine_code=error.code,
            )
        codes = {c.code for c in result.checks if c.severity == Severity.WARNING}
        tco = result.tco
        perf = result.performance
        on_request = tco is not None and bool(tco.prices_on_request)
        if on_request and (self.c.purchase != "buy" or self.c.max_capex is not None):
            lines = ", ".join(tco.prices_on_request if tco is not None else ())
            return reject(
                "planner.price_on_request",
                "commercial.server_unit_price",
                STAGE_ENGINE,
                f"priced on request ({lines}): no cost to hold against the budget or the lease; enter a quoted "
                "price to compare it.",
                f"价格待询（{lines}）：无成本可与预算或租赁比较，请录入报价后再比较。",
            )
        if perf is None or (not on_request and (tco is None or tco.tokens is None)):
            return reject(
                "planner.no_throughput",
                "workload.concurrency",
                STAGE_ENGINE,
                "no cost per million tokens.",
                "无法计算每百万 Token 成本。",
            )
        problem = self.serving_problem(perf, req.workload.concurrency)
        if problem is not None:
            code, fld, en, zh, gap, limit, figures = problem
            return reject(
                code,
                fld,
                STAGE_SERVING,
                en + ".",
                zh + "。",
                **figures,
                gap=round(gap, 4),
                kv_limited=limit == "kv",
            )
        assert result.power is not None and result.racks is not None  # a plan that reached its TCO has both
        assert tco is not None  # priced or on request, a plan judged here has its TCO
        # No lease offer in the catalog: no rent (a lease request was refused above for that reason).
        rent = tco.annual.lease_rent
        lease_month = (rent / 12).quantize(Decimal("0.01")) if rent is not None else None
        if self.c.purchase == "buy" and self.c.max_capex is not None and tco.capex.total > self.c.max_capex:
            return reject(
                "planner.over_budget",
                "constraints.max_capex",
                STAGE_CONSTRAINT,
                f"capex {_money(tco.capex.total, cur, 'en')} is over the budget of {_money(self.c.max_capex, cur, 'en')}.",
                f"采购总价 {_money(tco.capex.total, cur, 'zh')}，超出预算 {_money(self.c.max_capex, cur, 'zh')}。",
                needed=str(tco.capex.total),
                limit=str(self.c.max_capex),
            )
        if (
            self.c.purchase == "lease"
            and self.c.max_lease_per_month is not None
            and lease_month is not None
            and lease_month > self.c.max_lease_per_month
        ):
            return reject(
                "planner.over_lease",
                "constraints.max_lease_per_month",
                STAGE_CONSTRAINT,
                f"rent {_money(lease_month, cur, 'en')} a month is over the ceiling of "
                f"{_money(self.c.max_lease_per_month, cur, 'en')}.",
                f"月租 {_money(lease_month, cur, 'zh')}，超出上限 {_money(self.c.max_lease_per_month, cur, 'zh')}。",
                needed=str(lease_month),
                limit=str(self.c.max_lease_per_month),
            )
        if self.c.max_power_kw is not None and result.power.it_kw > self.c.max_power_kw + 1e-9:
            return reject(
                "planner.over_power",
                "constraints.max_power_kw",
                STAGE_CONSTRAINT,
                f"IT load {result.power.it_kw:,.1f} kW at maximum input is over the site's {self.c.max_power_kw:,.1f} kW.",
                f"IT 最大负载 {result.power.it_kw:,.1f} kW，超过机房可用 {self.c.max_power_kw:,.1f} kW。",
                needed=result.power.it_kw,
                limit=self.c.max_power_kw,
            )
        if self.c.max_racks is not None and result.racks.rack_count > self.c.max_racks:
            return reject(
                "planner.over_racks",
                "constraints.max_racks",
                STAGE_CONSTRAINT,
                f"{result.racks.rack_count} racks, over the limit of {self.c.max_racks}.",
                f"需要 {result.racks.rack_count} 个机柜，超过上限 {self.c.max_racks} 个。",
                needed=result.racks.rack_count,
                limit=self.c.max_racks,
            )
        if self.c.air_cooled_only and (
            req.rack.cooling != "air" or "cooling.rack_exceeds_air_limit" in codes
        ):
            return reject(
                "planner.not_air_cooled",
                "constraints.air_cooled_only",
                STAGE_CONSTRAINT,
                f"racks draw up to {result.racks.max_rack_kw:,.1f} kW, beyond air cooling "
                f"({self.q.site.air_cooling_kw_limit:g} kW per rack).",
                f"单柜功耗最高 {result.racks.max_rack_kw:,.1f} kW，超出风冷能力（每柜 {self.q.site.air_cooling_kw_limit:g} kW）。",
                needed=result.racks.max_rack_kw,
                limit=self.q.site.air_cooling_kw_limit,
            )
        if on_request:
            dp = perf.design_point
            within = dp is not None and dp.limited_by != "unreachable"
            return OnRequest(
                server=s,
                shape=shape,
                parallel=label,
                concurrency=req.workload.concurrency,
                ttft_s=perf.ttft_s,
                tpot_ms=perf.tpot_s * 1000,
                output_tokens_per_s=perf.output_tokens_per_s,
                design_concurrency=dp.concurrency if within and dp is not None else 0,
                it_kw=result.power.it_kw,
                racks=result.racks.rack_count,
                on_request=tuple(tco.prices_on_request),
                request_json=self.build.request_json(s, shape, variant, req, rack, inline),
            )
        tokens = tco.tokens
        assert tokens is not None  # a priced plan with a throughput (checked above)
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
            return reject(
                "planner.no_throughput",
                "workload.concurrency",
                STAGE_ENGINE,
                "no cost per million tokens.",
                "无法计算每百万 Token 成本。",
            )
        assert total is not None and annual is not None  # a lease cost per token comes with a lease offer
        warnings = tuple(
            (c.code, c.message_en, c.message_zh) for c in result.checks if c.severity == Severity.WARNING
        )
        dp = perf.design_point
        within = dp is not None and dp.limited_by != "unreachable"
        ident = f"{s.slug}:{shape.kind.value}:{'-'.join(str(g) for g in shape.group_nodes)}:tp{variant.parallel.tp}"
        return Candidate(
            id=ident,
            server=s,
            shape=shape,
            parallel=variant.parallel,
            decode_parallel=variant.decode_parallel,
            serving=variant.serving,
            rack=rack,
            rack_inline=inline,
            concurrency=req.workload.concurrency,
            cost_per_m=cost,
            tco_total=total,
            capex=tco.capex.total,
            lease_per_month=lease_month,
            annual_cost=annual,
            output_tokens_per_s=perf.output_tokens_per_s,
            requests_per_s=perf.requests_per_s,
            ttft_s=perf.ttft_s,
            tpot_ms=perf.tpot_s * 1000,
            e2e_s=perf.ttft_s + self.w.output_tokens * perf.tpot_s,
            it_kw=result.power.it_kw,
            racks=result.racks.rack_count,
            saving_vs_api=saving,
            warnings=warnings,
            request_json=self.build.request_json(s, shape, variant, req, rack, inline),
            design_concurrency=dp.concurrency if within and dp is not None else 0,
            design_output_tokens_per_s=dp.output_tokens_per_s if within and dp is not None else 0.0,
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
        return Rejection(
            server.slug,
            server.name,
            0,
            "planner.not_reached",
            "options.max_nodes",
            STAGE_LAYOUT,
            f"{short_name(server)}: no deployment up to {max_nodes} nodes was found.",
            f"{short_name(server)}：{max_nodes} 台以内未找到可行部署。",
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
    cur = query.constraints.currency
    example = min(rs, key=lambda r: _as_decimal(r.figures.get("needed")) or Decimal(10**18))
    needed = example.figures.get("needed")
    limit = example.figures.get("limit")
    families = len(rs)
    text = {
        "constraints.max_capex": (
            f"Budget {_money(Decimal(str(limit)), cur, 'en')}: no deployment that serves the workload is that cheap "
            f"(the least needs {_money(Decimal(str(needed)), cur, 'en')}).",
            f"预算 {_money(Decimal(str(limit)), cur, 'zh')}：满足业务的部署均超出预算（最少需 {_money(Decimal(str(needed)), cur, 'zh')}）。",
        )
        if needed is not None and limit is not None
        else None,
        "constraints.max_lease_per_month": (
            f"Monthly rent ceiling {_money(Decimal(str(limit)), cur, 'en')}: the least any working deployment "
            f"rents for is {_money(Decimal(str(needed)), cur, 'en')} a month.",
            f"月租上限 {_money(Decimal(str(limit)), cur, 'zh')}：可行部署的月租最少为 {_money(Decimal(str(needed)), cur, 'zh')}。",
        )
        if needed is not None and limit is not None
        else None,
        "constraints.max_racks": (
            f"{limit} rack{'s' if limit != 1 else ''} allowed: the smallest working deployment needs {needed}.",
            f"机柜上限 {limit} 个：最小的可行部署需要 {needed} 个。",
        )
        if needed is not None and limit is not None
        else None,
        "constraints.max_power_kw": (
            f"{plain_number(limit)} kW of site power: the smallest working deployment draws {float(needed):,.1f} kW.",
            f"机房可用功率 {plain_number(limit)} kW：最小的可行部署需 {float(needed):,.1f} kW。",
        )
        if needed is not None and limit is not None
        else None,
    }.get(fld)
    if text is None:
        text = (
            f"{families} of {len(rejected)} hardware families stop at {fld}: {example.message_en}",
            f"{len(rejected)} 个硬件系列中有 {families} 个受限于 {fld}：{example.message_zh}",
        )
    return Rejection(
        example.server,
        example.server_name,
        example.nodes,
        example.code,
        fld,
        example.stage,
        text[0],
        text[1],
        {"families": families, **dict(example.figures)},
    )


def _as_decimal(value: Any) -> Decimal | None:
    try:
        return Decimal(str(value)) if value is not None else None
    except InvalidOperation:
        return None
