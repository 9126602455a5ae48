"""Nothing unpriced passes as a number: two Supermicro AS-8125GS (8 × MI300X), which the seeded
price list cny-2026 does not price (catalog/seed/price_lists.yaml has no item for it).

The plan's JSON gives every amount of the withheld TCO as null with the reason; the quote's server
line is "price on request" on the share page and in the workbook, the totals say what they
exclude, sending needs a sales manager's approval, and the offer cannot be accepted as a firm total
(neither by the customer on the share link nor by marking it accepted) until the line is priced.
"""

from __future__ import annotations

import io
import json
import re

import pytest
from django.core.exceptions import ValidationError
from django.test import Client
from django.urls import reverse
from django.utils import translation
from openpyxl import load_workbook

from catalog.seed import loader
from documents.exports import revision_workbook
from quotes.models import Quote
from quotes.services import approvals, transitions
from quotes.statuses import ApprovalState, BomCategory, QuoteStatus
from quotes.workflow.models import CustomerAcceptance

pytestmark = pytest.mark.django_db

SERVER = "supermicro-as-8125gs-mi300x"
REQUEST = {"model": "qwen3-32b", "server": SERVER, "topology": {"kind": "single", "nodes": 2}}
SHARE_URL = re.compile(r'value="(http://testserver/quotes/shared/([A-Za-z0-9_-]+)/)"')


def _money_leaves(node, path=""):
    """(path, value) of every string or number under ``node``."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _money_leaves(value, f"{path}.{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _money_leaves(value, f"{path}[{i}]")
    else:
        yield path, node


def test_the_seeded_list_has_no_price_for_the_mi300x_server():
    priced = {r.values.get("item_slug") for r in loader.load().of("price_item")}
    assert SERVER not in priced


def test_the_api_gives_no_amount_for_a_withheld_tco(client, catalog, users):
    client.force_login(users["engineer"])
    response = client.post("/api/plan", data=json.dumps(REQUEST), content_type="application/json")
    assert response.status_code == 200
    tco = response.json()["tco"]
    assert tco["valid"] is False and tco["prices_on_request"] == ["server"]
    assert tco["withheld"] == {"reason": "price_on_request", "lines": ["server"]}
    # Before: capex, totals and NPV were "0.00".  No amount of the section is 0 now: every one is null.
    for key in ("total", "servers", "switches", "subtotal"):
        assert tco["capex"][key] is None
    for key in ("buy_total", "lease_total", "npv_buy", "npv_lease", "residual_value"):
        assert tco[key] is None
    assert tco["annual"]["electricity"] is None and tco["annual"]["om"] is None
    zeros = [p for p, v in _money_leaves(tco) if v in ("0.00", "0")]
    # The only zeros left are counts and rates, not money (the storage capacity, the monthly rate).
    assert set(zeros) <= {".capex.storage_tb", ".monthly_discount_rate"}, zeros
    codes = {c["code"] for c in response.json()["checks"]}
    assert "commercial.price_on_request" in codes


@pytest.fixture
def quote(client, users, catalog, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    settings.CELERY_TASK_ALWAYS_EAGER = True
    client.force_login(users["engineer"])
    response = client.post(
        reverse("quotes:create"),
        {"request_json": json.dumps(REQUEST), "customer_name": "Bank of Example", "discount": "0"},
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    return Quote.objects.get()


def test_an_unpriced_line_needs_approval_and_the_offer_cannot_be_accepted(
    client, quote, users, django_capture_on_commit_callbacks
):
    revision = quote.revisions.get()
    server = revision.lines.get(category=BomCategory.SERVER)
    assert server.unit_price == 0 and server.price_on_request
    unpriced = revision.lines_on_request
    assert server in unpriced and all(line.unit_price == 0 and line.price_on_request for line in unpriced)
    # The server withholds the plan's TCO, so the offer is no firm total; the added NIC cards, also on
    # request, are listed as excluded without blocking the offer (statuses.FIRM_TOTAL_CATEGORIES).
    assert revision.lines_withholding_the_total == [server]
    assert any(line.category == BomCategory.OTHER for line in unpriced)
    # Sending it needs a sales manager: one reason, the server.
    assert revision.approval_state == ApprovalState.PENDING
    reasons = revision.approval_reasons
    assert [(r["code"], r["description"]) for r in reasons] == [("price_on_request", server.description_en)]
    with translation.override("en"), pytest.raises(ValidationError, match="approval"):
        transitions.quote_transition(quote=quote, to_status=QuoteStatus.SENT, by=users["engineer"])
    approvals.revision_approve(revision=revision, by=users["manager"], comment="servers follow")

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("quotes:share_create", kwargs={"pk": revision.pk}))
    assert response.status_code == 302, response.content.decode()[:2000]
    url, token = SHARE_URL.search(client.get(response["Location"]).content.decode()).groups()
    quote.refresh_from_db()
    assert quote.status == QuoteStatus.SENT

    customer = Client()
    html = customer.get(url).content.decode()
    row = next(r for r in html.split("<tr>") if server.description_en in r)
    assert "Price on request" in row and "0.00" not in row
    assert "Excluding the items priced on request:" in html
    assert "can be accepted once they are priced" in html  # the form is replaced by the reason
    assert all(line.description_en in html for line in unpriced)  # every excluded item is named
    response = customer.post(
        reverse("quotes:share_accept", args=[token]), {"name": "Li Wei", "title": "CIO", "confirm": "on"}
    )
    assert response.status_code == 400 and not CustomerAcceptance.objects.exists()
    with translation.override("en"), pytest.raises(ValidationError, match="priced on request"):
        transitions.quote_transition(quote=quote, to_status=QuoteStatus.ACCEPTED, by=users["engineer"])
    quote.refresh_from_db()
    assert quote.status == QuoteStatus.SENT


def test_the_workbook_prints_price_on_request_not_zero(quote):
    revision = quote.revisions.get()
    book = load_workbook(io.BytesIO(revision_workbook(revision)))
    sheet = book["BOM"]
    header = [c.value for c in sheet[1]]
    rows = [[c.value for c in row] for row in sheet.iter_rows(min_row=2)]
    server = revision.lines.get(category=BomCategory.SERVER)
    row = next(r for r in rows if r[header.index("Description")] == server.description_en)
    assert row[header.index("Unit price")] == "Price on request"
    assert row[header.index("Line total")] is None
    texts = [str(v) for r in rows for v in r if isinstance(v, str)]
    assert any(
        t.startswith("Excluding the items priced on request:") and server.description_en in t for t in texts
    )
    # No TCO is drawn from the withheld plan (before: a TCO from zero-priced servers).
    assert revision.tco_buy_total is None
