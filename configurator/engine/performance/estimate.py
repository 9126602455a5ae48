"""The deployment's estimate: every group, the operating point at the quoted concurrency, the
figures and the checks.

:func:`estimate_performance` reads as its steps, each a function of its own: the request settled
(:func:`_settled_request`, :func:`_device_compute`), the request-wide inputs (:func:`_workload_inputs`)
and their figures, every group's model and estimate (:func:`_group_estimates`), the closed-loop
operating point (:func:`_operating_point`), the design point (:func:`_design`), the prefill time share
and the P/D balance (:func:`_prefill_share`), a measured throughput (:func:`_measured_throughput`), the
latency and throughput figures, and the checks of the stated load and of the estimate itself."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace

from .. import serving_model as sm
from ..checks import raise_
from ..defaults import AUTO_MAX_NUM_SEQS
from ..figures import FigureBook, UnrecordedBook
from ..memory import PROVISIONAL, admitted, with_max_num_seqs
from ..types import (
    Check,
    DesignPoint,
    GroupPerformance,
    LayoutResult,
    MemoryResult,
    PdBalance,
    PerformanceResult,
    PlanRequest,
    Source,
    TopologyKind,
)
from .assumptions import add_factor_figures, sanitised
from .common import (
    CALIBRATION_SOURCE,
    COUNTED_DECODE_ROLES,
    ESTIMATE_SOURCE,
    FAMILY_NAMES,
    MEASURED_NOTE_EN,
    MEASURED_NOTE_ZH,
    estimate_note,
    fig_input,
    fig_value,
)
from .design import (
    StatedLoad,
    add_design_figures,
    decoding_budget,
    design_batch_per_rank,
    design_decode_capacity,
    design_point,
    unreachable_check,
    within_targets_text,
)
from .disaggregated import add_pd_figures, capacity_balance
from .group_model import GroupModel, build_group_model
from .groups import group_estimate, scaled_to_measured
from .queueing import aggregated_point, disaggregated_point, load_curve, sustained_concurrency
from .sla import add_sla_figures, over_capacity_check, sla_result, target_checks


def _formats(req: PlanRequest) -> tuple[str, str]:
    """(activation, weight) format of the chosen checkpoint row, else of the model row."""
    ck = req.checkpoint
    if ck is not None:
        return ck.activation_format, ck.weight_format
    return req.model.activation_format, req.model.weight_format


def _tflops(req: PlanRequest) -> tuple[float, str]:
    """Dense TFLOPS per logical device at the precision the recipe's kernels compute in."""
    activation, weight = _formats(req)
    return sm.tflops_for(req.server, activation, weight)


class _Workload:
    """The request-wide inputs every group's estimate and the deployment's figures read (see
    :func:`_workload_inputs`)."""

    __slots__ = (
        "prompt_tokens",
        "hit",
        "computed_prompt_tokens",
        "output_tokens",
        "context_tokens",
        "mean_context",
        "lm_non_expert_bytes",
        "disaggregated",
        "draft",
        "acceptance",
        "draft_spec",
        "counted_dp",
        "offered_per_rank",
        "concurrency",
    )
    prompt_tokens: int
    hit: float
    computed_prompt_tokens: int
    output_tokens: int
    context_tokens: int
    mean_context: float
    lm_non_expert_bytes: int
    disaggregated: bool
    draft: int
    acceptance: float
    draft_spec: sm.DraftSpec
    counted_dp: int
    offered_per_rank: int
    concurrency: int


class _Pools:
    """The deployment's closed-loop model (see :func:`_operating_point`)."""

    __slots__ = (
        "prefill_models",
        "decode_models",
        "counted_models",
        "split",
        "point_fn",
        "points",
        "capacity_users",
        "mode",
        "lead",
    )
    prefill_models: list[GroupModel]
    decode_models: list[GroupModel]
    counted_models: list[GroupModel]
    split: bool
    point_fn: Callable[[float], sm.OperatingPoint]
    points: dict[tuple[bool, float], sm.OperatingPoint]
    capacity_users: int
    mode: str | None
    lead: GroupModel | None


class _Throughput:
    """The deployment's throughput at the operating point, or as measured (see :func:`_throughput`)."""

    __slots__ = (
        "measured",
        "requests_per_s",
        "output_tps",
        "estimated_output_tps",
        "input_tps",
        "per_dp_rank",
    )
    measured: bool
    requests_per_s: float
    output_tps: float
    estimated_output_tps: float
    input_tps: float
    per_dp_rank: float


def _settled_request(
    req: PlanRequest, layout: LayoutResult, memory: MemoryResult | None, checks: list[Check]
) -> PlanRequest:
    """The request the estimate reads: an ``AUTO`` ``max_num_seqs`` resolved (plan() resolves it first,
    engine/memory.py size_admission; a direct caller gets it here), then every assumption outside its
    range set back to its default, with a check each (assumptions.sanitised)."""
    if req.serving.max_num_seqs == AUTO_MAX_NUM_SEQS:
        req = with_max_num_seqs(req, admitted(req, layout, memory) if memory else PROVISIONAL)
    return sanitised(req, checks)


def _device_compute(req: PlanRequest, family: str, checks: list[Check]) -> tuple[PlanRequest, float, str]:
    """(request, dense TFLOPS per device, its precision): an accelerator missing its TFLOPS or its memory
    bandwidth is checked and estimated at 1 (the request then carries a bandwidth of 1 B/s), and an FP8
    checkpoint on an Ampere device, which computes it in BF16, is checked."""
    acc = req.server.accelerator
    tflops, tflops_precision = _tflops(req)
    if acc.memory_bandwidth_bytes_s <= 0 or tflops <= 0:
        checks.append(raise_("performance.accelerator_specs_missing", accelerator=acc.name))
        if tflops <= 0:
            tflops = 1.0
        if acc.memory_bandwidth_bytes_s <= 0:
            server = replace(req.server, accelerator=replace(acc, memory_bandwidth_bytes_s=1.0))
            req = replace(req, server=server)

    if "fp8" in _formats(req) and tflops_precision != "fp8" and family == "ampere":
        checks.append(raise_("performance.fp8_weight_only", accelerator=acc.name, tflops=tflops))
    return req, tflops, tflops_precision


def _workload_inputs(req: PlanRequest, layout: LayoutResult) -> _Workload:
    """The request-wide inputs: prompt tokens (and those computed after the prefix cache's hits),
    output tokens, the context at a request's end and on average, the language model's non-expert
    bytes, the speculative draft, the serving DP ranks, the sequences the stated concurrency offers
    each, and the concurrency itself."""
    model, serving, workload, perf = req.model, req.serving, req.workload, req.performance
    w = _Workload()
    w.prompt_tokens = prompt_tokens = max(0, workload.input_tokens)
    w.hit = hit = perf.prefix_cache_hit_rate if serving.enable_prefix_caching else 0.0
    w.computed_prompt_tokens = max(1, round(prompt_tokens * (1.0 - hit)))
    w.output_tokens = output_tokens = max(1, workload.output_tokens)
    w.context_tokens = min(prompt_tokens + output_tokens, serving.max_model_len)
    w.mean_context = min(prompt_tokens + output_tokens / 2, serving.max_model_len)
    w.lm_non_expert_bytes = model.non_expert_weight_bytes - (model.vision_bytes if model.has_vision else 0)
    w.disaggregated = req.topology.kind == TopologyKind.DISAGGREGATED
    w.draft = draft = max(0, perf.speculative_tokens)
    w.acceptance = acceptance = perf.speculative_acceptance_rate
    w.draft_spec = sm.DraftSpec(
        tokens=draft,
        acceptance=acceptance,
        weight_bytes=max(0.0, perf.draft_model_gb) * 1e9,
        layers=max(0, perf.draft_model_layers),
        graph_mode=perf.draft_graph_mode,
    )
    w.counted_dp = counted_dp = sum(g.parallel.dp for g in layout.groups if g.role in COUNTED_DECODE_ROLES)
    w.offered_per_rank = math.ceil(max(0, workload.concurrency) / counted_dp) if counted_dp else 0
    w.concurrency = max(0, workload.concurrency)
    return w


def _put_request_figures(
    book: FigureBook,
    req: PlanRequest,
    w: _Workload,
    factors: sm.PlatformFactors,
    family: str,
    tflops: float,
    tflops_precision: str,
) -> None:
    """Put the request-wide figures: the prompt tokens computed, the TFLOPS per device, the efficiency
    factors of the platform and, with a draft, the tokens accepted per step."""
    book.put(
        "performance.prompt_tokens_computed",
        w.computed_prompt_tokens,
        source=Source("input", "workload.input_tokens, performance.prefix_cache_hit_rate"),
        input_tokens=w.prompt_tokens,
        prefix_cache_hit_rate=fig_input(w.hit),
    )
    book.put(
        "performance.tflops_per_device",
        fig_value(tflops),
        label={"precision_en": tflops_precision or "n/a", "precision_zh": tflops_precision or "无"},
        source=Source("derived", "accelerator catalog"),
        activation_format=_formats(req)[0],
        precision_used=tflops_precision,
    )
    add_factor_figures(book, req, factors, family)
    if w.draft:
        book.put(
            "performance.tokens_per_step",
            fig_value(sm.accepted_tokens_per_step(w.draft, w.acceptance)),
            source=Source("input", "performance.speculative_tokens, performance.speculative_acceptance_rate"),
            k_draft_tokens=w.draft,
            a_acceptance_rate=fig_input(w.acceptance),
        )


def _group_estimates(
    req: PlanRequest,
    layout: LayoutResult,
    memory: MemoryResult | None,
    factors: sm.PlatformFactors,
    tflops: float,
    w: _Workload,
    book: FigureBook,
    checks: list[Check],
) -> tuple[dict[str, GroupModel], list[GroupPerformance]]:
    """Every group's step-time model (group_model.py) and its estimate at the stated load (groups.py,
    which puts the group's figures and checks), in the layout's order."""
    mem_by_group = {g.group: g for g in (memory.groups if memory else ())}
    models: dict[str, GroupModel] = {}
    groups: list[GroupPerformance] = []
    for g in layout.groups:
        gm_ = mem_by_group.get(g.name)
        gmodel = build_group_model(
            req,
            g,
            gm_,
            layout,
            factors,
            tflops=tflops,
            computed_prompt_tokens=w.computed_prompt_tokens,
            context_tokens=w.context_tokens,
            mean_context=w.mean_context,
            lm_non_expert_bytes=w.lm_non_expert_bytes,
            draft=w.draft,
            acceptance=w.acceptance,
            disaggregated=w.disaggregated,
            draft_spec=w.draft_spec,
            activation_format=_formats(req)[0],
        )
        models[g.name] = gmodel
        groups.append(
            group_estimate(
                req,
                g,
                gmodel,
                book,
                checks,
                computed_prompt_tokens=w.computed_prompt_tokens,
                output_tokens=w.output_tokens,
                context_tokens=w.context_tokens,
                offered_per_rank=w.offered_per_rank,
                disaggregated=w.disaggregated,
            )
        )
    return models, groups


def _operating_point(
    req: PlanRequest, models: dict[str, GroupModel], groups: list[GroupPerformance], w: _Workload
) -> tuple[_Pools, sm.OperatingPoint]:
    """The deployment's closed-loop model and its operating point at the stated concurrency (at one user
    when none is stated).

    xPyD with both pools: the prefill queue feeding the decode pool (each point computed once, kept in
    ``points`` for the design point's search), whose capacity is the concurrency it sustains; else the
    serving groups side by side; else no point.  ``lead`` is the model whose point the latencies quote:
    the decode side of xPyD, else the first serving group."""
    perf, output_tokens = req.performance, w.output_tokens
    prefill_models = [models[g.group] for g in groups if g.role == "prefill"]
    decode_models = [models[g.group] for g in groups if g.role == "decode"]
    counted_models = [models[g.group] for g in groups if g.counts_toward_throughput]
    point_fn: Callable[[float], sm.OperatingPoint]
    mode: str | None
    point_lead: GroupModel | None
    points: dict[tuple[bool, float], sm.OperatingPoint] = {}
    split = bool(w.disaggregated and prefill_models and decode_models)
    if split:

        def point_fn(c: float) -> sm.OperatingPoint:
            op = points.get((type(c) is int, c))
            if op is None:
                op = points[type(c) is int, c] = disaggregated_point(
                    prefill_models, decode_models, c, output_tokens
                )
            return op

        capacity_users = sum(m.slots * m.shape.dp for m in decode_models)
        mode, point_lead = "disaggregated", decode_models[0]
    elif counted_models:

        def point_fn(c: float) -> sm.OperatingPoint:
            return aggregated_point(counted_models, c, output_tokens, closed_batch=perf.closed_batch)

        capacity_users = sum(m.slots * m.shape.dp for m in counted_models)
        mode, point_lead = "aggregated", counted_models[0]
    else:

        def point_fn(c: float) -> sm.OperatingPoint:
            return sm.OperatingPoint(c, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, False)

        capacity_users = 0
        mode, point_lead = None, None
    concurrency = w.concurrency
    op = point_fn(concurrency) if concurrency > 0 else point_fn(1)
    if split:
        capacity_users = sustained_concurrency(point_fn, capacity_users)

    pools = _Pools()
    pools.prefill_models, pools.decode_models, pools.counted_models = (
        prefill_models,
        decode_models,
        counted_models,
    )
    pools.split, pools.point_fn, pools.points = split, point_fn, points
    pools.capacity_users, pools.mode, pools.lead = capacity_users, mode, point_lead
    return pools, op


def _design(
    req: PlanRequest, pools: _Pools, w: _Workload, family: str, book: FigureBook, checks: list[Check]
) -> DesignPoint | None:
    """The design point, the load this hardware carries within the latency targets (design.py), with its
    figures, and the check that says so when no load meets the targets."""
    design = design_point(
        req,
        pools.prefill_models,
        pools.decode_models if pools.split else pools.counted_models,
        disaggregated=pools.split,
        input_tokens=w.prompt_tokens,
        output_tokens=w.output_tokens,
        band=sm.error_band(family)[:2],
        points=pools.points,
    )
    if design is not None:
        add_design_figures(
            book,
            design,
            max_num_batched_tokens=decoding_budget(req),
            draft=w.draft,
            output_tokens=w.output_tokens,
        )
        if design.limited_by == "unreachable" and design.unmet_targets:
            checks.append(unreachable_check(design))
    return design


def _prefill_share(
    req: PlanRequest,
    prefill_groups: list[GroupPerformance],
    decode_groups: list[GroupPerformance],
    counted: list[GroupPerformance],
    decode_models: list[GroupModel],
    design: DesignPoint | None,
    w: _Workload,
    book: FigureBook,
    checks: list[Check],
) -> tuple[PdBalance | None, float, int, int]:
    """(P/D balance, prefill time share, prefill nodes, decode nodes).

    xPyD: the prefill pool's capacity against the decode pool's at the design point's batch per DP
    rank (at the stated load without a design point), with its figures and checks (disaggregated.py),
    and the prefill nodes' share of the nodes.  Aggregated: the share of a rank's busy time the running
    batch's prompts take, 0 with no running batch (the node counts are then 0)."""
    output_tokens = w.output_tokens
    share_lead = counted[0] if counted else None
    pd_balance: PdBalance | None = None
    p_nodes = d_nodes = 0
    if w.disaggregated and prefill_groups and decode_groups:
        p_cap = sum(g.requests_per_s for g in prefill_groups)
        d_cap = sum(g.requests_per_s for g in decode_groups)
        design_batch = design_batch_per_rank(req, design)
        if design_batch > 0:
            # The split is advised for the load the cluster is built for (the design point), not the
            # quoted load: the decode pool's capacity at the design batch per DP rank.
            d_cap = design_decode_capacity(decode_models, design_batch, output_tokens)
        pd_balance = capacity_balance(p_cap, d_cap, prefill_groups, decode_groups)
        p_nodes = sum(g.nodes for g in prefill_groups)
        d_nodes = sum(g.nodes for g in decode_groups)
        prefill_share = p_nodes / (p_nodes + d_nodes)
        add_pd_figures(book, checks, pd_balance, prefill_groups, decode_groups)
    elif share_lead and share_lead.batch_per_dp_rank > 0:
        busy_prefill = share_lead.batch_per_dp_rank * share_lead.prefill_s
        busy_decode = output_tokens * share_lead.tpot_s
        prefill_share = busy_prefill / (busy_prefill + busy_decode)
    else:
        prefill_share = 0.0
    return pd_balance, prefill_share, p_nodes, d_nodes


def _throughput(
    req: PlanRequest,
    groups: list[GroupPerformance],
    counted: list[GroupPerformance],
    op: sm.OperatingPoint,
    w: _Workload,
    book: FigureBook,
) -> tuple[_Throughput, list[GroupPerformance]]:
    """(throughput, groups): requests, output and input tokens per second, and output tokens per second
    per serving DP rank, at the operating point (none without a stated load).

    A measured throughput (workload.measured_output_tokens_per_s, a load test) replaces the estimate:
    requests/s follow from it, each serving group's throughput is scaled in proportion to its estimate
    and its figure restated.  Without one, the estimate at the stated load, the groups as they are."""
    output_tokens = w.output_tokens
    requests_per_s = op.requests_per_s if w.concurrency > 0 else 0.0
    output_tps = requests_per_s * output_tokens
    measured_tps = req.workload.measured_output_tokens_per_s
    measured = measured_tps is not None and measured_tps > 0
    estimated_output_tps = output_tps
    if measured_tps is not None and measured_tps > 0:  # i.e. ``measured``, written so the type narrows
        output_tps = float(measured_tps)
        requests_per_s = output_tps / output_tokens
        total_counted = sum(g.output_tokens_per_s for g in counted)
        groups = [
            scaled_to_measured(g, output_tps / total_counted if total_counted > 0 else 0.0) for g in groups
        ]
        for scaled in groups:
            key = f"performance.{scaled.group}.output_tokens_per_s"
            if key in book:
                book.restate(
                    book[key],
                    fig_value(scaled.output_tokens_per_s),
                    source=Source("input", "workload.measured_output_tokens_per_s (load test)"),
                )
    t = _Throughput()
    t.measured, t.requests_per_s = measured, requests_per_s
    t.output_tps, t.estimated_output_tps = output_tps, estimated_output_tps
    t.input_tps = requests_per_s * w.prompt_tokens
    t.per_dp_rank = output_tps / w.counted_dp if w.counted_dp else 0.0
    return t, groups


def _serving_devices(req: PlanRequest, layout: LayoutResult) -> int:
    """Devices of the groups that serve (the decoding groups and the prefill pool): standby excluded."""
    return sum(g.nodes for g in layout.groups if g.role in COUNTED_DECODE_ROLES | {"prefill"}) * (
        layout.devices_per_node or req.server.logical_devices
    )


def _put_latency_figures(
    book: FigureBook,
    req: PlanRequest,
    op: sm.OperatingPoint,
    pools: _Pools,
    w: _Workload,
    *,
    ttft: float,
    tpot: float,
    finite: bool,
    queue_wait: float,
    ttft_lead: GroupPerformance | None,
    counted: list[GroupPerformance],
) -> None:
    """Put the latencies at the operating point: TTFT (a closed wave's, else one prompt's prefill plus
    its wait; ``unserved`` with no finite point), TPOT, the queue wait, and the P90s of both."""
    perf, concurrency = req.performance, w.concurrency
    mode, point_lead = pools.mode, pools.lead
    served = finite and mode is not None and point_lead is not None
    point_step = point_lead.step(op.batch_per_rank) if point_lead is not None and served else None
    latency_variant = mode if served and mode is not None else "unserved"
    request_overhead_s = point_lead.factors.request_overhead_s if point_lead is not None else 0.0
    kv_transfer_s = point_lead.kv_transfer_s if point_lead is not None and mode == "disaggregated" else 0.0
    step_s = point_step.step_s if point_step is not None else 0.0
    if latency_variant == "aggregated" and perf.closed_batch:
        # A closed wave: its prompts share prefill passes (sm.wave_prefill); the mean wait for the pass
        # that ends a prompt (the operating point's) takes the place of one prompt's prefill.
        book.put(
            "performance.ttft_s",
            fig_value(ttft),
            variant="closed_batch",
            source=ESTIMATE_SOURCE,
            wave_first_token_s=fig_input(op.wave_first_token_s),
            queue_wait_s=fig_input(queue_wait),
            concurrency=concurrency,
            request_overhead_s=fig_input(request_overhead_s),
            kv_transfer_s=fig_input(kv_transfer_s),
            step_s=fig_input(step_s),
            batch_per_dp_rank=round(op.batch_per_rank, 3),
        )
        latency_variant = "closed_batch"
    else:
        book.put(
            "performance.ttft_s",
            fig_value(ttft),
            variant=latency_variant,
            source=ESTIMATE_SOURCE,
            prefill_s=fig_input(ttft_lead.prefill_s if ttft_lead is not None else 0.0),
            queue_wait_s=fig_input(queue_wait),
            concurrency=concurrency,
            request_overhead_s=fig_input(request_overhead_s),
            kv_transfer_s=fig_input(kv_transfer_s),
            step_s=fig_input(step_s),
            batch_per_dp_rank=round(op.batch_per_rank, 3),
        )
    book.put(
        "performance.tpot_s",
        fig_value(tpot),
        variant=latency_variant,
        source=ESTIMATE_SOURCE,
        decode_step_s=fig_input(counted[0].decode_step_s if counted else 0.0),
        tokens_per_step=fig_input(counted[0].tokens_per_step if counted else 1.0),
        batch_per_dp_rank=round(op.batch_per_rank, 3),
        concurrency=concurrency,
        step_s=fig_input(point_step.step_s if point_step is not None else 0.0),
        prefill_s=fig_input(point_lead.prefill.prefill_s if point_lead is not None else 0.0),
        output_tokens=w.output_tokens,
        # the bytes one decode step reads per rank, of which the groups replicated on every rank
        replicated_weights_bytes=int(point_step.replicated_bytes) if point_step is not None else 0,
        weights_bytes_read=int(point_step.weights_bytes) if point_step is not None else 0,
    )
    book.put(
        "performance.queue_wait_s",
        fig_value(queue_wait),
        variant="disaggregated"
        if mode == "disaggregated"
        else ("closed_batch" if perf.closed_batch else "aggregated"),
        source=ESTIMATE_SOURCE,
        concurrency=concurrency,
        capacity_concurrency=pools.capacity_users,
    )
    book.put(
        "performance.ttft_p90_s",
        fig_value(op.ttft_p90_s if finite else 0.0),
        source=ESTIMATE_SOURCE,
        queue_wait_s=fig_input(queue_wait),
        ttft_s=fig_input(ttft),
        service_p90_over_mean=sm.TTFT_P90_OVER_MEAN_IDLE,
        wait_p90_over_mean=fig_input(sm.WAIT_P90_OVER_MEAN),
    )
    book.put(
        "performance.tpot_p90_s",
        fig_value(op.tpot_p90_s if finite else 0.0),
        source=ESTIMATE_SOURCE,
        tpot_s=fig_input(tpot),
        tpot_p90_over_mean=sm.TPOT_P90_OVER_MEAN,
    )


def _put_throughput_figures(
    book: FigureBook,
    w: _Workload,
    family: str,
    band: tuple[float, float, bool],
    t: _Throughput,
    counted: list[GroupPerformance],
) -> None:
    """Put the throughput: requests/s, output tokens/s and its range over the family's error band (the
    measured figure alone when measured), input tokens/s and output tokens/s per serving DP rank."""
    output_tokens, counted_dp = w.output_tokens, w.counted_dp
    measured, requests_per_s, output_tps = t.measured, t.requests_per_s, t.output_tps
    tput_source = (
        Source("input", "workload.measured_output_tokens_per_s (load test)") if measured else ESTIMATE_SOURCE
    )
    if measured:
        book.put(
            "performance.requests_per_s",
            fig_value(requests_per_s),
            variant="measured",
            source=tput_source,
            output_tokens=output_tokens,
            measured_output_tokens_per_s=fig_input(output_tps),
            serving_groups=[g.group for g in counted],
        )
    else:
        book.put(
            "performance.requests_per_s",
            fig_value(requests_per_s),
            variant="estimate",
            source=tput_source,
            output_tokens=output_tokens,
            concurrency=w.concurrency,
            serving_groups=[g.group for g in counted],
        )
    book.put(
        "performance.output_tokens_per_s",
        fig_value(output_tps),
        source=tput_source,
        requests_per_s=fig_input(requests_per_s),
        output_tokens=output_tokens,
        estimated_tokens_per_s=fig_input(t.estimated_output_tps),
    )
    # The cross-validated band of the plan's hardware family (leave-one-source-out, docs/performance.md
    # §3); a family with fewer than three public sources gets at least the wide band, and says so.
    low, high, few_sources = band
    book.put(
        "performance.output_tokens_per_s_range",
        f"{output_tps / high:,.0f}–{output_tps / low:,.0f}" if not measured else f"{output_tps:,.0f}",
        variant="measured" if measured else "estimate",
        # The family as a reader names it, in each language (common.FAMILY_NAMES), never its code.
        label={
            "family": FAMILY_NAMES.get(family, (family, family))[0],
            "family_zh": FAMILY_NAMES.get(family, (family, family))[1],
        },
        source=CALIBRATION_SOURCE,
        band_low=low,
        band_high=high,
        family=family,
        few_sources=few_sources,
        output_tokens_per_s=fig_input(output_tps),
    )
    book.put(
        "performance.input_tokens_per_s",
        fig_value(t.input_tps),
        source=tput_source,
        requests_per_s=fig_input(requests_per_s),
        input_tokens=w.prompt_tokens,
    )
    book.put(
        "performance.output_tokens_per_s_per_dp_rank",
        fig_value(t.per_dp_rank),
        variant="ranks" if counted_dp else "none",
        source=tput_source,
        serving_dp_ranks=counted_dp,
        output_tokens_per_s=fig_input(output_tps),
    )


def _put_share_figures(
    book: FigureBook,
    req: PlanRequest,
    w: _Workload,
    share: tuple[PdBalance | None, float, int, int],
    counted: list[GroupPerformance],
    capacity_users: int,
    measured: bool,
) -> None:
    """Put the prefill time share (by nodes in xPyD, by busy time when aggregated; ``share`` as
    :func:`_prefill_share` gives it), the users that run at once, and whether the throughput is
    measured."""
    pd_balance, prefill_share, p_nodes, d_nodes = share
    share_lead = counted[0] if counted else None
    if pd_balance is not None:
        book.put(
            "performance.prefill_time_share",
            fig_value(prefill_share),
            variant="disaggregated",
            source=ESTIMATE_SOURCE,
            prefill_nodes=p_nodes,
            decode_nodes=d_nodes,
        )
    else:
        book.put(
            "performance.prefill_time_share",
            fig_value(prefill_share),
            variant="aggregated" if share_lead and share_lead.batch_per_dp_rank > 0 else "idle",
            source=ESTIMATE_SOURCE,
            B=share_lead.batch_per_dp_rank if share_lead else 0,
            prefill_s=fig_input(share_lead.prefill_s if share_lead else 0.0),
            output_tokens=w.output_tokens,
            tpot_s=fig_input(share_lead.tpot_s if share_lead else 0.0),
        )
    book.put(
        "performance.capacity_concurrency",
        capacity_users,
        variant="disaggregated" if w.disaggregated else "aggregated",
        source=ESTIMATE_SOURCE,
        concurrency=w.concurrency,
        max_num_seqs=req.serving.max_num_seqs,
    )
    book.put(
        "performance.measured",
        measured,
        source=Source("input", "workload"),
        measured_output_tokens_per_s=req.workload.measured_output_tokens_per_s,
    )


def _stated_load_check(
    req: PlanRequest,
    checks: list[Check],
    op: sm.OperatingPoint,
    design: DesignPoint | None,
    w: _Workload,
    capacity_users: int,
    queue_wait: float,
    prefill_groups: list[GroupPerformance],
    decode_groups: list[GroupPerformance],
    counted: list[GroupPerformance],
) -> None:
    """A stated load above the users that run at once: one shortfall with an unreachable target, said
    once (the design point's check, restated with the load, design.unreachable_check), else the capacity
    error on its own (with the load the targets allow, when the design point has one)."""
    concurrency = w.concurrency
    if concurrency > 0 and capacity_users > 0 and concurrency > capacity_users and counted:
        # A target out of reach and a load above what runs at once are one shortfall, said once
        # (design.unreachable_check); else the capacity error on its own.
        at = next((i for i, c in enumerate(checks) if c.code == "performance.design_point_unreachable"), None)
        split = bool(w.disaggregated and prefill_groups and decode_groups)
        serving_nodes = sum(g.nodes for g in (decode_groups if split else counted))
        load = StatedLoad(
            concurrency=concurrency,
            capacity=capacity_users,
            max_num_seqs=req.serving.max_num_seqs,
            queue_wait_s=queue_wait,
            serving_nodes=serving_nodes,
            disaggregated=split,
        )
        if at is not None and design is not None:
            checks[at] = unreachable_check(design, load)
        else:
            within = (
                within_targets_text(design, load)
                if design is not None and not design.best_effort and design.concurrency > 0
                else None
            )
            checks.append(over_capacity_check(concurrency, capacity_users, op, within))


def _estimate_checks(
    family: str, t: _Throughput, band: tuple[float, float, bool], note: tuple[str, str]
) -> list[Check]:
    """The estimate's own checks: a measured throughput used in its place; else the family's fit set
    aside (when it was) and the estimate to be confirmed by a load test, with its band."""
    low, high, _few = band
    output_tps, estimated_output_tps = t.output_tps, t.estimated_output_tps
    if t.measured:
        return [
            raise_(
                "performance.measured_throughput_used",
                figures={"measured": output_tps, "estimated": estimated_output_tps},
                output_tps=output_tps,
                estimated_output_tps=estimated_output_tps,
            )
        ]
    out: list[Check] = []
    if sm.calibration_problem(family):  # the fit file's row was set aside: priors and the wide band
        en, zh = FAMILY_NAMES.get(family, (family, family))
        out.append(raise_("performance.calibration_fit_set_aside", family=en, family_zh=zh))
    out.append(
        raise_(
            "performance.estimate_unconfirmed",
            figures={"output_tokens_per_s": output_tps, "band_low": low, "band_high": high},
            note_en=note[0],
            note_zh=note[1],
        )
    )
    return out


def estimate_performance(
    req: PlanRequest, layout: LayoutResult, memory: MemoryResult | None, *, screening: bool = False
) -> PerformanceResult:
    """Estimate TTFT, TPOT and throughput of the deployment (an ESTIMATE; see module doc).

    ``screening``: the auto-planner's first pass over a serving variant (planner/serving.py), which
    judges the operating point at the stated load, the capacity and the error checks only: the
    design point's searches, the load curve and the latency-target table are left out (no
    ``design_point``, ``curve`` or ``sla``; their warnings with them).  The variant it keeps is planned
    in full by ``plan()``."""
    checks: list[Check] = []
    req = _settled_request(req, layout, memory, checks)
    book = UnrecordedBook() if screening else FigureBook()
    factors = sm.effective_factors(req)
    family = sm.hardware_family(req.server.accelerator)
    req, tflops, tflops_precision = _device_compute(req, family, checks)
    w = _workload_inputs(req, layout)
    _put_request_figures(book, req, w, factors, family, tflops, tflops_precision)
    models, groups = _group_estimates(req, layout, memory, factors, tflops, w, book, checks)

    # ---- the deployment's operating point at the quoted concurrency (closed loop)
    pools, op = _operating_point(req, models, groups, w)
    concurrency, capacity_users = w.concurrency, pools.capacity_users
    # ---- the design point: the load this hardware carries within the latency targets
    design = None if screening else _design(req, pools, w, family, book, checks)

    prefill_groups = [g for g in groups if g.role == "prefill"]
    decode_groups = [g for g in groups if g.role == "decode"]
    counted = [g for g in groups if g.counts_toward_throughput]
    share = _prefill_share(
        req, prefill_groups, decode_groups, counted, pools.decode_models, design, w, book, checks
    )
    finite = math.isfinite(op.ttft_s) and math.isfinite(op.tpot_s)
    ttft = op.ttft_s if finite else 0.0
    tpot = op.tpot_s if finite else 0.0
    t, groups = _throughput(req, groups, counted, op, w, book)
    serving_devices = _serving_devices(req, layout)

    # The group whose prefill the TTFT formula quotes: the first prefill group, else the first serving one.
    # (Before, a layout with groups but none prefill or serving raised AttributeError on None here.)
    ttft_lead = prefill_groups[0] if prefill_groups else (counted[0] if counted else None)
    queue_wait = op.wait_s if math.isfinite(op.wait_s) else 0.0
    band = sm.error_band(family)
    note_en, note_zh = estimate_note(family, *band)
    if book.recording:  # a screening pass keeps no figure: none to work out
        _put_latency_figures(
            book,
            req,
            op,
            pools,
            w,
            ttft=ttft,
            tpot=tpot,
            finite=finite,
            queue_wait=queue_wait,
            ttft_lead=ttft_lead,
            counted=counted,
        )
        _put_throughput_figures(book, w, family, band, t, counted)
        _put_share_figures(book, req, w, share, counted, capacity_users, t.measured)

    curve = () if screening else load_curve(pools.point_fn, concurrency, capacity_users, serving_devices)
    sla = None if screening else sla_result(req, op, pools.point_fn, capacity_users)
    if sla is not None:
        add_sla_figures(book, sla)
    checks.extend(target_checks(req, op, sla))
    _stated_load_check(
        req, checks, op, design, w, capacity_users, queue_wait, prefill_groups, decode_groups, counted
    )
    checks.extend(_estimate_checks(family, t, band, (note_en, note_zh)))

    measured = t.measured
    low, high, few_sources = band
    return PerformanceResult(
        measured=measured,
        groups=tuple(groups),
        ttft_s=ttft,
        tpot_s=tpot,
        requests_per_s=t.requests_per_s,
        output_tokens_per_s=t.output_tps,
        input_tokens_per_s=t.input_tps,
        output_tokens_per_s_per_dp_rank=t.per_dp_rank,
        serving_dp_ranks=w.counted_dp,
        prefill_time_share=share[1],
        pd_balance=share[0],
        note_en=MEASURED_NOTE_EN if measured else note_en,
        note_zh=MEASURED_NOTE_ZH if measured else note_zh,
        figures=book.figures,
        checks=tuple(checks),
        ttft_p90_s=op.ttft_p90_s if finite else 0.0,
        tpot_p90_s=op.tpot_p90_s if finite else 0.0,
        queue_wait_s=op.wait_s if math.isfinite(op.wait_s) else 0.0,
        capacity_concurrency=capacity_users,
        curve=curve,
        sla=sla,
        error_band=(low, high),
        error_band_family=family,
        error_band_few_sources=few_sources,
        serving_devices=serving_devices,
        concurrency=concurrency,
        design_point=design,
    )
