"""Catalog rows → engine input types: the Django adapter of :mod:`configurator.port.specs`.

The conversion itself (units, sources, defaults) is ``configurator.port.specs``, pure and shared with
the seed files' catalog (``configurator.reference``); this module reads the rows and their
querysets (the price list in force on a day, the model's text-only servers, the racks' cooling)
and hands the values over.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from typing import Any

from django.utils import timezone

from catalog import selectors
from catalog.models import (
    Accelerator,
    Checkpoint,
    LlmModel,
    PriceList,
    RackType,
    Scenario,
    ServerModel,
    SiteProfile,
    SpeculativeDraft,
    SwitchModel,
)
from catalog.selectors import default_rack, price_list_in_force, price_snapshot

from ..engine import types as et
from . import specs

__all__ = [
    "accelerator_spec",
    "bom_items",
    "commercial_spec",
    "model_spec",
    "model_spec_from_hf_config",
    "price_list_in_force",
    "price_snapshot",
    "rack_spec",
    "server_spec",
    "site_spec",
    "source",
    "switch_spec",
    "switch_specs",
    "workload_spec",
]

source = specs.source


def _values(row: Any) -> dict[str, Any]:
    """A row's stored non-relation values by field name (``sources`` included), for ``specs``."""
    return {f.name: getattr(row, f.name) for f in row._meta.concrete_fields if not f.is_relation}


def _sourced(row: Any) -> dict[str, Any]:
    return {**_values(row), "sourced": row.sourced_field_names()}


# --------------------------------------------------------------------------- model


def model_spec(row: LlmModel) -> et.ModelSpec:
    """An LlmModel row as the engine's ModelSpec (same field names, bytes and counts as stored)."""
    return specs.model_spec(
        **_sourced(row), text_only_servers=row.validated_text_only_on.values_list("slug", flat=True)
    )


model_spec_from_hf_config = specs.model_spec_from_hf_config


def checkpoint_spec(row: Checkpoint) -> et.CheckpointSpec:
    """A Checkpoint row as the engine's CheckpointSpec (bytes, formats, platforms, flags)."""
    return specs.checkpoint_spec(**_values(row))


def speculator_spec(row: SpeculativeDraft) -> et.SpeculatorSpec:
    """A SpeculativeDraft row as the engine's SpeculatorSpec (its target by slug)."""
    return specs.speculator_spec(**_values(row), target=row.target.slug)


# --------------------------------------------------------------------------- hardware


def accelerator_spec(row: Accelerator) -> et.AcceleratorSpec:
    """Per logical device: GB → bytes (10⁹), TB/s → bytes/s; TFLOPS only where supported (> 0)."""
    return specs.accelerator_spec(**_values(row))


def server_spec(row: ServerModel, *, model: LlmModel | None = None) -> et.ServerSpec:
    """A ServerModel with its accelerator and NICs.

    ``validated_text_only`` is the server's own flag, or true when ``model``
    lists this server among those it was validated text-only on.
    """
    values = _sourced(row)
    if model is not None and not row.validated_text_only:
        values["validated_text_only"] = model.validated_text_only_on.filter(pk=row.pk).exists()
    return specs.server_spec(
        **values,
        accelerator=accelerator_spec(row.accelerator),
        accelerator_sources=row.accelerator.sources,
        accelerator_sourced=row.accelerator.sourced_field_names(),
        nics=[specs.nic_spec(**_values(n)) for n in row.nics.all()],
    )


def switch_spec(row: SwitchModel) -> et.SwitchSpec:
    return specs.switch_spec(**_sourced(row))


def switch_specs(rows: Iterable[SwitchModel] | None = None) -> tuple[et.SwitchSpec, ...]:
    """Every switch model (or the given rows) as SwitchSpecs, in catalog order."""
    return tuple(switch_spec(r) for r in (rows if rows is not None else selectors.switches()))


def rack_spec(row: RackType) -> et.RackSpec:
    return specs.rack_spec(**_sourced(row))


def site_spec(row: SiteProfile) -> et.SiteSpec:
    return specs.site_spec(**_sourced(row))


def workload_spec(row: Scenario) -> et.WorkloadSpec:
    """A scenario's workload defaults (the engineer edits them in the form)."""
    return specs.workload_spec(**_values(row))


# --------------------------------------------------------------------------- money


def _slug(obj: Any) -> str:
    if obj is None:
        return ""
    return obj if isinstance(obj, str) else obj.slug


def price_lines(price_list: PriceList) -> list[specs.PriceLine]:
    """A price list's items, by SKU, as ``specs.PriceLine``."""
    return [
        specs.PriceLine(
            sku=i.sku,
            kind=i.kind,
            item_slug=i.item_slug,
            unit=i.unit,
            unit_price=i.unit_price,
            lease_per_month=i.lease_per_month,
            description=i.description,
        )
        for i in price_list.items.all().order_by("sku")
    ]


def commercial_spec(
    price_list: PriceList | None = None,
    server: ServerModel | et.ServerSpec | str | None = None,
    nodes: int | None = None,
    on_date: dt.date | None = None,
    overrides: Mapping[str, Any] | None = None,
    *,
    currency: str = "CNY",
    rack: RackType | et.RackSpec | str | None = None,
    rack_cooling: Mapping[str, str] | None = None,
) -> et.CommercialSpec:
    """Commercial terms from the price list in force on ``on_date`` (or the one given).

    ``rack_cooling``: the cooling of the racks the list prices, when the caller has read it already
    (the auto-planner reads it once per search, ``port.catalog._PriceListSnapshot``); else read here.

    * server price and monthly lease: the ``server`` item priced for that server;
    * switches: every ``switch`` item by its catalog slug; optics: the first ``optics`` item;
    * rack: the ``rack`` item for ``rack`` (default rack type if omitted);
    * installation, software support and O&M: per-node items × ``nodes``.  When
      ``nodes`` is not given, O&M per node-year becomes ``om_percent_of_capex``
      (÷ the server price, so it still scales with the cluster) and installation
      and software support are priced for one node: pass ``nodes``.
    * ``overrides`` replace any CommercialSpec field (unknown names raise ValueError).
    """
    day = on_date or timezone.localdate()
    if price_list is None:
        price_list = price_list_in_force(currency, day)
    if price_list is None:
        # No list in force: nothing is priced, so the servers are on request (no total counts them at 0).
        return _apply_overrides(
            et.CommercialSpec(currency=currency, prices_on_request=("server",)), overrides
        )

    items = price_lines(price_list)
    rack_slug = _slug(rack) or _slug(default_rack())
    rack_slugs = [i.item_slug for i in items if i.kind == "rack" and i.item_slug]
    return specs.commercial_spec(
        currency=price_list.currency,
        usd_rate=price_list.usd_rate,
        items=items,
        server_slug=_slug(server),
        rack_slug=rack_slug,
        rack_cooling=rack_cooling if rack_cooling is not None else selectors.rack_cooling(rack_slugs),
        nodes=nodes,
        overrides=overrides,
    )


def _apply_overrides(spec: et.CommercialSpec, overrides: Mapping[str, Any] | None) -> et.CommercialSpec:
    return specs.apply_overrides(spec, overrides)


def bom_items(
    price_list: PriceList, *, server: ServerModel | et.ServerSpec | str | None = None
) -> tuple[et.BomItem, ...]:
    """The list's items as engine BomItems (the server's own item first when given)."""
    return specs.bom_items(price_lines(price_list), server_slug=_slug(server))
