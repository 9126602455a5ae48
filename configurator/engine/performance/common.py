"""Constants and helpers every part of the performance estimate shares."""

from __future__ import annotations

import math
from typing import Any

from ..types import Source

AREA = "performance"

# Roles that run decode and count toward the deployment's throughput (a standby does not).
COUNTED_DECODE_ROLES = frozenset({"serve", "tenant", "decode"})

ESTIMATE_NOTE_EN = (
    "Estimate from a step-time model calibrated against published serving benchmarks "
    "(typical error {low}–{high} × of the measured throughput); confirm with a load test on the "
    "delivered cluster before committing to figures."
)
ESTIMATE_NOTE_ZH = (
    "以上为基于已公开压测数据校准的推理时延模型估算值（吞吐通常为实测值的 {low}–{high} 倍），"
    "须在交付集群上压测确认后方可承诺。"
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
