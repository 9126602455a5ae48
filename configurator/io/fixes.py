"""A check's fix applied to a request as an API client applies it, and the advice pass that proves it.

A fix is ``{request path: value}`` (``"serving.max_num_seqs": 29``, ``"rack.max_kw": 25``).
:func:`apply_fix` sets each dotted path in a copy of the request JSON, creating the objects the
request does not name (a fix on ``rack.max_kw`` applies to a request naming no rack: the request
parser fills the rest of a rack object from the default or the named rack), so the engine proves
exactly the request a client sends back.  :func:`advised` runs the engine's advice pass
(``engine/advice.py``) with that replanning; the API, the page, ``manage.py plan`` and quote
revisions all plan through it (``configurator/planning/plans.py``, ``configurator/reference.py``).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any

from ..engine import types as et
from ..engine.advice import advise
from ..engine.plan import plan
from ..engine.serving_advice import recommended_serving_check
from .requests import RequestError

# Request sections a catalog slug may stand for: a fix inside one turns the slug into an object.
_SLUG_SECTIONS = frozenset({"rack", "site"})
# Layouts a request may give as "auto": a fix to one of their fields starts from the resolved layout.
_LAYOUT_FIELDS = frozenset({"parallel", "decode_parallel"})


def apply_fix(
    request_json: Any, fix: Mapping[str, Any], resolved: et.PlanRequest | None = None
) -> dict | None:
    """``request_json`` with ``fix`` applied, on a copy; None when a path cannot be set.  A fix to one
    field of an ``"auto"`` layout starts from the layout ``resolved`` (the request's resolution) has."""
    if not isinstance(request_json, dict) or not isinstance(fix, Mapping) or not fix:
        return None
    data = copy.deepcopy(request_json)
    for path, value in fix.items():
        if not isinstance(path, str) or not path:
            return None
        parts = path.split(".")
        node = data
        for part in parts[:-1]:
            child = node.get(part)
            if child is None:
                child = node[part] = {}
            elif isinstance(child, str) and part in _SLUG_SECTIONS and node is data:
                child = node[part] = {"slug": child}
            elif (
                isinstance(child, str)
                and part in _LAYOUT_FIELDS
                and node is data.get("topology")
                and resolved is not None
                and getattr(resolved.topology, part, None) is not None
            ):
                p = getattr(resolved.topology, part)
                child = node[part] = {
                    "tp": p.tp,
                    "dp": p.dp,
                    "pp": p.pp,
                    "dp_local": p.dp_local,
                    "expert_parallel": p.expert_parallel,
                }
            elif not isinstance(child, dict):
                return None
            node = child
        node[parts[-1]] = copy.deepcopy(value)
    return data


def advised(
    request_json: Any,
    request: et.PlanRequest,
    result: et.PlanResult,
    resolve_fn: Callable[[Any], et.PlanRequest],
    proved: Callable[[et.PlanRequest, et.PlanResult], object] | None = None,
) -> et.PlanResult:
    """``result`` with its fixes proven by re-planning ``request_json`` with each (engine/advice.py),
    and the recommended serving settings offered when they beat the request's.

    ``proved``: told of each resolved request re-planned and its plan, so a caller that needs the plan
    of the same request again (the page's "Apply" buttons, ``web.fixes.proven_fixes``) does not plan it
    twice."""

    def replan(fix: Mapping[str, Any]) -> et.PlanResult | None:
        candidate = apply_fix(request_json, fix, request)
        if candidate is None:
            return None
        try:
            resolved = resolve_fn(candidate)
        except RequestError:
            return None
        after = plan(resolved)
        if proved is not None:
            proved(resolved, after)
        return after

    extra = recommended_serving_check(request, result)
    return advise(result, replan, extra)
