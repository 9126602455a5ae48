"""Every state change of customers, quotes and revisions: one function each.

Each function is keyword-only, runs in one ``transaction.atomic`` block,
validates with ``full_clean()`` before saving and writes an
:class:`~quotes.models.AuditEvent` in the same transaction, so a failure
half-way leaves nothing behind.  Business refusals raise
``django.core.exceptions.ValidationError`` (with a message for the user),
authorization refusals ``PermissionDenied``, and a stale copy of a quote
:class:`QuoteConflictError`.

Quote numbers come from a per-year counter row locked with
``SELECT … FOR UPDATE`` (on SQLite the IMMEDIATE transaction mode in settings
serialises writers instead), backed by a unique constraint.
"""

from __future__ import annotations

import copy
import datetime as dt
import hashlib
import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.files.base import ContentFile
from django.core.serializers.json import DjangoJSONEncoder
from django.db import IntegrityError, transaction
from django.db.models import Max
from django.dispatch import Signal
from django.utils import timezone
from django.utils.translation import gettext as _

from accounts import roles

from . import selectors
from .bom import (
    apply_line_discounts,
    bom_lines_from_plan,
    line_total,
    money,
    plan_totals,
    to_decimal,
)
from .frozen import header_snapshot
from .models import (
    Approval,
    AuditEvent,
    BomLine,
    Customer,
    Quote,
    QuoteNumberCounter,
    QuoteRevision,
)
from .pricing import approval_assessment, mark_lines, reason_texts
from .statuses import (
    CAPEX_CATEGORIES,
    CLOSED_STATUSES,
    ApprovalDecision,
    ApprovalState,
    AuditAction,
    BomCategory,
    Language,
    PdfStatus,
    QuoteStatus,
    RevisionStatus,
    allowed_targets,
    transition_for,
)

__all__ = [
    "QuoteConflictError",
    "PlannedConfiguration",
    "PlanningUnavailable",
    "bom_lines_from_plan",
    "configuration_plan",
    "customer_create",
    "quote_create_from_configuration",
    "quote_update",
    "quote_transition",
    "quotes_expire_overdue",
    "revision_create_from",
    "revision_issue",
    "revision_approve",
    "revision_reject",
    "revision_pdf_queue",
    "revision_pdf_start",
    "revision_pdf_store",
    "revision_pdf_fail",
    "revision_issued",
]

logger = logging.getLogger(__name__)

# Sent after the transaction that issued a revision has committed, with
# ``revision_id``: the proposal-PDF code connects here to queue the rendering
# (connect it from an AppConfig.ready() so it is registered in every process).
revision_issued = Signal()

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


def _audit(
    *, actor, action: str, obj, quote: Quote | None, detail: Mapping[str, Any] | None = None
) -> AuditEvent:
    event = AuditEvent(
        actor=actor,
        action=action,
        object_type=obj._meta.model_name,
        object_id=str(obj.pk),
        quote=quote,
        detail=dict(detail or {}),
    )
    event.full_clean()
    event.save()
    return event


def _require_perm(user, perm: str) -> None:
    if not user.is_active or not user.has_perm(perm):
        raise PermissionDenied(_("Your role does not allow this."))


def _require_edit(user, quote: Quote) -> None:
    if not selectors.can_edit(user, quote):
        raise PermissionDenied(_("You may view this quote but not change it."))


def _quote_lock(quote: Quote, expected_version: int | None) -> Quote:
    """Reload the quote row locked for this transaction; refuse if the caller's copy is stale."""
    locked = (
        Quote.objects.select_for_update(of=("self",))
        .select_related("customer", "team", "owner")
        .get(pk=quote.pk)
    )
    if expected_version is not None and locked.version != expected_version:
        raise QuoteConflictError(locked, expected_version)
    return locked


def _quote_save(quote: Quote, fields: list[str]) -> None:
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


def _parse_discount(value: Any, field: str = "discount") -> Decimal:
    number = to_decimal(value)
    if number is None or number < 0 or number > MAX_DISCOUNT:
        raise ValidationError({field: _("Enter a discount between 0 and 0.9 (a fraction: 0.12 means 12 %).")})
    return number


def _parse_rate(value: Any) -> Decimal:
    rate = to_decimal(value)
    if rate is None or rate <= 0 or rate >= 10**8:
        raise ValidationError({"usd_rate": _("The exchange rate must be a positive number.")})
    return rate.quantize(Decimal("0.000001"))


# --------------------------------------------------------------------------- planning


@dataclass(frozen=True)
class PlannedConfiguration:
    """A configuration request planned server-side: the snapshots a revision freezes."""

    request_json: dict
    resolved_json: dict
    result_json: dict
    prices_json: Any
    usd_rate: Decimal
    currency: str


class PlanningUnavailable(Exception):
    """The configurator cannot plan quotes in this installation yet."""


def _plan_for_quote():
    """``configurator.services.plan_for_quote``, imported late (the configurator owns it)."""
    try:
        from configurator.public import plan_for_quote
    except ImportError:
        logger.warning("configurator.services.plan_for_quote is not available", exc_info=True)
        return None
    return plan_for_quote


def _result_errors(result: Mapping) -> list[str]:
    messages = []
    for check in result.get("checks") or []:
        if isinstance(check, Mapping) and check.get("severity") == "error":
            messages.append(str(check.get("message") or check.get("message_en") or check.get("code")))
    return messages


def request_with_discount(request_json: Mapping, discount: Decimal) -> dict:
    """A copy of a configuration request with ``commercial.quote_discount`` set (the engine prices it)."""
    data = copy.deepcopy(dict(request_json))
    commercial = data.get("commercial")
    data["commercial"] = {
        **(commercial if isinstance(commercial, dict) else {}),
        "quote_discount": f"{Decimal(discount).normalize():f}",  # 0.1200 → "0.12"
    }
    return data


def configuration_plan(request_json: Any) -> PlannedConfiguration:
    """Plan a posted configuration request on the server (never trusting posted results).

    Raises ``ValidationError`` on ``request_json`` for a bad request or a plan
    with errors, and :class:`PlanningUnavailable` when the planner is missing.
    """
    if not isinstance(request_json, dict) or not request_json:
        raise ValidationError({"request_json": _("The configuration must be a non-empty JSON object.")})
    planner = _plan_for_quote()
    if planner is None:
        raise PlanningUnavailable(_("Quoting from the configurator is not available yet."))
    try:
        resolved, result, prices, usd_rate, currency = planner(request_json)
    except ValidationError as exc:
        raise ValidationError({"request_json": exc.messages}) from exc
    except Exception as exc:
        # The configurator reports bad requests as RequestError (``errors`` maps
        # a field path to messages); ValueError/LookupError are bad input too.
        # Anything else is a bug and propagates.
        errors = getattr(exc, "errors", None)
        if isinstance(errors, Mapping):
            messages = [f"{path}: {' '.join(map(str, msgs))}" for path, msgs in errors.items()]
        elif isinstance(exc, (ValueError, LookupError)):
            messages = [str(exc)]
        else:
            raise
        raise ValidationError({"request_json": messages}) from exc
    if not isinstance(result, dict):
        raise ValidationError({"request_json": _("The planner returned no result for this configuration.")})
    errors = _result_errors(result)
    if errors:
        raise ValidationError(
            {
                "request_json": [_("The configuration has errors; fix them in the configurator first.")]
                + errors
            }
        )
    return PlannedConfiguration(
        request_json=request_json,
        resolved_json=resolved if isinstance(resolved, dict) else {},
        result_json=result,
        prices_json=prices if prices is not None else {},
        usd_rate=_parse_rate(usd_rate),
        currency=str(currency or "").upper(),
    )


# --------------------------------------------------------------------------- customers


def customer_create(
    *,
    by,
    name: str,
    industry: str = "",
    contact: str = "",
    notes: str = "",
) -> Customer:
    """Create a customer in the user's team (names are unique per team, case-insensitively)."""
    _require_perm(by, "quotes.add_quote")
    with transaction.atomic():
        customer = Customer(
            name=name.strip(),
            industry=industry.strip(),
            contact=contact.strip(),
            notes=notes.strip(),
            team=roles.team_of(by),
            created_by=by,
        )
        customer.full_clean()
        customer.save()
        _audit(
            actor=by,
            action=AuditAction.CUSTOMER_CREATED,
            obj=customer,
            quote=None,
            detail={"name": customer.name},
        )
    return customer


def _customer_resolve(*, by, customer: Customer | str) -> Customer:
    if isinstance(customer, Customer):
        if not selectors.customers_visible_to(by).filter(pk=customer.pk).exists():
            raise ValidationError({"customer": _("Choose one of your team's customers.")})
        return customer
    name = str(customer or "").strip()
    if not name:
        raise ValidationError({"customer": _("Choose a customer or type the name of a new one.")})
    return selectors.customer_find_by_name(user=by, name=name) or customer_create(by=by, name=name)


# --------------------------------------------------------------------------- quotes and revisions


def _quote_number_allocate(*, year: int) -> tuple[int, str]:
    """Next sequence number of ``year`` and the quote number; call inside a transaction."""
    QuoteNumberCounter.objects.bulk_create(
        [QuoteNumberCounter(year=year, last_number=0)], ignore_conflicts=True
    )
    counter = QuoteNumberCounter.objects.select_for_update().get(year=year)
    counter.last_number += 1
    counter.save(update_fields=["last_number"])
    return counter.last_number, f"Q-{year}-{counter.last_number:04d}"


def _snapshot_sha256(revision: QuoteRevision, lines: list[dict]) -> str:
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


def _totals(lines: list[dict], discount: Decimal, result: Mapping) -> dict[str, Any]:
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


def _planned_discount(plan: PlannedConfiguration) -> Decimal | None:
    """The quote discount the engine planned with (``commercial.quote_discount`` of the resolved request)."""
    commercial = plan.resolved_json.get("commercial") if isinstance(plan.resolved_json, dict) else None
    if not isinstance(commercial, dict) or "quote_discount" not in commercial:
        return None
    return to_decimal(commercial["quote_discount"])


def _revision_build(
    *,
    quote: Quote,
    index: int,
    by,
    plan: PlannedConfiguration,
    discount: Decimal,
    line_discounts: Mapping[str, Decimal],
    based_on: QuoteRevision | None,
    change_note: str,
) -> QuoteRevision:
    """Create a draft revision with its BOM lines and totals (inside the caller's transaction)."""
    planned = _planned_discount(plan)
    if planned is not None and planned != discount:
        raise ValidationError(
            {
                "discount": _(
                    "The configuration was planned with a discount of %(planned)s, not %(discount)s; "
                    "plan it again with the new discount."
                )
                % {"planned": planned, "discount": discount}
            }
        )
    lines = apply_line_discounts(
        bom_lines_from_plan(
            plan.result_json, plan.prices_json, currency=plan.currency, request=plan.resolved_json
        ),
        line_discounts,
    )
    for line in lines:
        line["line_total"] = line_total(line["quantity"], line["unit_price"], line["discount"])
        if line["currency"] != plan.currency:
            raise ValidationError(
                _("Price %(sku)s is in %(line)s but the quote is in %(quote)s; the price list must match.")
                % {
                    "sku": line["sku"] or line["description_en"],
                    "line": line["currency"],
                    "quote": plan.currency,
                }
            )
    dropped = mark_lines(
        lines,
        result=plan.result_json,
        prices=plan.prices_json,
        currency=plan.currency,
        request=plan.resolved_json,
    )
    approval_state, approval_reasons = approval_assessment(lines, dropped, discount, discount_threshold())
    totals = _totals(lines, discount, plan.result_json)
    revision = QuoteRevision(
        quote=quote,
        index=index,
        number=f"{quote.number}-R{index}",
        based_on=based_on,
        change_note=change_note,
        created_by=by,
        request_json=plan.request_json,
        resolved_json=plan.resolved_json,
        result_json=plan.result_json,
        prices_json=plan.prices_json,
        usd_rate=plan.usd_rate,
        currency=plan.currency,
        discount=discount,
        approval_state=approval_state,
        approval_reasons=approval_reasons,
        **totals,
    )
    revision.snapshot_sha256 = _snapshot_sha256(revision, lines)
    revision.full_clean()
    revision.save()
    rows = []
    for position, line in enumerate(lines, start=1):
        row = BomLine(revision=revision, position=position, **line)
        row.full_clean(
            validate_unique=False, validate_constraints=False
        )  # positions are unique by construction
        rows.append(row)
    BomLine.objects.bulk_create(rows)
    _audit(
        actor=by,
        action=AuditAction.REVISION_CREATED,
        obj=revision,
        quote=quote,
        detail={
            "number": revision.number,
            "based_on": based_on.number if based_on else None,
            "change_note": change_note,
            "net_total": revision.net_total,
            "currency": revision.currency,
            "discount": revision.discount,
            "approval_state": revision.approval_state,
            "lines": len(rows),
        },
    )
    return revision


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
    _require_perm(by, "quotes.add_quote")
    for name, value in (
        ("request_json", request_json),
        ("resolved_json", resolved_json),
        ("result_json", result_json),
    ):
        if not isinstance(value, dict):
            raise ValidationError({name: _("Must be a JSON object.")})
    if language not in Language.values:
        raise ValidationError({"language": _("Choose Chinese or English.")})
    discount_value = _parse_discount(discount)
    rate = _parse_rate(usd_rate)
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
    with transaction.atomic():
        customer_obj = _customer_resolve(by=by, customer=customer)
        sequence, number = _quote_number_allocate(year=today.year)
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
        quote.full_clean(exclude=["creation_key"])
        quote.save()
        _audit(
            actor=by,
            action=AuditAction.QUOTE_CREATED,
            obj=quote,
            quote=quote,
            detail={"number": number, "customer": customer_obj.name, "title": quote.title},
        )
        _revision_build(
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
    with transaction.atomic():
        locked = _quote_lock(quote, expected_version)
        _require_edit(by, locked)
        if locked.status != QuoteStatus.DRAFT:
            raise ValidationError(_("Only a draft quote can be edited; reopen it for revision first."))
        if "customer" in changes:
            changes["customer"] = _customer_resolve(by=by, customer=changes["customer"])
        before = {name: str(getattr(locked, name)) for name in changes}
        for name, value in changes.items():
            setattr(locked, name, value.strip() if isinstance(value, str) else value)
        changed = [name for name in changes if str(getattr(locked, name)) != before[name]]
        if changed:
            _quote_save(locked, changed)
            # The proposal prints the quote's header: a draft revision's PDF no
            # longer matches it.  Issued revisions keep the PDF that was issued.
            locked.revisions.filter(
                status=RevisionStatus.DRAFT, pdf_status__in=[PdfStatus.READY, PdfStatus.FAILED]
            ).update(pdf_status=PdfStatus.NONE, pdf_error="")
            _audit(
                actor=by,
                action=AuditAction.QUOTE_UPDATED,
                obj=locked,
                quote=locked,
                detail={name: {"from": before[name], "to": str(getattr(locked, name))} for name in changed},
            )
    return locked


def _sendable_refusal(quote: Quote, revision: QuoteRevision | None) -> str:
    if revision is None:
        return _("The quote has no revision to send.")
    if revision.approval_state == ApprovalState.PENDING and revision.approval_reasons:
        # Issue 13: the reasons name each cut (overrides, non-catalog hardware) with its figures.
        return _(
            "%(number)s needs the approval of a sales manager of the team before the quote can be sent "
            "(above %(threshold)s below the list, or hardware not from the catalog):"
        ) % {
            "number": revision.number,
            "threshold": f"{discount_threshold() * 100:.2f} %",
        } + "".join(f" {text}" for text in reason_texts(revision.approval_reasons))
    if revision.approval_state == ApprovalState.PENDING:
        return _(
            "%(number)s has a discount of %(discount)s (%(overall)s of the list total); above "
            "%(threshold)s a sales manager of the team must approve it before the quote can be sent."
        ) % {
            "number": revision.number,
            "discount": f"{revision.discount * 100:.2f} %",
            "overall": f"{revision.effective_discount * 100:.2f} %",
            "threshold": f"{discount_threshold() * 100:.2f} %",
        }
    if revision.approval_state == ApprovalState.REJECTED:
        return _("The discount of %(number)s was rejected; make a new revision before sending.") % {
            "number": revision.number
        }
    if quote.valid_until < timezone.localdate():
        return _("The validity date (%(date)s) has passed; set a new one before sending.") % {
            "date": quote.valid_until.isoformat()
        }
    return ""


def _transition_locked(*, quote: Quote, to_status: str, by, comment: str) -> Quote:
    step = transition_for(quote.status, to_status)
    if step is None:
        allowed = ", ".join(str(QuoteStatus(s).label) for s in allowed_targets(quote.status)) or _("none")
        raise ValidationError(
            _("A %(from)s quote cannot become %(to)s (allowed: %(allowed)s).")
            % {
                "from": QuoteStatus(quote.status).label,
                "to": QuoteStatus(to_status).label if to_status in QuoteStatus.values else to_status,
                "allowed": allowed,
            }
        )
    if step.needs_comment and not comment.strip():
        raise ValidationError({"comment": _("Say why (a comment is required for this change).")})
    detail: dict[str, Any] = {"from": quote.status, "to": to_status, "comment": comment.strip()}
    if to_status == QuoteStatus.SENT:
        revision = quote.revisions.select_for_update().order_by("-index").first()
        refusal = _sendable_refusal(quote, revision)
        if refusal:
            raise ValidationError(refusal)
        if revision.status == RevisionStatus.DRAFT:
            _revision_issue_locked(quote=quote, revision=revision, by=by)
        detail["revision"] = revision.number
    quote.status = to_status
    _quote_save(quote, ["status"])
    _audit(actor=by, action=AuditAction.QUOTE_TRANSITION, obj=quote, quote=quote, detail=detail)
    return quote


def quote_transition(
    *, quote: Quote, to_status: str, by, comment: str = "", expected_version: int | None = None
) -> Quote:
    """Move a quote along the pipeline in ``statuses.TRANSITIONS``.

    Sending issues the latest revision if it is still a draft, and is refused
    while its discount awaits (or was refused) approval or the validity date
    has passed.
    """
    with transaction.atomic():
        locked = _quote_lock(quote, expected_version)
        _require_edit(by, locked)
        return _transition_locked(quote=locked, to_status=to_status, by=by, comment=comment)


def quotes_expire_overdue(*, today: dt.date | None = None) -> int:
    """Mark sent quotes whose validity date has passed as expired (a system change); returns how many."""
    today = today or timezone.localdate()
    count = 0
    for pk in Quote.objects.filter(status=QuoteStatus.SENT, valid_until__lt=today).values_list(
        "pk", flat=True
    ):
        with transaction.atomic():
            locked = Quote.objects.select_for_update().get(pk=pk)
            if locked.status == QuoteStatus.SENT and locked.valid_until < today:
                _transition_locked(
                    quote=locked, to_status=QuoteStatus.EXPIRED, by=None, comment="validity date passed"
                )
                count += 1
    return count


def _revision_issue_locked(*, quote: Quote, revision: QuoteRevision, by) -> QuoteRevision:
    if revision.status == RevisionStatus.ISSUED:
        raise ValidationError(_("%(number)s is already issued.") % {"number": revision.number})
    latest = quote.revisions.aggregate(top=Max("index"))["top"]
    if revision.index != latest:
        raise ValidationError(
            _("%(number)s has been superseded by R%(latest)s; only the latest revision can be issued.")
            % {"number": revision.number, "latest": latest}
        )
    if revision.approval_state == ApprovalState.PENDING:
        raise ValidationError(
            _("%(number)s needs a sales manager's approval first.") % {"number": revision.number}
            + "".join(f" {text}" for text in reason_texts(revision.approval_reasons))
        )
    if revision.approval_state == ApprovalState.REJECTED:
        raise ValidationError(
            _("The discount of %(number)s was rejected; it cannot be issued.") % {"number": revision.number}
        )
    revision.status = RevisionStatus.ISSUED
    revision.issued_by = by
    revision.issued_at = timezone.now()
    # Frozen means frozen: the header the revision is issued with is part of it, and the
    # draft PDF (stamped "Draft — not issued") is never served as the issued proposal.
    revision.header_json = header_snapshot(quote)
    draft_pdf = _pdf_reset_for_issue(revision)
    revision.full_clean()
    revision.save()
    if draft_pdf:
        transaction.on_commit(lambda: _pdf_file_delete(draft_pdf))
    _audit(
        actor=by,
        action=AuditAction.REVISION_ISSUED,
        obj=revision,
        quote=quote,
        detail={
            "number": revision.number,
            "net_total": revision.net_total,
            "snapshot_sha256": revision.snapshot_sha256,
        },
    )
    revision_id = revision.pk
    transaction.on_commit(lambda: revision_issued.send(sender=QuoteRevision, revision_id=revision_id, by=by))
    return revision


def _pdf_reset_for_issue(revision: QuoteRevision) -> str:
    """Forget the draft PDF of a revision being issued; returns the draft file's name (to delete)."""
    name = revision.pdf_file.name if revision.pdf_file else ""
    revision.pdf_file = ""
    revision.pdf_sha256 = ""
    revision.pdf_status = PdfStatus.NONE
    revision.pdf_error = ""
    revision.pdf_attempts = 0
    revision.pdf_rendered_at = None
    revision.pdf_task_id = ""  # a draft render still running finds its job gone and stores nothing
    revision.pdf_issued = False
    return name


def _pdf_file_delete(name: str) -> None:
    from django.core.files.storage import default_storage

    try:
        default_storage.delete(name)
    except OSError:  # pragma: no cover - a missing draft file is fine
        logger.warning("Could not delete the draft proposal %s", name, exc_info=True)


def revision_issue(*, revision: QuoteRevision, by, expected_version: int | None = None) -> QuoteRevision:
    """Freeze the latest revision of a quote (its discount must not be awaiting or refused approval)."""
    with transaction.atomic():
        quote = _quote_lock(revision.quote, expected_version)
        _require_edit(by, quote)
        if quote.status in CLOSED_STATUSES:
            raise ValidationError(_("The quote is closed."))
        locked = QuoteRevision.objects.select_for_update().get(pk=revision.pk)
        _revision_issue_locked(quote=quote, revision=locked, by=by)
        _quote_save(quote, [])
    return locked


PLAN_CHANGE_KEYS = ("request_json", "resolved_json", "result_json", "prices_json", "usd_rate", "currency")
REVISION_CHANGE_KEYS = frozenset({*PLAN_CHANGE_KEYS, "discount", "line_discounts", "note"})


def revision_create_from(
    *, revision: QuoteRevision, changes: Mapping[str, Any], by, expected_version: int | None = None
) -> QuoteRevision:
    """Make the next revision of a quote from ``revision`` with ``changes`` applied.

    ``changes`` may hold ``discount`` (fraction), ``line_discounts``
    (``{"category:sku": fraction}``), ``note`` (what changed and why) and, for a
    replanned configuration, all of ``request_json``, ``resolved_json``,
    ``result_json``, ``prices_json`` and ``usd_rate`` (plus ``currency``, which
    must stay the quote's).  Everything not changed is copied from
    ``revision``, whose row is left untouched.  A sent or expired quote goes
    back to draft; a won or lost one cannot be revised.
    """
    unknown = set(changes) - REVISION_CHANGE_KEYS
    if unknown:
        raise ValidationError(_("Unknown changes: %(keys)s.") % {"keys": ", ".join(sorted(unknown))})
    given = [key for key in PLAN_CHANGE_KEYS[:5] if key in changes]
    if given and len(given) != 5:
        raise ValidationError(
            _(
                "A new configuration needs request, resolved request, result, prices and exchange rate together."
            )
        )
    with transaction.atomic():
        quote = _quote_lock(revision.quote, expected_version)
        _require_edit(by, quote)
        if quote.status in CLOSED_STATUSES:
            raise ValidationError(
                _("A %(status)s quote cannot be revised.") % {"status": QuoteStatus(quote.status).label}
            )
        base = QuoteRevision.objects.get(pk=revision.pk)
        if given:
            for key in ("request_json", "resolved_json", "result_json"):
                if not isinstance(changes[key], dict):
                    raise ValidationError({key: _("Must be a JSON object.")})
            rate = _parse_rate(changes["usd_rate"])
            plan = PlannedConfiguration(
                request_json=changes["request_json"],
                resolved_json=changes["resolved_json"],
                result_json=changes["result_json"],
                prices_json=changes["prices_json"],
                usd_rate=rate,
                currency=str(changes.get("currency") or quote.currency).upper(),
            )
        else:
            plan = PlannedConfiguration(
                request_json=base.request_json,
                resolved_json=base.resolved_json,
                result_json=base.result_json,
                prices_json=base.prices_json,
                usd_rate=base.usd_rate,
                currency=base.currency,
            )
        if plan.currency != quote.currency:
            raise ValidationError(
                _("The quote is in %(quote)s; a revision in %(new)s needs a new quote.")
                % {"quote": quote.currency, "new": plan.currency}
            )
        discount = _parse_discount(changes["discount"]) if "discount" in changes else base.discount
        line_discounts = {
            f"{line.category}:{line.sku}": line.discount for line in base.lines.all() if line.discount
        }
        for key, value in (changes.get("line_discounts") or {}).items():
            line_discounts[str(key)] = _parse_discount(value, "line_discounts")
        index = (quote.revisions.aggregate(top=Max("index"))["top"] or 0) + 1
        if quote.status != QuoteStatus.DRAFT:
            _transition_locked(
                quote=quote, to_status=QuoteStatus.DRAFT, by=by, comment=f"new revision R{index}"
            )
        new = _revision_build(
            quote=quote,
            index=index,
            by=by,
            plan=plan,
            discount=discount,
            line_discounts=line_discounts,
            based_on=base,
            change_note=str(changes.get("note", "")).strip(),
        )
        _quote_save(quote, [])
    return new


# --------------------------------------------------------------------------- approvals


def _decide(
    *, revision: QuoteRevision, by, decision: str, comment: str, expected_version: int | None
) -> Approval:
    with transaction.atomic():
        quote = _quote_lock(revision.quote, expected_version)
        locked = (
            QuoteRevision.objects.select_for_update(of=("self",)).select_related("quote").get(pk=revision.pk)
        )
        locked.quote = quote
        refusal = selectors.approval_refusal(by, locked)
        if refusal:
            raise PermissionDenied(refusal)
        if locked.approval_state != ApprovalState.PENDING:
            raise ValidationError(
                _("%(number)s is not waiting for approval (%(state)s).")
                % {"number": locked.number, "state": ApprovalState(locked.approval_state).label}
            )
        if decision == ApprovalDecision.REJECTED and not comment.strip():
            raise ValidationError({"comment": _("Say why the discount is rejected.")})
        approval = Approval(revision=locked, decided_by=by, decision=decision, comment=comment.strip())
        approval.full_clean()
        approval.save()
        locked.approval_state = (
            ApprovalState.APPROVED if decision == ApprovalDecision.APPROVED else ApprovalState.REJECTED
        )
        locked.full_clean()
        locked.save(update_fields=["approval_state"])
        _quote_save(quote, [])
        _audit(
            actor=by,
            action=AuditAction.REVISION_APPROVED
            if decision == ApprovalDecision.APPROVED
            else AuditAction.REVISION_REJECTED,
            obj=locked,
            quote=quote,
            detail={
                "number": locked.number,
                "discount": locked.discount,
                "effective_discount": locked.effective_discount,
                "comment": approval.comment,
            },
        )
    return approval


def revision_approve(
    *, revision: QuoteRevision, by, comment: str = "", expected_version: int | None = None
) -> Approval:
    """A sales manager of the quote's team approves the revision's discount (not on their own quote)."""
    return _decide(
        revision=revision,
        by=by,
        decision=ApprovalDecision.APPROVED,
        comment=comment,
        expected_version=expected_version,
    )


def revision_reject(
    *, revision: QuoteRevision, by, comment: str = "", expected_version: int | None = None
) -> Approval:
    """A sales manager of the quote's team rejects the revision's discount, saying why."""
    return _decide(
        revision=revision,
        by=by,
        decision=ApprovalDecision.REJECTED,
        comment=comment,
        expected_version=expected_version,
    )


# --------------------------------------------------------------------------- proposal PDF job


def revision_pdf_queue(*, revision: QuoteRevision, task_id: str = "", by=None) -> QuoteRevision:
    """Record that a proposal PDF was queued for rendering (the PDF fields stay writable after issue)."""
    with transaction.atomic():
        locked = (
            QuoteRevision.objects.select_for_update(of=("self",)).select_related("quote").get(pk=revision.pk)
        )
        locked.pdf_status = PdfStatus.QUEUED
        locked.pdf_task_id = task_id
        locked.pdf_error = ""
        locked.save(update_fields=["pdf_status", "pdf_task_id", "pdf_error"])
        _audit(
            actor=by,
            action=AuditAction.PDF_QUEUED,
            obj=locked,
            quote=locked.quote,
            detail={"number": locked.number, "task_id": task_id},
        )
    return locked


def revision_pdf_start(*, revision: QuoteRevision) -> QuoteRevision:
    """Mark the PDF as rendering and count the attempt."""
    with transaction.atomic():
        locked = QuoteRevision.objects.select_for_update().get(pk=revision.pk)
        locked.pdf_status = PdfStatus.RENDERING
        locked.pdf_attempts += 1
        locked.save(update_fields=["pdf_status", "pdf_attempts"])
    return locked


def revision_pdf_store(*, revision: QuoteRevision, content: bytes) -> QuoteRevision:
    """Store the rendered PDF under MEDIA_ROOT/proposals/ with its SHA-256, and audit it."""
    with transaction.atomic():
        locked = (
            QuoteRevision.objects.select_for_update(of=("self",)).select_related("quote").get(pk=revision.pk)
        )
        digest = hashlib.sha256(content).hexdigest()
        locked.pdf_file.save(f"{locked.number}.pdf", ContentFile(content), save=False)
        locked.pdf_sha256 = digest
        locked.pdf_status = PdfStatus.READY
        locked.pdf_error = ""
        locked.pdf_rendered_at = timezone.now()
        # Rendered from the issued revision: this is the copy the customer gets, kept for good.
        locked.pdf_issued = locked.is_issued
        locked.save(
            update_fields=[
                "pdf_file",
                "pdf_sha256",
                "pdf_status",
                "pdf_error",
                "pdf_rendered_at",
                "pdf_issued",
            ]
        )
        _audit(
            actor=None,
            action=AuditAction.PDF_RENDERED,
            obj=locked,
            quote=locked.quote,
            detail={
                "number": locked.number,
                "sha256": digest,
                "bytes": len(content),
                "file": locked.pdf_file.name,
            },
        )
    return locked


def revision_pdf_fail(*, revision: QuoteRevision, error: str) -> QuoteRevision:
    """Record a failed rendering with its error, and audit it."""
    with transaction.atomic():
        locked = (
            QuoteRevision.objects.select_for_update(of=("self",)).select_related("quote").get(pk=revision.pk)
        )
        locked.pdf_status = PdfStatus.FAILED
        locked.pdf_error = error[:5000]
        locked.save(update_fields=["pdf_status", "pdf_error"])
        _audit(
            actor=None,
            action=AuditAction.PDF_FAILED,
            obj=locked,
            quote=locked.quote,
            detail={"number": locked.number, "error": error[:500], "attempts": locked.pdf_attempts},
        )
    return locked
