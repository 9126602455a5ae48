"""The status pipeline as declared in quotes/statuses.py, enforced by quote_transition."""

from __future__ import annotations

import datetime as dt
import itertools

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.utils import timezone

from accounts.roles import SALES_ENGINEER
from quotes.models import AuditEvent, Quote, QuoteRevision
from quotes.services.transitions import quote_transition, quotes_expire_overdue
from quotes.statuses import TRANSITIONS, AuditAction, QuoteStatus, RevisionStatus, allowed_targets

# The pipeline the business asked for: draft → sent → won / lost / expired, with
# a sent or expired quote reopened to draft for a new revision; the customer's
# acceptance on the share link (issue 18) makes a sent quote accepted, then won or lost.
EXPECTED_ALLOWED = {
    ("sent", "accepted"),
    ("accepted", "won"),
    ("accepted", "lost"),
    ("draft", "sent"),
    ("sent", "won"),
    ("sent", "lost"),
    ("sent", "expired"),
    ("sent", "draft"),
    ("expired", "draft"),
}


def test_the_table_is_the_pipeline():
    assert {(t.source, t.target) for t in TRANSITIONS} == EXPECTED_ALLOWED
    assert allowed_targets("won") == () and allowed_targets("lost") == ()


def _force_status(quote: Quote, status: str) -> Quote:
    Quote.objects.filter(pk=quote.pk).update(status=status)
    quote.refresh_from_db()
    return quote


@pytest.mark.django_db
@pytest.mark.parametrize("source, target", list(itertools.permutations(QuoteStatus.values, 2)))
def test_each_pair_is_allowed_or_refused_per_the_table(make_quote, engineer, source, target):
    quote = _force_status(make_quote(), source)
    comment = "price too high" if target == "lost" else ""
    if (source, target) in EXPECTED_ALLOWED:
        quote_transition(quote=quote, to_status=target, by=engineer, comment=comment)
        assert Quote.objects.get(pk=quote.pk).status == target
        event = AuditEvent.objects.get(action=AuditAction.QUOTE_TRANSITION)
        assert (event.actor, event.detail["from"], event.detail["to"]) == (engineer, source, target)
    else:
        with pytest.raises(ValidationError, match="cannot become"):
            quote_transition(quote=quote, to_status=target, by=engineer, comment=comment)
        assert Quote.objects.get(pk=quote.pk).status == source
        assert not AuditEvent.objects.filter(action=AuditAction.QUOTE_TRANSITION).exists()


@pytest.mark.django_db
def test_unknown_status_is_refused(make_quote, engineer):
    with pytest.raises(ValidationError):
        quote_transition(quote=make_quote(), to_status="archived", by=engineer)


@pytest.mark.django_db
def test_sending_issues_the_latest_revision(make_quote, engineer):
    quote = make_quote()
    version = quote.version
    quote_transition(quote=quote, to_status=QuoteStatus.SENT, by=engineer, expected_version=version)
    revision = QuoteRevision.objects.get(quote=quote)
    assert revision.status == RevisionStatus.ISSUED and revision.issued_by == engineer
    quote.refresh_from_db()
    assert quote.status == QuoteStatus.SENT and quote.version > version
    sent = AuditEvent.objects.get(action=AuditAction.QUOTE_TRANSITION)
    assert sent.detail["revision"] == revision.number


@pytest.mark.django_db
def test_losing_needs_a_reason(make_quote, engineer):
    quote = _force_status(make_quote(), QuoteStatus.SENT)
    with pytest.raises(ValidationError, match="comment"):
        quote_transition(quote=quote, to_status=QuoteStatus.LOST, by=engineer, comment="  ")
    quote_transition(quote=quote, to_status=QuoteStatus.LOST, by=engineer, comment="chose the API")
    assert AuditEvent.objects.get(action=AuditAction.QUOTE_TRANSITION).detail["comment"] == "chose the API"


@pytest.mark.django_db
def test_sending_after_the_validity_date_is_refused(make_quote, engineer):
    quote = make_quote(valid_until=timezone.localdate() - dt.timedelta(days=1))
    with pytest.raises(ValidationError, match="validity date"):
        quote_transition(quote=quote, to_status=QuoteStatus.SENT, by=engineer)
    assert QuoteRevision.objects.get(quote=quote).status == RevisionStatus.DRAFT


@pytest.mark.django_db
def test_default_validity_is_today_plus_the_setting(make_quote, settings):
    settings.QUOTE_VALIDITY_DAYS = 45
    quote = make_quote()
    assert quote.valid_until == timezone.localdate() + dt.timedelta(days=45)


@pytest.mark.django_db
def test_overdue_sent_quotes_expire_as_a_system_change(make_quote, engineer):
    quote = make_quote()
    quote_transition(quote=quote, to_status=QuoteStatus.SENT, by=engineer)
    assert quotes_expire_overdue(today=quote.valid_until) == 0
    assert quotes_expire_overdue(today=quote.valid_until + dt.timedelta(days=1)) == 1
    quote.refresh_from_db()
    assert quote.status == QuoteStatus.EXPIRED
    assert AuditEvent.objects.filter(action=AuditAction.QUOTE_TRANSITION).latest("id").actor is None


@pytest.mark.django_db
def test_team_members_cannot_change_a_colleagues_quote(make_quote, make_user, manager):
    colleague = make_user("colleague", SALES_ENGINEER, "East China")
    quote = make_quote()
    with pytest.raises(PermissionDenied):
        quote_transition(quote=quote, to_status=QuoteStatus.SENT, by=colleague)
    # The team's manager may.
    quote_transition(quote=quote, to_status=QuoteStatus.SENT, by=manager)
