"""Quote pages.  Thin: forms parse, ``services`` change state, ``selectors`` read.

Every object is fetched through the visibility selectors, so anything outside
the user's quotes is a 404 (never a 403 that would confirm it exists).  Bad
input re-renders the page with field errors and a 4xx status; a stale form
(optimistic-lock conflict) answers 409 with what happened.
"""

from __future__ import annotations

import logging
from decimal import Decimal
from importlib.util import find_spec

from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.paginator import Paginator
from django.db import DatabaseError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import get_language
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import HttpResponseClientRedirect

from . import selectors
from .forms import (
    ActionForm,
    CustomerForm,
    DecisionForm,
    QuoteCreateForm,
    QuoteEditForm,
    QuoteFilterForm,
    ReviseForm,
    TransitionForm,
)
from .models import Quote, QuoteRevision
from .pricing import reason_texts
from .services.approvals import revision_approve, revision_reject
from .services.base import QuoteConflictError
from .services.customers import customer_create
from .services.issuing import revision_issue
from .services.planning import PlanningUnavailable, configuration_plan, request_with_discount
from .services.quotes import quote_create_from_configuration, quote_created_with, quote_update
from .services.revisions import revision_create_from
from .services.transitions import quote_transition
from .statuses import BomCategory, QuoteStatus

PAGE_SIZE = 50

logger = logging.getLogger(__name__)


def _errors_into_form(form, exc: ValidationError) -> None:
    """Put a service's ValidationError on the matching form fields (the rest on the form)."""
    if hasattr(exc, "error_dict"):
        for field, errors in exc.error_dict.items():
            target = field if field in form.fields else None
            for error in errors:
                form.add_error(target, error)
    else:
        for message in exc.messages:
            form.add_error(None, message)


def _percent_text(fraction) -> str:
    """0.1200 → "12%", 0.1225 → "12.25%" (what the discount field accepts back)."""
    return f"{(Decimal(fraction) * 100).normalize():f}%"


def _redirect_to(quote: Quote, revision: QuoteRevision | None = None) -> HttpResponse:
    url = quote.get_absolute_url()
    if revision is not None:
        url += f"?rev={revision.index}"
    return redirect(url)


# --------------------------------------------------------------------------- list


@require_GET
def quote_list(request: HttpRequest) -> HttpResponse:
    """Visible quotes with search and filters; htmx requests get only the results table."""
    form = QuoteFilterForm(request.user, request.GET or None)
    quotes = selectors.quote_search(user=request.user, **form.filters())
    page = Paginator(quotes, PAGE_SIZE).get_page(request.GET.get("page"))
    context = {
        "form": form,
        "page": page,
        "can_create": request.user.has_perm("quotes.add_quote"),
        "pending_approvals": selectors.quote_pending_approvals(request.user),
    }
    if request.htmx and request.htmx.target == "quote-results":
        return render(request, "quotes/_list_results.html", context)
    return render(request, "quotes/list.html", context)


# --------------------------------------------------------------------------- detail


def _detail_context(request: HttpRequest, quote: Quote, revision: QuoteRevision | None, **forms) -> dict:
    user = request.user
    revisions = list(selectors.revisions_of(quote))
    latest = revisions[-1] if revisions else None
    lines = list(revision.lines.all()) if revision else []
    editable = selectors.can_edit(user, quote)
    context = {
        "quote": quote,
        "revision": revision,
        "revisions": revisions,
        "latest": latest,
        "is_latest": revision is not None and latest is not None and revision.pk == latest.pk,
        "purchase_lines": [line for line in lines if line.category != BomCategory.LEASE],
        "lease_lines": [line for line in lines if line.category == BomCategory.LEASE],
        "checks": [c for c in (revision.result_json.get("checks") or []) if isinstance(c, dict)]
        if revision and isinstance(revision.result_json, dict)
        else [],
        "can_edit": editable,
        "can_revise": selectors.can_revise(user, quote),
        "can_approve": revision is not None and selectors.can_approve(user, revision),
        "can_see_margins": selectors.can_see_margins(user, quote),
        "transitions": selectors.transitions_for(user, quote),
        "audit_events": selectors.quote_audit_trail(quote)[:50],
        "approval": getattr(revision, "approval", None) if revision else None,
        "approval_reason_texts": reason_texts(revision.approval_reasons) if revision else [],
        "transition_form": forms.get("transition_form") or TransitionForm(initial={"version": quote.version}),
        "revise_form": forms.get("revise_form")
        or ReviseForm(
            initial={
                "version": quote.version,
                "discount": _percent_text(revision.discount if revision else 0),
            }
        ),
        "decision_form": forms.get("decision_form") or DecisionForm(initial={"version": quote.version}),
        "errors": forms.get("errors") or [],
    }
    from .benchmark_views import measured_context

    context["measured"] = measured_context(revision)
    if find_spec("quotes.pdf_views") is not None:
        # The proposal-PDF panel (quotes/_pdf_status.html) replaces the placeholder.
        from .pdf_views import pdf_panel_context

        context.update(pdf_panel_context(revision, user), pdf_panel=True)
    from .workflow_views import workflow_panel_context  # share links, clone, revise the configuration

    context.update(workflow_panel_context(request, quote, revision))
    return context


@require_GET
def quote_detail(request: HttpRequest, pk: int) -> HttpResponse:
    """A quote with its revisions; ``?rev=N`` shows revision N (default: the latest)."""
    quote = selectors.quote_get_visible(user=request.user, pk=pk)
    if "rev" in request.GET:
        revision = selectors.revision_by_index(quote, request.GET["rev"])
    else:
        revision = selectors.revision_latest(quote)
    return render(request, "quotes/detail.html", _detail_context(request, quote, revision))


def _render_detail_error(
    request: HttpRequest, quote: Quote, revision: QuoteRevision | None, status: int, **forms
) -> HttpResponse:
    quote.refresh_from_db()
    if revision is not None:
        revision.refresh_from_db()
    return render(
        request, "quotes/detail.html", _detail_context(request, quote, revision, **forms), status=status
    )


def _run_action(
    request, quote: Quote, revision: QuoteRevision | None, form, action, success: str, form_key: str
):
    """Validate ``form``, run ``action(cleaned_data)``; re-render the page with errors on failure."""
    if not form.is_valid():
        errors = [
            f"{form.fields[name].label or name}: {message}" if name != "__all__" else message
            for name, messages_ in form.errors.items()
            for message in messages_
        ]
        return _render_detail_error(request, quote, revision, 400, errors=errors, **{form_key: form})
    try:
        result = action(form.cleaned_data)
    except QuoteConflictError as exc:
        return _render_detail_error(request, quote, revision, 409, errors=[str(exc)])
    except ValidationError as exc:
        _errors_into_form(form, exc)
        return _render_detail_error(
            request, quote, revision, 400, errors=form.non_field_errors(), **{form_key: form}
        )
    messages.success(request, success)
    return _redirect_to(quote, result if isinstance(result, QuoteRevision) else revision)


@require_POST
def quote_transition_view(request: HttpRequest, pk: int) -> HttpResponse:
    quote = selectors.quote_get_visible(user=request.user, pk=pk)
    if not selectors.can_edit(request.user, quote):
        raise PermissionDenied(_("You may view this quote but not change it."))
    form = TransitionForm(request.POST)

    def act(data):
        quote_transition(
            quote=quote,
            to_status=data["to_status"],
            by=request.user,
            comment=data["comment"],
            expected_version=data["version"],
        )
        return None

    status_label = (
        QuoteStatus(request.POST.get("to_status")).label
        if request.POST.get("to_status") in QuoteStatus.values
        else ""
    )
    return _run_action(
        request,
        quote,
        selectors.revision_latest(quote),
        form,
        act,
        _("%(number)s is now %(status)s.") % {"number": quote.number, "status": status_label},
        "transition_form",
    )


@require_POST
def revision_revise(request: HttpRequest, pk: int) -> HttpResponse:
    """Make a new revision from this one: new discount and note, optionally re-planned."""
    revision = selectors.revision_get_visible(user=request.user, pk=pk)
    quote = revision.quote
    if not selectors.can_edit(request.user, quote):
        raise PermissionDenied(_("You may view this quote but not change it."))
    form = ReviseForm(request.POST)

    def act(data):
        discount = data["discount"]
        changes = {"discount": discount, "note": data["note"]}
        if data["replan"] or discount != revision.discount:
            # The engine prices the discount (tco.capex.discount), so a new
            # discount is planned again: from the frozen inline request (same
            # catalog entries and prices), or from the original request against
            # today's catalog when the engineer asks for a re-plan.
            source = revision.request_json if data["replan"] else revision.resolved_json
            try:
                plan = configuration_plan(request_with_discount(source, discount))
            except PlanningUnavailable as exc:
                raise ValidationError(str(exc)) from exc
            changes.update(
                request_json=request_with_discount(revision.request_json, discount),
                resolved_json=plan.resolved_json,
                result_json=plan.result_json,
                prices_json=plan.prices_json,
                usd_rate=plan.usd_rate,
                currency=plan.currency,
            )
        return revision_create_from(
            revision=revision, changes=changes, by=request.user, expected_version=data["version"]
        )

    return _run_action(request, quote, revision, form, act, _("New revision created."), "revise_form")


@require_POST
def revision_issue_view(request: HttpRequest, pk: int) -> HttpResponse:
    revision = selectors.revision_get_visible(user=request.user, pk=pk)
    quote = revision.quote
    if not selectors.can_edit(request.user, quote):
        raise PermissionDenied(_("You may view this quote but not change it."))
    form = ActionForm(request.POST)
    return _run_action(
        request,
        quote,
        revision,
        form,
        lambda data: revision_issue(revision=revision, by=request.user, expected_version=data["version"]),
        _("%(number)s is issued and can no longer change.") % {"number": revision.number},
        "issue_form",
    )


def _decision_view(request: HttpRequest, pk: int, approve: bool) -> HttpResponse:
    revision = selectors.revision_get_visible(user=request.user, pk=pk)
    quote = revision.quote
    refusal = selectors.approval_refusal(request.user, revision)
    if refusal:
        raise PermissionDenied(refusal)
    form = DecisionForm(request.POST)
    service = revision_approve if approve else revision_reject

    def act(data):
        service(revision=revision, by=request.user, comment=data["comment"], expected_version=data["version"])
        return revision

    done = _("Discount approved.") if approve else _("Discount rejected.")
    return _run_action(request, quote, revision, form, act, done, "decision_form")


@require_POST
def revision_approve_view(request: HttpRequest, pk: int) -> HttpResponse:
    return _decision_view(request, pk, approve=True)


@require_POST
def revision_reject_view(request: HttpRequest, pk: int) -> HttpResponse:
    return _decision_view(request, pk, approve=False)


@require_http_methods(["GET", "POST"])
def quote_edit(request: HttpRequest, pk: int) -> HttpResponse:
    """Title, customer, validity and proposal language of a draft quote (optimistic lock)."""
    quote = selectors.quote_get_visible(user=request.user, pk=pk)
    if not selectors.can_edit(request.user, quote):
        raise PermissionDenied(_("You may view this quote but not change it."))
    status = 200
    if request.method == "POST":
        form = QuoteEditForm(request.user, request.POST)
        if form.is_valid():
            data = form.cleaned_data
            try:
                quote_update(
                    quote=quote,
                    by=request.user,
                    expected_version=data["version"],
                    title=data["title"],
                    customer=data["customer"],
                    valid_until=data["valid_until"],
                    language=data["language"],
                )
            except QuoteConflictError as exc:
                form.add_error(None, str(exc))
                status = 409
            except ValidationError as exc:
                _errors_into_form(form, exc)
                status = 400
            else:
                messages.success(request, _("Quote saved."))
                return _redirect_to(quote)
        else:
            status = 400
    else:
        form = QuoteEditForm(
            request.user,
            initial={
                "version": quote.version,
                "title": quote.title,
                "customer": quote.customer_id,
                "valid_until": quote.valid_until,
                "language": quote.language,
            },
        )
    return render(request, "quotes/edit.html", {"quote": quote, "form": form}, status=status)


# --------------------------------------------------------------------------- compare


@require_GET
def revision_compare_view(request: HttpRequest, pk: int) -> HttpResponse:
    """Two revisions side by side: ``?a=1&b=2`` (default: the latest against the one before)."""
    quote = selectors.quote_get_visible(user=request.user, pk=pk)
    revisions = list(selectors.revisions_of(quote))
    if len(revisions) < 2 and not {"a", "b"} <= set(request.GET):
        messages.info(request, _("This quote has only one revision."))
        return _redirect_to(quote)
    a = selectors.revision_by_index(
        quote, request.GET.get("a", revisions[-2].index if len(revisions) > 1 else 1)
    )
    b = selectors.revision_by_index(quote, request.GET.get("b", revisions[-1].index))
    comparison = selectors.revision_compare(a, b)
    from .workflow import compare_items  # BOM lines matched by SKU, with the totals' change explained

    items = compare_items(a, b, zh=(get_language() or "").startswith("zh"))
    return render(
        request,
        "quotes/compare.html",
        {
            "quote": quote,
            "revisions": revisions,
            "cmp": comparison,
            "items": items,
            "can_see_margins": selectors.can_see_margins(request.user, quote),
        },
    )


# --------------------------------------------------------------------------- create (from the configurator)


@require_POST
def quote_create(request: HttpRequest) -> HttpResponse:
    """Create a quote from a configuration posted by the configurator.

    Only ``request_json`` is taken from the browser: the plan, prices and totals
    are recomputed here by ``configurator.services.plan_for_quote``.
    """
    if not request.user.has_perm("quotes.add_quote"):
        raise PermissionDenied(_("Your role does not allow this."))
    form = QuoteCreateForm(request.user, request.POST)
    status = 400
    if form.is_valid():
        data = form.cleaned_data
        existing = quote_created_with(by=request.user, creation_key=data["idempotency_key"])
        if existing is not None:
            # A double submit, or "back" then "Create quote" again: one quote, not two.
            messages.info(
                request,
                _("Quote %(number)s was already created from this form.") % {"number": existing.number},
            )
            if request.htmx:
                return HttpResponseClientRedirect(existing.get_absolute_url())
            return redirect(existing.get_absolute_url())
        try:
            plan = configuration_plan(request_with_discount(data["request_json"], data["discount"]))
            quote = quote_create_from_configuration(
                by=request.user,
                customer=data["customer_resolved"],
                request_json=plan.request_json,
                resolved_json=plan.resolved_json,
                result_json=plan.result_json,
                prices_json=plan.prices_json,
                usd_rate=plan.usd_rate,
                currency=plan.currency,
                language=data["language"],
                discount=data["discount"],
                title=data["title"],
                creation_key=data["idempotency_key"],
            )
        except PlanningUnavailable as exc:
            form.add_error(None, str(exc))
            status = 503
        except ValidationError as exc:
            _errors_into_form(form, exc)
        except DatabaseError:
            # The whole save is one transaction: nothing was written.
            logger.exception("Quote save failed in the database")
            form.add_error(
                None, _("The database could not save the quote; nothing was saved. Please try again.")
            )
            status = 503
        else:
            if data.get("acknowledged"):
                from configurator.public import record_on_revision

                record_on_revision(
                    quote.revisions.order_by("-index").first(), data["acknowledged"], request.user
                )
            messages.success(request, _("Quote %(number)s created.") % {"number": quote.number})
            if request.htmx:
                return HttpResponseClientRedirect(quote.get_absolute_url())
            return redirect(quote.get_absolute_url())
    if request.htmx:
        return render(
            request, "quotes/_create_errors.html", {"form": form}, status=422 if status == 400 else status
        )
    return render(request, "quotes/create_error.html", {"form": form}, status=status)


# --------------------------------------------------------------------------- customers


@require_http_methods(["GET", "POST"])
def customer_list(request: HttpRequest) -> HttpResponse:
    """The team's customers, and a form to add one."""
    if not request.user.has_perm("quotes.view_quote"):
        raise PermissionDenied(_("Your role does not allow this."))
    status = 200
    form = CustomerForm(request.POST or None)
    if request.method == "POST":
        if not request.user.has_perm("quotes.add_quote"):
            raise PermissionDenied(_("Your role does not allow this."))
        if form.is_valid():
            try:
                customer = customer_create(by=request.user, **form.cleaned_data)
            except ValidationError as exc:
                _errors_into_form(form, exc)
                status = 400
            else:
                messages.success(request, _("Customer %(name)s added.") % {"name": customer.name})
                return redirect(reverse("quotes:customers"))
        else:
            status = 400
    customers = selectors.customers_visible_to(request.user)
    return render(request, "quotes/customers.html", {"customers": customers, "form": form}, status=status)
