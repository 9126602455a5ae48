"""Issue 13: a double submit of "Create quote" gives one quote, not two.

Each rendering of the create form carries its own idempotency key
(``quote_create_form`` in quotes/templatetags/quote_format.py).  Posting the
same form twice — a double click, or "back" and submit again — returns the
quote the first post created; a freshly rendered form makes a new quote.
Before issue 13 every post created another quote with the next number.
"""

from __future__ import annotations

import json
import re

import pytest
from django.template import Context, Template
from django.test import RequestFactory
from django.urls import reverse

from quotes.models import Quote
from quotes.services import quotes as quote_services

from .conftest import REQUEST

pytestmark = pytest.mark.django_db


def rendered_key(user) -> str:
    """The idempotency key of one rendering of the create form (as the configurator page shows it)."""
    request = RequestFactory().get("/")
    request.user = user
    html = Template("{% load quote_format %}{% quote_create_form request_json %}").render(
        Context({"request": request, "request_json": json.dumps(REQUEST), "csrf_token": "x"})
    )
    return re.search(r'name="idempotency_key" value="([^"]+)"', html).group(1)


def post(client, key: str, title: str = "K3 pilot"):
    return client.post(
        reverse("quotes:create"),
        {"request_json": json.dumps(REQUEST), "customer": "Shanghai Pudong Bank", "title": title,
         "idempotency_key": key},
    )  # fmt: skip


def test_posting_the_same_form_twice_creates_one_quote(client, users, fake_planner):
    client.force_login(users["engineer"])
    key = rendered_key(users["engineer"])
    first = post(client, key)
    assert first.status_code == 302
    second = post(client, key, title="typed again after going back")
    assert second.status_code == 302 and second["Location"] == first["Location"]
    assert Quote.objects.count() == 1
    assert Quote.objects.get().title == "K3 pilot"  # the first post's quote, unchanged
    assert len(fake_planner.calls) == 1  # the repeat was not even planned again
    # Over htmx the repeat is a client redirect to the same quote.
    response = client.post(
        reverse("quotes:create"),
        {"request_json": json.dumps(REQUEST), "customer": "Shanghai Pudong Bank", "idempotency_key": key},
        HTTP_HX_REQUEST="true",
    )
    assert response["HX-Redirect"] == first["Location"]


def test_each_rendering_of_the_form_makes_its_own_quote(client, users, fake_planner):
    client.force_login(users["engineer"])
    one, two = rendered_key(users["engineer"]), rendered_key(users["engineer"])
    assert one != two
    post(client, one)
    post(client, two)
    assert Quote.objects.count() == 2


def test_the_key_is_per_user(client, users, fake_planner, make_user):
    from accounts.roles import SALES_ENGINEER

    key = rendered_key(users["engineer"])
    client.force_login(users["engineer"])
    post(client, key)
    other = make_user("someone", SALES_ENGINEER, "East China")
    client.force_login(other)
    post(client, key)  # another user's key never returns (or reveals) the first user's quote
    assert sorted(Quote.objects.values_list("owner__username", flat=True)) == ["engineer", "someone"]


def test_a_malformed_key_is_a_form_error(client, users, fake_planner):
    client.force_login(users["engineer"])
    response = post(client, "bad key; <script>")
    assert response.status_code == 400
    assert Quote.objects.count() == 0


def test_two_posts_racing_past_the_check_still_give_one_quote(users, make_quote, monkeypatch):
    """The unique (owner, key) constraint is the backstop when both posts pass the look-up at once."""
    first = make_quote(creation_key="k" * 32)
    real = quote_services.quote_created_with
    calls = []

    def too_late(*, by, creation_key):
        calls.append(creation_key)
        return None if len(calls) == 1 else real(by=by, creation_key=creation_key)

    monkeypatch.setattr(quote_services, "quote_created_with", too_late)
    again = make_quote(creation_key="k" * 32)
    assert again.pk == first.pk and Quote.objects.count() == 1
