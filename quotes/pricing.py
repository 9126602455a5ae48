"""Every way a quote can cut a price, measured against the catalog price in force.

A revision needs a sales manager's approval when the customer would pay more
than ``settings.QUOTE_DISCOUNT_APPROVAL_THRESHOLD`` below the list — whether
the cut comes from the quote discount, a line discount, an engineer's price
override ("Server price (override)", O&M, installation …) or hardware typed in
inline instead of chosen from the catalog.  ``configurator.public.plan_for_quote``
records what the catalog says beside the prices the plan used
(``prices_json["list_terms"]``: the commercial terms of the price list in force
without the engineer's overrides; ``prices_json["non_catalog"]``: the hardware
that does not match its catalog entry).  Revisions planned without that record
(older ones) are judged on their discounts alone, as before.

Pure functions over the line dicts of ``quotes.bom``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from django.utils.translation import get_language, gettext_noop
from django.utils.translation import gettext as _

from configurator.public import formatting, is_zh

from .bom import bom_lines_from_plan, plan_totals, to_decimal
from .statuses import (
    CAPEX_CATEGORIES,
    FIRM_TOTAL_CATEGORIES,
    PRICE_ON_REQUEST_NOTE,
    ApprovalState,
    BomCategory,
)

# Stored in BomLine.note (translated on display, on the quote page and in the proposal).
OVERRIDE_NOTE = gettext_noop("Special price: differs from the list price")
NON_CATALOG_NOTE = gettext_noop("Non-standard hardware: not in the product catalog")

ZERO = Decimal("0")
# Categories whose list prices come from the catalog's commercial terms (``list_terms``).
TERMS_CATEGORIES = frozenset({BomCategory.SERVER, BomCategory.SWITCH, BomCategory.OPTICS, BomCategory.RACK})


def _list_prices(prices: Mapping, terms: Mapping) -> dict:
    """``prices`` with every price replaced by the catalog's (the shape ``bom.price_items`` reads)."""
    out = copy.deepcopy(dict(prices))
    for key in (
        "optics_unit_price",
        "rack_unit_price",
        "installation",
        "software_support_per_year",
        "om_per_year",
        "om_percent_of_capex",
    ):
        if key in terms:
            out[key] = terms[key]
    if isinstance(terms.get("server"), Mapping) and isinstance(out.get("server"), Mapping):
        out["server"] = {**out["server"], **terms["server"]}
    for key in ("switches", "media_unit_prices", "rack_unit_prices_by_cooling"):
        if isinstance(terms.get(key), Mapping):
            out[key] = dict(terms[key])
    items = []
    for item in out.get("items") or []:
        if isinstance(item, Mapping):
            if item.get("category") in TERMS_CATEGORIES:
                # Priced by the terms above (today's list): a plan priced from an older list
                # carries that list's prices in its items, which must not stand in for the list.
                continue
            item = dict(item)
            if item.get("list_unit_price") is not None:
                item["unit_price"] = item["list_unit_price"]
            if item.get("list_lease_per_month") is not None:
                item["lease_per_month"] = item["list_lease_per_month"]
            items.append(item)
    out["items"] = items
    return out


def _per_year_list(category: str, prices: Mapping, terms: Mapping, result: Mapping) -> Decimal | None:
    """The catalog's yearly software/O&M figure when the engineer changed that term (else None)."""
    if category == BomCategory.SOFTWARE:
        planned, listed = (
            to_decimal(prices.get("software_support_per_year")),
            to_decimal(terms.get("software_support_per_year")),
        )
        return listed if listed is not None and planned != listed else None
    planned_abs, listed_abs = to_decimal(prices.get("om_per_year")), to_decimal(terms.get("om_per_year"))
    planned_pct = to_decimal(prices.get("om_percent_of_capex"), ZERO)
    listed_pct = to_decimal(terms.get("om_percent_of_capex"), ZERO)
    if planned_abs == listed_abs and planned_pct == listed_pct:
        return None
    if listed_abs is not None:
        return listed_abs
    capex = plan_totals(result)["capex_subtotal"] or ZERO
    return (listed_pct * capex).quantize(Decimal("0.01"))


def _key(line: Mapping, seen: dict) -> tuple:
    category = line["category"]
    seen[category] = seen.get(category, 0) + 1
    return (category, seen[category])


def mark_lines(
    lines: list[dict], *, result: Mapping, prices: Any, currency: str, request: Mapping | None
) -> list[dict]:
    """Set ``list_unit_price`` (and the note) on lines whose price is not the catalog's, and
    ``non_catalog`` on hardware typed in inline.  Returns the lines the catalog prices but the
    plan dropped (at list prices, for the approval figure); [] without a catalog record."""
    terms = prices.get("list_terms") if isinstance(prices, Mapping) else None
    non_catalog = set(prices.get("non_catalog") or []) if isinstance(prices, Mapping) else set()
    for line in lines:
        line.setdefault("list_unit_price", None)
        line.setdefault("non_catalog", False)
        slug_key = f"switch:{line['sku']}"
        if (line["category"] == BomCategory.SERVER and "server" in non_catalog) or (
            (line["category"] == BomCategory.RACK and "rack" in non_catalog)
            or (line["category"] == BomCategory.SWITCH and slug_key in non_catalog)
        ):
            line["non_catalog"] = True
            line["note"] = NON_CATALOG_NOTE
    if not isinstance(terms, Mapping):
        return []
    listed = bom_lines_from_plan(result, _list_prices(prices, terms), currency=currency, request=request)
    seen_l: dict = {}
    by_key = {_key(line, seen_l): line for line in listed}
    for line in listed:
        if line["category"] in (BomCategory.SOFTWARE, BomCategory.OM):
            per_year = _per_year_list(line["category"], prices, terms, result)
            if per_year is not None:
                line["unit_price"] = per_year
    seen: dict = {}
    matched = set()
    for line in lines:
        key = _key(line, seen)
        twin = by_key.get(key)
        if twin is None:
            continue
        matched.add(key)
        list_price = twin["unit_price"]
        if list_price and list_price != line["unit_price"]:
            line["list_unit_price"] = list_price
            if not line["non_catalog"]:
                line["note"] = OVERRIDE_NOTE
    # What the catalog prices but the plan dropped (a term set to 0, e.g. installation waived).
    return [line for key, line in by_key.items() if key not in matched and line["unit_price"]]


def approval_assessment(
    lines: list[dict], dropped: list[dict], discount: Decimal, threshold: Decimal
) -> tuple[str, list[dict]]:
    """(approval state, reasons) for a revision's priced lines.

    Pending when: the quote discount or any line discount exceeds the threshold;
    any overridden line's price after its line and quote discounts is more than
    the threshold below its list price; everything together (list total at catalog prices against the
    net the customer pays) is more than the threshold below the list; or any
    hardware is not from the catalog; or a server, switch, optics or rack line is priced on request
    (the plan's cost of ownership is withheld for it and the total leaves it out, so the offer is not
    a firm total: a sales manager approves sending it so).  Figures are unrounded,
    so a cut of exactly the threshold never needs approval.
    """
    reasons: list[dict] = []
    offer = [line for line in lines if line["category"] != BomCategory.LEASE]
    if discount > threshold:
        reasons.append({"code": "quote_discount", "fraction": str(discount)})
    for line in offer:
        if line["discount"] > threshold:
            reasons.append(
                {"code": "line_discount", "sku": line["sku"], "description": line["description_en"],
                 "fraction": str(line["discount"])}
            )  # fmt: skip
    for line in lines:
        list_price = line.get("list_unit_price")
        if list_price:
            capex = (1 - discount) if line["category"] in CAPEX_CATEGORIES else 1
            paid = line["unit_price"] * (1 - line["discount"]) * capex
            cut = 1 - paid / list_price
            if cut > threshold:
                reasons.append(
                    {"code": "price_override", "sku": line["sku"], "description": line["description_en"],
                     "unit_price": str(line["unit_price"]), "list_unit_price": str(list_price),
                     "fraction": str(cut.quantize(Decimal("0.0001")))}
                )  # fmt: skip

    def net_of(line: Mapping) -> Decimal:
        capex = (1 - discount) if line["category"] in CAPEX_CATEGORIES else 1
        return line["quantity"] * line["unit_price"] * (1 - line["discount"]) * capex

    # The list total: each line at its list price (its own price when it has none on the list),
    # plus what the catalog prices but the plan dropped.
    gross = sum(
        (line["quantity"] * (line.get("list_unit_price") or line["unit_price"]) for line in offer), ZERO
    )
    gross += sum(
        (line["quantity"] * line["unit_price"] for line in dropped if line["category"] != BomCategory.LEASE),
        ZERO,
    )
    net = sum((net_of(line) for line in offer), ZERO)
    if gross and 1 - net / gross > threshold and not any(r["code"] == "quote_discount" for r in reasons):
        reasons.append({"code": "overall", "fraction": str((1 - net / gross).quantize(Decimal("0.0001")))})
    for line in lines:
        if line.get("non_catalog"):
            reasons.append({"code": "non_catalog", "sku": line["sku"], "description": line["description_en"]})
    for line in lines:
        if (
            line.get("note") == PRICE_ON_REQUEST_NOTE
            and not line["unit_price"]
            and line["category"] in FIRM_TOTAL_CATEGORIES
        ):
            reasons.append(
                {"code": "price_on_request", "sku": line["sku"], "description": line["description_en"]}
            )
    return (ApprovalState.PENDING if reasons else ApprovalState.NOT_NEEDED), reasons


def _amount(value: Any) -> str:
    number = to_decimal(value)
    return formatting.format_number(number, 2) if number is not None else str(value or "")


def _percent(fraction: Any) -> str:
    return formatting.format_percent(to_decimal(fraction, ZERO), 2)


def reason_texts(reasons: Any) -> list[str]:
    """The approval reasons in the user's language."""
    out = []
    for reason in reasons if isinstance(reasons, list) else []:
        if not isinstance(reason, Mapping):
            continue
        code = reason.get("code")
        what = str(reason.get("description") or reason.get("sku") or "")
        if code == "quote_discount":
            out.append(_("Quote discount of %(pct)s.") % {"pct": _percent(reason.get("fraction"))})
        elif code == "line_discount":
            out.append(
                _("Line discount of %(pct)s on %(what)s.")
                % {"pct": _percent(reason.get("fraction")), "what": what}
            )
        elif code == "price_override":
            out.append(
                _(
                    "%(what)s is priced at %(price)s instead of the list price %(list)s (%(pct)s below the list)."
                )
                % {
                    "what": what,
                    "price": _amount(reason.get("unit_price")),
                    "list": _amount(reason.get("list_unit_price")),
                    "pct": _percent(reason.get("fraction")),
                }
            )
        elif code == "overall":
            out.append(
                _("All prices together are %(pct)s below the list.")
                % {"pct": _percent(reason.get("fraction"))}
            )
        elif code == "non_catalog":
            out.append(_("%(what)s is not a catalog item (hardware typed in by hand).") % {"what": what})
        elif code == "price_on_request":
            out.append(
                _("%(what)s is priced on request: the total leaves it out, so the offer is not a firm total.")
                % {"what": what}
            )
        elif code == "no_price_list":
            out.append(
                _("No price list is in force in %(currency)s today.")
                % {"currency": str(reason.get("currency") or "")}
            )
        elif code == "approved_earlier":
            out.append(
                _(
                    "Approved with %(revision)s by %(by)s on %(date)s. The approval covers the same "
                    "prices, list prices, discounts and quantities; a change to any of them asks again."
                )
                % {
                    "revision": str(reason.get("revision") or ""),
                    "by": str(reason.get("by") or ""),
                    "date": str(reason.get("at") or ""),
                }
            )
    return out


def discount_breakdown(revision: Any, lines: list[Any]) -> list[str]:
    """The discount of a revision explained line by line, in the user's language (issue 31:
    "12.00 %; all discounts 9.55 %" read as a contradiction).

    One sentence per line discount (its amount), one for the quote discount (the share of
    the one-time purchase lines it applies to, and the yearly services it does not), and the
    sum as a share of the list total — the same arithmetic as
    ``quotes.services.snapshot.revision_totals``: quote discount = round(Σ capex line totals
    × discount); all discounts = list total − net total.
    """
    from .bom import money

    out: list[str] = []
    offer = [line for line in lines if line.category != BomCategory.LEASE]
    zh = is_zh(get_language())
    for line in offer:
        if line.discount:
            amount = money(line.quantity * line.unit_price) - line.line_total
            what = line.description_zh if zh and line.description_zh else line.description_en
            out.append(
                _("%(what)s: line discount %(pct)s = %(amount)s.")
                % {"what": what, "pct": _percent(line.discount), "amount": _amount(amount)}
            )
    capex = [line for line in offer if line.category in CAPEX_CATEGORIES]
    services = [line for line in offer if line.category not in CAPEX_CATEGORIES]
    capex_total = sum((line.line_total for line in capex), ZERO)
    services_total = sum((line.line_total for line in services), ZERO)
    if revision.discount:
        out.append(
            _(
                "Quote discount %(pct)s on the one-time purchase lines (%(base)s) = %(amount)s; "
                "it does not apply to the yearly services (%(services)s)."
            )
            % {
                "pct": _percent(revision.discount),
                "base": _amount(capex_total),
                "amount": _amount(money(capex_total * revision.discount)),
                "services": _amount(services_total),
            }
        )
    if out:
        out.append(
            _("All discounts together: %(amount)s, %(pct)s of the list total %(total)s.")
            % {
                "amount": _amount(revision.list_total - revision.net_total),
                "pct": _percent(revision.effective_discount),
                "total": _amount(revision.list_total),
            }
        )
    return out
