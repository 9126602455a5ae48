"""Proposal PDF, workbook and launch-bundle views of a revision.

Every view fetches the revision through ``selectors.revision_get_visible``,
so a revision outside the user's quotes answers 404 (never 403), exactly
like a revision that does not exist.  Downloads are attachments built from
the frozen revision; the PDF is served only once its job is *ready* and the
stored file still has the SHA-256 recorded when it was rendered.
"""

from __future__ import annotations

import hashlib
import logging

from django.core.exceptions import PermissionDenied
from django.http import FileResponse, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from quotes import selectors
from quotes.models import QuoteRevision
from quotes.services.pdf import pdf_file_present
from quotes.statuses import PdfStatus

from .exports import (
    XLSX_CONTENT_TYPE,
    BundleUnavailable,
    bundle_filename,
    revision_launch_bundle,
    revision_workbook,
    workbook_filename,
)
from .pdf.fonts import pdf_speed_notice
from .pdf.jobs import ACTIVE_STATUSES, RenderRefused, job_is_stale, proposal_request

logger = logging.getLogger(__name__)


def pdf_panel_context(revision: QuoteRevision | None, user=None) -> dict:
    """What ``quotes/_pdf_status.html`` needs beside ``revision`` (add it to the quote page's context).

    The render/retry buttons are offered only to those who may change the quote
    (``user``; without one, as before, they are shown and the view decides).
    """
    if revision is None:
        return {"pdf_notice": pdf_speed_notice()}
    active = revision.pdf_status in ACTIVE_STATUSES
    return {
        "pdf_can_render": user is None or selectors.can_edit(user, revision.quote),
        "pdf_notice": pdf_speed_notice(),
        "pdf_polling": active,
        "pdf_stale": active and job_is_stale(revision),
        "pdf_error_display": _(revision.pdf_error) if revision.pdf_error else "",
    }


def _status_response(request: HttpRequest, revision: QuoteRevision, status: int = 200) -> HttpResponse:
    context = {"revision": revision, **pdf_panel_context(revision, request.user)}
    return render(request, "quotes/_pdf_status.html", context, status=status)


def _back_to_quote(revision: QuoteRevision) -> HttpResponse:
    return redirect(f"{revision.quote.get_absolute_url()}?rev={revision.index}#documents")


@require_GET
def revision_pdf_status(request: HttpRequest, pk: int) -> HttpResponse:
    """The PDF status partial; it polls itself (htmx, every second) while the job is queued or rendering."""
    revision = selectors.revision_get_visible(user=request.user, pk=pk, without_plan=True)
    return _status_response(request, revision)


def _request_pdf(request: HttpRequest, pk: int, *, retry: bool) -> HttpResponse:
    revision = selectors.revision_get_visible(user=request.user, pk=pk)
    if not selectors.can_edit(request.user, revision.quote):
        # Read-only teammates may download a ready PDF but not queue renders.
        raise PermissionDenied(_("You may view this quote but not change it, so you cannot render its PDF."))
    force = revision.pdf_status == PdfStatus.READY and not retry
    try:
        revision = proposal_request(revision=revision, by=request.user, force=force)
    except RenderRefused as exc:
        if request.htmx:
            # The panel comes back with the reason in it, under the refusal's own status (429 for
            # the per-user limit), so a client counting answers never takes it for a render it
            # asked for.
            context = {
                "revision": revision,
                "pdf_refusal": exc.message,
                **pdf_panel_context(revision, request.user),
            }
            response = render(request, "quotes/_pdf_status.html", context, status=exc.status)
            response["X-Refusal"] = "panel"  # static/js/app.js: swap it in, though it is an error answer
            return response
        return render(
            request,
            "quotes/pdf/not_ready.html",
            {"revision": revision, "quote": revision.quote, "pdf_refusal": exc.message,
             **pdf_panel_context(revision, request.user)},
            status=exc.status,
        )  # fmt: skip
    if request.htmx:
        return _status_response(request, revision)
    return _back_to_quote(revision)


@require_POST
def revision_pdf_render(request: HttpRequest, pk: int) -> HttpResponse:
    """Render the proposal PDF (again, when one is ready: the "regenerate" button)."""
    return _request_pdf(request, pk, retry=False)


@require_POST
def revision_pdf_retry(request: HttpRequest, pk: int) -> HttpResponse:
    """Retry a failed (or lost) rendering; a ready PDF is kept as it is."""
    return _request_pdf(request, pk, retry=True)


def _stored_pdf_matches(revision: QuoteRevision) -> bool:
    digest = hashlib.sha256()
    with revision.pdf_file.open("rb") as stored:
        for chunk in iter(lambda: stored.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest() == revision.pdf_sha256


@require_GET
def revision_pdf_download(request: HttpRequest, pk: int) -> HttpResponse:
    """The proposal PDF as an attachment; while it is not ready, a page that says so (409)."""
    revision = selectors.revision_get_visible(user=request.user, pk=pk)
    # An issued revision serves only the PDF rendered from its issued state, never the draft copy.
    final = not revision.is_issued or revision.pdf_issued
    if final and revision.pdf_status == PdfStatus.READY and pdf_file_present(revision):
        if _stored_pdf_matches(revision):
            return FileResponse(
                revision.pdf_file.open("rb"),
                as_attachment=True,
                filename=f"{revision.number}.pdf",
                content_type="application/pdf",
            )
        logger.error("Proposal PDF of %s does not match its recorded SHA-256; not served", revision.number)
    context = {
        "revision": revision,
        "quote": revision.quote,
        "mismatch": final and revision.pdf_status == PdfStatus.READY,
        **pdf_panel_context(revision, request.user),
    }
    return render(request, "quotes/pdf/not_ready.html", context, status=409)


@require_GET
def revision_pdf_internal(request: HttpRequest, pk: int) -> HttpResponse:
    """The internal edition of the proposal (every check, formulas and sources, launch appendix).

    Rendered on demand from the same frozen revision as the customer edition and
    never stored: it is for the seller's own engineers, not a document sent out.
    """
    from .pdf.render import render_proposal_pdf

    revision = selectors.revision_get_visible(user=request.user, pk=pk)
    pdf = render_proposal_pdf(revision, edition="internal")
    response = HttpResponse(pdf, content_type="application/pdf")
    response["Content-Disposition"] = f'attachment; filename="{revision.number}-internal.pdf"'
    return response


@require_GET
def revision_xlsx_download(request: HttpRequest, pk: int) -> HttpResponse:
    """The BOM and TCO workbook of the revision (XLSX attachment)."""
    revision = selectors.revision_get_visible(user=request.user, pk=pk)
    response = HttpResponse(revision_workbook(revision), content_type=XLSX_CONTENT_TYPE)
    response["Content-Disposition"] = f'attachment; filename="{workbook_filename(revision)}"'
    return response


@require_GET
def revision_bundle_download(request: HttpRequest, pk: int) -> HttpResponse:
    """The launch bundle of the revision's frozen plan (ZIP attachment); 404 when the plan has none."""
    revision = selectors.revision_get_visible(user=request.user, pk=pk)
    try:
        content = revision_launch_bundle(revision)
    except BundleUnavailable as exc:
        return render(
            request,
            "quotes/pdf/not_available.html",
            {"revision": revision, "quote": revision.quote, "reason": str(exc)},
            status=404,
        )
    response = HttpResponse(content, content_type="application/zip")
    response["Content-Disposition"] = f'attachment; filename="{bundle_filename(revision)}"'
    return response
