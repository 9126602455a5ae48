"""Revision pages: a new revision from an earlier one, issuing one, two side by side."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.translation import get_language
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from configurator.public import is_zh

from .. import selectors
from ..forms import (
    ActionForm,
    ReviseForm,
)
from ..services.issuing import revision_issue
from ..services.planning import (
    PlanningUnavailable,
    configuration_plan,
    has_list_record,
    request_with_discount,
)
from ..services.revisions import revision_create_from
from .common import (
    redirect_to,
    run_action,
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
        if has_list_record(revision.prices_json):
            # Re-priced at today's list, unless the engineer keeps the old prices (then today's
            # list decides whether a manager must approve them): revision_create_from.
            changes["keep_prices"] = data["keep_prices"] and not data["replan"]
            return revision_create_from(
                revision=revision, changes=changes, by=request.user, expected_version=data["version"]
            )
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

    return run_action(request, quote, revision, form, act, _("New revision created."), "revise_form")


@require_POST
def revision_issue_view(request: HttpRequest, pk: int) -> HttpResponse:
    revision = selectors.revision_get_visible(user=request.user, pk=pk)
    quote = revision.quote
    if not selectors.can_edit(request.user, quote):
        raise PermissionDenied(_("You may view this quote but not change it."))
    form = ActionForm(request.POST)
    return run_action(
        request,
        quote,
        revision,
        form,
        lambda data: revision_issue(revision=revision, by=request.user, expected_version=data["version"]),
        _("%(number)s is issued and can no longer change.") % {"number": revision.number},
        "issue_form",
    )


@require_GET
def revision_compare_view(request: HttpRequest, pk: int) -> HttpResponse:
    """Two revisions side by side: ``?a=1&b=2`` (default: the latest against the one before)."""
    quote = selectors.quote_get_visible(user=request.user, pk=pk)
    revisions = list(selectors.revisions_of(quote))
    if len(revisions) < 2 and not {"a", "b"} <= set(request.GET):
        messages.info(request, _("This quote has only one revision."))
        return redirect_to(quote)
    a = selectors.revision_by_index(
        quote, request.GET.get("a", revisions[-2].index if len(revisions) > 1 else 1)
    )
    b = selectors.revision_by_index(quote, request.GET.get("b", revisions[-1].index))
    comparison = selectors.revision_compare(a, b)
    from ..workflow.changes import compare_items  # BOM lines by SKU, the totals' change explained

    items = compare_items(a, b, zh=is_zh(get_language()))
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
