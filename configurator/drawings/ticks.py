"""Nice axis ticks (Heckbert, "Nice numbers for graph labels", Graphics Gems, 1990).

Ticks are multiples of 1, 2, 2.5 or 5 × 10ⁿ that cover the data range, so a
cost axis from 0 to ¥37 M reads 0, 10, 20, 30, 40 M rather than 0, 7.4, 14.8 …
"""

from __future__ import annotations

import math

NICE_STEPS = (1.0, 2.0, 2.5, 5.0, 10.0)


def nice_step(raw_step: float, steps: tuple[float, ...] = NICE_STEPS) -> float:
    """The smallest "nice" step (1, 2, 2.5, 5 × 10ⁿ) that is ≥ ``raw_step``."""
    if raw_step <= 0 or not math.isfinite(raw_step):
        return 1.0
    exponent = math.floor(math.log10(raw_step))
    base = 10.0**exponent
    fraction = raw_step / base
    for s in steps:
        if fraction <= s * (1 + 1e-9):
            return s * base
    return steps[-1] * base  # pragma: no cover - steps end with 10


def nice_ticks(lo: float, hi: float, max_ticks: int = 6, *, integer: bool = False) -> list[float]:
    """Evenly spaced nice ticks from ≤ ``lo`` to ≥ ``hi``, at most ``max_ticks`` of them.

    The first tick is the largest multiple of the step not above ``lo`` and the
    last the smallest not below ``hi``, so the axis covers the data.  With
    ``integer`` the step is at least 1 (months, nodes).  A zero-width range is
    widened so that a single value still gets an axis.  Returned values are
    ints when the step is whole, so they print without ".0".
    """
    if not (math.isfinite(lo) and math.isfinite(hi)):
        lo, hi = 0.0, 1.0
    if lo > hi:
        lo, hi = hi, lo
    if hi == lo:
        pad = abs(hi) * 0.1
        lo, hi = (lo - pad, hi + pad) if pad else (0.0, 1.0)
    max_ticks = max(2, max_ticks)
    step = nice_step((hi - lo) / (max_ticks - 1))
    while True:
        if integer:
            step = max(1.0, math.ceil(step))
        first = math.floor(lo / step + 1e-9) * step
        last = math.ceil(hi / step - 1e-9) * step
        count = round((last - first) / step) + 1
        if count <= max_ticks:
            break
        step = nice_step(step * 1.0001)  # next nice step up
    ticks = [first + i * step for i in range(count)]
    if float(step).is_integer() and float(first).is_integer():
        return [int(round(v)) for v in ticks]
    # Round away binary noise (0.30000000000000004) at the step's precision.
    digits = max(0, -math.floor(math.log10(step)) + 2)
    return [round(v, digits) for v in ticks]
