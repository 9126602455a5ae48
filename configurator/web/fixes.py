"""The fixes the page offers with an "Apply" button: a check's fix applied to the request as the
form can carry it, and kept only when the plan of the fixed request proves it (``planning.proofs``)."""

from __future__ import annotations

import copy
import json

from ..engine import types as et
from ..io.requests import to_jsonable
from ..planning import proofs
from ..port.catalog import DjangoCatalog
from .forms import ConfiguratorForm

# Sections of a request the configurator form can set (a fix elsewhere, such as
# ``rack.max_kw``, stays advice: the page has no field to carry it).
_FIX_SECTIONS = ("serving", "workload", "commercial", "launch")


def fixed_request(request_json: dict, fix: dict, plan_request: et.PlanRequest | None = None) -> dict | None:
    """``request_json`` with a check's suggested ``fix`` (request path → value)
    applied, on a copy; ``None`` when a path is not one the form can carry.

    A fix to one parallel size of an automatic layout turns the layout manual,
    starting from the layout the engine proposed (``plan_request``)."""
    if not isinstance(request_json, dict) or not isinstance(fix, dict) or not fix:
        return None
    data = copy.deepcopy(request_json)
    for path, value in fix.items():
        if not isinstance(path, str) or isinstance(value, (dict, list)) or value is None:
            return None
        if ConfiguratorForm.field_for_path(path) is None:
            return None
        parts = path.split(".")
        if parts[0] == "topology" and len(parts) == 3 and parts[1] in ("parallel", "decode_parallel"):
            topology = data.setdefault("topology", {})
            parallel = topology.get(parts[1])
            if not isinstance(parallel, dict):
                resolved = None
                if plan_request is not None:
                    resolved = getattr(plan_request.topology, parts[1], None)
                if resolved is None:
                    return None
                keys = ("tp", "dp", "pp", "dp_local", "expert_parallel")
                parallel = {k: v for k, v in to_jsonable(resolved).items() if k in keys}
                topology[parts[1]] = parallel
            parallel[parts[2]] = value
        elif parts[0] == "topology" and len(parts) == 2:
            data.setdefault("topology", {})[parts[1]] = value
        elif path == "rack.max_kw":
            rack = data.get("rack")
            if not isinstance(rack, dict):
                if plan_request is None:
                    return None
                rack = to_jsonable(plan_request.rack)
            data["rack"] = {**rack, "max_kw": float(value)}
        elif parts[0] == "serving" and len(parts) == 3 and parts[1] in ("speculative", "prefill", "decode"):
            serving = data.get("serving")
            if not isinstance(serving, dict):
                serving = data["serving"] = {}
            block = serving.get(parts[1])
            if not isinstance(block, dict):
                block = serving[parts[1]] = {}
            block[parts[2]] = value
        elif parts[0] in _FIX_SECTIONS and len(parts) == 2:
            section = data.get(parts[0])
            if not isinstance(section, dict):
                section = data[parts[0]] = {}
            section[parts[1]] = value
        else:
            return None
    return data


def proven_fixes(request_json: dict, plan_request: et.PlanRequest, result: et.PlanResult) -> dict[int, dict]:
    """Fixes worth offering, by the index of their check in ``result.checks``:
    each applied to a copy of the request and re-planned; kept
    only when its finding is gone and no new error appeared.  The value is the
    re-planned request, which is what applying the fix loads."""
    errors_before = {c.code for c in result.checks if c.severity == et.Severity.ERROR}
    catalog = DjangoCatalog()
    tried: dict[str, tuple[dict, proofs.Proof] | None] = {}
    out: dict[int, dict] = {}
    for index, check in enumerate(result.checks):
        if not check.fix:  # the engine offers only proven fixes (engine/advice.py)
            continue
        key = json.dumps(dict(check.fix), sort_keys=True, default=str)
        if key not in tried:
            tried[key] = None
            # Only paths the form carries are applied (fixed_request), and the
            # form gives back the same request (tests/configurator/test_fixes.py
            # checks it for every offered fix), so the page plans exactly this.
            candidate = fixed_request(request_json, dict(check.fix), plan_request)
            if candidate is not None and candidate != request_json:
                proof = proofs.proof(candidate, catalog)
                tried[key] = (candidate, proof) if proof is not None else None
        entry = tried[key]
        if entry is None:
            continue
        candidate, (codes_after, errors_after) = entry
        if check.code in codes_after or errors_after - errors_before:
            continue
        out[index] = candidate
    return out
