"""Drawings legible at every cluster size the engine accepts; one node naming
scheme (engine/names.py) in drawings, rack elevations and launch scripts;
emoji stripped cleanly (issue 17).

Legibility: the smallest label as rendered on the page, i.e. its font size ×
(the width the page's CSS gives the drawing ÷ the drawing's own width), is at
least 8 px.  CSS (static/css/app.css): the topology at most 720 px wide, a rack
elevation at its natural width, the memory bar and charts at most 820 px.
"""

from __future__ import annotations

import dataclasses
import re

import pytest

from configurator import reference
from configurator.engine.launch import bundle_files
from configurator.engine.layout import auto_layout
from configurator.engine.names import display_text, node_name
from configurator.engine.plan import plan
from configurator.engine.serialize import plan_to_dict
from configurator.engine.types import TopologyKind, TopologySpec
from configurator.web import presentation

MIN_PX = 8.0


def _rendered_min_font(svg_text: str, display_width: float | None) -> float:
    width = float(re.search(r'viewBox="0 0 ([\d.]+) [\d.]+"', svg_text).group(1))
    sizes = [float(x) for x in re.findall(r'font-size="([\d.]+)"', svg_text)]
    scale = 1.0 if display_width is None else min(1.0, display_width / width)
    return min(sizes) * scale


# The A3 switches by name: the LingQu scale-up, 400GE RoCE scale-out and 1GE management switches
# (catalog/seed/switches.yaml).  Without a list the engine chooses among every seeded switch; see
# test_rack_labels_stay_legible_with_the_switches_the_engine_chooses.
A3_SWITCHES = ["lingqu-630-v1", "roce-400ge-access", "mgmt-1ge"]


def _context(kind: str, nodes: int, switches: list | None = A3_SWITCHES):
    # the seeded 4 × A3 case (configurator.reference.CASES), re-laid out at every size the engine accepts
    data = dict(reference.CASES["a3-4-single"])
    if switches is not None:
        data["switches"] = switches
    base = reference.request(data)
    half = nodes // 2
    group = nodes if kind == "single" else half
    p = auto_layout(base, group)
    topo = TopologySpec(
        TopologyKind(kind),
        nodes,
        p,
        prefill_nodes=half if kind == "disaggregated" else 0,
        decode_nodes=nodes - half if kind == "disaggregated" else 0,
        decode_parallel=auto_layout(base, nodes - half) if kind == "disaggregated" else None,
    )
    result = plan(dataclasses.replace(base, topology=topo))
    return result, presentation.context_from_dict(plan_to_dict(result), "zh-hans")


SIZES = [1, 2, 3, 4, 8, 16, 17, 33, 64, 128, 512, 1024]


@pytest.mark.parametrize("kind", ["single", "primary_standby", "tenant_pair", "disaggregated"])
def test_every_drawing_keeps_labels_of_at_least_8_px(kind):
    for nodes in SIZES:
        if kind != "single" and nodes < 2:
            continue
        if kind in ("primary_standby", "tenant_pair") and nodes % 2:
            continue
        _, ctx = _context(kind, nodes)
        checks = [(ctx["topology_svg"], 720)]
        checks += [(r["svg"], None) for r in ctx["racks"]]
        checks += [(m["svg"], 820) for m in ctx["memory_panels"]]
        if ctx["tco"] and ctx["tco"].get("chart_svg"):
            checks.append((ctx["tco"]["chart_svg"], 820))
        for svg_text, display in checks:
            assert _rendered_min_font(svg_text, display) >= MIN_PX, (kind, nodes)


def test_rack_labels_stay_legible_with_the_switches_the_engine_chooses():
    # At 64 nodes on a 1U, 64-port RoCE switch with a long model name (not a seed row: the seeded
    # catalog would split the rails over 2U switches with short names), a rail of 64 ports and its 4
    # spare do not fit one switch, so the engine builds leaf/spine and the labels are long
    # ('NVIDIA Spectrum-X SN5600 1U 64-port RoCE variant #12（集群，脊）'): they keep 8 px and lose the
    # middle of the name to an ellipsis, keeping the unit number and role; the slot's <title> has it all.
    long_named = {
        "slug": "roce-long-name",
        "name": "NVIDIA Spectrum-X SN5600 1U 64-port RoCE variant (64 × 400GbE)",
        "vendor": "NVIDIA",
        "fabric": "roce",
        "ports": 64,
        "port_speed_gbps": 400,
        "rack_units": 1,
        "power_kw": 1.0,
    }
    _, ctx = _context("single", 64, switches=["lingqu-630-v1", long_named, "mgmt-1ge", "ce6866-48s8cq"])
    svgs = "".join(rack["svg"] for rack in ctx["racks"])
    for rack in ctx["racks"]:
        assert _rendered_min_font(rack["svg"], None) >= MIN_PX
    elided = re.findall(r">([^<]*…[^<]*#\d+[^<]*)</text>", svgs)
    assert elided, "no long label was elided: the case no longer exercises the fit"
    for shown in elided:
        head, _, tail = shown.partition("…")
        assert re.search(rf"<title>{re.escape(head.strip())}[^<]*{re.escape(tail)}</title>", svgs), shown


def test_a_label_that_fits_is_drawn_whole():
    from configurator.drawings.racks import MIN_LABEL_PX, _fit_label

    assert _fit_label("node-00", 200, 10) == ("node-00", 10)
    text, size = _fit_label("NVIDIA Spectrum-X SN5600 (64 × 800GbE) #12（集群，脊）", 120, 10)
    assert size == MIN_LABEL_PX and text.endswith("#12（集群，脊）") and "…" in text


def test_one_node_name_in_the_drawing_the_racks_and_the_launch_scripts():
    result, ctx = _context("primary_standby", 8)
    names = [node_name(i) for i in range(8)]
    assert names[:2] == ["node-00", "node-01"]
    topology_labels = re.findall(r">(node-\d\d)<", ctx["topology_svg"])
    assert topology_labels == names
    rack_labels = set(re.findall(r">(node-\d\d)（", "".join(r["svg"] for r in ctx["racks"])))
    assert rack_labels == set(names)
    # the node scripts at the bundle's top level (docker/ and k8s/ wrap the same scripts)
    scripts = sorted(n for n in bundle_files(result.launch) if re.match(r"node-\d\d-", n))
    assert [s.rsplit("/", 1)[-1][:7] for s in scripts] == names
    assert [n["name"] for n in ctx["launch"]["nodes"]] == names


def test_emoji_are_stripped_cleanly_and_other_text_kept():
    assert display_text("Bank 🏦 of Examples 🚀") == "Bank of Examples"
    assert display_text("招商银行 👍🏽 项目") == "招商银行 项目"
    assert display_text("A3 → 16 kW ±20 % · ≤ 30 s") == "A3 → 16 kW ±20 % · ≤ 30 s"
    assert display_text("family 👨‍👩‍👧") == "family"
