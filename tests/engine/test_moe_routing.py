"""The busiest expert-parallel rank's share of touched experts (engine/moe_routing.py).

Expected values are enumerated by hand or by brute force over every routing outcome, not by the
engine's recurrence.
"""

from __future__ import annotations

import itertools

import pytest

from configurator.engine.moe_routing import busiest_rank_share


def test_two_ranks_of_two_experts_at_one_half_by_enumeration():
    # X ~ Binomial(2, ½) per rank: P(max = 0) = 1/16, P(max ≤ 1) = (3/4)² = 9/16, so
    # E[max] = 8/16 × 1 + 7/16 × 2 = 22/16 and the share is 22/16 ÷ 2 = 0.6875.
    assert busiest_rank_share(2, 2, 0.5) == pytest.approx(0.6875, rel=1e-12)


def test_brute_force_over_every_touch_pattern():
    m, n, p = 3, 3, 0.3
    expected = 0.0
    for pattern in itertools.product((0, 1), repeat=m * n):
        prob = 1.0
        for bit in pattern:
            prob *= p if bit else 1 - p
        busiest = max(sum(pattern[r * m : (r + 1) * m]) for r in range(n))
        expected += prob * busiest
    assert busiest_rank_share(m, n, p) == pytest.approx(expected / m, rel=1e-12)


def test_one_rank_or_nothing_touched_is_the_mean_share():
    assert busiest_rank_share(24, 1, 0.2) == 0.2
    assert busiest_rank_share(24, 16, 0.0) == 0.0
    assert busiest_rank_share(24, 16, 1.0) == 1.0


def test_kimi_k2_on_sixteen_ranks_reads_about_four_times_the_mean_at_one_sequence():
    # 384 experts over EP16 → 24 per rank; one token routes to 8: p = 8/384 per expert, mean 0.5 a rank.
    p1 = 8 / 384
    share1 = busiest_rank_share(24, 16, p1)
    assert 3.5 < share1 * 24 / (24 * p1) < 4.5
    # eight sequences: p = 1 − (1 − 8/384)^8, mean 3.7 experts a rank, the busiest ≈ 7
    p8 = 1 - (1 - 8 / 384) ** 8
    assert 6.0 < busiest_rank_share(24, 16, p8) * 24 < 8.0
