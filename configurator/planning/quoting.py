"""What a quote revision freezes of a configuration: the resolved request, the plan, the prices
(with the list's terms in force today, for the approval check) and the hardware typed in by hand."""

from __future__ import annotations

import dataclasses
from decimal import Decimal

from django.utils import timezone

from catalog.selectors import price_snapshot

from ..engine import types as et
from ..engine.serialize import plan_to_dict
from ..io.requests import request_to_inline
from ..port.catalog import DjangoCatalog
from .plans import plan_from_json
from .prices import in_force_today, items_as_planned, named_price_list, prices_snapshot, terms_snapshot


def plan_for_quote(request_json: dict) -> tuple[dict, dict, dict, Decimal, str]:
    """What a quote revision freezes: (resolved request, result, prices, USD rate, currency).

    The resolved request is fully inline, so replanning it later gives the
    same figures whatever happens to the catalog.
    """
    request, result = plan_from_json(request_json)
    resolved = request_to_inline(request)
    c = request.commercial
    prices = {
        **prices_snapshot(c, request.server.slug),
        "price_list": None,
        "on_date": timezone.localdate().isoformat(),
        "items": [],
    }
    price_list = named_price_list(request_json, c.currency)
    if price_list is not None:
        prices["price_list"] = price_list.name
        prices["price_list_slug"] = price_list.slug
        prices["items"] = items_as_planned(price_snapshot(price_list), request)
    # What the catalog says today, for the quote's approval check (quotes/pricing.py, issues 13
    # and 27): None when no price list is in force in this currency (the quote refuses it).
    prices["list_terms"] = _list_terms(request)
    prices["non_catalog"] = _non_catalog_hardware(request_json, request)
    return resolved, plan_to_dict(result), prices, c.usd_rate, c.currency


def _list_terms(request: et.PlanRequest) -> dict | None:
    """The commercial terms of the price list in force **today** in the plan's currency, without
    the engineer's overrides — and whatever list or date the request pins: a plan priced from an
    older list (a clone or revision that keeps its prices) is compared with today's list.

    None when no list is in force in that currency: nothing to compare a price with, so the quote
    refuses the currency (``quotes.services.revisions``)."""
    today = timezone.localdate()
    price_list = in_force_today(request.commercial.currency)
    if price_list is None:
        return None
    try:
        terms = DjangoCatalog().commercial(
            server=request.server,
            price_list=price_list.slug,
            on_date=today,
            currency=request.commercial.currency,
            nodes=request.topology.nodes,
            rack=request.rack,
        )
    except (LookupError, ValueError):
        return None
    return {
        **terms_snapshot(terms),
        "price_list": price_list.name,
        "effective_from": price_list.effective_from.isoformat(),
    }


def _is_catalog_rack(listed: et.RackSpec | None, rack: et.RackSpec) -> bool:
    """Whether ``rack`` is the catalog's rack of its slug as the page sends it (issue 31: every
    quote called the seeded rack "typed in by hand").  The configurator sends the rack inline with
    the site's power cap per rack (25 kW where the rack is rated 40 kW) and its layout reserve: a
    cap at or below the rack's rating and the reserved units are the site's choices, not other
    hardware.  Size, cooling, PDUs and names must be the catalog's; a cap above the rating is."""
    if listed is None:
        return False
    same = dataclasses.replace(rack, max_kw=listed.max_kw, reserved_units=listed.reserved_units)
    return same == listed and rack.max_kw <= listed.max_kw


def _non_catalog_hardware(request_json: dict, request: et.PlanRequest) -> list[str]:
    """Hardware given inline that is not exactly its catalog entry (``server``, ``rack``, ``switch:<slug>``)."""
    catalog = DjangoCatalog()
    out = []
    if isinstance(request_json.get("server"), dict) and catalog.server(request.server.slug) != request.server:
        out.append("server")
    if isinstance(request_json.get("rack"), dict) and not _is_catalog_rack(
        catalog.rack(request.rack.slug), request.rack
    ):
        out.append("rack")
    raw_switches = request_json.get("switches")
    if isinstance(raw_switches, list) and any(isinstance(s, dict) for s in raw_switches):
        for switch in request.switches:
            if catalog.switches([switch.slug]) != (switch,):
                out.append(f"switch:{switch.slug}")
    return out
