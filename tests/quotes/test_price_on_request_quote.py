"""A quote of a server the price list does not price (issue 30): the server line reads "Price on
request" instead of ¥0, the revision takes no TCO totals from the plan, and the proposal says the
net total excludes it.  The seeded list cny-2026 has no item for the DGX H100."""

from __future__ import annotations

import json

import pytest
from django.test import Client
from django.urls import reverse

from documents.pdf.render import proposal_html
from quotes.bom import NO_PRICE_NOTE
from quotes.models import Quote
from quotes.statuses import BomCategory

pytest.importorskip("configurator.planning.quoting")

REQUEST = {"model": "qwen3-32b", "server": "dgx-h100", "topology": {"kind": "single", "nodes": 2}}


@pytest.mark.django_db
def test_a_server_priced_on_request_is_quoted_as_such(users, catalog):
    client = Client(HTTP_ACCEPT_LANGUAGE="en")
    client.force_login(users["engineer"])
    response = client.post(
        reverse("quotes:create"),
        {"request_json": json.dumps(REQUEST), "customer": "Shanghai Pudong Bank", "discount": "0"},
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    revision = Quote.objects.order_by("-pk").first().revisions.get()
    server = revision.lines.get(category=BomCategory.SERVER)
    assert server.unit_price == 0 and server.note == NO_PRICE_NOTE == "Price on request"
    # No zeros taken from a TCO the engine withheld.
    assert revision.tco_buy_total is None and revision.tco_lease_total is None
    html = proposal_html(revision, lang="en")
    assert "Price on request" in html
    assert "Excluding the items priced on request" in html
    assert "Some items are priced on request, so no total cost of ownership is shown yet" in html
    zh = proposal_html(revision, lang="zh-hans")
    assert "价格待询" in zh and "不含价格待询的项目" in zh
    detail = client.get(reverse("quotes:detail", args=[revision.quote.pk])).content.decode()
    assert "Price on request" in detail
