"""Customers: created in the user's team, found by name when a quote names one."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import gettext as _

from accounts import roles

from .. import selectors
from ..models import Customer
from ..statuses import AuditAction
from ..textcheck import refuse_unsafe
from .base import audit, full_clean, require_perm


def customer_create(
    *,
    by,
    name: str,
    industry: str = "",
    contact: str = "",
    notes: str = "",
) -> Customer:
    """Create a customer in the user's team (names are unique per team, case-insensitively)."""
    require_perm(by, "quotes.add_quote")
    refuse_unsafe("name", name)
    with transaction.atomic():
        customer = Customer(
            name=name.strip(),
            industry=industry.strip(),
            contact=contact.strip(),
            notes=notes.strip(),
            team=roles.team_of(by),
            created_by=by,
        )
        full_clean(customer)
        customer.save()
        audit(
            actor=by,
            action=AuditAction.CUSTOMER_CREATED,
            obj=customer,
            quote=None,
            detail={"name": customer.name},
        )
    return customer


def customer_resolve(*, by, customer: Customer | str) -> Customer:
    """An existing customer of ``by``'s team, or one found or created by name."""
    if isinstance(customer, Customer):
        if not selectors.customers_visible_to(by).filter(pk=customer.pk).exists():
            raise ValidationError({"customer": _("Choose one of your team's customers.")})
        return customer
    name = str(customer or "").strip()
    if not name:
        raise ValidationError({"customer": _("Choose a customer or type the name of a new one.")})
    refuse_unsafe("customer", name)
    return selectors.customer_find_by_name(user=by, name=name) or customer_create(by=by, name=name)
