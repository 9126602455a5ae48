"""The proposal PDF job's record on a revision: queued, rendering, stored or failed.

The PDF fields stay writable after a revision is issued (the model lets them
through); issuing itself forgets a draft's PDF (:func:`pdf_reset_for_issue`).
"""

from __future__ import annotations

import hashlib
import logging

from django.core.files.base import ContentFile
from django.db import transaction
from django.utils import timezone

from ..models import QuoteRevision
from ..statuses import AuditAction, PdfStatus
from .base import audit

logger = logging.getLogger(__name__)


def pdf_file_present(revision: QuoteRevision) -> bool:
    """True when the revision names a PDF file and the storage still has it."""
    name = revision.pdf_file.name if revision.pdf_file else ""
    if not name:
        return False
    try:
        return revision.pdf_file.storage.exists(name)
    except Exception:  # unreadable storage counts as missing
        logger.warning("Proposal PDF storage check failed for %s", revision.number, exc_info=True)
        return False


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
        audit(
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
        audit(
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
        audit(
            actor=None,
            action=AuditAction.PDF_FAILED,
            obj=locked,
            quote=locked.quote,
            detail={"number": locked.number, "error": error[:500], "attempts": locked.pdf_attempts},
        )
    return locked


def pdf_reset_for_issue(revision: QuoteRevision) -> str:
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


def pdf_file_delete(name: str) -> None:
    from django.core.files.storage import default_storage

    try:
        default_storage.delete(name)
    except OSError:  # pragma: no cover - a missing draft file is fine
        logger.warning("Could not delete the draft proposal %s", name, exc_info=True)
