"""The scatter chart of the Pareto front."""

import math
import xml.etree.ElementTree as ET

from configurator.drawings.scatter import scatter_svg

NS = "{http://www.w3.org/2000/svg}"


def circles(svg: str) -> list[ET.Element]:
    return list(ET.fromstring(svg).iter(f"{NS}circle"))


def test_highlighted_points_are_larger_and_labelled():
    points = [
        {"x": 1000, "y": 10, "label": "#1 A3 × 4", "highlight": True},
        {"x": 2000, "y": 20, "label": "#2 A3 × 8", "highlight": True},
        {"x": 900, "y": 30, "label": "#3 A2 × 8", "highlight": False},
    ]
    svg = scatter_svg(
        points, "tokens/s", "CNY/M tokens", "en", title="Front", legend=("Pareto front", "Other")
    )
    root = ET.fromstring(svg)
    assert root.get("viewBox")
    radii = sorted(float(c.get("r")) for c in circles(svg))
    # two front points (r 6), one other point (r 4), plus the two legend dots
    assert radii.count(6.0) == 3 and radii.count(4.0) == 2
    text = " ".join(t.text or "" for t in root.iter(f"{NS}text"))
    assert "#1 A3 × 4" in text and "#2 A3 × 8" in text
    assert "#3 A2 × 8" not in text  # only the front is labelled


def test_points_keep_their_order_on_the_axes():
    svg = scatter_svg(
        [{"x": 100, "y": 1, "highlight": True}, {"x": 200, "y": 2, "highlight": True}], "x", "y", "en"
    )
    a, b = [c for c in circles(svg) if c.get("r") == "6"]
    assert float(a.get("cx")) < float(b.get("cx"))
    assert float(a.get("cy")) > float(b.get("cy"))  # higher cost is drawn higher up


def test_labels_are_escaped_and_bad_points_skipped():
    svg = scatter_svg(
        [
            {"x": 1, "y": 1, "label": "<script>&", "highlight": True},
            {"x": math.nan, "y": 1},
            {"x": "abc", "y": 2},
        ],
        "x",
        "y",
        "zh-hans",
    )
    ET.fromstring(svg)
    assert "<script>" not in svg
    assert len([c for c in circles(svg) if c.get("r") == "6"]) == 1


def test_no_points_says_so():
    svg = scatter_svg([], "x", "y", "zh-hans")
    assert "暂无数据" in svg
