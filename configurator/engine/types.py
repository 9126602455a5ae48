"""The engine's contract: request and result types shared by every module.

All types are frozen dataclasses.  Quantities use SI base units in their
names (``_bytes``, ``_kw``, ``_amps``, ``_gbps``); money is ``Decimal`` with a
currency code beside it.  Each module returns its own result dataclass with a
``figures`` mapping of :class:`Figure` (the explained numbers) and a ``checks``
tuple of :class:`Check`.

This file is the seam between the catalog (``configurator.inputs`` builds a
:class:`PlanRequest` from catalog rows or from inline JSON), the engine
modules, and the presentation (views, PDF, JSON API), so change it with care.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from enum import Enum, StrEnum
from typing import Any

GB = 10**9  # decimal gigabyte, used for display and vendor specs (64 GB NPU)
GIB = 2**30  # binary gibibyte, used where vLLM reports GiB
MB = 10**6
MIB = 2**20


# --------------------------------------------------------------------------- explained numbers


@dataclass(frozen=True)
class Source:
    """Where a figure or an input comes from.

    ``kind`` is one of ``seed`` (the Chinese source documents, ``ref`` e.g.
    "S1 §3.2"), ``public`` (a public config or doc, ``ref`` names it),
    ``assumed`` (a placeholder an admin should check), ``input`` (typed by the
    engineer) or ``derived`` (computed by the engine).
    """

    kind: str
    ref: str = ""


@dataclass(frozen=True)
class Figure:
    """One explained number: the value with its unit, formula, inputs and source.

    ``key`` is stable (``memory.per_rank.kv_cache_bytes``) so the UI, the PDF
    and the tests can find it; ``label_en``/``label_zh`` are for display;
    ``formula`` is human readable ("usable − weights − activations − buffers");
    ``inputs`` maps the names in the formula to their values (numbers or
    strings, with units in the name).
    """

    key: str
    value: float | int | Decimal | str | bool
    unit: str
    label_en: str
    label_zh: str
    formula: str = ""
    inputs: Mapping[str, Any] = field(default_factory=dict)
    source: Source = Source("derived")


class KvCacheDtype(StrEnum):
    """``--kv-cache-dtype`` values the app knows, with the bytes each cached value takes.

    Which of them a platform can run is in ``engine/defaults.py`` (FP8 is refused on Atlas A2/A3).
    """

    AUTO = "auto"  # the model's activation dtype (BF16 for every model in the catalog)
    BFLOAT16 = "bfloat16"
    BF16 = "bf16"  # accepted spelling of bfloat16 (older requests and quotes)
    FP8 = "fp8"
    FP8_E4M3 = "fp8_e4m3"
    FP8_E5M2 = "fp8_e5m2"

    @property
    def bytes(self) -> int:
        return 1 if self.value.startswith("fp8") else 2

    @property
    def is_fp8(self) -> bool:
        return self.value.startswith("fp8")


class Severity(str, Enum):  # noqa: UP042 - str() and format() keep the Enum behaviour callers rely on
    OK = "ok"
    WARNING = "warning"
    ERROR = "error"


@dataclass(frozen=True)
class Check:
    """A finding.  ``code`` is stable (``memory.kv_below_max_seqs``).

    ``area`` groups checks for the verdict strip: memory, power, network,
    racks, cooling, layout, performance, commercial, model.  ``field`` names
    the request field that caused it (dotted, e.g. ``parallel.tp``) so the UI
    can place the message beside the input.  ``fix`` is a suggested change as
    ``{"field": value}`` that the UI can apply in one click, with
    ``fix_en``/``fix_zh`` describing it.
    """

    code: str
    severity: Severity
    area: str
    message_en: str
    message_zh: str
    figures: Mapping[str, Any] = field(default_factory=dict)
    field: str = ""
    # ``field`` above shadows dataclasses.field inside this class body.
    fix: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    fix_en: str = ""
    fix_zh: str = ""


# --------------------------------------------------------------------------- model


@dataclass(frozen=True)
class ModelSpec:
    """An LLM's architecture as the engine needs it.

    Layer counts by attention type must add up to ``num_layers``:
    ``gqa_layers`` (full MHA/GQA attention), ``mla_layers`` (multi-head latent
    attention), ``linear_layers`` (KDA / Gated DeltaNet / Mamba-style fixed
    state) and ``sliding_layers`` (GQA limited to ``sliding_window`` tokens).

    Weight bytes are as stored on disk in the release that will be served
    (``weight_format``), split into routed-expert bytes (divided by EP) and
    the rest (divided by TP).  ``vision_bytes`` belongs to the non-expert part
    and is replicated unless ``language_model_only`` is served.
    """

    slug: str
    name: str
    total_params: int
    active_params: int
    num_layers: int
    hidden_size: int
    vocab_size: int
    num_attention_heads: int
    num_kv_heads: int
    head_dim: int
    gqa_layers: int = 0
    mla_layers: int = 0
    linear_layers: int = 0
    sliding_layers: int = 0
    sliding_window: int = 0
    kv_lora_rank: int = 0
    qk_rope_head_dim: int = 0
    # linear attention (KDA): recurrent state heads × head_dim_k × head_dim_v per layer,
    # plus a short-convolution state of (kernel − 1) × conv_dim values.
    linear_num_heads: int = 0
    linear_head_dim: int = 0
    linear_state_dtype_bytes: int = 4
    linear_conv_kernel: int = 0
    linear_conv_dim: int = 0
    linear_conv_dtype_bytes: int = 2
    num_experts: int = 0
    experts_per_token: int = 0
    shared_experts: int = 0
    moe_layers: int = 0
    expert_weight_bytes: int = 0
    non_expert_weight_bytes: int = 0
    weight_format: str = "bf16"
    activation_format: str = "bf16"
    max_context: int = 0
    has_vision: bool = False
    vision_params: int = 0
    vision_bytes: int = 0
    api_price_input_per_m: Decimal | None = None  # in api_price_currency per million tokens
    api_price_output_per_m: Decimal | None = None
    api_price_cached_input_per_m: Decimal | None = None  # input served from the API's context cache
    api_price_currency: str = "USD"
    licence_note: str = ""
    hf_model_id: str = ""
    vllm_tokenizer_mode: str = ""
    vllm_reasoning_parser: str = ""
    vllm_tool_call_parser: str = ""
    # Servers this model is validated on for text only (--language-model-only):
    # image input there is refused (engine/capability.py).
    text_only_servers: tuple[str, ...] = ()
    sources: Mapping[str, Source] = field(default_factory=dict)

    @property
    def weight_bytes(self) -> int:
        return self.expert_weight_bytes + self.non_expert_weight_bytes

    @property
    def is_moe(self) -> bool:
        return self.num_experts > 0


# --------------------------------------------------------------------------- hardware


@dataclass(frozen=True)
class AcceleratorSpec:
    """One accelerator package and the logical devices the serving engine sees.

    A 910C package is 2 dies: ``logical_devices_per_package`` = 2 and each
    logical device has ``memory_bytes`` = 64 GB.  Bandwidth and TFLOPS are per
    logical device.  ``tflops`` maps precision names (``bf16``, ``fp16``,
    ``fp8``, ``int8``, ``mxfp4``) to dense TFLOPS.
    """

    slug: str
    name: str
    memory_bytes: int
    memory_bandwidth_bytes_s: float
    tflops: Mapping[str, float]
    tdp_watts: float = 0.0
    logical_devices_per_package: int = 1
    vendor: str = ""
    domestic: bool = False
    software_stack: str = "cuda"  # "cuda" (NCCL) or "ascend" (HCCL)
    # Device memory as the runtime reports it (torch.cuda / torch.npu mem_get_info total),
    # which vLLM multiplies by gpu_memory_utilization; 0 = use ``memory_bytes``.
    runtime_memory_bytes: int = 0
    runtime_memory_source: str = ""

    @property
    def usable_base_bytes(self) -> int:
        """What vLLM's budget starts from: the runtime-reported total when known."""
        return self.runtime_memory_bytes or self.memory_bytes


@dataclass(frozen=True)
class NicSpec:
    """A group of identical network ports on a server, by fabric."""

    fabric: str  # lingqu | roce | infiniband | ethernet | nvlink | pcie | hccs | management
    count: int
    speed_gbps: int
    role: str = "scale_out"  # scale_up | scale_out | service | management


@dataclass(frozen=True)
class ServerSpec:
    """A server model.  ``scale_up_fabric`` links the devices inside it (and,
    for super-nodes, beyond it up to ``scale_up_domain_devices`` devices)."""

    slug: str
    name: str
    accelerator: AcceleratorSpec
    packages: int
    rack_units: int
    max_input_kw: float
    typical_load_factor: float = 0.8
    psu_count: int = 0
    psu_watts: int = 0
    psu_redundant: int = 0
    nics: tuple[NicSpec, ...] = ()
    scale_up_fabric: str = "pcie"
    scale_up_bandwidth_gbps: float = 0.0
    scale_up_domain_devices: int = 0  # 0 means "the server's own logical devices"
    cpu: str = ""
    ram_gb: int = 0
    storage: str = ""
    vendor: str = ""
    validated_text_only: bool = False
    sources: Mapping[str, Source] = field(default_factory=dict)
    name_zh: str = ""  # the name in Chinese proposals (catalog name_zh); empty: name

    @property
    def logical_devices(self) -> int:
        return self.packages * self.accelerator.logical_devices_per_package

    @property
    def memory_bytes(self) -> int:
        return self.logical_devices * self.accelerator.memory_bytes


@dataclass(frozen=True)
class SwitchSpec:
    slug: str
    name: str
    fabric: str  # lingqu | roce | infiniband | ethernet | management
    ports: int
    port_speed_gbps: int
    rack_units: int
    power_kw: float
    sources: Mapping[str, Source] = field(default_factory=dict)
    name_zh: str = ""  # the name in Chinese proposals (catalog name_zh); empty: name
    vendor: str = ""  # the maker; a server's own vendor's switch is preferred when it fits


@dataclass(frozen=True)
class RackSpec:
    slug: str
    name: str
    rack_units: int = 42
    max_kw: float = 40.0
    cooling: str = "air"  # air | containment | liquid
    pdu_units: int = 0  # U taken by horizontal PDUs (vertical PDUs take none)
    reserved_units: int = 2  # cable management / blanking at top
    name_zh: str = ""  # the name in Chinese proposals (catalog name_zh); empty: name


@dataclass(frozen=True)
class SiteSpec:
    """The customer's data-centre hall."""

    slug: str = "default"
    name: str = "Default site"
    voltage_ll: float = 380.0
    phases: int = 3
    power_factor: float = 0.95
    continuous_derating: float = 0.8  # a breaker carries at most 80 % continuously
    pue: float = 1.3
    electricity_price_per_kwh: Decimal = Decimal("0.65")
    colocation_per_rack_month: Decimal = Decimal("0")
    air_cooling_kw_limit: float = 25.0
    currency: str = "CNY"
    breaker_ladder_amps: tuple[int, ...] = (
        16,
        20,
        25,
        32,
        40,
        50,
        63,
        80,
        100,
        125,
        160,
        200,
        225,
        250,
        315,
        400,
        500,
        630,
        800,
        1000,
        1250,
        1600,
    )
    sources: Mapping[str, Source] = field(default_factory=dict)


# --------------------------------------------------------------------------- deployment


class TopologyKind(str, Enum):  # noqa: UP042 - as Severity
    SINGLE = "single"
    PRIMARY_STANDBY = "primary_standby"
    TENANT_PAIR = "tenant_pair"
    DISAGGREGATED = "disaggregated"  # xPyD


@dataclass(frozen=True)
class ParallelSpec:
    """Parallel layout of one serving group (a cluster, or one side of xPyD).

    ``tp × dp × pp`` must equal the logical devices of the group's nodes.
    With ``expert_parallel`` the expert-parallel width is ``tp × dp``.
    ``dp_local`` is the number of DP ranks per node.
    """

    tp: int
    dp: int
    pp: int = 1
    expert_parallel: bool = True
    dp_local: int = 1

    @property
    def ep(self) -> int:
        return self.tp * self.dp if self.expert_parallel else 1

    @property
    def world_size(self) -> int:
        return self.tp * self.dp * self.pp


@dataclass(frozen=True)
class TopologySpec:
    """How the nodes are grouped.

    * single: one group of ``nodes``.
    * primary_standby / tenant_pair: two identical groups of ``nodes // 2``;
      ``parallel`` describes one group.
    * disaggregated: ``prefill_nodes`` with ``parallel`` and ``decode_nodes``
      with ``decode_parallel``.
    """

    kind: TopologyKind
    nodes: int
    parallel: ParallelSpec
    prefill_nodes: int = 0
    decode_nodes: int = 0
    decode_parallel: ParallelSpec | None = None
    # A primary/standby or tenant pair: "shared" parameter-plane switches (small
    # groups share a switch while the ports fit) or "separate" (each cluster
    # its own, so one switch failure cannot stop both).
    pair_switches: str = "shared"


@dataclass(frozen=True)
class ServingSpec:
    """vLLM serving parameters, per engine (per DP rank where vLLM says so)."""

    gpu_memory_utilization: float = 0.9
    max_model_len: int = 131072
    max_num_seqs: int = 16
    max_num_batched_tokens: int = 8192
    kv_cache_dtype: KvCacheDtype = KvCacheDtype.AUTO  # auto (= model activation dtype, BF16) | fp8 …
    # HCCL_BUFFSIZE (MB): the MC2 group's buffer on Ascend (the vLLM-Ascend K3 tutorial's 800; CANN's
    # default is 200).  Only MoE layouts with expert parallelism on Ascend have an MC2 group; unused on CUDA.
    comm_buffer_mb: int = 800
    comm_buffer_groups: int | None = None  # None: the communicators vLLM creates for this layout
    graph_memory_bytes: int | None = None  # None: engine estimate (0 in eager mode)
    activation_bytes: int | None = None  # None: engine estimate (forward vs sampler warm-up)
    non_torch_bytes: int | None = None  # None: engine estimate (runtime workspaces)
    enable_prefix_caching: bool = True
    language_model_only: bool = False
    block_size: int = 0  # 0: the platform default (CUDA 16, Ascend 128; engine/defaults.py)
    enforce_eager: bool = False  # no graph capture (P/D prefill engines always run eager)
    flashinfer_sampler: bool = False  # VLLM_USE_FLASHINFER_SAMPLER=1: top-k/top-p without a full sort
    vllm_version: str = "0.27.1"


@dataclass(frozen=True)
class WorkloadSpec:
    """What the customer will run: from a scenario, editable."""

    input_tokens: int = 8192
    output_tokens: int = 1024
    concurrency: int = 16
    needs_vision: bool = False
    availability_target: float = 0.995
    ttft_target_s: float | None = None  # P50 (median) time-to-first-token target
    tpot_target_ms: float | None = None  # P50 (median) time-per-output-token target
    ttft_p90_target_s: float | None = None
    tpot_p90_target_ms: float | None = None
    measured_output_tokens_per_s: float | None = None  # overrides the estimate everywhere


@dataclass(frozen=True)
class PerformanceSpec:
    """Editable assumptions of the serving-performance model (``engine/serving_model.py``).

    ``None`` means "the platform's calibrated factor" (fitted to published
    measurements, docs/performance.md); a number overrides it.
    """

    decode_bandwidth_efficiency: float | None = None
    prefill_mfu: float | None = None
    scale_out_efficiency: float = 0.8
    prefix_cache_hit_rate: float = 0.0
    step_overhead_ms: float | None = None  # fixed time per forward pass (launch, scheduler)
    speculative_tokens: int = 0  # MTP / EAGLE draft tokens per step (0 = off)
    speculative_acceptance_rate: float = 0.7  # per draft token
    graph_mode: bool = (
        True  # decode runs as a captured graph (CUDA graph / ACL graph); False = --enforce-eager
    )


@dataclass(frozen=True)
class BomItem:
    """A priced unit the TCO needs (resolved from the price list on the quote date)."""

    sku: str
    description: str
    unit_price: Decimal
    category: str  # server | switch | optics | rack | software | install | other
    lease_per_month: Decimal | None = None


@dataclass(frozen=True)
class CommercialSpec:
    """Commercial terms.  All money in ``currency``; ``usd_rate`` converts USD
    (the API price) to that currency (e.g. 7.2 CNY per USD)."""

    currency: str = "CNY"
    usd_rate: Decimal = Decimal("7.2")
    server_unit_price: Decimal = Decimal("0")
    server_lease_per_month: Decimal = Decimal("0")
    lease_includes_power: bool = False
    switch_unit_prices: Mapping[str, Decimal] = field(default_factory=dict)  # by switch slug
    optics_unit_price: Decimal = Decimal("0")  # a 400G-class transceiver (network.optics)
    rack_unit_price: Decimal = Decimal("0")  # rack + PDUs, per rack
    installation: Decimal = Decimal("0")
    software_support_per_year: Decimal = Decimal("0")
    om_per_year: Decimal | None = None  # absolute O&M per year, or
    om_percent_of_capex: Decimal = Decimal("0")  # … a fraction of capex per year
    horizon_years: int = 3
    depreciation_years: int = 5
    discount_rate: Decimal = Decimal("0.08")
    utilisation: Decimal = Decimal("0.6")  # fraction of the year the cluster serves at the estimated rate
    power_load_factor: Decimal = Decimal("0.8")  # average draw ÷ max input
    quote_discount: Decimal = Decimal("0")
    # Transceivers below 400G and cables, by media code (network.MEDIA): "100g-optics", "fiber", "cat6" ...
    media_unit_prices: Mapping[str, Decimal] = field(default_factory=dict)
    # Share of the servers' purchase price recovered by selling them at the end of the horizon.
    residual_value_fraction: Decimal = Decimal("0")
    # Whether the lessor operates the leased servers (then the lease side pays no O&M).
    lease_includes_om: bool = False
    # The gateway / load balancer in front of the cluster (the architecture's entry point), bought as
    # ``gateways`` servers (two: active/standby), and shared storage for the model checkpoint, per TB.
    gateway_unit_price: Decimal = Decimal("0")
    gateways: int = 2
    storage_price_per_tb: Decimal = Decimal("0")
    # Racks by the cooling they need ("containment", "liquid"), when it differs from the rack type's.
    rack_unit_prices_by_cooling: Mapping[str, Decimal] = field(default_factory=dict)


@dataclass(frozen=True)
class LaunchSpec:
    """What the launch bundle needs that the catalog cannot know."""

    model_path: str = ""
    node_ips: tuple[str, ...] = ()
    data_nic: str = ""
    rpc_port: int = 13389
    api_port: int = 8000
    proxy_port: int = 8080
    kv_port_prefill: int = 36000
    kv_port_decode: int = 36200
    image: str = ""
    served_model_name: str = ""


@dataclass(frozen=True)
class CheckpointSpec:
    """One set of weights of a model as published (a catalog row): what is loaded and launched.

    Bytes are as stored on disk, by part: routed experts (split by EP), the
    rest (split by TP, except the groups the platform replicates), of which
    ``embedding_bytes`` (input embedding + lm_head) and ``vision_bytes`` (vision
    tower + projector, replicated) are shown separately.  ``param_groups`` counts
    the elements of the parameter groups whose placement depends on the platform
    (``router``, ``latent_moe``, ``mla_a``, ``kda_f_a``; ``engine/placement.py``)
    and ``group_formats`` their stored format.  ``quant_method`` is what vLLM
    reads from the checkpoint (``compressed-tensors``, ``fp8``, ``ascend`` for a
    ModelSlim conversion …); ``launch_flags`` are the extra ``vllm serve``
    arguments it needs (``--quantization ascend`` only for ModelSlim).
    """

    slug: str
    name: str
    expert_bytes: int
    non_expert_bytes: int
    architecture: str = ""  # HF model_type (kimi_k3, deepseek_v3 …): selects the placement rules
    embedding_bytes: int = 0
    vision_bytes: int = 0
    weight_format: str = "bf16"  # routed experts
    non_expert_format: str = "bf16"
    activation_format: str = "bf16"
    quant_method: str = ""
    platforms: tuple[str, ...] = ("cuda", "ascend")
    launch_flags: tuple[str, ...] = ()
    param_groups: Mapping[str, int] = field(default_factory=dict)
    group_formats: Mapping[str, str] = field(default_factory=dict)
    source: str = ""

    @property
    def total_bytes(self) -> int:
        return self.expert_bytes + self.non_expert_bytes


@dataclass(frozen=True)
class PlanRequest:
    model: ModelSpec
    server: ServerSpec
    topology: TopologySpec
    serving: ServingSpec = ServingSpec()
    workload: WorkloadSpec = WorkloadSpec()
    site: SiteSpec = SiteSpec()
    rack: RackSpec = RackSpec("rack-42u", "42U rack", name_zh="42U 机柜")
    switches: tuple[SwitchSpec, ...] = ()  # available switch models, by fabric
    commercial: CommercialSpec = CommercialSpec()
    performance: PerformanceSpec = PerformanceSpec()
    launch: LaunchSpec = LaunchSpec()
    scenario: str = ""
    checkpoint: CheckpointSpec | None = None  # None: the model's own bytes, no platform-specific groups


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class GroupLayout:
    """One serving group (a cluster, or the P or D side)."""

    name: str  # "cluster", "cluster-a", "cluster-b", "prefill", "decode"
    role: str  # serve | standby | tenant | prefill | decode
    nodes: int
    first_node: int  # index of the group's first node in the whole deployment
    parallel: ParallelSpec
    devices: int
    experts_per_rank: int


@dataclass(frozen=True)
class LayoutResult:
    nodes: int
    devices_per_node: int
    groups: tuple[GroupLayout, ...]
    figures: Mapping[str, Figure] = field(default_factory=dict)
    checks: tuple[Check, ...] = ()


@dataclass(frozen=True)
class PlanResult:
    """What ``plan()`` returns.  Each section is the result dataclass of its
    module (``None`` when an earlier hard error made it meaningless)."""

    request: PlanRequest
    layout: Any
    memory: Any = None
    power: Any = None
    racks: Any = None
    network: Any = None
    performance: Any = None
    tco: Any = None
    launch: Any = None
    checks: tuple[Check, ...] = ()
    economics: Any = None  # engine/economics.py: cost per M tokens over load, API break-even

    @property
    def ok(self) -> bool:
        return not any(c.severity == Severity.ERROR for c in self.checks)


@dataclass(frozen=True)
class RankMemory:
    """Memory of one logical device (rank) of a group, in bytes, as vLLM spends it."""

    device_bytes: int
    usable_bytes: int  # device × gpu_memory_utilization
    weights_bytes: int
    non_expert_weights_bytes: int
    expert_weights_bytes: int
    activation_bytes: int
    buffer_bytes: int  # communication buffers (HCCL_BUFFSIZE × groups) + runtime
    graph_bytes: int
    kv_cache_bytes: int  # what is left for KV / state; may be negative when it does not fit
    free_bytes: int  # device − usable (kept back by the utilisation cap)
    kv_bytes_per_token: int  # per rank (GQA split by TP, MLA replicated)
    state_bytes_per_seq: int  # fixed per running sequence, per rank: linear state + sliding window
    kv_tokens: int  # tokens of KV this rank can hold (0 when it does not fit)
    # The two parts of ``state_bytes_per_seq``: linear-attention state, and the
    # window of sliding-window layers (a fixed cost per running sequence).
    linear_state_bytes_per_seq: int = 0
    sliding_window_bytes_per_seq: int = 0
    # Parameter groups the platform keeps whole on every rank (part of non_expert_weights_bytes).
    replicated_weights_bytes: int = 0
    non_torch_bytes: int = 0  # runtime workspaces outside the communicators (part of buffer_bytes)


@dataclass(frozen=True)
class GroupMemory:
    group: str  # GroupLayout.name
    per_rank: RankMemory
    kv_tokens_per_dp_rank: int
    full_len_seqs_per_dp_rank: int  # sequences of max_model_len that fit at once
    max_num_seqs_fit: bool  # max_num_seqs × max_model_len fits
    cluster_weights_bytes: int
    cluster_kv_bytes: int


@dataclass(frozen=True)
class MemoryResult:
    groups: tuple[GroupMemory, ...]
    figures: Mapping[str, Figure] = field(default_factory=dict)
    checks: tuple[Check, ...] = ()
    # The weights every node loads from storage: the checkpoint's bytes (for the BOM's storage line).
    checkpoint_slug: str = ""
    checkpoint_bytes: int = 0
