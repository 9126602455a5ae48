"""Launch bundle: per-node start scripts, gateway/proxy, monitoring, containers and an operator README.

Everything here is generated from the request and the layout, never written
by hand, following the public vLLM / vLLM-Ascend conventions (docs/domain.md §5, §11):

* **Aggregated DP** (single cluster, primary/standby, tenant pair): per group,
  node 0 is the master (serves the API, no ``--headless``); every other node
  runs ``--headless --data-parallel-start-rank k × dp_local``; all share
  ``--data-parallel-address <master IP> --data-parallel-rpc-port <port>``.
  Two-cluster topologies get two independent masters and an nginx gateway
  (backup failover for primary/standby, per-tenant routing for a tenant pair).
* **xPyD**: each side is its own DP group with its own master address and RPC
  port; every node runs ``vllm serve … --data-parallel-rank r`` (external DP,
  as vLLM-Ascend's ``launch_online_dp.py`` does) with r = 0… within the side.
  Prefill engines produce KV through ``MultiConnector`` (``MooncakeConnectorV1``
  + ``AscendStoreConnector`` on memcache) and run eager; decode engines consume
  through ``MooncakeConnectorV1`` with FULL_DECODE_ONLY graphs.  A memcache
  MetaService starts before the prefill engines; a load-balancing proxy lists
  every prefill and decode endpoint.

Site values (node IPs, NIC, model path) come from ``req.launch``; a missing one
becomes a visible placeholder such as ``__NODE3_IP__``, and every script
refuses to start (exit 2, naming the placeholder) until it is replaced.

Files are built by construction, never by pasting text (issue 13): every shell
word goes through ``shlex.quote``; comment and README lines pass through
``site_values.one_line`` (no control or line-separator character survives);
``gateway/nginx.conf`` is rendered from a directive tree whose every token is
checked against a bare-word grammar; ``monitoring/prometheus.yml`` is
``yaml.safe_dump`` of a dict.  Site values that fail the grammar of
``site_values`` (the request boundary already refuses them with a 400) are
never written: they become placeholders with an error check.
JSON arguments are built with ``json.dumps`` and quoted with ``shlex.quote``.

The package, by seam: ``nodes`` (site values, flags, environment and node scripts; ``build`` puts
them together with the ``checks``), ``gateway`` (P/D proxy, nginx, health check, keepalived),
``monitoring`` (Prometheus), ``containers`` (docker, Kubernetes), ``benchmark``, ``bundle`` (every
file, the README and the zip) and ``shell`` (the quoting and script helpers they all use).
"""

from __future__ import annotations

from .build import build_launch
from .bundle import benchmark_file, bundle_files, bundle_zip, render_bundle
from .checks import launch_port_conflicts
from .nodes import node_command, plan_deviations
from .shell import join_argv

__all__ = [
    "benchmark_file",
    "build_launch",
    "bundle_files",
    "bundle_zip",
    "join_argv",
    "launch_port_conflicts",
    "node_command",
    "plan_deviations",
    "render_bundle",
]
