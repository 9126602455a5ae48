"""``make bench``: run every benchmark and print one table.

Each benchmark prints its own details and ends with ``BENCH<TAB>name<TAB>value
<TAB>unit<TAB>target`` lines, collected here.  Benchmarks print figures; they
never fail on a slow machine.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ORDER = [
    "bench_plan.py",
    "bench_memory.py",
    "bench_htmx.py",
    "bench_pdf.py",
    "bench_planner.py",
    "load.py",
    "faults.py",
]


def main() -> int:
    scripts = [HERE / name for name in ORDER if (HERE / name).exists()]
    scripts += sorted(p for p in HERE.glob("bench_*.py") if p not in scripts)
    rows = []
    for script in scripts:
        print(f"\n== {script.name}", flush=True)
        started = time.perf_counter()
        proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=HERE.parent)
        elapsed = time.perf_counter() - started
        for line in proc.stdout.splitlines():
            if line.startswith("BENCH\t"):
                _, name, value, unit, target = (line.split("\t") + [""] * 5)[:5]
                rows.append((script.stem, name, float(value), unit, target))
            else:
                print("  " + line)
        if proc.returncode != 0:
            print(proc.stderr[-3000:])
            rows.append((script.stem, "exit status", float(proc.returncode), "", "0"))
        print(f"  ({elapsed:.1f} s)")
    print("\n" + f"{'benchmark':16} {'figure':36} {'value':>12}  {'unit':6} target")
    print("-" * 86)
    for bench, name, value, unit, target in rows:
        print(f"{bench:16} {name:36} {value:12,.2f}  {unit:6} {target}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
