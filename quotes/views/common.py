"""What the quote pages share: the quote page's context (every action posted from it
re-renders it on error) and the runner of those actions."""

from __future__ import annotations

from decimal import Decimal

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from .. import selectors
from ..forms import (
    DecisionForm,
    ReviseForm,
    TransitionForm,
)
from ..models import Quote, QuoteRevision
from ..pricing import discount_breakdown, reason_texts
from ..services.base import QuoteConflictError
from ..statuses import BomCategory


def errors_into_form(form, exc: ValidationError) -> None:
    """Put a service's ValidationError on the matching form fields (the rest on the form)."""
    if hasattr(exc, "error_dict"):
        for field, errors in exc.error_dict.items():
            target = field if field in form.fields else None
            for error in errors:
                form.add_error(target, error)
    else:
        for message in exc.messages:
            form.add_error(None, message)


def percent_text(fraction) -> str:
    """0.1200 → "12%", 0.1225 → "12.25%" (what the discount field accepts back)."""
    return f"{(Decimal(fraction) * 100).normalize():f}%"


def redirect_to(quote: Quote, revision: QuoteRevision | None = None) -> HttpResponse:
    url = quote.get_absolute_url()
    if revision is not None:
        url += f"?rev={revision.index}"
    return redirect(url)


def detail_context(request: HttpRequest, quote: Quote, revision: QuoteRevision | None, **forms) -> dict:
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
        "discount_explained": discount_breakdown(revision, lines) if revision else [],
        "transition_form": forms.get("transition_form") or TransitionForm(initial={"version": quote.version}),
        "revise_form": forms.get("revise_form")
        or ReviseForm(
            initial={
                "version": quote.version,
                "discount": percent_text(revision.discount if revision else 0),
            }
        ),
        "decision_form": forms.get("decision_form") or DecisionForm(initial={"version": quote.version}),
        "errors": forms.get("errors") or [],
    }
    from ..benchmarks.views import measured_context

    context["measured"] = measured_context(revision)
    from ..workflow.views import workflow_panel_context  # share links, clone, revise the configuration

    context.update(workflow_panel_context(request, quote, revision))
    return context


def render_detail_error(
    request: HttpRequest, quote: Quote, revision: QuoteRevision | None, status: int, **forms
) -> HttpResponse:
    quote.refresh_from_db()
    if revision is not None:
        revision.refresh_from_db()
    return render(
        request, "quotes/detail.html", detail_context(request, quote, revision, **forms), status=status
    )


def run_action(
    request, quote: Quote, revision: QuoteRevision | None, form, action, success: str, form_key: str
):
    """Validate ``form``, run ``action(cleaned_data)``; re-render the page with errors on failure."""
    if not form.is_valid():
        errors = [
            f"{form.fields[name].label or name}: {message}" if name != "__all__" else message
            for name, messages_ in form.errors.items()
            for message in messages_
        ]
        return render_detail_error(request, quote, revision, 400, errors=errors, **{form_key: form})
    try:
        result = action(form.cleaned_data)
    except QuoteConflictError as exc:
        return render_detail_error(request, quote, revision, 409, errors=[str(exc)])
    except ValidationError as exc:
        errors_into_form(form, exc)
        return render_detail_error(
            request, quote, revision, 400, errors=form.non_field_errors(), **{form_key: form}
        )
    messages.success(request, success)
    return redirect_to(quote, result if isinstance(result, QuoteRevision) else revision)
