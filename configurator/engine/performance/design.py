"""The design point: the largest load the hardware carries within the latency targets.

The capacity a plan quotes is what the hardware carries in the configuration the
engines launch: each DP rank may run as many sequences as its KV cache holds at the
workload's request lengths, as many as one scheduler step's token budget admits, and
no more than ``max_num_seqs`` (a setting the request leaves unset is sized to the first
two, engine/memory.py size_admission; a stated one bounds the capacity, so the plan never sells a
load its engines would not admit), and the concurrency is raised while the latency
percentiles stay within the targets.  This is the search of Vidur-Search (Agrawal et al., "Vidur: A Large-Scale
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
* ``prefill`` (xPyD): one more concurrent request saturates the prefill pool while the targets still
  hold — beyond it the prompts queue for the pool and the wait grows with every user;
* ``unreachable``: a single request already misses a target.  The check names the target and
  the best the hardware reaches (one request, ``best_*``), and the design point is then a
  **best-effort operating point**, labelled as such: the same search with each missed target
  relaxed to :data:`RELAX_FACTOR` × what one request reaches, rounded up to a whole step
  (10 ms for TPOT, 1 s for TTFT; ``relaxed_targets``), the targets one request meets kept as
  stated.  Why this point and not the KV cache's full batch or one request: one request is the
  most expensive way to run the cluster (its cost per token is not a figure anyone quotes), and
  the full batch may slow each user far past the target; a bounded relaxation keeps each user
  within half as slow again as the fastest this hardware serves anyone, so the economics and the
  proposal price tokens at a load the customer could accept, and the check states the relaxed
  target ("what target would be met").  ``relaxed_limited_by`` says why that search stops.

When the request sets no latency target, the design point is computed against the
default targets below (``targets_assumed``), so every plan states a design capacity.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

from .. import serving_model as sm
from ..checks import raise_
from ..defaults import batch_cap
from ..figures import FigureBook
from ..speculative import decode_role, role_serving
from ..types import Check, DesignPoint, PlanRequest, Severity, Source
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

LIMITS = ("kv", "batch", "ttft", "tpot", "prefill", "unreachable")

# Where a target is out of reach: the best-effort design point meets each missed target relaxed to
# this multiple of what one request reaches (assumed: a user served at most half as slow again as
# the fastest this hardware serves anyone; module doc), rounded up to these steps.
RELAX_FACTOR = 1.5
_RELAX_STEP = {"ttft_p50_s": 1.0, "ttft_p90_s": 1.0, "tpot_p50_ms": 10.0, "tpot_p90_ms": 10.0}

_TARGET_NAMES = {
    "ttft_p50_s": ("TTFT P50", "首字延迟 P50", "s", "秒", 1.0),
    "ttft_p90_s": ("TTFT P90", "首字延迟 P90", "s", "秒", 1.0),
    "tpot_p50_ms": ("TPOT P50", "每字延迟 P50", "ms", "毫秒", 1.0),
    "tpot_p90_ms": ("TPOT P90", "每字延迟 P90", "ms", "毫秒", 1.0),
}


def targets_source(req: PlanRequest) -> str:
    """Where the targets of ``targets_of`` come from: ``scenario``, ``request`` or ``default``."""
    if not stated_targets(req):
        return "default"
    w = req.workload
    stated = {
        f
        for f in ("ttft_target_s", "tpot_target_ms", "ttft_p90_target_s", "tpot_p90_target_ms")
        if getattr(w, f) is not None
    }
    return "scenario" if stated <= set(req.workload_from_scenario) else "request"


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


def decoding_budget(req: PlanRequest) -> int:
    """``max_num_batched_tokens`` of the engines that decode (the decode role's in xPyD)."""
    return role_serving(req.serving, decode_role(req)).max_num_batched_tokens


def free_models(models: list[GroupModel], cap: int) -> list[GroupModel]:
    """The group models with their running slots set by the KV cache, ``max_num_seqs`` (a model's own
    ``slots``) and the token budget (the step cache is shared: a step depends on the batch only).  The
    setting bounds the search so the capacity sold is the one the engines admit: a request that leaves
    it to the defaults has it sized to the KV cache and the budget (engine/memory.py size_admission)."""
    return [replace(m, slots=max(0, min(m.slots, m.kv_fit, cap))) for m in models]


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
        return lo, "prefill", []  # the prefill pool saturates before a target breaks
    reason = "tpot" if all(k.startswith("tpot") for k in broken) else "ttft"
    return lo, reason, []


def relaxed_targets(
    targets: Mapping[str, float], unmet: list[str] | tuple[str, ...], reached: Mapping[str, float]
) -> dict[str, float]:
    """``targets`` with each missed one relaxed to ``RELAX_FACTOR`` × what one request reaches, rounded
    up to a whole step (module doc); the others as stated."""
    out = dict(targets)
    for key in unmet:
        step = _RELAX_STEP[key]
        out[key] = max(targets[key], math.ceil(RELAX_FACTOR * reached[key] / step - 1e-9) * step)
    return out


def scaled_targets(targets: Mapping[str, float], factor: float) -> dict[str, float]:
    """``targets`` for a hardware whose every step and prefill pass takes ``factor`` × the estimate's.

    In the closed loop every latency at a given concurrency is a sum of service times and of the
    wait for them (:mod:`.queueing`), so scaling every time by ``factor`` scales each latency
    percentile by ``factor`` and leaves the KV room, the token budget and the prefill pool's
    saturation where they were: meeting ``target`` on that hardware is meeting ``target ÷ factor``
    on the estimate."""
    return {k: v / factor for k, v in targets.items()}


def band_concurrency(
    point_fn: Callable[[float], sm.OperatingPoint],
    slots_total: int,
    targets: Mapping[str, float],
    factor: float,
    output_tokens: int,
    *,
    kv_bound: bool,
    saturates_early: bool,
) -> tuple[int, float]:
    """(concurrency, output tokens/s) of the design point if the hardware runs ``factor`` × slower than
    estimated (``factor`` = predicted ÷ measured throughput of the family's cross-validated band):
    the same search within :func:`scaled_targets`, its throughput ÷ ``factor``.  0 when one request
    would already miss a target."""
    if factor <= 0 or not math.isfinite(factor):
        return 0, 0.0
    c, limited_by, _ = search(
        point_fn,
        slots_total,
        scaled_targets(targets, factor),
        kv_bound=kv_bound,
        saturates_early=saturates_early,
    )
    if c <= 0 or limited_by == "unreachable":
        return 0, 0.0
    op = point_fn(c)
    if not (math.isfinite(op.ttft_s) and math.isfinite(op.tpot_s)):
        return 0, 0.0
    return c, op.requests_per_s * output_tokens / factor


def design_batch_per_rank(req: PlanRequest, design: DesignPoint | None) -> int:
    """Sequences per decode DP rank the P:D split is judged at: the design point's; where no
    concurrency meets the targets (``unreachable``), the batch the hardware carries (the KV cache and
    the scheduler's token budget), so the advice sizes the pools for the load the cluster runs once
    the target is relaxed, never for one request at a time."""
    if design is None:
        return 0
    if design.limited_by == "unreachable":
        # Not the best-effort point: for xPyD its search stops where the prefill pool saturates, where
        # the pools balance by construction, so the split is judged at the batch the hardware carries.
        cap = batch_cap(decoding_budget(req), req.performance.speculative_tokens)
        return max(0, min(design.kv_seqs_fit_per_dp_rank, cap))
    return max(0, design.max_num_seqs_per_dp_rank)


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
    band: tuple[float, float] = (1.0, 1.0),
    points: dict[tuple[bool, float], sm.OperatingPoint] | None = None,
) -> DesignPoint | None:
    """The design point of the serving groups (decode side of xPyD), or None without one.

    ``band``: the family's cross-validated (low, high) predicted ÷ measured throughput; the design
    capacity is also searched at both ends (:func:`band_concurrency`)."""
    if not serving_models or (disaggregated and not prefill_models):
        return None
    targets, assumed = targets_of(req)
    cap = batch_cap(decoding_budget(req), req.performance.speculative_tokens)
    free = free_models(serving_models, cap)
    # The searches and the result revisit points: each is computed once.  ``points``: the caller's
    # operating points of the same xPyD groups, shared while the search runs them unchanged (their
    # running slots already within the setting and the KV cache); the key tells 16 from 16.0, whose
    # operating points print alike but are not the same value.
    shared = (
        points is not None
        and disaggregated
        and all(f.slots == m.slots for f, m in zip(free, serving_models, strict=True))
    )
    seen: dict[tuple[bool, float], sm.OperatingPoint] = points if shared and points is not None else {}

    def point_fn(c: float) -> sm.OperatingPoint:
        op = seen.get((type(c) is int, c))
        if op is None:
            op = (
                disaggregated_point(prefill_models, free, c, output_tokens)
                if disaggregated
                else aggregated_point(free, c, output_tokens)
            )
            seen[type(c) is int, c] = op
        return op

    lead = free[0]
    dp_total = sum(m.shape.dp for m in free)
    # The operating points share the first group's slots (queueing.py): so does the search.
    slots_total = lead.slots * dp_total
    kv_bound = lead.kv_fit <= cap
    concurrency, limited_by, unmet = search(
        point_fn, slots_total, targets, kv_bound=kv_bound, saturates_early=disaggregated
    )
    one = point_fn(1)
    one_finite = math.isfinite(one.ttft_s) and math.isfinite(one.tpot_s) and one.requests_per_s > 0
    relaxed: dict[str, float] = {}
    relaxed_limited_by = ""
    if limited_by == "unreachable" and unmet and one_finite:
        # The best-effort operating point (module doc): the missed targets relaxed, the search again.
        relaxed = relaxed_targets(targets, unmet, latency_values(one))
        concurrency, relaxed_limited_by, _ = search(
            point_fn, slots_total, relaxed, kv_bound=kv_bound, saturates_early=disaggregated
        )
    op = point_fn(max(concurrency, 1))
    finite = math.isfinite(op.ttft_s) and math.isfinite(op.tpot_s)
    rps = op.requests_per_s if finite and concurrency > 0 else 0.0
    # The same search at both ends of the error band, within the targets the design point met (the
    # relaxed ones for a best-effort point): the conservative end runs band_high × slower.
    band_low, band_high = band
    met = relaxed or targets
    low = high = (0, 0.0)
    if concurrency > 0:
        low, high = (
            band_concurrency(
                point_fn,
                slots_total,
                met,
                factor,
                output_tokens,
                kv_bound=kv_bound,
                saturates_early=disaggregated,
            )
            for factor in (band_high, band_low)
        )
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
        best_ttft_p90_s=one.ttft_p90_s if one_finite else 0.0,
        best_tpot_p90_s=one.tpot_p90_s if one_finite else 0.0,
        best_ttft_s=one.ttft_s if one_finite else 0.0,
        best_tpot_s=one.tpot_s if one_finite else 0.0,
        relaxed_targets=relaxed,
        relaxed_limited_by=relaxed_limited_by,
        best_effort=limited_by == "unreachable" and concurrency > 0,
        band_low=band_low,
        band_high=band_high,
        concurrency_low=low[0],
        concurrency_high=high[0],
        output_tokens_per_s_low=low[1],
        output_tokens_per_s_high=high[1],
        targets_source=targets_source(req),
        scenario=req.scenario,
    )


def add_design_figures(
    book: FigureBook, dp: DesignPoint, *, max_num_batched_tokens: int, draft: int, output_tokens: int
) -> None:
    source = DEFAULT_TARGETS_SOURCE if dp.targets_assumed else ESTIMATE_SOURCE
    # The best-effort point is searched within the relaxed targets: those are the ones its figure states.
    t = dp.relaxed_targets if dp.best_effort else dp.targets
    variant = "reached"
    if dp.limited_by == "unreachable":
        variant = "best_effort" if dp.best_effort else "unreachable"
    book.put(
        "performance.design.concurrency",
        dp.concurrency,
        variant=variant,
        source=source,
        kv_seqs_fit_per_dp_rank=dp.kv_seqs_fit_per_dp_rank,
        batch_cap=batch_cap(max_num_batched_tokens, draft),
        serving_dp_ranks=dp.serving_dp_ranks,
        ttft_p50_s=fig_input(t.get("ttft_p50_s")),
        ttft_p90_s=fig_input(t.get("ttft_p90_s")),
        tpot_p50_ms=fig_input(t.get("tpot_p50_ms")),
        tpot_p90_ms=fig_input(t.get("tpot_p90_ms")),
        limited_by=dp.relaxed_limited_by if dp.best_effort else dp.limited_by,
    )
    if dp.concurrency > 0:
        book.put(
            "performance.design.concurrency_range",
            f"{dp.concurrency_low:,}–{dp.concurrency_high:,}",
            source=ESTIMATE_SOURCE,
            concurrency=dp.concurrency,
            band_low=dp.band_low,
            band_high=dp.band_high,
            concurrency_low=dp.concurrency_low,
            concurrency_high=dp.concurrency_high,
        )
        book.put(
            "performance.design.output_tokens_per_s_low",
            fig_value(dp.output_tokens_per_s_low),
            source=ESTIMATE_SOURCE,
            # the estimate's own throughput at that concurrency, which the slower hardware divides
            estimated_output_tokens_per_s=fig_input(dp.output_tokens_per_s_low * dp.band_high),
            band_high=dp.band_high,
            concurrency_low=dp.concurrency_low,
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


def target_text(key: str, target: float) -> tuple[str, str]:
    """A latency target as the messages say it, in English and Chinese (``TPOT P90 190 ms``)."""
    en, zh, unit, unit_zh, _ = _TARGET_NAMES[key]
    return f"{en} {target:g} {unit}", f"{zh} {target:g} {unit_zh}"


@dataclass(frozen=True)
class StatedLoad:
    """The stated load above what the cluster runs at once (``performance.concurrency_above_capacity``),
    folded into the unreachable-target statement: the same shortfall said once (:func:`unreachable_check`)."""

    concurrency: int
    capacity: int  # what the request's settings run at once (Σ DP ranks × min(max_num_seqs, KV fit))
    max_num_seqs: int
    queue_wait_s: float
    serving_nodes: int  # the decode nodes of xPyD, else the serving nodes
    disaggregated: bool


def _carry_text(dp: DesignPoint, load: StatedLoad) -> tuple[str, str, dict]:
    """What would carry the stated load: DP ranks at the design point's sequences per rank, in nodes
    of this server (``"; carrying them at … takes …"``), or that the recommended settings run it all."""
    per_rank = max(1, dp.max_num_seqs_per_dp_rank)
    ranks = max(1, dp.serving_dp_ranks)
    need_ranks = math.ceil(load.concurrency / per_rank)
    nodes_per_rank = load.serving_nodes / ranks if load.serving_nodes > 0 else 0.0
    need_nodes = math.ceil(need_ranks * nodes_per_rank - 1e-9) if nodes_per_rank > 0 else 0
    figures: dict = {"dp_ranks_needed": need_ranks}
    en = zh = ""
    if need_ranks > ranks:
        # DP ranks, not nodes: whether a node count lays the experts out is the layout's question, and
        # the smallest catalog deployment that meets the targets follows (catalog_alternative).
        figures["serving_nodes_per_dp_rank"] = round(nodes_per_rank, 3)
        kind_en, kind_zh = ("decode ", "解码侧 ") if load.disaggregated else ("", " ")
        nodes_zh = f"约 {need_nodes} 台解码节点" if load.disaggregated else f"约 {need_nodes} 台节点"
        en = (
            f"; carrying all {load.concurrency:,} at {per_rank} per DP rank takes {need_ranks} {kind_en}DP ranks, "
            f"{need_ranks - ranks} more than this cluster's {ranks} (about {need_nodes} {kind_en}nodes)"
        )
        zh = (
            f"；按每个 DP rank {per_rank} 路承载全部 {load.concurrency:,} 路需 {need_ranks} 个{kind_zh}DP rank，"
            f"比本集群的 {ranks} 个多 "
            f"{need_ranks - ranks} 个（{nodes_zh}）"
        )
    elif dp.concurrency >= load.concurrency:
        en = "; the recommended serving settings run them all"
        zh = "；采用推荐的服务参数即可全部同时运行"
    return en, zh, figures


def _stated_load_text(dp: DesignPoint, load: StatedLoad) -> tuple[str, str, dict]:
    """What the hardware runs of the stated load, and what would carry it: DP ranks at the design
    point's sequences per rank (within the relaxed targets), in nodes of this server."""
    per_rank = max(1, dp.max_num_seqs_per_dp_rank)
    ranks = max(1, dp.serving_dp_ranks)
    runs_en = (
        f"The stated {load.concurrency:,} concurrent requests exceed the {load.capacity:,} it runs at once "
        f"(at max_num_seqs {load.max_num_seqs} over {ranks} DP ranks"
    )
    runs_zh = (
        f"所述 {load.concurrency:,} 路并发超过其可同时运行的 {load.capacity:,} 路"
        f"（max_num_seqs {load.max_num_seqs}，{ranks} 个 DP rank"
    )
    if dp.concurrency > load.capacity:
        runs_en += f"; {dp.concurrency:,} at the design point's {per_rank} per DP rank"
        runs_zh += f"；按设计点每个 DP rank {per_rank} 路为 {dp.concurrency:,} 路"
    runs_en += f"), the rest queue (about {load.queue_wait_s:,.1f} s added to the time to first token)"
    runs_zh += f"），其余请求排队（首字延迟约增加 {load.queue_wait_s:,.1f} 秒）"
    carry_en, carry_zh, carry_figures = _carry_text(dp, load)
    figures: dict = {
        "stated_concurrency": load.concurrency,
        "capacity": load.capacity,
        "queue_wait_s": load.queue_wait_s,
        **carry_figures,
    }
    return runs_en + carry_en + ".", runs_zh + carry_zh + "。", figures


def within_targets_text(dp: DesignPoint, load: StatedLoad) -> tuple[str, str, dict]:
    """For the capacity finding of a plan whose targets are within reach: what the design point carries
    within them, and what would carry the stated load (`` Within the latency targets it carries …``)."""
    per_rank = max(1, dp.max_num_seqs_per_dp_rank)
    carry_en, carry_zh, figures = _carry_text(dp, load)
    rank_en = "" if carry_en else f" ({per_rank} per DP rank)"
    rank_zh = "" if carry_zh else f"（每个 DP rank {per_rank} 路）"
    en = f" Within the latency targets it carries {dp.concurrency:,} concurrent requests{rank_en}{carry_en}."
    zh = f"在时延目标内可承载 {dp.concurrency:,} 路并发{rank_zh}{carry_zh}。"
    return en, zh, {"design_concurrency": dp.concurrency, **figures}


def unreachable_check(dp: DesignPoint, load: StatedLoad | None = None) -> Check:
    """One statement: the targets this hardware misses even at one request, the best it reaches, and
    the load it carries at the best-effort design point (the missed targets relaxed; module doc).

    ``load``: the stated load is above what the cluster runs at once.  That shortfall is the same
    one (the hardware carries less than the customer states), so it is said here, once, and the
    statement is an error like ``performance.concurrency_above_capacity`` it replaces: the plan
    cannot be quoted at the stated load, and the statement says why and what would carry it."""
    reached = {
        "ttft_p50_s": dp.best_ttft_s,
        "ttft_p90_s": dp.best_ttft_p90_s,
        "tpot_p50_ms": dp.best_tpot_s * 1000,
        "tpot_p90_ms": dp.best_tpot_p90_s * 1000,
    }
    t_en = " and ".join(target_text(k, dp.targets[k])[0] for k in dp.unmet_targets)
    t_zh = "、".join(target_text(k, dp.targets[k])[1] for k in dp.unmet_targets)
    # The best reached: the missed targets' own percentiles first, then the P90s the design point states.
    shown = [*dp.unmet_targets, *(k for k in ("ttft_p90_s", "tpot_p90_ms") if k not in dp.unmet_targets)]
    best_en = "one request alone gets " + ", ".join(
        f"{_TARGET_NAMES[k][0]} {reached[k]:.3g} {_TARGET_NAMES[k][2]}" for k in shown
    )
    best_zh = "单个请求时" + "，".join(
        f"{_TARGET_NAMES[k][1]} 为 {reached[k]:.3g} {_TARGET_NAMES[k][3]}" for k in shown
    )
    relaxed = {k: v for k, v in dp.relaxed_targets.items() if k in dp.unmet_targets}
    if dp.concurrency > 0 and relaxed:
        r_en = " and ".join(target_text(k, v)[0] for k, v in relaxed.items())
        r_zh = "、".join(target_text(k, v)[1] for k, v in relaxed.items())
        at_en = (
            f"; within {r_en} it carries {dp.concurrency:,} concurrent requests "
            f"({dp.output_tokens_per_s:,.0f} output tokens/s, TTFT P90 {dp.ttft_p90_s:.3g} s, "
            f"TPOT P90 {dp.tpot_p90_s * 1000:.3g} ms), the best-effort design point the costs are given at"
        )
        at_zh = (
            f"；放宽至{r_zh}时可承载 {dp.concurrency:,} 路并发（输出 {dp.output_tokens_per_s:,.0f} tokens/s，"
            f"首字延迟 P90 {dp.ttft_p90_s:.3g} 秒，每字延迟 P90 {dp.tpot_p90_s * 1000:.3g} 毫秒），"
            "成本按此尽力设计点计算"
        )
    else:
        at_en = at_zh = ""
    assumed_en = " (default targets: the request sets none)" if dp.targets_assumed else ""
    assumed_zh = "（默认目标：请求未设定时延目标）" if dp.targets_assumed else ""
    load_en = load_zh = ""
    load_figures: dict = {}
    if load is not None:
        load_en, load_zh, load_figures = _stated_load_text(dp, load)
        load_en = " " + load_en
    return raise_(
        "performance.design_point_unreachable",
        # An error when the stated load is above what the cluster runs at once (``load``).
        severity=Severity.WARNING if load is None else Severity.ERROR,
        figures={
            **load_figures,
            "unmet_targets": list(dp.unmet_targets),
            "best_ttft_p90_s": dp.best_ttft_p90_s,
            "best_tpot_p90_s": dp.best_tpot_p90_s,
            "best_reached": {k: reached[k] for k in dp.unmet_targets},
            "relaxed_targets": dict(relaxed),
            "design_concurrency": dp.concurrency,
            "design_output_tokens_per_s": round(dp.output_tokens_per_s, 3),
            "ttft_p90_s": dp.ttft_p90_s,
            "tpot_p90_s": dp.tpot_p90_s,
        },
        targets_en=t_en,
        targets_zh=t_zh,
        best_en=best_en,
        best_zh=best_zh,
        at_en=at_en,
        at_zh=at_zh,
        assumed_en=assumed_en,
        assumed_zh=assumed_zh,
        load_en=load_en,
        load_zh=load_zh,
        target_field="workload.tpot_p90_target_ms"
        if dp.unmet_targets and dp.unmet_targets[0].startswith("tpot")
        else "workload.ttft_p90_target_s",
    )
