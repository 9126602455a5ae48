"""Issue 17: state that survives — scenarios change only their own fields (and
say so, with undo), the configuration is remembered across a reload or a
language switch, and the quote header is never inside a re-planned fragment."""

from __future__ import annotations

import html
import json
import re

import pytest
from django.urls import reverse

from configurator.web.presets import SCENARIO_FIELDS, apply_scenario, preset_data

pytestmark = pytest.mark.django_db


@pytest.fixture
def engineer_client(client, catalog, users):
    client.force_login(users["engineer"])
    client.cookies["django_language"] = "en"
    return client


def test_a_scenario_changes_only_the_fields_it_owns(catalog):
    before = preset_data(None)
    before.update(server="atlas-800-a2", utilisation="0.7", gpu_memory_utilization="0.9", om_per_year="1000")
    after, changed = apply_scenario(before, "software-engineering-agent")
    assert set(changed) <= set(SCENARIO_FIELDS)
    for key in set(before) | set(after):
        if key not in SCENARIO_FIELDS:
            assert after.get(key) == before.get(key), key
    # Catalog seed: the coding-agent scenario recommends 16 × A3 as 8P8D.
    assert after["topology"] == "disaggregated" and "topology" in changed
    assert after["utilisation"] == "0.7" and after["om_per_year"] == "1000"


def test_htmx_scenario_answers_the_changed_fields_out_of_band_with_undo(engineer_client):
    data = preset_data(None)
    data["nodes"] = "8"
    response = engineer_client.post(
        reverse("configurator:preset"),
        {**data, "scenario": "software-engineering-agent", "applied_scenario": ""},
        HTTP_HX_REQUEST="true",
    )
    body = response.content.decode()
    assert response.status_code == 200
    assert body.lstrip().startswith('<section id="results"')
    # The changed values travel as an event the page's script sets in place: no input is replaced.
    fields = json.loads(response["HX-Trigger"])["configurator:set-fields"]["fields"]
    assert fields["topology"] == "disaggregated" and fields["nodes"] == "16"
    assert "utilisation" not in fields and "server" not in fields
    assert 'id="f-' not in body
    assert 'id="scenario-undo"' in body
    notice = body.split('id="scenario-notice"')[1]
    undo = json.loads(html.unescape(re.search(r'name="undo" value="([^"]*)"', notice).group(1)))
    assert undo["nodes"] == "8" and undo["topology"] == "single"
    assert 'id="q-customer"' not in body  # the quote header is outside the fragment


def test_the_configuration_is_remembered_for_the_next_page_load(engineer_client):
    data = preset_data(None)
    data["nodes"] = "8"
    data["utilisation"] = "0.7"
    engineer_client.post(reverse("configurator:update"), data, HTTP_HX_REQUEST="true")
    page = engineer_client.get("/").content.decode()
    assert 'name="nodes" value="8"' in page and 'name="utilisation" value="0.7"' in page


def test_without_javascript_a_changed_scenario_is_applied_on_update(engineer_client):
    data = preset_data(None)
    data.update(scenario="software-engineering-agent", applied_scenario="", utilisation="0.7")
    page = engineer_client.post("/", data).content.decode()
    assert 'id="scenario-notice"' in page
    assert 'name="utilisation" value="0.7"' in page
    assert '<option value="disaggregated" selected>' in page


def test_undo_with_javascript_keeps_later_edits_and_without_restores_the_previous_form(engineer_client):
    before = preset_data(None)
    before["nodes"] = "8"
    undo = json.dumps({"topology": "single", "nodes": "8", "scenario": ""})
    # With htmx the current form comes along: a later edit (utilisation) stays.
    current = preset_data("software-engineering-agent")
    current["utilisation"] = "0.5"
    body = engineer_client.post(
        reverse("configurator:apply_fix"),
        {**current, "undo": undo, "base": json.dumps(before)},
        HTTP_HX_REQUEST="true",
    ).content.decode()
    assert '<option value="single" selected>' in body and 'name="nodes" value="8"' in body
    assert 'name="utilisation" value="0.5"' in body
    # Without JavaScript only the undo form is posted: the whole previous form comes back.
    page = engineer_client.post(
        reverse("configurator:apply_fix"), {"undo": undo, "base": json.dumps(before)}
    ).content.decode()
    assert "<html" in page and 'name="nodes" value="8"' in page and 'name="utilisation" value="0.6"' in page


@pytest.mark.parametrize(
    "raw",
    [
        "[" * 100_000,
        json.dumps({"topology": [1, 2], "serving": "x", "launch": {"node_ips": [{"a": 1}]}}),
        json.dumps({"model": {"x": 1}, "commercial": [], "workload": {"needs_vision": {"deep": 1}}}),
        "not json",
    ],
)
def test_a_hostile_configuration_posted_to_apply_is_a_page_not_a_500(engineer_client, raw):
    for extra in ({}, {"HTTP_HX_REQUEST": "true"}):
        response = engineer_client.post(reverse("configurator:apply_fix"), {"request_json": raw}, **extra)
        assert response.status_code == 200
    response = engineer_client.post(
        reverse("configurator:apply_fix"), {"undo": raw, "base": raw}, HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 200
