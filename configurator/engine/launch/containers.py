"""The launch bundle's container and Kubernetes files.

Built from the launch rows (``NodeLaunch``) and the bundle context, by construction like the rest of
the bundle: shell words through ``shlex.quote``, Kubernetes manifests as ``yaml.safe_dump`` of dicts.
Sources:

* ``docker run`` on Ascend: vLLM-Ascend releases/v0.23.0 docs/source/tutorials/models/Kimi-K3.md
  §4.1 (``/dev/davinci*``, ``davinci_manager``, ``devmm_svm``, ``hisi_hdc``, driver, ``hccn_tool``,
  ``npu-smi`` and ``dcmi`` mounts, ``--net=host --privileged=true --shm-size=1g``); on CUDA: vLLM
  docs deployment/docker.md (``--gpus all --ipc=host``) with the InfiniBand devices for RDMA.
* Kubernetes: vLLM docs deployment/frameworks/lws.md (one LeaderWorkerSet per multi-node
  group: ``LWS_LEADER_ADDRESS`` and ``LWS_WORKER_INDEX`` in every pod); LWS API
  ``leaderworkerset.x-k8s.io/v1`` (kubernetes-sigs/lws, api/leaderworkerset/v1) and its controller
  (pkg/controllers/leaderworkerset_controller.go: the headless Service named after the LWS, created only
  if no Service of that name exists; pkg/utils/pod/pod_utils.go: ``LWS_LEADER_ADDRESS`` =
  ``<lws>-<group>.<subdomain>.<namespace>``), so each group's clients' Service is ``<lws>-api``
  (docs/examples/vllm/GPU/lws.yaml names its Service ``vllm-leader``).  Every container runs the node
  script's own program (``nodes.node_program``) with the rank, address and engine id computed from the
  LWS variables.  Ascend NPUs are the extended resource ``huawei.com/Ascend910`` of the MindCluster
  Ascend Device Plugin for the Atlas training series, A2 and A3 included (hiascend.com MindCluster
  "public addresses" appendix: ``huawei.com/Ascend910``; gitcode.com/Ascend/mind-cluster,
  component/ascend-device-plugin), GPUs ``nvidia.com/gpu`` of the NVIDIA device plugin and RDMA HCAs
  ``rdma/rdma_shared_device_a`` of the RDMA shared device plugin.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import yaml

from .. import recipes as rc
from ..names import node_name
from ..types import BundleContext, NodeLaunch
from .gateway import proxy_body
from .nodes import MEMCACHE_DIR, METASERVICE_BODY, METASERVICE_ENV, METASERVICE_GUARD, PodTerms, pod_program
from .shell import continued_lines, header, quote_always, script

ASCEND_RESOURCE = "huawei.com/Ascend910"
NVIDIA_RESOURCE = "nvidia.com/gpu"
# RDMA HCAs for the CUDA engines that talk across nodes: the resource of the RDMA shared device plugin
# (Mellanox/k8s-rdma-shared-dev-plugin README: resourcePrefix "rdma", resourceName "rdma_shared_device_a";
# the NVIDIA Network Operator deploys the same plugin).  A cluster whose plugin names it otherwise renames it.
RDMA_RESOURCE = "rdma/rdma_shared_device_a"
# Where the engine pods may run when the request names no node labels (``launch.node_selector``): the
# label each accelerator's device plugin stack puts on its nodes.  NVIDIA: ``nvidia.com/gpu.present=true``,
# set by GPU Feature Discovery / the GPU Operator on every node with a GPU (the Operator's own operands
# select on it); Ascend: ``accelerator=huawei-Ascend910``, the label the MindCluster Ascend Device Plugin's
# DaemonSet selects for Atlas training-series nodes, A2 and A3 included (gitcode.com/Ascend/mind-cluster,
# component/ascend-device-plugin/build/ascendplugin-910.yaml ``nodeSelector``).
DEFAULT_NODE_SELECTOR = {
    "cuda": {"nvidia.com/gpu.present": "true"},
    "ascend": {"accelerator": "huawei-Ascend910"},
}
# /dev/shm of a CUDA pod: NCCL and the engines' shared-memory rings live there.  llm-d's vLLM pods mount a
# 2 GiB memory emptyDir (llm-d/llm-d guides/wide-ep-lws/manifests/modelserver/base/decode.yaml: ``dshm``
# sizeLimit 2Gi, "2Gi for NCCL 2.27 to be safe"); Docker's default 64 MiB starves NCCL.  The Ascend
# tutorial's ``docker run --shm-size=1g`` stays as it is.
SHM_LIMIT = {"cuda": "2Gi", "ascend": "1Gi"}
STARTUP_PROBE_PERIOD_S = 30
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
        # the router has its own image (the vLLM image lacks it); vLLM-Ascend's proxy ships in the engines'
        image = recipe.proxy_image if name == "start-proxy.sh" and recipe.proxy_image else ctx.image
        words += ["--entrypoint", "bash", quote_always(image), quote_always(f"/bundle/{name}")]
        title = f"Container for {name} on {host} (the prefill master): no accelerators, host network"
        guard = _image_guard(image) if image == rc.ROUTER_IMAGE else ""
        out[f"docker/{name}"] = script(title, {}, _docker_body(words), guard)
    return out


ROUTER_DOCKERFILE = "router/Dockerfile"


def router_dockerfile() -> str:
    """``router/Dockerfile``: vllm-router from its pinned PyPI release, installed when the image is built
    (``docker build -t <ROUTER_IMAGE> router/``), so nothing is downloaded when the proxy starts."""
    return (
        f"# vllm-router {rc.ROUTER_VERSION} from PyPI ({rc.ROUTER_PYPI}), pinned and installed at build time:\n"
        f"#   docker build -t {rc.ROUTER_IMAGE} router/\n"
        "# Generated by the configurator; regenerate rather than edit.\n"
        f"FROM {rc.ROUTER_BASE_IMAGE}\n"
        f"RUN pip install --no-cache-dir --only-binary=:all: vllm-router=={rc.ROUTER_VERSION} \\\n"
        "    && vllm-router --help >/dev/null\n"
    )


def _image_guard(image: str) -> str:
    """A docker script's check that an image built by the bundle exists on this host."""
    build = f"docker build -t {image} router/"
    return (
        f"if ! docker image inspect {quote_always(image)} >/dev/null 2>&1; then\n"
        f"  echo {quote_always('refusing to start: build the image first, in the bundle folder: ' + build)} >&2\n"
        "  exit 2\n"
        "fi\n"
    )


def _container_env(env: Mapping[str, str], host: str) -> list[dict[str, Any]]:
    """The node's environment with its own address taken from the pod (hostNetwork: the node's IP)."""
    out: list[dict[str, Any]] = []
    for key in sorted(env):
        if env[key] == host:
            out.append({"name": key, "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}})
        elif key not in DEVICE_VARS:
            # devices are the ones the device plugin allocates to the container
            out.append({"name": key, "value": str(env[key])})
    return out


# The accelerators' visible-devices variables: on a node the script lists the node's devices; in a pod the
# device plugin sets them for the devices it allocated to the container (so a pod leaves them out).
DEVICE_VARS = ("ASCEND_RT_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES")


def lws_pod_name(lws: str, worker: int) -> str:
    """The pod of group 0 with this worker index: the leader StatefulSet ``<lws>`` makes ``<lws>-0``; the
    group's worker StatefulSet ``<lws>-0`` (ordinals from 1) makes ``<lws>-0-<k>`` (kubernetes-sigs/lws
    pkg/controllers/leaderworkerset_controller.go and pod_controller.go, constructWorkerStatefulSet)."""
    return f"{lws}-0" if worker == 0 else f"{lws}-0-{worker}"


def lws_pod_host(lws: str, worker: int) -> str:
    """The pod's DNS name within its namespace: ``<pod>.<subdomain>``, the subdomain being the LWS's own
    headless Service (SubdomainPolicy Shared, the default: ``serviceName`` = the LWS name)."""
    return f"{lws_pod_name(lws, worker)}.{lws}"


# The memcache MetaService's ports: ``ock.mmc.meta_service_url`` (5000) and the config store
# (``ock.mmc.meta_service.config_store_url``, 6000) as the vLLM-Ascend KV-pool guide configures them
# (docs/source/user_guide/feature_guide/kv_pool.md); every prefill node's mmc-local.conf names both.
METASERVICE_PORTS = {"meta": 5000, "config-store": 6000}


def metaservice_service_name(lws: str) -> str:
    """The Service in front of the MetaService beside the prefill leader: a stable name for every prefill
    pod's mmc-local.conf, whichever node the leader lands on (the KV-pool guide: "K8s … ClusterIP address")."""
    return f"{lws}-metaservice"


def client_service_name(lws: str) -> str:
    """The clients' Service of a group, named apart from the LWS: the controller creates its headless
    Service named after the LWS only if no Service of that name exists (CreateHeadlessServiceIfNotExists,
    pkg/utils/controller/controller_utils.go); LWS's own vLLM example names its Service ``vllm-leader``."""
    return f"{lws}-api"


def _terms(g_role: str, members: Sequence[NodeLaunch]) -> PodTerms:
    leader = members[0]
    engines = max(1, len(leader.argv))
    ranks = members[1].dp_rank - leader.dp_rank if len(members) > 1 else engines
    pd = g_role in ("prefill", "decode")
    return PodTerms(
        ranks_per_pod=max(1, ranks), engines=engines, engine_base=leader.index * engines if pd else None
    )


def _pod_spec(
    ctx: BundleContext,
    node: NodeLaunch,
    terms: PodTerms,
    recipe: rc.Recipe,
    leader: bool,
    rdma: bool,
    sidecars: Sequence[dict[str, Any]] = (),
) -> dict[str, Any]:
    resource = ASCEND_RESOURCE if ctx.ascend else NVIDIA_RESOURCE
    engines = len(node.argv)
    per_engine = max(1, _device_count(ctx, node) // engines)
    containers = []
    for e in range(engines):
        limits: dict[str, int] = {resource: per_engine}
        if rdma:
            limits[RDMA_RESOURCE] = 1
        env = _container_env(node.env, node.host)
        prefix = node.argv[e][0]
        if ctx.ascend and engines > 1 and "=" in prefix and not prefix.startswith("-"):
            # A privileged container (the tutorial's docker run is --privileged) sees every NPU of the node;
            # the pod holds them all, so each engine keeps the node script's own half, as on bare metal.
            var, devices = prefix.split("=", 1)
            env = [x for x in env if x["name"] != var] + [{"name": var, "value": devices}]
        container: dict[str, Any] = {
            "name": "vllm" if engines == 1 else f"vllm-{e}",
            "image": ctx.image,
            "command": ["bash", "-c", pod_program(ctx, node, terms, e)],
            "env": env,
            "resources": {"limits": limits, "requests": dict(limits)},
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
            if ctx.load_wait_s:
                # /health answers once the weights are loaded and the graphs captured: give the engine the
                # plan's load time (figure launch.load_wait_s) before Kubernetes judges it
                container["startupProbe"] = {
                    "httpGet": {"path": "/health", "port": port},
                    "periodSeconds": STARTUP_PROBE_PERIOD_S,
                    "failureThreshold": -(-ctx.load_wait_s // STARTUP_PROBE_PERIOD_S),
                }
        containers.append(container)
    volumes: list[dict[str, Any]] = [
        {"name": "model", "hostPath": {"path": ctx.model_path, "type": "Directory"}},
        {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": SHM_LIMIT[_platform(ctx)]}},
    ]
    if node.role == "prefill" and recipe.connector == "mooncake-memcache":  # mmc-local.conf for the KV pool
        volumes.append({"name": "memcache", "hostPath": {"path": MEMCACHE_DIR, "type": "Directory"}})
        for c in containers:
            c["volumeMounts"].append({"name": "memcache", "mountPath": MEMCACHE_DIR, "readOnly": True})
    if ctx.ascend:
        for i, (host, inside) in enumerate(recipe.container.mounts):
            named = [v for v in node.env.values() if v == inside or v.startswith(inside.rstrip("/") + "/")]
            if host == "/root/.cache" and not named:
                continue  # the host's caches stay out of the pod unless a variable points into them
            volumes.append({"name": f"ascend-{i}", "hostPath": {"path": host}})
            for c in containers:
                # a cache a variable names is written (TIKTOKEN_CACHE_DIR: the tokenizer's download cache)
                c["volumeMounts"].append({"name": f"ascend-{i}", "mountPath": inside, "readOnly": not named})
    spec: dict[str, Any] = {
        "nodeSelector": node_selector(ctx),
        "hostNetwork": True,  # HCCL/NCCL and the DP RPC need the node's own network, as --net=host does
        "dnsPolicy": "ClusterFirstWithHostNet",
        "terminationGracePeriodSeconds": 60,
    }
    if sidecars:
        spec["initContainers"] = list(sidecars)
    spec["containers"] = containers
    spec["volumes"] = volumes
    return spec


def _platform(ctx: BundleContext) -> str:
    return "ascend" if ctx.ascend else "cuda"


def node_selector(ctx: BundleContext) -> dict[str, str]:
    """The engine pods' ``nodeSelector``: the request's labels, else the accelerator's default label."""
    return dict(ctx.node_selector) if ctx.node_selector else dict(DEFAULT_NODE_SELECTOR[_platform(ctx)])


def _metaservice_sidecar(ctx: BundleContext) -> dict[str, Any]:
    """The memcache MetaService as a native sidecar of the prefill leader pod (an init container with
    ``restartPolicy: Always``, Kubernetes ≥ 1.29): it starts before the prefill engines and runs on the
    prefill leader's node, as start-memcache-metaservice.sh does on the prefill master."""
    return {
        "name": "memcache-metaservice",
        "image": ctx.image,
        "restartPolicy": "Always",
        "command": ["bash", "-c", "set -euo pipefail\n" + METASERVICE_GUARD + METASERVICE_BODY],
        "env": [{"name": k, "value": v} for k, v in sorted(METASERVICE_ENV.items())],
        "ports": [{"name": k, "containerPort": p} for k, p in METASERVICE_PORTS.items()],
        "volumeMounts": [{"name": "memcache", "mountPath": MEMCACHE_DIR, "readOnly": True}],
    }


class _Dumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]  # libyaml: ≈10 × faster
    """Safe dumping, with multi-line strings (the containers' programs) as literal blocks an operator reads
    line by line; the loaded value is the same string."""


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|" if "\n" in value else None)


_Dumper.add_representer(str, _str)


def _dump(doc: Mapping[str, Any]) -> str:
    return yaml.dump(doc, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=10_000)


def lws_names(ctx: BundleContext) -> dict[str, str]:
    """Group name → its LeaderWorkerSet's name."""
    base = dns_label(ctx.served_name, 30)
    return {g.name: dns_label(f"{base}-{g.name}") for g in ctx.groups}


def k8s_manifests(ctx: BundleContext, nodes: Sequence[NodeLaunch]) -> dict[str, str]:
    """``k8s/*.yaml``: a LeaderWorkerSet and its clients' Service per group (and the P/D proxy)."""
    recipe = rc.for_context(ctx.recipe, ctx.ascend)
    base = dns_label(ctx.served_name, 30)
    out: dict[str, str] = {}
    names = lws_names(ctx)
    pd = ctx.topology.value == "disaggregated"
    for g in ctx.groups:
        members = sorted((n for n in nodes if n.group == g.name), key=lambda n: n.index)
        if not members:
            continue
        name = names[g.name]
        leader, worker = members[0], (members[1] if len(members) > 1 else members[0])
        terms = _terms(g.role, members)
        # RDMA for CUDA engines that talk across nodes: NCCL/DeepEP inside a multi-node group, NIXL/UCX
        # (UCX_TLS=rc) between the P/D sides; the docker scripts map /dev/infiniband for the same reason.
        rdma = not ctx.ascend and (g.nodes > 1 or pd)
        sidecars = (
            [_metaservice_sidecar(ctx)]
            if g.role == "prefill" and recipe.connector == "mooncake-memcache"
            else []
        )
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
                        "spec": _pod_spec(ctx, leader, terms, recipe, True, rdma, sidecars),
                    },
                    "workerTemplate": {
                        "metadata": {"labels": {"role": "worker"}},
                        "spec": _pod_spec(ctx, worker, terms, recipe, False, rdma),
                    },
                },
            },
        }
        if g.nodes == 1:  # one pod: the LWS CRD requires workerTemplate, leaderTemplate is optional
            tmpl = doc["spec"]["leaderWorkerTemplate"]
            tmpl["workerTemplate"] = tmpl.pop("leaderTemplate")
        ports = sorted({p for n in members for p in n.api_ports}) or [ctx.api_port]
        service = {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": client_service_name(name), "labels": {"app.kubernetes.io/name": base}},
            "spec": {
                "type": "ClusterIP",
                "selector": {LWS_NAME_LABEL: name, LWS_INDEX_LABEL: "0"},
                "ports": [{"name": f"http-{p}", "port": p, "targetPort": p} for p in ports],
            },
        }
        meta: list[dict[str, Any]] = []
        if sidecars:
            meta = [
                {
                    "apiVersion": "v1",
                    "kind": "Service",
                    "metadata": {
                        "name": metaservice_service_name(name),
                        "labels": {"app.kubernetes.io/name": base},
                    },
                    "spec": {
                        "type": "ClusterIP",
                        "selector": {LWS_NAME_LABEL: name, LWS_INDEX_LABEL: "0"},
                        "ports": [
                            {"name": k, "port": p, "targetPort": p} for k, p in METASERVICE_PORTS.items()
                        ],
                    },
                }
            ]
        out[f"k8s/{name}.yaml"] = (
            header(f"{ctx.model_name}: {g.name} ({g.role}, {g.nodes} nodes, TP{g.tp} DP{g.dp}).")
            + header(
                "Needs the LeaderWorkerSet controller (kubernetes-sigs/lws) and the accelerator device plugin"
                + ("" if ctx.ascend else f" and an RDMA device plugin ({RDMA_RESOURCE})")
                + "."
            )
            + _dump(doc)
            + "---\n"
            + _dump(service)
            + "".join("---\n" + _dump(m) for m in meta)
        )
    if pd:
        out["k8s/pd-proxy.yaml"] = _k8s_proxy(ctx, nodes, names, base, recipe)
    return out


def _k8s_proxy(
    ctx: BundleContext, nodes: Sequence[NodeLaunch], names: Mapping[str, str], base: str, recipe: rc.Recipe
) -> str:
    def host(n: NodeLaunch) -> str:
        members = sorted(m.index for m in nodes if m.group == n.group)
        return lws_pod_host(names[n.group], members.index(n.index))

    pre = [(host(n), p) for n in nodes if n.role == "prefill" for p in n.api_ports]
    dec = [(host(n), p) for n in nodes if n.role == "decode" for p in n.api_ports]
    name = dns_label(f"{base}-pd-proxy")
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
                            "image": recipe.proxy_image or ctx.image,
                            # the router's image is built by the bundle (router/Dockerfile): preloaded or
                            # pushed to the cluster's registry, never pulled from a public one by this name
                            "imagePullPolicy": "IfNotPresent",
                            "command": ["bash", "-c", "set -euo pipefail\n" + proxy_body(ctx, pre, dec)],
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
