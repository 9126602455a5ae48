"""Throughput and latency ESTIMATE from a calibrated step-time model, to be confirmed by a load test.

The arithmetic lives in :mod:`configurator.engine.serving_model` (step time by
parts, prefill, queueing); this module applies it to each serving group of the
layout, turns every part into an explained figure, and adds the checks.

Per DP rank (one engine: TP devices):

* **decode step** = fixed overhead + max(memory time, compute time) + TP
  all-reduces + EP dispatch/combine, each collective = latency + bytes ÷
  bandwidth of the fabric it crosses (scale-up inside a node: HCCS / NVLink /
  LingQu-UB / PCIe; across nodes: the super-node's LingQu ports or the RoCE /
  InfiniBand NICs).  Memory traffic = non-expert weights ÷ TP + the routed
  experts the step touches (÷ EP with expert parallelism, else ÷ TP, as
  ``memory.weights_per_rank``) + the running batch's KV cache and state.
* **speculative decoding** (MTP) emits ``(1 − a^(k+1)) ÷ (1 − a)`` tokens per step.
* **prefill** = 2 × active params × prompt tokens + causal attention, at the
  checkpoint's activation precision, in chunks of ``max_num_batched_tokens``.
* **aggregated serving**: chunked prefill shares the rank: B requests per
  ``B × prefill + output ÷ tokens-per-step × step`` seconds.
* **disaggregated serving (xPyD)**: prefill is an M/D/c queue over the prefill
  DP ranks; decode runs B sequences per DP rank; KV moves P → D over the
  scale-out NICs.
* **load**: a closed loop of ``workload.concurrency`` users (the way ``vllm
  bench serve --max-concurrency`` drives a server).  Users beyond the running
  slots (``max_num_seqs`` or the KV cache) queue; their wait adds to TTFT.  The
  quoted concurrency above what the cluster serves at once is an ERROR check.

Efficiency factors are calibrated per software stack against published
measurements (``tests/data/serving_benchmarks.yaml``, docs/performance.md); the
residual spread of that fit is the error band reported beside the estimate.
``workload.measured_output_tokens_per_s`` (a load-test result) overrides the
estimated throughput everywhere and sets ``measured``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from . import serving_model as sm
from .defaults import block_size_for
from .figures import FigureBook
from .types import (
    Check,
    Figure,
    GroupLayout,
    GroupMemory,
    LayoutResult,
    MemoryResult,
    PerformanceSpec,
    PlanRequest,
    Severity,
    Source,
    TopologyKind,
)

AREA = "performance"

# Roles that run decode and count toward the deployment's throughput (a standby does not).
COUNTED_DECODE_ROLES = frozenset({"serve", "tenant", "decode"})

ESTIMATE_NOTE_EN = (
    "Estimate from a step-time model calibrated against published serving benchmarks "
    "(typical error {low}–{high} × of the measured throughput); confirm with a load test on the "
    "delivered cluster before committing to figures."
)
ESTIMATE_NOTE_ZH = (
    "以上为基于已公开压测数据校准的推理时延模型估算值（吞吐通常为实测值的 {low}–{high} 倍），"
    "须在交付集群上压测确认后方可承诺。"
)
MEASURED_NOTE_EN = (
    "Throughput is the measured load-test figure entered for this plan; latencies remain estimates."
)
MEASURED_NOTE_ZH = "吞吐采用本方案录入的压测实测值；时延仍为估算值。"

ESTIMATE_SOURCE = Source("derived", "calibrated step-time model (docs/performance.md)")
CALIBRATION_SOURCE = Source("public", "fit to tests/data/serving_benchmarks.yaml (docs/performance.md)")

# Concurrency points of the throughput-vs-latency curve.
CURVE_POINTS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192)
MAX_CURVE_POINTS = 12


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class GroupPerformance:
    """Estimate for one serving group (a cluster, or the P or D side of xPyD)."""

    group: str
    role: str
    counts_toward_throughput: bool
    nodes: int
    tp: int
    dp: int
    ep: int
    # batch
    offered_seqs_per_dp_rank: int  # share of workload.concurrency this rank is offered
    kv_seqs_fit_per_dp_rank: int  # sequences of input+output tokens the KV budget holds
    batch_per_dp_rank: int  # running sequences per decode step
    batch_limited_by: str  # concurrency | max_num_seqs | kv_capacity | none (prefill side)
    # decode (0 on a prefill-only group)
    weights_bytes_read_per_rank: int
    experts_touched_fraction: float
    kv_bytes_read_per_rank: int
    bytes_per_step_per_rank: int
    memory_time_s: float
    all_to_all_s: float  # EP dispatch + combine per step
    decode_step_s: float
    # prefill
    prefill_s: float  # one prompt on one DP rank
    kv_transfer_s: float  # P → D KV move per request (xPyD decode side), else 0
    # throughput (capacity of this group at the workload's concurrency)
    requests_per_s: float
    output_tokens_per_s_per_dp_rank: float
    output_tokens_per_s: float
    # parts of the step (defaults keep older callers working)
    compute_time_s: float = 0.0
    tp_allreduce_s: float = 0.0
    step_overhead_s: float = 0.0
    tokens_per_step: float = 1.0
    slots_per_dp_rank: int = 0  # sequences a rank runs at once: min(max_num_seqs, KV fit)

    @property
    def tpot_s(self) -> float:
        return self.decode_step_s / self.tokens_per_step if self.tokens_per_step > 0 else self.decode_step_s


@dataclass(frozen=True)
class PdBalance:
    """Prefill vs decode capacity of an xPyD deployment."""

    prefill_requests_per_s: float
    decode_requests_per_s: float
    ratio: float  # prefill capacity ÷ decode capacity
    bottleneck: str  # prefill | decode | balanced
    suggested_prefill_nodes: int
    suggested_decode_nodes: int


@dataclass(frozen=True)
class CurvePoint:
    """One point of the throughput-vs-latency curve (one concurrency)."""

    concurrency: int
    output_tokens_per_s: float
    output_tokens_per_s_per_device: float
    ttft_s: float
    ttft_p90_s: float
    tpot_s: float
    tpot_p90_s: float
    saturated: bool


@dataclass(frozen=True)
class SlaResult:
    """The latency targets and whether the estimate meets them at the quoted concurrency."""

    targets: Mapping[str, float]  # ttft_p50_s, ttft_p90_s, tpot_p50_ms, tpot_p90_ms (those set)
    values: Mapping[str, float | None]  # the estimate for each (None: no finite latency at that point)
    met: bool | None  # None: no target set
    max_concurrency: int  # largest concurrency meeting every target (0: none; -1: no target)


@dataclass(frozen=True)
class PerformanceResult:
    """What :func:`estimate_performance` returns.  All times in seconds."""

    measured: bool
    groups: tuple[GroupPerformance, ...]
    ttft_s: float
    tpot_s: float
    requests_per_s: float
    output_tokens_per_s: float  # whole deployment, counted groups only
    input_tokens_per_s: float
    output_tokens_per_s_per_dp_rank: float
    serving_dp_ranks: int
    prefill_time_share: float  # share of accelerator time spent on prefill (input tokens)
    pd_balance: PdBalance | None
    note_en: str
    note_zh: str
    figures: Mapping[str, Figure] = field(default_factory=dict)
    checks: tuple[Check, ...] = ()
    # load, SLA and error band
    ttft_p90_s: float = 0.0
    tpot_p90_s: float = 0.0
    queue_wait_s: float = 0.0
    capacity_concurrency: int = 0  # users served at once before requests queue
    curve: tuple[CurvePoint, ...] = ()
    sla: SlaResult | None = None
    error_band: tuple[float, float] = (sm.ERROR_BAND_LOW, sm.ERROR_BAND_HIGH)
    serving_devices: int = 0
    concurrency: int = 0  # the workload's concurrency the figures are quoted at

    @property
    def is_estimate(self) -> bool:
        return not self.measured

    @property
    def output_tokens_per_s_range(self) -> tuple[float, float]:
        """Throughput the measured result is likely to fall in (estimate ÷ band)."""
        if self.measured:
            return (self.output_tokens_per_s, self.output_tokens_per_s)
        low, high = self.error_band
        return (self.output_tokens_per_s / high, self.output_tokens_per_s / low)


# --------------------------------------------------------------------------- helpers


def _tflops(req: PlanRequest) -> tuple[float, str]:
    """Dense TFLOPS per logical device at the model's activation precision, else BF16."""
    return sm.tflops_for(req.server, req.model.activation_format)


def _eight_bit(fmt: str) -> bool:
    fmt = fmt.lower()
    return any(tag in fmt for tag in ("fp8", "int8", "a8"))


def _seqs_fit(gm: GroupMemory | None, context_tokens: int, block_size: int, max_num_seqs: int) -> int:
    """Sequences of ``context_tokens`` one DP rank's KV budget holds (per rank figures, vLLM blocks)."""
    if gm is None:
        return max_num_seqs
    rank = gm.per_rank
    if rank.kv_cache_bytes <= 0:
        return 0
    blocks = math.ceil(context_tokens / block_size) if block_size > 0 else 0
    per_seq = blocks * block_size * rank.kv_bytes_per_token + rank.state_bytes_per_seq
    if per_seq <= 0:
        return max_num_seqs
    return rank.kv_cache_bytes // per_seq


def _v(value: Any) -> Any:
    """A figure's value as the plan shows it: floats to 6 decimals, a non-finite float as 0."""
    if isinstance(value, float):
        return round(value, 6) if math.isfinite(value) else 0.0
    return value


def _i(value: Any) -> Any:
    """A figure's input as the plan shows it: finite floats to 9 decimals."""
    return round(value, 9) if isinstance(value, float) and math.isfinite(value) else value


@dataclass
class _GroupModel:
    """Everything needed to evaluate one group's step time at any batch."""

    req: PlanRequest
    layout: GroupLayout
    shape: sm.GroupShape
    factors: sm.PlatformFactors
    mean_context: float
    kv_per_token: int
    state_per_seq: int
    lm_non_expert: float
    tflops: float
    draft_tokens: int
    acceptance: float
    eight_bit: bool
    scale_out_efficiency: float
    prefill: sm.PrefillBreakdown
    slots: int
    kv_transfer_s: float = 0.0
    kv_fit: int = 0
    _cache: dict[float, sm.StepBreakdown] = field(default_factory=dict)

    def step(self, batch: float) -> sm.StepBreakdown:
        key = round(max(batch, 1.0), 3)
        hit = self._cache.get(key)
        if hit is None:
            hit = sm.decode_step(
                self.req.model,
                self.req.server,
                self.shape,
                self.factors,
                batch=key,
                mean_context=self.mean_context,
                kv_bytes_per_token=self.kv_per_token,
                state_bytes_per_seq=self.state_per_seq,
                lm_non_expert_bytes=self.lm_non_expert,
                tflops=self.tflops,
                draft_tokens=self.draft_tokens,
                acceptance=self.acceptance,
                eight_bit=self.eight_bit,
                scale_out_efficiency=self.scale_out_efficiency,
            )
            self._cache[key] = hit
        return hit


# --------------------------------------------------------------------------- load model


def _aggregated_point(groups: list[_GroupModel], concurrency: float, output_tokens: int) -> sm.OperatingPoint:
    """Closed-loop operating point of aggregated groups sharing the concurrency evenly by DP rank."""
    dp_total = sum(g.shape.dp for g in groups)
    if dp_total <= 0 or concurrency <= 0:
        return sm.OperatingPoint(concurrency, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, False)
    n = concurrency / dp_total
    lead = groups[0]
    slots = max(lead.slots, 0)
    if slots == 0:
        return sm.OperatingPoint(concurrency, 0.0, 0.0, 0.0, math.inf, math.inf, math.inf, True)
    batch = min(n, slots)
    st = lead.step(batch)
    pre = lead.prefill.prefill_s
    decode_time = output_tokens / st.tokens_per_step * st.step_s
    cycle = decode_time + batch * pre  # seconds per `batch` requests on one rank (chunked prefill)
    overhead = lead.factors.request_overhead_s
    # Closed loop: a user's response time is the rank's cycle plus the per-request overhead
    # (API server, tokenizer) during which the slot is free for others; the rank stays busy
    # only when more users than slots are waiting.
    x_rank = batch / (cycle + overhead) if n <= slots else batch / cycle
    if cycle <= 0:
        x_rank = 0.0
    tpot = (decode_time + max(batch - 1.0, 0.0) * pre) / output_tokens
    wait = max(0.0, n / x_rank - cycle - overhead) if x_rank > 0 and n > batch else 0.0
    # Other users' prompts ahead of this one in the (chunked) prefill queue of the rank:
    # M/D/1 by Pollaczek–Khinchine, ρ = prefill share of the rank's time.
    rho = min(x_rank * pre, 0.95)
    wait += rho * pre / (2 * (1 - rho))
    ttft = overhead + pre + 0.5 * st.step_s + wait
    rps = x_rank * dp_total
    return sm.OperatingPoint(concurrency, batch, rps, rps * output_tokens, ttft, tpot, wait, n > slots + 1e-9)


def _disaggregated_point(
    prefill: list[_GroupModel], decode: list[_GroupModel], concurrency: float, output_tokens: int
) -> sm.OperatingPoint:
    """Closed loop over an M/D/c prefill pool and a decode pool (users beyond the decode slots queue)."""
    dp_p = sum(g.shape.dp for g in prefill)
    dp_d = sum(g.shape.dp for g in decode)
    if dp_p <= 0 or dp_d <= 0 or concurrency <= 0:
        return sm.OperatingPoint(concurrency, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, False)
    d = decode[0]
    pre = prefill[0].prefill.prefill_s
    slots = max(d.slots, 0)
    if slots == 0 or pre <= 0:
        return sm.OperatingPoint(concurrency, 0.0, 0.0, 0.0, math.inf, math.inf, math.inf, True)
    n = concurrency / dp_d
    batch = min(n, slots)
    st = d.step(batch)
    tpot = st.step_s / st.tokens_per_step
    decode_time = (output_tokens - 1) * tpot
    kv = d.kv_transfer_s
    prefill_cap = dp_p / pre
    decode_cap = dp_d * batch / (output_tokens * tpot) if tpot > 0 else math.inf
    cap = min(prefill_cap * 0.98, decode_cap)

    overhead = d.factors.request_overhead_s

    def response(x: float) -> float:
        return overhead + pre + sm.mdc_wait(dp_p, pre, x) + kv + st.step_s + decode_time

    # X · R(X) = C (Little's law) with X below capacity: bisection (R grows with X).
    lo, hi = 0.0, cap
    if hi * response(hi) <= concurrency:
        x = hi
        base = response(hi)
        wait_extra = max(0.0, concurrency / x - base) if x > 0 else math.inf
        wait = sm.mdc_wait(dp_p, pre, x) + wait_extra
        saturated = True
    else:
        tolerance = cap * 1e-4  # 0.01 % of capacity: far below the model's error band
        while hi - lo > tolerance:
            mid = 0.5 * (lo + hi)
            if mid * response(mid) < concurrency:
                lo = mid
            else:
                hi = mid
        x = 0.5 * (lo + hi)
        wait = sm.mdc_wait(dp_p, pre, x)
        saturated = n > slots + 1e-9 or x >= prefill_cap * 0.95
    ttft = overhead + pre + wait + kv + st.step_s
    return sm.OperatingPoint(concurrency, batch, x, x * output_tokens, ttft, tpot, wait, saturated)


# --------------------------------------------------------------------------- main entry


def estimate_performance(
    req: PlanRequest, layout: LayoutResult, memory: MemoryResult | None
) -> PerformanceResult:
    """Estimate TTFT, TPOT and throughput of the deployment (an ESTIMATE; see module doc)."""
    checks: list[Check] = []
    req = _sanitised(req, checks)
    model, server, serving, workload, perf = req.model, req.server, req.serving, req.workload, req.performance
    acc = server.accelerator
    book = FigureBook()
    mem_by_group = {g.group: g for g in (memory.groups if memory else ())}
    factors = sm.effective_factors(req)
    stack = acc.software_stack if acc.software_stack in sm.PLATFORM_FACTORS else sm.DEFAULT_STACK

    tflops, tflops_precision = _tflops(req)
    if acc.memory_bandwidth_bytes_s <= 0 or tflops <= 0:
        checks.append(
            Check(
                "performance.accelerator_specs_missing",
                Severity.ERROR,
                AREA,
                f"{acc.name}: memory bandwidth or TFLOPS is missing from the catalog; no performance estimate.",
                f"{acc.name}：目录中缺少显存带宽或算力（TFLOPS）数据，无法估算性能。",
                field="server.accelerator",
                fix_en="Enter the accelerator's memory bandwidth and dense TFLOPS in the catalog.",
                fix_zh="请在目录中补充该加速卡的显存带宽与稠密算力。",
            )
        )
        if tflops <= 0:
            tflops = 1.0
        if acc.memory_bandwidth_bytes_s <= 0:
            server = replace(server, accelerator=replace(acc, memory_bandwidth_bytes_s=1.0))
            req = replace(req, server=server)

    prompt_tokens = max(0, workload.input_tokens)
    hit = perf.prefix_cache_hit_rate if serving.enable_prefix_caching else 0.0
    computed_prompt_tokens = max(1, round(prompt_tokens * (1.0 - hit)))
    output_tokens = max(1, workload.output_tokens)
    context_tokens = min(prompt_tokens + output_tokens, serving.max_model_len)
    mean_context = min(prompt_tokens + output_tokens / 2, serving.max_model_len)
    lm_non_expert_bytes = model.non_expert_weight_bytes - (model.vision_bytes if model.has_vision else 0)
    disaggregated = req.topology.kind == TopologyKind.DISAGGREGATED
    draft = max(0, perf.speculative_tokens)
    acceptance = perf.speculative_acceptance_rate

    counted_dp = sum(g.parallel.dp for g in layout.groups if g.role in COUNTED_DECODE_ROLES)
    offered_per_rank = math.ceil(max(0, workload.concurrency) / counted_dp) if counted_dp else 0

    book.put(
        "performance.prompt_tokens_computed",
        computed_prompt_tokens,
        source=Source("input", "workload.input_tokens, performance.prefix_cache_hit_rate"),
        input_tokens=prompt_tokens,
        prefix_cache_hit_rate=_i(hit),
    )
    book.put(
        "performance.tflops_per_device",
        _v(tflops),
        label={"precision_en": tflops_precision or "n/a", "precision_zh": tflops_precision or "无"},
        source=Source("derived", "accelerator catalog"),
        activation_format=model.activation_format,
        precision_used=tflops_precision,
    )
    _add_factor_figures(book, req, factors, stack)
    if draft:
        book.put(
            "performance.tokens_per_step",
            _v(sm.accepted_tokens_per_step(draft, acceptance)),
            variant="partial" if acceptance < 1.0 else "all_accepted",
            source=Source("input", "performance.speculative_tokens, performance.speculative_acceptance_rate"),
            k_draft_tokens=draft,
            a_acceptance_rate=_i(acceptance),
        )

    models: dict[str, _GroupModel] = {}
    groups: list[GroupPerformance] = []
    for g in layout.groups:
        gm_ = mem_by_group.get(g.name)
        gmodel = _group_model(
            req,
            g,
            gm_,
            layout,
            factors,
            tflops=tflops,
            computed_prompt_tokens=computed_prompt_tokens,
            context_tokens=context_tokens,
            mean_context=mean_context,
            lm_non_expert_bytes=lm_non_expert_bytes,
            draft=draft,
            acceptance=acceptance,
            disaggregated=disaggregated,
        )
        models[g.name] = gmodel
        groups.append(
            _group_estimate(
                req,
                g,
                gmodel,
                book,
                checks,
                computed_prompt_tokens=computed_prompt_tokens,
                output_tokens=output_tokens,
                context_tokens=context_tokens,
                offered_per_rank=offered_per_rank,
                disaggregated=disaggregated,
            )
        )

    # ---- the deployment's operating point at the quoted concurrency (closed loop)
    prefill_models = [models[g.group] for g in groups if g.role == "prefill"]
    decode_models = [models[g.group] for g in groups if g.role == "decode"]
    counted_models = [models[g.group] for g in groups if g.counts_toward_throughput]
    point_fn: Callable[[float], sm.OperatingPoint]
    # The model whose operating point the latencies quote: the decode side of xPyD, else the first serving group.
    mode: str | None
    point_lead: _GroupModel | None
    if disaggregated and prefill_models and decode_models:

        def point_fn(c: float) -> sm.OperatingPoint:
            return _disaggregated_point(prefill_models, decode_models, c, output_tokens)

        capacity_users = sum(m.slots * m.shape.dp for m in decode_models)
        mode, point_lead = "disaggregated", decode_models[0]
    elif counted_models:

        def point_fn(c: float) -> sm.OperatingPoint:
            return _aggregated_point(counted_models, c, output_tokens)

        capacity_users = sum(m.slots * m.shape.dp for m in counted_models)
        mode, point_lead = "aggregated", counted_models[0]
    else:

        def point_fn(c: float) -> sm.OperatingPoint:
            return sm.OperatingPoint(c, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, False)

        capacity_users = 0
        mode, point_lead = None, None
    concurrency = max(0, workload.concurrency)
    op = point_fn(concurrency) if concurrency > 0 else point_fn(1)
    if disaggregated and prefill_models and decode_models:
        capacity_users = _sustained_concurrency(point_fn, capacity_users)

    pd_balance: PdBalance | None = None
    prefill_groups = [g for g in groups if g.role == "prefill"]
    decode_groups = [g for g in groups if g.role == "decode"]
    counted = [g for g in groups if g.counts_toward_throughput]
    finite = math.isfinite(op.ttft_s) and math.isfinite(op.tpot_s)
    ttft = op.ttft_s if finite else 0.0
    tpot = op.tpot_s if finite else 0.0
    requests_per_s = op.requests_per_s if concurrency > 0 else 0.0
    share_lead = counted[0] if counted else None
    if disaggregated and prefill_groups and decode_groups:
        p_cap = sum(g.requests_per_s for g in prefill_groups)
        d_cap = sum(g.requests_per_s for g in decode_groups)
        pd_balance = _pd_balance(p_cap, d_cap, prefill_groups, decode_groups)
        p_nodes = sum(g.nodes for g in prefill_groups)
        d_nodes = sum(g.nodes for g in decode_groups)
        prefill_share = p_nodes / (p_nodes + d_nodes)
        _add_pd_figures(book, checks, pd_balance, prefill_groups, decode_groups)
    elif share_lead and share_lead.batch_per_dp_rank > 0:
        busy_prefill = share_lead.batch_per_dp_rank * share_lead.prefill_s
        busy_decode = output_tokens * share_lead.tpot_s
        prefill_share = busy_prefill / (busy_prefill + busy_decode)
    else:
        prefill_share = 0.0

    output_tps = requests_per_s * output_tokens
    measured_tps = workload.measured_output_tokens_per_s
    measured = measured_tps is not None and measured_tps > 0
    estimated_output_tps = output_tps
    if measured_tps is not None and measured_tps > 0:  # i.e. ``measured``, written so the type narrows
        output_tps = float(measured_tps)
        requests_per_s = output_tps / output_tokens
        total_counted = sum(g.output_tokens_per_s for g in counted)
        groups = [_scaled(g, output_tps / total_counted if total_counted > 0 else 0.0) for g in groups]
        for scaled in groups:
            key = f"performance.{scaled.group}.output_tokens_per_s"
            if key in book:
                book.restate(
                    book[key],
                    _v(scaled.output_tokens_per_s),
                    source=Source("input", "workload.measured_output_tokens_per_s (load test)"),
                )
    input_tps = requests_per_s * prompt_tokens
    per_dp_rank = output_tps / counted_dp if counted_dp else 0.0
    serving_devices = sum(g.nodes for g in layout.groups if g.role in COUNTED_DECODE_ROLES | {"prefill"}) * (
        layout.devices_per_node or server.logical_devices
    )
    tput_source = (
        Source("input", "workload.measured_output_tokens_per_s (load test)") if measured else ESTIMATE_SOURCE
    )

    # The group whose prefill the TTFT formula quotes: the first prefill group, else the first serving one.
    # (Before, a layout with groups but none prefill or serving raised AttributeError on None here.)
    ttft_lead = prefill_groups[0] if prefill_groups else (counted[0] if counted else None)
    queue_wait = op.wait_s if math.isfinite(op.wait_s) else 0.0
    served = finite and mode is not None and point_lead is not None
    point_step = point_lead.step(op.batch_per_rank) if point_lead is not None and served else None
    latency_variant = mode if served and mode is not None else "unserved"
    book.put(
        "performance.ttft_s",
        _v(ttft),
        variant=latency_variant,
        source=ESTIMATE_SOURCE,
        prefill_s=_i(ttft_lead.prefill_s if ttft_lead is not None else 0.0),
        queue_wait_s=_i(queue_wait),
        concurrency=concurrency,
        request_overhead_s=_i(point_lead.factors.request_overhead_s if point_lead is not None else 0.0),
        kv_transfer_s=_i(
            point_lead.kv_transfer_s if point_lead is not None and mode == "disaggregated" else 0.0
        ),
        step_s=_i(point_step.step_s if point_step is not None else 0.0),
    )
    book.put(
        "performance.tpot_s",
        _v(tpot),
        variant=latency_variant,
        source=ESTIMATE_SOURCE,
        decode_step_s=_i(counted[0].decode_step_s if counted else 0.0),
        tokens_per_step=_i(counted[0].tokens_per_step if counted else 1.0),
        batch_per_dp_rank=round(op.batch_per_rank, 3),
        concurrency=concurrency,
        step_s=_i(point_step.step_s if point_step is not None else 0.0),
        prefill_s=_i(point_lead.prefill.prefill_s if point_lead is not None else 0.0),
        output_tokens=output_tokens,
    )
    book.put(
        "performance.queue_wait_s",
        _v(queue_wait),
        variant="disaggregated" if mode == "disaggregated" else "aggregated",
        source=ESTIMATE_SOURCE,
        concurrency=concurrency,
        capacity_concurrency=capacity_users,
    )
    book.put(
        "performance.ttft_p90_s",
        _v(op.ttft_p90_s if finite else 0.0),
        source=ESTIMATE_SOURCE,
        queue_wait_s=_i(queue_wait),
        ttft_s=_i(ttft),
        service_p90_over_mean=sm.TTFT_P90_OVER_MEAN_IDLE,
        wait_p90_over_mean=_i(sm.WAIT_P90_OVER_MEAN),
    )
    book.put(
        "performance.tpot_p90_s",
        _v(op.tpot_p90_s if finite else 0.0),
        source=ESTIMATE_SOURCE,
        tpot_s=_i(tpot),
        tpot_p90_over_mean=sm.TPOT_P90_OVER_MEAN,
    )
    if measured:
        book.put(
            "performance.requests_per_s",
            _v(requests_per_s),
            variant="measured",
            source=tput_source,
            output_tokens=output_tokens,
            measured_output_tokens_per_s=_i(output_tps),
            serving_groups=[g.group for g in counted],
        )
    else:
        book.put(
            "performance.requests_per_s",
            _v(requests_per_s),
            variant="estimate",
            source=tput_source,
            output_tokens=output_tokens,
            concurrency=concurrency,
            serving_groups=[g.group for g in counted],
        )
    book.put(
        "performance.output_tokens_per_s",
        _v(output_tps),
        source=tput_source,
        requests_per_s=_i(requests_per_s),
        output_tokens=output_tokens,
        estimated_tokens_per_s=_i(estimated_output_tps),
    )
    low, high = sm.ERROR_BAND_LOW, sm.ERROR_BAND_HIGH
    book.put(
        "performance.output_tokens_per_s_range",
        f"{output_tps / high:,.0f}–{output_tps / low:,.0f}" if not measured else f"{output_tps:,.0f}",
        variant="measured" if measured else "estimate",
        source=CALIBRATION_SOURCE,
        band_low=low,
        band_high=high,
        output_tokens_per_s=_i(output_tps),
    )
    book.put(
        "performance.input_tokens_per_s",
        _v(input_tps),
        source=tput_source,
        requests_per_s=_i(requests_per_s),
        input_tokens=prompt_tokens,
    )
    book.put(
        "performance.output_tokens_per_s_per_dp_rank",
        _v(per_dp_rank),
        variant="ranks" if counted_dp else "none",
        source=tput_source,
        serving_dp_ranks=counted_dp,
        output_tokens_per_s=_i(output_tps),
    )
    if pd_balance is not None:
        book.put(
            "performance.prefill_time_share",
            _v(prefill_share),
            variant="disaggregated",
            source=ESTIMATE_SOURCE,
            prefill_nodes=p_nodes,
            decode_nodes=d_nodes,
        )
    else:
        book.put(
            "performance.prefill_time_share",
            _v(prefill_share),
            variant="aggregated" if share_lead and share_lead.batch_per_dp_rank > 0 else "idle",
            source=ESTIMATE_SOURCE,
            B=share_lead.batch_per_dp_rank if share_lead else 0,
            prefill_s=_i(share_lead.prefill_s if share_lead else 0.0),
            output_tokens=output_tokens,
            tpot_s=_i(share_lead.tpot_s if share_lead else 0.0),
        )
    book.put(
        "performance.capacity_concurrency",
        capacity_users,
        variant="disaggregated" if disaggregated else "aggregated",
        source=ESTIMATE_SOURCE,
        concurrency=concurrency,
        max_num_seqs=serving.max_num_seqs,
    )
    book.put(
        "performance.measured",
        measured,
        source=Source("input", "workload"),
        measured_output_tokens_per_s=measured_tps,
    )

    curve = _curve(point_fn, concurrency, capacity_users, serving_devices)
    sla = _sla(req, op, point_fn, capacity_users)
    if sla is not None:
        _add_sla_figures(book, sla)
    checks.extend(_target_checks(req, op, sla))
    if concurrency > 0 and capacity_users > 0 and concurrency > capacity_users and counted:
        checks.append(_over_capacity_check(concurrency, capacity_users, op))
    if measured:
        checks.append(
            Check(
                "performance.measured_throughput_used",
                Severity.OK,
                AREA,
                f"Measured throughput {output_tps:,.0f} tokens/s replaces the estimate "
                f"({estimated_output_tps:,.0f} tokens/s).",
                f"已采用压测实测吞吐 {output_tps:,.0f} tokens/s 替代估算值（{estimated_output_tps:,.0f} tokens/s）。",
                {"measured": output_tps, "estimated": estimated_output_tps},
                field="workload.measured_output_tokens_per_s",
            )
        )
    else:
        checks.append(
            Check(
                "performance.estimate_unconfirmed",
                Severity.OK,
                AREA,
                ESTIMATE_NOTE_EN.format(low=low, high=high),
                ESTIMATE_NOTE_ZH.format(low=low, high=high),
                {"output_tokens_per_s": output_tps, "band_low": low, "band_high": high},
                field="workload.measured_output_tokens_per_s",
                fix_en="Enter the load-test throughput once measured.",
                fix_zh="压测完成后录入实测吞吐。",
            )
        )

    return PerformanceResult(
        measured=measured,
        groups=tuple(groups),
        ttft_s=ttft,
        tpot_s=tpot,
        requests_per_s=requests_per_s,
        output_tokens_per_s=output_tps,
        input_tokens_per_s=input_tps,
        output_tokens_per_s_per_dp_rank=per_dp_rank,
        serving_dp_ranks=counted_dp,
        prefill_time_share=prefill_share,
        pd_balance=pd_balance,
        note_en=MEASURED_NOTE_EN if measured else ESTIMATE_NOTE_EN.format(low=low, high=high),
        note_zh=MEASURED_NOTE_ZH if measured else ESTIMATE_NOTE_ZH.format(low=low, high=high),
        figures=book.figures,
        checks=tuple(checks),
        ttft_p90_s=op.ttft_p90_s if finite else 0.0,
        tpot_p90_s=op.tpot_p90_s if finite else 0.0,
        queue_wait_s=op.wait_s if math.isfinite(op.wait_s) else 0.0,
        capacity_concurrency=capacity_users,
        curve=curve,
        sla=sla,
        error_band=(low, high),
        serving_devices=serving_devices,
        concurrency=concurrency,
    )


def _add_factor_figures(book: FigureBook, req: PlanRequest, f: sm.PlatformFactors, stack: str) -> None:
    perf = req.performance
    base = sm.PLATFORM_FACTORS[stack]
    label = {"stack": stack}

    def source(name: str, requested: object) -> Source:
        return CALIBRATION_SOURCE if requested is None else Source("input", f"performance.{name}")

    book.put(
        "performance.factors.bandwidth_efficiency",
        _v(f.bandwidth_efficiency),
        label=label,
        variant="calibrated" if perf.decode_bandwidth_efficiency is None else "requested",
        source=source("bandwidth_efficiency", perf.decode_bandwidth_efficiency),
        requested=_i(perf.decode_bandwidth_efficiency),
        calibrated=_i(base.bandwidth_efficiency),
        stack=stack,
    )
    book.put(
        "performance.factors.compute_efficiency",
        _v(f.compute_efficiency),
        label=label,
        source=CALIBRATION_SOURCE,
        calibrated=_i(base.compute_efficiency),
        stack=stack,
    )
    book.put(
        "performance.factors.prefill_efficiency",
        _v(f.prefill_efficiency),
        label=label,
        variant="calibrated" if perf.prefill_mfu is None else "requested",
        source=source("prefill_efficiency", perf.prefill_mfu),
        requested=_i(perf.prefill_mfu),
        calibrated=_i(base.prefill_efficiency),
        stack=stack,
    )
    book.put(
        "performance.factors.request_overhead_s",
        _v(f.request_overhead_s),
        label=label,
        source=CALIBRATION_SOURCE,
        calibrated=_i(base.request_overhead_s),
        stack=stack,
    )
    # Eager mode adds every layer's host launch cost (serving_model.effective_factors).
    eager = not getattr(perf, "graph_mode", True)
    per_layer = (
        sm.EAGER_LAYER_OVERHEAD_S.get(
            req.server.accelerator.software_stack, sm.EAGER_LAYER_OVERHEAD_S[sm.DEFAULT_STACK]
        )
        if eager
        else 0.0
    )
    book.put(
        "performance.factors.step_overhead_s",
        _v(f.step_overhead_s),
        variant="calibrated" if perf.step_overhead_ms is None else "requested",
        label={
            **label,
            "eager_en": "; eager mode: every layer's operators launched from the host" if eager else "",
            "eager_zh": "；非图模式：逐层由主机下发算子" if eager else "",
        },
        source=(
            Source("input", "performance.step_overhead_s")
            if perf.step_overhead_ms is not None
            else Source("assumed", "eager dispatch cost per layer (serving_model.EAGER_LAYER_OVERHEAD_S)")
            if eager
            else CALIBRATION_SOURCE
        ),
        calibrated=_i(base.step_overhead_s),
        requested_ms=_i(perf.step_overhead_ms),
        eager_per_layer_s=per_layer,
        layers=max(req.model.num_layers, 1),
        stack=stack,
    )
    book.put(
        "performance.factors.collective_latency_s",
        _v(f.collective_latency_s),
        label=label,
        source=CALIBRATION_SOURCE,
        calibrated=_i(base.collective_latency_s),
        stack=stack,
    )


def _group_model(
    req: PlanRequest,
    g: GroupLayout,
    gm: GroupMemory | None,
    layout: LayoutResult,
    factors: sm.PlatformFactors,
    *,
    tflops: float,
    computed_prompt_tokens: int,
    context_tokens: int,
    mean_context: float,
    lm_non_expert_bytes: int,
    draft: int,
    acceptance: float,
    disaggregated: bool,
) -> _GroupModel:
    model, server, serving, perf = req.model, req.server, req.serving, req.performance
    p = g.parallel
    tp, dp = max(p.tp, 1), max(p.dp, 1)
    per_node = layout.devices_per_node or server.logical_devices
    shape = sm.GroupShape(tp, dp, max(p.ep, 1), p.expert_parallel, max(g.nodes, 1), max(per_node, 1))
    eight_bit = _eight_bit(model.activation_format)
    prefill = sm.prefill_time(
        model,
        server,
        shape,
        factors,
        prompt_tokens=computed_prompt_tokens,
        lm_non_expert_bytes=lm_non_expert_bytes,
        tflops=tflops,
        chunk_tokens=serving.max_num_batched_tokens,
        eight_bit=eight_bit,
        scale_out_efficiency=perf.scale_out_efficiency,
    )
    rank = gm.per_rank if gm else None
    kv_fit = _seqs_fit(
        gm, context_tokens, block_size_for(serving, server.accelerator.software_stack), serving.max_num_seqs
    )  # block size 0 → the platform's default (engine/defaults.py)
    kv_transfer = 0.0
    if disaggregated and g.role == "decode" and rank is not None:
        # P and D pools sit in different engines: KV moves over the scale-out NICs.
        bw, _ = sm.inter_node_bytes_s_per_device(server, scale_up_allowed=False)
        per_request = computed_prompt_tokens * rank.kv_bytes_per_token + rank.state_bytes_per_seq
        kv_transfer = per_request / (bw * perf.scale_out_efficiency)
    return _GroupModel(
        req=req,
        layout=g,
        shape=shape,
        factors=factors,
        mean_context=mean_context,
        kv_per_token=rank.kv_bytes_per_token if rank else 0,
        state_per_seq=rank.state_bytes_per_seq if rank else 0,
        lm_non_expert=float(lm_non_expert_bytes),
        tflops=tflops,
        draft_tokens=draft,
        acceptance=acceptance,
        eight_bit=eight_bit,
        scale_out_efficiency=perf.scale_out_efficiency,
        prefill=prefill,
        slots=max(0, min(serving.max_num_seqs, kv_fit)),
        kv_transfer_s=kv_transfer,
        kv_fit=kv_fit,
    )


def _sustained_concurrency(point_fn: Callable[[float], sm.OperatingPoint], upper: int) -> int:
    """Largest concurrency not saturated (bisection; saturation only grows with concurrency)."""
    if upper <= 0:
        return 0
    if not point_fn(upper).saturated:
        return upper
    lo, hi = 0, upper
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if mid > 0 and not point_fn(mid).saturated:
            lo = mid
        else:
            hi = mid
    return lo


def _curve(
    point_fn: Callable[[float], sm.OperatingPoint], concurrency: int, capacity: int, devices: int
) -> tuple[CurvePoint, ...]:
    top = max(2 * capacity, 2 * concurrency, 2)
    levels = sorted({c for c in CURVE_POINTS if c <= top} | ({concurrency} if concurrency > 0 else set()))
    if len(levels) > MAX_CURVE_POINTS:
        keep = {levels[0], levels[-1], concurrency}
        step = len(levels) / (MAX_CURVE_POINTS - len(keep))
        keep |= {levels[int(i * step)] for i in range(MAX_CURVE_POINTS - len(keep))}
        levels = sorted(c for c in keep if c > 0)
    out = []
    for c in levels:
        op = point_fn(c)
        if not (math.isfinite(op.ttft_s) and math.isfinite(op.tpot_s)):
            continue
        out.append(
            CurvePoint(
                concurrency=c,
                output_tokens_per_s=op.output_tokens_per_s,
                output_tokens_per_s_per_device=op.output_tokens_per_s / devices if devices else 0.0,
                ttft_s=op.ttft_s,
                ttft_p90_s=op.ttft_p90_s,
                tpot_s=op.tpot_s,
                tpot_p90_s=op.tpot_p90_s,
                saturated=op.saturated,
            )
        )
    return tuple(out)


def _targets(req: PlanRequest) -> dict[str, float]:
    w = req.workload
    t: dict[str, float] = {}
    if w.ttft_target_s is not None:
        t["ttft_p50_s"] = w.ttft_target_s
    if w.ttft_p90_target_s is not None:
        t["ttft_p90_s"] = w.ttft_p90_target_s
    if w.tpot_target_ms is not None:
        t["tpot_p50_ms"] = w.tpot_target_ms
    if w.tpot_p90_target_ms is not None:
        t["tpot_p90_ms"] = w.tpot_p90_target_ms
    return t


def _values(op: sm.OperatingPoint) -> dict[str, float]:
    return {
        "ttft_p50_s": op.ttft_p50_s,
        "ttft_p90_s": op.ttft_p90_s,
        "tpot_p50_ms": op.tpot_s * 1000,
        "tpot_p90_ms": op.tpot_p90_s * 1000,
    }


def _meets(op: sm.OperatingPoint, targets: Mapping[str, float]) -> bool:
    if not (math.isfinite(op.ttft_s) and math.isfinite(op.tpot_s)) or op.requests_per_s <= 0:
        return False
    values = _values(op)
    return all(values[k] <= v * (1 + 1e-9) for k, v in targets.items())


def _sla(
    req: PlanRequest, op: sm.OperatingPoint, point_fn: Callable[[float], sm.OperatingPoint], capacity: int
) -> SlaResult | None:
    targets = _targets(req)
    if not targets:
        return None
    # A point with no capacity (no slot, no KV room) has no finite latency: report it as None.
    values = {k: (v if math.isfinite(v) else None) for k, v in _values(op).items() if k in targets}
    met = _meets(op, targets) if req.workload.concurrency > 0 else None
    # Largest concurrency meeting every target: latencies only grow with concurrency.
    hi = max(capacity * 4, req.workload.concurrency * 2, 8)
    if not _meets(point_fn(1), targets):
        best = 0
    elif _meets(point_fn(hi), targets):
        best = hi
    else:
        lo = 1
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if _meets(point_fn(mid), targets):
                lo = mid
            else:
                hi = mid
        best = lo
    return SlaResult(targets, values, met, best)


def _add_sla_figures(book: FigureBook, sla: SlaResult) -> None:
    targets, values = sla.targets, sla.values

    def shown(v: float | None) -> float | None:
        return round(v, 6) if v is not None else None

    book.put(
        "performance.sla.max_concurrency",
        sla.max_concurrency,
        source=ESTIMATE_SOURCE,
        ttft_p50_s=_i(targets.get("ttft_p50_s")),
        ttft_p90_s=_i(targets.get("ttft_p90_s")),
        tpot_p50_ms=_i(targets.get("tpot_p50_ms")),
        tpot_p90_ms=_i(targets.get("tpot_p90_ms")),
    )
    book.put(
        "performance.sla.met",
        bool(sla.met),
        source=ESTIMATE_SOURCE,
        ttft_p50_s=shown(values.get("ttft_p50_s")),
        ttft_p90_s=shown(values.get("ttft_p90_s")),
        tpot_p50_ms=shown(values.get("tpot_p50_ms")),
        tpot_p90_ms=shown(values.get("tpot_p90_ms")),
    )


_TARGET_TEXT = {
    "ttft_p50_s": ("TTFT P50", "首字延迟 P50", "s", "秒", "workload.ttft_target_s", 1.0),
    "ttft_p90_s": ("TTFT P90", "首字延迟 P90", "s", "秒", "workload.ttft_p90_target_s", 1.0),
    "tpot_p50_ms": ("TPOT P50", "每字延迟 P50", "ms", "毫秒", "workload.tpot_target_ms", 1.0),
    "tpot_p90_ms": ("TPOT P90", "每字延迟 P90", "ms", "毫秒", "workload.tpot_p90_target_ms", 1.0),
}


def _target_checks(req: PlanRequest, op: sm.OperatingPoint, sla: SlaResult | None) -> list[Check]:
    if sla is None:
        return []
    out: list[Check] = []
    conc = req.workload.concurrency
    fix = {"workload.concurrency": sla.max_concurrency} if sla.max_concurrency > 0 else {}
    for key, target in sla.targets.items():
        en, zh, unit, unit_zh, fld, _ = _TARGET_TEXT[key]
        value = sla.values[key]
        if value is not None and value <= target * (1 + 1e-9):
            continue
        if value is None:
            out.append(
                Check(
                    "performance.ttft_above_target"
                    if key.startswith("ttft")
                    else "performance.tpot_above_target",
                    Severity.WARNING,
                    AREA,
                    f"The {en} target {target:.2f} {unit} cannot be met: the cluster has no room to serve "
                    f"{conc} concurrent requests of this length.",
                    f"{zh}目标 {target:.2f} {unit_zh} 无法满足：集群无法容纳 {conc} 路该长度的并发请求。",
                    {"target": target, "max_concurrency": sla.max_concurrency},
                    field=fld,
                    fix_en="Shorten the context or add nodes.",
                    fix_zh="缩短上下文或增加节点。",
                )
            )
            continue
        code = "performance.ttft_above_target" if key.startswith("ttft") else "performance.tpot_above_target"
        out.append(
            Check(
                code,
                Severity.WARNING,
                AREA,
                f"Estimated {en} {value:.2f} {unit} at {conc} concurrent requests exceeds the target "
                f"{target:.2f} {unit}; at most {sla.max_concurrency} concurrent requests meet every target.",
                f"并发 {conc} 时估算{zh}为 {value:.2f} {unit_zh}，超过目标 {target:.2f} {unit_zh}；"
                f"满足全部目标的并发上限约为 {sla.max_concurrency}。",
                {"value": value, "target": target, "max_concurrency": sla.max_concurrency},
                field=fld,
                fix=fix,
                fix_en="Lower the concurrency per cluster, add nodes (more DP ranks), or use a prefill/decode split."
                if key.startswith("ttft")
                else "Lower the concurrency per DP rank (more DP ranks), enable MTP, or use faster memory.",
                fix_zh="降低单集群并发、增加节点（更多 DP rank），或采用 PD 分离。"
                if key.startswith("ttft")
                else "降低每个 DP rank 的并发（增加 DP rank）、开启 MTP，或选用带宽更高的加速卡。",
            )
        )
    if sla.met:
        out.append(
            Check(
                "performance.latency_targets_met",
                Severity.OK,
                AREA,
                f"Latency targets met at {conc} concurrent requests (estimate; up to "
                f"{sla.max_concurrency} concurrent requests meet them).",
                f"并发 {conc} 时满足时延目标（估算；并发不超过 {sla.max_concurrency} 时均可满足）。",
                {
                    **{k: round(v, 6) for k, v in sla.values.items() if v is not None},
                    "max_concurrency": sla.max_concurrency,
                },
                field="workload.ttft_target_s" if "ttft_p50_s" in sla.targets else "workload.tpot_target_ms",
            )
        )
    return out


def _over_capacity_check(concurrency: int, capacity: int, op: sm.OperatingPoint) -> Check:
    wait = op.wait_s if math.isfinite(op.wait_s) else 0.0
    return Check(
        "performance.concurrency_above_capacity",
        Severity.ERROR,
        AREA,
        f"The workload's {concurrency} concurrent requests exceed the {capacity} this cluster serves at once; "
        f"the rest queue (about {wait:,.1f} s added to the time to first token), so the quoted latency "
        "cannot be held.",
        f"负载并发 {concurrency} 超过本集群可同时服务的 {capacity} 路，其余请求排队"
        f"（首字延迟约增加 {wait:,.1f} 秒），报价时延无法保证。",
        {"concurrency": concurrency, "capacity": capacity, "queue_wait_s": wait},
        field="workload.concurrency",
        fix={"workload.concurrency": capacity},
        fix_en=f"Quote at most {capacity} concurrent requests, or add nodes.",
        fix_zh=f"按不超过 {capacity} 路并发报价，或增加节点。",
    )


def _group_estimate(
    req: PlanRequest,
    g: GroupLayout,
    gmodel: _GroupModel,
    book: FigureBook,
    checks: list[Check],
    *,
    computed_prompt_tokens: int,
    output_tokens: int,
    context_tokens: int,
    offered_per_rank: int,
    disaggregated: bool,
) -> GroupPerformance:
    model, serving, server = req.model, req.serving, req.server
    p = g.parallel
    tp, dp, ep = gmodel.shape.tp, gmodel.shape.dp, gmodel.shape.ep
    counts = g.role in COUNTED_DECODE_ROLES
    decodes = g.role != "prefill"
    pre = gmodel.prefill
    prefill_s = pre.prefill_s

    book.put(
        f"performance.{g.name}.prefill_s",
        _v(prefill_s),
        source=ESTIMATE_SOURCE,
        active_params=model.active_params,
        prompt_tokens=computed_prompt_tokens,
        TP=tp,
        TFLOPS=_i(gmodel.tflops),
        MFU=_i(gmodel.factors.prefill_efficiency),
        compute_s=_i(pre.compute_s),
        memory_s=_i(pre.memory_s),
        collectives_s=_i(pre.comm_s),
        overhead_s=_i(pre.overhead_s),
        chunks=pre.chunks,
    )

    # ---- batch per DP rank at the quoted concurrency
    kv_fit = gmodel.kv_fit
    offered = offered_per_rank if counts else 0
    if not decodes:
        batch, limited_by = 0, "none"
    else:
        if g.role == "standby":
            offered = min(offered_per_rank, serving.max_num_seqs)  # what it would run after a failover
        batch = min(offered, gmodel.slots)
        if batch == offered:
            limited_by = "concurrency"
        elif gmodel.slots < serving.max_num_seqs:
            limited_by = "kv_capacity"
        else:
            limited_by = "max_num_seqs"
    if decodes:
        book.put(
            f"performance.{g.name}.batch_per_dp_rank",
            batch,
            source=ESTIMATE_SOURCE,
            offered=offered,
            max_num_seqs=serving.max_num_seqs,
            kv_seqs_fit=kv_fit,
            context_tokens=context_tokens,
            limited_by=limited_by,
        )
        if counts and kv_fit < min(offered, serving.max_num_seqs):
            checks.append(
                Check(
                    "performance.batch_limited_by_kv",
                    Severity.WARNING,
                    AREA,
                    f"{g.name}: the KV cache holds {kv_fit} sequences of {context_tokens:,} tokens per DP rank, "
                    f"fewer than the {min(offered, serving.max_num_seqs)} offered; the rest queue.",
                    f"{g.name}：每个 DP rank 的 KV 缓存仅能容纳 {kv_fit} 条 {context_tokens:,} Token 的序列，"
                    f"少于需承载的 {min(offered, serving.max_num_seqs)} 条并发，其余请求将排队。",
                    {"kv_seqs_fit": kv_fit, "offered": offered},
                    field="workload.concurrency",
                    fix_en="Add nodes, shorten the context, or use an FP8 KV cache.",
                    fix_zh="增加节点、缩短上下文，或采用 FP8 KV 缓存。",
                )
            )
        elif counts and offered > serving.max_num_seqs:
            checks.append(
                Check(
                    "performance.batch_limited_by_max_num_seqs",
                    Severity.WARNING,
                    AREA,
                    f"{g.name}: {offered} concurrent requests per DP rank exceed --max-num-seqs "
                    f"{serving.max_num_seqs}; the rest queue and TTFT grows.",
                    f"{g.name}：每个 DP rank 需承载 {offered} 路并发，超过 --max-num-seqs {serving.max_num_seqs}，"
                    "超出部分排队，首字延迟上升。",
                    {"offered": offered, "max_num_seqs": serving.max_num_seqs},
                    field="serving.max_num_seqs",
                    fix={"serving.max_num_seqs": min(offered, kv_fit)}
                    if kv_fit > serving.max_num_seqs
                    else {},
                    fix_en="Raise --max-num-seqs if the KV cache allows, or add DP ranks.",
                    fix_zh="如 KV 缓存允许可调高 --max-num-seqs，或增加 DP rank。",
                )
            )

    # ---- decode step
    st: sm.StepBreakdown | None = None
    if decodes:
        st = gmodel.step(max(batch, 1))
        _add_step_figures(book, g, gmodel, st, batch)

    # ---- KV transfer P → D (decode side of xPyD)
    if disaggregated and g.role == "decode" and gmodel.kv_transfer_s > 0:
        bw, fabric = sm.inter_node_bytes_s_per_device(server, scale_up_allowed=False)
        book.put(
            f"performance.{g.name}.kv_transfer_s",
            _v(gmodel.kv_transfer_s),
            label={"fabric": fabric},
            source=Source("derived", "server NICs (scale-out)"),
            prompt_tokens=computed_prompt_tokens,
            kv_bytes_per_token=gmodel.kv_per_token,
            state_bytes_per_seq=gmodel.state_per_seq,
            device_bandwidth_bytes_s=_i(bw),
            scale_out_efficiency=_i(req.performance.scale_out_efficiency),
        )

    # ---- capacity of the group at this batch
    step = st.step_s if st else 0.0
    tps = st.tokens_per_step if st else 1.0
    if g.role == "prefill":
        requests_per_s = dp / prefill_s if prefill_s > 0 else 0.0
        variant = "prefill" if prefill_s > 0 else "idle"
    elif disaggregated:
        requests_per_s = dp * batch * tps / (output_tokens * step) if step > 0 and batch > 0 else 0.0
        variant = "disaggregated" if step > 0 and batch > 0 else "idle"
    else:
        cycle = batch * prefill_s + output_tokens / tps * step
        requests_per_s = dp * batch / cycle if cycle > 0 and batch > 0 else 0.0
        variant = "aggregated" if cycle > 0 and batch > 0 else "idle"
    output_tps = requests_per_s * output_tokens if decodes else 0.0
    book.put(
        f"performance.{g.name}.requests_per_s",
        _v(requests_per_s),
        variant=variant,
        source=ESTIMATE_SOURCE,
        DP=dp,
        B=batch,
        prefill_s=_i(prefill_s),
        output_tokens=output_tokens,
        step_s=_i(step),
        tokens_per_step=_i(tps),
    )
    if decodes:
        book.put(
            f"performance.{g.name}.output_tokens_per_s",
            _v(output_tps),
            source=ESTIMATE_SOURCE,
            requests_per_s=_i(requests_per_s),
            output_tokens=output_tokens,
            counts_toward_throughput=counts,
        )
    if decodes and kv_fit == 0 and (counts or g.role == "standby"):
        checks.append(
            Check(
                "performance.no_decode_capacity",
                Severity.WARNING,
                AREA,
                f"{g.name}: no sequence of {context_tokens:,} tokens fits the KV cache; throughput is zero.",
                f"{g.name}：KV 缓存放不下一条 {context_tokens:,} Token 的序列，吞吐为零。",
                {"kv_seqs_fit": kv_fit},
                field="workload.input_tokens",
                fix_en="Shorten the context or add memory (more nodes / a larger TP).",
                fix_zh="缩短上下文，或增加显存（更多节点 / 更大 TP）。",
            )
        )

    return GroupPerformance(
        group=g.name,
        role=g.role,
        counts_toward_throughput=counts,
        nodes=g.nodes,
        tp=tp,
        dp=dp,
        ep=ep if p.expert_parallel else 1,
        offered_seqs_per_dp_rank=offered,
        kv_seqs_fit_per_dp_rank=kv_fit,
        batch_per_dp_rank=batch,
        batch_limited_by=limited_by,
        weights_bytes_read_per_rank=int(st.weights_bytes) if st else 0,
        experts_touched_fraction=st.experts_touched if st else 0.0,
        kv_bytes_read_per_rank=int(st.kv_bytes) if st else 0,
        bytes_per_step_per_rank=int(st.weights_bytes + st.kv_bytes) if st else 0,
        memory_time_s=st.memory_s if st else 0.0,
        all_to_all_s=st.ep_dispatch_combine_s if st else 0.0,
        decode_step_s=step,
        prefill_s=prefill_s,
        kv_transfer_s=gmodel.kv_transfer_s,
        requests_per_s=requests_per_s,
        output_tokens_per_s_per_dp_rank=output_tps / dp if dp else 0.0,
        output_tokens_per_s=output_tps,
        compute_time_s=st.compute_s if st else 0.0,
        tp_allreduce_s=st.tp_allreduce_s if st else 0.0,
        step_overhead_s=st.overhead_s if st else 0.0,
        tokens_per_step=tps,
        slots_per_dp_rank=gmodel.slots,
    )


def _add_step_figures(
    book: FigureBook, g: GroupLayout, gm: _GroupModel, st: sm.StepBreakdown, batch: int
) -> None:
    model = gm.req.model
    shape = gm.shape
    comm = st.comm
    assert comm is not None  # serving_model.decode_step always sets it
    book.put(
        f"performance.{g.name}.experts_touched_fraction",
        _v(st.experts_touched),
        variant="moe" if model.is_moe else "dense",
        source=ESTIMATE_SOURCE,
        top_k=model.experts_per_token,
        experts=model.num_experts,
        B=max(batch, 1),
        tokens_per_seq_per_step=1 + gm.draft_tokens,
        DP_sharing_experts=shape.dp if shape.expert_parallel else 1,
        experts_per_rank=g.experts_per_rank,
    )
    # Routed experts are split over EP with expert parallelism, else over TP (a dense model has none).
    if shape.expert_parallel:
        book.put(
            f"performance.{g.name}.bytes_per_step_per_rank",
            _v(st.weights_bytes + st.kv_bytes),
            variant="ep",
            source=ESTIMATE_SOURCE,
            non_expert_lm_bytes=_i(gm.lm_non_expert),
            TP=shape.tp,
            expert_bytes=model.expert_weight_bytes,
            EP=shape.ep,
            touched=_i(st.experts_touched),
            B=batch,
            mean_context=_i(gm.mean_context),
            kv_bytes_per_token=gm.kv_per_token,
            state_bytes_per_seq=gm.state_per_seq,
        )
    else:
        book.put(
            f"performance.{g.name}.bytes_per_step_per_rank",
            _v(st.weights_bytes + st.kv_bytes),
            variant="tp",
            source=ESTIMATE_SOURCE,
            non_expert_lm_bytes=_i(gm.lm_non_expert),
            TP=shape.tp,
            expert_bytes=model.expert_weight_bytes,
            touched=_i(st.experts_touched),
            B=batch,
            mean_context=_i(gm.mean_context),
            kv_bytes_per_token=gm.kv_per_token,
            state_bytes_per_seq=gm.state_per_seq,
        )
    bw = gm.req.server.accelerator.memory_bandwidth_bytes_s
    book.put(
        f"performance.{g.name}.memory_time_s",
        _v(st.memory_s),
        source=ESTIMATE_SOURCE,
        bytes_per_step=_i(st.weights_bytes + st.kv_bytes),
        bandwidth_bytes_s=_i(bw),
        bandwidth_efficiency=_i(gm.factors.bandwidth_efficiency),
    )
    book.put(
        f"performance.{g.name}.compute_time_s",
        _v(st.compute_s),
        source=ESTIMATE_SOURCE,
        B=batch,
        draft_tokens=gm.draft_tokens,
        active_params=model.active_params,
        attention_flops_per_token=_i(st.attention_flops_per_token),
        TP=shape.tp,
        TFLOPS=_i(gm.tflops),
        MFU=_i(gm.factors.compute_efficiency),
    )
    book.put(
        f"performance.{g.name}.tp_allreduce_s",
        _v(st.tp_allreduce_s),
        label={
            "fabric_en": st.fabric if shape.tp > 1 else "none",
            "fabric_zh": st.fabric if shape.tp > 1 else "无",
        },
        source=Source("derived", "scale-up fabric of the server (catalog)"),
        TP=shape.tp,
        layers=model.num_layers,
        hidden=model.hidden_size,
        latency_s=_i(gm.factors.collective_latency_s),
        all_reduces=comm.all_reduces,
        latency_factor=_i(comm.tp_latency_factor),
        tokens=_i(comm.tokens),
        link_bytes_s=_i(comm.tp_link_bytes_s),
    )
    book.put(
        f"performance.{g.name}.all_to_all_s",
        _v(st.ep_dispatch_combine_s),
        variant="ep" if comm.ep_layers else "none",
        label={"fabric": st.fabric},
        source=Source("derived", "server NICs and scale-up fabric (catalog)"),
        EP=shape.ep if shape.expert_parallel else 1,
        moe_layers=model.moe_layers,
        top_k=model.experts_per_token,
        hidden=model.hidden_size,
        nodes=shape.nodes,
        scale_out_efficiency=_i(gm.scale_out_efficiency),
        tokens=_i(comm.tokens),
        TP=shape.tp,
        latency_s=_i(comm.ep_latency_s),
        dispatch_bytes=comm.dispatch_bytes,
        combine_bytes=comm.combine_bytes,
        scale_up_bytes_s=_i(comm.scale_up_bytes_s),
        scale_out_bytes_s=_i(comm.scale_out_bytes_s),
    )
    book.put(
        f"performance.{g.name}.decode_step_s",
        _v(st.step_s),
        source=ESTIMATE_SOURCE,
        overhead_s=_i(st.overhead_s),
        memory_time_s=_i(st.memory_s),
        compute_time_s=_i(st.compute_s),
        tp_allreduce_s=_i(st.tp_allreduce_s),
        all_to_all_s=_i(st.ep_dispatch_combine_s),
        draft_s=_i(st.draft_s),
        tokens_per_step=_i(st.tokens_per_step),
    )


def _scaled(g: GroupPerformance, scale: float) -> GroupPerformance:
    """Scale a group's throughput so the groups add up to the measured figure."""
    return replace(
        g,
        requests_per_s=g.requests_per_s * scale,
        output_tokens_per_s=g.output_tokens_per_s * scale,
        output_tokens_per_s_per_dp_rank=g.output_tokens_per_s_per_dp_rank * scale,
    )


def _pd_balance(
    p_cap: float, d_cap: float, prefill: list[GroupPerformance], decode: list[GroupPerformance]
) -> PdBalance:
    # A side with no capacity is the bottleneck; keep the ratio finite for JSON.
    ratio = p_cap / d_cap if d_cap > 0 else 0.0
    if d_cap <= 0:
        bottleneck = "decode"
    elif 0.9 <= ratio <= 1.1:
        bottleneck = "balanced"
    else:
        bottleneck = "prefill" if ratio < 1 else "decode"
    p_nodes = sum(g.nodes for g in prefill)
    d_nodes = sum(g.nodes for g in decode)
    total = p_nodes + d_nodes
    per_p = p_cap / p_nodes if p_nodes else 0.0
    per_d = d_cap / d_nodes if d_nodes else 0.0
    if per_p > 0 and per_d > 0:
        # x·per_p = (total − x)·per_d balances the two sides
        best_p = min(total - 1, max(1, round(total * per_d / (per_p + per_d))))
    else:
        best_p = p_nodes
    return PdBalance(p_cap, d_cap, ratio, bottleneck, best_p, total - best_p)


def _add_pd_figures(
    book: FigureBook,
    checks: list[Check],
    bal: PdBalance,
    prefill: list[GroupPerformance],
    decode: list[GroupPerformance],
) -> None:
    book.put(
        "performance.pd.prefill_requests_per_s",
        _v(bal.prefill_requests_per_s),
        source=ESTIMATE_SOURCE,
        prefill_groups=[g.group for g in prefill],
    )
    book.put(
        "performance.pd.decode_requests_per_s",
        _v(bal.decode_requests_per_s),
        source=ESTIMATE_SOURCE,
        decode_groups=[g.group for g in decode],
    )
    book.put(
        "performance.pd.ratio",
        _v(bal.ratio),
        variant="ratio" if bal.decode_requests_per_s > 0 else "no_decode",
        source=ESTIMATE_SOURCE,
        bottleneck=bal.bottleneck,
        prefill_requests_per_s=_i(bal.prefill_requests_per_s),
        decode_requests_per_s=_i(bal.decode_requests_per_s),
    )
    if bal.prefill_requests_per_s > 0 and bal.decode_requests_per_s > 0 and not 0.67 <= bal.ratio <= 1.5:
        side_en = "prefill" if bal.bottleneck == "prefill" else "decode"
        side_zh = "预填充" if bal.bottleneck == "prefill" else "解码"
        checks.append(
            Check(
                "performance.pd_imbalance",
                Severity.WARNING,
                AREA,
                f"P:D capacity ratio {bal.ratio:.2f}: the {side_en} side is the bottleneck; "
                f"about {bal.suggested_prefill_nodes}P{bal.suggested_decode_nodes}D would balance this workload.",
                f"P:D 能力比为 {bal.ratio:.2f}，瓶颈在{side_zh}侧；按当前负载约 "
                f"{bal.suggested_prefill_nodes}P{bal.suggested_decode_nodes}D 可达平衡。",
                {"ratio": bal.ratio, "bottleneck": bal.bottleneck},
                field="topology.prefill_nodes",
                fix={
                    "topology.prefill_nodes": bal.suggested_prefill_nodes,
                    "topology.decode_nodes": bal.suggested_decode_nodes,
                },
                fix_en=f"Split the nodes {bal.suggested_prefill_nodes}P{bal.suggested_decode_nodes}D.",
                fix_zh=f"将节点调整为 {bal.suggested_prefill_nodes}P{bal.suggested_decode_nodes}D。",
            )
        )


_KNOBS = (
    # name, English, Chinese, lowest allowed, highest allowed, low end inclusive, high end inclusive
    ("decode_bandwidth_efficiency", "Decode bandwidth efficiency", "解码带宽利用率", 0.0, 1.0, False, True),
    ("prefill_mfu", "Prefill MFU", "预填充算力利用率 (MFU)", 0.0, 1.0, False, True),
    ("scale_out_efficiency", "Scale-out efficiency", "跨节点网络效率", 0.0, 1.0, False, True),
    ("prefix_cache_hit_rate", "Prefix-cache hit rate", "前缀缓存命中率", 0.0, 1.0, True, False),
    ("step_overhead_ms", "Fixed time per step (ms)", "每步固定开销（毫秒）", 0.0, 1000.0, True, True),
    ("speculative_tokens", "Speculative draft tokens", "投机解码草稿 Token 数", 0, 16, True, True),
    ("speculative_acceptance_rate", "Draft-token acceptance rate", "草稿 Token 接受率", 0.0, 1.0, True, True),
)


def _in_range(value: Any, low: float, high: float, low_in: bool, high_in: bool) -> bool:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return False
    above = value >= low if low_in else value > low
    below = value <= high if high_in else value < high
    return above and below


def _sanitised(req: PlanRequest, checks: list[Check]) -> PlanRequest:
    """Refuse assumptions outside their range (a check each) and estimate with the defaults."""
    default = PerformanceSpec()
    fixes: dict[str, Any] = {}
    for name, en, zh, low, high, low_in, high_in in _KNOBS:
        value = getattr(req.performance, name)
        if value is None or _in_range(value, low, high, low_in, high_in):
            continue
        fixes[name] = getattr(default, name)
        shown = "the calibrated value" if fixes[name] is None else fixes[name]
        shown_zh = "校准值" if fixes[name] is None else fixes[name]
        span = f"{'from' if low_in else 'above'} {low} {'to' if high_in else 'to below'} {high}"
        span_zh = f"{low}{'（含）' if low_in else '（不含）'}至 {high}{'（含）' if high_in else '（不含）'}"
        checks.append(
            Check(
                "performance.knob_out_of_range",
                Severity.ERROR,
                AREA,
                f"{en} {value} must be {span}; the estimate uses {shown} instead.",
                f"{zh} {value} 须在 {span_zh} 之间，估算暂按{shown_zh}计算。",
                {"value": value if isinstance(value, (int, float)) and math.isfinite(value) else str(value)},
                field=f"performance.{name}",
                fix={f"performance.{name}": fixes[name]},
                fix_en=f"Use {shown}.",
                fix_zh=f"建议改为{shown_zh}。",
            )
        )
    if req.workload.concurrency < 0 or req.workload.input_tokens < 0 or req.workload.output_tokens < 0:
        checks.append(
            Check(
                "performance.workload_negative",
                Severity.ERROR,
                AREA,
                "Concurrency and token counts cannot be negative.",
                "并发数与 Token 数不能为负数。",
                field="workload.concurrency",
            )
        )
    return replace(req, performance=replace(req.performance, **fixes)) if fixes else req
