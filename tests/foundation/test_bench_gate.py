"""``make bench`` is a gate: every BENCH line is one number, its target a comparison run_all.py checks,
and a missed target fails the run (a timing missed on a busy machine is said, not failed)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

import run_all  # noqa: E402


@pytest.mark.parametrize(
    ("text", "value", "met"),
    [
        ("< 5 ms", 4.99, True),
        ("< 5 ms", 5.0, False),
        ("<= 150 ms", 150.0, True),
        ("≤ 2", 2.01, False),
        (">= 60 req/s", 59.9, False),
        (">= 60 req/s", 60.0, True),
        ("0", 0.0, True),
        ("0", 1.0, False),
        ("0.8–1.25", 0.79, False),
        ("0.8–1.25", 1.25, True),
    ],
)
def test_targets_are_comparisons(text, value, met):
    assert run_all.parse_target(text).met(value) is met


@pytest.mark.parametrize("text", ["all", "<= 5 / 15", "fast"])
def test_a_target_that_is_no_comparison_is_refused(text):
    with pytest.raises(ValueError):
        run_all.parse_target(text)


def test_a_timing_missed_on_a_busy_machine_is_said_not_failed():
    timing = run_all.Row("b", "update p95", 80.0, "ms", "< 50 ms", run_all.parse_target("< 50 ms"), busy=True)
    accuracy = run_all.Row("b", "worst error", 16.0, "%", "<= 15", run_all.parse_target("<= 15"), busy=True)
    idle = run_all.Row("b", "update p95", 80.0, "ms", "< 50 ms", run_all.parse_target("< 50 ms"), busy=False)
    assert timing.verdict == "missed (busy machine)"
    assert accuracy.verdict == "MISSED"
    assert idle.verdict == "MISSED"


def test_memory_bench_prints_one_number_a_line():
    # The memory bench once printed "1.22 / 3.48" as one figure, which stopped make bench.
    out = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "bench_memory.py")], capture_output=True, text=True, check=True
    ).stdout
    lines = [line.split("\t") for line in out.splitlines() if line.startswith("BENCH\t")]
    assert lines
    for _, _name, value, _unit, target in lines:
        float(value)
        run_all.parse_target(target)
