"""The decode step of one serving group as explained figures (bytes, memory, compute, collectives)."""

from __future__ import annotations

from .. import serving_model as sm
from ..explain import public
from ..figures import FigureBook
from ..types import GroupLayout, Source
from ..vocabulary import fabric_label
from .common import ESTIMATE_SOURCE, fig_input, fig_value
from .group_model import GroupModel


def add_step_figures(
    book: FigureBook, g: GroupLayout, gm: GroupModel, st: sm.StepBreakdown, batch: int
) -> None:
    if not book.recording:  # a screening pass keeps no figure: none to work out
        return
    model = gm.req.model
    shape = gm.shape
    comm = st.comm
    assert comm is not None  # serving_model.decode_step always sets it
    book.put(
        f"performance.{g.name}.experts_touched_fraction",
        fig_value(st.experts_touched),
        variant=("moe_ep" if shape.expert_parallel and shape.ep > 1 else "moe") if model.is_moe else "dense",
        source=ESTIMATE_SOURCE,
        top_k=model.experts_per_token,
        experts=model.num_experts,
        B=max(batch, 1),
        PP=max(shape.pp, 1),
        tokens_per_seq_per_step=1 + gm.draft_tokens,
        DP_sharing_experts=shape.dp if shape.expert_parallel else 1,
        experts_per_rank=g.experts_per_rank,
        EP=shape.ep if shape.expert_parallel else 1,
    )
    micro = max(max(batch, 1) / shape.pp, 1.0)
    kv_per_seq = st.kv_bytes / micro
    if sm.is_sparse_attention(model) and gm.sparse_latent > 0:
        book.put(
            f"performance.{g.name}.kv_bytes_read_per_seq",
            fig_value(kv_per_seq),
            variant="dsa",
            source=public(
                "vLLM model_executor/models/deepseek_v2.py Indexer (topk_tokens = index_topk): the sparse MLA "
                "kernel gathers the latents of the top-k tokens, the indexer reads every key"
            ),
            mean_context=fig_input(gm.mean_context),
            kv_bytes_per_token=gm.kv_per_token,
            top_k=model.index_topk,
            latent_bytes_per_token=gm.sparse_latent,
            state_bytes_per_seq=gm.state_per_seq,
        )
    else:
        book.put(
            f"performance.{g.name}.kv_bytes_read_per_seq",
            fig_value(kv_per_seq),
            variant="dense",
            source=ESTIMATE_SOURCE,
            mean_context=fig_input(gm.mean_context),
            kv_bytes_per_token=gm.kv_per_token,
            state_bytes_per_seq=gm.state_per_seq,
        )
    if gm.rank_non_expert is not None:
        # What the memory result says one rank holds for the chosen checkpoint, replicated groups included.
        book.put(
            f"performance.{g.name}.bytes_per_step_per_rank",
            fig_value(st.weights_bytes + st.kv_bytes),
            variant="held",
            source=ESTIMATE_SOURCE,
            rank_non_expert_bytes=fig_input(gm.rank_non_expert),
            rank_expert_bytes=fig_input(gm.rank_expert or 0.0),
            touched=fig_input(st.experts_touched),
            micro_batch=fig_input(micro),
            B=batch,
            kv_bytes_read_per_seq=fig_input(kv_per_seq),
            gathered_embedding_bytes=fig_input(gm.gathered_embedding),
            replicated_weights_bytes=int(st.replicated_bytes),
        )
    elif shape.expert_parallel:
        book.put(
            f"performance.{g.name}.bytes_per_step_per_rank",
            fig_value(st.weights_bytes + st.kv_bytes),
            variant="ep",
            source=ESTIMATE_SOURCE,
            non_expert_lm_bytes=fig_input(gm.lm_non_expert),
            TP=shape.tp,
            stages=shape.pp,
            expert_bytes=model.expert_weight_bytes,
            EP=shape.ep,
            touched=fig_input(st.experts_touched),
            micro_batch=fig_input(micro),
            B=batch,
            kv_bytes_read_per_seq=fig_input(kv_per_seq),
            gathered_embedding_bytes=fig_input(gm.gathered_embedding),
            replicated_weights_bytes=int(st.replicated_bytes),
        )
    else:
        book.put(
            f"performance.{g.name}.bytes_per_step_per_rank",
            fig_value(st.weights_bytes + st.kv_bytes),
            variant="tp",
            source=ESTIMATE_SOURCE,
            non_expert_lm_bytes=fig_input(gm.lm_non_expert),
            TP=shape.tp,
            stages=shape.pp,
            expert_bytes=model.expert_weight_bytes,
            touched=fig_input(st.experts_touched),
            micro_batch=fig_input(micro),
            B=batch,
            kv_bytes_read_per_seq=fig_input(kv_per_seq),
            gathered_embedding_bytes=fig_input(gm.gathered_embedding),
            replicated_weights_bytes=int(st.replicated_bytes),
        )
    bw = gm.req.server.accelerator.memory_bandwidth_bytes_s
    book.put(
        f"performance.{g.name}.memory_time_s",
        fig_value(st.memory_s),
        source=ESTIMATE_SOURCE,
        bytes_per_step=fig_input(st.weights_bytes + st.kv_bytes),
        expert_bytes_read=fig_input(st.expert_bytes_read),
        bandwidth_bytes_s=fig_input(bw),
        bandwidth_efficiency=fig_input(gm.factors.bandwidth_efficiency),
        expert_bandwidth_efficiency=fig_input(gm.factors.expert_efficiency),
    )
    book.put(
        f"performance.{g.name}.compute_time_s",
        fig_value(st.compute_s),
        source=ESTIMATE_SOURCE,
        B=batch,
        micro_batch=fig_input(micro),
        stages=shape.pp,
        draft_tokens=gm.draft_tokens,
        active_params=model.active_params,
        attention_flops_per_token=fig_input(st.attention_flops_per_token),
        TP=shape.tp,
        TFLOPS=fig_input(gm.tflops),
        MFU=fig_input(gm.factors.compute_efficiency),
    )
    book.put(
        f"performance.{g.name}.tp_allreduce_s",
        fig_value(st.tp_allreduce_s),
        # the fabric the all-reduce crosses (not the step's EP fabric), as the page names it; NCCL where
        # vLLM's custom all-reduce does not serve the group (serving_model.nccl_over_pcie)
        label={
            "fabric_en": fabric_label(comm.tp_fabric, "en") + (", NCCL" if comm.tp_nccl_over_pcie else "")
            if shape.tp > 1
            else "none",
            "fabric_zh": fabric_label(comm.tp_fabric, "zh") + ("，NCCL" if comm.tp_nccl_over_pcie else "")
            if shape.tp > 1
            else "无",
        },
        source=Source(
            "derived",
            "NCCL over PCIe: vLLM's custom all-reduce serves at most two PCIe-only GPUs; latency and bus "
            "bandwidth from public nccl-tests results"
            if comm.tp_nccl_over_pcie
            else "scale-up fabric of the server (catalog)",
        ),
        TP=shape.tp,
        layers=model.num_layers,
        hidden=model.hidden_size,
        latency_s=fig_input(comm.tp_base_latency_s),
        all_reduces=comm.all_reduces,
        latency_factor=fig_input(comm.tp_latency_factor),
        tokens=fig_input(comm.tokens),
        link_bytes_s=fig_input(comm.tp_link_bytes_s),
        stages=shape.pp,
    )
    book.put(
        f"performance.{g.name}.all_to_all_s",
        fig_value(st.ep_dispatch_combine_s),
        variant="ep" if comm.ep_layers else "none",
        label={"fabric": st.fabric},
        source=Source("derived", "server NICs and scale-up fabric (catalog)"),
        EP=shape.ep if shape.expert_parallel else 1,
        moe_layers=model.moe_layers,
        top_k=model.experts_per_token,
        hidden=model.hidden_size,
        nodes=shape.nodes,
        scale_out_efficiency=fig_input(gm.scale_out_efficiency),
        tokens=fig_input(comm.tokens),
        TP=shape.tp,
        latency_s=fig_input(comm.ep_latency_s),
        dispatch_bytes=comm.dispatch_bytes,
        combine_bytes=comm.combine_bytes,
        scale_up_bytes_s=fig_input(comm.scale_up_bytes_s),
        scale_out_bytes_s=fig_input(comm.scale_out_bytes_s),
        stages=shape.pp,
    )
    book.put(
        f"performance.{g.name}.decode_step_s",
        fig_value(st.step_s),
        source=ESTIMATE_SOURCE,
        overhead_s=fig_input(st.overhead_s),
        stages=shape.pp,
        layer_overhead_s=fig_input(st.layer_overhead_s),
        pipeline_hop_s=fig_input(st.pipeline_hop_s),
        replicated_weights_bytes=int(st.replicated_bytes),
        weights_bytes_read=int(st.weights_bytes),
        memory_time_s=fig_input(st.memory_s),
        compute_time_s=fig_input(st.compute_s),
        tp_allreduce_s=fig_input(st.tp_allreduce_s),
        all_to_all_s=fig_input(st.ep_dispatch_combine_s),
        draft_s=fig_input(st.draft_s),
        tokens_per_step=fig_input(st.tokens_per_step),
    )
