"""Error of the performance model against published measurements, cross-validated by source.

Run: ``.venv/bin/python bench/bench_calibration.py``.  Every public source of
``tests/data/serving_benchmarks.yaml`` is predicted by a fit that never saw it (leave-one-source-out);
prints predicted ÷ measured throughput, TTFT and TPOT per record, the error per hardware family and
TTFT under load (more than one request in flight) record by record (docs/performance.md §3).  Prints figures only.
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
    cv = cal.cross_validate(cal.load_records())
    elapsed = time.perf_counter() - started
    print(cal.table(list(cv.rows)))
    print()
    print(cal.cv_table(cv))
    ratios = [r.ratio for r in cv.rows]
    ttft = [
        r.predicted_ttft_ms / r.measured_ttft_ms
        for r in cv.rows
        if r.ttft_at_concurrency_1 and r.measured_ttft_ms
    ]
    print()
    print("TTFT under load (more than one request in flight), leave-one-source-out:")
    print(cal.ttft_load_table(cv))
    print(f"{len(cv.rows)} records cross-validated in {elapsed:.1f} s")
    print(f"BENCH\tLOSO median pred/meas\t{statistics.median(ratios):.3f}\t×\t0.8–1.25")
    print(f"BENCH\tLOSO worst factor\t{max(max(x, 1 / x) for x in ratios):.3f}\t×\t≤ 2")
    if ttft:
        print(f"BENCH\tLOSO TTFT c1 worst factor\t{max(max(x, 1 / x) for x in ttft):.3f}\t×\t≤ 1.5")
    loaded = [cal.ttft_ratio(r) for r in cal.ttft_under_load(cv.rows)]
    if loaded:
        print(f"BENCH\tLOSO TTFT under load worst factor\t{max(max(x, 1 / x) for x in loaded):.3f}\t×\t≤ 2")
        print(f"BENCH\tLOSO TTFT under load median pred/meas\t{statistics.median(loaded):.3f}\t×\t")
        within = sum(1 for x in loaded if max(x, 1 / x) <= cal.TTFT_LOAD_AIM)
        print(
            f"BENCH\tLOSO TTFT under load records within 2 × (of {len(loaded)})\t{within}\tcount\t= {len(loaded)}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
