"""The auto-planner on the Django side: the catalog port the pure search asks
(:class:`DjangoPlannerCatalog`), a search from a request (:func:`run_search`), the
``/api/recommend`` response (:func:`recommend`) and the signed links that open a candidate in
the configurator (:func:`open_url`).

The search itself is pure (``configurator.planner``); the page is ``planner_views``, the JSON
API ``api_views``, the command ``manage.py recommend``.
"""

from __future__ import annotations

from typing import Any

from django.core import signing
from django.urls import NoReverseMatch, reverse

from configurator import planner
from configurator.port import plan_cache
from configurator.port.catalog import DjangoPlannerCatalog

OPEN_SALT = "configurator.planner.open"
OPEN_MAX_AGE = 90 * 24 * 3600  # a shared link opens for 90 days
OPEN_PATH = "/planner/open"


# --------------------------------------------------------------------------- the catalog port


def run_search(data: Any) -> planner.PlannerResult:
    """Validate and search (raises RequestError on bad input).

    A search is a pure function of the query, the catalog version and the day: searched once
    (``port.plan_cache``), so the page, the API and a repeated form post share it."""
    catalog = DjangoPlannerCatalog()
    query = planner.parse_query(data, catalog)
    cache_key = plan_cache.key("planner", catalog.base.version, catalog.today.isoformat(), data, repr(query))
    return plan_cache.get_or_build(cache_key, lambda: planner.search(query, catalog))


def recommend(data: Any) -> dict:
    """The ``POST /api/recommend`` response for a planner request (raises RequestError)."""
    result = run_search(data)
    out = planner.result_dict(result)
    for item in (*out["candidates"], *out["pareto"]):
        item["open_url"] = open_url(item["request"])
    return out


def open_token(request_json: dict) -> str:
    return signing.dumps(request_json, salt=OPEN_SALT, compress=True)


def open_url(request_json: dict) -> str:
    """The configurator page for a request, as a link (signed, so it cannot be edited in transit)."""
    try:
        base = reverse("configurator:planner_open")
    except NoReverseMatch:  # planner URLs not mounted in this URLconf (e.g. the CLI before wiring)
        base = OPEN_PATH
    return f"{base}?t={open_token(request_json)}"
