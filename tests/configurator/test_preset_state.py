"""Issue 31: visible, resettable state — a scenario changes only what its notice lists (never the
server the engineer chose), the page lists every setting that differs from the scenario's preset
with a reset each and "start over", and a value applied under one scenario is listed after
switching to another instead of carrying over silently."""

from __future__ import annotations

import html
import json
import re

import pytest
from django.urls import reverse

from configurator.web.forms import ConfiguratorForm
from configurator.web.presets import apply_scenario, differences_from_preset, preset_data, recommended_server

pytestmark = pytest.mark.django_db

# catalog/seed/scenarios.yaml: every seeded scenario recommends atlas-800-a3 (the seeds' platform).
AGENT = "software-engineering-agent"
FINANCE = "finance-research"


@pytest.fixture
def engineer_client(client, catalog, users):
    client.force_login(users["engineer"])
    client.cookies["django_language"] = "en"
    return client


def _field_names():
    return {name: field.initial for name, field in ConfiguratorForm.base_fields.items()}


def test_choosing_a_scenario_keeps_the_server_and_offers_the_recommended_one(catalog):
    before = preset_data(None)
    before["server"] = "nf5868g8"
    after, changed = apply_scenario(before, AGENT)
    assert after["server"] == "nf5868g8" and "server" not in changed
    assert after["topology"] == "disaggregated"  # the scenario's own field did change
    offer = recommended_server(AGENT, after)
    assert offer["slug"] == "atlas-800-a3" and offer["name"].startswith("Atlas 800 A3")
    # On the recommended server there is nothing to offer.
    assert recommended_server(AGENT, dict(after, server="atlas-800-a3")) is None


def test_a_fresh_page_of_a_scenario_takes_its_recommended_server(catalog):
    assert preset_data(AGENT)["server"] == "atlas-800-a3"


def test_the_preset_notice_on_nf5868g8_keeps_it_and_offers_a3_with_one_click(engineer_client):
    data = preset_data(None)
    data["server"] = "nf5868g8"
    response = engineer_client.post(
        reverse("configurator:preset"),
        {**data, "scenario": AGENT, "applied_scenario": ""},
        HTTP_HX_REQUEST="true",
    )
    fields = json.loads(response["HX-Trigger"])["configurator:set-fields"]["fields"]
    assert "server" not in fields
    body = response.content.decode()
    offer = body.split('id="scenario-server"')[1].split("</form>")[0]
    assert "Atlas 800 A3" in offer
    undo = json.loads(html.unescape(re.search(r'name="undo" value="([^"]*)"', offer).group(1)))
    assert undo == {"server": "atlas-800-a3"}
    # The one click: the current form plus the server.
    page = engineer_client.post(
        reverse("configurator:apply_fix"),
        {**data, "scenario": AGENT, "topology": "disaggregated", "undo": json.dumps(undo)},
        HTTP_HX_REQUEST="true",
    ).content.decode()
    assert '<option value="atlas-800-a3" selected>' in page


def test_a_fresh_preset_differs_in_nothing(catalog):
    for scenario in (None, AGENT, FINANCE):
        assert differences_from_preset(preset_data(scenario), _field_names()) == []


def test_what_a_browser_posts_for_a_fresh_page_differs_in_nothing(catalog):
    # A browser posts every select with its shown choice, even where the preset sets none.
    data = dict(preset_data(AGENT), pair_switches="shared", decode_mode="graph", parallel_mode="auto")
    assert differences_from_preset(data, _field_names()) == []
    assert [d["name"] for d in differences_from_preset(dict(data, decode_mode="eager"), _field_names())] == [
        "decode_mode"
    ]


def test_numbers_written_differently_are_not_differences(catalog):
    data = preset_data(None)
    data["utilisation"] = "0.60"  # DEFAULT_FORM says "0.6"
    data["nodes"] = " 4 "
    assert differences_from_preset(data, _field_names()) == []


def test_a_cap_applied_under_one_scenario_is_listed_after_switching(engineer_client):
    under_agent = preset_data(AGENT)
    under_agent["rack_max_kw"] = "25"  # what the cooling fix sets
    under_agent["max_num_seqs"] = "5"
    switched, _changed = apply_scenario(under_agent, FINANCE)
    diffs = {d["name"]: d for d in differences_from_preset(switched, _field_names())}
    assert set(diffs) == {"rack_max_kw", "max_num_seqs"}
    assert diffs["rack_max_kw"]["current"] == "25" and diffs["rack_max_kw"]["preset"] == ""
    # The page lists them, each with a reset to the preset's value.
    body = engineer_client.post(
        reverse("configurator:update"), switched, HTTP_HX_REQUEST="true"
    ).content.decode()
    table = body.split('id="preset-differences"')[1].split("</details>")[0]
    assert "Settings that differ from the scenario's preset: 2" in table
    assert 'data-field="rack_max_kw"' in table and 'data-field="max_num_seqs"' in table
    resets = [json.loads(html.unescape(v)) for v in re.findall(r'name="undo" value="([^"]*)"', table)]
    assert {"max_num_seqs": preset_data(FINANCE).get("max_num_seqs", "")} in resets


def test_reset_of_one_field_keeps_the_others(engineer_client):
    data = preset_data(AGENT)
    data.update(rack_max_kw="25", max_num_seqs="5")
    page = engineer_client.post(
        reverse("configurator:apply_fix"),
        {**data, "undo": json.dumps({"max_num_seqs": preset_data(AGENT).get("max_num_seqs", "")})},
        HTTP_HX_REQUEST="true",
    ).content.decode()
    # The preset leaves the batch blank (the serving defaults fill it): reset, the field holds no value again.
    field = re.search(r'<input[^>]*name="max_num_seqs"[^>]*>', page).group(0)
    assert "value=" not in field
    assert 'name="rack_max_kw" value="25"' in page


def test_start_over_restores_the_presets_settings_server_included(engineer_client):
    data = preset_data(AGENT)
    data.update(server="nf5868g8", rack_max_kw="25", utilisation="0.5", node_ips="10.0.0.1")
    body = engineer_client.post(reverse("configurator:update"), data, HTTP_HX_REQUEST="true").content.decode()
    start = body.split('id="start-over"')[0].rsplit("<form", 1)[1]
    undo = html.unescape(re.search(r'name="undo" value="([^"]*)"', start).group(1))
    page = engineer_client.post(
        reverse("configurator:apply_fix"), {**data, "undo": undo}, HTTP_HX_REQUEST="true"
    ).content.decode()
    assert '<option value="atlas-800-a3" selected>' in page
    assert 'name="utilisation" value="0.6"' in page  # DEFAULT_FORM's utilisation
    assert 'id="preset-differences"' not in page
    # Without JavaScript the same button restores the preset as well.
    page = engineer_client.post(
        reverse("configurator:apply_fix"), {"undo": undo, "base": "{}"}
    ).content.decode()
    assert "<html" in page and 'id="preset-differences"' not in page
