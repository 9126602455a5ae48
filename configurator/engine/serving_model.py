"""Step-time, queueing and calibration constants of the serving-performance model.

Pure arithmetic used by :mod:`configurator.engine.performance` (which turns the
numbers into explained figures and checks).  Everything is per DP rank (one
engine of TP devices) and in seconds / bytes.  The method and the fit against
published measurements are documented in ``docs/performance.md``.

Decode step (one forward pass of the running batch)::

    step = overhead + max(memory_time, compute_time) + communication
    memory_time  = bytes read ÷ (HBM bandwidth × bandwidth_efficiency)
    compute_time = 2 × active params × tokens ÷ TP ÷ (dense TFLOPS at the
                   checkpoint's activation precision × compute_efficiency)
    communication = TP all-reduces + EP dispatch/combine, each
                    latency + bytes ÷ bandwidth of the fabric it crosses

Bytes read per step follow what vLLM holds on a rank (``memory.weights_per_rank``):
non-expert weights ÷ TP; routed experts ÷ EP with expert parallelism, else ÷ TP
(vLLM shards every expert's weights over the TP group when EP is off,
``vllm/model_executor/layers/fused_moe/layer.py`` on ``main``); only the experts
the step's tokens touch are read.

Speculative decoding (MTP / EAGLE, ``--speculative-config num_speculative_tokens``)
verifies ``1 + k`` tokens per sequence per step and emits on average
``(1 − a^(k+1)) ÷ (1 − a)`` of them for a per-token acceptance rate ``a``
(vLLM's rejection sampler stops at the first rejected draft token,
``vllm/v1/sample/rejection_sampler.py`` on ``main``).

Load (closed loop, as ``vllm bench serve --max-concurrency`` drives a server):
``C`` users each send the next request as soon as the previous one ends.  A DP
rank runs ``B = min(C ÷ DP, slots)`` sequences; with chunked prefill it spends
``B × prefill + (output ÷ tokens per step) × step`` seconds per ``B`` requests, so
``X = B ÷ that`` requests/s (Little's law).  Users beyond the slots wait:
by the interactive response-time law ``W = C ÷ X − R``.  Disaggregated prefill is
an M/D/c queue (c = prefill DP ranks, deterministic service = prefill time),
approximated by Allen–Cunneen: ``Wq ≈ Erlang-C(c, ρ) ÷ (c·μ − λ) × (1 + 0) ÷ 2``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .types import ERROR_BAND_HIGH as ERROR_BAND_HIGH
from .types import ERROR_BAND_LOW as ERROR_BAND_LOW
from .types import ModelSpec, PlanRequest, ServerSpec

# --------------------------------------------------------------------------- calibrated constants


@dataclass(frozen=True)
class PlatformFactors:
    """Efficiency factors of one software stack, fitted to published measurements."""

    bandwidth_efficiency: float  # achieved ÷ peak HBM bandwidth in decode
    compute_efficiency: float  # achieved ÷ peak dense TFLOPS (prefill and large decode batches)
    step_overhead_s: float  # fixed per forward pass: kernel launch, scheduler, sampling
    collective_latency_s: float  # fixed cost of one collective (all-reduce, dispatch or combine)
    prefill_efficiency: float  # achieved ÷ peak dense TFLOPS in prefill (MFU)
    request_overhead_s: float  # per request before the first token: API server, tokenizer, scheduling
    inter_node_latency_factor: float = 3.0  # a collective that crosses nodes costs this many latencies


# Fitted by ``scripts/fit_performance.py`` to ``tests/data/serving_benchmarks.yaml``
# (least squares on log(predicted ÷ measured)); see docs/performance.md for the table.
PLATFORM_FACTORS: dict[str, PlatformFactors] = {
    # bandwidth, decode compute, step overhead, collective latency, prefill MFU, request overhead,
    # cross-node latency factor
    "cuda": PlatformFactors(0.58, 0.45, 0.0019, 17.6e-6, 0.61, 0.28, 8.4),
    "ascend": PlatformFactors(0.43, 0.35, 0.0130, 56e-6, 0.10, 0.65, 3.3),
}
DEFAULT_STACK = "cuda"

# Eager mode (``--enforce-eager``; no CUDA graph / ACL graph / TorchAir capture): every operator of
# every layer is dispatched from the host each step.  Assumed dispatch cost per layer (≈ 30 kernels
# × host launch latency: ≈ 5 µs on CUDA, ≈ 20 µs on Ascend); not in the calibration set, whose runs
# all use graph mode.  Added to the step overhead when ``performance.graph_mode`` is false.
EAGER_LAYER_OVERHEAD_S = {"cuda": 0.15e-3, "ascend": 0.6e-3}

# Residual spread of the fit (predicted ÷ measured throughput over the calibration set):
# the band shown beside every estimate, ERROR_BAND_LOW / ERROR_BAND_HIGH.  Updated with the fit, in
# types.py (PerformanceResult's default band; imported above).

# P90 ÷ mean of TPOT at steady load (InferenceX DeepSeek-R1 H200 sweep, conc 8–64:
# P99 ÷ mean 1.07–1.12; P90 sits below that).
TPOT_P90_OVER_MEAN = 1.08
# Waiting time of a saturated queue is close to exponential: P50 = ln 2 × mean, P90 = ln 10 × mean.
WAIT_P50_OVER_MEAN = math.log(2)
WAIT_P90_OVER_MEAN = math.log(10)
# Time to first token at light load has its own spread (routing, batch position):
# P90 ÷ mean of TTFT at concurrency 8 in the same sweep is far above 1; we keep a modest 1.3.
TTFT_P90_OVER_MEAN_IDLE = 1.3

ACTIVATION_COMM_BYTES = 2  # TP all-reduce and EP combine carry BF16 activations
DISPATCH_BYTES_8BIT = 1  # EP dispatch in FP8/INT8 when the checkpoint computes in 8 bits


def factors_for(server: ServerSpec) -> PlatformFactors:
    return PLATFORM_FACTORS.get(server.accelerator.software_stack, PLATFORM_FACTORS[DEFAULT_STACK])


# --------------------------------------------------------------------------- helpers


def accepted_tokens_per_step(draft_tokens: int, acceptance: float) -> float:
    """Expected tokens emitted per sequence per step with ``draft_tokens`` drafts."""
    k = max(0, int(draft_tokens))
    a = min(max(acceptance, 0.0), 1.0)
    if k == 0:
        return 1.0
    if a >= 1.0:
        return float(k + 1)
    return (1.0 - a ** (k + 1)) / (1.0 - a)


def tflops_for(server: ServerSpec, activation_format: str) -> tuple[float, str]:
    """Dense TFLOPS per device at the checkpoint's activation precision, else BF16.

    8-bit activations on an accelerator without FP8 (the Ascend 910B/910C): vLLM-Ascend serves
    the INT8-activation release of such models (W8A8 / W4A8 made with msModelSlim, e.g.
    Eco-Tech/Kimi-K3-w4a8 in vllm-ascend ``docs/source/tutorials/models/Kimi-K3.md`` on ``main``),
    so the INT8 rate applies.
    """
    table = server.accelerator.tflops
    fmt = (activation_format or "").lower()
    candidates = [fmt]
    if fmt.startswith("mx"):
        candidates.append(fmt[2:])  # mxfp8 → fp8
    if fmt in ("w8a8", "w4a8") or (
        server.accelerator.software_stack == "ascend" and fmt in ("fp8", "mxfp8", "nvfp8")
    ):
        candidates.append("int8")
    candidates += ["bf16", "fp16"]
    for name in candidates:
        if name and table.get(name, 0) > 0:
            return float(table[name]), name
    return 0.0, ""


def intra_node_bytes_s(server: ServerSpec) -> float:
    """One direction of a device's scale-up link (catalog figures are bidirectional)."""
    gbps = server.scale_up_bandwidth_gbps or 0.0
    if gbps <= 0:
        return 64e9  # PCIe Gen5 x16, one direction
    return gbps * 1e9 / 8 / 2


def inter_node_bytes_s_per_device(server: ServerSpec, *, scale_up_allowed: bool = True) -> tuple[float, str]:
    """Bytes/s one device can send to other nodes, and the fabric (super-node ports first)."""
    domain = server.scale_up_domain_devices or server.logical_devices
    devices = max(server.logical_devices, 1)
    if scale_up_allowed and domain > server.logical_devices:
        up = [
            n
            for n in server.nics
            if n.role == "scale_up" and n.fabric not in ("pcie", "hccs", "nvlink", "xgmi")
        ]
        if up:
            return sum(n.count * n.speed_gbps for n in up) * 1e9 / 8 / devices, up[0].fabric
    out = [n for n in server.nics if n.role == "scale_out"]
    if out:
        return sum(n.count * n.speed_gbps for n in out) * 1e9 / 8 / devices, out[0].fabric
    return 8 * 400e9 / 8 / devices, "roce"


def experts_touched(model: ModelSpec, tokens: float) -> float:
    """Expected share of a rank's routed experts that ``tokens`` routed tokens touch."""
    if not model.is_moe or model.num_experts <= 0:
        return 1.0
    p = min(1.0, model.experts_per_token / model.num_experts)
    return 1.0 - (1.0 - p) ** max(tokens, 1.0)


def attention_layers(model: ModelSpec) -> int:
    return model.gqa_layers + model.mla_layers + model.sliding_layers or model.num_layers


def attention_flops_per_token(model: ModelSpec, context: float) -> float:
    """Score and value products of one token against ``context`` earlier tokens, all layers."""
    head_dim = model.head_dim or (model.hidden_size // max(model.num_attention_heads, 1))
    full = model.gqa_layers + model.mla_layers or (0 if model.linear_layers else model.num_layers)
    window = min(context, model.sliding_window) if model.sliding_window else context
    return 4.0 * model.num_attention_heads * head_dim * (full * context + model.sliding_layers * window)


# --------------------------------------------------------------------------- step model


@dataclass(frozen=True)
class GroupShape:
    """What the step model needs to know about one serving group."""

    tp: int
    dp: int
    ep: int
    expert_parallel: bool
    nodes: int
    devices_per_node: int


@dataclass(frozen=True)
class StepBreakdown:
    weights_bytes: float
    experts_touched: float
    kv_bytes: float
    memory_s: float
    compute_s: float
    tp_allreduce_s: float
    ep_dispatch_combine_s: float
    overhead_s: float
    draft_s: float
    step_s: float
    tokens_per_step: float  # per sequence, after speculative acceptance
    fabric: str
    comm: CommParts | None = None  # what the collectives were computed from
    attention_flops_per_token: float = 0.0  # at the mean context

    @property
    def tpot_s(self) -> float:
        return self.step_s / self.tokens_per_step if self.tokens_per_step > 0 else self.step_s


def _tp_fabric(server: ServerSpec, shape: GroupShape) -> tuple[float, str]:
    if shape.tp <= shape.devices_per_node:
        return intra_node_bytes_s(server), server.scale_up_fabric
    bw, fabric = inter_node_bytes_s_per_device(server)
    return bw, fabric


@dataclass(frozen=True)
class CommParts:
    """The numbers one step's collectives are computed from (the step figures name them)."""

    tokens: float  # tokens on the DP rank in this pass
    all_reduces: int  # TP all-reduces per pass (0 at TP 1)
    tp_latency_factor: float  # serving_model's inter-node latency factor when TP spans nodes, else 1
    tp_latency_s: float  # fixed latency of one all-reduce: collective latency × tp_latency_factor
    tp_link_bytes_s: float  # one direction of the link a TP all-reduce crosses
    ep_layers: int  # MoE layers with an EP dispatch and combine (0 without expert parallelism)
    ep_latency_s: float  # fixed latency of one dispatch or combine
    dispatch_bytes: int  # per hidden element dispatched
    combine_bytes: int  # per hidden element combined
    scale_up_bytes_s: float  # intra-node link, one direction
    scale_out_bytes_s: float  # per device to other nodes (before the scale-out efficiency)
    cross_node: float  # share of the EP traffic that leaves the node: (nodes − 1) ÷ nodes


def comm_parts(
    model: ModelSpec,
    server: ServerSpec,
    shape: GroupShape,
    tokens_rank: float,
    f: PlatformFactors,
    *,
    eight_bit: bool,
) -> tuple[CommParts, str, str]:
    """The parts of :func:`comm_times` and the TP and EP fabrics."""
    tp_fabric = server.scale_up_fabric
    layers = model.num_layers
    moe_layers = model.moe_layers if model.is_moe else 0
    use_ep = model.is_moe and shape.expert_parallel and shape.ep > 1
    all_reduces = 0
    tp_latency_factor = 1.0
    tp_bw = intra_node_bytes_s(server)
    if shape.tp > 1:
        tp_bw, tp_fabric = _tp_fabric(server, shape)
        # Dense path: attention and MLP outputs each end in an all-reduce; with EP the MoE
        # output is combined by the all-to-all instead (one all-reduce per MoE layer).
        all_reduces = 2 * layers - (moe_layers if use_ep else 0)
        tp_latency_factor = f.inter_node_latency_factor if shape.tp > shape.devices_per_node else 1.0
    inter, inter_fabric = inter_node_bytes_s_per_device(server)
    cross_node = (shape.nodes - 1) / shape.nodes if shape.nodes > 1 else 0.0
    parts = CommParts(
        tokens=tokens_rank,
        all_reduces=all_reduces,
        tp_latency_factor=tp_latency_factor,
        tp_latency_s=f.collective_latency_s * tp_latency_factor,
        tp_link_bytes_s=tp_bw,
        ep_layers=moe_layers if use_ep else 0,
        ep_latency_s=f.collective_latency_s * (f.inter_node_latency_factor if cross_node else 1.0),
        dispatch_bytes=DISPATCH_BYTES_8BIT if eight_bit else ACTIVATION_COMM_BYTES,
        combine_bytes=ACTIVATION_COMM_BYTES,
        scale_up_bytes_s=intra_node_bytes_s(server),
        scale_out_bytes_s=inter,
        cross_node=cross_node,
    )
    return parts, tp_fabric, inter_fabric


def comm_times(
    model: ModelSpec,
    server: ServerSpec,
    shape: GroupShape,
    tokens_rank: float,
    f: PlatformFactors,
    *,
    eight_bit: bool,
    scale_out_efficiency: float,
) -> tuple[float, float, str]:
    """(TP all-reduce time, EP dispatch + combine time, fabric) for ``tokens_rank`` tokens on a rank."""
    tp_s, ep_s, fabric, _ = _comm(
        model, server, shape, tokens_rank, f, eight_bit=eight_bit, scale_out_efficiency=scale_out_efficiency
    )
    return tp_s, ep_s, fabric


def _comm(
    model: ModelSpec,
    server: ServerSpec,
    shape: GroupShape,
    tokens_rank: float,
    f: PlatformFactors,
    *,
    eight_bit: bool,
    scale_out_efficiency: float,
) -> tuple[float, float, str, CommParts]:
    c, tp_fabric, inter_fabric = comm_parts(model, server, shape, tokens_rank, f, eight_bit=eight_bit)
    tp_s = ep_s = 0.0
    fabric = server.scale_up_fabric
    if shape.tp > 1:
        fabric = tp_fabric
        payload = tokens_rank * model.hidden_size * ACTIVATION_COMM_BYTES
        per = c.tp_latency_s + 2 * (shape.tp - 1) / shape.tp * payload / c.tp_link_bytes_s
        tp_s = c.all_reduces * per
    if c.ep_layers:
        intra = c.scale_up_bytes_s
        inter = c.scale_out_bytes_s * scale_out_efficiency
        remote = (shape.ep - 1) / shape.ep
        cross_node = c.cross_node
        per_token = model.experts_per_token * model.hidden_size
        # The TP ranks of a DP rank each dispatch their slice of its tokens (sequence-parallel MoE,
        # FlashComm on Ascend), so one device sends tokens ÷ TP.
        tokens_device = tokens_rank / shape.tp
        dispatch = tokens_device * per_token * c.dispatch_bytes
        combine = tokens_device * per_token * c.combine_bytes
        moved = (dispatch + combine) * remote
        transfer = moved * (1 - cross_node) / intra + moved * cross_node / inter
        ep_s = c.ep_layers * (2 * c.ep_latency_s + transfer)
        if cross_node:
            fabric = inter_fabric
    return tp_s, ep_s, fabric, c


def decode_step(
    model: ModelSpec,
    server: ServerSpec,
    shape: GroupShape,
    f: PlatformFactors,
    *,
    batch: float,
    mean_context: float,
    kv_bytes_per_token: int,
    state_bytes_per_seq: int,
    lm_non_expert_bytes: float,
    tflops: float,
    draft_tokens: int,
    acceptance: float,
    eight_bit: bool,
    scale_out_efficiency: float,
) -> StepBreakdown:
    """Time of one decode step of ``batch`` sequences on one DP rank."""
    b = max(batch, 1.0)
    q = 1 + max(0, draft_tokens)
    tokens_rank = b * q
    non_expert = lm_non_expert_bytes / shape.tp
    touched = 1.0
    experts = 0.0
    if model.is_moe:
        if shape.expert_parallel:
            experts = model.expert_weight_bytes / max(shape.ep, 1)
            group_tokens = tokens_rank * shape.dp
        else:
            experts = model.expert_weight_bytes / shape.tp
            group_tokens = tokens_rank
        touched = experts_touched(model, group_tokens)
    weights = non_expert + touched * experts
    kv = b * (mean_context * kv_bytes_per_token + state_bytes_per_seq)
    bw = server.accelerator.memory_bandwidth_bytes_s * f.bandwidth_efficiency
    memory_s = (weights + kv) / bw if bw > 0 else 0.0
    attention = attention_flops_per_token(model, mean_context)
    flops = tokens_rank * (2 * model.active_params + attention) / shape.tp
    compute_s = flops / (tflops * 1e12 * f.compute_efficiency) if tflops > 0 else 0.0
    tp_s, ep_s, fabric, comm = _comm(
        model, server, shape, tokens_rank, f, eight_bit=eight_bit, scale_out_efficiency=scale_out_efficiency
    )
    core = f.step_overhead_s + max(memory_s, compute_s) + tp_s + ep_s
    # Each draft token runs the one-layer MTP head once (≈ one layer of the target model).
    draft_s = max(0, draft_tokens) * core / max(model.num_layers, 1)
    return StepBreakdown(
        weights_bytes=weights,
        experts_touched=touched,
        kv_bytes=kv,
        memory_s=memory_s,
        compute_s=compute_s,
        tp_allreduce_s=tp_s,
        ep_dispatch_combine_s=ep_s,
        overhead_s=f.step_overhead_s,
        draft_s=draft_s,
        step_s=core + draft_s,
        tokens_per_step=accepted_tokens_per_step(draft_tokens, acceptance),
        fabric=fabric,
        comm=comm,
        attention_flops_per_token=attention,
    )


@dataclass(frozen=True)
class PrefillBreakdown:
    compute_s: float
    memory_s: float
    comm_s: float
    overhead_s: float
    chunks: int
    prefill_s: float


def prefill_time(
    model: ModelSpec,
    server: ServerSpec,
    shape: GroupShape,
    f: PlatformFactors,
    *,
    prompt_tokens: int,
    lm_non_expert_bytes: float,
    tflops: float,
    chunk_tokens: int,
    eight_bit: bool,
    scale_out_efficiency: float,
) -> PrefillBreakdown:
    """Time to prefill one prompt on one DP rank (chunked by ``max_num_batched_tokens``)."""
    p = max(prompt_tokens, 1)
    chunks = max(1, math.ceil(p / max(chunk_tokens, 1)))
    # Causal attention: token i attends to i earlier tokens → mean context p ÷ 2.
    flops = p * (2 * model.active_params + attention_flops_per_token(model, p / 2)) / shape.tp
    compute_s = flops / (tflops * 1e12 * f.prefill_efficiency) if tflops > 0 else 0.0
    # Every chunk reads the weights the rank holds (all experts are touched by a chunk).
    if model.is_moe:
        divisor = shape.ep if shape.expert_parallel else shape.tp
        weights = lm_non_expert_bytes / shape.tp + model.expert_weight_bytes / max(divisor, 1)
    else:
        weights = lm_non_expert_bytes / shape.tp
    bw = server.accelerator.memory_bandwidth_bytes_s * f.bandwidth_efficiency
    memory_s = chunks * weights / bw if bw > 0 else 0.0
    tp_s, ep_s, _ = comm_times(
        model, server, shape, p, f, eight_bit=eight_bit, scale_out_efficiency=scale_out_efficiency
    )
    overhead = chunks * f.step_overhead_s
    total = overhead + max(compute_s, memory_s) + tp_s + ep_s
    return PrefillBreakdown(compute_s, memory_s, tp_s + ep_s, overhead, chunks, total)


# --------------------------------------------------------------------------- queueing


def erlang_c(servers: int, offered_load: float) -> float:
    """Probability an arrival waits in an M/M/c queue (offered load a = λ ÷ μ)."""
    c = max(int(servers), 1)
    a = offered_load
    if a <= 0:
        return 0.0
    if a >= c:
        return 1.0
    term = 1.0
    total = 1.0
    for k in range(1, c):
        term *= a / k
        total += term
    term *= a / c
    last = term * c / (c - a)
    return last / (total + last)


def mdc_wait(servers: int, service_s: float, arrival_per_s: float) -> float:
    """Mean queueing delay of an M/D/c queue (Allen–Cunneen: half the M/M/c delay)."""
    if service_s <= 0 or arrival_per_s <= 0:
        return 0.0
    mu = 1.0 / service_s
    c = max(int(servers), 1)
    if arrival_per_s >= c * mu:
        return math.inf
    pw = erlang_c(c, arrival_per_s / mu)
    return 0.5 * pw / (c * mu - arrival_per_s)


@dataclass(frozen=True)
class OperatingPoint:
    concurrency: float
    batch_per_rank: float
    requests_per_s: float
    output_tokens_per_s: float
    ttft_s: float
    tpot_s: float
    wait_s: float
    saturated: bool  # users beyond what the cluster serves at once (they queue)

    @property
    def ttft_p50_s(self) -> float:
        return self.ttft_s - self.wait_s + WAIT_P50_OVER_MEAN * self.wait_s

    @property
    def ttft_p90_s(self) -> float:
        base = self.ttft_s - self.wait_s
        return base * TTFT_P90_OVER_MEAN_IDLE + WAIT_P90_OVER_MEAN * self.wait_s

    @property
    def tpot_p90_s(self) -> float:
        return self.tpot_s * TPOT_P90_OVER_MEAN


def effective_factors(req: PlanRequest) -> PlatformFactors:
    """The platform's calibrated factors with the request's overrides (``performance.*``) applied."""
    base = factors_for(req.server)
    perf = req.performance
    step_overhead = (
        perf.step_overhead_ms / 1000.0 if perf.step_overhead_ms is not None else base.step_overhead_s
    )
    if not getattr(perf, "graph_mode", True):
        stack = req.server.accelerator.software_stack
        layer_cost = EAGER_LAYER_OVERHEAD_S.get(stack, EAGER_LAYER_OVERHEAD_S[DEFAULT_STACK])
        step_overhead += layer_cost * max(req.model.num_layers, 1)
    return PlatformFactors(
        bandwidth_efficiency=perf.decode_bandwidth_efficiency or base.bandwidth_efficiency,
        compute_efficiency=base.compute_efficiency,
        prefill_efficiency=perf.prefill_mfu or base.prefill_efficiency,
        request_overhead_s=base.request_overhead_s,
        step_overhead_s=step_overhead,
        collective_latency_s=base.collective_latency_s,
        inter_node_latency_factor=base.inter_node_latency_factor,
    )
