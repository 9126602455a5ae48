"""Low-level SVG building blocks shared by every drawing.

The output is plain SVG 1.1 with presentation attributes only (no CSS, no
``<style>``, no markers, no patterns, no external references), because it is
embedded inline in the configurator page *and* rendered by WeasyPrint's own
SVG renderer in the PDF, which must not fetch anything.  Arrow heads and
hatching are therefore drawn as ordinary polygons and lines.

Text width is estimated, not measured (no font metrics on the server):
CJK characters take one em, Latin characters about 0.6 em in DejaVu Sans /
Noto Sans.  Layouts leave a little slack for that reason.
"""

from __future__ import annotations

import base64
import functools
import math
import re
import unicodedata
from collections.abc import Iterable
from typing import Any

from ..engine.names import display_text

FONT_FAMILY = "Noto Sans CJK SC, Noto Sans SC, DejaVu Sans, sans-serif"

# Palette: colour carries meaning only (ok / warning / error); the rest is calm.
TEXT = "#1d232b"
MUTED = "#5c6670"  # secondary text (axis ticks, notes)
GRID = "#d8dde3"
ACCENT = "#1f4e79"
OK = "#1e7a46"
WARNING = "#d99a00"
ERROR = "#b3261e"
PAPER = "#ffffff"
PANEL = "#f5f7f9"  # light fill for boxes

# Series colours for charts where several lines/bars carry no ok/error meaning.
SERIES_COLORS = ("#1f4e79", "#6f8fae", "#4d5966", "#a3b7cb")

FONT_SIZE = 13
SMALL = 11

_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
# Anything esc() would change: most values (numbers, colours, words) contain none, and one search
# costs less than the substitution and five replacements (a page's drawings escape some 1,300 values).
_NEEDS_ESCAPING = re.compile("[&<>\"'\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def esc(text: object) -> str:
    """Text made safe for XML content and attribute values.

    Escapes ``& < > " '`` and drops the control characters XML 1.0 forbids,
    so user-typed names can never break out of the drawing.
    """
    s = text if type(text) is str else str(text)
    if _NEEDS_ESCAPING.search(s) is None:
        return s
    s = _XML_INVALID.sub("", s)
    return (
        s.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("'", "&#39;")
    )


def num(value: float) -> str:
    """A coordinate with at most two decimals and no trailing zeros."""
    if not math.isfinite(value):
        value = 0.0
    if type(value) is float and value.is_integer():  # what the two decimals print, unformatted ("-0" → "0")
        return str(int(value))
    if type(value) is int:
        return str(value)
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


@functools.cache
def char_em(ch: str) -> float:
    """Estimated advance width of one character, in em (remembered per character)."""
    if unicodedata.east_asian_width(ch) in ("W", "F"):
        return 1.0
    if ch in "il.,:;'|!ıj·":
        return 0.3
    if ch in " ()[]/-ftrI":
        return 0.38
    if ch in "mwMW@%¥€":
        return 0.86
    if ch.isupper() or ch.isdigit():
        return 0.64
    return 0.56


def text_width(text: str, size: float = FONT_SIZE, bold: bool = False) -> float:
    """Estimated rendered width of ``text`` in user units at ``size`` px."""
    w = sum(char_em(c) for c in display_text(text)) * size
    return w * 1.06 if bold else w


def fit_text(text: str, max_width: float, size: float = FONT_SIZE, bold: bool = False) -> str:
    """``text`` shortened with "…" so that it fits in ``max_width`` (estimated)."""
    text = display_text(text)
    if text_width(text, size, bold) <= max_width:
        return text
    out = ""
    for ch in text:
        if text_width(out + ch + "…", size, bold) > max_width:
            break
        out += ch
    return out.rstrip() + "…"


_ATTRIBUTE_NAMES: dict[str, str] = {}  # keyword → attribute name (a drawing module uses a few dozen)


def attrs(**kw: object) -> str:
    """Keyword arguments as escaped XML attributes; ``_`` becomes ``-``, None is skipped."""
    parts = []
    for key, value in kw.items():
        if value is None:
            continue
        name = _ATTRIBUTE_NAMES.get(key)
        if name is None:
            name = _ATTRIBUTE_NAMES[key] = key.rstrip("_").replace("_", "-")
        if isinstance(value, float):
            value = num(value)
        parts.append(f'{name}="{esc(value)}"')
    return " ".join(parts)


class Canvas:
    """Collects SVG elements and serialises them with a scalable root element."""

    def __init__(self, width: float, height: float, title: str = "") -> None:
        self.width = width
        self.height = height
        self.title = title
        self.parts: list[str] = []

    # -- primitives ---------------------------------------------------------------
    def add(self, fragment: str) -> None:
        self.parts.append(fragment)

    def rect(self, x: float, y: float, w: float, h: float, **kw: object) -> None:
        kw.setdefault("fill", PANEL)
        self.add(
            f"<rect {attrs(x=float(x), y=float(y), width=float(max(w, 0)), height=float(max(h, 0)), **kw)}/>"
        )

    def line(self, x1: float, y1: float, x2: float, y2: float, **kw: object) -> None:
        kw.setdefault("stroke", GRID)
        self.add(f"<line {attrs(x1=float(x1), y1=float(y1), x2=float(x2), y2=float(y2), **kw)}/>")

    def polyline(self, points: Iterable[tuple[float, float]], **kw: object) -> None:
        kw.setdefault("fill", "none")
        pts = " ".join(f"{num(x)},{num(y)}" for x, y in points)
        self.add(f"<polyline {attrs(points=pts, **kw)}/>")

    def polygon(self, points: Iterable[tuple[float, float]], **kw: object) -> None:
        pts = " ".join(f"{num(x)},{num(y)}" for x, y in points)
        self.add(f"<polygon {attrs(points=pts, **kw)}/>")

    def circle(self, cx: float, cy: float, r: float, **kw: object) -> None:
        self.add(f"<circle {attrs(cx=float(cx), cy=float(cy), r=float(r), **kw)}/>")

    def text(
        self,
        x: float,
        y: float,
        content: object,
        *,
        size: float = FONT_SIZE,
        anchor: str = "start",
        fill: str = TEXT,
        bold: bool = False,
        **kw: object,
    ) -> None:
        """Text with its baseline at ``y`` (no dominant-baseline: WeasyPrint ignores it)."""
        self.add(
            f"<text {attrs(x=float(x), y=float(y), font_size=size, text_anchor=anchor if anchor != 'start' else None, fill=fill, font_weight='bold' if bold else None, **kw)}>"
            f"{esc(display_text(content))}</text>"
        )

    def text_mid(self, x: float, cy: float, content: object, *, size: float = FONT_SIZE, **kw: Any) -> None:
        """Text vertically centred on ``cy`` (baseline at cy + 0.35 em)."""
        self.text(x, cy + size * 0.35, content, size=size, **kw)

    def arrow(
        self,
        x1: float,
        y1: float,
        x2: float,
        y2: float,
        *,
        color: str = ACCENT,
        width: float = 1.6,
        dashed: bool = False,
        head: float = 8,
        both: bool = False,
    ) -> None:
        """A straight arrow from (x1, y1) to (x2, y2) with a filled polygon head."""
        length = math.hypot(x2 - x1, y2 - y1) or 1.0
        ux, uy = (x2 - x1) / length, (y2 - y1) / length
        # The shaft stops at the base of the head so the tip stays sharp.
        sx1, sy1 = (x1 + ux * head, y1 + uy * head) if both else (x1, y1)
        self.line(
            sx1,
            sy1,
            x2 - ux * head,
            y2 - uy * head,
            stroke=color,
            stroke_width=width,
            stroke_dasharray="6 4" if dashed else None,
        )
        self._head(x2, y2, ux, uy, head, color)
        if both:
            self._head(x1, y1, -ux, -uy, head, color)

    def _head(self, x: float, y: float, ux: float, uy: float, head: float, color: str) -> None:
        px, py = -uy, ux
        half = head * 0.5
        self.polygon(
            [
                (x, y),
                (x - ux * head + px * half, y - uy * head + py * half),
                (x - ux * head - px * half, y - uy * head - py * half),
            ],
            fill=color,
        )

    def label_beside_line(
        self,
        x1: float,
        y1: float,
        x2: float,
        y2: float,
        content: str,
        *,
        toward_x: float,
        size: float = SMALL,
        fill: str = TEXT,
        bold: bool = False,
    ) -> None:
        """A label next to the middle of a line, on the side facing ``toward_x``, never on it.

        The label's centre is pushed along the line's normal by the half-extent
        of its (estimated) box in that direction, plus a small gap.
        """
        length = math.hypot(x2 - x1, y2 - y1) or 1.0
        ux, uy = (x2 - x1) / length, (y2 - y1) / length
        nx, ny = -uy, ux
        mx, my = (x1 + x2) / 2, (y1 + y2) / 2
        if (toward_x - mx) * nx < 0 or (nx == 0 and toward_x < mx):
            nx, ny = -nx, -ny
        half_w, half_h = text_width(content, size, bold) / 2, size * 0.6
        offset = abs(nx) * half_w + abs(ny) * half_h + 4
        self.text_mid(
            mx + nx * offset, my + ny * offset, content, size=size, anchor="middle", fill=fill, bold=bold
        )

    def hatch(
        self, x: float, y: float, w: float, h: float, *, color: str, spacing: float = 6, width: float = 1.2
    ) -> None:
        """Diagonal hatching inside a rectangle, drawn as clipped lines (no <pattern>)."""
        if w <= 0 or h <= 0:
            return
        segs = []
        # In local coordinates (u rightwards, v upwards from the bottom edge) the
        # hatch lines are u − v = c; each starts on the bottom or left edge and
        # runs up-right until it leaves the rectangle.
        c = -h + spacing / 2
        while c < w:
            x_start, y_start = max(c, 0.0), max(-c, 0.0)
            run = min(w - x_start, h - y_start)
            if run > 0:
                segs.append((x + x_start, y + h - y_start, x + x_start + run, y + h - y_start - run))
            c += spacing
        path = " ".join(f"M{num(a)} {num(b)}L{num(cx)} {num(d)}" for a, b, cx, d in segs)
        if path:
            self.add(f"<path {attrs(d=path, stroke=color, stroke_width=width, fill='none')}/>")

    # -- output -------------------------------------------------------------------
    def to_svg(self) -> str:
        w, h = num(self.width), num(self.height)
        head = (
            f'<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="{w}" height="{h}" '
            f'viewBox="0 0 {w} {h}" role="img" {attrs(aria_label=self.title or None)} '
            f'font-family="{FONT_FAMILY}" font-size="{FONT_SIZE}">'
        )
        title = f"<title>{esc(self.title)}</title>" if self.title else ""
        background = f'<rect x="0" y="0" width="{w}" height="{h}" fill="{PAPER}"/>'
        return head + title + background + "".join(self.parts) + "</svg>"


def svg_to_data_uri(svg: str) -> str:
    """An SVG string as a ``data:image/svg+xml;base64,…`` URI (for an ``<img src>``)."""
    payload = base64.b64encode(svg.encode("utf-8")).decode("ascii")
    return f"data:image/svg+xml;base64,{payload}"


def empty_message(canvas: Canvas, message: str) -> None:
    """A centred grey note for a drawing with nothing to show."""
    canvas.text(canvas.width / 2, canvas.height / 2, message, anchor="middle", fill=MUTED)
