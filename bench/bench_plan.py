"""Median time of one plan() call for 16 × Atlas 800 A3 8P8D (target: < 5 ms).

Run: ``.venv/bin/python bench/bench_plan.py``.  Prints figures only; no
assertion, so a slow machine never fails the test suite.  When some engine
module is not importable yet, it times layout + memory instead and says so.
"""

from __future__ import annotations

import gc
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from configurator import reference  # noqa: E402
from configurator.engine.layout import resolve_layout  # noqa: E402
from configurator.engine.memory import size_memory  # noqa: E402

TARGET_MS = 5.0
WARMUP = 20
RUNS = 500


def _median_ms(fn, request) -> tuple[float, float]:
    for _ in range(WARMUP):
        fn(request)
    samples = []
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(RUNS):
            start = time.perf_counter()
            fn(request)
            samples.append(time.perf_counter() - start)
    finally:
        if gc_was_enabled:
            gc.enable()
    samples.sort()
    return statistics.median(samples) * 1000, samples[int(len(samples) * 0.95)] * 1000


def _layout_and_memory(request):
    return size_memory(request, resolve_layout(request))


def main() -> int:
    request = reference.request(reference.case("a3-16-8p8d"))
    try:
        from configurator.engine.plan import plan
    except ImportError as exc:
        label = f"resolve_layout + size_memory only (plan() not importable yet: {exc})"
        fn = _layout_and_memory
    else:
        label = "plan()"
        fn = plan
    median, p95 = _median_ms(fn, request)
    core_median, _ = _median_ms(_layout_and_memory, request)
    verdict = "within" if median < TARGET_MS else "OVER"
    print("case: Kimi K3 on 16 × Atlas 800 A3, 8P8D (DP8 / TP16 / EP128 per side)")
    print(f"timed: {label}, {RUNS} runs after {WARMUP} warm-up")
    print(f"median: {median:.3f} ms   p95: {p95:.3f} ms   target: < {TARGET_MS:.0f} ms ({verdict} target)")
    print(f"of which resolve_layout + size_memory: {core_median:.3f} ms median")
    print(f"BENCH\tplan() 16 × A3 8P8D median\t{median:.3f}\tms\t< {TARGET_MS:.0f} ms")
    print(f"BENCH\tplan() 16 × A3 8P8D p95\t{p95:.3f}\tms\t")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
