from configurator.drawings.memory import memory_bar_svg

from .svgcheck import HOSTILE, SVG_NS, all_text, assert_hostile_escaped, parse_svg, texts

GB = 10**9

# A 64 GB A3 logical NPU at gpu_memory_utilization 0.9 (docs/domain.md §3, §5):
# reserved = 64 × 0.1 = 6.4 GB; usable 57.6 GB; KV = 57.6 − 30.2 − 2.1 − 1.6 − 1.2 = 22.5 GB.
FITS = [
    ("weights", "", 30.2 * GB),
    ("activations", "", 2.1 * GB),
    ("buffers", "", 1.6 * GB),
    ("graph", "", 1.2 * GB),
    ("kv_cache", "", 22.5 * GB),
    ("reserved", "", 6.4 * GB),
]
# Weights of 55 GB on the same device: KV = 57.6 − 55 − 3.1 − 1.6 − 2.3 = −4.4 GB.
SHORT = [
    ("weights", "", 55.0 * GB),
    ("activations", "", 3.1 * GB),
    ("buffers", "", 1.6 * GB),
    ("graph", "", 2.3 * GB),
    ("kv_cache", "", -4.4 * GB),
    ("reserved", "", 6.4 * GB),
]


def test_fitting_bar_labels_every_segment_in_english():
    root = parse_svg(memory_bar_svg(FITS, 64 * GB, "en", title="Decode group, per rank"))
    text = all_text(root)
    for word in ("Weights", "Activations", "KV cache", "Reserved", "Graph capture", "Comm. buffers"):
        assert word in text
    assert "Weights 30.2 GB (47 %)" in texts(root)  # 30.2 / 64 = 47.2 %
    assert "KV cache 22.5 GB (35 %)" in texts(root)  # 22.5 / 64 = 35.2 %
    assert "Device memory 64.0 GB" in texts(root)
    assert "Decode group, per rank" in texts(root)
    assert "Short by" not in text


def test_chinese_words_from_the_glossary():
    root = parse_svg(memory_bar_svg(FITS, 64 * GB, "zh-hans"))
    text = all_text(root)
    for word in ("权重", "KV 缓存", "显存容量 64.0 GB", "预留"):
        assert word in text


def test_caller_labels_override_the_defaults():
    segments = [("weights", "Gewichte", 10 * GB), ("kv_cache", "KV", 5 * GB)]
    text = all_text(parse_svg(memory_bar_svg(segments, 16 * GB, "en")))
    assert "Gewichte 10.0 GB" in text and "KV 5.0 GB" in text


def test_negative_kv_is_drawn_past_the_capacity_in_the_error_colour():
    svg = memory_bar_svg(SHORT, 64 * GB, "en")
    root = parse_svg(svg)
    assert "Short by 4.4 GB" in texts(root)
    assert "KV cache −4.4 GB (does not fit)" in texts(root)
    # The overflow rectangle starts at the capacity line and is outlined in the error colour.
    overflow = [r for r in root.iter(f"{SVG_NS}rect") if r.get("stroke") == "#b3261e"]
    assert len(overflow) == 1
    capacity_line = [ln for ln in root.iter(f"{SVG_NS}line") if ln.get("stroke-width") == "2"]
    assert len(capacity_line) == 1
    assert float(overflow[0].get("x")) == float(capacity_line[0].get("x1"))
    # 4.4 GB of a 68.4 GB scale is narrower than 64 GB of it: 4.4 / 64 of the device box
    device_box = [r for r in root.iter(f"{SVG_NS}rect") if r.get("fill") == "none"][0]
    ratio = float(overflow[0].get("width")) / float(device_box.get("width"))
    assert abs(ratio - 4.4 / 64) < 0.01


def test_negative_kv_in_chinese():
    text = all_text(parse_svg(memory_bar_svg(SHORT, 64 * GB, "zh-hans")))
    assert "缺口 4.4 GB" in text
    assert "放不下" in text


def test_zero_segments_and_zero_capacity():
    zeros = [("weights", "", 0), ("kv_cache", "", 0), ("reserved", "", 0)]
    root = parse_svg(memory_bar_svg(zeros, 64 * GB, "en"))
    assert "Weights 0.0 GB (0 %)" in texts(root)
    root = parse_svg(memory_bar_svg([], 0, "zh-hans"))
    assert "暂无数据" in all_text(root)
    root = parse_svg(memory_bar_svg(zeros, 0, "en"))
    assert "No data" in all_text(root)


def test_unknown_segment_key_is_drawn_in_a_neutral_colour():
    segments = [("weights", "", 10 * GB), ("vision_encoder", "MoonViT", 0.8 * GB)]
    text = all_text(parse_svg(memory_bar_svg(segments, 16 * GB, "en")))
    assert "MoonViT 0.8 GB" in text


def test_hostile_title_and_labels_are_escaped():
    segments = [("weights", HOSTILE, 10 * GB), ("kv_cache", HOSTILE, 5 * GB)]
    svg = memory_bar_svg(segments, 16 * GB, "en", title=HOSTILE)
    assert_hostile_escaped(svg)
    assert HOSTILE in all_text(parse_svg(svg))


def test_segments_from_the_engines_rank_memory():
    from configurator.drawings.memory import memory_segments
    from configurator.engine.types import RankMemory

    rank = RankMemory(
        device_bytes=64 * GB,
        usable_bytes=57_600_000_000,
        weights_bytes=55 * GB,
        non_expert_weights_bytes=5 * GB,
        expert_weights_bytes=50 * GB,
        activation_bytes=3_100_000_000,
        buffer_bytes=1_600_000_000,
        graph_bytes=2_300_000_000,
        kv_cache_bytes=-4_400_000_000,  # 57.6 − 55 − 3.1 − 1.6 − 2.3
        free_bytes=6_400_000_000,
        kv_bytes_per_token=27_648,
        state_bytes_per_seq=0,
        kv_tokens=0,
    )
    segments = memory_segments(rank)
    assert [k for k, _, _ in segments] == [
        "weights",
        "activations",
        "buffers",
        "graph",
        "kv_cache",
        "reserved",
    ]
    assert segments[4] == ("kv_cache", "", -4.4e9)
    assert "Short by 4.4 GB" in texts(parse_svg(memory_bar_svg(segments, rank.device_bytes, "en")))


def test_a_part_below_half_a_percent_reads_below_1_percent_not_zero():
    # vLLM 0.27's CUDA-graph estimate at max_num_seqs 16 is 12 × 20 MiB = 0.25 GB of an 84 GB device
    # (0.3 %): the legend says "< 1 %" where rounding would print "0 %" beside a non-zero amount.
    parts = [("weights", "", 54 * GB), ("graph", "", 12 * 20 * 2**20), ("kv_cache", "", 14 * GB)]
    labels = texts(parse_svg(memory_bar_svg(parts, 84 * GB, "en")))
    assert any(text.endswith("0.3 GB (< 1 %)") for text in labels), labels
    assert any(text.endswith("54.0 GB (64 %)") for text in labels), labels
