"""Rack elevations: one rack as a standalone SVG (front view, U1 at the bottom), drawn from the
engine's :class:`RackLayout` (``configurator/engine/racks.py`` places the devices)."""

from __future__ import annotations

from xml.sax.saxutils import escape as _xml_escape

from configurator.engine.vocabulary import is_zh

from ..engine.formatting import format_number
from ..engine.names import display_text
from ..engine.types import RackLayout
from ..engine.vocabulary import group_short

FONT = "Noto Sans CJK SC, DejaVu Sans, sans-serif"
_FILL = {
    "server": ("#dbe6f4", "#44648c"),
    "switch": ("#dcefd9", "#3f7a3a"),
    "pdu": ("#f6e7c8", "#9a7426"),
    "blank": ("#ececec", "#a0a0a0"),
}
_UNIT_H = 16
_LEGEND_W = 30
_RACK_W = 290
_PAD = 12
_HEAD_H = 36
_FOOT_H = 44


def _text_width(text: str, size: float) -> float:
    """Rough rendered width: CJK glyphs are one em, Latin ≈ 0.58 em."""
    return sum(size if ord(c) >= 0x2E80 else size * 0.58 for c in text)


#: The smallest type a rack label is drawn in: 8 px stays legible on screen and in the PDF.
MIN_LABEL_PX = 8.0


def _fit_label(text: str, width: float, size: float) -> tuple[str, float]:
    """The label and its type size: shrunk to fit, never below :data:`MIN_LABEL_PX`.

    A label still too wide at the minimum keeps its end (the unit number and its role, e.g.
    ``#12（集群，脊）``) and loses the middle of the model name to an ellipsis; the full name is
    in the slot's ``<title>`` and in the bill of materials.
    """
    w = _text_width(text, size)
    if w <= width:
        return text, size
    scaled = size * width / w
    if scaled >= MIN_LABEL_PX:
        return text, scaled
    cut = text.find(" #") if " #" in text else len(text) // 2
    head, tail = text[:cut], text[cut:]
    while head and _text_width(head + "…" + tail, MIN_LABEL_PX) > width:
        head = head[:-1]
    if not head:  # even the tail alone is too wide: keep its start
        while tail and _text_width(tail + "…", MIN_LABEL_PX) > width:
            tail = tail[:-1]
        return tail + "…", MIN_LABEL_PX
    return head.rstrip() + "…" + tail, MIN_LABEL_PX


def escape(text: object) -> str:
    """Text for the drawing: emoji dropped (fonts without them draw boxes), XML-escaped."""
    return _xml_escape(display_text(text))


def _attr(value: object) -> str:
    return _xml_escape(display_text(value), {'"': "&quot;"})


def rack_elevation_svg(rack: RackLayout, lang: str = "en") -> str:
    """Draw one rack as a standalone SVG document (front view, U1 at the bottom).

    Inline attributes only: the web page and the PDF embed the same markup.
    """
    zh = is_zh(lang.lower())
    h_units = rack.rack_units
    frame_x = _PAD + _LEGEND_W
    frame_y = _HEAD_H
    width = frame_x + _RACK_W + _PAD
    height = frame_y + h_units * _UNIT_H + _FOOT_H
    title = (f"机柜 {rack.name}" if zh else f"Rack {rack.name}") + (
        ("（网络）" if zh else " (network)") if rack.kind == "network" else ""
    )
    groups = (
        "、".join(group_short(g, "zh") for g in rack.groups)
        if zh
        else ", ".join(group_short(g, "en") for g in rack.groups)
    )

    out: list[str] = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{_attr(title)}" '
        f'font-family="{FONT}">',
        f"<title>{escape(title)}</title>",
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="#ffffff"/>',
        f'<text x="{frame_x}" y="{frame_y - 18}" font-size="13" font-weight="bold" fill="#1f2933">'
        f"{escape(title)}</text>",
    ]
    if groups:
        out.append(
            f'<text x="{frame_x + _RACK_W}" y="{frame_y - 18}" font-size="10" fill="#52606d" '
            f'text-anchor="end">{escape(groups)}</text>'
        )
    out.append(
        f'<text x="{frame_x - 4}" y="{frame_y - 4}" font-size="8" fill="#7b8794" text-anchor="end">U</text>'
    )

    # Rack body and unit grid.
    out.append(
        f'<rect x="{frame_x}" y="{frame_y}" width="{_RACK_W}" height="{h_units * _UNIT_H}" '
        f'fill="#fafafa" stroke="#323f4b" stroke-width="2"/>'
    )
    # One path for the unit grid, and U numbers at 1, every fifth U and the top:
    # the same reading aid at a fraction of the elements (the PDF draws 8+ racks).
    grid = "".join(f"M{frame_x} {frame_y + (h_units - u) * _UNIT_H}h{_RACK_W}" for u in range(1, h_units))
    out.append(f'<path d="{grid}" stroke="#e4e7eb" stroke-width="0.5" fill="none"/>')
    for u in range(1, h_units + 1):
        if u != 1 and u % 5 and u != h_units:
            continue
        y = frame_y + (h_units - u) * _UNIT_H
        out.append(
            f'<text x="{frame_x - 5}" y="{y + _UNIT_H / 2 + 3}" font-size="8" fill="#7b8794" '
            f'text-anchor="end">{u}</text>'
        )

    # Devices.
    inner_x = frame_x + 3
    inner_w = _RACK_W - 6
    for slot in rack.slots:
        y = frame_y + (h_units - slot.top_u) * _UNIT_H + 1
        h = slot.height_u * _UNIT_H - 2
        fill, stroke = _FILL.get(slot.kind, _FILL["blank"])
        label = slot.label_zh if zh and slot.label_zh else slot.label
        out.append(f"<g><title>{escape(label)}</title>")
        out.append(
            f'<rect x="{inner_x}" y="{y}" width="{inner_w}" height="{h}" rx="2" ry="2" '
            f'fill="{fill}" stroke="{stroke}" stroke-width="1"/>'
        )
        show_kw = slot.kw > 0 and slot.kind in ("server", "switch")
        kw_text = f"{format_number(slot.kw, 2 if slot.kw < 1 else 1)} kW" if show_kw else ""
        if slot.height_u >= 3:
            shown, size = _fit_label(label, inner_w - 12, 11)
            cy = y + h / 2
            out.append(
                f'<text x="{inner_x + inner_w / 2}" y="{cy - 2}" font-size="{size:.1f}" fill="#1f2933" '
                f'text-anchor="middle">{escape(shown)}</text>'
            )
            if kw_text:
                out.append(
                    f'<text x="{inner_x + inner_w / 2}" y="{cy + 12}" font-size="9" fill="#52606d" '
                    f'text-anchor="middle">{escape(kw_text)}</text>'
                )
        else:
            kw_w = _text_width(kw_text, 8) + 8 if kw_text else 0
            shown, size = _fit_label(label, inner_w - 10 - kw_w, 10 if slot.height_u >= 2 else 9)
            cy = y + h / 2 + size * 0.35
            out.append(
                f'<text x="{inner_x + 5}" y="{cy:.1f}" font-size="{size:.1f}" fill="#1f2933">'
                f"{escape(shown)}</text>"
            )
            if kw_text:
                out.append(
                    f'<text x="{inner_x + inner_w - 5}" y="{cy:.1f}" font-size="8" fill="#52606d" '
                    f'text-anchor="end">{escape(kw_text)}</text>'
                )
        out.append("</g>")

    # Footer: rack load, U used, feeds, cooling.
    fy = frame_y + h_units * _UNIT_H + 16
    over = rack.exceeds_cooling
    load_colour = "#b44d12" if over else "#1f2933"
    if zh:
        line1 = f"总功耗 {format_number(rack.kw, 1)} kW · 已用 {rack.units_used}/{rack.rack_units}U"
        line2 = f"{rack.feed.description_zh} 断路器"
        if over:
            line2 += f" · 超过风冷上限 {rack.cooling_limit_kw:g} kW"
    else:
        line1 = f"{format_number(rack.kw, 1)} kW · {rack.units_used}/{rack.rack_units} U used"
        line2 = f"Feeds {rack.feed.description_en}"
        if over:
            line2 += f" · above {rack.cooling_limit_kw:g} kW cooling limit"
    out.append(
        f'<text x="{frame_x}" y="{fy}" font-size="11" font-weight="bold" fill="{load_colour}">'
        f"{escape(line1)}</text>"
    )
    line2, size2 = _fit_label(line2, _RACK_W, 9.5)
    out.append(
        f'<text x="{frame_x}" y="{fy + 15}" font-size="{size2:.1f}" '
        f'fill="{load_colour if over else "#52606d"}">{escape(line2)}</text>'
    )
    out.append("</svg>")
    return "\n".join(out)
