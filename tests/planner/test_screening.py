"""The auto-planner's screening pass (planner/serving.py ``cheap``) judges a serving variant on what the
full estimate gives, without the parts it never reads.

``estimate_performance(screening=True)`` leaves out the design point, the load curve, the latency-target
table and the figures; ``size_memory(screening=True)`` the per-group figures; ``unworded()`` the words of
warnings and notes.  What the planner reads — the operating point at the stated load, the capacity and
every error with its words — must be what the full estimate gives, on every reference configuration and
a load beyond capacity (the errors then come with their words), so a screened variant is judged as the
full plan would judge it.
"""

from __future__ import annotations

import dataclasses

import pytest

from configurator import reference
from configurator.engine.checks import raise_, unworded
from configurator.engine.defaults import resolve_serving
from configurator.engine.figures import FigureBook, UnrecordedBook
from configurator.engine.layout import resolve_layout
from configurator.engine.memory import size_admission, size_memory
from configurator.engine.performance import estimate_performance
from configurator.engine.speculative import with_draft
from configurator.engine.types import Severity
from configurator.planner.judge import CAPACITY_CHECKS


def _prepared(case: str, concurrency: int | None = None):
    """The request as plan() prepares it before sizing the memory (engine/plan.py)."""
    req = reference.request(reference.case(case))
    if concurrency is not None:
        req = dataclasses.replace(req, workload=dataclasses.replace(req.workload, concurrency=concurrency))
    req = dataclasses.replace(
        req, serving=resolve_serving(req.serving, req.server.accelerator.software_stack)
    )
    req = with_draft(req)
    layout = resolve_layout(req)
    return size_admission(req, layout), layout


def _errors(checks):
    return [(c.code, c.message_en, c.message_zh) for c in checks if c.severity == Severity.ERROR]


@pytest.mark.parametrize("case", sorted(reference.CASES))
@pytest.mark.parametrize("concurrency", [None, 4096])
def test_the_screening_pass_reads_what_the_full_estimate_gives(case, concurrency):
    req, layout = _prepared(case, concurrency)
    full_memory = size_memory(req, layout)
    with unworded():
        memory = size_memory(req, layout, screening=True)
    assert memory.groups == full_memory.groups
    assert _errors(memory.checks) == _errors(full_memory.checks)
    assert [c.code for c in memory.checks] == [c.code for c in full_memory.checks]
    full = estimate_performance(req, layout, full_memory)
    with unworded():
        screened = estimate_performance(req, layout, memory, screening=True)
    for name in ("ttft_s", "tpot_s", "requests_per_s", "output_tokens_per_s", "capacity_concurrency"):
        assert getattr(screened, name) == getattr(full, name), name
    assert screened.groups == full.groups
    # The capacity findings are plan()'s (their words name the design point, which the screening pass
    # leaves out): the planner sets them aside there and judges the capacity from the figures above
    # (planner/judge.py CAPACITY_CHECKS, serving_problem).  Every other error is the same, with its words.
    assert [e for e in _errors(screened.checks) if e[0] not in CAPACITY_CHECKS] == [
        e for e in _errors(full.checks) if e[0] not in CAPACITY_CHECKS
    ]
    if concurrency is not None:  # the load beyond capacity is found by both
        assert "performance.concurrency_above_capacity" in {e[0] for e in _errors(screened.checks)}
    assert screened.design_point is None and screened.curve == () and screened.sla is None
    assert screened.figures == {} and memory.figures.keys() <= {
        "memory.deployment_weights_bytes",
        "memory.checkpoint_bytes",
    }


def test_unworded_leaves_warnings_without_words_and_errors_worded():
    note = {"racks": 2, "units": 40, "seed": "S1", "seed_units": 42, "seed_racks": 2}
    with unworded():
        quiet = raise_("racks.count_vs_seed", **note)
    worded = raise_("racks.count_vs_seed", **note)
    assert (quiet.code, quiet.severity, quiet.area) == (worded.code, worded.severity, worded.area)
    assert (quiet.message_en, quiet.message_zh, quiet.fix) == ("", "", {})
    assert worded.message_en.startswith("2 racks, 40U used") and worded.message_zh.startswith("2 个机柜")
    with unworded():
        error = raise_("performance.workload_negative")
    assert error.severity == Severity.ERROR
    assert error.message_en == "Concurrency and token counts cannot be negative."
    # The block ends: words again.
    assert raise_("racks.count_vs_seed", **note).message_en == worded.message_en


def test_an_unrecorded_book_keeps_nothing_and_says_so():
    book = UnrecordedBook()
    book.put("layout.total_devices", 64, nodes=4, devices_per_node=16)
    assert len(book) == 0 and "layout.total_devices" not in book
    assert not book.recording and FigureBook().recording
