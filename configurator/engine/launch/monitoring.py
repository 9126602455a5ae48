"""``monitoring/prometheus.yml``: ``yaml.safe_dump`` of the scrape configuration under safe comment lines."""

from __future__ import annotations

from typing import Any

import yaml

from .. import site_values as sv
from ..types import BundleContext, NodeLaunch
from .nodes import upstream_host
from .shell import comment

NODE_EXPORTER_PORT = 9100  # node_exporter default
DEVICE_EXPORTER_PORT = {"ascend": 8082, "cuda": 9400}  # npu-exporter / dcgm-exporter defaults


def prometheus_yml(ctx: BundleContext, nodes: list[NodeLaunch]) -> str:
    """The scrape configuration: ``yaml.safe_dump`` of a dict, under comment lines made safe."""
    stack = "ascend" if ctx.ascend else "cuda"
    exporter = "npu-exporter" if ctx.ascend else "dcgm-exporter"
    header = [
        comment(f"Prometheus scrape configuration for {ctx.model_name} on {ctx.server_name}."),
        comment("vLLM serves /metrics on its API port (headless workers report through their master)."),
        comment(
            f"node_exporter ({NODE_EXPORTER_PORT}) and {exporter} ({DEVICE_EXPORTER_PORT[stack]}) use their "
            "default ports; change them here if the site differs."
        ),
    ]
    vllm_targets = [
        {
            "targets": [sv.host_port(upstream_host(n), port)],
            "labels": {"group": n.group, "role": n.role, "node": str(n.index)},
        }
        for n in nodes
        for port in n.api_ports
    ]
    config: dict[str, Any] = {
        "global": {"scrape_interval": "15s"},
        "scrape_configs": [{"job_name": "vllm", "metrics_path": "/metrics", "static_configs": vllm_targets}],
    }
    for job, port in (("node", NODE_EXPORTER_PORT), (exporter, DEVICE_EXPORTER_PORT[stack])):
        config["scrape_configs"].append(
            {
                "job_name": job,
                "static_configs": [
                    {
                        "targets": [sv.host_port(upstream_host(n), port)],
                        "labels": {"group": n.group, "node": str(n.index)},
                    }
                    for n in nodes
                ],
            }
        )
    body = yaml.safe_dump(config, sort_keys=False, default_flow_style=False, allow_unicode=False, width=1000)
    return "\n".join(header) + "\n" + body
