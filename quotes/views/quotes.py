"""Quote pages: the list, a quote with its revisions, its edit form, its status changes,
and a new quote from a configuration posted by the configurator."""

from __future__ import annotations

import logging
import re

from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.paginator import Paginator
from django.db import DatabaseError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import HttpResponseClientRedirect

from accounts import roles

from .. import selectors
from ..forms import (
    QuoteCreateForm,
    QuoteEditForm,
    QuoteFilterForm,
    TransitionForm,
)
from ..services.base import QuoteConflictError
from ..services.planning import PlanningUnavailable, configuration_plan, request_with_discount
from ..services.quotes import quote_create_from_configuration, quote_created_with, quote_update
from ..services.transitions import quote_transition
from ..statuses import QuoteStatus
from .common import (
    detail_context,
    errors_into_form,
    redirect_to,
    run_action,
)

PAGE_SIZE = 50


logger = logging.getLogger(__name__)


@require_GET
def quote_list(request: HttpRequest) -> HttpResponse:
    """Visible quotes with search and filters; htmx requests get only the results table."""
    if not roles.is_sales(request.user):
        # The catalog admin keeps the catalog, not quotes (issue 27: /quotes/ was reachable).
        raise PermissionDenied(_("Quotes are for the sales roles."))
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


@require_GET
def quote_detail(request: HttpRequest, pk: int) -> HttpResponse:
    """A quote with its revisions; ``?rev=N`` shows revision N (default: the latest)."""
    quote = selectors.quote_get_visible(user=request.user, pk=pk)
    if "rev" in request.GET:
        revision = selectors.revision_by_index(quote, request.GET["rev"])
    else:
        revision = selectors.revision_latest(quote)
    return render(request, "quotes/detail.html", detail_context(request, quote, revision))


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
                errors_into_form(form, exc)
                status = 400
            else:
                messages.success(request, _("Quote saved."))
                return redirect_to(quote)
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
    return run_action(
        request,
        quote,
        selectors.revision_latest(quote),
        form,
        act,
        _("%(number)s is now %(status)s.") % {"number": quote.number, "status": status_label},
        "transition_form",
    )


IDEMPOTENCY_KEY = re.compile(r"[A-Za-z0-9_-]{16,64}")


@require_GET
def quote_created_by_key(request: HttpRequest, key: str) -> HttpResponse:
    """``{"url": …}`` of the quote this user created from the form with idempotency key ``key``
    (the configurator page asks when Back brings a saved form again); 404 when there is none."""
    quote = quote_created_with(by=request.user, creation_key=key) if IDEMPOTENCY_KEY.fullmatch(key) else None
    if quote is None or not request.user.has_perm("quotes.add_quote"):
        return JsonResponse({"url": None}, status=404)
    return JsonResponse({"url": quote.get_absolute_url(), "number": quote.number})


@require_POST
def quote_create(request: HttpRequest) -> HttpResponse:
    """Create a quote from a configuration posted by the configurator.

    Only ``request_json`` is taken from the browser: the plan, prices and totals
    are recomputed here by ``configurator.public.plan_for_quote``.
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
            errors_into_form(form, exc)
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
