"""Error table of the performance model against published measurements.

Run: ``.venv/bin/python bench/bench_calibration.py``.  Compares every record of
``tests/data/serving_benchmarks.yaml`` with the estimate (see docs/performance.md)
and prints predicted ÷ measured throughput, TTFT and TPOT.  Prints figures only.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from configurator import calibration as cal  # noqa: E402


def main() -> int:
    started = time.perf_counter()
    rows = cal.compare_all()
    elapsed = time.perf_counter() - started
    print(cal.table(rows))
    s = cal.summary(rows)
    for stack in sorted({r.platform for r in rows}):
        ratios = [r.ratio for r in rows if r.platform == stack]
        print(f"{stack:7} {len(ratios):2} records, median {statistics.median(ratios):.2f} ×")
    print(f"{len(rows)} records compared in {elapsed * 1000:.0f} ms")
    print(f"BENCH\tcalibration median pred/meas\t{s['median_ratio']:.3f}\t×\t0.8–1.25")
    print(f"BENCH\tcalibration worst factor\t{s['worst_factor']:.3f}\t×\t≤ 2")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
