"""Real failover: the primary/standby gateway's active health check, run against stubs.

nginx open source has passive checks only (nginx.org ngx_http_upstream_module: max_fails/fail_timeout;
the active ``health_check`` directive is NGINX Plus), so the bundle ships ``gateway/llm-healthcheck.sh``.
It measures health instead of timing a request: vLLM's ``/health`` (200 while the engine core is alive,
vllm/entrypoints/openai/api_server.py) and ``/metrics`` (``vllm:num_requests_running``,
``vllm:num_requests_waiting`` gauges and the ``vllm:generation_tokens_total`` counter, one sample per
engine: vllm/v1/metrics/loggers.py).  A primary that is down, or hung (requests running, no token), for the
failure window is marked ``down`` and nginx reloads; a busy primary whose queue grows while tokens keep
coming stays in service, which the old one-token completion with a 10 s timeout did not allow (with 64
seats busy, a new request waits for a free seat far longer than 10 s).
"""

from __future__ import annotations

import os
import subprocess

from configurator.engine.launch import build_launch, bundle_files
from configurator.engine.layout import resolve_layout
from documents.pdf.sample import sample_request

# One line of $STUB_DIR/probes per probe, consumed by the /health request:
#   "down"                              connection refused (curl exit 7) for /health and /metrics
#   "<running> <waiting> <tokens> [slow]" /health 200, /metrics with these values (one sample per engine: the
#                                        values are split over two engines to exercise the sum)
# The clock ($STUB_DIR/clock, seconds) moves only when the script sleeps.
STUBS = {
    "curl": """\
#!/usr/bin/env bash
printf '%s\\n' "$*" >> "$STUB_DIR/curl.log"
url="${!#}"
if [[ "$url" == */health ]]; then
  head -n 1 "$STUB_DIR/probes" > "$STUB_DIR/current"; sed -i 1d "$STUB_DIR/probes"
fi
read -r running waiting tokens _ < "$STUB_DIR/current"
[ "$running" = down ] && exit 7
if [[ "$url" == */metrics ]]; then
  printf '# TYPE vllm:num_requests_running gauge\\n'
  printf 'vllm:num_requests_running{engine="0",model_name="kimi-k3"} %s.0\\n' "$((running / 2))"
  printf 'vllm:num_requests_running{engine="1",model_name="kimi-k3"} %s.0\\n' "$((running - running / 2))"
  printf 'vllm:num_requests_waiting{engine="0",model_name="kimi-k3"} %s.0\\n' "$waiting"
  printf 'vllm:generation_tokens_total{engine="0",model_name="kimi-k3"} %s.0\\n' "$((tokens / 2))"
  printf 'vllm:generation_tokens_total{engine="1",model_name="kimi-k3"} %s.0\\n' "$((tokens - tokens / 2))"
fi
exit 0
""",
    # keeps a copy of the config at every reload; "-t" fails while $STUB_DIR/nginx-t-fails exists
    "nginx": """\
#!/usr/bin/env bash
printf '%s\\n' "$*" >> "$STUB_DIR/nginx.log"
if [ "$*" = "-t" ] && [ -e "$STUB_DIR/nginx-t-fails" ]; then exit 1; fi
if [ "$*" = "-s reload" ]; then cat "$NGINX_CONF" >> "$STUB_DIR/reloads"; echo '=====' >> "$STUB_DIR/reloads"; fi
""",
    # advances the clock; ends the loop once every probe is used
    "sleep": """\
#!/usr/bin/env bash
echo $(( $(cat "$STUB_DIR/clock") + $1 )) > "$STUB_DIR/clock"
if [ ! -s "$STUB_DIR/probes" ]; then kill -TERM "$PPID"; fi
""",
    # the stub clock for "date +%s"; the real date otherwise (log lines)
    "date": """\
#!/usr/bin/env bash
if [ "$1" = "+%s" ]; then cat "$STUB_DIR/clock"; else exec /bin/date "$@"; fi
""",
}


def _bundle():
    req = sample_request("8node-standby")  # the seeded a3-8-primary-standby with a launch section
    return req, build_launch(req, resolve_layout(req))


def _run(tmp_path, probes: list[str], nginx_t_fails: bool = False):
    req, result = _bundle()
    conf = tmp_path / "llm-gateway.conf"
    conf.write_text(bundle_files(result)["gateway/nginx.conf"])
    for name, text in STUBS.items():
        (tmp_path / name).write_text(text)
        (tmp_path / name).chmod(0o755)
    (tmp_path / "probes").write_text("".join(p + "\n" for p in probes))
    (tmp_path / "clock").write_text("1000\n")
    if nginx_t_fails:
        (tmp_path / "nginx-t-fails").write_text("")
    script = tmp_path / "llm-healthcheck.sh"
    script.write_text(bundle_files(result)["gateway/llm-healthcheck.sh"])
    env = {**os.environ, "PATH": f"{tmp_path}:{os.environ['PATH']}", "STUB_DIR": str(tmp_path),
           "NGINX_CONF": str(conf)}  # fmt: skip
    proc = subprocess.run(["bash", str(script)], capture_output=True, text=True, env=env, timeout=60)
    reloads_file = tmp_path / "reloads"
    reloads = reloads_file.read_text().split("=====\n")[:-1] if reloads_file.exists() else []
    return req, result, proc, reloads, conf


def test_primary_standby_gateway_has_an_active_check_and_retries_on_the_standby():
    req, result = _bundle()
    nginx = bundle_files(result)["gateway/nginx.conf"]
    primary, standby = req.launch.node_ips[0], req.launch.node_ips[4]
    assert f"    server {primary}:8000 max_fails=2 fail_timeout=10s;" in nginx
    assert f"    server {standby}:8000 backup;" in nginx
    assert "non_idempotent" in nginx and "proxy_next_upstream_tries 2;" in nginx
    check = bundle_files(result)["gateway/llm-healthcheck.sh"]
    assert f"base=http://{primary}:8000" in check
    assert "/v1/completions" not in check  # no request that queues behind the serving seats


def test_a_slow_but_alive_primary_keeps_its_traffic(tmp_path):
    # The seeded pair serves 4 DP ranks × 16 seqs = 64 seats: all busy, 40 requests waiting, tokens still
    # coming (every probe sees the counter grow), for 12 probes × 5 s = 60 s, twice the failure window.
    probes = [f"64 40 {1000 + 500 * i}" for i in range(12)]
    _, _, proc, reloads, conf = _run(tmp_path, probes)
    assert reloads == [] and "traffic moved" not in proc.stderr and "probe failed" not in proc.stderr
    assert "down;" not in conf.read_text()
    assert not (tmp_path / "nginx.log").exists()


def test_a_down_primary_fails_over_after_the_window_and_comes_back(tmp_path):
    # Probes every 5 s: down from t=0; the window (30 s) is reached at the 7th failed probe (t=30); three
    # good probes put it back.
    req, result, proc, reloads, conf = _run(tmp_path, ["down"] * 7 + ["0 0 0", "2 0 10", "2 0 20"])
    primary = req.launch.node_ips[0]
    log = proc.stderr
    assert log.count("primary probe failed: /health did not answer 200 within 5 s") == 7
    assert (
        "primary failing for 30 s (/health did not answer 200 within 5 s): traffic moved to the standby"
        in log
    )
    assert "primary passed 3 probes in a row: traffic back on the primary" in log
    assert len(reloads) == 2
    assert f"    server {primary}:8000 down;" in reloads[0]
    assert f"server {primary}:8000 max_fails" not in reloads[0]
    assert reloads[1] == bundle_files(result)["gateway/nginx.conf"]  # back exactly as installed
    assert conf.read_text() == bundle_files(result)["gateway/nginx.conf"]
    # nginx -t before every reload
    assert (tmp_path / "nginx.log").read_text().splitlines() == ["-t", "-s reload", "-t", "-s reload"]


def test_a_short_outage_inside_the_window_does_not_fail_over(tmp_path):
    _, _, proc, reloads, _ = _run(tmp_path, ["down"] * 6 + ["64 0 100", "64 0 200"])  # 25 s < 30 s
    assert reloads == [] and "traffic moved" not in proc.stderr


def test_a_hung_primary_is_not_trusted_on_its_health_endpoint(tmp_path):
    # vLLM's /health stays 200 while a collective hangs: requests run, the token counter stands still.
    probes = ["64 10 5000"] + ["64 10 5000"] * 7
    _, _, proc, reloads, _ = _run(tmp_path, probes)
    assert "64 requests running (10 waiting) and no token generated since the last probe" in proc.stderr
    assert "traffic moved to the standby" in proc.stderr and len(reloads) == 1
    # and the HCCL execution timeout is lowered so the hang also ends the engine in minutes
    _, result = _bundle()
    assert {n.env["HCCL_EXEC_TIMEOUT"] for n in result.nodes} == {"204"}


def test_a_refused_config_change_is_undone_and_logged_as_such(tmp_path):
    _, result, proc, reloads, conf = _run(tmp_path, ["down"] * 8, nginx_t_fails=True)
    assert "traffic moved" not in proc.stderr
    assert (
        "but traffic was NOT moved: nginx -t rejected the changed config (the old one is restored)"
        in proc.stderr
    )
    assert reloads == [] and conf.read_text() == bundle_files(result)["gateway/nginx.conf"]
