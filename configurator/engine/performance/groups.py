"""Estimate for one serving group: prefill, running batch, decode step, KV transfer and capacity."""

from __future__ import annotations

from dataclasses import replace

from .. import serving_model as sm
from ..checks import raise_
from ..figures import FigureBook
from ..types import Check, GroupLayout, GroupPerformance, PlanRequest, Source
from ..vocabulary import group_label
from .common import COUNTED_DECODE_ROLES, ESTIMATE_SOURCE, fig_input, fig_value
from .decode import add_step_figures
from .group_model import GroupModel


def group_estimate(
    req: PlanRequest,
    g: GroupLayout,
    gmodel: GroupModel,
    book: FigureBook,
    checks: list[Check],
    *,
    computed_prompt_tokens: int,
    output_tokens: int,
    context_tokens: int,
    offered_per_rank: int,
    disaggregated: bool,
) -> GroupPerformance:
    model, serving, server = req.model, req.serving, req.server
    p = g.parallel
    tp, dp, ep = gmodel.shape.tp, gmodel.shape.dp, gmodel.shape.ep
    counts = g.role in COUNTED_DECODE_ROLES
    decodes = g.role != "prefill"
    pre = gmodel.prefill
    prefill_s = pre.prefill_s
    moe_layers, dense_layers = sm.prefill_layer_counts(model)

    book.put(
        f"performance.{g.name}.prefill_s",
        fig_value(prefill_s),
        source=ESTIMATE_SOURCE,
        active_params=model.active_params,
        prompt_tokens=computed_prompt_tokens,
        TP=tp,
        TFLOPS=fig_input(gmodel.tflops),
        MFU=fig_input(gmodel.factors.prefill_efficiency),
        compute_s=fig_input(pre.compute_s),
        memory_s=fig_input(pre.memory_s),
        collectives_s=fig_input(pre.comm_s),
        overhead_s=fig_input(pre.overhead_s),
        chunks=pre.chunks,
        prefill_layer_overhead_s=fig_input(gmodel.factors.prefill_layer_overhead_s),
        moe_layers=moe_layers,
        dense_layers=dense_layers,
    )

    # ---- batch per DP rank at the quoted concurrency
    kv_fit = gmodel.kv_fit
    offered = offered_per_rank if counts else 0
    if not decodes:
        batch, limited_by = 0, "none"
    else:
        if g.role == "standby":
            offered = min(offered_per_rank, serving.max_num_seqs)  # what it would run after a failover
        batch = min(offered, gmodel.slots)
        if batch == offered:
            limited_by = "concurrency"
        elif gmodel.slots < serving.max_num_seqs:
            limited_by = "kv_capacity"
        else:
            limited_by = "max_num_seqs"
    if decodes:
        book.put(
            f"performance.{g.name}.batch_per_dp_rank",
            batch,
            source=ESTIMATE_SOURCE,
            offered=offered,
            max_num_seqs=serving.max_num_seqs,
            kv_seqs_fit=kv_fit,
            context_tokens=context_tokens,
            limited_by=limited_by,
        )
        if counts and kv_fit < min(offered, serving.max_num_seqs):
            checks.append(
                raise_(
                    "performance.batch_limited_by_kv",
                    figures={"kv_seqs_fit": kv_fit, "offered": offered},
                    group_en=group_label(g.name, "en"),
                    kv_fit=kv_fit,
                    context_tokens=context_tokens,
                    offered=min(offered, serving.max_num_seqs),
                    group_zh=group_label(g.name, "zh"),
                )
            )
        elif counts and offered > serving.max_num_seqs:
            checks.append(
                raise_(
                    "performance.batch_limited_by_max_num_seqs",
                    fix="raise" if kv_fit > serving.max_num_seqs else "advice",
                    figures={"offered": offered, "max_num_seqs": serving.max_num_seqs},
                    group_en=group_label(g.name, "en"),
                    offered=offered,
                    max_num_seqs=serving.max_num_seqs,
                    group_zh=group_label(g.name, "zh"),
                    max_num_seqs_ok=min(offered, kv_fit),
                )
            )

    # ---- decode step
    st: sm.StepBreakdown | None = None
    if decodes:
        st = gmodel.step(max(batch, 1))
        add_step_figures(book, g, gmodel, st, batch)

    # ---- KV transfer P → D (decode side of xPyD)
    if disaggregated and g.role == "decode" and gmodel.kv_transfer_s > 0:
        bw, fabric = sm.inter_node_bytes_s_per_device(server, scale_up_allowed=False)
        book.put(
            f"performance.{g.name}.kv_transfer_s",
            fig_value(gmodel.kv_transfer_s),
            label={"fabric": fabric},
            source=Source("derived", "server NICs (scale-out)"),
            prompt_tokens=computed_prompt_tokens,
            kv_bytes_per_token=gmodel.kv_per_token,
            state_bytes_per_seq=gmodel.state_per_seq,
            device_bandwidth_bytes_s=fig_input(bw),
            scale_out_efficiency=fig_input(req.performance.scale_out_efficiency),
        )

    # ---- capacity of the group at this batch
    step = st.step_s if st else 0.0
    tps = st.tokens_per_step if st else 1.0
    per_pass = sm.prompts_per_pass(pre)
    pass_s = sm.wave_prefill(pre, per_pass)[0] if per_pass > 1 else prefill_s
    if g.role == "prefill":
        # full passes of the prompts the token budget holds (sm.prefill_pool_capacity)
        requests_per_s = sm.prefill_pool_capacity(pre, dp)
        variant = ("prefill_batched" if per_pass > 1 else "prefill") if prefill_s > 0 else "idle"
    elif disaggregated:
        requests_per_s = dp * batch * tps / (output_tokens * step) if step > 0 and batch > 0 else 0.0
        variant = "disaggregated" if step > 0 and batch > 0 else "idle"
    else:
        cycle = batch * prefill_s + output_tokens / tps * step
        requests_per_s = dp * batch / cycle if cycle > 0 and batch > 0 else 0.0
        variant = "aggregated" if cycle > 0 and batch > 0 else "idle"
    output_tps = requests_per_s * output_tokens if decodes else 0.0
    book.put(
        f"performance.{g.name}.requests_per_s",
        fig_value(requests_per_s),
        variant=variant,
        source=ESTIMATE_SOURCE,
        DP=dp,
        B=batch,
        prefill_s=fig_input(prefill_s),
        output_tokens=output_tokens,
        step_s=fig_input(step),
        tokens_per_step=fig_input(tps),
        prompts_per_pass=per_pass,
        pass_s=fig_input(pass_s),
    )
    if decodes:
        book.put(
            f"performance.{g.name}.output_tokens_per_s",
            fig_value(output_tps),
            source=ESTIMATE_SOURCE,
            requests_per_s=fig_input(requests_per_s),
            output_tokens=output_tokens,
            counts_toward_throughput=counts,
        )
    if decodes and kv_fit == 0 and (counts or g.role == "standby"):
        checks.append(
            raise_(
                "performance.no_decode_capacity",
                figures={"kv_seqs_fit": kv_fit},
                group=g.name,
                context_tokens=context_tokens,
            )
        )

    return GroupPerformance(
        group=g.name,
        role=g.role,
        counts_toward_throughput=counts,
        nodes=g.nodes,
        tp=tp,
        dp=dp,
        ep=ep if p.expert_parallel else 1,
        offered_seqs_per_dp_rank=offered,
        kv_seqs_fit_per_dp_rank=kv_fit,
        batch_per_dp_rank=batch,
        batch_limited_by=limited_by,
        weights_bytes_read_per_rank=int(st.weights_bytes) if st else 0,
        experts_touched_fraction=st.experts_touched if st else 0.0,
        kv_bytes_read_per_rank=int(st.kv_bytes) if st else 0,
        bytes_per_step_per_rank=int(st.weights_bytes + st.kv_bytes) if st else 0,
        memory_time_s=st.memory_s if st else 0.0,
        all_to_all_s=st.ep_dispatch_combine_s if st else 0.0,
        decode_step_s=step,
        prefill_s=prefill_s,
        kv_transfer_s=gmodel.kv_transfer_s,
        requests_per_s=requests_per_s,
        output_tokens_per_s_per_dp_rank=output_tps / dp if dp else 0.0,
        output_tokens_per_s=output_tps,
        compute_time_s=st.compute_s if st else 0.0,
        tp_allreduce_s=st.tp_allreduce_s if st else 0.0,
        step_overhead_s=st.overhead_s if st else 0.0,
        tokens_per_step=tps,
        slots_per_dp_rank=gmodel.slots,
    )


def scaled_to_measured(g: GroupPerformance, scale: float) -> GroupPerformance:
    """Scale a group's throughput so the groups add up to the measured figure."""
    return replace(
        g,
        requests_per_s=g.requests_per_s * scale,
        output_tokens_per_s=g.output_tokens_per_s * scale,
        output_tokens_per_s_per_dp_rank=g.output_tokens_per_s_per_dp_rank * scale,
    )
