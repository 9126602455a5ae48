import pytest

from configurator.drawings.charts import bar_chart_svg, line_chart_svg, tornado_svg
from configurator.drawings.fmt import format_money, money_axis_formatter

from .svgcheck import HOSTILE, SVG_NS, all_text, assert_hostile_escaped, parse_svg, texts

# docs/domain.md §8: buy 8 × A3 ≈ ¥24 M + ¥2 M/year O&M; lease ¥0.8–1.2 M / month.
MONTHS = range(0, 37)
BUY = [(m, 24_000_000 + m * 2_000_000 / 12) for m in MONTHS]  # month 36: 24 M + 6 M = 30 M
LEASE = [(m, m * 1_000_000) for m in MONTHS]  # month 36: 36 M


def tco_chart(lang, **kw):
    fmt = money_axis_formatter("CNY", lang, 36_000_000)
    return line_chart_svg(
        [
            {"name": "Buy", "points": BUY, "style": "solid", "color": "accent"},
            {"name": "Lease", "points": LEASE, "style": "dashed", "color": "#6f8fae"},
        ],
        "Month",
        "Cumulative cost",
        lang,
        markers=[{"x": 28.8, "y": 28_800_000, "label": "Break-even: month 29"}],
        y_format=fmt,
        x_ticks=range(0, 37, 6),
        **kw,
    )


def test_line_chart_axes_legend_end_values_and_marker():
    root = parse_svg(tco_chart("en", title="3-year TCO"))
    labels = texts(root)
    # y from 0 to 36 M → nice ticks 0, 10, 20, 30, 40 M
    for tick in ("¥0", "¥10.0 M", "¥20.0 M", "¥30.0 M", "¥40.0 M"):
        assert tick in labels
    assert [s for s in labels if s in {"0", "6", "12", "18", "24", "30", "36"}] == [
        "0",
        "6",
        "12",
        "18",
        "24",
        "30",
        "36",
    ]
    assert "¥30.0 M" in labels and "¥36.0 M" in labels  # end values: 30 M (buy), 36 M (lease)
    assert {"Buy", "Lease", "Month", "Cumulative cost", "Break-even: month 29", "3-year TCO"} <= set(labels)
    polylines = list(root.iter(f"{SVG_NS}polyline"))
    assert len(polylines) == 2
    assert polylines[1].get("stroke-dasharray")  # lease is dashed
    assert not polylines[0].get("stroke-dasharray")


def test_line_chart_in_chinese_uses_wan():
    root = parse_svg(tco_chart("zh-hans"))
    labels = texts(root)
    assert "¥1,000 万" in labels and "¥3,000 万" in labels and "¥3,600 万" in labels


def test_line_chart_end_labels_do_not_overlap():
    # Two series ending at the same value: their end labels are pushed 14 px apart.
    series = [{"name": "a", "points": [(0, 0), (10, 100)]}, {"name": "b", "points": [(0, 0), (10, 100)]}]
    root = parse_svg(line_chart_svg(series, "x", "y", "en"))
    ends = [
        float(el.get("y"))
        for el in root.iter(f"{SVG_NS}text")
        if "".join(el.itertext()) == "100" and el.get("font-weight")
    ]
    assert len(ends) == 2 and abs(ends[0] - ends[1]) >= 14


def test_line_chart_edge_cases():
    single = parse_svg(
        line_chart_svg([{"name": "one", "points": [(3, 5)]}], "Month", "Cost", "en", y_unit="¥")
    )
    assert len(list(single.iter(f"{SVG_NS}circle"))) == 1
    assert "Cost (¥)" in texts(single)
    empty = parse_svg(line_chart_svg([], "Month", "Cost", "zh-hans"))
    assert "暂无数据" in texts(empty)
    zeros = parse_svg(line_chart_svg([{"name": "z", "points": [(0, 0), (1, 0)]}], "x", "y", "en"))
    assert "z" in texts(zeros)
    nan = parse_svg(line_chart_svg([{"name": "n", "points": [(0, float("nan")), (1, 2)]}], "x", "y", "en"))
    assert "n" in texts(nan)
    negative = parse_svg(line_chart_svg([{"name": "s", "points": [(0, -5e6), (12, 3e6)]}], "x", "y", "en"))
    assert "s" in texts(negative)


def test_line_chart_escapes_hostile_text():
    svg = line_chart_svg(
        [{"name": HOSTILE, "points": [(0, 1), (1, 2)], "color": HOSTILE, "style": HOSTILE}],
        HOSTILE,
        HOSTILE,
        "en",
        y_unit=HOSTILE,
        markers=[{"x": 0.5, "label": HOSTILE, "color": HOSTILE}],
        title=HOSTILE,
    )
    assert_hostile_escaped(svg)
    assert HOSTILE in all_text(parse_svg(svg))


def cost_per_m(lang):
    return lambda v: format_money(v, "CNY", lang, decimals=2)


def test_bar_chart_rows_values_and_reference():
    rows = [
        {"label": "Self-hosted (buy)", "value": 4.1, "tone": "ok"},
        {"label": "Self-hosted (lease)", "value": 6.3},
        {"label": "Public API", "value": 12.4, "tone": "muted", "note": "$3 / $15"},
    ]
    root = parse_svg(bar_chart_svg(rows, "en", cost_per_m("en"), reference={"value": 12.4, "label": "API"}))
    labels = texts(root)
    assert {"Self-hosted (buy)", "¥4.10", "¥6.30", "¥12.40", "$3 / $15", "API ¥12.40"} <= set(labels)
    bars = [r for r in root.iter(f"{SVG_NS}rect") if r.get("height") == "26"]
    widths = [float(b.get("width")) for b in bars]
    # Bar lengths are proportional to the values: 4.1 / 12.4 of the longest.
    assert widths[0] / widths[2] == pytest.approx(4.1 / 12.4, rel=0.01)
    assert bars[0].get("fill") == "#1e7a46"
    assert any(el.get("stroke-dasharray") for el in root.iter(f"{SVG_NS}line"))


def test_bar_chart_edge_cases():
    zero = parse_svg(bar_chart_svg([{"label": "nothing", "value": 0}], "en", cost_per_m("en")))
    assert "¥0.00" in texts(zero)
    assert "No data" in texts(parse_svg(bar_chart_svg([], "en", cost_per_m("en"))))
    neg = parse_svg(
        bar_chart_svg(
            [{"label": "saving", "value": -2}, {"label": "cost", "value": 3}], "en", cost_per_m("en")
        )
    )
    assert "−¥2.00" in texts(neg)


def test_bar_chart_escapes_hostile_text():
    svg = bar_chart_svg(
        [{"label": HOSTILE, "value": 1, "note": HOSTILE, "tone": HOSTILE}],
        "en",
        lambda v: HOSTILE,
        reference={"value": 1, "label": HOSTILE},
        title=HOSTILE,
    )
    assert_hostile_escaped(svg)


SENSITIVITY = [
    {"label": "PUE", "low_value": 29.5e6, "high_value": 30.6e6, "low_label": "1.2", "high_label": "1.5"},
    {
        "label": "O&M per year",
        "low_value": 28e6,
        "high_value": 33e6,
        "low_label": "¥1 M",
        "high_label": "¥3 M",
    },
    {
        "label": "Utilisation",
        "low_value": 30e6,
        "high_value": 30e6,
        "low_label": "40 %",
        "high_label": "80 %",
    },
]


def test_tornado_sorted_by_swing_with_base_and_end_labels():
    fmt = money_axis_formatter("CNY", "en", 33e6)
    root = parse_svg(tornado_svg(SENSITIVITY, 30e6, "en", fmt))
    labels = texts(root)
    # O&M swings 5 M, PUE 1.1 M, utilisation 0: widest on top
    order = [s for s in labels if s in ("PUE", "O&M per year", "Utilisation")]
    assert order == ["O&M per year", "PUE", "Utilisation"]
    assert "Base ¥30.0 M" in labels
    assert "¥28.0 M (¥1 M)" in labels and "¥33.0 M (¥3 M)" in labels
    assert "¥30.0 M (40 % – 80 %)" in labels  # no swing: one label
    assert "Low input" in labels and "High input" in labels


def test_tornado_in_chinese_and_same_side_ends():
    fmt = money_axis_formatter("CNY", "zh-hans", 33e6)
    rows = [
        {
            "label": "折旧年限",
            "low_value": 31e6,
            "high_value": 32.5e6,
            "low_label": "3 年",
            "high_label": "5 年",
        }
    ]
    root = parse_svg(tornado_svg(rows, 30e6, "zh-hans", fmt))
    labels = texts(root)
    assert "基准 ¥3,000 万" in labels and "低值" in labels and "高值" in labels
    assert "¥3,100 万 (3 年)" in labels and "¥3,250 万 (5 年)" in labels
    # Both ends above the base: two half-height bars.
    halves = [r for r in root.iter(f"{SVG_NS}rect") if r.get("height") == "12" and r.get("width") != "12"]
    assert len(halves) == 2


def test_tornado_edge_cases_and_escaping():
    fmt = money_axis_formatter("CNY", "en", 1)
    assert "No data" in texts(parse_svg(tornado_svg([], 0, "en", fmt)))
    flat = [{"label": "x", "low_value": 0, "high_value": 0, "low_label": "", "high_label": ""}]
    assert "Base ¥0" in texts(parse_svg(tornado_svg(flat, 0, "en", fmt)))
    hostile = [
        {"label": HOSTILE, "low_value": 1, "high_value": 3, "low_label": HOSTILE, "high_label": HOSTILE}
    ]
    assert_hostile_escaped(tornado_svg(hostile, 2, "en", fmt, title=HOSTILE))


def test_line_chart_fractional_x_ticks_keep_their_decimals():
    root = parse_svg(line_chart_svg([{"name": "s", "points": [(0, 1), (1.5, 2)]}], "x", "y", "en"))
    labels = texts(root)
    assert "0.5" in labels and "1.5" in labels
    quarter = parse_svg(
        line_chart_svg(
            [{"name": "q", "points": [(0, 0), (1, 1)]}], "x", "y", "en", x_ticks=[0, 0.25, 0.5, 0.75, 1]
        )
    )
    assert {"0.25", "0.50", "0.75"} <= set(texts(quarter))
