"""A price change makes a new dated version of its price list (issue 31): the list in force ends
the day before, a copy with the new price starts that day, and both stay — the history of what
was quoted at which price is the lists themselves, with the reason in the new list's notes and
in each changed item's source.

Quotes notice the change through the new items (``quotes.workflow.notify`` hears of every price item
saved); the unchanged copies are marked ``_unchanged_copy`` so they send no "price changed"
notice of their own.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from decimal import Decimal

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import gettext as _

from .models import PriceItem, PriceList
from .validators import single_line

PRICE_FIELDS = ("unit_price", "lease_per_month")


def _free_slug(base: str) -> str:
    slug, n = base[:80], 1
    while PriceList.objects.filter(slug=slug).exists():
        n += 1
        slug = f"{base[:76]}-{n}"
    return slug


def price_list_new_version(
    *,
    price_list: PriceList,
    effective_from: dt.date,
    reason: str,
    changes: Mapping[int, Mapping[str, object]],
    ref: str = "",
) -> PriceList:
    """The new version of ``price_list`` from ``effective_from`` with ``changes`` applied
    (``{item pk: {field: value}}``), all or nothing.  ``reason`` is required: it is why the
    prices changed, kept in the new list's notes and each changed item's source."""
    reason = (reason or "").strip()
    if not reason:
        raise ValidationError(
            {"change_reason": _("Say why the price changes (it is kept with the new price list).")}
        )
    single_line(reason)
    if effective_from <= price_list.effective_from:
        raise ValidationError(
            {
                "effective_from": _(
                    "A new price list starts after the current one (which starts on %(date)s)."
                )
                % {"date": price_list.effective_from.isoformat()}
            }
        )
    if price_list.effective_to is not None and effective_from > price_list.effective_to:
        raise ValidationError(
            {
                "effective_from": _("The current list ends on %(date)s.")
                % {"date": price_list.effective_to.isoformat()}
            }
        )
    with transaction.atomic():
        old = PriceList.objects.select_for_update().get(pk=price_list.pk)
        ends = old.effective_to
        old.effective_to = effective_from - dt.timedelta(days=1)
        old.full_clean()
        old.save()
        base_name = old.name.split(" (from ")[0]
        new = PriceList(
            slug=_free_slug(f"{old.slug.split('-from-')[0]}-from-{effective_from:%Y%m%d}"),
            name=f"{base_name} (from {effective_from.isoformat()})"[:120],
            currency=old.currency,
            effective_from=effective_from,
            effective_to=ends,
            usd_rate=old.usd_rate,
            notes=f"{effective_from.isoformat()}: {reason}\n{old.notes}".strip(),
            sources=dict(old.sources or {}),
        )
        new.full_clean()
        new.save()
        for item in old.items.all().order_by("pk"):
            change = changes.get(item.pk) or {}
            copy = PriceItem.objects.get(pk=item.pk)
            copy.pk = None
            copy.id = None
            copy.price_list = new
            changed = []
            for name, value in change.items():
                if getattr(copy, name) != value:
                    setattr(copy, name, value)
                    changed.append(name)
            if changed:
                copy.mark_admin_edit(changed, f"{ref}: {reason}" if ref else reason)
            else:
                copy._unchanged_copy = True
            copy.full_clean()
            copy.save()
    return new


def price_changes(before: PriceItem, after: PriceItem) -> dict[str, object]:
    """The price fields ``after`` (edited) changes against ``before`` (as stored)."""
    out = {}
    for name in PRICE_FIELDS:
        old, new = getattr(before, name), getattr(after, name)
        if (Decimal(old) if old is not None else None) != (Decimal(new) if new is not None else None):
            out[name] = new
    return out
