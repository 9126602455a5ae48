"""The proposal-PDF job: queueing, the Celery task's retries and idempotency, a broker that is down,
the status partial (htmx polling) and the downloads' permissions.

The renderer is replaced by a stand-in returning a small PDF, so these tests
exercise the job around it (rendering itself is covered by test_pdf.py).
Celery runs eagerly here (no broker configured), as in the embedded mode.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from pathlib import Path

import pytest
from django.test import Client
from django.urls import reverse
from kombu.exceptions import OperationalError

from documents import tasks
from documents.pdf import jobs
from documents.pdf.sample import sample_quote_create
from quotes.models import AuditEvent, QuoteRevision
from quotes.statuses import AuditAction, PdfStatus

FAKE_PDF = b"%PDF-1.7\n% proposal stand-in\n%%EOF\n"


class FakeRenderer:
    """Stands in for ``render_proposal_pdf``: fails the first ``failures`` calls, then returns ``pdf``."""

    def __init__(self, failures: int = 0, pdf: bytes = FAKE_PDF):
        self.failures = failures
        self.pdf = pdf
        self.calls = 0

    def __call__(self, revision, **kwargs):
        self.calls += 1
        if self.calls <= self.failures:
            raise RuntimeError(f"renderer exploded on call {self.calls}")
        return self.pdf


@pytest.fixture(autouse=True)
def _media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.CELERY_TASK_ALWAYS_EAGER = True


@pytest.fixture
def renderer(monkeypatch):
    fake = FakeRenderer()
    monkeypatch.setattr(tasks, "render_proposal_pdf", fake)
    return fake


@pytest.fixture
def revision(engineer):
    return sample_quote_create(by=engineer, language="en")


@pytest.fixture
def request_pdf(django_capture_on_commit_callbacks):
    """``proposal_request`` with its on-commit dispatch executed (Celery runs eagerly)."""

    def run(revision, by, **kwargs):
        with django_capture_on_commit_callbacks(execute=True):
            jobs.proposal_request(revision=revision, by=by, **kwargs)
        return QuoteRevision.objects.get(pk=revision.pk)

    return run


def audit_actions(revision) -> list[str]:
    return list(
        AuditEvent.objects.filter(object_type="quoterevision", object_id=str(revision.pk))
        .order_by("created_at", "id")
        .values_list("action", flat=True)
    )


# --------------------------------------------------------------------------- the job


@pytest.mark.django_db
def test_request_renders_and_stores_the_pdf_under_media_proposals(
    revision, engineer, renderer, request_pdf, settings
):
    done = request_pdf(revision, engineer)
    assert done.pdf_status == PdfStatus.READY
    assert done.pdf_attempts == 1 and done.pdf_error == ""
    assert done.pdf_sha256 == hashlib.sha256(FAKE_PDF).hexdigest()
    path = Path(done.pdf_file.path)
    assert path.read_bytes() == FAKE_PDF
    assert path.is_relative_to(Path(settings.MEDIA_ROOT) / "proposals")
    assert path.name == f"{revision.number}.pdf"
    assert done.pdf_rendered_at is not None and done.pdf_task_id
    assert audit_actions(revision)[-2:] == [AuditAction.PDF_QUEUED, AuditAction.PDF_RENDERED]


@pytest.mark.django_db
def test_a_task_that_fails_once_is_retried_and_succeeds(revision, engineer, monkeypatch, request_pdf):
    flaky = FakeRenderer(failures=1)
    monkeypatch.setattr(tasks, "render_proposal_pdf", flaky)
    done = request_pdf(revision, engineer)
    assert flaky.calls == 2
    assert done.pdf_status == PdfStatus.READY
    assert done.pdf_attempts == 2  # the failed attempt and the retry
    assert done.pdf_error == ""  # cleared by the success
    assert Path(done.pdf_file.path).read_bytes() == FAKE_PDF


@pytest.mark.django_db
def test_a_task_that_keeps_failing_ends_failed_and_the_quote_stays_usable(
    revision, engineer, monkeypatch, request_pdf, client
):
    broken = FakeRenderer(failures=99)
    monkeypatch.setattr(tasks, "render_proposal_pdf", broken)
    done = request_pdf(revision, engineer)
    assert broken.calls == tasks.MAX_RETRIES + 1
    assert done.pdf_status == PdfStatus.FAILED
    assert done.pdf_attempts == tasks.MAX_RETRIES + 1
    assert "RuntimeError: renderer exploded on call 4" in done.pdf_error
    assert not done.pdf_file
    assert AuditAction.PDF_FAILED in audit_actions(revision)
    # The quote page, the workbook and the bundle still work; the panel offers a retry.
    client.force_login(engineer)
    page = client.get(reverse("quotes:detail", args=[revision.quote_id]))
    assert page.status_code == 200
    assert client.get(reverse("quotes:xlsx", args=[revision.pk])).status_code == 200
    assert client.get(reverse("quotes:bundle", args=[revision.pk])).status_code == 200
    panel = client.get(reverse("quotes:pdf_status", args=[revision.pk])).content.decode()
    assert reverse("quotes:pdf_retry", args=[revision.pk]) in panel
    assert "renderer exploded" in panel


@pytest.mark.django_db
def test_retry_after_failure_renders(revision, engineer, monkeypatch, request_pdf):
    monkeypatch.setattr(tasks, "render_proposal_pdf", FakeRenderer(failures=99))
    assert request_pdf(revision, engineer).pdf_status == PdfStatus.FAILED
    monkeypatch.setattr(tasks, "render_proposal_pdf", FakeRenderer())
    done = request_pdf(revision, engineer)
    assert done.pdf_status == PdfStatus.READY and done.pdf_attempts == 1


@pytest.mark.django_db
def test_a_ready_pdf_is_not_rendered_again_unless_forced(revision, engineer, renderer, request_pdf):
    first = request_pdf(revision, engineer)
    request_pdf(revision, engineer)
    assert renderer.calls == 1
    # Regenerating gives the same bytes (rendering is deterministic): the file is not written again.
    mtime = Path(first.pdf_file.path).stat().st_mtime_ns
    again = request_pdf(revision, engineer, force=True)
    assert renderer.calls == 2
    assert again.pdf_status == PdfStatus.READY and again.pdf_sha256 == first.pdf_sha256
    assert again.pdf_file.name == first.pdf_file.name
    assert Path(again.pdf_file.path).stat().st_mtime_ns == mtime
    assert audit_actions(revision).count(AuditAction.PDF_RENDERED) == 1


@pytest.mark.django_db
def test_a_changed_pdf_replaces_the_file_under_the_same_name(revision, engineer, monkeypatch, request_pdf):
    monkeypatch.setattr(tasks, "render_proposal_pdf", FakeRenderer(pdf=FAKE_PDF))
    first = request_pdf(revision, engineer)
    new_pdf = FAKE_PDF.replace(b"stand-in", b"changed!")
    monkeypatch.setattr(tasks, "render_proposal_pdf", FakeRenderer(pdf=new_pdf))
    again = request_pdf(revision, engineer, force=True)
    assert again.pdf_file.name == first.pdf_file.name
    assert Path(again.pdf_file.path).read_bytes() == new_pdf
    assert again.pdf_sha256 == hashlib.sha256(new_pdf).hexdigest()
    assert len(list(Path(again.pdf_file.path).parent.iterdir())) == 1


@pytest.mark.django_db
def test_a_job_in_progress_is_not_started_twice(revision, engineer, renderer, request_pdf):
    QuoteRevision.objects.filter(pk=revision.pk).update(pdf_status=PdfStatus.RENDERING, pdf_task_id="job-1")
    AuditEvent.objects.create(
        action=AuditAction.PDF_QUEUED,
        object_type="quoterevision",
        object_id=str(revision.pk),
        quote=revision.quote,
    )
    done = request_pdf(revision, engineer)
    assert renderer.calls == 0 and done.pdf_status == PdfStatus.RENDERING and done.pdf_task_id == "job-1"
    # A second task for the same revision finds nothing to claim …
    assert tasks.render_proposal.apply(args=[revision.pk], task_id="job-2").get() == "skipped:rendering"
    assert renderer.calls == 0
    # … while the redelivery of the job that was rendering (same task id) takes it over.
    assert tasks.render_proposal.apply(args=[revision.pk], task_id="job-1").get() == "ready"
    assert renderer.calls == 1
    assert QuoteRevision.objects.get(pk=revision.pk).pdf_status == PdfStatus.READY


@pytest.mark.django_db
def test_a_finished_job_delivered_again_does_nothing(revision, engineer, renderer, request_pdf):
    done = request_pdf(revision, engineer)
    assert tasks.render_proposal.apply(args=[revision.pk], task_id=done.pdf_task_id).get() == "skipped:ready"
    assert renderer.calls == 1


@pytest.mark.django_db
def test_a_lost_job_can_be_requested_again(revision, engineer, renderer, request_pdf, monkeypatch):
    QuoteRevision.objects.filter(pk=revision.pk).update(pdf_status=PdfStatus.QUEUED, pdf_task_id="lost")
    AuditEvent.objects.create(
        action=AuditAction.PDF_QUEUED,
        object_type="quoterevision",
        object_id=str(revision.pk),
        quote=revision.quote,
    )
    # Queued a moment ago: left alone.
    assert request_pdf(revision, engineer).pdf_task_id == "lost"
    assert renderer.calls == 0
    # Queued longer ago than STALE_AFTER (its worker and message lost): taken over.
    monkeypatch.setattr(jobs, "STALE_AFTER", dt.timedelta(seconds=-1))
    assert jobs.job_is_stale(QuoteRevision.objects.get(pk=revision.pk))
    done = request_pdf(revision, engineer)
    assert renderer.calls == 1 and done.pdf_status == PdfStatus.READY and done.pdf_task_id != "lost"


@pytest.mark.django_db
def test_broker_down_reports_a_clear_temporary_error(revision, engineer, monkeypatch, request_pdf, client):
    def unreachable(*args, **kwargs):
        raise OperationalError("Error 111 connecting to redis:6379. Connection refused.")

    monkeypatch.setattr(tasks.render_proposal, "apply_async", unreachable)
    done = request_pdf(revision, engineer)
    assert done.pdf_status == PdfStatus.FAILED
    assert done.pdf_error == "PDF service temporarily unavailable, try again"
    client.force_login(engineer)
    panel = client.get(reverse("quotes:pdf_status", args=[revision.pk])).content.decode()
    assert "PDF service temporarily unavailable, try again" in panel
    assert reverse("quotes:pdf_retry", args=[revision.pk]) in panel
    # The configurator keeps working.
    assert client.get(reverse("configurator:home")).status_code == 200


@pytest.mark.django_db
def test_a_stopped_redis_fails_the_job_and_nothing_else(revision, engineer, monkeypatch, request_pdf):
    """A real Redis transport pointed at a closed port (Redis stopped), not a stand-in exception."""
    pytest.importorskip("redis")
    app = tasks.render_proposal.app
    monkeypatch.setattr(app.conf, "task_always_eager", False)
    monkeypatch.setattr(app.conf, "broker_url", "redis://127.0.0.1:1/0")
    # Celery reads CELERY_BROKER_URL from the environment before its own setting
    # (the PostgreSQL + Redis pass of .ci/run sets it).
    monkeypatch.setenv("CELERY_BROKER_URL", "redis://127.0.0.1:1/0")
    monkeypatch.setattr(app, "_pool", None)
    monkeypatch.setattr(app.amqp, "_producer_pool", None)
    done = request_pdf(revision, engineer)
    assert done.pdf_status == PdfStatus.FAILED
    assert done.pdf_error == "PDF service temporarily unavailable, try again"
    assert done.pdf_attempts == 0  # never reached a worker


def test_backoff_grows_and_is_capped():
    delays = [tasks.retry_countdown(n) for n in range(8)]
    assert 8 <= delays[0] <= 12 and 16 <= delays[1] <= 24 and 32 <= delays[2] <= 48
    assert max(delays) <= tasks.BACKOFF_MAX_S * 1.2


def test_the_task_is_declared_for_late_acknowledgement():
    task = tasks.render_proposal
    assert task.acks_late is True and task.reject_on_worker_lost is True
    assert task.max_retries == 3
    assert task.name == "quotes.render_proposal"


# --------------------------------------------------------------------------- views


def set_state(revision, status, **fields):
    QuoteRevision.objects.filter(pk=revision.pk).update(pdf_status=status, **fields)
    return QuoteRevision.objects.get(pk=revision.pk)


@pytest.mark.django_db
@pytest.mark.parametrize(
    "status, polls, button",
    [
        (PdfStatus.NONE, False, "pdf_render"),
        (PdfStatus.QUEUED, True, None),
        (PdfStatus.RENDERING, True, None),
        (PdfStatus.READY, False, "pdf_render"),
        (PdfStatus.FAILED, False, "pdf_retry"),
    ],
)
def test_status_partial_shows_each_state(revision, engineer, client, status, polls, button):
    set_state(
        revision, status, pdf_attempts=2, pdf_error="ValueError: bad" if status == PdfStatus.FAILED else ""
    )
    AuditEvent.objects.create(
        action=AuditAction.PDF_QUEUED,
        object_type="quoterevision",
        object_id=str(revision.pk),
        quote=revision.quote,
    )
    client.force_login(engineer)
    response = client.get(reverse("quotes:pdf_status", args=[revision.pk]), HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    html = response.content.decode()
    assert f'data-pdf-status="{status}"' in html
    status_url = reverse("quotes:pdf_status", args=[revision.pk])
    assert ('hx-trigger="every 1s"' in html) is polls
    assert (f'hx-get="{status_url}"' in html) is polls
    if button:
        assert reverse(f"quotes:{button}", args=[revision.pk]) in html
    if status == PdfStatus.READY:
        assert reverse("quotes:pdf", args=[revision.pk]) in html
    if status == PdfStatus.FAILED:
        assert "ValueError: bad" in html
    if status == PdfStatus.RENDERING:
        assert "attempt 2" in html


@pytest.mark.django_db
def test_the_status_poll_reads_no_frozen_plan(revision, engineer, client):
    """The panel polls every second while a job runs: it reads the revision's state, never the tens of
    kilobytes of plan JSON the revision froze (selectors.PLAN_FIELDS), in any query it makes."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from quotes.selectors import PLAN_FIELDS

    set_state(revision, PdfStatus.RENDERING, pdf_attempts=1)
    client.force_login(engineer)
    with CaptureQueriesContext(connection) as queries:
        response = client.get(reverse("quotes:pdf_status", args=[revision.pk]), HTTP_HX_REQUEST="true")
    assert response.status_code == 200 and 'data-pdf-status="rendering"' in response.content.decode()
    revision_queries = [q["sql"] for q in queries.captured_queries if "quotes_quoterevision" in q["sql"]]
    assert revision_queries  # the revision was read …
    for sql in revision_queries:  # … without its plan
        assert not any(field in sql for field in PLAN_FIELDS), sql


@pytest.mark.django_db
def test_render_button_over_htmx_returns_the_panel_ready(
    revision, engineer, renderer, django_capture_on_commit_callbacks
):
    client = Client(enforce_csrf_checks=True)
    client.force_login(engineer)
    url = reverse("quotes:pdf_render", args=[revision.pk])
    assert client.get(url).status_code == 405  # POST only
    assert client.post(url).status_code == 403  # CSRF token required
    client.get(reverse("quotes:detail", args=[revision.quote_id]))
    token = client.cookies["csrftoken"].value
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(url, HTTP_HX_REQUEST="true", HTTP_X_CSRFTOKEN=token)
    assert response.status_code == 200
    assert 'data-pdf-status="queued"' in response.content.decode()  # answered before the commit ran it
    panel = client.get(reverse("quotes:pdf_status", args=[revision.pk])).content.decode()
    assert 'data-pdf-status="ready"' in panel
    assert renderer.calls == 1


@pytest.mark.django_db
def test_render_without_htmx_redirects_to_the_quote(
    revision, engineer, renderer, client, django_capture_on_commit_callbacks
):
    client.force_login(engineer)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("quotes:pdf_render", args=[revision.pk]))
    assert response.status_code == 302
    assert response["Location"].endswith(f"?rev={revision.index}#documents")
    assert QuoteRevision.objects.get(pk=revision.pk).pdf_status == PdfStatus.READY


@pytest.mark.django_db
def test_download_is_an_attachment_for_those_who_may_see_the_quote(
    revision, engineer, manager, engineer2, renderer, request_pdf, client
):
    request_pdf(revision, engineer)
    url = reverse("quotes:pdf", args=[revision.pk])
    for user in (engineer, manager):  # the owner and a manager of the same team
        client.force_login(user)
        response = client.get(url)
        assert response.status_code == 200
        assert response["Content-Type"] == "application/pdf"
        assert response["Content-Disposition"] == f'attachment; filename="{revision.number}.pdf"'
        assert b"".join(response.streaming_content) == FAKE_PDF
    # Another team's engineer: every PDF and export URL is a 404, as if the revision did not exist.
    client.force_login(engineer2)
    for name, method in (
        ("pdf", "get"),
        ("pdf_status", "get"),
        ("xlsx", "get"),
        ("bundle", "get"),
        ("pdf_render", "post"),
        ("pdf_retry", "post"),
    ):
        response = getattr(client, method)(reverse(f"quotes:{name}", args=[revision.pk]))
        assert response.status_code == 404, name
    client.logout()
    assert client.get(url).status_code in (302, 404)  # anonymous: sent to the log-in page


@pytest.mark.django_db
def test_download_before_the_pdf_is_ready_says_so(revision, engineer, client):
    client.force_login(engineer)
    response = client.get(reverse("quotes:pdf", args=[revision.pk]))
    assert response.status_code == 409
    assert reverse("quotes:pdf_render", args=[revision.pk]) in response.content.decode()


@pytest.mark.django_db
def test_a_tampered_file_is_not_served(revision, engineer, renderer, request_pdf, client):
    done = request_pdf(revision, engineer)
    Path(done.pdf_file.path).write_bytes(FAKE_PDF + b"tampered")
    client.force_login(engineer)
    response = client.get(reverse("quotes:pdf", args=[revision.pk]))
    assert response.status_code == 409
    assert b"no longer matches" in response.content


def test_a_starting_worker_resends_jobs_left_rendering_under_their_task_id(revision, monkeypatch):
    # A worker killed mid-render leaves the job "rendering"; the next worker to
    # start sends it again with the same id, which _claim accepts as a redelivery.
    from quotes.models import QuoteRevision

    QuoteRevision.objects.filter(pk=revision.pk).update(
        pdf_status=PdfStatus.RENDERING, pdf_task_id="lost-task-1"
    )
    sent = []
    monkeypatch.setattr(
        tasks.render_proposal, "apply_async", lambda args, task_id: sent.append((args, task_id))
    )
    assert tasks.resend_orphaned_renders() == 1
    assert sent == [([revision.pk], "lost-task-1")]
    assert tasks._claim(revision.pk, "lost-task-1") is True  # the redelivery is taken
    assert tasks._claim(revision.pk, "another-task") is False
