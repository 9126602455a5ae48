"""Scripts that tell the truth: run the generated node scripts against a stub ``vllm``."""

from __future__ import annotations

import json
import os
import subprocess
import time

import pytest

from configurator import reference
from configurator.engine.launch import build_launch, bundle_files
from configurator.engine.layout import resolve_layout
from documents.pdf.sample import sample_request, sample_request_json

# A stub vllm: logs its pid and --port; the engine on FAIL_PORT exits with FAIL_CODE after a moment,
# every other engine serves (sleeps) until it is killed.
STUB_VLLM = """\
#!/usr/bin/env bash
port=""; prev=""
for a in "$@"; do
  if [ "$prev" = "--port" ]; then port="$a"; fi
  prev="$a"
done
echo "$$ $port ${ASCEND_RT_VISIBLE_DEVICES:-}" >> "$STUB_LOG"
if [ -n "${FAIL_ALL:-}" ] || [ "$port" = "${FAIL_PORT:-none}" ]; then sleep 0.3; exit "${FAIL_CODE:-3}"; fi
if [ -n "${ALL_EXIT:-}" ]; then sleep 0.3; exit 0; fi
exec sleep 60
"""


def _two_engine_decode_script() -> tuple[str, list[int]]:
    """A decode node of an A3 P/D plan with two engines per node (TP8 × 2 on 16 NPUs)."""
    data = sample_request_json("8p8d")  # the seeded a3-16-8p8d with a launch section
    side = {"tp": 8, "dp": 16, "pp": 1, "expert_parallel": True, "dp_local": 2}
    data["topology"] = {**data["topology"], "parallel": side, "decode_parallel": side}
    req = reference.request(data)
    result = build_launch(req, resolve_layout(req))
    node = next(n for n in result.nodes if n.role == "decode")
    assert len(node.argv) == 2
    return bundle_files(result)[node.script], list(node.api_ports)


def _run(tmp_path, script: str, **env) -> tuple[subprocess.CompletedProcess, float, list[list[str]]]:
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    stub = bindir / "vllm"
    stub.write_text(STUB_VLLM)
    stub.chmod(0o755)
    path = tmp_path / "node.sh"
    path.write_text(script)
    log = tmp_path / "stub.log"
    full = {**os.environ, "PATH": f"{bindir}:{os.environ['PATH']}", "STUB_LOG": str(log), **env}
    start = time.monotonic()
    proc = subprocess.run(["bash", str(path)], capture_output=True, text=True, env=full, timeout=30)
    elapsed = time.monotonic() - start
    rows = [line.split() for line in log.read_text().splitlines()] if log.exists() else []
    return proc, elapsed, rows


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_a_node_whose_engine_fails_exits_non_zero_and_stops_the_other_engine(tmp_path):
    script, ports = _two_engine_decode_script()
    assert "wait -n" in script and "trap " in script
    proc, elapsed, rows = _run(tmp_path, script, FAIL_PORT=str(ports[1]), FAIL_CODE="3")
    assert proc.returncode == 3, proc.stderr  # the failed engine's own status
    assert "stopping the others" in proc.stderr
    assert elapsed < 10  # not the survivor's 60 s
    assert sorted(r[1] for r in rows) == sorted(str(p) for p in ports)
    # each engine got its own half of the 16 NPUs
    assert sorted(r[2] for r in rows) == ["0,1,2,3,4,5,6,7", "8,9,10,11,12,13,14,15"]
    time.sleep(0.2)
    assert not any(_alive(int(r[0])) for r in rows), "an engine was left running"


def test_a_node_whose_engines_all_exit_cleanly_still_fails(tmp_path):
    # A server that stops serving is a failure even with status 0: the old bare `wait` exited 0 here.
    script, _ = _two_engine_decode_script()
    proc, _, rows = _run(tmp_path, script, ALL_EXIT="1")
    assert proc.returncode == 1 and len(rows) == 2


def test_a_single_engine_node_execs_vllm_so_its_status_is_the_scripts(tmp_path):
    req = sample_request("4node")
    result = build_launch(req, resolve_layout(req))
    script = bundle_files(result)["node-01-cluster-worker.sh"]
    proc, _, rows = _run(tmp_path, script, FAIL_ALL="1", FAIL_CODE="5")
    assert proc.returncode == 5 and len(rows) == 1


# --------------------------------------------------------------------------- ports


def _pd_request(**launch):
    return {
        "model": "kimi-k3",
        "server": "atlas-800-a3",
        "topology": {
            "kind": "disaggregated",
            "nodes": 4,
            "prefill_nodes": 2,
            "decode_nodes": 2,
            "parallel": {"tp": 8, "dp": 4, "expert_parallel": True, "dp_local": 2},
            "decode_parallel": {"tp": 8, "dp": 4, "expert_parallel": True, "dp_local": 2},
        },
        "launch": launch,
    }


@pytest.mark.django_db
def test_an_engine_port_equal_to_the_proxy_port_is_a_400(client, catalog, users):
    client.force_login(users["engineer"])
    # two engines per node serve 8000 and 8001; the P/D proxy on the prefill master would take 8001 too
    body = _pd_request(api_port=8000, proxy_port=8001)
    response = client.post("/api/plan", data=json.dumps(body), content_type="application/json")
    assert response.status_code == 400
    errors = response.json()["errors"]
    assert "launch.proxy_port" in errors and "8001" in errors["launch.proxy_port"][0]
    # the same plan with the proxy elsewhere is accepted
    ok = client.post(
        "/api/plan",
        data=json.dumps(_pd_request(api_port=8000, proxy_port=8080)),
        content_type="application/json",
    )
    assert ok.status_code == 200


@pytest.mark.django_db
def test_mixed_slug_and_inline_switches_are_accepted(client, catalog, users):
    client.force_login(users["engineer"])
    inline = {
        "slug": "my-ib",
        "name": "Site IB switch",
        "fabric": "infiniband",
        "ports": 40,
        "port_speed_gbps": 200,
        "rack_units": 1,
        "power_kw": 0.8,
    }
    body = {"model": "llama-3-3-70b", "server": "hgx-h200-8gpu", "topology": {"kind": "single", "nodes": 1},
            "switches": ["mgmt-1ge", inline]}  # fmt: skip
    response = client.post("/api/plan", data=json.dumps(body), content_type="application/json")
    assert response.status_code == 200, response.content[:400]
    unknown = {**body, "switches": ["no-such-switch", inline]}
    response = client.post("/api/plan", data=json.dumps(unknown), content_type="application/json")
    assert response.status_code == 400 and "no-such-switch" in response.json()["errors"]["switches"][0]


@pytest.mark.django_db
def test_an_unset_context_is_clamped_to_the_models_limit(catalog):
    from configurator.planning.plans import plan_from_json

    # Qwen3-235B-A22B's config.json: max_position_embeddings 40960 (catalog/seed/model-configs)
    req, _ = plan_from_json({"model": "qwen3-235b-a22b", "server": "hgx-h200-8gpu",
                             "topology": {"kind": "single", "nodes": 2}})  # fmt: skip
    assert req.model.max_context == 40960 and req.serving.max_model_len == 40960
    # a value the request gives is left for the checks to judge
    req, result = plan_from_json({"model": "qwen3-235b-a22b", "server": "hgx-h200-8gpu",
                                  "topology": {"kind": "single", "nodes": 2},
                                  "serving": {"max_model_len": 65536}})  # fmt: skip
    assert req.serving.max_model_len == 65536
    assert "model.max_model_len_exceeds_context" in {c.code for c in result.checks}
