"""The proposal-PDF job of a revision: request it, follow it, recover from a lost broker.

The job lives on the revision (``pdf_status`` none → queued → rendering →
ready | failed, ``pdf_attempts``, ``pdf_error``, ``pdf_task_id``).  Every
state change is a conditional ``UPDATE … WHERE pdf_status …`` so two people
(or two workers) can never start the same job twice; the audit rows come from
``quotes.services`` (``revision_pdf_queue`` / ``revision_pdf_store`` /
``revision_pdf_fail``).

The job is dispatched after the transaction commits.  With no broker
(embedded mode, ``CELERY_TASK_ALWAYS_EAGER``) the task runs right there in
the request; with a broker that is down, the revision is marked failed with
:data:`SERVICE_UNAVAILABLE` and everything else about the quote keeps working.
"""

from __future__ import annotations

import datetime as dt
import functools
import logging
import uuid

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_noop

from .. import services
from ..models import AuditEvent, QuoteRevision
from ..statuses import AuditAction, PdfStatus

logger = logging.getLogger(__name__)

ACTIVE_STATUSES = (PdfStatus.QUEUED, PdfStatus.RENDERING)
# A job queued or rendering for longer than this is taken as lost (worker killed and
# the message gone, broker flushed) and may be requested again.
STALE_AFTER = dt.timedelta(minutes=15)
SERVICE_UNAVAILABLE = gettext_noop("PDF service temporarily unavailable, try again")
# Publishing the job: one quick retry, so a request never hangs on a broker that is down.
PUBLISH_RETRY_POLICY = {"max_retries": 1, "interval_start": 0, "interval_step": 0.5, "interval_max": 0.5}


def _broker_errors() -> tuple[type[BaseException], ...]:
    """Exceptions that mean "the broker cannot take the job now" (not a bug in the task)."""
    errors: list[type[BaseException]] = [OSError]  # ConnectionError, TimeoutError, socket errors
    try:
        from kombu.exceptions import KombuError  # OperationalError and friends

        errors.append(KombuError)
    except ImportError:  # pragma: no cover - kombu comes with Celery
        pass
    try:
        import redis.exceptions

        errors += [redis.exceptions.ConnectionError, redis.exceptions.TimeoutError]
    except ImportError:  # pragma: no cover - only with the Redis transport
        pass
    return tuple(errors)


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


def pdf_is_ready(revision: QuoteRevision) -> bool:
    return revision.pdf_status == PdfStatus.READY and pdf_file_present(revision)


def _queued_at(revision: QuoteRevision) -> dt.datetime | None:
    """When the current job was queued (from its audit row)."""
    event = (
        AuditEvent.objects.filter(
            action=AuditAction.PDF_QUEUED,
            object_type=QuoteRevision._meta.model_name,
            object_id=str(revision.pk),
        )
        .order_by("-created_at", "-id")
        .first()
    )
    return event.created_at if event else None


def job_is_stale(revision: QuoteRevision, *, now: dt.datetime | None = None) -> bool:
    """True for a queued or rendering job older than :data:`STALE_AFTER`."""
    if revision.pdf_status not in ACTIVE_STATUSES:
        return False
    queued_at = _queued_at(revision)
    return queued_at is None or (now or timezone.now()) - queued_at > STALE_AFTER


def proposal_request(*, revision: QuoteRevision, by, force: bool = False) -> QuoteRevision:
    """Queue the rendering of ``revision``'s proposal PDF; returns the revision as it now stands.

    Idempotent: a job already queued or rendering is left alone (unless it is
    stale), and a ready PDF whose file is present is kept unless ``force``
    (the "regenerate" button).  The task is sent when the transaction commits.
    """
    current = QuoteRevision.objects.get(pk=revision.pk)
    if not force and pdf_is_ready(current):
        return current
    task_id = uuid.uuid4().hex
    with transaction.atomic():
        claim = QuoteRevision.objects.filter(pk=current.pk)
        if current.pdf_status in ACTIVE_STATUSES:
            if not job_is_stale(current):
                return current
            # Take over a lost job only if nobody else did since we read it.
            claim = claim.filter(pdf_status=current.pdf_status, pdf_task_id=current.pdf_task_id)
        else:
            claim = claim.exclude(pdf_status__in=ACTIVE_STATUSES)
        claimed = claim.update(pdf_status=PdfStatus.QUEUED, pdf_task_id=task_id, pdf_error="", pdf_attempts=0)
        if not claimed:
            return QuoteRevision.objects.get(pk=current.pk)
        services.revision_pdf_queue(revision=current, task_id=task_id, by=by)
        transaction.on_commit(functools.partial(_dispatch, current.pk, task_id))
    return QuoteRevision.objects.get(pk=current.pk)


def _dispatch(revision_id: int, task_id: str) -> None:
    """Send the job to Celery (or run it, when eager); a broker that is down fails the job cleanly."""
    from ..tasks import render_proposal

    try:
        render_proposal.apply_async(args=[revision_id], task_id=task_id, retry_policy=PUBLISH_RETRY_POLICY)
    except _broker_errors() as exc:
        logger.warning(
            "Proposal PDF for revision %s not queued: the broker is unavailable (%s: %s)",
            revision_id,
            type(exc).__name__,
            exc,
        )
        revision = QuoteRevision.objects.filter(
            pk=revision_id, pdf_task_id=task_id, pdf_status=PdfStatus.QUEUED
        ).first()
        if revision is not None:
            services.revision_pdf_fail(revision=revision, error=SERVICE_UNAVAILABLE)
