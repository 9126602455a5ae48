"""Launch bundle speed for 16 × Atlas 800 A3 8P8D: build_launch (inside every plan()) and rendering the files.

Run: ``.venv/bin/python bench/bench_launch.py``.  Prints figures only.  ``build_launch`` runs inside
``plan()`` (target < 2 ms); the files (node scripts, docker, k8s, gateway, benchmark, README) render only
when the bundle is downloaded (target < 300 ms).
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._django import report  # noqa: E402
from configurator import reference  # noqa: E402
from configurator.engine.launch import build_launch, bundle_files  # noqa: E402
from configurator.engine.plan import plan  # noqa: E402


def main() -> int:
    # As plan() calls it: the resolved request with the plan's layout, memory and performance (called
    # without them, build_launch makes those estimates itself, a plan's worth of work).
    planned = plan(reference.request(reference.case("a3-16-8p8d")))
    request, layout = planned.request, planned.layout
    performance, memory = planned.performance, planned.memory
    files = bundle_files(build_launch(request, layout, performance, memory))  # warm-up: imports
    builds, renders = [], []
    for _ in range(200):
        start = time.perf_counter()
        result = build_launch(request, layout, performance, memory)
        builds.append(time.perf_counter() - start)
    for _ in range(20):
        result = build_launch(request, layout, performance, memory)
        start = time.perf_counter()
        files = bundle_files(result)
        renders.append(time.perf_counter() - start)
    build_ms, render_ms = statistics.median(builds) * 1000, statistics.median(renders) * 1000
    print(f"build_launch median {build_ms:.3f} ms (target < 2 ms); render {len(files)} files median "
          f"{render_ms:.1f} ms (target < 300 ms)")  # fmt: skip
    report("build_launch 16 × A3 8P8D median", build_ms, "ms", "< 2 ms")
    report("launch bundle render 16 × A3 8P8D median", render_ms, "ms", "< 300 ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
