"""The bundle as files: every file rendered from a :class:`LaunchResult`, the operator README and the zip."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Mapping

from .. import recipes as rc
from .. import site_values as sv
from ..names import node_name
from ..types import BundleContext, LaunchResult, LayoutResult, NodeLaunch, PlanRequest, TopologyKind
from .benchmark import benchmark_script
from .build import build_launch
from .containers import (
    METASERVICE_PORTS,
    ROUTER_DOCKERFILE,
    docker_scripts,
    k8s_manifests,
    lws_names,
    metaservice_service_name,
    node_selector,
    router_dockerfile,
)
from .gateway import (
    GATEWAY_CONF,
    GATEWAY_NIC,
    GATEWAY_VIP,
    healthcheck_script,
    keepalived_conf,
    nginx_conf,
    proxy_script,
)
from .monitoring import prometheus_yml
from .nodes import (
    METASERVICE_BODY,
    METASERVICE_ENV,
    METASERVICE_GUARD,
    MMC_LOCAL_CONF,
    MMC_META_CONF,
    node_script,
)
from .shell import quote, script, template

ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)
# The README's closing sections (load test, containers, monitoring, stop): constant text.
README_TAIL = template("README-tail.md")
_README_TOKENS = {rc.IP: "the node's IP", rc.NIC: "the data NIC", rc.DEVICES: "all devices"}


def render_bundle(result: LaunchResult) -> dict[str, str]:
    """Render every file of the bundle from a :class:`LaunchResult` (path → text)."""
    ctx, nodes = result.context, list(result.nodes)
    files = {n.script: node_script(ctx, n) for n in nodes}
    if ctx.topology == TopologyKind.DISAGGREGATED and nodes:
        proxy_host = nodes[0].host  # the prefill master
        if ctx.ascend:
            files["start-memcache-metaservice.sh"] = script(
                f"memcache MetaService for the prefill KV pool; run on {proxy_host} before any prefill engine",
                METASERVICE_ENV,
                METASERVICE_BODY,
                METASERVICE_GUARD,
            )
        files["start-proxy.sh"] = proxy_script(ctx, nodes, proxy_host)
        if rc.for_context(ctx.recipe, ctx.ascend).proxy_image == rc.ROUTER_IMAGE:
            files[ROUTER_DOCKERFILE] = router_dockerfile()
    masters = [n for n in nodes if n.is_master]
    if ctx.topology in (TopologyKind.PRIMARY_STANDBY, TopologyKind.TENANT_PAIR) and len(masters) >= 2:
        files["gateway/nginx.conf"] = nginx_conf(ctx, masters)
        if ctx.topology == TopologyKind.PRIMARY_STANDBY:
            primary = sv.host_port(masters[0].host, ctx.api_port)
            files["gateway/llm-healthcheck.sh"] = healthcheck_script(ctx, primary)
        for state, priority, peer in (("MASTER", 150, "the second gateway runs keepalived-backup.conf"),
                                      ("BACKUP", 100, "the first gateway runs keepalived-master.conf")):  # fmt: skip
            files[f"gateway/keepalived-{state.lower()}.conf"] = keepalived_conf(
                state, priority, GATEWAY_NIC, GATEWAY_VIP, peer
            )
    services = [n for n in ("start-memcache-metaservice.sh", "start-proxy.sh") if n in files]
    files.update(docker_scripts(ctx, nodes, services))
    files.update(k8s_manifests(ctx, nodes))
    files["benchmark.sh"] = benchmark_file(result)
    files["monitoring/prometheus.yml"] = prometheus_yml(ctx, nodes)
    files["README.md"] = _readme(ctx, result, files)
    return files


def _md(text: str) -> str:
    """Free text on one Markdown line: no control characters, no table-cell breaks."""
    return sv.one_line(text).replace("|", "\\|")


def _code(text: str) -> str:
    """Inline code that no value can close early (backticks become ')."""
    return "`" + _md(text).replace("`", "'") + "`"


def _readme(ctx: BundleContext, result: LaunchResult, files: Mapping[str, str]) -> str:
    """The bundle's README.md: its sections in order, then the constant tail (:data:`README_TAIL`)."""
    nodes = list(result.nodes)
    out = _readme_header(ctx, result)
    out += _readme_recipe(ctx, nodes)
    out += _readme_placeholders(result, files)
    out += _readme_files(ctx, nodes, files)
    if any(f.startswith("k8s/") for f in files):
        out += _readme_placement(ctx)
    out += ["", "## Start-up order / 启动顺序", ""]
    if ctx.topology == TopologyKind.DISAGGREGATED:
        steps = _disaggregated_steps(ctx, nodes, files)
    else:
        steps = _cluster_steps(ctx, nodes, files)
    out += [f"{i}. {s}" for i, s in enumerate(steps, 1)]
    out += [
        "",
        "## Check it works / 验证",
        "",
        "```bash",
        "curl " + quote(f"http://{sv.one_line(result.entrypoint)}/v1/models"),
        "```",
        "",
    ]
    return "\n".join(out) + "\n" + README_TAIL


def _readme_header(ctx: BundleContext, result: LaunchResult) -> list[str]:
    """The title and the deployment in brief: topology and groups, model path, NIC, image, entrypoint."""
    return [
        "# " + _md(f"Launch bundle: {ctx.model_name} on {ctx.node_count} × {ctx.server_name}"),
        "",
        "启动配置包 — generated by the configurator from the quoted plan. Regenerate it after any change to",
        "the plan instead of editing the scripts; only replace the `__…__` placeholders with site values.",
        "",
        f"- Topology: {ctx.topology.value}; groups: "
        + _md(", ".join(f"{g.name} ({g.role}, {g.nodes} nodes, TP{g.tp} DP{g.dp})" for g in ctx.groups)),
        f"- Model path on every node: {_code(ctx.model_path)}; data NIC: {_code(ctx.nic)}",
        f"- Container image: {_code(ctx.image)} (`docker/` starts it on each node with the tutorial's devices)",
        f"- Clients connect to: {_code(result.entrypoint)}",
        "",
    ]


def _readme_recipe(ctx: BundleContext, nodes: list[NodeLaunch]) -> list[str]:
    """The recipe section: which recipe, its source and notes, and the table of deliberate deviations."""
    recipe = rc.for_context(ctx.recipe, ctx.ascend)
    out = [
        "## Recipe / 部署配方",
        "",
        f"- {_md(recipe.title)} ({_code(recipe.key)}), for {_md(recipe.versions)}",
        f"- Source: {_md(recipe.source)}",
        *[f"- Note: {_md(n)}" for n in recipe.notes],
        "",
        "Every environment variable and `vllm serve` flag comes from this recipe or from the plan (sizes,",
        "ports, parallelism, the model's parsers). Deliberate differences from the recipe:",
        "",
    ]
    if ctx.deviations:
        out += ["| setting | in this bundle | why |", "|---|---|---|"]
        for d in ctx.deviations:
            shown = (
                "left out"
                if d.value is None
                else "added"  # a switch without a value (--enforce-eager)
                if d.value == ""
                else _code(_README_TOKENS.get(d.value, d.value))
            )
            # the roles only where the deviation leaves some of this bundle's nodes as the recipe has them
            where = "" if set(d.roles) >= {n.role for n in nodes} else f" ({_md(', '.join(d.roles))})"
            out.append(f"| {_code(d.name)}{where} | {shown} | {_md(d.reason)} |")
    else:
        out.append("None.")
    out.append("")
    return out


def _readme_placeholders(result: LaunchResult, files: Mapping[str, str]) -> list[str]:
    """The placeholders to replace before starting anything (none: no section), the gateway's apart."""
    gateway_placeholders = [p for p in (GATEWAY_VIP, GATEWAY_NIC) if any(p in t for t in files.values())]
    if not (result.placeholders or gateway_placeholders):
        return []
    return [
        "## Placeholders to replace first / 需先替换的占位符",
        "",
        "Every script checks itself and refuses to start (exit code 2) while one of these remains; the "
        "Kubernetes manifests hold the same values (a placeholder model path is a hostPath that does not "
        "exist, so the pods do not start):",
        "",
        *[f"- {_code(p)}" for p in result.placeholders],
        "",
        *(
            [
                "keepalived has no such check: with a placeholder left, `gateway/keepalived-*.conf` does "
                "not parse as a valid interface or address, so replace these before starting keepalived "
                "(`keepalived -t -f <file>` checks a config):",
                "",
                *[f"- {_code(p)}" for p in gateway_placeholders],
                "",
            ]
            if gateway_placeholders
            else []
        ),
    ]


# What each of the bundle's other files does (README's file table, in this order).
_README_FILE_WHAT = {
    "start-memcache-metaservice.sh": "memcache MetaService for the prefill KV pool",
    "start-proxy.sh": "load-balancing proxy listing every prefill and decode endpoint",
    "gateway/nginx.conf": "nginx gateway in front of the two clusters",
    "gateway/llm-healthcheck.sh": "active health check: the primary's /health and its token progress (/metrics) every few seconds",
    "gateway/keepalived-master.conf": "VRRP: the clients' virtual IP on the first gateway",
    "gateway/keepalived-backup.conf": "VRRP: takes the virtual IP over if the first gateway's nginx stops",
    ROUTER_DOCKERFILE: f"the P/D router's image ({rc.ROUTER_IMAGE}): vllm-router {rc.ROUTER_VERSION} from PyPI "
    f"({rc.ROUTER_PYPI}), installed at build time",
    "benchmark.sh": "load test with the quote's workload (vllm bench serve); writes result JSON to import",
    "monitoring/prometheus.yml": "Prometheus scrape targets (vLLM, node and accelerator exporters)",
}
_NODE_SCRIPT_WHAT = {
    "master": "DP master: serves the API and coordinates the group's DP ranks",
    "worker": "headless DP worker, start rank {rank}",
    "prefill": "prefill engine (KV producer), DP rank {rank}",
    "decode": "decode engine (KV consumer), DP rank {rank}",
}


def _readme_files(ctx: BundleContext, nodes: list[NodeLaunch], files: Mapping[str, str]) -> list[str]:
    """The file table: each node's script, the other files the bundle holds (and Prometheus's), the
    container wrappers and the Kubernetes manifests, with where each runs and what it does."""
    out = ["## Files / 文件说明", "", "| file | run on | what it does |", "|---|---|---|"]
    for n in nodes:
        what = _NODE_SCRIPT_WHAT[n.role].format(rank=n.dp_rank)
        out.append(f"| {_code(n.script)} | {node_name(n.index)} ({_md(n.host)}) | {_md(n.group)}: {what} |")
    proxy_host = nodes[0].host if nodes else ""
    for name, what in _README_FILE_WHAT.items():
        if name in files or name == "monitoring/prometheus.yml":
            where = {
                "start-memcache-metaservice.sh": f"{node_name(nodes[0].index)} ({_md(proxy_host)})"
                if nodes
                else "",
                "start-proxy.sh": f"{node_name(nodes[0].index)} ({_md(proxy_host)})" if nodes else "",
                "gateway/nginx.conf": "both gateway hosts",
                "gateway/llm-healthcheck.sh": "both gateway hosts (as a service)",
                "gateway/keepalived-master.conf": "the first gateway host",
                "gateway/keepalived-backup.conf": "the second gateway host",
                ROUTER_DOCKERFILE: "`docker build` on the proxy host (push it to the cluster's registry for Kubernetes)",
                "benchmark.sh": "any host that reaches the endpoint",
                "monitoring/prometheus.yml": "the monitoring host",
            }[name]
            out.append(f"| `{name}` | {where} | {what} |")
    for name in ("start-memcache-metaservice.sh", "start-proxy.sh"):
        if f"docker/{name}" in files:
            out.append(
                f"| {_code('docker/' + name)} | {node_name(nodes[0].index)} ({_md(nodes[0].host)}) | runs "
                f"{_code(name)} inside the recipe's container |"
            )
    for n in nodes:
        if f"docker/{n.script}" in files:
            out.append(
                f"| {_code('docker/' + n.script)} | {node_name(n.index)} ({_md(n.host)}) | runs {_code(n.script)} "
                "inside the recipe's container |"
            )
    for f in sorted(f for f in files if f.startswith("k8s/")):
        what = {
            "k8s/pd-proxy.yaml": "Deployment and Service of the P/D proxy",
        }.get(f, "LeaderWorkerSet and its clients' Service (`<name>-api`) for the same deployment")
        out.append(f"| {_code(f)} | `kubectl apply -f` | {what} |")
    return out


def _readme_placement(ctx: BundleContext) -> list[str]:
    """Kubernetes: the node labels every pod selects and how long the engines get to start."""
    labels = ", ".join(f"{k}={v}" for k, v in sorted(node_selector(ctx).items()))
    out = [
        "",
        "## Placement and start-up wait / 调度与启动等待",
        "",
        f"- Every LeaderWorkerSet pod selects nodes labelled {_code(labels)}"
        + (
            " (the request's `launch.node_selector`)."
            if ctx.node_selector
            else " (the accelerator's device plugin label; set `launch.node_selector` in the request to "
            "choose other labels)."
        ),
    ]
    if ctx.load_wait_s:
        out.append(
            f"- Engines get {ctx.load_wait_s:,} s to load the weights and answer `/health` (the pods' "
            "startupProbe, the P/D router's `--worker-startup-timeout-secs`): twice the checkpoint's read "
            "time at the request's `launch.weight_read_gb_s`, never below the recipe's ready timeout."
        )
    return out


def _disaggregated_steps(ctx: BundleContext, nodes: list[NodeLaunch], files: Mapping[str, str]) -> list[str]:
    """Start-up order of xPyD: the KV pool's MetaService (Ascend), prefill, decode, the router, the proxy."""
    steps = []
    if "start-memcache-metaservice.sh" in files:
        steps.append(
            "Copy `mmc-meta.conf` and `mmc-local.conf` from the installed `memcache_hybrid/config/` to "
            f"`{MMC_META_CONF}` / `{MMC_LOCAL_CONF}` on the prefill nodes and adapt them; then start "
            "`start-memcache-metaservice.sh` (the KV pool must exist before any prefill engine)."
        )
        meta_urls = ", ".join(f"`tcp://<host>:{p}`" for p in METASERVICE_PORTS.values())
        k8s_meta = sorted(
            metaservice_service_name(lws_names(ctx)[g.name]) for g in ctx.groups if g.role == "prefill"
        )
        steps.append(
            f"Every prefill node's `mmc-local.conf` names the MetaService ({meta_urls}: "
            "`ock.mmc.meta_service_url` and `ock.mmc.local_service.config_store_url`): on the nodes, "
            f"`<host>` is the prefill master's address ({_md(nodes[0].host) if nodes else ''}), in "
            "`mmc-meta.conf` too; on Kubernetes it is the Service "
            + ", ".join(f"`{n}`" for n in k8s_meta)
            + " in front of the prefill leader, whichever node it lands on."
        )
    steps += [
        "Start the prefill scripts (rank 0, the side's master, first; then ranks 1… promptly).",
        "Start the decode scripts the same way (their own master and RPC port).",
        "Wait until every engine logs that it is ready (`curl http://<host>:<port>/health` returns 200).",
        *(
            [
                f"Build the router's image on the proxy host, in this folder: `docker build -t {rc.ROUTER_IMAGE} "
                "router/` (for Kubernetes, push it to the cluster's registry under the same name or load it "
                "on the nodes; `k8s/pd-proxy.yaml` does not pull it)."
            ]
            if ROUTER_DOCKERFILE in files
            else []
        ),
        "Start `start-proxy.sh`; send requests to the proxy only.",
    ]
    return steps


def _cluster_steps(ctx: BundleContext, nodes: list[NodeLaunch], files: Mapping[str, str]) -> list[str]:
    """Start-up order of clusters serving alone or as a pair: each master, then its workers; health;
    then the gateway (nginx, keepalived, the health check) when the pair has one."""
    steps = []
    for g in ctx.groups:
        master = next((n for n in nodes if n.group == g.name and n.is_master), None)
        if master is None:
            continue
        steps.append(
            f"{_md(g.name)}: start {_code(master.script)} on {node_name(master.index)} first, then the worker scripts "
            "of the group as soon as possible (the master waits up to 2 h for them)."
        )
    steps.append(f"Wait for `curl http://<master>:{ctx.api_port}/health` to return 200 on each master.")
    if "gateway/nginx.conf" in files:
        steps.append(
            f"On both gateway hosts install `gateway/nginx.conf` as `{GATEWAY_CONF}`, reload nginx "
            "(`nginx -t && nginx -s reload`) and start keepalived with its config."
        )
    if "gateway/llm-healthcheck.sh" in files:
        steps.append("Run `gateway/llm-healthcheck.sh` on both gateway hosts (e.g. as a systemd service).")
    return steps


def benchmark_file(result: LaunchResult) -> str:
    """``benchmark.sh`` alone (the proposal's acceptance appendix prints it without the whole bundle)."""
    ctx = result.context
    # seats behind the entrypoint: the decode side of P/D, else the first (serving) cluster
    served = next((g for g in ctx.groups if g.role == "decode"), ctx.groups[0] if ctx.groups else None)
    seats = (served.dp if served else 1) * ctx.max_num_seqs
    return benchmark_script(ctx, result.entrypoint, seats)


def bundle_files(
    result_or_req: LaunchResult | PlanRequest, layout: LayoutResult | None = None
) -> dict[str, str]:
    """The bundle's files (path → text) from a :class:`LaunchResult`, or from a request and its layout."""
    if isinstance(result_or_req, LaunchResult):
        return render_bundle(result_or_req)
    if layout is None:
        from ..layout import resolve_layout

        layout = resolve_layout(result_or_req)
    return render_bundle(build_launch(result_or_req, layout))


def bundle_zip(files: Mapping[str, str]) -> bytes:
    """A zip of the bundle with fixed timestamps and modes, so equal inputs give equal bytes."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name in sorted(files):
            info = zipfile.ZipInfo(name, date_time=ZIP_EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 3  # unix, so the mode bits below are honoured
            mode = 0o755 if name.endswith(".sh") else 0o644
            info.external_attr = (0o100000 | mode) << 16
            zf.writestr(info, files[name].encode("utf-8"))
    return buffer.getvalue()
