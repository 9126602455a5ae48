"""BOM lines from a plan result, and the revision totals.

Expected figures are worked out here from the seed's prices (S1: ¥3 M per
A3 node, ¥2 M O&M per year for 8 nodes, ¥125,000 per node-month lease) and the
switch/optics/rack prices of the hand-made price set in tests/quotes/conftest.py.
"""

from __future__ import annotations

import copy
from decimal import Decimal

import pytest

from quotes.bom import NO_PRICE_NOTE, bom_lines_from_plan, line_total, plan_totals, price_items
from quotes.models import BomLine

from .conftest import PRICES, RESOLVED, RESULT


def _by_category(lines):
    out = {}
    for line in lines:
        out.setdefault(line["category"], []).append(line)
    return out


def test_lines_follow_the_plan_counts_and_prices():
    lines = bom_lines_from_plan(RESULT, PRICES, request=RESOLVED)
    cats = _by_category(lines)
    assert [line["category"] for line in lines] == [
        "server",
        "switch",
        "switch",
        "switch",
        "optics",
        "rack",
        "om",
        "lease",
    ]
    server = cats["server"][0]
    assert (server["quantity"], server["unit_price"], server["sku"]) == (
        8,
        Decimal("3000000"),
        "atlas-800-a3",
    )
    assert server["description_en"] == "Server Atlas 800 A3"
    switches = {line["sku"]: (line["quantity"], line["unit_price"]) for line in cats["switch"]}
    assert switches == {
        "lingqu-630-v1": (1, Decimal("1200000")),
        "roce-400ge-64": (1, Decimal("600000")),
        "mgmt-1ge-48": (1, Decimal("15000")),
    }
    assert "LingQu 630 V1" in cats["switch"][0]["description_en"]  # sorted by slug: lingqu first
    assert (cats["optics"][0]["quantity"], cats["optics"][0]["unit_price"]) == (272, Decimal("6000"))
    assert (cats["rack"][0]["quantity"], cats["rack"][0]["unit_price"]) == (4, Decimal("30000"))
    # O&M: the engine's ¥2 M per year × 3 years of the horizon.
    assert (cats["om"][0]["quantity"], cats["om"][0]["unit"], cats["om"][0]["unit_price"]) == (
        3,
        "year",
        Decimal("2000000.00"),
    )
    # Lease: 8 nodes × ¥125,000 = ¥1,000,000 per month, for 36 months.
    lease = cats["lease"][0]
    assert (lease["quantity"], lease["unit"], lease["unit_price"]) == (36, "month", Decimal("1000000"))
    # No installation and no software lines: their prices are 0 in the price list.
    assert "install" not in cats and "software" not in cats
    assert all(line["currency"] == "CNY" and line["note"] == "" for line in lines)


def test_capex_lines_add_up_to_the_engines_capex_subtotal():
    # 8 × 3,000,000 + 1,200,000 + 600,000 + 15,000 + 272 × 6,000 + 4 × 30,000 = 27,567,000 = tco.capex.subtotal
    lines = bom_lines_from_plan(RESULT, PRICES)
    capex = sum(
        line_total(x["quantity"], x["unit_price"]) for x in lines if x["category"] not in {"om", "lease"}
    )
    assert capex == Decimal("27567000.00") == Decimal(RESULT["tco"]["capex"]["subtotal"])


def test_line_total_rounds_half_up_to_the_cent():
    # 3 × 0.125 = 0.375 → 0.38; 7 × 10.00 × (1 − 0.125) = 61.25
    assert line_total(Decimal("3"), Decimal("0.125")) == Decimal("0.38")
    assert line_total(Decimal("7"), Decimal("10"), Decimal("0.125")) == Decimal("61.25")


def test_a_switch_without_a_price_gets_a_visible_zero_line():
    prices = copy.deepcopy(PRICES)
    del prices["switches"]["roce-400ge-64"]
    lines = bom_lines_from_plan(RESULT, prices)
    roce = next(line for line in lines if "RoCE" in line["description_en"])
    assert (roce["unit_price"], roce["note"]) == (Decimal("0"), NO_PRICE_NOTE)
    assert roce["sku"] == ""


def test_counts_fall_back_to_the_network_and_racks_sections():
    result = copy.deepcopy(RESULT)
    del result["tco"]
    lines = bom_lines_from_plan(result, PRICES)
    cats = _by_category(lines)
    assert cats["server"][0]["quantity"] == 8  # layout.nodes
    assert {line["sku"]: line["quantity"] for line in cats["switch"]} == {k: 1 for k in PRICES["switches"]}
    assert cats["optics"][0]["quantity"] == 272  # network.optics
    assert cats["rack"][0]["quantity"] == 4  # racks.rack_count
    # Without the engine's yearly O&M figure, the price list's O&M price is used.
    assert cats["om"][0]["unit_price"] == Decimal("2000000")
    assert plan_totals(result) == {key: None for key in plan_totals(result)}


def test_price_items_understands_item_lists_with_metadata():
    prices = {
        "currency": "CNY",
        "items": [
            {
                "category": "server",
                "ref": "atlas-800-a3",
                "sku": "A3-800-SN",
                "description_en": "Atlas 800 A3 super-node server",
                "description_zh": "Atlas 800 A3 超节点服务器",
                "unit_price": "2950000.00",
                "unit_cost": "2500000.00",
                "price_list": "CN list 2026Q1",
                "effective_date": "2026-01-01",
            }
        ],
    }
    lines = bom_lines_from_plan(RESULT, prices)
    server = lines[0]
    assert (server["sku"], server["unit_price"], server["unit_cost"]) == (
        "A3-800-SN",
        Decimal("2950000.00"),
        Decimal("2500000.00"),
    )
    assert server["description_zh"] == "Atlas 800 A3 超节点服务器"
    assert price_items(prices)[0]["price_list"] == "CN list 2026Q1"


def test_garbage_results_give_no_lines_rather_than_an_error():
    assert bom_lines_from_plan(None, PRICES) == []
    assert bom_lines_from_plan({"tco": "nonsense", "network": [1, 2]}, "nonsense") == []


@pytest.mark.django_db
def test_revision_totals_with_a_discount(make_quote, manager):
    # List: capex 27,567,000 + O&M 3 × 2,000,000 = 33,567,000.
    # The 12 % quote discount applies to capex only (as tco.capex.discount does):
    # 27,567,000 × 0.12 = 3,308,040.00 → net 33,567,000 − 3,308,040 = 30,258,960.00.
    revision = make_quote(discount="0.12").revisions.get()
    assert revision.list_total == Decimal("33567000.00")
    assert revision.discount == Decimal("0.12")
    assert revision.discount_amount == Decimal("3308040.00")
    assert revision.net_total == Decimal("30258960.00")
    # The engine's own figures: capex.total, lease_rent ÷ 12, buy/lease totals.
    assert revision.capex_total == Decimal("27567000.00")
    assert revision.lease_per_month == Decimal("1000000.00")
    assert revision.tco_buy_total == Decimal("35964424.54")
    assert revision.tco_lease_total == Decimal("38397424.54")
    assert revision.cost_total is None  # the price list carried no costs
    assert revision.currency == "CNY"
    lines = list(revision.lines.order_by("position"))
    assert [line.position for line in lines] == list(range(1, 9))
    assert lines[0].line_total == Decimal("24000000.00")
    assert sum(line.line_total for line in lines if line.category != "lease") == Decimal("33567000.00")
    assert BomLine.objects.filter(revision=revision, category="lease").get().line_total == Decimal(
        "36000000.00"
    )
    assert len(revision.snapshot_sha256) == 64
    assert revision.prices_json["price_list"] == "cn-list-2026"
