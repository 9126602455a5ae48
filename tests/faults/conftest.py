"""Fixtures for the fault tests: a redis-server of the test's own, and the gate for .ci/run's second pass.

The infrastructure faults need a real PostgreSQL and Redis: they run in
.ci/run's second pass (DATABASE_URL=postgres://…, TEST_REDIS_URL set) and are
skipped otherwise.  The Redis they break is always one they start themselves
on a free port — never the machine's own 6379.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from io import StringIO
from pathlib import Path

import pytest

NEEDS_STACK = pytest.mark.skipif(
    not (os.environ.get("DATABASE_URL", "").startswith("postgres") and os.environ.get("TEST_REDIS_URL")),
    reason="infrastructure faults run in .ci/run's PostgreSQL + Redis pass (DATABASE_URL=postgres://…, TEST_REDIS_URL)",
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RedisServer:
    """A throw-away redis-server on 127.0.0.1:<free port> that a test may stop and start again."""

    def __init__(self, workdir: Path) -> None:
        self.port = free_port()
        self.workdir = workdir
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        binary = shutil.which("redis-server") or "/usr/bin/redis-server"
        self.proc = subprocess.Popen(
            [binary, "--bind", "127.0.0.1", "--port", str(self.port), "--save", "", "--appendonly", "no"],
            cwd=self.workdir,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as conn:
                    conn.sendall(b"PING\r\n")
                    if conn.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"redis-server did not start on port {self.port}")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None


@pytest.fixture
def own_redis(tmp_path):
    """A redis-server of this test's own (stopped at the end whatever happens)."""
    if not shutil.which("redis-server"):
        pytest.skip("redis-server is not installed")
    server = RedisServer(tmp_path)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def celery_on(settings, monkeypatch):
    """Point the Celery app at a broker for the test (not eager), and put it back afterwards."""
    from config.celery import app

    saved = (app.conf.broker_url, app.conf.task_always_eager)

    def use(url: str) -> None:
        settings.CELERY_TASK_ALWAYS_EAGER = False
        app.conf.task_always_eager = False
        # Celery reads the CELERY_BROKER_URL environment variable before its own setting.
        monkeypatch.setenv("CELERY_BROKER_URL", url)
        settings.CELERY_BROKER_URL = url  # what /healthz probes
        app.conf.broker_url = url
        # The app caches its connection and producer pools for the first broker it used.
        app._pool = None
        app.amqp._producer_pool = None

    yield use
    app.conf.broker_url, app.conf.task_always_eager = saved
    app._pool = None
    app.amqp._producer_pool = None


@pytest.fixture
def seeded(transactional_db, users):
    """Catalog and demo users in a transactional test (committed, visible to other processes)."""
    from django.core.management import call_command

    from catalog.models import LlmModel

    if not LlmModel.objects.exists():
        call_command("load_catalog", stdout=StringIO())
    return users


def post_quote(client, *, customer: str):
    """POST the default 4 × A3 configuration to quotes:create, as the configurator's "Save as quote" form does."""
    import json

    from configurator.web.forms import ConfiguratorForm
    from configurator.web.presets import preset_data

    form = ConfiguratorForm(preset_data(None))
    assert form.is_valid(), form.errors
    return client.post(
        "/quotes/create/",
        {
            "request_json": json.dumps(form.to_request()),
            "customer_name": customer,
            "discount": "0",
            "language": "en",
        },
    )


def save_quote(client, *, customer: str = "Fault test customer"):
    """Save the default 4 × A3 configuration as a quote; returns the quote."""
    from quotes.models import Quote

    response = post_quote(client, customer=customer)
    assert response.status_code == 302, response.content[:500]
    return Quote.objects.get(pk=int(response["Location"].strip("/").split("/")[-1]))


def frozen(quote) -> list[tuple]:
    """What a PDF job must never change: the quote's and its revisions' frozen figures."""
    from quotes.models import Quote

    quote = Quote.objects.get(pk=quote.pk)
    return [
        (
            quote.number,
            quote.status,
            quote.version,
            r.number,
            r.snapshot_sha256,
            r.net_total,
            r.list_total,
            r.request_json,
            r.result_json,
            r.lines.count(),
        )
        for r in quote.revisions.order_by("index")
    ]
