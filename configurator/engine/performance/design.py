"""The design point: the largest load the hardware carries within the latency targets.

The capacity a plan quotes must come from the hardware, not from the request's
``--max-num-seqs``: each DP rank may run as many sequences as its KV cache holds at
the workload's request lengths, and as many as one scheduler step's token budget
admits, and the concurrency is raised while the latency percentiles stay within the
targets.  This is the search of Vidur-Search (Agrawal et al., "Vidur: A Large-Scale
Simulation Framework for LLM Inference", MLSys 2024, §5: a binary search over the
request rate for the largest capacity that meets the scheduling-delay and TBT SLOs),
done here over the closed-loop concurrency of :mod:`.queueing` with the step model of
:mod:`.group_model` (its public functions only; latencies grow with concurrency, so
the bisection is exact on the model).

Why it stops (``limited_by``):

* ``kv``: every DP rank's KV cache is full (sequences of ``input + output`` tokens,
  vLLM blocks: ``group_model._seqs_fit``);
* ``batch``: the scheduler's token budget per step.  vLLM v1 schedules running
  requests first, each taking ``1 + num_spec_tokens`` tokens of
  ``max_num_batched_tokens`` per step (``vllm/v1/core/sched/scheduler.py``,
  ``Scheduler.schedule``: ``token_budget = self.max_num_scheduled_tokens``, decreased by
  ``num_new_tokens`` of each running request), so at most
  ``max_num_batched_tokens ÷ (1 + k)`` sequences decode at once;
* ``ttft`` / ``tpot``: one more concurrent request breaks that target;
* ``unreachable``: a single request already misses a target; the figures are the best
  the hardware reaches (one request) and the check names the target.

When the request sets no latency target, the design point is computed against the
default targets below (``targets_assumed``), so every plan states a design capacity.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import replace

from .. import serving_model as sm
from ..checks import raise_
from ..figures import FigureBook
from ..types import Check, DesignPoint, PlanRequest, Source
from .common import ESTIMATE_SOURCE, fig_input, fig_value
from .group_model import GroupModel
from .queueing import aggregated_point, disaggregated_point
from .sla import latency_values, stated_targets

# Default targets when the request sets none (assumed, so every plan states a design
# capacity; edit per customer with workload.ttft_p90_target_s / tpot_p90_target_ms):
# TPOT P90 100 ms is 10 tokens/s to each user, faster than a reader reads; TTFT P90 10 s
# is an interactive long-prompt request (the seeded scenarios quote 15–20 s for 24–32 K
# prompts, catalog/seed/scenarios.yaml).
DEFAULT_TARGETS: Mapping[str, float] = {"ttft_p90_s": 10.0, "tpot_p90_ms": 100.0}
DEFAULT_TARGETS_SOURCE = Source(
    "assumed",
    "default latency targets TTFT P90 10 s, TPOT P90 100 ms (the request sets none); "
    "set workload.ttft_p90_target_s / tpot_p90_target_ms per customer",
)

LIMITS = ("kv", "batch", "ttft", "tpot", "unreachable")

_TARGET_NAMES = {
    "ttft_p50_s": ("TTFT P50", "首字延迟 P50", "s", "秒", 1.0),
    "ttft_p90_s": ("TTFT P90", "首字延迟 P90", "s", "秒", 1.0),
    "tpot_p50_ms": ("TPOT P50", "每字延迟 P50", "ms", "毫秒", 1.0),
    "tpot_p90_ms": ("TPOT P90", "每字延迟 P90", "ms", "毫秒", 1.0),
}


def targets_of(req: PlanRequest) -> tuple[dict[str, float], bool]:
    """The latency targets the design point meets, and whether they are the defaults."""
    t = stated_targets(req)
    if t:
        return t, False
    return dict(DEFAULT_TARGETS), True


def _missed(op: sm.OperatingPoint, targets: Mapping[str, float]) -> list[str]:
    """The targets ``op`` misses (all of them when it has no finite latency)."""
    if not (math.isfinite(op.ttft_s) and math.isfinite(op.tpot_s)) or op.requests_per_s <= 0:
        return list(targets)
    values = latency_values(op)
    return [k for k, v in targets.items() if values[k] > v * (1 + 1e-9)]


def batch_cap(max_num_batched_tokens: int, draft_tokens: int) -> int:
    """Sequences one scheduler step can decode: ``max_num_batched_tokens ÷ (1 + k)`` (module doc)."""
    return max(1, max_num_batched_tokens // (1 + max(0, draft_tokens)))


def free_models(models: list[GroupModel], cap: int) -> list[GroupModel]:
    """The group models with their running slots set by the KV cache and the token budget, not
    ``max_num_seqs`` (the step cache is shared: a step depends on the batch only)."""
    return [replace(m, slots=max(0, min(m.kv_fit, cap))) for m in models]


def search(
    point_fn: Callable[[float], sm.OperatingPoint],
    slots_total: int,
    targets: Mapping[str, float],
    *,
    kv_bound: bool,
    saturates_early: bool,
) -> tuple[int, str, list[str]]:
    """(largest concurrency meeting ``targets`` without queueing, why it stops, targets one
    request misses).  Bisection: latencies and saturation only grow with concurrency."""
    if slots_total <= 0:
        return 0, "kv", list(targets)
    first = point_fn(1)
    unmet = _missed(first, targets)
    if unmet:
        return 0, "unreachable", unmet

    def ok(c: int) -> bool:
        op = point_fn(c)
        return not _missed(op, targets) and not (saturates_early and op.saturated)

    # One bisection over both monotone conditions (targets met, and for xPyD the prefill pool not
    # saturated): about log2(slots) operating points.
    if ok(slots_total):
        return slots_total, "kv" if kv_bound else "batch", []
    lo, hi = 1, slots_total
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ok(mid):
            lo = mid
        else:
            hi = mid
    broken = _missed(point_fn(hi), targets)
    if not broken:
        return lo, "ttft", []  # the prefill pool saturates first: the queue is the TTFT's
    reason = "tpot" if all(k.startswith("tpot") for k in broken) else "ttft"
    return lo, reason, []


def design_batch_per_rank(req: PlanRequest, design: DesignPoint | None) -> int:
    """Sequences per decode DP rank the P:D split is judged at: the design point's; where no
    concurrency meets the targets (``unreachable``), the batch the hardware carries (the KV cache and
    the scheduler's token budget), so the advice sizes the pools for the load the cluster runs once
    the target is relaxed, never for one request at a time."""
    if design is None:
        return 0
    if design.max_num_seqs_per_dp_rank > 0:
        return design.max_num_seqs_per_dp_rank
    if design.limited_by == "unreachable":
        cap = batch_cap(req.serving.max_num_batched_tokens, req.performance.speculative_tokens)
        return max(0, min(design.kv_seqs_fit_per_dp_rank, cap))
    return 0


def design_decode_capacity(decode_models: list[GroupModel], batch: int, output_tokens: int) -> float:
    """Requests per second the decode pool finishes at ``batch`` sequences per DP rank (xPyD)."""
    total = 0.0
    for m in decode_models:
        b = min(batch, max(m.kv_fit, 0))
        if b <= 0:
            continue
        st = m.step(b)
        if st.step_s > 0:
            total += m.shape.dp * b * st.tokens_per_step / (max(output_tokens, 1) * st.step_s)
    return total


def design_point(
    req: PlanRequest,
    prefill_models: list[GroupModel],
    serving_models: list[GroupModel],
    *,
    disaggregated: bool,
    input_tokens: int,
    output_tokens: int,
) -> DesignPoint | None:
    """The design point of the serving groups (decode side of xPyD), or None without one."""
    if not serving_models or (disaggregated and not prefill_models):
        return None
    targets, assumed = targets_of(req)
    cap = batch_cap(req.serving.max_num_batched_tokens, req.performance.speculative_tokens)
    free = free_models(serving_models, cap)
    point_fn: Callable[[float], sm.OperatingPoint]
    if disaggregated:

        def point_fn(c: float) -> sm.OperatingPoint:
            return disaggregated_point(prefill_models, free, c, output_tokens)

    else:

        def point_fn(c: float) -> sm.OperatingPoint:
            return aggregated_point(free, c, output_tokens)

    lead = free[0]
    dp_total = sum(m.shape.dp for m in free)
    # The operating points share the first group's slots (queueing.py): so does the search.
    slots_total = lead.slots * dp_total
    concurrency, limited_by, unmet = search(
        point_fn, slots_total, targets, kv_bound=lead.kv_fit <= cap, saturates_early=disaggregated
    )
    op = point_fn(max(concurrency, 1))
    finite = math.isfinite(op.ttft_s) and math.isfinite(op.tpot_s)
    rps = op.requests_per_s if finite and concurrency > 0 else 0.0
    return DesignPoint(
        concurrency=concurrency,
        max_num_seqs_per_dp_rank=math.ceil(concurrency / dp_total) if dp_total and concurrency else 0,
        output_tokens_per_s=rps * output_tokens,
        input_tokens_per_s=rps * max(0, input_tokens),
        requests_per_s=rps,
        ttft_p90_s=op.ttft_p90_s if finite else 0.0,
        tpot_p90_s=op.tpot_p90_s if finite else 0.0,
        ttft_s=op.ttft_s if finite else 0.0,
        tpot_s=op.tpot_s if finite else 0.0,
        limited_by=limited_by,
        targets=targets,
        targets_assumed=assumed,
        unmet_targets=tuple(unmet),
        kv_seqs_fit_per_dp_rank=lead.kv_fit,
        serving_dp_ranks=dp_total,
    )


def add_design_figures(
    book: FigureBook, dp: DesignPoint, *, max_num_batched_tokens: int, draft: int, output_tokens: int
) -> None:
    source = DEFAULT_TARGETS_SOURCE if dp.targets_assumed else ESTIMATE_SOURCE
    t = dp.targets
    book.put(
        "performance.design.concurrency",
        dp.concurrency,
        variant="unreachable" if dp.limited_by == "unreachable" else "reached",
        source=source,
        kv_seqs_fit_per_dp_rank=dp.kv_seqs_fit_per_dp_rank,
        batch_cap=batch_cap(max_num_batched_tokens, draft),
        serving_dp_ranks=dp.serving_dp_ranks,
        ttft_p50_s=fig_input(t.get("ttft_p50_s")),
        ttft_p90_s=fig_input(t.get("ttft_p90_s")),
        tpot_p50_ms=fig_input(t.get("tpot_p50_ms")),
        tpot_p90_ms=fig_input(t.get("tpot_p90_ms")),
        limited_by=dp.limited_by,
    )
    book.put(
        "performance.design.max_num_seqs_per_dp_rank",
        dp.max_num_seqs_per_dp_rank,
        source=ESTIMATE_SOURCE,
        concurrency=dp.concurrency,
        serving_dp_ranks=dp.serving_dp_ranks,
    )
    book.put(
        "performance.design.output_tokens_per_s",
        fig_value(dp.output_tokens_per_s),
        source=ESTIMATE_SOURCE,
        concurrency=dp.concurrency,
        requests_per_s=fig_input(dp.requests_per_s),
        output_tokens=output_tokens,
    )
    book.put(
        "performance.design.ttft_p90_s",
        fig_value(dp.ttft_p90_s),
        source=ESTIMATE_SOURCE,
        concurrency=dp.concurrency,
    )
    book.put(
        "performance.design.tpot_p90_s",
        fig_value(dp.tpot_p90_s),
        source=ESTIMATE_SOURCE,
        concurrency=dp.concurrency,
    )


def _target_text(key: str, target: float) -> tuple[str, str]:
    en, zh, unit, unit_zh, _ = _TARGET_NAMES[key]
    return f"{en} {target:g} {unit}", f"{zh} {target:g} {unit_zh}"


def unreachable_check(dp: DesignPoint) -> Check:
    """The targets this hardware misses even at one request, with the best it reaches."""
    reached = {
        "ttft_p50_s": dp.ttft_s,
        "ttft_p90_s": dp.ttft_p90_s,
        "tpot_p50_ms": dp.tpot_s * 1000,
        "tpot_p90_ms": dp.tpot_p90_s * 1000,
    }
    parts_en, parts_zh = [], []
    for key in dp.unmet_targets:
        en, zh, unit, unit_zh, _ = _TARGET_NAMES[key]
        t_en, t_zh = _target_text(key, dp.targets[key])
        parts_en.append(f"the {t_en} target (best reached: {reached[key]:.3g} {unit} with one request)")
        parts_zh.append(f"{t_zh}的目标（单个请求时最好为 {reached[key]:.3g} {unit_zh}）")
    assumed_en = " (default targets: the request sets none)" if dp.targets_assumed else ""
    assumed_zh = "（默认目标：请求未设定时延目标）" if dp.targets_assumed else ""
    return raise_(
        "performance.design_point_unreachable",
        figures={
            "unmet_targets": list(dp.unmet_targets),
            "ttft_p90_s": dp.ttft_p90_s,
            "tpot_p90_s": dp.tpot_p90_s,
        },
        parts_en=" and ".join(parts_en),
        assumed_en=assumed_en,
        parts_zh="、".join(parts_zh),
        assumed_zh=assumed_zh,
        target_field="workload.tpot_p90_target_ms"
        if dp.unmet_targets and dp.unmet_targets[0].startswith("tpot")
        else "workload.ttft_p90_target_s",
    )
