"""Reads and authorization rules for quotes.

Who sees what:

* sales engineer: their own quotes and their team's; only their own are editable;
* sales manager: their team's quotes (and their own), all editable, may approve
  discounts and sees margins;
* catalog admin (without a sales role): none;
* superuser: all.

Group permissions (``accounts.services.ROLE_PERMISSION_APPS``) say *whether* a
user may view/add/change quotes at all; the functions here scope that to
objects.  Views fetch through :func:`quote_get_visible` /
:func:`revision_get_visible`, which raise 404 (never 403) for anything outside
the user's visibility, so quote ids and numbers cannot be probed.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from django.db.models import OuterRef, Q, QuerySet, Subquery
from django.http import Http404
from django.utils.translation import gettext as _

from accounts import roles

from .models import AuditEvent, Customer, Quote, QuoteRevision
from .statuses import CLOSED_STATUSES, TRANSITIONS, ApprovalState, RevisionStatus, Transition


def _is_superuser(user) -> bool:
    return bool(getattr(user, "is_authenticated", False) and user.is_superuser)


def quotes_visible_to(user) -> QuerySet[Quote]:
    """Quotes the user may open: own and team's for sales roles, all for a superuser."""
    if not getattr(user, "is_authenticated", False) or not user.is_active:
        return Quote.objects.none()
    if user.is_superuser:
        return Quote.objects.all()
    if not user.has_perm("quotes.view_quote"):
        return Quote.objects.none()
    team = roles.team_of(user)
    scope = Q(owner=user)
    if team is not None:
        scope |= Q(team=team)
    return Quote.objects.filter(scope)


def quote_get_visible(*, user, pk: int) -> Quote:
    """The quote if the user may see it, else 404."""
    quote = quotes_visible_to(user).select_related("customer", "owner", "team").filter(pk=pk).first()
    if quote is None:
        raise Http404("No such quote.")
    return quote


# The plan a revision froze (request, resolution, result, prices): tens of kilobytes of JSON that a
# view showing only the revision's state (the PDF panel's one-second poll) need not read and parse.
PLAN_FIELDS = ("request_json", "resolved_json", "result_json", "prices_json")


def revision_get_visible(*, user, pk: int, without_plan: bool = False) -> QuoteRevision:
    """The revision if the user may see its quote, else 404.

    ``without_plan``: leave the frozen plan's JSON unread (:data:`PLAN_FIELDS`; Django reads a
    deferred field if something asks for it after all, so this only saves, never breaks)."""
    revisions = QuoteRevision.objects.select_related(
        "quote", "quote__customer", "quote__owner", "quote__team"
    )
    if without_plan:
        revisions = revisions.defer(*PLAN_FIELDS)
    revision = revisions.filter(pk=pk, quote__in=quotes_visible_to(user)).first()
    if revision is None:
        raise Http404("No such revision.")
    return revision


def can_edit(user, quote: Quote) -> bool:
    """True when the user may change the quote: its owner, a manager of its team, or a superuser."""
    if not getattr(user, "is_authenticated", False) or not user.is_active:
        return False
    if user.is_superuser:
        return True
    if not user.has_perm("quotes.change_quote"):
        return False
    if quote.owner_id == user.pk:
        return True
    team = roles.team_of(user)
    return roles.is_manager(user) and team is not None and quote.team_id == team.pk


def approval_refusal(user, revision: QuoteRevision) -> str:
    """Why the user may not decide on the revision's discount ('' when they may).

    Only a sales manager of the quote's team decides, and never on a quote they
    own or a revision they made themselves (four eyes).
    """
    quote = revision.quote
    team = roles.team_of(user)
    if not roles.is_manager(user) or team is None or quote.team_id != team.pk:
        return _("Only a sales manager of the quote's team can decide on a discount.")
    if user.pk in (quote.owner_id, revision.created_by_id):
        return _("You cannot approve or reject a discount on your own quote.")
    return ""


def can_approve(user, revision: QuoteRevision) -> bool:
    """True when the user may approve or reject this revision now."""
    return revision.approval_state == ApprovalState.PENDING and not approval_refusal(user, revision)


def can_see_margins(user, quote: Quote) -> bool:
    """Managers of the quote's team (and superusers) see cost and margin."""
    if _is_superuser(user):
        return True
    team = roles.team_of(user)
    return roles.is_manager(user) and team is not None and quote.team_id == team.pk


def transitions_for(user, quote: Quote) -> list[Transition]:
    """The status moves the user may offer on this quote now (from ``statuses.TRANSITIONS``)."""
    if not can_edit(user, quote):
        return []
    return [t for t in TRANSITIONS if t.source == quote.status]


# A revision's frozen plan (hundreds of kB of JSON, decoded on load): what a list of revisions never shows.
PLAN_FIELDS = ("request_json", "resolved_json", "result_json", "prices_json", "header_json")


def revisions_of(quote: Quote) -> QuerySet[QuoteRevision]:
    """The quote's revisions in order, for a list (number, author, status, totals): their frozen plans
    are left in the database (a page that reads one asks for that revision by itself)."""
    return quote.revisions.select_related("created_by", "issued_by").defer(*PLAN_FIELDS).order_by("index")


def revision_latest(quote: Quote) -> QuoteRevision | None:
    return quote.revisions.order_by("-index").first()


def revision_by_index(quote: Quote, index: Any) -> QuoteRevision:
    """Revision ``index`` of the quote (404 when there is none)."""
    try:
        number = int(index)
    except (TypeError, ValueError):
        raise Http404("No such revision.") from None
    revision = quote.revisions.filter(index=number).first()
    if revision is None:
        raise Http404("No such revision.")
    return revision


def can_revise(user, quote: Quote) -> bool:
    return can_edit(user, quote) and quote.status not in CLOSED_STATUSES


def customers_visible_to(user) -> QuerySet[Customer]:
    """Customers the user may quote for: their team's (all for a superuser)."""
    if _is_superuser(user):
        return Customer.objects.all()
    if not getattr(user, "is_authenticated", False) or not user.has_perm("quotes.view_quote"):
        return Customer.objects.none()
    team = roles.team_of(user)
    if team is None:
        return Customer.objects.filter(created_by=user, team__isnull=True)
    return Customer.objects.filter(team=team)


def customer_find_by_name(*, user, name: str) -> Customer | None:
    """The visible customer of that name (case-insensitive), if any."""
    return customers_visible_to(user).filter(name__iexact=name.strip()).first()


def quote_search(
    *,
    user,
    text: str = "",
    customer: Customer | None = None,
    status: str = "",
    owner=None,
    created_from: dt.date | None = None,
    created_to: dt.date | None = None,
) -> QuerySet[Quote]:
    """Visible quotes matching a free-text search (number, customer, title) and filters,
    annotated with the latest revision's index, net total, currency and approval state."""
    qs = quotes_visible_to(user).select_related("customer", "owner", "team")
    text = text.strip()
    if text:
        qs = qs.filter(
            Q(number__icontains=text) | Q(customer__name__icontains=text) | Q(title__icontains=text)
        )
    if customer is not None:
        qs = qs.filter(customer=customer)
    if status:
        qs = qs.filter(status=status)
    if owner is not None:
        qs = qs.filter(owner=owner)
    if created_from is not None:
        qs = qs.filter(created_at__date__gte=created_from)
    if created_to is not None:
        qs = qs.filter(created_at__date__lte=created_to)
    latest = QuoteRevision.objects.filter(quote=OuterRef("pk")).order_by("-index")
    return qs.annotate(
        latest_index=Subquery(latest.values("index")[:1]),
        latest_net_total=Subquery(latest.values("net_total")[:1]),
        latest_currency=Subquery(latest.values("currency")[:1]),
        latest_approval=Subquery(latest.values("approval_state")[:1]),
    )


def quote_owners_visible_to(user):
    """Users who own at least one quote the user can see (for the owner filter)."""
    from django.contrib.auth import get_user_model

    owner_ids = quotes_visible_to(user).values("owner")
    return get_user_model().objects.filter(pk__in=owner_ids).order_by("username")


def quote_audit_trail(quote: Quote) -> QuerySet[AuditEvent]:
    return quote.audit_events.select_related("actor").order_by("-created_at", "-id")


def quote_pending_approvals(user) -> QuerySet[QuoteRevision]:
    """Draft revisions waiting for this manager's decision."""
    team = roles.team_of(user)
    if not roles.is_manager(user) or team is None:
        return QuoteRevision.objects.none()
    return (
        QuoteRevision.objects.filter(
            quote__team=team, approval_state=ApprovalState.PENDING, status=RevisionStatus.DRAFT
        )
        .exclude(quote__owner=user)
        .exclude(created_by=user)
        .select_related("quote", "quote__customer")
    )


# --------------------------------------------------------------------------- compare


def flatten_json(value: Any, prefix: str = "") -> dict[str, Any]:
    """``{"a": {"b": [1, 2]}}`` → ``{"a.b[0]": 1, "a.b[1]": 2}``; empty containers kept as leaves."""
    out: dict[str, Any] = {}
    if isinstance(value, dict) and value:
        for key in sorted(value, key=str):
            out.update(flatten_json(value[key], f"{prefix}.{key}" if prefix else str(key)))
    elif isinstance(value, list) and value:
        for i, item in enumerate(value):
            out.update(flatten_json(item, f"{prefix}[{i}]"))
    else:
        out[prefix or "(root)"] = value
    return out


@dataclass(frozen=True)
class Change:
    key: str
    before: Any
    after: Any

    @property
    def kind(self) -> str:
        if self.before is _MISSING:
            return "added"
        if self.after is _MISSING:
            return "removed"
        return "changed"


class _Missing:
    def __repr__(self) -> str:
        return "—"

    def __str__(self) -> str:
        return "—"


_MISSING = _Missing()


def _diff(a: dict[str, Any], b: dict[str, Any]) -> list[Change]:
    keys = sorted(set(a) | set(b))
    return [
        Change(k, a.get(k, _MISSING), b.get(k, _MISSING))
        for k in keys
        if k not in a or k not in b or a[k] != b[k]
    ]


def _checks(result: Any) -> dict[str, dict]:
    checks = result.get("checks") if isinstance(result, dict) else None
    out = {}
    for check in checks or []:
        if isinstance(check, dict) and check.get("code"):
            out[str(check["code"])] = check
    return out


@dataclass(frozen=True)
class TotalRow:
    name: str
    label: str
    before: Decimal | None
    after: Decimal | None

    @property
    def delta(self) -> Decimal | None:
        if self.before is None or self.after is None:
            return None
        return self.after - self.before


TOTAL_FIELDS = ("list_total", "discount", "discount_amount", "net_total", "capex_total",
                "lease_per_month", "tco_buy_total", "tco_lease_total")  # fmt: skip


@dataclass(frozen=True)
class RevisionComparison:
    a: QuoteRevision
    b: QuoteRevision
    inputs: list[Change] = field(default_factory=list)
    totals: list[TotalRow] = field(default_factory=list)
    checks_added: list[dict] = field(default_factory=list)
    checks_removed: list[dict] = field(default_factory=list)
    lines: list[Change] = field(default_factory=list)
    prices: list[Change] = field(default_factory=list)


def _bom_map(revision: QuoteRevision) -> dict[str, Any]:
    """Lines keyed by category and SKU (or, without a SKU, by their order within the category)."""
    out: dict[str, Any] = {}
    seen: dict[str, int] = {}
    for line in revision.lines.all():
        if line.sku:
            key = f"{line.get_category_display()} · {line.sku}"
        else:
            seen[line.category] = seen.get(line.category, 0) + 1
            key = f"{line.get_category_display()} #{seen[line.category]}"
        out[key] = (
            f"{line.quantity.normalize():f} {line.unit} × {line.unit_price:,.2f} = {line.line_total:,.2f}"
        )
    return out


def revision_compare(a: QuoteRevision, b: QuoteRevision) -> RevisionComparison:
    """What changed from ``a`` to ``b``: inputs (flattened request), totals, checks, BOM lines, prices."""
    checks_a, checks_b = _checks(a.result_json), _checks(b.result_json)
    totals = [
        TotalRow(
            name, str(QuoteRevision._meta.get_field(name).verbose_name), getattr(a, name), getattr(b, name)
        )
        for name in TOTAL_FIELDS
    ]
    return RevisionComparison(
        a=a,
        b=b,
        inputs=_diff(flatten_json(a.request_json), flatten_json(b.request_json)),
        totals=totals,
        checks_added=[checks_b[c] for c in sorted(set(checks_b) - set(checks_a))],
        checks_removed=[checks_a[c] for c in sorted(set(checks_a) - set(checks_b))],
        lines=_diff(_bom_map(a), _bom_map(b)),
        prices=_diff(flatten_json(a.prices_json), flatten_json(b.prices_json)),
    )
