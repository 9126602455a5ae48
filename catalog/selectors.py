"""Reads from the catalog.  Other apps ask here rather than filtering models themselves."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.core.validators import slug_re
from django.db.models import Q, QuerySet
from django.utils import timezone

from .models import (
    Checkpoint,
    LlmModel,
    PriceItem,
    PriceList,
    RackType,
    Scenario,
    ServerModel,
    SiteProfile,
    SpeculativeDraft,
    SwitchModel,
    TopologyTemplate,
)


def _slug(slug: Any) -> str | None:
    """``slug`` when it could name a catalog row (a SlugField value), else None: a lookup by anything else
    finds nothing, and is not sent to the database — PostgreSQL refuses text with NUL bytes outright
    (``DataError``) where SQLite finds no row."""
    return slug if isinstance(slug, str) and slug_re.fullmatch(slug) else None


def _today(on_date: dt.date | None) -> dt.date:
    return on_date or timezone.localdate()


def price_list_in_force(currency: str = "CNY", on_date: dt.date | None = None) -> PriceList | None:
    """The price list of ``currency`` in force on ``on_date`` (today if omitted), or None.

    Lists of one currency never overlap (``PriceList.clean``), so at most one matches.
    """
    day = _today(on_date)
    return (
        PriceList.objects.filter(currency=currency, effective_from__lte=day)
        .filter(Q(effective_to__isnull=True) | Q(effective_to__gte=day))
        .order_by("-effective_from")
        .first()
    )


def price_items_in_force(currency: str = "CNY", on_date: dt.date | None = None) -> QuerySet[PriceItem]:
    """Every item of the list in force on the date (empty when none is)."""
    price_list = price_list_in_force(currency, on_date)
    if price_list is None:
        return PriceItem.objects.none()
    return price_list.items.select_related("price_list")


def price_for(sku: str, on_date: dt.date | None = None, currency: str = "CNY") -> PriceItem | None:
    """The PriceItem for ``sku`` in the list in force on ``on_date``: what a quote of that date uses."""
    return price_items_in_force(currency, on_date).filter(sku=sku).first()


def price_for_item(
    kind: str, item_slug: str = "", on_date: dt.date | None = None, currency: str = "CNY"
) -> PriceItem | None:
    """The item pricing a catalog row (``kind="server", item_slug="atlas-800-a3"``) on a date."""
    qs = price_items_in_force(currency, on_date).filter(kind=kind)
    if item_slug:
        qs = qs.filter(item_slug=item_slug)
    return qs.order_by("sku").first()


def price_snapshot(price_list: PriceList, items: Any = None) -> list[dict[str, Any]]:
    """Items as plain dicts a quote revision can freeze (the shape ``quotes.bom`` reads)."""
    rows = items if items is not None else price_list.items.all()
    return [
        {
            "category": item.kind,
            "ref": item.item_slug,
            "sku": item.sku,
            "description_en": item.description,
            "description_zh": item.description_zh,
            "unit": item.unit,
            "unit_price": str(item.unit_price),
            "currency": price_list.currency,
            "lease_per_month": None if item.lease_per_month is None else str(item.lease_per_month),
            "unit_cost": None,
            "price_list": price_list.name,
            "price_list_slug": price_list.slug,
            "effective_date": price_list.effective_from.isoformat(),
            "source": item.source,
            "assumed": item.is_assumed("unit_price"),
        }
        for item in rows
    ]


def active_scenarios() -> QuerySet[Scenario]:
    """Scenarios offered in the configurator, in display order."""
    return Scenario.objects.filter(is_active=True).select_related(
        "recommended_topology", "recommended_model", "recommended_server"
    )


def scenario_by_slug(slug: str) -> Scenario | None:
    if _slug(slug) is None:
        return None
    return active_scenarios().filter(slug=slug).first()


def active_llm_models() -> QuerySet[LlmModel]:
    return LlmModel.objects.filter(is_active=True)


def active_servers() -> QuerySet[ServerModel]:
    return ServerModel.objects.filter(is_active=True).select_related("accelerator").prefetch_related("nics")


def server_by_slug(slug: str) -> ServerModel | None:
    if _slug(slug) is None:
        return None
    return (
        ServerModel.objects.select_related("accelerator").prefetch_related("nics").filter(slug=slug).first()
    )


def switches() -> QuerySet[SwitchModel]:
    return SwitchModel.objects.all()


def topology_templates() -> QuerySet[TopologyTemplate]:
    return TopologyTemplate.objects.all()


def default_site() -> SiteProfile | None:
    """The site marked default, else the first by name."""
    return SiteProfile.objects.order_by("-is_default", "name").first()


def default_rack() -> RackType | None:
    """The rack type marked default, else the first."""
    return RackType.objects.order_by("-is_default", "rack_units", "name").first()


# --------------------------------------------------------------------------- the configurator's reads
# Every read the configurator makes of the catalog (request resolution, the page's and the
# planner's choices, previews); ``tests/foundation/test_import_graph.py`` holds it to these.


def llm_model_by_slug(slug: str) -> LlmModel | None:
    if _slug(slug) is None:
        return None
    return LlmModel.objects.filter(slug=slug).first()


def checkpoint_by_slug(slug: str) -> Checkpoint | None:
    if _slug(slug) is None:
        return None
    return Checkpoint.objects.select_related("model").filter(slug=slug).first()


def checkpoints_of(model_slug: str) -> QuerySet[Checkpoint]:
    """A model's checkpoints in catalog order (the first default for a platform wins)."""
    if _slug(model_slug) is None:
        return Checkpoint.objects.none()
    return Checkpoint.objects.filter(model__slug=model_slug).order_by("pk")


def drafts_of(model_slug: str) -> QuerySet[SpeculativeDraft]:
    """A model's speculative drafts in catalog order (the first the engine version runs is the default)."""
    if _slug(model_slug) is None:
        return SpeculativeDraft.objects.none()
    return SpeculativeDraft.objects.filter(target__slug=model_slug).order_by("pk")


def site_by_slug(slug: str) -> SiteProfile | None:
    if _slug(slug) is None:
        return None
    return SiteProfile.objects.filter(slug=slug).first()


def rack_by_slug(slug: str) -> RackType | None:
    if _slug(slug) is None:
        return None
    return RackType.objects.filter(slug=slug).first()


def price_list_by_slug(slug: str) -> PriceList | None:
    if _slug(slug) is None:
        return None
    return PriceList.objects.filter(slug=slug).first()


def scenarios() -> QuerySet[Scenario]:
    """Every scenario, offered or not (a stored request may name a retired one), with its picks."""
    return Scenario.objects.select_related("recommended_topology", "recommended_model", "recommended_server")


def scenario_row(slug: str) -> Scenario | None:
    if _slug(slug) is None:
        return None
    return scenarios().filter(slug=slug).first()


def llm_models() -> QuerySet[LlmModel]:
    return LlmModel.objects.all()


def servers() -> QuerySet[ServerModel]:
    return ServerModel.objects.select_related("accelerator")


def checkpoints() -> QuerySet[Checkpoint]:
    return Checkpoint.objects.select_related("model")


def sites() -> QuerySet[SiteProfile]:
    return SiteProfile.objects.all()


def rack_types() -> QuerySet[RackType]:
    return RackType.objects.all()


def price_lists() -> QuerySet[PriceList]:
    return PriceList.objects.all()


def rack_cooling(slugs: list[str]) -> dict[str, str]:
    """Rack slug → its cooling, for the racks a price list names."""
    return dict(RackType.objects.filter(slug__in=slugs).values_list("slug", "cooling"))


def first_site() -> SiteProfile | None:
    return SiteProfile.objects.order_by("pk").first()


def first_rack() -> RackType | None:
    return RackType.objects.order_by("pk").first()


def slug_or_first(model: type[LlmModel] | type[ServerModel], preferred: str) -> str | None:
    """``preferred`` when that row exists, else the first row's slug (None for an empty table)."""
    if _slug(preferred) is not None and model.objects.filter(slug=preferred).exists():
        return preferred
    row = model.objects.order_by("pk").first()
    return row.slug if row else None
