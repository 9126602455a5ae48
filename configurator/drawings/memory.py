"""One rank's accelerator memory as a horizontal stacked bar.

The bar shows how the serving engine spends a device: weights, activation
peak, communication buffers, graph capture, KV cache and the part held back by
``gpu_memory_utilization``.  When the KV cache comes out negative (the model
does not fit), the demand runs past the device capacity and the overflow is
drawn in the error colour with "short by X GB".
"""

from __future__ import annotations

from collections.abc import Sequence

from ..engine.vocabulary import drawing_text as t
from . import svg
from .fmt import GB, format_bytes_gb, format_percent
from .svg import Canvas
from .ticks import nice_ticks

Segment = tuple[str, str, float]  # (key, label, bytes); label "" → the standard word for key

SEGMENT_COLORS = {
    "weights": svg.ACCENT,
    "activations": "#4a78a6",
    "buffers": "#7f9fc0",
    "graph": "#aec3d8",
    "kv_cache": svg.OK,
    "reserved": "#eef1f4",
}
_DARK_FILLS = {svg.ACCENT, "#4a78a6", svg.OK, svg.ERROR}
_OTHER_COLORS = ("#8d99a6", "#b6bfc8", "#5c6670")

WIDTH = 760
PAD = 16
BAR_H = 36


def memory_bar_svg(segments: Sequence[Segment], total_bytes: float, lang: str, title: str = "") -> str:
    """A stacked bar of one rank's memory against the device capacity ``total_bytes``.

    ``segments`` is a sequence of ``(key, label, bytes)`` in drawing order, keys
    ``weights``, ``activations``, ``buffers``, ``graph``, ``kv_cache``,
    ``reserved`` (others are drawn in neutral greys); an empty label takes the
    standard word for the key in ``lang``.  A negative ``kv_cache`` means the
    rest does not fit: the bar then runs past the capacity line and the excess
    is marked "short by X GB".  Values are labelled in decimal GB.
    """
    items = [(str(k), str(label) or _default_label(str(k), lang), float(b or 0)) for k, label, b in segments]
    total = float(total_bytes or 0)
    heading = title or t("memory_title", lang)
    legend_rows = _legend_layout(items, total, lang)
    has_title = bool(title)
    top = PAD + (24 if has_title else 0)
    bar_y = top + 22  # capacity label row above the bar
    axis_y = bar_y + BAR_H + 18
    legend_y = axis_y + 22
    height = legend_y + len(legend_rows) * 22 + PAD - 6
    c = Canvas(WIDTH, height, title=heading)
    if has_title:
        c.text(PAD, PAD + 14, svg.fit_text(title, WIDTH - 2 * PAD, 15, True), size=15, bold=True)

    if total <= 0 and not any(b > 0 for _, _, b in items):
        svg.empty_message(c, t("no_data", lang))
        return c.to_svg()

    shortfall = -sum(b for k, _, b in items if b < 0 and k == "kv_cache")
    positives = [(k, label, b) for k, label, b in items if b > 0]
    demand = sum(b for _, _, b in positives)
    # Consistent inputs give demand = total + shortfall; take the larger so that
    # inconsistent ones (rounding, a caller's mistake) still draw inside the box.
    scale_max = max(total + shortfall, demand, 1.0)

    short_text = t("short_by", lang, value=format_bytes_gb(shortfall)) if shortfall > 0 else ""
    right_margin = svg.text_width(short_text, svg.FONT_SIZE, True) + 10 if short_text else 0
    x0, bar_w = PAD, WIDTH - 2 * PAD - right_margin

    def xpos(value: float) -> float:
        return x0 + bar_w * value / scale_max

    # Segments, left to right.
    cap_x = xpos(total)
    cursor = 0.0
    other = 0
    for key, label, b in positives:
        color = SEGMENT_COLORS.get(key)
        if color is None:
            color = _OTHER_COLORS[other % len(_OTHER_COLORS)]
            other += 1
        sx, ex = xpos(cursor), xpos(cursor + b)
        c.rect(sx, bar_y, ex - sx, BAR_H, fill=color, stroke=svg.PAPER, stroke_width=1)
        if key == "reserved":
            c.hatch(sx, bar_y, ex - sx, BAR_H, color=svg.GRID, spacing=7)
        # Text only over the part inside the device: the overflow is drawn on top.
        _segment_text(c, sx, min(ex, cap_x) if shortfall > 0 else ex, bar_y, label, b, color)
        cursor += b

    # Overflow past the device: the part of the demand the device cannot hold.
    if shortfall > 0 and total > 0:
        end_x = xpos(total + shortfall)
        c.rect(cap_x, bar_y, end_x - cap_x, BAR_H, fill="#f6dcda", stroke=svg.ERROR, stroke_width=1.5)
        c.hatch(cap_x, bar_y, end_x - cap_x, BAR_H, color=svg.ERROR, spacing=6)
        c.text_mid(end_x + 8, bar_y + BAR_H / 2, short_text, fill=svg.ERROR, bold=True)

    # Outline of the device, capacity line and label.
    if total > 0:
        c.rect(x0, bar_y, cap_x - x0, BAR_H, fill="none", stroke=svg.TEXT, stroke_width=1)
        c.line(cap_x, bar_y - 8, cap_x, bar_y + BAR_H + 6, stroke=svg.TEXT, stroke_width=2)
        cap_label = t("device_capacity", lang, value=format_bytes_gb(total))
        room_left = cap_x - x0 > svg.text_width(cap_label, svg.SMALL) + 6
        c.text(
            cap_x - 5 if room_left else cap_x + 5,
            bar_y - 8,
            cap_label,
            anchor="end" if room_left else "start",
            size=svg.SMALL,
        )

    # GB axis under the bar.
    ticks = [tick for tick in nice_ticks(0, scale_max / GB, 9) if tick * GB <= scale_max * 1.0001]
    for i, tick in enumerate(ticks):
        tx = xpos(tick * GB)
        c.line(tx, bar_y + BAR_H, tx, bar_y + BAR_H + 4, stroke=svg.MUTED)
        text = f"{tick:g} GB" if i == len(ticks) - 1 else f"{tick:g}"
        c.text(tx, axis_y, text, anchor="middle", size=svg.SMALL - 1, fill=svg.MUTED)

    # Legend: swatch, label, GB and share of the device.
    for row_index, row in enumerate(legend_rows):
        y = legend_y + row_index * 22
        for x, key, _label, b, text in row:
            color = SEGMENT_COLORS.get(key, _OTHER_COLORS[0])
            negative = b < 0
            c.rect(
                x,
                y - 10,
                12,
                12,
                fill=svg.ERROR if negative else color,
                stroke=svg.MUTED if key == "reserved" else None,
                stroke_width=0.8 if key == "reserved" else None,
            )
            c.text(
                x + 17, y, text, size=svg.SMALL + 1, fill=svg.ERROR if negative else svg.TEXT, bold=negative
            )
    return c.to_svg()


def memory_segments(rank: object) -> list[Segment]:
    """The bar's segments from the engine's per-rank memory (``RankMemory``), in drawing order.

    Read by attribute name so this package does not depend on the engine;
    pass ``rank.device_bytes`` as ``total_bytes``.  Labels are left empty so
    the bar uses the standard words of the language it is drawn in.
    """
    fields = (
        ("weights", "weights_bytes"),
        ("activations", "activation_bytes"),
        ("buffers", "buffer_bytes"),
        ("graph", "graph_bytes"),
        ("kv_cache", "kv_cache_bytes"),
        ("reserved", "free_bytes"),
    )
    return [(key, "", float(getattr(rank, attr, 0) or 0)) for key, attr in fields]


def _default_label(key: str, lang: str) -> str:
    try:
        return t(key, lang)
    except KeyError:
        return key


def _segment_text(c: Canvas, sx: float, ex: float, y: float, label: str, b: float, color: str) -> None:
    """The value (and, if room, the label) centred inside a segment."""
    width = ex - sx
    value = format_bytes_gb(b)
    fill = svg.PAPER if color in _DARK_FILLS else svg.TEXT
    full = f"{label} {value}"
    if svg.text_width(full, svg.SMALL + 1) + 10 <= width:
        c.text_mid((sx + ex) / 2, y + BAR_H / 2, full, size=svg.SMALL + 1, anchor="middle", fill=fill)
    elif svg.text_width(value, svg.SMALL) + 6 <= width:
        c.text_mid((sx + ex) / 2, y + BAR_H / 2, value, size=svg.SMALL, anchor="middle", fill=fill)


def _share(fraction: float) -> str:
    """A share of the device: a part too small to round to 1 % says so ("< 1 %"), never "0 %"."""
    if 0 < fraction < 0.005:
        return "< 1 %"
    return format_percent(fraction)


def _legend_layout(items: list[tuple[str, str, float]], total: float, lang: str) -> list[list[tuple]]:
    """Legend entries flowed into rows that fit the drawing's width."""
    rows: list[list[tuple]] = [[]]
    x: float = PAD
    for key, label, b in items:
        share = f" ({_share(b / total)})" if total > 0 and b >= 0 else ""
        text = f"{label} {format_bytes_gb(b)}{share}"
        if b < 0:
            text = f"{label} {format_bytes_gb(b)} ({t('does_not_fit', lang)})"
        w = 17 + svg.text_width(text, svg.SMALL + 1) + 22
        if rows[-1] and x + w > WIDTH - PAD:
            rows.append([])
            x = PAD
        rows[-1].append((x, key, label, b, text))
        x += w
    return rows if rows[0] else []
