"""Time of the design-point search (the largest concurrency within the latency targets) for
16 × Atlas 800 A3 8P8D (target: < 50 ms), and of the serving-settings proposal around it.

Run: ``.venv/bin/python bench/bench_design.py``.  Prints figures only; no assertion, so a slow
machine never fails the test suite.  The search is timed inside ``plan()`` (each call of
``performance.design.design_point`` from the estimate), so it includes building the free-slot
group models and the bisection over the step model, and nothing else.
"""

from __future__ import annotations

import gc
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from configurator import reference  # noqa: E402
from configurator.engine.performance import estimate  # noqa: E402
from configurator.engine.plan import plan  # noqa: E402
from configurator.engine.serving_advice import propose_serving  # noqa: E402

TARGET_MS = 50.0
RUNS = 200
PROPOSAL_RUNS = 10


def main() -> int:
    request = reference.request(reference.case("a3-16-8p8d"))
    samples: list[float] = []
    original = estimate.design_point

    def timed(*args, **kwargs):
        t0 = time.perf_counter()
        out = original(*args, **kwargs)
        samples.append((time.perf_counter() - t0) * 1000)
        return out

    estimate.design_point = timed
    try:
        for _ in range(10):
            plan(request)
        samples.clear()
        gc.disable()
        for _ in range(RUNS):
            plan(request)
        gc.enable()
    finally:
        estimate.design_point = original
    median = statistics.median(samples)
    p95 = sorted(samples)[int(len(samples) * 0.95)]
    dp = plan(request).performance.design_point
    print("case: Kimi K3 on 16 × Atlas 800 A3, 8P8D, ISL 8192 / OSL 1024")
    print(
        f"design point: {dp.concurrency} concurrent requests, {dp.max_num_seqs_per_dp_rank} per DP rank, "
        f"{dp.output_tokens_per_s:,.0f} output tokens/s, TTFT P90 {dp.ttft_p90_s:.2f} s, "
        f"TPOT P90 {dp.tpot_p90_s * 1000:.1f} ms, limited by {dp.limited_by}"
    )
    verdict = "within" if median < TARGET_MS else "OVER"
    print(
        f"search median: {median:.3f} ms   p95: {p95:.3f} ms   target: < {TARGET_MS:.0f} ms ({verdict} target)"
    )
    prop = []
    balance = plan(request).performance.pd_balance
    for _ in range(PROPOSAL_RUNS):
        t0 = time.perf_counter()
        propose_serving(request, balance.suggested_prefill_nodes if balance else None)
        prop.append((time.perf_counter() - t0) * 1000)
    print(f"serving-settings proposal (P:D splits × batched tokens) median: {statistics.median(prop):.1f} ms")
    print(f"BENCH\tdesign-point search 16 × A3 8P8D median\t{median:.3f}\tms\t< {TARGET_MS:.0f} ms")
    print(f"BENCH\tserving proposal 16 × A3 8P8D median\t{statistics.median(prop):.1f}\tms\t")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
