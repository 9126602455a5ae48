"""What sits in front of the engines: the P/D proxy, the two-cluster nginx gateway, its active health
check and keepalived.

``gateway/nginx.conf`` is rendered from a directive tree whose every token is checked against a
bare-word grammar; keepalived from checked tokens (VRRP ``vrrp_instance`` / ``vrrp_script``,
keepalived.org, keepalived.conf(5)); the proxy command through ``shlex.quote``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .. import recipes as rc
from .. import site_values as sv
from ..types import BundleContext, NodeLaunch, TopologyKind
from .nodes import upstream_host
from .shell import comment, join_argv, quote, script

GATEWAY_VIP = "__GATEWAY_VIP__"  # the clients' virtual IP, moved between the two gateways by keepalived
GATEWAY_NIC = "__GATEWAY_NIC__"
PASSIVE_CHECK = (
    "max_fails=2",
    "fail_timeout=10s",
)  # an upstream server's options: out for 10 s after 2 fails


def proxy_body(ctx: BundleContext, pre: Sequence[tuple[str, int]], dec: Sequence[tuple[str, int]]) -> str:
    """The P/D proxy's program, for ``start-proxy.sh`` and the Kubernetes Deployment alike (only the
    endpoints differ: node addresses there, the LeaderWorkerSet pods' DNS names here)."""
    argv = proxy_argv(ctx, pre, dec)
    recipe = rc.for_context(ctx.recipe, ctx.ascend)
    if recipe.proxy == "vllm-router":
        image = recipe.proxy_image or rc.ROUTER_IMAGE
        return (
            "# vLLM's router (github.com/vllm-project/router): P/D aware, round robin over both sides.\n"
            f"# It runs from its own image ({image}; docker/start-proxy.sh starts it): the vLLM image lacks it.\n"
            "if ! command -v vllm-router >/dev/null 2>&1; then\n"
            f"  echo {quote('refusing to start: vllm-router is not on the PATH; run docker/start-proxy.sh (' + image + ')')} >&2\n"
            "  exit 2\n"
            "fi\n"
            f"exec {join_argv(tuple(argv))}\n"
        )
    return (
        "# Requests go to a prefill engine first, then to a decode engine (MooncakeConnectorV1).\n"
        "# The proxy ships in the vLLM-Ascend image (examples/disaggregated_prefill_v1/).\n"
        f"if [ ! -f {quote(argv[1])} ]; then\n"
        f"  echo {quote('refusing to start: ' + argv[1] + ' is missing; run this inside the vLLM-Ascend image')} >&2\n"
        "  exit 2\n"
        "fi\n"
        f"exec {join_argv(tuple(argv))}\n"
    )


def proxy_script(ctx: BundleContext, nodes: list[NodeLaunch], proxy_host: str) -> str:
    pre = [(n.host, port) for n in nodes if n.role == "prefill" for port in n.api_ports]
    dec = [(n.host, port) for n in nodes if n.role == "decode" for port in n.api_ports]
    body = proxy_body(ctx, pre, dec)
    return script(f"P/D load-balancing proxy; run on {proxy_host} after every engine is up", {}, body)


# nginx: a directive tree rendered by one function.  A node is ("#", text) for a
# comment line, ("", ) for a blank line, (name, args) for a directive, (name,
# args, children) for a block, each optionally with a trailing comment.  Every
# name and argument must be a bare nginx word (no space, ';', '{', '}', '#',
# quote or control character), so no value can end a directive or open a block.
_NGINX_WORD = re.compile(r'[A-Za-z0-9_.:\[\]/$=@~^*+-]+|""', re.ASCII)


def _nginx_word(token: str) -> str:
    if not _NGINX_WORD.fullmatch(token):
        raise ValueError(f"not a bare nginx word: {token!r}")
    return token


def _nginx_render(nodes: list[tuple], depth: int = 0) -> list[str]:
    pad = "    " * depth
    out: list[str] = []
    for node in nodes:
        if node[0] == "#":
            out.append(pad + comment(node[1]))
        elif node[0] == "":
            out.append("")
        else:
            name, args, *rest = node
            children = rest[0] if rest and isinstance(rest[0], list) else None
            trailing = rest[-1] if rest and isinstance(rest[-1], str) else ""
            words = " ".join(_nginx_word(t) for t in (name, *args))
            if children is None:
                out.append(pad + words + ";" + (f"  {comment(trailing)}" if trailing else ""))
            else:
                out.append(pad + words + " {")
                out += _nginx_render(children, depth + 1)
                out.append(pad + "}")
    return out


def _upstream_name(group: str) -> str:
    return _nginx_word(group.replace("-", "_"))


def nginx_conf(ctx: BundleContext, masters: list[NodeLaunch]) -> str:
    port = ctx.api_port
    listen = str(int(ctx.proxy_port))
    common: list[tuple] = [
        ("proxy_http_version", ["1.1"]),
        ("proxy_set_header", ["Connection", '""']),
        ("proxy_set_header", ["Host", "$host"]),
        ("proxy_buffering", ["off"], "stream tokens as they come"),
        ("proxy_read_timeout", ["3600s"], "long reasoning answers"),
        ("proxy_connect_timeout", ["5s"]),
    ]
    if ctx.topology == TopologyKind.PRIMARY_STANDBY:
        a, b = masters[0], masters[1]
        tree: list[tuple] = [
            ("#", f"Primary/standby gateway for {ctx.model_name}: {a.group} serves, {b.group} is the hot standby."),
            ("#", "Place inside the http {} block (e.g. /etc/nginx/conf.d/) on both gateway hosts; keepalived"),
            ("#", "(keepalived-master.conf / keepalived-backup.conf) moves the clients' virtual IP between them."),
            ("#", "Active check: llm-healthcheck.sh probes the primary's /health and /metrics every "
                  f"{HEALTH_INTERVAL_S} s and, after {HEALTH_WINDOW_S} s of failed probes, marks the primary's server "
                  "line below 'down' and reloads nginx."),
            ("#", "Passive check: a refused connection, a timeout or a 502/503/504 is retried on the standby at"),
            ("#", "once, POSTs included (non_idempotent): vLLM answers 502/503/504 only when it did not serve the "
                  "request."),
            (
                "upstream",
                ["llm_primary_standby"],
                [
                    ("server", [sv.host_port(upstream_host(a), port), *PASSIVE_CHECK]),
                    ("server", [sv.host_port(upstream_host(b), port), "backup"]),
                    ("keepalive", ["32"]),
                ],
            ),
            ("",),
            (
                "server",
                [],
                [
                    ("listen", [listen]),
                    ("location", ["=", "/health"], [("proxy_pass", ["http://llm_primary_standby/health"])]),
                    (
                        "location",
                        ["/"],
                        [
                            ("proxy_pass", ["http://llm_primary_standby"]),
                            (
                                "proxy_next_upstream",
                                ["error", "timeout", "http_502", "http_503", "http_504", "non_idempotent"],
                            ),
                            ("proxy_next_upstream_tries", ["2"]),
                            ("proxy_next_upstream_timeout", ["30s"]),
                            *common,
                        ],
                    ),
                ],
            ),
        ]  # fmt: skip
        return "\n".join(_nginx_render(tree)) + "\n"
    tree = [
        ("#", f"Tenant-isolation gateway for {ctx.model_name}: each tenant has its own listener (port) and"),
        ("#", "its own cluster. No request header chooses the cluster, so a client cannot reach another"),
        (
            "#",
            "tenant's cluster by sending one; give each tenant only its own port (firewall or API gateway).",
        ),
        ("#", "Place inside the http {} block (e.g. /etc/nginx/conf.d/)."),
        ("",),
    ]
    for m in masters:
        tree += [
            (
                "upstream",
                [_upstream_name(m.group)],
                [
                    ("server", [sv.host_port(upstream_host(m), port), *PASSIVE_CHECK]),
                    ("keepalive", ["32"]),
                ],
            ),
            ("",),
        ]
    for i, m in enumerate(masters):
        tree += [
            ("#", f"Tenant {i + 1}: {m.group} on port {int(ctx.proxy_port) + i}."),
            (
                "server",
                [],
                [
                    ("listen", [str(int(ctx.proxy_port) + i)]),
                    ("location", ["/"], [("proxy_pass", [f"http://{_upstream_name(m.group)}"]), *common]),
                ],
            ),
            ("",),
        ]
    return "\n".join(_nginx_render(tree[:-1])) + "\n"


GATEWAY_CONF = "/etc/nginx/conf.d/llm-gateway.conf"  # where the gateway host installs gateway/nginx.conf
HEALTH_INTERVAL_S = 5
HEALTH_TIMEOUT_S = 5  # for /health and /metrics, which vLLM answers beside a full batch
HEALTH_WINDOW_S = 30  # failed probes for this long, in a row, before the primary is taken out
HEALTH_RISES = 3  # consecutive good probes before it is put back


def proxy_argv(
    ctx: BundleContext, pre: Sequence[tuple[str, int]], dec: Sequence[tuple[str, int]]
) -> list[str]:
    """The proxy command: vllm-router on CUDA [ROUTER], vLLM-Ascend's load-balance proxy on Ascend."""
    recipe = rc.for_context(ctx.recipe, ctx.ascend)
    if recipe.proxy == "vllm-router":
        argv = ["vllm-router", "--policy", "round_robin", "--vllm-pd-disaggregation"]
        argv += [w for h, p in pre for w in ("--prefill", f"http://{sv.host_port(h, p)}")]
        argv += [w for h, p in dec for w in ("--decode", f"http://{sv.host_port(h, p)}")]
        argv += ["--host", "0.0.0.0", "--port", str(ctx.proxy_port)]
        if ctx.load_wait_s:
            # the router gives up on engines not healthy within 600 s by default (vllm-project/router
            # src/main.rs --worker-startup-timeout-secs): as long as the engines take to load (launch.load_wait_s)
            argv += ["--worker-startup-timeout-secs", str(ctx.load_wait_s)]
        return argv
    return [
        "python",
        PD_PROXY_ASCEND,
        "--host",
        "0.0.0.0",
        "--port",
        str(ctx.proxy_port),
        "--prefiller-hosts",
        *[h for h, _ in pre],
        "--prefiller-ports",
        *[str(p) for _, p in pre],
        "--decoder-hosts",
        *[h for h, _ in dec],
        "--decoder-ports",
        *[str(p) for _, p in dec],
    ]


# vLLM-Ascend ships it in the image (releases/v0.23.0, examples/disaggregated_prefill_v1/).
PD_PROXY_ASCEND = (
    "/vllm-workspace/vllm-ascend/examples/disaggregated_prefill_v1/load_balance_proxy_server_example.py"
)


def primary_line(host_port: str, up: bool) -> str:
    """The primary's line in the gateway's upstream block (as :func:`nginx_conf` renders it), up or down."""
    return f"    server {host_port} {' '.join(PASSIVE_CHECK)};" if up else f"    server {host_port} down;"


def healthcheck_script(ctx: BundleContext, primary: str) -> str:
    """Active health check for the primary (nginx open source has none): health measured, not guessed.

    A probe asks the primary's ``/health`` (vLLM answers 200 while its engine core is alive,
    vllm/entrypoints/openai/api_server.py ``health``) and ``/metrics``: the running and waiting requests
    (gauges ``vllm:num_requests_running`` / ``vllm:num_requests_waiting``) and the generated-token counter
    (``vllm:generation_tokens_total``), per engine, from vllm/v1/metrics/loggers.py (PrometheusStatLogger).
    A busy primary is healthy: its queue grows but tokens keep coming.  A hung one (a stuck collective keeps
    ``/health`` at 200) has requests running and no new token.  The primary is marked down after
    :data:`HEALTH_WINDOW_S` seconds of failed probes in a row, not after two slow answers; every log line
    says what the check saw and what it did, and a config change nginx refuses is undone and said so.
    """
    body = f"""\
# Every {HEALTH_INTERVAL_S} s: /health must answer 200 within {HEALTH_TIMEOUT_S} s, and while requests run
# the generated-token counter in /metrics must grow.  A primary that is busy (its queue grows, tokens keep
# coming) is healthy; one that fails every probe for {HEALTH_WINDOW_S} s is marked down in the gateway
# config and nginx reloads, so every request goes to the standby; after {HEALTH_RISES} good probes in a row
# it is put back.  The intervals can be overridden with HEALTH_INTERVAL_S, HEALTH_TIMEOUT_S,
# HEALTH_WINDOW_S and HEALTH_RISES.
conf=${{NGINX_CONF:-{quote(GATEWAY_CONF)}}}
interval=${{HEALTH_INTERVAL_S:-{HEALTH_INTERVAL_S}}}
timeout=${{HEALTH_TIMEOUT_S:-{HEALTH_TIMEOUT_S}}}
window=${{HEALTH_WINDOW_S:-{HEALTH_WINDOW_S}}}
rises_needed=${{HEALTH_RISES:-{HEALTH_RISES}}}
base={quote("http://" + primary)}
up_line={quote(primary_line(primary, True))}
down_line={quote(primary_line(primary, False))}
log() {{ echo "$(date -Is) $*" >&2; }}
metric() {{  # the sum of one vLLM metric over its label sets (one per engine), as a whole number
  awk -v name="$1" '$1 == name || index($1, name "{{") == 1 {{ s += $NF }} END {{ printf "%d\\n", s }}' <<<"$2"
}}
why=""
swap() {{  # put line "$2" for line "$1" in the gateway config and reload nginx; on any failure restore it
  if ! grep -qxF -- "$1" "$conf"; then why="the line to change is not in $conf"; return 1; fi
  if ! cp -- "$conf" "$conf.bak"; then why="$conf could not be backed up"; return 1; fi
  local line
  while IFS= read -r line; do
    if [ "$line" = "$1" ]; then printf '%s\\n' "$2"; else printf '%s\\n' "$line"; fi
  done < "$conf.bak" > "$conf"
  if ! nginx -t >/dev/null 2>&1; then
    mv -- "$conf.bak" "$conf"; why="nginx -t rejected the changed config (the old one is restored)"; return 1
  fi
  if ! nginx -s reload; then
    mv -- "$conf.bak" "$conf"; why="nginx -s reload failed (the old config is restored)"; return 1
  fi
  rm -f -- "$conf.bak"
}}
last_tokens=""
bad_since=""
reason=""
rises=0
current=up
while true; do
  now=$(date +%s)
  reason=""
  if ! curl -sf -m "$timeout" -o /dev/null "$base/health"; then
    reason="/health did not answer 200 within $timeout s"
  elif ! metrics=$(curl -sf -m "$timeout" "$base/metrics"); then
    reason="/metrics did not answer within $timeout s"
  else
    running=$(metric vllm:num_requests_running "$metrics")
    waiting=$(metric vllm:num_requests_waiting "$metrics")
    tokens=$(metric vllm:generation_tokens_total "$metrics")
    if [ "$running" -gt 0 ] && [ -n "$last_tokens" ] && [ "$tokens" -le "$last_tokens" ]; then
      reason="$running requests running ($waiting waiting) and no token generated since the last probe"
    fi
    last_tokens=$tokens
  fi
  if [ -z "$reason" ]; then
    bad_since=""
    rises=$((rises + 1))
  else
    rises=0
    if [ -z "$bad_since" ]; then bad_since=$now; fi
    log "primary probe failed: $reason"
  fi
  if [ "$current" = up ] && [ -n "$bad_since" ] && [ $((now - bad_since)) -ge "$window" ]; then
    if swap "$up_line" "$down_line"; then
      current=down
      log "primary failing for $((now - bad_since)) s ($reason): traffic moved to the standby"
    else
      log "primary failing for $((now - bad_since)) s ($reason), but traffic was NOT moved: $why"
    fi
  elif [ "$current" = down ] && [ "$rises" -ge "$rises_needed" ]; then
    if swap "$down_line" "$up_line"; then
      current=up
      log "primary passed $rises probes in a row: traffic back on the primary"
    else
      log "primary passed $rises probes in a row, but traffic stays on the standby: $why"
    fi
  fi
  sleep "$interval"
done
"""
    return script(
        f"Active health check of the primary cluster for {ctx.model_name}; run beside nginx", {}, body
    )


_KA_WORD = re.compile(r"[A-Za-z0-9_./:-]+")


def _ka(token: str | int) -> str:
    text = str(token)
    if not _KA_WORD.fullmatch(text):
        raise ValueError(f"not a keepalived word: {text!r}")
    return text


def keepalived_conf(state: str, priority: int, nic: str, vip: str, peer_note: str) -> str:
    """One gateway's keepalived.conf: VRRP moves the virtual IP to the other gateway if nginx stops."""
    lines = [
        comment(f"keepalived for the LLM gateway ({state}); {peer_note}"),
        "# The clients' address is the virtual IP; it lives on the gateway whose nginx is running.",
        "vrrp_script chk_nginx {",
        "    script " + '"' + _ka("/usr/bin/pgrep") + " " + _ka("-x") + " " + _ka("nginx") + '"',
        "    interval 2",
        "    fall 2",
        "    rise 2",
        "}",
        "vrrp_instance LLM_GATEWAY {",
        f"    state {_ka(state)}",
        f"    interface {_ka(nic)}",
        "    virtual_router_id 51",
        f"    priority {_ka(priority)}",
        "    advert_int 1",
        "    virtual_ipaddress {",
        f"        {_ka(vip)}",
        "    }",
        "    track_script {",
        "        chk_nginx",
        "    }",
        "}",
    ]
    return "\n".join(lines) + "\n"
