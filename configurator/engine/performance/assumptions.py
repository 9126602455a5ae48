"""The model's assumptions: the efficiency factors (calibrated or overridden) as figures, and the
range check of every knob."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from .. import serving_model as sm
from ..checks import raise_
from ..figures import FigureBook
from ..types import Check, PerformanceSpec, PlanRequest, Source
from .common import CALIBRATION_SOURCE, FAMILY_NAMES, fig_input, fig_value


def add_factor_figures(book: FigureBook, req: PlanRequest, f: sm.PlatformFactors, stack: str) -> None:
    if not book.recording:  # a screening pass keeps no figure: none to work out
        return
    perf = req.performance
    base = sm.factors_for_family(stack)  # the family's fitted + fixed factors (stack: the family)
    # The family as a reader names it in each language (common.FAMILY_NAMES), never its code.
    en, zh = FAMILY_NAMES.get(stack, (stack, stack))
    label = {"family": en, "family_zh": zh}

    def source(name: str, requested: object) -> Source:
        return CALIBRATION_SOURCE if requested is None else Source("input", f"performance.{name}")

    book.put(
        "performance.factors.bandwidth_efficiency",
        fig_value(f.bandwidth_efficiency),
        label=label,
        variant="calibrated" if perf.decode_bandwidth_efficiency is None else "requested",
        source=source("bandwidth_efficiency", perf.decode_bandwidth_efficiency)
        if perf.decode_bandwidth_efficiency is not None
        else Source("assumed", "fixed per software stack (serving_model.STACK_PRIORS)"),
        requested=fig_input(perf.decode_bandwidth_efficiency),
        calibrated=fig_input(base.bandwidth_efficiency),
        stack=stack,
    )
    book.put(
        "performance.factors.expert_bandwidth_efficiency",
        fig_value(f.expert_efficiency),
        label=label,
        variant="calibrated" if perf.decode_bandwidth_efficiency is None else "requested",
        source=source("decode_bandwidth_efficiency", perf.decode_bandwidth_efficiency)
        if perf.decode_bandwidth_efficiency is not None
        else Source("assumed", "fixed per software stack (serving_model.STACK_PRIORS)"),
        requested=fig_input(perf.decode_bandwidth_efficiency),
        calibrated=fig_input(base.expert_efficiency),
        stack=stack,
    )
    book.put(
        "performance.factors.compute_efficiency",
        fig_value(f.compute_efficiency),
        label=label,
        source=CALIBRATION_SOURCE,
        calibrated=fig_input(base.compute_efficiency),
        stack=stack,
    )
    book.put(
        "performance.factors.prefill_efficiency",
        fig_value(f.prefill_efficiency),
        label=label,
        variant="calibrated" if perf.prefill_mfu is None else "requested",
        source=source("prefill_efficiency", perf.prefill_mfu),
        requested=fig_input(perf.prefill_mfu),
        calibrated=fig_input(base.prefill_efficiency),
        stack=stack,
    )
    book.put(
        "performance.factors.request_overhead_s",
        fig_value(f.request_overhead_s),
        label=label,
        source=CALIBRATION_SOURCE,
        calibrated=fig_input(base.request_overhead_s),
        stack=stack,
    )
    # Eager mode, and piecewise graphs, add every layer's host launch cost (serving_model.effective_factors).
    piecewise = req.decode_graphs == "piecewise"
    eager = req.decode_graphs != "full"
    per_layer = sm.host_dispatch_per_layer_s(req)
    book.put(
        "performance.factors.step_overhead_s",
        fig_value(f.step_overhead_s),
        variant="calibrated" if perf.step_overhead_ms is None else "requested",
        label={**label, "eager_en": "", "eager_zh": ""},
        source=Source("input", "performance.step_overhead_s")
        if perf.step_overhead_ms is not None
        else Source("assumed", "fixed per software stack (serving_model.STACK_PRIORS)"),
        calibrated=fig_input(base.step_overhead_s),
        requested_ms=fig_input(perf.step_overhead_ms),
        stack=stack,
    )
    book.put(
        "performance.factors.layer_overhead_s",
        fig_value(f.layer_overhead_s),
        label={
            **label,
            "eager_en": (
                "; piecewise graphs: every layer's attention launched from the host between graph pieces"
                if piecewise
                else "; eager mode: every layer's operators launched from the host"
                if eager
                else ""
            ),
            "eager_zh": (
                "；分段图模式：每层注意力在图段之间由主机下发"
                if piecewise
                else "；非图模式：逐层由主机下发算子"
                if eager
                else ""
            ),
        },
        source=Source("assumed", "eager dispatch cost per layer (serving_model.EAGER_LAYER_OVERHEAD_S)")
        if eager
        else CALIBRATION_SOURCE,
        calibrated=fig_input(base.layer_overhead_s),
        eager_per_layer_s=per_layer,
        layers=max(req.model.num_layers, 1),
        stack=stack,
    )
    book.put(
        "performance.factors.prefill_layer_overhead_s",
        fig_value(f.prefill_layer_overhead_s),
        label=label,
        source=CALIBRATION_SOURCE,
        calibrated=fig_input(base.prefill_layer_overhead_s),
        moe_layers=sm.prefill_layer_counts(req.model)[0],
        stack=stack,
    )
    book.put(
        "performance.factors.collective_latency_s",
        fig_value(f.collective_latency_s),
        label=label,
        source=CALIBRATION_SOURCE,
        calibrated=fig_input(base.collective_latency_s),
        stack=stack,
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


def sanitised(req: PlanRequest, checks: list[Check]) -> PlanRequest:
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
            raise_(
                "performance.knob_out_of_range",
                figures={
                    "value": value if isinstance(value, (int, float)) and math.isfinite(value) else str(value)
                },
                knob_en=en,
                value=value,
                span=span,
                shown=shown,
                knob_zh=zh,
                span_zh=span_zh,
                shown_zh=shown_zh,
                name=name,
                default=fixes[name],
            )
        )
    if req.workload.concurrency < 0 or req.workload.input_tokens < 0 or req.workload.output_tokens < 0:
        checks.append(raise_("performance.workload_negative"))
    return replace(req, performance=replace(req.performance, **fixes)) if fixes else req
