"""Constants and helpers every part of the performance estimate shares."""

from __future__ import annotations

import math
from typing import Any

from ..types import Source

# Roles that run decode and count toward the deployment's throughput (a standby does not).
COUNTED_DECODE_ROLES = frozenset({"serve", "tenant", "decode"})

ESTIMATE_NOTE_EN = (
    "Estimate from a step-time model checked against published serving benchmarks on {family}: "
    "predicted each from a fit that never saw it, the estimate was {low}–{high} × the measured "
    "throughput{few}; confirm with a load test on the delivered cluster before committing to figures."
)
ESTIMATE_NOTE_ZH = (
    "以上为推理时延模型估算值。按{family}上的公开压测数据逐一留出交叉验证，估算吞吐为实测值的 "
    "{low}–{high} 倍{few}；须在交付集群上压测确认后方可承诺。"
)
FEW_SOURCES_EN = " (fewer than three public sources cover this hardware, so the band is widened)"
FEW_SOURCES_ZH = "（该硬件的公开实测来源少于三个，误差带已相应放宽）"

# The hardware families as a reader names them (serving_model.FAMILIES).
FAMILY_NAMES = {
    "ampere": ("NVIDIA Ampere (A100)", "NVIDIA Ampere（A100）"),
    "hopper": ("NVIDIA Hopper (H100 / H200 / H20)", "NVIDIA Hopper（H100 / H200 / H20）"),
    "blackwell": (
        "NVIDIA Blackwell (B200 / B300 / RTX PRO 6000)",
        "NVIDIA Blackwell（B200 / B300 / RTX PRO 6000）",
    ),
    "ada": ("NVIDIA Ada Lovelace (L4 / L20 / L40S)", "NVIDIA Ada Lovelace（L4 / L20 / L40S）"),
    "ascend-a2": ("Ascend 910B (Atlas A2)", "昇腾 910B（Atlas A2）"),
    "ascend-a3": ("Ascend 910C (Atlas A3)", "昇腾 910C（Atlas A3）"),
}


def estimate_note(family: str, low: float, high: float, few: bool) -> tuple[str, str]:
    """The estimate's note in both languages: the family's cross-validated band, widened or not."""
    en, zh = FAMILY_NAMES.get(family, (family, family))
    return (
        ESTIMATE_NOTE_EN.format(family=en, low=low, high=high, few=FEW_SOURCES_EN if few else ""),
        ESTIMATE_NOTE_ZH.format(family=zh, low=low, high=high, few=FEW_SOURCES_ZH if few else ""),
    )


MEASURED_NOTE_EN = (
    "Throughput is the measured load-test figure entered for this plan; latencies remain estimates."
)
MEASURED_NOTE_ZH = "吞吐采用本方案录入的压测实测值；时延仍为估算值。"

ESTIMATE_SOURCE = Source("derived", "calibrated step-time model (docs/performance.md)")
CALIBRATION_SOURCE = Source("public", "fit to tests/data/serving_benchmarks.yaml (docs/performance.md)")


def fig_value(value: Any) -> Any:
    """A figure's value as the plan shows it: floats to 6 decimals, a non-finite float as 0."""
    if isinstance(value, float):
        return round(value, 6) if math.isfinite(value) else 0.0
    return value


def fig_input(value: Any) -> Any:
    """A figure's input as the plan shows it: finite floats to 9 decimals."""
    return round(value, 9) if isinstance(value, float) and math.isfinite(value) else value
