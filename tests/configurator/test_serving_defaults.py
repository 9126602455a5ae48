"""One serving-defaults path (engine/defaults.py ``serving_defaults``): API, page, CLI and planner agree.

A request that says nothing about serving gets, field by field, the launch recipe's published value for
that model on that hardware (configurator/engine/recipes.py ``Recipe.defaults``), else ``ServingSpec``'s
own, with the recipe's engine version and a context the model supports.  The JSON API and ``manage.py
plan`` resolve it at the request boundary; the configurator page leaves its blank serving fields out of
the request it posts; the auto-planner starts every candidate from it and changes only what it searches.
"""

import json
from dataclasses import replace
from io import StringIO

import pytest
from django.core.management import call_command

from catalog.models import LlmModel, ServerModel
from configurator.engine.defaults import SERVING_DEFAULTS, serving_defaults
from configurator.engine.layout import resolve_layout
from configurator.engine.memory import size_memory
from configurator.engine.types import ServingSpec, SpeculativeSpec, TopologyKind
from configurator.io.requests import RequestError
from configurator.planner import parse_query
from configurator.planner.build import RequestBuilder
from configurator.planning import plans
from configurator.port import catalog as catalog_port
from configurator.web import form_data, presets
from configurator.web.forms import ConfiguratorForm
from configurator.web.planner.services import DjangoPlannerCatalog

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


def page_form_data(model="kimi-k3", server="atlas-800-a3", nodes="4", manual=True):
    """What a browser posts for the untouched page with this model, server and layout."""
    data = presets.preset_data(None)
    data.update({"model": model, "server": server, "topology": "single", "nodes": nodes})
    if manual:
        data.update(
            {"parallel_mode": "manual", "tp": "16", "dp": "4", "dp_local": "1", "expert_parallel": "on"}
        )
    else:
        data["parallel_mode"] = "auto"
    return data


def test_the_page_posts_no_serving_value_it_was_not_given(catalog):
    form = ConfiguratorForm(page_form_data())
    assert form.is_valid(), form.errors
    # Only the KV dtype (one choice, "auto" = the model's dtype, the same as ServingSpec's) is always sent.
    assert form.to_request()["serving"] == {"kv_cache_dtype": SERVING_DEFAULTS.kv_cache_dtype.value}
    typed = ConfiguratorForm(page_form_data() | {"max_num_seqs": "8", "enable_prefix_caching": "off"})
    assert typed.is_valid(), typed.errors
    assert typed.to_request()["serving"]["max_num_seqs"] == 8
    assert typed.to_request()["serving"]["enable_prefix_caching"] is False


def test_h200_kimi_k3_takes_the_vllm_recipes_published_values(catalog):
    """vllm-project/recipes models/moonshotai/Kimi-K3.yaml, hardware_overrides.hopper: --max-model-len
    32768, --max-num-batched-tokens 4096, --gpu-memory-utilization 0.97, vLLM 0.27.1; its --max-num-seqs 5
    is one example batch, and a request that states none leaves it to the plan (0: sized to the KV cache,
    engine/memory.py size_admission)."""
    data = {"model": "kimi-k3", "server": "hgx-h200-8gpu", "topology": {"kind": "single", "nodes": 4}}
    api_request = plans.resolve_request(data)
    form = ConfiguratorForm(page_form_data("kimi-k3", "hgx-h200-8gpu", manual=False))
    assert form.is_valid(), form.errors
    page_request = plans.resolve_request(form.to_request())
    for serving in (api_request.serving, page_request.serving):
        assert (serving.max_model_len, serving.max_num_seqs) == (32768, 0)
        assert (serving.max_num_batched_tokens, serving.gpu_memory_utilization) == (4096, 0.97)
        assert serving.vllm_version == "0.27.1"
    # A field the request states is kept, the others still come from the recipe.
    stated = plans.resolve_request({**data, "serving": {"max_num_seqs": 16}}).serving
    assert (stated.max_num_seqs, stated.max_model_len) == (16, 32768)


def test_every_seeded_server_and_model_resolves_the_same_serving_everywhere(catalog):
    """API (= manage.py plan: both call plans.plan_from_json), page form and planner, every pair."""
    port = catalog_port.DjangoCatalog()
    planner_catalog = DjangoPlannerCatalog()
    checked = planned = 0
    for model in LlmModel.objects.order_by("slug").values_list("slug", flat=True):
        query = parse_query({"model": model, "workload": {"concurrency": 4}}, planner_catalog)
        builder = RequestBuilder(query, planner_catalog)
        planner_servers = {s.slug: s for s in query.servers}
        for server in ServerModel.objects.order_by("slug").values_list("slug", flat=True):
            data = {"model": model, "server": server, "topology": {"kind": "single", "nodes": 2}}
            form = ConfiguratorForm(page_form_data(model, server, nodes="2", manual=False))
            try:
                api_request = plans.resolve_request(data, catalog=port)
            except RequestError as exc:
                # The page refuses the same pair for the same reason (a model the server cannot serve).
                with pytest.raises(RequestError) as page_exc:
                    assert form.is_valid(), form.errors
                    plans.resolve_request(form.to_request(), catalog=port)
                assert set(page_exc.value.errors) == set(exc.errors)
                continue
            assert form.is_valid(), (model, server, form.errors)
            page_request = plans.resolve_request(form.to_request(), catalog=port)
            assert page_request.serving == api_request.serving, (model, server)
            assert page_request.topology == api_request.topology, (model, server)
            assert page_request.checkpoint == api_request.checkpoint, (model, server)
            # The same function, called directly, gives the same answer.
            assert api_request.serving == serving_defaults(
                api_request.model,
                api_request.server,
                TopologyKind.SINGLE,
                speculators=api_request.speculators,
            ), (model, server)
            checked += 1
            if server not in planner_servers:
                continue
            # The planner's candidate on this server starts from the same settings: asked for the default
            # utilisation, batch and KV dtype it builds the API's serving section and sizes the same memory.
            sv = api_request.serving
            planner_serving = builder.serving(
                planner_servers[server], sv.gpu_memory_utilization, sv.kv_cache_dtype.value, sv.max_num_seqs
            )
            assert planner_serving == sv, (model, server)
            planner_request = replace(
                api_request, serving=planner_serving, checkpoint=builder.checkpoint(planner_servers[server])
            )
            api_memory = size_memory(api_request, resolve_layout(api_request))
            planner_memory = size_memory(planner_request, resolve_layout(planner_request))
            assert planner_memory == api_memory, (model, server)
            planned += 1
    # 13 seeded models × 27 seeded servers; most pairs plan, and the planner searches most of them.
    assert checked >= 200 and planned >= 100, (checked, planned)


def test_api_page_and_cli_plan_the_same_deployment(api, tmp_path):
    api_body = api.post("/api/plan", data=json.dumps(NO_SERVING), content_type="application/json").json()

    path = tmp_path / "request.json"
    path.write_text(json.dumps(NO_SERVING))
    out = StringIO()
    call_command("plan", str(path), stdout=out)
    cli_body = json.loads(out.getvalue())

    form = ConfiguratorForm(page_form_data())
    assert form.is_valid(), form.errors
    page_request, page_result = plans.plan_from_json(form.to_request())
    api_request = plans.resolve_request(NO_SERVING)
    # Kimi K3 on Atlas 800 A3: the tutorial's HCCL_BUFFSIZE 800 (recipes.py A3 blocks); nothing else from
    # the recipe, so ServingSpec's values, and the catalog's DSpark draft (catalog/seed/drafts.yaml: 7 tokens)
    # with the first vLLM-Ascend release that runs it (0.26.0, vllm-ascend#12950) instead of the tutorial's
    # 0.23.0, which predates it.
    dspark = SpeculativeSpec(method="dspark", num_speculative_tokens=7, draft="kimi-k3-dspark-gqa")
    expected = replace(SERVING_DEFAULTS, vllm_version="0.26.0", speculative=dspark, max_num_seqs=0)
    assert page_request.serving == api_request.serving == expected
    assert cli_body["figures"]["memory.per_rank.graph_bytes"]["inputs"]["engine"] == "vLLM-Ascend 0.26.0"
    page_body = plans.plan_response(page_result)

    for body in (cli_body, page_body):
        assert body["memory"]["per_rank"] == api_body["memory"]["per_rank"]
        assert body["layout"]["groups"] == api_body["layout"]["groups"]
        for key in ("memory.per_rank.kv_cache_bytes", "memory.full_len_seqs_per_dp_rank"):
            assert body["figures"][key]["value"] == api_body["figures"][key]["value"]

    # And the page shows that figure when the same form is posted.
    page = api.post("/", page_form_data()).content.decode()
    tokens = api_body["memory"]["per_rank"]["kv_tokens"]
    assert f"{tokens:,}" in page


def test_the_planner_replans_its_candidate_with_the_same_engine_version(catalog):
    """The candidate's request (what /api/plan replans) names no engine version; the planner sized it with
    the serving defaults' (on Atlas the first vLLM-Ascend release that runs the catalog's K3 draft, 0.26.0,
    as the recipe's 0.23.0 predates it), so the two agree."""
    planner_catalog = DjangoPlannerCatalog()
    query = parse_query({"model": "kimi-k3", "workload": {"concurrency": 4}}, planner_catalog)
    builder = RequestBuilder(query, planner_catalog)
    a3 = next(s for s in query.servers if s.slug == "atlas-800-a3")
    assert builder.serving(a3, 0.9, "auto", 16).vllm_version == "0.26.0"
    assert builder.serving(a3, 0.9, "auto", 16).speculative.draft == "kimi-k3-dspark-gqa"
    # No context stated: the serving default (131,072, within K3's limit), not a planner constant.
    assert query.workload.context is None
    assert builder.serving(a3, 0.9, "auto", 16).max_model_len == ServingSpec().max_model_len


def test_reopening_a_request_restores_a_stated_off(catalog):
    data = form_data.form_data_from_request({**NO_SERVING, "serving": {"enable_prefix_caching": False}})
    assert data["enable_prefix_caching"] == "off"
    assert "max_num_seqs" not in data  # not stated: left blank, the default fills it


def test_the_page_chooses_a_checkpoint_and_refuses_one_of_another_model(api):
    data = page_form_data() | {"checkpoint": "kimi-k3-modelslim-w4a8"}
    form = ConfiguratorForm(data)
    assert form.is_valid(), form.errors
    request = form.to_request()
    assert request["checkpoint"] == "kimi-k3-modelslim-w4a8"
    _req, result = plans.plan_from_json(request)
    argv = list(result.launch.nodes[0].argv[0])
    assert argv[argv.index("--quantization") + 1] == "ascend"
    # Reopening the saved request restores the choice.
    assert form_data.form_data_from_request(request)["checkpoint"] == "kimi-k3-modelslim-w4a8"
    other = ConfiguratorForm(page_form_data() | {"model": "deepseek-v3", "checkpoint": "kimi-k3-hf-mxfp4"})
    assert not other.is_valid() and "checkpoint" in other.errors
    page = api.post("/", data).content.decode()
    assert 'name="checkpoint"' in page


def test_an_engine_version_typed_on_the_page_reaches_the_plan_as_from_the_api(api):
    data = page_form_data() | {"vllm_version": "0.18.0"}
    form = ConfiguratorForm(data)
    assert form.is_valid(), form.errors
    page_request, _ = plans.plan_from_json(form.to_request())
    api_request = plans.resolve_request({**NO_SERVING, "serving": {"vllm_version": "0.18.0"}})
    assert page_request.serving == api_request.serving
    assert page_request.serving.vllm_version == "0.18.0"


def test_an_unknown_engine_version_on_the_page_is_a_field_error(api):
    page = api.post("/", page_form_data() | {"vllm_version": "0.3.1"}).content.decode()
    assert "outside the versions whose memory accounting" in page


def test_the_page_states_and_reopens_speculative_and_per_role_settings(catalog):
    data = page_form_data() | {"speculative_method": "off"}
    form = ConfiguratorForm(data)
    assert form.is_valid(), form.errors
    request = form.to_request()
    assert request["serving"]["speculative"] == {"method": ""}
    assert plans.resolve_request(request).serving.speculative.method == ""
    reopened = form_data.form_data_from_request(request)
    assert reopened["speculative_method"] == "off"
    pd = {
        "model": "kimi-k3",
        "server": "atlas-800-a3",
        "topology": {"kind": "disaggregated", "nodes": 16, "prefill_nodes": 8, "decode_nodes": 8},
        "serving": {
            "speculative": {"method": "dspark", "draft": "kimi-k3-dspark-gqa", "num_speculative_tokens": 5},
            "prefill": {"max_num_seqs": 4, "max_num_batched_tokens": 32768},
            "decode": {"max_num_seqs": 64},
        },
    }
    reopened = form_data.form_data_from_request(pd)
    assert (reopened["speculative_method"], reopened["speculative_draft"]) == ("dspark", "kimi-k3-dspark-gqa")
    assert (reopened["num_speculative_tokens"], reopened["prefill_max_num_batched_tokens"]) == ("5", "32768")
    form = ConfiguratorForm(reopened)
    assert form.is_valid(), form.errors
    serving = form.to_request()["serving"]
    assert serving["speculative"] == pd["serving"]["speculative"]
    assert serving["prefill"] == pd["serving"]["prefill"] and serving["decode"] == pd["serving"]["decode"]
