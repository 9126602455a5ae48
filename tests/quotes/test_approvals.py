"""Discounts above settings.QUOTE_DISCOUNT_APPROVAL_THRESHOLD (10 %) need a sales manager."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.core.exceptions import PermissionDenied, ValidationError

from accounts.roles import SALES_MANAGER
from quotes.models import Approval, AuditEvent, Quote
from quotes.services.approvals import revision_approve, revision_reject
from quotes.services.issuing import revision_issue
from quotes.services.revisions import revision_create_from
from quotes.services.transitions import quote_transition
from quotes.statuses import ApprovalDecision, ApprovalState, AuditAction, QuoteStatus, RevisionStatus


@pytest.mark.django_db
@pytest.mark.parametrize(
    "discount, state",
    [
        ("0", ApprovalState.NOT_NEEDED),
        ("0.10", ApprovalState.NOT_NEEDED),  # "above" the threshold: exactly 10 % passes
        ("0.1001", ApprovalState.PENDING),
        ("0.15", ApprovalState.PENDING),
    ],
)
def test_threshold(make_quote, discount, state):
    assert make_quote(discount=discount).revisions.get().approval_state == state


@pytest.mark.django_db
def test_threshold_comes_from_settings(make_quote, settings):
    settings.QUOTE_DISCOUNT_APPROVAL_THRESHOLD = "0.05"
    assert make_quote(discount="0.06").revisions.get().approval_state == ApprovalState.PENDING


@pytest.mark.django_db
def test_line_discounts_count_towards_the_threshold(make_quote, engineer):
    revision = make_quote(discount="0.05").revisions.get()
    # 5 % on capex plus 20 % on the servers: a line discount above 10 % needs approval.
    new = revision_create_from(
        revision=revision, changes={"line_discounts": {"server:atlas-800-a3": "0.20"}}, by=engineer
    )
    assert new.approval_state == ApprovalState.PENDING
    # Servers 24,000,000 × 0.8 = 19,200,000; capex lines 19,200,000 + 1,815,000 + 1,632,000 + 120,000
    # = 22,767,000; × 0.05 = 1,138,350.00; net = 22,767,000 + 6,000,000 − 1,138,350 = 27,628,650.00
    assert new.net_total == Decimal("27628650.00")
    assert new.discount_amount == Decimal("33567000.00") - Decimal("27628650.00")


@pytest.mark.django_db
def test_pending_discount_blocks_sending_until_a_manager_approves(make_quote, engineer, manager):
    quote = make_quote(discount="0.15")
    revision = quote.revisions.get()
    with pytest.raises(ValidationError) as refused:
        quote_transition(quote=quote, to_status=QuoteStatus.SENT, by=engineer)
    assert "sales manager" in str(refused.value) and "15.00 %" in str(refused.value)
    with pytest.raises(ValidationError, match="approval"):
        revision_issue(revision=revision, by=engineer)
    assert Quote.objects.get(pk=quote.pk).status == QuoteStatus.DRAFT

    approval = revision_approve(revision=revision, by=manager, comment="strategic bank account")
    assert (approval.decided_by, approval.decision, approval.comment) == (
        manager,
        ApprovalDecision.APPROVED,
        "strategic bank account",
    )
    assert approval.decided_at is not None
    revision.refresh_from_db()
    assert revision.approval_state == ApprovalState.APPROVED
    event = AuditEvent.objects.get(action=AuditAction.REVISION_APPROVED)
    assert (event.actor, event.detail["comment"], event.detail["number"]) == (
        manager,
        "strategic bank account",
        revision.number,
    )

    quote_transition(quote=quote, to_status=QuoteStatus.SENT, by=engineer)
    assert Quote.objects.get(pk=quote.pk).status == QuoteStatus.SENT
    revision.refresh_from_db()
    assert revision.status == RevisionStatus.ISSUED


@pytest.mark.django_db
def test_rejection_needs_a_reason_and_blocks_sending(make_quote, engineer, manager):
    quote = make_quote(discount="0.2")
    revision = quote.revisions.get()
    with pytest.raises(ValidationError, match="why"):
        revision_reject(revision=revision, by=manager, comment="")
    revision_reject(revision=revision, by=manager, comment="margin below floor")
    revision.refresh_from_db()
    assert revision.approval_state == ApprovalState.REJECTED
    assert Approval.objects.get(revision=revision).decision == ApprovalDecision.REJECTED
    event = AuditEvent.objects.get(action=AuditAction.REVISION_REJECTED)
    assert (event.actor, event.detail["comment"]) == (manager, "margin below floor")
    with pytest.raises(ValidationError, match="rejected"):
        quote_transition(quote=quote, to_status=QuoteStatus.SENT, by=engineer)
    # A decided revision cannot be decided again; a new revision asks again.
    with pytest.raises(ValidationError, match="not waiting"):
        revision_approve(revision=revision, by=manager)
    new = revision_create_from(revision=revision, changes={"note": "resubmitted"}, by=engineer)
    assert new.approval_state == ApprovalState.PENDING


@pytest.mark.django_db
def test_only_a_manager_of_the_team_decides_and_never_on_their_own_quote(make_quote, make_user, users):
    engineer, engineer2, manager = users["engineer"], users["engineer2"], users["manager"]
    revision = make_quote(discount="0.15").revisions.get()
    for outsider in (engineer, engineer2, users["catalog"]):
        with pytest.raises(PermissionDenied):
            revision_approve(revision=revision, by=outsider)
    # A manager of another team.
    north = make_user("north-manager", SALES_MANAGER, "North China")
    with pytest.raises(PermissionDenied):
        revision_approve(revision=revision, by=north)
    # The manager's own quote.
    own = make_quote(by=manager, discount="0.15").revisions.get()
    with pytest.raises(PermissionDenied, match="own"):
        revision_approve(revision=own, by=manager)
    assert not Approval.objects.exists()
    assert not AuditEvent.objects.filter(action=AuditAction.REVISION_APPROVED).exists()


@pytest.mark.django_db
def test_a_discount_within_the_limit_needs_no_decision(make_quote, manager):
    revision = make_quote(discount="0.05").revisions.get()
    with pytest.raises(ValidationError, match="not waiting"):
        revision_approve(revision=revision, by=manager)
