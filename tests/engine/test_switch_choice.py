"""Switches chosen by port count and cost among the catalog's switches that fit (issue 16).

Switches, prices and port counts are the seed's (catalog/seed/switches.yaml: RoCE 400GE access
switch 64 ports, core switch 128 ports, Inspur X400 64 ports; catalog/seed/price_lists.yaml cny-2026:
access ¥350,000, core ¥700,000, X400 ¥300,000, 400G QSFP-DD ¥4,500), read through
configurator/reference.py.  The expected designs are worked out here by hand from
``switches_for_ports`` (leaf/spine: leaves = ceil(ports ÷ P/2), spines = ceil(leaves·P/2 ÷ P)).
"""

from __future__ import annotations

import dataclasses
from decimal import Decimal

from configurator import reference
from configurator.engine.layout import resolve_layout
from configurator.engine.network import size_network

# The seeded price list's figures the hand arithmetic below uses (catalog/seed/price_lists.yaml cny-2026).
ACCESS_PRICE = Decimal("350000")
CORE_PRICE = Decimal("700000")
OPTIC = Decimal("4500")


def _seeded(name, *switch_slugs, **switch_prices):
    """The seeded case offered only the named seeded switches (the engine chooses among them)."""
    request = reference.request(reference.CASES[name])
    commercial = request.commercial
    if switch_prices:
        prices = {
            **commercial.switch_unit_prices,
            **{k.replace("_", "-"): v for k, v in switch_prices.items()},
        }
        commercial = dataclasses.replace(commercial, switch_unit_prices=prices)
    return dataclasses.replace(request, switches=reference.switches(*switch_slugs), commercial=commercial)


def _roce(request):
    net = size_network(request, resolve_layout(request))
    return next(r for r in net.rows if r.role == "scale_out")


def test_16_a3_splits_whole_rails_over_the_cheaper_switches():
    request = _seeded("a3-16-8p8d", "lingqu-630-v1", "roce-400ge-access", "roce-400ge-core", "mgmt-1ge")
    assert request.commercial.switch_unit_prices["roce-400ge-access"] == ACCESS_PRICE
    assert request.commercial.switch_unit_prices["roce-400ge-core"] == CORE_PRICE
    assert request.commercial.optics_unit_price == OPTIC
    roce = _roce(request)
    # 16 nodes × 8 RoCE ports = 128, + ceil(128/16) = 8 spare = 136 > 128: no single switch.  By whole
    # rails (one rail = 16 ports + 1 spare): access (64 ports) holds 3 rails → ceil(8/3) = 3 switches,
    # 3 × 350,000 = 1,050,000; core (128) holds 7 → 2 switches, 2 × 700,000 = 1,400,000.  The optics
    # are the same 2 × 128 either way: the access switches win.
    assert roce.ports_needed == 128
    assert (roce.switch_slug, roce.switches, roce.spines, roce.sizing) == ("roce-400ge-access", 3, 0, "rails")
    assert roce.switches * ACCESS_PRICE == Decimal("1050000") < 2 * CORE_PRICE


def test_the_core_wins_when_the_access_switch_is_dearer():
    request = _seeded(
        "a3-16-8p8d",
        "lingqu-630-v1",
        "roce-400ge-access",
        "roce-400ge-core",
        "mgmt-1ge",
        roce_400ge_access=Decimal("500000"),
    )
    # access: 3 × 500,000 = 1,500,000 > core: 2 × 700,000 = 1,400,000
    roce = _roce(request)
    assert (roce.switch_slug, roce.switches) == ("roce-400ge-core", 2)


def test_nf5868g8_uses_the_inspur_x400_when_it_fits():
    # The access switch listed first, and the X400 dearer than it: the server vendor's own switch
    # still wins because it takes the ports in one tier (S2 names the X400).
    request = _seeded(
        "nf5868g8-2-single",
        "roce-400ge-access",
        "roce-400ge-core",
        "inspur-x400",
        "mgmt-1ge",
        inspur_x400=Decimal("400000"),
    )
    assert [s.slug for s in request.switches].index("roce-400ge-access") < [
        s.slug for s in request.switches
    ].index("inspur-x400")
    roce = _roce(request)
    assert roce.switch_slug == "inspur-x400" and roce.switches == 1
