"""All-or-nothing creation, optimistic locking and the append-only audit trail."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.db import DatabaseError, transaction

from quotes.models import (
    AuditEvent,
    AuditImmutableError,
    BomLine,
    Customer,
    Quote,
    QuoteNumberCounter,
    QuoteRevision,
)
from quotes.services import revisions as revision_services
from quotes.services.base import QuoteConflictError
from quotes.services.issuing import revision_issue
from quotes.services.quotes import quote_create_from_configuration, quote_update
from quotes.services.revisions import revision_create_from
from quotes.services.transitions import quote_transition
from quotes.statuses import AuditAction, QuoteStatus

from .conftest import plan_kwargs


def _nothing_written():
    return (
        Quote.objects.count(),
        QuoteRevision.objects.count(),
        BomLine.objects.count(),
        AuditEvent.objects.count(),
        Customer.objects.count(),
        sum(QuoteNumberCounter.objects.values_list("last_number", flat=True)),
    ) == (0, 0, 0, 0, 0, 0)


@pytest.mark.django_db
def test_a_database_error_while_writing_bom_lines_leaves_nothing(engineer, monkeypatch):
    def failing_bulk_create(self, objs, *args, **kwargs):
        raise DatabaseError("disk full while writing BOM lines")

    monkeypatch.setattr(type(BomLine.objects.all()), "bulk_create", failing_bulk_create)
    with pytest.raises(DatabaseError, match="disk full"):
        quote_create_from_configuration(by=engineer, customer="New Bank", **plan_kwargs())
    assert _nothing_written()


@pytest.mark.django_db
def test_a_failure_at_the_last_audit_row_leaves_nothing(engineer, monkeypatch):
    original = revision_services.audit

    def audit(**kwargs):
        if kwargs["action"] == AuditAction.REVISION_CREATED:
            raise DatabaseError("connection lost")
        return original(**kwargs)

    monkeypatch.setattr(revision_services, "audit", audit)  # where the revision is built
    with pytest.raises(DatabaseError):
        quote_create_from_configuration(by=engineer, customer="New Bank", **plan_kwargs())
    assert _nothing_written()


@pytest.mark.django_db
def test_bad_input_is_refused_before_anything_is_written(engineer):
    for bad in (
        {"result_json": "not a dict"},
        {"language": "fr"},
        {"usd_rate": "0"},
        {"currency": "yuan"},
    ):
        with pytest.raises(ValidationError):
            quote_create_from_configuration(by=engineer, customer="New Bank", **plan_kwargs(**bad))
    with pytest.raises(ValidationError):
        quote_create_from_configuration(by=engineer, customer="New Bank", discount="0.95", **plan_kwargs())
    assert _nothing_written()


@pytest.mark.django_db
def test_stale_version_is_a_conflict_and_changes_nothing(make_quote, engineer, manager):
    quote = make_quote()
    engineers_copy = Quote.objects.get(pk=quote.pk)
    managers_copy = Quote.objects.get(pk=quote.pk)
    quote_update(
        quote=managers_copy, by=manager, expected_version=managers_copy.version, title="Manager's title"
    )
    with pytest.raises(QuoteConflictError) as conflict:
        quote_update(
            quote=engineers_copy,
            by=engineer,
            expected_version=engineers_copy.version,
            title="Engineer's title",
        )
    message = str(conflict.value)
    assert quote.number in message and "manager" in message and "reload" in message
    assert Quote.objects.get(pk=quote.pk).title == "Manager's title"
    # The other services check the version too.
    with pytest.raises(QuoteConflictError):
        quote_transition(
            quote=quote, to_status=QuoteStatus.SENT, by=engineer, expected_version=engineers_copy.version
        )
    with pytest.raises(QuoteConflictError):
        revision_create_from(
            revision=quote.revisions.get(), changes={}, by=engineer, expected_version=engineers_copy.version
        )
    assert Quote.objects.get(pk=quote.pk).status == QuoteStatus.DRAFT
    assert quote.revisions.count() == 1


@pytest.mark.django_db
def test_update_records_what_changed(make_quote, engineer):
    quote = make_quote()
    quote_update(quote=quote, by=engineer, expected_version=quote.version, title="New title")
    event = AuditEvent.objects.get(action=AuditAction.QUOTE_UPDATED)
    assert event.detail == {"title": {"from": "K3 on 8 × A3", "to": "New title"}}


@pytest.mark.django_db
def test_only_a_draft_quote_is_edited(make_quote, engineer):
    quote = make_quote()
    quote_transition(quote=quote, to_status=QuoteStatus.SENT, by=engineer)
    quote.refresh_from_db()
    with pytest.raises(ValidationError, match="draft"):
        quote_update(quote=quote, by=engineer, expected_version=quote.version, title="x")


@pytest.mark.django_db
def test_audit_rows_cannot_be_changed_or_deleted(make_quote):
    make_quote()
    event = AuditEvent.objects.first()
    event.detail = {"forged": True}
    with pytest.raises(AuditImmutableError), transaction.atomic():
        event.save()
    with pytest.raises(AuditImmutableError), transaction.atomic():
        AuditEvent.objects.update(detail={})
    with pytest.raises(AuditImmutableError), transaction.atomic():
        AuditEvent.objects.all().delete()
    assert AuditEvent.objects.filter(detail__forged=True).count() == 0


@pytest.mark.django_db
def test_creation_writes_the_audit_trail(make_quote, engineer):
    quote = make_quote(customer="Hangzhou Gov Cloud")
    actions = list(AuditEvent.objects.order_by("id").values_list("action", "actor"))
    assert actions == [
        (AuditAction.CUSTOMER_CREATED, engineer.pk),
        (AuditAction.QUOTE_CREATED, engineer.pk),
        (AuditAction.REVISION_CREATED, engineer.pk),
    ]
    assert quote.customer.team.name == "East China"
    # The same name again (any case) reuses the customer.
    assert make_quote(customer="hangzhou gov cloud").customer == quote.customer


@pytest.mark.django_db
def test_editing_the_header_marks_a_draft_revisions_pdf_for_regeneration(make_quote, engineer):
    # The proposal prints customer, title and validity: a draft's ready PDF no
    # longer matches after they change; an issued revision keeps its PDF.
    from quotes.models import QuoteRevision
    from quotes.statuses import PdfStatus

    quote = make_quote()
    revision = quote.revisions.get()
    QuoteRevision.objects.filter(pk=revision.pk).update(pdf_status=PdfStatus.READY)
    quote_update(quote=quote, by=engineer, expected_version=quote.version, title="Renamed")
    revision.refresh_from_db()
    assert revision.pdf_status == PdfStatus.NONE

    other = make_quote(title="Issued one")
    issued = other.revisions.get()
    revision_issue(revision=issued, by=engineer)
    QuoteRevision.objects.filter(pk=issued.pk).update(pdf_status=PdfStatus.READY)
    other.refresh_from_db()
    assert other.status == QuoteStatus.DRAFT  # issuing freezes the revision, the quote stays editable
    quote_update(quote=other, by=engineer, expected_version=other.version, title="Renamed too")
    issued.refresh_from_db()
    assert issued.pdf_status == PdfStatus.READY


@pytest.mark.django_db
def test_a_database_error_during_a_save_from_the_page_is_a_503_saying_nothing_was_saved(
    client, catalog, engineer, monkeypatch
):
    import json

    from django.urls import reverse

    def failing_bulk_create(self, objs, *args, **kwargs):
        raise DatabaseError("connection lost while writing BOM lines")

    monkeypatch.setattr(type(BomLine.objects.all()), "bulk_create", failing_bulk_create)
    client.force_login(engineer)
    client.cookies["django_language"] = "en"
    request_json = {"model": "kimi-k3", "server": "atlas-800-a3", "topology": {"kind": "single", "nodes": 4}}
    response = client.post(
        reverse("quotes:create"), {"request_json": json.dumps(request_json), "customer_name": "Retry Bank"}
    )
    assert response.status_code == 503
    assert "nothing was saved" in response.content.decode()
    assert _nothing_written()
