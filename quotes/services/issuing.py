"""Issuing a revision: it is frozen with the quote's header, its draft PDF is forgotten,
and :data:`revision_issued` is sent once the transaction has committed."""

from __future__ import annotations

from collections.abc import Mapping

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Max
from django.dispatch import Signal
from django.utils import timezone
from django.utils.translation import gettext as _

from ..frozen import header_snapshot
from ..models import Quote, QuoteRevision
from ..pricing import approval_assessment, mark_lines, reason_texts
from ..statuses import CLOSED_STATUSES, ApprovalState, AuditAction, RevisionStatus
from .base import audit, discount_threshold, quote_lock, quote_save, require_edit
from .pdf import pdf_file_delete, pdf_reset_for_issue
from .planning import has_list_record, plan_again

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


def below_todays_list(revision: QuoteRevision) -> list[dict]:
    """The approval reasons ``revision``'s priced lines have against **today's** list (beyond the
    threshold), for a revision planned before a price change: [] when there are none, when
    today's list is the one it was planned with, or for a revision without the catalog's list
    record (hand-made, older).  Issuing refuses a revision with reasons it was never approved
    for (issue 27: no path sends a line below its list price without a recorded approval)."""
    prices = revision.prices_json
    if not has_list_record(prices):
        return []
    plan = plan_again(
        request_json=revision.request_json,
        resolved_json=revision.resolved_json,
        discount=revision.discount,
        keep_prices=True,
    )
    today = plan.prices_json.get("list_terms") if isinstance(plan.prices_json, Mapping) else None
    if today is None:
        return [{"code": "no_price_list", "currency": revision.currency}]
    if today == prices.get("list_terms"):
        return []
    lines = [
        {
            "category": row.category,
            "sku": row.sku,
            "description_en": row.description_en,
            "quantity": row.quantity,
            "unit_price": row.unit_price,
            "discount": row.discount,
            "note": row.note,
            "non_catalog": row.non_catalog,
        }
        for row in revision.lines.all()
    ]
    dropped = mark_lines(
        lines,
        result=revision.result_json,
        prices={**prices, "list_terms": today},
        currency=revision.currency,
        request=revision.resolved_json,
    )
    state, reasons = approval_assessment(lines, dropped, revision.discount, discount_threshold())
    return reasons if state == ApprovalState.PENDING else []
