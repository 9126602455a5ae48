"""Assertions every drawing must pass: well-formed, scalable, self-contained, escaped."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

SVG_NS = "{http://www.w3.org/2000/svg}"

# Text a customer or engineer could type into a name field.
HOSTILE = "<script>alert(1)</script> \"><img src=x onerror=alert(1)> & 'q'"


def parse_svg(svg: str) -> ET.Element:
    """Parse and check the invariants shared by all drawings; return the root."""
    root = ET.fromstring(svg)  # raises on malformed XML
    assert root.tag == f"{SVG_NS}svg"
    view_box = root.get("viewBox")
    assert view_box, "no viewBox: the drawing would not scale"
    x, y, w, h = (float(v) for v in view_box.split())
    assert (x, y) == (0, 0) and w > 0 and h > 0
    assert float(root.get("width")) == w and float(root.get("height")) == h
    assert "Noto Sans CJK SC" in root.get("font-family")
    assert_self_contained(svg)
    return root


def assert_self_contained(svg: str) -> None:
    """No reference that WeasyPrint or a browser would try to fetch."""
    for match in re.finditer(r"href\s*=\s*[\"']([^\"']*)", svg):
        assert match.group(1).startswith("#"), match.group(0)
    for match in re.finditer(r"url\(\s*([^)]*)\)", svg):
        assert match.group(1).strip("'\" ").startswith("#"), match.group(0)
    assert "<script" not in svg
    assert "<img" not in svg
    assert "<image" not in svg
    assert "<foreignObject" not in svg
    assert "@import" not in svg
    assert "http://" not in svg.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "https://" not in svg


def all_text(root: ET.Element) -> str:
    """Every string a reader sees (text elements and the title), joined by newlines."""
    return "\n".join(
        "".join(el.itertext()) for el in root.iter() if el.tag in (f"{SVG_NS}text", f"{SVG_NS}title")
    )


def texts(root: ET.Element) -> list[str]:
    """The content of each <text> element."""
    return ["".join(el.itertext()) for el in root.iter(f"{SVG_NS}text")]


def assert_hostile_escaped(svg: str) -> None:
    """The hostile string is escaped: the SVG still parses and no tag leaks out."""
    parse_svg(svg)  # also rejects <script, <img and external references
    assert "&lt;script&gt;" in svg
    assert "onerror" not in svg.replace("onerror=alert", "")  # only as escaped text
    assert '"><img' not in svg
