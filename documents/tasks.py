"""Celery tasks of the quotes app.  Thin: take an id, do the work through the app's modules.

``render_proposal`` renders a revision's proposal PDF.  It is safe to run
twice for the same revision (messages are acknowledged late, so a worker
killed mid-render leaves the message to be redelivered):

* it starts only by moving ``pdf_status`` from *queued* to *rendering* in one
  conditional UPDATE — or, for the redelivery of the very job that was
  rendering, by matching its task id; any other run finds nothing to do;
* a PDF identical to the one stored (same SHA-256; rendering is
  deterministic) is not written again;
* a failure is recorded on the revision (``pdf_error``, ``pdf_attempts``) and
  retried with exponential backoff, up to ``max_retries`` times; the last
  failure leaves the revision *failed*, which the quote page offers to retry.
"""

from __future__ import annotations

import hashlib
import logging
import random

from celery import shared_task
from celery.signals import worker_ready
from django.db import transaction
from django.db.models import F

from quotes.models import QuoteRevision
from quotes.services.pdf import pdf_file_present, revision_pdf_fail, revision_pdf_store
from quotes.statuses import PdfStatus

from .pdf.render import render_proposal_pdf

logger = logging.getLogger(__name__)

MAX_RETRIES = 3
BACKOFF_BASE_S = 10
BACKOFF_MAX_S = 300


def retry_countdown(retries: int) -> float:
    """Seconds before retry number ``retries + 1``: 10, 20, 40 … s (capped), with jitter."""
    delay = min(BACKOFF_BASE_S * 2**retries, BACKOFF_MAX_S)
    return delay * random.uniform(0.8, 1.2)


def _claim(revision_id: int, task_id: str) -> bool:
    """Move the job to *rendering* and count the attempt; False when there is nothing for us to do."""
    with transaction.atomic():
        claimed = QuoteRevision.objects.filter(pk=revision_id, pdf_status=PdfStatus.QUEUED).update(
            pdf_status=PdfStatus.RENDERING, pdf_attempts=F("pdf_attempts") + 1, pdf_task_id=task_id or ""
        )
        if not claimed and task_id:
            # The same job redelivered after its worker was lost mid-render.
            claimed = QuoteRevision.objects.filter(
                pk=revision_id, pdf_status=PdfStatus.RENDERING, pdf_task_id=task_id
            ).update(pdf_attempts=F("pdf_attempts") + 1)
    return bool(claimed)


def _store(revision: QuoteRevision, pdf: bytes, task_id: str = "") -> bool:
    """Store the rendered PDF; False when nothing was written.

    Nothing is written when the job was superseded while rendering (its task id
    is no longer the revision's — e.g. the revision was issued meanwhile, so a
    draft-stamped PDF must not land on it), when the revision's state changed
    since it was read, or when the identical file is already stored.  The
    issued copy of a proposal is never replaced.
    """
    current = QuoteRevision.objects.get(pk=revision.pk)
    if (task_id and current.pdf_task_id != task_id) or current.status != revision.status:
        logger.info("Proposal PDF for %s superseded while rendering; not stored", revision.number)
        return False
    if current.is_issued and current.pdf_issued:
        logger.warning("Proposal PDF for %s is the issued copy; not replaced", revision.number)
        return False
    digest = hashlib.sha256(pdf).hexdigest()
    if current.pdf_sha256 == digest and pdf_file_present(current):
        with current.pdf_file.open("rb") as stored:
            same = hashlib.sha256(stored.read()).hexdigest() == digest
        if same:
            QuoteRevision.objects.filter(pk=revision.pk, pdf_status=PdfStatus.RENDERING).update(
                pdf_status=PdfStatus.READY, pdf_error="", pdf_issued=current.is_issued
            )
            return False
    if current.pdf_file:
        # The file name is the revision number: drop the stale file so the new one takes its name.
        current.pdf_file.delete(save=False)
    revision_pdf_store(revision=current, content=pdf)
    return True


@shared_task(
    bind=True,
    name="quotes.render_proposal",
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=MAX_RETRIES,
)
def render_proposal(self, revision_id: int) -> str:
    """Render and store the proposal PDF of revision ``revision_id``; returns what happened."""
    if not _claim(revision_id, self.request.id):
        status = QuoteRevision.objects.filter(pk=revision_id).values_list("pdf_status", flat=True).first()
        logger.info("Proposal PDF for revision %s: nothing to do (status %s)", revision_id, status)
        return f"skipped:{status or 'missing'}"
    revision = QuoteRevision.objects.select_related("quote", "quote__customer", "quote__owner").get(
        pk=revision_id
    )
    try:
        pdf = render_proposal_pdf(revision)
        written = _store(revision, pdf, self.request.id or "")
    except Exception as exc:
        message = f"{type(exc).__name__}: {exc}"
        retries = self.request.retries or 0
        logger.exception(
            "Proposal PDF for %s failed (attempt %s of %s)", revision.number, retries + 1, MAX_RETRIES + 1
        )
        if retries < MAX_RETRIES:
            QuoteRevision.objects.filter(pk=revision_id, pdf_status=PdfStatus.RENDERING).update(
                pdf_status=PdfStatus.QUEUED, pdf_error=message[:5000]
            )
            raise self.retry(exc=exc, countdown=retry_countdown(retries)) from exc
        revision_pdf_fail(revision=revision, error=message)
        return "failed"
    return "ready" if written else "unchanged"


@worker_ready.connect
def resend_orphaned_renders(sender=None, **kwargs) -> int:
    """When a worker starts, resend every job still marked *rendering*.

    A worker killed mid-render leaves its job *rendering* and the broker keeps
    the unacknowledged message until its visibility timeout (minutes).  Sent
    again under the same task id, the job is recognised by ``_claim`` as a
    redelivery and finishes now; should another live worker still be rendering
    it, the second run stores the same PDF (rendering is deterministic) and the
    late original finds the job ready and does nothing.
    """
    resent = 0
    rows = QuoteRevision.objects.filter(pdf_status=PdfStatus.RENDERING).exclude(pdf_task_id="")
    for revision_id, task_id in rows.values_list("pk", "pdf_task_id"):
        try:
            render_proposal.apply_async(args=[revision_id], task_id=task_id)
            resent += 1
        except Exception:  # noqa: BLE001 - a broker hiccup must not stop the worker starting
            logger.warning("Could not resend the orphaned PDF job of revision %s", revision_id, exc_info=True)
    if resent:
        logger.info("Resent %d proposal PDF job(s) left rendering by a lost worker", resent)
    return resent
