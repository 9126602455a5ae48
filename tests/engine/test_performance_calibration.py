"""The performance model against published, measured serving results.

The records (tests/data/serving_benchmarks.yaml) carry their full conditions and a
public source each; the expected figures are the measurements themselves.  The
acceptance bar of issue 15: median predicted ÷ measured throughput within 1.25 ×,
no record off by more than 2 ×, Ascend records among them, and TTFT / TPOT
compared wherever the source gives them.
"""

from __future__ import annotations

import math
import statistics

import pytest

from configurator import calibration as cal
from configurator.engine import serving_model as sm

RECORDS = cal.load_records()
REQUIRED = {"id", "model", "server", "nodes", "layout", "engine", "workload", "metric", "measured", "source"}


@pytest.fixture(scope="module")
def rows():
    return cal.compare_all(RECORDS)


def test_the_set_has_at_least_ten_records_with_full_conditions_and_ascend_among_them():
    assert len(RECORDS) >= 10
    for rec in RECORDS:
        assert REQUIRED <= set(rec), rec["id"]
        w = rec["workload"]
        assert w["input_tokens"] > 0 and w["output_tokens"] > 0 and w["concurrency"] > 0
        assert rec["measured"]["output_tokens_per_s"] > 0
        assert rec["source"].startswith(("https://", "docs/"))
    assert len({r["id"] for r in RECORDS}) == len(RECORDS)
    ascend = [r for r in RECORDS if cal.server_for(r["server"]).accelerator.software_stack == "ascend"]
    assert len(ascend) >= 3


def test_median_ratio_within_1_25_and_none_off_by_more_than_2(rows):
    ratios = [r.ratio for r in rows]
    median = statistics.median(ratios)
    assert 1 / 1.25 <= median <= 1.25, cal.table(rows)
    worst = max(max(x, 1 / x) for x in ratios)
    assert worst <= 2.0, cal.table(rows)


def test_each_platform_is_calibrated_on_its_own_and_within_the_band(rows):
    for stack in ("cuda", "ascend"):
        ratios = [r.ratio for r in rows if r.platform == stack]
        assert ratios, stack
        assert 1 / 1.25 <= statistics.median(ratios) <= 1.25, (stack, ratios)


def test_the_reported_error_band_covers_the_calibration_residuals(rows):
    low, high = sm.ERROR_BAND_LOW, sm.ERROR_BAND_HIGH
    for r in rows:
        assert low <= r.ratio <= high, (r.record_id, r.ratio)


def test_latencies_are_reported_where_the_sources_give_them(rows):
    with_tpot = [r for r in rows if r.measured_tpot_ms]
    assert len(with_tpot) >= 8
    tpot_ratios = [r.predicted_tpot_ms / r.measured_tpot_ms for r in with_tpot]
    assert 1 / 1.25 <= statistics.median(tpot_ratios) <= 1.25
    assert max(max(x, 1 / x) for x in tpot_ratios) <= 2.0
    with_ttft = [r for r in rows if r.measured_ttft_ms]
    assert len(with_ttft) >= 5
    ttft_ratios = [r.predicted_ttft_ms / r.measured_ttft_ms for r in with_ttft]
    assert max(max(x, 1 / x) for x in ttft_ratios) <= 3.0


def test_the_fitted_factors_are_physical():
    for stack, f in sm.PLATFORM_FACTORS.items():
        assert 0 < f.bandwidth_efficiency <= 1, stack
        assert 0 < f.compute_efficiency <= 1 and 0 < f.prefill_efficiency <= 1, stack
        assert 0 < f.step_overhead_s < 0.05 and 0 < f.collective_latency_s < 1e-3, stack
        assert 0 <= f.request_overhead_s < 2, stack
        assert math.isfinite(f.request_overhead_s)
