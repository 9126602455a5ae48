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
from .types import (
    Check,
    CurvePoint,
    Figure,
    GroupLayout,
    GroupMemory,
    GroupPerformance,
    LayoutResult,
    MemoryResult,
    PdBalance,
    PerformanceResult,
    PerformanceSpec,
    PlanRequest,
    Severity,
    SlaResult,
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


class _Figures:
    """Collects explained figures under stable keys."""

    def __init__(self) -> None:
        self.items: dict[str, Figure] = {}

    def add(
        self,
        key: str,
        value: Any,
        unit: str,
        en: str,
        zh: str,
        formula: str = "",
        inputs: Mapping[str, Any] | None = None,
        source: Source = ESTIMATE_SOURCE,
    ) -> None:
        if isinstance(value, float):
            value = round(value, 6) if math.isfinite(value) else 0.0
        clean = {
            k: (round(v, 9) if isinstance(v, float) and math.isfinite(v) else v)
            for k, v in (inputs or {}).items()
        }
        self.items[key] = Figure(key, value, unit, en, zh, formula, clean, source)


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
    figs = _Figures()
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

    figs.add(
        "performance.prompt_tokens_computed",
        computed_prompt_tokens,
        "tokens",
        "Prompt tokens computed per request (after prefix-cache hits)",
        "每请求实际计算的输入 Token 数（扣除前缀缓存命中）",
        "input_tokens × (1 − prefix_cache_hit_rate)",
        {"input_tokens": prompt_tokens, "prefix_cache_hit_rate": hit},
        Source("input", "workload.input_tokens, performance.prefix_cache_hit_rate"),
    )
    figs.add(
        "performance.tflops_per_device",
        tflops,
        "TFLOPS",
        f"Dense TFLOPS per device at the checkpoint's activation precision ({tflops_precision or 'n/a'})",
        f"按模型激活精度取的单卡稠密算力（{tflops_precision or '无'}）",
        "catalog TFLOPS at the model's activation precision (W8A8/W4A8 → INT8), else BF16",
        {"activation_format": model.activation_format, "precision_used": tflops_precision},
        Source("derived", "accelerator catalog"),
    )
    _add_factor_figures(figs, req, factors, stack)
    if draft:
        figs.add(
            "performance.tokens_per_step",
            sm.accepted_tokens_per_step(draft, acceptance),
            "tokens",
            "Tokens emitted per sequence per decode step (speculative decoding)",
            "每个解码步每条序列产出的 Token 数（投机解码）",
            "(1 − a^(k+1)) ÷ (1 − a), vLLM rejection sampler (vllm/v1/sample/rejection_sampler.py, main)",
            {"k_draft_tokens": draft, "a_acceptance_rate": acceptance},
            Source("input", "performance.speculative_tokens, performance.speculative_acceptance_rate"),
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
                figs,
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
    if disaggregated and prefill_models and decode_models:

        def point_fn(c: float) -> sm.OperatingPoint:
            return _disaggregated_point(prefill_models, decode_models, c, output_tokens)

        capacity_users = sum(m.slots * m.shape.dp for m in decode_models)
    elif counted_models:

        def point_fn(c: float) -> sm.OperatingPoint:
            return _aggregated_point(counted_models, c, output_tokens)

        capacity_users = sum(m.slots * m.shape.dp for m in counted_models)
    else:

        def point_fn(c: float) -> sm.OperatingPoint:
            return sm.OperatingPoint(c, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, False)

        capacity_users = 0
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
    if disaggregated and prefill_groups and decode_groups:
        p_cap = sum(g.requests_per_s for g in prefill_groups)
        d_cap = sum(g.requests_per_s for g in decode_groups)
        pd_balance = _pd_balance(p_cap, d_cap, prefill_groups, decode_groups)
        p_nodes = sum(g.nodes for g in prefill_groups)
        d_nodes = sum(g.nodes for g in decode_groups)
        prefill_share = p_nodes / (p_nodes + d_nodes)
        share_formula = "prefill nodes ÷ (prefill + decode nodes)"
        share_inputs: dict[str, Any] = {"prefill_nodes": p_nodes, "decode_nodes": d_nodes}
        _add_pd_figures(figs, checks, pd_balance, req)
    else:
        lead = counted[0] if counted else None
        if lead and lead.batch_per_dp_rank > 0:
            busy_prefill = lead.batch_per_dp_rank * lead.prefill_s
            busy_decode = output_tokens * lead.tpot_s
            prefill_share = busy_prefill / (busy_prefill + busy_decode)
        else:
            prefill_share = 0.0
        share_formula = "B × prefill_s ÷ (B × prefill_s + output_tokens × step_s ÷ tokens per step)"
        share_inputs = {
            "B": lead.batch_per_dp_rank if lead else 0,
            "prefill_s": lead.prefill_s if lead else 0.0,
            "output_tokens": output_tokens,
            "tpot_s": lead.tpot_s if lead else 0.0,
        }

    output_tps = requests_per_s * output_tokens
    measured_tps = workload.measured_output_tokens_per_s
    measured = measured_tps is not None and measured_tps > 0
    estimated_output_tps = output_tps
    if measured_tps is not None and measured_tps > 0:  # i.e. ``measured``, written so the type narrows
        output_tps = float(measured_tps)
        scale = output_tps / estimated_output_tps if estimated_output_tps > 0 else 0.0
        requests_per_s = output_tps / output_tokens
        total_counted = sum(g.output_tokens_per_s for g in counted)
        groups = [_scaled(g, output_tps / total_counted if total_counted > 0 else 0.0) for g in groups]
        for scaled in groups:
            key = f"performance.{scaled.group}.output_tokens_per_s"
            if key in figs.items:
                figs.items[key] = replace(
                    figs.items[key],
                    value=round(scaled.output_tokens_per_s, 6),
                    formula="estimate × measured ÷ estimated deployment throughput",
                    inputs={"scale": round(scale, 9)},
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
    figs.add(
        "performance.ttft_s",
        ttft,
        "s",
        "Time to first token, mean (estimate)",
        "首字延迟 TTFT 均值（估算）",
        "prefill_s + queue wait + KV transfer P→D (xPyD) + one decode step",
        {
            "prefill_s": ttft_lead.prefill_s if ttft_lead is not None else 0.0,
            "queue_wait_s": op.wait_s if math.isfinite(op.wait_s) else 0.0,
            "concurrency": concurrency,
        },
        ESTIMATE_SOURCE,
    )
    figs.add(
        "performance.tpot_s",
        tpot,
        "s",
        "Time per output token, mean (estimate)",
        "每字延迟 TPOT 均值（估算）",
        "(output ÷ tokens per step × step + other requests' prefill chunks) ÷ output",
        {
            "decode_step_s": counted[0].decode_step_s if counted else 0.0,
            "tokens_per_step": counted[0].tokens_per_step if counted else 1.0,
            "batch_per_dp_rank": round(op.batch_per_rank, 3),
            "concurrency": concurrency,
        },
        ESTIMATE_SOURCE,
    )
    figs.add(
        "performance.queue_wait_s",
        op.wait_s if math.isfinite(op.wait_s) else 0.0,
        "s",
        "Queue wait before prefill at the quoted concurrency (estimate)",
        "报价并发下预填充前的排队等待（估算）",
        "closed loop: users beyond the slots wait concurrency ÷ request rate − cycle time (Little's law); "
        "prefill queue: M/D/1 wait ρ·prefill ÷ (2(1 − ρ)), M/D/c for a separate prefill pool (xPyD)",
        {"concurrency": concurrency, "capacity_concurrency": capacity_users},
        ESTIMATE_SOURCE,
    )
    figs.add(
        "performance.ttft_p90_s",
        op.ttft_p90_s if finite else 0.0,
        "s",
        "Time to first token, P90 (estimate)",
        "首字延迟 TTFT P90（估算）",
        f"service × {sm.TTFT_P90_OVER_MEAN_IDLE} + ln 10 × mean queue wait (exponential wait tail)",
        {"queue_wait_s": op.wait_s if math.isfinite(op.wait_s) else 0.0},
        ESTIMATE_SOURCE,
    )
    figs.add(
        "performance.tpot_p90_s",
        op.tpot_p90_s if finite else 0.0,
        "s",
        "Time per output token, P90 (estimate)",
        "每字延迟 TPOT P90（估算）",
        f"mean TPOT × {sm.TPOT_P90_OVER_MEAN} (spread seen in published sweeps)",
        {"tpot_s": tpot},
        ESTIMATE_SOURCE,
    )
    figs.add(
        "performance.requests_per_s",
        requests_per_s,
        "req/s",
        "Requests per second (deployment)",
        "每秒请求数（整体）",
        "measured_output_tokens_per_s ÷ output_tokens"
        if measured
        else "closed loop: concurrency ÷ (TTFT + output × TPOT), capped by the running slots",
        {
            "output_tokens": output_tokens,
            "concurrency": concurrency,
            "serving_groups": [g.group for g in counted],
        },
        tput_source,
    )
    figs.add(
        "performance.output_tokens_per_s",
        output_tps,
        "tokens/s",
        "Output throughput (deployment)",
        "输出吞吐（整体）",
        "measured" if measured else "requests_per_s × output_tokens",
        {
            "requests_per_s": requests_per_s,
            "output_tokens": output_tokens,
            "estimated_tokens_per_s": estimated_output_tps,
        },
        tput_source,
    )
    low, high = sm.ERROR_BAND_LOW, sm.ERROR_BAND_HIGH
    figs.add(
        "performance.output_tokens_per_s_range",
        f"{output_tps / high:,.0f}–{output_tps / low:,.0f}" if not measured else f"{output_tps:,.0f}",
        "tokens/s",
        "Likely range of the measured throughput (calibration error band)",
        "实测吞吐的可能区间（按校准误差带）",
        "estimate ÷ band high … estimate ÷ band low",
        {"band_low": low, "band_high": high},
        CALIBRATION_SOURCE,
    )
    figs.add(
        "performance.input_tokens_per_s",
        input_tps,
        "tokens/s",
        "Input tokens processed per second (deployment)",
        "输入 Token 处理速率（整体）",
        "requests_per_s × input_tokens",
        {"requests_per_s": requests_per_s, "input_tokens": prompt_tokens},
        tput_source,
    )
    figs.add(
        "performance.output_tokens_per_s_per_dp_rank",
        per_dp_rank,
        "tokens/s",
        "Output throughput per serving DP rank",
        "每个 DP rank 的输出吞吐",
        "output_tokens_per_s ÷ serving DP ranks",
        {"serving_dp_ranks": counted_dp},
        tput_source,
    )
    figs.add(
        "performance.prefill_time_share",
        prefill_share,
        "fraction",
        "Share of accelerator time spent on prefill (used to split cost between input and output tokens)",
        "预填充占用的算力时间比例（用于在输入/输出 Token 间分摊成本）",
        share_formula,
        share_inputs,
    )
    figs.add(
        "performance.capacity_concurrency",
        capacity_users,
        "users",
        "Concurrent requests served at once before new ones queue",
        "请求开始排队前可同时服务的并发数",
        "Σ DP ranks × min(max_num_seqs, sequences the KV cache holds)"
        + ("; and prefill utilisation below 95 %" if disaggregated else ""),
        {"concurrency": concurrency},
    )
    figs.add(
        "performance.measured",
        measured,
        "",
        "Throughput measured by a load test",
        "吞吐为压测实测值",
        "workload.measured_output_tokens_per_s is set",
        {},
        Source("input", "workload"),
    )

    curve = _curve(point_fn, concurrency, capacity_users, serving_devices)
    sla = _sla(req, op, point_fn, capacity_users)
    if sla is not None:
        _add_sla_figures(figs, sla)
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
        figures=figs.items,
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


def _add_factor_figures(figs: _Figures, req: PlanRequest, f: sm.PlatformFactors, stack: str) -> None:
    perf = req.performance
    base = sm.PLATFORM_FACTORS[stack]
    rows = (
        ("bandwidth_efficiency", f.bandwidth_efficiency, perf.decode_bandwidth_efficiency, "fraction",
         "Achieved share of peak memory bandwidth in decode", "解码阶段实际达到的显存带宽比例"),
        ("compute_efficiency", f.compute_efficiency, None, "fraction",
         "Achieved share of peak dense compute in decode", "解码阶段实际达到的稠密算力比例"),
        ("prefill_efficiency", f.prefill_efficiency, perf.prefill_mfu, "fraction",
         "Achieved share of peak dense compute in prefill (MFU)", "预填充阶段实际达到的稠密算力比例（MFU）"),
        ("request_overhead_s", f.request_overhead_s, None, "s",
         "Fixed time per request before its first token (API server, tokenizer, scheduling)",
         "每请求首字前的固定开销（API 服务、分词、调度）"),
        ("step_overhead_s", f.step_overhead_s,
         perf.step_overhead_ms if perf.step_overhead_ms is not None else (None if perf.graph_mode else "eager"), "s",
         "Fixed time per forward pass (kernel launch, scheduler, sampling"
         + ("" if perf.graph_mode else "; eager mode: every layer's operators launched from the host") + ")",
         "每次前向的固定开销（算子下发、调度、采样" + ("" if perf.graph_mode else "；非图模式：逐层由主机下发算子") + "）"),
        ("collective_latency_s", f.collective_latency_s, None, "s",
         "Fixed latency of one collective (all-reduce, dispatch or combine)", "单次集合通信的固定时延（all-reduce、dispatch 或 combine）"),
    )  # fmt: skip
    for name, value, override, unit, en, zh in rows:
        figs.add(
            f"performance.factors.{name}",
            value,
            unit,
            f"{en} ({stack})",
            f"{zh}（{stack}）",
            (
                "calibrated graph-mode overhead + layers × eager launch cost per layer (assumed)"
                if override == "eager"
                else ("request override" if override is not None else f"calibrated for the {stack} stack")
            ),
            {"calibrated": getattr(base, name)},
            (
                Source("assumed", "eager dispatch cost per layer (serving_model.EAGER_LAYER_OVERHEAD_S)")
                if override == "eager"
                else Source("input", f"performance.{name}")
                if override is not None
                else CALIBRATION_SOURCE
            ),
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


def _add_sla_figures(figs: _Figures, sla: SlaResult) -> None:
    figs.add(
        "performance.sla.max_concurrency",
        sla.max_concurrency,
        "users",
        "Largest concurrency that meets every latency target (estimate)",
        "满足全部时延目标的最大并发数（估算）",
        "largest C with TTFT and TPOT (P50 / P90) within the targets",
        dict(sla.targets),
    )
    figs.add(
        "performance.sla.met",
        bool(sla.met),
        "",
        "Latency targets met at the quoted concurrency",
        "报价并发下满足时延目标",
        "every estimated percentile ≤ its target",
        {k: (round(v, 6) if v is not None else None) for k, v in sla.values.items()},
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
    figs: _Figures,
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
    k = f"performance.{g.name}"
    counts = g.role in COUNTED_DECODE_ROLES
    decodes = g.role != "prefill"
    pre = gmodel.prefill
    prefill_s = pre.prefill_s

    figs.add(
        f"{k}.prefill_s",
        prefill_s,
        "s",
        f"{g.name}: prefill time of one prompt per DP rank",
        f"{g.name}：单个 DP rank 处理一个输入的预填充时间",
        "chunks × overhead + max((2 × active params + attention) × prompt ÷ TP ÷ (TFLOPS × MFU), "
        "chunks × weights ÷ (bandwidth × efficiency)) + TP/EP collectives",
        {
            "active_params": model.active_params,
            "prompt_tokens": computed_prompt_tokens,
            "TP": tp,
            "TFLOPS": gmodel.tflops,
            "MFU": gmodel.factors.prefill_efficiency,
            "compute_s": pre.compute_s,
            "memory_s": pre.memory_s,
            "collectives_s": pre.comm_s,
            "overhead_s": pre.overhead_s,
            "chunks": pre.chunks,
        },
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
        figs.add(
            f"{k}.batch_per_dp_rank",
            batch,
            "sequences",
            f"{g.name}: running sequences per DP rank",
            f"{g.name}：每个 DP rank 同时解码的序列数",
            "min(concurrency ÷ serving DP ranks, max_num_seqs, sequences the KV cache holds)",
            {
                "offered": offered,
                "max_num_seqs": serving.max_num_seqs,
                "kv_seqs_fit": kv_fit,
                "context_tokens": context_tokens,
                "limited_by": limited_by,
            },
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
        _add_step_figures(figs, k, g, gmodel, st, batch)

    # ---- KV transfer P → D (decode side of xPyD)
    if disaggregated and g.role == "decode" and gmodel.kv_transfer_s > 0:
        bw, fabric = sm.inter_node_bytes_s_per_device(server, scale_up_allowed=False)
        figs.add(
            f"{k}.kv_transfer_s",
            gmodel.kv_transfer_s,
            "s",
            f"{g.name}: KV transfer prefill → decode per request ({fabric})",
            f"{g.name}：每请求 KV 从预填充传到解码节点的时间（{fabric}）",
            "(prompt × KV/token/rank + state/seq/rank) ÷ (per-device scale-out bandwidth × efficiency)",
            {
                "prompt_tokens": computed_prompt_tokens,
                "kv_bytes_per_token": gmodel.kv_per_token,
                "device_bandwidth_bytes_s": bw,
                "scale_out_efficiency": req.performance.scale_out_efficiency,
            },
            Source("derived", "server NICs (scale-out)"),
        )

    # ---- capacity of the group at this batch
    step = st.step_s if st else 0.0
    tps = st.tokens_per_step if st else 1.0
    if g.role == "prefill":
        requests_per_s = dp / prefill_s if prefill_s > 0 else 0.0
        formula = "DP ÷ prefill_s"
    elif disaggregated:
        requests_per_s = dp * batch * tps / (output_tokens * step) if step > 0 and batch > 0 else 0.0
        formula = "DP × B × tokens per step ÷ (output_tokens × step_s)"
    else:
        cycle = batch * prefill_s + output_tokens / tps * step
        requests_per_s = dp * batch / cycle if cycle > 0 and batch > 0 else 0.0
        formula = "DP × B ÷ (B × prefill_s + output_tokens ÷ tokens per step × step_s)"
    output_tps = requests_per_s * output_tokens if decodes else 0.0
    figs.add(
        f"{k}.requests_per_s",
        requests_per_s,
        "req/s",
        f"{g.name}: request capacity at the quoted concurrency (estimate)",
        f"{g.name}：报价并发下的请求处理能力（估算）",
        formula,
        {"DP": dp, "B": batch, "prefill_s": prefill_s, "output_tokens": output_tokens, "step_s": step},
    )
    if decodes:
        figs.add(
            f"{k}.output_tokens_per_s",
            output_tps,
            "tokens/s",
            f"{g.name}: output throughput (estimate)",
            f"{g.name}：输出吞吐（估算）",
            "requests_per_s × output_tokens",
            {
                "requests_per_s": requests_per_s,
                "output_tokens": output_tokens,
                "counts_toward_throughput": counts,
            },
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
    figs: _Figures, k: str, g: GroupLayout, gm: _GroupModel, st: sm.StepBreakdown, batch: int
) -> None:
    model = gm.req.model
    shape = gm.shape
    divisor = "EP" if shape.expert_parallel else "TP"
    figs.add(
        f"{k}.experts_touched_fraction",
        st.experts_touched,
        "fraction",
        f"{g.name}: share of a rank's experts touched per decode step",
        f"{g.name}：每个解码步中单卡被激活的专家比例",
        "1 − (1 − top_k ÷ experts)^(tokens routed through the rank's experts)",
        {
            "top_k": model.experts_per_token,
            "experts": model.num_experts,
            "B": max(batch, 1),
            "tokens_per_seq_per_step": 1 + gm.draft_tokens,
            "DP_sharing_experts": shape.dp if shape.expert_parallel else 1,
            "experts_per_rank": g.experts_per_rank,
        },
    )
    figs.add(
        f"{k}.bytes_per_step_per_rank",
        st.weights_bytes + st.kv_bytes,
        "bytes",
        f"{g.name}: bytes read per decode step per rank",
        f"{g.name}：每卡每个解码步读取的字节数",
        f"non_expert ÷ TP + touched × experts ÷ {divisor} + B × (mean_context × KV/token + state/seq)",
        {
            "non_expert_lm_bytes": gm.lm_non_expert,
            "TP": shape.tp,
            "expert_bytes": model.expert_weight_bytes,
            divisor: shape.ep if shape.expert_parallel else shape.tp,
            "touched": st.experts_touched,
            "B": batch,
            "mean_context": gm.mean_context,
            "kv_bytes_per_token": gm.kv_per_token,
            "state_bytes_per_seq": gm.state_per_seq,
        },
    )
    bw = gm.req.server.accelerator.memory_bandwidth_bytes_s
    figs.add(
        f"{k}.memory_time_s",
        st.memory_s,
        "s",
        f"{g.name}: memory time per decode step",
        f"{g.name}：每个解码步的访存时间",
        "bytes_per_step ÷ (bandwidth × bandwidth_efficiency)",
        {
            "bytes_per_step": st.weights_bytes + st.kv_bytes,
            "bandwidth_bytes_s": bw,
            "bandwidth_efficiency": gm.factors.bandwidth_efficiency,
        },
    )
    figs.add(
        f"{k}.compute_time_s",
        st.compute_s,
        "s",
        f"{g.name}: compute time per decode step",
        f"{g.name}：每个解码步的计算时间",
        "B × (1 + draft tokens) × (2 × active params + attention FLOPs) ÷ TP ÷ (TFLOPS × MFU)",
        {
            "B": batch,
            "draft_tokens": gm.draft_tokens,
            "active_params": model.active_params,
            "TP": shape.tp,
            "TFLOPS": gm.tflops,
            "MFU": gm.factors.compute_efficiency,
        },
    )
    figs.add(
        f"{k}.tp_allreduce_s",
        st.tp_allreduce_s,
        "s",
        f"{g.name}: TP all-reduces per decode step ({st.fabric if shape.tp > 1 else 'none'})",
        f"{g.name}：每个解码步的 TP all-reduce 时间（{st.fabric if shape.tp > 1 else '无'}）",
        "count × (latency + 2 × (TP − 1) ÷ TP × tokens × hidden × 2 B ÷ link bandwidth)",
        {
            "TP": shape.tp,
            "layers": model.num_layers,
            "hidden": model.hidden_size,
            "latency_s": gm.factors.collective_latency_s,
        },
        Source("derived", "scale-up fabric of the server (catalog)"),
    )
    figs.add(
        f"{k}.all_to_all_s",
        st.ep_dispatch_combine_s,
        "s",
        f"{g.name}: EP dispatch + combine per decode step ({st.fabric})",
        f"{g.name}：每个解码步专家并行 dispatch + combine 时间（{st.fabric}）",
        "MoE layers × (2 × latency + tokens × top_k × hidden × (dispatch + combine bytes) × (EP − 1) ÷ EP "
        "÷ bandwidth of the fabric crossed)",
        {
            "EP": shape.ep if shape.expert_parallel else 1,
            "moe_layers": model.moe_layers,
            "top_k": model.experts_per_token,
            "hidden": model.hidden_size,
            "nodes": shape.nodes,
            "scale_out_efficiency": gm.scale_out_efficiency,
        },
        Source("derived", "server NICs and scale-up fabric (catalog)"),
    )
    figs.add(
        f"{k}.decode_step_s",
        st.step_s,
        "s",
        f"{g.name}: decode step time (estimate)",
        f"{g.name}：解码步时长（估算）",
        "overhead + max(memory, compute) + TP all-reduce + EP dispatch/combine (+ draft head)",
        {
            "overhead_s": st.overhead_s,
            "memory_time_s": st.memory_s,
            "compute_time_s": st.compute_s,
            "tp_allreduce_s": st.tp_allreduce_s,
            "all_to_all_s": st.ep_dispatch_combine_s,
            "draft_s": st.draft_s,
            "tokens_per_step": st.tokens_per_step,
        },
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


def _add_pd_figures(figs: _Figures, checks: list[Check], bal: PdBalance, req: PlanRequest) -> None:
    figs.add(
        "performance.pd.prefill_requests_per_s",
        bal.prefill_requests_per_s,
        "req/s",
        "Prefill pool capacity",
        "预填充池处理能力",
        "Σ prefill DP ÷ prefill_s",
        {},
    )
    figs.add(
        "performance.pd.decode_requests_per_s",
        bal.decode_requests_per_s,
        "req/s",
        "Decode pool capacity",
        "解码池处理能力",
        "Σ decode DP × B ÷ (output_tokens × step_s)",
        {},
    )
    figs.add(
        "performance.pd.ratio",
        bal.ratio,
        "×",
        "P:D capacity ratio (prefill ÷ decode)",
        "P:D 能力比（预填充 ÷ 解码）",
        "prefill_requests_per_s ÷ decode_requests_per_s",
        {"bottleneck": bal.bottleneck},
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
