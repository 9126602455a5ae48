"""Figures of accelerator memory per rank (engine/memory.py, docs/domain.md §6 and §12).

The first serving group's figures are ``memory.per_rank.…`` and ``memory.…``; a further group
with another layout adds its name: ``memory.decode.per_rank.…`` (``{group?}`` is empty or
``decode.``).  Which weights a platform keeps whole on every rank is engine/placement.py.
"""

from ..book import FigureDef, SourceKind, Unit

R = "memory.{group?}per_rank"
G = "memory.{group?}"

DEFS = (
    # ------------------------------------------------------------------ one rank's budget
    FigureDef(
        f"{R}.device_bytes",
        Unit.BYTES,
        "Memory per logical device",
        "每卡显存",
        formulas={
            # The total the runtime reports (torch.npu/cuda mem_get_info), when the catalog has it.
            "runtime": "runtime_memory_bytes",
            # Otherwise the vendor's memory per logical device.
            "vendor": "memory_bytes",
        },
        context=("accelerator",),
        source=SourceKind.PUBLIC,
    ),
    FigureDef(
        f"{R}.usable_bytes",
        Unit.BYTES,
        "Usable per rank",
        "每卡可用显存",
        "floor(device_bytes * gpu_memory_utilization)",
        source=SourceKind.PUBLIC,
    ),
    FigureDef(
        f"{R}.non_expert_weights_bytes",
        Unit.BYTES,
        "Non-expert weights per rank",
        "每卡非专家权重",
        # The language model's split part, less the groups the platform replicates (as stored),
        # plus those groups as loaded and the vision tower (0 with --language-model-only).
        "ceil(max(non_expert_bytes - min(vision_bytes, non_expert_bytes) - replicated_stored_bytes, 0)"
        " / (tp * pp)) + replicated_per_rank + vision_per_rank",
        context=("checkpoint", "language_model_only"),
    ),
    FigureDef(
        f"{R}.replicated_weights_bytes",
        Unit.BYTES,
        "Weights replicated on every rank",
        "每卡复制（不切分）的权重",
        # Each group's bytes as loaded, 0 where the platform splits it (engine/placement.py).
        "ceil((router + latent_moe + mla_a + kda_f_a) / pp)",
        source=SourceKind.PUBLIC,
    ),
    FigureDef(
        f"{R}.expert_weights_bytes",
        Unit.BYTES,
        "Routed-expert weights per rank",
        "每卡路由专家权重",
        formulas={
            "ep": "ceil(checkpoint_expert_bytes / (ep * pp))",
            # Expert parallelism off: the experts are split by TP like every other layer.
            "tp": "ceil(checkpoint_expert_bytes / (tp * pp))",
            # MXFP4 experts on a GPU without FP4 tensor cores, held in the Marlin / Triton kernels' padded
            # layout (vLLM quantization/mxfp4.py): hidden to a multiple of 256, each rank's width to 128 / 64.
            "padded": "ceil(ceil(checkpoint_expert_bytes / (expert_divisor * pp)) * hidden_padded"
            " * intermediate_padded / (hidden_size * intermediate_per_rank))",
        },
        context=("expert_bytes",),
    ),
    FigureDef(
        f"{R}.weights_bytes",
        Unit.BYTES,
        "Weights per rank",
        "每卡权重",
        "non_expert_per_rank + expert_per_rank + draft_per_rank",
        context=("weight_format",),
    ),
    FigureDef(
        f"{R}.draft_weights_bytes",
        Unit.BYTES,
        "Speculative draft weights per rank",
        "每卡投机解码草稿模型权重",
        # The draft loads with the target's tensor parallelism (vLLM SpeculativeConfig
        # draft_tensor_parallel_size defaults to the target's).
        "ceil(draft_bytes / tp)",
        context=("draft",),
        source=SourceKind.PUBLIC,
    ),
    FigureDef(
        f"{R}.activation_bytes",
        Unit.BYTES,
        "Peak activations per rank",
        "每卡激活峰值",
        formulas={
            # vLLM's profile_run: the forward pass over max_num_batched_tokens, then (last PP stage)
            # the sampler warm-up over max_num_seqs dummy requests; the peak is the larger.
            "estimate": "max(max_num_batched_tokens * hidden_size * activation_dtype_bytes"
            " * (hidden_tensors + copies_per_routed_expert * experts_per_token),"
            " min(max_num_seqs, max_num_batched_tokens) * vocab_size * sampler_bytes_per_logit)",
            "typed": "{activation_bytes} as typed (serving.activation_bytes), in place of the estimate over"
            " {max_num_batched_tokens} tokens × {hidden_size} hidden × ({experts_per_token} experts per token)"
            " and {max_num_seqs} sequences × {vocab_size} vocabulary",
        },
        # Earlier pipeline stages run no sampler: their peak is the forward pass alone.
        context=("forward_bytes", "sampler_bytes", "stages_before_last_bytes"),
        source=SourceKind.ASSUMED,
    ),
    FigureDef(
        f"{R}.buffer_bytes",
        Unit.BYTES,
        "Communication buffers per rank",
        "每卡通信缓冲",
        formulas={
            # HCCL: an input and an output buffer per communicator; MC2 at HCCL_BUFFSIZE (comm_buffer_mb).
            "hccl": "buffers_per_communicator * (group_buffer_mb + mc2_groups * comm_buffer_mb) * 2 ** 20"
            " + non_torch_bytes",
            # NCCL: the TP, PP and EP communicators' channel and custom all-reduce buffers.
            "nccl": "nccl_communicators * bytes_per_communicator + non_torch_bytes",
            # serving.comm_buffer_groups typed: a flat buffer per group.
            "typed": "comm_buffer_mb * 2 ** 20 * comm_buffer_groups + non_torch_bytes",
        },
        context=("communicators", "comm_buffer_mb", "communication_bytes"),
        source=SourceKind.PUBLIC,
    ),
    FigureDef(
        f"{R}.graph_bytes",
        Unit.BYTES,
        "Graph capture memory per rank",
        "每卡图捕获内存",
        formulas={
            "typed": "graph_memory_bytes",
            # Eager mode, vLLM-Ascend and vLLM before 0.21 take no graph memory out of the KV budget
            # (engine/engine_versions.py: what each engine version subtracts).
            "none": "0",
            # vLLM ≥ 0.21 with CUDA graphs subtracts its own estimate: the descriptors it captures
            # (PIECEWISE capture sizes, FULL uniform-decode sizes) × the growth per descriptor its
            # version's logs print (engine/engine_versions.py GRAPH_BYTES_PER_DESCRIPTOR).
            "estimate": "(piecewise_graphs + full_graphs) * bytes_per_graph",
        },
        context=("engine", "eager"),
        source=SourceKind.ASSUMED,
    ),
    FigureDef(
        f"{R}.kv_cache_bytes",
        Unit.BYTES,
        "KV cache per rank",
        "每卡 KV 缓存",
        "usable - weights - activations - buffers - graphs",
        source=SourceKind.PUBLIC,
    ),
    FigureDef(
        f"{R}.free_bytes",
        Unit.BYTES,
        "Held back by the utilisation cap",
        "利用率上限预留",
        "device - usable",
    ),
    # ------------------------------------------------------------------ what the KV pool holds
    FigureDef(
        f"{R}.kv_bytes_per_token",
        Unit.BYTES_PER_TOKEN,
        "KV bytes per token per rank",
        "每卡每 token KV 字节数",
        # GQA layers: K and V of max(1, kv_heads ÷ TP) heads; MLA layers: the latent, not split by TP;
        # DeepSeek sparse attention: the latent and the indexer's key as the engine lays them out
        # (engine_versions.dsa_layer_bytes).
        formulas={
            "dense": "2 * max(1, ceil(kv_heads / tp)) * head_dim * dtype_bytes * ceil(gqa_layers / pp)"
            " + (kv_lora_rank + qk_rope_head_dim) * dtype_bytes * ceil(mla_layers / pp)"
            " + draft_kv_bytes_per_token",
            "dsa": "2 * max(1, ceil(kv_heads / tp)) * head_dim * dtype_bytes * ceil(gqa_layers / pp)"
            " + (latent_bytes + indexer_bytes) * ceil(mla_layers / pp) + draft_kv_bytes_per_token",
        },
        source=SourceKind.PUBLIC,
    ),
    FigureDef(
        f"{R}.draft_kv_bytes_per_token",
        Unit.BYTES_PER_TOKEN,
        "Speculative draft KV bytes per token per rank",
        "每卡每 token 草稿模型 KV 字节数",
        # The draft's attention layers join vLLM's KV-cache spec beside the target's: a GQA draft's K and
        # V of max(1, kv_heads ÷ TP) heads a layer (vLLM ModelConfig.get_num_kv_heads); an MTP head is one
        # more layer of the target's own attention type.
        formulas={
            "gqa": "draft_layers * 2 * max(1, floor(draft_kv_heads / tp)) * draft_head_dim * dtype_bytes",
            "target_layer": "draft_layers * target_layer_kv_bytes",
        },
        source=SourceKind.PUBLIC,
    ),
    FigureDef(
        f"{R}.state_bytes_per_seq",
        Unit.BYTES_PER_SEQUENCE,
        "Fixed state per running sequence per rank",
        "每条请求每卡固定状态",
        # Linear-attention layers: recurrent state + short-convolution state; sliding-window
        # layers: the window (up to max_model_len) in whole blocks.
        "ceil(linear_layers / pp) * (ceil(linear_num_heads / tp) * linear_head_dim ** 2 * state_dtype_bytes"
        " + max(conv_kernel - 1, 0) * ceil(conv_dim / tp) * conv_dtype_bytes)"
        " + ceil(sliding_layers / pp) * ceil(min(sliding_window, max_model_len) / block_size) * block_size"
        " * sliding_kv_bytes_per_token",
    ),
    FigureDef(
        f"{R}.kv_tokens",
        Unit.TOKENS,
        "KV tokens per rank",
        "每卡 KV 容量（tokens）",
        formulas={
            # One attention type: vLLM's blocks of kv_bytes_per_token × block_size.
            "uniform": "max(floor(kv_cache_bytes / (kv_bytes_per_token * block_size)), 0) * block_size",
            # Full + sliding-window layers (vLLM kv_cache_utils): group_size-layer blocks of one shared
            # pool, reported per KV-cache group.
            "groups": "floor(max(floor(kv_cache_bytes / (layer_kv_bytes_per_token * block_size * group_size)), 0)"
            " / groups) * block_size",
        },
        source=SourceKind.PUBLIC,
    ),
    # ------------------------------------------------------------------ per DP rank and per group
    FigureDef(
        f"{G}kv_tokens_per_dp_rank",
        Unit.TOKENS,
        "KV tokens per DP rank",
        "每个数据并行副本的 KV 容量（Token）",
        # The TP ranks of a DP rank mirror the same tokens.
        "kv_tokens_per_rank",
        context=("tp",),
    ),
    FigureDef(
        f"{G}full_len_seqs_per_dp_rank",
        Unit.COUNT_SEQUENCES,
        "Full-length sequences at once per DP rank",
        "每个数据并行副本可同时容纳的满长度请求数",
        "max(floor(kv_cache_bytes / (ceil(max_model_len / block_size) * block_size * kv_bytes_per_token"
        " + state_bytes_per_seq)), 0)",
    ),
    FigureDef(
        f"{G}requested_tokens_per_dp_rank",
        Unit.TOKENS,
        "Context requested per DP rank",
        "每个数据并行副本配置的上下文总量",
        "max_num_seqs * max_model_len",
    ),
    FigureDef(
        f"{G}cluster_weights_bytes",
        Unit.BYTES,
        "Weights held by the group",
        "集群权重总占用",
        "weights_per_rank * devices",
    ),
    FigureDef(
        f"{G}cluster_kv_bytes",
        Unit.BYTES,
        "KV cache of the group",
        "集群 KV 缓存总量",
        # MLA replicas included: every rank's pool counts.
        "kv_cache_per_rank * devices",
    ),
    # ------------------------------------------------------------------ the deployment
    FigureDef(
        "memory.checkpoint_bytes",
        Unit.BYTES,
        "Checkpoint loaded by every node",
        "每个节点加载的权重文件",
        "expert_bytes + non_expert_bytes",
        context=("checkpoint",),
        source=SourceKind.PUBLIC,
    ),
    FigureDef(
        "memory.deployment_weights_bytes",
        Unit.BYTES,
        "Weights held across the deployment",
        "全部署权重总占用",
        # Σ over the serving groups (DP replicas and standby clusters included).
        "group_weights",
        terms="group_weights",
    ),
)
