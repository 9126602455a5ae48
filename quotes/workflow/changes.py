"""The sales workflow around quotes: revise the configuration (through the revision services),
compare by item, price-change impact.

The state changes of the workflow are services: a clone is ``quotes/services/cloning.py``, the
customer's share links, acceptance and questions ``quotes/services/sharing.py``, each in one
transaction with its audit row; every refusal is a ``ValidationError`` with a message for the user.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import gettext as _

from .. import selectors
from ..bom import apply_line_discounts, bom_lines_from_plan, line_total, to_decimal
from ..models import BomLine, QuoteRevision
from ..services.planning import (
    PlanningUnavailable,
    configuration_plan,
    request_at_todays_list,
    request_with_discount,
)
from ..services.revisions import revision_create_from
from ..services.snapshot import revision_totals
from ..statuses import BomCategory, QuoteStatus

OPEN_QUOTE_STATUSES = (QuoteStatus.DRAFT, QuoteStatus.SENT)


# --------------------------------------------------------------------------- revise the configuration


def _planned_changes(request_json: Mapping, discount: Decimal) -> dict[str, Any]:
    """Plan ``request_json`` (with the quote discount) against today's catalog: the changes of a revision."""
    try:
        plan = configuration_plan(request_with_discount(request_json, discount))
    except PlanningUnavailable as exc:
        raise ValidationError(str(exc)) from exc
    return {
        "request_json": request_with_discount(request_json, discount),
        "resolved_json": plan.resolved_json,
        "result_json": plan.result_json,
        "prices_json": plan.prices_json,
        "usd_rate": plan.usd_rate,
        "currency": plan.currency,
    }


def revise_configuration(
    *, revision: QuoteRevision, request_json: Any, by, note: str = "", expected_version: int | None = None
) -> QuoteRevision:
    """The next draft revision of ``revision``'s quote with a new configuration (planned on the server).

    The quote discount and line discounts carry over; ``revision`` (and every
    issued revision) is left as it was.
    """
    if not isinstance(request_json, dict) or not request_json:
        raise ValidationError({"request_json": _("The configuration must be a non-empty JSON object.")})
    changes = _planned_changes(request_json, revision.discount)
    changes["note"] = note.strip() or _("Configuration revised from %(number)s.") % {
        "number": revision.number
    }
    return revision_create_from(revision=revision, changes=changes, by=by, expected_version=expected_version)


def same_revision_already_saved(*, revision: QuoteRevision, request_json: Any, by) -> QuoteRevision | None:
    """The latest revision of the quote when ``by`` made it from ``revision`` with this very
    configuration (a repeated submit of the same form), else None."""
    latest = revision.quote.revisions.order_by("-index").first()
    if latest is None or latest.based_on_id != revision.pk or latest.created_by_id != by.pk:
        return None
    if latest.request_json != request_with_discount(request_json, revision.discount):
        return None
    return latest


def replan_at_current_prices(
    *, revision: QuoteRevision, by, expected_version: int | None = None
) -> QuoteRevision:
    """A new draft revision of the same configuration, planned with today's catalog and prices."""
    changes = _planned_changes(request_at_todays_list(revision.request_json), revision.discount)
    changes["note"] = _("Re-planned with today's prices (from %(number)s).") % {"number": revision.number}
    return revision_create_from(revision=revision, changes=changes, by=by, expected_version=expected_version)


# --------------------------------------------------------------------------- compare by item


@dataclass(frozen=True)
class LineSide:
    quantity: Decimal
    unit: str
    unit_price: Decimal
    discount: Decimal
    line_total: Decimal
    description: str


@dataclass(frozen=True)
class LineRow:
    """One BOM item (category + SKU) in two revisions."""

    key: str
    category: str
    sku: str
    description: str
    a: LineSide | None
    b: LineSide | None

    @property
    def kind(self) -> str:
        if self.a is None:
            return "added"
        if self.b is None:
            return "removed"
        if (self.a.quantity, self.a.unit_price, self.a.discount, self.a.line_total) != (
            self.b.quantity,
            self.b.unit_price,
            self.b.discount,
            self.b.line_total,
        ):
            return "changed"
        return "same"

    @property
    def is_lease(self) -> bool:
        return self.category == BomCategory.LEASE

    @property
    def delta(self) -> Decimal:
        return (self.b.line_total if self.b else Decimal("0")) - (
            self.a.line_total if self.a else Decimal("0")
        )

    @property
    def quantity_delta(self) -> Decimal:
        return (self.b.quantity if self.b else Decimal("0")) - (self.a.quantity if self.a else Decimal("0"))


@dataclass
class ItemComparison:
    rows: list[LineRow] = field(default_factory=list)
    lines_delta: Decimal = Decimal("0")  # Σ change of the purchase lines' totals
    quote_discount_a: Decimal = Decimal("0")  # the quote-level discount amount of each side
    quote_discount_b: Decimal = Decimal("0")
    net_delta: Decimal = Decimal("0")

    @property
    def changed(self) -> list[LineRow]:
        return [row for row in self.rows if row.kind != "same"]

    @property
    def quote_discount_delta(self) -> Decimal:
        return self.quote_discount_b - self.quote_discount_a

    @property
    def quote_discount_effect(self) -> Decimal:
        """What the change of the quote discount does to the net total (a larger discount lowers it)."""
        return -self.quote_discount_delta


def _line_key(line: BomLine, seen: dict[str, int]) -> str:
    if line.sku:
        return f"{line.category}:{line.sku}"
    seen[line.category] = seen.get(line.category, 0) + 1
    return f"{line.category}:#{seen[line.category]}"


def _sides(revision: QuoteRevision, zh: bool) -> dict[str, tuple[BomLine, LineSide]]:
    out: dict[str, tuple[BomLine, LineSide]] = {}
    seen: dict[str, int] = {}
    for line in revision.lines.all():
        description = line.description_zh if zh and line.description_zh else line.description_en
        out[_line_key(line, seen)] = (
            line,
            LineSide(line.quantity, line.unit, line.unit_price, line.discount, line.line_total, description),
        )
    return out


def _quote_discount_amount(revision: QuoteRevision) -> Decimal:
    """The quote-level discount amount: Σ purchase line totals − net total (see revision_totals)."""
    lines = sum(
        (line.line_total for line in revision.lines.all() if line.category != BomCategory.LEASE), Decimal("0")
    )
    return lines - revision.net_total


def compare_items(a: QuoteRevision, b: QuoteRevision, *, zh: bool = False) -> ItemComparison:
    """The two revisions' BOM lines matched by item (category + SKU, never list position),
    and the net total's change explained: Σ line changes − change of the quote discount."""
    side_a, side_b = _sides(a, zh), _sides(b, zh)
    order = list(side_b) + [key for key in side_a if key not in side_b]
    rows = []
    for key in order:
        line = (side_b.get(key) or side_a.get(key))[0]
        rows.append(
            LineRow(
                key=key,
                category=line.category,
                sku=line.sku,
                description=(side_b.get(key) or side_a.get(key))[1].description,
                a=side_a[key][1] if key in side_a else None,
                b=side_b[key][1] if key in side_b else None,
            )
        )
    rows.sort(
        key=lambda r: list(BomCategory.values).index(r.category) if r.category in BomCategory.values else 99
    )
    comparison = ItemComparison(rows=rows)
    comparison.lines_delta = sum((r.delta for r in rows if not r.is_lease), Decimal("0"))
    comparison.quote_discount_a = _quote_discount_amount(a)
    comparison.quote_discount_b = _quote_discount_amount(b)
    comparison.net_delta = b.net_total - a.net_total
    return comparison


# --------------------------------------------------------------------------- price changes


@dataclass(frozen=True)
class PriceImpact:
    revision: QuoteRevision
    old_net: Decimal
    new_net: Decimal | None  # None when the configuration can no longer be planned
    changed_items: list[tuple[str, Decimal, Decimal]]  # (SKU, old unit price, new unit price)
    error: str = ""

    @property
    def delta(self) -> Decimal | None:
        return None if self.new_net is None else self.new_net - self.old_net


def open_revisions(user):
    """The latest revision of each open (draft or sent) quote the user may edit."""
    quotes = [q for q in selectors.quotes_visible_to(user).filter(status__in=OPEN_QUOTE_STATUSES)]
    out = []
    for quote in quotes:
        if not selectors.can_edit(user, quote):
            continue
        latest = quote.revisions.select_related("quote", "quote__customer").order_by("-index").first()
        if latest is not None:
            out.append(latest)
    return out


def priced_preview(revision: QuoteRevision) -> tuple[Decimal, dict[str, Decimal]]:
    """What ``revision`` would cost if re-planned today: (net total, unit price by item key)."""
    plan = configuration_plan(request_with_discount(revision.request_json, revision.discount))
    line_discounts = {
        f"{line.category}:{line.sku}": line.discount for line in revision.lines.all() if line.discount
    }
    lines = apply_line_discounts(
        bom_lines_from_plan(
            plan.result_json, plan.prices_json, currency=plan.currency, request=plan.resolved_json
        ),
        line_discounts,
    )
    for line in lines:
        line["line_total"] = line_total(line["quantity"], line["unit_price"], line["discount"])
    totals = revision_totals(lines, revision.discount, plan.result_json)
    return totals["net_total"], {f"{line['category']}:{line['sku']}": line["unit_price"] for line in lines}


def _current_items(currency: str, cache: dict) -> tuple[str, dict[str, tuple]] | None:
    """(slug, {sku: (unit price, lease per month)}) of the price list in force for ``currency``."""
    if currency not in cache:
        from catalog.selectors import price_list_in_force

        price_list = price_list_in_force(currency)
        cache[currency] = (
            None
            if price_list is None
            else (
                price_list.slug,
                {item.sku: (item.unit_price, item.lease_per_month) for item in price_list.items.all()},
            )
        )
    return cache[currency]


def may_be_affected(revision: QuoteRevision, cache: dict) -> bool:
    """Cheap test before re-planning: did the price list in force, or a price the revision froze, change?

    Conservative: anything it cannot compare counts as possibly affected.
    """
    prices = revision.prices_json if isinstance(revision.prices_json, dict) else {}
    items = prices.get("items")
    current = _current_items(revision.currency, cache)
    if not isinstance(items, list) or not items or current is None:
        return True
    slug, by_sku = current
    for item in items:
        if not isinstance(item, dict):
            return True
        if item.get("price_list_slug") != slug:
            return True  # a new list is in force
        if item.get("overridden"):
            continue  # the engineer's own price stays when re-planned
        now = by_sku.get(item.get("sku"))
        if now is None:
            return True
        frozen_price = to_decimal(item.get("unit_price"))
        frozen_lease = to_decimal(item.get("lease_per_month"))
        if frozen_price != now[0] or (frozen_lease or None) != (now[1] or None):
            return True
    return False


def price_impact(user) -> list[PriceImpact]:
    """Open revisions whose prices differ from today's catalog, with their old and new net totals.

    Each revision is looked at once per price change: what was found is stored with the catalog's
    version (:class:`PriceImpactEntry`) and read back on the next visit, so the report costs a
    query per quote instead of a re-plan (issue 27, finding 12).  Of the rest, only revisions whose
    frozen prices differ from the list in force are re-planned (:func:`may_be_affected`).
    """
    from configurator.public import catalog_version

    from .models import PriceImpactEntry

    version = catalog_version()
    revisions = open_revisions(user)
    stored = {
        entry.revision_id: entry
        for entry in PriceImpactEntry.objects.filter(
            catalog_version=version, revision__in=[r.pk for r in revisions]
        )
    }
    rows = []
    cache: dict = {}
    for revision in revisions:
        entry = stored.get(revision.pk) or _impact_entry(revision, version, cache)
        if not entry.affected:
            continue
        rows.append(
            PriceImpact(
                revision,
                entry.old_net,
                entry.new_net,
                [(sku, Decimal(old), Decimal(new)) for sku, old, new in entry.changed_items],
                error=entry.error,
            )
        )
    return rows


def _impact_entry(revision: QuoteRevision, version: int, cache: dict):
    """Work out and store what a price change does to ``revision`` (once per catalog version)."""
    from django.db import IntegrityError

    from .models import PriceImpactEntry

    entry = PriceImpactEntry(revision=revision, catalog_version=version, old_net=revision.net_total)
    if may_be_affected(revision, cache):
        before = {f"{line.category}:{line.sku}": line.unit_price for line in revision.lines.all()}
        try:
            new_net, after = priced_preview(revision)
        except (ValidationError, PlanningUnavailable) as exc:
            entry.affected = True
            entry.error = " ".join(exc.messages) if isinstance(exc, ValidationError) else str(exc)
        else:
            changed = [
                (key.split(":", 1)[1], before[key], after[key])
                for key in after
                if key in before and before[key] != after[key]
            ]
            entry.new_net = new_net
            entry.changed_items = [[sku, str(old), str(new)] for sku, old, new in changed]
            entry.affected = bool(changed) or new_net != revision.net_total
    try:
        with transaction.atomic():
            entry.save()
            PriceImpactEntry.objects.filter(revision=revision).exclude(catalog_version=version).delete()
    except IntegrityError:  # another visit stored it first
        return PriceImpactEntry.objects.get(revision=revision, catalog_version=version)
    return entry
