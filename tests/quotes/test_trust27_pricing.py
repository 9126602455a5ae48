"""Issue 27, findings 1, 2 and 5 (and issue 31's approval scope), through the real planner
and the seeded catalog (``load_catalog``).

List prices are read here straight from the price list in force
(``catalog.selectors.price_list_in_force``), never from the code under test.
"""

from __future__ import annotations

import copy
import json
from decimal import Decimal

import pytest
from django.test import Client
from django.urls import reverse

from catalog.models import PriceItem
from catalog.selectors import price_list_in_force
from quotes.models import Quote, QuoteRevision
from quotes.statuses import ApprovalState

pytestmark = pytest.mark.django_db

# The seed's validated 4 × A3 finance deployment is 8 nodes primary/standby (tests/quotes/test_share.py).
REQUEST = {
    "model": "kimi-k3",
    "server": "atlas-800-a3",
    "topology": {"kind": "primary_standby", "nodes": 8},
    "scenario": "finance-research",
}


@pytest.fixture(autouse=True)
def _media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    settings.CELERY_TASK_ALWAYS_EAGER = True


def english(user) -> Client:
    client = Client(HTTP_ACCEPT_LANGUAGE="en")
    client.force_login(user)
    return client


def post_create(client, request_json: dict, **extra):
    data = {"request_json": json.dumps(request_json), "customer_name": "Bank of Example", **extra}
    return client.post(reverse("quotes:create"), data)


def with_commercial(**commercial) -> dict:
    request = copy.deepcopy(REQUEST)
    request["commercial"] = commercial
    return request


def list_price(kind: str, slug: str, currency: str = "CNY") -> Decimal:
    return price_list_in_force(currency).items.get(kind=kind, item_slug=slug).unit_price


# --------------------------------------------------------------------------- finding 1


@pytest.mark.parametrize(
    "commercial",
    [
        {"currency": "USD", "server_unit_price": "1"},  # USD 4.00 for the servers, "approval not needed"
        {"currency": "EUR"},  # a 0.00 quote
    ],
)
def test_any_currency_without_a_price_list_skips_approval(users, catalog, commercial):
    # The seed has price lists in CNY only; a currency without one has nothing to compare with.
    assert price_list_in_force(commercial["currency"]) is None
    response = post_create(english(users["engineer"]), with_commercial(**commercial))
    assert response.status_code == 400
    text = response.content.decode()
    assert f"There is no price list in force in {commercial['currency']}" in text
    assert not Quote.objects.exists()


def test_the_configurator_says_a_currency_without_a_price_list_cannot_be_quoted(users, catalog):
    from configurator.services import price_basis, resolve_request

    request_json = with_commercial(currency="USD")
    with_translation = price_basis(request_json, resolve_request(request_json))
    assert "cannot be saved as a quote in USD" in with_translation


# --------------------------------------------------------------------------- finding 2


def test_measured_from_a_request_field_is_refused(users, catalog):
    request = copy.deepcopy(REQUEST)
    request["workload"] = {"measured_output_tokens_per_s": "1000000"}
    response = post_create(english(users["engineer"]), request)
    assert response.status_code == 400
    assert "A measured throughput can only come from a benchmark file" in response.content.decode()
    assert not Quote.objects.exists()
