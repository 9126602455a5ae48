"""Real failover: the primary/standby gateway's active health check, run against stubs.

nginx open source has passive checks only (nginx.org ngx_http_upstream_module: max_fails/fail_timeout;
the active ``health_check`` directive is NGINX Plus), so the bundle ships ``gateway/llm-healthcheck.sh``:
a one-token completion to the primary, and after two failures the primary's server line is marked
``down`` and nginx reloads; three good answers put it back.
"""

from __future__ import annotations

import os
import subprocess

from configurator.engine.launch import build_launch
from configurator.engine.layout import resolve_layout
from quotes.pdf.sample import sample_request

STUBS = {
    # answers from a queue file: one line per probe, "ok" or "fail"; records the request it was sent
    "curl": """\
#!/usr/bin/env bash
printf '%s\\n' "$*" >> "$STUB_DIR/curl.log"
answer=$(head -n 1 "$STUB_DIR/answers"); sed -i 1d "$STUB_DIR/answers"
[ "$answer" = ok ]
""",
    # keeps a copy of the config at every reload
    "nginx": """\
#!/usr/bin/env bash
printf '%s\\n' "$*" >> "$STUB_DIR/nginx.log"
if [ "$*" = "-s reload" ]; then cat "$NGINX_CONF" >> "$STUB_DIR/reloads"; echo '=====' >> "$STUB_DIR/reloads"; fi
""",
    # ends the loop once every answer is used
    "sleep": """\
#!/usr/bin/env bash
if [ ! -s "$STUB_DIR/answers" ]; then kill -TERM "$PPID"; fi
""",
}


def _bundle():
    req = sample_request("8node-standby")  # the seeded a3-8-primary-standby with a launch section
    return req, build_launch(req, resolve_layout(req))


def test_primary_standby_gateway_has_an_active_check_and_retries_on_the_standby():
    req, result = _bundle()
    nginx = result.files["gateway/nginx.conf"]
    primary, standby = req.launch.node_ips[0], req.launch.node_ips[4]
    assert f"    server {primary}:8000 max_fails=2 fail_timeout=10s;" in nginx
    assert f"    server {standby}:8000 backup;" in nginx
    assert "non_idempotent" in nginx and "proxy_next_upstream_tries 2;" in nginx
    check = result.files["gateway/llm-healthcheck.sh"]
    assert f"http://{primary}:8000/v1/completions" in check and '"max_tokens":1' in check


def test_the_health_check_moves_traffic_to_the_standby_and_back(tmp_path):
    req, result = _bundle()
    primary = req.launch.node_ips[0]
    conf = tmp_path / "llm-gateway.conf"
    conf.write_text(result.files["gateway/nginx.conf"])
    for name, text in STUBS.items():
        (tmp_path / name).write_text(text)
        (tmp_path / name).chmod(0o755)
    # two failures (primary down), then three good answers (primary back)
    (tmp_path / "answers").write_text("fail\nfail\nok\nok\nok\n")
    script = tmp_path / "llm-healthcheck.sh"
    script.write_text(result.files["gateway/llm-healthcheck.sh"])
    env = {**os.environ, "PATH": f"{tmp_path}:{os.environ['PATH']}", "STUB_DIR": str(tmp_path),
           "NGINX_CONF": str(conf)}  # fmt: skip
    proc = subprocess.run(["bash", str(script)], capture_output=True, text=True, env=env, timeout=30)
    assert "traffic moved to the standby" in proc.stderr and "traffic back on the primary" in proc.stderr
    probes = (tmp_path / "curl.log").read_text().splitlines()
    assert len(probes) == 5
    assert all(f"http://{primary}:8000/v1/completions" in p and "-m 10" in p for p in probes)
    reloads = (tmp_path / "reloads").read_text().split("=====\n")[:-1]
    assert len(reloads) == 2  # down after the 2nd failure, up after the 3rd good answer
    assert f"    server {primary}:8000 down;" in reloads[0]
    assert f"server {primary}:8000 max_fails" not in reloads[0]
    assert reloads[1] == result.files["gateway/nginx.conf"]  # back exactly as installed
    assert conf.read_text() == result.files["gateway/nginx.conf"]
    # nginx -t before every reload
    assert (tmp_path / "nginx.log").read_text().splitlines() == ["-t", "-s reload", "-t", "-s reload"]


def test_a_hung_primary_is_not_trusted_on_its_health_endpoint():
    # vLLM's /health stays 200 while a collective hangs; the probe is a real one-token completion, and the
    # HCCL execution timeout is lowered so the hang also ends the engine in minutes.
    req, result = _bundle()
    check = result.files["gateway/llm-healthcheck.sh"]
    assert "/health" not in check.split("url=")[1].splitlines()[0]
    assert {n.env["HCCL_EXEC_TIMEOUT"] for n in result.nodes} == {"204"}
