"""Figures of the throughput and latency estimate (engine/performance/, engine/serving_model.py).

Every step-time part is an expression over the numbers it was computed from, so
``tests/golden/test_figure_formulas.py`` recomputes it for each seeded plan; the
queueing figures, which come out of a bisection or an M/D/c queue, say in prose
what they are (docs/performance.md has the method).
"""

from ..book import FigureDef, SourceKind, Unit

_FACTOR = " ({family})"
_FACTOR_ZH = "（{family_zh}）"

FACTORS = (
    FigureDef(
        "performance.factors.bandwidth_efficiency",
        Unit.FRACTION,
        "Achieved share of peak memory bandwidth of dense weight and KV reads in decode" + _FACTOR,
        "解码阶段稠密权重与 KV 读取实际达到的显存带宽比例" + _FACTOR_ZH,
        formulas={"calibrated": "calibrated", "requested": "requested"},
        context=("stack", "calibrated", "requested"),
        source=SourceKind.PUBLIC,
    ),
    FigureDef(
        "performance.factors.expert_bandwidth_efficiency",
        Unit.FRACTION,
        "Achieved share of peak memory bandwidth of routed-expert reads in decode" + _FACTOR,
        "解码阶段路由专家权重读取实际达到的显存带宽比例" + _FACTOR_ZH,
        formulas={"calibrated": "calibrated", "requested": "requested"},
        context=("stack", "calibrated", "requested"),
        source=SourceKind.PUBLIC,
    ),
    FigureDef(
        "performance.factors.compute_efficiency",
        Unit.FRACTION,
        "Achieved share of peak dense compute in decode" + _FACTOR,
        "解码阶段实际达到的稠密算力比例" + _FACTOR_ZH,
        "calibrated",
        context=("stack",),
        source=SourceKind.PUBLIC,
    ),
    FigureDef(
        "performance.factors.prefill_efficiency",
        Unit.FRACTION,
        "Achieved share of peak dense compute in prefill (MFU)" + _FACTOR,
        "预填充阶段实际达到的稠密算力比例（MFU）" + _FACTOR_ZH,
        formulas={"calibrated": "calibrated", "requested": "requested"},
        context=("stack", "calibrated", "requested"),
        source=SourceKind.PUBLIC,
    ),
    FigureDef(
        "performance.factors.request_overhead_s",
        Unit.SECONDS,
        "Fixed time per request outside its forward passes (API server, tokenizer, hand-off to the engine,"
        " streaming)" + _FACTOR,
        "每请求前向计算之外的固定开销（API 服务、分词、移交推理引擎、流式返回）" + _FACTOR_ZH,
        "calibrated",
        context=("stack",),
        source=SourceKind.PUBLIC,
    ),
    FigureDef(
        "performance.factors.step_overhead_s",
        Unit.SECONDS,
        "Fixed time per forward pass (kernel launch, scheduler, sampling{eager_en})" + _FACTOR,
        "每次前向的固定开销（算子下发、调度、采样{eager_zh}）" + _FACTOR_ZH,
        formulas={
            "calibrated": "calibrated",
            "requested": "requested_ms / 1000",
        },
        context=("stack", "calibrated", "requested_ms"),
        source=SourceKind.PUBLIC,
    ),
    FigureDef(
        "performance.factors.layer_overhead_s",
        Unit.SECONDS,
        "Fixed time per layer per decode step (launch gaps and collective synchronisation{eager_en})"
        + _FACTOR,
        "每个解码步每层的固定开销（算子下发间隙与集合通信同步{eager_zh}）" + _FACTOR_ZH,
        # eager_per_layer_s is 0 in graph mode (serving_model.EAGER_LAYER_OVERHEAD_S otherwise)
        "calibrated + eager_per_layer_s",
        context=("stack", "calibrated", "layers"),
        source=SourceKind.PUBLIC,
    ),
    FigureDef(
        "performance.factors.prefill_layer_overhead_s",
        Unit.SECONDS,
        "Fixed time per layer per prefill pass (operators dispatched from the host: prefill is not graph-captured)"
        + _FACTOR,
        "预填充每次前向每层的固定开销（预填充不入图，算子逐个由主机下发）" + _FACTOR_ZH,
        "calibrated",
        context=("stack", "moe_layers"),
        source=SourceKind.PUBLIC,
    ),
    FigureDef(
        "performance.factors.collective_latency_s",
        Unit.SECONDS,
        "Fixed latency of one collective (all-reduce, dispatch or combine)" + _FACTOR,
        "单次集合通信的固定时延（all-reduce、dispatch 或 combine）" + _FACTOR_ZH,
        "calibrated",
        context=("stack",),
        source=SourceKind.PUBLIC,
    ),
)

# One serving group's figures: performance.{group}.… (a cluster, or the P or D side of xPyD).
GROUP = (
    FigureDef(
        "performance.{group}.prefill_s",
        Unit.SECONDS,
        "{group_en}: prefill time of one prompt per DP rank",
        "{group_zh}：单个 DP rank 处理一个输入的预填充时间",
        # compute_s = prompt_tokens × (2 × active_params + attention FLOPs) ÷ TP ÷ (TFLOPS × MFU);
        # memory_s = chunks × weights on the rank ÷ (bandwidth × efficiency);
        # overhead_s = chunks × (step overhead + moe_layers × prefill layer overhead
        #                       + dense_layers × (decode layer overhead + eager dispatch))
        "overhead_s + max(compute_s, memory_s) + collectives_s",
        context=(
            "active_params",
            "prompt_tokens",
            "TP",
            "TFLOPS",
            "MFU",
            "chunks",
            "prefill_layer_overhead_s",
            "moe_layers",
            "dense_layers",
        ),
    ),
    FigureDef(
        "performance.{group}.batch_per_dp_rank",
        Unit.COUNT_SEQUENCES,
        "{group_en}: running sequences per DP rank",
        "{group_zh}：每个 DP rank 同时解码的序列数",
        "min(offered, max_num_seqs, kv_seqs_fit)",
        context=("context_tokens", "limited_by"),
    ),
    FigureDef(
        "performance.{group}.experts_touched_fraction",
        Unit.FRACTION,
        "{group_en}: share of a rank's experts touched per decode step (the busiest rank with expert parallelism)",
        "{group_zh}：每个解码步中单卡被激活的专家比例（专家并行时取最忙的一张卡）",
        formulas={
            # With pipeline parallelism each stage decodes a micro-batch of B ÷ PP sequences (serving_model.decode_step).
            "moe": "1 - (1 - min(1, top_k / experts)) ** (max(B / PP, 1) * tokens_per_seq_per_step * DP_sharing_experts)",
            # expert parallelism: the share of the busiest of the EP ranks (engine/moe_routing.py)
            "moe_ep": "busiest_rank_share(experts / EP, EP, 1 - (1 - min(1, top_k / experts))"
            " ** (max(B / PP, 1) * tokens_per_seq_per_step * DP_sharing_experts))",
            "dense": "1: a dense model ({experts} routed experts) reads all its weights every step",
        },
        context=(
            "top_k",
            "B",
            "PP",
            "tokens_per_seq_per_step",
            "DP_sharing_experts",
            "experts_per_rank",
            "EP",
        ),
    ),
    FigureDef(
        "performance.{group}.kv_bytes_read_per_seq",
        Unit.BYTES_PER_SEQUENCE,
        "{group_en}: KV bytes a decode step reads per sequence per rank",
        "{group_zh}：每个解码步每条序列每卡读取的 KV 字节数",
        formulas={
            "dense": "mean_context * kv_bytes_per_token + state_bytes_per_seq",
            # DeepSeek sparse attention (vLLM deepseek_v2.py Indexer): the indexer scores every cached
            # token, the sparse MLA kernel gathers the latents of the top-k tokens only
            "dsa": "mean_context * kv_bytes_per_token - max(mean_context - top_k, 0) * latent_bytes_per_token"
            " + state_bytes_per_seq",
        },
    ),
    FigureDef(
        "performance.{group}.bytes_per_step_per_rank",
        Unit.BYTES,
        "{group_en}: bytes read per decode step per rank",
        "{group_zh}：每卡每个解码步读取的字节数",
        formulas={
            # what one rank holds for the chosen checkpoint (memory.weights_breakdown, per pipeline stage):
            # the non-expert part includes the groups the platform replicates on every rank; an untied input
            # embedding is looked up, not read (serving_model.gathered_embedding_bytes)
            "held": "rank_non_expert_bytes - gathered_embedding_bytes + touched * rank_expert_bytes"
            " + micro_batch * kv_bytes_read_per_seq",
            # without a memory result: routed experts split over EP with expert parallelism, else over TP
            "ep": "non_expert_lm_bytes / TP / stages - gathered_embedding_bytes + touched * expert_bytes / EP / stages"
            " + micro_batch * kv_bytes_read_per_seq",
            "tp": "non_expert_lm_bytes / TP / stages - gathered_embedding_bytes + touched * expert_bytes / TP / stages"
            " + micro_batch * kv_bytes_read_per_seq",
        },
        context=("replicated_weights_bytes", "B"),
    ),
    FigureDef(
        "performance.{group}.memory_time_s",
        Unit.SECONDS,
        "{group_en}: memory time per decode step",
        "{group_zh}：每个解码步的访存时间",
        # dense weights and KV at the dense reads' efficiency, the touched experts at the fused MoE
        # kernels' (fitted per hardware family)
        "(bytes_per_step - expert_bytes_read) / (bandwidth_bytes_s * bandwidth_efficiency)"
        " + expert_bytes_read / (bandwidth_bytes_s * expert_bandwidth_efficiency)",
    ),
    FigureDef(
        "performance.{group}.compute_time_s",
        Unit.SECONDS,
        "{group_en}: compute time per decode step",
        "{group_zh}：每个解码步的计算时间",
        "micro_batch * (1 + draft_tokens) * (2 * active_params + attention_flops_per_token)"
        " / TP / stages / (TFLOPS * 1e12 * MFU)",
        context=("B",),
    ),
    FigureDef(
        "performance.{group}.tp_allreduce_s",
        Unit.SECONDS,
        "{group_en}: TP all-reduces per decode step ({fabric_en})",
        "{group_zh}：每个解码步的 TP all-reduce 时间（{fabric_zh}）",
        # all_reduces = 2 × layers (− the MoE layers whose output the EP combine sums instead), 0 at TP 1;
        # latency_factor = serving_model's inter-node latency factor when TP spans nodes, else 1;
        # activations are BF16 (2 bytes)
        # per pipeline stage (a stage holds layers ÷ stages of them)
        "all_reduces * (latency_s * latency_factor + 2 * (TP - 1) / TP * tokens * hidden * 2 / link_bytes_s)"
        " / stages",
        context=("layers",),
    ),
    FigureDef(
        "performance.{group}.all_to_all_s",
        Unit.SECONDS,
        "{group_en}: EP dispatch + combine per decode step ({fabric})",
        "{group_zh}：每个解码步专家并行 dispatch + combine 时间（{fabric}）",
        formulas={
            # each of the TP ranks sends its slice of the tokens; a share (nodes − 1) ÷ nodes crosses nodes
            "ep": "moe_layers * (2 * latency_s + tokens / TP * top_k * hidden * (dispatch_bytes + combine_bytes)"
            " * (EP - 1) / EP * (1 / nodes / scale_up_bytes_s"
            " + (nodes - 1) / nodes / (scale_out_bytes_s * scale_out_efficiency))) / stages",
            "none": "0: no expert-parallel dispatch or combine (EP {EP}, {moe_layers} MoE layers)",
        },
        context=(
            "top_k",
            "hidden",
            "nodes",
            "scale_out_efficiency",
            "tokens",
            "TP",
            "latency_s",
            "dispatch_bytes",
            "combine_bytes",
            "scale_up_bytes_s",
            "scale_out_bytes_s",
            "stages",
        ),
    ),
    FigureDef(
        "performance.{group}.decode_step_s",
        Unit.SECONDS,
        "{group_en}: decode step time (estimate)",
        "{group_zh}：解码步时长（估算）",
        # per stage: layers ÷ stages × the fixed cost per layer + the larger of memory and compute
        # + collectives; a token passes every stage and (stages − 1) hops; draft_s: an MTP head runs
        # one layer of the target per draft token, a separate draft model its own weights and layers
        "overhead_s + stages * (layer_overhead_s + max(memory_time_s, compute_time_s) + tp_allreduce_s"
        " + all_to_all_s) + pipeline_hop_s + draft_s",
        context=("tokens_per_step", "replicated_weights_bytes", "weights_bytes_read"),
    ),
    FigureDef(
        "performance.{group}.kv_transfer_s",
        Unit.SECONDS,
        "{group_en}: KV transfer prefill → decode per request ({fabric})",
        "{group_zh}：每请求 KV 从预填充传到解码节点的时间（{fabric}）",
        "(prompt_tokens * kv_bytes_per_token + state_bytes_per_seq) / (device_bandwidth_bytes_s * scale_out_efficiency)",
    ),
    FigureDef(
        "performance.{group}.requests_per_s",
        Unit.REQUESTS_PER_S,
        "{group_en}: request capacity at the quoted concurrency (estimate)",
        "{group_zh}：报价并发下的请求处理能力（估算）",
        formulas={
            "prefill": "DP / prefill_s",
            # the token budget holds several prompts: a full pass carries prompts_per_pass of them
            "prefill_batched": "DP * prompts_per_pass / pass_s",
            "disaggregated": "DP * B * tokens_per_step / (output_tokens * step_s)",
            # chunked prefill: B requests per B × prefill + output ÷ tokens-per-step × step seconds
            "aggregated": "DP * B / (B * prefill_s + output_tokens / tokens_per_step * step_s)",
            "idle": "0: no running sequence ({B}) or no step time ({step_s})",
        },
        context=(
            "DP",
            "B",
            "prefill_s",
            "output_tokens",
            "step_s",
            "tokens_per_step",
            "prompts_per_pass",
            "pass_s",
        ),
    ),
    FigureDef(
        "performance.{group}.output_tokens_per_s",
        Unit.TOKENS_PER_S,
        "{group_en}: output throughput (estimate)",
        "{group_zh}：输出吞吐（估算）",
        "requests_per_s * output_tokens",
        context=("counts_toward_throughput",),
    ),
)

DEPLOYMENT = (
    FigureDef(
        "performance.prompt_tokens_computed",
        Unit.TOKENS,
        "Prompt tokens computed per request (after prefix-cache hits)",
        "每请求实际计算的输入 Token 数（扣除前缀缓存命中）",
        "max(1, round(input_tokens * (1 - prefix_cache_hit_rate)))",
        source=SourceKind.INPUT,
    ),
    FigureDef(
        "performance.tflops_per_device",
        Unit.TFLOPS,
        "Dense TFLOPS per device at the checkpoint's activation precision ({precision_en})",
        "按模型激活精度取的单卡稠密算力（{precision_zh}）",
        "the catalog's dense TFLOPS at {precision_used}, the precision {activation_format} computes in"
        " (W8A8/W4A8 → INT8), else BF16",
    ),
    FigureDef(
        "performance.tokens_per_step",
        Unit.TOKENS,
        "Tokens emitted per sequence per decode step (speculative decoding)",
        "每个解码步每条序列产出的 Token 数（投机解码）",
        # mean accepted length as vLLM reports it: the draft acceptance rate is accepted ÷ drafted
        # tokens (vllm/v1/spec_decode/metrics.py SpecDecodingLogging on main)
        "1 + k_draft_tokens * a_acceptance_rate",
        context=("a_acceptance_rate",),
        source=SourceKind.INPUT,
    ),
    FigureDef(
        "performance.ttft_s",
        Unit.SECONDS,
        "Time to first token, mean (estimate)",
        "首字延迟 TTFT 均值（估算）",
        formulas={
            # chunked prefill: the first token waits on average half a step of the running batch
            # while others keep the rank stepping (none for a lone user: the rank is idle)
            "aggregated": "request_overhead_s + prefill_s + queue_wait_s + kv_transfer_s"
            " + 0.5 * step_s * min(1, max(0, batch_per_dp_rank - 1))",
            "disaggregated": "request_overhead_s + prefill_s + queue_wait_s + kv_transfer_s + step_s",
            # one wave sent at once (no step in flight): its prompts share passes of max_num_batched_tokens
            # and the k-th prompt's first token waits for the pass that ends it (serving_model.wave_prefill:
            # the mean over the wave, wave_prefill_passes passes)
            "closed_batch": "request_overhead_s + wave_first_token_s + queue_wait_s + kv_transfer_s",
            "unserved": "0: no finite latency at {concurrency} users (no sequence fits a running slot"
            " or no group serves); request overhead {request_overhead_s}, prefill {prefill_s},"
            " queue wait {queue_wait_s}, KV transfer {kv_transfer_s}, step {step_s} do not apply",
        },
        context=("concurrency", "batch_per_dp_rank", "step_s"),
    ),
    FigureDef(
        "performance.tpot_s",
        Unit.SECONDS,
        "Time per output token, mean (estimate)",
        "每字延迟 TPOT 均值（估算）",
        formulas={
            # other requests' prefill chunks interleave with this request's decode steps
            "aggregated": "(output_tokens / tokens_per_step * step_s + max(batch_per_dp_rank - 1, 0) * prefill_s)"
            " / output_tokens",
            "disaggregated": "step_s / tokens_per_step",
            # one closed batch: no prompt arrives while it decodes
            "closed_batch": "step_s / tokens_per_step",
            "unserved": "0: no finite latency at {concurrency} users",
        },
        # decode_step_s is the group's step at the quoted batch rounded up; step_s the operating point's
        context=(
            "concurrency",
            "decode_step_s",
            "tokens_per_step",
            "step_s",
            "batch_per_dp_rank",
            "prefill_s",
            "output_tokens",
            "replicated_weights_bytes",
            "weights_bytes_read",
        ),
    ),
    FigureDef(
        "performance.queue_wait_s",
        Unit.SECONDS,
        "Queue wait before prefill at the quoted concurrency (estimate)",
        "报价并发下预填充前的排队等待（估算）",
        formulas={
            "aggregated": "closed loop: the users of {concurrency} beyond the {capacity_concurrency} running slots"
            " wait concurrency ÷ request rate − response time (Little's law, the same closed loop the"
            " throughput comes from)",
            "closed_batch": "one wave of {concurrency}: users beyond the {capacity_concurrency} running slots wait for the"
            " waves before theirs",
            "disaggregated": "M/D/c wait of the separate prefill pool (Allen–Cunneen) at the request rate"
            " {concurrency} users sustain; beyond {capacity_concurrency} users also concurrency ÷ capacity"
            " − response time",
        },
    ),
    FigureDef(
        "performance.ttft_p90_s",
        Unit.SECONDS,
        "Time to first token, P90 (estimate)",
        "首字延迟 TTFT P90（估算）",
        # the service part has its own spread; the waiting time of a queue is close to exponential
        "(ttft_s - queue_wait_s) * service_p90_over_mean + wait_p90_over_mean * queue_wait_s",
    ),
    FigureDef(
        "performance.tpot_p90_s",
        Unit.SECONDS,
        "Time per output token, P90 (estimate)",
        "每字延迟 TPOT P90（估算）",
        # spread seen in published sweeps (serving_model.TPOT_P90_OVER_MEAN)
        "tpot_s * tpot_p90_over_mean",
    ),
    FigureDef(
        "performance.requests_per_s",
        Unit.REQUESTS_PER_S,
        "Requests per second (deployment)",
        "每秒请求数（整体）",
        formulas={
            "estimate": "closed loop: {concurrency} users ÷ (TTFT + {output_tokens} × TPOT),"
            " capped by the running slots",
            "measured": "measured_output_tokens_per_s / output_tokens",
        },
        context=("serving_groups",),
    ),
    FigureDef(
        "performance.output_tokens_per_s",
        Unit.TOKENS_PER_S,
        "Output throughput (deployment)",
        "输出吞吐（整体）",
        "requests_per_s * output_tokens",
        context=("estimated_tokens_per_s",),
    ),
    FigureDef(
        "performance.output_tokens_per_s_range",
        Unit.TOKENS_PER_S,
        "Likely range of the measured throughput (cross-validated error band, {family})",
        "实测吞吐的可能区间（交叉验证误差带，{family}）",
        formulas={
            # band: predicted ÷ measured throughput of every public source of the hardware family when a
            # fit that never saw that source predicts it (leave-one-source-out); a family with fewer than
            # three sources gets at least 0.5–2.0 × (few_sources true)
            "estimate": "{output_tokens_per_s} ÷ {band_high} … {output_tokens_per_s} ÷ {band_low}",
            "measured": "the measured {output_tokens_per_s} (the band {band_low}–{band_high} is the estimate's)",
        },
        context=("family", "few_sources"),
        source=SourceKind.PUBLIC,
    ),
    FigureDef(
        "performance.input_tokens_per_s",
        Unit.TOKENS_PER_S,
        "Input tokens processed per second (deployment)",
        "输入 Token 处理速率（整体）",
        "requests_per_s * input_tokens",
    ),
    FigureDef(
        "performance.output_tokens_per_s_per_dp_rank",
        Unit.TOKENS_PER_S,
        "Output throughput per serving DP rank",
        "每个 DP rank 的输出吞吐",
        formulas={
            "ranks": "output_tokens_per_s / serving_dp_ranks",
            "none": "0: no serving DP rank ({serving_dp_ranks}) for {output_tokens_per_s}",
        },
    ),
    FigureDef(
        "performance.prefill_time_share",
        Unit.FRACTION,
        "Share of accelerator time spent on prefill (used to split cost between input and output tokens)",
        "预填充占用的算力时间比例（用于在输入/输出 Token 间分摊成本）",
        formulas={
            "disaggregated": "prefill_nodes / (prefill_nodes + decode_nodes)",
            "aggregated": "B * prefill_s / (B * prefill_s + output_tokens * tpot_s)",
            "idle": "0: no running sequence ({B}) to share a rank between prefill ({prefill_s})"
            " and decode ({output_tokens} × {tpot_s})",
        },
    ),
    FigureDef(
        "performance.capacity_concurrency",
        Unit.COUNT_USERS,
        "Concurrent requests served at once before new ones queue",
        "请求开始排队前可同时服务的并发数",
        formulas={
            "aggregated": "Σ over the serving groups of DP ranks × min({max_num_seqs}, sequences the KV cache holds)",
            "disaggregated": "Σ over the decode groups of DP ranks × min({max_num_seqs}, sequences the KV cache"
            " holds), lowered until prefill utilisation stays below 95 %",
        },
        context=("concurrency",),
    ),
    FigureDef(
        "performance.measured",
        Unit.NONE,
        "Throughput measured by a load test",
        "吞吐为压测实测值",
        "workload.measured_output_tokens_per_s ({measured_output_tokens_per_s}) is set",
        source=SourceKind.INPUT,
    ),
    FigureDef(
        "performance.sla.max_concurrency",
        Unit.COUNT_USERS,
        "Largest concurrency that meets every latency target (estimate)",
        "满足全部时延目标的最大并发数（估算）",
        "largest C with TTFT P50 ≤ {ttft_p50_s} s, TTFT P90 ≤ {ttft_p90_s} s, TPOT P50 ≤ {tpot_p50_ms} ms"
        " and TPOT P90 ≤ {tpot_p90_ms} ms (the targets set)",
    ),
    FigureDef(
        "performance.sla.met",
        Unit.NONE,
        "Latency targets met at the quoted concurrency",
        "报价并发下满足时延目标",
        "every estimated percentile ≤ its target: TTFT P50 {ttft_p50_s} s, TTFT P90 {ttft_p90_s} s,"
        " TPOT P50 {tpot_p50_ms} ms, TPOT P90 {tpot_p90_ms} ms (those with a target)",
    ),
    FigureDef(
        "performance.pd.prefill_requests_per_s",
        Unit.REQUESTS_PER_S,
        "Prefill pool capacity",
        "预填充池处理能力",
        "Σ DP ÷ prefill_s over {prefill_groups}",
    ),
    FigureDef(
        "performance.pd.decode_requests_per_s",
        Unit.REQUESTS_PER_S,
        "Decode pool capacity at the design point",
        "设计容量下的解码池处理能力",
        "Σ DP × B × tokens per step ÷ (output_tokens × step_s) over {decode_groups}, B the design point's"
        " sequences per DP rank",
    ),
    FigureDef(
        "performance.pd.ratio",
        Unit.TIMES,
        "P:D capacity ratio (prefill ÷ decode)",
        "P:D 能力比（预填充 ÷ 解码）",
        formulas={
            "ratio": "prefill_requests_per_s / decode_requests_per_s",
            "no_decode": "0: the decode pool serves nothing ({decode_requests_per_s}; prefill"
            " {prefill_requests_per_s})",
        },
        context=("bottleneck",),
    ),
)

DESIGN = (
    FigureDef(
        "performance.design.concurrency",
        Unit.COUNT_USERS,
        "Design capacity: concurrent requests carried within the latency targets",
        "设计容量：满足时延目标时可承载的并发数",
        formulas={
            "reached": "largest C ≤ {serving_dp_ranks} DP ranks × min({kv_seqs_fit_per_dp_rank} sequences the KV"
            " cache holds, {batch_cap} the step's token budget) with TTFT P50 ≤ {ttft_p50_s} s, TTFT P90 ≤"
            " {ttft_p90_s} s, TPOT P50 ≤ {tpot_p50_ms} ms, TPOT P90 ≤ {tpot_p90_ms} ms (those set); bisection"
            " over the step model, stopped by {limited_by}",
            "best_effort": "one request already misses a stated target; the best-effort design point:"
            " largest C ≤ {serving_dp_ranks} DP ranks × min({kv_seqs_fit_per_dp_rank} sequences the KV cache"
            " holds, {batch_cap} the step's token budget) within the missed targets relaxed to 1.5 × one"
            " request's figure: TTFT P50 ≤ {ttft_p50_s} s, TTFT P90 ≤ {ttft_p90_s} s, TPOT P50 ≤"
            " {tpot_p50_ms} ms, TPOT P90 ≤ {tpot_p90_ms} ms (those set); bisection over the step model,"
            " stopped by {limited_by}",
            "unreachable": "0: one request already misses a target (TTFT P50 {ttft_p50_s} s, TTFT P90"
            " {ttft_p90_s} s, TPOT P50 {tpot_p50_ms} ms, TPOT P90 {tpot_p90_ms} ms; {limited_by}; KV room"
            " {kv_seqs_fit_per_dp_rank}, budget {batch_cap}, {serving_dp_ranks} DP ranks)",
        },
    ),
    FigureDef(
        "performance.design.concurrency_range",
        Unit.COUNT_USERS,
        "Design capacity within the cross-validated error band (conservative – optimistic)",
        "交叉验证误差带内的设计容量（保守 – 乐观）",
        # band: predicted ÷ measured throughput of every public source of the plan's hardware family,
        # each predicted by a fit that never saw it (docs/performance.md §3); every time of the step
        # model scaled by a factor scales each latency by it in the closed loop (performance/design.py
        # scaled_targets), so the design point of a hardware that slow meets the targets ÷ the factor
        "{concurrency_low} (the same search within the targets ÷ {band_high}) … {concurrency_high}"
        " (within the targets ÷ {band_low}); the estimate {concurrency}",
        source=SourceKind.PUBLIC,
    ),
    FigureDef(
        "performance.design.output_tokens_per_s_low",
        Unit.TOKENS_PER_S,
        "Output throughput at the conservative end of the design capacity",
        "设计容量保守端的输出吞吐",
        "estimated_output_tokens_per_s / band_high",
        context=("concurrency_low",),
    ),
    FigureDef(
        "performance.design.max_num_seqs_per_dp_rank",
        Unit.COUNT_SEQUENCES,
        "Running sequences per DP rank at the design capacity (--max-num-seqs to set)",
        "设计容量下每个 DP rank 的运行序列数（应设置的 --max-num-seqs）",
        "ceil(concurrency / serving_dp_ranks)",
    ),
    FigureDef(
        "performance.design.output_tokens_per_s",
        Unit.TOKENS_PER_S,
        "Output throughput at the design capacity",
        "设计容量下的输出吞吐",
        "requests_per_s * output_tokens",
        context=("concurrency",),
    ),
    FigureDef(
        "performance.design.ttft_p90_s",
        Unit.SECONDS,
        "TTFT P90 at the design capacity",
        "设计容量下的首字延迟 P90",
        "the step model's TTFT P90 at {concurrency} concurrent requests",
    ),
    FigureDef(
        "performance.design.tpot_p90_s",
        Unit.SECONDS,
        "TPOT P90 at the design capacity",
        "设计容量下的每字延迟 P90",
        "the step model's TPOT P90 at {concurrency} concurrent requests",
    ),
)

DEFS = FACTORS + GROUP + DEPLOYMENT + DESIGN
