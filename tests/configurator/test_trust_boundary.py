"""Issue 13: one validation boundary for everything that reaches a generated file, and hostile
JSON that never reaches a 500.  Every test here failed on the code before issue 13 (see
docs/testing.md, "Trust boundary (issue 13)").

Grammars: Linux ``dev_valid_name()`` (torvalds/linux master, net/core/dev.c) for NIC names;
distribution/reference (main, regexp.go) for images; RFC 1123 host names; CPython's json
decoder recursion (≈1,000 levels) for the depth limit.
"""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.urls import get_resolver
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from catalog import jsonlimits

pytestmark = pytest.mark.django_db

K3_4_NODES = {
    "model": "kimi-k3",
    "server": "atlas-800-a3",
    "topology": {"kind": "single", "nodes": 4, "parallel": {"tp": 16, "dp": 4, "expert_parallel": True}},
    "serving": {"gpu_memory_utilization": 0.85, "max_model_len": 133120, "max_num_seqs": 16},
    "launch": {
        "node_ips": ["10.0.0.11", "10.0.0.12", "10.0.0.13", "10.0.0.14"],
        "data_nic": "enp189s0f0",
        "model_path": "/data/models/Kimi-K3",
        "image": "quay.io/ascend/vllm-ascend:kimi-k3-a3",
    },
}
# The five hostile forms the acceptance names: newline, ';', '$(', backtick, space.
HOSTILE_TAILS = ["\ntouch /tmp/x\n#", "; touch /tmp/x", "$(touch /tmp/x)", "`touch /tmp/x`", " --privileged"]
FIELDS = {
    "node_ips": lambda tail: ["10.0.0.11" + tail, "10.0.0.12", "10.0.0.13", "10.0.0.14"],
    "data_nic": lambda tail: "enp189s0f0" + tail,
    "model_path": lambda tail: "/data/models/Kimi-K3" + tail,
    "image": lambda tail: "quay.io/ascend/vllm-ascend:kimi-k3-a3" + tail,
}


def _with_launch(name, value):
    return {**K3_4_NODES, "launch": {**K3_4_NODES["launch"], name: value}}


@pytest.fixture
def api(client, catalog, users):
    client.force_login(users["engineer"])
    return client


def post(client, body, url="/api/plan"):
    data = body if isinstance(body, (str, bytes)) else json.dumps(body)
    return client.post(url, data=data, content_type="application/json")


# --------------------------------------------------------------------------- site values


@pytest.mark.parametrize("tail", HOSTILE_TAILS, ids=["newline", "semicolon", "subshell", "backtick", "space"])
@pytest.mark.parametrize("name", list(FIELDS))
def test_api_plan_refuses_hostile_launch_values_naming_the_field(api, name, tail):
    response = post(api, _with_launch(name, FIELDS[name](tail)))
    assert response.status_code == 400, response.content[:300]
    assert f"launch.{name}" in response.json()["errors"]


@pytest.mark.parametrize("tail", HOSTILE_TAILS, ids=["newline", "semicolon", "subshell", "backtick", "space"])
@pytest.mark.parametrize("name", list(FIELDS))
def test_manage_py_plan_refuses_hostile_launch_values_naming_the_field(catalog, tmp_path, name, tail):
    path = tmp_path / "req.json"
    path.write_text(json.dumps(_with_launch(name, FIELDS[name](tail))))
    with pytest.raises(CommandError, match=rf"launch\.{name}:"):
        call_command("plan", str(path), stdout=StringIO())


def test_the_nginx_upstream_injection_of_the_issue_is_a_400(api):
    evil = "10.0.0.1:8000 max_fails=2;\n server evil.example.com"
    body = {**K3_4_NODES, "topology": {"kind": "primary_standby", "nodes": 8}}
    body["launch"] = {**K3_4_NODES["launch"], "node_ips": [evil] + [f"10.0.0.{i}" for i in range(2, 9)]}
    response = post(api, body)
    assert response.status_code == 400
    assert "entry 1" in response.json()["errors"]["launch.node_ips"][0]


def test_bundle_and_quote_create_refuse_hostile_values_too(api):
    body = json.dumps(_with_launch("node_ips", FIELDS["node_ips"]("\ntouch /tmp/x")))
    response = api.post("/configurator/bundle", {"request_json": body})
    assert response.status_code == 400 and "launch.node_ips" in response.json()["errors"]
    response = api.post("/quotes/create/", {"request_json": body, "customer_name": "ACME", "discount": "0"})
    assert response.status_code == 400
    assert b"launch.node_ips" in response.content or "node_ips" in response.content.decode()
    from quotes.models import Quote

    assert not Quote.objects.exists()


def test_valid_site_values_still_plan_and_ipv6_and_host_names_pass(api):
    body = _with_launch("node_ips", ["fd00::11", "node-2.dc.example", "10.0.0.13", "10.0.0.14"])
    body["launch"]["served_model_name"] = "moonshotai/Kimi-K3"
    assert post(api, body).status_code == 200


def _inline(kind: str) -> dict:
    from catalog.models import LlmModel, ServerModel
    from configurator.io.requests import to_jsonable
    from configurator.port.inputs import model_spec, server_spec

    if kind == "model":
        return to_jsonable(model_spec(LlmModel.objects.get(slug="kimi-k3")))
    return to_jsonable(server_spec(ServerModel.objects.get(slug="atlas-800-a3")))


@pytest.mark.parametrize(
    "kind,name",
    [("model", "Kimi K3\ntouch /tmp/x\n#"), ("server", "A3\u2028rm -rf /"), ("model", "K3\u202eevil")],
)
def test_inline_catalog_names_with_control_characters_are_a_400(api, kind, name):
    inline = {**_inline(kind), "name": name}
    response = post(api, {**K3_4_NODES, kind: inline})
    assert response.status_code == 400, response.content[:300]
    errors = response.json()["errors"]
    assert f"{kind}.name" in errors and "U+" in errors[f"{kind}.name"][0]


def test_inline_catalog_entries_without_control_characters_still_plan(api):
    assert (
        post(api, {**K3_4_NODES, "model": _inline("model"), "server": _inline("server")}).status_code == 200
    )


# --------------------------------------------------------------------------- hostile JSON


def _nested(levels: int) -> str:
    return "[" * levels + "]" * levels


def _url_names(patterns, prefix="") -> set[str]:
    names = set()
    for p in patterns:
        if hasattr(p, "url_patterns"):
            ns = f"{prefix}{p.namespace}:" if p.namespace else prefix
            names |= _url_names(p.url_patterns, ns)
        elif p.name:
            names.add(prefix + p.name)
    return names


# Every view that takes a JSON document (a JSON body, or a ``request_json`` form field).
JSON_VIEWS = [
    "configurator:api_plan",
    "configurator:api_recommend",
    "configurator:bundle",
    "configurator:planner_open",
    "quotes:create",
]


def _json_endpoints() -> list[str]:
    from django.urls import reverse

    assert set(JSON_VIEWS) <= _url_names(get_resolver().url_patterns)
    return [reverse(name) for name in JSON_VIEWS]


JSON_BODY = {"/api/plan", "/api/recommend"}


def _send(client, url, text):
    if url in JSON_BODY:
        return post(client, text, url)
    return client.post(url, {"request_json": text, "customer_name": "ACME", "discount": "0"})


@pytest.mark.parametrize("url", _json_endpoints())
def test_3000_level_nesting_is_a_400_on_every_json_endpoint(api, url):
    response = _send(api, url, _nested(3000))
    assert response.status_code == 400, (url, response.status_code)
    if url in JSON_BODY or url == "/configurator/bundle":
        assert "3,000 levels" in json.dumps(response.json())


@pytest.mark.parametrize("url", _json_endpoints())
def test_1e308_in_a_numeric_field_is_a_400(api, url):
    text = json.dumps({**K3_4_NODES, "serving": {**K3_4_NODES["serving"], "max_model_len": 1e308}})
    response = _send(api, url, text)
    assert response.status_code == 400, (url, response.status_code, response.content[:200])


@pytest.mark.parametrize(
    "field,value",
    [("vocab_size", 1e308), ("vocab_size", 10**400), ("hidden_size", -1), ("num_hidden_layers", 10**8)],
)
def test_extreme_hf_config_values_are_a_400_naming_hf_config(api, field, value):
    from pathlib import Path

    config_dir = Path(__file__).resolve().parents[1] / "data" / "model-configs"
    config = json.loads((config_dir / "meta-llama--Meta-Llama-3.1-8B.config.json").read_text())
    config[field] = value
    body = {**K3_4_NODES, "model": {"hf_config": config, "weight_format": "bf16"}}
    body.pop("launch")
    response = post(api, json.dumps(body))
    assert response.status_code == 400, response.content[:300]
    errors = response.json()["errors"]
    assert "model.hf_config" in errors or "request" in errors


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_non_finite_numbers_are_refused_while_parsing(api, literal):
    text = json.dumps(K3_4_NODES).replace('"max_model_len": 133120', f'"max_model_len": {literal}')
    response = post(api, text)
    assert response.status_code == 400 and "request" in response.json()["errors"]


@pytest.mark.parametrize("url", _json_endpoints())
def test_a_body_over_2_mb_is_a_413_with_a_json_body(api, url):
    padding = "x" * (2 * 1024 * 1024 + 10)
    if url in JSON_BODY:
        response = post(api, json.dumps({**K3_4_NODES, "scenario": padding}), url)
    else:
        response = api.post(url, {"request_json": padding})
    assert response.status_code == 413, (url, response.status_code)
    assert response["Content-Type"].startswith("application/json")
    assert "too large" in response.json()["errors"]["request"][0]


def test_manage_py_plan_refuses_deep_nesting(catalog, tmp_path):
    path = tmp_path / "deep.json"
    path.write_text(_nested(3000))
    with pytest.raises(CommandError, match="3,000 levels"):
        call_command("plan", str(path), stdout=StringIO())


def test_json_depth_ignores_brackets_inside_strings():
    assert jsonlimits.json_depth('{"a": "[[[[{{{{", "b": [1, [2]]}') == 3
    assert jsonlimits.json_depth('{"a": "\\"[[["}') == 1
    assert jsonlimits.loads('{"a": "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["}') == {"a": "[" * 42}


EXTREME = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from([1e308, -1e308, 5e-324, 10**19, -1, 0])
    | st.text(max_size=12),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3)
    ),
    max_leaves=12,
)


@settings(
    max_examples=500,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    url=st.sampled_from(_json_endpoints()),
    depth=st.integers(min_value=0, max_value=4000),
    section=st.sampled_from(["serving", "workload", "commercial", "launch", "topology", "model", "site"]),
    value=EXTREME,
)
def test_nested_and_extreme_json_never_gives_a_500(api, url, depth, section, value):
    body = {**K3_4_NODES, section: value}
    text = "[" * depth + json.dumps(body) + "]" * depth
    response = _send(api, url, text)
    assert response.status_code < 500, (url, depth, section, response.content[:300])


@pytest.mark.parametrize("section", ["topology", "serving", "launch"])
def test_planner_open_with_a_non_object_section_is_not_a_500(api, section):
    # Found by the hypothesis run above: form_data_from_request called .items() on a bool.
    response = api.post("/planner/open", {"request_json": json.dumps({**K3_4_NODES, section: True})})
    assert response.status_code in (200, 400)


def _numeric_paths() -> list[tuple[str, ...]]:
    """Every bounded numeric field a request section carries (RANGES in configurator/io/requests.py)."""
    from configurator.io.requests import RANGES

    paths = []
    for key in RANGES:
        section, name = key.split(".", 1)
        if section in ("serving", "workload", "commercial", "performance", "launch"):
            paths.append((section, name))
        elif section == "parallel":
            paths.append(("topology", "parallel", name))
        elif key == "topology.nodes":
            paths.append(("topology", "nodes"))
    return paths


@pytest.mark.parametrize("value", [1e308, -1e308, 10**30])
def test_extreme_numbers_in_every_numeric_request_field_are_a_400(api, value):
    import copy

    for path in _numeric_paths():
        body = copy.deepcopy(K3_4_NODES)
        node = body
        for part in path[:-1]:
            node = node.setdefault(part, {})
        node[path[-1]] = value
        response = post(api, body)
        assert response.status_code == 400, (path, response.content[:200])
        assert any(k.endswith(path[-1]) for k in response.json()["errors"]), path
