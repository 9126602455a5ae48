"""Fault run: break the production-like stack on purpose and check what users see.

Starts bench/stack.py's stack with a redis-server of its own (never the
machine's 6379, which this run may stop), logs in as the demo engineer over
HTTP and saves quotes as the configurator does, then:

(a) kills the Celery worker with SIGKILL in the middle of a proposal render —
    first the pool process running the task (the worker restarts it), then
    the whole worker (main process and pool), restarting it by hand — and
    checks that the job completes, that the PDF is valid and that the quote
    is unchanged (acks_late + reject_on_worker_lost in settings);
(b) stops Redis: the configurator and the quote pages keep working, a PDF
    request answers at once with the clear "temporarily unavailable" state,
    /healthz says the broker is down; after Redis is back, Retry renders it;
(c) makes PostgreSQL fail in the middle of a quote save (a trigger in the
    scratch database, on the BOM lines, then on the last audit row): the
    save fails, nothing of it remains — no quote, revision, line, audit row,
    customer or used-up number — and the next save gets the next number.

Prints one PASS/FAIL line per fault and BENCH lines for bench/run_all.py;
exits 1 if any fault fails.  Bounded: every wait has a deadline; the stack is
torn down however the run ends.

    python bench/faults.py
"""

from __future__ import annotations

import hashlib
import html
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from load import Browser, HttpError, page_text, presets_from, report  # noqa: E402
from stack import Stack  # noqa: E402

RENDER_WAIT_S = 120
SERVICE_UNAVAILABLE = "PDF service temporarily unavailable, try again"


class Check:
    """One fault's verdict: the conditions checked, each with what was seen."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.failures: list[str] = []
        self.notes: list[str] = []

    def expect(self, condition: bool, what: str) -> bool:
        (self.notes if condition else self.failures).append(what)
        return condition

    @property
    def passed(self) -> bool:
        return not self.failures

    def line(self) -> str:
        verdict = "PASS" if self.passed else "FAIL"
        detail = "; ".join(self.failures) if self.failures else "; ".join(self.notes[-3:])
        return f"{verdict}  {self.name} — {detail}"


# --------------------------------------------------------------------------- helpers


def wait_until(predicate, timeout: float, interval: float = 0.2):
    """Poll ``predicate`` until it returns something truthy or ``timeout`` passes; returns the last value."""
    deadline = time.monotonic() + timeout
    value = predicate()
    while not value and time.monotonic() < deadline:
        time.sleep(interval)
        value = predicate()
    return value


def save_quote(browser: Browser, preset: dict[str, str], customer: str) -> tuple[int, int, str]:
    """Plan the preset and save it as a quote, as the configurator page does; returns (quote, revision, number)."""
    status, _, body = browser.request("POST", "/configurator/update", preset, htmx=True)
    match = re.search(rb'name="request_json" value="([^"]*)"', body)
    if status != 200 or not match:
        raise HttpError(f"update: {status}")
    form = {
        "request_json": html.unescape(match.group(1).decode()),
        "customer_name": customer,
        "discount": "0",
        "language": "en",
    }
    status, headers, body = browser.request("POST", "/quotes/create/", form)
    found = re.fullmatch(r"/quotes/(\d+)/", headers.get("location", "") if headers else "")
    if status != 302 or not found:
        raise HttpError(f"save: {status}: {page_text(body)}")
    status, _, body = browser.request("GET", found.group(0))
    revision = re.search(rb"/quotes/revisions/(\d+)/pdf/render/", body)
    number = re.search(rb'<h1><span class="mono">(Q-\d{4}-\d+)</span>', body)
    if status != 200 or not revision or not number:
        raise HttpError(f"quote page: {status}")
    return int(found.group(1)), int(revision.group(1)), number.group(1).decode()


def snapshot(stack: Stack, quote: int) -> tuple:
    """What must not change when a PDF job is disturbed: the quote's and revisions' frozen figures."""
    return tuple(
        stack.sql(
            """SELECT q.number, q.status, q.version, r.number, r.snapshot_sha256, r.net_total, r.list_total,
                      r.request_json::text, r.result_json::text, (SELECT count(*) FROM quotes_bomline b
                      WHERE b.revision_id = r.id)
                 FROM quotes_quote q JOIN quotes_quoterevision r ON r.quote_id = q.id
                WHERE q.id = %s ORDER BY r.index""",
            (quote,),
        )
    )


def pdf_row(stack: Stack, revision: int) -> dict:
    rows = stack.sql(
        "SELECT pdf_status, pdf_attempts, pdf_sha256, pdf_file, pdf_error, pdf_task_id FROM quotes_quoterevision WHERE id = %s",
        (revision,),
    )
    keys = ("status", "attempts", "sha256", "file", "error", "task_id")
    return dict(zip(keys, rows[0], strict=True))


def pdf_is_valid(stack: Stack, browser: Browser, revision: int, number: str) -> tuple[bool, str]:
    """Ready, stored file matching its SHA-256, downloadable, a PDF that pdftotext reads with the quote number."""
    row = pdf_row(stack, revision)
    if row["status"] != "ready":
        return False, f"status {row['status']} {row['error']!r}"
    path = stack.media_root / (row["file"] or "-")
    stored = path.read_bytes() if path.is_file() else b""
    if hashlib.sha256(stored).hexdigest() != row["sha256"]:
        return False, "stored file does not match its SHA-256"
    status, _, body = browser.request("GET", f"/quotes/revisions/{revision}/pdf/")
    if status != 200 or body != stored or not body.startswith(b"%PDF-"):
        return False, f"download {status}"
    text = subprocess.run(["pdftotext", "-", "-"], input=body, capture_output=True, timeout=60)
    if text.returncode != 0 or number not in text.stdout.decode(errors="replace"):
        return False, f"pdftotext {text.returncode}"
    return True, f"valid PDF, {len(body):,} bytes"


def request_pdf(browser: Browser, revision: int, *, retry: bool = False) -> tuple[int, bytes, float]:
    started = time.perf_counter()
    action = "retry" if retry else "render"
    status, _, body = browser.request("POST", f"/quotes/revisions/{revision}/pdf/{action}/", {}, htmx=True)
    return status, body, (time.perf_counter() - started) * 1000


# --------------------------------------------------------------------------- (a) worker killed


def fault_pool_process_killed(
    stack: Stack, browser: Browser, quote: int, revision: int, number: str
) -> Check:
    check = Check("(a1) SIGKILL of the pool process rendering a PDF")
    before = snapshot(stack, quote)
    status, _, _ = request_pdf(browser, revision)
    check.expect(status == 200, f"render requested ({status})")
    rendering = wait_until(lambda: pdf_row(stack, revision)["status"] == "rendering", 60, 0.05)
    children = stack.worker_children()
    if not check.expect(bool(rendering and children), f"job rendering in pool process {children}"):
        return check
    for pid in children:
        os.kill(pid, signal.SIGKILL)
    killed_at = time.monotonic()
    ready = wait_until(lambda: pdf_row(stack, revision)["status"] in ("ready", "failed"), RENDER_WAIT_S, 0.2)
    recovery = time.monotonic() - killed_at
    row = pdf_row(stack, revision)
    check.expect(
        bool(ready) and row["status"] == "ready", f"job ended {row['status']} {recovery:.1f} s after the kill"
    )
    check.expect(row["attempts"] >= 2, f"{row['attempts']} attempts (the killed one counted)")
    ok, detail = pdf_is_valid(stack, browser, revision, number)
    check.expect(ok, detail)
    check.expect(snapshot(stack, quote) == before, "quote and revision unchanged")
    check.expect(stack.workers[-1].poll() is None, "worker still running with a new pool process")
    report("fault worker-child kill recovery", recovery, "s")
    return check


def fault_whole_worker_killed(
    stack: Stack, browser: Browser, quote: int, revision: int, number: str
) -> list[Check]:
    check = Check("(a2) SIGKILL of the whole worker mid-render, worker restarted")
    before = snapshot(stack, quote)
    status, _, _ = request_pdf(browser, revision)
    check.expect(status == 200, f"render requested ({status})")
    rendering = wait_until(lambda: pdf_row(stack, revision)["status"] == "rendering", 60, 0.05)
    if not check.expect(bool(rendering), "job rendering"):
        return [check]
    worker = stack.workers[-1]
    os.killpg(worker.pid, signal.SIGKILL)  # main process and pool: nothing acknowledges or rejects
    worker.wait(10)
    stack.stop_worker(worker)
    killed_at = time.monotonic()
    stack.start_worker()
    bound = 60
    done = wait_until(lambda: pdf_row(stack, revision)["status"] in ("ready", "failed"), bound, 0.5)
    row = pdf_row(stack, revision)
    check.expect(
        bool(done) and row["status"] == "ready",
        f"job {row['status']} {time.monotonic() - killed_at:.0f} s after the kill (bound {bound} s)"
        + ("" if done else ": the unacknowledged message waits for Redis's visibility_timeout (3600 s)"),
    )
    check.expect(snapshot(stack, quote) == before, "quote and revision unchanged")

    # What the engineer can do meanwhile: the quote page offers Retry once the job is stale
    # (documents.pdf.jobs.STALE_AFTER).  Simulate that time passing by ageing the job's audit row.
    retry = Check("(a2') after the stale window, Retry renders the lost job")
    if row["status"] != "ready":
        stack.sql(
            "UPDATE quotes_auditevent SET created_at = created_at - interval '1 day' "
            "WHERE action = 'revision.pdf_queued' AND object_id = %s",
            (str(revision),),
        )
        status, body, _ = request_pdf(browser, revision, retry=True)
        retry.expect(status == 200, f"retry answered {status}")
        wait_until(lambda: pdf_row(stack, revision)["status"] in ("ready", "failed"), RENDER_WAIT_S, 0.3)
        ok, detail = pdf_is_valid(stack, browser, revision, number)
        retry.expect(ok, detail)
        retry.expect(snapshot(stack, quote) == before, "quote and revision unchanged")
    else:
        retry.expect(True, "not needed: the job completed by itself")
    return [check, retry]


# --------------------------------------------------------------------------- (b) Redis down


def fault_redis_down(
    stack: Stack, browser: Browser, preset: dict, quote: int, revision: int, number: str
) -> Check:
    check = Check("(b) Redis stopped: configurator works, PDF requests say 'temporarily unavailable'")
    before = snapshot(stack, quote)
    stack.stop_redis()
    try:
        started = time.perf_counter()
        status, _, body = browser.request("POST", "/configurator/update", preset, htmx=True)
        update_ms = (time.perf_counter() - started) * 1000
        check.expect(
            status == 200 and b"request_json" in body, f"configurator update {status} in {update_ms:.0f} ms"
        )
        status, _, _ = browser.request("GET", f"/quotes/{quote}/")
        check.expect(status == 200, f"quote page {status}")
        status, _, body = browser.request("GET", "/healthz")
        health = json.loads(body or b"{}")
        check.expect(
            status == 503 and health.get("broker", {}).get("ok") is False,
            f"/healthz {status} {health.get('broker')}",
        )

        status, body, pdf_ms = request_pdf(browser, revision)
        row = pdf_row(stack, revision)
        check.expect(status == 200, f"PDF request answered {status} in {pdf_ms:.0f} ms")
        check.expect(pdf_ms < 15_000, f"PDF request took {pdf_ms:.0f} ms (bound 15 s)")
        check.expect(
            row["status"] == "failed" and row["error"] == SERVICE_UNAVAILABLE,
            f"revision PDF {row['status']}: {row['error']!r}",
        )
        shown = page_text(body, 2000)
        check.expect(b'data-pdf-status="failed"' in body, f"panel shows: {shown[:160]}")
        report("fault redis-down PDF request", pdf_ms, "ms")
        report("fault redis-down update", update_ms, "ms")
    finally:
        stack.start_redis()  # same port: the worker and the web processes reconnect

    healthy = wait_until(lambda: _healthz(browser) == 200, 30, 0.5)
    check.expect(bool(healthy), "/healthz ok again after Redis restarted")
    # The worker reconnects on its own; Retry now renders the proposal.
    ready = False
    for _ in range(3):
        status, _, _ = request_pdf(browser, revision, retry=True)
        ready = wait_until(lambda: pdf_row(stack, revision)["status"] in ("ready", "failed"), 60, 0.3)
        if pdf_row(stack, revision)["status"] == "ready":
            break
        time.sleep(3)  # the worker may still be reconnecting
    ok, detail = pdf_is_valid(stack, browser, revision, number)
    check.expect(bool(ready) and ok, f"after Redis is back, Retry: {detail}")
    check.expect(snapshot(stack, quote) == before, "quote and revision unchanged")
    return check


def _healthz(browser: Browser) -> int:
    try:
        return browser.request("GET", "/healthz")[0]
    except HttpError:
        return 0


# --------------------------------------------------------------------------- (c) database error mid-save

COUNTS = """SELECT (SELECT count(*) FROM quotes_quote), (SELECT count(*) FROM quotes_quoterevision),
                   (SELECT count(*) FROM quotes_bomline), (SELECT count(*) FROM quotes_auditevent),
                   (SELECT count(*) FROM quotes_customer),
                   (SELECT coalesce(sum(last_number), 0) FROM quotes_quotenumbercounter)"""

TRIGGERS = {
    "BOM lines": "BEFORE INSERT ON quotes_bomline FOR EACH STATEMENT",
    "the last audit row": "BEFORE INSERT ON quotes_auditevent FOR EACH ROW WHEN (NEW.action = 'revision.created')",
}


def fault_database_error_mid_save(stack: Stack, browser: Browser, preset: dict) -> Check:
    check = Check("(c) PostgreSQL error in the middle of a quote save leaves nothing behind")
    stack.sql(
        "CREATE OR REPLACE FUNCTION fault_injection() RETURNS trigger AS $$ BEGIN "
        "RAISE EXCEPTION 'fault injection: the disk is full'; END $$ LANGUAGE plpgsql"
    )
    for where, spec in TRIGGERS.items():
        before = stack.sql(COUNTS)[0]
        stack.sql(f"CREATE TRIGGER fault_injection {spec} EXECUTE FUNCTION fault_injection()")
        table = spec.split(" ON ")[1].split()[0]
        try:
            try:
                save_quote(browser, preset, f"Fault customer ({where})")
                check.expect(False, f"save succeeded despite the failing trigger on {where}")
            except HttpError as exc:
                check.expect("save: 503" in str(exc), f"failing {where}: {str(exc)[:40]}")
        finally:
            stack.sql(f"DROP TRIGGER IF EXISTS fault_injection ON {table}")
        after = stack.sql(COUNTS)[0]
        check.expect(
            after == before, f"rows (quotes, revisions, lines, audit, customers, counter) {before} → {after}"
        )
    last = stack.sql("SELECT max(sequence) FROM quotes_quote")[0][0] or 0
    _, _, number = save_quote(browser, preset, "Fault customer (after)")
    check.expect(number.endswith(f"-{last + 1:04d}"), f"next save is {number}, right after sequence {last}")
    stack.sql("DROP FUNCTION IF EXISTS fault_injection()")
    return check


# --------------------------------------------------------------------------- main


def main() -> int:
    if not shutil.which("pdftotext") or not shutil.which("redis-server"):
        print("needs pdftotext (poppler-utils) and redis-server")
        return 2
    checks: list[Check] = []
    started = time.perf_counter()
    with Stack(label="faults", own_redis=True) as stack:
        browser = Browser(stack.port)
        browser.log_in("engineer", "demo-engineer-2026")
        presets = presets_from(browser)
        preset = presets[0]  # the validated 4 × A3
        quotes = [save_quote(browser, preset, f"Fault customer {i}") for i in range(3)]
        steps = [
            lambda: [fault_pool_process_killed(stack, browser, *quotes[0])],
            lambda: fault_whole_worker_killed(stack, browser, *quotes[1]),
            lambda: [fault_redis_down(stack, browser, preset, *quotes[2])],
            lambda: [fault_database_error_mid_save(stack, browser, preset)],
        ]
        for step in steps:
            try:
                checks += step()
            except Exception as exc:  # noqa: BLE001 - a crash in a fault is that fault failing
                crashed = Check(f"fault step {len(checks) + 1}")
                crashed.expect(False, f"{type(exc).__name__}: {exc}")
                checks.append(crashed)
    print()
    for check in checks:
        print(check.line())
    failed = sum(not c.passed for c in checks)
    print(f"\n{len(checks) - failed} of {len(checks)} faults handled ({time.perf_counter() - started:.0f} s)")
    report("faults passed", len(checks) - failed, "count", str(len(checks)))
    report("faults failed", failed, "count", "0")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
