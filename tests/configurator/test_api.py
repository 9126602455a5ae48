"""POST /api/plan and manage.py plan: the same request format, JSON errors naming the field."""

import json
from io import StringIO
from pathlib import Path

import jsonschema
import pytest
from django.core.management import CommandError, call_command
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from accounts.services import api_token_create
from configurator.io.schema import request_schema, response_schema

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]
K3_4_NODES = {
    "model": "kimi-k3",
    "server": "atlas-800-a3",
    "topology": {"kind": "single", "nodes": 4, "parallel": {"tp": 16, "dp": 4, "expert_parallel": True}},
    "serving": {"gpu_memory_utilization": 0.85, "max_model_len": 133120, "max_num_seqs": 16},
}


@pytest.fixture
def api(client, catalog, users):
    client.force_login(users["engineer"])
    return client


def post(client, body, **extra):
    data = body if isinstance(body, (str, bytes)) else json.dumps(body)
    return client.post("/api/plan", data=data, content_type="application/json", **extra)


def test_k3_on_4_a3_fits_with_per_rank_memory_and_checks(api):
    response = post(api, K3_4_NODES)
    assert response.status_code == 200
    body = response.json()
    jsonschema.validate(body, response_schema())
    per_rank = body["memory"]["per_rank"]
    # docs/domain.md §6: EP = TP × DP = 64; 896 experts ÷ 64 = 14 per rank.
    assert body["layout"]["groups"][0]["experts_per_rank"] == 896 // 64
    # Weights per rank = non-expert ÷ TP + expert ÷ EP (docs/domain.md §6), except what vLLM-Ascend
    # replicates on every rank (vllm_ascend/models/kimi_k3.py, releases/v0.26.0rc): the router
    # (92 MoE layers × 7168 × 896), the latent projections (92 × 2 × 7168 × 3584), the fused MLA
    # q_a/kv_a (24 × 7168 × (1536 + 512 + 64)) and KDA f_a (69 × 7168 × 128), all BF16 in the
    # HF release (HF config), and the vision tower.
    from catalog.models import Checkpoint

    ck = Checkpoint.objects.get(slug="kimi-k3-hf-mxfp4")
    replicated = (92 * 7168 * 896 + 92 * 2 * 7168 * 3584 + 24 * 7168 * 2112 + 69 * 7168 * 128) * 2
    assert per_rank["replicated_weights_bytes"] == replicated == 11_488_985_088
    split = ck.non_expert_bytes - ck.vision_bytes - replicated
    # + the speculative draft the defaults turn on (catalog/seed/drafts.yaml: 3.56 B BF16 parameters,
    # loaded at the target's TP 16: vLLM SpeculativeConfig draft_tensor_parallel_size).
    from catalog.models import SpeculativeDraft

    draft = SpeculativeDraft.objects.get(slug="kimi-k3-dspark-gqa")
    assert body["serving"][0]["draft"] == draft.slug
    assert draft.weight_bytes == 3_560_000_000 * 2
    expected = split / 16 + replicated + ck.vision_bytes + ck.expert_bytes / 64 + draft.weight_bytes / 16
    assert abs(per_rank["weights_bytes"] - expected) <= 2  # rounding of the two divisions
    assert per_rank["kv_tokens"] > 0 and per_rank["kv_cache_bytes"] > 0
    codes = {c["code"]: c["severity"] for c in body["checks"]}
    assert codes["memory.max_num_seqs_not_full_length"] == "warning"
    assert all(c["severity"] != "error" for c in body["checks"])


def test_api_token_works_without_a_session_or_csrf(client, catalog, users):
    token = api_token_create(user=users["engineer"], name="ci")
    response = post(client, K3_4_NODES, HTTP_AUTHORIZATION=f"Bearer {token}")
    assert response.status_code == 200
    assert post(client, K3_4_NODES, HTTP_AUTHORIZATION="Bearer wrong").status_code == 401


def test_anonymous_gets_401_json(client, catalog):
    response = post(client, K3_4_NODES)
    assert response.status_code == 401
    assert "authorization" in response.json()["errors"]


def test_session_post_needs_csrf(catalog, users):
    from django.test import Client

    strict = Client(enforce_csrf_checks=True)
    strict.force_login(users["engineer"])
    response = post(strict, K3_4_NODES)
    assert response.status_code == 403
    assert "csrf" in response.json()["errors"]


@pytest.mark.parametrize(
    "body, field",
    [
        ({**K3_4_NODES, "model": "no-such-model"}, "model"),
        ({**K3_4_NODES, "topology": {"kind": "single", "nodes": -3}}, "topology.nodes"),
        (
            {**K3_4_NODES, "topology": {"kind": "single", "nodes": 4, "parallel": {"tp": 0, "dp": 4}}},
            "topology.parallel.tp",
        ),
        ({**K3_4_NODES, "serving": {"gpu_memory_utilization": 1.5}}, "serving.gpu_memory_utilization"),
        ("{not json", "request"),
        ("[]", "request"),
        (
            {**K3_4_NODES, "model": {"hf_config": {"model_type": "llama", "hidden_size": 4096}}},
            "model.hf_config",
        ),
    ],
)
def test_bad_requests_are_400_naming_the_field(api, body, field):
    response = post(api, body)
    assert response.status_code == 400
    errors = response.json()["errors"]
    assert field in errors, errors
    if field == "model.hf_config":
        assert "num_hidden_layers" in " ".join(errors[field])


def test_get_is_405(api):
    assert api.get("/api/plan").status_code == 405


def test_inline_hf_config_model_is_planned(api):
    config = json.loads(
        (ROOT / "tests/data/model-configs/meta-llama--Meta-Llama-3.1-8B.config.json").read_text()
    )
    body = {
        "model": {"hf_config": config, "weight_format": "bf16"},
        "server": "atlas-800-a3",
        "topology": {
            "kind": "single",
            "nodes": 1,
            "parallel": {"tp": 1, "dp": 16, "expert_parallel": False, "dp_local": 16},
        },
    }
    response = post(api, body)
    assert response.status_code == 200, response.content
    per_rank = response.json()["memory"]["per_rank"]
    # Llama-3.1-8B (public config): 32 layers × 2 × 8 KV heads × 128 × 2 B = 131,072 B per token at TP 1.
    assert per_rank["kv_bytes_per_token"] == 32 * 2 * 8 * 128 * 2


def test_manage_py_plan_prints_the_same_json(catalog, tmp_path):
    path = tmp_path / "req.json"
    path.write_text(json.dumps(K3_4_NODES))
    out = StringIO()
    call_command("plan", str(path), stdout=out)
    body = json.loads(out.getvalue())
    assert body["layout"]["groups"][0]["parallel"]["ep"] == 64


def test_manage_py_plan_reports_field_errors(catalog, tmp_path):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({**K3_4_NODES, "topology": {"kind": "single", "nodes": 0}}))
    with pytest.raises(CommandError, match="topology.nodes"):
        call_command("plan", str(path))


def test_committed_schemas_match_the_code():
    # Regenerate with: python -m configurator.io.schema docs
    assert json.loads((ROOT / "docs/plan-request.schema.json").read_text()) == json.loads(
        json.dumps(request_schema())
    )
    assert json.loads((ROOT / "docs/plan-response.schema.json").read_text()) == json.loads(
        json.dumps(response_schema())
    )


def test_documented_examples_validate_against_the_schema():
    text = (ROOT / "docs/api.md").read_text()
    examples = [block.split("```", 1)[0] for block in text.split("```json\n")[1:]]
    requests = [json.loads(e) for e in examples if '"topology"' in e]
    assert requests
    for example in requests:
        jsonschema.validate(example, request_schema())


JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=16),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=10), children, max_size=3)
    ),
    max_leaves=10,
)


@settings(
    max_examples=1000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    key=st.sampled_from(
        [
            "model",
            "server",
            "topology",
            "serving",
            "workload",
            "commercial",
            "site",
            "rack",
            "launch",
            "switches",
        ]
    ),
    value=JSONISH,
)
def test_hostile_json_never_gives_a_500(api, key, value):
    body = {**K3_4_NODES, key: value}
    response = post(api, body)
    assert response.status_code in (200, 400), response.content[:300]
    payload = response.json()
    if response.status_code == 400:
        assert payload["errors"] and all(isinstance(k, str) for k in payload["errors"])
    else:
        text = json.dumps(payload)
        assert "NaN" not in text and "Infinity" not in text


def test_manage_py_launch_bundle_writes_one_script_per_node(catalog, tmp_path):
    import zipfile

    path = tmp_path / "req.json"
    path.write_text(json.dumps(K3_4_NODES))
    out = tmp_path / "bundle.zip"
    call_command("launch-bundle", str(path), str(out), stdout=StringIO())
    names = zipfile.ZipFile(out).namelist()
    # docs/domain.md §5: 4 nodes → node 0 master + 3 headless workers, one script each.
    assert len([n for n in names if n.endswith(".sh") and n.startswith("node-")]) == 4
    assert len([n for n in names if n.startswith("docker/node-")]) == 4  # and its container per node


def test_manage_py_launch_bundle_refuses_a_plan_with_errors(catalog, tmp_path):
    path = tmp_path / "req.json"
    path.write_text(
        json.dumps({**K3_4_NODES, "server": "atlas-800-a2", "topology": {"kind": "single", "nodes": 1}})
    )
    with pytest.raises(CommandError, match="GB short per rank"):
        call_command("launch-bundle", str(path), str(tmp_path / "x.zip"))


def test_nul_characters_anywhere_in_the_body_are_a_400(api):
    response = post(api, {**K3_4_NODES, "scenario": "finance\u0000research"})
    assert response.status_code == 400
    # The field that holds it is named, with the character (the strict-input check of every slug).
    assert "U+0000" in response.json()["errors"]["scenario"][0]


def test_a_scenario_slug_brings_its_workload_and_targets(api):
    # The seeded scenario (catalog/seed/scenarios.yaml, software-engineering-agent): 24,576 input and
    # 1,536 output tokens, 256 concurrent, TTFT 20 s and TPOT 80 ms (P50).
    body = {**K3_4_NODES, "scenario": "software-engineering-agent"}
    response = post(api, body)
    assert response.status_code == 200
    dp = response.json()["performance"]["design_point"]
    assert dp["targets_assumed"] is False
    assert dp["targets_source"] == "scenario"
    assert dp["scenario"] == "software-engineering-agent"
    assert dp["targets"] == {"ttft_p50_s": 20.0, "tpot_p50_ms": 80.0}
    # The request's own workload wins over the scenario's, field by field.
    own = post(api, {**body, "workload": {"tpot_target_ms": 50}}).json()["performance"]["design_point"]
    assert own["targets"] == {"ttft_p50_s": 20.0, "tpot_p50_ms": 50.0}
    assert own["targets_source"] == "request"  # one of them is no longer the scenario's
    # Stated equal to the scenario's (as the page's form states them): still the scenario's targets.
    same = post(api, {**body, "workload": {"ttft_target_s": 20, "tpot_target_ms": 80}}).json()
    assert same["performance"]["design_point"]["targets_source"] == "scenario"
    none = post(api, K3_4_NODES).json()["performance"]["design_point"]
    assert none["targets_assumed"] is True and none["targets_source"] == "default"


def test_a_scenario_the_catalog_does_not_know_and_a_non_slug_are_a_400(api):
    # An unknown slug would plan on the default targets a workload nobody chose: refused, naming it.  A
    # saved quote is fully inline and never looks its scenario up (test_requests: frozen revisions).
    response = post(api, {**K3_4_NODES, "scenario": "no-such-scenario"})
    assert response.status_code == 400
    assert response.json()["errors"]["scenario"] == ["'no-such-scenario' is not a scenario in the catalog."]
    bad = post(api, {**K3_4_NODES, "scenario": ["software-engineering-agent"]})
    assert bad.status_code == 400 and "scenario" in bad.json()["errors"]
