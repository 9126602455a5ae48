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


def test_a_label_is_drawn_nearest_its_own_point():
    """The finance preset's curve: concurrency 1, 2 and 4 at the same TPOT (one K3 request decodes in
    ≈ 67 ms whatever the batch up to a few), stacked close.  Each label drawn must sit nearer its own
    point than any other, or a reader attributes it to the wrong concurrency (it was "2" beside 1)."""
    front = [(67.0, 0.22), (67.2, 0.45), (67.4, 0.9), (75.6, 1.6), (91.0, 2.6), (119.4, 4.0)]
    points = [
        {"x": x, "y": y, "label": str(c), "highlight": True}
        for (x, y), c in zip(front, (1, 2, 4, 8, 16, 32), strict=True)
    ]
    root = ET.fromstring(scatter_svg(points, "TPOT (ms)", "tok/s per device", "en", height=360))
    dots = [
        (float(c.get("cx")), float(c.get("cy")))
        for c in circles(ET.tostring(root, encoding="unicode"))
        if c.get("r") == "6"
    ]
    drawn = {
        t.text: (float(t.get("x")), float(t.get("y")))
        for t in root.iter(f"{NS}text")
        if t.text in {"1", "2", "4", "8", "16", "32"}
    }
    assert {"1", "2", "4"} <= set(drawn)  # the crowded ones still get a label
    for label, (_tx, ty) in drawn.items():
        own = dots[[1, 2, 4, 8, 16, 32].index(int(label))]
        # the text's anchor point is within a label's width of the box; compare vertical distance,
        # the axis the stacked points share
        assert all(abs(ty - 4 - own[1]) < abs(ty - 4 - other[1]) for other in dots if other != own), label
