"""The launch bundle's container and Kubernetes files.

Built from the launch rows (``NodeLaunch``) and the bundle context, by construction like the rest of
the bundle: shell words through ``shlex.quote``, Kubernetes manifests as ``yaml.safe_dump`` of dicts.
Sources:

* ``docker run`` on Ascend: vLLM-Ascend releases/v0.23.0 docs/source/tutorials/models/Kimi-K3.md
  §4.1 (``/dev/davinci*``, ``davinci_manager``, ``devmm_svm``, ``hisi_hdc``, driver, ``hccn_tool``,
  ``npu-smi`` and ``dcmi`` mounts, ``--net=host --privileged=true --shm-size=1g``); on CUDA: vLLM
  docs deployment/docker.md (``--gpus all --ipc=host``) with the InfiniBand devices for RDMA.
* Kubernetes: vLLM docs deployment/frameworks/lws.md (one LeaderWorkerSet per multi-node
  group: ``LWS_LEADER_ADDRESS`` and ``LWS_WORKER_INDEX`` in every pod; API-server ``Service``
  selecting ``leaderworkerset.sigs.k8s.io/worker-index: "0"``); LWS API
  ``leaderworkerset.x-k8s.io/v1`` (kubernetes-sigs/lws, api/leaderworkerset/v1);
  Ascend NPUs are the extended resource ``huawei.com/Ascend910`` of the MindCluster Ascend
  Device Plugin (gitcode.com/Ascend/mind-cluster, component/ascend-device-plugin), GPUs
  ``nvidia.com/gpu`` of the NVIDIA device plugin.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping, Sequence
from typing import Any

import yaml

from .. import recipes as rc
from ..names import node_name
from ..types import BundleContext, NodeLaunch
from .gateway import proxy_argv
from .nodes import MEMCACHE_DIR
from .shell import continued_lines, header, quote, quote_always, script

ASCEND_RESOURCE = "huawei.com/Ascend910"
NVIDIA_RESOURCE = "nvidia.com/gpu"
LWS_API = "leaderworkerset.x-k8s.io/v1"
LWS_INDEX_LABEL = "leaderworkerset.sigs.k8s.io/worker-index"
LWS_NAME_LABEL = "leaderworkerset.sigs.k8s.io/name"


def dns_label(text: str, limit: int = 50) -> str:
    """An RFC 1123 label from free text (lower case, digits and '-')."""
    label = re.sub(r"[^a-z0-9-]+", "-", text.lower()).strip("-")[:limit].strip("-")
    return label or "vllm"


def _device_count(ctx: BundleContext, node: NodeLaunch) -> int:
    """Accelerators on the node: from its visible-devices variable (also in plans stored without the count)."""
    for var in ("ASCEND_RT_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES"):
        value = node.env.get(var, "")
        if value and re.fullmatch(r"\d+(,\d+)*", value):
            return len(value.split(","))
    return ctx.devices_per_node


def _docker_body(words: list[str]) -> str:
    return (
        "# The bundle's folder on this node: the one above this script.\n"
        'bundle_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)\n'
        "exec " + continued_lines(words) + "\n"
    )


def docker_scripts(
    ctx: BundleContext, nodes: Sequence[NodeLaunch], services: Sequence[str] = ()
) -> dict[str, str]:
    """Per node ``docker/<node script>``: start the recipe's container and run the node script inside it.

    ``services`` are the bundle's other scripts that need the image (the P/D proxy, the memcache
    MetaService): each gets a container without accelerators on the prefill master.
    """
    recipe = rc.for_context(ctx.recipe, ctx.ascend)
    c = recipe.container
    out: dict[str, str] = {}
    for n in nodes:
        words = ["docker", "run", "--rm", "--name", quote_always(f"vllm-node-{n.index:02d}")]
        words += [quote_always(o) for o in c.options]
        if c.gpus:
            words += ["--gpus", "all"]
        for dev in c.devices:
            if "{i}" in dev:
                count = _device_count(ctx, n)
                words += [w for i in range(count) for w in ("--device", quote_always(dev.format(i=i)))]
            else:
                words += ["--device", quote_always(dev)]
        for host, inside in c.mounts:
            words += ["-v", quote_always(f"{host}:{inside}")]
        words += ["-v", quote_always(f"{ctx.model_path}:{ctx.model_path}:ro")]
        if n.role == "prefill" and recipe.connector == "mooncake-memcache":
            words += [
                "-v",
                quote_always(f"{MEMCACHE_DIR}:{MEMCACHE_DIR}:ro"),
            ]  # mmc-local.conf for the KV pool
        words += ["-v", '"$bundle_dir"' + quote_always(":/bundle:ro")]
        words += ["--entrypoint", "bash", quote_always(ctx.image), quote_always(f"/bundle/{n.script}")]
        title = f"Container for {node_name(n.index)} ({n.group}, {n.role}): runs {n.script} in {ctx.image}"
        out[f"docker/{n.script}"] = script(title, {}, _docker_body(words))
    host = nodes[0].host if nodes else ""
    for name in services:
        words = [
            "docker",
            "run",
            "--rm",
            "--name",
            quote_always(dns_label(name.removesuffix(".sh"))),
            "--net=host",
        ]
        if "memcache" in name:
            words += ["-v", quote_always(f"{MEMCACHE_DIR}:{MEMCACHE_DIR}:ro")]
        words += ["-v", '"$bundle_dir"' + quote_always(":/bundle:ro")]
        words += ["--entrypoint", "bash", quote_always(ctx.image), quote_always(f"/bundle/{name}")]
        title = f"Container for {name} on {host} (the prefill master): no accelerators, host network"
        out[f"docker/{name}"] = script(title, {}, _docker_body(words))
    return out


def _container_env(env: Mapping[str, str], host: str) -> list[dict[str, Any]]:
    """The node's environment with its own address taken from the pod (hostNetwork: the node's IP)."""
    out: list[dict[str, Any]] = []
    for key in sorted(env):
        if env[key] == host:
            out.append({"name": key, "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}})
        elif key not in ("ASCEND_RT_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES"):
            # devices are the ones the device plugin allocates to the container
            out.append({"name": key, "value": str(env[key])})
    return out


def _command(argv: tuple[str, ...], replace: Mapping[str, str], engine_id: str = "") -> str:
    """One ``bash -c`` command line: every word quoted, except the LWS expressions given in ``replace``.

    ``engine_id`` (a shell arithmetic expression) replaces the KV connector's engine id, which must be
    unique per engine while every worker pod shares one template.
    """
    words: list[str] = []
    skip_prefix = "=" in argv[0] and not argv[0].startswith("-")
    for i, word in enumerate(argv):
        if i == 0 and skip_prefix:
            continue  # VAR=devices prefix: the device plugin allocates the devices
        flag = argv[i - 1] if i else ""
        if flag in replace:
            words.append(replace[flag])
        elif flag == "--kv-transfer-config" and engine_id:
            cfg = json.loads(word)
            cfg["engine_id"] = "__ENGINE_ID__"
            quoted = quote(json.dumps(cfg, separators=(",", ":")))
            words.append(quoted.replace("__ENGINE_ID__", f"'\"$(({engine_id}))\"'"))
        else:
            words.append(quote(word))
    return "exec " + " ".join(words)


def _pod_spec(
    ctx: BundleContext,
    node: NodeLaunch,
    replace: Mapping[str, str],
    recipe: rc.Recipe,
    leader: bool,
    engine_base: int | None = None,
) -> dict[str, Any]:
    resource = ASCEND_RESOURCE if ctx.ascend else NVIDIA_RESOURCE
    engines = len(node.argv)
    per_engine = max(1, _device_count(ctx, node) // engines)
    containers = []
    for e, argv in enumerate(node.argv):
        container: dict[str, Any] = {
            "name": "vllm" if engines == 1 else f"vllm-{e}",
            "image": ctx.image,
            "command": [
                "bash",
                "-c",
                _command(
                    argv,
                    replace,
                    f"{engine_base} + LWS_WORKER_INDEX * {engines} + {e}" if engine_base is not None else "",
                ),
            ],
            "env": _container_env(node.env, node.host),
            "resources": {"limits": {resource: per_engine}, "requests": {resource: per_engine}},
            "volumeMounts": [
                {"name": "model", "mountPath": ctx.model_path, "readOnly": True},
                {"name": "dshm", "mountPath": "/dev/shm"},
            ],
            "securityContext": {"privileged": True}
            if ctx.ascend
            else {"capabilities": {"add": ["IPC_LOCK"]}},
        }
        if node.api_ports or leader:
            port = node.api_ports[e] if e < len(node.api_ports) else ctx.api_port
            container["ports"] = [{"name": "http" if engines == 1 else f"http-{e}", "containerPort": port}]
            container["readinessProbe"] = {
                "httpGet": {"path": "/health", "port": port},
                "periodSeconds": 10,
                "failureThreshold": 3,
            }
        containers.append(container)
    volumes: list[dict[str, Any]] = [
        {"name": "model", "hostPath": {"path": ctx.model_path, "type": "Directory"}},
        {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "1Gi"}},
    ]
    if node.role == "prefill" and recipe.connector == "mooncake-memcache":  # mmc-local.conf for the KV pool
        volumes.append({"name": "memcache", "hostPath": {"path": MEMCACHE_DIR, "type": "Directory"}})
        for c in containers:
            c["volumeMounts"].append({"name": "memcache", "mountPath": MEMCACHE_DIR, "readOnly": True})
    if ctx.ascend:
        for i, (host, inside) in enumerate(recipe.container.mounts):
            if host == "/root/.cache":
                continue
            volumes.append({"name": f"ascend-{i}", "hostPath": {"path": host}})
            for c in containers:
                c["volumeMounts"].append({"name": f"ascend-{i}", "mountPath": inside, "readOnly": True})
    return {
        "hostNetwork": True,  # HCCL/NCCL and the DP RPC need the node's own network, as --net=host does
        "dnsPolicy": "ClusterFirstWithHostNet",
        "terminationGracePeriodSeconds": 60,
        "containers": containers,
        "volumes": volumes,
    }


_SAFE_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)  # libyaml when present: ≈10 × faster


def _dump(doc: Mapping[str, Any]) -> str:
    return yaml.dump(doc, Dumper=_SAFE_DUMPER, sort_keys=False, allow_unicode=True, width=10_000)


def k8s_manifests(ctx: BundleContext, nodes: Sequence[NodeLaunch]) -> dict[str, str]:
    """``k8s/*.yaml``: a LeaderWorkerSet and a Service per group (and the P/D proxy)."""
    recipe = rc.for_context(ctx.recipe, ctx.ascend)
    base = dns_label(ctx.served_name, 30)
    out: dict[str, str] = {}
    names: dict[str, str] = {}
    for g in ctx.groups:
        members = sorted((n for n in nodes if n.group == g.name), key=lambda n: n.index)
        if not members:
            continue
        name = dns_label(f"{base}-{g.name}")
        names[g.name] = name
        leader, worker = members[0], (members[1] if len(members) > 1 else members[0])
        dp_local = max(1, len(leader.argv)) if g.role in ("prefill", "decode") else 1
        rank_flag = (
            "--data-parallel-rank" if g.role in ("prefill", "decode") else "--data-parallel-start-rank"
        )
        per_node = max(1, g.dp // max(1, g.nodes))
        # P/D engine ids: the node's index × engines per node + engine (as the node scripts number them)
        engine_base = leader.index * len(leader.argv) if g.role in ("prefill", "decode") else None
        leader_replace = {"--data-parallel-address": '"$LWS_LEADER_ADDRESS"'}
        worker_replace = {
            "--data-parallel-address": '"$LWS_LEADER_ADDRESS"',
            rank_flag: f'"$((LWS_WORKER_INDEX * {per_node}))"',
        }
        if (
            dp_local > 1
        ):  # several engines per pod: rank = node's first rank + engine index (set per container)
            worker_replace = {"--data-parallel-address": '"$LWS_LEADER_ADDRESS"'}
        doc: dict[str, Any] = {
            "apiVersion": LWS_API,
            "kind": "LeaderWorkerSet",
            "metadata": {"name": name, "labels": {"app.kubernetes.io/name": base, "llm/group": name}},
            "spec": {
                "replicas": 1,
                "startupPolicy": "LeaderCreated",
                "leaderWorkerTemplate": {
                    "size": g.nodes,
                    "restartPolicy": "RecreateGroupOnPodRestart",
                    "leaderTemplate": {
                        "metadata": {"labels": {"role": "leader"}},
                        "spec": _pod_spec(ctx, leader, leader_replace, recipe, True, engine_base),
                    },
                    "workerTemplate": {
                        "metadata": {"labels": {"role": "worker"}},
                        "spec": _pod_spec(ctx, worker, worker_replace, recipe, False, engine_base),
                    },
                },
            },
        }
        if dp_local > 1:
            _per_container_ranks(doc, dp_local)
        if g.nodes == 1:  # one pod: the LWS CRD requires workerTemplate, leaderTemplate is optional
            tmpl = doc["spec"]["leaderWorkerTemplate"]
            tmpl["workerTemplate"] = tmpl.pop("leaderTemplate")
        ports = sorted({p for n in members for p in n.api_ports}) or [ctx.api_port]
        service = {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": name, "labels": {"app.kubernetes.io/name": base}},
            "spec": {
                "type": "ClusterIP",
                "selector": {LWS_NAME_LABEL: name, LWS_INDEX_LABEL: "0"},
                "ports": [{"name": f"http-{p}", "port": p, "targetPort": p} for p in ports],
            },
        }
        out[f"k8s/{name}.yaml"] = (
            header(f"{ctx.model_name}: {g.name} ({g.role}, {g.nodes} nodes, TP{g.tp} DP{g.dp}).")
            + header(
                "Needs the LeaderWorkerSet controller (kubernetes-sigs/lws) and the accelerator device plugin."
            )
            + _dump(doc)
            + "---\n"
            + _dump(service)
        )
    if ctx.topology.value == "disaggregated":
        out["k8s/pd-proxy.yaml"] = _k8s_proxy(ctx, nodes, names, base, recipe)
        if recipe.connector == "mooncake-memcache":
            out["k8s/memcache-metaservice.yaml"] = _k8s_metaservice(ctx, base)
    return out


def _k8s_metaservice(ctx: BundleContext, base: str) -> str:
    """The memcache MetaService the prefill KV pool needs, started before the prefill engines."""
    name = dns_label(f"{base}-memcache-meta")
    doc = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "labels": {"app.kubernetes.io/name": base}},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {
                    "hostNetwork": True,  # the prefill engines reach it at the address in mmc-local.conf
                    "dnsPolicy": "ClusterFirstWithHostNet",
                    "containers": [
                        {
                            "name": "metaservice",
                            "image": ctx.image,
                            "command": [
                                "python",
                                "-c",
                                "from memcache_hybrid import MetaService; MetaService.main()",
                            ],
                            "env": [
                                {"name": "MMC_META_CONFIG_PATH", "value": f"{MEMCACHE_DIR}/mmc-meta.conf"}
                            ],
                            "volumeMounts": [
                                {"name": "memcache", "mountPath": MEMCACHE_DIR, "readOnly": True}
                            ],
                        }
                    ],
                    "volumes": [
                        {"name": "memcache", "hostPath": {"path": MEMCACHE_DIR, "type": "Directory"}}
                    ],
                },
            },
        },
    }
    return header(
        f"{ctx.model_name}: memcache MetaService for the prefill KV pool; apply before the prefill group."
    ) + _dump(doc)


def _per_container_ranks(doc: dict[str, Any], dp_local: int) -> None:
    """With several engines per pod each container's DP rank is the node's first rank plus its index."""
    tmpl = doc["spec"]["leaderWorkerTemplate"]
    for key in ("leaderTemplate", "workerTemplate"):
        for e, c in enumerate(tmpl[key]["spec"]["containers"]):
            words = shlex.split(c["command"][2])
            if "--data-parallel-rank" in words:
                i = words.index("--data-parallel-rank")
                words[i + 1] = "__RANK__"
            cmd = " ".join(quote(w) for w in words).replace(
                quote("__RANK__"), f'"$((LWS_WORKER_INDEX * {dp_local} + {e}))"'
            )
            c["command"][2] = cmd.replace(quote("$LWS_LEADER_ADDRESS"), '"$LWS_LEADER_ADDRESS"')


def _k8s_proxy(
    ctx: BundleContext, nodes: Sequence[NodeLaunch], names: Mapping[str, str], base: str, recipe: rc.Recipe
) -> str:
    def host(n: NodeLaunch) -> str:
        name = names[n.group]
        members = sorted(m.index for m in nodes if m.group == n.group)
        k = members.index(n.index)
        return f"{name}-0.{name}" if k == 0 else f"{name}-0-{k}.{name}"

    pre = [(host(n), p) for n in nodes if n.role == "prefill" for p in n.api_ports]
    dec = [(host(n), p) for n in nodes if n.role == "decode" for p in n.api_ports]
    argv = proxy_argv(ctx, pre, dec)
    name = dns_label(f"{base}-pd-proxy")
    command = " ".join(quote(a) for a in argv)
    if recipe.proxy == "vllm-router":
        command = "pip install vllm-router && exec " + command
    else:
        command = "exec " + command
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "labels": {"app.kubernetes.io/name": base}},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {
                    "containers": [
                        {
                            "name": "proxy",
                            "image": ctx.image,
                            "command": ["bash", "-c", command],
                            "ports": [{"name": "http", "containerPort": ctx.proxy_port}],
                            "readinessProbe": {"tcpSocket": {"port": ctx.proxy_port}, "periodSeconds": 10},
                        }
                    ]
                },
            },
        },
    }
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name, "labels": {"app.kubernetes.io/name": base}},
        "spec": {
            "type": "ClusterIP",
            "selector": {"app": name},
            "ports": [{"name": "http", "port": ctx.proxy_port, "targetPort": ctx.proxy_port}],
        },
    }
    return (
        header(f"{ctx.model_name}: P/D proxy in front of every prefill and decode engine.")
        + _dump(deployment)
        + "---\n"
        + _dump(service)
    )
