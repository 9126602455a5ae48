"""The htmx update sends the results without their advice; the advice fragment sends, right after, the
findings with each proven fix's "Apply" and the recommended serving settings — the same the full page
(also the no-JavaScript page) shows inline, from the plans the update and the proofs made."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from configurator.web import fixes
from configurator.web.presets import preset_data

pytestmark = pytest.mark.django_db

# 16 × A3 8P8D with max_num_seqs 8 typed in below the design point's: a recommendation to raise it
# (engine/serving_advice.py), and the cooling finding's proven rack cap
CHANGES = {
    "topology": "disaggregated",
    "nodes": "16",
    "prefill_nodes": "8",
    "decode_nodes": "8",
    "ttft_p90_target_s": "10",
    "tpot_p90_target_ms": "250",
    "max_num_seqs": "8",
}


def _form() -> dict:
    return {**preset_data(None), **CHANGES}


APPLY = re.compile(r'<button type="submit" class="small" data-code="([^"]+)">')


@pytest.fixture
def engineer_client(client, catalog, users):
    client.force_login(users["engineer"])
    client.cookies["django_language"] = "en"
    return client


def _section(body: str, element_id: str) -> str:
    start = body.index(f'<div id="{element_id}"')
    return body[start:]


def test_the_update_defers_the_advice_and_the_fragment_brings_the_full_pages(engineer_client, monkeypatch):
    FORM = _form()
    page = engineer_client.post("/", FORM).content.decode()
    offered = APPLY.findall(page)
    assert (
        "performance.serving_settings_recommended" in offered and "cooling.rack_exceeds_air_limit" in offered
    )

    proofs = []
    real = fixes.proven_fixes

    def counting(*args, **kwargs):
        proofs.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(fixes, "proven_fixes", counting)
    update = engineer_client.post(
        reverse("configurator:update"), FORM, HTTP_HX_REQUEST="true"
    ).content.decode()
    # the results without their advice: no fix proven, no "Apply", no recommendation; the loader asks for it
    assert proofs == [] and APPLY.findall(update) == []
    assert "Use the recommended serving settings" not in update
    assert f'hx-post="{reverse("configurator:advice")}" hx-trigger="load" hx-include="#config-form"' in update
    assert '<div id="findings">' in update and '<div id="recommendation">' in update

    fragment = engineer_client.post(reverse("configurator:advice"), FORM, HTTP_HX_REQUEST="true")
    assert fragment.status_code == 200
    body = fragment.content.decode()
    # both blocks swapped in place (out of band), with the full page's fixes
    assert '<div id="findings" hx-swap-oob="true">' in body
    assert '<div id="recommendation" hx-swap-oob="true">' in body
    assert sorted(APPLY.findall(body)) == sorted(offered)
    assert _section(body, "recommendation").count("Use the recommended serving settings") == 1


def test_the_advice_of_a_form_that_does_not_plan_is_empty(engineer_client):
    bad = {**_form(), "nodes": "0"}
    response = engineer_client.post(reverse("configurator:advice"), bad, HTTP_HX_REQUEST="true")
    assert response.status_code == 200 and response.content.decode() == ""
