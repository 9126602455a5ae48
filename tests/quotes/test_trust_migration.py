"""Issue 13: revisions issued before the fix get a header snapshot, and a draft PDF is not their issued copy."""

from __future__ import annotations

import datetime as dt

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

BEFORE = [("quotes", "0001_initial"), ("accounts", "0002_apitoken")]
AFTER = [("quotes", "0002_issued_header_pdf_and_price_marks")]


@pytest.mark.django_db(transaction=True)
def test_issued_revisions_get_their_header_and_lose_a_pre_issue_pdf():
    executor = MigrationExecutor(connection)
    try:
        executor.migrate(BEFORE)
        apps = executor.loader.project_state(BEFORE).apps
        User = apps.get_model("auth", "User")
        Customer = apps.get_model("quotes", "Customer")
        Quote = apps.get_model("quotes", "Quote")
        Revision = apps.get_model("quotes", "QuoteRevision")
        owner = User.objects.create(username="legacy")
        customer = Customer.objects.create(name="Legacy Bank", industry="banking")
        quote = Quote.objects.create(
            number="Q-2025-0001", year=2025, sequence=1, title="Old K3 quote", customer=customer,
            owner=owner, currency="CNY", language="en", valid_until=dt.date(2026, 1, 31),
        )  # fmt: skip
        issued_at = timezone.now()
        common = {"quote": quote, "created_by": owner, "usd_rate": "7.2", "currency": "CNY"}
        draft_pdf = Revision.objects.create(
            index=1, number="Q-2025-0001-R1", status="issued", issued_at=issued_at, pdf_status="ready",
            pdf_rendered_at=issued_at - dt.timedelta(hours=1), **common,
        )  # fmt: skip
        final_pdf = Revision.objects.create(
            index=2, number="Q-2025-0001-R2", status="issued", issued_at=issued_at, pdf_status="ready",
            pdf_rendered_at=issued_at + dt.timedelta(minutes=1), **common,
        )  # fmt: skip
        executor = MigrationExecutor(connection)
        executor.migrate(AFTER)
        apps = executor.loader.project_state(AFTER).apps
        Revision = apps.get_model("quotes", "QuoteRevision")
        one, two = Revision.objects.get(pk=draft_pdf.pk), Revision.objects.get(pk=final_pdf.pk)
        assert one.header_json["title"] == "Old K3 quote"
        assert one.header_json["customer"]["name"] == "Legacy Bank"
        assert one.header_json["valid_until"] == "2026-01-31" and one.header_json["language"] == "en"
        assert (one.pdf_issued, one.pdf_status) == (False, "none")
        assert (two.pdf_issued, two.pdf_status) == (True, "ready")
    finally:
        MigrationExecutor(connection).migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())
