"""The seeded catalog without a database: the catalog port of ``requests.resolve`` over the seed files.

:class:`SeedCatalog` answers what :class:`configurator.port.catalog.DjangoCatalog` answers, from the
records of ``catalog/seed/*.yaml`` (``catalog.seed.loader``) instead of rows, through the same
conversion (``configurator.port.specs``).  A spec from it equals the DjangoCatalog's spec of the same
slug after ``manage.py load_catalog`` (``tests/configurator/test_seed_catalog.py``), and so does a plan.
Lists come in the database's order (switches by fabric and name, NICs by role and fabric, the
default site and rack as ``catalog.selectors`` chooses them).  No Django import.
"""

from __future__ import annotations

import datetime as dt

from catalog.seed import loader
from catalog.seed.loader import Record, Seed

from ..engine import types as et
from . import specs


def scenario_workload_values(value) -> dict:
    """A scenario's workload fields read through ``value(name)`` (a seed record's or a row's getattr),
    as the request types hold them; the same conversion for both catalogs."""
    out: dict = {}
    for name in ("input_tokens", "output_tokens", "concurrency"):
        if value(name) is not None:
            out[name] = int(value(name))
    if value("needs_vision") is not None:
        out["needs_vision"] = bool(value("needs_vision"))
    for name in ("availability_target", "ttft_target_s", "tpot_target_ms"):
        if value(name) is not None:
            out[name] = float(value(name))
    return out


def _sourced(record: Record) -> dict:
    """A record's values, stored sources and the names of its sourced figures, for ``specs``."""
    return {**record.values, "sources": record.sources, "sourced": list(record.sources)}


class SeedCatalog:
    """The catalog port (``configurator.io.requests.CatalogPort``) over the seed records."""

    def __init__(self, seed: Seed | None = None) -> None:
        self.seed = seed or loader.load()

    def _get(self, kind: str, slug: str) -> Record | None:
        return self.seed.get(kind, slug) if isinstance(slug, str) else None

    def scenario_workload(self, slug: str) -> dict | None:
        """The workload fields the seeded scenario carries (``requests.SCENARIO_WORKLOAD_FIELDS``)."""
        record = self._get("scenario", slug)
        if record is None:
            return None
        return scenario_workload_values(record.value)

    # ------------------------------------------------------------------ models

    def model(self, slug: str) -> et.ModelSpec | None:
        record = self._get("llm_model", slug)
        if record is None:
            return None
        return specs.model_spec(
            **_sourced(record), text_only_servers=record.many_to_many.get("validated_text_only_on", [])
        )

    def checkpoint(self, slug: str) -> tuple[et.CheckpointSpec, str] | None:
        """The checkpoint called ``slug`` and the slug of its model."""
        record = self._get("checkpoint", slug)
        if record is None:
            return None
        return specs.checkpoint_spec(**record.values), str(record.foreign_keys["model"])

    def default_checkpoint(self, model_slug: str, software_stack: str) -> et.CheckpointSpec | None:
        """The model's default checkpoint on this platform (None: the model row's own bytes)."""
        stack = "ascend" if software_stack == "ascend" else "cuda"
        for record in self.seed.of("checkpoint"):
            if record.foreign_keys.get("model") == model_slug and stack in (
                record.values.get("default_for") or []
            ):
                return specs.checkpoint_spec(**record.values)
        return None

    def speculators(self, model_slug: str) -> tuple[et.SpeculatorSpec, ...]:
        """The model's speculative drafts, in catalog order."""
        return tuple(
            specs.speculator_spec(**record.values, target=model_slug, sources=record.sources)
            for record in self.seed.of("speculative_draft")
            if record.foreign_keys.get("target") == model_slug
        )

    def model_from_hf_config(
        self, config: dict, weight_format: str | None, weight_bytes: int | None
    ) -> et.ModelSpec:
        return specs.model_spec_from_hf_config(config, weight_format=weight_format, weight_bytes=weight_bytes)

    # ------------------------------------------------------------------ hardware

    def accelerator(self, slug: str) -> et.AcceleratorSpec | None:
        record = self._get("accelerator", slug)
        return specs.accelerator_spec(**record.values, sources=record.sources) if record else None

    def server(self, slug: str) -> et.ServerSpec | None:
        record = self._get("server", slug)
        if record is None:
            return None
        acc = self._get("accelerator", str(record.foreign_keys["accelerator"]))
        assert acc is not None, f"seed server {slug} names an unknown accelerator"
        nics = sorted(record.nics or [], key=lambda n: (n["role"], n["fabric"]))  # the database's order
        return specs.server_spec(
            **_sourced(record),
            accelerator=specs.accelerator_spec(**acc.values, sources=acc.sources),
            accelerator_sources=acc.sources,
            accelerator_sourced=list(acc.sources),
            nics=[specs.nic_spec(**n) for n in nics],
        )

    def site(self, slug: str) -> et.SiteSpec | None:
        record = self._get("site", slug)
        return specs.site_spec(**_sourced(record)) if record else None

    def rack(self, slug: str) -> et.RackSpec | None:
        record = self._get("rack", slug)
        return specs.rack_spec(**_sourced(record)) if record else None

    def switches(self, slugs: list[str] | None) -> tuple[et.SwitchSpec, ...]:
        records = [r for r in self.seed.of("switch") if slugs is None or r.slug in slugs]
        records.sort(key=lambda r: (r.values["fabric"], r.values["name"]))  # SwitchModel's ordering
        return tuple(specs.switch_spec(**_sourced(r)) for r in records)

    def default_site(self) -> et.SiteSpec | None:
        records = sorted(
            self.seed.of("site"), key=lambda r: (not r.values.get("is_default"), r.values["name"])
        )
        return self.site(records[0].slug) if records else None

    def _default_rack_record(self) -> Record | None:
        records = sorted(
            self.seed.of("rack"),
            key=lambda r: (not r.values.get("is_default"), r.values.get("rack_units", 42), r.values["name"]),
        )
        return records[0] if records else None

    def default_rack(self) -> et.RackSpec | None:
        record = self._default_rack_record()
        return self.rack(record.slug) if record else None

    # ------------------------------------------------------------------ money

    def price_list_in_force(self, currency: str, on_date: dt.date) -> Record | None:
        """The seeded price list of ``currency`` in force on ``on_date`` (as ``catalog.selectors``)."""
        candidates = [
            r
            for r in self.seed.of("price_list")
            if r.values.get("currency") == currency
            and r.values["effective_from"] <= on_date
            and (r.values.get("effective_to") is None or r.values["effective_to"] >= on_date)
        ]
        candidates.sort(key=lambda r: r.values["effective_from"], reverse=True)
        return candidates[0] if candidates else None

    def price_lines(self, price_list: str) -> list[specs.PriceLine]:
        """The items of the seeded price list ``price_list``, by SKU."""
        items = [r for r in self.seed.of("price_item") if r.foreign_keys.get("price_list") == price_list]
        items.sort(key=lambda r: r.values["sku"])
        return [
            specs.PriceLine(
                sku=r.values["sku"],
                kind=r.values["kind"],
                item_slug=r.values.get("item_slug", ""),
                unit=r.values["unit"],
                unit_price=r.values["unit_price"],
                lease_per_month=r.values.get("lease_per_month"),
                description=r.values.get("description", ""),
            )
            for r in items
        ]

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
        """As ``DjangoCatalog.commercial``: the named list, else the list in force on ``on_date``."""
        if price_list:
            record = self._get("price_list", price_list)
            if record is None:
                raise LookupError(f"unknown price list '{price_list[:80]}'.")
        else:
            record = self.price_list_in_force(currency or "CNY", on_date)
            if record is None:
                return et.CommercialSpec(currency=currency or "CNY", prices_on_request=("server",))
        default_rack = self._default_rack_record()
        return specs.commercial_spec(
            currency=record.values["currency"],
            usd_rate=record.values["usd_rate"],
            items=self.price_lines(record.slug),
            server_slug=server.slug,
            rack_slug=rack.slug if rack else (default_rack.slug if default_rack else ""),
            rack_cooling={r.slug: r.values.get("cooling", "air") for r in self.seed.of("rack")},
            nodes=nodes,
        )
