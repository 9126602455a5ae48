from configurator.drawings.power_feed import power_feed_svg

from .svgcheck import HOSTILE, SVG_NS, all_text, assert_hostile_escaped, parse_svg, texts

# docs/domain.md §7: two A3 per rack = 2 × 16.2 kW = 32.4 kW, beyond ≈25 kW air cooling.
RACKS = [
    {"name": f"R0{i}", "kw": 32.4, "breaker": "63 A", "tone": "warning", "note": "> 25 kW air"}
    for i in range(1, 9)
] + [{"name": "N01", "kw": 4.2, "breaker": "16 A"}]


def test_every_rack_hangs_on_both_feeds():
    root = parse_svg(power_feed_svg(RACKS, "en", feeds={"A": "2 × 400 A · 3-phase 380 V", "b": "2 × 400 A"}))
    labels = texts(root)
    assert {"Feed A", "Feed B", "2 × 400 A · 3-phase 380 V", "2 × 400 A"} <= set(labels)
    assert labels.count("A") == 9 and labels.count("B") == 9  # one PDU per feed per rack
    assert labels.count("32.4 kW") == 8 and "4.2 kW" in labels
    assert labels.count("A/B 63 A") == 8 and "A/B 16 A" in labels
    # One junction dot per drop: 9 racks × 2 feeds
    assert len(list(root.iter(f"{SVG_NS}circle"))) == 18
    # Racks over the cooling limit are outlined in the warning colour.
    warned = [r for r in root.iter(f"{SVG_NS}rect") if r.get("stroke") == "#d99a00"]
    assert len(warned) == 8


def test_chinese_and_single_rack():
    root = parse_svg(power_feed_svg([{"name": "R01", "kw": 16.2, "breaker": "32 A"}], "zh-hans"))
    text = all_text(root)
    assert "A 路供电" in text and "B 路供电" in text and "16.2 kW" in text


def test_no_racks_and_missing_values():
    assert "No data" in texts(parse_svg(power_feed_svg([], "en")))
    root = parse_svg(power_feed_svg([{"name": "R01"}], "en"))
    assert "R01" in texts(root)


def test_hostile_text_is_escaped():
    svg = power_feed_svg(
        [{"name": HOSTILE, "kw": 1, "breaker": HOSTILE, "note": HOSTILE, "tone": HOSTILE}],
        "en",
        feeds={"A": HOSTILE},
        title=HOSTILE,
    )
    assert_hostile_escaped(svg)
