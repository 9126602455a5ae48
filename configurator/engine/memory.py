"""Accelerator memory per rank, the way vLLM and vLLM-Ascend spend it (docs/domain.md §6 and §12).

For one logical device (rank) of a serving group::

    device      = the total the runtime reports (accelerator.runtime_memory_bytes), else the vendor figure
    usable      = device × gpu_memory_utilization
    weights     = (non-expert − vision − replicated as stored) ÷ TP ÷ PP
                  + replicated as loaded ÷ PP (engine/placement.py, per platform)
                  + vision (0 with --language-model-only) + expert ÷ EP ÷ PP
                  (expert ÷ TP ÷ PP when expert parallelism is off); bytes from the
                  request's checkpoint, else the model row
    activations = max(forward pass over max_num_batched_tokens,
                      sampler warm-up over max_num_seqs on the last PP stage),
                  or serving.activation_bytes
    buffers     = communicators (HCCL: 2 buffers each, MC2 at HCCL_BUFFSIZE;
                  NCCL per TP/PP/EP group) + runtime non-torch memory
    graphs      = what the targeted engine version subtracts (engine/engine_versions.py): 0 on
                  vLLM-Ascend, before vLLM 0.21 and in eager mode, else an estimate
    kv_cache    = usable − weights − activations − buffers − graphs

What the KV pool holds:

* per token: GQA layers 2 × max(1, kv_heads ÷ TP) × head_dim × dtype bytes;
  MLA layers (kv_lora_rank + qk_rope_head_dim) × dtype bytes, not split by TP;
* per running sequence (fixed): sliding-window layers hold at most the window
  (counted as window tokens per sequence); linear-attention (KDA, Gated
  DeltaNet) layers hold a recurrent state of heads ÷ TP × head_dim² × state
  bytes plus a short-convolution state of (kernel − 1) × conv_dim ÷ TP ×
  conv bytes.

Pipeline parallelism divides the layers (and weights) over PP stages; the
stage with the most layers sets the figures.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

from .checks import raise_
from .defaults import (
    AUTO_MAX_NUM_SEQS,
    BLOCK_SIZE_SOURCE,
    DEFAULT_BLOCK_SIZE,
    KV_DTYPE_SOURCE,
    SUPPORTED_KV_DTYPES,
    VALID_BLOCK_SIZES,
    batch_cap,
    block_size_for,
    kv_dtype_supported,
    platform_labels,
    stack_of,
)
from .engine_versions import (
    ENGINE_LABELS,
    GRAPH_DESCRIPTOR_SOURCE,
    BudgetRules,
    budget_rules,
    dsa_layer_bytes,
    engine_for,
    flashinfer_sampler_default,
    graph_bytes_per_descriptor,
    graph_descriptors,
    runtime_terms,
    triton_sampler_default,
)
from .explain import assumed, public, sentence_start, typed
from .figures import FigureBook
from .layout import (
    group_signature,
    layout_is_valid,
    nodes_fix,
    nodes_fix_text,
    parallel_label,
    propose_layout,
)
from .placement import REPLICABLE_GROUPS, ReplicatedGroup, checkpoint_supports, replicated_groups
from .speculative import (
    decode_role,
    draft_kv_bytes_per_token,
    draft_weight_bytes_per_rank,
    role_request,
    role_serving,
    speculator,
)
from .types import (
    MIB,
    Check,
    GroupLayout,
    GroupMemory,
    KvCacheDtype,
    LayoutResult,
    MemoryResult,
    ModelSpec,
    ParallelSpec,
    PlanRequest,
    RankMemory,
    ServingSpec,
    Source,
    SpeculatorSpec,
)
from .vocabulary import group_in_text

DERIVED_MODEL = Source("derived", "the model's weight bytes (no checkpoint row)")
VLLM_WORKER = "vLLM v1 worker: determine_available_memory / profile_run"

# --------------------------------------------------------------------------- estimator terms
# Each is an explicit, editable term; override an estimate with
# serving.activation_bytes / graph_memory_bytes / non_torch_bytes.

ACTIVATION_DTYPE_BYTES = 2  # hidden states are kept in BF16 between layers
# Hidden-width tensors alive at the peak of the profiling forward pass over
# max_num_batched_tokens tokens: residual, norm output, attention projections
# and output, MLP input/output and the MLP intermediate (≈3.5 × hidden for a
# dense model) with allocator slack.
ACTIVATION_HIDDEN_TENSORS = 24
# MoE layers also hold every token's top-k routed copies in the expert-parallel
# dispatch buffer and again in the combine buffer.
ACTIVATION_MOE_COPIES_PER_EXPERT = 2
# vLLM's profile_run then warms the sampler up with max_num_seqs dummy requests
# (gpu_model_runner._dummy_sampler_run, last PP stage only).  Bytes held per
# request per vocabulary entry at the sampler's peak (vllm/v1/sample/sampler.py,
# ops/topk_topp_sampler.py): BF16 logits from compute_logits (2), their FP32
# copy (4), temperature-scaled logits (4), top-k/top-p sort values (4) and int64
# sort indices (8), the masked logits scattered back (4), softmax probabilities
# (4), the exponential noise q (4) and probs ÷ q (4) = 38 B.
SAMPLER_BYTES_PER_LOGIT = 2 + 4 + 4 + 4 + 8 + 4 + 4 + 4 + 4
# With FlashInfer's top-k/top-p kernels (VLLM_USE_FLASHINFER_SAMPLER=1, the default from vLLM 0.20,
# or vLLM 0.10.x with flashinfer installed: "Using FlashInfer for top-p & top-k sampling") nothing is
# sorted: BF16 logits (2), FP32 logits (4), probabilities (4).
FLASHINFER_SAMPLER_BYTES_PER_LOGIT = 2 + 4 + 4
# With vLLM's Triton top-k/top-p kernel (vLLM ≥ 0.16 without FlashInfer, engine/engine_versions.py
# TRITON_SAMPLER_FROM) the FP32 logits are scaled and masked in place: BF16 logits (2), their FP32 copy
# (4), softmax probabilities (4) and the exponential noise q (4; probs.div_(q) in place) = 14 B
# (vllm/v1/sample/ops/topk_topp_sampler.py forward_native, random_sample, sample_with_exponential_noise).
# The kernel's [min(SMs, batch), vocab] FP32 scratch (≈ 80 MiB, PR #33538) is left out (< 0.1 GiB).
TRITON_SAMPLER_BYTES_PER_LOGIT = 2 + 4 + 4 + 4
# vLLM-Ascend's _dummy_sampler_run only computes the logits of max_num_seqs requests ("TODO: need
# to run a dummy sampler", vllm_ascend/worker/model_runner_v1.py, releases/v0.26.0rc): BF16 logits.
ASCEND_LOGITS_BYTES_PER_LOGIT = 2
# Graph capture (CUDA graphs): vLLM ≥ 0.21 profiles the graph pool and subtracts it from the KV
# budget (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS on by default, docs/domain.md §12); earlier vLLM
# and every vLLM-Ascend do not, and eager engines capture none (engine/engine_versions.py).  What vLLM
# subtracts is its own estimate, linear in the descriptors it will capture (engine_versions
# GRAPH_BYTES_PER_DESCRIPTOR: the capture sizes max_num_seqs implies, PIECEWISE and FULL, × the growth
# per descriptor its logs print for that version): 51 + 35 descriptors at max_num_seqs 256 = 0.56 GiB for
# a 28-layer model on 0.21–0.25 (0.24 MiB per layer and descriptor), 1.68 GiB for any model from 0.26.
# Runtime memory outside PyTorch's allocator on a rank with no communicator
# (cuBLAS / ACL workspaces): 0.13 GiB in public start-up logs on vLLM-Ascend
# (vllm-ascend PR #8289's log) and vLLM 0.10–0.11; vLLM's own figure follows its
# version (engine_versions.CUDA_RUNTIME_TERMS: 0.25 GiB from 0.19).
NON_TORCH_BASE_BYTES = int(0.13 * 2**30)
# NCCL: each communicator of more than one rank adds its channel and all-reduce
# buffers, by vLLM version (engine_versions.CUDA_RUNTIME_TERMS: 0.42 GiB in the
# 0.10–0.11 TP2 logs, 1.84 GiB in the 0.19 ones).
NCCL_BYTES_PER_COMMUNICATOR = int(0.42 * 2**30)


def _gib(value: float) -> int:
    return int(value * 2**30)


def non_torch_base_bytes(serving: ServingSpec, software_stack: str) -> int:
    """Non-torch memory of a rank with no communicator, as the targeted engine version leaves it."""
    if software_stack == "ascend":
        return NON_TORCH_BASE_BYTES
    return _gib(runtime_terms(serving.vllm_version).base_gib)


def nccl_bytes_per_communicator(serving: ServingSpec) -> int:
    """NCCL buffers per communicator of the targeted vLLM version."""
    return _gib(runtime_terms(serving.vllm_version).per_communicator_gib)


# HCCL: each communicator allocates an input and an output buffer of its
# hccl_buffer_size (CANN docs, HCCL_BUFFSIZE).  vLLM-Ascend gives the MC2 group
# HCCL_BUFFSIZE, the DP group max(ceil((dp + 1) × 4 B ÷ 1 MiB), 50) MB and every
# other group 200 MB (vllm_ascend/utils.py get_hccl_config_for_pg_options,
# _DEFAULT_BUFFER_SIZE = 200, _MIN_DP_BUFFER_SIZE = 50; releases/v0.26.0rc).
HCCL_DEFAULT_GROUP_MB = 200
HCCL_MIN_DP_GROUP_MB = 50
HCCL_BUFFERS_PER_COMMUNICATOR = 2
HCCL_SOURCE = (
    "vllm-ascend vllm_ascend/utils.py get_hccl_config_for_pg_options (releases/v0.26.0rc); CANN HCCL_BUFFSIZE"
)


# The KV prediction's own error band (a limit within it is a warning, "may not fit; confirm at
# start-up", never a hard "does not fit"): 5 % of the KV cache and of the derived overheads it is the
# remainder of (activations, buffers) — the worst |KV error| of the start-ups whose terms are all
# derived is 3.5 % (bench/bench_memory.py, docs/domain.md §12) — plus half of vLLM's CUDA-graph estimate
# (vLLM ≥ 0.21): its growth per descriptor is read from a handful of logs that scatter by up to a
# fifth around the figures used (0.225–0.26 MiB per layer around 0.24, 18.6–22.5 MiB around 20,
# engine_versions.py; the L4 pair of the start-up set lost 1.76 GiB where 1.68 is estimated), and
# configurations outside them have printed far larger estimates (vllm-project/vllm#53013).
KV_ERROR_BAND = 0.05
GRAPH_ERROR_BAND = 0.5


def kv_error_margin(kv_cache: int, activation: int, buffers: int, graph: int) -> int:
    """Bytes of the KV prediction's error band: KV_ERROR_BAND of the KV cache, activations and buffers,
    plus GRAPH_ERROR_BAND of an estimated graph pool."""
    return int(KV_ERROR_BAND * (max(kv_cache, 0) + activation + buffers) + GRAPH_ERROR_BAND * graph)


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


# KvCacheDtype.bytes by value, read once: looking the enum member up by value cost more than the rest
# of a call made a few dozen times a plan.
_KV_DTYPE_BYTES = {d.value: d.bytes for d in KvCacheDtype}


def kv_dtype_bytes(kv_cache_dtype: str) -> int:
    """Bytes per cached value: ``auto`` = BF16 = 2, ``fp8`` = 1 (see ``KvCacheDtype``); 2 for a value the
    enum does not know."""
    return _KV_DTYPE_BYTES.get(str(kv_cache_dtype).lower(), 2)


def stage_layers(n: int, pp: int) -> int:
    """Layers of the fullest pipeline stage."""
    return _ceil_div(n, max(pp, 1)) if n > 0 else 0


def kv_heads_per_rank(model: ModelSpec, tp: int) -> int:
    """KV heads one TP rank holds: max(1, kv_heads ÷ TP) — replicated when TP > kv heads."""
    return max(1, _ceil_div(model.num_kv_heads, max(tp, 1)))


def mla_layer_kv_bytes(
    model: ModelSpec, kv_cache_dtype: str = "auto", *, engine: str = "", version: str = ""
) -> int:
    """KV bytes one MLA layer stores per token on a rank (MLA's latent is not split by TP).

    Dense MLA: (kv_lora_rank + qk_rope_head_dim) × dtype bytes.  DeepSeek sparse attention
    (``index_head_dim`` > 0: DeepSeek-V3.2, GLM-5) also caches the lightning indexer's key, in the format
    the targeted engine and version allocate (engine_versions.dsa_layer_bytes).
    """
    dtype = kv_dtype_bytes(kv_cache_dtype)
    if model.index_head_dim > 0:
        return dsa_layer_bytes(
            engine,
            version,
            model.kv_lora_rank,
            model.qk_rope_head_dim,
            model.index_head_dim,
            dtype,
        ).total
    return (model.kv_lora_rank + model.qk_rope_head_dim) * dtype


def kv_bytes_per_token(
    model: ModelSpec,
    tp: int,
    pp: int = 1,
    kv_cache_dtype: str = "auto",
    *,
    engine: str = "",
    version: str = "",
) -> int:
    """KV bytes one rank stores per token (sliding-window layers are per sequence, see below).

    ``engine`` / ``version``: the engine the plan targets (vLLM when empty), which sets the layout of a
    sparse-attention layer's cache (:func:`mla_layer_kv_bytes`)."""
    dtype = kv_dtype_bytes(kv_cache_dtype)
    gqa = 2 * kv_heads_per_rank(model, tp) * model.head_dim * dtype * stage_layers(model.gqa_layers, pp)
    per_mla = (
        mla_layer_kv_bytes(model, kv_cache_dtype, engine=engine, version=version) if model.mla_layers else 0
    )
    mla = per_mla * stage_layers(model.mla_layers, pp)
    return gqa + mla


def sliding_window_bytes_per_seq(
    model: ModelSpec, tp: int, pp: int, kv_cache_dtype: str, max_model_len: int, block_size: int
) -> int:
    """Fixed KV of sliding-window layers per running sequence: the window, in whole blocks."""
    if model.sliding_layers <= 0 or model.sliding_window <= 0:
        return 0
    window = min(model.sliding_window, max_model_len)
    tokens = _ceil_div(window, block_size) * block_size if block_size > 0 else window
    per_token = 2 * kv_heads_per_rank(model, tp) * model.head_dim * kv_dtype_bytes(kv_cache_dtype)
    return per_token * stage_layers(model.sliding_layers, pp) * tokens


def kv_cache_groups(model: ModelSpec, pp: int = 1) -> tuple[int, int]:
    """(layers per group, groups) of the KV-cache groups vLLM forms for a full + sliding-window model.

    vLLM ``vllm/v1/core/kv_cache_utils.py`` ``_get_kv_cache_groups_uniform_page_size``: layers of one
    attention type are cut into groups of ``group_size`` layers, the smallest type's layer count (the
    largest when the types differ by less than 25 %), the last group of a type padded; every group
    draws its blocks from one shared pool of ``group_size`` layer-sized tensors.  (1, 0) for a model
    with one attention type (one group of all its layers: the plain per-token arithmetic applies).
    """
    if model.mla_layers or model.linear_layers:
        return 1, 0
    counts = [c for c in (stage_layers(model.gqa_layers, pp), stage_layers(model.sliding_layers, pp)) if c]
    if len(counts) < 2 or model.sliding_window <= 0:
        return 1, 0
    group_size = min(counts)
    if max(counts) < group_size * 1.25:
        group_size = max(counts)
    return group_size, sum(_ceil_div(c, group_size) for c in counts)


def layer_kv_bytes_per_token(model: ModelSpec, tp: int, kv_cache_dtype: str = "auto") -> int:
    """K and V of one GQA layer per token on one rank: 2 × max(1, kv_heads ÷ TP) × head_dim × dtype bytes."""
    return 2 * kv_heads_per_rank(model, tp) * model.head_dim * kv_dtype_bytes(kv_cache_dtype)


def hybrid_kv_tokens(kv_cache: int, layer_bytes: int, block: int, group_size: int, groups: int) -> int:
    """Tokens vLLM reports for a hybrid model: blocks of the shared pool ÷ groups × block size.

    ``kv_cache_utils.get_kv_cache_config``: num_blocks = memory ÷ (page bytes × group_size);
    ``_report_kv_cache_config``: "GPU KV cache size" = num_blocks ÷ number of groups × block size.
    """
    if kv_cache <= 0 or layer_bytes <= 0 or groups <= 0:
        return 0
    blocks = kv_cache // (layer_bytes * block * group_size)
    return (blocks // groups) * block


def linear_state_bytes_per_seq(model: ModelSpec, tp: int, pp: int = 1) -> int:
    """Linear-attention state per running sequence on one rank (heads and conv channels split by TP).

    K3 at TP 1: 69 × (96 × 128 × 128 × 4 + 3 × 36,864 × 2) = 449,372,160 B (docs/domain.md §2).
    """
    if model.linear_layers <= 0:
        return 0
    tp = max(tp, 1)
    heads = _ceil_div(model.linear_num_heads, tp)
    conv_dim = _ceil_div(model.linear_conv_dim, tp)
    recurrent = heads * model.linear_head_dim * model.linear_head_dim * model.linear_state_dtype_bytes
    conv = max(model.linear_conv_kernel - 1, 0) * conv_dim * model.linear_conv_dtype_bytes
    return stage_layers(model.linear_layers, pp) * (recurrent + conv)


def forward_activation_estimate(model: ModelSpec, serving: ServingSpec) -> int:
    """Peak of the profiling forward pass over max_num_batched_tokens tokens, per rank (bytes).

    tokens × hidden × 2 B × (24 + 2 × experts_per_token)  (hidden states, MoE dispatch/combine)
    """
    tokens = max(serving.max_num_batched_tokens, 0)
    copies = ACTIVATION_HIDDEN_TENSORS + (
        ACTIVATION_MOE_COPIES_PER_EXPERT * model.experts_per_token if model.is_moe else 0
    )
    return tokens * model.hidden_size * ACTIVATION_DTYPE_BYTES * copies


def sampler_bytes_per_logit(serving: ServingSpec, software_stack: str = "cuda") -> int:
    if software_stack == "ascend":
        return ASCEND_LOGITS_BYTES_PER_LOGIT
    flashinfer = serving.flashinfer_sampler
    if flashinfer is None:  # the engine version's default (engine/engine_versions.py)
        flashinfer = flashinfer_sampler_default(software_stack, serving.engine, serving.vllm_version)
    if flashinfer:
        return FLASHINFER_SAMPLER_BYTES_PER_LOGIT
    if triton_sampler_default(software_stack, serving.engine, serving.vllm_version):
        return TRITON_SAMPLER_BYTES_PER_LOGIT
    return SAMPLER_BYTES_PER_LOGIT


def sampler_warmup_estimate(model: ModelSpec, serving: ServingSpec, software_stack: str = "cuda") -> int:
    """Peak of the sampler warm-up: min(max_num_seqs, tokens) requests × vocab × bytes per logit
    (38 B with vLLM's sort-based sampler, 14 B with its Triton kernel, 10 B with FlashInfer's,
    2 B on vLLM-Ascend: logits only)."""
    requests = min(serving.max_num_seqs, max(serving.max_num_batched_tokens, 0))
    return requests * model.vocab_size * sampler_bytes_per_logit(serving, software_stack)


def activation_estimate(
    model: ModelSpec, serving: ServingSpec, *, last_stage: bool = True, software_stack: str = "cuda"
) -> int:
    """Peak activation of vLLM's profiling run, per rank (bytes).

    vLLM's ``profile_run`` runs the forward pass over max_num_batched_tokens and
    then, on the last pipeline stage only, the sampler warm-up over max_num_seqs
    dummy requests; the activations of the first are freed before the second,
    so the peak is the larger of the two.
    """
    forward = forward_activation_estimate(model, serving)
    if not last_stage:
        return forward
    return max(forward, sampler_warmup_estimate(model, serving, software_stack))


def graph_memory_terms(
    serving: ServingSpec, software_stack: str, *, eager: bool = False, mode: str = "full", layers: int = 1
) -> tuple[int, int, int]:
    """(PIECEWISE descriptors, FULL descriptors, bytes per descriptor) of the graph memory the targeted
    engine version takes out of the KV budget (engine/engine_versions.py): nothing in eager mode, on
    vLLM-Ascend and before vLLM 0.21; from 0.21 vLLM's own estimate, the descriptors it captures
    (``mode``: "full" = FULL_AND_PIECEWISE, "piecewise") × its growth per descriptor, which on 0.21–0.25
    grows with the ``layers`` the rank holds."""
    if eager or serving.enforce_eager or mode == "eager":
        return 0, 0, 0
    if not budget_rules(software_stack, serving.engine, serving.vllm_version).graphs_subtracted:
        return 0, 0, 0
    piecewise, full = graph_descriptors(serving.max_num_seqs, serving.max_num_batched_tokens, mode)
    return piecewise, full, graph_bytes_per_descriptor(serving.vllm_version, layers)


def communicators(p: ParallelSpec, model: ModelSpec, software_stack: str) -> list[tuple[str, int]]:
    """(group, MiB per buffer) of every communicator of more than one rank that a rank joins."""
    out: list[tuple[str, int]] = []
    if p.tp > 1:
        out.append(("tp", HCCL_DEFAULT_GROUP_MB))
    if p.pp > 1:
        out.append(("pp", HCCL_DEFAULT_GROUP_MB))
    if p.dp > 1:
        dp_mb = max(_ceil_div((p.dp + 1) * 4, MIB), HCCL_MIN_DP_GROUP_MB)
        out.append(("dp", dp_mb))
    if p.expert_parallel and model.is_moe and p.ep > 1:
        out.append(("ep", HCCL_DEFAULT_GROUP_MB))
        if software_stack == "ascend":
            out.append(("mc2", 0))  # sized by HCCL_BUFFSIZE
    return out


def _communicator_terms(p: ParallelSpec, model: ModelSpec, software_stack: str) -> tuple[int, int, int]:
    """(MiB per buffer of the communicators other than MC2, MC2 communicators, NCCL communicators)."""
    groups = communicators(p, model, software_stack)
    group_mb = sum(mb for name, mb in groups if name != "mc2")
    mc2 = sum(1 for name, _ in groups if name == "mc2")
    nccl = sum(1 for name, _ in groups if name in ("tp", "pp", "ep"))
    return group_mb, mc2, nccl


def buffer_estimate(req: PlanRequest, p: ParallelSpec) -> tuple[int, int]:
    """(communication buffers, other non-torch memory) per rank, bytes."""
    serving, model = req.serving, req.model
    stack = req.server.accelerator.software_stack
    base = (
        serving.non_torch_bytes
        if serving.non_torch_bytes is not None
        else non_torch_base_bytes(serving, stack)
    )
    if serving.comm_buffer_groups is not None:  # explicit override: buffer × groups
        return serving.comm_buffer_mb * MIB * serving.comm_buffer_groups, base
    group_mb, mc2, nccl = _communicator_terms(p, model, stack)
    if stack == "ascend":  # an input and an output buffer per communicator, MC2 at HCCL_BUFFSIZE
        return HCCL_BUFFERS_PER_COMMUNICATOR * (group_mb + mc2 * serving.comm_buffer_mb) * MIB, base
    return nccl * nccl_bytes_per_communicator(serving), base


def _weight_parts(req: PlanRequest) -> tuple[int, int, int]:
    """(expert, non-expert, vision) bytes on disk: from the checkpoint when the request names one."""
    ck, model = req.checkpoint, req.model
    if ck is not None:
        return ck.expert_bytes, ck.non_expert_bytes, min(ck.vision_bytes, ck.non_expert_bytes)
    vision = min(model.vision_bytes, model.non_expert_weight_bytes)
    return model.expert_weight_bytes, model.non_expert_weight_bytes, vision


# MXFP4 experts on a CUDA GPU without FP4 tensor cores are held in the layout of the kernel that runs
# them (vllm/model_executor/layers/quantization/mxfp4.py Mxfp4MoEMethod.create_weights):
# * Marlin (Ampere and Ada: A100, L40S; Hopper before vLLM 0.11, vllm issue #23278's H100 log "Weight-only
#   FP4 compression will be used leveraging the Marlin kernel"): n % 256 == 0 and k % 128 == 0 for each
#   linear, so the hidden size is padded to a multiple of 256 and each rank's expert width to 128;
# * Triton (Hopper from vLLM 0.11, "mxfp4.py Using Triton backend"): hidden to 256, width to 64 —
#   gpt-oss-20b on one H100 loads 13.47 GiB at vLLM 0.11.0 (llm-d log), its padded size.
# Blackwell runs MXFP4 natively and is left unpadded here.
MXFP4_HIDDEN_MULTIPLE = 256
MXFP4_WIDTH_MULTIPLE = {"marlin": 128, "triton": 64}
MXFP4_BYTES_PER_WEIGHT = 4.25 / 8  # E2M1 + one E8M0 scale per 32 (catalog/importers/hf_config.py MXFP4_BPP)
MXFP4_BLOCK = 32
HOPPER_TRITON_FROM = (0, 11)


def mxfp4_padding(req: PlanRequest, p: ParallelSpec) -> tuple[str, int, int, int, int] | None:
    """(kernel, hidden, hidden as padded, expert FFN width per rank, as padded) when vLLM holds the
    MXFP4 experts in a padded layout; None otherwise.

    The FFN width is recovered from the checkpoint's expert bytes (experts × MoE layers × 3 matrices of
    hidden × width at 4.25 bits), rounded to the MXFP4 block of 32.
    """
    from .engine_versions import parse_version
    from .recipes import hardware_of  # recipes import nothing of memory; local to keep the layers clear

    model, acc = req.model, req.server.accelerator
    fmt = (req.checkpoint.weight_format if req.checkpoint else model.weight_format).lower()
    if acc.software_stack != "cuda" or fmt != "mxfp4" or not model.is_moe or model.hidden_size <= 0:
        return None
    generation = hardware_of(req.server)
    if acc.tflops.get("mxfp4") or generation.startswith("blackwell"):
        return None
    version = parse_version(req.serving.vllm_version) or (0, 27)
    kernel = "triton" if generation == "hopper" and version >= HOPPER_TRITON_FROM else "marlin"
    expert_total = _weight_parts(req)[0]
    layers = model.moe_layers or model.num_layers
    per_matrix = expert_total / (MXFP4_BYTES_PER_WEIGHT * layers * model.num_experts * 3 * model.hidden_size)
    width = max(round(per_matrix / MXFP4_BLOCK), 1) * MXFP4_BLOCK
    per_rank = width if p.expert_parallel else _ceil_div(width, max(p.tp, 1))
    hidden_padded = _ceil_div(model.hidden_size, MXFP4_HIDDEN_MULTIPLE) * MXFP4_HIDDEN_MULTIPLE
    multiple = MXFP4_WIDTH_MULTIPLE[kernel]
    return kernel, model.hidden_size, hidden_padded, per_rank, _ceil_div(per_rank, multiple) * multiple


def weights_breakdown(req: PlanRequest, p: ParallelSpec) -> tuple[int, int, int]:
    """(non-expert, expert, replicated) weight bytes on one rank; replicated is part of non-expert.

    non-expert = (non_expert − vision − replicated as stored) ÷ TP ÷ PP
                 + replicated as loaded ÷ PP + vision (0 with --language-model-only)
    """
    serving = req.serving
    tp, pp = max(p.tp, 1), max(p.pp, 1)
    expert_total, non_expert_total, vision = _weight_parts(req)
    groups = replicated_groups(req.checkpoint, req.server.accelerator.software_stack)
    stored = sum(g.stored_bytes for g in groups)
    loaded = sum(g.loaded_bytes for g in groups)
    language = max(non_expert_total - vision - stored, 0)
    replicated = _ceil_div(loaded, pp)
    non_expert = _ceil_div(language, tp * pp) + replicated + (0 if serving.language_model_only else vision)
    expert_divisor = (max(p.ep, 1) if p.expert_parallel else tp) * pp
    expert = _ceil_div(expert_total, expert_divisor) if expert_total else 0
    padding = mxfp4_padding(req, p)
    if padding and expert:
        _kernel, hidden, hidden_padded, width, width_padded = padding
        expert = _ceil_div(expert * hidden_padded * width_padded, hidden * width)
    return non_expert, expert, replicated


def weights_per_rank(model: ModelSpec, serving: ServingSpec, p: ParallelSpec) -> tuple[int, int]:
    """(non-expert, expert) weight bytes on one rank, default placement (no checkpoint rules)."""
    tp, pp = max(p.tp, 1), max(p.pp, 1)
    vision = min(model.vision_bytes, model.non_expert_weight_bytes)
    language = model.non_expert_weight_bytes - vision
    non_expert = _ceil_div(language, tp * pp) + (0 if serving.language_model_only else vision)
    expert_divisor = (max(p.ep, 1) if p.expert_parallel else tp) * pp
    expert = _ceil_div(model.expert_weight_bytes, expert_divisor) if model.expert_weight_bytes else 0
    return non_expert, expert


# --------------------------------------------------------------------------- per-group arithmetic


class _Budget:
    """Everything one rank of a group spends, before it becomes a RankMemory."""

    __slots__ = (
        "device",
        "usable",
        "non_expert",
        "expert",
        "replicated",
        "weights",
        "activation",
        "forward",
        "sampler",
        "comm",
        "non_torch",
        "buffers",
        "graph",
        "graph_terms",
        "eager",
        "block",
        "kv_cache",
        "bpt",
        "state",
        "window",
        "per_seq",
        "kv_tokens",
        "full_len_seqs",
        "seq_tokens",
        "group_size",
        "groups",
        "layer_bpt",
        "draft",
        "draft_bpt",
        "target_bpt",
    )

    def __init__(self, req: PlanRequest, p: ParallelSpec, role: str = ""):
        model, serving = req.model, req.serving
        acc = req.server.accelerator
        stack = acc.software_stack
        device = acc.usable_base_bytes
        self.device = device
        self.usable = int(device * serving.gpu_memory_utilization)
        self.non_expert, self.expert, self.replicated = weights_breakdown(req, p)
        # A separate speculative draft's weights, split by the target's TP (engine/speculative.py).
        self.draft = draft_weight_bytes_per_rank(req, p)
        self.weights = self.non_expert + self.expert + self.draft
        self.forward = forward_activation_estimate(model, serving)
        self.sampler = sampler_warmup_estimate(model, serving, stack)
        self.activation = (
            serving.activation_bytes
            if serving.activation_bytes is not None
            else activation_estimate(model, serving, software_stack=stack)
        )
        self.comm, self.non_torch = buffer_estimate(req, p)
        self.buffers = self.comm + self.non_torch
        # P/D prefill engines run with --enforce-eager (launch bundle), so capture no graphs; nor does an
        # eager plan (PlanRequest.decode_graphs: its scripts pass --enforce-eager).
        self.eager = req.decode_graphs == "eager" or role == "prefill"
        self.graph_terms = graph_memory_terms(
            serving,
            stack,
            eager=self.eager,
            mode=req.decode_graphs,
            layers=stage_layers(model.num_layers, p.pp),
        )
        piecewise, full, per_graph = self.graph_terms
        self.graph = (
            serving.graph_memory_bytes
            if serving.graph_memory_bytes is not None
            else (piecewise + full) * per_graph
        )
        self.kv_cache = self.usable - self.weights - self.activation - self.buffers - self.graph
        block = block_size_for(serving, stack)
        self.block = block
        self.target_bpt = kv_bytes_per_token(
            model,
            p.tp,
            p.pp,
            serving.kv_cache_dtype,
            engine=engine_for(stack, serving.engine),
            version=serving.vllm_version,
        )
        # The draft's attention layers join the KV-cache spec beside the target's (engine/speculative.py).
        target_layer = (
            mla_layer_kv_bytes(
                model,
                serving.kv_cache_dtype,
                engine=engine_for(stack, serving.engine),
                version=serving.vllm_version,
            )
            if model.mla_layers
            else layer_kv_bytes_per_token(model, p.tp, serving.kv_cache_dtype)
        )
        self.draft_bpt = draft_kv_bytes_per_token(
            req, p, kv_dtype_bytes(serving.kv_cache_dtype), target_layer
        )
        self.bpt = self.target_bpt + self.draft_bpt
        self.state = linear_state_bytes_per_seq(model, p.tp, p.pp)
        self.window = sliding_window_bytes_per_seq(
            model, p.tp, p.pp, serving.kv_cache_dtype, serving.max_model_len, block
        )
        self.seq_tokens = _ceil_div(max(serving.max_model_len, 0), block) * block
        self.per_seq = self.seq_tokens * self.bpt + self.state + self.window
        self.group_size, self.groups = kv_cache_groups(model, p.pp)
        self.layer_bpt = layer_kv_bytes_per_token(model, p.tp, serving.kv_cache_dtype)
        if self.kv_cache <= 0:
            self.kv_tokens = 0
            self.full_len_seqs = 0
        else:
            if self.groups:  # full + sliding-window layers share one pool by KV-cache group
                self.kv_tokens = hybrid_kv_tokens(
                    self.kv_cache, self.layer_bpt, block, self.group_size, self.groups
                )
            else:
                self.kv_tokens = (self.kv_cache // (self.bpt * block)) * block if self.bpt else 0
            self.full_len_seqs = self.kv_cache // self.per_seq if self.per_seq else serving.max_num_seqs

    def fits_one_sequence(self) -> bool:
        return self.kv_cache >= self.per_seq and self.kv_cache > 0

    @property
    def kv_margin(self) -> int:
        """The KV prediction's own error band in bytes (KV_ERROR_BAND, GRAPH_ERROR_BAND)."""
        return kv_error_margin(self.kv_cache, self.activation, self.buffers, self.graph)

    def within_band_of_one_sequence(self) -> bool:
        """One max_model_len sequence is within the prediction's error band of the KV cache."""
        return abs(self.kv_cache - self.per_seq) <= self.kv_margin

    def rank_memory(self) -> RankMemory:
        return RankMemory(
            device_bytes=self.device,
            usable_bytes=self.usable,
            weights_bytes=self.weights,
            non_expert_weights_bytes=self.non_expert,
            expert_weights_bytes=self.expert,
            activation_bytes=self.activation,
            buffer_bytes=self.buffers,
            graph_bytes=self.graph,
            kv_cache_bytes=self.kv_cache,
            free_bytes=self.device - self.usable,
            kv_bytes_per_token=self.bpt,
            state_bytes_per_seq=self.state + self.window,
            kv_tokens=self.kv_tokens,
            linear_state_bytes_per_seq=self.state,
            sliding_window_bytes_per_seq=self.window,
            replicated_weights_bytes=self.replicated,
            non_torch_bytes=self.non_torch,
        )


def _fitting_nodes(req: PlanRequest, start: int, upto: int) -> tuple[int, ParallelSpec, _Budget] | None:
    """Smallest group size in (start, upto] whose auto layout is valid and holds one full sequence."""
    for n in range(start + 1, upto + 1):
        p = propose_layout(req, n)
        if not layout_is_valid(req, n, p):
            continue
        b = _Budget(req, p)
        if b.fits_one_sequence():
            return n, p, b
    return None


# --------------------------------------------------------------------------- checks


def _model_checks(req: PlanRequest) -> list[Check]:
    model, serving, workload = req.model, req.serving, req.workload
    out: list[Check] = []
    if model.max_context and serving.max_model_len > model.max_context:
        out.append(
            raise_(
                "model.max_model_len_exceeds_context",
                max_model_len=serving.max_model_len,
                model=model.name,
                max_context=model.max_context,
            )
        )
    if workload.needs_vision and not model.has_vision:
        out.append(raise_("model.no_vision_encoder", model=model.name))
    elif workload.needs_vision and serving.language_model_only:
        out.append(raise_("model.vision_needs_full_model", language_model_only=False))
    out.extend(_platform_checks(req))
    counted = model.gqa_layers + model.mla_layers + model.linear_layers + model.sliding_layers
    if counted != model.num_layers:
        out.append(
            raise_(
                "model.layer_counts_inconsistent",
                model=model.name,
                counted=counted,
                num_layers=model.num_layers,
            )
        )
    return out


def _platform_checks(req: PlanRequest) -> list[Check]:
    """What the platform refuses: its KV-cache dtypes, block sizes and checkpoints."""
    serving, acc = req.serving, req.server.accelerator
    stack = stack_of(acc.software_stack)
    out: list[Check] = []
    dtype = str(serving.kv_cache_dtype)
    if not kv_dtype_supported(stack, dtype):
        offered = ", ".join(d.value for d in SUPPORTED_KV_DTYPES[stack])
        out.append(
            raise_(
                "memory.kv_cache_dtype_unsupported",
                figures={"platform": stack, "kv_cache_dtype": dtype, "source": KV_DTYPE_SOURCE[stack]},
                dtype=dtype,
                server=req.server.name,
                accelerator=acc.name,
                offered=offered,
                auto=KvCacheDtype.AUTO.value,
            )
        )
    block = block_size_for(serving, stack)
    if block not in VALID_BLOCK_SIZES[stack]:
        allowed = ", ".join(str(x) for x in VALID_BLOCK_SIZES[stack])
        default = DEFAULT_BLOCK_SIZE[stack]
        out.append(
            raise_(
                "memory.block_size_invalid",
                figures={"block_size": block, "source": BLOCK_SIZE_SOURCE[stack]},
                block=block,
                accelerator=acc.name,
                allowed=allowed,
                default=default,
            )
        )
    ck = req.checkpoint
    if ck is not None and not checkpoint_supports(ck, stack):
        out.append(
            raise_(
                "model.checkpoint_wrong_platform",
                figures={"checkpoint": ck.slug, "platforms": list(ck.platforms), "platform": stack},
                checkpoint=ck.name,
                accelerator=acc.name,
                platforms_en=platform_labels(ck.platforms),
                platforms_zh=platform_labels(ck.platforms, "zh"),
            )
        )
    return out


def _group_checks(req: PlanRequest, names: list[str], g: GroupLayout, b: _Budget) -> list[Check]:
    """The memory checks of one group (``names``: the groups of its shape): the weights that do not fit,
    else one max_model_len sequence that may not or does not fit, else the sequences the KV cache holds
    against max_num_seqs and the headroom."""
    who = _who(names)
    search_upto = max(64, 8 * g.nodes)
    if b.weights > b.usable:
        return [_weights_check(req, names, g, b, who, search_upto)]
    out: list[Check] = []
    if b.within_band_of_one_sequence() and b.weights <= b.usable:
        out.append(_one_sequence_band_check(req, b, who))
        if not b.fits_one_sequence():
            return out
    if not b.fits_one_sequence():
        out.append(_one_sequence_check(req, names, g, b, who, search_upto))
        return out
    out.extend(_kv_room_checks(req, b, who))
    return out


def _who(names: list[str]) -> tuple[str, str]:
    """Who a group's check speaks of, in English and Chinese: "Each cluster" for several groups of one
    shape, else the group by name."""
    if len(names) > 1:
        return "Each cluster", "每个集群"
    return sentence_start(group_in_text(names[0], "en")), group_in_text(names[0], "zh")


def _weights_check(
    req: PlanRequest, names: list[str], g: GroupLayout, b: _Budget, who: tuple[str, str], search_upto: int
) -> Check:
    """The weights per rank above the usable memory: the shortfall, with the smallest group size (up to
    ``search_upto`` nodes) whose layout holds them and one sequence, and a quantised checkpoint for a
    BF16 MoE model."""
    serving, model = req.serving, req.model
    p = g.parallel
    who_en, who_zh = who
    overheads = b.activation + b.buffers + b.graph
    shortfall = b.weights - b.usable
    found = _fitting_nodes(req, g.nodes, search_upto)
    figures = {
        "weights_bytes": b.weights,
        "usable_bytes": b.usable,
        "shortfall_bytes": shortfall,
        "shortfall_gb": round(shortfall / 1e9, 1),
    }
    quantised = model.weight_format.lower() in ("bf16", "fp16") and model.is_moe
    fix: str | None = "quantised" if quantised else None
    change: dict[str, object] = {}
    nodes_en = nodes_zh = layout_ok = weights_ok = None
    if found is not None:
        n_ok, p_ok, b_ok = found
        fix = "nodes_quantised" if quantised else "nodes"
        change = nodes_fix(req, names[0], n_ok, p_ok)
        nodes_en, nodes_zh = nodes_fix_text(req, names[0], n_ok)
        layout_ok, weights_ok = parallel_label(p_ok), b_ok.weights
    return raise_(
        "memory.weights_do_not_fit",
        fix=fix,
        figures=figures,
        who_en=who_en,
        who_zh=who_zh,
        weights=b.weights,
        layout=parallel_label(p),
        usable=b.usable,
        device=b.device,
        util=serving.gpu_memory_utilization,
        shortfall=shortfall,
        overheads=overheads,
        change=change,
        nodes_en=nodes_en,
        nodes_zh=nodes_zh,
        layout_ok=layout_ok,
        weights_ok=weights_ok,
    )


def _one_sequence_band_check(req: PlanRequest, b: _Budget, who: tuple[str, str]) -> Check:
    """One max_model_len sequence within the KV prediction's error band of the KV cache: it may not fit."""
    serving = req.serving
    who_en, who_zh = who
    # Within the model's own error band of the limit: say so, never a hard "does not fit".
    return raise_(
        "memory.one_sequence_may_not_fit",
        figures={
            "per_seq_bytes": b.per_seq,
            "kv_cache_bytes": b.kv_cache,
            "band_bytes": b.kv_margin,
            "band": KV_ERROR_BAND,
            "graph_band": GRAPH_ERROR_BAND,
        },
        who_en=who_en,
        max_model_len=serving.max_model_len,
        per_seq=b.per_seq,
        kv_cache=max(b.kv_cache, 0),
        kv_margin=b.kv_margin,
        who_zh=who_zh,
    )


def _one_sequence_check(
    req: PlanRequest, names: list[str], g: GroupLayout, b: _Budget, who: tuple[str, str], search_upto: int
) -> Check:
    """One max_model_len sequence larger than the KV cache: the shortfall, with the longest context that
    fits (rounded down to whole blocks) or the smallest group size that holds one sequence."""
    serving = req.serving
    who_en, who_zh = who
    shortfall = b.per_seq - b.kv_cache
    fit_len = 0
    if b.kv_cache > b.state + b.window and b.bpt:
        block = b.block
        fit_len = ((b.kv_cache - b.state - b.window) // (b.bpt * block)) * block
    found = _fitting_nodes(req, g.nodes, search_upto) if fit_len < min(serving.max_model_len, 4096) else None
    fix = None
    change = {}
    nodes_en = nodes_zh = layout_ok = None
    if fit_len >= min(serving.max_model_len, 4096) or (fit_len > 0 and found is None):
        fix = "max_model_len"
    elif found is not None:
        n_ok, p_ok, _ = found
        fix = "nodes"
        change = nodes_fix(req, names[0], n_ok, p_ok)
        nodes_en, nodes_zh = nodes_fix_text(req, names[0], n_ok)
        layout_ok = parallel_label(p_ok)
    return raise_(
        "memory.one_sequence_does_not_fit",
        fix=fix,
        figures={
            "per_seq_bytes": b.per_seq,
            "kv_cache_bytes": b.kv_cache,
            "shortfall_bytes": shortfall,
        },
        who_en=who_en,
        max_model_len=serving.max_model_len,
        per_seq=b.per_seq,
        kv_cache=max(b.kv_cache, 0),
        weights=b.weights,
        activation=b.activation,
        buffers=b.buffers,
        graph=b.graph,
        who_zh=who_zh,
        fit_len=fit_len,
        change=change,
        nodes_en=nodes_en,
        nodes_zh=nodes_zh,
        layout_ok=layout_ok,
    )


def _kv_room_checks(req: PlanRequest, b: _Budget, who: tuple[str, str]) -> list[Check]:
    """The KV cache holding fewer full-length sequences than max_num_seqs, and the headroom it leaves."""
    serving = req.serving
    who_en, who_zh = who
    out: list[Check] = []
    requested = serving.max_num_seqs * serving.max_model_len
    if b.full_len_seqs < serving.max_num_seqs:
        n = b.full_len_seqs
        out.append(
            raise_(
                "memory.max_num_seqs_not_full_length",
                figures={
                    "requested_tokens": requested,
                    "kv_tokens": b.kv_tokens,
                    "full_len_seqs": n,
                    "max_num_seqs": serving.max_num_seqs,
                },
                who_en=who_en,
                max_num_seqs=serving.max_num_seqs,
                max_model_len=serving.max_model_len,
                requested=requested,
                kv_tokens=b.kv_tokens,
                who_zh=who_zh,
                n=n,
            )
        )
    out.append(
        raise_(
            "memory.kv_headroom",
            figures={
                "weights_bytes": b.weights,
                "kv_cache_bytes": b.kv_cache,
                "kv_tokens": b.kv_tokens,
                "full_len_seqs": b.full_len_seqs,
            },
            who_en=who_en,
            weights=b.weights,
            kv_cache=b.kv_cache,
            kv_tokens=b.kv_tokens,
            full_len_seqs=b.full_len_seqs,
            max_model_len=serving.max_model_len,
            who_zh=who_zh,
        )
    )
    return out


# --------------------------------------------------------------------------- figures


def _group_figures(
    book: FigureBook, req: PlanRequest, at: str, g: GroupLayout, b: _Budget, gm: GroupMemory
) -> None:
    """Put one group's figures: ``memory.per_rank.…`` for ``at`` = "", ``memory.decode.per_rank.…`` for "decode."."""
    serving = req.serving
    p = g.parallel
    stack = req.server.accelerator.software_stack
    rules = budget_rules(stack, serving.engine, serving.vllm_version)
    engine_label = f"{ENGINE_LABELS[rules.engine]} {serving.vllm_version}"
    draft = speculator(req, serving.speculative)
    _device_figures(book, req, at, b)
    _non_expert_weight_figures(book, req, at, p, b)
    _expert_weight_figures(book, req, at, p, b, draft)
    _activation_figures(book, req, at, p, b, engine_label)
    _buffer_figures(book, req, at, p, b)
    _graph_and_kv_cache_figures(book, req, at, b, rules, engine_label)
    _kv_token_figures(book, req, at, p, b, draft)
    _kv_pool_figures(book, req, at, p, b)
    _group_total_figures(book, req, at, g, b, gm)


def _device_figures(book: FigureBook, req: PlanRequest, at: str, b: _Budget) -> None:
    """Put the device's memory per rank (the runtime's figure, else the vendor's) and the part
    --gpu-memory-utilization lets vLLM use."""
    serving, acc = req.serving, req.server.accelerator
    if acc.runtime_memory_bytes:
        book.put(
            f"memory.{at}per_rank.device_bytes",
            b.device,
            variant="runtime",
            source=public(acc.runtime_memory_source or acc.name),
            runtime_memory_bytes=acc.runtime_memory_bytes,
            accelerator=acc.name,
        )
    else:
        book.put(
            f"memory.{at}per_rank.device_bytes",
            b.device,
            variant="vendor",
            source=public(acc.name),
            memory_bytes=acc.memory_bytes,
            accelerator=acc.name,
        )
    book.put(
        f"memory.{at}per_rank.usable_bytes",
        b.usable,
        source=public("vLLM --gpu-memory-utilization"),
        device_bytes=b.device,
        gpu_memory_utilization=serving.gpu_memory_utilization,
    )


def _non_expert_weight_figures(
    book: FigureBook, req: PlanRequest, at: str, p: ParallelSpec, b: _Budget
) -> None:
    """Put the non-expert weights per rank and, of them, the groups the platform replicates on every
    rank (engine/placement.py); refuses a replicated group the figure's formula does not name."""
    model, serving = req.model, req.serving
    ck = req.checkpoint
    groups = replicated_groups(ck, req.server.accelerator.software_stack)
    vision = ck.vision_bytes if ck else model.vision_bytes
    non_expert_total = ck.non_expert_bytes if ck else model.non_expert_weight_bytes
    book.put(
        f"memory.{at}per_rank.non_expert_weights_bytes",
        b.non_expert,
        checkpoint=ck.slug if ck else "",
        non_expert_bytes=non_expert_total,
        vision_bytes=vision,
        replicated_stored_bytes=sum(x.stored_bytes for x in groups),
        replicated_per_rank=b.replicated,
        tp=p.tp,
        pp=p.pp,
        language_model_only=serving.language_model_only,
        vision_per_rank=0 if serving.language_model_only else min(vision, non_expert_total),
    )
    loaded = {x.group: x.loaded_bytes for x in groups}
    unnamed = loaded.keys() - set(REPLICABLE_GROUPS)
    if unnamed:  # the figure's formula names every group a platform may replicate
        raise ValueError(f"replicated groups {sorted(unnamed)} are not among {REPLICABLE_GROUPS}")
    sources = "; ".join(sorted({x.source for x in groups}))
    book.put(
        f"memory.{at}per_rank.replicated_weights_bytes",
        b.replicated,
        source=(
            (assumed(sources) if any(x.assumed for x in groups) else public(sources))
            if groups
            else public("engine/placement.py")
        ),
        router=loaded.get("router", 0),
        latent_moe=loaded.get("latent_moe", 0),
        mla_a=loaded.get("mla_a", 0),
        kda_f_a=loaded.get("kda_f_a", 0),
        pp=p.pp,
    )


def _expert_weight_figures(
    book: FigureBook, req: PlanRequest, at: str, p: ParallelSpec, b: _Budget, draft: SpeculatorSpec | None
) -> None:
    """Put the expert weights per rank (MXFP4-padded, split by EP or by TP), a separate draft's weights,
    and the weights per rank in all."""
    model = req.model
    expert_total = _weight_parts(req)[0]
    padding = mxfp4_padding(req, p)
    if padding and b.expert:
        kernel, hidden, hidden_padded, width, width_padded = padding
        book.put(
            f"memory.{at}per_rank.expert_weights_bytes",
            b.expert,
            variant="padded",
            source=public(
                f"vLLM quantization/mxfp4.py Mxfp4MoEMethod.create_weights ({kernel} kernel: hidden padded to "
                f"{MXFP4_HIDDEN_MULTIPLE}, expert width per rank to {MXFP4_WIDTH_MULTIPLE[kernel]})"
            ),
            checkpoint_expert_bytes=expert_total,
            expert_bytes=model.expert_weight_bytes,
            expert_divisor=(p.ep if p.expert_parallel else p.tp),
            pp=p.pp,
            hidden_size=hidden,
            hidden_padded=hidden_padded,
            intermediate_per_rank=width,
            intermediate_padded=width_padded,
        )
    elif p.expert_parallel:
        book.put(
            f"memory.{at}per_rank.expert_weights_bytes",
            b.expert,
            variant="ep",
            checkpoint_expert_bytes=expert_total,
            expert_bytes=model.expert_weight_bytes,
            ep=p.ep,
            pp=p.pp,
        )
    else:
        book.put(
            f"memory.{at}per_rank.expert_weights_bytes",
            b.expert,
            variant="tp",
            checkpoint_expert_bytes=expert_total,
            expert_bytes=model.expert_weight_bytes,
            tp=p.tp,
            pp=p.pp,
        )
    if draft is not None:
        book.put(
            f"memory.{at}per_rank.draft_weights_bytes",
            b.draft,
            source=public(draft.source or draft.name),
            draft=draft.name,
            draft_bytes=draft.weight_bytes,
            tp=p.tp,
        )
    book.put(
        f"memory.{at}per_rank.weights_bytes",
        b.weights,
        non_expert_per_rank=b.non_expert,
        expert_per_rank=b.expert,
        draft_per_rank=b.draft,
        weight_format=model.weight_format,
    )


def _activation_figures(
    book: FigureBook, req: PlanRequest, at: str, p: ParallelSpec, b: _Budget, engine_label: str
) -> None:
    """Put the activation peak per rank: vLLM's profile run (the forward pass, then the sampler's
    warm-up on the last pipeline stage), or the figure typed in the request."""
    model, serving = req.model, req.serving
    stack = req.server.accelerator.software_stack
    # Earlier pipeline stages run no sampler: their peak is the forward pass alone.
    stages_before_last = b.forward if p.pp > 1 and serving.activation_bytes is None else 0
    experts_per_token = model.experts_per_token if model.is_moe else 0
    if serving.activation_bytes is None:
        book.put(
            f"memory.{at}per_rank.activation_bytes",
            b.activation,
            variant="estimate",
            source=assumed(
                "profile_run peak (vllm gpu_model_runner.profile_run): forward over max_num_batched_tokens, "
                f"then _dummy_sampler_run over max_num_seqs at {sampler_bytes_per_logit(serving, stack)} B per "
                f"logit ({engine_label})"
            ),
            max_num_batched_tokens=serving.max_num_batched_tokens,
            hidden_size=model.hidden_size,
            activation_dtype_bytes=ACTIVATION_DTYPE_BYTES,
            hidden_tensors=ACTIVATION_HIDDEN_TENSORS,
            copies_per_routed_expert=ACTIVATION_MOE_COPIES_PER_EXPERT,
            experts_per_token=experts_per_token,
            max_num_seqs=serving.max_num_seqs,
            vocab_size=model.vocab_size,
            sampler_bytes_per_logit=sampler_bytes_per_logit(serving, stack),
            forward_bytes=b.forward,
            sampler_bytes=b.sampler,
            stages_before_last_bytes=stages_before_last,
        )
    else:
        book.put(
            f"memory.{at}per_rank.activation_bytes",
            b.activation,
            variant="typed",
            source=typed("serving.activation_bytes"),
            activation_bytes=serving.activation_bytes,
            max_num_batched_tokens=serving.max_num_batched_tokens,
            hidden_size=model.hidden_size,
            experts_per_token=experts_per_token,
            max_num_seqs=serving.max_num_seqs,
            vocab_size=model.vocab_size,
            forward_bytes=b.forward,
            sampler_bytes=b.sampler,
            stages_before_last_bytes=stages_before_last,
        )


def _buffer_figures(book: FigureBook, req: PlanRequest, at: str, p: ParallelSpec, b: _Budget) -> None:
    """Put the communication buffers and the runtime's non-torch memory per rank: as typed, HCCL's on
    Ascend, else NCCL's."""
    model, serving = req.model, req.serving
    stack = req.server.accelerator.software_stack
    names = ", ".join(name for name, _ in communicators(p, model, stack)) or "none"
    buffer_source = (
        public(HCCL_SOURCE)
        if stack == "ascend"
        else assumed(f"NCCL buffers from public start-up logs: {runtime_terms(serving.vllm_version).source}")
    )
    if serving.comm_buffer_groups is not None:
        book.put(
            f"memory.{at}per_rank.buffer_bytes",
            b.buffers,
            variant="typed",
            source=buffer_source,
            comm_buffer_mb=serving.comm_buffer_mb,
            comm_buffer_groups=serving.comm_buffer_groups,
            non_torch_bytes=b.non_torch,
            communicators=names,
            communication_bytes=b.comm,
        )
    elif stack == "ascend":
        group_mb, mc2_groups, _nccl = _communicator_terms(p, model, stack)
        book.put(
            f"memory.{at}per_rank.buffer_bytes",
            b.buffers,
            variant="hccl",
            source=buffer_source,
            buffers_per_communicator=HCCL_BUFFERS_PER_COMMUNICATOR,
            group_buffer_mb=group_mb,
            mc2_groups=mc2_groups,
            comm_buffer_mb=serving.comm_buffer_mb,
            non_torch_bytes=b.non_torch,
            communicators=names,
            communication_bytes=b.comm,
        )
    else:
        _mb, _mc2, nccl = _communicator_terms(p, model, stack)
        book.put(
            f"memory.{at}per_rank.buffer_bytes",
            b.buffers,
            variant="nccl",
            source=buffer_source,
            nccl_communicators=nccl,
            bytes_per_communicator=nccl_bytes_per_communicator(serving),
            non_torch_bytes=b.non_torch,
            communicators=names,
            comm_buffer_mb=serving.comm_buffer_mb,
            communication_bytes=b.comm,
        )


def _graph_and_kv_cache_figures(
    book: FigureBook, req: PlanRequest, at: str, b: _Budget, rules: BudgetRules, engine_label: str
) -> None:
    """Put the graph memory per rank (typed, none, or the targeted engine's estimate), the KV cache
    left of the usable memory, and the memory vLLM leaves free."""
    serving = req.serving
    if serving.graph_memory_bytes is not None:
        book.put(
            f"memory.{at}per_rank.graph_bytes",
            b.graph,
            variant="typed",
            source=typed("serving.graph_memory_bytes"),
            graph_memory_bytes=serving.graph_memory_bytes,
            engine=engine_label,
            eager=b.eager,
        )
    elif b.graph == 0:
        book.put(
            f"memory.{at}per_rank.graph_bytes",
            b.graph,
            variant="none",
            source=public("--enforce-eager: no graphs captured" if b.eager else rules.graphs_source),
            engine=engine_label,
            eager=b.eager,
        )
    else:
        piecewise, full, per_graph = b.graph_terms
        book.put(
            f"memory.{at}per_rank.graph_bytes",
            b.graph,
            variant="estimate",
            source=public(f"{GRAPH_DESCRIPTOR_SOURCE}; {rules.graphs_source}"),
            piecewise_graphs=piecewise,
            full_graphs=full,
            bytes_per_graph=per_graph,
            engine=engine_label,
            eager=b.eager,
        )
    book.put(
        f"memory.{at}per_rank.kv_cache_bytes",
        b.kv_cache,
        source=public(VLLM_WORKER),
        usable=b.usable,
        weights=b.weights,
        activations=b.activation,
        buffers=b.buffers,
        graphs=b.graph,
    )
    book.put(f"memory.{at}per_rank.free_bytes", b.device - b.usable, device=b.device, usable=b.usable)


def _kv_token_figures(
    book: FigureBook, req: PlanRequest, at: str, p: ParallelSpec, b: _Budget, draft: SpeculatorSpec | None
) -> None:
    """Put the KV-cache bytes per token per rank (DSA's latent and indexer, else GQA and MLA) and, with
    a separate draft, the draft's share of them."""
    model, serving = req.model, req.serving
    stack = req.server.accelerator.software_stack
    dtype = kv_dtype_bytes(serving.kv_cache_dtype)
    if model.index_head_dim > 0 and model.mla_layers:
        dsa = dsa_layer_bytes(
            engine_for(stack, serving.engine),
            serving.vllm_version,
            model.kv_lora_rank,
            model.qk_rope_head_dim,
            model.index_head_dim,
            dtype,
        )
        book.put(
            f"memory.{at}per_rank.kv_bytes_per_token",
            b.bpt,
            variant="dsa",
            source=public(dsa.rule),
            gqa_layers=model.gqa_layers,
            kv_heads=model.num_kv_heads,
            head_dim=model.head_dim,
            tp=p.tp,
            mla_layers=model.mla_layers,
            latent_bytes=dsa.latent,
            indexer_bytes=dsa.indexer,
            dtype_bytes=dtype,
            pp=p.pp,
            draft_kv_bytes_per_token=b.draft_bpt,
        )
    else:
        book.put(
            f"memory.{at}per_rank.kv_bytes_per_token",
            b.bpt,
            variant="dense",
            source=public("docs/domain.md §6; vLLM attention / MLA KV specs"),
            gqa_layers=model.gqa_layers,
            kv_heads=model.num_kv_heads,
            head_dim=model.head_dim,
            tp=p.tp,
            mla_layers=model.mla_layers,
            kv_lora_rank=model.kv_lora_rank,
            qk_rope_head_dim=model.qk_rope_head_dim,
            dtype_bytes=dtype,
            pp=p.pp,
            draft_kv_bytes_per_token=b.draft_bpt,
        )
    if draft is not None:
        if draft.num_kv_heads > 0:
            book.put(
                f"memory.{at}per_rank.draft_kv_bytes_per_token",
                b.draft_bpt,
                variant="gqa",
                source=public(draft.source or draft.name),
                draft_layers=draft.num_layers,
                draft_kv_heads=draft.num_kv_heads,
                draft_head_dim=draft.head_dim,
                tp=p.tp,
                dtype_bytes=dtype,
            )
        else:
            book.put(
                f"memory.{at}per_rank.draft_kv_bytes_per_token",
                b.draft_bpt,
                variant="target_layer",
                source=public(draft.source or draft.name),
                draft_layers=draft.num_layers,
                target_layer_kv_bytes=b.draft_bpt // max(1, draft.num_layers),
            )


def _kv_pool_figures(book: FigureBook, req: PlanRequest, at: str, p: ParallelSpec, b: _Budget) -> None:
    """Put what a running sequence holds beside its tokens (linear-attention and sliding-window state)
    and the tokens the KV pool holds (by KV-cache group when layers of several kinds share it)."""
    model, serving = req.model, req.serving
    dtype = kv_dtype_bytes(serving.kv_cache_dtype)
    block = b.block
    book.put(
        f"memory.{at}per_rank.state_bytes_per_seq",
        b.state + b.window,
        linear_layers=model.linear_layers,
        linear_num_heads=model.linear_num_heads,
        linear_head_dim=model.linear_head_dim,
        state_dtype_bytes=model.linear_state_dtype_bytes,
        conv_kernel=model.linear_conv_kernel,
        conv_dim=model.linear_conv_dim,
        conv_dtype_bytes=model.linear_conv_dtype_bytes,
        tp=p.tp,
        pp=p.pp,
        sliding_layers=model.sliding_layers,
        sliding_window=model.sliding_window,
        max_model_len=serving.max_model_len,
        block_size=block,
        sliding_kv_bytes_per_token=2 * kv_heads_per_rank(model, p.tp) * model.head_dim * dtype,
    )
    if b.groups:
        book.put(
            f"memory.{at}per_rank.kv_tokens",
            b.kv_tokens,
            variant="groups",
            source=public(
                "vLLM kv_cache_utils.py _get_kv_cache_groups_uniform_page_size / get_kv_cache_config / "
                "_report_kv_cache_config: one pool shared by the KV-cache groups"
            ),
            kv_cache_bytes=b.kv_cache,
            layer_kv_bytes_per_token=b.layer_bpt,
            block_size=block,
            group_size=b.group_size,
            groups=b.groups,
        )
    else:
        book.put(
            f"memory.{at}per_rank.kv_tokens",
            b.kv_tokens,
            variant="uniform",
            source=public("vLLM num_blocks × block_size"),
            kv_cache_bytes=b.kv_cache,
            kv_bytes_per_token=b.bpt,
            block_size=block,
        )


def _group_total_figures(
    book: FigureBook, req: PlanRequest, at: str, g: GroupLayout, b: _Budget, gm: GroupMemory
) -> None:
    """Put the KV tokens and full-length sequences per DP rank, the tokens the request asks each to
    hold, and the group's weights and KV cache over all its devices."""
    serving, p = req.serving, g.parallel
    block = b.block
    book.put(
        f"memory.{at}kv_tokens_per_dp_rank", gm.kv_tokens_per_dp_rank, kv_tokens_per_rank=b.kv_tokens, tp=p.tp
    )
    book.put(
        f"memory.{at}full_len_seqs_per_dp_rank",
        gm.full_len_seqs_per_dp_rank,
        kv_cache_bytes=b.kv_cache,
        max_model_len=serving.max_model_len,
        block_size=block,
        kv_bytes_per_token=b.bpt,
        state_bytes_per_seq=b.state + b.window,
    )
    book.put(
        f"memory.{at}requested_tokens_per_dp_rank",
        serving.max_num_seqs * serving.max_model_len,
        max_num_seqs=serving.max_num_seqs,
        max_model_len=serving.max_model_len,
    )
    book.put(
        f"memory.{at}cluster_weights_bytes",
        gm.cluster_weights_bytes,
        weights_per_rank=b.weights,
        devices=g.devices,
    )
    book.put(
        f"memory.{at}cluster_kv_bytes",
        gm.cluster_kv_bytes,
        kv_cache_per_rank=max(b.kv_cache, 0),
        devices=g.devices,
    )


def _replicated_check(req: PlanRequest, groups: Sequence[ReplicatedGroup], rank: RankMemory) -> Check:
    """Say in the plan which weights the platform keeps whole on every rank, and why."""
    names_en = {
        "router": "MoE router",
        "latent_moe": "latent-MoE projections",
        "mla_a": "MLA q/kv down-projection",
        "kda_f_a": "KDA forget-gate projection",
    }
    names_zh = {
        "router": "专家路由",
        "latent_moe": "潜空间专家投影",
        "mla_a": "潜在注意力降维投影",
        "kda_f_a": "线性注意力遗忘门投影",
    }
    what_en = ", ".join(names_en.get(g.group, g.group) for g in groups)
    what_zh = "、".join(names_zh.get(g.group, g.group) for g in groups)
    platform = "vLLM-Ascend" if req.server.accelerator.software_stack == "ascend" else "vLLM"
    return raise_(
        "memory.replicated_weights",
        figures={g.group: g.loaded_bytes for g in groups} | {"sources": sorted({g.source for g in groups})},
        platform=platform,
        what_en=what_en,
        replicated_weights_bytes=rank.replicated_weights_bytes,
        what_zh=what_zh,
    )


# --------------------------------------------------------------------------- entry point


def _size_groups(
    req: PlanRequest, layout: LayoutResult
) -> tuple[
    list[GroupMemory],
    dict[tuple[ParallelSpec, bool], tuple[_Budget, RankMemory]],
    dict[tuple[int, ParallelSpec, str], list[GroupLayout]],
]:
    """Each group's per-rank memory (no checks, no figures): what size_admission's first sizing reads."""
    groups: list[GroupMemory] = []
    computed: dict[tuple[ParallelSpec, bool], tuple[_Budget, RankMemory]] = {}
    signatures: dict[tuple[int, ParallelSpec, str], list[GroupLayout]] = {}
    for g in layout.groups:
        p = g.parallel
        key = (p, g.role == "prefill")
        if key not in computed:
            b = _Budget(role_request(req, g.role), p, g.role)
            computed[key] = (b, b.rank_memory())
        b, rank = computed[key]
        groups.append(
            GroupMemory(
                group=g.name,
                per_rank=rank,
                kv_tokens_per_dp_rank=b.kv_tokens,
                full_len_seqs_per_dp_rank=b.full_len_seqs,
                max_num_seqs_fit=b.full_len_seqs >= role_request(req, g.role).serving.max_num_seqs,
                cluster_weights_bytes=b.weights * g.devices,
                cluster_kv_bytes=max(b.kv_cache, 0) * g.devices,
            )
        )
        signatures.setdefault(group_signature(req.topology, g), []).append(g)
    return groups, computed, signatures


def size_memory(req: PlanRequest, layout: LayoutResult, *, screening: bool = False) -> MemoryResult:
    """Per-rank memory of every serving group, KV capacity and the checks vLLM would fail on.

    ``screening``: the auto-planner's first pass over a serving variant (planner/serving.py) reads the
    groups and the checks only: the per-group figures are left out (the variant it keeps is planned in
    full by ``plan()``)."""
    if req.serving.max_num_seqs == AUTO_MAX_NUM_SEQS:  # plan() resolves it first; a direct caller here
        req = size_admission(req, layout)
    checks: list[Check] = _model_checks(req)
    book = FigureBook()
    groups, computed, signatures = _size_groups(req, layout)

    for i, ((_nodes, p, _side), members) in enumerate(signatures.items()):
        g = members[0]
        b = computed[(p, g.role == "prefill")][0]
        gm = next(x for x in groups if x.group == g.name)
        role_req = role_request(req, g.role)
        checks.extend(_group_checks(role_req, [m.name for m in members], g, b))
        if not screening:
            _group_figures(book, role_req, "" if i == 0 else f"{g.name}.", g, b, gm)

    if groups:
        total_weights = sum(x.cluster_weights_bytes for x in groups)
        book.put(
            "memory.deployment_weights_bytes",
            total_weights,
            group_weights={x.group: x.cluster_weights_bytes for x in groups},
        )
    ck = req.checkpoint
    expert_total, non_expert_total, _vision = _weight_parts(req)
    checkpoint_bytes = expert_total + non_expert_total
    book.put(
        "memory.checkpoint_bytes",
        checkpoint_bytes,
        source=public(ck.source or ck.name) if ck else DERIVED_MODEL,
        checkpoint=ck.name if ck else req.model.name,
        expert_bytes=expert_total,
        non_expert_bytes=non_expert_total,
    )
    groups_rep = replicated_groups(ck, req.server.accelerator.software_stack)
    if groups_rep and groups:
        checks.append(_replicated_check(req, groups_rep, groups[0].per_rank))
    return MemoryResult(
        tuple(groups),
        book.figures,
        tuple(checks),
        checkpoint_slug=ck.slug if ck else "",
        checkpoint_bytes=checkpoint_bytes,
    )


def group_memory(result: MemoryResult, name: str) -> GroupMemory:
    """The GroupMemory of the group called ``name`` (KeyError when absent)."""
    for gm in result.groups:
        if gm.group == name:
            return gm
    raise KeyError(name)


__all__ = [
    "activation_estimate",
    "group_memory",
    "hybrid_kv_tokens",
    "kv_bytes_per_token",
    "kv_cache_groups",
    "kv_dtype_bytes",
    "kv_heads_per_rank",
    "linear_state_bytes_per_seq",
    "size_memory",
    "sliding_window_bytes_per_seq",
    "weights_per_rank",
]


# --------------------------------------------------------------------------- admission: max_num_seqs
## ``max_num_seqs`` sized to what the KV cache holds: the setting a request leaves to the defaults.
#
# vLLM's ``--max-num-seqs`` caps the running batch of one engine (``vllm/v1/core/sched/scheduler.py``:
# ``len(self.running) == self.max_num_running_reqs`` stops admitting); a request it does not admit
# waits.  An operator sets it to what the engine carries at the workload's lengths, not to a recipe's
# example batch (the Kimi K3 Atlas A3 tutorial's 16, the Hopper profile's 5): so a request that states
# no ``serving.max_num_seqs`` gets ``AUTO`` (0) from the serving defaults, and :func:`size_admission`
# resolves it, before the memory is sized, to
#
#     min(sequences of input + output tokens one DP rank's KV cache holds,
#         max_num_batched_tokens ÷ (1 + speculative tokens))
#
# — the two bounds the design point's search stops at (``performance/design.py``: ``kv`` and
# ``batch``).  The KV cache is read from a first memory sizing at :data:`PROVISIONAL` sequences (the
# memory depends on the setting only through the sampler warm-up and the graph capture sizes), the
# smallest over the groups whose engines take the setting.  The design point is then searched within
# the setting (``design.free_models``) and the launch bundle runs its sequences per DP rank
# (``launch/build.py``), so the capacity the plan sells is the one the engines admit; a stated setting
# is kept and the capacity computed for it.

AUTO = AUTO_MAX_NUM_SEQS
PROVISIONAL = 16  # ServingSpec's own default, the first sizing's setting


def seqs_fit(gm: GroupMemory | None, context_tokens: int, block_size: int, max_num_seqs: int) -> int:
    """Sequences of ``context_tokens`` one DP rank's KV budget holds (per rank figures, vLLM blocks)."""
    if gm is None:
        return max_num_seqs
    rank = gm.per_rank
    if rank.kv_cache_bytes <= 0:
        return 0
    blocks = math.ceil(context_tokens / block_size) if block_size > 0 else 0
    per_seq = blocks * block_size * rank.kv_bytes_per_token + rank.state_bytes_per_seq
    if per_seq <= 0:
        return max_num_seqs
    return rank.kv_cache_bytes // per_seq


def is_auto(req: PlanRequest) -> bool:
    return req.serving.max_num_seqs == AUTO


def with_max_num_seqs(req: PlanRequest, value: int) -> PlanRequest:
    return dataclasses.replace(req, serving=dataclasses.replace(req.serving, max_num_seqs=value))


def auto(req: PlanRequest) -> PlanRequest:
    """``req`` with its shared ``max_num_seqs`` left to :func:`size_admission`."""
    return req if is_auto(req) else with_max_num_seqs(req, AUTO)


def admitted(req: PlanRequest, layout: LayoutResult, memory: MemoryResult) -> int:
    """The sequences per DP rank an ``AUTO`` setting resolves to, read from ``memory`` (above)."""
    w, serving = req.workload, req.serving
    context = min(max(0, w.input_tokens) + max(1, w.output_tokens), serving.max_model_len)
    block = block_size_for(serving, req.server.accelerator.software_stack)
    by_name = {g.group: g for g in memory.groups}
    fits = [
        seqs_fit(by_name.get(g.name), context, block, PROVISIONAL)
        for g in layout.groups
        if role_serving(serving, g.role).max_num_seqs == AUTO
    ]
    decoding = role_serving(serving, decode_role(req))
    cap = batch_cap(decoding.max_num_batched_tokens, req.performance.speculative_tokens)
    return max(1, min([*fits, cap]))


def size_admission(req: PlanRequest, layout: LayoutResult) -> PlanRequest:
    """``req`` with an ``AUTO`` ``max_num_seqs`` resolved (above); any other request as it is."""
    if not is_auto(req):
        return req
    probe = with_max_num_seqs(req, PROVISIONAL)
    groups, _, _ = _size_groups(probe, layout)  # the per-rank figures only: no checks or figure book
    return with_max_num_seqs(req, admitted(req, layout, MemoryResult(tuple(groups))))
