"""A sales manager's decision on a revision's discount: approved, or rejected with a reason."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.utils.translation import gettext as _

from .. import selectors
from ..models import Approval, QuoteRevision
from ..statuses import ApprovalDecision, ApprovalState, AuditAction
from .base import audit, quote_lock, quote_save


def _decide(
    *, revision: QuoteRevision, by, decision: str, comment: str, expected_version: int | None
) -> Approval:
    with transaction.atomic():
        quote = quote_lock(revision.quote, expected_version)
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
        quote_save(quote, [])
        audit(
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
