"""Quotes: created from a planned configuration with revision R1, and edited while draft.

Quote numbers come from a per-year counter row locked with
``SELECT … FOR UPDATE`` (on SQLite the IMMEDIATE transaction mode in settings
serialises writers instead), backed by a unique constraint.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from accounts import roles

from ..models import Customer, Quote, QuoteNumberCounter
from ..statuses import AuditAction, Language, PdfStatus, QuoteStatus, RevisionStatus
from ..textcheck import refuse_unsafe
from .base import (
    audit,
    full_clean,
    parse_discount,
    parse_rate,
    quote_lock,
    quote_save,
    require_edit,
    require_perm,
)
from .customers import customer_resolve
from .planning import PlannedConfiguration
from .revisions import revision_build


def quote_number_allocate(*, year: int) -> tuple[int, str]:
    """Next sequence number of ``year`` and the quote number; call inside a transaction."""
    QuoteNumberCounter.objects.bulk_create(
        [QuoteNumberCounter(year=year, last_number=0)], ignore_conflicts=True
    )
    counter = QuoteNumberCounter.objects.select_for_update().get(year=year)
    counter.last_number += 1
    counter.save(update_fields=["last_number"])
    return counter.last_number, f"Q-{year}-{counter.last_number:04d}"


def quote_create_from_configuration(
    *,
    by,
    customer: Customer | str,
    request_json: dict,
    resolved_json: dict,
    result_json: dict,
    prices_json: Any,
    usd_rate: Decimal | str,
    currency: str,
    language: str,
    discount: Decimal | str | int = 0,
    title: str = "",
    valid_until: dt.date | None = None,
    creation_key: str = "",
) -> Quote:
    """Create a quote with revision R1 and its BOM lines, all or nothing.

    ``creation_key`` (the create form's idempotency key) makes a repeated call
    return the quote the first call created, unchanged, instead of a second one.

    ``customer`` is an existing customer of the user's team or the name of a
    new one.  The number is ``Q-<year>-<NNNN>`` from the per-year counter; the
    validity defaults to today + ``settings.QUOTE_VALIDITY_DAYS``.
    """
    require_perm(by, "quotes.add_quote")
    for name, value in (
        ("request_json", request_json),
        ("resolved_json", resolved_json),
        ("result_json", result_json),
    ):
        if not isinstance(value, dict):
            raise ValidationError({name: _("Must be a JSON object.")})
    if language not in Language.values:
        raise ValidationError({"language": _("Choose Chinese or English.")})
    discount_value = parse_discount(discount)
    rate = parse_rate(usd_rate)
    plan = PlannedConfiguration(
        request_json=request_json,
        resolved_json=resolved_json,
        result_json=result_json,
        prices_json=prices_json,
        usd_rate=rate,
        currency=str(currency or "").upper(),
    )
    today = timezone.localdate()
    if creation_key:
        existing = quote_created_with(by=by, creation_key=creation_key)
        if existing is not None:
            return existing
    try:
        return _quote_create(
            by=by,
            customer=customer,
            plan=plan,
            language=language,
            discount=discount_value,
            title=title,
            valid_until=valid_until,
            today=today,
            creation_key=creation_key,
        )
    except IntegrityError:
        # The same form posted twice at once: the other request created it first.
        existing = quote_created_with(by=by, creation_key=creation_key) if creation_key else None
        if existing is None:
            raise
        return existing


def quote_created_with(*, by, creation_key: str) -> Quote | None:
    """The quote ``by`` created from the form with this idempotency key, if any."""
    if not creation_key:
        return None
    return Quote.objects.filter(owner=by, creation_key=creation_key).first()


def _quote_create(
    *,
    by,
    customer,
    plan: PlannedConfiguration,
    language: str,
    discount: Decimal,
    title: str,
    valid_until: dt.date | None,
    today: dt.date,
    creation_key: str,
) -> Quote:
    discount_value = discount
    refuse_unsafe("title", title)
    with transaction.atomic():
        customer_obj = customer_resolve(by=by, customer=customer)
        sequence, number = quote_number_allocate(year=today.year)
        quote = Quote(
            number=number,
            year=today.year,
            sequence=sequence,
            title=title.strip(),
            customer=customer_obj,
            owner=by,
            team=roles.team_of(by),
            currency=plan.currency,
            language=language,
            valid_until=valid_until or today + dt.timedelta(days=settings.QUOTE_VALIDITY_DAYS),
            status=QuoteStatus.DRAFT,
            creation_key=creation_key,
        )
        # The (owner, creation key) uniqueness is left to the database: a racing twin then
        # fails with IntegrityError, which quote_create_from_configuration turns into its quote.
        full_clean(quote, exclude=["creation_key"])
        quote.save()
        audit(
            actor=by,
            action=AuditAction.QUOTE_CREATED,
            obj=quote,
            quote=quote,
            detail={"number": number, "customer": customer_obj.name, "title": quote.title},
        )
        revision_build(
            quote=quote,
            index=1,
            by=by,
            plan=plan,
            discount=discount_value,
            line_discounts={},
            based_on=None,
            change_note="",
        )
    return quote


QUOTE_EDITABLE_FIELDS = ("title", "customer", "valid_until", "language")


def quote_update(*, quote: Quote, by, expected_version: int, **changes: Any) -> Quote:
    """Change a draft quote's title, customer, validity or proposal language.

    Refuses with :class:`QuoteConflictError` when ``expected_version`` is not
    the quote's current version (somebody else saved first).
    """
    unknown = set(changes) - set(QUOTE_EDITABLE_FIELDS)
    if unknown:
        raise ValueError(f"quote_update cannot change {sorted(unknown)}")
    if isinstance(changes.get("title"), str):
        refuse_unsafe("title", changes["title"])
    with transaction.atomic():
        locked = quote_lock(quote, expected_version)
        require_edit(by, locked)
        if locked.status != QuoteStatus.DRAFT:
            raise ValidationError(_("Only a draft quote can be edited; reopen it for revision first."))
        if "customer" in changes:
            changes["customer"] = customer_resolve(by=by, customer=changes["customer"])
        before = {name: str(getattr(locked, name)) for name in changes}
        for name, value in changes.items():
            setattr(locked, name, value.strip() if isinstance(value, str) else value)
        changed = [name for name in changes if str(getattr(locked, name)) != before[name]]
        if changed:
            quote_save(locked, changed)
            # The proposal prints the quote's header: a draft revision's PDF no
            # longer matches it.  Issued revisions keep the PDF that was issued.
            locked.revisions.filter(
                status=RevisionStatus.DRAFT, pdf_status__in=[PdfStatus.READY, PdfStatus.FAILED]
            ).update(pdf_status=PdfStatus.NONE, pdf_error="")
            audit(
                actor=by,
                action=AuditAction.QUOTE_UPDATED,
                obj=locked,
                quote=locked,
                detail={name: {"from": before[name], "to": str(getattr(locked, name))} for name in changed},
            )
    return locked
