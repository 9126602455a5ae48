"""Issued revisions are frozen (model layer and services); changes make new revisions."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError
from django.db import transaction

from quotes.models import AuditEvent, BomLine, QuoteRevision, RevisionImmutableError
from quotes.services.issuing import revision_issue, revision_issued
from quotes.services.pdf import revision_pdf_fail, revision_pdf_queue, revision_pdf_start, revision_pdf_store
from quotes.services.revisions import revision_create_from
from quotes.services.transitions import quote_transition
from quotes.statuses import AuditAction, PdfStatus, QuoteStatus, RevisionStatus

from .conftest import PRICES, RESULT, plan_kwargs


@pytest.fixture
def issued(make_quote, engineer):
    quote = make_quote(discount="0.05")
    revision = revision_issue(revision=quote.revisions.get(), by=engineer)
    return QuoteRevision.objects.get(pk=revision.pk)


@pytest.mark.django_db
def test_issue_freezes_the_revision_and_is_audited(issued, engineer):
    assert issued.status == RevisionStatus.ISSUED
    assert issued.issued_by == engineer and issued.issued_at is not None
    event = AuditEvent.objects.get(action=AuditAction.REVISION_ISSUED)
    assert (event.actor, event.object_id, event.detail["number"]) == (engineer, str(issued.pk), issued.number)


@pytest.mark.django_db
@pytest.mark.parametrize(
    "field, value",
    [
        ("discount", Decimal("0.01")),
        ("net_total", Decimal("1.00")),
        ("request_json", {"model": "other"}),
        ("prices_json", {}),
        ("status", RevisionStatus.DRAFT),
        ("approval_state", "approved"),
        ("usd_rate", Decimal("6.5")),
    ],
)
def test_model_save_refuses_to_change_a_frozen_field(issued, field, value):
    setattr(issued, field, value)
    with pytest.raises(RevisionImmutableError), transaction.atomic():
        issued.save()
    fresh = QuoteRevision.objects.get(pk=issued.pk)
    assert fresh.status == RevisionStatus.ISSUED and fresh.discount == Decimal("0.05")


@pytest.mark.django_db
def test_queryset_update_and_delete_are_refused(issued):
    with pytest.raises(RevisionImmutableError), transaction.atomic():
        QuoteRevision.objects.filter(pk=issued.pk).update(net_total=Decimal("1"))
    with pytest.raises(RevisionImmutableError), transaction.atomic():
        issued.delete()
    with pytest.raises(RevisionImmutableError), transaction.atomic():
        QuoteRevision.objects.filter(pk=issued.pk).delete()
    assert QuoteRevision.objects.filter(pk=issued.pk, net_total=issued.net_total).exists()


@pytest.mark.django_db
def test_bom_lines_of_an_issued_revision_are_frozen(issued):
    line = issued.lines.first()
    line.unit_price = Decimal("1")
    with pytest.raises(RevisionImmutableError), transaction.atomic():
        line.save()
    with pytest.raises(RevisionImmutableError), transaction.atomic():
        line.delete()
    with pytest.raises(RevisionImmutableError), transaction.atomic():
        BomLine.objects.filter(revision=issued).update(quantity=0)
    with pytest.raises(RevisionImmutableError), transaction.atomic():
        BomLine.objects.bulk_create(
            [BomLine(revision=issued, position=99, category="other", description_en="x", quantity=1,
                     unit_price=1, line_total=1, currency="CNY")]
        )  # fmt: skip
    assert issued.lines.count() == 8
    assert BomLine.objects.get(pk=line.pk).unit_price == Decimal("3000000")


@pytest.mark.django_db
def test_pdf_job_fields_stay_writable_after_issue(issued, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    # The PDF job services write only the PDF fields; the model lets them through.
    revision_pdf_queue(revision=issued, task_id="task-1")
    revision_pdf_start(revision=issued)
    revision_pdf_fail(revision=issued, error="font missing")
    revision_pdf_start(revision=issued)
    content = b"%PDF-1.7 test"
    stored = revision_pdf_store(revision=issued, content=content)
    fresh = QuoteRevision.objects.get(pk=issued.pk)
    assert fresh.pdf_status == PdfStatus.READY
    assert fresh.pdf_attempts == 2
    assert fresh.pdf_error == ""
    # sha256(b"%PDF-1.7 test"), computed independently with hashlib.
    import hashlib

    assert fresh.pdf_sha256 == hashlib.sha256(content).hexdigest()
    assert fresh.pdf_file.name.startswith(f"proposals/{fresh.quote.number}/{fresh.number}")
    assert fresh.pdf_file.read() == content
    assert (tmp_path / stored.pdf_file.name).is_file()
    actions = list(AuditEvent.objects.filter(object_id=str(issued.pk)).values_list("action", flat=True))
    assert AuditAction.PDF_RENDERED in actions and AuditAction.PDF_FAILED in actions
    # The PDF stored after issue is the issued copy (issue 13): from then on even
    # the PDF fields are frozen, by save() and by QuerySet.update() alike.
    assert fresh.pdf_issued
    fresh.pdf_task_id = "task-2"
    with pytest.raises(RevisionImmutableError, match="pdf_task_id"):
        fresh.save(update_fields=["pdf_task_id"])
    with pytest.raises(RevisionImmutableError, match="issued proposal PDF"):
        QuoteRevision.objects.filter(pk=issued.pk).update(pdf_status=PdfStatus.NONE)


@pytest.mark.django_db
def test_services_refuse_to_issue_twice(issued, engineer):
    with pytest.raises(ValidationError, match="already issued"):
        revision_issue(revision=issued, by=engineer)


@pytest.mark.django_db
def test_new_revision_picks_up_changes_and_the_old_one_stays(issued, engineer):
    before = {f.attname: getattr(issued, f.attname) for f in QuoteRevision._meta.concrete_fields}
    lines_before = list(issued.lines.values_list("position", "unit_price", "line_total"))
    new = revision_create_from(
        revision=issued, changes={"discount": Decimal("0.08"), "note": "customer asked for 8 %"}, by=engineer
    )
    assert (new.index, new.number, new.status) == (2, f"{issued.quote.number}-R2", RevisionStatus.DRAFT)
    assert new.based_on == issued and new.change_note == "customer asked for 8 %"
    # Capex 27,567,000 × 0.08 = 2,205,360.00 → net 33,567,000 − 2,205,360 = 31,361,640.00
    assert new.discount == Decimal("0.08")
    assert new.net_total == Decimal("31361640.00")
    assert new.request_json == issued.request_json and new.prices_json == issued.prices_json
    assert new.lines.count() == 8
    issued.refresh_from_db()
    after = {f.attname: getattr(issued, f.attname) for f in QuoteRevision._meta.concrete_fields}
    assert after == before
    assert list(issued.lines.values_list("position", "unit_price", "line_total")) == lines_before
    assert AuditEvent.objects.filter(action=AuditAction.REVISION_CREATED, object_id=str(new.pk)).exists()


@pytest.mark.django_db
def test_new_revision_with_a_new_plan_and_line_discount(issued, engineer):
    result = {**RESULT, "tco": {**RESULT["tco"], "nodes": 16, "rack_count": 8}}
    kwargs = plan_kwargs(result_json=result)
    new = revision_create_from(
        revision=issued,
        changes={
            "request_json": kwargs["request_json"],
            "resolved_json": kwargs["resolved_json"],
            "result_json": result,
            "prices_json": PRICES,
            "usd_rate": "7.1",
            "line_discounts": {"optics:": Decimal("0.05")},
        },
        by=engineer,
    )
    server = new.lines.get(category="server")
    assert server.quantity == 16 and server.line_total == Decimal("48000000.00")  # 16 × 3,000,000
    optics = new.lines.get(category="optics")
    # 272 × 6,000 × (1 − 0.05) = 1,550,400.00
    assert (optics.discount, optics.line_total) == (Decimal("0.05"), Decimal("1550400.00"))
    assert new.usd_rate == Decimal("7.1")
    assert issued.lines.get(category="server").quantity == 8


@pytest.mark.django_db
def test_revision_changes_are_validated(issued, engineer):
    with pytest.raises(ValidationError, match="Unknown changes"):
        revision_create_from(revision=issued, changes={"colour": "red"}, by=engineer)
    with pytest.raises(ValidationError, match="together"):
        revision_create_from(revision=issued, changes={"result_json": RESULT}, by=engineer)
    with pytest.raises(ValidationError):
        revision_create_from(revision=issued, changes={"discount": "0.95"}, by=engineer)
    usd_plan = {"request_json": {"a": 1}, "resolved_json": {}, "result_json": RESULT, "prices_json": PRICES,
                "usd_rate": "7.2", "currency": "USD"}  # fmt: skip
    with pytest.raises(ValidationError, match="needs a new quote"):
        revision_create_from(revision=issued, changes=usd_plan, by=engineer)
    with pytest.raises(ValidationError, match="JSON object"):
        revision_create_from(
            revision=issued, changes={**usd_plan, "currency": "CNY", "result_json": "not a dict"}, by=engineer
        )
    assert issued.quote.revisions.count() == 1


@pytest.mark.django_db
def test_revising_a_sent_quote_takes_it_back_to_draft(issued, engineer):
    quote = quote_transition(quote=issued.quote, to_status=QuoteStatus.SENT, by=engineer)
    revision_create_from(revision=issued, changes={"note": "more nodes"}, by=engineer)
    quote.refresh_from_db()
    assert quote.status == QuoteStatus.DRAFT
    transitions = AuditEvent.objects.filter(action=AuditAction.QUOTE_TRANSITION).order_by("id")
    assert [(e.detail["from"], e.detail["to"]) for e in transitions] == [("draft", "sent"), ("sent", "draft")]


@pytest.mark.django_db
def test_only_the_latest_revision_can_be_issued(make_quote, engineer):
    quote = make_quote()
    r1 = quote.revisions.get()
    revision_create_from(revision=r1, changes={"note": "second thoughts"}, by=engineer)
    with pytest.raises(ValidationError, match="superseded"):
        revision_issue(revision=r1, by=engineer)


@pytest.mark.django_db
def test_a_discount_that_differs_from_the_planned_one_is_refused(engineer, make_quote):
    # The engine prices the discount (tco.capex.discount): a quote whose discount
    # differs from the one it was planned with would show inconsistent totals.
    resolved = {**plan_kwargs()["resolved_json"], "commercial": {"quote_discount": "0.05"}}
    with pytest.raises(ValidationError, match="planned with a discount"):
        make_quote(discount="0.08", resolved_json=resolved)
    assert make_quote(discount="0.05", resolved_json=resolved).revisions.get().discount == Decimal("0.05")


@pytest.mark.django_db(transaction=True)
def test_issuing_announces_the_revision_after_commit(make_quote, engineer):
    received = []

    def receiver(sender, revision_id, **kwargs):
        # After commit: the issued state is visible to any new reader.
        received.append((revision_id, QuoteRevision.objects.get(pk=revision_id).status))

    revision_issued.connect(receiver)
    try:
        revision = make_quote().revisions.get()
        with transaction.atomic():
            revision_issue(revision=revision, by=engineer)
            assert received == []  # not before the commit
        assert received == [(revision.pk, RevisionStatus.ISSUED)]
        # Refused or rolled back issues announce nothing.
        with pytest.raises(ValidationError):
            revision_issue(revision=revision, by=engineer)
        assert len(received) == 1
    finally:
        revision_issued.disconnect(receiver)
