"""The serving-configuration search: the configuration of the request's hardware an operator would run.

The way Vidur-Search and NVIDIA AIConfigurator search a deployment, for the hardware and node count the
request names: every candidate is planned by the engine's own layout, memory and performance models
(:func:`.serving_advice.design_of`), its design point found within the request's latency targets
(:mod:`.performance.design`), and the one with the **lowest cost per million output tokens** within
those targets chosen.  The hardware does not change, so its yearly cost does not either: the lowest
cost per million output tokens is the highest output throughput at the design point; each candidate's
cost is priced by :func:`.economics.cost_per_m_output_at`, the arithmetic the plan prices its own
design point with.

The dimensions, searched one after another from the request's own configuration (coordinate ascent:
each keeps the best so far, so the number of plans is the sum of the dimensions' sizes, not their
product):

1. **parallel layout** (:func:`layout_choices`) of each serving group (for xPyD each side):
   TP × DP × EP × PP, TP a divisor of the node's devices that divides the attention heads and fits the
   scale-up domain (the widest two), DP the rest, expert parallelism over TP × DP when the experts
   divide; expert parallelism off only for pure TP (DP 1): vLLM flattens a non-EP MoE layer's TP across
   every DP rank (``FusedMoEParallelConfig.make``, ``flatten_tp_across_dp``, vLLM
   ``model_executor/layers/fused_moe/config.py``), so DP without EP is no set of independent replicas.
   Independent replicas are their own vLLM instances: a single cluster of an even node count is also
   tried as two independent clusters (``tenant_pair``, each with its own layouts) instead of one wide
   expert-parallel group — DeepSeek-R1 on 2 × H200 as two TP8 engines instead of EP16 across
   InfiniBand;
2. the **P:D split** of an xPyD deployment (:func:`.serving_advice.pd_splits`);
3. ``max_num_batched_tokens`` (:data:`.serving_advice.BATCHED_TOKENS_CHOICES`);
4. the **KV-cache dtype**: FP8 where the platform runs it (``defaults.kv_dtype_supported``: not on
   Atlas A2/A3);
5. **speculative decoding**: a catalog draft's token count (:data:`CATALOG_DRAFT_TOKEN_CHOICES`, the
   draft kept on and launched as ``--speculative-config``), or on/off and the count of a draft the request
   states in ``performance`` (:func:`speculative_choices`; the one place a draft's settings become
   dimensions).

A candidate replaces the best so far when it meets the targets where the best does not, or carries
:data:`MIN_STEP_GAIN` more output tokens/s within them.  ``max_num_seqs`` is not searched: the design
point's running sequences per DP rank set it.  When no candidate meets the targets the search says so
(``chosen`` None) and the recommendation falls back to the best-effort settings
(:func:`.serving_advice.propose_serving`).

The runners-up are kept as a small **capacity-vs-TPOT front**: the candidates no other candidate
beats on both design concurrency (more) and TPOT at the design point (less), with what each trades.

The search's result is cached per (canonical request, catalog version) (:func:`search_serving`), so a
page that re-plans the same request never searches twice.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import pickle
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from decimal import Decimal
from typing import Any

from .defaults import kv_dtype_supported
from .explain import plural
from .layout import auto_layout, layout_is_valid, parallel_fix, parallel_label, scale_up_domain
from .serialize import to_jsonable
from .speculative import with_draft
from .types import (
    CommercialSpec,
    DesignPoint,
    KvCacheDtype,
    ParallelSpec,
    PlanRequest,
    PlanResult,
    TopologyKind,
)

# A candidate replaces the best so far only for this much more output throughput within the targets
# (a different configuration has a cost of its own: a launch to change, a layout to validate).
MIN_STEP_GAIN = 1.02
# The runners-up shown beside the chosen configuration.
FRONT_SIZE = 5
# Speculative token counts tried when the request carries a draft (vLLM-Ascend's published K3 runs use 7).
SPECULATIVE_TOKEN_CHOICES = (1, 2, 3, 5, 7)
# A catalog draft's token counts tried (its own count among them): fewer tokens than 3 win only where decode
# is not the bottleneck, where every count costs the same within 0.1 % (16 x A3 8P8D: 1-7 tokens all
# 125.6 CNY per million output tokens), so they are not worth a plan each on every page update.
CATALOG_DRAFT_TOKEN_CHOICES = (3, 5, 7)
_CACHE_SIZE = 256
_NO_TERMS = CommercialSpec()  # what the cache key puts in place of a request's commercial terms


@dataclasses.dataclass(frozen=True)
class Candidate:
    """One serving configuration: the request it is, and its design point."""

    request: PlanRequest
    design: DesignPoint
    meets: bool  # the design point is within the request's targets (not the best-effort one)

    @property
    def carries(self) -> bool:
        """Its design point carries the stated load (the customer's concurrency) within the targets."""
        return self.meets and self.design.concurrency >= self.request.workload.concurrency


@dataclasses.dataclass(frozen=True)
class FrontPoint:
    """A configuration on the capacity-vs-TPOT front, as the plan shows it."""

    label_en: str
    label_zh: str
    concurrency: int
    output_tokens_per_s: float
    tpot_ms: float  # at the design point
    best_tpot_ms: float  # one request alone
    ttft_s: float  # at the design point
    cost_per_m_output: Decimal | None
    currency: str
    trade_en: str
    trade_zh: str
    change: dict[str, Any]  # the request fix that gives this configuration (empty: the request's own)
    chosen: bool


@dataclasses.dataclass(frozen=True)
class SearchOutcome:
    """The search's answer: the chosen configuration (None: none meets the targets), the front."""

    chosen: Candidate | None
    current: Candidate | None
    front: tuple[FrontPoint, ...]
    evaluated: int
    # Every candidate that runs (the front is drawn from them): what :func:`search_serving` re-prices
    # for another request's commercial terms.
    candidates: tuple[Candidate, ...] = ()
    root: PlanRequest | None = None  # the request the search started from (the front's changes are from it)

    def priced_for(self, req: PlanRequest, result: PlanResult) -> SearchOutcome:
        """This outcome for ``req``, a request that differs from the one searched in its commercial terms
        only: each candidate carries ``req``'s terms and the front is priced by ``result`` (``plan(req)``).
        The designs are the same (the search never reads the terms)."""
        rebased: dict[int, Candidate] = {
            id(c): dataclasses.replace(c, request=dataclasses.replace(c.request, commercial=req.commercial))
            for c in (*self.candidates, self.chosen, self.current)
            if c is not None
        }
        chosen = rebased[id(self.chosen)] if self.chosen is not None else None
        everyone = [rebased[id(c)] for c in self.candidates]
        root = dataclasses.replace(self.root, commercial=req.commercial) if self.root is not None else req
        return dataclasses.replace(
            self,
            chosen=chosen,
            current=rebased[id(self.current)] if self.current is not None else None,
            front=front_points(root, result, chosen, everyone) if chosen is not None else (),
            candidates=tuple(everyone),
            root=root,
        )


# --------------------------------------------------------------------------- the dimensions


def _divisors_desc(n: int) -> list[int]:
    return [d for d in range(n, 0, -1) if n % d == 0]


def layout_choices(req: PlanRequest, nodes: int) -> list[ParallelSpec]:
    """The layouts of a group of ``nodes`` searched (module doc, step 1): auto first, then by TP."""
    dpn = max(req.server.logical_devices, 1)
    devices = nodes * dpn
    model = req.model
    heads = model.num_attention_heads
    domain = scale_up_domain(req.server)
    tps = [t for t in _divisors_desc(dpn) if t <= domain and (not heads or heads % t == 0)][:2]
    out = [auto_layout(req, nodes)]
    for tp in tps:
        dp = devices // tp
        local = max(dpn // tp, 1)
        if model.is_moe:
            if model.num_experts and model.num_experts % (tp * dp) == 0:
                out.append(ParallelSpec(tp=tp, dp=dp, pp=1, expert_parallel=True, dp_local=local))
            if dp == 1:
                out.append(ParallelSpec(tp=tp, dp=1, pp=1, expert_parallel=False, dp_local=1))
        else:
            out.append(ParallelSpec(tp=tp, dp=dp, pp=1, expert_parallel=False, dp_local=local))
    seen: list[ParallelSpec] = []
    for p in out:
        if p not in seen and layout_is_valid(req, nodes, p):
            seen.append(p)
    return seen


def _layouts(req: PlanRequest) -> Iterator[PlanRequest]:
    topo = req.topology
    probe = dataclasses.replace(req, topology=dataclasses.replace(topo, kind=TopologyKind.SINGLE))
    if topo.kind == TopologyKind.DISAGGREGATED:
        # The two sides share the DP ranks per node and the expert-parallel switch (the configurator's
        # form states one of each), and the decode side runs no pipeline stages.
        for p in layout_choices(probe, topo.prefill_nodes):
            for d in layout_choices(probe, topo.decode_nodes):
                if (p, d) == (topo.parallel, topo.decode_parallel):
                    continue
                if d.pp != 1 or d.dp_local != p.dp_local or d.expert_parallel != p.expert_parallel:
                    continue
                yield dataclasses.replace(
                    req, topology=dataclasses.replace(topo, parallel=p, decode_parallel=d)
                )
        return
    if topo.kind in (TopologyKind.PRIMARY_STANDBY, TopologyKind.TENANT_PAIR):
        for p in layout_choices(probe, topo.nodes // 2):
            if p != topo.parallel:
                yield dataclasses.replace(req, topology=dataclasses.replace(topo, parallel=p))
        return
    for p in layout_choices(probe, topo.nodes):
        if p != topo.parallel:
            yield dataclasses.replace(req, topology=dataclasses.replace(topo, parallel=p))
    if topo.nodes >= 2 and topo.nodes % 2 == 0:
        # Independent replicas: two clusters of half the nodes, each its own vLLM instance.
        for p in layout_choices(probe, topo.nodes // 2):
            yield dataclasses.replace(
                req, topology=dataclasses.replace(topo, kind=TopologyKind.TENANT_PAIR, parallel=p)
            )


def _batched_tokens(req: PlanRequest, choices: Iterable[int]) -> Iterator[PlanRequest]:
    for mnbt in choices:
        if mnbt > req.serving.max_num_batched_tokens:
            yield dataclasses.replace(
                req, serving=dataclasses.replace(req.serving, max_num_batched_tokens=mnbt)
            )


def _kv_dtypes(req: PlanRequest) -> Iterator[PlanRequest]:
    stack = req.server.accelerator.software_stack
    if req.serving.kv_cache_dtype in (KvCacheDtype.AUTO, KvCacheDtype.BFLOAT16, KvCacheDtype.BF16):
        if kv_dtype_supported(stack, KvCacheDtype.FP8):
            yield dataclasses.replace(
                req, serving=dataclasses.replace(req.serving, kv_cache_dtype=KvCacheDtype.FP8)
            )


def speculative_choices(req: PlanRequest) -> Iterator[PlanRequest]:
    """Speculative decoding off and at each token count, when the request carries a draft (an MTP head
    or a draft model stated in ``performance``); nothing without one: none is invented."""
    perf = req.performance
    spec = req.serving.speculative
    if spec.on and (req.serving.decode is None or req.serving.decode.speculative is None):
        # The catalog's draft (engine/speculative.py): its token count is a serving setting the engines
        # launch (--speculative-config), so that is what a candidate changes; the draft stays on.
        for k in CATALOG_DRAFT_TOKEN_CHOICES:
            if k != perf.speculative_tokens:
                serving = dataclasses.replace(
                    req.serving, speculative=dataclasses.replace(spec, num_speculative_tokens=k)
                )
                yield with_draft(dataclasses.replace(req, serving=serving))
        return
    if spec.on:
        return  # xPyD: the decode role's own draft setting is the engineer's (serving.decode.speculative)
    has_draft = perf.speculative_tokens > 0 or perf.draft_model_gb > 0
    if not has_draft:
        return
    for k in (0, *SPECULATIVE_TOKEN_CHOICES):
        if k != perf.speculative_tokens:
            yield dataclasses.replace(req, performance=dataclasses.replace(perf, speculative_tokens=k))


# --------------------------------------------------------------------------- labels and fixes


def configuration_change(base: PlanRequest, cand: PlanRequest) -> dict[str, Any]:
    """The request fix (request path → value) that turns ``base`` into ``cand``."""
    fix: dict[str, Any] = {}
    bt, ct = base.topology, cand.topology
    if ct.kind != bt.kind:
        fix["topology.kind"] = ct.kind.value
        if ct.kind in (TopologyKind.TENANT_PAIR, TopologyKind.PRIMARY_STANDBY):
            fix["topology.pair_switches"] = ct.pair_switches
    split = ct.kind == TopologyKind.DISAGGREGATED and ct.prefill_nodes != bt.prefill_nodes
    was_p, was_d = bt.parallel, bt.decode_parallel
    if split:
        fix["topology.prefill_nodes"] = ct.prefill_nodes
        fix["topology.decode_nodes"] = ct.decode_nodes
        # A new split lays each side out as "auto" does: only a layout other than that is stated.
        probe = dataclasses.replace(base, topology=dataclasses.replace(bt, kind=TopologyKind.SINGLE))
        was_p, was_d = auto_layout(probe, ct.prefill_nodes), auto_layout(probe, ct.decode_nodes)
    # Field by field, as the page's form carries a layout (``layout.parallel_fix``).
    if ct.parallel != was_p or ct.kind != bt.kind:
        fix.update(parallel_fix("topology.parallel", ct.parallel))
    if ct.decode_parallel is not None and ct.decode_parallel != was_d:
        fix.update(parallel_fix("topology.decode_parallel", ct.decode_parallel))
        fix.update(parallel_fix("topology.parallel", ct.parallel))  # the form states both sides together
    bs, cs = base.serving, cand.serving
    if cs.max_num_batched_tokens != bs.max_num_batched_tokens:
        fix["serving.max_num_batched_tokens"] = cs.max_num_batched_tokens
    if cs.kv_cache_dtype != bs.kv_cache_dtype:
        fix["serving.kv_cache_dtype"] = str(cs.kv_cache_dtype.value)
    if cs.speculative != bs.speculative:
        # the whole setting: a token count alone is refused without its method (io/requests.py)
        fix["serving.speculative.method"] = cs.speculative.method
        fix["serving.speculative.draft"] = cs.speculative.draft
        fix["serving.speculative.num_speculative_tokens"] = cs.speculative.num_speculative_tokens
    elif cand.performance.speculative_tokens != base.performance.speculative_tokens:
        fix["performance.speculative_tokens"] = cand.performance.speculative_tokens
    return fix


def configuration_label(req: PlanRequest) -> tuple[str, str]:
    """``2 × (DP1 / TP8) independent`` / ``8P8D, P DP8 / TP16 / EP128, D …`` and its Chinese."""
    topo = req.topology
    s = req.serving
    tail_en = f", max_num_batched_tokens {s.max_num_batched_tokens}"
    tail_zh = f"，max_num_batched_tokens {s.max_num_batched_tokens}"
    kv = "FP8" if s.kv_cache_dtype in (KvCacheDtype.FP8, KvCacheDtype.FP8_E4M3) else "BF16"
    tail_en += f", {kv} KV cache"
    tail_zh += f"，{kv} KV 缓存"
    k = req.performance.speculative_tokens
    if k > 0:
        tail_en += f", {plural(k, 'speculative token')}"
        tail_zh += f"，投机 {k} 个 token"
    if topo.kind == TopologyKind.DISAGGREGATED and topo.decode_parallel is not None:
        head = (
            f"{topo.prefill_nodes}P{topo.decode_nodes}D, P {parallel_label(topo.parallel)}, "
            f"D {parallel_label(topo.decode_parallel)}"
        )
        return head + tail_en, head.replace(", ", "，") + tail_zh
    if topo.kind == TopologyKind.TENANT_PAIR:
        label = parallel_label(topo.parallel)
        return (
            f"2 independent clusters × {plural(topo.nodes // 2, 'node')}, each {label}" + tail_en,
            f"2 个独立集群 × {topo.nodes // 2} 台，每个 {label}" + tail_zh,
        )
    if topo.kind == TopologyKind.PRIMARY_STANDBY:
        label = parallel_label(topo.parallel)
        return f"each cluster {label}" + tail_en, f"每个集群 {label}" + tail_zh
    label = parallel_label(topo.parallel)
    return (
        f"one cluster of {topo.nodes} nodes, {label}" + tail_en,
        f"单集群 {topo.nodes} 台，{label}" + tail_zh,
    )


def _sign(x: float) -> str:
    return "+" if x >= 0 else "−"


def _trade(point: Candidate, chosen: Candidate, cheapest: bool) -> tuple[str, str]:
    """What a configuration trades against the chosen one (``cheapest``: the chosen one is the lowest
    cost of all tried, not the request's own kept within MIN_STEP_GAIN of it)."""
    a, b = point.design, chosen.design
    if point is chosen:
        if cheapest:
            return (
                "lowest cost per million output tokens within the targets",
                "满足目标时每百万输出 Token 成本最低",
            )
        gain = round((MIN_STEP_GAIN - 1) * 100)
        return (
            f"the request's own configuration: no other carries {gain} % more within the targets",
            f"请求自身的配置：在目标内没有其他配置能多承载 {gain}%",
        )
    dc = a.concurrency - b.concurrency
    dt_ms = (a.tpot_s - b.tpot_s) * 1000
    dcost = (b.output_tokens_per_s / a.output_tokens_per_s - 1) * 100 if a.output_tokens_per_s > 0 else 0.0
    en = (
        f"{_sign(dc)}{abs(dc)} concurrent, TPOT {_sign(dt_ms)}{abs(dt_ms):.1f} ms at the design point, "
        f"cost per million output tokens {_sign(dcost)}{abs(dcost):.1f} %"
    )
    zh = (
        f"并发{_sign(dc)}{abs(dc)}，设计点 TPOT {_sign(dt_ms)}{abs(dt_ms):.1f} ms，"
        f"每百万输出 Token 成本{_sign(dcost)}{abs(dcost):.1f}%"
    )
    if not point.meets:
        en += "; misses the targets"
        zh += "；未达时延目标"
    return en, zh


# --------------------------------------------------------------------------- the search


def _key(req: PlanRequest) -> str:
    return repr((req.topology, req.serving, req.performance, req.workload))


def _better(c: Candidate, best: Candidate) -> bool:
    """Meeting the targets first, then carrying the stated load within them (a configuration that
    queues the customer's own load is no recommendation, however cheap its tokens), then throughput."""
    if c.meets != best.meets:
        return c.meets
    if c.carries != best.carries:
        return c.carries
    return c.design.output_tokens_per_s > best.design.output_tokens_per_s * MIN_STEP_GAIN


def run_search(
    req: PlanRequest,
    design_of: Callable[[PlanRequest], DesignPoint | None],
    splits: Callable[[PlanRequest], Iterable[PlanRequest]],
    batched_tokens_choices: Iterable[int],
    current: DesignPoint | None = None,
) -> tuple[Candidate | None, Candidate | None, list[Candidate], int]:
    """Coordinate ascent over the dimensions (module doc): (chosen, the request's own, every candidate
    that runs, the number of configurations tried).
    ``design_of`` plans one candidate (None: it does not run), ``splits`` the xPyD splits of one."""
    seen: dict[str, Candidate | None] = {}

    def evaluate(cand: PlanRequest) -> Candidate | None:
        k = _key(cand)
        if k not in seen:
            dp = current if (cand is req and current is not None) else design_of(cand)
            ok = (
                dp is not None
                and dp.concurrency > 0
                and dp.limited_by != "unreachable"
                and not dp.best_effort
            )
            seen[k] = Candidate(cand, dp, ok) if dp is not None and dp.concurrency > 0 else None
        return seen[k]

    own = evaluate(req)
    best = own
    steps: tuple[Callable[[PlanRequest], Iterable[PlanRequest]], ...] = (
        _layouts,
        lambda r: (s for s in splits(r) if s is not r),
        lambda r: _batched_tokens(r, batched_tokens_choices),
        _kv_dtypes,
        speculative_choices,
    )
    for step in steps:
        base = best.request if best is not None else req
        for cand in step(base):
            c = evaluate(cand)
            if c is not None and (best is None or _better(c, best)):
                best = c
    everyone = [c for c in seen.values() if c is not None]
    meeting = [c for c in everyone if c.meets]
    if not meeting:
        return None, own, everyone, len(seen)
    # The lowest cost per million output tokens of every configuration tried within the targets; the
    # request's own when that is within MIN_STEP_GAIN of it (no change offered for less).
    pool = [c for c in meeting if c.carries] or meeting
    cheapest = max(pool, key=lambda c: c.design.output_tokens_per_s)
    if own is not None and own.meets and not _better(cheapest, own):
        return own, own, everyone, len(seen)
    return cheapest, own, everyone, len(seen)


def capacity_tpot_front(cands: list[Candidate]) -> list[Candidate]:
    """The candidates meeting the targets that no other beats on both design concurrency and TPOT."""
    ok = [c for c in cands if c.meets]
    front: list[Candidate] = []
    for c in ok:
        dominated = any(
            (o.design.concurrency >= c.design.concurrency and o.design.tpot_s <= c.design.tpot_s)
            and (o.design.concurrency > c.design.concurrency or o.design.tpot_s < c.design.tpot_s)
            for o in ok
        )
        same = any(
            (o.design.concurrency, o.design.tpot_s) == (c.design.concurrency, c.design.tpot_s) for o in front
        )
        if not dominated and not same:
            front.append(c)
    front.sort(key=lambda c: (-c.design.concurrency, c.design.tpot_s))
    return front


def front_points(
    req: PlanRequest, result: PlanResult, chosen: Candidate, cands: list[Candidate]
) -> tuple[FrontPoint, ...]:
    """The chosen configuration and up to :data:`FRONT_SIZE` runners-up of the front, as shown."""
    from .economics import cost_per_m_output_at

    front = capacity_tpot_front(cands)
    cheapest = all(
        c.design.output_tokens_per_s <= chosen.design.output_tokens_per_s for c in cands if c.meets
    )
    at = (chosen.design.concurrency, chosen.design.tpot_s)
    ordered = [chosen] + [c for c in front if (c.design.concurrency, c.design.tpot_s) != at][:FRONT_SIZE]
    out = []
    for c in ordered:
        label_en, label_zh = configuration_label(c.request)
        trade_en, trade_zh = _trade(c, chosen, cheapest)
        d = c.design
        out.append(
            FrontPoint(
                label_en=label_en,
                label_zh=label_zh,
                concurrency=d.concurrency,
                output_tokens_per_s=round(d.output_tokens_per_s, 3),
                tpot_ms=round(d.tpot_s * 1000, 3),
                best_tpot_ms=round(d.best_tpot_s * 1000, 3),
                ttft_s=round(d.ttft_s, 3),
                cost_per_m_output=cost_per_m_output_at(req, result.tco, d.output_tokens_per_s),
                currency=req.commercial.currency,
                trade_en=trade_en,
                trade_zh=trade_zh,
                change=configuration_change(req, c.request),
                chosen=c is chosen,
            )
        )
    return tuple(out)


_cache: OrderedDict[str, tuple[Any, SearchOutcome]] = OrderedDict()  # key → (commercial terms, outcome)
_cache_lock = threading.Lock()


def canonical_key(req: PlanRequest, catalog_version: str = "") -> str:
    """The cache key of a request: the resolved request (every catalog entry inline, so two requests
    that plan alike key alike) and the catalog version, hashed."""
    try:
        # The resolved request's own bytes (every catalog entry inline): 2 ms where its JSON takes 10.
        body = pickle.dumps(req, protocol=5)
    except (pickle.PicklingError, TypeError, AttributeError):
        body = json.dumps(to_jsonable(req), sort_keys=True, default=str).encode()
    return hashlib.sha256(catalog_version.encode() + b"\n" + body).hexdigest()


def search_serving(
    req: PlanRequest,
    result: PlanResult,
    search: Callable[[PlanRequest, PlanResult], SearchOutcome],
    *,
    catalog_version: str = "",
) -> SearchOutcome:
    """``search(req, result)``, cached per (canonical request, catalog version): the hook a web layer
    keys its own caches on.  ``result`` is ``plan(req)``, a function of the request.

    The key leaves out the request's commercial terms (prices, utilisation, currency, horizon): the
    search plans layouts, memory and performance, which never read them, so a request that changes only
    its terms (a page update of the utilisation, a saved quote's discount) reuses the search and has the
    front re-priced for its own terms (:meth:`SearchOutcome.priced_for`); tests/engine/test_serving_search.py
    holds the cached answer to a fresh search's for other terms."""
    key = canonical_key(dataclasses.replace(req, commercial=_NO_TERMS), catalog_version)
    with _cache_lock:
        hit = _cache.get(key)
        if hit is not None:
            _cache.move_to_end(key)
    if hit is not None:
        terms, outcome = hit
        return outcome if terms == req.commercial else outcome.priced_for(req, result)
    outcome = search(req, result)
    with _cache_lock:
        _cache[key] = (req.commercial, outcome)
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return outcome


def clear_cache() -> None:
    """Forget every cached search (tests, and a catalog admin's edit when no version is given)."""
    with _cache_lock:
        _cache.clear()
