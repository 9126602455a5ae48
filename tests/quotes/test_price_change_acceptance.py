"""Issue acceptance, as an engineer would do it: quote the 8-node plan, issue it,
render its PDF, then the catalog price of the A3 changes.  The issued revision's
totals and PDF stay as they were; a re-planned revision picks up the new price."""

import hashlib
import json
from decimal import Decimal

import pytest
from django.urls import reverse

from catalog.models import PriceItem
from quotes.models import Quote

pytestmark = pytest.mark.django_db

REQUEST = {
    "model": "kimi-k3",
    "server": "atlas-800-a3",
    "topology": {"kind": "primary_standby", "nodes": 8},
    "scenario": "finance-research",
    # The scenario brings its workload; its 32 concurrent 34,816-token requests need more than this
    # 4 + 4 pair's KV cache once the K3 draft's layers are counted (28 at once), which this test is not
    # about: it states a load the pair carries.
    "workload": {"concurrency": 16},
}


def sha256_of(field):
    with field.open("rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def test_issued_revision_and_its_pdf_ignore_a_later_price_change(
    client, catalog, users, settings, tmp_path, django_capture_on_commit_callbacks
):
    settings.MEDIA_ROOT = tmp_path
    settings.CELERY_TASK_ALWAYS_EAGER = True
    client.force_login(users["engineer"])
    response = client.post(
        reverse("quotes:create"), {"request_json": json.dumps(REQUEST), "customer_name": "Bank of Example"}
    )
    assert response.status_code == 302
    quote = Quote.objects.get()
    r1 = quote.revisions.get()
    response = client.post(reverse("quotes:issue", kwargs={"pk": r1.pk}), {"version": quote.version})
    assert response.status_code == 302
    with django_capture_on_commit_callbacks(execute=True):  # the job is sent after commit
        assert client.post(reverse("quotes:pdf_render", kwargs={"pk": r1.pk})).status_code == 302
    r1.refresh_from_db()
    assert r1.status == "issued" and r1.pdf_status == "ready"
    before = {
        "net_total": r1.net_total,
        "capex_total": r1.capex_total,
        "tco_buy_total": r1.tco_buy_total,
        "lines": [
            (line.sku, line.quantity, line.unit_price, line.line_total)
            for line in r1.lines.order_by("position")
        ],
        "pdf_sha": sha256_of(r1.pdf_file),
        "result": r1.result_json,
    }
    server_line = next(line for line in r1.lines.all() if line.category == "server")
    # The seeds' ¥3 M per A3 (docs/domain.md §8: ≈¥24 M for 8 nodes).
    assert server_line.unit_price == Decimal("3000000.00") and server_line.quantity == 8

    # The catalog admin raises the A3 price by ¥200,000.
    item = PriceItem.objects.get(kind="server", item_slug="atlas-800-a3")
    item.unit_price = Decimal("3200000.00")
    item.save()

    r1.refresh_from_db()
    assert r1.net_total == before["net_total"]
    assert r1.capex_total == before["capex_total"]
    assert r1.tco_buy_total == before["tco_buy_total"]
    assert [
        (line.sku, line.quantity, line.unit_price, line.line_total) for line in r1.lines.order_by("position")
    ] == before["lines"]
    assert r1.result_json == before["result"]
    assert sha256_of(r1.pdf_file) == before["pdf_sha"]
    assert client.get(reverse("quotes:pdf", kwargs={"pk": r1.pk})).status_code == 200

    # A new revision, re-planned against today's catalog, picks up the new price.
    quote.refresh_from_db()
    response = client.post(
        reverse("quotes:revise", kwargs={"pk": r1.pk}),
        {"version": quote.version, "discount": "0", "note": "new A3 price", "replan": "on"},
    )
    assert response.status_code == 302
    r2 = quote.revisions.order_by("index").last()
    assert r2.pk != r1.pk
    new_server_line = next(line for line in r2.lines.all() if line.category == "server")
    assert new_server_line.unit_price == Decimal("3200000.00")
    # Capex grows by 8 × ¥200,000 = ¥1.6 M, everything else being equal.
    assert r2.capex_total - r1.capex_total == Decimal("1600000.00")
