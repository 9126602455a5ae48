"""A quote's way along the pipeline in ``statuses.TRANSITIONS`` (sending issues its latest
revision), and the daily expiry of sent quotes past their validity date."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import get_language
from django.utils.translation import gettext as _

from configurator.public import is_zh

from ..models import Quote, QuoteRevision
from ..pricing import reason_texts
from ..statuses import (
    ApprovalState,
    AuditAction,
    QuoteStatus,
    RevisionStatus,
    allowed_targets,
    transition_for,
)
from .base import audit, discount_threshold, quote_lock, quote_save, require_edit
from .issuing import revision_issue_locked


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


def transition_locked(*, quote: Quote, to_status: str, by, comment: str) -> Quote:
    """Move the locked ``quote`` to ``to_status`` (inside the caller's transaction)."""
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
    if to_status == QuoteStatus.ACCEPTED:
        latest = quote.revisions.order_by("-index").first()
        if latest is not None and latest.lines_withholding_the_total:
            raise ValidationError(
                _(
                    "%(number)s has items priced on request (%(items)s); price them before it is accepted as a firm total."
                )
                % {
                    "number": latest.number,
                    "items": ", ".join(
                        line.description_in(zh=is_zh(get_language()))
                        for line in latest.lines_withholding_the_total
                    ),
                }
            )
    detail: dict[str, Any] = {"from": quote.status, "to": to_status, "comment": comment.strip()}
    if to_status == QuoteStatus.SENT:
        revision = quote.revisions.select_for_update().order_by("-index").first()
        refusal = _sendable_refusal(quote, revision)
        if refusal:
            raise ValidationError(refusal)
        if revision.status == RevisionStatus.DRAFT:
            revision_issue_locked(quote=quote, revision=revision, by=by)
        detail["revision"] = revision.number
    quote.status = to_status
    quote_save(quote, ["status"])
    audit(actor=by, action=AuditAction.QUOTE_TRANSITION, obj=quote, quote=quote, detail=detail)
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
        locked = quote_lock(quote, expected_version)
        require_edit(by, locked)
        return transition_locked(quote=locked, to_status=to_status, by=by, comment=comment)


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
                transition_locked(
                    quote=locked, to_status=QuoteStatus.EXPIRED, by=None, comment="validity date passed"
                )
                count += 1
    return count
