"""Checks of performance (engine/performance/): the estimate and its assumptions, batch limits, latency targets, the design point, prefill/decode balance."""

from ...types import Severity
from ..book import CheckDef, Fix, Variant


def _above_target(code: str, fix_en: str, fix_zh: str) -> CheckDef:
    """A latency target missed (TTFT or TPOT): no room for the concurrency at all, or the estimate above it."""
    return CheckDef(
        code,
        "performance",
        Severity.WARNING,
        "The {target_en} target {target:.2f} {unit_en} cannot be met: the cluster has no room to serve "
        "{conc} concurrent requests of this length.",
        "{target_zh}目标 {target:.2f} {unit_zh} 无法满足：集群无法容纳 {conc} 路该长度的并发请求。",
        field="{target_field}",
        fixes={
            "shorten": Fix("Shorten the context or add nodes.", "缩短上下文或增加节点。"),
            "concurrency": Fix(fix_en, fix_zh, change={"workload.concurrency": "max_concurrency"}),
            "advice": Fix(fix_en, fix_zh),
        },
        variants={
            "estimated": Variant(
                "Estimated {target_en} {value:.2f} {unit_en} at {conc} concurrent requests exceeds the target "
                "{target:.2f} {unit_en}; at most {max_concurrency} concurrent requests meet every target.",
                "并发 {conc} 时估算{target_zh}为 {value:.2f} {unit_zh}，超过目标 {target:.2f} {unit_zh}；"
                "满足全部目标的并发上限约为 {max_concurrency}。",
            )
        },
        source="docs/performance.md §4 (scenario latency targets)",
        customer=True,  # a missed target is a risk of the proposal (documents.pdf.story.target_risks)
    )


DEFS = (
    CheckDef(
        "performance.knob_out_of_range",
        "performance",
        Severity.ERROR,
        "{knob_en} {value} must be {span}; the estimate uses {shown} instead.",
        "{knob_zh} {value} 须在 {span_zh} 之间，估算暂按{shown_zh}计算。",
        field="performance.{name}",
        fix=Fix("Use {shown}.", "建议改为{shown_zh}。", change={"performance.{name}": "default"}),
        source="docs/performance.md §3 (the fitted factors' ranges)",
    ),
    CheckDef(
        "performance.workload_negative",
        "performance",
        Severity.ERROR,
        "Concurrency and token counts cannot be negative.",
        "并发数与 Token 数不能为负数。",
        field="workload.concurrency",
    ),
    CheckDef(
        "performance.design_point_unreachable",
        "performance",
        Severity.WARNING,
        # A warning, not an error: the plan still carries load (at longer latencies); the engineer
        # accepts it with a reason or changes the hardware; an error would block every quote of it.
        "This hardware cannot reach the {targets_en} target{assumed_en}: {best_en}{at_en}.{load_en}",
        "该硬件无法达到{targets_zh}的目标{assumed_zh}：{best_zh}{at_zh}。{load_zh}",
        field="{target_field}",
        fix=Fix(
            "Choose faster hardware (memory bandwidth for TPOT, compute for TTFT), or relax the target.",
            "选用更快的硬件（TPOT 看显存带宽，TTFT 看算力），或放宽目标。",
        ),
        severities=(Severity.ERROR,),  # when the stated load is above what the cluster runs at once
        source="docs/performance.md §8",
        customer=True,
    ),
    CheckDef(
        "performance.pd_imbalance",
        "performance",
        Severity.WARNING,
        # The split itself is proposed once, by performance.serving_settings_recommended (the split of
        # these nodes that carries the most within the targets, judged at the same design point); this
        # finding names none of its own, so the two never disagree (a split balanced on paper may not
        # be buildable: its smaller pool may not hold the weights, or may pipeline a replica).
        "P:D capacity ratio {ratio:.2f} at the design point: the {side_en} side is the bottleneck. "
        "The split is judged with the serving settings: where another split of these nodes carries "
        "more within the latency targets, the recommended serving settings propose it.",
        "设计点下 P:D 能力比为 {ratio:.2f}，瓶颈在{side_zh}侧。节点划分与服务参数一并评估："
        "若这些节点的其他划分在时延目标内承载更多，推荐的服务参数会给出该划分。",
        field="topology.prefill_nodes",
        source="docs/performance.md §2 and §9",
    ),
    CheckDef(
        "performance.accelerator_specs_missing",
        "performance",
        Severity.ERROR,
        "{accelerator}: memory bandwidth or TFLOPS is missing from the catalog; no performance estimate.",
        "{accelerator}：目录中缺少显存带宽或算力（TFLOPS）数据，无法估算性能。",
        field="server.accelerator",
        fix=Fix(
            "Enter the accelerator's memory bandwidth and dense TFLOPS in the catalog.",
            "请在目录中补充该加速卡的显存带宽与稠密算力。",
        ),
        source="docs/performance.md §1 (bandwidth and TFLOPS drive the step time)",
    ),
    CheckDef(
        "performance.measured_throughput_used",
        "performance",
        Severity.OK,
        "Measured throughput {output_tps:,.0f} tokens/s replaces the estimate ({estimated_output_tps:,.0f} tokens/s).",
        "已采用压测实测吞吐 {output_tps:,.0f} tokens/s 替代估算值（{estimated_output_tps:,.0f} tokens/s）。",
        field="workload.measured_output_tokens_per_s",
        source="docs/performance.md §5 (measured beats estimated)",
    ),
    CheckDef(
        "performance.calibration_fit_set_aside",
        "performance",
        Severity.WARNING,
        "The stored performance fit for {family} is broken or out of its physical bounds; "
        "the estimate uses the uncalibrated priors and the wide band.",
        "{family_zh}存储的性能拟合已损坏或超出物理范围，估算改用未校准的先验系数和宽误差带。",
        fix=Fix(
            "Ask the catalog administrator to run the calibration again.",
            "请目录管理员重新运行性能校准。",
        ),
        source="docs/performance.md §3 (bounds of the fit)",
    ),
    CheckDef(
        "performance.fp8_weight_only",
        "performance",
        Severity.OK,
        "{accelerator} has no FP8 tensor cores: vLLM serves this FP8 checkpoint weight-only (the FP8 weights are "
        "dequantised by its Marlin kernels and multiplied in BF16); the estimate computes at BF16, {tflops:,.0f} TFLOPS.",
        "{accelerator} 不支持 FP8 张量计算：vLLM 以仅权重方式运行该 FP8 权重（权重以 FP8 存放，反量化后按 BF16 计算），"
        "估算按 BF16 算力 {tflops:,.0f} TFLOPS 计算。",
        field="checkpoint",
        source="vLLM vllm/model_executor/layers/quantization/fp8.py Fp8LinearMethod: below compute capability 8.9 "
        "the FP8 weights take the Marlin weight-only path",
    ),
    CheckDef(
        "performance.estimate_unconfirmed",
        "performance",
        Severity.OK,
        "{note_en}",
        "{note_zh}",
        field="workload.measured_output_tokens_per_s",
        fix=Fix("Enter the load-test throughput once measured.", "压测完成后录入实测吞吐。"),
        source="docs/performance.md §3 (cross-validated bands)",
    ),
    CheckDef(
        "performance.no_decode_capacity",
        "performance",
        Severity.WARNING,
        "{group}: no sequence of {context_tokens:,} tokens fits the KV cache; throughput is zero.",
        "{group}：KV 缓存放不下一条 {context_tokens:,} Token 的序列，吞吐为零。",
        field="workload.input_tokens",
        fix=Fix(
            "Shorten the context or add memory (more nodes / a larger TP).",
            "缩短上下文，或增加显存（更多节点 / 更大 TP）。",
        ),
        source="docs/performance.md §1",
    ),
    CheckDef(
        "performance.batch_limited_by_kv",
        "performance",
        Severity.WARNING,
        "{group_en}: the KV cache holds {kv_fit} sequences of {context_tokens:,} tokens per DP rank, fewer than the {offered} offered; the rest queue.",
        "{group_zh}：每个 DP rank 的 KV 缓存仅能容纳 {kv_fit} 条 {context_tokens:,} Token 的序列，少于需承载的 {offered} 条并发，其余请求将排队。",
        field="workload.concurrency",
        fix=Fix(
            "Add nodes, shorten the context, or use an FP8 KV cache.",
            "增加节点、缩短上下文，或采用 FP8 KV 缓存。",
        ),
        source="docs/performance.md §2",
    ),
    CheckDef(
        "performance.batch_limited_by_max_num_seqs",
        "performance",
        Severity.WARNING,
        "{group_en}: {offered} concurrent requests per DP rank exceed --max-num-seqs {max_num_seqs}; the rest queue and TTFT grows.",
        "{group_zh}：每个 DP rank 需承载 {offered} 路并发，超过 --max-num-seqs {max_num_seqs}，超出部分排队，首字延迟上升。",
        field="serving.max_num_seqs",
        fixes={
            "raise": Fix(
                "Raise --max-num-seqs if the KV cache allows, or add DP ranks.",
                "如 KV 缓存允许可调高 --max-num-seqs，或增加 DP rank。",
                change={"serving.max_num_seqs": "max_num_seqs_ok"},
            ),
            "advice": Fix(
                "Raise --max-num-seqs if the KV cache allows, or add DP ranks.",
                "如 KV 缓存允许可调高 --max-num-seqs，或增加 DP rank。",
            ),
        },
        source="docs/performance.md §2",
    ),
    CheckDef(
        "performance.concurrency_above_capacity",
        "performance",
        Severity.ERROR,
        "The workload's {concurrency} concurrent requests exceed the {capacity} this cluster serves at once; the rest queue (about {wait:,.1f} s added to the time to first token), so the quoted latency cannot be held.{design_en}",
        "负载并发 {concurrency} 超过本集群可同时服务的 {capacity} 路，其余请求排队（首字延迟约增加 {wait:,.1f} 秒），报价时延无法保证。{design_zh}",
        field="workload.concurrency",
        fix=Fix(
            "Quote at most {capacity} concurrent requests, or add nodes.",
            "按不超过 {capacity} 路并发报价，或增加节点。",
            change={"workload.concurrency": "capacity"},
        ),
        source="docs/performance.md §2 (one closed loop)",
    ),
    CheckDef(
        "performance.latency_targets_met",
        "performance",
        Severity.OK,
        "Latency targets met at {conc} concurrent requests (estimate; up to {max_concurrency} concurrent requests meet them).",
        "并发 {conc} 时满足时延目标（估算；并发不超过 {max_concurrency} 时均可满足）。",
        field="{target_field}",
        source="docs/performance.md §4",
    ),
    _above_target(
        "performance.ttft_above_target",
        "Lower the concurrency per cluster, add nodes (more DP ranks), or use a prefill/decode split.",
        "降低单集群并发、增加节点（更多 DP rank），或采用 PD 分离。",
    ),
    _above_target(
        "performance.tpot_above_target",
        "Lower the concurrency per DP rank (more DP ranks), enable MTP, or use faster memory.",
        "降低每个 DP rank 的并发（增加 DP rank）、开启 MTP，或选用带宽更高的加速卡。",
    ),
)
