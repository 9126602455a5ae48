"""A one-line power diagram: A and B feeds → one PDU per feed in each rack → racks.

What the customer's facilities team checks: every rack hangs on both feeds
(A/B redundant, each sized for the full rack load), the breaker of each
drop, the kW per rack, and which racks exceed the cooling limit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..engine.vocabulary import drawing_text as t
from . import svg
from .fmt import format_number
from .svg import Canvas

PAD = 16
FEED_W, FEED_H = 150, 40
RACK_W, RACK_H, RACK_GAP = 104, 76, 14
PDU_W, PDU_H = 34, 22
FEED_A_COLOR = svg.ACCENT
FEED_B_COLOR = "#6f8fae"
_TONES = {"ok": svg.OK, "warning": svg.WARNING, "error": svg.ERROR}


def power_feed_svg(
    racks: Sequence[Mapping[str, Any]],
    lang: str,
    feeds: Mapping[str, str] | None = None,
    title: str = "",
) -> str:
    """A/B feeds along the top, one PDU per feed in each rack, the racks below.

    ``racks``: mappings ``{"name": str ("R01"), "kw": float (maximum input),
    "breaker": str ("63 A", the rating of each of the rack's A and B drops),
    "tone": "ok" | "warning" | "error" (optional, colours the rack's outline),
    "note": str (optional, e.g. "> 25 kW air-cooling limit")}``.
    ``feeds``: optional ``{"A": "2 × 400 A · 3-phase 380 V", "B": …}`` written
    under each feed's name.
    """
    items: list[dict[str, Any]] = [
        {
            "name": str(r.get("name", "") or ""),
            "kw": r.get("kw"),
            "breaker": str(r.get("breaker", "") or ""),
            "tone": _TONES.get(str(r.get("tone", "") or "")),
            "note": str(r.get("note", "") or ""),
        }
        for r in racks
    ]
    feeds = {str(k).upper(): str(v) for k, v in (feeds or {}).items()}
    feed_names = ("A", "B")
    feed_w = max(
        [FEED_W]
        + [svg.text_width(feeds.get(n, ""), svg.SMALL) + 20 for n in feed_names]
        + [svg.text_width(t("feed", lang, name=n), svg.FONT_SIZE, True) + 20 for n in feed_names]
    )
    n = max(len(items), 1)
    racks_x0 = PAD + feed_w + 40
    width = max(560, racks_x0 + n * RACK_W + (n - 1) * RACK_GAP + PAD)
    top = PAD + (26 if title else 0)
    bus_a = top + FEED_H / 2
    bus_b = top + FEED_H + 18 + FEED_H / 2
    pdu_y = bus_b + FEED_H / 2 + 40
    rack_y = pdu_y + PDU_H + 22
    height = rack_y + RACK_H + PAD
    c = Canvas(width, height, title=title or t("power_title", lang))
    if title:
        c.text(PAD, PAD + 14, svg.fit_text(title, width - 2 * PAD, 15, True), size=15, bold=True)

    last_rack_x = racks_x0 + (n - 1) * (RACK_W + RACK_GAP)
    bus_end = {"A": last_rack_x + RACK_W / 4 + 14, "B": last_rack_x + 3 * RACK_W / 4 + 14}
    for name, bus_y, color in (("A", bus_a, FEED_A_COLOR), ("B", bus_b, FEED_B_COLOR)):
        c.rect(PAD, bus_y - FEED_H / 2, feed_w, FEED_H, rx=5, fill=svg.PANEL, stroke=color, stroke_width=1.6)
        sub = feeds.get(name, "")
        c.text(PAD + 10, bus_y - (1 if sub else -5), t("feed", lang, name=name), bold=True, fill=color)
        if sub:
            c.text(
                PAD + 10,
                bus_y + 14,
                svg.fit_text(sub, feed_w - 16, svg.SMALL),
                size=svg.SMALL,
                fill=svg.MUTED,
            )
        if items:
            c.line(PAD + feed_w, bus_y, bus_end[name], bus_y, stroke=color, stroke_width=3)

    if not items:
        svg.empty_message(c, t("no_data", lang))
        return c.to_svg()

    for i, r in enumerate(items):
        rx = racks_x0 + i * (RACK_W + RACK_GAP)
        drops = (("A", rx + RACK_W / 4, bus_a, FEED_A_COLOR), ("B", rx + 3 * RACK_W / 4, bus_b, FEED_B_COLOR))
        for name, dx, bus_y, color in drops:
            # The drop from its bus to the PDU; a dot where it connects (a bare crossing does not).
            c.line(dx, bus_y, dx, pdu_y, stroke=color, stroke_width=1.6)
            c.circle(dx, bus_y, 3.5, fill=color)
            c.rect(dx - PDU_W / 2, pdu_y, PDU_W, PDU_H, rx=3, fill=svg.PAPER, stroke=color, stroke_width=1.4)
            c.text_mid(dx, pdu_y + PDU_H / 2, name, anchor="middle", size=svg.SMALL, bold=True, fill=color)
            c.line(dx, pdu_y + PDU_H, dx, rack_y, stroke=color, stroke_width=1.2)

        outline = r["tone"] or svg.TEXT
        c.rect(
            rx,
            rack_y,
            RACK_W,
            RACK_H,
            rx=4,
            fill=svg.PANEL,
            stroke=outline,
            stroke_width=2 if r["tone"] else 1.2,
        )
        c.text(
            rx + RACK_W / 2,
            rack_y + 18,
            svg.fit_text(r["name"], RACK_W - 10, svg.FONT_SIZE, True),
            anchor="middle",
            bold=True,
        )
        kw = r["kw"]
        if isinstance(kw, int | float) and kw == kw:
            c.text(
                rx + RACK_W / 2,
                rack_y + 36,
                f"{format_number(kw, 1)} kW",
                anchor="middle",
                fill=r["tone"] or svg.TEXT,
                bold=bool(r["tone"]),
            )
        if r["breaker"]:
            c.text(
                rx + RACK_W / 2,
                rack_y + 52,
                svg.fit_text(f"A/B {r['breaker']}", RACK_W - 8, svg.SMALL),
                anchor="middle",
                size=svg.SMALL,
                fill=svg.MUTED,
            )
        if r["note"]:
            c.text(
                rx + RACK_W / 2,
                rack_y + 68,
                svg.fit_text(r["note"], RACK_W - 8, svg.SMALL - 1),
                anchor="middle",
                size=svg.SMALL - 1,
                fill=r["tone"] or svg.MUTED,
            )
    return c.to_svg()
