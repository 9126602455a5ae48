"""Log-in throttling, CSRF, security headers and API tokens."""

import pytest
from django.test import Client
from django.urls import reverse

from accounts.models import ApiToken
from accounts.services import DEMO_USERS, api_token_create, api_token_user

pytestmark = pytest.mark.django_db


def test_five_failed_logins_lock_the_account_even_with_the_right_password(settings, users):
    settings.AXES_ENABLED = True
    client = Client()
    engineer = DEMO_USERS[0]
    for _ in range(5):
        response = client.post(reverse("login"), {"username": engineer.username, "password": "wrong"})
    response = client.post(reverse("login"), {"username": engineer.username, "password": engineer.password})
    assert response.status_code == 429
    assert (
        "Too many failed log-ins" in response.content.decode()
        or "登录失败次数过多" in response.content.decode()
    )
    # Another user from the same address is not locked out (lock-out is per user name + address).
    other = DEMO_USERS[2]
    response = client.post(reverse("login"), {"username": other.username, "password": other.password})
    assert response.status_code == 302


def test_wrong_password_shows_a_form_error_not_a_500(users):
    client = Client()
    response = client.post(reverse("login"), {"username": "engineer", "password": "nope"})
    assert response.status_code == 200
    assert b"errorbox" in response.content


def test_state_changes_without_a_csrf_token_are_refused(users):
    client = Client(enforce_csrf_checks=True)
    client.force_login(users["engineer"])
    assert client.post(reverse("logout")).status_code == 403
    assert client.post(reverse("configurator:update"), {}).status_code == 403
    assert client.post(reverse("quotes:create"), {}).status_code == 403


def test_security_headers_on_every_page(client, users):
    client.force_login(users["engineer"])
    response = client.get(reverse("login"))
    assert response["X-Frame-Options"] == "DENY"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Referrer-Policy"] == "same-origin"
    assert response["Cross-Origin-Opener-Policy"] == "same-origin"


def test_api_tokens_are_stored_hashed_and_resolve_to_their_user(users):
    token = api_token_create(user=users["manager"], name="laptop")
    row = ApiToken.objects.get(user=users["manager"])
    assert token not in row.key_sha256 and len(row.key_sha256) == 64
    assert api_token_user(token) == users["manager"]
    users["manager"].is_active = False
    users["manager"].save()
    assert api_token_user(token) is None
    assert api_token_user("") is None and api_token_user("x" * 500) is None


def test_password_change_requires_login_and_works(client, users):
    assert client.get(reverse("password_change")).status_code == 302
    client.force_login(users["engineer"])
    response = client.post(
        reverse("password_change"),
        {
            "old_password": DEMO_USERS[0].password,
            "new_password1": "a-much-better-pass-2026",
            "new_password2": "a-much-better-pass-2026",
        },
    )
    assert response.status_code == 302
    users["engineer"].refresh_from_db()
    assert users["engineer"].check_password("a-much-better-pass-2026")
