"""Optics and cables per link type and speed (issue 16: "no 400G optics on 1GE/100GE links").

A link takes a transceiver at each end only when it is optical; GE
management and BMC links are copper (RJ45 Cat6 patch cables, IEEE 802.3ab 1000BASE-T),
100GE links take QSFP28 modules and 400GE links QSFP-DD/OSFP modules (the
form factors of IEEE 802.3bm/802.3bs optics), each priced by its own SKU.
"""

from __future__ import annotations

from decimal import Decimal

from configurator.engine.network import link_media
from configurator.engine.plan import plan
from configurator.engine.serialize import plan_to_dict
from documents.pdf.sample import sample_plan_kwargs, sample_request
from quotes.bom import bom_lines_from_plan


def test_media_follow_the_link_speed():
    assert link_media(1) == ("", "cat6")  # 1GE management: copper, no optics
    assert link_media(10) == ("10g-optics", "fiber")  # 10GE SFP+ (S2's service ports), not Cat6
    assert link_media(25) == ("25g-optics", "fiber")
    assert link_media(100) == ("100g-optics", "fiber")  # 100GE service: QSFP28, not a 400G module
    assert link_media(200) == ("200g-optics", "fiber")
    assert link_media(400) == ("", "fiber")  # 400G-class: network.optics at the 400G price


def test_4_node_a3_prices_400g_optics_only_on_400g_links():
    request = sample_request("4node")  # the plan the sample's prices belong to
    result = plan(request)
    rows = {r.role: r for r in result.network.rows if r.ports_needed}
    # S1 §2.1: 8 LingQu and 8 RoCE 400GE ports cabled per node, 4 nodes, one switch each → 32 links each.
    assert rows["scale_up"].link_gbps == 400 and rows["scale_up"].optics == 2 * 32
    assert rows["scale_out"].link_gbps == 400 and rows["scale_out"].optics == 2 * 32
    mgmt, oob = rows["management"], rows["oob"]
    assert mgmt.link_gbps == 1 and mgmt.optics == 0 and mgmt.cable_media == "cat6"
    assert oob.link_gbps == 1 and oob.optics == 0
    service, storage = rows["service"], rows["storage"]
    assert service.optics_media == storage.optics_media == "25g-optics"  # SFP28 on the added 25GE cards
    assert result.network.optics == 2 * 32 + 2 * 32  # 400G modules only on the 400G links
    copper = mgmt.cables + oob.cables
    fibre = 64 + service.cables + storage.cables
    sfp28 = service.optics + storage.optics
    assert dict(result.network.media) == {"fiber": fibre, "cat6": copper, "25g-optics": sfp28}

    # The engine's optics capex prices each medium at its own price (the seeded price list's media items).
    c = request.commercial
    expected = (
        128 * c.optics_unit_price
        + fibre * Decimal("300")
        + copper * Decimal("30")
        + sfp28 * c.media_unit_prices["25g-optics"]
    )
    assert result.tco.capex.optics == expected

    # The bill of materials has one line per medium, and they add up to the engine's figure.
    kwargs = sample_plan_kwargs("4node")
    lines = [
        x
        for x in bom_lines_from_plan(plan_to_dict(result), kwargs["prices_json"])
        if x["category"] == "optics"
    ]
    # cables come in one line per length class (in-rack 3 m, nearby rack 10 m, along the row 30 m),
    # transceivers in one line per type; every line is a generic item (no vendor part number)
    by_kind: dict[str, list] = {}
    for x in lines:
        assert x["description_en"].endswith(" (generic item)")
        kind = x["description_en"].split(",")[0].split(" (")[0]
        by_kind.setdefault(kind, []).append((x["quantity"], x["unit_price"]))
    assert {k: (sum(q for q, _ in v), {p for _, p in v}) for k, v in by_kind.items()} == {
        "400G optical module": (128, {Decimal("4500")}),  # the seeded OPT-400G-QSFP-DD
        "Fiber patch cord": (fibre, {Decimal("300")}),
        "Copper patch cable": (copper, {Decimal("30")}),
        "25G optical module": (sfp28, {c.media_unit_prices["25g-optics"]}),
    }
    assert len(by_kind["Fiber patch cord"]) == len(result.racks.cable_lengths["fiber"])
    assert sum(x["quantity"] * x["unit_price"] for x in lines) == result.tco.capex.optics
