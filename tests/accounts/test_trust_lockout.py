"""Issue 13: behind a reverse proxy, one client cannot lock another out of their account.

Before: lock-outs were keyed on (user name, REMOTE_ADDR); behind a proxy every
request has the proxy's address, so five wrong passwords from anywhere locked
the user out for everyone for 15 minutes.  Now, with the proxy named in
``TRUSTED_PROXIES``, the key is the real client from X-Forwarded-For
(accounts/client_ip.py), and a forged header never helps a client evade its
own lock-out.
"""

from __future__ import annotations

import pytest
from django.test import Client, RequestFactory
from django.urls import reverse

from accounts.client_ip import client_ip
from accounts.services import DEMO_USERS

pytestmark = pytest.mark.django_db

PROXY = "10.0.0.2"


def login(client, username, password, forwarded_for, remote=PROXY):
    return client.post(
        reverse("login"),
        {"username": username, "password": password},
        REMOTE_ADDR=remote,
        HTTP_X_FORWARDED_FOR=forwarded_for,
    )


@pytest.fixture
def behind_proxy(settings):
    settings.AXES_ENABLED = True
    settings.TRUSTED_PROXIES = ["10.0.0.0/8"]


def test_an_attacker_behind_the_proxy_locks_only_themself_out(users, behind_proxy):
    engineer = DEMO_USERS[0]
    attacker, victim = Client(), Client()
    for _ in range(5):
        login(attacker, engineer.username, "wrong", "203.0.113.9")
    assert login(attacker, engineer.username, engineer.password, "203.0.113.9").status_code == 429
    # The engineer, from their own address through the same proxy, still logs in.
    assert login(victim, engineer.username, engineer.password, "198.51.100.7").status_code == 302


def test_without_trusted_proxies_a_forged_header_does_not_escape_the_lock_out(users, settings):
    settings.AXES_ENABLED = True
    settings.TRUSTED_PROXIES = []
    engineer = DEMO_USERS[0]
    client = Client()
    for i in range(5):
        login(client, engineer.username, "wrong", f"192.0.2.{i}", remote="203.0.113.9")
    response = login(client, engineer.username, engineer.password, "192.0.2.200", remote="203.0.113.9")
    assert response.status_code == 429


@pytest.mark.parametrize(
    ("remote", "forwarded", "trusted", "expected"),
    [
        ("203.0.113.9", "1.2.3.4", [], "203.0.113.9"),  # no proxy configured: header ignored
        ("203.0.113.9", "1.2.3.4", ["10.0.0.0/8"], "203.0.113.9"),  # not from the proxy: ignored
        (PROXY, "198.51.100.7", ["10.0.0.0/8"], "198.51.100.7"),
        # A client writing its own header: the proxy appends the real address; the right-most wins.
        (PROXY, "1.2.3.4, 198.51.100.7", ["10.0.0.0/8"], "198.51.100.7"),
        # Two proxies in a row, both trusted.
        (PROXY, "198.51.100.7, 10.1.1.1", ["10.0.0.0/8"], "198.51.100.7"),
        (PROXY, "not-an-address", ["10.0.0.0/8"], PROXY),
        (PROXY, "", ["10.0.0.0/8"], PROXY),
        ("::ffff:10.0.0.2", "2001:db8::7", ["::ffff:10.0.0.0/104"], "2001:db8::7"),
    ],
)
def test_client_ip(settings, remote, forwarded, trusted, expected):
    settings.TRUSTED_PROXIES = trusted
    request = RequestFactory().get("/", REMOTE_ADDR=remote, HTTP_X_FORWARDED_FOR=forwarded)
    assert client_ip(request) == expected


def test_a_bad_trusted_proxies_value_stops_the_start():
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=root,
        env={**os.environ, "TRUSTED_PROXIES": "10.0.0.0/8,proxy.internal"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0
    assert "TRUSTED_PROXIES: 'proxy.internal' is not an address or network" in done.stderr
