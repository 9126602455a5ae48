"""What every quote service shares: the audit row, the permission checks, the quote's
optimistic lock and the parsing of discounts and exchange rates.

These are building blocks, not services: they run inside the caller's
``transaction.atomic`` block and check only what they say.  ``quotes.workflow``
reuses them for its own state changes.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.core.exceptions import NON_FIELD_ERRORS, PermissionDenied, ValidationError
from django.utils import timezone
from django.utils.translation import gettext as _

from .. import selectors
from ..bom import to_decimal
from ..models import AuditEvent, Quote

MAX_DISCOUNT = Decimal("0.9")


class QuoteConflictError(Exception):
    """The quote changed since the caller read it (optimistic lock)."""

    def __init__(self, quote: Quote, expected_version: int):
        self.quote = quote
        self.expected_version = expected_version
        last = quote.audit_events.select_related("actor").order_by("-created_at", "-id").first()
        who = (
            (last.actor.get_username() if last and last.actor else _("someone else"))
            if last
            else _("someone else")
        )
        when = timezone.localtime(last.created_at).strftime("%Y-%m-%d %H:%M") if last else ""
        super().__init__(
            _(
                "%(number)s was changed by %(who)s at %(when)s after you opened it "
                "(your copy is version %(yours)s, the quote is now version %(now)s). "
                "Nothing was saved: reload the page to see their changes, then try again."
            )
            % {
                "number": quote.number,
                "who": who,
                "when": when,
                "yours": expected_version,
                "now": quote.version,
            }
        )


def discount_threshold() -> Decimal:
    """settings.QUOTE_DISCOUNT_APPROVAL_THRESHOLD as a Decimal fraction."""
    return Decimal(str(settings.QUOTE_DISCOUNT_APPROVAL_THRESHOLD))


def rows_in_hand(obj) -> list[str]:
    """The foreign keys of ``obj`` that point at the instance it holds, already in the database (read
    from it or saved in this transaction): ``full_clean`` need not ask the database whether that row
    exists.  Django's ``ForeignKey.validate`` runs one ``SELECT 1 … LIMIT 1`` per key and row — 39 of
    a new quote's 84 queries, 25 of them for its BOM lines' revision.  A key with ``limit_choices_to``
    is always checked (the query also applies that filter); the database's own foreign-key constraint
    still refuses a row deleted meanwhile."""
    cached = obj._state.fields_cache
    names = []
    for field in obj._meta.concrete_fields:
        if not field.many_to_one or field.name not in cached or field.remote_field.limit_choices_to:
            continue
        related = cached[field.name]
        if (
            related is not None
            and not related._state.adding
            and related.pk is not None
            and getattr(related, field.target_field.attname) == getattr(obj, field.attname)
        ):
            names.append(field.name)
    return names


def full_clean(
    obj,
    *,
    exclude: list[str] | tuple[str, ...] = (),
    validate_unique: bool = True,
    validate_constraints: bool = True,
) -> None:
    """``obj.full_clean()`` without asking the database for the rows it holds (:func:`rows_in_hand`).

    Only the fields' own checks leave those keys out: the uniqueness and constraint checks still see
    them (``full_clean(exclude=…)`` would skip every constraint naming an excluded field, such as a
    customer's name unique per team), and the errors are gathered as ``Model.full_clean`` gathers them."""
    errors: dict = {}
    try:
        obj.full_clean(
            exclude=[*exclude, *rows_in_hand(obj)], validate_unique=False, validate_constraints=False
        )
    except ValidationError as error:
        errors = error.update_error_dict(errors)
    skip = {*exclude, *(name for name in errors if name != NON_FIELD_ERRORS)}
    for wanted, validate in (
        (validate_unique, obj.validate_unique),
        (validate_constraints, obj.validate_constraints),
    ):
        if wanted:
            try:
                validate(exclude=skip)
            except ValidationError as error:
                errors = error.update_error_dict(errors)
    if errors:
        raise ValidationError(errors)


def audit(
    *, actor, action: str, obj, quote: Quote | None, detail: Mapping[str, Any] | None = None
) -> AuditEvent:
    """Write the audit row of a change to ``obj`` (inside the change's transaction)."""
    event = AuditEvent(
        actor=actor,
        action=action,
        object_type=obj._meta.model_name,
        object_id=str(obj.pk),
        quote=quote,
        detail=dict(detail or {}),
    )
    full_clean(event)
    event.save()
    return event


def require_perm(user, perm: str) -> None:
    """Refuse an inactive user or one whose role lacks ``perm``."""
    if not user.is_active or not user.has_perm(perm):
        raise PermissionDenied(_("Your role does not allow this."))


def require_edit(user, quote: Quote) -> None:
    """Refuse a user who may see ``quote`` but not change it."""
    if not selectors.can_edit(user, quote):
        raise PermissionDenied(_("You may view this quote but not change it."))


def quote_lock(quote: Quote, expected_version: int | None) -> Quote:
    """Reload the quote row locked for this transaction; refuse if the caller's copy is stale."""
    locked = (
        Quote.objects.select_for_update(of=("self",))
        .select_related("customer", "team", "owner")
        .get(pk=quote.pk)
    )
    if expected_version is not None and locked.version != expected_version:
        raise QuoteConflictError(locked, expected_version)
    return locked


def quote_save(quote: Quote, fields: list[str]) -> None:
    """Validate and write ``fields``, incrementing the version only if nobody else did first."""
    quote.full_clean()
    previous = quote.version
    values = {name: getattr(quote, name) for name in fields}
    updated = Quote.objects.filter(pk=quote.pk, version=previous).update(
        **values, version=previous + 1, updated_at=timezone.now()
    )
    if updated != 1:
        raise QuoteConflictError(Quote.objects.get(pk=quote.pk), previous)
    quote.version = previous + 1


def parse_discount(value: Any, field: str = "discount") -> Decimal:
    """A discount fraction between 0 and ``MAX_DISCOUNT``, or a ``ValidationError`` on ``field``."""
    number = to_decimal(value)
    if number is None or number < 0 or number > MAX_DISCOUNT:
        raise ValidationError({field: _("Enter a discount between 0 and 0.9 (a fraction: 0.12 means 12 %).")})
    return number


def parse_rate(value: Any) -> Decimal:
    """A positive exchange rate to six decimals, or a ``ValidationError`` on ``usd_rate``."""
    rate = to_decimal(value)
    if rate is None or rate <= 0 or rate >= 10**8:
        raise ValidationError({"usd_rate": _("The exchange rate must be a positive number.")})
    return rate.quantize(Decimal("0.000001"))
