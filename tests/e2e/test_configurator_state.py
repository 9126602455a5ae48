"""Issue 17: the configurator never loses what was typed, and its one-click
fixes do what they say, in headless Chromium (with JavaScript, and without).

The "first keystroke eaten" bug: the quote header (customer, title, discount)
sat inside the results panel that every re-plan replaced; htmx put the focus
back on the new, empty input, so "China Merchants Bank" typed while a re-plan
was in flight arrived as "hina Merchants Bank".  The header now lives outside
the re-planned panels.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from .conftest import log_in, watch_js_errors
from .test_configurator_flow import assert_no_js_errors, change_and_wait, layout_rows

pytestmark = pytest.mark.browser

UPDATE = "/configurator/update"
PRESET = "/configurator/preset"
FIX = "/configurator/fix"
CUSTOMER = "China Merchants Bank"


def test_typed_values_survive_re_plans_a_scenario_and_a_language_switch(page):
    page.fill("#q-title", "Kimi K3 inference cluster")
    page.fill("#q-discount", "0.05")
    # Type the customer while a re-plan is in flight (nodes changed just before).
    page.fill("#id_nodes", "8")
    page.click("#q-customer")
    with page.expect_response(lambda r: r.url.endswith(UPDATE)):
        page.keyboard.type(CUSTOMER, delay=40)
    page.wait_for_function("() => !document.querySelector('.htmx-request, .htmx-settling, .htmx-swapping')")
    expect(page.locator("#q-customer")).to_have_value(CUSTOMER)
    change_and_wait(page, lambda: page.fill("#id_nodes", "16"))
    expect(page.locator("#q-customer")).to_have_value(CUSTOMER)

    # A commercial choice the scenario does not own.
    change_and_wait(page, lambda: page.fill("#id_utilisation", "0.7"))
    # The scenario changes only its own fields and says which, with undo.
    change_and_wait(page, lambda: page.select_option("#id_scenario", "finance-research"), path=PRESET)
    expect(page.locator("#scenario-notice")).to_be_visible()
    expect(page.locator("#id_utilisation")).to_have_value("0.7")
    expect(page.locator("#id_server")).to_have_value("atlas-800-a3")
    expect(page.locator("#q-customer")).to_have_value(CUSTOMER)
    nodes_after_scenario = page.locator("#id_nodes").input_value()
    expect(page.locator("#scenario-notice")).to_contain_text("Nodes")  # 16 → the scenario's count
    assert nodes_after_scenario != "16"

    # The language switch keeps the configuration and the quote header.
    with page.expect_navigation():
        page.click("form.langswitch button[value='zh-hans']")
    assert page.locator("html").get_attribute("lang") == "zh-hans"
    expect(page.locator("#q-customer")).to_have_value(CUSTOMER)
    expect(page.locator("#q-title")).to_have_value("Kimi K3 inference cluster")
    expect(page.locator("#q-discount")).to_have_value("0.05")
    expect(page.locator("#id_nodes")).to_have_value(nodes_after_scenario)
    expect(page.locator("#id_utilisation")).to_have_value("0.7")
    expect(page.locator("#id_scenario")).to_have_value("finance-research")
    assert_no_js_errors(page)


def test_scenario_undo_restores_the_previous_values(page):
    change_and_wait(page, lambda: page.fill("#id_nodes", "8"))
    change_and_wait(
        page, lambda: page.select_option("#id_scenario", "software-engineering-agent"), path=PRESET
    )
    expect(page.locator("#id_topology")).to_have_value("disaggregated")
    change_and_wait(page, lambda: page.click("#scenario-undo"), path=FIX)
    expect(page.locator("#id_topology")).to_have_value("single")
    expect(page.locator("#id_nodes")).to_have_value("8")
    expect(page.locator("#id_scenario")).to_have_value("")
    assert_no_js_errors(page)


def test_typing_quickly_in_number_fields_loses_nothing(page):
    for selector, text in (("#id_max_num_seqs", "24"), ("#id_input_tokens", "16384"), ("#id_nodes", "16")):
        page.fill(selector, "")
        page.click(selector)
        page.keyboard.type(text, delay=25)
        page.wait_for_timeout(600)  # let the debounced re-plan land while the field keeps focus
        page.wait_for_function(
            "() => !document.querySelector('.htmx-request, .htmx-settling, .htmx-swapping')"
        )
        expect(page.locator(selector)).to_have_value(text)
    # 16 × A3: 896 experts need EP128, two pipeline stages inside each node (engine/layout.py).
    assert "TP8 · DP16 · PP2 · EP128" in " ".join(layout_rows(page))
    assert_no_js_errors(page)


def _apply_every_offered_fix(page, submit):
    """Apply each offered fix in turn (re-reading the page after each) and check
    that its finding is gone and no new error appeared."""
    applied = 0
    for _ in range(6):
        buttons = page.locator("#results form.fix button[data-code]")
        if buttons.count() == 0:
            break
        code = buttons.first.get_attribute("data-code")
        errors_before = set(
            page.locator("#results li.error[data-code]").evaluate_all("els => els.map(e => e.dataset.code)")
        )
        submit(buttons.first)
        expect(page.locator(f"#results li[data-code='{code}']")).to_have_count(0)
        errors_after = set(
            page.locator("#results li.error[data-code]").evaluate_all("els => els.map(e => e.dataset.code)")
        )
        assert errors_after <= errors_before, (code, errors_after)
        applied += 1
    return applied


def test_every_offered_fix_works_with_javascript(page):
    expect(page.locator("#q-customer")).to_have_value("")
    page.fill("#q-customer", CUSTOMER)
    change_and_wait(page, lambda: page.select_option("#id_topology", "disaggregated"))
    change_and_wait(page, lambda: page.fill("#id_nodes", "16"))
    # The cooling advice has a working "Apply" (it caps rack power at the air-cooling limit).
    expect(
        page.locator("#results form.fix button[data-code='cooling.rack_exceeds_air_limit']")
    ).to_have_count(1)

    def submit(button):
        change_and_wait(page, button.click, path=FIX)

    assert _apply_every_offered_fix(page, submit) >= 1
    expect(page.locator("#id_topology")).to_have_value("disaggregated")
    expect(page.locator("#id_nodes")).to_have_value("16")
    expect(page.locator("#q-customer")).to_have_value(CUSTOMER)
    assert_no_js_errors(page)


def test_every_offered_fix_works_without_javascript(browser, site):
    context = browser.new_context(java_script_enabled=False, locale="en-US")
    try:
        page = context.new_page()
        watch_js_errors(page)
        log_in(page, site)
        page.goto(site + "/")
        page.fill("#id_nodes", "8")
        page.select_option("#id_topology", "primary_standby")
        with page.expect_navigation():
            page.click("#config-form button[type=submit]")

        def submit(button):
            with page.expect_navigation() as nav:
                button.click()
            assert nav.value.status == 200

        assert _apply_every_offered_fix(page, submit) >= 1
        # The configuration is the re-planned one, not the defaults.
        expect(page.locator("#id_topology")).to_have_value("primary_standby")
        expect(page.locator("#id_nodes")).to_have_value("8")
    finally:
        context.close()


ACK = "/configurator/acknowledge"
WARNING = (
    "memory.max_num_seqs_not_full_length"  # docs/domain.md §9: 16 full-length sequences do not fit 4 × A3
)


def test_accepting_a_warning_with_a_reason_folds_it_and_records_it_on_the_quote(page):
    from quotes.models import QuoteRevision

    item = page.locator(f"#results li[data-code='{WARNING}']")
    item.locator("input[name=reason]").fill("Prompts stay under 32k tokens")
    change_and_wait(page, lambda: item.locator("button", has_text="Accept warning").click(), path=ACK)
    expect(page.locator(f"#results li[data-code='{WARNING}']")).to_have_count(0)
    expect(page.locator(f"#accepted-warnings li[data-accepted='{WARNING}']")).to_have_count(1)
    # It stays accepted through a re-plan that keeps the warning.
    change_and_wait(page, lambda: page.fill("#id_utilisation", "0.7"))
    expect(page.locator(f"#accepted-warnings li[data-accepted='{WARNING}']")).to_have_count(1)
    page.fill("#q-customer", CUSTOMER)
    with page.expect_navigation():
        page.click("#quote-form button[type=submit]")
    revision = QuoteRevision.objects.get()
    assert [(a["code"], a["reason"]) for a in revision.acknowledged_warnings] == [
        (WARNING, "Prompts stay under 32k tokens")
    ]
    expect(page.locator("#acknowledged-warnings")).to_contain_text("Prompts stay under 32k tokens")
    assert_no_js_errors(page)


def test_a_preset_keeps_the_chosen_server_and_offers_the_recommended_one(page):
    # Issue 31: choosing a scenario on NF5868G8 switched the server to Atlas 800 A3 although the
    # help text promised the server stays.
    change_and_wait(page, lambda: page.select_option("#id_server", "nf5868g8"))
    change_and_wait(page, lambda: page.select_option("#id_scenario", "finance-research"), path=PRESET)
    expect(page.locator("#id_server")).to_have_value("nf5868g8")
    expect(page.locator("#scenario-server")).to_contain_text("Atlas 800 A3")
    # The one click to the scenario's recommendation.
    change_and_wait(page, lambda: page.click("#use-recommended-server"), path=FIX)
    expect(page.locator("#id_server")).to_have_value("atlas-800-a3")
    assert_no_js_errors(page)


def test_a_fix_applied_under_one_scenario_is_listed_after_switching_and_start_over_restores(page):
    change_and_wait(
        page, lambda: page.select_option("#id_scenario", "software-engineering-agent"), path=PRESET
    )
    change_and_wait(page, lambda: page.fill("#id_rack_max_kw", "25"))  # what the cooling fix sets
    change_and_wait(page, lambda: page.select_option("#id_scenario", "finance-research"), path=PRESET)
    expect(page.locator("#id_rack_max_kw")).to_have_value("25")  # the scenario does not own it …
    differences = page.locator("#preset-differences")
    expect(differences.locator('tr[data-field="rack_max_kw"]')).to_be_visible()  # … and the page says so
    # Start over: the preset's settings, the cap gone, nothing left to list.
    change_and_wait(page, lambda: page.click("#start-over"), path=FIX)
    expect(page.locator("#id_rack_max_kw")).to_have_value("")
    expect(page.locator("#id_scenario")).to_have_value("finance-research")
    expect(page.locator("#preset-differences")).to_have_count(0)
    assert_no_js_errors(page)
