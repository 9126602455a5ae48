"""Issue 13: API tokens are created (shown once), listed, expire and are revoked in the UI.

Before, tokens could only be made from the shell and never expired.  The
token authenticates the JSON API (configurator/api/base.py, ``Authorization:
Bearer``); a revoked or expired one gets the same 401/403 as no token.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from accounts.models import ApiToken
from accounts.services import API_TOKEN_DEFAULT_DAYS, api_token_create, api_token_user

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _english(client):
    # Messages are asserted in English (the Chinese wording is in locale/zh_Hans/quotes-trust.tsv).
    client.defaults["HTTP_ACCEPT_LANGUAGE"] = "en"


def create_in_ui(client, **data) -> tuple[str, object]:
    response = client.post(reverse("api_tokens"), data)
    match = re.search(r'id="new-token-value">([^<]+)<', response.content.decode())
    return (match.group(1) if match else ""), response


def api_status(token: str) -> int:
    response = Client().post(
        "/api/plan",
        data=json.dumps(
            {"model": "kimi-k3", "server": "atlas-800-a3", "topology": {"kind": "single", "nodes": 4}}
        ),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )
    return response.status_code


def test_a_token_made_in_the_ui_is_shown_once_works_and_is_stored_hashed(client, users):
    client.force_login(users["engineer"])
    token, response = create_in_ui(client, name="laptop")
    assert response.status_code == 200 and token
    assert response["Cache-Control"].startswith("no-store") or "no-store" in response["Cache-Control"]
    row = ApiToken.objects.get(user=users["engineer"])
    assert row.key_sha256 == hashlib.sha256(token.encode()).hexdigest()
    assert token not in row.key_sha256 and row.prefix == token[:8]
    # Default expiry: the end of the day API_TOKEN_DEFAULT_DAYS (90) days from today, local time.
    expected = timezone.localdate() + dt.timedelta(days=API_TOKEN_DEFAULT_DAYS + 1)
    assert timezone.localtime(row.expires_at).date() == expected
    assert api_token_user(token) == users["engineer"]
    assert api_status(token) not in (401, 403)
    # The list shows it, without the token itself.
    listing = client.get(reverse("api_tokens")).content.decode()
    assert "laptop" in listing and token[:8] + "…" in listing and token not in listing


def test_revoking_in_the_ui_refuses_the_token_from_then_on(client, users):
    client.force_login(users["engineer"])
    token, _ = create_in_ui(client, name="ci runner")
    row = ApiToken.objects.get()
    response = client.post(reverse("api_token_revoke", args=[row.pk]))
    assert response.status_code == 302
    row.refresh_from_db()
    assert row.revoked_at is not None
    assert api_token_user(token) is None
    assert api_status(token) in (401, 403)
    assert "revoked" in client.get(reverse("api_tokens")).content.decode()


def test_an_expired_token_is_refused(users):
    token = api_token_create(user=users["engineer"], name="old")
    ApiToken.objects.update(expires_at=timezone.now() - dt.timedelta(seconds=1))
    assert api_token_user(token) is None
    assert api_status(token) in (401, 403)


def test_expiry_dates_are_checked(client, users):
    client.force_login(users["engineer"])
    today = timezone.localdate()
    for bad in (today, today + dt.timedelta(days=366)):
        token, response = create_in_ui(client, name="x", expires_on=bad.isoformat())
        assert response.status_code == 400 and not token
        assert "at most 365 days ahead" in response.content.decode()
    token, response = create_in_ui(client, name="x", expires_on=(today + dt.timedelta(days=7)).isoformat())
    assert token and response.status_code == 200
    assert ApiToken.objects.count() == 1


def test_nobody_revokes_or_sees_anothers_tokens(client, users):
    token = api_token_create(user=users["manager"], name="manager's")
    row = ApiToken.objects.get()
    client.force_login(users["engineer"])
    assert client.post(reverse("api_token_revoke", args=[row.pk])).status_code == 404
    assert "manager&#x27;s" not in client.get(reverse("api_tokens")).content.decode()
    assert api_token_user(token) == users["manager"]


def test_the_tokens_page_needs_a_log_in(client):
    assert client.get(reverse("api_tokens")).status_code == 302
