"""Resolve a request against the catalog and plan it, with its proven advice.

The views, the JSON API, ``manage.py plan`` and the quotes app all come through here, so every
figure shown anywhere comes from the same ``plan()`` call.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.utils import timezone

from ..engine import types as et
from ..engine.plan import plan
from ..engine.serialize import plan_to_dict
from ..io.fixes import advised
from ..io.requests import resolve
from ..port import plan_cache
from ..port.catalog import DjangoCatalog
from . import proofs


def resolve_request(
    data: Any, *, today: dt.date | None = None, catalog: DjangoCatalog | None = None
) -> et.PlanRequest:
    """A request dict → PlanRequest (raises RequestError with field messages).

    ``catalog``: one :class:`DjangoCatalog` shared by the plans of a request
    (one catalog-version query instead of one per plan)."""
    return resolve(data, catalog or DjangoCatalog(), today=today or timezone.localdate())


def plan_from_json(
    data: Any,
    *,
    today: dt.date | None = None,
    catalog: DjangoCatalog | None = None,
    advise: bool = True,
    wait_for_catalog: bool = True,
) -> tuple[et.PlanRequest, et.PlanResult]:
    """Resolve and plan.  Bad input raises RequestError; the engine never raises
    on a resolved request (problems are checks).

    ``wait_for_catalog=False`` (the page's update): a target out of reach is completed with the
    smallest catalog deployment only when that search has already run; the page loads it after the
    results (``views.alternative``).  The API, the CLI and the quote wait for it."""
    catalog = catalog or DjangoCatalog()
    request = resolve_request(data, today=today, catalog=catalog)
    day = today or timezone.localdate()
    version = catalog.version

    def plain() -> et.PlanResult:
        return plan(request)

    def planned() -> et.PlanResult:
        # the plain plan is the advised one's start: the page's update plans it without advice first
        result = plan_cache.get_or_build(plain_key, plain)
        # Every fix proven by re-planning the request with it (engine/advice.py, io/fixes.py).  Each
        # proof is kept (``proofs.remember``): the page's "Apply" buttons (``web.fixes.proven_fixes``)
        # re-prove the same requests and find them there instead of planning them a second time.
        return advised(
            data,
            request,
            result,
            lambda d: resolve_request(d, today=day, catalog=catalog),
            lambda resolved, after: proofs.remember(proofs.key(resolved, version, day), after),
        )

    # A plan and its proven advice are a pure function of the request, the catalog version and the
    # day: planned once (plan_cache), whichever of the page, its fragments, the API or the quote asks.
    resolved = repr(request)
    # The plain plan is plan(request): keyed by the resolved request alone, so the request JSON a saved
    # quote sends back (``request_json``, inline) finds the plan the page's update made of the form.
    plain_key = plan_cache.key("plan", version, day.isoformat(), None, resolved)
    if advise:
        advised_key = plan_cache.key("advised", version, day.isoformat(), data, resolved)
        result = plan_cache.get_or_build(advised_key, planned)
    else:
        result = plan_cache.get_or_build(plain_key, plain)
    # A target out of this hardware's reach: the smallest catalog deployment that meets it (a plan
    # without advice, the page's update, only reads an answer already searched).
    from ..catalog_alternative import for_request

    result = for_request(
        request,
        result,
        today,
        lambda d: resolve_request(d, today=today, catalog=catalog),
        wait=wait_for_catalog and advise,
        version=catalog.version,
    )
    return request, result


def catalog_answer(request: et.PlanRequest, *, today: dt.date | None = None):
    """The smallest catalog deployment meeting ``request``'s latency targets where its hardware cannot
    reach them (``catalog_alternative.Alternative``; its ``server`` is '' when none does), or None when
    they are within reach or the search could not run (the page's fragment, ``views.alternative``)."""
    from ..catalog_alternative import needs_search, search_for

    today = today or timezone.localdate()
    if not needs_search(plan(request)):
        return None
    return search_for(request, today, lambda d: resolve_request(d, today=today))


def plan_response(result: et.PlanResult) -> dict:
    """The JSON API response for a plan (docs/api.md)."""
    return plan_to_dict(result)


def launch_bundle(request: et.PlanRequest, result: et.PlanResult) -> tuple[bytes | None, str]:
    """The launch bundle zip for a plan, or (None, "") when the plan has errors."""
    from ..engine.launch import bundle_files, bundle_zip

    if not result.ok or result.launch is None:
        return None, ""
    files = bundle_files(result.launch)
    name = f"launch-{request.model.slug}-{request.server.slug}-{request.topology.nodes}n.zip"
    return bundle_zip(files), name
