"""Which routed experts a decode step reads on the busiest expert-parallel rank.

With expert parallelism (``--enable-expert-parallel``) every rank holds ``experts ÷ EP`` routed
experts and the step's collectives wait for the slowest rank, so the step reads, per rank, the
experts touched on the *busiest* rank — not the mean share.  With each expert touched independently
with probability ``p`` (``serving_model.experts_touched``), a rank's touched count is
Binomial(m, p) over its m experts, and the busiest of ``n`` ranks touches E[max of n] of them:
``Σ_{j<m} (1 − F(j)^n)``, F the binomial CDF.  At one sequence of Kimi K2 on 16 ranks (24 experts
each, 8 of 384 routed) the mean rank touches 0.5 experts and the busiest ≈ 2; at eight sequences
3.7 and ≈ 6.9.
"""

from __future__ import annotations

from functools import lru_cache


@lru_cache(maxsize=8192)
def _expected_max(m: int, n: int, p: float) -> float:
    if m <= 0 or n <= 0 or p <= 0.0:
        return 0.0
    if p >= 1.0:
        return float(m)
    # binomial pmf by recurrence (no factorials: m reaches a few hundred experts per rank)
    q = 1.0 - p
    pmf = q**m
    cdf = 0.0
    total = 0.0
    for j in range(m):
        cdf += pmf
        total += 1.0 - min(cdf, 1.0) ** n
        pmf *= (m - j) / (j + 1) * p / q
    return total


def busiest_rank_share(experts_per_rank: float, ranks: float, p: float) -> float:
    """Share of a rank's experts the busiest of ``ranks`` ranks touches, each expert touched with
    probability ``p`` (≥ p: equal to it on one rank)."""
    m, n = int(experts_per_rank), int(ranks)
    p = min(max(float(p), 0.0), 1.0)
    if m <= 0 or n <= 1:
        return p
    return max(p, min(1.0, _expected_max(m, n, round(p, 9)) / m))
