"""Display helpers for quote pages: exact money and fractions, status badges, the create form."""

from __future__ import annotations

import uuid
from decimal import Decimal, InvalidOperation

from django import template

from configurator.public import formatting, is_zh
from quotes import selectors
from quotes.forms import QuoteCreateForm
from quotes.statuses import ApprovalState, QuoteStatus

register = template.Library()


@register.filter
def money(value) -> str:
    """``Decimal("24000000")`` → ``24,000,000.00``; empty for None.  Never goes through float."""
    if value is None or value == "":
        return ""
    try:
        number = value if isinstance(value, Decimal) else Decimal(str(value))
    except (InvalidOperation, ValueError):
        return str(value)
    return formatting.format_number(number, 2)


@register.filter
def signed_money(value) -> str:
    if value is None:
        return ""
    text = money(value)
    return f"+{text}" if value > 0 else text


@register.filter
def percent(value) -> str:
    """A fraction as a percentage: ``Decimal("0.125")`` → ``12.50 %``."""
    if value is None or value == "":
        return ""
    try:
        number = value if isinstance(value, Decimal) else Decimal(str(value))
    except (InvalidOperation, ValueError):
        return str(value)
    return formatting.format_percent(number, 2)


@register.filter
def quantity(value) -> str:
    """A quantity without trailing zeros: ``Decimal("8.000")`` → ``8``."""
    if value is None:
        return ""
    number = value if isinstance(value, Decimal) else Decimal(str(value))
    text = f"{number.normalize():f}"
    return text


_STATUS_BADGE = {QuoteStatus.WON: "ok", QuoteStatus.LOST: "error", QuoteStatus.EXPIRED: "warning"}
_APPROVAL_BADGE = {
    ApprovalState.PENDING: "warning",
    ApprovalState.APPROVED: "ok",
    ApprovalState.REJECTED: "error",
}


@register.filter
def status_badge(status: str) -> str:
    """The badge colour class for a quote status (colour only where it means something)."""
    return _STATUS_BADGE.get(status, "")


@register.filter
def approval_badge(state: str) -> str:
    return _APPROVAL_BADGE.get(state, "")


@register.filter
def severity_class(check) -> str:
    value = check.get("severity", "") if isinstance(check, dict) else ""
    return value if value in {"ok", "warning", "error"} else ""


@register.filter
def check_message(check, language_code: str = "") -> str:
    """The check's message in the page language (``message_zh`` / ``message_en``)."""
    if not isinstance(check, dict):
        return ""
    english = check.get("message") or check.get("message_en")
    if is_zh(language_code):
        return check.get("message_zh") or english or check.get("code", "")
    return english or check.get("message_zh") or check.get("code", "")


@register.simple_tag
def new_idempotency_key() -> str:
    """A fresh idempotency key for a form that creates something (one per rendering)."""
    return uuid.uuid4().hex


@register.inclusion_tag("quotes/_create_form.html", takes_context=True)
def quote_create_form(context, request_json: str = "", form_id: str = "quote-create-form"):
    """The "Create quote" form for the configurator page.

    ``request_json`` is the configuration request as JSON text (catalog slugs);
    it posts to ``quotes:create``, which re-plans on the server.
    """
    request = context.get("request")
    user = getattr(request, "user", None)
    return {
        "form": QuoteCreateForm(user, initial={"request_json": request_json}),
        "customers": selectors.customers_visible_to(user) if user is not None else [],
        "request_json": request_json,
        "idempotency_key": uuid.uuid4().hex,
        "form_id": form_id,
        "csrf_token": context.get("csrf_token"),
        "can_create": bool(user and user.has_perm("quotes.add_quote")),
    }


@register.simple_tag
def described_input(path, value):
    """A request path and one of its values as the configurator's form names them (label, value
    text): the revision comparison shows "双集群的参数面交换机 · 每个集群独立", not
    ``topology.pair_switches separate``."""
    from configurator.public import ConfiguratorForm

    if str(value) == "—":  # the side of a change that has no value (selectors.Change)
        return ConfiguratorForm.describe(str(path), None)[0], "—"
    return ConfiguratorForm.describe(str(path), value)
