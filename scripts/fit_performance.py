"""Fit the per-stack efficiency factors of the performance model to the published set.

Run: ``.venv/bin/python scripts/fit_performance.py``.  Prints the fitted
``PLATFORM_FACTORS`` (copy them into ``configurator/engine/serving_model.py``)
and the error table.  The objective is the sum of squared log errors of the
throughput (weight 1), TPOT (0.5) and TTFT (0.25) where the source gives them,
plus a weak pull (0.05) towards the starting values so that three Ascend points
cannot drive six factors to extremes.  Coordinate descent with shrinking
multiplicative steps inside physical bounds.
"""

from __future__ import annotations

import math
import sys
from dataclasses import fields, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from configurator import calibration as cal  # noqa: E402
from configurator.engine import serving_model as sm  # noqa: E402

BOUNDS = {
    "bandwidth_efficiency": (0.2, 0.95),
    "compute_efficiency": (0.1, 0.9),
    "step_overhead_s": (0.0005, 0.05),
    "collective_latency_s": (2e-6, 300e-6),
    "prefill_efficiency": (0.1, 0.8),
    "request_overhead_s": (0.01, 2.0),
    "inter_node_latency_factor": (1.0, 20.0),
}
PRIOR_WEIGHT = 0.05
TTFT_WEIGHT = 0.25


def _loss(rows, start, factors) -> float:
    total = 0.0
    for r in rows:
        total += math.log(r.ratio) ** 2
        if r.measured_tpot_ms:
            total += 0.5 * math.log(r.predicted_tpot_ms / r.measured_tpot_ms) ** 2
        if r.measured_ttft_ms and r.predicted_ttft_ms > 0:
            total += TTFT_WEIGHT * math.log(r.predicted_ttft_ms / r.measured_ttft_ms) ** 2
    for stack, f in factors.items():
        for fld in fields(f):
            total += PRIOR_WEIGHT * math.log(getattr(f, fld.name) / getattr(start[stack], fld.name)) ** 2
    return total


def fit(records, start):
    factors = dict(start)
    best = _loss(cal.compare_all(records, factors), start, factors)
    step = 1.6
    while step > 1.02:
        improved = False
        for stack in factors:
            for name, (lo, hi) in BOUNDS.items():
                for mult in (step, 1 / step):
                    value = min(hi, max(lo, getattr(factors[stack], name) * mult))
                    trial = dict(factors)
                    trial[stack] = replace(factors[stack], **{name: value})
                    loss = _loss(cal.compare_all(records, trial), start, trial)
                    if loss < best - 1e-9:
                        best, factors, improved = loss, trial, True
        if not improved:
            step = math.sqrt(step)
    return factors, best


def main() -> int:
    records = cal.load_records()
    start = dict(sm.PLATFORM_FACTORS)
    print("before:")
    print(cal.table(cal.compare_all(records, start)))
    factors, loss = fit(records, start)
    print(f"\nfitted (loss {loss:.4f}):")
    for stack, f in factors.items():
        values = ", ".join(f"{getattr(f, x.name):.4g}" for x in fields(f))
        print(f'    "{stack}": PlatformFactors({values}),')
    print()
    print(cal.table(cal.compare_all(records, factors)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
