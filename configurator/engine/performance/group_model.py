"""One serving group's step-time model: its shape, prefill, KV room and decode step at any batch."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from .. import serving_model as sm
from ..defaults import block_size_for
from ..engine_versions import dsa_layer_bytes, engine_for
from ..memory import kv_dtype_bytes, seqs_fit, stage_layers
from ..speculative import role_serving
from ..types import GroupLayout, GroupMemory, LayoutResult, PlanRequest


def _eight_bit(fmt: str) -> bool:
    fmt = fmt.lower()
    return any(tag in fmt for tag in ("fp8", "int8", "a8"))


@dataclass
class GroupModel:
    """Everything needed to evaluate one group's step time at any batch."""

    req: PlanRequest
    layout: GroupLayout
    shape: sm.GroupShape
    factors: sm.PlatformFactors
    mean_context: float
    kv_per_token: int
    state_per_seq: int
    lm_non_expert: float
    tflops: float
    draft_tokens: int
    acceptance: float
    eight_bit: bool
    scale_out_efficiency: float
    prefill: sm.PrefillBreakdown
    slots: int
    kv_transfer_s: float = 0.0
    kv_fit: int = 0
    rank_non_expert: float | None = None  # what one rank holds (memory result), replicated groups included
    rank_expert: float | None = None
    replicated: float = 0.0
    draft: sm.DraftSpec | None = None
    sparse_latent: int = 0  # per token: the MLA latents a DSA query reads for its top-k only
    rest_tflops: float | None = None  # GEMMs outside the routed experts (None: at ``tflops``)
    weight_format: str = ""
    gathered_embedding: float = 0.0  # the input embedding a rank holds and only gathers rows of (per stage)
    _cache: dict[float, sm.StepBreakdown] = field(default_factory=dict)
    # The prefill pool's latency over some DP ranks (sm.pool_latency), with the breakdown it was made of.
    _pools: dict[int, tuple[sm.PrefillBreakdown, Callable[[float], float]]] = field(default_factory=dict)

    def step(self, batch: float) -> sm.StepBreakdown:
        key = round(max(batch, 1.0), 3)
        hit = self._cache.get(key)
        if hit is None:
            hit = sm.decode_step(
                self.req.model,
                self.req.server,
                self.shape,
                self.factors,
                batch=key,
                mean_context=self.mean_context,
                kv_bytes_per_token=self.kv_per_token,
                state_bytes_per_seq=self.state_per_seq,
                lm_non_expert_bytes=self.lm_non_expert,
                tflops=self.tflops,
                rest_tflops=self.rest_tflops,
                weight_format=self.weight_format,
                draft_tokens=self.draft_tokens,
                acceptance=self.acceptance,
                eight_bit=self.eight_bit,
                scale_out_efficiency=self.scale_out_efficiency,
                rank_non_expert_bytes=self.rank_non_expert,
                rank_expert_bytes=self.rank_expert,
                replicated_bytes=self.replicated,
                draft=self.draft,
                sparse_latent_bytes_per_token=self.sparse_latent,
                gathered_bytes=self.gathered_embedding,
            )
            self._cache[key] = hit
        return hit

    def pool_latency(self, ranks: int) -> Callable[[float], float]:
        """``sm.pool_latency`` of this group's prefill as a pool of ``ranks`` DP ranks, made once per group
        model: every xPyD operating point of a plan asks for it (performance/queueing.py), and it
        remembers the arrival rates it was asked for, which the points' bisections share."""
        kept = self._pools.get(ranks)
        if kept is None or kept[0] is not self.prefill:
            kept = self._pools[ranks] = (self.prefill, sm.pool_latency(self.prefill, ranks))
        return kept[1]


def build_group_model(
    req: PlanRequest,
    g: GroupLayout,
    gm: GroupMemory | None,
    layout: LayoutResult,
    factors: sm.PlatformFactors,
    *,
    tflops: float,
    computed_prompt_tokens: int,
    context_tokens: int,
    mean_context: float,
    lm_non_expert_bytes: int,
    draft: int,
    acceptance: float,
    disaggregated: bool,
    draft_spec: sm.DraftSpec | None = None,
    activation_format: str | None = None,
) -> GroupModel:
    model, server, perf = req.model, req.server, req.performance
    serving = role_serving(req.serving, g.role)  # xPyD: the role's own settings (engine/speculative.py)
    p = g.parallel
    tp, dp = max(p.tp, 1), max(p.dp, 1)
    per_node = layout.devices_per_node or server.logical_devices
    shape = sm.GroupShape(
        tp, dp, max(p.ep, 1), p.expert_parallel, max(g.nodes, 1), max(per_node, 1), max(p.pp, 1)
    )
    eight_bit = _eight_bit(activation_format if activation_format is not None else model.activation_format)
    rank = gm.per_rank if gm else None
    # Bytes the step reads: what the memory result says one rank holds for the chosen checkpoint
    # (engine/memory.py weights_breakdown), replicated groups included, vision tower excluded.
    rank_non_expert: float | None = None
    rank_expert: float | None = None
    replicated = 0.0
    if rank is not None and rank.weights_bytes > 0:
        vision = 0 if serving.language_model_only else (model.vision_bytes if model.has_vision else 0)
        rank_non_expert = float(max(rank.non_expert_weights_bytes - vision, 0))
        rank_expert = float(rank.expert_weights_bytes)
        replicated = float(rank.replicated_weights_bytes)
    # The checkpoint's weight format: a release that quantises its routed experts only runs the rest
    # of its GEMMs in BF16 (serving_model.EXPERTS_ONLY_FORMATS).
    weight_format = req.checkpoint.weight_format if req.checkpoint is not None else model.weight_format
    rest = sm.rest_tflops(server, model, tflops, weight_format)
    gathered = sm.gathered_embedding_bytes(model, tp, max(p.pp, 1))
    prefill = sm.prefill_time(
        model,
        server,
        shape,
        factors,
        prompt_tokens=computed_prompt_tokens,
        lm_non_expert_bytes=lm_non_expert_bytes,
        tflops=tflops,
        rest_tflops=rest,
        weight_format=weight_format,
        chunk_tokens=serving.max_num_batched_tokens,
        eight_bit=eight_bit,
        scale_out_efficiency=perf.scale_out_efficiency,
        rank_weight_bytes=(rank_non_expert or 0.0) + (rank_expert or 0.0)
        if rank_non_expert is not None
        else None,
        gathered_bytes=gathered,
    )
    kv_fit = seqs_fit(
        gm, context_tokens, block_size_for(serving, server.accelerator.software_stack), serving.max_num_seqs
    )  # block size 0 → the platform's default (engine/defaults.py)
    kv_transfer = 0.0
    if disaggregated and g.role == "decode" and rank is not None:
        # P and D pools sit in different engines: KV moves over the scale-out NICs.
        bw, _ = sm.inter_node_bytes_s_per_device(server, scale_up_allowed=False)
        per_request = computed_prompt_tokens * rank.kv_bytes_per_token + rank.state_bytes_per_seq
        kv_transfer = per_request / (bw * perf.scale_out_efficiency)
    sparse_latent = 0
    if sm.is_sparse_attention(model) and model.index_head_dim > 0:
        # The latent as the targeted engine lays it out (engine_versions.dsa_layer_bytes), the stage's
        # MLA layers: what memory.kv_bytes_per_token counts for them, less the indexer keys.
        dsa = dsa_layer_bytes(
            engine_for(server.accelerator.software_stack, serving.engine),
            serving.vllm_version,
            model.kv_lora_rank,
            model.qk_rope_head_dim,
            model.index_head_dim,
            kv_dtype_bytes(serving.kv_cache_dtype),
        )
        sparse_latent = dsa.latent * stage_layers(model.mla_layers, max(p.pp, 1))
    return GroupModel(
        req=req,
        layout=g,
        shape=shape,
        factors=factors,
        mean_context=mean_context,
        kv_per_token=rank.kv_bytes_per_token if rank else 0,
        state_per_seq=rank.state_bytes_per_seq if rank else 0,
        lm_non_expert=float(lm_non_expert_bytes),
        tflops=tflops,
        rest_tflops=rest,
        weight_format=weight_format,
        draft_tokens=draft,
        acceptance=acceptance,
        eight_bit=eight_bit,
        scale_out_efficiency=perf.scale_out_efficiency,
        prefill=prefill,
        slots=max(0, min(serving.max_num_seqs, kv_fit)),
        kv_transfer_s=kv_transfer,
        kv_fit=kv_fit,
        rank_non_expert=rank_non_expert,
        rank_expert=rank_expert,
        replicated=replicated,
        draft=draft_spec,
        sparse_latent=sparse_latent,
        gathered_embedding=gathered,
    )
