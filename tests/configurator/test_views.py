"""The configurator page as a browser (with and without htmx) uses it."""

import json

import pytest
from django.urls import reverse

from configurator.web.presets import preset_data

pytestmark = pytest.mark.django_db


@pytest.fixture
def engineer_client(client, catalog, users):
    client.force_login(users["engineer"])
    return client


def htmx_post(client, url, data):
    return client.post(url, data, HTTP_HX_REQUEST="true")


def test_first_visit_shows_the_validated_4_node_k3_plan(engineer_client):
    page = engineer_client.get("/").content.decode()
    # docs/domain.md §4 item 1: 4 × A3, DP4 / TP16 / EP64, 896 experts → 14 per rank.
    assert "TP16 · DP4 · EP64" in page
    assert 'data-area="memory"' in page
    # docs/domain.md §9: 16 × 133,120 per DP rank does not fit; the page says how many do.
    assert "memory.max_num_seqs_not_full_length" in page


def test_htmx_update_returns_the_results_panel_with_out_of_band_verdicts(engineer_client):
    data = preset_data(None)
    data["nodes"] = "8"
    data["topology"] = "primary_standby"
    response = htmx_post(engineer_client, reverse("configurator:update"), data)
    assert response.status_code == 200
    body = response.content.decode()
    assert body.lstrip().startswith('<section id="results"')
    assert 'id="verdicts" hx-swap-oob="true"' in body
    assert "<html" not in body
    # docs/domain.md §7: 8 × 16.2 kW = 129.6 kW of servers; the seed's 200 A circuit is shown.
    assert "129.6 kW" in body
    assert "200 A" in body


def test_plain_post_without_javascript_renders_the_whole_page(engineer_client):
    data = preset_data(None)
    data["gpu_memory_utilization"] = "0.9"
    response = engineer_client.post("/", data)
    assert response.status_code == 200
    body = response.content.decode()
    assert "<html" in body and 'id="results"' in body
    assert 'value="0.9"' in body


def test_scenario_preset_prefills_the_8p8d_coding_agent_workload(engineer_client):
    response = engineer_client.get(reverse("configurator:preset"), {"scenario": "software-engineering-agent"})
    body = response.content.decode()
    assert response.status_code == 200
    # docs/domain.md §10: coding agents → 16 × A3 8P8D.
    assert 'name="nodes" value="16"' in body
    assert 'name="prefill_nodes" value="8"' in body
    assert "预填充" in body or "prefill" in body


@pytest.mark.parametrize(
    "field, value, message_fragment",
    [
        ("nodes", "0", "greater than or equal to 1"),
        ("nodes", "10000", "less than or equal to 1024"),
        ("nodes", "four", "Enter a whole number"),
        ("gpu_memory_utilization", "1.5", "less than or equal to 0.99"),
        ("max_model_len", "abc", "Enter a whole number"),
        ("scenario", "deleted-meanwhile", "Select a valid choice"),
        ("model", "no-such-model", "Select a valid choice"),
        ("node_ips", "10.0.0.1\nnot-an-ip", "Not an IP address"),
        ("data_nic", "eth0; rm -rf /", "NIC name"),
    ],
)
def test_absurd_input_gets_a_field_error_beside_the_input_not_a_500(
    engineer_client, field, value, message_fragment, caplog
):
    engineer_client.cookies["django_language"] = "en"
    data = preset_data(None)
    data[field] = value
    response = htmx_post(engineer_client, reverse("configurator:update"), data)
    assert response.status_code == 200
    body = response.content.decode()
    # The message is swapped (out of band) into the slot under the input itself.
    slot = body.split(f'id="err-{field}" hx-swap-oob="true">', 1)[1].split("</div>", 1)[0]
    assert message_fragment in slot
    assert not [r for r in caplog.records if r.levelname in ("ERROR", "CRITICAL")]


def test_apply_fix_sets_the_suggested_value(engineer_client):
    data = preset_data(None)
    fix = {"serving.max_num_seqs": 3}
    response = engineer_client.post(reverse("configurator:apply_fix"), {**data, "fix": json.dumps(fix)})
    assert response.status_code == 200
    assert 'name="max_num_seqs" value="3"' in response.content.decode()


def test_launch_bundle_download_is_a_zip_with_one_script_per_node(engineer_client):
    import io
    import zipfile

    request_json = {"model": "kimi-k3", "server": "atlas-800-a3", "topology": {"kind": "single", "nodes": 4}}
    response = engineer_client.post(
        reverse("configurator:bundle"), {"request_json": json.dumps(request_json)}
    )
    assert response.status_code == 200
    assert response["Content-Type"] == "application/zip"
    names = zipfile.ZipFile(io.BytesIO(response.content)).namelist()
    assert len([n for n in names if n.endswith(".sh") and n.startswith("node-")]) == 4


def test_bundle_with_bad_json_is_a_400(engineer_client):
    response = engineer_client.post(reverse("configurator:bundle"), {"request_json": "{nope"})
    assert response.status_code == 400
    assert "request_json" in response.json()["errors"]


def test_catalog_admin_lands_in_the_admin_and_cannot_configure(client, catalog, users):
    client.force_login(users["catalog"])
    response = client.get("/")
    assert response.status_code == 302 and response["Location"] == reverse("admin:index")
    assert client.get(reverse("admin:index")).status_code == 200  # a page that works, not a 403
    data = preset_data(None)
    assert client.post("/", data).status_code == 403
    assert htmx_post(client, reverse("configurator:update"), data).status_code == 403


def test_the_page_says_no_lease_offer_and_price_on_request(engineer_client):
    """Issue 30 / 25: 2 × HGX H200 (priced, no lease price in cny-2026) leaves the lease column out
    instead of showing rent ¥0; 2 × DGX H100 (no price item) shows "price on request", no totals."""
    data = preset_data(None)
    data.update({"server": "hgx-h200-8gpu", "nodes": "2", "topology": "single", "model": "kimi-k3"})
    url = reverse("configurator:update")
    body = engineer_client.post(url, data, HTTP_HX_REQUEST="true", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert 'id="no-lease-offer"' in body and "no lease offer" in body
    assert 'id="price-on-request"' not in body and "TCO over 3 years" in body
    data.update({"server": "dgx-h100", "model": "qwen3-32b"})
    body = engineer_client.post(url, data, HTTP_HX_REQUEST="true", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert 'id="price-on-request"' in body and "commercial.price_on_request" in body
    assert "TCO over 3 years" not in body
