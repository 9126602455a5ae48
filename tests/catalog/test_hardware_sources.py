"""Every hardware figure of the seed names its public source and is the dense value; the corrected figures.

The expected figures are computed here from the vendor documents the seed cites, not read back from the
seed: a datasheet that gives a figure only with 2:4 sparsity is halved, a per-system figure is divided by
the system's GPU count.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

import pytest

from catalog.seed.loader import load

HARDWARE = ("accelerator", "server")
# refs that name no document
VAGUE = {"secondary public sources", "vendor datasheets", "datasheet"}


def _figures():
    seed = load()
    for kind in HARDWARE:
        for record in seed.of(kind):
            for name, source in record.sources.items():
                yield kind, record.slug, name, source
            for i, nic in enumerate(record.nics or ()):
                yield (
                    kind,
                    record.slug,
                    f"nics[{i}] {nic['role']}",
                    {"kind": nic["source_kind"], "ref": nic["source_ref"]},
                )


def test_every_hardware_figure_names_a_source_and_none_is_a_placeholder():
    missing = [
        f"{kind} {slug}.{name}: {source['ref']!r}"
        for kind, slug, name, source in _figures()
        if not str(source["ref"]).strip()
        or "placeholder" in str(source["ref"]).lower()
        or str(source["ref"]).strip().lower() in VAGUE
    ]
    assert missing == []


def test_every_nic_source_fits_the_catalogs_reference_field():
    """A NIC's source is stored in ServerNic.source_ref (200 characters): a longer one is refused at load."""
    too_long = [
        f"{record.slug} {nic['role']}: {len(nic['source_ref'])}"
        for record in load().of("server")
        for nic in record.nics or ()
        if len(nic["source_ref"]) > 200
    ]
    assert too_long == []


def test_vendor_compute_figures_say_they_are_dense():
    """A public TFLOPS figure states it is the dense one (or that the format does not exist on the device)."""
    seed = load()
    unstated = []
    for record in seed.of("accelerator"):
        for name, source in record.sources.items():
            if not name.startswith("tflops_") or source["kind"] != "public":
                continue
            ref = source["ref"].lower()
            if record.values[name] and "dense" not in ref:
                unstated.append(f"{record.slug}.{name}")
    assert unstated == []


def _acc(slug):
    return load().get("accelerator", slug)


def _server(slug):
    return load().get("server", slug)


def test_l40s_is_the_datasheets_dense_figure():
    # NVIDIA L40S datasheet: "BF16 Tensor Core 362.05 | 733 TFLOPS*", "FP8 733 | 1,466 TFLOPS*" (* with sparsity)
    sparse_bf16, sparse_fp8 = Decimal("733"), Decimal("1466")
    l40s = _acc("l40s").values
    # The catalog keeps one decimal place (Accelerator.tflops_* fields): 362.05 is stored as 362.1.
    assert (
        l40s["tflops_bf16"] == Decimal("362.05").quantize(Decimal("0.1"), rounding=ROUND_HALF_UP)
        and l40s["tflops_bf16"] >= 350
    )
    assert l40s["tflops_fp8"] == sparse_fp8 / 2 == Decimal("733")
    assert float(l40s["tflops_bf16"]) == pytest.approx(float(sparse_bf16) / 2, rel=0.02)


def test_rtx_pro_6000_is_the_whitepapers_dense_figure_and_the_6000d_is_scaled_from_it():
    # NVIDIA RTX Blackwell GPU architecture whitepaper, RTX PRO 6000 Blackwell: FP16/BF16 tensor (FP32
    # accumulate) 503.8 dense / 1,007.6 sparse; FP8 1,007.6 / 2,015.2; FP4 2,015.2 / 4,030.4 (the datasheet's
    # "4 PFLOPS FP4" is the sparse one).
    sparse_fp4 = Decimal("4030.4")
    pro = _acc("rtx-pro-6000").values
    assert pro["tflops_bf16"] == Decimal("503.8") and pro["tflops_bf16"] >= 480
    assert pro["tflops_fp8"] == 2 * pro["tflops_bf16"] == Decimal("1007.6")
    assert pro["tflops_mxfp4"] == sparse_fp4 / 2
    d = _acc("rtx-pro-6000d").values
    for name in ("tflops_bf16", "tflops_fp8", "tflops_mxfp4"):
        assert float(d[name]) == pytest.approx(float(pro[name]) * 0.86, abs=0.1), name


def test_dgx_b300_scales_out_on_eight_800g_connectx8_and_b200_service_nics_are_400g():
    # DGX B300 datasheet: 8 OSFP ports serving 8 × ConnectX-8 SuperNIC, up to 800 Gb/s.
    nics = {n["role"]: n for n in _server("dgx-b300").nics}
    assert (nics["scale_out"]["count"], nics["scale_out"]["speed_gbps"]) == (8, 800)
    assert "ConnectX-8" in nics["scale_out"]["source_ref"]
    # DGX B200 datasheet: 2 × dual-port QSFP112 BlueField-3 DPU, up to 400 Gb/s.
    b200 = {n["role"]: n for n in _server("dgx-b200").nics}
    assert (b200["service"]["count"], b200["service"]["speed_gbps"]) == (2, 400)
    assert (b200["scale_out"]["count"], b200["scale_out"]["speed_gbps"]) == (8, 400)


def test_b300_compute_is_the_hgx_figure_per_gpu_dense():
    # HGX B300 (8 GPUs): FP4 108 PFLOPS dense, FP8 72 PFLOPS with sparsity, INT8 2 POPS with sparsity.
    b300 = _acc("b300").values
    assert b300["tflops_mxfp4"] == Decimal(108_000) / 8
    assert b300["tflops_fp8"] == Decimal(72_000) / 8 / 2
    assert b300["tflops_int8"] == Decimal(2_000) / 8 / 2


def test_h20_141gb_has_the_h200s_device_memory():
    # nvidia-smi prints 143771MiB for both the "NVIDIA H20-3e" (H20 141 GB) and the H200 SXM; vLLM's log
    # on the H200 gives torch 139.81 GiB of it.
    h20 = _acc("h20-141gb").values
    h200 = _acc("h200-sxm").values
    assert h20["runtime_memory_gib"] == h200["runtime_memory_gib"] == Decimal("139.81")
    nvidia_smi_bytes = 143_771 * 2**20
    assert int(h20["runtime_memory_gib"] * 2**30) <= nvidia_smi_bytes
    assert int(h20["runtime_memory_gib"] * 2**30) / 1e9 == pytest.approx(150.1, abs=0.05)
    assert "143771MiB" in _acc("h20-141gb").sources["runtime_memory_gib"]["ref"]


def test_910c_shows_both_compute_sources():
    ref = _acc("ascend-910c").sources["tflops_bf16"]["ref"]
    # S1: 4.48 PFLOPS FP16 per Atlas 800I A3 over 16 dies; CloudMatrix384 paper: ~752 TFLOPS per chip.
    assert _acc("ascend-910c").values["tflops_bf16"] == Decimal("4480") / 16
    assert "752" in ref and "CloudMatrix384" in ref and "S1" in ref


def test_h100_pcie_is_the_datasheets_dense_figure():
    # NVIDIA H100 datasheet, H100 PCIe: BF16 1,513 TFLOPS* and FP8 3,026 TFLOPS* (* with sparsity),
    # 80 GB HBM2e at 2 TB/s, 300-350 W.
    pcie = _acc("h100-pcie").values
    assert pcie["tflops_bf16"] == pytest.approx(Decimal(1513) / 2, abs=1)
    assert pcie["tflops_fp8"] == pytest.approx(Decimal(3026) / 2, abs=1)
    assert (pcie["memory_gb"], pcie["memory_bandwidth_tbps"], pcie["tdp_w"]) == (80, 2, 350)
    assert _server("pcie-8gpu-h100").foreign_keys["accelerator"] == "h100-pcie"
