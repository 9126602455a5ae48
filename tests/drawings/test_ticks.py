import pytest

from configurator.drawings.ticks import nice_step, nice_ticks


def test_cost_axis_to_37_million():
    # 37 M / 5 intervals = 7.4 M → next nice step 10 M; 0 … 40 M covers the data
    assert nice_ticks(0, 37_000_000) == [0, 10_000_000, 20_000_000, 30_000_000, 40_000_000]


@pytest.mark.parametrize(
    ("lo", "hi", "max_ticks", "expected"),
    [
        (0, 100, 6, [0, 20, 40, 60, 80, 100]),
        (0, 64, 9, [0, 10, 20, 30, 40, 50, 60, 70]),
        (0, 1, 6, [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]),
        (0, 0.37, 6, [0.0, 0.1, 0.2, 0.3, 0.4]),
        (-3_200_000, 12_000_000, 6, [-5_000_000, 0, 5_000_000, 10_000_000, 15_000_000]),
        (0, 10, 5, [0, 2.5, 5.0, 7.5, 10.0]),
    ],
)
def test_nice_ticks(lo, hi, max_ticks, expected):
    assert nice_ticks(lo, hi, max_ticks) == expected


def test_ticks_cover_the_range_and_stay_under_the_limit():
    for hi in (1, 7, 13, 99, 1234, 37_000_000, 59_999_999):
        for max_ticks in (3, 5, 6, 8, 11):
            ticks = nice_ticks(0, hi, max_ticks)
            assert ticks[0] <= 0 and ticks[-1] >= hi
            assert 2 <= len(ticks) <= max_ticks
            steps = {round(b - a, 9) for a, b in zip(ticks, ticks[1:], strict=False)}
            assert len(steps) == 1


def test_degenerate_ranges():
    assert nice_ticks(0, 0) == [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    ticks = nice_ticks(5, 5)
    assert ticks[0] <= 5 <= ticks[-1] and len(ticks) >= 2
    assert nice_ticks(10, 0) == nice_ticks(0, 10)
    assert nice_ticks(float("nan"), 1) == nice_ticks(0, 1)


def test_integer_ticks_for_months():
    ticks = nice_ticks(0, 3, 10, integer=True)
    assert ticks == [0, 1, 2, 3]
    assert all(isinstance(v, int) for v in ticks)


def test_nice_step():
    assert nice_step(7.4) == 10
    assert nice_step(1.1) == 2
    assert nice_step(2.2) == 2.5
    assert nice_step(0.03) == pytest.approx(0.05)
    assert nice_step(0) == 1.0
