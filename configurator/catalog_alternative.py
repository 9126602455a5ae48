"""The smallest deployment in the catalog that meets latency targets the chosen hardware cannot reach.

When one request already misses a target on the request's hardware
(``performance.design_point_unreachable``, engine/performance/design.py), the plan opens with one
statement: what this hardware achieves (the best latencies, and the load it carries at the
best-effort design point) and the smallest deployment in the catalog that meets the targets — or
that none does.  The engine is pure and knows one server; the catalog search is the auto-planner's
(configurator/planner/), run here with the request's workload and targets:

* the planner judges the scenario's P50 targets (``workload.ttft_target_s`` / ``tpot_target_ms``);
  a request stating P90 targets only (or none, the design point's defaults) is searched with the
  TPOT P90 bound ÷ 1.08 as the P50 bound (the step model's P90 TPOT is 1.08 × the mean,
  docs/performance.md §3) and the TTFT P90 bound as the P50 bound (looser), and every candidate is
  then re-planned with the request's own targets: it is named only when its design point meets them
  (not ``unreachable``) and carries the stated load;
* "smallest" is the fewest nodes, then the lowest cost per million tokens.

Searches are cached per workload, targets, day and catalog version (``port.cache``: every catalog
save bumps it; this process forgets its answers with the spec cache), so the planner's second of work
is spent once per question, not on every page update of a preset.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from .engine import types as et
from .engine.performance.design import targets_of

CODE = "performance.design_point_unreachable"
_registered: list[bool] = []  # the cache is cleared with port.cache's (once registered)
# docs/performance.md §3: the step model's TPOT P90 is 1.08 × its mean.
TPOT_P90_OVER_MEAN = 1.08
MAX_NODES = 32
_TARGET_KEYS = ("ttft_target_s", "tpot_target_ms", "ttft_p90_target_s", "tpot_p90_target_ms")


@dataclasses.dataclass(frozen=True)
class Alternative:
    """The catalog's answer: the smallest deployment meeting the targets, or None found."""

    server: str  # slug ('' when none)
    server_name: str
    nodes: int
    shape: str  # e.g. "single 2", "8P8D"
    design_concurrency: int
    searched_max_nodes: int


def _query(req: et.PlanRequest) -> dict[str, Any]:
    w = req.workload
    targets, _ = targets_of(req)
    workload: dict[str, Any] = {
        "input_tokens": w.input_tokens,
        "output_tokens": w.output_tokens,
        "context": req.serving.max_model_len,
        "concurrency": max(1, w.concurrency),
        "needs_vision": w.needs_vision,
    }
    ttft = targets.get("ttft_p50_s", targets.get("ttft_p90_s"))
    tpot = targets.get("tpot_p50_ms")
    if tpot is None and "tpot_p90_ms" in targets:
        tpot = targets["tpot_p90_ms"] / TPOT_P90_OVER_MEAN
    if ttft is not None:
        workload["ttft_target_s"] = round(float(ttft), 3)
    if tpot is not None:
        workload["tpot_target_ms"] = round(float(tpot), 2)
    return {
        "model": req.model.slug,
        "workload": workload,
        "constraints": {"currency": req.commercial.currency},
        "options": {"max_nodes": MAX_NODES, "limit": 50},
    }


def _key(req: et.PlanRequest) -> tuple:
    return (
        req.model.slug,
        req.workload.input_tokens,
        req.workload.output_tokens,
        req.serving.max_model_len,
        req.workload.concurrency,
        req.workload.needs_vision,
        tuple(sorted(targets_of(req)[0].items())),
        req.commercial.currency,
    )


def find(
    req: et.PlanRequest,
    search: Callable[[dict], Any],
    replan: Callable[[dict], et.PlanResult | None],
    stamp: tuple = (),
) -> Alternative | None:
    """The smallest catalog deployment meeting ``req``'s targets (the defaults when it states none) at
    its load (module doc).  ``search`` runs the planner on a query, ``replan`` plans a candidate's
    request JSON; ``stamp`` (catalog version, day) joins the cache key."""
    return _cached((*_key(req), *stamp), req, search, replan)


@lru_cache(maxsize=256)
def _cached_result(key: tuple, holder: _Holder) -> Alternative | None:
    return holder.compute()


class _Holder:
    """Carries the un-hashable arguments past ``lru_cache`` (hashed by the key only)."""

    def __init__(self, key: tuple, compute: Callable[[], Alternative | None]):
        self.key, self.compute = key, compute

    def __hash__(self) -> int:
        return hash(self.key)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Holder) and other.key == self.key


def _cached(key, req, search, replan) -> Alternative | None:
    answer = _cached_result(key, _Holder(key, lambda: _compute(req, search, replan)))
    _known[key] = answer
    if len(_known) > 256:
        _known.pop(next(iter(_known)))
    return answer


# The answers already searched (the same keys as ``_cached_result``'s): the page reads them without
# waiting for a search (:func:`for_request` with ``wait=False``).
_known: dict[tuple, Alternative | None] = {}
PENDING = object()


def _forget() -> None:
    _cached_result.cache_clear()
    _known.clear()


def _compute(req: et.PlanRequest, search, replan) -> Alternative | None:
    try:
        result = search(_query(req))
    except Exception:  # noqa: BLE001 - a planner refusal (RequestError) leaves the statement without it
        return None
    targets = {
        k: v for k, v in dataclasses.asdict(req.workload).items() if k in _TARGET_KEYS and v is not None
    }
    ranked = sorted(result.candidates, key=lambda c: (c.shape.nodes, c.cost_per_m, c.id))
    for cand in ranked:
        data = dict(cand.request_json)
        wl = {k: v for k, v in dict(data.get("workload") or {}).items() if k not in _TARGET_KEYS}
        data["workload"] = {**wl, **{k: float(v) for k, v in targets.items()}}
        planned = replan(data)
        dp = planned.performance.design_point if planned is not None and planned.performance else None
        if dp is None or dp.limited_by == "unreachable" or dp.concurrency < req.workload.concurrency:
            continue
        return Alternative(
            cand.server.slug,
            cand.server.name,
            cand.shape.nodes,
            _shape(cand),
            dp.concurrency,
            MAX_NODES,
        )
    return Alternative("", "", 0, "", 0, MAX_NODES)


def _shape(cand: Any) -> str:
    """``8P8D`` for an xPyD split, else '' (the node count says the rest)."""
    groups = cand.shape.group_nodes
    if cand.shape.kind == et.TopologyKind.DISAGGREGATED and len(groups) == 2:
        return f"{groups[0]}P{groups[1]}D"
    return ""


def sentence(alt: Alternative) -> tuple[str, str]:
    """The catalog's answer as the statement's last sentence (en, zh), each with a leading space
    for English."""
    if alt.server:
        en = (
            f" The smallest deployment in the catalog that meets the targets at this load: "
            f"{alt.nodes} × {alt.server_name}{' ' + alt.shape if alt.shape else ''} "
            f"(design capacity {alt.design_concurrency:,} concurrent requests)."
        )
        zh = (
            f"目录中满足该目标与负载的最小部署：{alt.nodes} 台 {alt.server_name}{' ' + alt.shape if alt.shape else ''}"
            f"（设计容量 {alt.design_concurrency:,} 路并发）。"
        )
    else:
        en = (
            f" No deployment in the catalog (up to {alt.searched_max_nodes} nodes) meets these targets at this "
            "load: the relaxed target above is what this hardware meets."
        )
        zh = f"目录中（最多 {alt.searched_max_nodes} 台）没有满足该目标与负载的部署：上述放宽后的目标即本硬件可达到的。"
    return en, zh


def with_alternative(result: et.PlanResult, alt: Alternative | None) -> et.PlanResult:
    """``result`` with the unreachable-target statement completed by the catalog's answer."""
    if alt is None:
        return result
    en, zh = sentence(alt)

    def complete(c: et.Check) -> et.Check:
        if c.code != CODE:
            return c
        figures = {
            **dict(c.figures),
            "catalog_alternative": {
                "server": alt.server or None,
                "nodes": alt.nodes or None,
                "shape": alt.shape or None,
                "design_concurrency": alt.design_concurrency or None,
                "searched_max_nodes": alt.searched_max_nodes,
            },
        }
        return dataclasses.replace(
            c,
            message_en=c.message_en + en,
            message_zh=c.message_zh + zh,
            figures=figures,
        )

    checks = tuple(complete(c) for c in result.checks)
    perf = result.performance
    if perf is not None:
        perf = dataclasses.replace(perf, checks=tuple(complete(c) for c in perf.checks))
    return dataclasses.replace(result, checks=checks, performance=perf)


def needs_search(result: et.PlanResult) -> bool:
    """Whether ``result`` opens with a target out of reach (the statement the catalog's answer completes)."""
    dp = result.performance.design_point if result.performance is not None else None
    return dp is not None and dp.limited_by == "unreachable"


def answer(
    req: et.PlanRequest, today: dt.date | None, version: int | None = None
) -> Alternative | None | object:
    """The catalog's answer for ``req`` if already searched (this process, this catalog version and
    day), else :data:`PENDING`: the page never waits for a search (configurator/views.py loads it after
    the results)."""
    from .port import cache as catalog_cache

    if not _registered:
        catalog_cache.on_clear(_forget)
        _registered.append(True)
    stamp = (_version(version), (today or dt.date.today()).isoformat())
    return _known.get((*_key(req), *stamp), PENDING)


def for_request(
    req: et.PlanRequest,
    result: et.PlanResult,
    today: dt.date | None,
    resolve: Callable[[dict], et.PlanRequest],
    *,
    wait: bool = True,
    version: int | None = None,
) -> et.PlanResult:
    """The Django path: the planner over the database catalog (``planner_services``).  ``wait=False``:
    only an answer already searched completes the statement (:func:`answer`); the search is left to
    the caller's own request (the page's fragment)."""
    if not needs_search(result):
        return result
    if not wait:
        known = answer(req, today, version)
        return result if known is PENDING else with_alternative(result, known)  # type: ignore[arg-type]
    return with_alternative(result, search_for(req, today, resolve, version))


def _version(version: int | None) -> int:
    """The catalog version a caller already read (one query per request), else read now."""
    from .port import cache as catalog_cache

    return catalog_cache.current_version() if version is None else version


def search_for(
    req: et.PlanRequest,
    today: dt.date | None,
    resolve: Callable[[dict], et.PlanRequest],
    version: int | None = None,
) -> Alternative | None:
    """The catalog's answer for ``req`` (searched once per workload, catalog version and day)."""
    from . import planner
    from .engine.plan import plan
    from .port import cache as catalog_cache
    from .port.catalog import DjangoPlannerCatalog

    if not _registered:
        catalog_cache.on_clear(_forget)
        _registered.append(True)

    def search(query: dict) -> Any:
        catalog = DjangoPlannerCatalog(today)
        return planner.search(planner.parse_query(query, catalog), catalog)

    def replan(data: dict) -> et.PlanResult | None:
        try:
            return plan(resolve(data))
        except Exception:  # noqa: BLE001 - a candidate that no longer resolves is skipped
            return None

    stamp = (_version(version), (today or dt.date.today()).isoformat())
    return find(req, search, replan, stamp)
