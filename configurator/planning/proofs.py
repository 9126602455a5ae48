"""Fix proofs: the plan of a request with a fix applied, kept so it is planned once.

Proofs are plans, and a plan of a request is fixed for a catalog version and a day: the last few
hundred are kept (per process) so a fix offered on every keystroke is planned once, and the advice
pass (``plans.plan_from_json``, through ``io/fixes.py``) and the page's "Apply" buttons
(``web.fixes.proven_fixes``) share one plan of each fixed request.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import threading
from collections import OrderedDict
from typing import Any

from django.utils import timezone

from ..engine import types as et
from ..engine.plan import plan
from ..io.requests import RequestError, resolve
from ..port import cache as catalog_cache
from ..port.catalog import DjangoCatalog

# (codes of warnings and errors, codes of errors) of a fixed request's plan.
Proof = tuple[frozenset, frozenset]

_PROOFS: OrderedDict[tuple, Proof] = OrderedDict()
_PROOFS_MAX = 512
_proofs_lock = threading.Lock()


def _forget_proofs() -> None:
    with _proofs_lock:
        _PROOFS.clear()


catalog_cache.on_clear(_forget_proofs)


def key(request: et.PlanRequest, version: Any, day: dt.date) -> tuple:
    """A proof's key: the resolved request itself (the SHA-256 of its ``repr``, which names every field
    of every part; about 30 kB, so not kept whole), so two request JSONs that resolve alike (a rack
    given by slug with its cap, or inline in full) share one plan; a ``repr`` that differs for equal
    values (a set's order) only costs a plan."""
    return (version, day, hashlib.sha256(repr(request).encode()).digest())


def remember(proof_key: tuple, after: et.PlanResult) -> Proof:
    """Keep the proof the plan ``after`` gives (the advice pass calls it for every fix it proves)."""
    value = (
        frozenset(c.code for c in after.checks if c.severity != et.Severity.OK),
        frozenset(c.code for c in after.checks if c.severity == et.Severity.ERROR),
    )
    with _proofs_lock:
        _PROOFS[proof_key] = value
        _PROOFS.move_to_end(proof_key)
        while len(_PROOFS) > _PROOFS_MAX:
            _PROOFS.popitem(last=False)
    return value


def proof(candidate: dict, catalog: DjangoCatalog) -> Proof | None:
    """(codes of warnings and errors, codes of errors) of the plan of ``candidate``: the plan the
    advice pass already made of this very request when it proved the same fix (``plan_from_json``),
    else planned here.  None when ``candidate`` does not resolve."""
    day = timezone.localdate()
    try:
        resolved = resolve(candidate, catalog, today=day)
    except RequestError:
        return None
    proof_key = key(resolved, catalog.version, day)
    with _proofs_lock:
        if proof_key in _PROOFS:
            _PROOFS.move_to_end(proof_key)
            return _PROOFS[proof_key]
    return remember(proof_key, plan(resolved))
