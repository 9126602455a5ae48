"""The configurator as a presales engineer uses it, in headless Chromium.

Log in, build the validated 4 × Atlas 800 A3 configuration from a scenario,
read the verdicts, move to 8P8D without reloading the page, change the
commercial inputs, type something absurd, save a quote, download its proposal
PDF and the launch bundle, switch to Chinese — and the same form without
JavaScript.  Expected figures come from docs/domain.md (sections cited beside them)
or are derived in the test from figures the page showed a moment before.
"""

from __future__ import annotations

import io
import re
import subprocess
import zipfile
from decimal import Decimal

import pytest
from django.urls import NoReverseMatch, reverse
from playwright.sync_api import expect

from .conftest import log_in, watch_js_errors

pytestmark = pytest.mark.browser

UPDATE = "/configurator/update"
PRESET = "/configurator/preset"


def _is_update(response) -> bool:
    return response.url.split("?")[0].endswith(UPDATE) and response.request.method == "POST"


def change_and_wait(page, action, *, path: str = UPDATE) -> None:
    """Run ``action`` (fill/select) and wait for the htmx request it triggers to be answered and swapped."""
    with page.expect_response(lambda r: r.url.split("?")[0].endswith(path)) as info:
        action()
    assert info.value.status == 200, f"{path} answered {info.value.status}"
    page.wait_for_function("() => !document.querySelector('.htmx-request, .htmx-settling, .htmx-swapping')")


def layout_rows(page) -> list[str]:
    """The architecture table's rows as text ("cluster serve 4 64 TP16 · DP4 · EP64 14")."""
    # The table's own rows (a "why?" holds a small table of its own), without the "why?" buttons.
    rows = page.locator("#results .card:has(.drawing.topology) > table > tbody > tr")
    return [" ".join(t.replace("why?", "").split()) for t in rows.all_inner_texts()]


def money(text: str) -> Decimal:
    """The first amount in a table cell ("¥302.07" → 302.07)."""
    match = re.search(r"\d[\d,]*(?:\.\d+)?", text)
    assert match, f"no amount in {text!r}"
    return Decimal(match.group(0).replace(",", ""))


def mark_page(page) -> None:
    """Remember this document: a full reload or navigation would lose the marker and count a navigation."""
    page.evaluate("window.__e2eMarker = 'same document'")
    page.navigations = []
    page.on("framenavigated", lambda frame: frame == page.main_frame and page.navigations.append(frame.url))


def assert_same_document(page) -> None:
    assert page.evaluate("window.__e2eMarker") == "same document", "the page was reloaded"
    assert page.navigations == [], f"the page navigated: {page.navigations}"


def assert_no_js_errors(page) -> None:
    assert page.js_errors == [], page.js_errors


# --------------------------------------------------------------------------- the configurator in place


def test_log_in_then_a_scenario_preset_builds_the_4_node_a3_plan(context, site):
    page = context.new_page()
    watch_js_errors(page)
    log_in(page, site)  # the log-in form redirects to the configurator
    page.wait_for_selector("#config-form")
    mark_page(page)
    # A scenario pre-fills the workload and the recommended topology (catalog seed:
    # multimodal knowledge base → single cluster of 8 × A3, images needed).
    change_and_wait(
        page, lambda: page.select_option("#id_scenario", "multimodal-knowledge-base"), path=PRESET
    )
    expect(page.locator("#id_nodes")).to_have_value("8")
    expect(page.locator("#id_topology")).to_have_value("single")
    expect(page.locator("#id_server")).to_have_value("atlas-800-a3")
    expect(page.locator("#id_needs_vision")).to_be_checked()
    expect(page.locator("#id_scenario")).to_have_value("multimodal-knowledge-base")
    assert "TP16 · DP8 · EP128" in " ".join(layout_rows(page))

    # The verdict strip: one badge per area, and the overall verdict.
    badges = page.locator("#verdicts .badge[data-area]")
    areas = set(badges.evaluate_all("els => els.map(e => e.dataset.area)"))
    assert {"memory", "power", "network", "racks"} <= areas, areas
    for badge in badges.all():
        assert re.search(r"\b(ok|warning|error)\b", badge.get_attribute("class"))
    expect(page.locator("#verdicts")).to_contain_text("This deployment")

    # Down to the validated 4 × A3 (docs/domain.md §4 item 1): DP4 / TP16 / EP64, 896 experts → 14 per rank.
    change_and_wait(page, lambda: page.fill("#id_nodes", "4"))
    rows = layout_rows(page)
    assert len(rows) == 1 and rows[0].endswith("4 64 TP16 · DP4 · EP64 14"), rows
    expect(page.locator("#id_needs_vision")).to_be_checked()  # the rest of the preset stays
    assert_same_document(page)
    assert_no_js_errors(page)


def test_switching_to_8p8d_updates_the_results_without_reloading(page):
    mark_page(page)
    assert "TP16 · DP4 · EP64" in " ".join(layout_rows(page))
    change_and_wait(page, lambda: page.select_option("#id_topology", "disaggregated"))
    change_and_wait(page, lambda: page.fill("#id_nodes", "16"))
    # docs/domain.md §10: 16 × A3 as 8P8D — two groups of 8 nodes, each DP8 / TP16 / EP128
    # (896 experts / 128 ranks = 7 per rank).
    rows = layout_rows(page)
    assert len(rows) == 2, rows
    assert rows[0].lower().startswith("prefill") and rows[0].endswith("8 128 TP16 · DP8 · EP128 7"), rows
    assert rows[1].lower().startswith("decode") and rows[1].endswith("8 128 TP16 · DP8 · EP128 7"), rows
    # The prefill : decode balance appears, and a launch command for each of the 16 nodes.
    expect(page.locator("#results")).to_contain_text("Prefill : decode capacity")
    expect(page.locator("#results details pre[id^='cmd-']")).to_have_count(16)
    assert_same_document(page)
    assert_no_js_errors(page)


def test_verdict_badges_follow_every_in_place_update(page):
    for nodes in ("8", "16"):
        change_and_wait(page, lambda n=nodes: page.fill("#id_nodes", n))
        expect(page.locator("#verdicts .badge[data-area='memory']")).to_have_count(1, timeout=2_000)


def test_changing_utilisation_changes_the_cost_per_million_tokens(page):
    mark_page(page)
    # The line at the stated load (the design-capacity line, also "Self-hosted, buy", follows it).
    row = page.locator("#results tr:has(td:text-is('Self-hosted, buy')):has-text('at the stated load')")
    cells = row.locator(":scope > td.num")  # not the numbers inside its "why?"
    before = [money(t) for t in cells.all_inner_texts()]
    change_and_wait(page, lambda: page.fill("#id_utilisation", "0.3"))
    after = [money(t) for t in cells.all_inner_texts()]
    # The yearly cost does not depend on utilisation and the tokens served are
    # proportional to it, so halving it (0.6 → 0.3) doubles the cost per token
    # (to the cent the page rounds to).
    assert len(before) == len(after) == 2
    for b, a in zip(before, after, strict=True):
        assert abs(a - 2 * b) <= Decimal("0.02"), (before, after)
    assert_same_document(page)
    assert_no_js_errors(page)


def test_zero_nodes_shows_a_field_error_beside_the_input(page):
    mark_page(page)
    change_and_wait(page, lambda: page.fill("#id_nodes", "0"))
    # The message sits in the nodes field's own slot, under the input.
    error = page.locator("#f-nodes #err-nodes .field-error")
    expect(error).to_have_count(1)
    expect(error).to_contain_text("greater than or equal to 1")
    expect(page.locator("#results")).to_contain_text("Fix the highlighted inputs")
    expect(page.locator("#results .drawing.topology")).to_have_count(0)
    # Correcting the value clears the message and brings the plan back.
    change_and_wait(page, lambda: page.fill("#id_nodes", "4"))
    expect(page.locator("#err-nodes .field-error")).to_have_count(0)
    assert "TP16 · DP4 · EP64" in " ".join(layout_rows(page))
    assert_same_document(page)
    assert_no_js_errors(page)


# --------------------------------------------------------------------------- quote, PDF, bundle


def save_as_quote(page, customer: str) -> str:
    """Save the configuration on the page as a quote; returns the quote number shown."""
    page.fill("#q-customer", customer)
    page.fill("#q-title", "4 × A3 Kimi K3")
    with page.expect_navigation():
        page.click("#quote-form button[type=submit]")
    assert re.search(r"/quotes/\d+/", page.url), page.url
    number = page.locator("h1 .mono").inner_text().strip()
    assert re.fullmatch(r"Q-\d{4}-\d{4,}", number), number
    return number


def _pdf_views_wired() -> bool:
    try:
        reverse("quotes:pdf_render", args=[1])
    except NoReverseMatch:
        return False
    return True


def test_save_as_quote_then_render_and_download_the_proposal_pdf(page, pdftotext):
    from quotes.models import Quote

    number = save_as_quote(page, "E2E Bank of Examples")
    expect(page.locator(".messages")).to_contain_text(number)
    expect(page.locator("table.facts")).to_contain_text("E2E Bank of Examples")
    # The revision froze the configuration the page showed: 4 × A3, automatic layout.
    quote = Quote.objects.get(number=number)
    revision = quote.revisions.get()
    assert quote.owner.username == "engineer"
    assert revision.request_json["topology"] == {"kind": "single", "nodes": 4, "parallel": "auto"}
    assert revision.result_json["ok"] is True
    assert revision.lines.exists() and revision.net_total > 0

    if not _pdf_views_wired():
        pytest.skip("the proposal PDF views (documents/urls.py) are not wired into config/urls.py yet")
    panel = page.locator("[id^='pdf-status-']")
    expect(panel).to_have_count(1)
    if panel.get_attribute("data-pdf-status") != "ready":
        panel.locator("button[type=submit]").first.click()
    download_link = page.locator("[id^='pdf-status-'] a[href$='/pdf/']")
    expect(download_link).to_be_visible(timeout=90_000)  # WeasyPrint with the CJK font takes seconds
    expect(page.locator("[id^='pdf-status-']")).to_have_attribute("data-pdf-status", "ready")
    with page.expect_download() as info:
        download_link.click()
    download = info.value
    assert download.suggested_filename == f"{number}-R1.pdf"
    content = open(download.path(), "rb").read()
    assert content.startswith(b"%PDF-") and b"%%EOF" in content[-1024:]
    text = subprocess.run(
        [pdftotext, "-", "-"], input=content, capture_output=True, check=True, timeout=60
    ).stdout.decode()
    assert number in text and "E2E Bank of Examples" in text
    revision.refresh_from_db()
    assert revision.pdf_status == "ready" and revision.pdf_attempts == 1
    assert_no_js_errors(page)


def test_launch_bundle_downloads_one_script_per_node(page):
    button = page.locator("#results form[action$='/configurator/bundle'] button[type=submit]")
    expect(button).to_be_enabled()
    with page.expect_download() as info:
        button.click()
    download = info.value
    assert download.suggested_filename.endswith(".zip")
    names = zipfile.ZipFile(io.BytesIO(open(download.path(), "rb").read())).namelist()
    # The default plan is 4 × A3: one launch script per node.
    # one node script per node at the top level (docker/ holds the container wrappers of the same scripts)
    assert len([n for n in names if n.endswith(".sh") and n.startswith("node-")]) == 4, names
    assert_no_js_errors(page)


def test_switching_the_language_shows_chinese(page):
    assert page.locator("html").get_attribute("lang") == "en"
    with page.expect_navigation():
        page.click("form.langswitch button[value='zh-hans']")
    assert page.locator("html").get_attribute("lang") == "zh-hans"
    expect(page.locator("nav.mainnav")).to_contain_text("配置器")
    expect(page.locator("header .brand")).to_have_text("大模型推理集群配置器")
    # Scenario names come from the catalog in the chosen language.
    from catalog.models import Scenario

    scenario = Scenario.objects.get(slug="software-engineering-agent")
    expect(page.locator("#id_scenario option[value='software-engineering-agent']")).to_have_text(
        scenario.name_zh
    )
    # And the configurator still works in place after the switch.
    change_and_wait(page, lambda: page.fill("#id_nodes", "8"))
    assert "TP16 · DP8 · EP128" in " ".join(layout_rows(page))
    assert_no_js_errors(page)


# --------------------------------------------------------------------------- without JavaScript


def test_the_form_works_without_javascript(browser, site):
    context = browser.new_context(java_script_enabled=False, locale="en-US")
    try:
        page = context.new_page()
        log_in(page, site)
        page.goto(site + "/")
        page.fill("#id_nodes", "8")
        page.select_option("#id_topology", "primary_standby")
        with page.expect_navigation() as nav:
            page.click("#config-form button[type=submit]")
        assert nav.value.status == 200
        # A plain POST answers the whole page, form and results, with the new values.
        assert page.locator("html").count() == 1 and page.locator("#config-form").count() == 1
        expect(page.locator("#id_nodes")).to_have_value("8")
        body = page.locator("#results").inner_text()
        # docs/domain.md §7: 8 × 16.2 kW = 129.6 kW of servers.
        assert "129.6 kW" in body
        expect(page.locator("#verdicts .badge[data-area='power']")).to_have_count(1)

        # An absurd value comes back as a field error beside the input, not a 500.
        page.fill("#id_nodes", "0")
        with page.expect_navigation() as nav:
            page.click("#config-form button[type=submit]")
        assert nav.value.status == 200
        expect(page.locator("#f-nodes .field-error")).to_contain_text("greater than or equal to 1")
    finally:
        context.close()


def test_a_why_opened_after_an_update_loads_its_explanation(page):
    """The update sends each "why?" closed and empty; opening one loads the explanation the full page
    shows inline (docs/performance.md §10): the TPOT's formula over the decode step, in the same document."""
    mark_page(page)
    change_and_wait(page, lambda: page.fill("#id_nodes", "8"))
    row = page.locator("#results tr", has_text="Time per output token, mean").first
    why = row.locator("details.why").first
    expect(why.locator(".formula")).to_have_count(0)
    with page.expect_response(lambda r: r.url.split("?")[0].endswith("/configurator/why")) as info:
        why.locator("summary").click()
    assert info.value.status == 200
    expect(why.locator(".formula")).to_have_count(1, timeout=5_000)
    expect(why).to_contain_text("decode_step_s")
    assert_same_document(page)
    assert_no_js_errors(page)
