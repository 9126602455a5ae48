"""The auto-planner on the Django side: the catalog port the pure search asks
(:class:`DjangoPlannerCatalog`), a search from a request (:func:`run_search`), the
``/api/recommend`` response (:func:`recommend`) and the signed links that open a candidate in
the configurator (:func:`open_url`).

The search itself is pure (``configurator.planner``); the page is ``planner_views``, the JSON
API ``api_views``, the command ``manage.py recommend``.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Any, cast

from django.core import signing
from django.urls import NoReverseMatch, reverse
from django.utils import timezone

from catalog import selectors
from catalog.models import PriceList
from catalog.selectors import price_list_in_force
from configurator import inputs, planner, services
from configurator.engine import types as et

OPEN_SALT = "configurator.planner.open"
OPEN_MAX_AGE = 90 * 24 * 3600  # a shared link opens for 90 days
OPEN_PATH = "/planner/open"


# --------------------------------------------------------------------------- the catalog port


class DjangoPlannerCatalog:
    """The catalog as the planner sees it (``planner.PlannerCatalog``)."""

    def __init__(self, today: dt.date | None = None):
        self.today = today or timezone.localdate()
        self.base = services.DjangoCatalog()
        self._price_lists: dict[str, PriceList | None] = {}
        self._snapshots: dict[str, _PriceListSnapshot | None] = {}

    def scenario(self, slug: str) -> dict[str, Any] | None:
        row = selectors.scenario_row(slug)
        if row is None:
            return None
        return {
            "input_tokens": row.input_tokens,
            "output_tokens": row.output_tokens,
            "context": row.context,
            "concurrency": row.concurrency,
            "needs_vision": row.needs_vision,
            "availability_target": float(row.availability_target),
            "model": row.recommended_model.slug if row.recommended_model_id else None,
            "name_en": row.name_en,
            "name_zh": row.name_zh,
        }

    def model(self, slug: str) -> et.ModelSpec | None:
        return self.base.model(slug)

    def default_checkpoint(self, model_slug: str, software_stack: str) -> et.CheckpointSpec | None:
        return self.base.default_checkpoint(model_slug, software_stack)

    def servers(self, model_slug: str) -> tuple[et.ServerSpec, ...]:
        """Every server offered in the configurator, text-only flags as the model records them."""
        llm = selectors.llm_model_by_slug(model_slug)
        text_only = set(llm.validated_text_only_on.values_list("pk", flat=True)) if llm else set()
        rows = selectors.active_servers()
        out = []
        for row in rows.order_by("vendor", "name"):
            spec = inputs.server_spec(row)
            if row.pk in text_only and not spec.validated_text_only:
                spec = dataclasses.replace(spec, validated_text_only=True)
            out.append(spec)
        return tuple(out)

    def site(self, slug: str | None) -> et.SiteSpec | None:
        if slug is None:
            return self.base.default_site()
        return self.base.site(slug)

    def racks(self) -> tuple[et.RackSpec, ...]:
        """Rack types, the configurator's default first (the one a request without a rack gets)."""
        default = self.base.default_rack()
        rows = [inputs.rack_spec(r) for r in selectors.rack_types().order_by("pk")]
        if default is not None:
            rows.sort(key=lambda r: r.slug != default.slug)
        return tuple(rows)

    def switches(self) -> tuple[et.SwitchSpec, ...]:
        return self.base.switches(None)

    def price_list(self, currency: str) -> str | None:
        if currency not in self._price_lists:
            self._price_lists[currency] = price_list_in_force(currency, self.today)
        pl = self._price_lists[currency]
        return pl.slug if pl is not None else None

    def commercial(
        self, server: et.ServerSpec, nodes: int, rack: et.RackSpec, price_list: str | None, currency: str
    ) -> et.CommercialSpec:
        """What requests.resolve() gets from ``DjangoCatalog.commercial`` for the same request.

        The list's items are read once per search and handed to the same
        ``inputs.commercial_spec``, so a candidate replans identically.
        """
        snapshot = self._snapshot(price_list) if price_list else None
        if snapshot is None:
            try:
                spec = self.base.commercial(
                    server=server,
                    price_list=price_list,
                    on_date=self.today,
                    currency=currency,
                    nodes=nodes,
                    rack=rack,
                )
            except LookupError:
                spec = et.CommercialSpec(currency=currency)
        else:
            spec = inputs.commercial_spec(  # the snapshot reads as a PriceList row (slug, currency, items)
                price_list=cast(PriceList, snapshot),
                server=server,
                on_date=self.today,
                nodes=nodes,
                rack=rack,
            )
        return dataclasses.replace(spec, currency=currency) if spec.currency != currency else spec

    def _snapshot(self, slug: str) -> _PriceListSnapshot | None:
        if slug not in self._snapshots:
            row = selectors.price_list_by_slug(slug)
            self._snapshots[slug] = _PriceListSnapshot(row) if row is not None else None
        return self._snapshots[slug]


class _PriceListSnapshot:
    """A price list with its items read once: ``items.all().order_by(…)`` answers from memory."""

    def __init__(self, row: PriceList):
        self.row = row
        self.slug = row.slug
        self.currency = row.currency
        self.usd_rate = row.usd_rate
        self.items = self
        self._items = list(row.items.all())

    def all(self):
        return self

    def order_by(self, *fields: str):
        out = list(self._items)
        for name in reversed(fields):
            key = name.lstrip("-")
            out.sort(key=lambda item: getattr(item, key), reverse=name.startswith("-"))
        return out

    def __getattr__(self, name: str):
        return getattr(self.row, name)


def run_search(data: Any) -> planner.PlannerResult:
    """Validate and search (raises RequestError on bad input)."""
    catalog = DjangoPlannerCatalog()
    query = planner.parse_query(data, catalog)
    return planner.search(query, catalog)


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
