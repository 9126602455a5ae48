"""The sales manager's pipeline: the team's quotes by stage, value, age and owner.

Stages (what a manager asks "where is it?"): draft, awaiting approval (the
latest revision's discount waits for a manager), issued (latest revision
frozen, not yet sent), sent, accepted (by the customer, on the share link),
won, lost, expired.  Quotes whose approval waits on *this* manager come first.
Only the manager's team's quotes are listed (a superuser sees all).
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from decimal import Decimal

from django.db.models import OuterRef, Q, Subquery
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from accounts import roles
from catalog.spreadsheet import csv_safe

from ..models import Quote, QuoteRevision
from ..statuses import ApprovalState, QuoteStatus, RevisionStatus

STAGES = (
    ("draft", gettext_lazy("Draft")),
    ("awaiting_approval", gettext_lazy("Awaiting approval")),
    ("issued", gettext_lazy("Issued")),
    ("sent", gettext_lazy("Sent")),
    ("accepted", gettext_lazy("Accepted")),
    ("won", gettext_lazy("Won")),
    ("lost", gettext_lazy("Lost")),
    ("expired", gettext_lazy("Expired")),
)
STAGE_LABELS = dict(STAGES)


def may_see_pipeline(user) -> bool:
    if not getattr(user, "is_authenticated", False) or not user.is_active:
        return False
    return bool(user.is_superuser or (roles.is_manager(user) and roles.team_of(user) is not None))


def team_quotes(user):
    """The quotes of the manager's team (all for a superuser), annotated with the latest revision."""
    if user.is_superuser:
        qs = Quote.objects.all()
    else:
        team = roles.team_of(user)
        qs = Quote.objects.filter(team=team) if team is not None else Quote.objects.none()
    latest = QuoteRevision.objects.filter(quote=OuterRef("pk")).order_by("-index")
    return qs.select_related("customer", "owner", "team").annotate(
        latest_pk=Subquery(latest.values("pk")[:1]),
        latest_number=Subquery(latest.values("number")[:1]),
        latest_net_total=Subquery(latest.values("net_total")[:1]),
        latest_status=Subquery(latest.values("status")[:1]),
        latest_approval=Subquery(latest.values("approval_state")[:1]),
        latest_created_by=Subquery(latest.values("created_by")[:1]),
    )


def stage_of(quote) -> str:
    if quote.status == QuoteStatus.DRAFT:
        if quote.latest_approval == ApprovalState.PENDING and quote.latest_status == RevisionStatus.DRAFT:
            return "awaiting_approval"
        if quote.latest_status == RevisionStatus.ISSUED:
            return "issued"
        return "draft"
    return str(quote.status)


@dataclass(frozen=True)
class PipelineRow:
    quote: Quote
    stage: str
    value: Decimal
    age_days: int
    waits_on_me: bool

    @property
    def stage_label(self) -> str:
        return str(STAGE_LABELS.get(self.stage, self.stage))


def pipeline_rows(user, *, stage: str = "", owner: str = "", text: str = "") -> list[PipelineRow]:
    """The pipeline, filtered; approvals waiting on ``user`` first, then by stage order and age."""
    qs = team_quotes(user)
    if owner:
        qs = qs.filter(owner__username=owner)
    text = text.strip()
    if text:
        qs = qs.filter(
            Q(number__icontains=text) | Q(customer__name__icontains=text) | Q(title__icontains=text)
        )
    today = timezone.localdate()
    order = [key for key, _label in STAGES]
    rows = []
    for quote in qs:
        row_stage = stage_of(quote)
        if stage and row_stage != stage:
            continue
        waits = (
            row_stage == "awaiting_approval"
            and roles.is_manager(user)
            and user.pk not in (quote.owner_id, quote.latest_created_by)
        )
        rows.append(
            PipelineRow(
                quote=quote,
                stage=row_stage,
                value=quote.latest_net_total if quote.latest_net_total is not None else Decimal("0"),
                age_days=(today - timezone.localdate(quote.created_at)).days,
                waits_on_me=waits,
            )
        )
    rows.sort(
        key=lambda r: (not r.waits_on_me, order.index(r.stage) if r.stage in order else 99, -r.age_days)
    )
    return rows


def stage_summary(rows: list[PipelineRow]) -> list[dict]:
    """Count and value per stage, per currency (values in different currencies are never added)."""
    out = []
    for key, label in STAGES:
        mine = [r for r in rows if r.stage == key]
        totals: dict[str, Decimal] = {}
        for r in mine:
            totals[r.quote.currency] = totals.get(r.quote.currency, Decimal("0")) + r.value
        out.append({"stage": key, "label": label, "count": len(mine), "totals": sorted(totals.items())})
    return out


def pipeline_csv(rows: list[PipelineRow]) -> str:
    """The pipeline as CSV (UTF-8 with BOM for Excel); text cells are formula-injection safe."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(
        [
            _("Quote"),
            _("Revision"),
            _("Customer"),
            _("Title"),
            _("Stage"),
            _("Net total"),
            _("Currency"),
            _("Age (days)"),
            _("Owner"),
            _("Valid until"),
        ]  # fmt: skip
    )
    for r in rows:
        q = r.quote
        writer.writerow(
            [
                csv_safe(q.number),
                csv_safe(q.latest_number or ""),
                csv_safe(q.customer.name),
                csv_safe(q.title),
                csv_safe(r.stage_label),
                f"{r.value:.2f}",
                q.currency,
                r.age_days,
                csv_safe(q.owner.get_username()),
                q.valid_until.isoformat(),
            ]
        )
    return "\ufeff" + buffer.getvalue()
