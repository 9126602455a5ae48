"""Pages of the sales workflow (see ``quotes/workflow/changes.py``).

Internal pages fetch through the visibility selectors (404 outside the user's
quotes) and check edit rights before any change.  The customer pages
(``share_*``) need no log-in: the unguessable token is the only key, a
revoked, expired or unknown token is a plain 404, every request is logged,
and nothing on them links to another quote or to an internal page.
"""

from __future__ import annotations

import hashlib
import json
import logging

from django.contrib import messages
from django.contrib.auth.decorators import login_not_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from accounts import roles
from configurator.public import is_zh

from .. import selectors
from ..forms import MAX_REQUEST_JSON_CHARS
from ..frozen import revision_prepared_by, revision_quote
from ..models import QuoteRevision
from ..services import cloning, sharing
from ..services.base import QuoteConflictError
from ..statuses import BomCategory, PdfStatus
from . import changes, pipeline
from .models import Notification, ShareLink, ShareView

logger = logging.getLogger(__name__)


def _messages_of(exc: ValidationError) -> list[str]:
    return list(exc.messages)


def _require_editable(request, revision: QuoteRevision) -> None:
    if not selectors.can_edit(request.user, revision.quote):
        raise PermissionDenied(_("You may view this quote but not change it."))


def _to_revision(revision: QuoteRevision) -> HttpResponse:
    return redirect(f"{revision.quote.get_absolute_url()}?rev={revision.index}")


SHARE_URL_SESSION_KEY = "quotes.new_share_url"


def workflow_panel_context(request, quote, revision) -> dict:
    """What ``quotes/_workflow_panel.html`` needs on the quote page."""
    if revision is None:
        return {}
    user = request.user
    new_link = request.session.get(SHARE_URL_SESSION_KEY) if hasattr(request, "session") else None
    if new_link and new_link.get("revision") == revision.pk:
        request.session.pop(SHARE_URL_SESSION_KEY, None)
    else:
        new_link = None
    links = list(revision.share_links.select_related("created_by").order_by("-created_at"))
    return {
        "share_links": links,
        "share_views": ShareView.objects.filter(link__revision=revision).order_by("-at")[:20],
        "customer_acceptance": getattr(revision, "customer_acceptance", None),
        "customer_questions": list(revision.customer_questions.all()[:20]),
        "new_share_url": new_link["url"] if new_link else "",
        "can_share": selectors.can_edit(user, quote),
        "can_clone": user.has_perm("quotes.add_quote"),
    }


# --------------------------------------------------------------------------- revise the configuration


@require_GET
def revision_configure(request: HttpRequest, pk: int) -> HttpResponse:
    """The configurator, opened on this revision's configuration; saving makes the next revision."""
    revision = selectors.revision_get_visible(user=request.user, pk=pk)
    _require_editable(request, revision)
    if not selectors.can_revise(request.user, revision.quote):
        raise PermissionDenied(_("A closed quote cannot be revised."))
    from configurator import public as configurator

    lang = "zh-hans" if is_zh(translation.get_language()) else "en"
    form = configurator.ConfiguratorForm(configurator.form_data_from_request(revision.request_json))
    plan = None
    if form.is_valid():
        form_request = form.to_request()
        try:
            plan_request, result = configurator.plan_from_json(form_request)
        except configurator.RequestError as exc:
            form.add_request_errors(exc.errors)
        else:
            plan = configurator.plan_context(plan_request, result, form_request, lang=lang)
    context = {
        "form": form,
        "plan": plan,
        "lang": lang,
        "revise_of": revision.pk,
        "revise_version": revision.quote.version,
        "revise_revision": revision,
    }
    return render(request, "configurator/home.html", context)


@require_POST
def revision_configure_save(request: HttpRequest) -> HttpResponse:
    """Save the configurator's configuration as the next draft revision of the quote of ``revision``."""
    raw_pk = request.POST.get("revision", "")
    if not raw_pk.isdigit():
        raise Http404("No such revision.")
    revision = selectors.revision_get_visible(user=request.user, pk=int(raw_pk))
    _require_editable(request, revision)
    text = request.POST.get("request_json", "")
    errors: list[str] = []
    status = 400
    if len(text) > MAX_REQUEST_JSON_CHARS:
        errors.append(_("The configuration is too large."))
    else:
        try:
            data = json.loads(text)
        except (ValueError, RecursionError):
            data = None
            errors.append(_("The configuration is not valid JSON."))
        raw_version = request.POST.get("version", "")
        expected = int(raw_version) if raw_version.isdigit() else None
        if data is not None:
            try:
                new = changes.revise_configuration(
                    revision=revision,
                    request_json=data,
                    by=request.user,
                    note=request.POST.get("note", "")[:2000],
                    expected_version=expected,
                )
            except QuoteConflictError as exc:
                already = changes.same_revision_already_saved(
                    revision=revision, request_json=data, by=request.user
                )
                if already is not None:  # a double click or back-then-save: the first one counts
                    messages.info(request, _("%(number)s was already saved.") % {"number": already.number})
                    return _to_revision(already)
                errors.append(str(exc))
                status = 409
            except ValidationError as exc:
                errors.extend(_messages_of(exc))
            else:
                messages.success(
                    request,
                    _("%(number)s created with the new configuration; %(base)s is unchanged.")
                    % {"number": new.number, "base": revision.number},
                )
                return _to_revision(new)
    return render(
        request, "quotes/workflow/error.html", {"errors": errors, "revision": revision}, status=status
    )


@require_POST
def revision_replan(request: HttpRequest, pk: int) -> HttpResponse:
    """One click from the price-change report: a new draft revision at today's prices."""
    revision = selectors.revision_get_visible(user=request.user, pk=pk)
    _require_editable(request, revision)
    try:
        new = changes.replan_at_current_prices(revision=revision, by=request.user)
    except ValidationError as exc:
        return render(
            request,
            "quotes/workflow/error.html",
            {"errors": _messages_of(exc), "revision": revision},
            status=400,
        )
    messages.success(request, _("%(number)s re-planned at today's prices.") % {"number": new.number})
    return _to_revision(new)


# --------------------------------------------------------------------------- clone


@require_POST
def quote_clone_view(request: HttpRequest, pk: int) -> HttpResponse:
    """A new quote for another customer with this revision's configuration and terms."""
    revision = selectors.revision_get_visible(user=request.user, pk=pk)
    if not request.user.has_perm("quotes.add_quote"):
        raise PermissionDenied(_("Your role does not allow this."))
    customer = request.POST.get("customer_name", "").strip()[:200]
    title = request.POST.get("title", "").strip()[:200]
    try:
        quote = cloning.quote_clone(
            revision=revision,
            by=request.user,
            customer=customer,
            title=title,
            keep_prices=request.POST.get("keep_prices") in ("on", "1", "true"),
        )
    except ValidationError as exc:
        return render(
            request,
            "quotes/workflow/error.html",
            {"errors": _messages_of(exc), "revision": revision},
            status=400,
        )
    messages.success(
        request,
        _("Quote %(number)s created for %(customer)s from %(source)s.")
        % {"number": quote.number, "customer": quote.customer.name, "source": revision.number},
    )
    return redirect(quote.get_absolute_url())


# --------------------------------------------------------------------------- share links (internal side)


@require_POST
def share_create_view(request: HttpRequest, pk: int) -> HttpResponse:
    """Create a customer link; the page that answers shows the link once (only its hash is kept)."""
    revision = selectors.revision_get_visible(user=request.user, pk=pk)
    _require_editable(request, revision)
    try:
        link, token = sharing.share_create(revision=revision, by=request.user)
    except ValidationError as exc:
        return render(
            request,
            "quotes/workflow/error.html",
            {"errors": _messages_of(exc), "revision": revision},
            status=400,
        )
    # Shown once on the quote page (Post/Redirect/Get: a reload never makes a second link).
    request.session[SHARE_URL_SESSION_KEY] = {
        "url": request.build_absolute_uri(reverse("quotes:share_page", args=[token])),
        "revision": revision.pk,
    }
    messages.success(request, _("Customer link created; copy it now, it is shown only once."))
    return redirect(f"{revision.quote.get_absolute_url()}?rev={revision.index}#workflow")


@require_POST
def share_revoke_view(request: HttpRequest, pk: int) -> HttpResponse:
    link = ShareLink.objects.select_related("revision").filter(pk=pk).first()  # visibility checked below
    if link is None:
        raise Http404("No such link.")
    revision = selectors.revision_get_visible(user=request.user, pk=link.revision_id)
    _require_editable(request, revision)
    sharing.share_revoke(link=link, by=request.user)
    messages.success(request, _("The customer link is revoked; it now answers “not found”."))
    return _to_revision(revision)


# --------------------------------------------------------------------------- the customer's pages


def _customer_context(link: ShareLink, token: str, **extra) -> dict:
    revision = link.revision
    quote = revision_quote(revision)  # the header as issued (customer, title, validity, language)
    zh = is_zh(quote.language)
    lines = []
    lease = []
    for line in revision.lines.all():
        row = {
            "description": line.description_zh if zh and line.description_zh else line.description_en,
            "category": BomCategory(line.category).label if line.category in BomCategory.values else "",
            "quantity": line.quantity,
            "unit": _(line.unit) if line.unit else "",  # "pcs", "lot" … are marked in quotes.bom.UNITS
            "unit_price": line.unit_price,
            "discount": line.discount,
            "line_total": line.line_total,
            "on_request": line.price_on_request and not line.unit_price,
        }
        (lease if line.category == BomCategory.LEASE else lines).append(row)
    return {
        "link": link,
        "token": token,
        "revision": revision,
        "quote": quote,
        "lines": lines,
        "lease_lines": lease,
        "lines_on_request": [row for row in lines if row["on_request"]],
        "owner_name": revision_prepared_by(revision),
        "pdf_ready": _customer_pdf_ready(revision),
        "acceptance": getattr(revision, "customer_acceptance", None),
        "refusal": sharing.acceptance_refusal(link),
        **extra,
    }


def _customer_pdf_ready(revision: QuoteRevision) -> bool:
    """The PDF the customer may download: ready, and for an issued revision the issued copy."""
    ready = revision.pdf_status == PdfStatus.READY and bool(revision.pdf_file)
    return ready and (revision.pdf_issued or not revision.is_issued)


def _language(link: ShareLink) -> str:
    return revision_quote(link.revision).language or link.revision.quote.language


def _customer_page(request, link: ShareLink, token: str, status: int = 200, **extra) -> HttpResponse:
    with translation.override(_language(link)):
        context = _customer_context(link, token, **extra)
        response = render(request, "quotes/share/page.html", context, status=status)
    response["Cache-Control"] = "no-store"
    response["X-Robots-Tag"] = "noindex, nofollow"
    # The token never leaves in a Referer header ("no-referrer" would make the browser send
    # "Origin: null" with the acceptance form, which CSRF protection rightly refuses).
    response["Referrer-Policy"] = "same-origin"
    return response


@login_not_required
@require_GET
def share_page(request: HttpRequest, token: str) -> HttpResponse:
    link = sharing.share_resolve(token)
    sharing.share_log(link=link, request=request, what=ShareView.What.PAGE)
    return _customer_page(request, link, token)


@login_not_required
@require_GET
def share_pdf(request: HttpRequest, token: str) -> HttpResponse:
    link = sharing.share_resolve(token)
    revision = link.revision
    if not _customer_pdf_ready(revision):
        raise Http404("The proposal is not ready.")
    digest = hashlib.sha256()
    with revision.pdf_file.open("rb") as stored:
        for chunk in iter(lambda: stored.read(1 << 20), b""):
            digest.update(chunk)
    if digest.hexdigest() != revision.pdf_sha256:
        logger.error(
            "Proposal PDF of %s does not match its SHA-256; not served on a share link", revision.number
        )
        raise Http404("The proposal is not available.")
    sharing.share_log(link=link, request=request, what=ShareView.What.PDF)
    response = FileResponse(
        revision.pdf_file.open("rb"),
        as_attachment=True,
        filename=f"{revision.number}.pdf",
        content_type="application/pdf",
    )
    response["Cache-Control"] = "no-store"
    return response


@login_not_required
@require_POST
def share_accept(request: HttpRequest, token: str) -> HttpResponse:
    link = sharing.share_resolve(token)
    with translation.override(_language(link)):
        try:
            sharing.customer_accept(
                link=link,
                request=request,
                name=request.POST.get("name", ""),
                title=request.POST.get("title", ""),
                option=request.POST.get("option", ""),
                confirmed=request.POST.get("confirm") == "on",
            )
        except ValidationError as exc:
            return _customer_page(
                request, link, token, status=400, accept_errors=_messages_of(exc), posted=request.POST
            )
    return redirect(reverse("quotes:share_page", args=[token]) + "?accepted=1")


@login_not_required
@require_POST
def share_question(request: HttpRequest, token: str) -> HttpResponse:
    link = sharing.share_resolve(token)
    with translation.override(_language(link)):
        try:
            sharing.customer_ask(
                link=link,
                request=request,
                name=request.POST.get("name", ""),
                contact=request.POST.get("contact", ""),
                text=request.POST.get("text", ""),
            )
        except ValidationError as exc:
            return _customer_page(
                request, link, token, status=400, question_errors=_messages_of(exc), posted=request.POST
            )
    return redirect(reverse("quotes:share_page", args=[token]) + "?asked=1")


# --------------------------------------------------------------------------- pipeline


def _pipeline_filters(request) -> dict:
    stage = request.GET.get("stage", "")
    return {
        "stage": stage if stage in pipeline.STAGE_LABELS else "",
        "owner": request.GET.get("owner", "")[:150],
        "text": request.GET.get("q", "")[:200],
    }


@require_GET
def pipeline_view(request: HttpRequest) -> HttpResponse:
    if not pipeline.may_see_pipeline(request.user):
        raise PermissionDenied(_("The pipeline is for sales managers."))
    filters = _pipeline_filters(request)
    rows = pipeline.pipeline_rows(request.user, **filters)
    all_rows = pipeline.pipeline_rows(request.user) if any(filters.values()) else rows
    owners = sorted({r.quote.owner.get_username() for r in all_rows})
    context = {
        "rows": rows,
        "summary": pipeline.stage_summary(rows),
        "stages": pipeline.STAGES,
        "owners": owners,
        "filters": filters,
        "query": request.GET.urlencode(),
    }
    return render(request, "quotes/workflow/pipeline.html", context)


@require_GET
def pipeline_csv_view(request: HttpRequest) -> HttpResponse:
    if not pipeline.may_see_pipeline(request.user):
        raise PermissionDenied(_("The pipeline is for sales managers."))
    rows = pipeline.pipeline_rows(request.user, **_pipeline_filters(request))
    response = HttpResponse(pipeline.pipeline_csv(rows), content_type="text/csv; charset=utf-8")
    stamp = timezone.localdate().isoformat()
    response["Content-Disposition"] = f'attachment; filename="pipeline-{stamp}.csv"'
    return response


# --------------------------------------------------------------------------- notifications


@require_http_methods(["GET", "POST"])
def notifications_view(request: HttpRequest) -> HttpResponse:
    """The user's notifications; POST marks them all read (the sales roles': quotes notify them)."""
    if not (roles.is_sales(request.user) or request.user.is_superuser):
        raise PermissionDenied(_("Notifications are about quotes, which are the sales roles'."))
    mine = Notification.objects.filter(recipient=request.user).select_related("quote", "revision")
    if request.method == "POST":
        mine.filter(read_at__isnull=True).update(read_at=timezone.now())
        return redirect(reverse("quotes:notifications"))
    return render(
        request,
        "quotes/workflow/notifications.html",
        {"notifications": mine[:200], "unread": mine.filter(read_at__isnull=True).count()},
    )


# --------------------------------------------------------------------------- price changes


@require_GET
def price_impact_view(request: HttpRequest) -> HttpResponse:
    """Open revisions whose prices differ from today's catalog, with old and new totals."""
    if not request.user.has_perm("quotes.change_quote"):
        raise PermissionDenied(_("Your role does not allow this."))
    return render(request, "quotes/workflow/price_impact.html", {"rows": changes.price_impact(request.user)})
