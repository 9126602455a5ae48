"""Issue 13: the configurator works in Chromium under the Content-Security-Policy header.

Any script the policy blocks (an inline one without the nonce, an eval by
htmx) is reported by the browser as a ``securitypolicyviolation`` event; the
test records them from the first byte of each document (an init script, which
the page's CSP does not govern) and asserts there are none after loading the
configurator, choosing a scenario and editing a field.  It also checks that
the scenario selector loads only its preset (static/js/app.js keeps the live
form from re-planning on it, what the eval'd trigger filter did before).
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from .conftest import session_cookie_for, watch_js_errors
from .test_configurator_flow import PRESET, UPDATE, change_and_wait

pytestmark = pytest.mark.browser

RECORD_VIOLATIONS = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", function (e) {
  window.__cspViolations.push(e.violatedDirective + " " + (e.blockedURI || "inline") + " " + (e.sample || ""));
});
"""


def test_the_configurator_runs_under_the_csp_without_violations(context, site):
    context.add_init_script(RECORD_VIOLATIONS)
    session_cookie_for(context, site)
    page = context.new_page()
    watch_js_errors(page)
    response = page.goto(site + "/")
    assert "script-src 'self' 'nonce-" in response.headers["content-security-policy"]
    page.wait_for_selector("#config-form")

    requests = []
    page.on("request", lambda r: requests.append(r.url.split("?")[0]))
    change_and_wait(
        page, lambda: page.select_option("#id_scenario", "multimodal-knowledge-base"), path=PRESET
    )
    expect(page.locator("#id_nodes")).to_have_value("8")
    page.wait_for_timeout(700)  # longer than the live form's 400 ms delay
    assert not [u for u in requests if u.endswith(UPDATE)], "the scenario change also re-planned"

    change_and_wait(page, lambda: page.fill("#id_nodes", "4"))
    expect(page.locator("#results")).to_contain_text("TP16 · DP4 · EP64")
    assert page.evaluate("window.__cspViolations") == []
    assert page.js_errors == []
