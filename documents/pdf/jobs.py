"""The proposal-PDF job of a revision: request it, follow it, recover from a lost broker.

The job lives on the revision (``pdf_status`` none → queued → rendering →
ready | failed, ``pdf_attempts``, ``pdf_error``, ``pdf_task_id``).  Every
state change is a conditional ``UPDATE … WHERE pdf_status …`` so two people
(or two workers) can never start the same job twice; the audit rows come from
``quotes.services.pdf`` (``revision_pdf_queue`` / ``revision_pdf_store`` /
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

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from quotes import selectors
from quotes.bom import plan_nodes
from quotes.models import AuditEvent, QuoteRevision
from quotes.services.pdf import pdf_file_present, revision_pdf_fail, revision_pdf_queue
from quotes.statuses import AuditAction, PdfStatus

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


class RenderRefused(Exception):
    """A rendering request refused for a reason the user can act on; ``status`` is the HTTP answer."""

    def __init__(self, message: str, status: int):
        super().__init__(message)
        self.message = message
        self.status = status


def max_active_per_user() -> int:
    return int(getattr(settings, "PDF_MAX_ACTIVE_PER_USER", 2))


def max_nodes() -> int:
    return int(getattr(settings, "PDF_MAX_NODES", 256))


def active_jobs_of(user) -> int:
    """Renders ``user`` asked for that are still queued or rendering (lost jobs not counted)."""
    rows = QuoteRevision.objects.filter(pdf_status__in=ACTIVE_STATUSES, pdf_requested_by=user)
    return sum(1 for row in rows if not job_is_stale(row))


def render_refusal(revision: QuoteRevision, *, by, force: bool, system: bool = False) -> RenderRefused | None:
    """Why ``by`` may not have ``revision``'s proposal rendered now (None when they may).

    * only someone who may change the quote renders it (a read-only teammate
      can download a ready PDF but not spend the worker's time: 403);
    * the issued copy of a proposal is never re-rendered (409): a change of
      header or figures belongs in a new revision;
    * a deployment above ``settings.PDF_MAX_NODES`` nodes is refused (413):
      the proposal grows with the node count (rack elevations, per-group
      tables) — 1,024 nodes made 220 pages in 47 s and held the shared worker;
    * each user has at most ``settings.PDF_MAX_ACTIVE_PER_USER`` renders
      queued or rendering at once (429), so one engineer cannot hold up the
      other teams' proposals.
    ``system`` (the render started by issuing) skips the user checks.
    """
    if not system and not selectors.can_edit(by, revision.quote):
        return RenderRefused(
            _("You may view this quote but not change it, so you cannot render its PDF."), 403
        )
    if revision.is_issued and revision.pdf_issued and force:
        return RenderRefused(
            _(
                "%(number)s is issued: its proposal PDF is the copy the customer was given and is never "
                "regenerated. To change the header or the figures, make a new revision."
            )
            % {"number": revision.number},
            409,
        )
    nodes = plan_nodes(revision.result_json if isinstance(revision.result_json, dict) else {})
    if nodes > max_nodes():
        return RenderRefused(
            _(
                "This deployment has %(nodes)s nodes; proposals are rendered for at most %(limit)s nodes "
                "(a larger one runs to hundreds of pages and holds up everyone's documents). Quote it as "
                "building blocks of at most %(limit)s nodes; the workbook has the full bill of materials."
            )
            % {"nodes": nodes, "limit": max_nodes()},
            413,
        )
    if not system and active_jobs_of(by) >= max_active_per_user():
        return RenderRefused(
            _(
                "You already have %(count)s proposal PDFs waiting or rendering; wait until one is ready, "
                "then try again."
            )
            % {"count": active_jobs_of(by)},
            429,
        )
    return None


def proposal_request(
    *, revision: QuoteRevision, by, force: bool = False, system: bool = False
) -> QuoteRevision:
    """Queue the rendering of ``revision``'s proposal PDF; returns the revision as it now stands.

    Idempotent: a job already queued or rendering is left alone (unless it is
    stale), and a ready PDF whose file is present is kept unless ``force``
    (the "regenerate" button).  The task is sent when the transaction commits.
    Raises :class:`RenderRefused` (see :func:`render_refusal`).
    """
    current = QuoteRevision.objects.select_related("quote").get(pk=revision.pk)
    if not force and pdf_is_ready(current):
        return current
    if current.is_issued and current.pdf_issued and not force and current.pdf_status == PdfStatus.READY:
        return current  # the issued copy stays, even if its file went missing (never re-rendered)
    task_id = uuid.uuid4().hex
    with transaction.atomic():
        if by is not None and getattr(by, "pk", None):
            # One user's requests one at a time, so two clicks cannot both pass the limit.
            get_user_model().objects.select_for_update().filter(pk=by.pk).first()
        if not system and not selectors.can_edit(by, current.quote):
            raise render_refusal(current, by=by, force=force)
        if current.pdf_status in ACTIVE_STATUSES and not job_is_stale(current):
            return current  # already on its way: asking again is not another job
        refusal = render_refusal(current, by=by, force=force, system=system)
        if refusal is not None:
            raise refusal
        claim = QuoteRevision.objects.filter(pk=current.pk)
        if current.pdf_status in ACTIVE_STATUSES:
            # Take over a lost job only if nobody else did since we read it.
            claim = claim.filter(pdf_status=current.pdf_status, pdf_task_id=current.pdf_task_id)
        else:
            claim = claim.exclude(pdf_status__in=ACTIVE_STATUSES)
        claimed = claim.update(
            pdf_status=PdfStatus.QUEUED,
            pdf_task_id=task_id,
            pdf_error="",
            pdf_attempts=0,
            pdf_requested_by=by if by is not None and getattr(by, "pk", None) else None,
        )
        if not claimed:
            return QuoteRevision.objects.get(pk=current.pk)
        revision_pdf_queue(revision=current, task_id=task_id, by=by)
        transaction.on_commit(functools.partial(_dispatch, current.pk, task_id))
    return QuoteRevision.objects.get(pk=current.pk)


def on_revision_issued(sender, revision_id: int, by=None, **kwargs) -> None:
    """Render the issued proposal as soon as the revision is issued (connected in DocumentsConfig.ready)."""
    revision = QuoteRevision.objects.filter(pk=revision_id).first()
    if revision is None:
        return
    try:
        proposal_request(revision=revision, by=by, system=True)
    except RenderRefused as exc:
        # Too large to render: the quote page says why; the issue itself stands.
        revision_pdf_fail(revision=revision, error=exc.message)


def on_proposal_pdf_wanted(sender, revision: QuoteRevision, by=None, **kwargs) -> None:
    """Render the proposal a customer link will serve, as the system (``quotes.services.sharing``
    sends this; connected in DocumentsConfig.ready).  A refusal (e.g. too large to render) leaves the
    link working: the customer page says the document is being prepared."""
    try:
        proposal_request(revision=revision, by=by, system=True)
    except RenderRefused as exc:
        logger.warning(
            "Proposal PDF of %s for a customer link not rendered: %s", revision.number, exc.message
        )


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
            revision_pdf_fail(revision=revision, error=SERVICE_UNAVAILABLE)
