"""Per-process cache of catalog entries resolved into engine specs.

The key includes ``CatalogStamp.version``, which every catalog save or delete
increments (signals wired in ``ConfiguratorConfig.ready``), so a cached spec
is never older than the catalog.  One indexed query per request reads the
version; the rest of resolution is served from memory.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from django.db.models import F

_lock = threading.Lock()
_state: dict[str, Any] = {"version": None, "entries": {}}


def bump_catalog_version(sender=None, **kwargs) -> None:
    """Signal receiver: a catalog row (or a catalog many-to-many) changed.

    This process forgets its cache at once; other processes see the new
    version once the transaction commits.
    """
    if sender is None or sender._meta.app_label != "catalog":
        return
    from .models import CatalogStamp

    clear()
    if not CatalogStamp.objects.filter(pk=1).update(version=F("version") + 1):
        CatalogStamp.objects.get_or_create(pk=1, defaults={"version": 1})


def current_version() -> int:
    from .models import CatalogStamp

    row = CatalogStamp.objects.filter(pk=1).values_list("version", flat=True).first()
    return row or 0


_on_clear: list[Callable[[], None]] = []


def on_clear(callback: Callable[[], None]) -> None:
    """Also run ``callback`` whenever the cache is cleared (caches built on catalog data)."""
    _on_clear.append(callback)


def clear() -> None:
    with _lock:
        _state["version"] = None
        _state["entries"] = {}
    for callback in _on_clear:
        callback()


def cached(version: int, key: tuple, build: Callable[[], Any]) -> Any:
    """The value for ``key`` at catalog ``version``, built once per process."""
    with _lock:
        if _state["version"] != version:
            _state["version"] = version
            _state["entries"] = {}
        if key in _state["entries"]:
            return _state["entries"][key]
    value = build()
    with _lock:
        if _state["version"] == version:
            _state["entries"][key] = value
    return value
