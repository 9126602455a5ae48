"""The figures a revision freezes, computed from its priced lines: the totals and the
SHA-256 of the whole snapshot (inputs, prices, lines)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from django.core.serializers.json import DjangoJSONEncoder

from ..bom import money, plan_totals
from ..models import QuoteRevision
from ..statuses import CAPEX_CATEGORIES, BomCategory


def snapshot_sha256(revision: QuoteRevision, lines: list[dict]) -> str:
    """SHA-256 of the canonical JSON of everything a revision freezes (inputs, prices, lines)."""
    payload = {
        "request": revision.request_json,
        "resolved": revision.resolved_json,
        "result": revision.result_json,
        "prices": revision.prices_json,
        "usd_rate": revision.usd_rate,
        "currency": revision.currency,
        "discount": revision.discount,
        "lines": lines,
    }
    text = json.dumps(
        payload, cls=DjangoJSONEncoder, sort_keys=True, ensure_ascii=False, separators=(",", ":")
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _is_capex(line: Mapping) -> bool:
    return line["category"] in CAPEX_CATEGORIES


def revision_totals(lines: list[dict], discount: Decimal, result: Mapping) -> dict[str, Any]:
    """Revision totals from its priced lines (lease lines excluded: they price the alternative).

    As in the engine's TCO (``tco.capex``), the quote discount applies to the
    one-time capex lines (servers, switches, optics, racks, installation), not
    to the yearly services:
    list total = Σ round(qty × unit);
    net total = Σ line totals − round(Σ capex line totals × discount);
    discount amount = list total − net total (line and quote discounts together).
    Capex, lease per month and the TCOs are the engine's figures when the
    result has them; capex otherwise = capex line totals − quote discount.
    """
    offer = [line for line in lines if line["category"] != BomCategory.LEASE]
    lease = [line for line in lines if line["category"] == BomCategory.LEASE]
    zero = Decimal("0.00")
    list_total = sum((money(line["quantity"] * line["unit_price"]) for line in offer), zero)
    capex_lines = sum((line["line_total"] for line in offer if _is_capex(line)), zero)
    quote_discount = money(capex_lines * discount)
    net_total = sum((line["line_total"] for line in offer), zero) - quote_discount
    engine = plan_totals(result)
    capex = engine["capex_total"] if engine["capex_total"] is not None else capex_lines - quote_discount
    lease_per_month = engine["lease_per_month"]
    if lease_per_month is None and lease:
        lease_per_month = money(sum((line["unit_price"] for line in lease), Decimal("0")))
    costed = [line for line in offer if line.get("unit_cost") is not None]
    cost_total = (
        sum((money(line["quantity"] * line["unit_cost"]) for line in costed), zero)
        if offer and len(costed) == len(offer)
        else None
    )
    return {
        "list_total": list_total,
        "discount_amount": list_total - net_total,
        "net_total": net_total,
        "capex_total": capex,
        "lease_per_month": lease_per_month,
        "tco_buy_total": engine["tco_buy_total"],
        "tco_lease_total": engine["tco_lease_total"],
        "tco_horizon_years": engine["tco_horizon_years"],
        "cost_total": cost_total,
    }
