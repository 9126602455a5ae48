"""The seeded catalog: every figure with its source.

A figure is written ``(value, source)`` where source is ``seed("S1 §2.1 …")``
(the Chinese source documents: S1 = Kimi K3 on Atlas 800 A3, S2 = Kimi K3 on
2 × Inspur NF5868G8), ``public("…")`` (a public config or document) or
``assumed("…")`` (a placeholder a catalog admin should check).  Plain values
(slugs, names, descriptions) carry no source.  ``load_catalog`` refuses a
record whose numeric fields lack a source, so nothing enters unexplained.

LLM records start from the public config.json in ``model-configs/`` run
through ``catalog.importers.hf_config`` and then apply the overrides here.
"""

from __future__ import annotations

import json
from datetime import date
from decimal import Decimal as D
from pathlib import Path

CONFIG_DIR = Path(__file__).resolve().parent / "model-configs"


def seed(ref: str) -> dict[str, str]:
    return {"kind": "seed", "ref": ref}


def public(ref: str) -> dict[str, str]:
    return {"kind": "public", "ref": ref}


def assumed(ref: str = "") -> dict[str, str]:
    return {"kind": "assumed", "ref": ref}


NVIDIA_REF = "vendor datasheets via secondary public sources (docs/domain.md §3); placeholder"

# --------------------------------------------------------------------------- accelerators

ACCELERATORS = [
    {
        "slug": "ascend-910c",
        "name": "Ascend 910C",
        "vendor": "Huawei",
        "domestic": (True, seed("S1 §1: all-domestic Ascend chain")),
        "software_stack": ("ascend", seed("S1 §2.2: vLLM-Ascend, CANN")),
        "logical_devices_per_package": (
            2,
            seed("S1 §2.1 8 × 910C per A3; vLLM-Ascend sees 16 logical NPUs (docs/domain.md §3)"),
        ),
        "memory_gb": (D("64"), seed("S1 §2.1: 128 GB per 910C ÷ 2 dies")),
        "runtime_memory_gib": (
            D("61.27"),
            public(
                "vllm-ascend PR #8289 start-up log: 'Free memory on device (60.86/61.27 GiB)' for a 64 GB NPU"
            ),
        ),
        "memory_bandwidth_tbps": (D("1.6"), seed("S1 §2.1: 3.2 TB/s per 910C ÷ 2 dies")),
        "tflops_fp16": (D("280"), seed("S1 §2.1: 4.48 PFLOPS FP16 per 800I A3 ÷ 16 dies")),
        "tflops_bf16": (D("280"), assumed("taken equal to FP16")),
        "tflops_fp8": (D("0"), assumed("no native FP8 path assumed on 910C")),
        "tflops_int8": (D("560"), assumed("2 × FP16")),
        "tflops_mxfp4": (D("0"), assumed("no native MXFP4 compute; weights dequantised")),
        "tdp_w": (D("600"), assumed("per 910C package; not given in S1")),
    },
    {
        "slug": "ascend-910b",
        "name": "Ascend 910B",
        "vendor": "Huawei",
        "domestic": (True, seed("S1 §1: domestic Ascend line")),
        "software_stack": ("ascend", seed("S1 §1: vLLM-Ascend")),
        "logical_devices_per_package": (1, public("one die per 910B package")),
        "memory_gb": (D("64"), seed("S1 §1 / docs/domain.md §3: 8 × 64 GB NPUs per Atlas 800 A2")),
        "runtime_memory_gib": (
            D("61.27"),
            assumed("same 64 GB HBM as a 910C die (vllm-ascend PR #8289 log: 61.27 GiB); check torch.npu"),
        ),
        "memory_bandwidth_tbps": (D("1.6"), assumed("HBM2e, secondary public sources")),
        "tflops_fp16": (D("313"), assumed("910B3 class, secondary public sources")),
        "tflops_bf16": (D("313"), assumed("taken equal to FP16")),
        "tflops_fp8": (D("0"), assumed("no native FP8")),
        "tflops_int8": (D("626"), assumed("2 × FP16")),
        "tflops_mxfp4": (D("0"), assumed("no native MXFP4")),
        "tdp_w": (D("400"), assumed("secondary public sources")),
    },
    {
        "slug": "rtx-pro-6000d",
        "name": "NVIDIA RTX PRO 6000D",
        "vendor": "NVIDIA",
        "domestic": (False, seed("S2")),
        "software_stack": ("cuda", public("CUDA / NCCL")),
        "logical_devices_per_package": (1, public("one GPU per card")),
        "memory_gb": (D("84"), seed("S2 单台 NF5868G8 配置: 16 × PRO6000D 84G")),
        "runtime_memory_gib": (D("0"), assumed("not measured here: the vendor figure is used")),
        "memory_bandwidth_tbps": (
            D("1.4"),
            assumed("China variant of the RTX PRO 6000 (1.79 TB/s); not in S2"),
        ),
        "tflops_fp16": (D("215"), assumed("scaled from RTX PRO 6000; not in S2")),
        "tflops_bf16": (D("215"), assumed("scaled from RTX PRO 6000; not in S2")),
        "tflops_fp8": (D("430"), assumed("2 × BF16")),
        "tflops_int8": (D("430"), assumed("2 × BF16")),
        "tflops_mxfp4": (D("860"), assumed("4 × BF16 (Blackwell FP4)")),
        "tdp_w": (D("600"), assumed("as RTX PRO 6000 Server")),
    },
    {
        "slug": "rtx-pro-6000",
        "name": "NVIDIA RTX PRO 6000 Blackwell Server",
        "vendor": "NVIDIA",
        "domestic": (False, public("NVIDIA")),
        "software_stack": ("cuda", public("CUDA / NCCL")),
        "logical_devices_per_package": (1, public("one GPU per card")),
        "memory_gb": (D("96"), assumed(NVIDIA_REF)),
        "runtime_memory_gib": (D("0"), assumed("not measured here: the vendor figure is used")),
        "memory_bandwidth_tbps": (D("1.79"), assumed(NVIDIA_REF)),
        "tflops_fp16": (D("250"), assumed(NVIDIA_REF + "; dense")),
        "tflops_bf16": (D("250"), assumed(NVIDIA_REF + "; dense")),
        "tflops_fp8": (D("500"), assumed(NVIDIA_REF + "; dense")),
        "tflops_int8": (D("500"), assumed(NVIDIA_REF + "; dense")),
        "tflops_mxfp4": (D("1000"), assumed(NVIDIA_REF + "; dense")),
        "tdp_w": (D("600"), assumed(NVIDIA_REF)),
    },
    {
        "slug": "h200-sxm",
        "name": "NVIDIA H200 SXM",
        "vendor": "NVIDIA",
        "domestic": (False, public("NVIDIA")),
        "software_stack": ("cuda", public("CUDA / NCCL")),
        "logical_devices_per_package": (1, public("one GPU per module")),
        "memory_gb": (D("141"), assumed(NVIDIA_REF)),
        "runtime_memory_gib": (
            D("139.81"),
            public("vLLM start-up logs on H200: 'Free memory on device (139.21/139.81 GiB) on startup'"),
        ),
        "memory_bandwidth_tbps": (D("4.8"), assumed(NVIDIA_REF)),
        "tflops_fp16": (D("989"), assumed(NVIDIA_REF + "; dense")),
        "tflops_bf16": (D("989"), assumed(NVIDIA_REF + "; dense")),
        "tflops_fp8": (D("1979"), assumed(NVIDIA_REF + "; dense")),
        "tflops_int8": (D("1979"), assumed(NVIDIA_REF + "; dense")),
        "tflops_mxfp4": (D("0"), assumed("Hopper has no FP4 tensor cores")),
        "tdp_w": (D("700"), assumed(NVIDIA_REF)),
    },
    {
        "slug": "h20",
        "name": "NVIDIA H20",
        "vendor": "NVIDIA",
        "domestic": (False, public("NVIDIA")),
        "software_stack": ("cuda", public("CUDA / NCCL")),
        "logical_devices_per_package": (1, public("one GPU per module")),
        "memory_gb": (D("96"), assumed(NVIDIA_REF)),
        "runtime_memory_gib": (D("0"), assumed("not measured here: the vendor figure is used")),
        "memory_bandwidth_tbps": (D("4.0"), assumed(NVIDIA_REF)),
        "tflops_fp16": (D("148"), assumed(NVIDIA_REF + "; dense")),
        "tflops_bf16": (D("148"), assumed(NVIDIA_REF + "; dense")),
        "tflops_fp8": (D("296"), assumed(NVIDIA_REF + "; dense")),
        "tflops_int8": (D("296"), assumed(NVIDIA_REF + "; dense")),
        "tflops_mxfp4": (D("0"), assumed("Hopper has no FP4 tensor cores")),
        "tdp_w": (D("400"), assumed(NVIDIA_REF)),
    },
    {
        "slug": "b200",
        "name": "NVIDIA B200",
        "vendor": "NVIDIA",
        "domestic": (False, public("NVIDIA")),
        "software_stack": ("cuda", public("CUDA / NCCL")),
        "logical_devices_per_package": (1, public("vLLM sees one device per B200")),
        "memory_gb": (D("180"), assumed(NVIDIA_REF)),
        "runtime_memory_gib": (D("0"), assumed("not measured here: the vendor figure is used")),
        "memory_bandwidth_tbps": (D("8.0"), assumed(NVIDIA_REF)),
        "tflops_fp16": (D("2250"), assumed(NVIDIA_REF + "; dense")),
        "tflops_bf16": (D("2250"), assumed(NVIDIA_REF + "; dense")),
        "tflops_fp8": (D("4500"), assumed(NVIDIA_REF + "; dense")),
        "tflops_int8": (D("4500"), assumed(NVIDIA_REF + "; dense")),
        "tflops_mxfp4": (D("9000"), assumed(NVIDIA_REF + "; dense")),
        "tdp_w": (D("1000"), assumed(NVIDIA_REF)),
    },
    {
        "slug": "b300",
        "name": "NVIDIA B300",
        "vendor": "NVIDIA",
        "domestic": (False, public("NVIDIA")),
        "software_stack": ("cuda", public("CUDA / NCCL")),
        "logical_devices_per_package": (1, public("vLLM sees one device per B300")),
        "memory_gb": (D("288"), assumed(NVIDIA_REF)),
        "runtime_memory_gib": (D("0"), assumed("not measured here: the vendor figure is used")),
        "memory_bandwidth_tbps": (D("8.0"), assumed(NVIDIA_REF)),
        "tflops_fp16": (D("2250"), assumed(NVIDIA_REF + "; dense")),
        "tflops_bf16": (D("2250"), assumed(NVIDIA_REF + "; dense")),
        "tflops_fp8": (D("4500"), assumed(NVIDIA_REF + "; dense")),
        "tflops_int8": (D("150"), assumed("Blackwell Ultra trims INT8; placeholder")),
        "tflops_mxfp4": (D("13500"), assumed(NVIDIA_REF + "; dense")),
        "tdp_w": (D("1100"), assumed(NVIDIA_REF)),
    },
]

# --------------------------------------------------------------------------- servers


def _nic(fabric, role, count, speed, source):
    return {
        "fabric": fabric,
        "role": role,
        "count": count,
        "speed_gbps": speed,
        "source_kind": source["kind"],
        "source_ref": source["ref"],
    }


def _nvidia_server(slug, name, accelerator, rack_units, kw, scale_up_gbps, psu, cpu, ram_gb, nics, notes=""):
    psu_count, psu_watts, psu_redundant = psu
    return {
        "slug": slug,
        "name": name,
        "vendor": "NVIDIA",
        "accelerator": accelerator,
        "packages": (8, assumed(NVIDIA_REF)),
        "logical_devices": (8, assumed("8 GPUs, one device each")),
        "rack_units": (rack_units, assumed(NVIDIA_REF)),
        "max_input_kw": (D(kw), assumed(NVIDIA_REF)),
        "typical_load_factor": (D("0.8"), assumed("average draw ÷ maximum input while serving")),
        "psu_count": (psu_count, assumed(NVIDIA_REF)),
        "psu_watts": (psu_watts, assumed(NVIDIA_REF)),
        "psu_redundant": (psu_redundant, assumed(NVIDIA_REF)),
        "scale_up_fabric": ("nvlink" if scale_up_gbps > 1024 else "pcie", assumed(NVIDIA_REF)),
        "scale_up_bandwidth_gbps": (D(scale_up_gbps), assumed(NVIDIA_REF + "; bidirectional per GPU")),
        "scale_up_domain_devices": (0, assumed("the server's own 8 GPUs")),
        "cpu": cpu,
        "ram_gb": (ram_gb, assumed(NVIDIA_REF)),
        "storage": "NVMe (assumed)",
        "validated_text_only": (False, assumed("no local validation recorded")),
        "notes": notes,
        "nics": nics,
    }


_IB8 = [
    _nic("infiniband", "scale_out", 8, 400, assumed(NVIDIA_REF + "; ConnectX-7 class")),
    _nic("ethernet", "service", 2, 200, assumed(NVIDIA_REF)),
    _nic("management", "management", 1, 1, assumed("BMC port")),
]

SERVERS = [
    {
        "slug": "atlas-800-a3",
        "name": "Atlas 800 A3 (super-node server)",
        "name_zh": "Atlas 800 A3 超节点服务器",
        "vendor": "Huawei",
        "accelerator": "ascend-910c",
        "packages": (8, seed("S1 §2.1: 8 × Ascend 910C")),
        "logical_devices": (16, seed("S1 §2.3: TP16 over the node's 16 logical NPUs")),
        "rack_units": (10, seed("S1 §2.1: 10U")),
        "max_input_kw": (D("16.2"), seed("S1 §2.1: max input 16.2 kW")),
        "typical_load_factor": (D("0.8"), assumed("average draw ÷ maximum input while serving")),
        "psu_count": (6, seed("S1 §2.1: 6 × 3 kW PSUs, 5+1")),
        "psu_watts": (3000, seed("S1 §2.1: 6 × 3 kW PSUs, 5+1")),
        "psu_redundant": (1, seed("S1 §2.1: 5+1 redundancy")),
        "scale_up_fabric": ("lingqu", seed("S1 §2.1: D2D over the LingQu bus")),
        "scale_up_bandwidth_gbps": (D("6272"), seed("S1 §2.1: D2D 784 GB/s bidirectional = 6,272 Gbit/s")),
        "scale_up_domain_devices": (
            0,
            assumed("the node's own 16 NPUs; inter-node LingQu is modelled as the 56 × 400GE LingQu ports"),
        ),
        "cpu": "4 × Kunpeng 920",
        "ram_gb": (
            2048,
            assumed("S1 §2.1 gives 32 DDR5 slots up to 5200 MT/s, not the fill; 32 × 64 GB assumed"),
        ),
        "storage": "not given in S1 (assumed system SSDs + NVMe)",
        "validated_text_only": (False, public("vLLM-Ascend K3 tutorial validates image input on 4 × A3")),
        "notes": "Air-cooled [S1 §2.1]. 4.48 PFLOPS FP16 for the 800I A3 inference model.",
        "nics": [
            _nic("roce", "scale_out", 8, 400, seed("S1 §2.1: 8 × 400GE QSFP-DD (RoCE)")),
            _nic("lingqu", "scale_up", 56, 400, seed("S1 §2.1: 56 × 400GE QSFP-DD (LingQu)")),
            _nic("management", "management", 1, 1, assumed("iBMC port")),
        ],
    },
    {
        "slug": "atlas-800-a2",
        "name": "Atlas 800 A2 (910B, 8 NPUs)",
        "name_zh": "Atlas 800 A2（910B，8 卡）",
        "vendor": "Huawei",
        "accelerator": "ascend-910b",
        "packages": (8, seed("S1 §1 / docs/domain.md §3: 8-card 910B HCCS server")),
        "logical_devices": (8, public("vLLM-Ascend K3 tutorial: DP8/TP8/EP64 on 8 × A2")),
        "rack_units": (4, assumed("secondary public sources")),
        "max_input_kw": (D("6.0"), assumed("secondary public sources")),
        "typical_load_factor": (D("0.8"), assumed("average draw ÷ maximum input while serving")),
        "psu_count": (4, assumed("")),
        "psu_watts": (2600, assumed("")),
        "psu_redundant": (2, assumed("2+2")),
        "scale_up_fabric": ("hccs", seed("S1 §1: 8-card 910B HCCS server")),
        "scale_up_bandwidth_gbps": (D("3136"), assumed("HCCS full mesh 392 GB/s per NPU")),
        "scale_up_domain_devices": (0, assumed("the server's own 8 NPUs")),
        "cpu": "4 × Kunpeng 920 (assumed)",
        "ram_gb": (1024, assumed("")),
        "storage": "assumed system SSDs + NVMe",
        "validated_text_only": (
            True,
            public(
                "vLLM-Ascend Kimi-K3 tutorial: 8 × Atlas 800 A2 with --language-model-only, --max-model-len 262144"
            ),
        ),
        "notes": "S1 says one classic 8-card 910B server cannot hold K3 (512 GB < 1.56 TB); eight can, text only.",
        "nics": [
            _nic("roce", "scale_out", 8, 200, assumed("on-package 200GE RoCE per NPU")),
            _nic("management", "management", 1, 1, assumed("iBMC port")),
        ],
    },
    {
        "slug": "nf5868g8",
        "name": "Inspur NF5868G8 (16 × RTX PRO 6000D)",
        "name_zh": "浪潮 NF5868G8（16 × RTX PRO 6000D）",
        "vendor": "Inspur",
        "accelerator": "rtx-pro-6000d",
        "packages": (16, seed("S2 单台配置: 16 × PRO6000D 84G (dual-width)")),
        "logical_devices": (16, seed("S2: 16 GPUs per server")),
        "rack_units": (8, seed("S2 单台配置: 8U")),
        "max_input_kw": (D("16.5"), seed("S2 部署注意事项: 16.5 kW at full load")),
        "typical_load_factor": (D("0.8"), assumed("average draw ÷ maximum input while serving")),
        "psu_count": (6, seed("S2: 6 × 3300 W titanium, N+1")),
        "psu_watts": (3300, seed("S2: 6 × 3300 W titanium, N+1")),
        "psu_redundant": (1, seed("S2: N+1")),
        "scale_up_fabric": ("pcie", seed("S2: PCIe fabric, all-to-all")),
        "scale_up_bandwidth_gbps": (D("1024"), seed("S2: GPU P2P 128 GB/s = 1,024 Gbit/s")),
        "scale_up_domain_devices": (0, assumed("the server's own 16 GPUs")),
        "cpu": "2 × Xeon 6767P",
        "ram_gb": (1536, seed("S2: 24 × 64 GB DDR5 (32 slots)")),
        "storage": "2 × 7.68 TB U.2 NVMe",
        "validated_text_only": (False, assumed("no validation recorded")),
        "notes": "S2 reads “400G + 10G 双口”; taken as a dual-port 400G NIC and a dual-port 10G NIC.",
        "nics": [
            _nic("roce", "scale_out", 2, 400, seed("S2: 400G + 10G 双口 (dual-port reading assumed)")),
            _nic("ethernet", "service", 2, 10, seed("S2: 400G + 10G 双口 (dual-port reading assumed)")),
            _nic("management", "management", 1, 1, assumed("BMC port")),
        ],
    },
    _nvidia_server(
        "hgx-h200-8gpu",
        "HGX/DGX H200 (8 × H200 SXM)",
        "h200-sxm",
        8,
        "10.2",
        7200,
        (6, 3300, 2),
        "2 × Xeon Platinum 8480C",
        2048,
        _IB8,
        "DGX H200 figures: 8U, 10.2 kW max (docs/domain.md §3).",
    ),
    _nvidia_server(
        "hgx-h20-8gpu",
        "HGX H20 (8 × H20)",
        "h20",
        8,
        "6.5",
        7200,
        (6, 3300, 2),
        "2 × Xeon (assumed)",
        2048,
        _IB8,
    ),
    _nvidia_server(
        "dgx-b200",
        "DGX B200 (8 × B200)",
        "b200",
        10,
        "14.3",
        14400,
        (6, 3300, 1),
        "2 × Xeon Platinum 8570",
        2048,
        _IB8,
    ),
    _nvidia_server(
        "dgx-b300",
        "DGX B300 (8 × B300)",
        "b300",
        10,
        "14.5",
        14400,
        (6, 3300, 1),
        "2 × Xeon (assumed)",
        2048,
        _IB8,
    ),
    _nvidia_server(
        "rtx-pro-6000-server-8gpu",
        "RTX PRO 6000 Server (8 × RTX PRO 6000)",
        "rtx-pro-6000",
        4,
        "7.0",
        1024,
        (4, 3200, 1),
        "2 × Xeon (assumed)",
        1024,
        [
            _nic("roce", "scale_out", 4, 400, assumed("")),
            _nic("management", "management", 1, 1, assumed("BMC port")),
        ],
    ),
]

# --------------------------------------------------------------------------- switches

SWITCHES = [
    {
        "slug": "lingqu-630-v1",
        "name": "LingQu 630 V1 (400GE LingQu switch)",
        "name_zh": "灵衢 630 V1（400GE 灵衢交换机）",
        "vendor": "Huawei",
        "fabric": ("lingqu", seed("S1 §3.2: 400GE LingQu switch, e.g. LingQu 630 V1")),
        "ports": (128, assumed("port count not in S1")),
        "port_speed_gbps": (400, seed("S1 §3.2: 400GE")),
        "rack_units": (4, assumed("not in S1")),
        "power_kw": (D("3.0"), assumed("not in S1")),
        "notes": "S1: one per 8 nodes; two for 16 nodes (one per P/D cluster).",
    },
    {
        "slug": "roce-400ge-access",
        "name": "400GE RoCE access switch",
        "name_zh": "400GE RoCE 接入交换机",
        "vendor": "Huawei",
        "fabric": ("roce", seed("S1 §3.2: 400GE RoCE access switch")),
        "ports": (64, assumed("not in S1")),
        "port_speed_gbps": (400, seed("S1 §3.2: 400GE")),
        "rack_units": (2, assumed("not in S1")),
        "power_kw": (D("1.6"), assumed("not in S1")),
        "notes": "S1: one for 8 nodes.",
    },
    {
        "slug": "roce-400ge-core",
        "name": "400GE RoCE core switch",
        "name_zh": "400GE RoCE 核心交换机",
        "vendor": "Huawei",
        "fabric": ("roce", seed("S1 §4.3: 400GE RoCE core switch")),
        "ports": (128, assumed("not in S1")),
        "port_speed_gbps": (400, seed("S1 §4.3: 400GE")),
        "rack_units": (4, assumed("not in S1")),
        "power_kw": (D("3.2"), assumed("not in S1")),
        "notes": "S1: one for 16 nodes.",
    },
    {
        "slug": "inspur-x400",
        "name": "Inspur X400 AI switch (400G)",
        "name_zh": "浪潮 X400 AI 交换机（400G）",
        "vendor": "Inspur",
        "fabric": ("roce", seed("S2 网络侧: X400 400G RDMA switch")),
        "ports": (64, assumed("not in S2")),
        "port_speed_gbps": (400, seed("S2: 400G")),
        "rack_units": (2, assumed("not in S2")),
        "power_kw": (D("1.5"), assumed("not in S2")),
        "notes": "S2: 3.2 Tbps non-blocking RDMA, 95 % effective bandwidth (classic RoCE ≈60 %), two tiers up to 8,000 GPUs.",
    },
    {
        "slug": "nvidia-qm9700",
        "name": "NVIDIA Quantum-2 QM9700 (64 × 400G NDR InfiniBand)",
        "vendor": "NVIDIA",
        "fabric": (
            "infiniband",
            public("NVIDIA QM9700/QM9790 1U NDR 400Gb/s InfiniBand Switch Systems User Manual"),
        ),
        "ports": (64, public("QM9700 user manual: 64 × 400Gb/s NDR ports (32 OSFP cages)")),
        "port_speed_gbps": (400, public("QM9700 user manual: NDR 400Gb/s per port")),
        "rack_units": (1, public("QM9700 user manual: 1U")),
        "power_kw": (D("1.72"), assumed("max with active optics; typical draw is lower")),
        "notes": "Scale-out fabric of HGX/DGX H200 and B200 clusters (ConnectX-7, one 400G port per GPU). "
        "Managed (on-board subnet manager); QM9790 is the unmanaged variant.",
    },
    {
        "slug": "nvidia-sn5600",
        "name": "NVIDIA Spectrum-X SN5600 (64 × 800GbE)",
        "vendor": "NVIDIA",
        "fabric": (
            "roce",
            public("NVIDIA Spectrum-X: Spectrum-4 SN5600 Ethernet switch with BlueField-3 SuperNICs (RoCE)"),
        ),
        "ports": (128, public("SN5600: 64 × 800GbE OSFP, each split into 2 × 400GbE")),
        "port_speed_gbps": (400, public("SN5600: 400GbE per port in 2 × 400G split mode")),
        "rack_units": (2, public("SN5600: 2U")),
        "power_kw": (D("2.0"), assumed("not taken from a datasheet")),
        "notes": "Ethernet alternative to InfiniBand for the GPU scale-out fabric (Spectrum-X, RoCE).",
    },
    {
        "slug": "eth-100ge-service",
        "name": "100GE Ethernet service switch",
        "name_zh": "100GE 以太网业务交换机",
        "vendor": "",
        "fabric": ("ethernet", assumed("service plane")),
        "ports": (32, assumed("")),
        "port_speed_gbps": (100, assumed("")),
        "rack_units": (1, assumed("")),
        "power_kw": (D("0.6"), assumed("")),
        "notes": "Service (business) plane. S1: ordinary Ethernet cannot carry EP64 cross-node traffic.",
    },
    {
        "slug": "mgmt-1ge",
        "name": "1GE management switch",
        "name_zh": "1GE 管理交换机",
        "vendor": "",
        "fabric": ("management", assumed("management plane")),
        "ports": (48, assumed("")),
        "port_speed_gbps": (1, assumed("")),
        "rack_units": (1, assumed("")),
        "power_kw": (D("0.15"), assumed("")),
        "notes": "iBMC / BMC and out-of-band management.",
    },
]

# --------------------------------------------------------------------------- racks

RACKS = [
    {
        "slug": "rack-42u-air",
        "name": "42U air-cooled rack",
        "name_zh": "42U 风冷机柜",
        "rack_units": (42, public("glossary: 42U cabinet")),
        "max_kw": (D("40"), assumed("A/B PDU power budget; cooling is checked against the site's air limit")),
        "cooling": ("air", seed("S1 §2.1: A3 is air-cooled")),
        "pdu_units": (0, assumed("vertical (0U) PDUs")),
        "reserved_units": (2, assumed("cable management / blanking")),
        "is_default": True,
        "notes": (
            "40 kW is what the PDUs may deliver, chosen so S1's two A3 per rack (32.4 kW) fit electrically; "
            "the site's air-cooling limit (25 kW) is what flags it."
        ),
    },
    {
        "slug": "rack-42u-containment",
        "name": "42U rack, hot/cold-aisle containment",
        "name_zh": "42U 冷/热通道封闭机柜",
        "rack_units": (42, public("glossary: 42U cabinet")),
        "max_kw": (
            D("40"),
            public("docs/domain.md §7: 35–40 kW per rack needs containment or liquid cooling"),
        ),
        "cooling": ("containment", public("docs/domain.md §7")),
        "pdu_units": (0, assumed("vertical (0U) PDUs")),
        "reserved_units": (2, assumed("cable management / blanking")),
        "is_default": False,
        "notes": "",
    },
    {
        "slug": "rack-42u-liquid",
        "name": "42U liquid-cooled rack",
        "name_zh": "42U 液冷机柜",
        "rack_units": (42, public("glossary: 42U cabinet")),
        "max_kw": (D("60"), assumed("rear-door / direct liquid cooling")),
        "cooling": ("liquid", public("docs/domain.md §7")),
        "pdu_units": (0, assumed("vertical (0U) PDUs")),
        "reserved_units": (2, assumed("cable management / blanking")),
        "is_default": False,
        "notes": "",
    },
]

# --------------------------------------------------------------------------- sites

SITES = [
    {
        "slug": "cn-default",
        "name": "China data centre (default)",
        "voltage_ll": (D("380"), seed("S1 §3.2: three-phase 380 V")),
        "phases": (3, seed("S1 §3.2: three-phase 380 V")),
        "power_factor": (D("0.95"), assumed("server PSUs with active PFC")),
        "continuous_derating": (
            D("0.8"),
            public("80 % continuous-load rule (NEC; NetBox max_utilization 80 %)"),
        ),
        "pue": (D("1.3"), public("China policy: new large data centres PUE ≤ 1.3")),
        "electricity_price_per_kwh": (D("0.65"), public("industrial electricity ≈ ¥0.6–0.7/kWh")),
        "colocation_per_rack_month": (D("0"), assumed("customer's own hall: no colocation fee")),
        "air_cooling_kw_limit": (D("25"), public("typical air-cooling limit ≈20–25 kW per rack")),
        "currency": "CNY",
        "is_default": True,
        "notes": "",
    },
    {
        "slug": "cn-hub-node",
        "name": "China hub node (national computing hub)",
        "voltage_ll": (D("380"), seed("S1 §3.2: three-phase 380 V")),
        "phases": (3, seed("S1 §3.2: three-phase 380 V")),
        "power_factor": (D("0.95"), assumed("server PSUs with active PFC")),
        "continuous_derating": (D("0.8"), public("80 % continuous-load rule")),
        "pue": (D("1.25"), public("China policy: hub nodes PUE ≤ 1.25")),
        "electricity_price_per_kwh": (D("0.40"), public("subsidised electricity ≈ ¥0.4/kWh")),
        "colocation_per_rack_month": (D("5000"), assumed("hub-node colocation per rack-month")),
        "air_cooling_kw_limit": (D("25"), public("typical air-cooling limit ≈20–25 kW per rack")),
        "currency": "CNY",
        "is_default": False,
        "notes": "",
    },
]

# --------------------------------------------------------------------------- topologies

TOPOLOGIES = [
    {
        "slug": "single-cluster",
        "kind": ("single", seed("S1 §2.3")),
        "name_en": "Single cluster",
        "name_zh": "单集群",
        "description_en": (
            "One serving group. 4 × A3 with DP4/TP16/EP64 is the officially validated minimum; node 0 is the "
            "master, nodes 1–3 run --headless with --data-parallel-start-rank 1/2/3."
        ),
        "description_zh": "单个服务集群。4 台 A3 以 DP4/TP16/EP64 混合部署是官方验证的最小集群；Node 0 为主节点，Node 1-3 为 --headless 工作节点。",
        "default_nodes": (4, seed("S1 §2.3: 4 × Atlas 800 A3, DP4/TP16/EP64")),
        "prefill_nodes": (0, seed("S1 §2.3")),
        "decode_nodes": (0, seed("S1 §2.3")),
        "sort_order": (1, assumed("display order")),
    },
    {
        "slug": "primary-standby",
        "kind": ("primary_standby", seed("S1 §3.1 用法 A")),
        "name_en": "Primary/standby pair",
        "name_zh": "主备高可用（双集群）",
        "description_en": (
            "Two identical clusters: A serves, B is hot standby; weights and KV synchronised through shared "
            "storage; the gateway fails over within 30 s. For “zero downtime” finance and government."
        ),
        "description_zh": "两套相同集群：集群 A 对外服务，集群 B 热备；权重和 KV Cache 通过共享存储同步；故障时 Gateway 30 秒内切换。",
        "default_nodes": (8, seed("S1 §3: 8 × A3, two 4-node clusters")),
        "prefill_nodes": (0, seed("S1 §3")),
        "decode_nodes": (0, seed("S1 §3")),
        "sort_order": (2, assumed("display order")),
    },
    {
        "slug": "tenant-pair",
        "kind": ("tenant_pair", seed("S1 §3.1 用法 B")),
        "name_en": "Tenant isolation / canary pair",
        "name_zh": "租户隔离 / 灰度（双集群）",
        "description_en": (
            "Two clusters serving different tenants: A for high-priority users, B for external POCs or a new "
            "version; weight versions may differ."
        ),
        "description_zh": "两套集群服务不同租户：A 服务高优先级客户，B 服务外部 POC 或新版本灰度；两套权重版本可不同。",
        "default_nodes": (8, seed("S1 §3: 8 × A3, two 4-node clusters")),
        "prefill_nodes": (0, seed("S1 §3")),
        "decode_nodes": (0, seed("S1 §3")),
        "sort_order": (3, assumed("display order")),
    },
    {
        "slug": "pd-disaggregated",
        "kind": ("disaggregated", seed("S1 §4.1: xPyD (8P8D)")),
        "name_en": "Prefill/decode disaggregation (8P8D)",
        "name_zh": "PD 分离（8P8D）",
        "description_en": (
            "8 prefill nodes (compute-bound, produce KV) and 8 decode nodes (memory-bound, consume KV), each side "
            "DP8/TP16; KV moved by the Mooncake connector; both sides scale independently. Confirm by load test."
        ),
        "description_zh": "8 台 Prefill（计算密集，生成 KV）+ 8 台 Decode（访存密集，消费 KV），每侧 DP8/TP16；Mooncake Connector 传输 KV；P/D 可独立扩缩，性能以压测为准。",
        "default_nodes": (16, seed("S1 §4: 16 × A3")),
        "prefill_nodes": (8, seed("S1 §4: 8 prefill")),
        "decode_nodes": (8, seed("S1 §4: 8 decode")),
        "sort_order": (4, assumed("display order")),
    },
]

# --------------------------------------------------------------------------- LLMs

_K3_LICENCE = (
    "Kimi K3 License: commercial use allowed; MaaS revenue above US$20 M over 12 consecutive months needs a "
    "separate agreement [S1 §1, §6.2]. Have legal check the terms."
)

# GLM-4.5 has no config in the reference set: layers, GQA heads, head dim and parameter
# counts are public (docs/domain.md §2); the other dimensions are placeholders.
GLM45_CONFIG = {
    "model_type": "glm4_moe",
    "num_hidden_layers": 92,
    "num_attention_heads": 96,
    "num_key_value_heads": 8,
    "head_dim": 128,
    "hidden_size": 5120,
    "intermediate_size": 12288,
    "moe_intermediate_size": 1536,
    "n_routed_experts": 160,
    "n_shared_experts": 1,
    "num_experts_per_tok": 8,
    "first_k_dense_replace": 3,
    "vocab_size": 151552,
    "max_position_embeddings": 131072,
    "attention_bias": True,
    "topk_method": "noaux_tc",
    "num_nextn_predict_layers": 1,
    "torch_dtype": "bfloat16",
    "tie_word_embeddings": False,
}
GLM45_ASSUMED = (
    "hidden_size",
    "vocab_size",
    "num_experts",
    "experts_per_token",
    "shared_experts",
    "moe_layers",
    "expert_weight_bytes",
    "non_expert_weight_bytes",
    "max_context",
    "sliding_layers",
    "sliding_window",
    "kv_lora_rank",
    "qk_rope_head_dim",
    "mla_layers",
    "linear_layers",
    "linear_num_heads",
    "linear_head_dim",
    "linear_conv_kernel",
    "linear_conv_dim",
    "linear_state_dtype_bytes",
    "linear_conv_dtype_bytes",
    "has_vision",
    "vision_params",
    "vision_bytes",
    "weight_format",
    "activation_format",
)

NO_API_PRICE = assumed("no first-party API price recorded")

LLM_MODELS = [
    {
        "slug": "kimi-k3",
        "config": "moonshotai--Kimi-K3.config.json",
        "hf_model_id": "moonshotai/Kimi-K3",
        "fields": {
            "name": "Kimi K3",
            "total_params": (
                2_779_931_837_184,
                public("HF config via NVIDIA-NeMo/Automodel kimi_k3/config.py (docs/domain.md §2)"),
            ),
            "num_experts": (896, seed("S1 §2.3: 896 experts over EP64")),
            "expert_weight_bytes": (
                1_446_456_066_048,
                public("HF config: 92 MoE layers × 896 experts × 3 × 3584 (latent width) × 3072 × 4.25/8 B"),
            ),
            "non_expert_weight_bytes": (
                114_480_025_400,
                seed("S1 §1 / S2: 96 shards, 1,560,936,091,448 B (≈1.56 TB) minus the routed experts"),
            ),
            "weight_format": ("mxfp4", seed("S1 §1: MXFP4 weights, QAT from SFT on")),
            "activation_format": ("mxfp8", seed("S1 §1: MXFP8 activations")),
            "max_context": (1_048_576, seed("S1 §1: 1M-token context; HF config agrees")),
            "has_vision": (True, seed("S1 §2.2: MoonViT-V2 vision encoder, image input")),
            "api_price_input_per_m": (D("3"), seed("S1 §3.3: $3 per M input tokens")),
            "api_price_output_per_m": (D("15"), seed("S1 §3.3: $15 per M output tokens")),
            "api_price_cached_input_per_m": (None, seed("S1 §3.3 gives no cached-input price")),
            "api_price_currency": "USD",
            "licence_note": _K3_LICENCE,
            "vllm_tokenizer_mode": "kimi_k3",
            "vllm_reasoning_parser": "kimi_k3",
            "vllm_tool_call_parser": "kimi_k3",
            "source_notes": (
                "Vision: MoonViT-V2 encoder ≈401 M params [S1 §5 场景4] + 46 M patch-merger projector (HF config). "
                "Must load the MXFP4 (or w4a8) release; FP16 weights do not fit [S1 §6.2]. Video unverified in local "
                "serving [S1 §6.2]. Release date differs between S1 (2026-07-16) and S2 (2025-07-27). "
                "Validated text-only on 8 × Atlas 800 A2 (vLLM-Ascend tutorial)."
            ),
        },
        "validated_text_only_on": ["atlas-800-a2"],
    },
    {
        "slug": "deepseek-v3",
        "config": "deepseek-ai--DeepSeek-V3.config.json",
        "hf_model_id": "deepseek-ai/DeepSeek-V3",
        "fields": {
            "name": "DeepSeek-V3",
            "api_price_input_per_m": (
                D("0.27"),
                assumed("DeepSeek API list price at V3 launch; check current"),
            ),
            "api_price_output_per_m": (
                D("1.10"),
                assumed("DeepSeek API list price at V3 launch; check current"),
            ),
            "api_price_cached_input_per_m": (
                D("0.07"),
                assumed("DeepSeek API cache-hit input price at V3 launch; check current"),
            ),
            "licence_note": "DeepSeek model licence (commercial use allowed).",
            "vllm_tool_call_parser": "deepseek_v3",
            "source_notes": "FP8 block-quantised release; MTP layer not counted.",
        },
    },
    {
        "slug": "deepseek-r1",
        "config": "deepseek-ai--DeepSeek-R1.config.json",
        "hf_model_id": "deepseek-ai/DeepSeek-R1",
        "fields": {
            "name": "DeepSeek-R1",
            "api_price_input_per_m": (
                D("0.55"),
                assumed("DeepSeek API list price at R1 launch; check current"),
            ),
            "api_price_output_per_m": (
                D("2.19"),
                assumed("DeepSeek API list price at R1 launch; check current"),
            ),
            "api_price_cached_input_per_m": (
                D("0.14"),
                assumed("DeepSeek API cache-hit input price at R1 launch; check current"),
            ),
            "licence_note": "MIT licence.",
            "vllm_reasoning_parser": "deepseek_r1",
            "source_notes": "Same architecture as DeepSeek-V3.",
        },
    },
    {
        "slug": "kimi-k2",
        "config": "moonshotai--Kimi-K2-Instruct.config.json",
        "hf_model_id": "moonshotai/Kimi-K2-Instruct",
        "fields": {
            "name": "Kimi-K2-Instruct",
            "api_price_input_per_m": (D("0.60"), assumed("Moonshot API list price; check current")),
            "api_price_output_per_m": (D("2.50"), assumed("Moonshot API list price; check current")),
            "api_price_cached_input_per_m": (
                D("0.15"),
                assumed("Moonshot API cache-hit input price; check current"),
            ),
            "licence_note": "Modified MIT licence.",
            "vllm_tool_call_parser": "kimi_k2",
            "source_notes": "",
        },
    },
    {
        "slug": "qwen3-235b-a22b",
        "config": "Qwen--Qwen3-235B-A22B.config.json",
        "hf_model_id": "Qwen/Qwen3-235B-A22B",
        "fields": {
            "name": "Qwen3-235B-A22B",
            "api_price_input_per_m": (None, NO_API_PRICE),
            "api_price_output_per_m": (None, NO_API_PRICE),
            "api_price_cached_input_per_m": (None, NO_API_PRICE),
            "licence_note": "Apache-2.0.",
            "vllm_reasoning_parser": "qwen3",
            "vllm_tool_call_parser": "hermes",
            "source_notes": "BF16 release. Native context 32k (config 40,960); 131k with YaRN.",
        },
    },
    {
        "slug": "glm-4-5",
        "config_dict": GLM45_CONFIG,
        "assumed_fields": GLM45_ASSUMED,
        "hf_model_id": "zai-org/GLM-4.5",
        "fields": {
            "name": "GLM-4.5",
            "total_params": (355_000_000_000, public("docs/domain.md §2: 355 B total")),
            "active_params": (32_000_000_000, public("docs/domain.md §2: 32 B active")),
            "num_layers": (92, public("docs/domain.md §2: 92 layers")),
            "gqa_layers": (92, public("docs/domain.md §2: GQA on every layer")),
            "num_attention_heads": (96, public("docs/domain.md §2: GQA 96/8")),
            "num_kv_heads": (8, public("docs/domain.md §2: GQA 96/8")),
            "head_dim": (128, public("docs/domain.md §2: head 128")),
            "api_price_input_per_m": (D("0.60"), assumed("Z.ai API list price; check current")),
            "api_price_output_per_m": (D("2.20"), assumed("Z.ai API list price; check current")),
            "api_price_cached_input_per_m": (
                D("0.11"),
                assumed("Z.ai API cached input price; check current"),
            ),
            "licence_note": "MIT licence.",
            "vllm_reasoning_parser": "glm45",
            "vllm_tool_call_parser": "glm45",
            "source_notes": (
                "No config.json in the reference set: dimensions other than layers, heads and head dim are "
                "placeholders; expert/non-expert bytes follow from them (BF16)."
            ),
        },
    },
    {
        "slug": "gpt-oss-120b",
        "config": "openai--gpt-oss-120b.config.json",
        "hf_model_id": "openai/gpt-oss-120b",
        "fields": {
            "name": "gpt-oss-120b",
            "api_price_input_per_m": (None, NO_API_PRICE),
            "api_price_output_per_m": (None, NO_API_PRICE),
            "api_price_cached_input_per_m": (None, NO_API_PRICE),
            "licence_note": "Apache-2.0.",
            "vllm_reasoning_parser": "openai_gptoss",
            "vllm_tool_call_parser": "openai",
            "source_notes": "MXFP4 experts; alternating 128-token sliding-window and full attention.",
        },
    },
    {
        "slug": "llama-3-1-8b",
        "config": "meta-llama--Meta-Llama-3.1-8B.config.json",
        "hf_model_id": "meta-llama/Llama-3.1-8B-Instruct",
        "fields": {
            "name": "Llama-3.1-8B",
            "api_price_input_per_m": (None, NO_API_PRICE),
            "api_price_output_per_m": (None, NO_API_PRICE),
            "api_price_cached_input_per_m": (None, NO_API_PRICE),
            "licence_note": "Llama 3.1 Community License.",
            "vllm_tool_call_parser": "llama3_json",
            "source_notes": "",
        },
    },
    {
        "slug": "llama-3-3-70b",
        "config": "meta-llama--Meta-Llama-3.1-70B.config.json",
        "hf_model_id": "meta-llama/Llama-3.3-70B-Instruct",
        "fields": {
            "name": "Llama-3.3-70B",
            "api_price_input_per_m": (None, NO_API_PRICE),
            "api_price_output_per_m": (None, NO_API_PRICE),
            "api_price_cached_input_per_m": (None, NO_API_PRICE),
            "licence_note": "Llama 3.3 Community License.",
            "vllm_tool_call_parser": "llama3_json",
            "source_notes": "Architecture from the Llama-3.1-70B config (3.3-70B has the same architecture).",
        },
        "config_ref": "HF config meta-llama/Meta-Llama-3.1-70B (same architecture as 3.3-70B)",
    },
]

# --------------------------------------------------------------------------- scenarios

_WORKLOAD = "chosen as a starting point for the scenario; edit per customer"
_SLO = (
    "latency target chosen as a starting point; 50 ms TPOT is the SLO of the CloudMatrix384 paper "
    "(arXiv 2506.12708) and of SGLang's Ascend high-throughput tier"
)

SCENARIOS = [
    {
        "slug": "finance-research",
        "name_en": "Financial research analysis",
        "name_zh": "金融研报分析",
        "pain_en": "Cross-document reasoning over million-character research reports, filings and announcements.",
        "pain_zh": "百万字研报、财报、公告的跨文档推理。",
        "why_en": "1M context and native vision read a whole annual report, charts included, in one pass.",
        "why_zh": "1M 上下文 + 原生视觉，可一次性“读完”整份年报并理解图表。",
        "deployment_en": "8 × A3 as two clusters, primary/standby, for internal analysts.",
        "deployment_zh": "8 台 A3 双集群（主备），内部分析师团队使用。",
        "input_tokens": (32_768, assumed(_WORKLOAD + ": a long report section per request")),
        "output_tokens": (2_048, assumed(_WORKLOAD)),
        "concurrency": (32, assumed(_WORKLOAD + ": an analyst team")),
        "context": (133_120, seed("S1 §2.3: --max-model-len 133120")),
        "needs_vision": (True, seed("S1 §5 场景1: charts in annual reports")),
        "availability_target": (D("0.999"), assumed("“zero downtime” finance (S1 §3.1) taken as 99.9 %")),
        "ttft_target_s": (D("15"), assumed(_SLO + ": analysts wait for a long report section")),
        "tpot_target_ms": (D("50"), assumed(_SLO)),
        "recommended_topology": "primary-standby",
        "recommended_nodes": (8, seed("S1 §5 场景1: 8 × A3, primary/standby")),
        "recommended_model": "kimi-k3",
        "recommended_server": "atlas-800-a3",
        "sort_order": (1, assumed("display order")),
    },
    {
        "slug": "government-policy-qa",
        "name_en": "Government documents & policy Q&A",
        "name_zh": "政务文档与政策问答",
        "pain_en": "Domestic-stack mandate, data must stay in the domain, long documents.",
        "pain_zh": "国产化要求 + 数据不出域 + 长文档处理。",
        "why_en": "All-domestic Ascend chain; 1M context covers complete regulations.",
        "why_zh": "昇腾纯国产链路，1M 上下文覆盖政策法规全集。",
        "deployment_en": "8 × A3 with tenant isolation, on a Xinchuang cloud.",
        "deployment_zh": "8 台 A3（租户隔离），信创云环境部署。",
        "input_tokens": (49_152, assumed(_WORKLOAD + ": a regulation set per request")),
        "output_tokens": (2_048, assumed(_WORKLOAD)),
        "concurrency": (24, assumed(_WORKLOAD)),
        "context": (133_120, seed("S1 §2.3: --max-model-len 133120")),
        "needs_vision": (False, assumed("text documents")),
        "availability_target": (D("0.995"), seed("S1 §7 service offer: 99.5 % availability SLA")),
        "ttft_target_s": (D("30"), assumed(_SLO + ": a whole regulation set (49K tokens) per question")),
        "tpot_target_ms": (D("50"), assumed(_SLO)),
        "recommended_topology": "tenant-pair",
        "recommended_nodes": (8, seed("S1 §5 场景2: 8 × A3, tenant isolation")),
        "recommended_model": "kimi-k3",
        "recommended_server": "atlas-800-a3",
        "sort_order": (2, assumed("display order")),
    },
    {
        "slug": "software-engineering-agent",
        "name_en": "Software-engineering agents",
        "name_zh": "软件工程 Agent",
        "pain_en": "Long coding sessions and navigation of large repositories.",
        "pain_zh": "长程编程会话、大型代码库导航。",
        "why_en": "SWE-Bench Verified 93.4 %, the best open model.",
        "why_zh": "K3 在 SWE-Bench Verified 达 93.4%，开源模型第一。",
        "deployment_en": "16 × A3 with prefill/decode disaggregation (8P8D) for hundreds of concurrent developers.",
        "deployment_zh": "16 台 A3 PD 分离，支撑数百并发开发者。",
        "input_tokens": (24_576, assumed(_WORKLOAD + ": repository context, mostly prefix-cached")),
        "output_tokens": (1_536, assumed(_WORKLOAD)),
        "concurrency": (256, seed("S1 §5 场景3: hundreds of concurrent developers (256 chosen)")),
        "context": (133_120, seed("S1 §4.2: --max-model-len 133120")),
        "needs_vision": (False, assumed("code and text")),
        "availability_target": (D("0.995"), seed("S1 §7 service offer: 99.5 % availability SLA")),
        "ttft_target_s": (
            D("20"),
            assumed(_SLO + ": an agent step tolerates a longer first token than a chat"),
        ),
        "tpot_target_ms": (D("50"), assumed(_SLO)),
        "recommended_topology": "pd-disaggregated",
        "recommended_nodes": (16, seed("S1 §5 场景3: 16 × A3 PD disaggregation")),
        "recommended_model": "kimi-k3",
        "recommended_server": "atlas-800-a3",
        "sort_order": (3, assumed("display order")),
    },
    {
        "slug": "multimodal-knowledge-base",
        "name_en": "Multimodal enterprise knowledge base",
        "name_zh": "多模态企业知识库",
        "pain_en": "Mixed understanding of scanned PDFs, product photos and flowcharts.",
        "pain_zh": "PDF 扫描件、产品图、流程图混合理解。",
        "why_en": "MoonViT-V2 native vision, a 401 M-parameter encoder.",
        "why_zh": "MoonViT-V2 原生视觉，401M 参数视觉编码器。",
        "deployment_en": "8 × A3 with an image pre-processing service in front.",
        "deployment_zh": "8 台 A3，图像预处理服务前置。",
        "input_tokens": (8_192, assumed(_WORKLOAD + ": pages and images per question")),
        "output_tokens": (1_024, assumed(_WORKLOAD)),
        "concurrency": (64, assumed(_WORKLOAD)),
        "context": (133_120, seed("S1 §2.3: --max-model-len 133120")),
        "needs_vision": (True, seed("S1 §5 场景4: scanned PDFs, photos, flowcharts")),
        "availability_target": (D("0.995"), seed("S1 §7 service offer: 99.5 % availability SLA")),
        "ttft_target_s": (D("5"), assumed(_SLO + ": interactive questions on pages and images")),
        "tpot_target_ms": (D("50"), assumed(_SLO)),
        "recommended_topology": "single-cluster",
        "recommended_nodes": (8, seed("S1 §5 场景4: 8 × A3")),
        "recommended_model": "kimi-k3",
        "recommended_server": "atlas-800-a3",
        "sort_order": (4, assumed("display order")),
    },
    {
        "slug": "research-drug-discovery",
        "name_en": "Research & drug discovery",
        "name_zh": "科研与药物发现",
        "pain_en": "Long protein sequences and reasoning over literature graphs.",
        "pain_zh": "长序列蛋白质结构、文献图谱推理。",
        "why_en": "1M context and thinking mode suit long chains of reasoning.",
        "why_zh": "1M 上下文 + 思考模式，适合长链推理。",
        "deployment_en": "16 × A3 with prefill/decode disaggregation, a shared research cluster.",
        "deployment_zh": "16 台 A3 PD 分离，科研集群共享。",
        "input_tokens": (65_536, assumed(_WORKLOAD + ": long sequences and papers")),
        "output_tokens": (8_192, assumed(_WORKLOAD + ": thinking mode produces long answers")),
        "concurrency": (48, assumed(_WORKLOAD)),
        "context": (133_120, seed("S1 §4.2: --max-model-len 133120")),
        "needs_vision": (False, assumed("sequences and text")),
        "availability_target": (D("0.99"), assumed("shared research cluster")),
        "ttft_target_s": (D("30"), assumed(_SLO + ": long sequences, thinking-mode answers")),
        "tpot_target_ms": (D("60"), assumed(_SLO)),
        "recommended_topology": "pd-disaggregated",
        "recommended_nodes": (16, seed("S1 §5 场景5: 16 × A3 PD disaggregation")),
        "recommended_model": "kimi-k3",
        "recommended_server": "atlas-800-a3",
        "sort_order": (5, assumed("display order")),
    },
]

# --------------------------------------------------------------------------- prices

PRICE_LISTS = [
    {
        "slug": "cny-2026",
        "name": "CNY list prices 2026 (seeded)",
        "currency": "CNY",
        "effective_from": (date(2026, 1, 1), assumed("start of the seeded list")),
        "effective_to": (None, assumed("open-ended until a newer list")),
        "usd_rate": (D("7.2"), assumed("CNY per USD")),
        "notes": "Server, lease and O&M prices from S1; everything else is a placeholder to be replaced by real quotes.",
    },
]


ZH_DESCRIPTIONS = {
    "SRV-ATLAS-800-A3": "Atlas 800 A3 超节点服务器",
    "SRV-ATLAS-800-A2": "Atlas 800 A2 服务器（8 × 910B）",
    "SRV-NF5868G8": "浪潮 NF5868G8（16 × RTX PRO 6000D）",
    "SRV-HGX-H200": "HGX/DGX H200 八卡服务器",
    "SRV-HGX-H20": "HGX H20 八卡服务器",
    "SRV-DGX-B200": "DGX B200",
    "SRV-DGX-B300": "DGX B300",
    "SRV-RTX-PRO-6000-8GPU": "RTX PRO 6000 八卡服务器",
    "SW-LINGQU-630-V1": "灵衢 LingQu 630 V1 400GE 交换机",
    "SW-ROCE-400GE-ACCESS": "400GE RoCE 接入交换机",
    "SW-ROCE-400GE-CORE": "400GE RoCE 核心交换机",
    "SW-INSPUR-X400": "浪潮 X400 智算交换机",
    "SW-NVIDIA-QM9700": "NVIDIA Quantum-2 QM9700 64 口 NDR InfiniBand 交换机",
    "SW-NVIDIA-SN5600": "NVIDIA Spectrum-X SN5600 64 × 800GE 交换机",
    "SW-ETH-100GE": "100GE 业务面交换机",
    "SW-MGMT-1GE": "1GE 管理面交换机",
    "OPT-400G-QSFP-DD": "400G QSFP-DD 光模块",
    "OPT-100G-QSFP28": "100G 光模块（QSFP28）",
    "OPT-200G-QSFP56": "200G 光模块（QSFP56）",
    "CBL-FIBER-MPO": "光纤跳线（MPO/LC）",
    "CBL-CAT6": "超六类网线（RJ45）",
    "GW-LB-1U": "网关 / 负载均衡服务器（1U）",
    "STO-NVME-TB": "模型权重共享存储（NVMe，每 TB 可用容量）",
    "RACK-42U-AIR": "42U 风冷机柜（含 A/B 路 PDU）",
    "RACK-42U-CONTAINMENT": "42U 封闭冷/热通道机柜（含 A/B 路 PDU）",
    "RACK-42U-LIQUID": "42U 液冷机柜（含 A/B 路 PDU）",
    "SVC-INSTALL-NODE": "安装、布线与验收（每节点）",
    "SVC-SOFTWARE-SUPPORT": "vLLM 部署与软件支持（每节点每年）",
    "SVC-OM-NODE-YEAR": "运维服务（每节点每年）",
}


def _item(
    sku, kind, item_slug, description, unit, price, price_source, lease=None, lease_source=None, source=""
):
    return {
        "price_list": "cny-2026",
        "sku": sku,
        "kind": kind,
        "item_slug": item_slug,
        "description": description,
        "description_zh": ZH_DESCRIPTIONS.get(sku, ""),
        "unit": unit,
        "unit_price": (D(price), price_source),
        "lease_per_month": (D(lease) if lease is not None else None, lease_source or assumed("not leased")),
        "source": source or price_source["ref"],
    }


_PLACEHOLDER = "placeholder list price; replace with a real quote"

PRICE_ITEMS = [
    _item(
        "SRV-ATLAS-800-A3",
        "server",
        "atlas-800-a3",
        "Atlas 800 A3 super-node server",
        "each",
        "3000000",
        seed("S1 §6.3 / §7 path B: ≈¥24 M for 8 × A3 → ¥3 M per node"),
        lease="125000",
        lease_source=seed("S1 §6.3: lease ¥0.8–1.2 M/month for 8 → ¥100–150 k per node-month; midpoint"),
        source="S1 §6.3: purchase ≈¥24 M / 8; lease ¥100–150 k per node-month (midpoint stored)",
    ),
    _item(
        "SRV-ATLAS-800-A2",
        "server",
        "atlas-800-a2",
        "Atlas 800 A2 (8 × 910B)",
        "each",
        "1200000",
        assumed(_PLACEHOLDER),
        lease="40000",
        lease_source=assumed(_PLACEHOLDER),
    ),
    _item(
        "SRV-NF5868G8",
        "server",
        "nf5868g8",
        "Inspur NF5868G8, 16 × RTX PRO 6000D",
        "each",
        "1800000",
        assumed(_PLACEHOLDER + "; S2 puts two servers + X400 under ¥10 M"),
        lease="70000",
        lease_source=assumed(_PLACEHOLDER),
    ),
    _item(
        "SRV-HGX-H200",
        "server",
        "hgx-h200-8gpu",
        "HGX/DGX H200 8-GPU server",
        "each",
        "2600000",
        assumed(_PLACEHOLDER),
    ),
    _item(
        "SRV-HGX-H20",
        "server",
        "hgx-h20-8gpu",
        "HGX H20 8-GPU server",
        "each",
        "1100000",
        assumed(_PLACEHOLDER),
    ),
    _item("SRV-DGX-B200", "server", "dgx-b200", "DGX B200", "each", "3800000", assumed(_PLACEHOLDER)),
    _item("SRV-DGX-B300", "server", "dgx-b300", "DGX B300", "each", "4800000", assumed(_PLACEHOLDER)),
    _item(
        "SRV-RTX-PRO-6000-8GPU",
        "server",
        "rtx-pro-6000-server-8gpu",
        "RTX PRO 6000 8-GPU server",
        "each",
        "900000",
        assumed(_PLACEHOLDER),
    ),
    _item(
        "SW-LINGQU-630-V1",
        "switch",
        "lingqu-630-v1",
        "LingQu 630 V1 400GE switch",
        "each",
        "800000",
        assumed(_PLACEHOLDER),
    ),
    _item(
        "SW-ROCE-400GE-ACCESS",
        "switch",
        "roce-400ge-access",
        "400GE RoCE access switch",
        "each",
        "350000",
        assumed(_PLACEHOLDER),
    ),
    _item(
        "SW-ROCE-400GE-CORE",
        "switch",
        "roce-400ge-core",
        "400GE RoCE core switch",
        "each",
        "700000",
        assumed(_PLACEHOLDER),
    ),
    _item(
        "SW-INSPUR-X400",
        "switch",
        "inspur-x400",
        "Inspur X400 AI switch",
        "each",
        "300000",
        assumed(_PLACEHOLDER),
    ),
    _item(
        "SW-NVIDIA-QM9700",
        "switch",
        "nvidia-qm9700",
        "NVIDIA Quantum-2 QM9700 64-port NDR InfiniBand switch",
        "each",
        "260000",
        assumed(_PLACEHOLDER),
    ),
    _item(
        "SW-NVIDIA-SN5600",
        "switch",
        "nvidia-sn5600",
        "NVIDIA Spectrum-X SN5600 64 × 800GbE switch",
        "each",
        "420000",
        assumed(_PLACEHOLDER),
    ),
    _item(
        "SW-ETH-100GE",
        "switch",
        "eth-100ge-service",
        "100GE service switch",
        "each",
        "60000",
        assumed(_PLACEHOLDER),
    ),
    _item(
        "SW-MGMT-1GE", "switch", "mgmt-1ge", "1GE management switch", "each", "12000", assumed(_PLACEHOLDER)
    ),
    _item(
        "OPT-400G-QSFP-DD", "optics", "", "400G QSFP-DD optical module", "each", "4500", assumed(_PLACEHOLDER)
    ),
    # Slower transceivers and cables by media code (configurator.engine.network.link_media).
    _item(
        "OPT-100G-QSFP28",
        "optics",
        "100g-optics",
        "100G optical module (QSFP28)",
        "each",
        "1500",
        assumed(_PLACEHOLDER),
    ),
    _item(
        "OPT-200G-QSFP56",
        "optics",
        "200g-optics",
        "200G optical module (QSFP56)",
        "each",
        "3000",
        assumed(_PLACEHOLDER),
    ),
    _item(
        "CBL-FIBER-MPO", "optics", "fiber", "Fiber patch cord (MPO/LC)", "each", "300", assumed(_PLACEHOLDER)
    ),
    _item(
        "CBL-CAT6", "optics", "cat6", "Copper patch cable (Cat6, RJ45)", "each", "30", assumed(_PLACEHOLDER)
    ),
    # The gateway / load balancer in front of the cluster and shared storage for the checkpoint.
    _item(
        "GW-LB-1U",
        "other",
        "gateway",
        "Gateway / load balancer server (1U)",
        "each",
        "60000",
        assumed(_PLACEHOLDER),
    ),
    _item(
        "STO-NVME-TB",
        "other",
        "storage-tb",
        "Shared NVMe storage for the model checkpoint, per usable TB",
        "each",
        "8000",
        assumed(_PLACEHOLDER),
    ),
    _item(
        "RACK-42U-AIR",
        "rack",
        "rack-42u-air",
        "42U air-cooled rack with A/B PDUs",
        "per_rack",
        "25000",
        assumed(_PLACEHOLDER),
    ),
    _item(
        "RACK-42U-CONTAINMENT",
        "rack",
        "rack-42u-containment",
        "42U rack in aisle containment, A/B PDUs",
        "per_rack",
        "60000",
        assumed(_PLACEHOLDER),
    ),
    _item(
        "RACK-42U-LIQUID",
        "rack",
        "rack-42u-liquid",
        "42U liquid-cooled rack, A/B PDUs",
        "per_rack",
        "150000",
        assumed(_PLACEHOLDER),
    ),
    _item(
        "SVC-INSTALL-NODE",
        "install",
        "",
        "Installation, cabling and acceptance, per node",
        "per_node",
        "30000",
        assumed(_PLACEHOLDER),
    ),
    _item(
        "SVC-SOFTWARE-SUPPORT",
        "software",
        "",
        "vLLM deployment and software support, per node-year",
        "per_node_year",
        "50000",
        assumed(_PLACEHOLDER + "; S1 offers full deployment support without a price"),
    ),
    _item(
        "SVC-OM-NODE-YEAR",
        "om",
        "",
        "Operations and maintenance, per node-year",
        "per_node_year",
        "250000",
        seed("S1 §7 path B: ¥2 M/year O&M for 8 nodes (path C: ¥4 M/year for 16) → ¥250 k per node-year"),
    ),
]


# --------------------------------------------------------------------------- checkpoints

K3_HF_TOTAL_BYTES = 1_560_936_091_448  # S1 §1 / S2: 96 shards


def checkpoints() -> list[dict]:
    """The published (or converted) weights each model can load, with bytes per part.

    Kimi K3: the Hugging Face MXFP4 release (the size S1/S2 quote) and a
    ModelSlim W4A8 conversion for vLLM-Ascend (``--quantization ascend``).
    Part sizes come from the public config.json through the importer's
    parameter count by part.
    """
    from ..importers.hf_config import parse_hf_config, platform_param_groups

    config = json.loads((CONFIG_DIR / "moonshotai--Kimi-K3.config.json").read_text(encoding="utf-8"))
    parts = parse_hf_config(config, hf_model_id="moonshotai/Kimi-K3").params_by_part
    groups = platform_param_groups(config)
    expert_params = parts["routed_experts"]
    mxfp4_experts = expert_params * 17 // 32  # 4 bits + one E8M0 scale per 32 elements = 4.25 bits
    embeddings = parts["embedding"] + parts["lm_head"]
    vision = parts["vision"]
    hf_ref = "HF config moonshotai/Kimi-K3 (text_config), counted by part by the importer"
    # ModelSlim W4A8 (vLLM-Ascend): routed experts int4; linear layers W8A8 (int8) including the
    # latent projections (vllm_ascend/models/kimi_k3.py _routed_latent_quant_config) and the MLA /
    # KDA projections; router (quant_config=None), embeddings, lm_head, norms and vision BF16.
    int8_params = (
        parts["attention"]
        + parts["dense_mlp"]
        + parts["shared_experts"]
        + parts["moe_other"]
        - groups["router"]
    )
    bf16_params = groups["router"] + embeddings + parts["norms"] + vision
    modelslim_note = (
        "ModelSlim W4A8 as vLLM-Ascend loads it: int4 experts, int8 linear layers, BF16 router, embeddings, "
        "norms and vision; quantisation scales not counted: check against the converted checkpoint's size"
    )
    fp8_releases = []
    for slug, config_file, hf_id in (
        ("deepseek-v3", "deepseek-ai--DeepSeek-V3.config.json", "deepseek-ai/DeepSeek-V3"),
        ("deepseek-r1", "deepseek-ai--DeepSeek-R1.config.json", "deepseek-ai/DeepSeek-R1"),
        ("kimi-k2", "moonshotai--Kimi-K2-Instruct.config.json", "moonshotai/Kimi-K2-Instruct"),
    ):
        cfg = json.loads((CONFIG_DIR / config_file).read_text(encoding="utf-8"))
        imported = parse_hf_config(cfg, hf_model_id=hf_id)
        ref = f"HF config {hf_id}, counted by the importer (FP8 block-quantised release)"
        fp8_releases.append(
            {
                "slug": f"{slug}-fp8",
                "model": slug,
                "name": f"{imported.fields['name']} — FP8 release",
                "hf_repo": hf_id,
                "architecture": "deepseek_v3",
                "expert_bytes": (imported.fields["expert_weight_bytes"], public(ref)),
                "non_expert_bytes": (imported.fields["non_expert_weight_bytes"], public(ref)),
                "embedding_bytes": (
                    (imported.params_by_part["embedding"] + imported.params_by_part.get("lm_head", 0)) * 2,
                    public(ref),
                ),
                "vision_bytes": (0, public(ref)),
                "weight_format": (
                    "fp8",
                    public(f"HF config {hf_id} quantization_config: fp8 e4m3, 128 × 128 blocks"),
                ),
                "non_expert_format": ("fp8", public(f"HF config {hf_id} quantization_config")),
                "activation_format": "bf16",
                "quant_method": ("fp8", public(f"HF config {hf_id} quantization_config.quant_method")),
                # vLLM-Ascend runs no FP8 weights on Atlas A2/A3 (vllm-ascend issue #1526): CUDA only.
                "platforms": ["cuda"],
                "default_for": ["cuda"],
                "launch_flags": [],
                "param_groups": platform_param_groups(cfg),
                "group_formats": {"router": "bf16", "mla_a": "fp8"},
                "notes": "The MoE gate stays BF16 in the release; the MLA a-projections are FP8.",
            }
        )
    return [
        *fp8_releases,
        {
            "slug": "kimi-k3-hf-mxfp4",
            "model": "kimi-k3",
            "name": "Kimi K3 — Hugging Face MXFP4 release",
            "hf_repo": "moonshotai/Kimi-K3",
            "architecture": "kimi_k3",
            "expert_bytes": (mxfp4_experts, public(f"{hf_ref}: {expert_params:,} expert params × 4.25 bits")),
            "non_expert_bytes": (
                K3_HF_TOTAL_BYTES - mxfp4_experts,
                seed("S1 §1 / S2: 96 shards, 1,560,936,091,448 B (≈1.56 TB) minus the routed experts"),
            ),
            "embedding_bytes": (embeddings * 2, public(f"{hf_ref}: embed_tokens + lm_head, BF16")),
            "vision_bytes": (vision * 2, public(f"{hf_ref}: MoonViT-V2 + projector, BF16")),
            "weight_format": ("mxfp4", public("HF config quantization_config: mxfp4-pack-quantized")),
            "non_expert_format": (
                "bf16",
                public("HF config quantization_config.ignore: attention, shared, lm_head"),
            ),
            "activation_format": "mxfp8",
            "quant_method": ("compressed-tensors", public("HF config quantization_config.quant_method")),
            "platforms": ["cuda", "ascend"],
            "default_for": ["cuda", "ascend"],
            "launch_flags": [],
            "param_groups": groups,
            # The non-expert part of the release is BF16: 2 B × the non-routed parameters is the
            # release size minus the MXFP4 experts within 0.1 %.
            "group_formats": {name: "bf16" for name in groups},
            "notes": "quantization_config: compressed-tensors mxfp4-pack-quantized, group 32 (HF config).",
        },
        {
            "slug": "kimi-k3-modelslim-w4a8",
            "model": "kimi-k3",
            "name": "Kimi K3 — ModelSlim W4A8 for vLLM-Ascend",
            "hf_repo": "",
            "architecture": "kimi_k3",
            "expert_bytes": (expert_params // 2, assumed(modelslim_note)),
            "non_expert_bytes": (int8_params + bf16_params * 2, assumed(modelslim_note)),
            "embedding_bytes": (embeddings * 2, public(f"{hf_ref}: embed_tokens + lm_head, BF16")),
            "vision_bytes": (vision * 2, public(f"{hf_ref}: MoonViT-V2 + projector, BF16")),
            "weight_format": ("w4a8", assumed(modelslim_note)),
            "non_expert_format": ("w8a8", assumed(modelslim_note)),
            "activation_format": "int8",
            "quant_method": (
                "ascend",
                public("vllm-ascend: ModelSlim checkpoints load with --quantization ascend"),
            ),
            "platforms": ["ascend"],
            "default_for": [],
            "launch_flags": ["--quantization", "ascend"],
            "param_groups": groups,
            "group_formats": {"router": "bf16", "latent_moe": "int8", "mla_a": "int8", "kda_f_a": "int8"},
            "notes": "Converted with msModelSlim (quant_model_description.json); vLLM-Ascend only.",
        },
    ]
