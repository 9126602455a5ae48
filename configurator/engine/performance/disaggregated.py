"""Prefill vs decode capacity of an xPyD deployment, its figures and the imbalance check."""

from __future__ import annotations

from ..checks import raise_
from ..figures import FigureBook
from ..types import Check, GroupPerformance, PdBalance
from .common import ESTIMATE_SOURCE, fig_input, fig_value


def capacity_balance(
    p_cap: float, d_cap: float, prefill: list[GroupPerformance], decode: list[GroupPerformance]
) -> PdBalance:
    # A side with no capacity is the bottleneck; keep the ratio finite for JSON.
    ratio = p_cap / d_cap if d_cap > 0 else 0.0
    if d_cap <= 0:
        bottleneck = "decode"
    elif 0.9 <= ratio <= 1.1:
        bottleneck = "balanced"
    else:
        bottleneck = "prefill" if ratio < 1 else "decode"
    p_nodes = sum(g.nodes for g in prefill)
    d_nodes = sum(g.nodes for g in decode)
    total = p_nodes + d_nodes
    per_p = p_cap / p_nodes if p_nodes else 0.0
    per_d = d_cap / d_nodes if d_nodes else 0.0
    if per_p > 0 and per_d > 0:
        # x·per_p = (total − x)·per_d balances the two sides
        best_p = min(total - 1, max(1, round(total * per_d / (per_p + per_d))))
    else:
        best_p = p_nodes
    return PdBalance(p_cap, d_cap, ratio, bottleneck, best_p, total - best_p)


def add_pd_figures(
    book: FigureBook,
    checks: list[Check],
    bal: PdBalance,
    prefill: list[GroupPerformance],
    decode: list[GroupPerformance],
) -> None:
    book.put(
        "performance.pd.prefill_requests_per_s",
        fig_value(bal.prefill_requests_per_s),
        source=ESTIMATE_SOURCE,
        prefill_groups=[g.group for g in prefill],
    )
    book.put(
        "performance.pd.decode_requests_per_s",
        fig_value(bal.decode_requests_per_s),
        source=ESTIMATE_SOURCE,
        decode_groups=[g.group for g in decode],
    )
    book.put(
        "performance.pd.ratio",
        fig_value(bal.ratio),
        variant="ratio" if bal.decode_requests_per_s > 0 else "no_decode",
        source=ESTIMATE_SOURCE,
        bottleneck=bal.bottleneck,
        prefill_requests_per_s=fig_input(bal.prefill_requests_per_s),
        decode_requests_per_s=fig_input(bal.decode_requests_per_s),
    )
    if bal.prefill_requests_per_s > 0 and bal.decode_requests_per_s > 0 and not 0.67 <= bal.ratio <= 1.5:
        side_en = "prefill" if bal.bottleneck == "prefill" else "decode"
        side_zh = "预填充" if bal.bottleneck == "prefill" else "解码"
        checks.append(
            raise_(
                "performance.pd_imbalance",
                figures={"ratio": bal.ratio, "bottleneck": bal.bottleneck},
                ratio=bal.ratio,
                side_en=side_en,
                side_zh=side_zh,
            )
        )
