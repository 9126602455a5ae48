"""Racks over the air-cooling limit are priced as the containment or liquid-cooled racks they need.

docs/domain.md §7: a hall's air cooling carries ≈ 20–25 kW per rack; 35–40 kW needs hot/cold-aisle
containment, more needs liquid cooling.  The seeded 4 × Atlas 800 A3 case (configurator/reference.py
``a3-4-single``) puts two 16.2 kW servers (S1 §2.1: 16.2 kW maximum input each; catalog/seed/servers.yaml
atlas-800-a3 max_input_kw) in each rack and the switches in the first, so both racks exceed the
seeded site's 25 kW air limit (catalog/seed/sites.yaml cn-default) and stay under 40 kW: two
containment racks at the seeded price list's ¥60,000 (catalog/seed/price_lists.yaml cny-2026,
rack_unit_prices_by_cooling.containment).
"""

from __future__ import annotations

import dataclasses
from decimal import Decimal

from configurator import reference
from configurator.engine.plan import plan
from configurator.engine.serialize import plan_to_dict
from documents.pdf.sample import sample_plan_kwargs
from quotes.bom import bom_lines_from_plan


def test_4_node_racks_over_the_air_limit_are_containment_racks():
    request = reference.request(reference.CASES["a3-4-single"])
    result = plan(request)
    racks = result.racks.racks
    # R01: 2 × 16.2 kW + the switches the engine picks from the seeded catalog
    # (catalog/seed/switches.yaml power_kw: lingqu-630-v1 3.0 + roce-400ge-access 1.6 + 4 × ce6866 0.45
    # + 2 × mgmt-1ge 0.15 = 6.7 kW) = 39.1 kW; R02: 2 × 16.2 = 32.4 kW.
    assert [round(r.kw, 2) for r in racks] == [39.1, 32.4]
    assert all(r.exceeds_cooling and 25 < r.kw <= 40 for r in racks)
    assert [r.cooling_required for r in racks] == ["containment", "containment"]
    containment = reference.commercial("atlas-800-a3", nodes=4).rack_unit_prices_by_cooling["containment"]
    assert result.tco.capex.racks == 2 * containment == Decimal("120000")

    lines = bom_lines_from_plan(
        plan_to_dict(result),
        sample_plan_kwargs("4node")["prices_json"],
        request=sample_plan_kwargs("4node")["resolved_json"],
    )
    rack_lines = [
        (x["description_en"], x["quantity"], x["unit_price"]) for x in lines if x["category"] == "rack"
    ]
    # one line for both racks, with the PDUs each takes: a three-phase PDU per feed at the rack's feed
    # breaker (R01 39.1 kW → 80 A), with a C19 for each of the two A3s' 3 PSUs per feed (6 × 3 kW PSUs,
    # S1 §2.1) and a C13 per switch in the fullest rack (R01: 8 switches)
    assert rack_lines == [
        (
            "Rack with hot/cold-aisle containment, with PDUs; A and B PDUs: 3-phase 380 V "
            f"{racks[0].feed.breaker_amps} A, at least {2 * 3} × C19 + {racks[0].switches} × C13 each (generic item)",
            2,
            Decimal("60000"),
        )
    ]


def test_racks_within_the_air_limit_keep_the_requested_type_and_above_40_kw_are_liquid():
    request = reference.request(reference.CASES["a3-4-single"])
    cool_site = dataclasses.replace(request.site, air_cooling_kw_limit=40.0)
    result = plan(dataclasses.replace(request, site=cool_site))
    assert [r.cooling_required for r in result.racks.racks] == ["air", "air"]
    assert result.tco.capex.racks == 2 * request.commercial.rack_unit_price

    # An air rack type allowing 80 kW per rack holds more servers per rack: above 40 kW, liquid.
    big = dataclasses.replace(request.rack, max_kw=80.0)
    result = plan(dataclasses.replace(request, rack=big))
    hot = [r for r in result.racks.racks if r.kw > 40]
    assert hot and all(r.cooling_required == "liquid" for r in hot)
