"""One source of serving defaults (engine/defaults.py): the API, the page and the CLI agree.

A request that says nothing about serving gets ServingSpec's defaults from the JSON API and from
``manage.py plan``; the configurator page starts its form from the same values, so posting the
untouched form plans the same deployment.
"""

import json
from dataclasses import replace
from io import StringIO

import pytest
from django.core.management import call_command

from configurator import services
from configurator.engine.defaults import SERVING_DEFAULTS
from configurator.engine.types import ServingSpec
from configurator.web.forms import ConfiguratorForm

pytestmark = pytest.mark.django_db

NO_SERVING = {
    "model": "kimi-k3",
    "server": "atlas-800-a3",
    "topology": {"kind": "single", "nodes": 4, "parallel": {"tp": 16, "dp": 4, "expert_parallel": True}},
}


@pytest.fixture
def api(client, catalog, users):
    client.force_login(users["engineer"])
    return client


def page_form_data():
    """What a browser posts for the untouched page with the same model, server and layout."""
    data = services.preset_data(None)
    data.update(
        {"model": "kimi-k3", "server": "atlas-800-a3", "topology": "single", "nodes": "4"}
        | {"parallel_mode": "manual", "tp": "16", "dp": "4", "dp_local": "1", "expert_parallel": "on"}
    )
    return data


def test_the_defaults_are_servingspecs_own():
    assert SERVING_DEFAULTS == ServingSpec()
    form = ConfiguratorForm()
    assert float(form.fields["gpu_memory_utilization"].initial) == SERVING_DEFAULTS.gpu_memory_utilization
    assert form.fields["max_model_len"].initial == SERVING_DEFAULTS.max_model_len
    assert form.fields["comm_buffer_mb"].initial == SERVING_DEFAULTS.comm_buffer_mb
    assert form.fields["max_num_seqs"].initial == SERVING_DEFAULTS.max_num_seqs


def test_api_page_and_cli_plan_the_same_deployment(api, tmp_path):
    api_body = api.post("/api/plan", data=json.dumps(NO_SERVING), content_type="application/json").json()

    path = tmp_path / "request.json"
    path.write_text(json.dumps(NO_SERVING))
    out = StringIO()
    call_command("plan", str(path), stdout=out)
    cli_body = json.loads(out.getvalue())

    form = ConfiguratorForm(page_form_data())
    assert form.is_valid(), form.errors
    page_request, page_result = services.plan_from_json(form.to_request())
    api_request = services.resolve_request(NO_SERVING)
    # The page's serving section resolves to exactly what the API and the CLI use: ServingSpec's defaults,
    # with the engine version of the launch recipe (vLLM-Ascend K3 tutorial, releases/v0.23.0; recipes.py).
    assert page_request.serving == api_request.serving == replace(SERVING_DEFAULTS, vllm_version="0.23.0")
    assert cli_body["figures"]["memory.per_rank.graph_bytes"]["inputs"]["engine"] == "vLLM-Ascend 0.23.0"
    page_body = services.plan_response(page_result)

    for body in (cli_body, page_body):
        assert body["memory"]["per_rank"] == api_body["memory"]["per_rank"]
        assert body["layout"]["groups"] == api_body["layout"]["groups"]
        for key in ("memory.per_rank.kv_cache_bytes", "memory.full_len_seqs_per_dp_rank"):
            assert body["figures"][key]["value"] == api_body["figures"][key]["value"]

    # And the page shows that figure when the same form is posted.
    page = api.post("/", page_form_data()).content.decode()
    tokens = api_body["memory"]["per_rank"]["kv_tokens"]
    assert f"{tokens:,}" in page


def test_the_page_chooses_a_checkpoint_and_refuses_one_of_another_model(api):
    data = page_form_data() | {"checkpoint": "kimi-k3-modelslim-w4a8"}
    form = ConfiguratorForm(data)
    assert form.is_valid(), form.errors
    request = form.to_request()
    assert request["checkpoint"] == "kimi-k3-modelslim-w4a8"
    _req, result = services.plan_from_json(request)
    argv = list(result.launch.nodes[0].argv[0])
    assert argv[argv.index("--quantization") + 1] == "ascend"
    # Reopening the saved request restores the choice.
    assert services.form_data_from_request(request)["checkpoint"] == "kimi-k3-modelslim-w4a8"
    other = ConfiguratorForm(page_form_data() | {"model": "deepseek-v3", "checkpoint": "kimi-k3-hf-mxfp4"})
    assert not other.is_valid() and "checkpoint" in other.errors
    page = api.post("/", data).content.decode()
    assert 'name="checkpoint"' in page


def test_an_engine_version_typed_on_the_page_reaches_the_plan_as_from_the_api(api):
    data = page_form_data() | {"vllm_version": "0.18.0"}
    form = ConfiguratorForm(data)
    assert form.is_valid(), form.errors
    page_request, _ = services.plan_from_json(form.to_request())
    api_request = services.resolve_request({**NO_SERVING, "serving": {"vllm_version": "0.18.0"}})
    assert page_request.serving == api_request.serving
    assert page_request.serving.vllm_version == "0.18.0"


def test_an_unknown_engine_version_on_the_page_is_a_field_error(api):
    page = api.post("/", page_form_data() | {"vllm_version": "0.3.1"}).content.decode()
    assert "outside the versions whose memory accounting" in page
