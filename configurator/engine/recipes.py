"""Launch recipes: the public, versioned deployment recipes the bundle follows, as data.

A recipe is what one public tutorial or recipe page validates for one platform
(vLLM-Ascend on Atlas 800 A3 / A2, vLLM on CUDA by GPU generation) × model
family × topology (aggregated DP or P/D disaggregation): the environment, the
``vllm serve`` flags that are not sizes of the plan, the KV connector, the
container image and its device mounts, the vLLM (and vLLM-Ascend) version it
was validated with, and the section it comes from.

A recipe's environment, flags and shell steps are composed from named
:class:`Block` s, each written once with the source that gives it (the
vLLM-Ascend K3 sections share their network, runtime and multimodal settings;
the CUDA K3 recipes their runner and autotune settings; every MoE recipe the
cross-node DeepEP flag), so a value the tutorials share cannot drift between
recipes.

``launch.build_launch`` renders every engine through its recipe: recipe env and
flags, then the plan's own values (parallel sizes, ports, context, batch, memory
utilisation, the model's parsers).  Anything the generator does differently on
purpose is a :class:`Deviation` (added, changed or left out, with the reason);
the bundle README lists them, and ``tests/launch/test_recipes.py`` diffs every
seeded bundle against its tutorial plus these deviations, so nothing drifts
silently.

Values that depend on the node are written as the tokens :data:`IP`,
:data:`NIC` and :data:`DEVICES` and filled in per node.

Sources (all public; read on the branch named):

* [A3-4]  vllm-project/vllm-ascend, releases/v0.23.0,
  docs/source/tutorials/models/Kimi-K3.md §5.1.1 Four-Node Mixed Deployment;
  §4.1.1 docker run for Atlas 800 A3.
* [A3-PD] same file, §5.1.2 Sixteen-Node PD Separation Deployment (8P8D).
  ``ASCEND_BUFFER_POOL`` was removed from this section by
  "[Doc] Sunset ASCEND_BUFFER_POOL on updated v0.23.0 base (#13834)", so it is not set.
* [A2-8]  same file, §5.2.1 Eight-Node Mixed Deployment; §4.1.2 docker run for Atlas 800 A2.
* [QUANT] vllm-project/vllm-ascend, releases/v0.23.0, vllm_ascend/quantization/utils.py:
  a ModelSlim checkpoint (``quant_model_description.json``) selects the ``ascend``
  quantization by itself, so the tutorials pass no ``--quantization``.
* [K3-CUDA] vllm-project/recipes, main, models/moonshotai/Kimi-K3.yaml:
  ``hardware_overrides.hopper`` / ``.blackwell``, ``min_vllm_version: "0.27.1"``, images
  ``vllm/vllm-openai:kimi-k3``; layouts per GPU in [LAYOUTS]; guide notes "Cross node communication:
  ``--all2all-backend deepep_v2`` for RDMA" and "RDMA: ``UCX_TLS=rc,cuda_copy``".
* [LLAMA]  vllm-project/recipes, main, models/meta-llama/Llama-3.3-70B-Instruct.yaml
  (``base_args: []``: no ``--trust-remote-code``; hopper: ``--async-scheduling``).
* [QWEN]   vllm-project/recipes, main, models/Qwen/Qwen3-235B-A22B-Instruct-2507.yaml
  (``--trust-remote-code``, tool calling with the ``hermes`` parser).
* [K2/DS]  vllm-project/recipes, main, models/moonshotai/Kimi-K2-Instruct.yaml and
  models/deepseek-ai/DeepSeek-V3.yaml (``base_args``: ``--trust-remote-code``).
* [NIXL]   vllm-project/recipes, main, moonshotai/Kimi-K2.5.md (P/D across nodes:
  ``VLLM_NIXL_SIDE_CHANNEL_HOST=<routable ip of this host>``, ``UCX_NET_DEVICES``) and
  vllm-project/vllm v0.27.1 vllm/distributed/kv_transfer/kv_connector/v1/nixl/
  (the side channel binds ``VLLM_NIXL_SIDE_CHANNEL_HOST``, default localhost, port
  ``VLLM_NIXL_SIDE_CHANNEL_PORT``, default 5600).
* [ROUTER] vllm-project/recipes, main, src/lib/command-synthesis.js (pd_cluster):
  ``vllm-router --policy round_robin --vllm-pd-disaggregation --prefill URL … --decode URL …``,
  (github.com/vllm-project/router), run from its own image built from [ROUTER-PYPI], never installed at start.
* [DP]     vllm-project/vllm docs/serving/data_parallel_deployment.md (multi-node DP,
  ``--headless``, ``--data-parallel-start-rank``; external LB with ``--data-parallel-rank``).
* [K8S]    vllm-project/vllm docs/deployment/frameworks/lws.md (LeaderWorkerSet);
  Ascend device plugin resource names ``huawei.com/Ascend910`` (Ascend/ascend-device-plugin).
* [DS-R1]  vllm-project/vllm-ascend, releases/v0.23.0, docs/source/tutorials/models/DeepSeek-R1.md:
  §3.1 the ``vllm-ascend/DeepSeek-R1-W8A8`` checkpoint; §4.1 images ``vllm-ascend:<version>-a3`` (A3
  tab) and ``vllm-ascend:<version>`` (A2 tab); §5.2 Multi-Node Data Parallel Deployment (both tabs:
  the environment, ``--quantization ascend``, ``--seed 1024``, ``--trust-remote-code``, FULL_DECODE_ONLY).
* [LAYOUTS] vllm-project/recipes, main, models/moonshotai/Kimi-K3.yaml ``strategy_hardware``
  (``multi_node_tp_dp: {h200: supported}``, ``multi_node_dep: {h100: unsupported, h200: unsupported}``)
  and strategies/multi_node_tp_dp.yaml (TP = GPUs per node, DP = nodes, no ``--enable-expert-parallel``)
  / strategies/multi_node_dep.yaml (``--enable-expert-parallel`` with DP across nodes).
* [ROUTER-PYPI] pypi.org/project/vllm-router (releases 0.1.9 … 0.1.17, 0.1.15 among them: wheels built
  by vllm-project/router .buildkite/release-pipeline.yml, manylinux_2_28 x86_64 and aarch64);
  vllm-project/router pyproject.toml ``[project.scripts]`` (the ``vllm-router`` command).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from .types import (
    LAUNCH_ROLES,
    Deviation,
    ModelSpec,
    ParallelSpec,
    PlanRequest,
    ServerSpec,
    TopologyKind,
)

# Per-node tokens in env values.
IP = "<node ip>"
NIC = "<data nic>"
DEVICES = "<all devices>"

# The node roles a recipe line applies to, and what the bundle does differently from its recipe:
# both are types the launch result carries, so they live in types.py.
ROLES = LAUNCH_ROLES

# Flags whose value is the plan's, not the recipe's (sizes, ports, parallelism, the model's parsers).
PLAN_FLAGS = frozenset(
    {
        "--served-model-name",
        "--host",
        "--port",
        "--headless",
        "--tensor-parallel-size",
        "--pipeline-parallel-size",
        "--data-parallel-size",
        "--data-parallel-size-local",
        "--data-parallel-start-rank",
        "--data-parallel-rank",
        "--data-parallel-address",
        "--data-parallel-rpc-port",
        "--enable-expert-parallel",
        "--max-model-len",
        "--max-num-seqs",
        "--max-num-batched-tokens",
        "--gpu-memory-utilization",
        "--kv-cache-dtype",
        "--enable-prefix-caching",
        "--no-enable-prefix-caching",
        "--language-model-only",
        "--tokenizer-mode",
        "--reasoning-parser",
        "--enable-auto-tool-choice",
        "--tool-call-parser",
        "--kv-transfer-config",
    }
)
# Environment the generator sets from the site and the plan (addresses, devices, ports).
SITE_ENV = frozenset(
    {
        "VLLM_HOST_IP",
        "HCCL_IF_IP",
        "GLOO_SOCKET_IFNAME",
        "TP_SOCKET_IFNAME",
        "HCCL_SOCKET_IFNAME",
        "NCCL_SOCKET_IFNAME",
        "ASCEND_RT_VISIBLE_DEVICES",
        "CUDA_VISIBLE_DEVICES",
        "MMC_LOCAL_CONFIG_PATH",
        "VLLM_NIXL_SIDE_CHANNEL_HOST",
        "VLLM_NIXL_SIDE_CHANNEL_PORT",
    }
)

Flag = tuple[str, str | None]


@dataclass(frozen=True)
class Container:
    """How the tutorial starts the container on each node."""

    devices: tuple[str, ...]  # /dev paths (``{i}`` expands to each accelerator index)
    mounts: tuple[tuple[str, str], ...]  # host path, container path
    options: tuple[str, ...]  # other docker run options, in order
    gpus: bool = False  # --gpus all (CUDA)


@dataclass(frozen=True)
class ServingDefaults:
    """Serving values the recipe validated; used where the request leaves them unset."""

    max_model_len: int | None = None
    max_num_seqs: int | None = None
    max_num_batched_tokens: int | None = None
    gpu_memory_utilization: float | None = None
    comm_buffer_mb: int | None = None  # HCCL_BUFFSIZE on Ascend
    enable_prefix_caching: bool | None = None


@dataclass(frozen=True)
class Block:
    """Settings one public source gives together, written once and composed into recipes.

    ``source`` names the reference of the module docstring (and its section) the values come from.
    ``roles`` are the engines it applies to (every engine by default; :meth:`only` narrows a shared
    block for one recipe); a ``cross_node`` block applies only when an EP group spans nodes.
    """

    name: str
    source: str
    env: Mapping[str, str] = field(default_factory=dict)
    flags: tuple[Flag, ...] = ()
    roles: tuple[str, ...] = ROLES
    cross_node: bool = False
    path_prepend: Mapping[str, str] = field(default_factory=dict)  # VAR → dir put in front of $VAR
    sourced: tuple[str, ...] = ()  # shell files the tutorial sources before vllm serve
    unset: tuple[str, ...] = ()  # variables the tutorial unsets

    def only(self, *roles: str) -> Block:
        return replace(self, roles=roles)


def _put(target: dict[str, Any], key: str, value: Any, block: Block) -> None:
    if key in target:
        raise ValueError(f"block {block.name} sets {key} again: every setting is written once")
    target[key] = value


@dataclass(frozen=True)
class Recipe:
    """A recipe: what it is for, and its settings composed from :class:`Block` s in order.

    The environment, flags and shell steps are the blocks' (``init=False``): flags keep the blocks' order,
    as ``vllm serve`` receives them; a setting two blocks would both write is an error.
    """

    key: str
    title: str
    platform: str  # "ascend" | "cuda"
    hardware: frozenset[str]  # "a3" | "a2" | "hopper" | "blackwell" | "ampere" | "any"
    families: frozenset[str]  # model families; empty = any model (a generic recipe)
    topology: str  # "aggregated" | "pd"
    vllm: str  # vLLM version the recipe was validated with
    vllm_ascend: str  # vLLM-Ascend version ("" on CUDA)
    image: str
    source: str  # URL of the tutorial section / recipe file
    blocks: tuple[Block, ...] = ()
    connector: str = ""  # P/D: "mooncake-memcache" | "nixl"
    proxy: str = ""  # P/D: "ascend-load-balance-proxy" | "vllm-router"
    proxy_image: str = ""  # the image the P/D proxy runs in ("": the engines' image, which ships it)
    container: Container = Container((), (), ())
    defaults: ServingDefaults = ServingDefaults()  # comm_buffer_mb: the blocks' HCCL_BUFFSIZE when unset
    deviations: tuple[Deviation, ...] = ()
    notes: tuple[str, ...] = ()
    # The image per SoC where the variants differ (vLLM-Ascend builds its custom ops per SoC: ``-a3`` for
    # Atlas A3); ``image`` otherwise.
    images: Mapping[str, str] = field(default_factory=dict)
    # The plan-sized flags the source sets, as it sets them: a plan launching another value records a
    # deviation naming the source's value (``plan_deviations``).
    validated: Mapping[str, str] = field(default_factory=dict)
    # Layouts per hardware the source marks: hardware → (supported layout, its description); layouts the
    # source marks unsupported on it: hardware → layout names (see :func:`layout_of`).
    supported_layouts: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    unsupported_layouts: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # P/D: each side's layout as the source runs it: role → (TP, one instance per node, description).
    pd_layouts: Mapping[str, tuple[int, bool, str]] = field(default_factory=dict)
    # Aggregated: the layout the source runs, (TP, DP ranks per node, description); a plan on another is
    # listed as a difference.
    dp_layout: tuple[int, int, str] | None = None
    # A KV cache dtype the source sets (``--kv-cache-dtype``) that the plan may size otherwise.
    kv_cache_dtype: str = ""
    # A model-specific tutorial of the platform that this (generic) recipe does not follow: (URL, what it shows).
    related_tutorials: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    env: Mapping[str, str] = field(init=False)  # every engine
    role_env: Mapping[str, Mapping[str, str]] = field(init=False)
    path_prepend: Mapping[str, str] = field(init=False)
    sourced: tuple[str, ...] = field(init=False)
    unset: tuple[str, ...] = field(init=False)
    flags: tuple[Flag, ...] = field(init=False)  # every engine
    role_flags: Mapping[str, tuple[Flag, ...]] = field(init=False)
    cross_node_flags: tuple[Flag, ...] = field(init=False)  # added when an EP group spans nodes
    cross_node_env: Mapping[str, str] = field(init=False)

    def __post_init__(self) -> None:
        env: dict[str, str] = {}
        role_env: dict[str, dict[str, str]] = {}
        cross_env: dict[str, str] = {}
        flags: dict[str, Flag] = {}
        role_flags: dict[str, dict[str, Flag]] = {}
        cross_flags: dict[str, Flag] = {}
        path_prepend: dict[str, str] = {}
        sourced: list[str] = []
        unset: list[str] = []
        for b in self.blocks:
            every = set(b.roles) >= set(ROLES)
            for role in () if every or b.cross_node else b.roles:
                for k, v in b.env.items():
                    _put(role_env.setdefault(role, {}), k, v, b)
                for flag in b.flags:
                    _put(role_flags.setdefault(role, {}), flag[0], flag, b)
            if every or b.cross_node:
                for k, v in b.env.items():
                    _put(cross_env if b.cross_node else env, k, v, b)
                for flag in b.flags:
                    _put(cross_flags if b.cross_node else flags, flag[0], flag, b)
            for k, v in b.path_prepend.items():
                _put(path_prepend, k, v, b)
            sourced += b.sourced
            unset += b.unset
        fields = {
            "env": env,
            "role_env": role_env,
            "cross_node_env": cross_env,
            "flags": tuple(flags.values()),
            "role_flags": {r: tuple(f.values()) for r, f in role_flags.items()},
            "cross_node_flags": tuple(cross_flags.values()),
            "path_prepend": path_prepend,
            "sourced": tuple(sourced),
            "unset": tuple(unset),
        }
        for name, value in fields.items():
            object.__setattr__(self, name, value)
        if "HCCL_BUFFSIZE" in env and self.defaults.comm_buffer_mb is None:
            # the tutorial's communication buffer is the plan's default one (counted in the memory estimate)
            object.__setattr__(
                self, "defaults", replace(self.defaults, comm_buffer_mb=int(env["HCCL_BUFFSIZE"]))
            )

    def env_for(self, role: str) -> dict[str, str]:
        return {**self.env, **self.role_env.get(role, {})}

    def flags_for(self, role: str) -> list[Flag]:
        return [*self.flags, *self.role_flags.get(role, ())]

    def image_for(self, hardware: str) -> str:
        """The recipe's image for this SoC / GPU generation."""
        return self.images.get(hardware, self.image)

    @property
    def versions(self) -> str:
        return f"vLLM {self.vllm}" + (f" + vLLM-Ascend {self.vllm_ascend}" if self.vllm_ascend else "")


# --------------------------------------------------------------------------- containers

_ASCEND_MOUNTS = (
    ("/usr/local/dcmi", "/usr/local/dcmi"),
    ("/usr/local/Ascend/driver/tools/hccn_tool", "/usr/local/Ascend/driver/tools/hccn_tool"),
    ("/usr/local/bin/npu-smi", "/usr/local/bin/npu-smi"),
    ("/usr/local/Ascend/driver/lib64/", "/usr/local/Ascend/driver/lib64/"),
    ("/usr/local/Ascend/driver/version.info", "/usr/local/Ascend/driver/version.info"),
    ("/etc/ascend_install.info", "/etc/ascend_install.info"),
    ("/root/.cache", "/root/.cache"),
)
ASCEND_CONTAINER = Container(  # [A3-4] §4.1.1 / [A2-8] §4.1.2
    devices=("/dev/davinci{i}", "/dev/davinci_manager", "/dev/devmm_svm", "/dev/hisi_hdc"),
    mounts=_ASCEND_MOUNTS,
    options=("--shm-size=1g", "--net=host", "--privileged=true"),
)
CUDA_CONTAINER = Container(  # vLLM docs deployment/docker.md; IB devices for RDMA (NCCL / NIXL)
    devices=("/dev/infiniband",),
    mounts=(("/root/.cache/huggingface", "/root/.cache/huggingface"),),
    options=("--ipc=host", "--network=host", "--ulimit", "memlock=-1", "--cap-add=IPC_LOCK"),
    gpus=True,
)

# --------------------------------------------------------------------------- blocks
# Each setting is written once, in the block of the source that gives it; a recipe lists its blocks in
# the order its flags reach ``vllm serve``.

_READY_TIMEOUT_S = "7200"  # [A3-4] master tab: the master waits for every rank to load the weights
TRUST_REMOTE_CODE = Block(
    "trust-remote-code",
    "[A3-4] [A3-PD] [A2-8]; [K3-CUDA] [QWEN] [K2/DS] base_args",
    flags=(("--trust-remote-code", None),),
)

# Ascend, the vLLM-Ascend Kimi-K3 tutorial
ASCEND_NODE_NETWORK = Block(
    "ascend-node-network",
    "[A3-4] §5.1.1, [A3-PD] §5.1.2, [A2-8] §5.2.1: the node's own address and data NIC for HCCL and Gloo",
    env={"HCCL_IF_IP": IP, "GLOO_SOCKET_IFNAME": NIC, "TP_SOCKET_IFNAME": NIC, "HCCL_SOCKET_IFNAME": NIC},
)
ASCEND_RUNTIME = Block(
    "ascend-runtime",
    "[A3-4] §5.1.1, [A3-PD] §5.1.2, [A2-8] §5.2.1: every node of every section",
    env={
        "PYTORCH_NPU_ALLOC_CONF": "expandable_segments:True",
        "OMP_PROC_BIND": "false",
        "TASK_QUEUE_ENABLE": "1",
        "ASCEND_RT_VISIBLE_DEVICES": DEVICES,
    },
)
A3_MIXED_ENV = Block(
    "a3-mixed-env", "[A3-4] §5.1.1, both tabs", env={"OMP_NUM_THREADS": "1", "HCCL_BUFFSIZE": "800"}
)
MASTER_WAITS_FOR_WEIGHTS = Block(
    "master-waits-for-weights",
    "[A3-4] §5.1.1, master tab",
    env={"VLLM_ENGINE_READY_TIMEOUT_S": _READY_TIMEOUT_S},
    roles=("master",),
)
K3_LONG_STEPS = Block(
    "k3-long-steps",
    "[A3-PD] §5.1.2, [A2-8] §5.2.1",
    env={"VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS": "30000", "OMP_NUM_THREADS": "10"},
)
A3_PD_ENV = Block(
    "a3-pd-env",
    "[A3-PD] §5.1.2, prefill and decode tabs",
    env={
        "VLLM_RPC_TIMEOUT": "3600000",
        "HCCL_EXEC_TIMEOUT": "204",
        "HCCL_CONNECT_TIMEOUT": "120",
        "VLLM_ASCEND_ENABLE_MLAPO": "1",
        "HCCL_BUFFSIZE": "1024",
        "VLLM_USE_V1": "1",
        "ASCEND_ENABLE_USE_FABRIC_MEM": "1",
    },
)
MOONCAKE_SHELL = Block(
    "mooncake-shell",
    "[A3-PD] §5.1.2: no HTTP proxy between nodes; Mooncake's library on the loader path",
    unset=("ftp_proxy", "FTP_PROXY", "https_proxy", "HTTPS_PROXY", "http_proxy", "HTTP_PROXY"),
    path_prepend={"LD_LIBRARY_PATH": "/usr/local/Ascend/ascend-toolkit/latest/python/site-packages/mooncake"},
)
MEMCACHE_PREFILL = Block(
    "memcache-prefill",
    "[A3-PD] §5.1.2, prefill tab: the memcache KV pool's local config",
    env={"MMC_LOCAL_CONFIG_PATH": "/etc/memcache/mmc-local.conf", "PYTHONHASHSEED": "0"},
    roles=("prefill",),
)
A3_PD_PREFILL_ENV = Block(
    "a3-pd-prefill-env", "[A3-PD] §5.1.2, prefill tab", env={"ACL_OP_INIT_MODE": "1"}, roles=("prefill",)
)
A3_PD_DECODE_ENV = Block(
    "a3-pd-decode-env", "[A3-PD] §5.1.2, decode tab", env={"HCCL_OP_EXPANSION_MODE": "AIV"}, roles=("decode",)
)
A2_ENV = Block(
    "a2-env",
    "[A2-8] §5.2.1",
    env={
        "VLLM_HOST_IP": IP,
        "HCCL_CONNECT_TIMEOUT": "1800",
        "HCCL_EXEC_TIMEOUT": "1800",
        "HCCL_BUFFSIZE": "256",
        "HCCL_INTRA_ROCE_ENABLE": "1",
        "VLLM_LOGGING_LEVEL": "INFO",
        "TIKTOKEN_CACHE_DIR": "/root/.cache/tiktoken-k3",
    },
    sourced=(
        "/usr/local/Ascend/ascend-toolkit/set_env.sh",
        "/vllm-workspace/vllm-ascend/vllm_ascend/_cann_ops_custom/vendors/custom_transformer/bin/set_env.bash",
    ),
    path_prepend={"PYTHONPATH": "/vllm-workspace/vllm-ascend"},
)
FULL_DECODE_GRAPHS = Block(
    "full-decode-graphs",
    "[A3-4] §5.1.1; [A3-PD] §5.1.2, decode tab",
    flags=(("--compilation-config", '{"cudagraph_mode":"FULL_DECODE_ONLY"}'),),
)
EAGER_PREFILL = Block("eager-prefill", "[A3-PD] §5.1.2, prefill tab", flags=(("--enforce-eager", None),))
K3_VISION_ENCODER_DP = Block(
    "k3-vision-encoder-dp", "[A3-4] [A3-PD] [A2-8]", flags=(("--mm-encoder-tp-mode", "data"),)
)
K3_VISION_CHUNKS = Block(
    "k3-vision-chunks", "[A3-4] [A3-PD] [A2-8]", flags=(("--limit-mm-per-prompt", '{"vision_chunk":2}'),)
)
SKIP_MM_PROFILING = Block(
    "skip-mm-profiling", "[A3-PD] §5.1.2, [A2-8] §5.2.1", flags=(("--skip-mm-profiling", None),)
)
A3_MIXED_FLAGS = Block(
    "a3-mixed-flags",
    "[A3-4] §5.1.1",
    flags=(
        ("--mm-processor-cache-gb", "0"),
        ("--additional-config", '{"enable_cpu_binding":true,"enable_flashcomm1":true}'),
    ),
)
A3_PD_SEED = Block("a3-pd-seed", "[A3-PD] §5.1.2", flags=(("--seed", "1024"),))
A3_PD_FLAGS = Block(
    "a3-pd-flags",
    "[A3-PD] §5.1.2",
    flags=(
        ("--safetensors-load-strategy", "prefetch"),
        ("--mamba-cache-mode", "align"),
        ("--additional-config", '{"recompute_scheduler_enable":false}'),
    ),
)
A2_FLAGS = Block(
    "a2-flags",
    "[A2-8] §5.2.1",
    flags=(
        ("--dtype", "bfloat16"),
        ("--compilation-config", '{"cudagraph_mode":"FULL_DECODE_ONLY","cudagraph_capture_sizes":[1,2,4,8]}'),
        (
            "--additional-config",
            '{"enable_flashcomm1":false,"ascend_compilation_config":{"enable_npugraph_ex":true,'
            '"enable_static_kernel":false},"enable_cpu_binding":true}',
        ),
    ),
)

# CUDA, the vLLM recipes
CUDA_NODE_NETWORK = Block(
    "cuda-node-network",
    "[DP]: NCCL and Gloo on the data NIC, every GPU of the node",
    env={"NCCL_SOCKET_IFNAME": NIC, "GLOO_SOCKET_IFNAME": NIC, "CUDA_VISIBLE_DEVICES": DEVICES},
)
DEEPEP_ACROSS_NODES = Block(  # the guide: "Use --all2all-backend deepep_v2 for RDMA" across nodes
    "deepep-across-nodes",
    "[K3-CUDA] guide, 'Cross node communication'",
    flags=(("--all2all-backend", "deepep_v2"),),
    cross_node=True,
)
K3_CUDA_READY = Block(
    "k3-cuda-ready",
    "[K3-CUDA] hardware_overrides.hopper / .blackwell extra_env",
    env={"VLLM_ENGINE_READY_TIMEOUT_S": "3600"},
)
K3_CUDA_RUNTIME = Block(
    "k3-cuda-runtime",
    "[K3-CUDA] hardware_overrides.hopper / .blackwell",
    env={"VLLM_USE_V2_MODEL_RUNNER": "1", "VLLM_USE_RUST_FRONTEND": "1"},
)
NO_FLASHINFER_AUTOTUNE = Block(
    "no-flashinfer-autotune",
    "[K3-CUDA] hardware_overrides.hopper / .blackwell",
    flags=(("--no-enable-flashinfer-autotune", None),),
)
K3_HOPPER = Block(
    "k3-hopper",
    "[K3-CUDA] hardware_overrides.hopper",
    env={"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"},
    flags=(("--moe-backend", "marlin"), ("--disable-custom-all-reduce", None)),
)
K3_HOPPER_ATTENTION = Block(
    "k3-hopper-attention", "[K3-CUDA] hardware_overrides.hopper", flags=(("--attention-backend", "FLASHMLA"),)
)
K3_BLACKWELL = Block(
    "k3-blackwell",
    "[K3-CUDA] hardware_overrides.blackwell",
    env={"VLLM_ALLREDUCE_USE_FLASHINFER": "1"},
    flags=(("--load-format", "fastsafetensors"),),
)
K3_BLACKWELL_ATTENTION = Block(
    "k3-blackwell-attention",
    "[K3-CUDA] hardware_overrides.blackwell",
    flags=(
        ("--attention-config", '{"use_prefill_query_quantization":true,"mla_prefill_backend":"flashinfer"}'),
    ),
)
ASYNC_SCHEDULING = Block(
    "async-scheduling", "[LLAMA] hardware_overrides.hopper", flags=(("--async-scheduling", None),)
)
# A model whose linear-attention layers keep a short-convolution state (KDA, Gated DeltaNet, Mamba: the
# catalog's ``linear_conv_kernel``) moves that state through NIXL with three reads per block, which vLLM's
# NIXL worker allows only in the DS (dim, state_len) layout: ``assert is_conv_state_dim_first(), "3-read
# Mamba conv transfer requires DS conv state layout. Set VLLM_SSM_CONV_STATE_LAYOUT=DS"``
# (vllm-project/vllm vllm/distributed/kv_transfer/kv_connector/v1/nixl/, the Mamba transfer spec;
# vllm/model_executor/layers/mamba/mamba_utils.py ``get_conv_state_layout`` defaults to SD).  The K3 recipe
# sets it for every P/D engine ([K3-CUDA] ``strategy_overrides.pd_cluster.env``).
CONV_STATE_DS = Block(
    "conv-state-ds",
    "[NIXL] worker assertion; [K3-CUDA] strategy_overrides.pd_cluster.env",
    env={"VLLM_SSM_CONV_STATE_LAYOUT": "DS"},
)


def model_env(model: ModelSpec, connector: str) -> dict[str, str]:
    """Environment the model needs on this KV transfer path, whatever the recipe: the DS conv-state
    layout for a model with a convolution state over NIXL (:data:`CONV_STATE_DS`)."""
    conv_state = model.linear_layers > 0 and model.linear_conv_kernel > 1
    return dict(CONV_STATE_DS.env) if connector == "nixl" and conv_state else {}


NIXL_PD = Block(
    "nixl-pd",
    "[NIXL]: the side channel on the node's own address (default localhost fails across nodes), UCX over RDMA",
    env={"VLLM_NIXL_SIDE_CHANNEL_HOST": IP, "UCX_TLS": "rc,cuda_copy", "UCX_NET_DEVICES": "all"},
)

# --------------------------------------------------------------------------- Ascend

_KIMI_K3_TUTORIAL = "https://github.com/vllm-project/vllm-ascend/blob/releases/v0.23.0/docs/source/tutorials/models/Kimi-K3.md"
HOST_IP_ADDED = Deviation(
    "env",
    "VLLM_HOST_IP",
    IP,
    "set on every node: without it vLLM may bind a container bridge or 127.0.0.1 and peers cannot reach "
    "the node (the vLLM-Ascend Kimi-K3 tutorial's A2 section sets it on every node)",
)
_NO_MEDIA_PATH = Deviation(
    "flag",
    "--allowed-local-media-path",
    None,
    "it lets any API client read files on the server (vLLM's help calls it a security risk); "
    "pass image URLs or data URLs instead",
)
_A3_MIXED_ENV_BLOCKS = (ASCEND_NODE_NETWORK, ASCEND_RUNTIME, A3_MIXED_ENV, MASTER_WAITS_FOR_WEIGHTS)
# The release images per SoC ([DS-R1] §4.1: the A3 tab runs ``<version>-a3``, the A2 tab ``<version>``;
# vLLM-Ascend builds its custom operators per SoC, so an A2 image on an A3 node lacks them).
ASCEND_RELEASE_IMAGES = {
    "a3": "quay.io/ascend/vllm-ascend:v0.23.0-a3",
    "a2": "quay.io/ascend/vllm-ascend:v0.23.0",
}

ASCEND_A3_K3_AGGREGATED = Recipe(
    key="ascend-a3-kimi-k3-dp",
    title="Kimi K3 on Atlas 800 A3, mixed (aggregated) DP over nodes",
    platform="ascend",
    hardware=frozenset({"a3"}),
    families=frozenset({"kimi-k3"}),
    topology="aggregated",
    vllm="0.23.0",
    vllm_ascend="0.23.0",
    image="quay.io/ascend/vllm-ascend:kimi-k3-a3",
    source=_KIMI_K3_TUTORIAL + "#511-four-node-mixed-deployment",
    blocks=(
        *_A3_MIXED_ENV_BLOCKS,
        TRUST_REMOTE_CODE,
        FULL_DECODE_GRAPHS,
        A3_MIXED_FLAGS,
        K3_VISION_ENCODER_DP,
        K3_VISION_CHUNKS,
    ),
    container=ASCEND_CONTAINER,
    # Only HCCL_BUFFSIZE defaults from the tutorial (comm_buffer_mb, from the blocks): its context, batch
    # and utilisation (131072, 24576, 0.9) are the plan's to choose and the memory estimate's to check;
    # a plan launching other values records each as a deviation (§5.1.1 four-node default).
    validated={
        "--max-model-len": "131072",
        "--max-num-seqs": "16",
        "--max-num-batched-tokens": "24576",
        "--gpu-memory-utilization": "0.9",
    },
    deviations=(HOST_IP_ADDED, _NO_MEDIA_PATH),
)

_A3_PD_ENV_BLOCKS = (
    ASCEND_NODE_NETWORK,
    ASCEND_RUNTIME,
    K3_LONG_STEPS,
    A3_PD_ENV,
    MOONCAKE_SHELL,
    MEMCACHE_PREFILL,
)
_PD_ROLE_FLAGS = (EAGER_PREFILL.only("prefill"), FULL_DECODE_GRAPHS.only("decode"))

ASCEND_A3_K3_PD = Recipe(
    key="ascend-a3-kimi-k3-pd",
    title="Kimi K3 on Atlas 800 A3, P/D disaggregation with Mooncake and a memcache KV pool",
    platform="ascend",
    hardware=frozenset({"a3"}),
    families=frozenset({"kimi-k3"}),
    topology="pd",
    vllm="0.23.0",
    vllm_ascend="0.23.0",
    image="quay.io/ascend/vllm-ascend:kimi-k3-a3",
    source=_KIMI_K3_TUTORIAL + "#512-sixteen-node-pd-separation-deployment",
    blocks=(
        *_A3_PD_ENV_BLOCKS,
        A3_PD_PREFILL_ENV,
        A3_PD_DECODE_ENV,
        A3_PD_SEED,
        TRUST_REMOTE_CODE,
        K3_VISION_ENCODER_DP,
        SKIP_MM_PROFILING,
        A3_PD_FLAGS,
        K3_VISION_CHUNKS,
        *_PD_ROLE_FLAGS,
    ),
    connector="mooncake-memcache",
    proxy="ascend-load-balance-proxy",
    container=ASCEND_CONTAINER,
    validated={  # §5.1.2.2, both engine templates
        "--max-model-len": "133120",
        "--max-num-batched-tokens": "8192",
        "--max-num-seqs": "16",
        "--gpu-memory-utilization": "0.9",
    },
    notes=(
        "ASCEND_BUFFER_POOL is not set: the tutorial dropped it in vllm-ascend #13834 "
        "('Sunset ASCEND_BUFFER_POOL on updated v0.23.0 base').",
        "The tutorial starts each rank through examples/external_online_dp/launch_online_dp.py; the node "
        "scripts run the same vllm serve per rank directly.",
    ),
    deviations=(
        HOST_IP_ADDED,
        Deviation(
            "env",
            "VLLM_ENGINE_READY_TIMEOUT_S",
            _READY_TIMEOUT_S,
            "set on every engine: with one vllm serve per DP rank (external load balancing) each rank waits "
            "for its own engine while ≈1.5 TB of weights load, not only rank 0",
            ("prefill", "decode"),
        ),
    ),
)

ASCEND_A2_K3_AGGREGATED = Recipe(
    key="ascend-a2-kimi-k3-dp",
    title="Kimi K3 on Atlas 800 A2, mixed DP over eight nodes (text only)",
    platform="ascend",
    hardware=frozenset({"a2"}),
    families=frozenset({"kimi-k3"}),
    topology="aggregated",
    vllm="0.23.0",
    vllm_ascend="0.23.0",
    image="quay.io/ascend/vllm-ascend:kimi-k3",
    source=_KIMI_K3_TUTORIAL + "#521-eight-node-mixed-deployment",
    blocks=(
        ASCEND_NODE_NETWORK,
        ASCEND_RUNTIME,
        K3_LONG_STEPS,
        A2_ENV,
        TRUST_REMOTE_CODE,
        K3_VISION_ENCODER_DP,
        SKIP_MM_PROFILING,
        K3_VISION_CHUNKS,
        A2_FLAGS,
    ),
    container=ASCEND_CONTAINER,
    validated={"--max-model-len": "262144", "--gpu-memory-utilization": "0.90"},  # §5.2.1, both tabs
    deviations=(
        Deviation(
            "env",
            "VLLM_ENGINE_READY_TIMEOUT_S",
            _READY_TIMEOUT_S,
            "set on the master as the A3 section does: the master waits for all eight ranks to load the weights",
            ("master",),
        ),
    ),
    notes=("Do not set HCCL_OP_EXPANSION_MODE=AIV on A2 (tutorial §5.2.1).",),
)

# vLLM-Ascend tutorials for model families this project has no recipe of, by family: the generic recipe's
# bundle names them as a difference (it does not follow their environment).
_QWEN3_235B_TUTORIAL = (
    "https://github.com/vllm-project/vllm-ascend/blob/main/docs/source/tutorials/models/Qwen3-235B-A22B.md",
    "vLLM-Ascend's tutorial covers this model on Atlas 800 A2/A3 (§5.1: one node, TP8 + EP, W8A8 with "
    "--quantization ascend, HCCL_BUFFSIZE 512, VLLM_ASCEND_ENABLE_FLASHCOMM1=1); this bundle follows the "
    "generic recipe: compare before go-live",
)
ASCEND_FAMILY_TUTORIALS = {"qwen3": _QWEN3_235B_TUTORIAL}

ASCEND_GENERIC = Recipe(
    key="ascend-generic",
    title="vLLM-Ascend multi-node DP (no model-specific tutorial)",
    platform="ascend",
    hardware=frozenset({"a3", "a2"}),
    families=frozenset(),
    topology="aggregated",
    vllm="0.23.0",
    vllm_ascend="0.23.0",
    image="quay.io/ascend/vllm-ascend:v0.23.0",
    images=ASCEND_RELEASE_IMAGES,
    source=_KIMI_K3_TUTORIAL + "#511-four-node-mixed-deployment",
    blocks=_A3_MIXED_ENV_BLOCKS,
    container=ASCEND_CONTAINER,
    deviations=(HOST_IP_ADDED,),
    related_tutorials=ASCEND_FAMILY_TUTORIALS,
    notes=(
        "No model-specific recipe of this project covers this model on this server: the per-node "
        "environment of the closest validated tutorial is used and model flags are the plan's only. "
        "Validate before go-live.",
    ),
)
ASCEND_GENERIC_PD = replace(
    ASCEND_GENERIC,
    key="ascend-generic-pd",
    title="vLLM-Ascend P/D disaggregation with Mooncake (no model-specific tutorial)",
    topology="pd",
    source=_KIMI_K3_TUTORIAL + "#512-sixteen-node-pd-separation-deployment",
    blocks=(*_A3_PD_ENV_BLOCKS, *_PD_ROLE_FLAGS),
    connector="mooncake-memcache",
    proxy="ascend-load-balance-proxy",
    defaults=ServingDefaults(),
)

# DeepSeek-R1 / V3 on vLLM-Ascend: the W8A8 conversion the tutorial serves [DS-R1]
_DEEPSEEK_R1_TUTORIAL = "https://github.com/vllm-project/vllm-ascend/blob/releases/v0.23.0/docs/source/tutorials/models/DeepSeek-R1.md"
DS_R1_MULTI_NODE_ENV = Block(
    "ds-r1-multi-node-env",
    "[DS-R1] §5.2, Node 0 and Node 1 tabs (identical environment)",
    env={
        "OMP_PROC_BIND": "false",
        "OMP_NUM_THREADS": "1",
        "HCCL_BUFFSIZE": "200",
        "PYTORCH_NPU_ALLOC_CONF": "expandable_segments:True",
        "VLLM_ASCEND_BALANCE_SCHEDULING": "1",
        "HCCL_INTRA_PCIE_ENABLE": "1",
        "HCCL_INTRA_ROCE_ENABLE": "0",
    },
)
DS_R1_SEED = Block("ds-r1-seed", "[DS-R1] §5.1, §5.2", flags=(("--seed", "1024"),))
ASCEND_DEEPSEEK = Recipe(
    key="ascend-deepseek-r1-dp",
    title="DeepSeek-R1 / V3 (W8A8) on Atlas 800 A3 / A2, DP over nodes",
    platform="ascend",
    hardware=frozenset({"a3", "a2"}),
    families=frozenset({"deepseek"}),
    topology="aggregated",
    vllm="0.23.0",
    vllm_ascend="0.23.0",
    image=ASCEND_RELEASE_IMAGES["a2"],
    images=ASCEND_RELEASE_IMAGES,
    source=_DEEPSEEK_R1_TUTORIAL + "#52-multi-node-data-parallel-deployment",
    blocks=(ASCEND_NODE_NETWORK, DS_R1_MULTI_NODE_ENV, DS_R1_SEED, TRUST_REMOTE_CODE, FULL_DECODE_GRAPHS),
    container=ASCEND_CONTAINER,
    # §5.2, both tabs: --tensor-parallel-size 4, --data-parallel-size 4, --data-parallel-size-local 2
    dp_layout=(4, 2, "TP4 with two DP ranks per node (DP4 over two nodes, expert parallel)"),
    validated={  # §5.2, both tabs
        "--max-num-seqs": "16",
        "--max-model-len": "16384",
        "--max-num-batched-tokens": "4096",
        "--gpu-memory-utilization": "0.92",
    },
    deviations=(
        HOST_IP_ADDED,
        Deviation(
            "flag",
            "--speculative-config",
            None,
            "MTP speculative decoding (num_speculative_tokens 3) is left out: the plan's memory and step-time "
            "estimates do not count the MTP layer; turn it on after a load test on this cluster",
        ),
    ),
    notes=(
        "The tutorial serves the W8A8 conversion (vllm-ascend/DeepSeek-R1-W8A8 on ModelScope) with "
        "--quantization ascend; the FP8 release is not loaded on Ascend.",
        "The tutorial was validated on vLLM-Ascend v0.13.0; the copy on the v0.23.0 branch is followed.",
    ),
)

# --------------------------------------------------------------------------- CUDA

_RECIPES = "https://github.com/vllm-project/recipes/blob/main/"
# [LAYOUTS]: the K3 recipe's layouts on Hopper, keyed by GPU id (the recipe's keyspace: GPU id first).
_K3_HOPPER_LAYOUTS = {
    "h200": (
        "multi_node_tp_dp",
        "TP8 within each node and DP across nodes, expert parallelism off (one model replica per node)",
    )
}
_K3_HOPPER_UNSUPPORTED = {"h200": ("multi_node_dep",), "h100": ("multi_node_dep",)}

CUDA_HOPPER_K3 = Recipe(
    key="cuda-hopper-kimi-k3",
    title="Kimi K3 on Hopper (H200): TP8 per node, DP across nodes",
    platform="cuda",
    hardware=frozenset({"hopper"}),
    families=frozenset({"kimi-k3"}),
    topology="aggregated",
    vllm="0.27.1",
    vllm_ascend="",
    image="vllm/vllm-openai:kimi-k3",
    source=_RECIPES + "models/moonshotai/Kimi-K3.yaml",
    blocks=(
        CUDA_NODE_NETWORK,
        K3_CUDA_READY,
        K3_CUDA_RUNTIME,
        TRUST_REMOTE_CODE,
        K3_HOPPER,
        NO_FLASHINFER_AUTOTUNE,
        K3_HOPPER_ATTENTION,
        DEEPEP_ACROSS_NODES,
    ),
    container=CUDA_CONTAINER,
    defaults=ServingDefaults(
        max_model_len=32768, max_num_seqs=5, max_num_batched_tokens=4096, gpu_memory_utilization=0.97
    ),
    supported_layouts=_K3_HOPPER_LAYOUTS,
    unsupported_layouts=_K3_HOPPER_UNSUPPORTED,
    notes=(
        "The recipe supports multi_node_tp_dp on H200 (TP8 per node, DP across nodes, no expert "
        "parallelism) and marks multi_node_dep unsupported there; with expert parallelism across nodes the "
        "bundle adds --all2all-backend deepep_v2 over RDMA (recipe guide, 'Cross node communication').",
    ),
)
CUDA_BLACKWELL_K3 = replace(
    CUDA_HOPPER_K3,
    key="cuda-blackwell-kimi-k3",
    title="Kimi K3 on Blackwell (B200/B300)",
    hardware=frozenset({"blackwell"}),
    supported_layouts={},
    unsupported_layouts={},
    notes=("Multi-node: --all2all-backend deepep_v2 over RDMA (recipe guide, 'Cross node communication').",),
    blocks=(
        CUDA_NODE_NETWORK,
        K3_CUDA_READY,
        K3_CUDA_RUNTIME,
        TRUST_REMOTE_CODE,
        K3_BLACKWELL,
        NO_FLASHINFER_AUTOTUNE,
        K3_BLACKWELL_ATTENTION,
        DEEPEP_ACROSS_NODES,
    ),
    defaults=ServingDefaults(max_model_len=1048576, gpu_memory_utilization=0.95),
    kv_cache_dtype="fp8",  # [K3-CUDA] hardware_overrides.blackwell extra_args
)
CUDA_K3_BASE = Recipe(
    key="cuda-kimi-k3",
    title="Kimi K3 on other CUDA GPUs (the recipe's base arguments only)",
    platform="cuda",
    hardware=frozenset({"any", "ampere", "blackwell-pcie"}),
    families=frozenset({"kimi-k3"}),
    topology="aggregated",
    vllm="0.27.1",
    vllm_ascend="",
    image="vllm/vllm-openai:kimi-k3",
    source=_RECIPES + "models/moonshotai/Kimi-K3.yaml",
    blocks=(CUDA_NODE_NETWORK, K3_CUDA_READY, TRUST_REMOTE_CODE, DEEPEP_ACROSS_NODES),
    container=CUDA_CONTAINER,
    defaults=ServingDefaults(gpu_memory_utilization=0.95),
    notes=("The K3 recipe validates H200, B200, B300, GB200, GB300 and MI355X; on this GPU only its base "
           "arguments apply. Validate with a load test before go-live.",),
)  # fmt: skip
CUDA_LLAMA = Recipe(
    key="cuda-llama-3.3",
    title="Llama 3.3 70B on Hopper/Blackwell",
    platform="cuda",
    hardware=frozenset({"hopper", "blackwell"}),
    families=frozenset({"llama"}),
    topology="aggregated",
    vllm="0.27.1",
    vllm_ascend="",
    image="vllm/vllm-openai:v0.27.1",
    source=_RECIPES + "models/meta-llama/Llama-3.3-70B-Instruct.yaml",
    blocks=(CUDA_NODE_NETWORK, ASYNC_SCHEDULING),
    container=CUDA_CONTAINER,
    defaults=ServingDefaults(max_num_batched_tokens=8192, enable_prefix_caching=False),
)
CUDA_KIMI_K2 = Recipe(
    key="cuda-kimi-k2",
    title="Kimi K2 on CUDA",
    platform="cuda",
    hardware=frozenset({"hopper", "blackwell", "blackwell-pcie", "ampere", "any"}),
    families=frozenset({"kimi-k2"}),
    topology="aggregated",
    vllm="0.27.1",
    vllm_ascend="",
    image="vllm/vllm-openai:v0.27.1",
    source=_RECIPES + "models/moonshotai/Kimi-K2-Instruct.yaml",
    blocks=(CUDA_NODE_NETWORK, TRUST_REMOTE_CODE, DEEPEP_ACROSS_NODES),
    container=CUDA_CONTAINER,
)
CUDA_QWEN3_MOE = replace(
    CUDA_KIMI_K2,
    key="cuda-qwen3-moe",
    title="Qwen3-235B-A22B on CUDA",
    families=frozenset({"qwen3"}),
    source=_RECIPES + "models/Qwen/Qwen3-235B-A22B-Instruct-2507.yaml",
)
CUDA_DEEPSEEK = replace(
    CUDA_KIMI_K2,
    key="cuda-deepseek",
    title="DeepSeek V3 / R1 on CUDA",
    families=frozenset({"deepseek"}),
    source=_RECIPES + "models/deepseek-ai/DeepSeek-V3.yaml",
)
CUDA_GENERIC = Recipe(
    key="cuda-generic",
    title="vLLM on CUDA, multi-node DP (no model-specific recipe)",
    platform="cuda",
    hardware=frozenset({"hopper", "blackwell", "blackwell-pcie", "ampere", "any"}),
    families=frozenset(),
    topology="aggregated",
    vllm="0.27.1",
    vllm_ascend="",
    image="vllm/vllm-openai:v0.27.1",
    source="https://github.com/vllm-project/vllm/blob/v0.27.1/docs/serving/data_parallel_deployment.md",
    blocks=(CUDA_NODE_NETWORK, DEEPEP_ACROSS_NODES),
    container=CUDA_CONTAINER,
    notes=("No vLLM recipe covers this model on this GPU: flags are the plan's only.",),
)


# The router's image, built by the bundle's ``router/Dockerfile`` from the pinned PyPI release [ROUTER-PYPI]:
# vllm/vllm-openai does not ship vllm-router, installing it when the pod starts needs the Internet from the
# cluster, and the public record (the router's docs and issues) names nightly tags of vllm/vllm-router, no
# release tag one can check, so the bundle builds its own.  The wheel installs the ``vllm-router`` command
# ([ROUTER-PYPI] pyproject ``[project.scripts] vllm-router = "vllm_router.launch_router:main"``).
ROUTER_VERSION = "0.1.15"
ROUTER_PYPI = f"https://pypi.org/project/vllm-router/{ROUTER_VERSION}/"
ROUTER_IMAGE = f"vllm-router:{ROUTER_VERSION}"
ROUTER_BASE_IMAGE = (
    "python:3.12-slim-bookworm"  # the wheels are manylinux_2_28 (x86_64, aarch64); bash inside
)


# P/D on CUDA: the family recipe plus NIXL and the router [NIXL] [ROUTER] [K3-CUDA].
# [K3-CUDA] strategy_overrides.pd_cluster: prefill ``parallelism: tep, tp: 8`` (one node's TP8 with expert
# parallelism per instance, --enforce-eager); decode ``parallelism: dep, tp: 1`` (data and expert parallelism
# over every decode GPU, --data-parallel-hybrid-lb, --moe-backend deep_gemm_mega_moe).
K3_PD_LAYOUTS = {
    "prefill": (8, True, "TP8 with expert parallelism inside one node per prefill instance (tep)"),
    "decode": (1, False, "TP1 with data and expert parallelism over every decode GPU (dep), "
               "--data-parallel-hybrid-lb and --moe-backend deep_gemm_mega_moe"),
}  # fmt: skip


def _pd(base: Recipe) -> Recipe:
    return replace(
        base,
        pd_layouts=K3_PD_LAYOUTS if "kimi-k3" in base.families else {},
        key=base.key + "-pd",
        title=base.title + ", P/D disaggregation with NixlConnector",
        topology="pd",
        blocks=(*base.blocks, NIXL_PD),
        connector="nixl",
        proxy="vllm-router",
        proxy_image=ROUTER_IMAGE,
        source=base.source,
        notes=(
            *base.notes,
            "P/D across nodes: NixlConnector with VLLM_NIXL_SIDE_CHANNEL_HOST set to the node's own address "
            "(default localhost fails across nodes) and UCX over RDMA (UCX_TLS=rc,cuda_copy); vllm-router "
            f"fronts both sides from its own image ({ROUTER_IMAGE}, built by router/Dockerfile from the "
            f"vllm-router {ROUTER_VERSION} wheel on PyPI, {ROUTER_PYPI}): the vLLM image does not ship it.",
        ),
    )


CUDA_RECIPES = (
    CUDA_HOPPER_K3,
    CUDA_BLACKWELL_K3,
    CUDA_K3_BASE,
    CUDA_LLAMA,
    CUDA_QWEN3_MOE,
    CUDA_KIMI_K2,
    CUDA_DEEPSEEK,
    CUDA_GENERIC,
)
ALL_RECIPES: tuple[Recipe, ...] = (
    ASCEND_A3_K3_AGGREGATED,
    ASCEND_A3_K3_PD,
    ASCEND_A2_K3_AGGREGATED,
    ASCEND_DEEPSEEK,
    ASCEND_GENERIC,
    ASCEND_GENERIC_PD,
    *CUDA_RECIPES,
    *(_pd(r) for r in CUDA_RECIPES),
)

# --------------------------------------------------------------------------- selection


def hardware_of(server: ServerSpec) -> str:
    """The generation the recipes key their profiles by: the accelerator record's ``generation``
    (catalog/seed/accelerators.yaml, with its source).  A record without one takes the generic profile
    of its platform: Atlas A3 on Ascend (the generic vLLM-Ascend recipes cover A3 and A2), any GPU else."""
    generation = server.accelerator.generation
    if generation:
        return generation
    return "a3" if server.accelerator.software_stack == "ascend" else "any"


def gpu_id(server: ServerSpec) -> str:
    """The accelerator as the recipes' ``strategy_hardware`` keys it (``h200``, ``h100``, ``b300`` …: the
    GPU's model number, the first part of its slug); the generation on Ascend."""
    if server.accelerator.software_stack == "ascend":
        return hardware_of(server)
    return server.accelerator.slug.split("-", 1)[0]


def layout_of(p: ParallelSpec, nodes: int) -> str:
    """The recipes' strategy name for a group's layout (vllm-project/recipes strategies/*.yaml)."""
    if nodes <= 1:
        return "single_node_tep" if p.expert_parallel else "single_node_tp"
    if p.pp > 1:
        return "multi_node_tp_pp"
    if p.expert_parallel:
        return "multi_node_dep" if p.dp > 1 else "multi_node_tep"
    return "multi_node_tp_dp" if p.dp > 1 else "multi_node_tp"


def unsupported_layout(
    recipe: Recipe, server: ServerSpec, p: ParallelSpec, nodes: int
) -> tuple[str, str, str] | None:
    """(layout, supported layout, its description) when the recipe marks this layout unsupported on this
    GPU [LAYOUTS]: the GPU id's entry first, then the generation's (the recipes' keyspace order)."""
    name = layout_of(p, nodes)
    for key in (gpu_id(server), hardware_of(server)):
        if name in recipe.unsupported_layouts.get(key, ()):
            supported = recipe.supported_layouts.get(key)
            return (name, supported[0], supported[1]) if supported else (name, "", "")
    return None


def image_tag(image: str) -> str:
    """The tag of an image reference (``registry:5000/ns/name:tag`` → ``tag``; none → ``latest``)."""
    ref = image.split("@", 1)[0]
    last = ref.rsplit("/", 1)[-1]
    return last.split(":", 1)[1] if ":" in last else "latest"


def _version(tag: str) -> tuple[int, ...] | None:
    m = re.fullmatch(r"v?(\d+)\.(\d+)\.(\d+)(?:[-.].*)?", tag)
    return tuple(int(x) for x in m.groups()) if m else None


# The first vLLM release that serves K3 on CUDA ([K3-CUDA] model.min_vllm_version).
K3_MIN_VLLM = (0, 27, 1)


def image_serves_family(image: str, platform: str, family: str) -> bool:
    """Whether an image can serve the model family, where the sources say which images can.

    Kimi K3 runs on vLLM-Ascend only in the ``kimi-k3`` builds (Kimi-K3.md §4.1: ``vllm-ascend:kimi-k3-a3``,
    ``vllm-ascend:kimi-k3``; the release images carry neither the model nor its custom operators); on CUDA
    in the ``kimi-k3`` build or a release from 0.27.1 on ([K3-CUDA] min_vllm_version).  Other families: any.
    """
    if family != "kimi-k3":
        return True
    tag = image_tag(image)
    if "kimi-k3" in tag:
        return True
    version = _version(tag)
    return platform == "cuda" and version is not None and version >= K3_MIN_VLLM


def image_soc(image: str) -> str | None:
    """The Ascend SoC a vLLM-Ascend image is built for, read from its tag (``…-a3`` → a3), if it says."""
    tag = image_tag(image)
    if re.search(r"(^|-)a3($|-)", tag):
        return "a3"
    if _version(tag) is not None or tag.startswith("kimi-k3"):
        return "a2"  # the release and K3 images without the suffix are the A2 (910B) builds [DS-R1] §4.1
    return None


def family_of(model: ModelSpec) -> str:
    """The model family the recipes are written for: the model record's ``recipe_family``
    (catalog/seed/models.yaml, with its source); the slug when it has none (no family recipe matches)."""
    return model.recipe_family or model.slug.lower()


def select_recipe(req: PlanRequest) -> Recipe:
    """The recipe the plan follows: the most specific one for platform × hardware × family × topology."""
    return recipe_for(req.model, req.server, req.topology.kind)


def recipe_for(model: ModelSpec, server: ServerSpec, kind: TopologyKind) -> Recipe:
    platform = "ascend" if server.accelerator.software_stack == "ascend" else "cuda"
    topology = "pd" if kind == TopologyKind.DISAGGREGATED else "aggregated"
    hw, family = hardware_of(server), family_of(model)
    candidates = [
        r
        for r in ALL_RECIPES
        if r.platform == platform
        and r.topology == topology
        and (hw in r.hardware or "any" in r.hardware)
        and (not r.families or family in r.families)
    ]
    # specific family first, then specific hardware
    candidates.sort(key=lambda r: (not r.families, hw not in r.hardware))
    if not candidates:  # pragma: no cover - the generic recipes match every platform/topology
        raise LookupError(f"no launch recipe for {platform}/{topology}")
    return candidates[0]


def by_key(key: str) -> Recipe:
    for r in ALL_RECIPES:
        if r.key == key:
            return r
    raise KeyError(key)


def for_context(key: str, ascend: bool) -> Recipe:
    """The recipe a bundle was built with; a plan stored before recipes existed gets the generic one."""
    try:
        return by_key(key)
    except KeyError:
        return ASCEND_GENERIC if ascend else CUDA_GENERIC
