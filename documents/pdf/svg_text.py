"""SVG text in the proposal's drawings laid out as one run instead of letter by letter.

WeasyPrint 70 draws an SVG ``<text>`` one letter at a time (``weasyprint/svg/text.py``,
``text()``: one Pango layout per character, so that ``x``/``y``/``dx``/``dy``/``rotate``
lists can place every glyph).  The drawings of a 16-node proposal (rack elevations,
topology, power one-line, charts) hold about 3,800 letters in 360 ``<text>`` elements,
and those 3,800 layouts were the largest single cost of painting the PDF (≈ 0.5 s of
the 3 s the render takes under cProfile).

None of the project's drawings positions single glyphs (``configurator/drawings`` writes
one ``x`` and one ``y`` per text, no ``rotate``, ``letter-spacing`` or ``textLength``), so
for such a text the whole string is laid out once, where WeasyPrint would have put its
first letter, and drawn as one glyph run.  The run is shaped as a whole (kerning kept) and
its logical box — what WeasyPrint's ``text-anchor`` handling in ``draw_node`` aligns — is
the run's.  Any text that does use per-glyph positioning goes to WeasyPrint's own function
unchanged.  :func:`install` is called before each render and is idempotent; it does
nothing on a WeasyPrint other than the version pinned in ``requirements.txt``, whose
``text()`` this mirrors.
"""

from __future__ import annotations

from math import inf

PINNED_VERSION = "70.0"

_original = None


def _single(value: str | None) -> bool:
    return value is None or len(value.replace(",", " ").split()) <= 1


def _simple(node) -> bool:
    """True when the text places no glyph on its own (at most one x, y, dx, dy; nothing else)."""
    attrib = node.attrib
    if any(name in attrib for name in ("rotate", "textLength", "letter-spacing", "lengthAdjust")):
        return False
    return all(_single(attrib.get(name)) for name in ("x", "y", "dx", "dy"))


def _run_text(svg, node, font_size):
    """``weasyprint.svg.text.text`` for a text without per-glyph positions: one layout, one run."""
    if not node.text or not _simple(node):
        return _original(svg, node, font_size)

    from weasyprint.css.properties import INITIAL_VALUES
    from weasyprint.draw.text import draw_emojis, draw_first_line
    from weasyprint.matrix import Matrix
    from weasyprint.svg.bounding_box import extend_bounding_box
    from weasyprint.svg.text import Style, TextBox
    from weasyprint.svg.utils import normalize, size
    from weasyprint.text.line_break import split_first_line

    # The style exactly as WeasyPrint's text() builds it.
    style = Style()
    style.update(INITIAL_VALUES)
    style.font_config = svg.font_config
    style["font_family"] = [font.strip("\"'") for font in node.get("font-family", "sans-serif").split(",")]
    style["font_style"] = node.get("font-style", "normal")
    style["font_weight"] = node.get("font-weight", 400)
    style["font_size"] = font_size
    if node.get("direction") in ("ltr", "rtl"):
        style["direction"] = node.get("direction")
    if style["font_weight"] == "normal":
        style["font_weight"] = 400
    elif style["font_weight"] == "bold":
        style["font_weight"] = 700
    else:
        try:
            style["font_weight"] = int(style["font_weight"])
        except ValueError:
            style["font_weight"] = 400

    def first(name: str, reference: float) -> float | None:
        if name not in node.attrib:
            return None
        values = normalize(node.attrib[name]).strip().split(" ")
        return size(values[0], font_size, reference) if values and values[0] else None

    x = first("x", svg.inner_width)
    y = first("y", svg.inner_height)
    dx = first("dx", svg.inner_width)
    dy = first("dy", svg.inner_height)

    layout, _, _, width, height, baseline = split_first_line(node.text, style, svg.context, inf, 0)

    # Vertical alignment as WeasyPrint's text() computes it.
    ascent, descent = font_size * 0.8, font_size * 0.2
    y_align = 0.0
    display_anchor = node.get("display-anchor")
    alignment_baseline = node.get("dominant-baseline", node.get("alignment-baseline"))
    if display_anchor == "middle":
        y_align = -height / 2
    elif display_anchor == "top":
        pass
    elif display_anchor == "bottom":
        y_align = -height
    elif alignment_baseline in ("central", "middle"):
        y_align = (ascent + descent) / 2 - descent
    elif alignment_baseline in ("text-before-edge", "before_edge", "top", "hanging", "text-top"):
        y_align = ascent
    elif alignment_baseline in ("text-after-edge", "after_edge", "bottom", "text-bottom"):
        y_align = -descent

    # The first letter's position, as WeasyPrint's letter loop computes it; the run follows it.
    if x:
        svg.cursor_d_position[0] = 0
    if y:
        svg.cursor_d_position[1] = 0
    svg.cursor_d_position[0] += dx or 0
    svg.cursor_d_position[1] += dy or 0
    x = svg.cursor_position[0] if x is None else x
    y = svg.cursor_position[1] if y is None else y
    svg.cursor_position = x + width, y
    x_position = x + svg.cursor_d_position[0]
    y_position = y + svg.cursor_d_position[1] + y_align
    points = ((x_position, y_position - baseline), (x_position + width, y_position - baseline + height))
    node.text_bounding_box = extend_bounding_box(node.text_bounding_box, points)

    svg.stream.push_state()
    fill, stroke = svg.set_graphical_state(node, font_size)
    svg.stream.begin_text()
    layout.reactivate(style)
    svg.fill_stroke(fill, stroke, text=True)
    text_box = TextBox(layout, style)
    text_box.baseline = baseline
    emojis = draw_first_line(
        svg.stream, text_box, "none", "none", Matrix(a=1, d=-1, e=x_position, f=y_position)
    )
    svg.stream.end_text()
    svg.stream.pop_state()
    draw_emojis(svg.stream, style, x, y, emojis)


def install() -> bool:
    """Route WeasyPrint's SVG ``text``/``tspan`` through :func:`_run_text` (True when installed)."""
    global _original
    import weasyprint
    import weasyprint.svg as svg_module

    if _original is not None:
        return True
    if weasyprint.__version__ != PINNED_VERSION:
        return False
    _original = svg_module.text
    # draw_node compares TAGS.get(tag) with the module's ``text`` to apply text-anchor: replace both.
    svg_module.text = _run_text
    for tag, function in list(svg_module.TAGS.items()):
        if function is _original:
            svg_module.TAGS[tag] = _run_text
    return True
