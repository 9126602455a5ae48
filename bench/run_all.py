"""``make bench``: run every benchmark, print one table, and fail when a target is missed.

Each benchmark prints its own details and ends with ``BENCH<TAB>name<TAB>value
<TAB>unit<TAB>target`` lines, collected here.  ``value`` is one number; ``target``
is empty (a figure printed for information) or a comparison this script checks:
``< 5 ms``, ``<= 150 ms``, ``≤ 2``, ``>= 60 req/s``, ``0`` (equal), ``0.8–1.25``
(a range), the unit after the number being optional.

The exit status is non-zero when any figure misses its target, when a line
cannot be read, or when a benchmark exits non-zero — with one exception: a
timing (unit ms, s or req/s) missed while the machine was busy is printed as
missed "on a busy machine" and does not fail the run, since it measures the
other users of the machine as much as the code.  The machine is busy when the
other processes kept at least one core busy on average while the benchmark ran
(the machine's CPU time from /proc/stat less this run's own, the equivalent of
a load average of 1 not counting ours); the load average is printed before and
after every benchmark.  Accuracy figures (%, ×, counts) fail whatever the load.
"""

from __future__ import annotations

import math
import os
import re
import resource
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ORDER = [
    "bench_plan.py",
    "bench_memory.py",
    "bench_calibration.py",
    "bench_htmx.py",
    "bench_pdf.py",
    "bench_planner.py",
    "load.py",
    "faults.py",
]
TIMING_UNITS = frozenset({"ms", "s", "req/s"})
BUSY_CORES = 1.0  # other processes' average use of the machine's cores that makes it "busy"

_TARGET = re.compile(
    r"^\s*(<=|>=|≤|≥|<|>|=)?\s*([-+]?\d[\d,]*(?:\.\d+)?)\s*(?:[–-]\s*(\d[\d,]*(?:\.\d+)?))?\s*([^\d\s/][^\d]*)?$"
)


@dataclass(frozen=True)
class Target:
    """A figure's target as a comparison: ``op`` one of <, <=, >, >=, =, or "range" (low ≤ x ≤ high)."""

    op: str
    low: float
    high: float = math.nan

    def met(self, value: float) -> bool:
        if self.op == "range":
            return self.low <= value <= self.high
        return {
            "<": value < self.low,
            "<=": value <= self.low,
            ">": value > self.low,
            ">=": value >= self.low,
            "=": value == self.low,
        }[self.op]


def parse_target(text: str) -> Target | None:
    """The comparison ``text`` states; None for no target.  Raises ValueError for text that is no target."""
    text = text.strip()
    if not text:
        return None
    m = _TARGET.match(text)
    if m is None:
        raise ValueError(f"target {text!r} is not a comparison with a number")
    op, low, high, _unit = m.groups()
    low_value = float(low.replace(",", ""))
    if high is not None:
        if op:
            raise ValueError(f"target {text!r} mixes a comparison and a range")
        return Target("range", low_value, float(high.replace(",", "")))
    return Target({"≤": "<=", "≥": ">=", None: "="}.get(op, op), low_value)


def _machine_cpu_s() -> float | None:
    """CPU seconds the whole machine has spent busy since boot (/proc/stat), or None where unreadable."""
    try:
        with open("/proc/stat") as f:
            fields = f.readline().split()
    except OSError:
        return None
    if not fields or fields[0] != "cpu":
        return None
    ticks = [int(x) for x in fields[1:]]
    busy = sum(ticks) - ticks[3] - (ticks[4] if len(ticks) > 4 else 0)  # less idle and iowait
    return busy / os.sysconf("SC_CLK_TCK")


def _children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _loadavg() -> str:
    try:
        return " / ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


@dataclass
class Row:
    bench: str
    name: str
    value: float
    unit: str
    target_text: str
    target: Target | None
    busy: bool

    @property
    def verdict(self) -> str:
        if self.target is None:
            return ""
        if self.target.met(self.value):
            return "ok"
        if self.busy and self.unit in TIMING_UNITS:
            return "missed (busy machine)"
        return "MISSED"


def run(script: Path) -> tuple[list[Row], list[str]]:
    """Run one benchmark; its rows and the problems that fail the run whatever the load."""
    print(f"\n== {script.name}   (load average 1/5/15 min before: {_loadavg()})", flush=True)
    machine0, children0 = _machine_cpu_s(), _children_cpu_s()
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=HERE.parent)
    elapsed = time.perf_counter() - started
    machine1, children1 = _machine_cpu_s(), _children_cpu_s()
    ours = children1 - children0
    if machine0 is not None and machine1 is not None and elapsed > 0:
        others = max(0.0, (machine1 - machine0) - ours) / elapsed
        busy = others >= BUSY_CORES
        share = f"other processes used {others:.2f} cores on average"
    else:
        try:
            busy = os.getloadavg()[0] >= BUSY_CORES + 1  # our own process counts one
        except OSError:
            busy = False
        share = "the machine's CPU use is unreadable"
    rows: list[Row] = []
    problems: list[str] = []
    for line in proc.stdout.splitlines():
        if not line.startswith("BENCH\t"):
            print("  " + line)
            continue
        _, name, value, unit, target = (line.split("\t") + [""] * 5)[:5]
        try:
            number = float(value.replace(",", ""))
            parsed = parse_target(target)
        except ValueError as exc:
            problems.append(f"{script.stem}: unreadable BENCH line {line!r}: {exc}")
            continue
        rows.append(Row(script.stem, name, number, unit, target, parsed, busy))
    if proc.returncode != 0:
        print(proc.stderr[-3000:])
        problems.append(f"{script.stem}: exit status {proc.returncode}")
    print(
        f"  ({elapsed:.1f} s, {ours:.1f} s CPU; {share}{' — BUSY' if busy else ''}; "
        f"load average after: {_loadavg()})",
        flush=True,
    )
    return rows, problems


def main() -> int:
    scripts = [HERE / name for name in ORDER if (HERE / name).exists()]
    scripts += sorted(p for p in HERE.glob("bench_*.py") if p not in scripts)
    rows: list[Row] = []
    problems: list[str] = []
    for script in scripts:
        script_rows, script_problems = run(script)
        rows += script_rows
        problems += script_problems
    print("\n" + f"{'benchmark':16} {'figure':48} {'value':>12}  {'unit':12} {'target':14} verdict")
    print("-" * 120)
    for r in rows:
        print(f"{r.bench:16} {r.name:48} {r.value:12,.2f}  {r.unit:12} {r.target_text:14} {r.verdict}")
    missed = [r for r in rows if r.verdict == "MISSED"]
    busy_missed = [r for r in rows if r.verdict.startswith("missed")]
    print(f"\nload average at the end (1/5/15 min): {_loadavg()} on {os.cpu_count()} CPUs")
    for p in problems:
        print(f"FAILED: {p}")
    for r in missed:
        print(f"FAILED: {r.bench}: {r.name} = {r.value:,.3f} {r.unit}, target {r.target_text}")
    if busy_missed:
        print(
            f"{len(busy_missed)} timing(s) missed while the machine was busy (not counted as failures; "
            "rerun on an idle machine): "
            + "; ".join(f"{r.name} {r.value:,.1f} {r.unit}" for r in busy_missed)
        )
    if missed or problems:
        print(f"make bench: {len(missed) + len(problems)} failure(s)")
        return 1
    print(
        "make bench: every target met"
        + (" (timings missed on a busy machine excepted)" if busy_missed else "")
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
