"""The memory model against real vLLM / vLLM-Ascend start-ups: the error table.

Run: ``.venv/bin/python bench/bench_memory.py [entries.yaml]``.  Reads
``tests/data/vllm_startup_logs.yaml`` (public start-up logs, each with its
link), predicts each start-up's KV-cache memory with the engine and prints
the error per start-up, the median and the worst (issue 14's targets:
median ≤ 5 %, worst ≤ 15 %, every refused start-up reported as an error).
Prints figures only.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from configurator.calibration_data import DATA, load_entries  # noqa: E402
from configurator.engine.calibration import summarise, table  # noqa: E402


def main() -> int:
    entries = load_entries(sys.argv[1] if len(sys.argv) > 1 else DATA)
    summary = summarise(entries)
    print(table(summary))
    refused = [p for p in summary.predictions if p.outcome != "ok"]
    print(f"BENCH\tmemory median |KV error|\t{summary.median_kv_error * 100:.2f}\t%\t<= 5")
    print(f"BENCH\tmemory worst |KV error|\t{summary.worst_kv_error * 100:.2f}\t%\t<= 15")
    print(f"BENCH\tmemory refusals reported\t{sum(p.agrees for p in refused)}\tof {len(refused)}\tall")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
