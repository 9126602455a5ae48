"""Throughput and latency ESTIMATE (roofline), to be confirmed by a load test.

Per DP rank (one engine: TP × PP logical devices), the model is:

* **decode step** (memory bound) = bytes read per step ÷ (memory bandwidth ×
  ``perf.decode_bandwidth_efficiency``) + a cross-node all-to-all term when the
  expert-parallel group spans nodes.  Bytes read per step per rank are

  - the language-model non-expert weights ÷ TP (the vision encoder does not run
    in decode),
  - the routed experts actually touched in this step: each of the B × DP tokens
    of the EP group picks ``experts_per_token`` of ``num_experts`` experts, so a
    given expert is touched with probability 1 − (1 − k/E)^(B·DP); the expected
    touched share of the rank's experts (``expert bytes ÷ EP``) is read, which is
    naturally bounded by the experts held on the rank,
  - the KV cache of the running batch (B × mean context × KV bytes per token per
    rank, mean context = input + output ÷ 2) plus the linear-attention state of
    each running sequence.

* **all-to-all** (EP dispatch + combine) per node and step =
  DP ranks per node × B × top-k × hidden × activation bytes × 2 × MoE layers ×
  (nodes − 1) ÷ nodes, over the node's inter-node bandwidth × ``scale_out_efficiency``.

* **prefill** (compute bound) per request = 2 × active params × prompt tokens
  (less prefix-cache hits) ÷ (TP × dense TFLOPS at the model's activation
  precision, else BF16 × ``perf.prefill_mfu``).  Attention's quadratic term is
  not modelled: at 1 M tokens of context the estimate is optimistic.

* **aggregated serving**: prefill and decode share a rank, so a rank finishes
  B requests per (B × prefill + output × step) seconds.
* **disaggregated serving (xPyD)**: prefill pool capacity = prefill DP ranks ÷
  prefill time; decode pool capacity = decode DP ranks × B ÷ (output × step);
  the deployment delivers the smaller of the two (the bottleneck side).

Only serving groups count toward throughput: a hot standby does not, both
tenant clusters do.  ``workload.measured_output_tokens_per_s`` (a load-test
result for the whole deployment) overrides the estimated throughput everywhere
and sets ``measured``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from .defaults import block_size_for
from .types import (
    Check,
    Figure,
    GroupLayout,
    GroupMemory,
    LayoutResult,
    MemoryResult,
    PerformanceSpec,
    PlanRequest,
    ServerSpec,
    Severity,
    Source,
    TopologyKind,
)

AREA = "performance"

# Roles that run decode and count toward the deployment's throughput (a standby does not).
COUNTED_DECODE_ROLES = frozenset({"serve", "tenant", "decode"})

ESTIMATE_NOTE_EN = (
    "Estimate from a roofline model (memory bandwidth for decode, compute for prefill); "
    "confirm with a load test on the delivered cluster before committing to figures."
)
ESTIMATE_NOTE_ZH = (
    "以上为基于 Roofline 模型的估算值（解码按显存带宽、预填充按算力），须在交付集群上压测确认后方可承诺。"
)
MEASURED_NOTE_EN = (
    "Throughput is the measured load-test figure entered for this plan; latencies remain estimates."
)
MEASURED_NOTE_ZH = "吞吐采用本方案录入的压测实测值；时延仍为估算值。"

ESTIMATE_SOURCE = Source("derived", "roofline estimate")
DEFAULT_INTERNODE_GBPS = 8 * 400  # 8 × 400GE per node when the server lists no NICs (assumed)
SCALE_UP_FABRICS_INSIDE_NODE = frozenset({"pcie", "hccs", "nvlink"})


# --------------------------------------------------------------------------- results


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
    all_to_all_s: float
    decode_step_s: float
    # prefill
    prefill_s: float  # compute time of one prompt on one DP rank
    kv_transfer_s: float  # P → D KV move per request (xPyD decode side), else 0
    # throughput (capacity of this group, estimate or scaled from the measured figure)
    requests_per_s: float
    output_tokens_per_s_per_dp_rank: float
    output_tokens_per_s: float

    @property
    def tpot_s(self) -> float:
        return self.decode_step_s


@dataclass(frozen=True)
class PdBalance:
    """Prefill vs decode capacity of an xPyD deployment."""

    prefill_requests_per_s: float
    decode_requests_per_s: float
    ratio: float  # prefill capacity ÷ decode capacity
    bottleneck: str  # prefill | decode | balanced
    suggested_prefill_nodes: int
    suggested_decode_nodes: int


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

    @property
    def is_estimate(self) -> bool:
        return not self.measured


# --------------------------------------------------------------------------- helpers


def _tflops(req: PlanRequest) -> tuple[float, str]:
    """Dense TFLOPS per logical device at the model's activation precision, else BF16."""
    table = req.server.accelerator.tflops
    fmt = (req.model.activation_format or "").lower()
    candidates = [fmt]
    if fmt.startswith("mx"):
        candidates.append(fmt[2:])  # mxfp8 → fp8
    candidates += ["bf16", "fp16"]
    for name in candidates:
        if name and table.get(name, 0) > 0:
            return float(table[name]), name
    return 0.0, ""


def _activation_bytes(fmt: str) -> int:
    fmt = fmt.lower()
    return 1 if any(tag in fmt for tag in ("fp8", "int8", "a8")) else 2


def _internode_bandwidth(
    server: ServerSpec, group_devices: int, *, scale_up_allowed: bool = True
) -> tuple[float, str, Source]:
    """Bytes/s one node can send to other nodes of its EP group, and over which fabric.

    Super-nodes (``scale_up_domain_devices`` larger than one server) reach the
    other nodes of the domain over their external scale-up ports (LingQu on the
    A3); otherwise the scale-out NICs (RoCE/InfiniBand) carry the traffic.
    """
    domain = server.scale_up_domain_devices or server.logical_devices
    if scale_up_allowed and domain > server.logical_devices and group_devices <= domain:
        up = [n for n in server.nics if n.role == "scale_up" and n.fabric not in SCALE_UP_FABRICS_INSIDE_NODE]
        if up:
            gbps = sum(n.count * n.speed_gbps for n in up)
            return gbps * 1e9 / 8, up[0].fabric, Source("derived", "server NICs (scale-up)")
    out = [n for n in server.nics if n.role == "scale_out"]
    if out:
        gbps = sum(n.count * n.speed_gbps for n in out)
        return gbps * 1e9 / 8, out[0].fabric, Source("derived", "server NICs (scale-out)")
    return DEFAULT_INTERNODE_GBPS * 1e9 / 8, "assumed 8 × 400GE", Source("assumed", "8 × 400GE per node")


def _seqs_fit(gm: GroupMemory | None, context_tokens: int, block_size: int, max_num_seqs: int) -> int:
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


class _Figures:
    """Collects explained figures under stable keys."""

    def __init__(self) -> None:
        self.items: dict[str, Figure] = {}

    def add(
        self,
        key: str,
        value: Any,
        unit: str,
        en: str,
        zh: str,
        formula: str = "",
        inputs: Mapping[str, Any] | None = None,
        source: Source = ESTIMATE_SOURCE,
    ) -> None:
        if isinstance(value, float):
            value = round(value, 6)
        self.items[key] = Figure(key, value, unit, en, zh, formula, dict(inputs or {}), source)


# --------------------------------------------------------------------------- main entry


def estimate_performance(
    req: PlanRequest, layout: LayoutResult, memory: MemoryResult | None
) -> PerformanceResult:
    """Estimate TTFT, TPOT and throughput of the deployment (an ESTIMATE; see module doc)."""
    checks: list[Check] = []
    req = _sanitised(req, checks)
    model, server, serving, workload, perf = req.model, req.server, req.serving, req.workload, req.performance
    acc = server.accelerator
    figs = _Figures()
    mem_by_group = {g.group: g for g in (memory.groups if memory else ())}

    bandwidth = acc.memory_bandwidth_bytes_s
    tflops, tflops_precision = _tflops(req)
    if bandwidth <= 0 or tflops <= 0:
        checks.append(
            Check(
                "performance.accelerator_specs_missing",
                Severity.ERROR,
                AREA,
                f"{acc.name}: memory bandwidth or TFLOPS is missing from the catalog; no performance estimate.",
                f"{acc.name}：目录中缺少显存带宽或算力（TFLOPS）数据，无法估算性能。",
                field="server.accelerator",
                fix_en="Enter the accelerator's memory bandwidth and dense TFLOPS in the catalog.",
                fix_zh="请在目录中补充该加速卡的显存带宽与稠密算力。",
            )
        )
        bandwidth = bandwidth if bandwidth > 0 else 1.0
        tflops = tflops if tflops > 0 else 1.0

    prompt_tokens = max(0, workload.input_tokens)
    hit = perf.prefix_cache_hit_rate if serving.enable_prefix_caching else 0.0
    computed_prompt_tokens = max(1, round(prompt_tokens * (1.0 - hit)))
    output_tokens = max(1, workload.output_tokens)
    context_tokens = min(prompt_tokens + output_tokens, serving.max_model_len)
    mean_context = min(prompt_tokens + output_tokens / 2, serving.max_model_len)
    act_bytes = _activation_bytes(model.activation_format)
    lm_non_expert_bytes = model.non_expert_weight_bytes - (model.vision_bytes if model.has_vision else 0)
    disaggregated = req.topology.kind == TopologyKind.DISAGGREGATED

    counted_dp = sum(g.parallel.dp for g in layout.groups if g.role in COUNTED_DECODE_ROLES)
    offered_per_rank = math.ceil(max(0, workload.concurrency) / counted_dp) if counted_dp else 0

    figs.add(
        "performance.prompt_tokens_computed",
        computed_prompt_tokens,
        "tokens",
        "Prompt tokens computed per request (after prefix-cache hits)",
        "每请求实际计算的输入 Token 数（扣除前缀缓存命中）",
        "input_tokens × (1 − prefix_cache_hit_rate)",
        {"input_tokens": prompt_tokens, "prefix_cache_hit_rate": hit},
        Source("input", "workload.input_tokens, performance.prefix_cache_hit_rate"),
    )
    figs.add(
        "performance.tflops_per_device",
        tflops,
        "TFLOPS",
        f"Dense TFLOPS per device used for prefill ({tflops_precision or 'n/a'})",
        f"预填充所用单卡稠密算力（{tflops_precision or '无'}）",
        "catalog TFLOPS at the model's activation precision, else BF16",
        {"activation_format": model.activation_format, "precision_used": tflops_precision},
        Source("derived", "accelerator catalog"),
    )

    groups: list[GroupPerformance] = []
    for g in layout.groups:
        gp = _group_estimate(
            req,
            g,
            mem_by_group.get(g.name),
            figs,
            checks,
            bandwidth=bandwidth,
            tflops=tflops,
            computed_prompt_tokens=computed_prompt_tokens,
            output_tokens=output_tokens,
            context_tokens=context_tokens,
            mean_context=mean_context,
            act_bytes=act_bytes,
            lm_non_expert_bytes=lm_non_expert_bytes,
            offered_per_rank=offered_per_rank,
            disaggregated=disaggregated,
        )
        groups.append(gp)

    # ---- deployment totals
    pd_balance: PdBalance | None = None
    prefill_groups = [g for g in groups if g.role == "prefill"]
    decode_groups = [g for g in groups if g.role == "decode"]
    counted = [g for g in groups if g.counts_toward_throughput]
    if disaggregated and prefill_groups and decode_groups:
        p_cap = sum(g.requests_per_s for g in prefill_groups)
        d_cap = sum(g.requests_per_s for g in decode_groups)
        requests_per_s = min(p_cap, d_cap)
        pd_balance = _pd_balance(p_cap, d_cap, prefill_groups, decode_groups)
        kv_transfer = decode_groups[0].kv_transfer_s
        ttft = prefill_groups[0].prefill_s + kv_transfer
        tpot = decode_groups[0].decode_step_s
        p_nodes = sum(g.nodes for g in prefill_groups)
        d_nodes = sum(g.nodes for g in decode_groups)
        prefill_share = p_nodes / (p_nodes + d_nodes)
        share_formula = "prefill nodes ÷ (prefill + decode nodes)"
        share_inputs: dict[str, Any] = {"prefill_nodes": p_nodes, "decode_nodes": d_nodes}
        _add_pd_figures(figs, checks, pd_balance, req)
    else:
        requests_per_s = sum(g.requests_per_s for g in counted)
        lead = counted[0] if counted else (groups[0] if groups else None)
        kv_transfer = 0.0
        ttft = lead.prefill_s if lead else 0.0
        tpot = lead.decode_step_s if lead else 0.0
        if lead and lead.batch_per_dp_rank > 0:
            busy_prefill = lead.batch_per_dp_rank * lead.prefill_s
            busy_decode = output_tokens * lead.decode_step_s
            prefill_share = busy_prefill / (busy_prefill + busy_decode)
        else:
            prefill_share = 0.0
        share_formula = "B × prefill_s ÷ (B × prefill_s + output_tokens × step_s)"
        share_inputs = {
            "B": lead.batch_per_dp_rank if lead else 0,
            "prefill_s": lead.prefill_s if lead else 0.0,
            "output_tokens": output_tokens,
            "step_s": lead.decode_step_s if lead else 0.0,
        }

    output_tps = requests_per_s * output_tokens
    measured = workload.measured_output_tokens_per_s is not None and workload.measured_output_tokens_per_s > 0
    estimated_output_tps = output_tps
    if measured:
        output_tps = float(workload.measured_output_tokens_per_s)
        scale = output_tps / estimated_output_tps if estimated_output_tps > 0 else 0.0
        requests_per_s = output_tps / output_tokens
        groups = [_scaled(g, scale) for g in groups]
        for g in groups:
            key = f"performance.{g.group}.output_tokens_per_s"
            if key in figs.items:
                figs.items[key] = replace(
                    figs.items[key],
                    value=round(g.output_tokens_per_s, 6),
                    formula="estimate × measured ÷ estimated deployment throughput",
                    inputs={"scale": scale},
                    source=Source("input", "workload.measured_output_tokens_per_s (load test)"),
                )
    input_tps = requests_per_s * prompt_tokens
    per_dp_rank = output_tps / counted_dp if counted_dp else 0.0
    tput_source = (
        Source("input", "workload.measured_output_tokens_per_s (load test)") if measured else ESTIMATE_SOURCE
    )

    figs.add(
        "performance.ttft_s",
        ttft,
        "s",
        "Time to first token (estimate)",
        "首字延迟 TTFT（估算）",
        "prefill_s (+ KV transfer P→D for xPyD)",
        {"prefill_s": ttft - kv_transfer, "kv_transfer_s": kv_transfer},
        ESTIMATE_SOURCE,
    )
    figs.add(
        "performance.tpot_s",
        tpot,
        "s",
        "Time per output token (estimate)",
        "每字延迟 TPOT（估算）",
        "decode step time of the serving group",
        {"decode_step_s": tpot},
        ESTIMATE_SOURCE,
    )
    figs.add(
        "performance.requests_per_s",
        requests_per_s,
        "req/s",
        "Requests per second (deployment)",
        "每秒请求数（整体）",
        "measured_output_tokens_per_s ÷ output_tokens"
        if measured
        else (
            "min(prefill capacity, decode capacity)" if pd_balance else "Σ serving groups' request capacity"
        ),
        {"output_tokens": output_tokens, "serving_groups": [g.group for g in counted]},
        tput_source,
    )
    figs.add(
        "performance.output_tokens_per_s",
        output_tps,
        "tokens/s",
        "Output throughput (deployment)",
        "输出吞吐（整体）",
        "measured" if measured else "requests_per_s × output_tokens",
        {
            "requests_per_s": requests_per_s,
            "output_tokens": output_tokens,
            "estimated_tokens_per_s": estimated_output_tps,
        },
        tput_source,
    )
    figs.add(
        "performance.input_tokens_per_s",
        input_tps,
        "tokens/s",
        "Input tokens processed per second (deployment)",
        "输入 Token 处理速率（整体）",
        "requests_per_s × input_tokens",
        {"requests_per_s": requests_per_s, "input_tokens": prompt_tokens},
        tput_source,
    )
    figs.add(
        "performance.output_tokens_per_s_per_dp_rank",
        per_dp_rank,
        "tokens/s",
        "Output throughput per serving DP rank",
        "每个 DP rank 的输出吞吐",
        "output_tokens_per_s ÷ serving DP ranks",
        {"serving_dp_ranks": counted_dp},
        tput_source,
    )
    figs.add(
        "performance.prefill_time_share",
        prefill_share,
        "fraction",
        "Share of accelerator time spent on prefill (used to split cost between input and output tokens)",
        "预填充占用的算力时间比例（用于在输入/输出 Token 间分摊成本）",
        share_formula,
        share_inputs,
    )
    figs.add(
        "performance.measured",
        measured,
        "",
        "Throughput measured by a load test",
        "吞吐为压测实测值",
        "workload.measured_output_tokens_per_s is set",
        {},
        Source("input", "workload"),
    )

    checks.extend(_target_checks(req, ttft, tpot))
    if measured:
        checks.append(
            Check(
                "performance.measured_throughput_used",
                Severity.OK,
                AREA,
                f"Measured throughput {output_tps:,.0f} tokens/s replaces the estimate "
                f"({estimated_output_tps:,.0f} tokens/s).",
                f"已采用压测实测吞吐 {output_tps:,.0f} tokens/s 替代估算值（{estimated_output_tps:,.0f} tokens/s）。",
                {"measured": output_tps, "estimated": estimated_output_tps},
                field="workload.measured_output_tokens_per_s",
            )
        )
    else:
        checks.append(
            Check(
                "performance.estimate_unconfirmed",
                Severity.OK,
                AREA,
                ESTIMATE_NOTE_EN,
                ESTIMATE_NOTE_ZH,
                {"output_tokens_per_s": output_tps},
                field="workload.measured_output_tokens_per_s",
                fix_en="Enter the load-test throughput once measured.",
                fix_zh="压测完成后录入实测吞吐。",
            )
        )

    return PerformanceResult(
        measured=measured,
        groups=tuple(groups),
        ttft_s=ttft,
        tpot_s=tpot,
        requests_per_s=requests_per_s,
        output_tokens_per_s=output_tps,
        input_tokens_per_s=input_tps,
        output_tokens_per_s_per_dp_rank=per_dp_rank,
        serving_dp_ranks=counted_dp,
        prefill_time_share=prefill_share,
        pd_balance=pd_balance,
        note_en=MEASURED_NOTE_EN if measured else ESTIMATE_NOTE_EN,
        note_zh=MEASURED_NOTE_ZH if measured else ESTIMATE_NOTE_ZH,
        figures=figs.items,
        checks=tuple(checks),
    )


_KNOBS = (
    ("decode_bandwidth_efficiency", "Decode bandwidth efficiency", "解码带宽利用率", False),
    ("prefill_mfu", "Prefill MFU", "预填充算力利用率 (MFU)", False),
    ("scale_out_efficiency", "Scale-out efficiency", "跨节点网络效率", False),
    ("prefix_cache_hit_rate", "Prefix-cache hit rate", "前缀缓存命中率", True),
)


def _sanitised(req: PlanRequest, checks: list[Check]) -> PlanRequest:
    """Refuse efficiency knobs outside their range (a check each) and estimate with the defaults."""
    default = PerformanceSpec()
    fixes: dict[str, float] = {}
    for name, en, zh, zero_ok in _KNOBS:
        value = getattr(req.performance, name)
        ok = (0.0 <= value < 1.0) if zero_ok else (0.0 < value <= 1.0)
        if not ok:
            fixes[name] = getattr(default, name)
            span = "0 to below 1" if zero_ok else "above 0 and at most 1"
            span_zh = "0 至 1（不含 1）" if zero_ok else "大于 0 且不超过 1"
            checks.append(
                Check(
                    "performance.knob_out_of_range",
                    Severity.ERROR,
                    AREA,
                    f"{en} {value} must be {span}; the estimate uses {fixes[name]} instead.",
                    f"{zh} {value} 须{span_zh}，估算暂按 {fixes[name]} 计算。",
                    {"value": value},
                    field=f"performance.{name}",
                    fix={f"performance.{name}": fixes[name]},
                    fix_en=f"Use {fixes[name]}.",
                    fix_zh=f"建议改为 {fixes[name]}。",
                )
            )
    if req.workload.concurrency < 0 or req.workload.input_tokens < 0 or req.workload.output_tokens < 0:
        checks.append(
            Check(
                "performance.workload_negative",
                Severity.ERROR,
                AREA,
                "Concurrency and token counts cannot be negative.",
                "并发数与 Token 数不能为负数。",
                field="workload.concurrency",
            )
        )
    return replace(req, performance=replace(req.performance, **fixes)) if fixes else req


def _group_estimate(
    req: PlanRequest,
    g: GroupLayout,
    gm: GroupMemory | None,
    figs: _Figures,
    checks: list[Check],
    *,
    bandwidth: float,
    tflops: float,
    computed_prompt_tokens: int,
    output_tokens: int,
    context_tokens: int,
    mean_context: float,
    act_bytes: int,
    lm_non_expert_bytes: int,
    offered_per_rank: int,
    disaggregated: bool,
) -> GroupPerformance:
    model, serving, perf, server = req.model, req.serving, req.performance, req.server
    p = g.parallel
    tp, dp, ep = max(p.tp, 1), max(p.dp, 1), max(p.ep, 1)
    k = f"performance.{g.name}"
    counts = g.role in COUNTED_DECODE_ROLES
    decodes = g.role != "prefill"

    # ---- prefill (compute bound)
    prefill_s = 2 * model.active_params * computed_prompt_tokens / (tp * tflops * 1e12 * perf.prefill_mfu)
    figs.add(
        f"{k}.prefill_s",
        prefill_s,
        "s",
        f"{g.name}: prefill time of one prompt per DP rank",
        f"{g.name}：单个 DP rank 处理一个输入的预填充时间",
        "2 × active_params × prompt_tokens ÷ (TP × TFLOPS × MFU)",
        {
            "active_params": model.active_params,
            "prompt_tokens": computed_prompt_tokens,
            "TP": tp,
            "TFLOPS": tflops,
            "MFU": perf.prefill_mfu,
        },
    )

    # ---- batch per DP rank
    block = block_size_for(serving, req.server.accelerator.software_stack)  # 0 → platform default
    kv_fit = _seqs_fit(gm, context_tokens, block, serving.max_num_seqs)
    offered = offered_per_rank if counts else 0
    if not decodes:
        batch, limited_by = 0, "none"
    else:
        if g.role == "standby":
            offered = min(offered_per_rank, serving.max_num_seqs)  # what it would run after a failover
        batch = min(offered, serving.max_num_seqs, kv_fit)
        if batch == offered:
            limited_by = "concurrency"
        elif batch == kv_fit and kv_fit < serving.max_num_seqs:
            limited_by = "kv_capacity"
        else:
            limited_by = "max_num_seqs"
    if decodes:
        figs.add(
            f"{k}.batch_per_dp_rank",
            batch,
            "sequences",
            f"{g.name}: running sequences per DP rank",
            f"{g.name}：每个 DP rank 同时解码的序列数",
            "min(concurrency ÷ serving DP ranks, max_num_seqs, sequences the KV cache holds)",
            {
                "offered": offered,
                "max_num_seqs": serving.max_num_seqs,
                "kv_seqs_fit": kv_fit,
                "context_tokens": context_tokens,
                "limited_by": limited_by,
            },
        )
        if counts and kv_fit < min(offered, serving.max_num_seqs):
            checks.append(
                Check(
                    "performance.batch_limited_by_kv",
                    Severity.WARNING,
                    AREA,
                    f"{g.name}: the KV cache holds {kv_fit} sequences of {context_tokens:,} tokens per DP rank, "
                    f"fewer than the {min(offered, serving.max_num_seqs)} offered; the rest queue.",
                    f"{g.name}：每个 DP rank 的 KV 缓存仅能容纳 {kv_fit} 条 {context_tokens:,} Token 的序列，"
                    f"少于需承载的 {min(offered, serving.max_num_seqs)} 条并发，其余请求将排队。",
                    {"kv_seqs_fit": kv_fit, "offered": offered},
                    field="workload.concurrency",
                    fix_en="Add nodes, shorten the context, or use an FP8 KV cache.",
                    fix_zh="增加节点、缩短上下文，或采用 FP8 KV 缓存。",
                )
            )
        elif counts and offered > serving.max_num_seqs:
            checks.append(
                Check(
                    "performance.batch_limited_by_max_num_seqs",
                    Severity.WARNING,
                    AREA,
                    f"{g.name}: {offered} concurrent requests per DP rank exceed --max-num-seqs "
                    f"{serving.max_num_seqs}; the rest queue and TTFT grows.",
                    f"{g.name}：每个 DP rank 需承载 {offered} 路并发，超过 --max-num-seqs {serving.max_num_seqs}，"
                    "超出部分排队，首字延迟上升。",
                    {"offered": offered, "max_num_seqs": serving.max_num_seqs},
                    field="serving.max_num_seqs",
                    fix={"serving.max_num_seqs": min(offered, kv_fit)}
                    if kv_fit > serving.max_num_seqs
                    else {},
                    fix_en="Raise --max-num-seqs if the KV cache allows, or add DP ranks.",
                    fix_zh="如 KV 缓存允许可调高 --max-num-seqs，或增加 DP rank。",
                )
            )

    # ---- decode step (memory bound)
    weights_read = experts_frac = kv_read = bytes_step = 0
    mem_time = a2a = step = 0.0
    if decodes:
        non_expert_per_rank = lm_non_expert_bytes / tp
        expert_per_rank = model.expert_weight_bytes / ep if model.is_moe else 0
        tokens_in_ep_group = max(batch, 1) * (dp if p.expert_parallel else 1)
        if model.is_moe and model.num_experts > 0:
            experts_frac = 1.0 - (1.0 - model.experts_per_token / model.num_experts) ** tokens_in_ep_group
        else:
            experts_frac = 1.0
        weights_read = int(non_expert_per_rank + experts_frac * expert_per_rank)
        rank = gm.per_rank if gm else None
        kv_per_token = rank.kv_bytes_per_token if rank else 0
        state_per_seq = rank.state_bytes_per_seq if rank else 0
        kv_read = int(batch * (mean_context * kv_per_token + state_per_seq))
        bytes_step = weights_read + kv_read
        mem_time = bytes_step / (bandwidth * perf.decode_bandwidth_efficiency)
        figs.add(
            f"{k}.experts_touched_fraction",
            experts_frac,
            "fraction",
            f"{g.name}: share of a rank's experts touched per decode step",
            f"{g.name}：每个解码步中单卡被激活的专家比例",
            "1 − (1 − top_k ÷ experts)^(B × DP)",
            {
                "top_k": model.experts_per_token,
                "experts": model.num_experts,
                "B": max(batch, 1),
                "DP": dp,
                "experts_per_rank": g.experts_per_rank,
            },
        )
        figs.add(
            f"{k}.bytes_per_step_per_rank",
            bytes_step,
            "bytes",
            f"{g.name}: bytes read per decode step per rank",
            f"{g.name}：每卡每个解码步读取的字节数",
            "non_expert ÷ TP + touched × experts ÷ EP + B × (mean_context × KV/token + state/seq)",
            {
                "non_expert_lm_bytes": lm_non_expert_bytes,
                "TP": tp,
                "expert_bytes": model.expert_weight_bytes,
                "EP": ep,
                "touched": experts_frac,
                "B": batch,
                "mean_context": mean_context,
                "kv_bytes_per_token": kv_per_token,
                "state_bytes_per_seq": state_per_seq,
            },
        )
        figs.add(
            f"{k}.memory_time_s",
            mem_time,
            "s",
            f"{g.name}: memory-bound time per decode step",
            f"{g.name}：每个解码步的访存时间",
            "bytes_per_step ÷ (bandwidth × decode_bandwidth_efficiency)",
            {
                "bytes_per_step": bytes_step,
                "bandwidth_bytes_s": bandwidth,
                "decode_bandwidth_efficiency": perf.decode_bandwidth_efficiency,
            },
        )
        if model.is_moe and p.expert_parallel and g.nodes > 1 and batch > 0:
            node_bw, fabric, bw_source = _internode_bandwidth(server, g.devices)
            dp_per_node = dp / g.nodes
            remote = (g.nodes - 1) / g.nodes
            traffic = (
                dp_per_node
                * batch
                * model.experts_per_token
                * model.hidden_size
                * act_bytes
                * 2
                * max(model.moe_layers, 1)
                * remote
            )
            a2a = traffic / (node_bw * perf.scale_out_efficiency)
            figs.add(
                f"{k}.all_to_all_s",
                a2a,
                "s",
                f"{g.name}: cross-node EP all-to-all per decode step ({fabric})",
                f"{g.name}：每个解码步跨节点专家并行 all-to-all 时间（{fabric}）",
                "DP/node × B × top_k × hidden × act_bytes × 2 × MoE layers × (nodes−1)/nodes "
                "÷ (node bandwidth × scale_out_efficiency)",
                {
                    "dp_per_node": dp_per_node,
                    "B": batch,
                    "top_k": model.experts_per_token,
                    "hidden": model.hidden_size,
                    "act_bytes": act_bytes,
                    "moe_layers": model.moe_layers,
                    "nodes": g.nodes,
                    "node_bandwidth_bytes_s": node_bw,
                    "scale_out_efficiency": perf.scale_out_efficiency,
                },
                bw_source,
            )
        step = mem_time + a2a
        figs.add(
            f"{k}.decode_step_s",
            step,
            "s",
            f"{g.name}: decode step = TPOT (estimate)",
            f"{g.name}：解码步时长 = 每字延迟 TPOT（估算）",
            "memory_time + all_to_all",
            {"memory_time_s": mem_time, "all_to_all_s": a2a},
        )

    # ---- KV transfer P → D (decode side of xPyD)
    kv_transfer = 0.0
    if disaggregated and g.role == "decode" and gm is not None:
        # P and D pools sit in different scale-up domains: KV moves over the scale-out NICs.
        node_bw, _, bw_source = _internode_bandwidth(server, g.devices, scale_up_allowed=False)
        per_request = (
            computed_prompt_tokens * gm.per_rank.kv_bytes_per_token + gm.per_rank.state_bytes_per_seq
        )
        kv_transfer = per_request * tp / (node_bw * perf.scale_out_efficiency)
        figs.add(
            f"{k}.kv_transfer_s",
            kv_transfer,
            "s",
            f"{g.name}: KV transfer prefill → decode per request",
            f"{g.name}：每请求 KV 从预填充传到解码节点的时间",
            "(prompt × KV/token/rank + state/seq/rank) × TP ÷ (node scale-out bandwidth × efficiency)",
            {
                "prompt_tokens": computed_prompt_tokens,
                "kv_bytes_per_token": gm.per_rank.kv_bytes_per_token,
                "TP": tp,
                "node_bandwidth_bytes_s": node_bw,
            },
            bw_source,
        )

    # ---- capacity
    if g.role == "prefill":
        requests_per_s = dp / prefill_s if prefill_s > 0 else 0.0
        formula = "DP ÷ prefill_s"
    elif disaggregated:
        requests_per_s = dp * batch / (output_tokens * step) if step > 0 and batch > 0 else 0.0
        formula = "DP × B ÷ (output_tokens × step_s)"
    else:
        cycle = batch * prefill_s + output_tokens * step
        requests_per_s = dp * batch / cycle if cycle > 0 and batch > 0 else 0.0
        formula = "DP × B ÷ (B × prefill_s + output_tokens × step_s)"
    output_tps = requests_per_s * output_tokens if decodes else 0.0
    figs.add(
        f"{k}.requests_per_s",
        requests_per_s,
        "req/s",
        f"{g.name}: request capacity (estimate)",
        f"{g.name}：请求处理能力（估算）",
        formula,
        {"DP": dp, "B": batch, "prefill_s": prefill_s, "output_tokens": output_tokens, "step_s": step},
    )
    if decodes:
        figs.add(
            f"{k}.output_tokens_per_s",
            output_tps,
            "tokens/s",
            f"{g.name}: output throughput (estimate)",
            f"{g.name}：输出吞吐（估算）",
            "requests_per_s × output_tokens",
            {
                "requests_per_s": requests_per_s,
                "output_tokens": output_tokens,
                "counts_toward_throughput": counts,
            },
        )
    if decodes and kv_fit == 0 and (counts or g.role == "standby"):
        checks.append(
            Check(
                "performance.no_decode_capacity",
                Severity.WARNING,
                AREA,
                f"{g.name}: no sequence of {context_tokens:,} tokens fits the KV cache; throughput is zero.",
                f"{g.name}：KV 缓存放不下一条 {context_tokens:,} Token 的序列，吞吐为零。",
                {"kv_seqs_fit": kv_fit},
                field="workload.input_tokens",
                fix_en="Shorten the context or add memory (more nodes / a larger TP).",
                fix_zh="缩短上下文，或增加显存（更多节点 / 更大 TP）。",
            )
        )

    return GroupPerformance(
        group=g.name,
        role=g.role,
        counts_toward_throughput=counts,
        nodes=g.nodes,
        tp=tp,
        dp=dp,
        ep=ep,
        offered_seqs_per_dp_rank=offered,
        kv_seqs_fit_per_dp_rank=kv_fit,
        batch_per_dp_rank=batch,
        batch_limited_by=limited_by,
        weights_bytes_read_per_rank=weights_read,
        experts_touched_fraction=experts_frac,
        kv_bytes_read_per_rank=kv_read,
        bytes_per_step_per_rank=bytes_step,
        memory_time_s=mem_time,
        all_to_all_s=a2a,
        decode_step_s=step,
        prefill_s=prefill_s,
        kv_transfer_s=kv_transfer,
        requests_per_s=requests_per_s,
        output_tokens_per_s_per_dp_rank=output_tps / dp if dp else 0.0,
        output_tokens_per_s=output_tps,
    )


def _scaled(g: GroupPerformance, scale: float) -> GroupPerformance:
    """Scale a group's throughput so the groups add up to the measured figure."""
    return replace(
        g,
        requests_per_s=g.requests_per_s * scale,
        output_tokens_per_s=g.output_tokens_per_s * scale,
        output_tokens_per_s_per_dp_rank=g.output_tokens_per_s_per_dp_rank * scale,
    )


def _pd_balance(
    p_cap: float, d_cap: float, prefill: list[GroupPerformance], decode: list[GroupPerformance]
) -> PdBalance:
    # A side with no capacity is the bottleneck; keep the ratio finite for JSON.
    ratio = p_cap / d_cap if d_cap > 0 else 0.0
    if d_cap <= 0:
        bottleneck = "decode"
    elif 0.9 <= ratio <= 1.1:
        bottleneck = "balanced"
    else:
        bottleneck = "prefill" if ratio < 1 else "decode"
    p_nodes = sum(g.nodes for g in prefill)
    d_nodes = sum(g.nodes for g in decode)
    total = p_nodes + d_nodes
    per_p = p_cap / p_nodes if p_nodes else 0.0
    per_d = d_cap / d_nodes if d_nodes else 0.0
    if per_p > 0 and per_d > 0:
        # x·per_p = (total − x)·per_d balances the two sides
        best_p = min(total - 1, max(1, round(total * per_d / (per_p + per_d))))
    else:
        best_p = p_nodes
    return PdBalance(p_cap, d_cap, ratio, bottleneck, best_p, total - best_p)


def _add_pd_figures(figs: _Figures, checks: list[Check], bal: PdBalance, req: PlanRequest) -> None:
    figs.add(
        "performance.pd.prefill_requests_per_s",
        bal.prefill_requests_per_s,
        "req/s",
        "Prefill pool capacity",
        "预填充池处理能力",
        "Σ prefill DP ÷ prefill_s",
        {},
    )
    figs.add(
        "performance.pd.decode_requests_per_s",
        bal.decode_requests_per_s,
        "req/s",
        "Decode pool capacity",
        "解码池处理能力",
        "Σ decode DP × B ÷ (output_tokens × step_s)",
        {},
    )
    figs.add(
        "performance.pd.ratio",
        bal.ratio,
        "×",
        "P:D capacity ratio (prefill ÷ decode)",
        "P:D 能力比（预填充 ÷ 解码）",
        "prefill_requests_per_s ÷ decode_requests_per_s",
        {"bottleneck": bal.bottleneck},
    )
    if bal.prefill_requests_per_s > 0 and bal.decode_requests_per_s > 0 and not 0.67 <= bal.ratio <= 1.5:
        side_en = "prefill" if bal.bottleneck == "prefill" else "decode"
        side_zh = "预填充" if bal.bottleneck == "prefill" else "解码"
        checks.append(
            Check(
                "performance.pd_imbalance",
                Severity.WARNING,
                AREA,
                f"P:D capacity ratio {bal.ratio:.2f}: the {side_en} side is the bottleneck; "
                f"about {bal.suggested_prefill_nodes}P{bal.suggested_decode_nodes}D would balance this workload.",
                f"P:D 能力比为 {bal.ratio:.2f}，瓶颈在{side_zh}侧；按当前负载约 "
                f"{bal.suggested_prefill_nodes}P{bal.suggested_decode_nodes}D 可达平衡。",
                {"ratio": bal.ratio, "bottleneck": bal.bottleneck},
                field="topology.prefill_nodes",
                fix={
                    "topology.prefill_nodes": bal.suggested_prefill_nodes,
                    "topology.decode_nodes": bal.suggested_decode_nodes,
                },
                fix_en=f"Split the nodes {bal.suggested_prefill_nodes}P{bal.suggested_decode_nodes}D.",
                fix_zh=f"将节点调整为 {bal.suggested_prefill_nodes}P{bal.suggested_decode_nodes}D。",
            )
        )


def _target_checks(req: PlanRequest, ttft: float, tpot: float) -> list[Check]:
    w = req.workload
    out: list[Check] = []
    if w.ttft_target_s is not None and ttft > w.ttft_target_s:
        out.append(
            Check(
                "performance.ttft_above_target",
                Severity.WARNING,
                AREA,
                f"Estimated TTFT {ttft:.2f} s exceeds the target {w.ttft_target_s:.2f} s.",
                f"估算首字延迟 {ttft:.2f} 秒，超过目标 {w.ttft_target_s:.2f} 秒。",
                {"ttft_s": ttft, "target_s": w.ttft_target_s},
                field="workload.ttft_target_s",
                fix_en="Enable prefix caching, shorten prompts, or use a prefill/decode split.",
                fix_zh="开启前缀缓存、缩短输入，或采用 PD 分离。",
            )
        )
    if w.tpot_target_ms is not None and tpot * 1000 > w.tpot_target_ms:
        out.append(
            Check(
                "performance.tpot_above_target",
                Severity.WARNING,
                AREA,
                f"Estimated TPOT {tpot * 1000:.1f} ms exceeds the target {w.tpot_target_ms:.1f} ms.",
                f"估算每字延迟 {tpot * 1000:.1f} 毫秒，超过目标 {w.tpot_target_ms:.1f} 毫秒。",
                {"tpot_ms": tpot * 1000, "target_ms": w.tpot_target_ms},
                field="workload.tpot_target_ms",
                fix_en="Lower the concurrency per DP rank (more DP ranks) or use faster memory.",
                fix_zh="降低每个 DP rank 的并发（增加 DP rank），或选用带宽更高的加速卡。",
            )
        )
    return out
