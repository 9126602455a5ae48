"""The serving settings proposed for the chosen hardware, not copied from the seed's flags.

For the request's hardware and node count, the settings that give the most tokens per yuan
within the latency targets: the cost of the deployment does not move with the flags, so the
most tokens per yuan is the highest output throughput at the design point
(:mod:`.performance.design`).  Searched:

* the P:D split of an xPyD deployment: the request's, and those within two nodes of it and of the
  split that balances the pools at the design point, both sides laid out validly with the layout
  "auto" gives each; the design point of each;
* ``max_num_batched_tokens``: the request's, 16,384 and 32,768 (a larger step budget takes a
  prompt in fewer chunks: vLLM ``SchedulerConfig.max_num_batched_tokens``; the memory module
  charges its activations against the KV cache);
* ``max_num_seqs``: the design point's running sequences per DP rank (the KV cache and the
  targets set it, the search does not guess it);
* where the targets are out of the request's reach (the design point is the best-effort one,
  :mod:`.performance.design`), every candidate is judged within the request's *relaxed* targets
  (``DesignPoint.relaxed_targets``, the same for all candidates, so their throughputs compare),
  and the settings proposed are those of the best-effort design point the plan's costs use: a
  candidate that misses even the relaxed targets is not proposed;
* speculative decoding is part of the settings, said either way: the serving defaults turn on the
  catalog's draft where the engine version runs one (an MTP head, or a separate draft model with
  its own weights and step cost, accepted at vLLM's mean acceptance length:
  :mod:`.speculative`), and the recommendation keeps the request's setting and says which draft it
  runs, or why none is on (:func:`speculative_reason`); none is invented.

The result is one check, ``performance.serving_settings_recommended``, whose fix is the full
set of settings (one click on the page, one object in the API); the advice pass proves it like
every fix.  The request's own values (the seed's, for a seeded configuration) stay in the
request: the check names them beside the proposal.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable
from typing import Any

from .checks import raise_
from .defaults import resolve_serving
from .layout import auto_layout, layout_is_valid, resolve_layout
from .memory import auto, is_auto, size_admission, size_memory
from .performance import estimate_performance
from .performance.design import batch_cap, target_text
from .serialize import to_jsonable
from .serving_search import SearchOutcome, configuration_change, configuration_label, front_points, run_search
from .serving_search import search_serving as cached_search
from .speculative import decode_role, role_serving, speculator, tokens, version_reason, with_draft
from .types import Check, DesignPoint, PerformanceResult, PlanRequest, PlanResult, Severity, TopologyKind

BATCHED_TOKENS_CHOICES = (16_384, 32_768)
# A proposal is offered when it carries this much more at the targets (else the request's settings stand).
MIN_GAIN = 1.05


@dataclasses.dataclass(frozen=True)
class ServingProposal:
    max_num_seqs: int
    max_num_batched_tokens: int
    speculative_tokens: int
    prefill_nodes: int
    decode_nodes: int
    design: DesignPoint


# The request's target fields by the design point's target names (performance/sla.py stated_targets).
_TARGET_FIELDS = {
    "ttft_p50_s": "ttft_target_s",
    "ttft_p90_s": "ttft_p90_target_s",
    "tpot_p50_ms": "tpot_target_ms",
    "tpot_p90_ms": "tpot_p90_target_ms",
}


def within(req: PlanRequest, targets: dict[str, float]) -> PlanRequest:
    """``req`` stating exactly ``targets`` (the best-effort point's relaxed ones; module doc)."""
    fields: dict[str, Any] = {f: None for f in _TARGET_FIELDS.values()}
    fields.update({_TARGET_FIELDS[k]: float(v) for k, v in targets.items() if k in _TARGET_FIELDS})
    return dataclasses.replace(req, workload=dataclasses.replace(req.workload, **fields))


def _design(req: PlanRequest) -> DesignPoint | None:
    """:func:`design_of`, only where the configuration reaches its targets with some load."""
    dp = design_of(req)
    if dp is None or dp.limited_by == "unreachable" or dp.concurrency <= 0:
        return None
    return dp


def _splits(req: PlanRequest, balanced: int | None) -> Iterable[PlanRequest]:
    """The request's split, and the splits within two nodes of the one that balances the two
    pools at the design point (``PdBalance.suggested_prefill_nodes``) and of the request's."""
    topo = req.topology
    if topo.kind != TopologyKind.DISAGGREGATED:
        yield req
        return
    total = topo.prefill_nodes + topo.decode_nodes
    yield req
    near = {topo.prefill_nodes + k for k in range(-2, 3)}
    if balanced is not None:
        near |= {balanced + k for k in range(-2, 3)}
    probe = dataclasses.replace(req, topology=dataclasses.replace(topo, kind=TopologyKind.SINGLE))
    # A split whose layout pipelines a replica across nodes (``layout.pipeline_across_nodes``: the experts
    # do not divide over that node count) is a new warning and a multi-node executor per replica: not
    # proposed unless the request's own split already pipelines.
    own_pp = max(
        auto_layout(probe, topo.prefill_nodes).pp if topo.prefill_nodes > 0 else 1,
        auto_layout(probe, topo.decode_nodes).pp if topo.decode_nodes > 0 else 1,
    )
    for p in sorted(near):
        if p == topo.prefill_nodes or not 0 < p < total:
            continue
        d = total - p
        pp = auto_layout(probe, p)
        dd = auto_layout(probe, d)
        if not (layout_is_valid(probe, p, pp) and layout_is_valid(probe, d, dd)):
            continue
        if max(pp.pp, dd.pp) > own_pp:
            continue
        yield dataclasses.replace(
            req,
            topology=dataclasses.replace(
                topo, prefill_nodes=p, decode_nodes=d, parallel=pp, decode_parallel=dd
            ),
        )


def design_of(req: PlanRequest) -> DesignPoint | None:
    """The design point of one serving configuration (layout, memory, performance; no TCO, no launch),
    the best-effort one included; None when the configuration does not run (an error)."""
    serving = resolve_serving(req.serving, req.server.accelerator.software_stack)
    if serving is not req.serving:
        req = dataclasses.replace(req, serving=serving)
    layout = resolve_layout(req)
    if any(c.severity == Severity.ERROR for c in layout.checks):
        return None
    req = size_admission(req, layout)
    memory = size_memory(req, layout)
    if any(c.severity == Severity.ERROR for c in memory.checks):
        return None
    return estimate_performance(req, layout, memory).design_point


def search_root(req: PlanRequest) -> PlanRequest:
    """The request the search starts from: as plan() estimates it (the decoding engines' draft charged,
    engine/speculative.py with_draft), with ``max_num_seqs`` left to the KV cache (engine/memory.py size_admission)."""
    return with_draft(auto(req))


def search_configuration(req: PlanRequest, result: PlanResult) -> SearchOutcome:
    """The serving-configuration search of ``req`` (``serving_search``), with the plan's own design point
    as the request's and its P:D balance point as the split searched around."""
    perf = result.performance
    # The search sizes max_num_seqs to the KV cache (engine/memory.py size_admission): a stated setting that bounds the
    # design point is one of the things a configuration changes, so the plan's own point is reused only
    # for a request that left it to the defaults.
    current = perf.design_point if perf is not None and is_auto(req) else None
    req = search_root(req)
    balance = perf.pd_balance if perf is not None else None
    balanced = balance.suggested_prefill_nodes if balance is not None else None
    chosen, own, everyone, tried = run_search(
        req,
        design_of,
        lambda r: _splits(r, balanced if r.topology == req.topology else None),
        BATCHED_TOKENS_CHOICES,
        current,
    )
    front = front_points(req, result, chosen, everyone) if chosen is not None else ()
    return SearchOutcome(
        chosen=chosen, current=own, front=front, evaluated=tried, candidates=tuple(everyone), root=req
    )


def propose_serving(
    req: PlanRequest, balanced_prefill_nodes: int | None = None, current: DesignPoint | None = None
) -> ServingProposal | None:
    """The settings with the highest output throughput within the targets (module doc), or None.
    ``current``: the request's own design point; when it is the best-effort one, the candidates are
    judged within its relaxed targets."""
    own = None  # the request's own settings: its design point is the plan's (not searched again)
    if current is not None and current.best_effort and current.relaxed_targets:
        req = within(req, dict(current.relaxed_targets))
        own = current  # the best-effort search is the one within the relaxed targets stated
    elif current is not None and current.limited_by != "unreachable" and current.concurrency > 0:
        own = current
    best: tuple[float, PlanRequest, DesignPoint] | None = None
    for cand in _splits(req, balanced_prefill_nodes):
        dp = own if cand is req and own is not None else _design(cand)
        if dp is not None and (best is None or dp.output_tokens_per_s > best[0] * 1.0001):
            best = (dp.output_tokens_per_s, cand, dp)
    if best is None:
        return None
    _, chosen, design = best
    for mnbt in BATCHED_TOKENS_CHOICES:
        if mnbt <= chosen.serving.max_num_batched_tokens:
            continue
        cand = dataclasses.replace(
            chosen, serving=dataclasses.replace(chosen.serving, max_num_batched_tokens=mnbt)
        )
        dp = _design(cand)
        if (
            dp is not None and dp.output_tokens_per_s > best[0] * 1.02
        ):  # a bigger budget costs KV: only for a gain
            best = (dp.output_tokens_per_s, cand, dp)
    _, chosen, design = best
    return ServingProposal(
        max_num_seqs=max(1, design.max_num_seqs_per_dp_rank),
        max_num_batched_tokens=chosen.serving.max_num_batched_tokens,
        speculative_tokens=with_draft(chosen).performance.speculative_tokens,
        prefill_nodes=chosen.topology.prefill_nodes,
        decode_nodes=chosen.topology.decode_nodes,
        design=design,
    )


def speculative_reason(req: PlanRequest) -> tuple[str, str]:
    """Why speculative decoding is as recommended (module doc): the catalog draft the decoding engines
    run, the request's own step-model draft, or why none is on."""
    perf = req.performance
    name = req.model.name
    spec = role_serving(req.serving, decode_role(req)).speculative
    draft = speculator(req, spec)
    if spec.on:
        k = tokens(spec, draft)
        if draft is None:
            return (f"on: {spec.method}, {k} tokens a step", f"开启：每步 {k} 个投机 token")
        return (
            f"on: {draft.name}, {k} tokens a step at {draft.acceptance_rate:.1%} acceptance",
            f"开启：目录中的草稿模型，每步 {k} 个投机 token，接受率 {draft.acceptance_rate:.1%}",
        )
    if perf.speculative_tokens > 0:
        kind = "a draft model" if perf.draft_model_gb > 0 else "an MTP head"
        kind_zh = "独立草稿模型" if perf.draft_model_gb > 0 else "MTP 头"
        return (
            f"as requested: {perf.speculative_tokens} draft tokens from {kind}",
            f"按请求设置：{kind_zh}每步 {perf.speculative_tokens} 个草稿 token",
        )
    stack = req.server.accelerator.software_stack
    generation = req.server.accelerator.generation
    reasons = [
        version_reason(s, stack, req.serving.engine, req.serving.vllm_version, generation)
        for s in req.speculators
    ]
    if reasons:
        return (
            f"off: {'; '.join(r for r in reasons if r) or 'turned off in the request'}",
            "关闭：目录中的草稿模型不适用于所选硬件或推理引擎版本，或已在请求中关闭",
        )
    return (
        f"off: the catalog lists no draft for {name} (no MTP head, no draft model)",
        f"关闭：目录中没有 {name} 的草稿模型（无 MTP 头，也无独立草稿模型）",
    )


def recommended_serving_check(
    req: PlanRequest, result: PlanResult, *, catalog_version: str = ""
) -> tuple[Check, ...]:
    """The proposal as a check with a one-click fix, when it differs from the request's settings and
    carries more within the targets (or the request's settings cannot carry the stated load, or miss
    the targets a searched configuration meets).  The configuration comes from the serving-configuration
    search (``serving_search``, cached per request and ``catalog_version``); when no configuration meets
    the targets, from the best-effort proposal (:func:`propose_serving`)."""
    perf = result.performance
    if perf is None or not result.layout.groups:
        return ()
    current = perf.design_point
    balance = perf.pd_balance
    outcome = cached_search(req, result, search_configuration, catalog_version=catalog_version)
    configuration: dict[str, object] = {}
    front: tuple = ()
    if outcome.chosen is not None:
        chosen = outcome.chosen.request
        d0 = outcome.chosen.design
        prop: ServingProposal | None = ServingProposal(
            max_num_seqs=max(1, d0.max_num_seqs_per_dp_rank),
            max_num_batched_tokens=chosen.serving.max_num_batched_tokens,
            speculative_tokens=chosen.performance.speculative_tokens,
            prefill_nodes=chosen.topology.prefill_nodes,
            decode_nodes=chosen.topology.decode_nodes,
            design=d0,
        )
        configuration = {
            k: v
            for k, v in configuration_change(search_root(req), chosen).items()
            if k not in ("serving.max_num_batched_tokens", "topology.prefill_nodes", "topology.decode_nodes")
        }
        front = outcome.front
    else:
        prop = propose_serving(
            search_root(req),
            balance.suggested_prefill_nodes if balance is not None else None,
            current if is_auto(req) else None,
        )
    if prop is None:
        return _carry_the_load(req, perf)
    missed = current is None or current.best_effort or current.limited_by == "unreachable"
    meets_now = outcome.chosen is not None and missed
    s, topo = req.serving, req.topology
    fix: dict[str, object] = {}
    # Only a stated setting below the design point's sequences is changed: one left to the defaults is
    # sized to the KV cache, and the engines launch the design point's (launch/build.py).
    if not is_auto(req) and prop.max_num_seqs > s.max_num_seqs:
        fix["serving.max_num_seqs"] = prop.max_num_seqs
    if prop.max_num_batched_tokens != s.max_num_batched_tokens:
        fix["serving.max_num_batched_tokens"] = prop.max_num_batched_tokens
    split_changed = topo.kind == TopologyKind.DISAGGREGATED and prop.prefill_nodes != topo.prefill_nodes
    if split_changed:
        fix["topology.prefill_nodes"] = prop.prefill_nodes
        fix["topology.decode_nodes"] = prop.decode_nodes
    fix.update(configuration)
    if not fix:
        return ()
    cur_tps = current.output_tokens_per_s if current is not None else 0.0
    short = perf.capacity_concurrency < req.workload.concurrency
    if (
        not short
        and not meets_now
        and "serving.max_num_seqs" not in fix
        and prop.design.output_tokens_per_s < cur_tps * MIN_GAIN
    ):
        return ()
    if configuration:
        label_en, label_zh = configuration_label(outcome.chosen.request)  # type: ignore[union-attr]
        config_en, config_zh = f"{label_en}; ", f"{label_zh}；"
    else:
        config_en = config_zh = ""
    d = prop.design
    disagg = topo.kind == TopologyKind.DISAGGREGATED
    # The plan's one P:D proposal (``performance.pd_imbalance`` names none): the split changed, or kept
    # because no other split of these nodes carries more within the targets.
    if split_changed:
        split_en = f", P:D split {prop.prefill_nodes}P{prop.decode_nodes}D"
        split_zh = f"，P:D 划分 {prop.prefill_nodes}P{prop.decode_nodes}D"
    elif disagg:
        total = prop.prefill_nodes + prop.decode_nodes
        split_en = (
            f", P:D split {prop.prefill_nodes}P{prop.decode_nodes}D of the {total} nodes kept (no split "
            "within two nodes of it or of the balance point carries more within the targets without "
            "pipelining a replica across nodes)"
        )
        split_zh = (
            f"，{total} 个节点保持 P:D 划分 {prop.prefill_nodes}P{prop.decode_nodes}D（与其或平衡点相差"
            "两个节点以内、且不跨节点流水线切分副本的划分，在目标内均不能承载更多）"
        )
    else:
        split_en = split_zh = ""
    # a setting the request left to the plan is named with the value the plan sized it to
    sized = result.request.serving.max_num_seqs
    seqs_en = f"{sized} (sized to the KV cache)" if is_auto(req) else str(s.max_num_seqs)
    seqs_zh = f"{sized}（按 KV 缓存容量确定）" if is_auto(req) else str(s.max_num_seqs)
    seed_en = (
        f"the request's settings: max_num_seqs {seqs_en}, max_num_batched_tokens {s.max_num_batched_tokens}"
        + (f", {topo.prefill_nodes}P{topo.decode_nodes}D" if topo.kind == TopologyKind.DISAGGREGATED else "")
    )
    seed_zh = f"原设置：max_num_seqs {seqs_zh}，max_num_batched_tokens {s.max_num_batched_tokens}" + (
        f"，{topo.prefill_nodes}P{topo.decode_nodes}D" if topo.kind == TopologyKind.DISAGGREGATED else ""
    )
    # the speculative setting the recommended configuration runs (the search may change its token count)
    spec_en, spec_zh = speculative_reason(outcome.chosen.request if outcome.chosen is not None else req)
    best_effort = (
        outcome.chosen is None
        and current is not None
        and current.best_effort
        and bool(current.relaxed_targets)
    )
    if best_effort and current is not None:
        relaxed = {k: v for k, v in current.relaxed_targets.items() if k in current.unmet_targets}
        within_en = (
            "within the relaxed targets ("
            + ", ".join(target_text(k, v)[0] for k, v in relaxed.items())
            + "; the best-effort design point)"
        )
        within_zh = (
            "在放宽后的目标内（"
            + "，".join(target_text(k, v)[1] for k, v in relaxed.items())
            + "；尽力设计点）"
        )
    else:
        within_en, within_zh = "within the latency targets", "满足时延目标时"
    return (
        raise_(
            "performance.serving_settings_recommended",
            severity=Severity.WARNING if short or meets_now else Severity.OK,
            figures={
                "configuration": config_en.rstrip("; "),
                "front": [to_jsonable(p) for p in front],
                "configurations_evaluated": outcome.evaluated,
                "max_num_seqs": prop.max_num_seqs,
                "max_num_batched_tokens": prop.max_num_batched_tokens,
                "speculative_tokens": prop.speculative_tokens,
                "speculative_decoding": spec_en,
                "prefill_nodes": prop.prefill_nodes,
                "decode_nodes": prop.decode_nodes,
                "design_concurrency": d.concurrency,
                "design_output_tokens_per_s": round(d.output_tokens_per_s, 3),
                "request_max_num_seqs": sized if is_auto(req) else s.max_num_seqs,
                "request_max_num_batched_tokens": s.max_num_batched_tokens,
                "best_effort": best_effort,
            },
            config_en=config_en,
            config_zh=config_zh,
            max_num_seqs=prop.max_num_seqs,
            max_num_batched_tokens=prop.max_num_batched_tokens,
            split_en=split_en,
            split_zh=split_zh,
            spec_en=spec_en,
            spec_zh=spec_zh,
            concurrency=d.concurrency,
            output_tps=d.output_tokens_per_s,
            seed_en=seed_en,
            seed_zh=seed_zh,
            within_en=within_en,
            within_zh=within_zh,
            change=fix,
        ),
    )


def _carry_the_load(req: PlanRequest, perf: PerformanceResult) -> tuple[Check, ...]:
    """No setting meets the latency targets: the running sequences per DP rank that at least carry the
    stated load without queueing, when the KV cache holds them (the targets' check says the rest)."""
    dp = perf.design_point
    conc = req.workload.concurrency
    if dp is None or dp.serving_dp_ranks <= 0 or perf.capacity_concurrency >= conc:
        return ()
    need = math.ceil(conc / dp.serving_dp_ranks)
    room = min(
        dp.kv_seqs_fit_per_dp_rank,
        batch_cap(req.serving.max_num_batched_tokens, req.performance.speculative_tokens),
    )
    if need > room or need <= req.serving.max_num_seqs or is_auto(req):
        return ()  # a setting left to the plan is already what the KV cache holds
    spec_en, spec_zh = speculative_reason(req)
    return (
        raise_(
            "performance.serving_settings_recommended",
            variant="carry_the_load",
            figures={
                "max_num_seqs": need,
                "request_max_num_seqs": req.serving.max_num_seqs,
                "speculative_decoding": spec_en,
            },
            spec_en=spec_en,
            spec_zh=spec_zh,
            need=need,
            dp_ranks=dp.serving_dp_ranks,
            conc=conc,
            kv_fit=dp.kv_seqs_fit_per_dp_rank,
            request_max_num_seqs=req.serving.max_num_seqs,
            change={"serving.max_num_seqs": need},
        ),
    )
