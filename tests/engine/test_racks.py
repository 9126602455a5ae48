"""Racks: placement by U and kW, group separation, per-rack feeds and cooling (the elevation drawing is
tested in tests/drawings/test_racks.py).

Requests are the seeded cases (configurator/reference.py) laid out by the layout module, on the
seeded default rack (catalog/seed/racks.yaml rack-42u-air: 42U, 40 kW, 2U reserved) and site
(catalog/seed/sites.yaml cn-default: 25 kW air limit).  The engine picks the switches from the seeded
catalog: for the 8-node pairs one LingQu 630 V1 (4U, 3.0 kW), one RoCE 400GE access switch (2U,
1.6 kW) and one management switch (1U, 0.15 kW) (catalog/seed/switches.yaml).
"""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from configurator import reference
from configurator.engine.layout import resolve_layout
from configurator.engine.network import size_network
from configurator.engine.power import rack_feed, size_power
from configurator.engine.racks import place_racks
from configurator.engine.types import Severity

SVG = "{http://www.w3.org/2000/svg}"
SQRT3 = math.sqrt(3)


def _case(name: str, *, rack=None, site=None):
    """The seeded case ``name``; ``rack`` / ``site``: fields of the seeded rack / site changed (odd cases)."""
    req = reference.request(reference.CASES[name])
    if rack:
        req = replace(req, rack=replace(req.rack, **rack))
    if site:
        req = replace(req, site=replace(req.site, **site))
    return req


def a3_pair(name: str = "a3-8-primary-standby", **over):
    return _case(name, **over)


def a3_8p8d(**over):
    return _case("a3-16-8p8d", **over)


def a3_8p8d_network():
    req = a3_8p8d()
    return size_network(req, resolve_layout(req))


def _place(req, layout=None):
    layout = layout or resolve_layout(req)
    network = size_network(req, layout)
    power = size_power(req, layout, network)
    return place_racks(req, layout, power, network)


def _codes(result) -> dict[str, object]:
    return {c.code: c for c in result.checks}


def _servers(rack):
    return [s for s in rack.slots if s.kind == "server"]


def test_8_a3_land_in_4_racks_two_servers_each():
    result = _place(a3_pair())
    # S1 §3.2: ≈80U incl. switches and PDUs → 4 racks; 40 kW rack ÷ 16.2 kW → 2 servers per rack
    assert result.servers_per_rack == min((42 - 2) // 10, math.floor(40 / 16.2)) == 2
    assert result.rack_count == 4
    assert [len(_servers(r)) for r in result.racks] == [2, 2, 2, 2]
    assert result.network_racks == 0
    # the shared switches go, in the network's order, into the first rack with room (U and 40 kW):
    # LingQu 3.0 kW, RoCE core 3.2 kW and three of the four 0.45 kW CE6866 (service and storage
    # pairs) fill R01 to 39.95 kW; the fourth CE6866 and the two 0.15 kW management and out-of-band
    # switches go to R02 (catalog/seed/switches.yaml power_kw)
    first = result.racks[0]
    assert first.switches == 5
    assert first.kw == pytest.approx(2 * 16.2 + 3.0 + 3.2 + 3 * 0.45)  # 39.95 kW
    assert result.racks[1].switches == 3
    assert [r.kw for r in result.racks[1:]] == pytest.approx([32.4 + 0.45 + 2 * 0.15, 32.4, 32.4])
    # heat load: 1 kW = 3,412.14 BTU/h; PDU sockets per feed: each A3 has 6 × 3 kW PSUs (S1 §2.1), 3 per
    # feed on C19, and each switch one C13 per feed
    assert first.heat_btu_h == round(first.kw * 3412.14)
    assert (first.pdu_c19, first.pdu_c13) == (2 * 3, 5)
    assert result.figures["racks.seed.count"].value == 4
    assert _codes(result)["racks.count_vs_seed"].severity == Severity.OK


def test_more_racks_than_the_seed_says_why_a_rack_power_cap():
    # Issue 31: "8 racks where the seed plans 4" right after the cooling fix, with no reason.  A 25 kW
    # cap: ⌊25 / 16.2⌋ = 1 server per rack (space holds ⌊40 / 10⌋ = 4): 8 servers → 8 compute racks.
    result = _place(a3_pair(rack={"max_kw": 25.0}))
    check = _codes(result)["racks.count_vs_seed"]
    assert check.severity == Severity.OK  # a note: the engineer chose the cap; nothing to act on or accept
    assert result.rack_count == 8
    assert "power limit of 25 kW holds 1 server(s) of 16.2 kW where its space holds 4" in check.message_en
    assert check.figures["by_power"] == 1 and check.figures["by_space"] == 4
    assert check.fix_en and check.field == "rack.max_kw"


def test_16_a3_land_in_8_racks():
    result = _place(a3_8p8d())
    # S1 §4.3: ≈160U → 8 racks (two 10U servers per rack)
    assert result.rack_count == 8
    assert sum(len(_servers(r)) for r in result.racks) == 16
    # the seeded switches (a LingQu 630 V1 per side, 3 RoCE access switches by whole rails, the CE6866
    # service and storage pairs, the management and out-of-band switches) fit in the server racks
    assert all(r.kw <= 40.0 + 1e-9 for r in result.racks)
    assert result.network_racks == 0
    assert sum(r.switches for r in result.racks) == 2 + 3 + 4 + 2
    # every cable of the network, by length class: the classes add up to each medium's count
    lengths = result.cable_lengths
    assert sum(lengths["fiber"].values()) == sum(
        r.cables for r in a3_8p8d_network().rows if r.cable_media == "fiber"
    )
    assert set(lengths["fiber"]) <= {"in_rack", "adjacent", "row"}


def test_primary_standby_clusters_never_share_a_rack():
    result = _place(a3_pair("a3-8-primary-standby"))
    racks_a = {r.name for r in result.racks if any(s.group == "cluster-a" for s in _servers(r))}
    racks_b = {r.name for r in result.racks if any(s.group == "cluster-b" for s in _servers(r))}
    assert racks_a == {"R01", "R02"} and racks_b == {"R03", "R04"}
    assert not racks_a & racks_b
    assert all(len(r.groups) <= 1 for r in result.racks)
    assert _codes(result)["racks.groups_separate"].severity == Severity.OK


def test_prefill_and_decode_pools_in_separate_racks_with_their_lingqu_switch():
    # S1 §4.3 gives each side its own LingQu switch; with its spare ports (64 + 4 per side) the seeded
    # 128-port LingQu 630 V1 takes one side only, so there is one per side.
    result = _place(a3_8p8d())
    assert sum(1 for r in result.racks for s in r.slots if s.kind == "switch" and "LingQu" in s.label) == 2
    for rack in result.racks:
        assert len({s.group for s in _servers(rack)}) == 1
    # each side's LingQu switch sits with that side's servers
    for rack in result.racks:
        for slot in rack.slots:
            if slot.kind == "switch" and "LingQu" in slot.label:
                assert slot.group in rack.groups


def test_cooling_warning_when_racks_exceed_the_air_limit():
    result = _place(a3_pair())
    check = _codes(result)["cooling.rack_exceeds_air_limit"]
    # docs/domain.md §7: 32.4 kW per rack is beyond the ≈20–25 kW air-cooling limit (site default 25 kW)
    assert check.severity == Severity.WARNING
    assert check.area == "cooling"
    assert check.figures["limit_kw"] == 25.0
    assert set(check.figures["racks"]) == {"R01", "R02", "R03", "R04"}
    # the fix: containment / liquid, or one server per rack → 8 racks
    assert check.fix == {"rack.max_kw": 25.0}
    assert "containment" in check.fix_en and "8 racks" in check.fix_en
    assert "液冷" in check.fix_zh
    # applying the fix gives one server per rack
    capped = _place(a3_pair(rack={"max_kw": 25.0}))
    assert capped.rack_count == 8
    assert "cooling.rack_exceeds_air_limit" not in _codes(capped)


def test_liquid_cooling_has_no_air_limit_and_a_low_limit_site_still_warns():
    liquid = _place(a3_pair(rack={"cooling": "liquid"}))
    assert "cooling.rack_exceeds_air_limit" not in _codes(liquid)
    strict = _place(a3_pair(site={"air_cooling_kw_limit": 20.0}))
    assert _codes(strict)["cooling.rack_exceeds_air_limit"].figures["limit_kw"] == 20.0


def test_each_rack_has_a_and_b_feeds_sized_by_rack_feed():
    req = a3_pair()
    result = _place(req)
    for rack in result.racks:
        expected = rack_feed(rack.kw, req.site)
        assert rack.feed.breaker_amps == expected.breaker_amps
        assert rack.feed.feeds == 2
    # a 32.4 kW rack (R03: servers only): 32,400 / (√3 × 380 × 0.95) ÷ 0.8 = 64.8 A → 80 A per feed
    assert result.racks[2].feed.required_amps == pytest.approx(32_400 / (SQRT3 * 380 * 0.95) / 0.8)
    assert result.racks[2].feed.breaker_amps == 80


def test_slots_bottom_up_without_overlap():
    result = _place(a3_pair(rack={"pdu_units": 2}))
    for rack in result.racks:
        used: set[int] = set()
        for slot in rack.slots:
            units = set(range(slot.u_position, slot.u_position + slot.height_u))
            assert not units & used
            assert min(units) >= 1 and max(units) <= rack.rack_units
            used |= units
        servers = _servers(rack)
        assert servers[0].u_position == 1 and servers[1].u_position == 11  # 10U servers from U1
        kinds = {s.kind for s in rack.slots}
        assert {"pdu", "blank"} <= kinds
        assert [s.label for s in rack.slots if s.kind == "pdu"] == ["PDU B", "PDU A"]
        assert rack.usable_units == 42 - 2 - 2
    labels = [s.label for s in _servers(result.racks[0])]
    assert labels == [
        "node-00 (cluster A, master)",
        "node-01 (cluster A, worker)",
    ]  # engine/names.py, as the launch scripts; groups as the proposal names them
    assert _servers(result.racks[2])[0].label == "node-04 (cluster B, master)"
    assert _servers(result.racks[2])[0].node_index == 4


def test_switches_without_room_go_to_a_network_rack():
    # a 32.5 kW rack takes two 16.2 kW servers (32.4 kW) but not even a 0.15 kW management switch:
    # every switch (LingQu, RoCE core, 4 × CE6866, management and out-of-band) goes to N01
    result = _place(a3_pair(rack={"max_kw": 32.5}))
    assert result.compute_racks == 4
    assert result.network_racks == 1
    network_rack = result.racks[-1]
    assert network_rack.name == "N01" and network_rack.kind == "network"
    assert network_rack.switches == 1 + 1 + 4 + 2 and network_rack.servers == 0


def test_server_that_does_not_fit_the_rack_is_an_error():
    result = _place(_case("a3-4-single", rack={"max_kw": 15.0}))
    check = _codes(result)["racks.server_exceeds_rack"]
    assert check.severity == Severity.ERROR
    assert result.rack_count >= 4


def test_seed_plans_from_the_seeded_cases():
    """The seeded cases and the layout module reproduce the seed's racks and feeds."""
    for name, racks, seed_amps in (
        ("a3-8-primary-standby", 4, 200),  # S1 §3.2
        ("a3-8-tenant-pair", 4, 200),  # S1 §3.2
        ("a3-16-8p8d", 8, 400),  # S1 §4.3
    ):
        req = _case(name)
        layout = resolve_layout(req)
        network = size_network(req, layout)
        power = size_power(req, layout, network)
        result = place_racks(req, layout, power, network)
        assert result.rack_count == racks
        assert power.seed_feed.breaker_amps == seed_amps
        assert power.recommended_feed.breaker_amps > seed_amps
        assert "cooling.rack_exceeds_air_limit" in _codes(result)
        assert not any(c.severity == Severity.ERROR for c in (*network.checks, *power.checks, *result.checks))
