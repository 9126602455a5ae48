"""Small requests and hand-made layouts for the power, network and racks tests.

Built from ``types.py`` directly so these tests do not depend on the layout
module.  Figures cite their origin: [S1] = the A3 seed, [S2] = the NF5868G8
seed, docs/domain.md §n; ports, size and power of switches are *assumed*.
"""

from __future__ import annotations

from configurator.engine.types import (
    GB,
    AcceleratorSpec,
    GroupLayout,
    LayoutResult,
    ModelSpec,
    NicSpec,
    ParallelSpec,
    PlanRequest,
    RackSpec,
    ServerSpec,
    SiteSpec,
    SwitchSpec,
    TopologyKind,
    TopologySpec,
    WorkloadSpec,
)


def k3_model() -> ModelSpec:
    """Kimi K3 attention and size figures (docs/domain.md §2)."""
    return ModelSpec(
        slug="kimi-k3",
        name="Kimi K3",
        total_params=2_779_931_837_184,
        active_params=104_200_000_000,
        num_layers=93,
        hidden_size=7168,
        vocab_size=163_840,
        num_attention_heads=96,
        num_kv_heads=96,
        head_dim=128,
        mla_layers=24,
        linear_layers=69,
        kv_lora_rank=512,
        qk_rope_head_dim=64,
        linear_num_heads=96,
        linear_head_dim=128,
        linear_state_dtype_bytes=4,
        linear_conv_kernel=4,
        linear_conv_dim=3 * 12_288,
        linear_conv_dtype_bytes=2,
        num_experts=896,
        experts_per_token=16,
        moe_layers=92,
        activation_format="mxfp8",
    )


def dense_gqa_model() -> ModelSpec:
    """A Llama-3.3-70B-shaped dense model: 80 layers, GQA 64/8 heads, head 128 (public config)."""
    return ModelSpec(
        slug="dense-70b",
        name="Dense 70B",
        total_params=70_000_000_000,
        active_params=70_000_000_000,
        num_layers=80,
        hidden_size=8192,
        vocab_size=128_256,
        num_attention_heads=64,
        num_kv_heads=8,
        head_dim=128,
        gqa_layers=80,
    )


def ascend_910c() -> AcceleratorSpec:
    # [S1] 128 GB per 910C = 2 dies × 64 GB; 4.48 PFLOPS FP16 per node ÷ 16 dies = 280 TFLOPS
    return AcceleratorSpec(
        slug="910c",
        name="Ascend 910C",
        memory_bytes=64 * GB,
        memory_bandwidth_bytes_s=1.6e12,
        tflops={"fp16": 280.0, "bf16": 280.0},
        logical_devices_per_package=2,
        software_stack="ascend",
    )


def a3_server(psu_redundant: int = 1, management: bool = False) -> ServerSpec:
    """Atlas 800 A3 [S1 §2.1]: 10U, 16.2 kW max input, 6 × 3 kW PSUs 5+1,
    8 × 400GE RoCE + 56 × 400GE LingQu."""
    nics = [NicSpec("roce", 8, 400, "scale_out"), NicSpec("lingqu", 56, 400, "scale_up")]
    if management:
        nics.append(NicSpec("management", 1, 1, "management"))
    return ServerSpec(
        slug="atlas-800-a3",
        name="Atlas 800 A3",
        accelerator=ascend_910c(),
        packages=8,
        rack_units=10,
        max_input_kw=16.2,
        typical_load_factor=0.8,
        psu_count=6,
        psu_watts=3000,
        psu_redundant=psu_redundant,
        nics=tuple(nics),
        scale_up_fabric="lingqu",
        scale_up_bandwidth_gbps=1400,
    )


def gpu_server(nics: tuple[NicSpec, ...], tflops: float = 1000.0, name: str = "GPU server 8x") -> ServerSpec:
    """An 8-GPU PCIe server (8U, 10.2 kW, assumed) with the given NICs."""
    return ServerSpec(
        slug="gpu-8x",
        name=name,
        accelerator=AcceleratorSpec("gpu", "GPU 96 GB", 96 * GB, 4.0e12, {"bf16": tflops}),
        packages=8,
        rack_units=8,
        max_input_kw=10.2,
        nics=nics,
        scale_up_fabric="pcie",
        scale_up_bandwidth_gbps=512,
    )


def nf5868g8_server() -> ServerSpec:
    """Inspur NF5868G8 [S2]: 8U, 16.5 kW, 16 GPUs over PCIe; 8 × 400G RoCE assumed."""
    return ServerSpec(
        slug="nf5868g8",
        name="Inspur NF5868G8",
        accelerator=AcceleratorSpec("rtx", "RTX PRO 6000D", 84 * GB, 1.4e12, {"bf16": 360.0}),
        packages=16,
        rack_units=8,
        max_input_kw=16.5,
        psu_count=6,
        psu_watts=3300,
        psu_redundant=1,
        nics=(NicSpec("roce", 8, 400, "scale_out"),),
        scale_up_fabric="pcie",
    )


# Switches: [S1] names the LingQu 630 V1 and a 400GE RoCE switch, [S2] the X400; ports,
# height and power are assumed (64 × 400G, 2U, 2.0 kW).
def lingqu_630() -> SwitchSpec:
    return SwitchSpec("lingqu-630-v1", "LingQu 630 V1", "lingqu", 64, 400, 2, 2.0)


def roce_400() -> SwitchSpec:
    return SwitchSpec("roce-400", "RoCE 400GE", "roce", 64, 400, 2, 2.0)


def roce_200() -> SwitchSpec:
    return SwitchSpec("roce-200", "RoCE 200GE", "roce", 64, 200, 2, 1.6)


def x400() -> SwitchSpec:
    return SwitchSpec("x400", "X400", "roce", 64, 400, 2, 2.0)


def eth_100() -> SwitchSpec:
    return SwitchSpec("eth-100", "Ethernet 100GE", "ethernet", 64, 100, 2, 1.0)


def mgmt_1g() -> SwitchSpec:
    return SwitchSpec("mgmt-1g", "Mgmt 1GE", "management", 48, 1, 1, 0.15)


A3_SWITCHES = (lingqu_630(), roce_400())
EP64 = ParallelSpec(tp=16, dp=4, expert_parallel=True, dp_local=1)  # [S1 §2.3] DP4 / TP16 / EP64
EP128 = ParallelSpec(tp=16, dp=8, expert_parallel=True, dp_local=1)  # [S1 §4.2] DP8 / TP16 / EP128


def request(
    server: ServerSpec,
    topology: TopologySpec,
    switches: tuple[SwitchSpec, ...] = A3_SWITCHES,
    model: ModelSpec | None = None,
    site: SiteSpec | None = None,
    rack: RackSpec | None = None,
    workload: WorkloadSpec | None = None,
) -> PlanRequest:
    return PlanRequest(
        model=model or k3_model(),
        server=server,
        topology=topology,
        switches=switches,
        site=site or SiteSpec(),
        rack=rack or RackSpec("rack-42u", "42U rack"),
        workload=workload or WorkloadSpec(),
    )


def a3_single(nodes: int = 4, **kw) -> PlanRequest:
    return request(a3_server(), TopologySpec(TopologyKind.SINGLE, nodes, EP64), **kw)


def a3_pair(kind: TopologyKind = TopologyKind.PRIMARY_STANDBY, **kw) -> PlanRequest:
    """[S1 §3]: 8 × A3 as two 4-node DP4 / TP16 / EP64 clusters."""
    server = kw.pop("server", a3_server())
    return request(server, TopologySpec(kind, 8, EP64), **kw)


def a3_8p8d(**kw) -> PlanRequest:
    """[S1 §4]: 16 × A3, 8 prefill + 8 decode, each DP8 / TP16 / EP128."""
    return request(
        a3_server(),
        TopologySpec(
            TopologyKind.DISAGGREGATED, 16, EP128, prefill_nodes=8, decode_nodes=8, decode_parallel=EP128
        ),
        **kw,
    )


def layout_for(req: PlanRequest) -> LayoutResult:
    """The LayoutResult the layout module would give, by hand (names as in types.GroupLayout)."""
    topo = req.topology
    dpn = req.server.logical_devices
    experts = req.model.num_experts

    def group(name: str, role: str, nodes: int, first: int, p: ParallelSpec) -> GroupLayout:
        return GroupLayout(
            name, role, nodes, first, p, nodes * dpn, experts // p.ep if experts and p.ep else 0
        )

    if topo.kind in (TopologyKind.PRIMARY_STANDBY, TopologyKind.TENANT_PAIR):
        half = topo.nodes // 2
        second = "standby" if topo.kind == TopologyKind.PRIMARY_STANDBY else "tenant"
        groups = (
            group("cluster-a", "serve" if second == "standby" else "tenant", half, 0, topo.parallel),
            group("cluster-b", second, half, half, topo.parallel),
        )
    elif topo.kind == TopologyKind.DISAGGREGATED:
        groups = (
            group("prefill", "prefill", topo.prefill_nodes, 0, topo.parallel),
            group(
                "decode",
                "decode",
                topo.decode_nodes,
                topo.prefill_nodes,
                topo.decode_parallel or topo.parallel,
            ),
        )
    else:
        groups = (group("cluster", "serve", topo.nodes, 0, topo.parallel),)
    return LayoutResult(nodes=topo.nodes, devices_per_node=dpn, groups=groups)
