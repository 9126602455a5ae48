"""The proposal PDF: its sections and headline figures in both languages, and that it stays sealed.

The reference quote is Kimi K3 on 16 × Atlas 800 A3, 8P8D (``documents.pdf.sample``,
planned from the seeded 8P8D configuration through ``configurator.reference``).  Expected
strings are computed here from the revision's own snapshots with the same
formatters the templates use (``configurator.drawings.fmt.format_money`` and
Python's thousands separator), then looked up in the PDF's text (pdftotext).
"""

from __future__ import annotations

import logging
import re
import shutil
import socket
import subprocess
from decimal import ROUND_HALF_UP, Decimal

import pytest
from django.utils import translation

from configurator.drawings.fmt import format_money
from documents.pdf import SafeURLFetcher, harfbuzz_subset_available, pdf_speed_notice, render_proposal_pdf
from documents.pdf import fonts as pdf_fonts
from documents.pdf.context import css_string, page_counter_css, section_titles
from documents.pdf.fetcher import RefusedURL
from documents.pdf.sample import sample_quote_create
from quotes.services.revisions import revision_create_from
from quotes.statuses import CAPEX_CATEGORIES

weasyprint = pytest.importorskip("weasyprint")
pytestmark = pytest.mark.skipif(shutil.which("pdftotext") is None, reason="poppler-utils not installed")

HOSTILE_NAME = '<img src="file:///etc/passwd">'
HOSTILE_TITLE = (
    'K3 <a href="http://10.0.0.1/internal">link</a> <link rel=stylesheet href="http://127.0.0.1:9/x.css">'
)
HOSTILE_NOTE = (
    '<a href="http://10.0.0.1/internal">link</a><link rel=stylesheet href="http://127.0.0.1:9/x.css">'
)


def pdf_text(pdf: bytes) -> str:
    """The PDF's text in content order (``-raw`` keeps each table cell's lines together)."""
    done = subprocess.run(
        ["pdftotext", "-raw", "-enc", "UTF-8", "-", "-"], input=pdf, capture_output=True, check=True
    )
    return done.stdout.decode("utf-8")


def squash(text: str) -> str:
    """Without any whitespace: table cells and CJK lines wrap anywhere in pdftotext's output."""
    return re.sub(r"\s+", "", text)


def pdf_pages(pdf: bytes) -> int:
    done = subprocess.run(["pdfinfo", "-"], input=pdf, capture_output=True, check=True)
    return int(re.search(r"^Pages:\s+(\d+)", done.stdout.decode(), re.M).group(1))


@pytest.fixture
def no_network(monkeypatch):
    """Every socket connection attempt is recorded and refused."""
    attempts = []

    def refuse(self, address, *args, **kwargs):
        attempts.append(address)
        raise OSError("network disabled in this test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    return attempts


# --------------------------------------------------------------------------- content


@pytest.mark.django_db
@pytest.mark.parametrize("lang", ["en", "zh-hans"])
def test_16_node_proposal_has_every_section_and_the_revisions_figures(lang, engineer, no_network):
    """The internal edition (every chapter); tests/quotes/test_proposal_editions.py reads the customer one."""
    revision = sample_quote_create(by=engineer, language=lang)
    fetcher = SafeURLFetcher()
    pdf = render_proposal_pdf(revision, fetcher=fetcher, edition="internal")
    assert pdf.startswith(b"%PDF")
    text = squash(pdf_text(pdf))
    result = revision.result_json
    tco = result["tco"]
    pages = pdf_pages(pdf)

    with translation.override(lang):
        titles = list(section_titles("internal").values())
        footer = translation.gettext("Page %(page)s of %(pages)s") % {"page": 3, "pages": pages}
        contents = translation.gettext("Contents")

    # Cover, table of contents and every chapter heading.
    for heading in [contents, *titles]:
        assert squash(heading) in text, heading
    assert squash(revision.quote.customer.name) in text
    assert revision.number in text and revision.quote.number in text
    assert revision.quote.valid_until.isoformat() in text
    # Running footer "page X of Y" (in the quote's language).
    assert squash(footer) in text

    # Headline figures, formatted as the template formats them, from the frozen result.
    nodes = result["layout"]["nodes"]  # 16 (S1 path C)
    assert nodes == 16
    assert f"{nodes}×Atlas800A3" in text
    kv_tokens = result["memory"]["kv_tokens_per_dp_rank"]  # |thousands filter: "1,050,368"
    assert f"{kv_tokens:,}" in text
    capex = format_money(Decimal(tco["capex"]["total"]), tco["currency"], lang)  # {% money %}, scaled
    assert squash(capex) in text
    assert squash(format_money(Decimal(tco["buy_total"]), tco["currency"], lang)) in text
    assert squash(format_money(Decimal(tco["lease_total"]), tco["currency"], lang)) in text
    per_m = format_money(
        Decimal(tco["tokens"]["cost_per_m_output_buy"]), tco["currency"], lang, scale=1, decimals=2
    )
    api = format_money(
        Decimal(tco["tokens"]["api_price_output_per_m"]), tco["currency"], lang, scale=1, decimals=2
    )
    assert squash(per_m) in text and squash(api) in text
    throughput = f"{Decimal(str(result['performance']['output_tokens_per_s'])):,.0f}"
    assert throughput in text
    assert "DP8/TP16/EP128" in text  # both sides of the 8P8D layout

    # Findings in the quote's language, from the frozen result's own wording.
    warning = next(c for c in result["checks"] if c["severity"] == "warning")
    message = warning["message_zh"] if lang.startswith("zh") else warning["message"]
    assert squash(message)[:40] in text

    # Bill of materials: every purchase line and the totals exactly as stored on the revision.  Each
    # line shows its amount after the project discount, which applies to the one-time purchase lines
    # (quotes.services.snapshot.revision_totals); the cent of rounding left over goes to the largest of them.
    purchase = list(revision.lines.exclude(category="lease"))
    largest = max((x for x in purchase if x.category in CAPEX_CATEGORIES), key=lambda x: x.line_total)
    for line in purchase:
        description = (
            line.description_zh if lang.startswith("zh") and line.description_zh else line.description_en
        )
        assert squash(description) in text, description
        if line.category in CAPEX_CATEGORIES:
            net = (line.line_total * (1 - revision.discount)).quantize(Decimal("0.01"), ROUND_HALF_UP)
        else:
            net = line.line_total
        if line is not largest:
            assert f"{net:,.2f}" in text
    assert f"{revision.net_total:,.2f}" in text
    assert f"{revision.list_total:,.2f}" in text

    # Power: the seed's circuit beside the recommended one.
    power = result["power"]
    seed, recommended = power["seed_feed"], power["recommended_feed"]
    pick = "description_zh" if lang.startswith("zh") else "description_en"
    assert squash(seed[pick]) in text and squash(recommended[pick]) in text

    # Assumptions: every assumed figure of the plan is listed by its label.
    for figure in result["figures"].values():
        if figure["source"]["kind"] == "assumed":
            label = figure["label_zh"] if lang.startswith("zh") else figure["label_en"]
            assert squash(label) in text, label

    # Risks: the licence threshold, and the launch appendix with every node's command.
    assert ("US$20M" in text) == (lang == "en")  # the Chinese wording says 2,000 万美元
    assert "2,000万美元" in text or lang == "en"
    for node in result["launch"]["nodes"]:
        assert node["script"] in text
    # One block per distinct command with the per-node values marked, and those values in a table.
    assert "--data-parallel-rank<data-parallel-rank>" in text
    assert text.count("vllmserve/data/models/Kimi-K3") == 2  # prefill and decode, not 16 copies

    # Sealed: only the drawings' data: URIs fetched, no connection attempted.
    assert fetcher.requested and all(u.startswith("data:image/svg+xml") for u in fetcher.requested)
    assert fetcher.refused == []
    assert no_network == []

    # Deterministic: the same revision renders to the same bytes (the task relies on it).
    if lang == "en":
        assert render_proposal_pdf(revision, edition="internal") == pdf


@pytest.mark.django_db
def test_a_plan_without_sections_still_makes_a_document(engineer):
    """Sections the engine left empty say so instead of breaking the proposal."""
    from documents.pdf import proposal_html
    from quotes.models import QuoteRevision

    revision = sample_quote_create(by=engineer, language="en")
    result = dict(revision.result_json)
    for section in ("memory", "power", "racks", "network", "performance", "tco", "launch"):
        result[section] = None
    QuoteRevision.objects.filter(pk=revision.pk).update(result_json={**result, "ok": False})
    revision.refresh_from_db()
    html = proposal_html(revision, edition="internal")
    assert html.count("Not available: the plan has errors.") == 4  # sizing, racks, power, network
    assert "No launch configuration: the plan has errors." in html
    customer = proposal_html(revision)  # the customer edition has no launch appendix
    assert customer.count("Not available: the plan has errors.") == 4
    assert "No launch configuration" not in customer
    assert "no total cost of ownership is shown" in html


# --------------------------------------------------------------------------- security


@pytest.mark.django_db
def test_user_text_is_escaped_and_nothing_is_fetched(engineer, no_network):
    revision = sample_quote_create(by=engineer, language="en", customer=HOSTILE_NAME, title=HOSTILE_TITLE)
    # A second revision carrying the hostile note as its "what changed".
    revision = revision_create_from(revision=revision, changes={"note": HOSTILE_NOTE}, by=engineer)
    fetcher = SafeURLFetcher()
    pdf = render_proposal_pdf(revision, fetcher=fetcher)
    text = pdf_text(pdf)

    # The fetcher was asked for nothing outside data:/static:, and no socket was opened.
    assert all(url.startswith(("data:", "static:")) for url in fetcher.requested), fetcher.requested
    assert not any(s in url for url in fetcher.requested for s in ("passwd", "10.0.0.1", "127.0.0.1"))
    assert fetcher.refused == []
    assert no_network == []
    # The user's text shows literally, markup and all; no file content made it in.
    assert squash(HOSTILE_NAME) in squash(text)
    assert squash('<a href="http://10.0.0.1/internal">link</a>') in squash(text)
    assert squash('<link rel=stylesheet href="http://127.0.0.1:9/x.css">') in squash(text)
    assert "root:x:0:0" not in text


def test_fetcher_refuses_files_network_and_traversal_in_raw_html(no_network):
    """Even unescaped markup (which the templates never produce) cannot reach a file or the network."""
    html = """<html><head>
      <link rel="stylesheet" href="http://127.0.0.1:9/x.css">
      <link rel="stylesheet" href="file:///etc/passwd">
      <style>@import url("https://10.0.0.1/y.css"); body { background: url(ftp://10.0.0.1/bg.png) }</style>
    </head><body>
      <img src="file:///etc/passwd">
      <img src="static:../../../../etc/passwd">
      <img src="static:css/%2e%2e/%2e%2e/%2e%2e/etc/passwd">
      <img src="static:/etc/passwd">
      <img src="gopher://10.0.0.1/">
      <object data="file:///etc/passwd"></object>
      <a rel="attachment" href="file:///etc/passwd">attachment</a>
      <img src="data:image/svg+xml;utf8,&lt;svg xmlns='http://www.w3.org/2000/svg' width='4' height='4'/&gt;">
      <p>body text</p>
    </body></html>"""
    fetcher = SafeURLFetcher()
    pdf = weasyprint.HTML(string=html, base_url=None, url_fetcher=fetcher).write_pdf()
    text = pdf_text(pdf)
    assert "body text" in text and "root:x:0:0" not in text
    assert b"root:x:0:0" not in pdf
    assert fetcher.served == [u for u in fetcher.requested if u.startswith("data:")]
    assert len(fetcher.served) == 1
    refused = " ".join(fetcher.refused)
    for needle in (
        "127.0.0.1:9",
        "file:///etc/passwd",
        "10.0.0.1/y.css",
        "ftp://",
        "static:../",
        "%2e%2e",
        "gopher:",
    ):
        assert needle in refused, needle
    assert no_network == []


def test_fetcher_serves_the_apps_static_files_only(settings, tmp_path):
    fetcher = SafeURLFetcher()
    response = fetcher.fetch("static:css/app.css")  # static/css/app.css of the project
    assert response.read() == (settings.BASE_DIR / "static" / "css" / "app.css").read_bytes()
    assert response.content_type == "text/css"
    for url in (
        "static:../config/settings.py",
        "static:css/../../config/settings.py",
        "static:config/settings.py",  # not a static file
        "static:css/app.py",  # not an embeddable type
        "static:",
        "file:///etc/passwd",
        "http://127.0.0.1:9/x.css",
        "https://example.com/x.png",
        "/etc/passwd",
        "css/app.css",
    ):
        with pytest.raises(RefusedURL):
            fetcher.fetch(url)
    # A symlink inside a static folder that points outside it is refused too.
    static_dir = tmp_path / "static"
    static_dir.mkdir()
    (static_dir / "leak.css").symlink_to("/etc/passwd")
    settings.STATICFILES_DIRS = [str(static_dir)]
    from django.contrib.staticfiles import finders

    finders.get_finder.cache_clear()
    try:
        with pytest.raises(RefusedURL):
            SafeURLFetcher().fetch("static:leak.css")
    finally:
        finders.get_finder.cache_clear()


def test_css_strings_cannot_break_out_of_the_style_element():
    hostile = 'x"; } body { background: url(http://10.0.0.1/) } </style><script>'
    escaped = css_string(hostile)
    assert escaped.startswith('"') and escaped.endswith('"')
    assert '"' not in escaped[1:-1] and "<" not in escaped and "}" not in escaped
    assert page_counter_css("第 %(page)s 页，共 %(pages)s 页").count("counter(") == 2


# --------------------------------------------------------------------------- fonts


def test_harfbuzz_detection_follows_weasyprint(monkeypatch, caplog):
    from weasyprint.text import ffi

    expected = ffi.harfbuzz_subset is not None and bool(ffi.harfbuzz.hb_version_atleast(4, 1, 0))
    assert harfbuzz_subset_available() is expected

    monkeypatch.setattr(ffi, "harfbuzz_subset", None)
    pdf_fonts.check_font_subsetting.cache_clear()
    try:
        assert harfbuzz_subset_available() is False
        with caplog.at_level(logging.WARNING, logger="documents.pdf.fonts"):
            notice = pdf_speed_notice()
        assert "libharfbuzz-subset0" in notice
        assert any("HarfBuzz-Subset" in r.message for r in caplog.records)
    finally:
        pdf_fonts.check_font_subsetting.cache_clear()


def test_no_notice_when_harfbuzz_subset_is_there():
    pdf_fonts.check_font_subsetting.cache_clear()
    if not harfbuzz_subset_available():
        pytest.skip("libharfbuzz-subset0 is not installed here")
    assert pdf_speed_notice() == ""


# --------------------------------------------------------------------------- garbage collector


def test_the_collector_is_paused_during_a_render_and_resumes_after_the_last_one():
    """``collector_paused`` nests (overlapping renders in threads) and always restores the collector."""
    import gc

    from documents.pdf.render import collector_paused

    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer render is still running
    assert gc.isenabled()

    with pytest.raises(RuntimeError), collector_paused():
        raise RuntimeError("a render that fails")
    assert gc.isenabled()

    gc.disable()  # a process that runs without the collector keeps it off
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
