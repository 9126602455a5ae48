"""Plans and searches computed once per canonical request and catalog version.

A plan with its proven advice (``planning.plans.plan_from_json``) and an auto-planner search
(``web/planner/services.run_search``) are pure functions of what was asked, the catalog version
(``port.cache.current_version``: every catalog save bumps it) and the day (price lists and
lease terms are dated).  Those three make the key, so an entry is never older than the catalog and
nothing needs invalidating; a page update, its "why?" fragment, a language switch, the catalog
alternative fragment and the quote saved from the same form plan once.

Two tiers:

* an in-process LRU (``LOCAL_MAX`` entries, the objects themselves, shared read-only: plans and
  their parts are frozen dataclasses) — the only tier in the embedded mode;
* the Django cache ``plans`` (``config/settings.py``: Redis in production), shared by every web
  worker and the Celery worker, holding pickles for ``TTL_S`` of what took at least ``SHARE_MIN_S`` to
  build (a quick plan costs less to make again than to pickle and fetch); a miss or an unreachable
  Redis only costs the plan.

The key is a SHA-256 of the canonical JSON of the request (keys sorted) and of anything the caller
adds (the resolved request's ``repr``: two forms that resolve alike, or one that resolves anew after a
catalog change, never share a wrong entry).
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, TypeVar

from django.conf import settings

from . import cache as catalog_cache

log = logging.getLogger(__name__)

T = TypeVar("T")

LOCAL_MAX = 256
TTL_S = 3600
# A value is shared with the other processes only when building it took at least this much of the
# thread's CPU: a plan of the 16-node reference pickles to about 200 kB in 3 ms and unpickles in 3 ms, so
# sharing a plain plan (5–8 ms to build) cost every update more than the other workers ever saved
# (bench/load.py: every update a new form); an advised plan (its proofs and the serving search, 50 ms
# and more) and an auto-planner search are shared.
SHARE_MIN_S = 0.02
ALIAS = "plans"

_lock = threading.Lock()
_local: OrderedDict[str, Any] = OrderedDict()
_stats = {"hits": 0, "shared_hits": 0, "misses": 0}
RETRY_AFTER_S = 30.0  # an unreachable shared cache is left alone this long: no request waits on its timeout
_down_until = [0.0]


def key(kind: str, version: Any, day: Any, request: Any, *extra: str) -> str | None:
    """The cache key of ``request`` (JSON-able) of ``kind`` at catalog ``version`` on ``day`` with the
    engine's fitted factors in use; None (nothing cached) while they are overridden."""
    stamp = engine_stamp()
    if stamp is None:
        return None
    extra = (stamp, *extra)
    digest = hashlib.sha256()
    digest.update(f"{kind}\x00{version}\x00{day}\x00".encode())
    digest.update(json.dumps(request, sort_keys=True, default=str, ensure_ascii=False).encode())
    for part in extra:
        digest.update(b"\x00")
        digest.update(part.encode())
    return f"{kind}:{version}:{digest.hexdigest()}"


def engine_stamp() -> str | None:
    """What the engine reads besides the request and the catalog: the serving model's fitted factors
    (``serving_model.calibration``, a file ``manage.py calibrate`` rewrites, reloaded when its mtime
    changes).  None while a caller estimates with factors of its own (the fit's cross-validation):
    those plans are not cached."""
    from ..engine import serving_model

    if serving_model._OVERRIDE:
        return None
    path = serving_model.calibration_path()
    try:
        mtime = path.stat().st_mtime_ns
    except OSError:
        mtime = None
    return f"{path}@{mtime}"


def _shared():
    """The Django cache shared by the processes, or None (the embedded mode: the LRU alone; or the
    shared cache failed less than ``RETRY_AFTER_S`` ago)."""
    if ALIAS not in getattr(settings, "CACHES", {}) or time.monotonic() < _down_until[0]:
        return None
    from django.core.cache import caches

    return caches[ALIAS]


def get_or_build(cache_key: str | None, build: Callable[[], T]) -> T:
    """The value under ``cache_key``, built (and kept in both tiers) when neither holds it; built and
    not kept when the key is None."""
    if cache_key is None:
        return build()
    with _lock:
        if cache_key in _local:
            _local.move_to_end(cache_key)
            _stats["hits"] += 1
            return _local[cache_key]
    shared = _shared()
    if shared is not None:
        try:
            value = shared.get(cache_key)
        except Exception:  # noqa: BLE001 - Redis down: plan as if nothing was cached
            log.warning("plan cache: shared cache unreachable", exc_info=True)
            _down_until[0] = time.monotonic() + RETRY_AFTER_S
            value = None
            shared = None
        if value is not None:
            _stats["shared_hits"] += 1
            _keep(cache_key, value)
            return value
    _stats["misses"] += 1
    started = time.thread_time()
    value = build()
    built_s = time.thread_time() - started
    _keep(cache_key, value)
    if shared is not None and built_s >= SHARE_MIN_S:
        try:
            shared.set(cache_key, value, TTL_S)
        except Exception:  # noqa: BLE001 - a plan that is not shared is only planned again elsewhere
            log.warning("plan cache: could not share a plan", exc_info=True)
            _down_until[0] = time.monotonic() + RETRY_AFTER_S
    return value


def _keep(cache_key: str, value: Any) -> None:
    with _lock:
        _local[cache_key] = value
        _local.move_to_end(cache_key)
        while len(_local) > LOCAL_MAX:
            _local.popitem(last=False)


def clear() -> None:
    """Forget this process's entries (the shared tier's keys carry the catalog version)."""
    with _lock:
        _local.clear()


def stats() -> dict[str, int]:
    return dict(_stats, entries=len(_local))


catalog_cache.on_clear(clear)
