"""/api/plan: a lone surrogate in any slug or name is a 400 naming the field; a typed measured
throughput is refused (a measured figure comes only from a benchmark file attached to a quote); an
inline checkpoint's flags pass the catalog's flag grammar or are refused."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.django_db

K3_4_NODES = {
    "model": "kimi-k3",
    "server": "atlas-800-a3",
    "topology": {"kind": "single", "nodes": 4, "parallel": {"tp": 16, "dp": 4, "expert_parallel": True}},
}


@pytest.fixture
def api(client, catalog, users):
    client.force_login(users["engineer"])
    return client


def post(client, text: str):
    return client.post("/api/plan", data=text, content_type="application/json")


@pytest.mark.parametrize(
    "path",
    [
        ("model",),
        ("server",),
        ("site",),
        ("rack",),
        ("checkpoint",),
        ("commercial", "price_list"),
        ("launch", "served_model_name"),
        ("model", "name"),  # an inline model's name
    ],
)
def test_a_lone_surrogate_anywhere_is_a_400_naming_the_field(api, path):
    body = json.loads(json.dumps(K3_4_NODES))
    node = body
    for key in path[:-1]:
        if not isinstance(node.get(key), dict):
            node[key] = {}
        node = node[key]
    node[path[-1]] = "x\ud800"
    text = json.dumps(body)  # the surrogate travels as the escape \ud800
    response = post(api, text)
    assert response.status_code == 400
    errors = response.json()["errors"]
    field = ".".join(path)
    assert list(errors) == [field]
    assert "U+D800, a lone surrogate" in errors[field][0]


def test_a_surrogate_in_a_key_is_refused_too(api):
    response = post(api, '{"model": "kimi-k3", "\\udfff": 1}')
    assert response.status_code == 400
    assert "U+DFFF" in json.dumps(response.json(), ensure_ascii=True)


def test_a_typed_measured_throughput_is_refused_naming_the_field(api):
    body = {**K3_4_NODES, "workload": {"measured_output_tokens_per_s": 999999}}
    response = post(api, json.dumps(body))
    assert response.status_code == 400
    assert list(response.json()["errors"]) == ["workload.measured_output_tokens_per_s"]
    # Without it the same plan is an estimate, never "measured".
    response = post(api, json.dumps(K3_4_NODES))
    assert response.status_code == 200
    assert response.json()["performance"]["measured"] is False


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--allowed-local-media-path", "/"], "left out of every launch"),
        (["--quantization", "ascend; rm -rf /"], "flags and plain values only"),
        (["ascend"], "must start with a flag"),
        ("--trust-remote-code", "flags and plain values only"),
    ],
)
def test_inline_checkpoint_flags_pass_the_catalogs_grammar_or_are_refused(api, flags, message):
    from catalog.models import Checkpoint

    ck = Checkpoint.objects.get(slug="kimi-k3-hf-mxfp4")
    inline = {
        "slug": "typed",
        "name": "typed",
        "weight_format": ck.weight_format,
        "platforms": ["ascend", "cuda"],
        "launch_flags": flags,
    }
    response = post(api, json.dumps({**K3_4_NODES, "checkpoint": inline}))
    assert response.status_code == 400
    errors = response.json()["errors"]
    assert message in " ".join(errors["checkpoint.launch_flags"])


def test_the_catalogs_checkpoint_refuses_the_same_flags(catalog):
    from django.core.exceptions import ValidationError

    from catalog.models import Checkpoint

    ck = Checkpoint.objects.get(slug="kimi-k3-hf-mxfp4")
    ck.launch_flags = ["--allowed-local-media-path", "/"]
    with pytest.raises(ValidationError) as err:
        ck.full_clean()
    assert "launch_flags" in err.value.message_dict
