"""A quote cloned from a revision: a new draft quote with the revision's configuration, re-planned.

Moved here from the sales workflow (``quotes/workflow/changes.py``): every state change of a quote is a service, in one
transaction with its audit row.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from accounts import roles

from .. import selectors
from ..models import Quote, QuoteRevision
from ..statuses import AuditAction, QuoteStatus
from .base import audit, require_perm
from .customers import customer_resolve
from .planning import (
    PlannedConfiguration,
    has_list_record,
    plan_again,
)
from .quotes import quote_number_allocate
from .revisions import revision_build

# --------------------------------------------------------------------------- clone


def quote_clone(
    *,
    revision: QuoteRevision,
    by,
    customer: Any,
    title: str = "",
    valid_until: dt.date | None = None,
    keep_prices: bool = False,
) -> Quote:
    """A new quote (new number) for ``customer`` with the configuration and terms of ``revision``.

    The clone is re-priced at today's list (issue 27, finding 5: a clone made after a price rise
    went out at the old price with "approval not needed"), unless ``keep_prices``: then it keeps
    the source's prices, and the approval check compares them with today's list.  Same quote and
    line discounts and proposal language; the validity starts again from today.  When the source
    was approved and nothing priced changed, its approval covers the clone (issue 31).  Revisions
    planned without the catalog's list record (hand-made, older) are copied as they are.  The
    source is untouched.
    """
    require_perm(by, "quotes.add_quote")
    source_quote = selectors.quote_get_visible(user=by, pk=revision.quote_id)
    line_discounts = {
        f"{line.category}:{line.sku}": line.discount for line in revision.lines.all() if line.discount
    }
    if has_list_record(revision.prices_json):
        plan = plan_again(
            request_json=revision.request_json,
            resolved_json=revision.resolved_json,
            discount=revision.discount,
            keep_prices=keep_prices,
        )
    else:
        plan = PlannedConfiguration(
            request_json=revision.request_json,
            resolved_json=revision.resolved_json,
            result_json=revision.result_json,
            prices_json=revision.prices_json,
            usd_rate=revision.usd_rate,
            currency=revision.currency,
        )
    today = timezone.localdate()
    with transaction.atomic():
        customer_obj = customer_resolve(by=by, customer=customer)
        sequence, number = quote_number_allocate(year=today.year)
        quote = Quote(
            number=number,
            year=today.year,
            sequence=sequence,
            title=(title or source_quote.title).strip(),
            customer=customer_obj,
            owner=by,
            team=roles.team_of(by),
            currency=revision.currency,
            language=source_quote.language,
            valid_until=valid_until or today + dt.timedelta(days=settings.QUOTE_VALIDITY_DAYS),
            status=QuoteStatus.DRAFT,
        )
        quote.full_clean()
        quote.save()
        audit(
            actor=by,
            action=AuditAction.QUOTE_CLONED,
            obj=quote,
            quote=quote,
            detail={"number": number, "customer": customer_obj.name, "from": revision.number},
        )
        revision_build(
            quote=quote,
            index=1,
            by=by,
            plan=plan,
            discount=revision.discount,
            line_discounts=line_discounts,
            based_on=None,
            change_note=(
                _("Cloned from %(number)s, keeping its prices.")
                if keep_prices
                else _("Cloned from %(number)s, re-priced at today's list.")
            )
            % {"number": revision.number},
            approval_basis=revision,
        )
    return quote
