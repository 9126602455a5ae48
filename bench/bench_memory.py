"""The memory model against real vLLM / vLLM-Ascend start-ups: the error table.

Run: ``.venv/bin/python bench/bench_memory.py``.  Reads
``tests/data/vllm_startup_logs.yaml`` (public start-up logs, each with its
link), predicts each start-up's KV-cache memory with the engine and prints
the error per start-up, the median and the worst (issue 14's targets:
median ≤ 5 %, worst ≤ 15 %, every refused start-up reported as an error).
Prints figures only.
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from configurator.engine.calibration import summarise, table  # noqa: E402

DATA = ROOT / "tests" / "data" / "vllm_startup_logs.yaml"


def main() -> int:
    entries = yaml.safe_load(DATA.read_text(encoding="utf-8"))["entries"]
    summary = summarise(entries)
    print(table(summary))
    refused = [p for p in summary.predictions if p.outcome != "ok"]
    print(f"BENCH\tmemory median |KV error|\t{summary.median_kv_error * 100:.2f}\t%\t<= 5")
    print(f"BENCH\tmemory worst |KV error|\t{summary.worst_kv_error * 100:.2f}\t%\t<= 15")
    print(f"BENCH\tmemory refusals reported\t{sum(p.agrees for p in refused)}\tof {len(refused)}\tall")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
