"""Wall time of the serving-configuration search for 16 × Atlas 800 A3 8P8D (target: < 200 ms).

Run: ``.venv/bin/python bench/bench_search.py``.  Times ``serving_advice.search_configuration`` (every
candidate planned: layout, memory, performance) with the cache cleared before each run, then the cached
lookup (``serving_search.search_serving``).  Prints figures only; no assertion, so a slow machine never
fails the test suite.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from configurator import reference  # noqa: E402
from configurator.engine import serving_search  # noqa: E402
from configurator.engine.plan import plan  # noqa: E402
from configurator.engine.serving_advice import search_configuration  # noqa: E402

TARGET_MS = 200.0
RUNS = 7


def main() -> int:
    request = reference.request(reference.case("a3-16-8p8d"))
    result = plan(request)
    search_configuration(request, result)  # warm-up (imports, step caches)
    samples = []
    outcome = None
    for _ in range(RUNS):
        serving_search.clear_cache()
        start = time.perf_counter()
        outcome = serving_search.search_serving(request, result, search_configuration)
        samples.append(time.perf_counter() - start)
    start = time.perf_counter()
    serving_search.search_serving(request, result, search_configuration)
    cached = time.perf_counter() - start
    median = statistics.median(samples) * 1000
    verdict = "within" if median < TARGET_MS else "OVER"
    print("case: Kimi K3 on 16 × Atlas 800 A3, 8P8D (DP8 / TP16 / EP128 per side)")
    if outcome is not None and outcome.chosen is not None:
        print(f"configurations planned: {outcome.evaluated}; chosen: {outcome.front[0].label_en}")
    print(
        f"search median: {median:.1f} ms over {RUNS} runs   target: < {TARGET_MS:.0f} ms ({verdict} target)"
    )
    print(f"cached lookup: {cached * 1000:.2f} ms")
    print(f"BENCH\tsearch 16 × A3 8P8D median\t{median:.3f}\tms\t< {TARGET_MS:.0f} ms")
    print(f"BENCH\tsearch 16 × A3 8P8D cached\t{cached * 1000:.3f}\tms\t")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
