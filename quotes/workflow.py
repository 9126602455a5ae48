"""The sales workflow around quotes: revise the configuration, clone, compare by item,
share with the customer, record acceptance and questions, price-change impact.

Every state change runs in one transaction and writes an audit event, like
``quotes.services`` (whose building blocks it reuses); every refusal is a
``ValidationError`` with a message for the user.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import logging
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Max
from django.http import Http404
from django.utils import timezone
from django.utils.translation import gettext as _

from accounts import roles

from . import notify, selectors
from .bom import apply_line_discounts, bom_lines_from_plan, line_total, to_decimal
from .frozen import revision_quote
from .models import BomLine, Quote, QuoteRevision
from .services.base import audit, quote_lock, require_edit, require_perm
from .services.customers import customer_resolve
from .services.planning import (
    PlannedConfiguration,
    PlanningUnavailable,
    configuration_plan,
    has_list_record,
    plan_again,
    request_at_todays_list,
    request_with_discount,
)
from .services.quotes import quote_number_allocate
from .services.revisions import revision_build, revision_create_from
from .services.snapshot import revision_totals
from .services.transitions import transition_locked
from .statuses import AuditAction, BomCategory, PdfStatus, QuoteStatus, RevisionStatus
from .textcheck import control_chars
from .workflow_models import CustomerAcceptance, CustomerQuestion, ShareLink, ShareView, token_digest

logger = logging.getLogger(__name__)

OPEN_QUOTE_STATUSES = (QuoteStatus.DRAFT, QuoteStatus.SENT)
QUESTIONS_PER_LINK_PER_HOUR = 10


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


# --------------------------------------------------------------------------- customer share links


def share_create(*, revision: QuoteRevision, by, days: int | None = None) -> tuple[ShareLink, str]:
    """A new customer link to ``revision``; returns the link and its token (shown once, never stored).

    Only an issued revision is shared (the customer sees what is frozen).  The
    latest revision of a draft quote is sent first (which issues it, after the
    same approval and validity checks as "Send to customer").
    """
    with transaction.atomic():
        quote = quote_lock(revision.quote, None)
        require_edit(by, quote)
        current = QuoteRevision.objects.get(pk=revision.pk)
        latest = quote.revisions.order_by("-index").first()
        is_latest = latest is not None and latest.pk == current.pk
        if current.status == RevisionStatus.DRAFT and not (is_latest and quote.status == QuoteStatus.DRAFT):
            raise ValidationError(
                _("Only an issued revision can be shared with the customer; issue %(number)s first.")
                % {"number": current.number}
            )
        if is_latest and quote.status == QuoteStatus.DRAFT:
            # Sharing the latest revision sends the quote (issuing it first if it is a draft),
            # with the same approval and validity checks as "Send to customer".
            transition_locked(quote=quote, to_status=QuoteStatus.SENT, by=by, comment="")
            current.refresh_from_db()
        token = secrets.token_urlsafe(32)
        lifetime = days if days is not None else settings.QUOTE_SHARE_DAYS
        if not 1 <= int(lifetime) <= 365:
            raise ValidationError({"days": _("A link lasts between 1 and 365 days.")})
        link = ShareLink.objects.create(
            revision=current,
            token_sha256=token_digest(token),
            created_by=by,
            expires_at=timezone.now() + dt.timedelta(days=int(lifetime)),
        )
        audit(
            actor=by,
            action=AuditAction.SHARE_CREATED,
            obj=link,
            quote=quote,
            detail={"number": current.number, "expires_at": link.expires_at},
        )
    _queue_pdf(current, by)
    return link, token


def _queue_pdf(revision: QuoteRevision, by) -> None:
    """Make sure the proposal PDF the customer will download is on its way.

    Issuing renders it already (``quotes.pdf.jobs.on_revision_issued``); this
    covers a revision issued before that, as the system (the link is no
    engineer's render).  A refusal (e.g. too large to render) leaves the link
    working: the customer page says the document is being prepared.
    """
    from .pdf.jobs import RenderRefused, proposal_request

    current = QuoteRevision.objects.get(pk=revision.pk)
    if current.pdf_status in (PdfStatus.READY, PdfStatus.QUEUED, PdfStatus.RENDERING):
        return
    try:
        proposal_request(revision=current, by=by, system=True)
    except RenderRefused as exc:
        logger.warning("Proposal PDF of %s for a customer link not rendered: %s", current.number, exc.message)


def share_revoke(*, link: ShareLink, by) -> ShareLink:
    with transaction.atomic():
        quote = quote_lock(link.revision.quote, None)
        require_edit(by, quote)
        locked = ShareLink.objects.select_for_update().get(pk=link.pk)
        if locked.revoked_at is None:
            locked.revoked_at = timezone.now()
            locked.revoked_by = by
            locked.save(update_fields=["revoked_at", "revoked_by"])
            audit(
                actor=by,
                action=AuditAction.SHARE_REVOKED,
                obj=locked,
                quote=quote,
                detail={"number": link.revision.number},
            )
    return locked


def share_resolve(token: str) -> ShareLink:
    """The active link of a token, else 404 (unknown, revoked and expired links look alike)."""
    if not isinstance(token, str) or not 20 <= len(token) <= 100:
        raise Http404("No such link.")
    link = (
        ShareLink.objects.select_related("revision", "revision__quote", "revision__quote__customer")
        .filter(token_sha256=token_digest(token))
        .first()
    )
    if link is None or not link.is_active:
        raise Http404("No such link.")
    return link


def client_ip(request) -> str | None:
    """The client's address by the same trusted-proxy rule as log-in (``accounts.client_ip``):
    behind the proxies named in ``TRUSTED_PROXIES`` the client the nearest proxy saw, else
    REMOTE_ADDR.  None when neither is an address (the field stores addresses only)."""
    from accounts.client_ip import client_ip as trusted_client_ip

    address = trusted_client_ip(request)
    try:
        ipaddress.ip_address(address)
    except ValueError:
        return None
    return address


def share_log(*, link: ShareLink, request, what: str) -> ShareView:
    return ShareView.objects.create(
        link=link,
        what=what,
        ip=client_ip(request),
        user_agent=str(request.META.get("HTTP_USER_AGENT", ""))[:300],
    )


def acceptance_refusal(link: ShareLink) -> str:
    """Why the customer cannot accept through this link now ('' when they can)."""
    revision, quote = link.revision, link.revision.quote
    if hasattr(revision, "customer_acceptance"):
        return _("This offer was accepted on %(date)s.") % {
            "date": revision.customer_acceptance.accepted_at.strftime("%Y-%m-%d")
        }
    latest = quote.revisions.aggregate(top=Max("index"))["top"]
    if revision.index != latest:
        return _("This offer has been replaced by a newer one; please ask your contact for it.")
    if quote.status != QuoteStatus.SENT:
        return _("This offer cannot be accepted online any more; please contact us.")
    valid_until = revision_quote(revision).valid_until  # the validity the offer was issued with
    if valid_until < timezone.localdate():
        return _("This offer expired on %(date)s; please ask your contact for a new one.") % {
            "date": valid_until.isoformat()
        }
    return ""


def _clean_text(
    value: Any, field: str, label: str, *, required: bool, max_length: int, multiline: bool = False
) -> str:
    text = str(value or "").strip()
    if required and not text:
        raise ValidationError({field: _("Please enter your %(what)s.") % {"what": label}})
    if len(text) > max_length:
        raise ValidationError({field: _("At most %(n)s characters, please.") % {"n": max_length}})
    # One line for a name or a title (they are printed in the audit trail, the notice and the
    # acceptance statement); a question may have line breaks.  Control characters, bidi
    # overrides (U+202E …) and line separators are refused either way, as the catalog does.
    allowed = "\n\t" if multiline else ""
    bad = control_chars("".join(ch for ch in text if ch not in allowed))
    if bad:
        raise ValidationError(
            {
                field: _("Please remove the control or text-direction characters (%(chars)s).")
                % {"chars": ", ".join(bad[:5])}
            }
        )
    return text


def customer_accept(
    *, link: ShareLink, request, name: str, title: str, option: str = "", confirmed: bool = False
) -> CustomerAcceptance:
    """Record the customer's acceptance (name, title, time, IP, confirmation) and mark the quote accepted."""
    name = _clean_text(name, "name", _("name"), required=True, max_length=200)
    title = _clean_text(title, "title", _("job title"), required=True, max_length=200)
    option = _clean_text(option, "option", _("option"), required=False, max_length=200)
    if not confirmed:
        raise ValidationError({"confirm": _("Please tick the box to confirm the acceptance.")})
    with transaction.atomic():
        quote = quote_lock(link.revision.quote, None)
        link = ShareLink.objects.select_for_update().select_related("revision").get(pk=link.pk)
        link.revision.quote = quote
        if not link.is_active:
            raise Http404("No such link.")
        refusal = acceptance_refusal(link)
        if refusal:
            raise ValidationError(refusal)
        revision = link.revision
        statement = _(
            "I, %(name)s (%(title)s), accept offer %(number)s of %(date)s for %(customer)s: "
            "net total %(total)s %(currency)s%(option)s."
        ) % {
            "name": name,
            "title": title,
            "number": revision.number,
            "date": (revision.issued_at or revision.created_at).strftime("%Y-%m-%d"),
            "customer": revision_quote(revision).customer.name,
            "total": f"{revision.net_total:,.2f}",
            "currency": revision.currency,
            "option": f" ({option})" if option else "",
        }
        acceptance = CustomerAcceptance.objects.create(
            revision=revision,
            link=link,
            name=name,
            title=title,
            option=option,
            confirmation=statement,
            ip=client_ip(request),
            user_agent=str(request.META.get("HTTP_USER_AGENT", ""))[:300],
        )
        share_log(link=link, request=request, what=ShareView.What.ACCEPT)
        audit(
            actor=None,
            action=AuditAction.CUSTOMER_ACCEPTED,
            obj=acceptance,
            quote=quote,
            detail={
                "number": revision.number,
                "name": name,
                "title": title,
                "option": option,
                "ip": acceptance.ip,
                "confirmation": statement,
            },
        )
        transition_locked(
            quote=quote, to_status=QuoteStatus.ACCEPTED, by=None, comment=f"accepted by {name} ({title})"
        )
        notify.customer_accepted(acceptance)
    return acceptance


def customer_ask(*, link: ShareLink, request, name: str, contact: str, text: str) -> CustomerQuestion:
    """Record a question from the share page and pass it to the quote's owner."""
    name = _clean_text(name, "name", _("name"), required=True, max_length=200)
    contact = _clean_text(contact, "contact", _("e-mail or phone"), required=False, max_length=200)
    text = _clean_text(text, "text", _("question"), required=True, max_length=4000, multiline=True)
    with transaction.atomic():
        # Counted per revision (a new link to the same offer does not start again) under the
        # revision's row lock, so parallel posts are counted one after the other.
        QuoteRevision.objects.select_for_update().filter(pk=link.revision_id).first()
        recent = CustomerQuestion.objects.filter(
            revision_id=link.revision_id, asked_at__gte=timezone.now() - dt.timedelta(hours=1)
        )
        if recent.count() >= QUESTIONS_PER_LINK_PER_HOUR:  # a link is no way to flood an engineer's inbox
            raise ValidationError(
                _(
                    "Many questions were sent about this offer in the last hour; please write to your contact directly."
                )
            )
        question = CustomerQuestion.objects.create(
            revision=link.revision, link=link, name=name, contact=contact, text=text, ip=client_ip(request)
        )
        share_log(link=link, request=request, what=ShareView.What.QUESTION)
        audit(
            actor=None,
            action=AuditAction.CUSTOMER_QUESTION,
            obj=question,
            quote=link.revision.quote,
            detail={"number": link.revision.number, "name": name, "contact": contact},
        )
        notify.customer_question(question)
    return question


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

    from .workflow_models import PriceImpactEntry

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

    from .workflow_models import PriceImpactEntry

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
