"""The catalog ports: the catalog as the request resolver sees it (:class:`DjangoCatalog`, see
``io/requests.CatalogPort``) and as the auto-planner's pure search sees it (:class:`DjangoPlannerCatalog`,
``planner.PlannerCatalog``).  Both read through ``catalog.selectors``, and price a request from the
list one rule chooses (:func:`price_list_for`).  They sit below ``planning/``, ``catalog_alternative``
(the smallest deployment that meets the targets) and the planner's pages, which all use them.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Any, cast

from django.utils import timezone

from catalog import selectors
from catalog.models import PriceList
from catalog.selectors import default_rack, default_site, price_list_in_force

from ..engine import types as et
from . import cache as catalog_cache
from . import inputs
from .seed import scenario_workload_values


class DjangoCatalog:
    """The catalog as the request resolver sees it (see requests.CatalogPort).

    Entries are cached per process for the current catalog version (see
    ``port.cache``): one query for the version, then memory.
    """

    def __init__(self) -> None:
        self.version = catalog_cache.current_version()

    def _cached(self, key: tuple, build):
        return catalog_cache.cached(self.version, key, build)

    def model(self, slug: str) -> et.ModelSpec | None:
        def build():
            row = selectors.llm_model_by_slug(slug)
            return inputs.model_spec(row) if row else None

        return self._cached(("model", slug), build)

    def scenario_workload(self, slug: str) -> dict[str, Any] | None:
        """The workload fields the scenario carries (``requests.SCENARIO_WORKLOAD_FIELDS``), or None."""

        def build():
            row = selectors.scenario_row(slug)
            return scenario_workload_values(lambda name: getattr(row, name, None)) if row else None

        return self._cached(("scenario_workload", slug), build)

    def checkpoint(self, slug: str) -> tuple[et.CheckpointSpec, str] | None:
        """The checkpoint called ``slug`` and the slug of its model."""

        def build():
            row = selectors.checkpoint_by_slug(slug)
            return (inputs.checkpoint_spec(row), row.model.slug) if row else None

        return self._cached(("checkpoint", slug), build)

    def default_checkpoint(self, model_slug: str, software_stack: str) -> et.CheckpointSpec | None:
        """The model's default checkpoint on this platform (None: the model row's own bytes)."""
        stack = "ascend" if software_stack == "ascend" else "cuda"

        def build():
            for row in selectors.checkpoints_of(model_slug):
                if stack in (row.default_for or []):
                    return inputs.checkpoint_spec(row)
            return None

        return self._cached(("default_checkpoint", model_slug, stack), build)

    def speculators(self, model_slug: str) -> tuple[et.SpeculatorSpec, ...]:
        """The model's speculative drafts, in catalog order."""

        def build():
            return tuple(
                inputs.speculator_spec(row)
                for row in selectors.drafts_of(model_slug).select_related("target")
            )

        return self._cached(("speculators", model_slug), build)

    def model_from_hf_config(
        self, config: dict, weight_format: str | None, weight_bytes: int | None
    ) -> et.ModelSpec:
        return inputs.model_spec_from_hf_config(
            config, weight_format=weight_format, weight_bytes=weight_bytes
        )

    def server(self, slug: str) -> et.ServerSpec | None:
        def build():
            row = selectors.server_by_slug(slug)
            return inputs.server_spec(row) if row else None

        return self._cached(("server", slug), build)

    def site(self, slug: str) -> et.SiteSpec | None:
        def build():
            row = selectors.site_by_slug(slug)
            return inputs.site_spec(row) if row else None

        return self._cached(("site", slug), build)

    def rack(self, slug: str) -> et.RackSpec | None:
        def build():
            row = selectors.rack_by_slug(slug)
            return inputs.rack_spec(row) if row else None

        return self._cached(("rack", slug), build)

    def switches(self, slugs: list[str] | None) -> tuple[et.SwitchSpec, ...]:
        def build():
            rows = selectors.switches()
            if slugs is not None:
                rows = rows.filter(slug__in=slugs)
            return tuple(inputs.switch_spec(r) for r in rows)

        return self._cached(("switches", tuple(slugs) if slugs is not None else None), build)

    def commercial(
        self,
        *,
        server: et.ServerSpec,
        price_list: str | None,
        on_date: dt.date,
        currency: str | None,
        nodes: int | None = None,
        rack: et.RackSpec | None = None,
    ) -> et.CommercialSpec:
        def build():
            pl = price_list_for(price_list, currency or "CNY", on_date)
            if pl is None and price_list:
                return LookupError(f"unknown price list '{price_list[:80]}'.")
            if pl is None:
                return et.CommercialSpec(currency=currency or "CNY", prices_on_request=("server",))
            return inputs.commercial_spec(
                price_list=pl, server=server, on_date=on_date, nodes=nodes, rack=rack
            )

        key = ("commercial", server.slug, price_list, on_date, currency, nodes, rack.slug if rack else None)
        lists = price_lists(self.version)
        known = price_list in lists["slugs"] if price_list else (currency or "CNY") in lists["currencies"]
        # A slug or currency no list has is typed text: answered, never kept (the cache stays bounded).
        value = self._cached(key, build) if known else build()
        if isinstance(value, LookupError):
            raise value
        return value

    def default_site(self) -> et.SiteSpec | None:
        def build():
            row = default_site()
            return inputs.site_spec(row) if row else None

        return self._cached(("default_site",), build)

    def default_rack(self) -> et.RackSpec | None:
        def build():
            row = default_rack()
            return inputs.rack_spec(row) if row else None

        return self._cached(("default_rack",), build)


def price_list_for(slug: str | None, currency: str, on_date: dt.date) -> PriceList | None:
    """The price list a request is priced from: the one it names (``commercial.price_list``), else the
    one in force in its currency on the day; None when the named one is unknown or none is in force.
    The one rule: the resolver's commercial terms, the prices a quote freezes and the page's price
    basis all ask it."""
    if slug:
        return selectors.price_list_by_slug(slug)
    return price_list_in_force(currency, on_date)


def price_lists(version: int) -> dict[str, frozenset[str]]:
    """The catalog's price list slugs and currencies at ``version`` (read once per version): what a
    request may name and still be cached by it."""

    def build() -> dict[str, frozenset[str]]:
        rows = list(selectors.price_lists().values_list("slug", "currency"))
        return {"slugs": frozenset(r[0] for r in rows), "currencies": frozenset(r[1] for r in rows)}

    return catalog_cache.cached(version, ("price_lists",), build)


class DjangoPlannerCatalog:
    """The catalog as the planner sees it (``planner.PlannerCatalog``)."""

    def __init__(self, today: dt.date | None = None):
        self.today = today or timezone.localdate()
        self.base = DjangoCatalog()
        self._price_lists: dict[str, PriceList | None] = {}
        self._snapshots: dict[str, _PriceListSnapshot | None] = {}

    def scenario(self, slug: str) -> dict[str, Any] | None:
        """The scenario's workload and targets (read once per catalog version; a copy each call)."""
        found = catalog_cache.cached(
            self.base.version, ("planner_scenario", slug), lambda: self._scenario(slug)
        )
        return dict(found) if found is not None else None

    @staticmethod
    def _scenario(slug: str) -> dict[str, Any] | None:
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
            # The scenario's latency targets (P50, docs/performance.md §4): the planner judges them.
            "ttft_target_s": float(row.ttft_target_s) if row.ttft_target_s is not None else None,
            "tpot_target_ms": float(row.tpot_target_ms) if row.tpot_target_ms is not None else None,
            "model": row.recommended_model.slug if row.recommended_model_id else None,
            "name_en": row.name_en,
            "name_zh": row.name_zh,
        }

    def model(self, slug: str) -> et.ModelSpec | None:
        return self.base.model(slug)

    def default_checkpoint(self, model_slug: str, software_stack: str) -> et.CheckpointSpec | None:
        return self.base.default_checkpoint(model_slug, software_stack)

    def speculators(self, model_slug: str) -> tuple[et.SpeculatorSpec, ...]:
        return self.base.speculators(model_slug)

    def servers(self, model_slug: str) -> tuple[et.ServerSpec, ...]:
        """Every server offered in the configurator, text-only flags as the model records them (read once
        per catalog version: a repeated search, answered from ``plan_cache``, still parses its query)."""

        def build() -> tuple[et.ServerSpec, ...]:
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

        return catalog_cache.cached(self.base.version, ("planner_servers", model_slug), build)

    def site(self, slug: str | None) -> et.SiteSpec | None:
        if slug is None:
            return self.base.default_site()
        return self.base.site(slug)

    def racks(self) -> tuple[et.RackSpec, ...]:
        """Rack types, the configurator's default first (the one a request without a rack gets)."""

        def build() -> tuple[et.RackSpec, ...]:
            default = self.base.default_rack()
            rows = [inputs.rack_spec(r) for r in selectors.rack_types().order_by("pk")]
            if default is not None:
                rows.sort(key=lambda r: r.slug != default.slug)
            return tuple(rows)

        return catalog_cache.cached(self.base.version, ("planner_racks",), build)

    def switches(self) -> tuple[et.SwitchSpec, ...]:
        return self.base.switches(None)

    def price_list(self, currency: str) -> str | None:
        if currency not in self._price_lists:
            self._price_lists[currency] = price_list_for(None, currency, self.today)
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
                rack_cooling=snapshot.rack_cooling,
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
        # the cooling of the racks the list prices, read once (inputs.commercial_spec would read it per call)
        self.rack_cooling = selectors.rack_cooling(
            [i.item_slug for i in self._items if i.kind == "rack" and i.item_slug]
        )

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
