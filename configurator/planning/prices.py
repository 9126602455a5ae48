"""Prices: the price list a plan is priced from, the prices as a quote revision freezes them, the
price list's items as planned and the price basis the page states.

Which list prices a request is one rule (``port.catalog.price_list_for``); the frozen prices are
written by one function (:func:`prices_snapshot`), for a quote's plan, for the list in force today
and for the sample proposal.
"""

from __future__ import annotations

from typing import Any

from django.utils import timezone
from django.utils.translation import get_language, gettext_lazy

from catalog.models import PriceList

from ..engine import types as et
from ..engine.vocabulary import is_zh
from ..port import cache as catalog_cache
from ..port.catalog import price_list_for, price_lists


def prices_snapshot(c: et.CommercialSpec, sku: str | None = None) -> dict[str, Any]:
    """The commercial terms a plan used as a quote revision freezes them (amounts as strings).

    ``sku``: the server's slug, named in ``server`` (a quote's prices); without it the server's
    prices alone (the terms of a list, compared with the quote's)."""
    server = {"sku": sku} if sku is not None else {}
    return {
        "currency": c.currency,
        "usd_rate": str(c.usd_rate),
        "server": {
            **server,
            "unit_price": str(c.server_unit_price),
            "lease_per_month": str(c.server_lease_per_month),
        },
        "switches": {k: str(v) for k, v in c.switch_unit_prices.items()},
        "optics_unit_price": str(c.optics_unit_price),
        "media_unit_prices": {k: str(v) for k, v in c.media_unit_prices.items()},
        "rack_unit_prices_by_cooling": {k: str(v) for k, v in c.rack_unit_prices_by_cooling.items()},
        "gateway_unit_price": str(c.gateway_unit_price),
        "gateways": c.gateways,
        "storage_price_per_tb": str(c.storage_price_per_tb),
        "rack_unit_price": str(c.rack_unit_price),
        "installation": str(c.installation),
        "software_support_per_year": str(c.software_support_per_year),
        "om_per_year": None if c.om_per_year is None else str(c.om_per_year),
        "om_percent_of_capex": str(c.om_percent_of_capex),
    }


# What a list's terms leave out of the snapshot: the quote's currency and rate, and the prices the
# approval check does not compare (quotes/pricing.py).
_NOT_LIST_TERMS = ("currency", "usd_rate", "gateway_unit_price", "gateways", "storage_price_per_tb")


def terms_snapshot(c: et.CommercialSpec) -> dict[str, Any]:
    """A price list's commercial terms as the quote's approval check compares them."""
    return {k: v for k, v in prices_snapshot(c).items() if k not in _NOT_LIST_TERMS}


def named_price_list(request_json: Any, currency: str) -> PriceList | None:
    """The price list the request names, else the one in force today in ``currency``."""
    commercial = request_json.get("commercial") if isinstance(request_json, dict) else None
    slug = commercial.get("price_list") if isinstance(commercial, dict) else None
    return price_list_for(slug if isinstance(slug, str) else None, currency, timezone.localdate())


def in_force_today(currency: str) -> PriceList | None:
    """The price list in force today in ``currency``, whatever list or date a request pins."""
    return price_list_for(None, currency, timezone.localdate())


# The price fields an engineer may type over the price list, as the price basis names them.
PRICE_OVERRIDES = {
    "server_unit_price": gettext_lazy("server price"),
    "server_lease_per_month": gettext_lazy("lease per node-month"),
    "om_per_year": gettext_lazy("O&M per year"),
}


def price_basis(request_json: dict, request: et.PlanRequest) -> str:
    """Where the money figures come from: the price list (or "no price list"),
    with the engineer's overrides named, in the page's language.

    The text depends on the currency, the list the request names, the day, the overrides named and the
    language alone: worked out once per catalog version (``port.cache``; every page update asks)."""
    commercial = request_json.get("commercial") if isinstance(request_json, dict) else None
    commercial = commercial if isinstance(commercial, dict) else {}
    slug = commercial.get("price_list")
    overridden = tuple(key for key in PRICE_OVERRIDES if commercial.get(key) not in (None, ""))
    version = catalog_cache.current_version()
    if request.commercial.currency not in price_lists(version)["currencies"]:
        # A currency no price list is in: said without a list, and not kept (any text may be typed).
        return _price_basis(request_json, request)
    key = (
        "price_basis",
        request.commercial.currency,
        slug if isinstance(slug, str) else "",
        timezone.localdate().isoformat(),
        get_language() or "",
        overridden,
    )
    return catalog_cache.cached(version, key, lambda: _price_basis(request_json, request))


def _price_basis(request_json: dict, request: et.PlanRequest) -> str:
    from django.utils.translation import gettext as _

    c = request.commercial
    price_list = named_price_list(request_json, c.currency)
    commercial = request_json.get("commercial") if isinstance(request_json, dict) else None
    overrides = [
        str(label)
        for key, label in PRICE_OVERRIDES.items()
        if isinstance(commercial, dict) and commercial.get(key) not in (None, "")
    ]
    if price_list is None:
        text = _("No price list in force: prices are the values typed in (%(currency)s).") % {
            "currency": c.currency
        }
    else:
        text = _("Prices from the price list “%(name)s” (%(currency)s, valid from %(date)s).") % {
            "name": ((price_list.name_zh if is_zh(get_language()) else "") or price_list.name),
            "currency": c.currency,
            "date": price_list.effective_from.isoformat(),
        }
    if in_force_today(c.currency) is None:
        # quotes.services.revisions.refuse_unpriceable: nothing to check the prices against.
        text += " " + _(
            "This configuration cannot be saved as a quote in %(currency)s: no price list is in force "
            "in that currency to check its prices against."
        ) % {"currency": c.currency}
    if overrides:
        text += " " + _("Overridden by the engineer: %(fields)s.") % {"fields": ", ".join(overrides)}
    return text


def items_as_planned(items: list[dict], request: et.PlanRequest) -> list[dict]:
    """The price list's items this plan uses, with the prices it actually used:
    an engineer's override (server price, lease) replaces the list price and is
    marked so."""
    c = request.commercial
    planned = {
        ("server", request.server.slug): (c.server_unit_price, c.server_lease_per_month),
        ("optics", ""): (c.optics_unit_price, None),
        **{("optics", code): (price, None) for code, price in c.media_unit_prices.items()},
        ("rack", request.rack.slug): (c.rack_unit_price, None),
        **{("switch", slug): (price, None) for slug, price in c.switch_unit_prices.items()},
    }
    out = []
    for item in items:
        if item["category"] == "server" and item["ref"] != request.server.slug:
            continue  # other servers' prices are not part of this plan
        if item["category"] == "rack" and item["ref"] != request.rack.slug:
            continue
        if item["category"] == "other" and item["ref"] in ("gateway", "storage-tb"):
            continue  # priced by the plan's own keys (gateway_unit_price, storage_price_per_tb)
        if item["category"] in ("install", "software", "om"):
            continue  # per-node prices: the plan's totals are under their own keys
        key = (item["category"], item["ref"] or "")
        if key in planned:
            unit_price, lease = planned[key]
            overridden = str(unit_price) != item["unit_price"] or (
                lease is not None and str(lease) != (item["lease_per_month"] or "0")
            )
            listed = {
                "list_unit_price": item["unit_price"],
                "list_lease_per_month": item.get("lease_per_month"),
            }
            item = {**item, "unit_price": str(unit_price)}
            if lease is not None:
                item["lease_per_month"] = str(lease)
            if overridden:
                item["overridden"] = True
                item.update(listed)
        out.append(item)
    return out
