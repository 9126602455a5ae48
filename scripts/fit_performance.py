"""Fit the performance model's two factors per hardware family and cross-validate them.

Run: ``.venv/bin/python scripts/fit_performance.py [--write]``.  Fits, per hardware family, the
bandwidth efficiency of the routed-expert reads and the fixed cost per layer of a decode step to the public measurements of
``tests/data/serving_benchmarks.yaml`` (least log-squares of throughput, TPOT and TTFT with a pull
towards the neutral priors of ``serving_model.STACK_PRIORS``), then predicts every source with a fit
that never saw it (leave-one-source-out) and prints the error per family.  ``--write`` stores the fit
and the cross-validated bands in ``configurator/engine/calibration_fit.json``, which the engine
reads (docs/performance.md §3).  ``manage.py calibrate`` does the same with the promoted measurements
added.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from configurator import calibration as cal  # noqa: E402
from configurator.engine import serving_model as sm  # noqa: E402


def main(argv: list[str]) -> int:
    records = cal.load_records()
    families, cv = cal.calibrate(records)
    print("fitted (per hardware family):")
    for name, f in families.items():
        print(
            f"  {name:10} decode layer {f.layer_overhead_s * 1e6:.0f} µs, prefill layer {f.prefill_layer_overhead_s * 1e6:.0f} µs, "
            f"band {f.band_low:.2f}–{f.band_high:.2f}{' (few sources)' if f.few_sources else ''}"
        )
    print("\nleave-one-source-out:")
    print(cal.table(list(cv.rows)))
    print()
    print(cal.cv_table(cv))
    if "--write" in argv:
        cal.write_calibration(sm.CALIBRATION_FILE, families)
        print(f"\nwritten to {sm.CALIBRATION_FILE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
