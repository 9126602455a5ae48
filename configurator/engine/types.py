"""The engine's contract: request and result types shared by every module.

All types are frozen dataclasses.  Quantities use SI base units in their
names (``_bytes``, ``_kw``, ``_amps``, ``_gbps``); money is ``Decimal`` with a
currency code beside it.  Each module returns its own result dataclass with a
``figures`` mapping of :class:`Figure` (the explained numbers) and a ``checks``
tuple of :class:`Check`; every result dataclass is defined here (the modules
re-export theirs), so :class:`PlanResult` names the type of each section.

This file is the seam between the catalog (``configurator.port.inputs`` builds a
:class:`PlanRequest` from catalog rows or from inline JSON), the engine
modules, and the presentation (views, PDF, JSON API), so change it with care.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from enum import Enum, StrEnum
from typing import Any, TypeVar

GB = 10**9  # decimal gigabyte, used for display and vendor specs (64 GB NPU)
GIB = 2**30  # binary gibibyte, used where vLLM reports GiB
MB = 10**6
MIB = 2**20


# --------------------------------------------------------------------------- frozen types made by the hundred

_T = TypeVar("_T")
_FACTORY = object()  # a parameter left to its field's default factory (stored_init)


def stored_init(cls: type[_T]) -> type[_T]:
    """Give the frozen dataclass ``cls`` an ``__init__`` that stores each field in the instance's dict,
    where ``dataclass(frozen=True)`` writes one ``object.__setattr__`` call a field (its own way past
    the frozen ``__setattr__``, some five times dearer): a plan makes some 3,500 fields of sources, rack
    slots, operating points, step breakdowns and the like.  The same parameters, defaults, default
    factories and ``__post_init__``, and the same instance (``==``, ``repr``, pickle, the fields' order
    in ``vars()``); the dataclass's own is kept as ``__dataclass_init__``, and
    tests/engine/test_stored_init.py holds each to it."""
    import inspect

    fields = dataclasses.fields(cls)  # type: ignore[arg-type]
    original = cls.__init__
    params = list(inspect.signature(original).parameters)[1:]
    init_names = [f.name for f in fields if f.init and not f.kw_only]
    kw_names = [f.name for f in fields if f.init and f.kw_only]
    if "__slots__" in cls.__dict__ or params != init_names + kw_names:
        raise TypeError(f"{cls.__name__}: stored_init takes a plain frozen dataclass (no slots, no InitVar)")
    namespace: dict[str, Any] = {"_FACTORY": _FACTORY}
    positional: list[str] = []
    keywords: list[str] = []
    body = ["    d = self.__dict__"]
    for f in fields:
        name = f.name
        value = name
        if f.default_factory is not dataclasses.MISSING:
            namespace[f"_f_{name}"] = f.default_factory
            value = f"_f_{name}() if {name} is _FACTORY else {name}" if f.init else f"_f_{name}()"
            arg = f"{name}=_FACTORY"
        elif f.default is not dataclasses.MISSING:
            if not f.init:
                continue  # read from the class attribute, as the dataclass leaves it
            namespace[f"_d_{name}"] = f.default
            arg = f"{name}=_d_{name}"
        else:
            arg = name
        if f.init:
            (keywords if f.kw_only else positional).append(arg)
        body.append(f"    d[{name!r}] = {value}")
    if hasattr(cls, "__post_init__"):
        body.append("    self.__post_init__()")
    args = ", ".join(["self", *positional, *(["*", *keywords] if keywords else [])])
    exec(f"def __init__({args}):\n" + "\n".join(body) + "\n", namespace)
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    cls.__dataclass_init__ = original  # type: ignore[attr-defined]
    cls.__init__ = init  # type: ignore[method-assign]
    return cls


# --------------------------------------------------------------------------- explained numbers


@stored_init
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


_new_object = object.__new__


def new_figure(
    key: str,
    value: Any,
    unit: str,
    label_en: str,
    label_zh: str,
    formula: str,
    inputs: Mapping[str, Any],
    source: Source,
) -> Figure:
    """``Figure(...)`` with every field given, without the frozen dataclass's ``__init__`` (eight
    ``object.__setattr__`` calls): a plan puts some 360 figures, and this is a quarter of the cost.
    The instance is the same (``==``, ``repr``, pickle, ``dataclasses.asdict``;
    tests/engine/test_figure_book.py holds it to the constructor)."""
    figure = _new_object(Figure)
    d = figure.__dict__
    d["key"] = key
    d["value"] = value
    d["unit"] = unit
    d["label_en"] = label_en
    d["label_zh"] = label_zh
    d["formula"] = formula
    d["inputs"] = inputs
    d["source"] = source
    return figure


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


@stored_init
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
    # A proven change of the customer's requirement (load, lengths, context) that clears the
    # finding: offered as "change the requirement", never as a fix (engine/advice.py).
    requirement: Mapping[str, Any] = dataclasses.field(default_factory=dict)


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
    # DeepSeek sparse attention (DeepSeek-V3.2, GLM-5): the lightning indexer's key width; every MLA
    # layer caches one such key per token beside the latent (memory.mla_layer_kv_bytes).  0: dense MLA.
    index_head_dim: int = 0
    # DSA's top-k: each query attends to the ``index_topk`` earliest-scored tokens the indexer selects
    # (vLLM deepseek_v2.py ``Indexer.topk_tokens = config.index_topk``), over ``index_n_heads`` indexer
    # heads of ``index_head_dim``.  0: every query attends to its whole context.
    index_topk: int = 0
    index_n_heads: int = 0
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
    # The LM head shares the input embedding's matrix (config ``tie_word_embeddings``): an untied release
    # holds a second vocab × hidden table, the input embedding, that a decode step gathers rows of and
    # never streams (serving_model.gathered_embedding_bytes).
    tie_word_embeddings: bool = False
    api_price_input_per_m: Decimal | None = None  # in api_price_currency per million tokens
    api_price_output_per_m: Decimal | None = None
    api_price_cached_input_per_m: Decimal | None = None  # input served from the API's context cache
    api_price_currency: str = "USD"
    licence_note: str = ""
    hf_model_id: str = ""
    # The model family the launch recipes are written for ("kimi-k3", "deepseek" …; the catalog's record,
    # engine/recipes.py); "": no model-specific recipe (the generic one).
    recipe_family: str = ""
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
    software_stack: str = "cuda"  # "cuda" (NCCL), "rocm" (RCCL) or "ascend" (HCCL)
    # Device memory as the runtime reports it (torch.cuda / torch.npu mem_get_info total),
    # which vLLM multiplies by gpu_memory_utilization; 0 = use ``memory_bytes``.
    runtime_memory_bytes: int = 0
    runtime_memory_source: str = ""
    # Whether vLLM / vLLM-Ascend runs on the device ("supported", "experimental", "none"), and why.
    vllm_support: str = "supported"
    vllm_support_note: str = ""
    # The generation the launch recipes key their profiles by ("a3", "a2", "hopper", "blackwell",
    # "blackwell-pcie", "ampere", "ada", "cdna3", "cdna4"; the catalog's record, engine/recipes.py).
    generation: str = ""

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
    # Where the maker is based (catalog origin): "domestic", "foreign" or "" (not known).  Only the
    # proposal's domestic IT (信创) statement reads it; the engine does not.
    origin: str = ""
    validated_text_only: bool = False
    sources: Mapping[str, Source] = field(default_factory=dict)
    name_zh: str = ""  # the name in Chinese proposals (catalog name_zh); empty: name
    weight_kg: float = 0.0  # fully configured; 0: not known (no rack weight or floor loading)

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
    weight_kg: float = 0.0  # 0: not known
    origin: str = ""  # where the maker is based: "domestic", "foreign" or "" (not known), as ServerSpec


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
    weight_kg: float = 0.0  # the empty cabinet with its PDUs
    width_mm: int = 600  # width × depth: the footprint the floor loading is taken over
    depth_mm: int = 1200
    sources: Mapping[str, Source] = field(default_factory=dict)


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
    floor_load_kg_m2: float = 0.0  # the hall floor's distributed rating; 0: not known (not compared)
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


#: vLLM's ``--speculative-config`` methods the plan can state (``vllm/config/speculative.py``
#: ``SpeculativeMethod``): an MTP head shipped in the target's checkpoint, a separate draft model,
#: EAGLE / EAGLE-3 heads, DSpark block drafters, and the weightless n-gram / suffix proposers.
SPECULATIVE_METHODS = ("mtp", "draft_model", "eagle", "eagle3", "dspark", "ngram", "suffix")
#: Methods that propose without weights of their own (no catalog entry, no memory, no draft step).
WEIGHTLESS_SPECULATIVE_METHODS = ("ngram", "suffix")


@dataclass(frozen=True)
class SpeculativeSpec:
    """Speculative decoding as the request states it (``serving.speculative``).

    ``method`` "" is off; ``draft`` names a catalog draft (an MTP head or a draft model, by slug);
    ``num_speculative_tokens`` 0 takes the draft's published count.  vLLM's
    ``SpeculativeConfig`` (``vllm/config/speculative.py``) has the same three fields.
    """

    method: str = ""
    num_speculative_tokens: int = 0
    draft: str = ""

    @property
    def on(self) -> bool:
        return bool(self.method)


@dataclass(frozen=True)
class SpeculatorSpec:
    """A catalog draft: an MTP head or a draft model the target is served with (``catalog`` row).

    ``weight_bytes`` are the draft's own weights as stored (an MTP head's layer inside the target's
    checkpoint: its bytes are counted there, so 0 here); ``num_layers``, ``num_kv_heads`` and
    ``head_dim`` size its KV cache the way vLLM adds the draft's attention layers to the KV-cache
    groups; ``acceptance_rate`` is vLLM's draft acceptance rate (accepted ÷ drafted) the source
    published at ``num_speculative_tokens``.  ``min_versions`` maps an engine (``vllm``,
    ``vllm-ascend``) to the first version that runs it; ``eager_on`` the platforms whose published
    runs keep the draft out of graph capture (``"enforce_eager": true`` in its speculative config).
    """

    slug: str
    name: str
    target: str  # the catalog model it drafts for
    method: str
    hf_repo: str = ""
    parameters: int = 0
    weight_bytes: int = 0
    num_layers: int = 1
    num_kv_heads: int = 0  # 0: the target's own attention layer (an MTP head)
    head_dim: int = 0
    num_speculative_tokens: int = 1
    acceptance_rate: float = 0.7
    platforms: tuple[str, ...] = ("cuda", "ascend")
    min_versions: Mapping[str, str] = field(default_factory=dict)
    eager_on: tuple[str, ...] = ()
    source: str = ""


@dataclass(frozen=True)
class RoleServingSpec:
    """One role's own serving settings in a prefill/decode-disaggregated (xPyD) deployment
    (``serving.prefill`` / ``serving.decode``); ``None`` keeps the shared block's value."""

    max_num_seqs: int | None = None
    max_num_batched_tokens: int | None = None
    tp: int | None = None
    dp: int | None = None
    speculative: SpeculativeSpec | None = None


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
    # VLLM_USE_FLASHINFER_SAMPLER: top-k/top-p without a full sort; None = the engine version's default
    # (engine/engine_versions.py: on by default from vLLM 0.20, off before).
    flashinfer_sampler: bool | None = None
    # The serving engine and version the plan targets (engine/engine_versions.py): "vllm" or
    # "vllm-ascend" ("" = the platform's), and its version; a request that leaves them unset gets the
    # launch recipe's.  The version decides what is taken out of the KV budget (CUDA-graph pool …).
    engine: str = ""
    vllm_version: str = "0.27.1"
    # Speculative decoding (vLLM ``--speculative-config``): off unless stated or the defaults turn on
    # the catalog's draft (engine/speculative.py).
    speculative: SpeculativeSpec = SpeculativeSpec()
    # xPyD: each role's own settings over the shared ones (engine/speculative.py role_serving).
    prefill: RoleServingSpec | None = None
    decode: RoleServingSpec | None = None


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
    # vLLM's "draft acceptance rate": accepted ÷ drafted tokens (mean accepted length 1 + k × rate)
    speculative_acceptance_rate: float = 0.7
    graph_mode: bool = True  # decode runs as a captured graph (CUDA graph / ACL graph); False = --enforce-eager (also launched)
    # A separate draft model (EAGLE / DSpark / small LM): its weights in GB and layers; 0 = MTP head.
    draft_model_gb: float = 0.0
    draft_model_layers: int = 0
    draft_graph_mode: bool = True  # the draft is graph-captured (False: eager draft)
    # Decode replays piecewise graphs (``cudagraph_mode`` PIECEWISE): every layer leaves the graph at
    # its attention, which the host dispatches operator by operator.  vLLM-Ascend's default before 0.21
    # (costed as serving_model.EAGER_LAYER_OVERHEAD_S); the recipes set FULL_DECODE_ONLY, a plan that asks
    # for this gets scripts that set PIECEWISE (PlanRequest.decode_graphs).
    piecewise_graphs: bool = False
    # One wave of `concurrency` requests sent together and decoded as one batch (no new prompts
    # while it decodes), instead of the closed loop of ``vllm bench serve --max-concurrency``.
    closed_batch: bool = False


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
    # A hot standby's average draw ÷ max input: its engine runs with the model loaded but serves no
    # request, so its accelerators sit at idle power (engine/tco/opex.py has the figure's basis).
    standby_power_load_factor: Decimal = Decimal("0.25")
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
    # Lines the price list has no price for ("server": the server is priced on request).  The TCO
    # shows no total while one is missing, rather than counting it at 0 (tco/__init__.py).
    prices_on_request: tuple[str, ...] = ()


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
    # Kubernetes node labels the engine pods must carry (label → value); empty: the accelerator's device
    # plugin label (launch/containers.py DEFAULT_NODE_SELECTOR).
    node_selector: Mapping[str, str] = field(default_factory=dict)
    # The rate one node reads the checkpoint from its storage, GB/s (sizes the engines' start-up wait:
    # figure launch.load_wait_s).  A shared filesystem's per-node share; set the site's measured figure.
    weight_read_gb_s: float = 1.0


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
    # The catalog drafts ``serving.speculative`` (and a role's) name, by slug (engine/speculative.py).
    speculators: tuple[SpeculatorSpec, ...] = ()
    # The workload fields the scenario brought (the request's own ``workload`` left them unset).
    workload_from_scenario: tuple[str, ...] = ()

    @property
    def decode_graphs(self) -> str:
        """How decode runs — one answer for the step estimate, the memory budget and the launch scripts.

        ``"eager"``: no graph capture (``serving.enforce_eager`` or ``performance.graph_mode`` false; the
        scripts pass ``--enforce-eager``, the budget keeps no graph pool, every layer pays the host
        dispatch); ``"piecewise"``: ``cudagraph_mode`` PIECEWISE (``performance.piecewise_graphs``: the
        scripts set it, every layer pays the host dispatch of its attention); ``"full"``: the recipe's
        FULL_DECODE_ONLY graphs.
        """
        if self.serving.enforce_eager or not self.performance.graph_mode:
            return "eager"
        if self.performance.piecewise_graphs:
            return "piecewise"
        return "full"


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
    layout: LayoutResult
    memory: MemoryResult | None = None
    power: PowerResult | None = None
    racks: RackResult | None = None
    network: NetworkResult | None = None
    performance: PerformanceResult | None = None
    tco: TcoResult | None = None
    launch: LaunchResult | None = None
    checks: tuple[Check, ...] = ()
    economics: EconomicsResult | None = (
        None  # engine/economics.py: cost per M tokens over load, API break-even
    )
    # The serving settings each role runs (engine/speculative.py serving_roles).
    serving: tuple[RoleServing, ...] = ()

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


# Every module's result dataclass lives here (not in its module) so that PlanResult can name each
# section's type without an import cycle: the modules import this file, and this file imports none
# of them, at import time or in a function (it holds types only; what a launch result does, quoting
# its commands or rendering its files, is in engine/launch/).  The modules re-export their own
# (``from .power import PowerResult`` keeps working).

_EPS = 1e-9
CONTINUOUS_LIMIT = 0.8  # the continuous-load share of a breaker rating (engine/power.py DERATING_SOURCE)
CONTAINMENT_KW_LIMIT = 40.0  # docs/domain.md §7: 35–40 kW per rack needs containment or liquid cooling
# Residual spread of the performance fit (predicted ÷ measured throughput over the calibration set):
# the band shown beside every estimate (engine/serving_model.py).  Updated with the fit.
ERROR_BAND_LOW = 0.75
ERROR_BAND_HIGH = 1.3


# network (engine/network.py)


@stored_init
@dataclass(frozen=True)
class SwitchUnit:
    """One physical switch, for the racks (U, kW) and the bill of materials."""

    label: str  # "LingQu 630 V1 #1"
    slug: str
    model: str
    fabric: str
    role: str  # scale_up | scale_out | service | storage | management | oob
    tier: str  # single | leaf | spine
    groups: tuple[str, ...]  # serving groups it connects (one: dedicated, several: shared)
    rack_units: int
    power_kw: float
    model_zh: str = ""  # the model's name in Chinese proposals (catalog name_zh); empty: model


@stored_init
@dataclass(frozen=True)
class FabricRow:
    """One fabric (or one switched domain of a scale-up fabric)."""

    fabric: str  # the NIC fabric: lingqu | roce | infiniband | ethernet | management | pcie | hccs | nvlink
    role: str  # scale_up | scale_out | service | storage | management | oob
    scope: str  # "all", "in-node", or the groups it serves joined by "+"
    groups: tuple[str, ...]
    nodes: int
    port_speed_gbps: int  # NIC port speed
    link_gbps: int  # min(NIC, switch port) speed
    rdma: bool
    ports_per_node: int  # ports on the server
    cabled_per_node: int  # ports cabled to the fabric
    ports_needed: int  # server-facing switch ports
    switch_slug: str
    switch_model: str
    switch_fabric: str
    ports_per_switch: int
    switches: int
    leaves: int
    spines: int
    uplinks: int  # leaf → spine links
    optics: int
    cables: int
    switch_units: int
    switch_kw: float
    note_en: str = ""
    note_zh: str = ""
    switch_model_zh: str = ""  # catalog name_zh of the switch; empty: switch_model
    optics_media: str = ""  # media code of the transceivers (MEDIA); "" when optics are 400G-class or none
    cable_media: str = ""  # media code of the cables: "fiber" (optical links) or "cat6" (copper)
    # Port headroom (network.size_network): other devices on the plane (gateways, the storage
    # system, switches' management ports), links to the customer's network, spare ports kept free.
    attached_ports: int = 0
    external_uplinks: int = 0
    spare_ports: int = 0
    # "" when the server has the NICs of this plane; "card" (an added NIC, a BOM line) or "onboard"
    # (the server's onboard port) when the plan adds the plane the server's catalog entry does not list.
    added_nic: str = ""
    # How the switch count was reached: single | pair | rails | leaf_spine | none.
    sizing: str = ""

    @property
    def ports_used(self) -> int:
        """Switch ports cabled: servers, attached devices, uplinks out, and both ends of leaf→spine links."""
        return self.ports_needed + self.attached_ports + self.external_uplinks + 2 * self.uplinks

    @property
    def port_capacity(self) -> int:
        return self.switches * self.ports_per_switch

    @property
    def node_bandwidth_gbps(self) -> int:
        """Bandwidth of one node into this fabric."""
        return self.cabled_per_node * self.link_gbps


@dataclass(frozen=True)
class SeedReference:
    """Facilities figures a seed document states for this deployment, for comparison."""

    source: Source
    switches: Mapping[str, int]  # by switch fabric
    racks: int | None = None
    rack_units: int | None = None
    breaker_amps: int | None = None


@dataclass(frozen=True)
class CrossNodeLink:
    """The fabric a group's cross-node EP/TP traffic takes."""

    group: str
    traffic: str  # "EP64", "TP32", …
    fabric: str
    switch_fabric: str
    link_gbps: int
    rdma: bool
    node_bandwidth_gbps: int
    verdict: str  # ok (RDMA ≥ 400G) | slow (RDMA ≥ 200G) | insufficient | none (no switched fabric)

    @property
    def ok(self) -> bool:
        return self.verdict == "ok"


@dataclass(frozen=True)
class KvTransfer:
    """P→D KV transfer of a disaggregated deployment, per prefill node."""

    kv_bytes_per_token: int  # model-level, one copy
    wire_bytes_per_token: int  # summed over the prefill group's TP ranks (MLA replicated)
    state_bytes_per_request: int  # linear-attention state per sequence
    bytes_per_request: int
    prefill_tokens_per_s_per_node: float | None
    requests_per_s_per_node: float | None
    kv_gbps_per_node: float | None
    link_gbps_per_node: int
    share: float | None


@dataclass(frozen=True)
class NetworkResult:
    rows: tuple[FabricRow, ...]
    switches: tuple[SwitchUnit, ...]
    switch_count: int
    switch_units: int  # total U of all switches
    switch_kw: float  # total kW of all switches
    optics: int
    cables: int
    cross_node: tuple[CrossNodeLink, ...] = ()
    kv_transfer: KvTransfer | None = None
    seed: SeedReference | None = None
    figures: Mapping[str, Figure] = field(default_factory=dict)
    checks: tuple[Check, ...] = ()
    media: Mapping[str, int] = field(default_factory=dict)  # other transceivers and cables by MEDIA code

    def switches_by_fabric(self) -> dict[str, int]:
        """Switch count by switch fabric (lingqu, roce, …)."""
        out: dict[str, int] = {}
        for s in self.switches:
            out[s.fabric] = out.get(s.fabric, 0) + 1
        return out


# power (engine/power.py)


@stored_init
@dataclass(frozen=True)
class FeedSizing:
    """One A/B pair of feeds sized for a load.

    ``current_amps`` is the full-load line current of ONE feed (each feed
    carries the whole load when the other fails).  ``required_amps`` is that
    current divided by ``derating`` (1.0 for the seed method).  When the
    required rating exceeds the largest breaker, each feed is split into
    ``circuits`` parallel circuits of ``breaker_amps`` each.
    """

    method: str  # "seed" | "recommended"
    load_kw: float
    voltage_ll: float
    phases: int
    power_factor: float
    derating: float
    current_amps: float
    required_amps: float
    breaker_amps: int  # rating of each circuit
    circuits: int  # parallel circuits per feed (1 unless beyond the largest breaker)
    feeds: int  # 2: A and B
    utilisation: float  # current ÷ (breaker × circuits) at full load
    exceeds_largest_breaker: bool = False
    figures: Mapping[str, Figure] = field(default_factory=dict)
    checks: tuple[Check, ...] = ()

    @property
    def has_continuous_headroom(self) -> bool:
        """True when the full-load current stays within the continuous-load limit (80 %)."""
        return self.utilisation <= CONTINUOUS_LIMIT + _EPS

    @property
    def description_en(self) -> str:
        circuits = f"{self.circuits} × " if self.circuits > 1 else ""
        return f"{circuits}{self.breaker_amps} A × {self.feeds} (A/B)"

    @property
    def description_zh(self) -> str:
        circuits = f"{self.circuits} × " if self.circuits > 1 else ""
        return f"A/B 路各 {circuits}{self.breaker_amps} A"


@dataclass(frozen=True)
class GroupPower:
    """IT load of one serving group (cluster, or P / D side) and its own A/B feeds."""

    group: str
    role: str
    nodes: int
    servers_kw: float
    switches_kw: float  # switches serving only this group
    it_kw: float
    design_kw: float
    facility_kw: float
    feed: FeedSizing  # recommended method, sized for it_kw
    figures: Mapping[str, Figure] = field(default_factory=dict)
    checks: tuple[Check, ...] = ()


@dataclass(frozen=True)
class PowerResult:
    """Loads in kW (maximum input unless named ``design``) and feed sizing.

    ``servers_kw`` is the servers alone (the seed's 129.6 kW / 259.2 kW);
    ``switches_kw`` the switches from the network module; ``it_kw`` both.
    ``seed_feed`` reproduces the seed's method on the servers' load;
    ``recommended_feed`` is what the plan uses, on the full IT load.
    """

    per_server_kw: float
    per_server_design_kw: float
    servers: int
    servers_kw: float
    switches_kw: float
    shared_switches_kw: float  # switches shared by several groups
    it_kw: float
    it_design_kw: float
    facility_kw: float
    facility_design_kw: float
    pue: float
    groups: tuple[GroupPower, ...]
    seed_feed: FeedSizing
    recommended_feed: FeedSizing
    method_used: str = "recommended"
    figures: Mapping[str, Figure] = field(default_factory=dict)
    checks: tuple[Check, ...] = ()


# racks (engine/racks.py)


@stored_init
@dataclass(frozen=True)
class RackSlot:
    """One device (or reserved block) in a rack; ``u_position`` is its lowest U, counted from 1 at the bottom."""

    u_position: int
    height_u: int
    kind: str  # server | switch | pdu | blank
    label: str  # "A3-01 (cluster-a, master)"
    label_zh: str
    node_index: int | None = None  # 0-based index of the node in the deployment
    group: str = ""
    kw: float = 0.0  # maximum input

    @property
    def top_u(self) -> int:
        return self.u_position + self.height_u - 1


@stored_init
@dataclass(frozen=True)
class RackLayout:
    index: int  # 0-based position in RackResult.racks
    name: str  # R01 … for compute racks, N01 … for network racks
    kind: str  # compute | network
    rack_units: int
    usable_units: int  # rack U − reserved − PDU U
    slots: tuple[RackSlot, ...]
    groups: tuple[str, ...]
    kw: float  # maximum input of everything in the rack
    design_kw: float
    units_used: int  # U taken by servers, switches and PDUs
    servers: int
    switches: int
    feed: FeedSizing  # A and B feeds of this rack, each for the full rack load
    cooling: str
    cooling_limit_kw: float | None  # None: liquid cooling, no air limit
    heat_btu_h: float = 0.0  # kw × 3,412.14 BTU/h per kW: the heat the room's cooling removes at full load
    # Sockets one feed's PDU needs (every device's PSUs split over the A and B feeds): C19 for PSUs of
    # 2 kW and more, C13 below.
    pdu_c19: int = 0
    pdu_c13: int = 0
    # Everything in the rack with the empty cabinet, and that weight over the rack's footprint
    # (0 when a device's weight is not in the catalog).
    weight_kg: float = 0.0
    floor_load_kg_m2: float = 0.0

    @property
    def exceeds_cooling(self) -> bool:
        return self.cooling_limit_kw is not None and self.kw > self.cooling_limit_kw + _EPS

    @property
    def cooling_required(self) -> str:
        """The cooling this rack needs: its own type's, or containment (≤ 40 kW) / liquid above the limit.

        docs/domain.md §7: above the hall's air-cooling limit (≈ 20–25 kW) a rack needs hot/cold-aisle
        containment; above ≈ 35–40 kW liquid cooling.  The bill of materials prices the rack as
        what it needs, not as the rack type requested.
        """
        if not self.exceeds_cooling:
            return self.cooling
        if self.cooling == "air" and self.kw <= CONTAINMENT_KW_LIMIT + _EPS:
            return "containment"
        return "liquid"


@dataclass(frozen=True)
class RackResult:
    racks: tuple[RackLayout, ...]
    rack_count: int
    compute_racks: int
    network_racks: int
    servers_per_rack: int
    max_rack_kw: float
    total_kw: float
    units_used: int
    seed: SeedReference | None = None
    figures: Mapping[str, Figure] = field(default_factory=dict)
    checks: tuple[Check, ...] = ()
    heat_btu_h: float = 0.0
    # Cables by medium ("fiber", "cat6") and length class ("in_rack", "adjacent", "row": racks.CABLE_LENGTHS)
    cable_lengths: Mapping[str, Mapping[str, int]] = field(default_factory=dict)


# performance (engine/performance/)


@dataclass(frozen=True)
class GroupPerformance:
    """Estimate for one serving group (a cluster, or the P or D side of xPyD)."""

    group: str
    role: str
    counts_toward_throughput: bool
    nodes: int
    tp: int
    dp: int
    ep: int
    # batch
    offered_seqs_per_dp_rank: int  # share of workload.concurrency this rank is offered
    kv_seqs_fit_per_dp_rank: int  # sequences of input+output tokens the KV budget holds
    batch_per_dp_rank: int  # running sequences per decode step
    batch_limited_by: str  # concurrency | max_num_seqs | kv_capacity | none (prefill side)
    # decode (0 on a prefill-only group)
    weights_bytes_read_per_rank: int
    experts_touched_fraction: float
    kv_bytes_read_per_rank: int
    bytes_per_step_per_rank: int
    memory_time_s: float
    all_to_all_s: float  # EP dispatch + combine per step
    decode_step_s: float
    # prefill
    prefill_s: float  # one prompt on one DP rank
    kv_transfer_s: float  # P → D KV move per request (xPyD decode side), else 0
    # throughput (capacity of this group at the workload's concurrency)
    requests_per_s: float
    output_tokens_per_s_per_dp_rank: float
    output_tokens_per_s: float
    # parts of the step (defaults keep older callers working)
    compute_time_s: float = 0.0
    tp_allreduce_s: float = 0.0
    step_overhead_s: float = 0.0
    tokens_per_step: float = 1.0
    slots_per_dp_rank: int = 0  # sequences a rank runs at once: min(max_num_seqs, KV fit)

    @property
    def tpot_s(self) -> float:
        return self.decode_step_s / self.tokens_per_step if self.tokens_per_step > 0 else self.decode_step_s


@dataclass(frozen=True)
class PdBalance:
    """Prefill vs decode capacity of an xPyD deployment."""

    prefill_requests_per_s: float
    decode_requests_per_s: float
    ratio: float  # prefill capacity ÷ decode capacity
    bottleneck: str  # prefill | decode | balanced
    suggested_prefill_nodes: int
    suggested_decode_nodes: int


@stored_init
@dataclass(frozen=True)
class CurvePoint:
    """One point of the throughput-vs-latency curve (one concurrency)."""

    concurrency: int
    output_tokens_per_s: float
    output_tokens_per_s_per_device: float
    ttft_s: float
    ttft_p90_s: float
    tpot_s: float
    tpot_p90_s: float
    saturated: bool


@dataclass(frozen=True)
class DesignPoint:
    """The load this hardware carries within the latency targets (engine/performance/design.py).

    The largest concurrency whose TTFT and TPOT percentiles meet the targets with as many
    running sequences per DP rank as the KV cache at the workload's request lengths and the
    step's token budget allow (not the request's ``max_num_seqs``); ``limited_by`` says why it
    stops there: ``kv`` (the KV cache is full), ``batch`` (the token budget per step),
    ``ttft`` or ``tpot`` (one more request breaks that target), ``unreachable`` (even one
    request misses a target: ``best_*`` are the figures of one request, the best reached, and the
    design figures are the best-effort operating point within ``relaxed_targets``, stopped by
    ``relaxed_limited_by``; performance/design.py).
    """

    concurrency: int
    max_num_seqs_per_dp_rank: int
    output_tokens_per_s: float
    input_tokens_per_s: float
    requests_per_s: float
    ttft_p90_s: float
    tpot_p90_s: float
    ttft_s: float
    tpot_s: float
    limited_by: str  # kv | batch | ttft | tpot | unreachable
    targets: Mapping[str, float]  # ttft_p50_s, ttft_p90_s, tpot_p50_ms, tpot_p90_ms (those applied)
    targets_assumed: bool  # the request set no target: the default targets applied
    unmet_targets: tuple[str, ...] = ()  # the targets even one request misses
    kv_seqs_fit_per_dp_rank: int = 0
    serving_dp_ranks: int = 0
    # One request alone: the best latencies this hardware reaches (P90 and mean).
    best_ttft_p90_s: float = 0.0
    best_tpot_p90_s: float = 0.0
    best_ttft_s: float = 0.0
    best_tpot_s: float = 0.0
    # Unreachable targets: the targets the best-effort design point meets (the missed ones relaxed).
    relaxed_targets: Mapping[str, float] = field(default_factory=dict)
    relaxed_limited_by: str = ""  # kv | batch | ttft | tpot (the relaxed search's reason)
    # The targets are out of reach and the figures are the best-effort operating point.
    best_effort: bool = False
    # The design capacity within the family's cross-validated error band (docs/performance.md §8):
    # ``band_low``/``band_high`` are predicted ÷ measured throughput of the leave-one-source-out run; at
    # ``band_high`` the hardware runs every step that much slower than estimated (the conservative end,
    # ``concurrency_low``), at ``band_low`` that much faster (``concurrency_high``).  The throughput
    # figures are what the hardware would then deliver at that concurrency.
    band_low: float = 1.0
    band_high: float = 1.0
    concurrency_low: int = 0
    concurrency_high: int = 0
    output_tokens_per_s_low: float = 0.0
    output_tokens_per_s_high: float = 0.0
    # Where the targets came from: ``scenario`` (the request's scenario brought them), ``request``
    # (the request states them) or ``default`` (none stated: ``targets_assumed``); and the scenario.
    targets_source: str = "default"
    scenario: str = ""


@dataclass(frozen=True)
class SlaResult:
    """The latency targets and whether the estimate meets them at the quoted concurrency."""

    targets: Mapping[str, float]  # ttft_p50_s, ttft_p90_s, tpot_p50_ms, tpot_p90_ms (those set)
    values: Mapping[str, float | None]  # the estimate for each (None: no finite latency at that point)
    met: bool | None  # None: no target set
    max_concurrency: int  # largest concurrency meeting every target (0: none; -1: no target)


@dataclass(frozen=True)
class PerformanceResult:
    """What :func:`estimate_performance` returns.  All times in seconds."""

    measured: bool
    groups: tuple[GroupPerformance, ...]
    ttft_s: float
    tpot_s: float
    requests_per_s: float
    output_tokens_per_s: float  # whole deployment, counted groups only
    input_tokens_per_s: float
    output_tokens_per_s_per_dp_rank: float
    serving_dp_ranks: int
    prefill_time_share: float  # share of accelerator time spent on prefill (input tokens)
    pd_balance: PdBalance | None
    note_en: str
    note_zh: str
    figures: Mapping[str, Figure] = field(default_factory=dict)
    checks: tuple[Check, ...] = ()
    # load, SLA and error band
    ttft_p90_s: float = 0.0
    tpot_p90_s: float = 0.0
    queue_wait_s: float = 0.0
    capacity_concurrency: int = 0  # users served at once before requests queue
    curve: tuple[CurvePoint, ...] = ()
    sla: SlaResult | None = None
    error_band: tuple[float, float] = (ERROR_BAND_LOW, ERROR_BAND_HIGH)
    # The hardware family the band was cross-validated on, and whether it has fewer than three
    # public sources (the band is then widened and the page says so).
    error_band_family: str = ""
    error_band_few_sources: bool = False
    serving_devices: int = 0
    concurrency: int = 0  # the workload's concurrency the figures are quoted at
    design_point: DesignPoint | None = None  # the load carried within the latency targets

    @property
    def is_estimate(self) -> bool:
        return not self.measured

    @property
    def output_tokens_per_s_range(self) -> tuple[float, float]:
        """Throughput the measured result is likely to fall in (estimate ÷ band)."""
        if self.measured:
            return (self.output_tokens_per_s, self.output_tokens_per_s)
        low, high = self.error_band
        return (self.output_tokens_per_s / high, self.output_tokens_per_s / low)


# tco (engine/tco.py)


@dataclass(frozen=True)
class CapexBreakdown:
    servers: Decimal
    switches: Decimal
    optics: Decimal
    racks: Decimal
    installation: Decimal
    subtotal: Decimal
    discount: Decimal
    total: Decimal
    gateway: Decimal = Decimal("0.00")  # gateway / load balancer servers
    storage: Decimal = Decimal("0.00")  # shared storage for the model checkpoint
    storage_tb: int = 0


@dataclass(frozen=True)
class AnnualCosts:
    """Costs of one year (buy side and lease side)."""

    depreciation: Decimal  # information only
    om: Decimal
    software_support: Decimal
    electricity: Decimal
    colocation: Decimal
    buy_opex: Decimal  # om + software_support + electricity + colocation
    # The lease side: None when the catalog has no lease offer for the server (no lease figures).
    lease_rent: Decimal | None
    lease_electricity: Decimal | None  # 0 when the lease includes power
    lease_colocation: Decimal | None
    lease_total: Decimal | None
    lease_om: Decimal | None = Decimal("0.00")  # O&M on the lease side (0 when the lessor operates)
    lease_software_support: Decimal | None = Decimal("0.00")


@dataclass(frozen=True)
class TcoYearRow:
    year: int
    buy_capex: Decimal
    buy_om: Decimal
    buy_software_support: Decimal
    buy_electricity: Decimal
    buy_colocation: Decimal
    buy_cost: Decimal
    buy_cumulative: Decimal
    # The lease columns are None when the catalog has no lease offer for the server.
    lease_rent: Decimal | None
    lease_electricity: Decimal | None
    lease_colocation: Decimal | None
    lease_cost: Decimal | None
    lease_cumulative: Decimal | None
    lease_minus_buy_cumulative: Decimal | None
    # The rest of each side's cost, so that a row's columns add up to its cost (the workbook's
    # formulas sum them); defaults keep rows of plans stored before these columns readable.
    buy_residual: Decimal = Decimal("0.00")  # servers sold at the end of the horizon: a credit (≤ 0)
    lease_upfront: Decimal | None = Decimal("0.00")  # network, racks, installation bought in year 1
    lease_om: Decimal | None = Decimal("0.00")
    lease_software_support: Decimal | None = Decimal("0.00")


@stored_init
@dataclass(frozen=True)
class TcoMonthRow:
    month: int
    buy_cumulative: Decimal
    lease_cumulative: Decimal | None  # None: no lease offer in the catalog


@dataclass(frozen=True)
class TokenEconomics:
    """Tokens served in a year at the assumed utilisation and their unit cost."""

    measured: bool  # throughput from a load test rather than the estimate
    output_tokens_per_s: float
    input_tokens_per_s: float
    input_m_tokens_per_year: Decimal
    output_m_tokens_per_year: Decimal
    input_cost_share: Decimal  # share of the annual cost charged to input tokens
    annual_cost_buy: Decimal
    annual_cost_lease: Decimal | None  # None: no lease offer in the catalog
    cost_per_m_input_buy: Decimal | None
    cost_per_m_output_buy: Decimal | None
    cost_per_m_blended_buy: Decimal | None
    cost_per_m_input_lease: Decimal | None
    cost_per_m_output_lease: Decimal | None
    cost_per_m_blended_lease: Decimal | None
    api_price_input_per_m: Decimal | None  # converted to the result currency
    api_price_output_per_m: Decimal | None
    api_cost_per_year: Decimal | None  # the same tokens bought from the API
    saving_vs_api_buy: Decimal | None  # fraction: 1 − annual cost ÷ API cost
    saving_vs_api_lease: Decimal | None


@stored_init
@dataclass(frozen=True)
class SensitivityRow:
    """How the blended cost per million tokens moves when one input moves ±20 %."""

    parameter: str  # electricity_price | utilisation | lease_price | throughput
    basis: str  # buy | lease
    label_en: str
    label_zh: str
    unit: str
    low_value: Decimal
    base_value: Decimal
    high_value: Decimal
    cost_at_low: Decimal | None
    cost_at_base: Decimal | None
    cost_at_high: Decimal | None


@dataclass(frozen=True)
class TcoResult:
    """What :func:`compute_tco` returns.  Money in ``currency``, quantised to 0.01."""

    valid: bool  # False when the commercial inputs were refused (see checks)
    currency: str
    usd_rate: Decimal
    horizon_years: int
    nodes: int
    it_load_kw: Decimal
    rack_count: int
    switch_counts: Mapping[str, int]
    optics_count: int
    capex: CapexBreakdown
    annual: AnnualCosts
    buy_total: Decimal  # over the horizon
    lease_total: Decimal | None  # None: no lease offer in the catalog for the server
    npv_buy: Decimal
    npv_lease: Decimal | None
    monthly_discount_rate: Decimal
    break_even_month: int | None
    yearly: tuple[TcoYearRow, ...]
    monthly: tuple[TcoMonthRow, ...]
    tokens: TokenEconomics | None
    sensitivity: tuple[SensitivityRow, ...]
    figures: Mapping[str, Figure] = field(default_factory=dict)
    checks: tuple[Check, ...] = ()
    residual_value: Decimal = Decimal("0.00")  # recovered at the end of the horizon (buy side)
    lease_upfront: Decimal = Decimal("0.00")  # network, racks, installation: bought on the lease side too
    # What the lease side includes besides the servers' rent (the same scope as the purchase).
    lease_includes: tuple[str, ...] = ()
    # False when the catalog has no lease offer (no lease price) for the server: no lease figures.
    lease_offered: bool = True
    # Lines priced on request ("server", "switch:<slug>", "media:<code>"): no total is computed.
    prices_on_request: tuple[str, ...] = ()


# economics (engine/economics.py)


@stored_init
@dataclass(frozen=True)
class EconomicsPoint:
    concurrency: int
    output_tokens_per_s: float
    cost_per_m_input: Decimal | None
    cost_per_m_output: Decimal | None
    api_cost_per_year: Decimal | None
    saving_vs_api: Decimal | None  # 1 − annual cost ÷ API cost of the same tokens


@dataclass(frozen=True)
class EconomicsResult:
    basis: str  # buy | lease: which yearly cost the curve uses
    currency: str
    annual_cost: Decimal
    points: tuple[EconomicsPoint, ...]
    api_name: str
    api_price_input_per_m: Decimal | None
    api_price_output_per_m: Decimal | None
    api_price_cached_input_per_m: Decimal | None
    break_even_concurrency: float | None  # None: the API is cheaper at every load the cluster serves
    seed_claim_concurrency: float | None  # where the saving reaches 60 %, if it does
    quoted_concurrency: int
    quoted_saving: Decimal | None
    figures: Mapping[str, Figure] = field(default_factory=dict)
    checks: tuple[Check, ...] = ()
    # The two labelled points (issue 25): the design point (the load the hardware carries within the
    # latency targets, at the recommended settings) and the stated load; None without one.
    design: EconomicsPoint | None = None
    stated: EconomicsPoint | None = None
    # The design point at the conservative end of the cross-validated error band
    # (DesignPoint.concurrency_low): the cost per token if the hardware runs as slow as the worst
    # public source of its family was predicted; None without one.
    design_conservative: EconomicsPoint | None = None
    load_share: float | None = None  # stated concurrency ÷ design concurrency
    right_sized: bool | None = None  # False: the stated load uses less than half the design capacity


# launch (engine/launch/)


# The node roles of a launch bundle (a recipe line or a deviation names the roles it applies to).
LAUNCH_ROLES = ("master", "worker", "prefill", "decode")


@dataclass(frozen=True)
class Deviation:
    """Something the bundle does differently from its recipe (``recipes.Recipe``), on purpose."""

    kind: str  # "env" | "flag" | "other"
    name: str  # variable or flag name
    value: str | None  # what the bundle uses (None: left out)
    reason: str
    roles: tuple[str, ...] = LAUNCH_ROLES  # where it applies


@stored_init
@dataclass(frozen=True)
class NodeLaunch:
    """One node of the bundle: the summary row the UI and the PDF show."""

    index: int  # node index in the deployment
    group: str  # GroupLayout.name
    role: str  # master | worker | prefill | decode
    host: str  # IP or placeholder
    is_master: bool  # hosts its group's DP master (rank 0 / the API for aggregated DP)
    dp_rank: int  # first DP rank on this node, within its group
    script: str  # file name in the bundle
    title: str  # one-line description (the script's header)
    env: Mapping[str, str]
    argv: tuple[tuple[str, ...], ...]  # one argv per engine, as the shell will see it
    api_ports: tuple[int, ...]  # HTTP ports served on this node (empty for headless workers)


@dataclass(frozen=True)
class GroupSummary:
    name: str
    role: str
    nodes: int
    tp: int
    dp: int


@dataclass(frozen=True)
class BundleContext:
    """What the bundle's non-node files need, so they can be rendered from the result alone."""

    model_name: str
    server_name: str
    node_count: int
    topology: TopologyKind
    groups: tuple[GroupSummary, ...]
    model_path: str
    nic: str
    image: str
    ascend: bool
    api_port: int
    proxy_port: int
    recipe: str = ""  # recipes.Recipe.key the bundle follows ("" in plans stored before recipes)
    deviations: tuple[Deviation, ...] = ()  # the recipe's and the plan's, listed in the README
    served_name: str = "model"
    devices_per_node: int = 8
    workload: tuple[int, int, int] = (8192, 1024, 16)  # input tokens, output tokens, concurrency
    max_num_seqs: int = 16
    node_selector: Mapping[str, str] = field(default_factory=dict)  # LaunchSpec.node_selector, as given
    load_wait_s: int = 0  # figure launch.load_wait_s (0: a plan stored before it; the tools' defaults)

    def __post_init__(self) -> None:
        # A context rebuilt from stored JSON carries plain lists and dicts.
        devs = tuple(
            d
            if isinstance(d, Deviation)
            else Deviation(**{**d, "roles": tuple(d.get("roles") or LAUNCH_ROLES)})
            for d in self.deviations or ()
        )
        object.__setattr__(self, "deviations", devs)
        object.__setattr__(self, "workload", tuple(int(x) for x in self.workload))


@dataclass(frozen=True)
class LaunchResult:
    """The launch plan: the rows in ``nodes`` carry every command and environment.  Its files
    (path → text) are rendered on demand by ``launch.bundle_files(result)``, so ``plan()`` stays fast."""

    nodes: tuple[NodeLaunch, ...]
    placeholders: tuple[str, ...]  # placeholders left in the bundle
    entrypoint: str  # where clients send requests (host:port), maybe a placeholder
    context: BundleContext
    figures: Mapping[str, Figure] = field(default_factory=dict)
    checks: tuple[Check, ...] = ()


@dataclass(frozen=True)
class RoleServing:
    """The serving settings one role of the deployment runs (``plan()["serving"]``): ``role`` is
    "serve" for an aggregated engine, "prefill" / "decode" for the sides of xPyD.  ``speculative``
    is what its engines launch: method, tokens, the draft's slug, name, acceptance and source."""

    role: str
    groups: tuple[str, ...]
    max_num_seqs: int
    max_num_batched_tokens: int
    tp: int
    dp: int
    speculative_method: str = ""
    num_speculative_tokens: int = 0
    draft: str = ""
    draft_name: str = ""
    acceptance_rate: float = 0.0
    draft_source: str = ""
