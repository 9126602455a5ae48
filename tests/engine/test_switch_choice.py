"""Switches chosen by port count and cost among the catalog's switches that fit (issue 16).

Prices and port counts are the seeded price list's (catalog/seed/price_lists.yaml, switches.yaml: RoCE 400GE access
switch 64 ports ¥350,000, core switch 128 ports ¥700,000, Inspur X400 64 ports ¥300,000,
400G QSFP-DD ¥4,500).  The expected designs are worked out here by hand from
``switches_for_ports`` (leaf/spine: leaves = ceil(ports ÷ P/2), spines = ceil(leaves·P/2 ÷ P)).
"""

from __future__ import annotations

import dataclasses
from decimal import Decimal

from configurator.engine import fixtures
from configurator.engine.layout import resolve_layout
from configurator.engine.network import size_network
from configurator.engine.types import SwitchSpec

ACCESS = SwitchSpec("roce-400ge-access", "400GE RoCE access switch", "roce", 64, 400, 2, 2.2, vendor="Huawei")
CORE = SwitchSpec("roce-400ge-core", "400GE RoCE core switch", "roce", 128, 400, 4, 4.0, vendor="Huawei")
X400 = SwitchSpec("inspur-x400", "Inspur X400 AI switch (400G)", "roce", 64, 400, 2, 2.0, vendor="Inspur")
PRICES = {
    "lingqu-630-v1": Decimal("800000"),
    "mgmt-1ge-48": Decimal("12000"),
    "roce-400ge-access": Decimal("350000"),
    "roce-400ge-core": Decimal("700000"),
    "inspur-x400": Decimal("300000"),
}
OPTIC = Decimal("4500")


def _with(request, switches):
    commercial = dataclasses.replace(request.commercial, switch_unit_prices=PRICES, optics_unit_price=OPTIC)
    return dataclasses.replace(request, switches=switches, commercial=commercial)


def _roce(request):
    net = size_network(request, resolve_layout(request))
    return next(r for r in net.rows if r.role == "scale_out")


def test_16_a3_takes_the_128_port_core_when_it_is_cheaper_than_leaf_spine():
    base = fixtures.request_k3_a3_8p8d()
    request = _with(base, (fixtures.lingqu_switch(), ACCESS, CORE, fixtures.management_switch()))
    roce = _roce(request)
    # 16 nodes × 8 RoCE ports = 128.  Access (64 ports): 4 leaves + 2 spines, 128 uplinks →
    # 6 × 350,000 + 2 × (128 + 128) × 4,500 = 4,404,000.  Core (128 ports): one switch →
    # 700,000 + 2 × 128 × 4,500 = 1,852,000: the core design, as in S1 §4.3.
    assert roce.ports_needed == 128
    assert (roce.switch_slug, roce.switches, roce.spines) == ("roce-400ge-core", 1, 0)
    cost = roce.switches * PRICES["roce-400ge-core"] + roce.optics * OPTIC
    assert cost == Decimal("1852000") < Decimal("4404000")


def test_leaf_spine_wins_when_the_big_switch_is_dearer():
    base = fixtures.request_k3_a3_8p8d()
    dear_core = {**PRICES, "roce-400ge-core": Decimal("5000000")}
    request = _with(base, (fixtures.lingqu_switch(), ACCESS, CORE, fixtures.management_switch()))
    request = dataclasses.replace(
        request, commercial=dataclasses.replace(request.commercial, switch_unit_prices=dear_core)
    )
    # core: 5,000,000 + 1,152,000 = 6,152,000 > access leaf/spine 4,404,000
    assert _roce(request).switch_slug == "roce-400ge-access"


def test_nf5868g8_uses_the_inspur_x400_when_it_fits():
    base = fixtures.request_k3_nf5868g8_2node()
    # The access switch listed first, and the X400 dearer than it: the server vendor's own switch
    # still wins because it takes the ports in one tier (S2 names the X400).
    prices = {**PRICES, "inspur-x400": Decimal("400000")}
    request = _with(base, (ACCESS, CORE, X400, fixtures.management_switch()))
    request = dataclasses.replace(
        request, commercial=dataclasses.replace(request.commercial, switch_unit_prices=prices)
    )
    roce = _roce(request)
    assert roce.switch_slug == "inspur-x400" and roce.switches == 1
