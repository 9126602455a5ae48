"""Charts for the money pages: cumulative cost, cost per million tokens, sensitivity.

All three take already computed figures (the TCO engine's series and
results) and a ``value_format``/``y_format`` callback for the numbers, so
the chart shows exactly the strings the tables around it show (see
:func:`configurator.drawings.fmt.money_axis_formatter`).
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
PAD = 16
TONES = {
    "accent": svg.ACCENT,
    "ok": svg.OK,
    "warning": svg.WARNING,
    "error": svg.ERROR,
    "muted": "#8d99a6",
}
LOW_COLOR = "#8fb0cf"  # tornado: input at its low end
HIGH_COLOR = svg.ACCENT  # tornado: input at its high end


def _finite(value: object) -> float | None:
    try:
        v = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def _default_format(step: float) -> Formatter:
    # The fewest decimals that tell ticks apart: step 0.25 → 2, step 0.5 → 1, step 5 → 0.
    decimals = 0
    while decimals < 4 and step and abs(round(step, decimals) - step) > abs(step) * 1e-9:
        decimals += 1

    def fmt(value: float) -> str:
        return format_number(value, decimals)

    return fmt


def _tone(value: object, default: str = svg.ACCENT) -> str:
    """A colour from a tone name ("ok", "error" …) or a literal "#rrggbb"."""
    text = str(value or "")
    if text in TONES:
        return TONES[text]
    if (
        len(text) in (4, 7)
        and text.startswith("#")
        and all(ch in "0123456789abcdefABCDEF" for ch in text[1:])
    ):
        return text
    return default


def _legend(c: Canvas, entries: list[tuple[str, str, bool, str]], x0: float, y: float, max_x: float) -> float:
    """Legend entries (name, colour, dashed, kind "line"|"box") flowed into rows; returns the last baseline."""
    x = x0
    for name, color, dashed, kind in entries:
        w = 30 + svg.text_width(name, svg.SMALL + 1) + 20
        if x > x0 and x + w > max_x:
            x = x0
            y += 20
        if kind == "line":
            c.line(
                x,
                y - 4,
                x + 22,
                y - 4,
                stroke=color,
                stroke_width=2.5,
                stroke_dasharray="6 4" if dashed else None,
            )
        else:
            c.rect(x + 5, y - 10, 12, 12, fill=color)
        c.text(x + 28, y, name, size=svg.SMALL + 1)
        x += w
    return y


def _legend_rows(names: list[str], width: float) -> int:
    rows, x = 1, 0.0
    for name in names:
        w = 30 + svg.text_width(name, svg.SMALL + 1) + 20
        if x > 0 and x + w > width:
            rows += 1
            x = 0.0
        x += w
    return rows


# --------------------------------------------------------------------------- line chart


def line_chart_svg(
    series: Sequence[Mapping[str, Any]],
    x_label: str,
    y_label: str,
    lang: str,
    y_unit: str = "",
    markers: Sequence[Mapping[str, Any]] = (),
    *,
    y_format: Formatter | None = None,
    x_format: Formatter | None = None,
    x_ticks: Sequence[float] | None = None,
    title: str = "",
    width: int = WIDTH,
    height: int = 380,
) -> str:
    """Lines over x (e.g. cumulative cost over months), with end labels and vertical markers.

    ``series``: mappings ``{"name": str, "points": [(x, y), …], "style":
    "solid" | "dashed", "color": tone or "#rrggbb"}`` (style and colour
    optional).  ``y_format`` formats y ticks and the end-of-line values (e.g.
    ``money_axis_formatter("CNY", lang, max_y)`` → "¥24.0 M" / "¥2,400 万");
    by default plain numbers, with ``y_unit`` added to the axis title.
    ``x_ticks`` fixes the x ticks (months: ``range(0, 37, 6)``); by default
    they are nice numbers inside the data range.  ``markers``: mappings
    ``{"x": float, "label": str, "y": float (optional, draws a dot),
    "color": tone}`` drawn as dashed vertical lines (break-even month).
    The y axis always includes 0.
    """
    lines: list[dict[str, Any]] = []
    for i, s in enumerate(series):
        pts = [
            (fx, fy)
            for fx, fy in ((_finite(p[0]), _finite(p[1])) for p in s.get("points", ()) or ())
            if fx is not None and fy is not None
        ]
        lines.append(
            {
                "name": str(s.get("name", "") or ""),
                "points": sorted(pts),
                "dashed": str(s.get("style", "solid")) == "dashed",
                "color": _tone(s.get("color"), svg.SERIES_COLORS[i % len(svg.SERIES_COLORS)]),
            }
        )
    all_pts = [p for ln in lines for p in ln["points"]]
    y_title = f"{y_label} ({y_unit})" if y_unit and y_format is None else y_label
    c_title = title or y_label

    xs = [p[0] for p in all_pts] + [m_x for m in markers if (m_x := _finite(m.get("x"))) is not None]
    ys = [p[1] for p in all_pts]
    x_lo, x_hi = (min(xs), max(xs)) if xs else (0.0, 1.0)
    if x_hi == x_lo:
        x_lo, x_hi = x_lo - 1, x_hi + 1
    y_ticks = nice_ticks(min([0.0, *ys]), max([0.0, *ys]), 6)
    y_lo, y_hi = y_ticks[0], y_ticks[-1]
    step = (y_ticks[1] - y_ticks[0]) if len(y_ticks) > 1 else 1.0
    fy = y_format or _default_format(step)
    if x_ticks is None:
        integer = all(float(v).is_integer() for v in xs)
        x_tick_values = [
            v for v in nice_ticks(x_lo, x_hi, 8, integer=integer) if x_lo - 1e-9 <= v <= x_hi + 1e-9
        ]
    else:
        x_tick_values = [float(v) for v in x_ticks if x_lo - 1e-9 <= float(v) <= x_hi + 1e-9]
    x_step = min((b - a for a, b in zip(x_tick_values, x_tick_values[1:], strict=False)), default=1.0)
    fx = x_format or _default_format(x_step)

    # Margins from the text that has to fit.
    tick_w = max((svg.text_width(fy(v), svg.SMALL) for v in y_ticks), default=20)
    end_w = max(
        (svg.text_width(fy(ln["points"][-1][1]), svg.SMALL, True) for ln in lines if ln["points"]), default=0
    )
    left = PAD + tick_w + 10
    right = PAD + (end_w + 10 if end_w else 8)
    top = PAD + (26 if title else 0) + 22
    legend_rows = _legend_rows([ln["name"] for ln in lines if ln["name"]], width - 2 * PAD) if lines else 0
    bottom = 24 + (20 if x_label else 0) + legend_rows * 20 + PAD
    plot_w, plot_h = width - left - right, height - top - bottom

    c = Canvas(width, height, title=c_title)
    if title:
        c.text(PAD, PAD + 14, svg.fit_text(title, width - 2 * PAD, 15, True), size=15, bold=True)
    c.text(
        PAD,
        top - 12,
        svg.fit_text(y_title, width - 2 * PAD, svg.SMALL + 1),
        size=svg.SMALL + 1,
        fill=svg.MUTED,
    )

    def X(v: float) -> float:
        return left + plot_w * (v - x_lo) / (x_hi - x_lo)

    def Y(v: float) -> float:
        return top + plot_h * (1 - (v - y_lo) / (y_hi - y_lo))

    # Grid and axes.
    for v in y_ticks:
        c.line(left, Y(v), left + plot_w, Y(v), stroke=svg.GRID, stroke_width=1)
        c.text(left - 8, Y(v) + 4, fy(v), anchor="end", size=svg.SMALL, fill=svg.MUTED)
    if y_lo < 0 < y_hi:
        c.line(left, Y(0), left + plot_w, Y(0), stroke=svg.MUTED, stroke_width=1)
    c.line(left, top + plot_h, left + plot_w, top + plot_h, stroke=svg.MUTED, stroke_width=1)
    c.line(left, top, left, top + plot_h, stroke=svg.MUTED, stroke_width=1)
    for v in x_tick_values:
        c.line(X(v), top + plot_h, X(v), top + plot_h + 4, stroke=svg.MUTED)
        c.text(X(v), top + plot_h + 17, fx(v), anchor="middle", size=svg.SMALL, fill=svg.MUTED)
    if x_label:
        c.text(
            left + plot_w / 2, top + plot_h + 36, x_label, anchor="middle", size=svg.SMALL + 1, fill=svg.MUTED
        )

    if not all_pts:
        c.text_mid(left + plot_w / 2, top + plot_h / 2, t("no_data", lang), anchor="middle", fill=svg.MUTED)

    # Markers under the lines.
    for m in markers:
        mx = _finite(m.get("x"))
        if mx is None:
            continue
        color = _tone(m.get("color"), svg.TEXT)
        c.line(X(mx), top - 4, X(mx), top + plot_h, stroke=color, stroke_width=1.2, stroke_dasharray="4 3")
        label = str(m.get("label", "") or "")
        if label:
            lw = svg.text_width(label, svg.SMALL, True)
            # Label beside the line, flipped to the left near the right edge.
            if X(mx) + 6 + lw <= width - PAD:
                lx, anchor = X(mx) + 6, "start"
            else:
                lx, anchor = X(mx) - 6, "end"
            # At the foot of the plot: cumulative lines are high where a
            # break-even falls, and their end values sit at the top right.
            c.rect(
                lx - 3 if anchor == "start" else lx - lw - 3,
                top + plot_h - 21,
                lw + 6,
                17,
                fill=svg.PAPER,
                fill_opacity=0.9,
            )
            c.text(lx, top + plot_h - 8, label, anchor=anchor, size=svg.SMALL, fill=color, bold=True)

    # Lines, then their end values (pushed apart so they never overlap).
    ends = []
    for ln in lines:
        pts = ln["points"]
        if not pts:
            continue
        dash = "7 5" if ln["dashed"] else None
        if len(pts) == 1:
            c.circle(X(pts[0][0]), Y(pts[0][1]), 4, fill=ln["color"])
        else:
            c.polyline(
                [(X(a), Y(b)) for a, b in pts],
                stroke=ln["color"],
                stroke_width=2.4,
                stroke_dasharray=dash,
                stroke_linejoin="round",
            )
        ends.append([Y(pts[-1][1]), X(pts[-1][0]), fy(pts[-1][1]), ln["color"]])
    for m in markers:
        mx, my = _finite(m.get("x")), _finite(m.get("y"))
        if mx is not None and my is not None:
            c.circle(
                X(mx), Y(my), 4.5, fill=svg.PAPER, stroke=_tone(m.get("color"), svg.TEXT), stroke_width=2
            )
    ends.sort()
    for i in range(1, len(ends)):
        ends[i][0] = max(ends[i][0], ends[i - 1][0] + 14)
    for ey, ex, text, color in ends:
        c.text(ex + 6, ey + 4, text, size=svg.SMALL, fill=color, bold=True)

    named = [(ln["name"], ln["color"], ln["dashed"], "line") for ln in lines if ln["name"]]
    if named:
        _legend(c, named, left, height - PAD - (legend_rows - 1) * 20, width - PAD)
    return c.to_svg()


# --------------------------------------------------------------------------- bar chart


def bar_chart_svg(
    rows: Sequence[Mapping[str, Any]],
    lang: str,
    value_format: Formatter,
    reference: Mapping[str, Any] | None = None,
    *,
    title: str = "",
    width: int = WIDTH,
) -> str:
    """Horizontal bars, one per row (e.g. cost per million tokens: buy, lease, public API).

    ``rows``: mappings ``{"label": str, "value": float, "tone": "accent" |
    "ok" | "warning" | "error" | "muted" | "#rrggbb" (optional), "note": str
    (optional, small text after the value)}``.  ``value_format`` turns a value
    into its label ("¥1.25"); ``reference`` ``{"value": float, "label": str}``
    draws a dashed vertical line (e.g. the public API price).  Negative
    values run left of a zero line.
    """
    items: list[dict[str, Any]] = []
    for r in rows:
        v = _finite(r.get("value"))
        items.append(
            {
                "label": str(r.get("label", "") or ""),
                "value": v if v is not None else 0.0,
                "color": _tone(r.get("tone") or r.get("color")),
                "note": str(r.get("note", "") or ""),
            }
        )
    ref_value = _finite(reference.get("value")) if reference else None
    ref_label = str(reference.get("label", "") or "") if reference else ""

    bar_h, gap = 26, 14
    top = PAD + (26 if title else 0) + (22 if ref_value is not None and ref_label else 4)
    height = top + max(len(items), 1) * (bar_h + gap) - gap + 20 + PAD
    c = Canvas(width, height, title=title or ", ".join(i["label"] for i in items))
    if title:
        c.text(PAD, PAD + 14, svg.fit_text(title, width - 2 * PAD, 15, True), size=15, bold=True)
    if not items:
        svg.empty_message(c, t("no_data", lang))
        return c.to_svg()

    label_w = min(max(svg.text_width(i["label"], svg.FONT_SIZE) for i in items), width * 0.38)
    value_w = (
        max(
            svg.text_width(value_format(i["value"]), svg.SMALL + 1, True)
            + (svg.text_width(i["note"], svg.SMALL) + 8 if i["note"] else 0)
            for i in items
        )
        + 10
    )
    values = [i["value"] for i in items] + ([ref_value] if ref_value is not None else [])
    lo, hi = min(0.0, *values), max(0.0, *values)
    if hi == lo:
        hi = lo + 1
    left = PAD + label_w + 12
    neg_w = value_w if lo < 0 else 0
    plot_w = width - left - PAD - value_w - neg_w

    def X(v: float) -> float:
        return left + neg_w + plot_w * (v - lo) / (hi - lo)

    zero = X(0)
    for k, item in enumerate(items):
        y = top + k * (bar_h + gap)
        c.text_mid(PAD + label_w, y + bar_h / 2, svg.fit_text(item["label"], label_w), anchor="end")
        x1, x2 = sorted((zero, X(item["value"])))
        c.rect(x1, y, x2 - x1, bar_h, fill=item["color"], rx=2)
        # The value in bold, then the note in grey, outside the bar's end.
        value_text = value_format(item["value"])
        note = item["note"]
        vw = svg.text_width(value_text, svg.SMALL + 1, True)
        nw = svg.text_width(note, svg.SMALL) + 8 if note else 0
        tx = x2 + 6 if item["value"] >= 0 else x1 - 6 - vw - nw
        c.text_mid(tx, y + bar_h / 2, value_text, size=svg.SMALL + 1, bold=True)
        if note:
            c.text_mid(tx + vw + 8, y + bar_h / 2, note, size=svg.SMALL, fill=svg.MUTED)
    bars_bottom = top + len(items) * (bar_h + gap) - gap
    c.line(zero, top - 4, zero, bars_bottom + 4, stroke=svg.MUTED, stroke_width=1)

    if ref_value is not None:
        rx = X(ref_value)
        c.line(rx, top - 8, rx, bars_bottom + 6, stroke=svg.TEXT, stroke_width=1.4, stroke_dasharray="5 4")
        text = f"{ref_label} {value_format(ref_value)}".strip()
        tw = svg.text_width(text, svg.SMALL, True)
        anchor = "middle"
        tx = rx
        if rx + tw / 2 > width - PAD:
            tx, anchor = rx, "end"
        elif rx - tw / 2 < PAD:
            tx, anchor = rx, "start"
        c.text(tx, top - 12, text, anchor=anchor, size=svg.SMALL, bold=True)
    return c.to_svg()


# --------------------------------------------------------------------------- tornado


def tornado_svg(
    rows: Sequence[Mapping[str, Any]],
    base_value: float,
    lang: str,
    value_format: Formatter,
    *,
    title: str = "",
    width: int = WIDTH,
) -> str:
    """Sensitivity of one result to each input, widest swing on top.

    ``rows``: mappings ``{"label": str, "low_value": float, "high_value":
    float, "low_label": str, "high_label": str}`` — the result with the input
    at its low and at its high end, and how those ends are written
    ("¥0.4 /kWh").  Bars start at ``base_value``; the low end is light, the
    high end dark, whichever side of the base they fall.  ``value_format``
    writes the results ("¥27.1 M").
    """
    base = _finite(base_value) or 0.0
    items: list[dict[str, Any]] = []
    for r in rows:
        low = _finite(r.get("low_value"))
        high = _finite(r.get("high_value"))
        items.append(
            {
                "label": str(r.get("label", "") or ""),
                "low": base if low is None else low,
                "high": base if high is None else high,
                "low_label": str(r.get("low_label", "") or ""),
                "high_label": str(r.get("high_label", "") or ""),
            }
        )
    items.sort(key=lambda i: abs(i["high"] - i["low"]), reverse=True)

    bar_h, gap = 24, 12
    top = PAD + (26 if title else 0) + 8
    rows_h = max(len(items), 1) * (bar_h + gap) - gap
    height = top + rows_h + 30 + 26 + PAD
    c = Canvas(width, height, title=title or t("base", lang, value=value_format(base)))
    if title:
        c.text(PAD, PAD + 14, svg.fit_text(title, width - 2 * PAD, 15, True), size=15, bold=True)
    if not items:
        svg.empty_message(c, t("no_data", lang))
        return c.to_svg()

    def end_text(value: float, input_label: str) -> str:
        return f"{value_format(value)} ({input_label})" if input_label else value_format(value)

    label_w = min(max(svg.text_width(i["label"]) for i in items), width * 0.3)
    left_w = right_w = 0.0
    for i in items:
        for value, input_label in ((i["low"], i["low_label"]), (i["high"], i["high_label"])):
            w = svg.text_width(end_text(value, input_label), svg.SMALL) + 8
            if value < base:
                left_w = max(left_w, w)
            else:
                right_w = max(right_w, w)
    lo = min([base] + [i["low"] for i in items] + [i["high"] for i in items])
    hi = max([base] + [i["low"] for i in items] + [i["high"] for i in items])
    span = (hi - lo) or (abs(base) * 0.1 or 1.0)
    plot_left = PAD + label_w + 14 + left_w
    plot_w = max(width - PAD - right_w - plot_left, 40)

    def X(v: float) -> float:
        if hi == lo:
            return plot_left + plot_w / 2
        return plot_left + plot_w * (v - lo) / span

    bx = X(base)
    for k, i in enumerate(items):
        y = top + k * (bar_h + gap)
        c.text_mid(PAD + label_w, y + bar_h / 2, svg.fit_text(i["label"], label_w), anchor="end")
        same_side = (i["low"] - base) * (i["high"] - base) > 0
        ends = [(i["low"], i["low_label"], LOW_COLOR), (i["high"], i["high_label"], HIGH_COLOR)]
        if i["low"] == i["high"]:
            # No swing: one label for both ends ("¥30.0 M (40 % – 80 %)").
            both = " – ".join(x for x in (i["low_label"], i["high_label"]) if x)
            ends = [(i["low"], both, HIGH_COLOR)]
        for j, (value, input_label, color) in enumerate(ends):
            # Both ends on one side of the base: two half-height bars, low above high.
            by, bh = (y + j * bar_h / 2, bar_h / 2) if same_side else (y, bar_h)
            x1, x2 = sorted((bx, X(value)))
            c.rect(x1, by, x2 - x1, bh, fill=color)
            text = end_text(value, input_label)
            if value < base:
                c.text_mid(x1 - 5, by + bh / 2, text, size=svg.SMALL, anchor="end")
            else:
                c.text_mid(x2 + 5, by + bh / 2, text, size=svg.SMALL)
    rows_bottom = top + rows_h
    c.line(bx, top - 6, bx, rows_bottom + 6, stroke=svg.TEXT, stroke_width=1.4)
    c.text(
        bx,
        rows_bottom + 22,
        t("base", lang, value=value_format(base)),
        anchor="middle",
        size=svg.SMALL + 1,
        bold=True,
    )
    _legend(
        c,
        [(t("low_input", lang), LOW_COLOR, False, "box"), (t("high_input", lang), HIGH_COLOR, False, "box")],
        PAD + label_w + 14,
        height - PAD,
        width - PAD,
    )
    return c.to_svg()
