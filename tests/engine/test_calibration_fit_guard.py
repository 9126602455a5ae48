"""A broken performance fit file never breaks a plan: the family's row is set aside, the plan uses the
stored priors and the wide band, and says so (docs/performance.md §3, bounds of the fit).

The broken rows are what one poisoned promoted measurement made ``manage.py calibrate`` write before
promotion checked plausibility: a 1e-9 tok/s file gave the A3 family a band of 0.00–187,496,041,603 ×
(the page divided the estimate by the 0); a 1e11 tok/s file the mirror image.
"""

from __future__ import annotations

import json
import math

import pytest

from configurator import reference
from configurator.engine import serving_model as sm
from configurator.engine.plan import plan

FAMILY = "ascend-a3"
GOOD = dict(sm.calibration()[FAMILY].__dict__)  # the committed fit's A3 row


def _a3_request():
    # The seeded 16 × A3 8P8D Kimi K3 case at the seeds' 8K in / 1K out workload ([S1] §3.3).
    return reference.request(
        {
            **reference.CASES["a3-16-8p8d"],
            "workload": {"input_tokens": 8192, "output_tokens": 1024, "concurrency": 64},
        }
    )


def _write(tmp_path, monkeypatch, row: dict) -> None:
    path = tmp_path / "fit.json"
    # allow_nan: a hand-edited or corrupted file can carry NaN / Infinity literals.
    path.write_text(json.dumps({"families": {FAMILY: row}}, allow_nan=True))
    monkeypatch.setenv("PERFORMANCE_CALIBRATION_FILE", str(path))


@pytest.mark.parametrize(
    "change",
    [
        {"band_low": 0.0, "band_high": 187496041603.0},  # the 1e-9 tok/s file's fit
        {"band_low": 1.2e-11, "band_high": 1.0},  # the 1e11 tok/s file's: estimate ÷ 1e-11
        {"band_low": float("nan")},
        {"band_high": float("inf")},
        {"band_low": 1.3, "band_high": 2.0},  # a band that does not hold 1 is not a residual spread
        {"layer_overhead_s": 0.0},
        {"layer_overhead_s": 40.0},  # 40 s a layer: outside FIT_BOUNDS (≤ 3 ms)
        {"prefill_layer_overhead_s": -1.0},
        {"request_overhead_s": 1e9},
        {"band_low": "zero"},
    ],
    ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items()),
)
def test_a_broken_row_means_the_priors_the_wide_band_and_a_warning(tmp_path, monkeypatch, change):
    _write(tmp_path, monkeypatch, {**GOOD, **change})
    assert FAMILY not in sm.calibration()
    assert sm.calibration_problem(FAMILY)
    # The priors of the Ascend stack (STACK_PRIORS) and the wide band (0.5–2.0 ×).
    prior = sm.prior_for(FAMILY)
    assert sm.factors_for_family(FAMILY).layer_overhead_s == prior.layer_overhead_s
    assert sm.error_band(FAMILY) == (sm.WIDE_BAND[0], sm.WIDE_BAND[1], True)

    result = plan(_a3_request())
    perf = result.performance
    assert perf.error_band == sm.WIDE_BAND
    low, high = perf.output_tokens_per_s_range
    assert math.isfinite(low) and math.isfinite(high)
    # The range is the estimate ÷ 2.0 … ÷ 0.5 (the wide band), computed here from the estimate.
    assert (low, high) == pytest.approx((perf.output_tokens_per_s / 2.0, perf.output_tokens_per_s / 0.5))
    codes = [c.code for c in result.checks]
    assert "performance.calibration_fit_set_aside" in codes
    warning = next(c for c in result.checks if c.code == "performance.calibration_fit_set_aside")
    assert "Atlas" in warning.message_en or "A3" in warning.message_en


def test_an_unreadable_file_means_priors_for_every_family(tmp_path, monkeypatch):
    path = tmp_path / "fit.json"
    path.write_text("{not json")
    monkeypatch.setenv("PERFORMANCE_CALIBRATION_FILE", str(path))
    assert sm.calibration() == {}
    assert sm.calibration_problem("hopper") and sm.calibration_problem(FAMILY)
    result = plan(_a3_request())
    assert "performance.calibration_fit_set_aside" in {c.code for c in result.checks}


def test_the_committed_fit_is_within_its_bounds_and_raises_no_warning():
    # Every row of configurator/engine/calibration_fit.json passes the same bounds.
    for family, fit in sm.calibration().items():
        assert sm.fit_row_problem(fit) == "", family
        assert sm.calibration_problem(family) == ""
    result = plan(_a3_request())
    assert "performance.calibration_fit_set_aside" not in {c.code for c in result.checks}


# --------------------------------------------------------------------------- the fit itself


def _row(record_id: str, source: str, ratio: float, ttft_ratio: float | None = None):
    from configurator.calibration import Comparison

    # measured 100 tok/s, predicted ratio × 100; TTFT 1,000 ms measured when given.
    return Comparison(
        record_id=record_id,
        platform=FAMILY,
        measured_tps=100.0,
        predicted_tps=100.0 * ratio,
        measured_ttft_ms=1000.0 if ttft_ratio is not None else None,
        predicted_ttft_ms=1000.0 * (ttft_ratio or 1.0),
        measured_tpot_ms=None,
        predicted_tpot_ms=0.0,
        source=source,
    )


def test_outliers_influence_and_band_bounds_of_the_cross_validation():
    from configurator import calibration as cal

    rows = (
        _row("a", "s1", 0.8),
        _row("b", "s2", 1.1),
        _row("c", "s3", 0.9),
        _row("poison-low", "quote:Q1", 1e-11),  # a 1e11 tok/s file: predicted ÷ measured 1e-11
        _row("ttft", "quote:Q2", 1.0, ttft_ratio=9.0),  # throughput fine, TTFT nine times off
        _row("strong", "quote:Q3", 1.6),
    )
    cv = cal.CrossValidation(rows)
    out = cal.outliers(cv)
    assert set(out) == {"poison-low", "ttft"}
    assert "TTFT predicted ÷ measured 9" in out["ttft"]
    # The band never leaves 0.25–4 (sm.BAND_BOUNDS), whatever a row says.
    assert cv.band(FAMILY) == (0.25, 1.6, False)
    # Without the 1e-11 row the band is 0.8–1.6; "strong" alone lifts the top from 1.1 to 1.6 (> 0.25).
    clean = cal.CrossValidation(tuple(r for r in rows if r.record_id not in out))
    assert clean.band(FAMILY) == (0.8, 1.6, False)
    assert clean.band_without(FAMILY, "strong") == (0.8, 1.1, False)
    influence = cal.influential(clean, ["strong", "a"])
    assert set(influence) == {"strong"}
    assert influence["strong"] == "ascend-a3 band 0.80–1.60, without it 0.80–1.10"
