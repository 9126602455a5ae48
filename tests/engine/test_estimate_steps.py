"""The steps of ``estimate_performance`` (engine/performance/estimate.py), each on its own.

Every expectation is the full estimate's output for the same request, or a value computed here
independently (the measured throughput's arithmetic): a step gives what the full function records.
"""

from __future__ import annotations

import dataclasses

import pytest

from configurator import reference
from configurator.engine import serving_model as sm
from configurator.engine.defaults import resolve_serving
from configurator.engine.figures import FigureBook, UnrecordedBook
from configurator.engine.layout import resolve_layout
from configurator.engine.memory import size_admission, size_memory
from configurator.engine.performance import estimate as est
from configurator.engine.performance import estimate_performance
from configurator.engine.speculative import with_draft
from configurator.engine.types import TopologyKind

CASES = sorted(reference.CASES)


def _prepared(case: str, **workload):
    """The request, layout and memory as plan() hands them to the estimate (engine/plan.py)."""
    req = reference.request(reference.case(case))
    if workload:
        req = dataclasses.replace(req, workload=dataclasses.replace(req.workload, **workload))
    req = dataclasses.replace(
        req, serving=resolve_serving(req.serving, req.server.accelerator.software_stack)
    )
    req = with_draft(req)
    layout = resolve_layout(req)
    req = size_admission(req, layout)
    return req, layout, size_memory(req, layout)


def _up_to_groups(req, layout, memory, book):
    """The estimate's steps up to every group's estimate, in the order estimate_performance runs them."""
    checks: list = []
    req = est._settled_request(req, layout, memory, checks)
    factors = sm.effective_factors(req)
    family = sm.hardware_family(req.server.accelerator)
    req, tflops, precision = est._device_compute(req, family, checks)
    w = est._workload_inputs(req, layout)
    est._put_request_figures(book, req, w, factors, family, tflops, precision)
    models, groups = est._group_estimates(req, layout, memory, factors, tflops, w, book, checks)
    return req, w, family, models, groups, checks


@pytest.mark.parametrize("case", CASES)
def test_the_request_figures_and_the_group_estimates_are_the_full_books_first_figures(case):
    req, layout, memory = _prepared(case)
    full = estimate_performance(req, layout, memory)
    book = FigureBook()
    _req, w, _family, _models, groups, _checks = _up_to_groups(req, layout, memory, book)
    assert len(book) > 0
    assert list(book.figures.items()) == list(full.figures.items())[: len(book)]
    assert book["performance.prompt_tokens_computed"].value == w.computed_prompt_tokens
    assert (w.counted_dp, w.concurrency) == (full.serving_dp_ranks, full.concurrency)
    assert tuple(groups) == full.groups  # no measured throughput: the groups as estimated


@pytest.mark.parametrize("case", CASES)
def test_the_operating_point_is_the_one_the_full_estimate_quotes(case):
    req, layout, memory = _prepared(case)
    full = estimate_performance(req, layout, memory)
    req, w, _family, models, groups, _checks = _up_to_groups(req, layout, memory, UnrecordedBook())
    pools, op = est._operating_point(req, models, groups, w)
    assert pools.capacity_users == full.capacity_concurrency
    assert (op.ttft_s, op.tpot_s, op.ttft_p90_s) == (full.ttft_s, full.tpot_s, full.ttft_p90_s)
    disaggregated = req.topology.kind == TopologyKind.DISAGGREGATED
    assert pools.split is disaggregated
    assert pools.mode == ("disaggregated" if disaggregated else "aggregated")
    if disaggregated:  # each xPyD point is computed once: asked again, the same object from ``points``
        assert pools.point_fn(w.concurrency) is pools.point_fn(w.concurrency)


@pytest.mark.parametrize("case", ["a3-4-single", "a3-16-8p8d"])
def test_a_measured_throughput_replaces_the_estimate_in_proportion(case):
    measured = 2345.5
    req, layout, memory = _prepared(case, measured_output_tokens_per_s=measured)
    full = estimate_performance(req, layout, memory)
    book = FigureBook()
    req, w, _family, models, groups, _checks = _up_to_groups(req, layout, memory, book)
    _pools, op = est._operating_point(req, models, groups, w)
    counted = [g for g in groups if g.counts_toward_throughput]
    t, scaled = est._throughput(req, groups, counted, op, w, book)
    # Independently: requests follow from the measured tokens, the groups share them as estimated.
    output_tokens = max(1, req.workload.output_tokens)
    assert t.measured and t.output_tps == measured
    assert t.requests_per_s == measured / output_tokens
    assert t.input_tps == t.requests_per_s * max(0, req.workload.input_tokens)
    assert sum(g.output_tokens_per_s for g in scaled if g.counts_toward_throughput) == pytest.approx(measured)
    # And what the full estimate reports.
    assert tuple(scaled) == full.groups
    assert (t.requests_per_s, t.output_tps, t.input_tps, t.per_dp_rank) == (
        full.requests_per_s,
        full.output_tokens_per_s,
        full.input_tokens_per_s,
        full.output_tokens_per_s_per_dp_rank,
    )
    band = sm.error_band(sm.hardware_family(req.server.accelerator))
    checks = est._estimate_checks("any", t, band, ("", ""))
    assert [c.code for c in checks] == ["performance.measured_throughput_used"]
    assert checks[0] == full.checks[-1]


@pytest.mark.parametrize("case", CASES)
def test_the_estimates_own_checks_close_the_full_estimates_checks(case):
    req, layout, memory = _prepared(case)
    full = estimate_performance(req, layout, memory)
    family = full.error_band_family
    t = est._Throughput()
    t.measured, t.output_tps, t.estimated_output_tps = (
        False,
        full.output_tokens_per_s,
        full.output_tokens_per_s,
    )
    band = (*full.error_band, full.error_band_few_sources)
    checks = est._estimate_checks(family, t, band, (full.note_en, full.note_zh))
    assert checks and checks[-1].code == "performance.estimate_unconfirmed"
    assert checks == list(full.checks[-len(checks) :])
