"""Per-process cache of catalog entries resolved into engine specs.

The key includes ``CatalogStamp.version``, which every catalog save or delete
increments (signals wired in ``ConfiguratorConfig.ready``), so a cached spec
is never older than the catalog.  One indexed query per request reads the
version; the rest of resolution is served from memory.

Within one web request the version is read once: :class:`VersionPerRequest` (a middleware) opens a
request scope, the first :func:`current_version` of the request reads the stamp and the later ones
(the form's choices, the catalog port, the price basis, the presets: four a configurator update)
take the same number.  A catalog save in the same request (the admin) forgets it, so what follows
the save reads the new version.  Outside a request (Celery, commands, tests calling the code
directly) every call reads the stamp.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

from django.db.models import F

_lock = threading.Lock()
_state: dict[str, Any] = {"version": None, "entries": {}}
# The version read in the current request (empty until read); None outside a request scope.
_request_version: ContextVar[list[int] | None] = ContextVar("catalog_version_of_request", default=None)


def bump_catalog_version(sender=None, **kwargs) -> None:
    """Signal receiver: a catalog row (or a catalog many-to-many) changed.

    This process forgets its cache at once; other processes see the new
    version once the transaction commits.
    """
    if sender is None or sender._meta.app_label != "catalog":
        return
    from ..models import CatalogStamp

    clear()
    memo = _request_version.get()
    if memo is not None:
        memo.clear()  # what follows the save in this request reads the new version
    if not CatalogStamp.objects.filter(pk=1).update(version=F("version") + 1):
        CatalogStamp.objects.get_or_create(pk=1, defaults={"version": 1})


def current_version() -> int:
    memo = _request_version.get()
    if memo:
        return memo[0]
    from ..models import CatalogStamp

    row = CatalogStamp.objects.filter(pk=1).values_list("version", flat=True).first()
    version = row or 0
    if memo is not None:
        memo.append(version)
    return version


class VersionPerRequest:
    """Middleware: the catalog version is read once per request (see the module's docstring)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        token = _request_version.set([])
        try:
            return self.get_response(request)
        finally:
            _request_version.reset(token)


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
