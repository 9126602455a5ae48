"""Issuing a revision: it is frozen with the quote's header, its draft PDF is forgotten,
and :data:`revision_issued` is sent once the transaction has committed."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Max
from django.dispatch import Signal
from django.utils import timezone
from django.utils.translation import gettext as _

from ..frozen import header_snapshot
from ..models import Quote, QuoteRevision
from ..pricing import reason_texts
from ..statuses import CLOSED_STATUSES, ApprovalState, AuditAction, RevisionStatus
from .base import audit, quote_lock, quote_save, require_edit
from .pdf import pdf_file_delete, pdf_reset_for_issue

# Sent after the transaction that issued a revision has committed, with
# ``revision_id``: the proposal-PDF code connects here to queue the rendering
# (connect it from an AppConfig.ready() so it is registered in every process).
revision_issued = Signal()


def revision_issue_locked(*, quote: Quote, revision: QuoteRevision, by) -> QuoteRevision:
    """Issue ``revision`` of the locked ``quote`` (inside the caller's transaction)."""
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
    if revision.approval_state == ApprovalState.NOT_NEEDED:
        # A price list changed since the revision was planned: its prices may now be below the list.
        from .revisions import below_todays_list

        reasons = below_todays_list(revision)
        if reasons:
            raise ValidationError(
                _(
                    "The price list changed since %(number)s was planned, and its prices are now below "
                    "today's list: make a new revision, re-priced at today's list or keeping these prices "
                    "with a sales manager's approval."
                )
                % {"number": revision.number}
                + "".join(f" {text}" for text in reason_texts(reasons))
            )
    revision.status = RevisionStatus.ISSUED
    revision.issued_by = by
    revision.issued_at = timezone.now()
    # Frozen means frozen: the header the revision is issued with is part of it, and the
    # draft PDF (stamped "Draft — not issued") is never served as the issued proposal.
    revision.header_json = header_snapshot(quote)
    draft_pdf = pdf_reset_for_issue(revision)
    revision.full_clean()
    revision.save()
    if draft_pdf:
        transaction.on_commit(lambda: pdf_file_delete(draft_pdf))
    audit(
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


def revision_issue(*, revision: QuoteRevision, by, expected_version: int | None = None) -> QuoteRevision:
    """Freeze the latest revision of a quote (its discount must not be awaiting or refused approval)."""
    with transaction.atomic():
        quote = quote_lock(revision.quote, expected_version)
        require_edit(by, quote)
        if quote.status in CLOSED_STATUSES:
            raise ValidationError(_("The quote is closed."))
        locked = QuoteRevision.objects.select_for_update().get(pk=revision.pk)
        revision_issue_locked(quote=quote, revision=locked, by=by)
        quote_save(quote, [])
    return locked
