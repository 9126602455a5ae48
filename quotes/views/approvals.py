"""A sales manager approves or rejects a revision's discount."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from .. import selectors
from ..forms import (
    DecisionForm,
)
from ..services.approvals import revision_approve, revision_reject
from .common import (
    run_action,
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
    return run_action(request, quote, revision, form, act, done, "decision_form")


@require_POST
def revision_approve_view(request: HttpRequest, pk: int) -> HttpResponse:
    return _decision_view(request, pk, approve=True)


@require_POST
def revision_reject_view(request: HttpRequest, pk: int) -> HttpResponse:
    return _decision_view(request, pk, approve=False)
