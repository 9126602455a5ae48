"""Browser end-to-end fixtures: Debian's Chromium driven by Playwright, against ``live_server``.

The browser is the system one (``/usr/bin/chromium``, installed by ``make
system-deps``); Playwright never downloads its own.  One browser per test
module; each test gets a fresh context (cookies, storage) and a freshly
loaded catalog with the demo users, because ``live_server`` tests run in
``transactional_db`` and the tables are emptied after each of them.
"""

from __future__ import annotations

import os
import shutil
from io import StringIO
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

TIMEOUT_MS = 15_000


@pytest.fixture(scope="module")
def browser():
    """One headless Chromium per test module."""
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: run `make system-deps` (the Debian package 'chromium').")
    from playwright.sync_api import sync_playwright

    # Playwright's sync API keeps an asyncio loop in this thread; the tests still read
    # the database synchronously here (live_server answers from its own threads).
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_playwright() as playwright:
            chromium = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
            yield chromium
            chromium.close()
    finally:
        if previous is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


@pytest.fixture
def eager_celery(settings):
    """Run the proposal-PDF job inside the request, whatever broker the environment names.

    In .ci/run's second pass CELERY_BROKER_URL points at Redis, where no worker
    listens during the tests; the browser flow checks the page, not the queue.
    """
    from config.celery import app

    settings.CELERY_TASK_ALWAYS_EAGER = True
    previous = app.conf.task_always_eager
    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = previous


@pytest.fixture
def site(live_server, transactional_db, eager_celery, settings, tmp_path):
    """The live server's base URL, with the seeded catalog and the demo users."""
    from django.core.management import call_command

    from accounts.services import demo_users_create

    settings.MEDIA_ROOT = tmp_path / "media"
    call_command("load_catalog", stdout=StringIO())
    demo_users_create()
    return live_server.url


@pytest.fixture
def context(browser):
    """A fresh browser context in English (the app follows Accept-Language until one is chosen)."""
    ctx = browser.new_context(locale="en-US", accept_downloads=True, viewport={"width": 1400, "height": 1000})
    ctx.set_default_timeout(TIMEOUT_MS)
    yield ctx
    ctx.close()


def log_in(page, base: str, username: str = "engineer", password: str = "demo-engineer-2026") -> None:
    """Log in through the login form, as a person would."""
    page.goto(base + "/accounts/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    with page.expect_navigation():
        page.click("button.primary")
    assert "/accounts/login" not in page.url, "log-in failed"


def session_cookie_for(context, base: str, username: str = "engineer") -> None:
    """Give the browser context a logged-in session without going through the form
    (the form itself is exercised by the tests that call :func:`log_in`)."""
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.test import Client

    client = Client()
    client.force_login(get_user_model().objects.get(username=username))
    name = settings.SESSION_COOKIE_NAME
    context.add_cookies([{"name": name, "value": client.cookies[name].value, "url": base}])


def watch_js_errors(page) -> None:
    """Collect uncaught script errors on ``page.js_errors`` (asserted empty by the tests)."""
    page.js_errors = []
    page.on("pageerror", lambda exc: page.js_errors.append(str(exc)))


@pytest.fixture
def page(context, site):
    """A page logged in as the demo sales engineer, on the configurator."""
    session_cookie_for(context, site)
    pg = context.new_page()
    watch_js_errors(pg)
    pg.goto(site + "/")
    pg.wait_for_selector("#config-form")
    yield pg
    pg.close()


@pytest.fixture(scope="session")
def pdftotext():
    path = shutil.which("pdftotext")
    if path is None:
        pytest.fail("pdftotext is missing: run `make system-deps` (the Debian package 'poppler-utils').")
    return path
