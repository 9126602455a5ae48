import pytest

from configurator.drawings.topology import topology_svg

from .svgcheck import HOSTILE, SVG_NS, all_text, assert_hostile_escaped, parse_svg, texts


def group(name, role, nodes, label, devices, **extra):
    return {"name": name, "role": role, "nodes": nodes, "label": label, "devices": devices, **extra}


# docs/domain.md §4: 4 × A3 single cluster DP4 / TP16 / EP64, 16 logical NPUs per node
FOUR = [group("Cluster", "cluster", 4, "DP4 / TP16 / EP64", 64)]
# docs/domain.md §4.2 A: two 4-node clusters, primary/standby
HA = [
    group("Cluster A", "serve", 4, "DP4 / TP16 / EP64", 64),
    group("Cluster B", "standby", 4, "DP4 / TP16 / EP64", 64, first_node=4),
]
# docs/domain.md §4.3: 16 × A3 8P8D, each side DP8 / TP16 / EP128
PD = [
    group("Prefill", "prefill", 8, "DP8 / TP16 / EP128", 128),
    group("Decode", "decode", 8, "DP8 / TP16 / EP128", 128, first_node=8),
]


def node_boxes(root):
    return [r for r in root.iter(f"{SVG_NS}rect") if r.get("width") == "96"]


def test_single_cluster_marks_node_0_master_and_the_rest_workers():
    root = parse_svg(topology_svg(FOUR, "en"))
    labels = texts(root)
    assert "Gateway / load balancer" in labels
    assert "DP4 / TP16 / EP64" in labels
    assert [f"node-{i:02d}" for i in range(4)] == [s for s in labels if s.startswith("node-")]
    assert labels.count("master") == 1 and labels.count("worker") == 3
    assert "4 nodes × 16 logical devices = 64" in labels  # 64 devices / 4 nodes
    assert len(node_boxes(root)) == 4


def test_one_node():
    root = parse_svg(
        topology_svg([group("Cluster", "cluster", 1, "TP16", 16, node_name="Atlas 800 A3")], "en")
    )
    labels = texts(root)
    assert "node-00" in labels and "master" in labels and "worker" not in labels
    assert "1 × Atlas 800 A3 × 16 logical devices = 16" in labels
    assert len(node_boxes(root)) == 1


def test_primary_standby_has_dashed_failover_and_shared_storage():
    root = parse_svg(topology_svg(HA, "en", storage=True))
    labels = texts(root)
    assert "failover ≤ 30 s" in labels
    assert "Shared storage (e.g. OceanStor)" in labels
    assert labels.count("weights sync") == 2
    assert "serving" in labels and "standby" in labels  # the roles as the page and the PDF name them
    # Numbering continues across clusters: B's master is node 4.
    assert [s for s in labels if s.startswith("node-")] == [f"node-{i:02d}" for i in range(8)]
    assert labels.count("master") == 2
    dashed = [el for el in root.iter() if el.get("stroke-dasharray")]
    assert dashed, "the standby cluster and its failover arrow are dashed"


def test_primary_standby_in_chinese():
    text = all_text(parse_svg(topology_svg(HA, "zh-hans", storage=True)))
    for word in (
        "网关 / 负载均衡",
        "故障切换 ≤ 30 s",
        "共享存储",
        "权重同步",
        "主用",
        "备用",
        "主节点",
        "工作节点",
        "node-07",
    ):
        assert word in text


def test_8p8d_has_proxy_kv_transfer_and_pool_and_stays_legible_with_16_nodes():
    svg = topology_svg(PD, "en", kv_transfer=True)
    root = parse_svg(svg)
    labels = texts(root)
    assert "P/D proxy (load balancer)" in labels
    assert "KV cache" in labels and "(Mooncake)" in labels
    assert "KV pool (MetaService + Memcache)" in labels
    assert [s for s in labels if s.startswith("node-")] == [f"node-{i:02d}" for i in range(16)]
    boxes = node_boxes(root)
    assert len(boxes) == 16
    # No two node boxes overlap, and all lie inside the drawing.
    width, height = (float(v) for v in root.get("viewBox").split()[2:])
    rects = [
        (float(b.get("x")), float(b.get("y")), float(b.get("width")), float(b.get("height"))) for b in boxes
    ]
    for i, (x, y, w, h) in enumerate(rects):
        assert 0 <= x and x + w <= width and 0 <= y and y + h <= height
        for x2, y2, w2, h2 in rects[i + 1 :]:
            assert x + w <= x2 or x2 + w2 <= x or y + h <= y2 or y2 + h2 <= y
    # Prefill is drawn left of decode even when listed second.
    swapped = parse_svg(topology_svg(list(reversed(PD)), "en", kv_transfer=True))
    names = [s for s in texts(swapped) if s in ("Prefill", "Decode")]
    assert names == ["Prefill", "Decode"]


def test_8p8d_in_chinese():
    text = all_text(parse_svg(topology_svg(PD, "zh-hans", kv_transfer=True)))
    for word in (
        "PD 代理",
        "KV 缓存",
        "KV 池 (MetaService + Memcache)",
        "预填充（P）",
        "解码（D）",
        "node-15",
        "8 节点 × 16 逻辑卡 = 128 逻辑卡",
    ):
        assert word in text


def test_very_large_group_is_summarised():
    root = parse_svg(topology_svg([group("Big", "cluster", 40, "DP40 / TP16", 640)], "en"))
    labels = texts(root)
    assert "+25 more" in labels  # 40 − 15 boxes drawn
    assert "node-14" in labels and "node-15" not in labels


def test_no_gateway_no_groups_and_unknown_role():
    root = parse_svg(topology_svg(FOUR, "en", gateway=False))
    assert "Gateway / load balancer" not in texts(root)
    assert "No data" in texts(parse_svg(topology_svg([], "en")))
    root = parse_svg(topology_svg([group("X", "mystery", 0, "", 0)], "en"))
    assert "cluster" in texts(root)
    # Devices that do not divide evenly: only the total is given.
    root = parse_svg(topology_svg([group("Odd", "cluster", 3, "", 40)], "en"))
    assert "3 nodes · 40 logical devices" in texts(root)


@pytest.mark.parametrize("field", ["name", "label", "node_name"])
def test_hostile_text_is_escaped(field):
    g = group("Cluster", "cluster", 2, "TP16", 32)
    g[field] = HOSTILE
    assert_hostile_escaped(topology_svg([g], "en", title=HOSTILE))


def test_groups_from_the_layout_engine():
    from configurator.drawings.topology import topology_groups
    from configurator.engine.types import GroupLayout, ParallelSpec

    # docs/domain.md §4.3: each side DP8 / TP16, EP = 8 × 16 = 128, 896 / 128 = 7 experts per rank
    side = ParallelSpec(tp=16, dp=8)
    layout = [
        GroupLayout("prefill", "prefill", 8, 0, side, 128, 7),
        GroupLayout("decode", "decode", 8, 8, side, 128, 7),
    ]
    groups = topology_groups(layout, "zh-hans", node_name="Atlas 800 A3")
    assert groups[0]["label"] == "DP8 / TP16 / EP128"
    assert groups[0]["name"] == "预填充" and groups[1]["first_node"] == 8
    text = all_text(parse_svg(topology_svg(groups, "zh-hans", kv_transfer=True)))
    assert "8 × Atlas 800 A3 × 16 逻辑卡 = 128 逻辑卡" in text
    pp = topology_groups(
        [GroupLayout("x", "serve", 2, 0, ParallelSpec(tp=8, dp=1, pp=2, expert_parallel=False), 16, 0)], "en"
    )
    assert pp[0]["label"] == "DP1 / TP8 / PP2" and pp[0]["name"] == "x"
