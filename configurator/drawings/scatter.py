"""Scatter chart with highlighted points (the auto-planner's Pareto front).

Pure Python like the other drawings: plain SVG 1.1 with presentation
attributes, so the page can inline it and WeasyPrint can render it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..engine.vocabulary import drawing_text as t
from . import svg
from .fmt import format_number
from .svg import Canvas
from .ticks import nice_ticks

Formatter = Callable[[float], str]

WIDTH = 760
HEIGHT = 420
PAD = 16
MUTED_POINT = "#a3b7cb"
MAX_LABELS = 8


def _finite(value: object) -> float | None:
    try:
        v = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def _format_for(ticks: Sequence[float]) -> Formatter:
    step = (ticks[1] - ticks[0]) if len(ticks) > 1 else 1.0
    decimals = 0
    while decimals < 4 and step and abs(round(step, decimals) - step) > abs(step) * 1e-9:
        decimals += 1

    def fmt(value: float) -> str:
        return format_number(value, decimals)

    return fmt


def _apart(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> bool:
    """True when two boxes (x0, y0, x1, y1) do not overlap."""
    return a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1]


def _gap(box: tuple[float, float, float, float], x: float, y: float) -> float:
    """Distance from a point to a label box (0 inside it)."""
    dx = max(box[0] - x, 0.0, x - box[2])
    dy = max(box[1] - y, 0.0, y - box[3])
    return (dx * dx + dy * dy) ** 0.5


def scatter_svg(
    points: Sequence[Mapping[str, Any]],
    x_label: str,
    y_label: str,
    lang: str,
    *,
    x_format: Formatter | None = None,
    y_format: Formatter | None = None,
    title: str = "",
    legend: tuple[str, str] | None = None,
    width: int = WIDTH,
    height: int = HEIGHT,
) -> str:
    """Points ``{"x", "y", "label", "highlight"}``; highlighted ones are larger, accented and labelled.

    Both axes start at 0 so that distances read as ratios (cost per million
    tokens and throughput are both "more is more").  Highlighted points are
    joined in x order by a thin line (the front, read left to right), and up
    to eight of them carry their label where it fits without overlapping.  ``legend`` names (highlighted,
    other).  Points with a non-finite coordinate are skipped.
    """
    pts = []
    for p in points:
        x, y = _finite(p.get("x")), _finite(p.get("y"))
        if x is None or y is None:
            continue
        pts.append((x, y, str(p.get("label", "") or ""), bool(p.get("highlight"))))

    xs = [p[0] for p in pts]
    ys = [p[1] for p in pts]
    x_ticks = nice_ticks(0.0, max([0.0, *xs]) or 1.0, 6)
    y_ticks = nice_ticks(0.0, max([0.0, *ys]) or 1.0, 6)
    x_lo, x_hi = x_ticks[0], x_ticks[-1]
    y_lo, y_hi = y_ticks[0], y_ticks[-1]
    fx = x_format or _format_for(x_ticks)
    fy = y_format or _format_for(y_ticks)

    tick_w = max((svg.text_width(fy(v), svg.SMALL) for v in y_ticks), default=20)
    left = PAD + tick_w + 10
    right = PAD + 8
    top = PAD + (26 if title else 0) + 22
    bottom = 24 + (20 if x_label else 0) + (22 if legend else 0) + PAD
    plot_w, plot_h = width - left - right, height - top - bottom

    c = Canvas(width, height, title=title or y_label)
    if title:
        c.text(PAD, PAD + 14, svg.fit_text(title, width - 2 * PAD, 15, True), size=15, bold=True)
    c.text(
        PAD,
        top - 12,
        svg.fit_text(y_label, width - 2 * PAD, svg.SMALL + 1),
        size=svg.SMALL + 1,
        fill=svg.MUTED,
    )

    def X(v: float) -> float:
        return left + plot_w * (v - x_lo) / ((x_hi - x_lo) or 1.0)

    def Y(v: float) -> float:
        return top + plot_h * (1 - (v - y_lo) / ((y_hi - y_lo) or 1.0))

    for v in y_ticks:
        c.line(left, Y(v), left + plot_w, Y(v), stroke=svg.GRID, stroke_width=1)
        c.text(left - 8, Y(v) + 4, fy(v), anchor="end", size=svg.SMALL, fill=svg.MUTED)
    c.line(left, top + plot_h, left + plot_w, top + plot_h, stroke=svg.MUTED, stroke_width=1)
    c.line(left, top, left, top + plot_h, stroke=svg.MUTED, stroke_width=1)
    for v in x_ticks:
        c.line(X(v), top + plot_h, X(v), top + plot_h + 4, stroke=svg.MUTED)
        c.text(X(v), top + plot_h + 17, fx(v), anchor="middle", size=svg.SMALL, fill=svg.MUTED)
    if x_label:
        c.text(
            left + plot_w / 2, top + plot_h + 36, x_label, anchor="middle", size=svg.SMALL + 1, fill=svg.MUTED
        )

    if not pts:
        c.text_mid(left + plot_w / 2, top + plot_h / 2, t("no_data", lang), anchor="middle", fill=svg.MUTED)

    for x, y, _label, hi in pts:
        if not hi:
            c.circle(X(x), Y(y), 4, fill=MUTED_POINT, stroke=svg.PAPER, stroke_width=1)
    front = sorted((p for p in pts if p[3]), key=lambda p: (p[0], p[1]))
    if len(front) > 1:
        c.polyline(
            [(X(x), Y(y)) for x, y, _l, _h in front],
            stroke=svg.ACCENT,
            stroke_width=1.2,
            stroke_dasharray="4 3",
        )
    # Labels: the first of six spots around the point that stays in the plot and clear of
    # the labels and points already drawn; a label with no free spot is left out (the
    # table beside the chart names every point).
    placed: list[tuple[float, float, float, float]] = []
    dots = [(X(x), Y(y)) for x, y, _l, _h in front]
    for i, (x, y, label, _hi) in enumerate(front):
        c.circle(X(x), Y(y), 6, fill=svg.ACCENT, stroke=svg.PAPER, stroke_width=1.5)
        if not label or i >= MAX_LABELS:
            continue
        text = svg.fit_text(label, 220, svg.SMALL)
        w, h = svg.text_width(text, svg.SMALL), svg.SMALL + 2
        px, py = X(x), Y(y)
        spots = (
            (9, -8, "start"),
            (9, 16, "start"),
            (-9, -8, "end"),
            (-9, 16, "end"),
            (0, -12, "middle"),
            (0, 22, "middle"),
            (12, 4, "start"),  # level with the point: where points crowd above and below it
            (-12, 4, "end"),
        )
        for dx, dy, anchor in spots:
            x0 = {"start": px + dx, "end": px + dx - w}.get(anchor, px - w / 2)
            box = (x0, py + dy - h + 3, x0 + w, py + dy + 3)
            inside = box[0] >= left and box[2] <= left + plot_w and box[1] >= top and box[3] <= top + plot_h
            clear = all(_apart(box, other) for other in placed) and all(
                not (box[0] - 6 < qx < box[2] + 6 and box[1] - 6 < qy < box[3] + 6)
                for qx, qy in dots
                if (qx, qy) != (px, py)
            )
            # A label reads as its nearest point's: no other point may lie nearer to it.
            own = _gap(box, px, py)
            nearest = all(_gap(box, qx, qy) > own for qx, qy in dots if (qx, qy) != (px, py))
            if inside and clear and nearest:
                placed.append(box)
                c.text(px + dx, py + dy, text, anchor=anchor, size=svg.SMALL, fill=svg.TEXT)
                break

    if legend:
        ly = height - PAD - 4
        c.circle(PAD + 6, ly - 4, 6, fill=svg.ACCENT)
        c.text(PAD + 18, ly, legend[0], size=svg.SMALL + 1)
        x2 = PAD + 18 + svg.text_width(legend[0], svg.SMALL + 1) + 24
        c.circle(x2 + 6, ly - 4, 4, fill=MUTED_POINT)
        c.text(x2 + 18, ly, legend[1], size=svg.SMALL + 1)
    return c.to_svg()


__all__ = ["scatter_svg"]
