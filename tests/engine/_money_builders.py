"""Layouts and memory results built by hand from ``types.py`` for the
performance, TCO and launch tests, so their expected figures do not move when
the layout or memory estimators are refined.  Requests come from the shared
fixtures.  Sources: docs/domain.md §n, [S1] = the solution paper (docs/domain.md, sources), [pub] = public configs.
"""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

from configurator.engine import fixtures as F
from configurator.engine.types import (
    GB,
    MIB,
    AcceleratorSpec,
    CommercialSpec,
    GroupLayout,
    GroupMemory,
    LayoutResult,
    MemoryResult,
    NicSpec,
    ParallelSpec,
    PlanRequest,
    RankMemory,
    ServerSpec,
    SiteSpec,
    TopologyKind,
    TopologySpec,
    WorkloadSpec,
)

MLA_KV_BYTES_PER_TOKEN = 24 * 576 * 2  # docs/domain.md §2: 27,648 B per token in BF16
KDA_STATE_BYTES_PER_SEQ = 69 * (96 * 128 * 128 * 4 + 9 * 96 * 128 * 2)  # docs/domain.md §2: 449,372,160 B
ACTIVATION_BYTES = 4 * 2**30  # assumed peak activation per rank in these tests
GRAPH_BYTES = 1 * 2**30  # assumed graph memory per rank in these tests

# [S1] §6.3 / §7 path B: 8 × A3 ≈ ¥24 M (¥3 M each), O&M ¥2 M a year for 8 nodes,
# lease ¥0.8–1.2 M a month for 8 nodes (¥100–150 k per node-month).  Nothing else
# priced, so the totals show exactly the seed's components plus electricity.
SEED_COMMERCIAL = CommercialSpec(
    currency="CNY",
    usd_rate=Decimal("7.2"),
    server_unit_price=Decimal("3000000"),
    server_lease_per_month=Decimal("100000"),
    om_per_year=Decimal("2000000"),
    horizon_years=3,
    discount_rate=Decimal("0.08"),
    utilisation=Decimal("0.6"),
    power_load_factor=Decimal("0.8"),
)
SEED_SITE = SiteSpec(pue=1.3, electricity_price_per_kwh=Decimal("0.65"))  # docs/domain.md §7 (editable)


SEED_WORKLOAD = {"input_tokens": 8192, "output_tokens": 1024, "concurrency": 64}  # [S1] §3.3: 8K in / 1K out


def with_workload(req: PlanRequest, **over) -> PlanRequest:
    return replace(req, workload=replace(req.workload, **over))


def _seed_workload(req: PlanRequest, over: dict) -> PlanRequest:
    return with_workload(req, **{**SEED_WORKLOAD, **over})


def request_4node(**workload) -> PlanRequest:
    """4 × A3 DP4/TP16/EP64 [S1] §2 with the [S1] §3.3 workload (8K in / 1K out)."""
    return _seed_workload(F.request_k3_a3_4node(), workload)


def request_pair(kind: TopologyKind, **workload) -> PlanRequest:
    return _seed_workload(F.request_k3_a3_8node_pair(kind), workload)


def request_8p8d(**workload) -> PlanRequest:
    return _seed_workload(F.request_k3_a3_8p8d(), workload)


def seed_money(req: PlanRequest, **commercial) -> PlanRequest:
    """The request with only the seed's commercial figures (see SEED_COMMERCIAL)."""
    return replace(req, commercial=replace(SEED_COMMERCIAL, **commercial), site=SEED_SITE)


def b300_server() -> ServerSpec:
    """8 × B300 288 GB, 8 TB/s (docs/domain.md §3, secondary sources, *assumed*); dense
    BF16 ≈ 2.25 PFLOPS, FP8 ≈ 4.5 PFLOPS per GPU (*assumed*, order of magnitude)."""
    acc = AcceleratorSpec(
        slug="b300",
        name="B300",
        memory_bytes=288 * GB,
        memory_bandwidth_bytes_s=8e12,
        tflops={"bf16": 2250.0, "fp8": 4500.0},
        tdp_watts=1100.0,
        software_stack="cuda",
    )
    return ServerSpec(
        slug="hgx-b300",
        name="HGX B300",
        accelerator=acc,
        packages=8,
        rack_units=10,
        max_input_kw=14.0,
        nics=(NicSpec("infiniband", 8, 800, "scale_out"),),
        scale_up_fabric="nvlink",
        scale_up_bandwidth_gbps=14400,  # NVLink 5: 1.8 TB/s per GPU, both directions (catalog seed dgx-b300)
    )


def request_b300(concurrency: int) -> PlanRequest:
    """One 8 × B300 node, TP8 without EP, ISL 8192 / OSL 1024 as in the published SGLang point
    (sgl-project/sglang#32890: flashinfer MXFP4 MoE over TP8)."""
    base = F.request_k3_a3_4node()
    return replace(
        base,
        server=b300_server(),
        topology=TopologySpec(TopologyKind.SINGLE, 1, ParallelSpec(tp=8, dp=1, expert_parallel=False)),
        serving=replace(base.serving, max_num_seqs=max(concurrency, 1), gpu_memory_utilization=0.9),
        workload=WorkloadSpec(input_tokens=8192, output_tokens=1024, concurrency=concurrency),
    )


def layout_for(req: PlanRequest) -> LayoutResult:
    """The layout docs/domain.md §4 describes for these topologies."""
    t = req.topology
    per_node = req.server.logical_devices
    experts = req.model.num_experts

    def group(name: str, role: str, nodes: int, first: int, p: ParallelSpec) -> GroupLayout:
        return GroupLayout(name, role, nodes, first, p, nodes * per_node, experts // p.ep)

    if t.kind == TopologyKind.SINGLE:
        groups = (group("cluster", "serve", t.nodes, 0, t.parallel),)
    elif t.kind in (TopologyKind.PRIMARY_STANDBY, TopologyKind.TENANT_PAIR):
        half = t.nodes // 2
        roles = ("serve", "standby") if t.kind == TopologyKind.PRIMARY_STANDBY else ("tenant", "tenant")
        groups = (
            group("cluster-a", roles[0], half, 0, t.parallel),
            group("cluster-b", roles[1], half, half, t.parallel),
        )
    else:
        groups = (
            group("prefill", "prefill", t.prefill_nodes, 0, t.parallel),
            group("decode", "decode", t.decode_nodes, t.prefill_nodes, t.decode_parallel or t.parallel),
        )
    return LayoutResult(nodes=t.nodes, devices_per_node=per_node, groups=groups)


def memory_for(req: PlanRequest, layout: LayoutResult) -> MemoryResult:
    """Per-rank memory as docs/domain.md §6 describes it (MLA replicated on every TP rank,
    KDA state divided by TP), with fixed activation and graph terms."""
    m, s = req.model, req.serving
    groups = []
    for g in layout.groups:
        p = g.parallel
        device = req.server.accelerator.memory_bytes
        usable = int(device * s.gpu_memory_utilization)
        non_expert = m.non_expert_weight_bytes // p.tp
        expert = m.expert_weight_bytes // (p.ep if p.expert_parallel else p.tp)  # EP off: experts split by TP
        buffers = s.comm_buffer_mb * MIB * (s.comm_buffer_groups or 2)
        kv = usable - non_expert - expert - ACTIVATION_BYTES - buffers - GRAPH_BYTES
        state = KDA_STATE_BYTES_PER_SEQ // p.tp
        rank = RankMemory(
            device_bytes=device,
            usable_bytes=usable,
            weights_bytes=non_expert + expert,
            non_expert_weights_bytes=non_expert,
            expert_weights_bytes=expert,
            activation_bytes=ACTIVATION_BYTES,
            buffer_bytes=buffers,
            graph_bytes=GRAPH_BYTES,
            kv_cache_bytes=kv,
            free_bytes=device - usable,
            kv_bytes_per_token=MLA_KV_BYTES_PER_TOKEN,
            state_bytes_per_seq=state,
            kv_tokens=max(kv, 0) // MLA_KV_BYTES_PER_TOKEN,
            linear_state_bytes_per_seq=state,
        )
        full = max(kv, 0) // (s.max_model_len * MLA_KV_BYTES_PER_TOKEN + state)
        groups.append(
            GroupMemory(
                group=g.name,
                per_rank=rank,
                kv_tokens_per_dp_rank=rank.kv_tokens,
                full_len_seqs_per_dp_rank=full,
                max_num_seqs_fit=full >= s.max_num_seqs,
                cluster_weights_bytes=rank.weights_bytes * g.devices,
                cluster_kv_bytes=max(kv, 0) * g.devices,
            )
        )
    return MemoryResult(groups=tuple(groups))
