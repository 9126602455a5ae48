"""Reference requests built without Django: the seeds' deployments as engine inputs.

Other modules' tests and the benchmark import these, so the figures here are
stable; the catalog seed data carries the same numbers.  Every figure names
its origin: [S1] = the A3 seed (Kimi K3 on 4/8/16 × Atlas 800 A3), [S2] = the
NF5868G8 seed, [pub] = a public config or doc, *assumed* = a placeholder a
catalog admin should confirm (docs/domain.md §1).
"""

from __future__ import annotations

from decimal import Decimal

from .types import (
    GB,
    AcceleratorSpec,
    CheckpointSpec,
    CommercialSpec,
    LaunchSpec,
    ModelSpec,
    NicSpec,
    ParallelSpec,
    PlanRequest,
    ServerSpec,
    ServingSpec,
    Source,
    SwitchSpec,
    TopologyKind,
    TopologySpec,
    WorkloadSpec,
)

K3_CONFIG = "moonshotai/Kimi-K3 config.json"
S1 = "S1"
S2 = "S2"

# --------------------------------------------------------------------------- models

# Kimi K3 weight split (docs/domain.md §2, public config text_config):
#   routed experts: 92 MoE layers (num_hidden_layers 93 − first_k_dense_replace 1)
#     × 896 experts × 3 matrices (gate, up, down) × routed_expert_hidden_size 3584
#     × moe_intermediate_size 3072 = 2,722,740,830,208 parameters,
#     stored as MXFP4: 4 bits + one 8-bit E8M0 scale per 32 elements = 4.25 bits
#     = 17/32 byte per parameter → 1,446,456,066,048 bytes.
#   K3 is a latent MoE: the experts work in a 3,584-wide latent space
#   ("routed_expert_hidden_size"), not the 7,168-wide residual stream.  Using
#   hidden_size 7168 instead would give 5.45 T expert parameters — twice the
#   model's 2.78 T total and more bytes than the 1.56 TB checkpoint — so the
#   latent width is the one the checkpoint can hold.
#   non-expert = checkpoint total 1,560,936,091,448 − expert bytes
#     = 114,480,025,400 bytes, i.e. 2.0 bytes × the remaining 57.19 B parameters
#     (attention, shared experts, dense layer, embeddings, lm_head and the vision
#     tower all stay BF16 per the quantisation "ignore" list) — consistent.
K3_CHECKPOINT_BYTES = 1_560_936_091_448  # [S1][S2][pub] 96 shards
K3_TOTAL_PARAMS = 2_779_931_837_184  # [pub]
K3_MOE_LAYERS = 93 - 1
K3_EXPERT_PARAMS = K3_MOE_LAYERS * 896 * 3 * 3584 * 3072
K3_EXPERT_BYTES = K3_EXPERT_PARAMS * 17 // 32
K3_NON_EXPERT_BYTES = K3_CHECKPOINT_BYTES - K3_EXPERT_BYTES
K3_VISION_PARAMS = 401_000_000  # MoonViT-V2 ≈401 M [S1][pub]
K3_VISION_BYTES = K3_VISION_PARAMS * 2  # BF16 ("vision_tower" is in the quantisation ignore list)


def kimi_k3(weight_format: str = "mxfp4") -> ModelSpec:
    """Kimi K3 as released (MXFP4 routed experts, BF16 rest).

    ``weight_format="bf16"`` gives the full-precision variant [S1] warns
    against: every parameter at 2 bytes, experts included.
    """
    if weight_format == "mxfp4":
        expert_bytes, non_expert_bytes = K3_EXPERT_BYTES, K3_NON_EXPERT_BYTES
    elif weight_format in ("bf16", "fp16"):
        expert_bytes = K3_EXPERT_PARAMS * 2
        non_expert_bytes = (K3_TOTAL_PARAMS - K3_EXPERT_PARAMS) * 2
    else:
        raise ValueError(f"no Kimi K3 release in {weight_format!r}")
    return ModelSpec(
        slug="kimi-k3" if weight_format == "mxfp4" else f"kimi-k3-{weight_format}",
        name="Kimi K3" if weight_format == "mxfp4" else f"Kimi K3 ({weight_format.upper()})",
        total_params=K3_TOTAL_PARAMS,
        active_params=104_200_000_000,  # ≈104.2 B [pub]
        num_layers=93,
        hidden_size=7168,
        vocab_size=163_840,
        num_attention_heads=96,
        num_kv_heads=96,
        head_dim=192,  # qk_nope_head_dim 128 + qk_rope_head_dim 64 (v_head_dim 128)
        mla_layers=24,  # linear_attn_config.full_attn_layers: 4, 8, …, 92 and 93
        linear_layers=69,  # linear_attn_config.kda_layers
        kv_lora_rank=512,
        qk_rope_head_dim=64,
        linear_num_heads=96,
        linear_head_dim=128,
        linear_state_dtype_bytes=4,  # FP32 recurrent state by default [pub]
        linear_conv_kernel=4,  # short_conv_kernel_size
        linear_conv_dim=3 * 96 * 128,  # q, k and v convolutions: 3 × 12,288 = 36,864 channels
        linear_conv_dtype_bytes=2,
        num_experts=896,
        experts_per_token=16,
        shared_experts=2,
        moe_layers=K3_MOE_LAYERS,
        expert_weight_bytes=expert_bytes,
        non_expert_weight_bytes=non_expert_bytes,
        weight_format=weight_format,
        activation_format="mxfp8" if weight_format == "mxfp4" else "bf16",
        max_context=1_048_576,
        has_vision=True,
        vision_params=K3_VISION_PARAMS,
        vision_bytes=K3_VISION_BYTES,
        api_price_input_per_m=Decimal("3"),
        api_price_output_per_m=Decimal("15"),
        api_price_currency="USD",
        licence_note=(
            "Commercial use allowed; MaaS revenue above US$20 M over 12 consecutive months "
            "needs a separate agreement."
        ),
        hf_model_id="moonshotai/Kimi-K3",
        vllm_tokenizer_mode="kimi_k3",
        vllm_reasoning_parser="kimi_k3",
        vllm_tool_call_parser="kimi_k3",
        sources={
            "architecture": Source("public", K3_CONFIG),
            "weights": Source("seed", "S1 §2, S2 MXFP4 权重的意义: 96 shards, ≈1.56 TB"),
            "expert_weight_bytes": Source(
                "derived", "92 MoE layers × 896 × 3 × 3584 × 3072 params × 4.25 bits (config.json)"
            ),
            "api_price": Source("seed", "S1: $3 / M input, $15 / M output"),
            "vision": Source("public", "MoonViT-V2 ≈401 M params"),
        },
    )


def _fp8_block_bytes(rows: int, cols: int) -> int:
    """One FP8 matrix of DeepSeek's release: 1 byte per weight + an FP32 scale per 128 × 128 block."""
    return rows * cols + (-(-rows // 128)) * (-(-cols // 128)) * 4


def deepseek_v3() -> ModelSpec:
    """DeepSeek-V3 (FP8 block-quantised release; the MTP layer is not loaded for serving).

    Parameters from the public config: 61 layers (3 dense, 58 MoE), hidden 7168,
    MLA q_lora 1536 / kv_lora 512 / rope 64 / nope 128 / v 128, 128 heads, 256
    routed experts of 2048 (top-8) + 1 shared, vocab 129,280.  That sums to
    671,026,419,200 parameters.  Routed experts: 58 × 256 × 3 matrices of
    7168 × 2048 in FP8 with FP32 block scales; embeddings, lm_head, norms and
    routers BF16/FP32; every other linear layer FP8.
    """
    h, vocab, layers, dense, moe = 7168, 129_280, 61, 3, 58
    attn = [
        (1536, h),
        (128 * 192, 1536),
        (576, h),
        (128 * 256, 512),
        (h, 128 * 128),
    ]  # q_a, q_b, kv_a, kv_b, o
    attn_params = sum(r * c for r, c in attn)
    norm_params = 2 * h + 1536 + 512
    expert_matrix_params = 3 * h * 2048
    gate_params = 256 * h + 256
    total = (
        2 * vocab * h
        + layers * (attn_params + norm_params)
        + dense * 3 * h * 18432
        + moe * (256 * expert_matrix_params + expert_matrix_params + gate_params)
        + h
    )
    expert_bytes = moe * 256 * (2 * _fp8_block_bytes(2048, h) + _fp8_block_bytes(h, 2048))
    expert_mlp_bytes = 2 * _fp8_block_bytes(2048, h) + _fp8_block_bytes(h, 2048)
    non_expert_bytes = (
        2 * vocab * h * 2  # embed_tokens + lm_head, BF16
        + layers * (sum(_fp8_block_bytes(r, c) for r, c in attn) + norm_params * 2)
        + dense * (2 * _fp8_block_bytes(18432, h) + _fp8_block_bytes(h, 18432))
        + moe * (expert_mlp_bytes + gate_params * 4)  # shared expert FP8, router FP32
        + h * 2
    )
    return ModelSpec(
        slug="deepseek-v3",
        name="DeepSeek-V3",
        total_params=total,
        active_params=37_000_000_000,
        num_layers=layers,
        hidden_size=h,
        vocab_size=vocab,
        num_attention_heads=128,
        num_kv_heads=128,
        head_dim=192,
        mla_layers=layers,
        kv_lora_rank=512,
        qk_rope_head_dim=64,
        num_experts=256,
        experts_per_token=8,
        shared_experts=1,
        moe_layers=moe,
        expert_weight_bytes=expert_bytes,
        non_expert_weight_bytes=non_expert_bytes,
        weight_format="fp8",
        activation_format="fp8",
        max_context=163_840,
        hf_model_id="deepseek-ai/DeepSeek-V3",
        sources={"architecture": Source("public", "deepseek-ai/DeepSeek-V3 config.json")},
    )


def llama_3_1_8b() -> ModelSpec:
    """Llama-3.1-8B (dense GQA: 32 layers, 32 heads, 8 KV heads, head 128), BF16."""
    params = 8_030_261_248  # [pub] model card
    return ModelSpec(
        slug="llama-3.1-8b",
        name="Llama-3.1-8B",
        total_params=params,
        active_params=params,
        num_layers=32,
        hidden_size=4096,
        vocab_size=128_256,
        num_attention_heads=32,
        num_kv_heads=8,
        head_dim=128,
        gqa_layers=32,
        non_expert_weight_bytes=params * 2,
        weight_format="bf16",
        max_context=131_072,
        hf_model_id="meta-llama/Llama-3.1-8B",
        sources={"architecture": Source("public", "meta-llama/Meta-Llama-3.1-8B config.json")},
    )


# --------------------------------------------------------------------------- hardware


def ascend_910c() -> AcceleratorSpec:
    """Ascend 910C: one package = 2 dies = 2 logical NPUs of 64 GB and 1.6 TB/s each [S1]."""
    return AcceleratorSpec(
        slug="ascend-910c",
        name="Ascend 910C",
        memory_bytes=64 * GB,  # 128 GB per package ÷ 2 dies [S1]
        memory_bandwidth_bytes_s=1.6e12,  # 3.2 TB/s per package ÷ 2 dies [S1]
        # 800I A3: 4.48 PFLOPS FP16 per node ÷ 16 dies = 280 [S1]; INT8 ×2 *assumed*.
        tflops={"fp16": 280.0, "bf16": 280.0, "int8": 560.0},
        tdp_watts=0.0,  # not published per die; power comes from the server's max input
        logical_devices_per_package=2,
        vendor="Huawei",
        domestic=True,
        software_stack="ascend",
    )


def ascend_910b() -> AcceleratorSpec:
    """Ascend 910B: one 64 GB NPU per package [pub]; bandwidth and TFLOPS *assumed*."""
    return AcceleratorSpec(
        slug="ascend-910b",
        name="Ascend 910B",
        memory_bytes=64 * GB,
        memory_bandwidth_bytes_s=1.6e12,  # assumed
        tflops={"fp16": 313.0, "bf16": 313.0, "int8": 626.0},  # assumed
        tdp_watts=400.0,  # assumed
        logical_devices_per_package=1,
        vendor="Huawei",
        domestic=True,
        software_stack="ascend",
    )


def rtx_pro_6000d() -> AcceleratorSpec:
    """RTX PRO 6000D 84 GB [S2]; bandwidth, TFLOPS and TDP *assumed* (no public datasheet)."""
    return AcceleratorSpec(
        slug="rtx-pro-6000d",
        name="RTX PRO 6000D 84 GB",
        memory_bytes=84 * GB,  # [S2] 16 × 84 GB = 1,344 GB per server
        memory_bandwidth_bytes_s=1.4e12,  # assumed (RTX PRO 6000 Server: 1.79 TB/s)
        tflops={"bf16": 360.0, "fp16": 360.0, "fp8": 720.0, "mxfp4": 1440.0},  # assumed
        tdp_watts=600.0,  # assumed
        logical_devices_per_package=1,
        vendor="NVIDIA",
        domestic=False,
        software_stack="cuda",
    )


def atlas_800_a3() -> ServerSpec:
    """Huawei Atlas 800 A3 super-node server: 8 × 910C → 16 logical NPUs × 64 GB [S1]."""
    return ServerSpec(
        slug="atlas-800-a3",
        name="Atlas 800 A3",
        accelerator=ascend_910c(),
        packages=8,
        rack_units=10,
        max_input_kw=16.2,
        typical_load_factor=0.8,  # assumed
        psu_count=6,
        psu_watts=3000,
        psu_redundant=1,  # 5 + 1 [S1]
        nics=(
            NicSpec("roce", 8, 400, "scale_out"),  # 8 × 400GE QSFP-DD RoCE [S1]
            NicSpec("lingqu", 56, 400, "scale_up"),  # 56 × 400GE QSFP-DD LingQu [S1]
            NicSpec("management", 1, 1, "management"),  # iBMC port, assumed
        ),
        scale_up_fabric="lingqu",
        scale_up_bandwidth_gbps=56 * 400 / 16,  # per logical NPU: 56 × 400GE shared by 16
        scale_up_domain_devices=384,  # super-node LingQu domain, assumed (CloudMatrix 384)
        cpu="4 × Kunpeng 920",
        ram_gb=0,  # 32 DDR5 slots up to 5200 MT/s; fitted capacity not given [S1]
        storage="",
        vendor="Huawei",
        sources={
            "spec": Source("seed", "S1 §3 硬件规格"),
            "scale_up_domain_devices": Source("assumed", "CloudMatrix 384 super-node"),
        },
    )


def atlas_800_a2() -> ServerSpec:
    """Huawei Atlas 800 A2: 8 × 910B 64 GB over HCCS [S1][pub]; power and size *assumed*."""
    return ServerSpec(
        slug="atlas-800-a2",
        name="Atlas 800 A2",
        accelerator=ascend_910b(),
        packages=8,
        rack_units=4,  # assumed
        max_input_kw=5.6,  # assumed
        psu_count=4,  # assumed
        psu_watts=2600,  # assumed
        psu_redundant=2,  # assumed
        nics=(
            NicSpec("roce", 8, 200, "scale_out"),  # one 200GE RoCE port per NPU, assumed
            NicSpec("management", 1, 1, "management"),
        ),
        scale_up_fabric="hccs",
        scale_up_bandwidth_gbps=392 * 8 / 8,  # assumed
        scale_up_domain_devices=0,  # the server's own 8 NPUs
        cpu="4 × Kunpeng 920",
        vendor="Huawei",
        validated_text_only=True,  # vLLM-Ascend K3 tutorial: 8 × A2, --language-model-only [pub]
        sources={
            "spec": Source("public", "Atlas 800 A2 (910B) product page"),
            "validated_text_only": Source("public", "vLLM-Ascend docs/source/tutorials/models/Kimi-K3.md"),
        },
    )


def nf5868g8() -> ServerSpec:
    """Inspur NF5868G8: 16 × RTX PRO 6000D 84 GB over a PCIe fabric, 8U, 16.5 kW [S2]."""
    return ServerSpec(
        slug="nf5868g8",
        name="Inspur NF5868G8",
        name_zh="浪潮 NF5868G8",
        accelerator=rtx_pro_6000d(),
        packages=16,
        rack_units=8,
        max_input_kw=16.5,
        typical_load_factor=0.8,  # assumed
        psu_count=6,
        psu_watts=3300,
        psu_redundant=1,  # N+1 [S2]
        nics=(
            NicSpec("roce", 8, 400, "scale_out"),  # "400G + 10G 双口" [S2]; 8 ports assumed
            NicSpec("ethernet", 2, 10, "service"),
            NicSpec("management", 1, 1, "management"),
        ),
        scale_up_fabric="pcie",
        scale_up_bandwidth_gbps=128 * 8,  # GPU P2P 128 GB/s [S2]
        scale_up_domain_devices=0,  # the server's own 16 GPUs
        cpu="2 × Xeon 6767P",
        ram_gb=24 * 64,
        storage="2 × 7.68 TB U.2 NVMe",
        vendor="Inspur",
        sources={"spec": Source("seed", "S2 单台 NF5868G8 配置")},
    )


def lingqu_switch() -> SwitchSpec:
    """400GE LingQu switch (e.g. LingQu 630 V1 [S1]); ports, size and power *assumed*."""
    return SwitchSpec(
        slug="lingqu-630-v1",
        name="LingQu 630 V1",
        name_zh="灵衢 630 V1",
        fabric="lingqu",
        ports=64,
        port_speed_gbps=400,
        rack_units=4,
        power_kw=3.0,
        sources={"name": Source("seed", "S1"), "ports": Source("assumed")},
    )


def roce_switch_400g() -> SwitchSpec:
    """400GE RoCE access/core switch [S1]; ports, size and power *assumed*."""
    return SwitchSpec(
        slug="roce-400ge-64",
        name="400GE RoCE switch (64 ports)",
        name_zh="400GE RoCE 交换机（64 口）",
        fabric="roce",
        ports=64,
        port_speed_gbps=400,
        rack_units=2,
        power_kw=2.2,
        sources={"fabric": Source("seed", "S1"), "ports": Source("assumed")},
    )


def roce_switch_200g() -> SwitchSpec:
    """200GE RoCE switch for 910B servers; *assumed*."""
    return SwitchSpec(
        slug="roce-200ge-64",
        name="200GE RoCE switch (64 ports)",
        fabric="roce",
        ports=64,
        port_speed_gbps=200,
        rack_units=2,
        power_kw=1.6,
        sources={"ports": Source("assumed")},
    )


def x400_switch() -> SwitchSpec:
    """X400 400G AI switch [S2]; port count, size and power *assumed*."""
    return SwitchSpec(
        slug="x400",
        name="X400 AI switch",
        name_zh="浪潮 X400 AI 交换机",
        vendor="Inspur",
        fabric="roce",
        ports=64,
        port_speed_gbps=400,
        rack_units=2,
        power_kw=2.5,
        sources={"name": Source("seed", "S2 网络侧：X400 交换机"), "ports": Source("assumed")},
    )


def management_switch() -> SwitchSpec:
    """1GE management switch for BMC ports; *assumed*."""
    return SwitchSpec(
        slug="mgmt-1ge-48",
        name="1GE management switch (48 ports)",
        name_zh="1GE 管理交换机（48 口）",
        fabric="management",
        ports=48,
        port_speed_gbps=1,
        rack_units=1,
        power_kw=0.15,
        sources={"ports": Source("assumed")},
    )


# --------------------------------------------------------------------------- requests

K3_IMAGE_A3 = "quay.io/ascend/vllm-ascend:kimi-k3-a3"  # [S1]
K3_MODEL_PATH = "/data/models/Kimi-K3"


# Racks that need more than air cooling (racks.RackLayout.cooling_required), assumed list prices as
# in the seeded price list (RACK-42U-CONTAINMENT, RACK-42U-LIQUID).
RACKS_BY_COOLING = {"containment": Decimal("60000"), "liquid": Decimal("150000")}

# Gateway / load balancer server and shared checkpoint storage, assumed list prices as seeded
# (GW-LB-1U, STO-NVME-TB).
GATEWAY_PRICE = Decimal("60000")
STORAGE_PER_TB = Decimal("8000")

# Cables and sub-400G transceivers by media code (network.link_media), assumed list prices.
MEDIA_PRICES = {
    "fiber": Decimal("300"),  # MPO/LC patch cord, assumed
    "cat6": Decimal("30"),  # RJ45 patch cable, assumed
    "100g-optics": Decimal("1500"),  # 100G QSFP28, assumed
    "200g-optics": Decimal("3000"),  # 200G QSFP56, assumed
}


def _node_ips(n: int) -> tuple[str, ...]:
    return tuple(f"10.0.0.{11 + i}" for i in range(n))


def _a3_commercial(nodes: int) -> CommercialSpec:
    return CommercialSpec(
        server_unit_price=Decimal("3000000"),  # ¥24 M ÷ 8 nodes [S1]
        server_lease_per_month=Decimal("125000"),  # ¥0.8–1.2 M per month ÷ 8 nodes, midpoint [S1]
        switch_unit_prices={
            "lingqu-630-v1": Decimal("1200000"),  # assumed
            "roce-400ge-64": Decimal("600000"),  # assumed
            "mgmt-1ge-48": Decimal("15000"),  # assumed
        },
        optics_unit_price=Decimal("6000"),  # 400G QSFP-DD module, assumed
        rack_unit_price=Decimal("30000"),  # rack + PDUs, assumed
        om_per_year=Decimal("250000") * nodes,  # ¥2 M / year for 8 nodes [S1 path B]
        media_unit_prices=MEDIA_PRICES,
        rack_unit_prices_by_cooling=RACKS_BY_COOLING,
        gateway_unit_price=GATEWAY_PRICE,
        storage_price_per_tb=STORAGE_PER_TB,
    )


def _a3_request(topology: TopologySpec, serving: ServingSpec, scenario: str) -> PlanRequest:
    return PlanRequest(
        model=kimi_k3(),
        server=atlas_800_a3(),
        topology=topology,
        serving=serving,
        switches=(lingqu_switch(), roce_switch_400g(), management_switch()),
        commercial=_a3_commercial(topology.nodes),
        launch=LaunchSpec(
            model_path=K3_MODEL_PATH,
            node_ips=_node_ips(topology.nodes),
            data_nic="enp189s0f0",
            image=K3_IMAGE_A3,
            served_model_name="kimi-k3",
        ),
        scenario=scenario,
    )


def request_k3_a3_4node() -> PlanRequest:
    """[S1] §2: 4 × A3, DP4 / TP16 / EP64, 133,120 context, 16 seqs, utilisation 0.85."""
    return _a3_request(
        TopologySpec(
            kind=TopologyKind.SINGLE,
            nodes=4,
            parallel=ParallelSpec(tp=16, dp=4, pp=1, expert_parallel=True, dp_local=1),
        ),
        ServingSpec(
            gpu_memory_utilization=0.85,
            max_model_len=133_120,
            max_num_seqs=16,
            max_num_batched_tokens=8192,  # not in [S1]; vLLM's online-serving default
            comm_buffer_mb=800,  # HCCL_BUFFSIZE=800 in the vLLM-Ascend K3 tutorial [pub]
        ),
        scenario="",
    )


def request_k3_a3_8node_pair(kind: TopologyKind | str = TopologyKind.PRIMARY_STANDBY) -> PlanRequest:
    """[S1] §3: 8 × A3 as two 4-node clusters (primary/standby or tenant pair), each DP4 / TP16."""
    kind = TopologyKind(kind)
    if kind not in (TopologyKind.PRIMARY_STANDBY, TopologyKind.TENANT_PAIR):
        raise ValueError("request_k3_a3_8node_pair needs primary_standby or tenant_pair")
    base = request_k3_a3_4node()
    return _a3_request(
        TopologySpec(kind=kind, nodes=8, parallel=base.topology.parallel),
        base.serving,
        scenario="",
    )


def request_k3_a3_8p8d() -> PlanRequest:
    """[S1] §4 and the vLLM-Ascend tutorial: 16 × A3 8P8D, each side DP8 / TP16 / EP128."""
    side = ParallelSpec(tp=16, dp=8, pp=1, expert_parallel=True, dp_local=1)
    return _a3_request(
        TopologySpec(
            kind=TopologyKind.DISAGGREGATED,
            nodes=16,
            parallel=side,
            prefill_nodes=8,
            decode_nodes=8,
            decode_parallel=side,
        ),
        ServingSpec(
            gpu_memory_utilization=0.9,
            max_model_len=133_120,
            max_num_seqs=16,
            max_num_batched_tokens=8192,
            comm_buffer_mb=800,
        ),
        scenario="",
    )


def request_k3_nf5868g8_2node() -> PlanRequest:
    """[S2]: 2 × NF5868G8 + X400.  TP16 inside each node (PCIe), DP2 across, EP32.

    TP32 would stretch every all-reduce across the RoCE link between the two
    servers; vLLM's multi-node MoE recipe keeps TP inside the node and spans
    nodes with DP + EP, which is what this layout does.
    """
    return PlanRequest(
        model=kimi_k3(),
        server=nf5868g8(),
        topology=TopologySpec(
            kind=TopologyKind.SINGLE,
            nodes=2,
            parallel=ParallelSpec(tp=16, dp=2, pp=1, expert_parallel=True, dp_local=1),
        ),
        serving=ServingSpec(
            gpu_memory_utilization=0.9,
            max_model_len=133_120,
            max_num_seqs=16,
            max_num_batched_tokens=8192,
            comm_buffer_mb=200,
            block_size=16,  # CUDA default
        ),
        switches=(x400_switch(), management_switch()),
        commercial=CommercialSpec(
            server_unit_price=Decimal("4200000"),  # assumed: pair + switch under ¥10 M [S2]
            switch_unit_prices={"x400": Decimal("600000"), "mgmt-1ge-48": Decimal("15000")},  # assumed
            optics_unit_price=Decimal("6000"),  # assumed
            rack_unit_price=Decimal("30000"),  # assumed
            om_percent_of_capex=Decimal("0.08"),  # assumed
            media_unit_prices=MEDIA_PRICES,
            rack_unit_prices_by_cooling=RACKS_BY_COOLING,
            gateway_unit_price=GATEWAY_PRICE,
            storage_price_per_tb=STORAGE_PER_TB,
        ),
        launch=LaunchSpec(
            model_path=K3_MODEL_PATH,
            node_ips=_node_ips(2),
            data_nic="ens1f0np0",
            image="vllm/vllm-openai:v0.27.1",
            served_model_name="kimi-k3",
        ),
        scenario="",
    )


def _a2_request(
    nodes: int, parallel: ParallelSpec, serving: ServingSpec, workload: WorkloadSpec
) -> PlanRequest:
    return PlanRequest(
        model=kimi_k3(),
        server=atlas_800_a2(),
        topology=TopologySpec(kind=TopologyKind.SINGLE, nodes=nodes, parallel=parallel),
        serving=serving,
        workload=workload,
        switches=(roce_switch_200g(), management_switch()),
        commercial=CommercialSpec(
            server_unit_price=Decimal("1300000"),  # assumed
            switch_unit_prices={"roce-200ge-64": Decimal("400000"), "mgmt-1ge-48": Decimal("15000")},
            optics_unit_price=Decimal("3000"),  # assumed
            rack_unit_price=Decimal("30000"),  # assumed
            om_percent_of_capex=Decimal("0.08"),  # assumed
            media_unit_prices={**MEDIA_PRICES, "200g-optics": Decimal("3000")},  # 200G QSFP56, assumed
            rack_unit_prices_by_cooling=RACKS_BY_COOLING,
            gateway_unit_price=GATEWAY_PRICE,
            storage_price_per_tb=STORAGE_PER_TB,
        ),
        launch=LaunchSpec(
            model_path=K3_MODEL_PATH,
            node_ips=_node_ips(nodes),
            data_nic="enp189s0f0",
            image="quay.io/ascend/vllm-ascend:kimi-k3",
            served_model_name="kimi-k3",
        ),
    )


def request_k3_a2_1node() -> PlanRequest:
    """[S1]: one classic 8-card 910B server cannot hold K3 (512 GB < 1.56 TB)."""
    return _a2_request(
        1,
        ParallelSpec(tp=8, dp=1, pp=1, expert_parallel=True, dp_local=1),
        ServingSpec(gpu_memory_utilization=0.9, max_model_len=133_120, max_num_seqs=16),
        WorkloadSpec(),
    )


def request_k3_a2_8node_text_only() -> PlanRequest:
    """vLLM-Ascend K3 tutorial [pub]: 8 × A2, DP8 / TP8 / EP64, --language-model-only, 262,144 context."""
    return _a2_request(
        8,
        ParallelSpec(tp=8, dp=8, pp=1, expert_parallel=True, dp_local=1),
        ServingSpec(
            gpu_memory_utilization=0.9,
            max_model_len=262_144,
            max_num_seqs=16,
            max_num_batched_tokens=8192,
            comm_buffer_mb=800,
            language_model_only=True,
        ),
        WorkloadSpec(needs_vision=False),
    )


def kimi_k3_hf_checkpoint() -> CheckpointSpec:
    """The Hugging Face MXFP4 release as the catalog seeds it (catalog/seed/checkpoints.yaml).

    The platform-dependent groups are counted from the public config (92 MoE layers, hidden 7168,
    896 experts, latent width 3584, 24 MLA layers with a 1536 + 512 + 64 a-projection, 69 KDA
    layers with a 128-wide f_a projection), all stored in BF16.  Add it to a K3 request
    (``dataclasses.replace(req, checkpoint=kimi_k3_hf_checkpoint())``) to size it as
    vLLM-Ascend places it (engine/placement.py).
    """
    k3 = kimi_k3()
    groups = {
        "router": 92 * 7168 * 896,
        "latent_moe": 92 * 2 * 7168 * 3584,
        "mla_a": 24 * 7168 * (1536 + 512 + 64),
        "kda_f_a": 69 * 7168 * 128,
    }
    return CheckpointSpec(
        slug="kimi-k3-hf-mxfp4",
        name="Kimi K3 — Hugging Face MXFP4 release",
        expert_bytes=k3.expert_weight_bytes,
        non_expert_bytes=k3.non_expert_weight_bytes,
        architecture="kimi_k3",
        embedding_bytes=2 * 163_840 * 7168 * 2,
        vision_bytes=k3.vision_bytes,
        weight_format="mxfp4",
        non_expert_format="bf16",
        activation_format="mxfp8",
        quant_method="compressed-tensors",
        platforms=("cuda", "ascend"),
        param_groups=groups,
        group_formats=dict.fromkeys(groups, "bf16"),
        source="moonshotai/Kimi-K3",
    )
