"""What sits in front of the engines: the P/D proxy, the two-cluster nginx gateway, its active health
check and keepalived.

``gateway/nginx.conf`` is rendered from a directive tree whose every token is checked against a
bare-word grammar; keepalived from checked tokens (VRRP ``vrrp_instance`` / ``vrrp_script``,
keepalived.org, keepalived.conf(5)); the proxy command through ``shlex.quote``.
"""

from __future__ import annotations

import json
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


def proxy_script(ctx: BundleContext, nodes: list[NodeLaunch], proxy_host: str) -> str:
    pre = [(n.host, port) for n in nodes if n.role == "prefill" for port in n.api_ports]
    dec = [(n.host, port) for n in nodes if n.role == "decode" for port in n.api_ports]
    argv = proxy_argv(ctx, pre, dec)
    recipe = rc.for_context(ctx.recipe, ctx.ascend)
    if recipe.proxy == "vllm-router":
        body = (
            "# vLLM's router (github.com/vllm-project/router): P/D aware, round robin over both sides.\n"
            "if ! command -v vllm-router >/dev/null 2>&1; then\n"
            "  echo 'refusing to start: vllm-router is not installed (pip install vllm-router)' >&2\n"
            "  exit 2\n"
            "fi\n"
            f"exec {join_argv(tuple(argv))}\n"
        )
    else:
        body = (
            "# Requests go to a prefill engine first, then to a decode engine (MooncakeConnectorV1).\n"
            "# The proxy ships in the vLLM-Ascend image (examples/disaggregated_prefill_v1/).\n"
            f"if [ ! -f {quote(argv[1])} ]; then\n"
            f"  echo {quote('refusing to start: ' + argv[1] + ' is missing; run this inside the vLLM-Ascend image')} >&2\n"
            "  exit 2\n"
            "fi\n"
            f"exec {join_argv(tuple(argv))}\n"
        )
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
            ("#", "Active check: llm-healthcheck.sh sends the primary a one-token completion every "
                  f"{HEALTH_INTERVAL_S} s and, after {HEALTH_FAILS} failures, marks the primary's server "
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
HEALTH_TIMEOUT_S = 10
HEALTH_FAILS = 2  # consecutive failed probes before the primary is taken out
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
    """Active health check for the primary (nginx open source has none): a one-token completion."""
    probe = json.dumps({"model": ctx.served_name, "prompt": "ping", "max_tokens": 1}, separators=(",", ":"))
    body = f"""\
# Every {HEALTH_INTERVAL_S} s, send the primary a one-token completion with a {HEALTH_TIMEOUT_S} s timeout.
# After {HEALTH_FAILS} failures in a row the primary's server line in the gateway config is marked down
# and nginx reloads, so every request goes to the standby; after {HEALTH_RISES} good answers in a row it
# is put back.  A hung engine (a stuck collective keeps /health at 200) fails this probe in seconds.
conf=${{NGINX_CONF:-{quote(GATEWAY_CONF)}}}
url={quote("http://" + primary + "/v1/completions")}
probe={quote(probe)}
up_line={quote(primary_line(primary, True))}
down_line={quote(primary_line(primary, False))}
swap() {{  # swap "$1" for "$2" (whole lines, compared literally), then reload nginx
  local line
  while IFS= read -r line; do
    if [ "$line" = "$1" ]; then printf '%s\\n' "$2"; else printf '%s\\n' "$line"; fi
  done < "$conf" > "$conf.new" && mv "$conf.new" "$conf" && nginx -t && nginx -s reload
}}
fails=0
rises=0
current=up
while true; do
  if curl -sf -m {HEALTH_TIMEOUT_S} -H 'Content-Type: application/json' -d "$probe" "$url" >/dev/null; then
    fails=0; rises=$((rises + 1))
  else
    rises=0; fails=$((fails + 1))
  fi
  if [ "$current" = up ] && [ "$fails" -ge {HEALTH_FAILS} ]; then
    swap "$up_line" "$down_line" && current=down
    echo "$(date -Is) primary failed {HEALTH_FAILS} probes: traffic moved to the standby" >&2
  elif [ "$current" = down ] && [ "$rises" -ge {HEALTH_RISES} ]; then
    swap "$down_line" "$up_line" && current=up
    echo "$(date -Is) primary answered {HEALTH_RISES} probes: traffic back on the primary" >&2
  fi
  sleep {HEALTH_INTERVAL_S}
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
