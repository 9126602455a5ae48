"""Infrastructure faults, fast enough for CI: a database error mid-save, the broker gone, a worker killed.

The same faults, on a gunicorn stack and with timings, are in bench/faults.py.
Here they run in-process against .ci/run's PostgreSQL test database, with a
redis-server (and, for the worker, a Celery worker process) of the test's
own.  Skipped unless DATABASE_URL is PostgreSQL and TEST_REDIS_URL is set.
"""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.db import connection
from django.test import Client

from .conftest import NEEDS_STACK, frozen, post_quote, save_quote

pytestmark = [NEEDS_STACK, pytest.mark.postgres]

ROOT = Path(__file__).resolve().parents[2]
SERVICE_UNAVAILABLE = "PDF service temporarily unavailable, try again"


def _counts():
    from quotes.models import AuditEvent, BomLine, Customer, Quote, QuoteNumberCounter, QuoteRevision

    return (
        Quote.objects.count(),
        QuoteRevision.objects.count(),
        BomLine.objects.count(),
        AuditEvent.objects.count(),
        Customer.objects.count(),
        sum(QuoteNumberCounter.objects.values_list("last_number", flat=True)),
    )


def _wait(predicate, timeout: float, interval: float = 0.1):
    deadline = time.monotonic() + timeout
    value = predicate()
    while not value and time.monotonic() < deadline:
        time.sleep(interval)
        value = predicate()
    return value


def _revision(pk: int):
    from quotes.models import QuoteRevision

    return QuoteRevision.objects.get(pk=pk)


# --------------------------------------------------------------------------- database error


@pytest.mark.parametrize(
    "trigger",
    [
        "BEFORE INSERT ON quotes_bomline FOR EACH STATEMENT",
        "BEFORE INSERT ON quotes_auditevent FOR EACH ROW WHEN (NEW.action = 'revision.created')",
    ],
    ids=["bom-lines", "last-audit-row"],
)
def test_a_database_error_mid_save_leaves_no_half_written_quote(seeded, trigger):
    engineer = Client(raise_request_exception=False)
    engineer.force_login(seeded["engineer"])
    save_quote(engineer, customer="Before the fault")
    before = _counts()
    table = trigger.split(" ON ")[1].split()[0]
    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE OR REPLACE FUNCTION fault_injection() RETURNS trigger AS $$ BEGIN "
            "RAISE EXCEPTION 'fault injection: the disk is full'; END $$ LANGUAGE plpgsql"
        )
        cursor.execute(f"CREATE TRIGGER fault_injection {trigger} EXECUTE FUNCTION fault_injection()")
    try:
        response = post_quote(engineer, customer="During the fault")
        # A retry message, not a server error: the one transaction left nothing behind.
        assert response.status_code == 503
    finally:
        with connection.cursor() as cursor:
            cursor.execute(f"DROP TRIGGER IF EXISTS fault_injection ON {table}")
            cursor.execute("DROP FUNCTION IF EXISTS fault_injection()")
    # Nothing of the failed save remains: no quote, revision, line, audit row,
    # customer — and its number was not used up.
    assert _counts() == before
    after = save_quote(engineer, customer="After the fault")
    assert after.sequence == before[0] + 1


# --------------------------------------------------------------------------- broker down


def test_with_the_broker_down_the_configurator_works_and_pdf_requests_fail_clearly(
    seeded, own_redis, celery_on
):
    from configurator.web.presets import preset_data

    celery_on(own_redis.url)
    engineer = Client()
    engineer.force_login(seeded["engineer"])
    queued = save_quote(engineer, customer="Queued before the outage").revisions.get()
    lost = save_quote(engineer, customer="Requested during the outage")
    revision = lost.revisions.get()
    before = frozen(lost)

    # With the broker up the job is queued (no worker in this test, so it stays queued).
    response = engineer.post(f"/quotes/revisions/{queued.pk}/pdf/render/", HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    assert _revision(queued.pk).pdf_status == "queued"

    own_redis.stop()
    update = engineer.post("/configurator/update", preset_data(None), HTTP_HX_REQUEST="true")
    assert update.status_code == 200 and b'name="request_json"' in update.content
    assert engineer.get(lost.get_absolute_url()).status_code == 200
    health = engineer.get("/healthz")
    assert health.status_code == 503 and health.json()["broker"]["ok"] is False, health.json()

    started = time.perf_counter()
    response = engineer.post(f"/quotes/revisions/{revision.pk}/pdf/render/", HTTP_HX_REQUEST="true")
    elapsed = time.perf_counter() - started
    assert response.status_code == 200
    assert b'data-pdf-status="failed"' in response.content
    assert elapsed < 15, f"the PDF request took {elapsed:.1f} s with the broker down"
    revision = _revision(revision.pk)
    assert revision.pdf_status == "failed" and revision.pdf_error == SERVICE_UNAVAILABLE
    assert frozen(lost) == before


# --------------------------------------------------------------------------- worker killed


@pytest.fixture
def worker(seeded, own_redis, celery_on, settings, tmp_path):
    """A Celery worker process (concurrency 1) on the test database and the test's own Redis."""
    celery_on(own_redis.url)
    settings.MEDIA_ROOT = tmp_path / "media"
    db = connection.settings_dict
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DATABASE_", "CELERY_"))},
        "DATABASE_URL": f"postgres://{db['USER']}:{db['PASSWORD'] or ''}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "CELERY_BROKER_URL": own_redis.url,
        "MEDIA_ROOT": str(settings.MEDIA_ROOT),
        "DJANGO_SETTINGS_MODULE": "config.settings",
    }
    log = open(tmp_path / "worker.log", "wb")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(
        [
            str(Path(sys.executable).parent / "celery"),
            "-A",
            "config",
            "worker",
            "--concurrency",
            "1",
            "--loglevel",
            "INFO",
            "--without-gossip",
            "--without-mingle",
        ],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        assert _wait(
            lambda: b" ready." in (tmp_path / "worker.log").read_bytes() or proc.poll() is not None, 60
        )
        assert proc.poll() is None, (tmp_path / "worker.log").read_text()[-3000:]
        proc.log_path = tmp_path / "worker.log"
        yield proc
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        log.close()
        connection.close()


def _pool_children(proc) -> list[int]:
    try:
        return [int(p) for p in Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()]
    except OSError:
        return []


def test_a_worker_killed_mid_render_is_replaced_and_the_job_completes(seeded, worker):
    engineer = Client()
    engineer.force_login(seeded["engineer"])
    quote = save_quote(engineer)
    revision = quote.revisions.get()
    before = frozen(quote)

    response = engineer.post(f"/quotes/revisions/{revision.pk}/pdf/render/", HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    assert _wait(lambda: _revision(revision.pk).pdf_status == "rendering", 60, 0.02), (
        worker.log_path.read_text()[-2000:]
    )
    children = _pool_children(worker)
    assert children, "the worker has no pool process"
    for pid in children:
        os.kill(pid, signal.SIGKILL)  # the process running WeasyPrint, mid-render

    # acks_late + reject_on_worker_lost: the message goes back to the queue, the
    # worker starts a new pool process, and the job is claimed again by its id.
    done = _wait(lambda: _revision(revision.pk).pdf_status in ("ready", "failed"), 120, 0.2)
    revision = _revision(revision.pk)
    assert done and revision.pdf_status == "ready", (revision.pdf_status, revision.pdf_error)
    assert revision.pdf_attempts >= 2
    assert worker.poll() is None
    content = Path(django_settings.MEDIA_ROOT, revision.pdf_file.name).read_bytes()
    assert content.startswith(b"%PDF-") and hashlib.sha256(content).hexdigest() == revision.pdf_sha256
    download = engineer.get(f"/quotes/revisions/{revision.pk}/pdf/")
    assert download.status_code == 200 and b"".join(download.streaming_content) == content
    text = subprocess.run(
        ["pdftotext", "-", "-"], input=content, capture_output=True, check=True
    ).stdout.decode()
    assert quote.number in text
    assert frozen(quote) == before
