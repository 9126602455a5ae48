"""The rack elevation SVG, drawn from the engine's placement of the seeded cases (configurator/reference.py)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from configurator import reference
from configurator.drawings.racks import rack_elevation_svg
from configurator.engine.layout import resolve_layout
from configurator.engine.network import size_network
from configurator.engine.power import size_power
from configurator.engine.racks import place_racks

SVG = "{http://www.w3.org/2000/svg}"


def _place(req):
    layout = resolve_layout(req)
    network = size_network(req, layout)
    power = size_power(req, layout, network)
    return place_racks(req, layout, power, network)


def a3_pair():
    return reference.request(reference.CASES["a3-8-primary-standby"])


def a3_8p8d():
    return reference.request(reference.CASES["a3-16-8p8d"])


def test_rack_elevation_svg_parses_and_names_every_device():
    result = _place(a3_8p8d())
    for rack in result.racks:
        svg = rack_elevation_svg(rack)
        root = ET.fromstring(svg)
        assert root.tag == f"{SVG}svg"
        texts = [t.text for t in root.iter(f"{SVG}text")]
        for slot in rack.slots:
            assert slot.label in texts
        assert any(f"{rack.kw:.1f} kW" in (t or "") for t in texts)
        # standalone: no external references, fonts named inline
        assert "href" not in svg and "url(" not in svg and "<style" not in svg
        assert "Noto Sans CJK SC" in root.get("font-family")
        # U numbers at 1, every fifth U and the top (as NetBox-style elevations read)
        numbered = {1, rack.rack_units, *range(5, rack.rack_units + 1, 5)}
        assert {str(u) for u in numbered} <= set(texts)
        assert "2" not in texts


def test_rack_elevation_svg_in_chinese():
    result = _place(a3_pair())
    svg = rack_elevation_svg(result.racks[0], lang="zh-hans")
    texts = [t.text for t in ET.fromstring(svg).iter(f"{SVG}text")]
    assert "node-00（集群 A，主节点）" in texts
    assert any("机柜 R01" in (t or "") for t in texts)
    assert any("A/B 路" in (t or "") for t in texts)
