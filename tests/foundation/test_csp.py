"""Issue 13: a Content-Security-Policy on every response, and no page that would break under it.

The policy (config/csp.py) allows scripts only from the site's static files or
with the per-request nonce, and no eval.  These checks read the served HTML:
every <script> either has a src on this site or carries this response's
nonce; no element has an inline event handler (onclick=…); htmx is told not
to eval and no hx-* attribute needs eval (trigger filters "[…]", hx-on,
"js:" values).  The browser test (tests/e2e/test_csp.py) runs the page under
the real header in Chromium.
"""

from __future__ import annotations

import re

import pytest
from django.core.management import call_command
from django.urls import reverse

from config.csp import HEADER

pytestmark = pytest.mark.django_db

SCRIPT = re.compile(r"<script\b([^>]*)>", re.I)
EVENT_HANDLER = re.compile(r"<[^>]+\son[a-z]+\s*=", re.I)
EVAL_ATTRIBUTES = re.compile(r"""hx-trigger="[^"]*\[|hx-on|hx-vals="js:|hx-vars""", re.I)


def directives(header: str) -> dict[str, str]:
    return dict(part.strip().split(" ", 1) for part in header.split(";") if part.strip())


def nonce_of(response) -> str:
    match = re.search(r"'nonce-([^']+)'", directives(response[HEADER])["script-src"])
    assert match, response[HEADER]
    return match.group(1)


def assert_csp_clean(response) -> None:
    html = response.content.decode()
    nonce = nonce_of(response)
    for attrs in SCRIPT.findall(html):
        src = re.search(r"""src=["']([^"']+)""", attrs)
        if src:
            assert src.group(1).startswith("/"), f"script from another origin: {attrs}"
        else:
            assert f'nonce="{nonce}"' in attrs, f"inline script without this response's nonce: {attrs}"
    assert not EVENT_HANDLER.search(html), EVENT_HANDLER.search(html).group(0)
    assert not EVAL_ATTRIBUTES.search(html), EVAL_ATTRIBUTES.search(html).group(0)


def test_every_response_carries_the_policy_with_a_fresh_nonce(client):
    first = client.get(reverse("login"))
    second = client.get(reverse("login"))
    policy = directives(first[HEADER])
    assert policy["script-src"].startswith("'self' 'nonce-")
    assert "unsafe-eval" not in first[HEADER] and "unsafe-inline" not in policy["script-src"]
    assert policy["object-src"] == "'none'" and policy["frame-ancestors"] == "'none'"
    assert policy["default-src"] == "'self'" and policy["form-action"] == "'self'"
    assert nonce_of(first) != nonce_of(second)
    # JSON and 404 answers carry it too (any response the browser might render).
    assert HEADER in client.get("/no-such-page/")


def test_the_main_pages_need_nothing_the_policy_forbids(client, users):
    call_command("load_catalog", verbosity=0)
    assert_csp_clean(client.get(reverse("login")))
    client.force_login(users["engineer"])
    for url in (reverse("configurator:home"), reverse("configurator:planner"), reverse("quotes:list")):
        response = client.get(url)
        assert response.status_code == 200, url
        assert_csp_clean(response)
    home = client.get(reverse("configurator:home")).content.decode()
    assert '<meta name="htmx-config" content=\'{"allowEval": false}\'>' in home
    assert "/static/js/app.js" in home


def test_the_quote_page_needs_nothing_the_policy_forbids(client, users):
    from documents.pdf.sample import sample_quote_create

    revision = sample_quote_create(by=users["engineer"], language="en", name="4node")
    client.force_login(users["engineer"])
    assert_csp_clean(client.get(reverse("quotes:detail", args=[revision.quote.pk])))
