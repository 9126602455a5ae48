"""The quote workflow in headless Chromium (issue 18 acceptance).

* An engineer revises R1's configuration from 8 to 16 nodes and gets R2 of the
  same quote; R1 and its PDF are unchanged; comparing R1 and R2 shows the node
  and switch lines changed by SKU and the totals' difference.
* A customer link opened in a fresh browser context (no log-in) shows the
  customer edition and the PDF; the customer accepts and the quote becomes
  accepted; after revocation the link is a 404.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
from decimal import Decimal

import pytest
from playwright.sync_api import expect

from .conftest import watch_js_errors
from .test_configurator_flow import assert_no_js_errors, change_and_wait

pytestmark = pytest.mark.browser


def sha256(field) -> str:
    with field.open("rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def set_nodes(page, value: str) -> None:
    """Type a node count and leave the field, as a person does, and wait for the page to settle.

    Leaving the field fires ``change`` (a second in-place update after the one ``input``
    started): without waiting for it, it would replace the save form typed into next.
    """

    def type_and_leave():
        page.fill("#id_nodes", value)
        page.locator("#id_nodes").press("Tab")

    change_and_wait(page, type_and_leave)
    page.wait_for_load_state("networkidle")
    page.wait_for_function("() => !document.querySelector('.htmx-request, .htmx-settling, .htmx-swapping')")


def render_pdf(page) -> None:
    panel = page.locator("[id^='pdf-status-']")
    if panel.get_attribute("data-pdf-status") != "ready":
        panel.locator("button[type=submit]").first.click()
    expect(page.locator("[id^='pdf-status-']")).to_have_attribute("data-pdf-status", "ready", timeout=90_000)


def test_revise_r1_from_8_to_16_nodes_gives_r2_and_compare_shows_it_by_sku(page):
    from quotes.models import Quote

    # Primary/standby, as in docs/domain.md's 8-node A3 example (one K3 replica per 4-node half;
    # 16 nodes make two 8-node halves, where a single 16-node engine would split K3's experts unevenly).
    change_and_wait(page, lambda: page.select_option("#id_topology", "primary_standby"))
    set_nodes(page, "8")
    expect(page.locator("#id_nodes")).to_have_value("8")
    page.fill("#q-customer", "E2E Revise Bank")
    with page.expect_navigation(timeout=60_000):  # planning and rendering share 2 busy cores
        page.click("#quote-form button[type=submit]")
    quote = Quote.objects.get(customer__name="E2E Revise Bank")
    r1 = quote.revisions.get()
    assert r1.request_json["topology"]["nodes"] == 8
    with page.expect_navigation(timeout=60_000):  # planning and rendering share 2 busy cores
        page.click("form[action$='/issue/'] button[type=submit]")
    render_pdf(page)
    r1.refresh_from_db()
    before = {
        "snapshot": r1.snapshot_sha256,
        "pdf": sha256(r1.pdf_file),
        "net": r1.net_total,
        "status": r1.status,
    }
    assert before["status"] == "issued"

    # "Revise the configuration" opens the configurator on R1's request.
    with page.expect_navigation(timeout=60_000):  # planning and rendering share 2 busy cores
        page.click("#revise-configuration")
    page.wait_for_selector("#config-form")
    expect(page.locator("#id_nodes")).to_have_value("8")
    expect(page.locator("#revise-save")).to_contain_text(r1.number)
    set_nodes(page, "16")
    expect(page.locator("#revise-save")).to_be_visible()  # still revising after the in-place update
    page.fill("#rev-note", "Customer asked for 16 nodes")
    with page.expect_navigation(timeout=60_000):  # planning and rendering share 2 busy cores
        page.click("#revise-save button[type=submit]")
    assert re.search(rf"/quotes/{quote.pk}/\?rev=2$", page.url), page.url
    expect(page.locator(".messages")).to_contain_text(f"{quote.number}-R2")
    assert Quote.objects.count() == 1
    r2 = quote.revisions.get(index=2)
    assert r2.request_json["topology"]["nodes"] == 16 and r2.status == "draft" and r2.based_on_id == r1.pk
    servers = {line.category: line for line in r2.lines.all()}["server"]
    assert servers.quantity == 16

    # R1 and its PDF are unchanged.
    r1.refresh_from_db()
    assert (r1.snapshot_sha256, sha256(r1.pdf_file), r1.net_total, r1.status) == (
        before["snapshot"],
        before["pdf"],
        before["net"],
        "issued",
    )

    # Compare R1 with R2: lines matched by SKU, node and switch lines changed, the total explained.
    page.goto(page.url.split("/quotes/")[0] + f"/quotes/{quote.pk}/compare/?a=1&b=2")
    server_sku = servers.sku
    expect(page.locator(f"#item-compare tr[data-sku='{server_sku}']")).to_have_attribute(
        "data-kind", "changed"
    )
    expect(page.locator(f"#item-compare tr[data-sku='{server_sku}']")).to_contain_text("16")
    changed_switches = [
        line.sku
        for line in r2.lines.filter(category="switch")
        if not r1.lines.filter(category="switch", sku=line.sku, quantity=line.quantity).exists()
    ]
    assert changed_switches, "16 nodes need more switches than 8"
    for sku in changed_switches:
        expect(page.locator(f"#item-compare tr[data-sku='{sku}']")).to_have_attribute(
            "data-kind", re.compile("changed|added")
        )
    delta = r2.net_total - r1.net_total
    assert delta > 0
    expect(page.locator("#total-explained tr.total")).to_contain_text(f"{delta:,.2f}")
    assert_no_js_errors(page)


def test_a_customer_link_works_without_log_in_records_acceptance_and_dies_when_revoked(
    page, browser, site, pdftotext
):
    from quotes.models import Quote

    page.fill("#q-customer", "E2E Share Bank")
    with page.expect_navigation(timeout=60_000):  # planning and rendering share 2 busy cores
        page.click("#quote-form button[type=submit]")
    quote = Quote.objects.get(customer__name="E2E Share Bank")
    with page.expect_navigation(timeout=60_000):  # planning and rendering share 2 busy cores
        page.click("#share-create")
    url = page.locator("#share-url").input_value()
    assert url.startswith(site + "/quotes/shared/"), url
    r1 = quote.revisions.get()
    r1.refresh_from_db()
    assert r1.status == "issued" and r1.pdf_status == "ready"  # creating the link sent the quote

    customer = browser.new_context(locale="en-US", accept_downloads=True)
    try:
        cpage = customer.new_page()
        watch_js_errors(cpage)
        response = cpage.goto(url)
        assert response.status == 200
        expect(cpage.locator("h1")).to_contain_text(r1.number)
        expect(cpage.locator("body")).to_contain_text("E2E Share Bank")
        expect(cpage.locator("body")).to_contain_text(f"{r1.net_total:,.2f}")
        # Nothing internal: no navigation, no link outside this offer.
        hrefs = cpage.eval_on_selector_all("a[href]", "els => els.map(e => e.getAttribute('href'))")
        assert hrefs and all(h.startswith(url.replace(site, "")) for h in hrefs), hrefs
        with cpage.expect_download() as info:
            cpage.click("a[data-pdf]")
        content = open(info.value.path(), "rb").read()
        assert content.startswith(b"%PDF-")
        text = subprocess.run([pdftotext, "-", "-"], input=content, capture_output=True, check=True).stdout
        assert r1.number.encode() in text
        # The customer accepts.
        cpage.fill("#acc-name", "Li Wei")
        cpage.fill("#acc-title", "CIO")
        cpage.check("input[name=confirm]")
        with cpage.expect_navigation(timeout=60_000):
            cpage.click("#accept button[type=submit]")
        expect(cpage.locator("#accept")).to_contain_text("Accepted by Li Wei (CIO)")
        quote.refresh_from_db()
        assert quote.status == "accepted"
        acceptance = r1.__class__.objects.get(pk=r1.pk).customer_acceptance
        assert acceptance.ip == "127.0.0.1" and acceptance.name == "Li Wei"
        assert_no_js_errors(cpage)

        # The engineer sees it and revokes the link: the customer gets a 404.
        page.goto(f"{site}/quotes/{quote.pk}/")
        expect(page.locator("#workflow")).to_contain_text("Accepted by the customer")
        with page.expect_navigation(timeout=60_000):  # planning and rendering share 2 busy cores
            page.click("#workflow form[action$='/revoke/'] button")
        assert cpage.goto(url).status == 404
        assert cpage.goto(url + "proposal.pdf").status == 404
    finally:
        customer.close()
    assert Decimal(r1.net_total) > 0
