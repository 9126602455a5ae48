"""Load run: 20 engineers at once on a production-like stack, then an integrity audit.

Starts bench/stack.py's stack (gunicorn with 3 workers, one Celery worker,
scratch PostgreSQL database, Redis), logs in 20 clients (threads, stdlib
http.client, CSRF as a browser sends it behind the TLS proxy) and drives them
for 60 s with no think time through what the configurator page does:

* ``update``   — htmx POST /configurator/update of a scenario preset with varied
  nodes, utilisation and memory utilisation (now and then an invalid value);
* ``save``     — POST /quotes/create/ with the ``request_json`` the results panel
  carries, then ``quote`` — GET of the quote page it redirects to;
* ``pdf``      — htmx POST …/pdf/render/ for a saved quote (at most MAX_PDFS in
  all, the worker renders one at a time), then ``pdf-status`` — the panel's
  one-second poll.

Afterwards it waits (bounded) for every requested PDF and checks that the
database holds exactly the quotes that were saved — numbers consecutive, one
revision each with its snapshot hash, BOM lines, totals and audit rows — and
that every requested PDF is ready, matches its SHA-256, downloads, starts
with %PDF and reads back through pdftotext with its quote number.

Prints requests/s, p50/p95/p99 per kind and the error count, plus BENCH lines
for bench/run_all.py.  Exits 1 on any error or integrity failure.  Bounded:
``--seconds`` (default 60) of load, at most MAX_PDFS renders, PDF_WAIT_S of
waiting; loopback only; the stack is torn down however the run ends.

    python bench/load.py [--clients 20] [--seconds 60]
"""

from __future__ import annotations

import argparse
import hashlib
import html
import http.client
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import threading
import time
import urllib.parse
from collections import defaultdict
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from stack import Stack  # noqa: E402

USERS = [
    ("engineer", "demo-engineer-2026"),
    ("engineer2", "demo-engineer2-2026"),
    ("manager", "demo-manager-2026"),
]
MAX_PDFS = 24
PDF_WAIT_S = 300
POLL_EVERY_S = 1.0
REQUEST_TIMEOUT_S = 120
KINDS = ["update", "save", "quote", "pdf", "pdf-status"]
TARGET_RPS = 60  # 20 clients on a 2-core machine
TARGET_UPDATE_P95_MS = 500


def pdf_render_outcome(status: int, body: bytes) -> str:
    """What an htmx POST …/pdf/render/ answered: "queued" (200, the status panel of a job that
    is queued, rendering or ready), "refused" (429: the user's render limit, the panel says why,
    nothing was queued) or "error" (anything else, including a 200 that carries a refusal)."""
    panel = re.search(rb'data-pdf-status="([a-z]+)"', body or b"")
    if status == 429:
        return "refused"
    if status == 200 and panel and panel.group(1) in (b"queued", b"rendering", b"ready"):
        return "queued"
    return "error"


def report(name: str, value: float, unit: str, target: str = "") -> None:
    """One line for bench/run_all.py."""
    print(f"BENCH\t{name}\t{value:.3f}\t{unit}\t{target}", flush=True)


# --------------------------------------------------------------------------- HTTP client


class HttpError(Exception):
    pass


class FormFields(HTMLParser):
    """The values a browser would submit for one form (inputs, checked boxes, selected options, textareas)."""

    def __init__(self, form_id: str) -> None:
        super().__init__(convert_charrefs=True)
        self.form_id = form_id
        self.inside = False
        self.data: dict[str, str] = {}
        self.options: dict[str, list[str]] = defaultdict(list)
        self._select: str | None = None
        self._select_first: str | None = None
        self._textarea: str | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "form" and a.get("id") == self.form_id:
            self.inside = True
        if not self.inside:
            return
        name = a.get("name")
        if tag == "input" and name:
            kind = a.get("type", "text")
            if kind in ("checkbox", "radio"):
                if "checked" in a:
                    self.data[name] = a.get("value") or "on"
            elif kind not in ("submit", "button"):
                self.data[name] = a.get("value") or ""
        elif tag == "select" and name:
            self._select, self._select_first = name, None
        elif tag == "option" and self._select:
            value = a.get("value") or ""
            self.options[self._select].append(value)
            if self._select_first is None:
                self._select_first = value
            if "selected" in a:
                self.data[self._select] = value
        elif tag == "textarea" and name:
            self._textarea = name
            self.data[name] = ""

    def handle_data(self, data):
        if self._textarea:
            self.data[self._textarea] += data

    def handle_endtag(self, tag):
        if tag == "form" and self.inside:
            self.inside = False
        elif tag == "select" and self._select:
            self.data.setdefault(self._select, self._select_first or "")
            self._select = None
        elif tag == "textarea":
            self._textarea = None


class Browser:
    """One engineer: cookies, CSRF and one HTTP connection to the stack (kept alive while the server
    keeps it), as a browser
    behind the TLS-terminating proxy would send (X-Forwarded-Proto, Origin, Referer)."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.origin = f"https://127.0.0.1:{port}"
        self.cookies: dict[str, str] = {}
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=REQUEST_TIMEOUT_S)

    def request(self, method: str, path: str, form=None, *, htmx: bool = False) -> tuple[int, dict, bytes]:
        headers = {"Host": f"127.0.0.1:{self.port}", "X-Forwarded-Proto": "https", "User-Agent": "bench-load"}
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        body = None
        if method == "POST":
            headers["Origin"] = self.origin
            headers["Referer"] = self.origin + "/"
            headers["X-CSRFToken"] = self.cookies.get("csrftoken", "")
            headers["Content-Type"] = "application/x-www-form-urlencoded"
            body = urllib.parse.urlencode(form or {}, doseq=True).encode()
        if htmx:
            headers["HX-Request"] = "true"
        for attempt in (1, 2):
            reused = self.conn.sock is not None
            try:
                self.conn.request(method, path, body=body, headers=headers)
                response = self.conn.getresponse()
                content = response.read()
                break
            except (ConnectionResetError, BrokenPipeError, http.client.RemoteDisconnected) as exc:
                # A kept-alive connection the server closed while idle (gunicorn's gthread workers keep
                # connections alive for a few seconds): sent again once on a new connection, as a browser does.
                self.conn.close()
                if not reused or attempt == 2:
                    raise HttpError(f"{method} {path}: {type(exc).__name__}: {exc}") from exc
            except (OSError, http.client.HTTPException) as exc:
                self.conn.close()
                raise HttpError(f"{method} {path}: {type(exc).__name__}: {exc}") from exc
        if response.will_close:
            self.conn.close()
        for cookie in response.headers.get_all("Set-Cookie") or []:
            name, _, rest = cookie.partition("=")
            self.cookies[name.strip()] = rest.split(";", 1)[0]
        return response.status, {k.lower(): v for k, v in response.getheaders()}, content

    def log_in(self, username: str, password: str) -> None:
        status, _, body = self.request("GET", "/accounts/login/")
        token = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', body)
        if status != 200 or not token:
            raise HttpError(f"login page: {status}")
        status, headers, _ = self.request(
            "POST",
            "/accounts/login/",
            {"csrfmiddlewaretoken": token.group(1).decode(), "username": username, "password": password},
        )
        if status != 302 or "login" in headers.get("location", "login"):
            raise HttpError(f"log-in as {username} answered {status} → {headers.get('location')}")


def page_text(body: bytes, limit: int = 300) -> str:
    """The readable text of an HTML answer's main part (for error reports)."""
    text = body.decode("utf-8", errors="replace")
    main = re.search(r"<main[^>]*>(.*)</main>", text, re.S)
    text = re.sub(r"<[^>]+>", " ", main.group(1) if main else text)
    return " ".join(html.unescape(text).split())[:limit]


# --------------------------------------------------------------------------- the run


@dataclass
class Sample:
    kind: str
    started: float
    ms: float
    ok: bool
    detail: str = ""


@dataclass
class Shared:
    deadline: float
    lock: threading.Lock = field(default_factory=threading.Lock)
    samples: list[Sample] = field(default_factory=list)
    saves: list[tuple[int, int]] = field(default_factory=list)  # (client, quote pk)
    pdfs: dict[int, int] = field(default_factory=dict)  # revision pk → client
    pdf_budget: int = MAX_PDFS
    pdf_refused: int = 0
    fatal: list[str] = field(default_factory=list)

    def give_pdf_slot(self, *, refused: bool = False) -> None:
        with self.lock:
            self.pdf_budget += 1
            self.pdf_refused += int(refused)

    def take_pdf_slot(self) -> bool:
        with self.lock:
            if self.pdf_budget <= 0:
                return False
            self.pdf_budget -= 1
            return True


class Engineer(threading.Thread):
    def __init__(self, index: int, browser: Browser, presets: list[dict[str, str]], shared: Shared) -> None:
        super().__init__(name=f"engineer-{index}", daemon=True)
        self.index = index
        self.browser = browser
        self.presets = presets
        self.shared = shared
        self.rng = random.Random(index)
        self.request_json: str | None = None
        self.quotes: list[int] = []  # revision pks of this engineer's quotes without a PDF yet
        self.pending: dict[int, float] = {}  # revision pk → last poll
        self.saved = 0

    def timed(self, kind: str, method: str, path: str, form=None, *, htmx=False, expect=(200,)):
        started = time.perf_counter()
        try:
            status, headers, body = self.browser.request(method, path, form, htmx=htmx)
        except HttpError as exc:
            self.record(kind, started, False, str(exc))
            return None, None, None
        ok = status in expect
        self.record(kind, started, ok, "" if ok else f"{method} {path} → {status}: {page_text(body)}")
        return (status, headers, body) if ok else (None, None, None)

    def record(self, kind: str, started: float, ok: bool, detail: str = "") -> None:
        sample = Sample(kind, started, (time.perf_counter() - started) * 1000, ok, detail)
        with self.shared.lock:
            self.shared.samples.append(sample)

    def varied_form(self) -> dict[str, str]:
        form = dict(self.rng.choice(self.presets))
        if form.get("topology") == "disaggregated":
            prefill = self.rng.choice([4, 8])
            form.update(nodes=str(2 * prefill), prefill_nodes=str(prefill), decode_nodes=str(prefill))
        else:
            form["nodes"] = str(self.rng.choice([4, 4, 8]))
        form["utilisation"] = f"{self.rng.uniform(0.3, 0.9):.2f}"
        form["gpu_memory_utilization"] = self.rng.choice(["0.8", "0.85", "0.9"])
        if self.rng.random() < 0.05:
            form["nodes"] = "0"  # an absurd value: a field error, still a 200
        return form

    def do_update(self) -> None:
        status, _, body = self.timed("update", "POST", "/configurator/update", self.varied_form(), htmx=True)
        if body is None:
            return
        if not body.lstrip().startswith(b'<section id="results"'):
            self.record("check", time.perf_counter(), False, "update: not the results panel")
            return
        match = re.search(rb'name="request_json" value="([^"]*)"', body)
        # Only a plan that works can be quoted (the verdict strip says so).
        if match and b'<span class="badge ok"><strong>' in body:
            self.request_json = html.unescape(match.group(1).decode())

    def do_save(self) -> None:
        form = {
            "request_json": self.request_json,
            "customer_name": f"Load test customer {self.index}",
            "title": f"load {self.index}-{self.saved + 1}",
            "discount": "0",
            "language": self.rng.choice(["zh-hans", "en"]),
        }
        status, headers, _ = self.timed("save", "POST", "/quotes/create/", form, expect=(302,))
        if status is None:
            return
        match = re.fullmatch(r"/quotes/(\d+)/", urllib.parse.urlsplit(headers.get("location", "")).path)
        if not match:
            self.record("check", time.perf_counter(), False, f"save redirected to {headers.get('location')}")
            return
        self.saved += 1
        with self.shared.lock:
            self.shared.saves.append((self.index, int(match.group(1))))
        status, _, body = self.timed("quote", "GET", f"/quotes/{match.group(1)}/")
        if body is not None:
            revision = re.search(rb"/quotes/revisions/(\d+)/pdf/render/", body)
            if revision:
                self.quotes.append(int(revision.group(1)))

    def do_pdf(self) -> None:
        revision = self.quotes.pop(self.rng.randrange(len(self.quotes)))
        status, _, body = self.timed(
            "pdf", "POST", f"/quotes/revisions/{revision}/pdf/render/", {}, htmx=True, expect=(200, 429)
        )
        if body is None:
            return
        outcome = pdf_render_outcome(status, body)
        if outcome == "refused":
            # The user's renders are all busy (PDF_MAX_ACTIVE_PER_USER): nothing was queued, so
            # nothing to wait for or audit; the quote goes back to be tried again later.
            self.quotes.append(revision)
            self.shared.give_pdf_slot(refused=True)
            return
        if outcome != "queued":
            self.record("check", time.perf_counter(), False, f"pdf render: {page_text(body)}")
            return
        with self.shared.lock:
            self.shared.pdfs[revision] = self.index
        self.pending[revision] = time.monotonic()

    def do_poll(self, revision: int) -> None:
        self.pending[revision] = time.monotonic()
        status, _, body = self.timed(
            "pdf-status", "GET", f"/quotes/revisions/{revision}/pdf/status/", htmx=True
        )
        if body is not None and re.search(rb'data-pdf-status="(ready|failed)"', body):
            del self.pending[revision]

    def run(self) -> None:
        try:
            while time.monotonic() < self.shared.deadline:
                now = time.monotonic()
                due = [rev for rev, last in self.pending.items() if now - last >= POLL_EVERY_S]
                roll = self.rng.random()
                if due:
                    self.do_poll(due[0])
                elif roll < 0.12 and self.request_json:
                    self.do_save()
                elif roll < 0.20 and self.quotes and self.shared.take_pdf_slot():
                    self.do_pdf()
                else:
                    self.do_update()
        except Exception as exc:  # noqa: BLE001 - a crash in the client is an error of the run
            with self.shared.lock:
                self.shared.fatal.append(f"{self.name}: {type(exc).__name__}: {exc}")


def presets_from(browser: Browser) -> list[dict[str, str]]:
    """The configurator form as each scenario pre-fills it (read from the pages, as a browser would)."""
    status, _, body = browser.request("GET", "/")
    if status != 200:
        raise HttpError(f"configurator page: {status}")
    parser = FormFields("config-form")
    parser.feed(body.decode())
    # The page's CSRF token belongs to this browser's session; each engineer sends its own (header).
    parser.data.pop("csrfmiddlewaretoken", None)
    forms = [dict(parser.data)]
    for slug in [s for s in parser.options.get("scenario", []) if s]:
        status, _, body = browser.request("GET", f"/configurator/preset?scenario={slug}", htmx=True)
        preset = FormFields("config-form")
        preset.feed(body.decode())
        if status != 200 or preset.data.get("scenario") != slug:
            raise HttpError(f"preset {slug}: {status}")
        preset.data.pop("csrfmiddlewaretoken", None)
        forms.append(dict(preset.data))
    return forms


def percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered)) - 1))]


# --------------------------------------------------------------------------- the audit afterwards


def wait_for_pdfs(stack: Stack, revisions: list[int]) -> float:
    started = time.monotonic()
    while revisions and time.monotonic() - started < PDF_WAIT_S:
        rows = stack.sql(
            "SELECT count(*) FROM quotes_quoterevision WHERE id = ANY(%s) AND pdf_status IN ('ready', 'failed')",
            (revisions,),
        )
        if rows[0][0] == len(revisions):
            break
        time.sleep(1)
    return time.monotonic() - started


def audit(stack: Stack, shared: Shared, browsers: list[Browser]) -> list[str]:
    """Everything that was saved is there, whole; every requested PDF is ready and valid."""
    problems: list[str] = []
    saved = sorted(pk for _, pk in shared.saves)
    quotes = stack.sql("SELECT id, number, sequence FROM quotes_quote ORDER BY sequence")
    if sorted(q[0] for q in quotes) != saved:
        problems.append(f"{len(quotes)} quotes in the database for {len(saved)} successful saves")
    sequences = [q[2] for q in quotes]
    if sequences != list(range(1, len(quotes) + 1)):
        problems.append(f"quote numbers are not consecutive from 1: {sequences[:10]}…")
    rows = stack.sql(
        """SELECT q.id, count(DISTINCT r.id), min(r.snapshot_sha256), min(r.net_total), count(b.id)
             FROM quotes_quote q
             LEFT JOIN quotes_quoterevision r ON r.quote_id = q.id
             LEFT JOIN quotes_bomline b ON b.revision_id = r.id
            GROUP BY q.id"""
    )
    for quote_id, revisions, sha, net_total, lines in rows:
        if (
            revisions != 1
            or not re.fullmatch(r"[0-9a-f]{64}", sha or "")
            or not net_total
            or net_total <= 0
            or not lines
        ):
            problems.append(
                f"quote {quote_id}: {revisions} revisions, sha {sha!r}, net {net_total}, {lines} BOM lines"
            )
    audit_counts = dict(
        stack.sql(
            "SELECT action, count(*) FROM quotes_auditevent WHERE action IN ('quote.created', 'revision.created') GROUP BY action"
        )
    )
    for action in ("quote.created", "revision.created"):
        if audit_counts.get(action, 0) != len(quotes):
            problems.append(f"{audit_counts.get(action, 0)} '{action}' audit rows for {len(quotes)} quotes")

    pdftotext = shutil.which("pdftotext")
    for revision, client in sorted(shared.pdfs.items()):
        row = stack.sql(
            """SELECT r.pdf_status, r.pdf_sha256, r.pdf_file, r.pdf_error, r.number, q.number
                 FROM quotes_quoterevision r JOIN quotes_quote q ON q.id = r.quote_id WHERE r.id = %s""",
            (revision,),
        )
        status, sha, name, error, number, quote_number = row[0]
        if status != "ready":
            problems.append(f"PDF of {number}: {status} {error!r}")
            continue
        stored = (
            (stack.media_root / name).read_bytes() if name and (stack.media_root / name).exists() else b""
        )
        if hashlib.sha256(stored).hexdigest() != sha:
            problems.append(f"PDF of {number}: stored file does not match its SHA-256")
        code, _, body = browsers[client].request("GET", f"/quotes/revisions/{revision}/pdf/")
        if code != 200 or not body.startswith(b"%PDF-") or body != stored:
            problems.append(
                f"PDF of {number}: download {code}, {body[:8]!r}, same as stored: {body == stored}"
            )
            continue
        text = subprocess.run([pdftotext, "-", "-"], input=body, capture_output=True, timeout=60)
        if text.returncode != 0 or quote_number not in text.stdout.decode(errors="replace"):
            problems.append(f"PDF of {number}: pdftotext {text.returncode}, quote number not found")
    return problems


# --------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=60.0)
    args = parser.parse_args(argv)
    clients = max(1, min(args.clients, 100))
    seconds = max(1.0, min(args.seconds, 600.0))
    if not shutil.which("pdftotext"):
        print("pdftotext is missing (Debian package poppler-utils)")
        return 2

    with Stack(label="load") as stack:
        browsers = []
        for i in range(clients):
            browser = Browser(stack.port)
            browser.log_in(*USERS[i % len(USERS)])
            browsers.append(browser)
        presets = presets_from(browsers[0])
        print(
            f"{clients} engineers logged in; {len(presets)} presets; {seconds:.0f} s of load on {stack.base_url}"
        )

        shared = Shared(deadline=time.monotonic() + seconds)
        engineers = [Engineer(i, browsers[i], presets, shared) for i in range(clients)]
        started = time.perf_counter()
        for engineer in engineers:
            engineer.start()
        for engineer in engineers:
            engineer.join(seconds + REQUEST_TIMEOUT_S + 10)
        elapsed = time.perf_counter() - started
        stuck = [e.name for e in engineers if e.is_alive()]

        waited = wait_for_pdfs(stack, list(shared.pdfs))
        problems = audit(stack, shared, browsers)

    samples = shared.samples
    errors = [s for s in samples if not s.ok] + [Sample("client", 0, 0, False, f) for f in shared.fatal]
    errors += [Sample("client", 0, 0, False, f"{name} did not stop") for name in stuck]
    total_rps = len(samples) / elapsed
    print(f"\n{len(samples)} requests in {elapsed:.1f} s = {total_rps:.1f} requests/s; {len(errors)} errors")
    print(
        f"{'kind':12} {'count':>7} {'req/s':>7} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} {'max ms':>8} {'errors':>7}"
    )
    for kind in KINDS:
        times = [s.ms for s in samples if s.kind == kind]
        bad = sum(1 for s in samples if s.kind == kind and not s.ok)
        if not times:
            continue
        print(
            f"{kind:12} {len(times):7d} {len(times) / elapsed:7.1f} {percentile(times, 0.50):8.0f} "
            f"{percentile(times, 0.95):8.0f} {percentile(times, 0.99):8.0f} {max(times):8.0f} {bad:7d}"
        )
    print(
        f"quotes saved: {len(shared.saves)}; PDFs requested: {len(shared.pdfs)} (all done {waited:.0f} s after the load); "
        f"renders refused by the per-user limit (429): {shared.pdf_refused}"
    )
    loadavg = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"machine load average (1/5/15 min) at the end: {loadavg} on {os.cpu_count()} CPUs")
    for e in errors[:10]:
        print(f"  error: {e.kind}: {e.detail[:300]}")
    for p in problems:
        print(f"  integrity: {p}")
    print("integrity: " + ("OK" if not problems else f"{len(problems)} problems"))

    report("load requests/s", total_rps, "req/s", f">= {TARGET_RPS} req/s")
    for kind in KINDS:
        times = [s.ms for s in samples if s.kind == kind]
        if times:
            for q in (0.50, 0.95, 0.99):
                target = f"< {TARGET_UPDATE_P95_MS} ms" if (kind, q) == ("update", 0.95) else ""
                report(f"load {kind} p{round(q * 100)}", percentile(times, q), "ms", target)
    report("load errors", len(errors), "count", "0")
    report("load quotes saved", len(shared.saves), "count")
    report("load PDFs rendered", len(shared.pdfs), "count")
    report("load integrity problems", len(problems), "count", "0")
    if samples:
        report("load update median", statistics.median(s.ms for s in samples if s.kind == "update"), "ms")
    return 1 if errors or problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
