"""A price the catalog does not have is "price on request", never 0 (issue 30), and a server without
a lease offer has no lease figures (issue 25: 2 × H200 showed rent ¥0 and a ¥2.9 M lease total).

The seeded list ``cny-2026`` (catalog/seed/price_lists.yaml) prices the HGX H200 at ¥2,600,000 with
no lease price, and has no item at all for the DGX H100.
"""

from __future__ import annotations

from decimal import Decimal

from catalog.seed import loader
from configurator import reference
from configurator.engine.plan import plan
from configurator.engine.types import Severity
from quotes.bom import bom_lines_from_plan, plan_totals

H200 = reference.CASES["hgx-h200-2-single"]


def _plan(data: dict):
    return plan(
        reference.request({**data, "commercial": {**reference.COMMERCIAL, **data.get("commercial", {})}})
    )


def _seed_item(slug: str):
    return next(
        (
            r
            for r in loader.load().of("price_item")
            if r.values.get("item_slug") == slug and r.values["kind"] == "server"
        ),
        None,
    )


def test_the_h200_has_a_price_and_no_lease_offer_in_the_seed():
    item = _seed_item("hgx-h200-8gpu")
    assert item.values["unit_price"] == Decimal("2600000.00") and item.values["lease_per_month"] is None


def test_no_lease_offer_means_no_lease_figures():
    t = _plan(H200).tco
    assert t.valid and t.lease_offered is False
    assert t.lease_total is None and t.npv_lease is None and t.break_even_month is None
    assert t.annual.lease_rent is None and t.annual.lease_total is None
    assert all(row.lease_cumulative is None and row.lease_cost is None for row in t.yearly)
    assert all(row.lease_cumulative is None for row in t.monthly)
    assert t.tokens.cost_per_m_output_lease is None and t.tokens.annual_cost_lease is None
    assert all(row.basis != "lease" for row in t.sensitivity)
    assert not [
        k for k in t.figures if k.startswith(("tco.lease_total", "tco.npv_lease", "tco.annual.lease_"))
    ]
    check = next(c for c in t.checks if c.code == "commercial.lease_price_missing")
    assert "No lease offer in the catalog" in check.message_en and check.severity == Severity.WARNING


def test_the_purchase_side_is_unchanged_by_withdrawing_the_lease():
    """Buy figures do not depend on the lease: with a lease price typed in they are the same, and the
    lease side appears (rent = nodes × monthly rent × 12)."""
    without = _plan(H200).tco
    with_lease = _plan({**H200, "commercial": {"server_lease_per_month": "60000"}}).tco
    assert with_lease.lease_offered and with_lease.lease_total is not None
    assert with_lease.annual.lease_rent == Decimal(2 * 60000 * 12)
    assert without.buy_total == with_lease.buy_total and without.capex == with_lease.capex
    # The purchase still counts the two servers at the list price.
    assert without.capex.servers == Decimal(2 * 2_600_000)


def test_a_server_without_a_price_is_priced_on_request():
    assert _seed_item("dgx-h100") is None
    result = _plan({"model": "qwen3-32b", "server": "dgx-h100", "topology": {"kind": "single", "nodes": 2}})
    t = result.tco
    assert "server" in t.prices_on_request and t.valid is False
    assert t.tokens is None and result.economics is None
    check = next(c for c in result.checks if c.code == "commercial.price_on_request")
    assert (
        check.severity == Severity.WARNING and "servers" in check.message_en and "服务器" in check.message_zh
    )
    # Nothing is "counted at 0".
    assert not [
        c
        for c in result.checks
        if c.code in ("commercial.switch_price_missing", "commercial.media_price_missing")
    ]
    # The quote takes no zero totals from it, and the server line says "Price on request".
    data = result_dict(result)
    assert set(plan_totals(data).values()) == {None}
    lines = bom_lines_from_plan(data, {"currency": "CNY", "server": {"sku": "dgx-h100", "unit_price": "0"}})
    assert lines[0]["category"] == "server" and lines[0]["note"] == "Price on request"


def test_a_typed_price_replaces_on_request():
    """A price entered for the server (0 for servers the customer already owns) is a price: one DGX
    H100 at ¥2,000,000 has every other line of its plan priced by the list, so the TCO is whole."""
    data = {"model": "qwen3-32b", "server": "dgx-h100", "topology": {"kind": "single", "nodes": 1}}
    quoted = _plan({**data, "commercial": {"server_unit_price": "2000000"}}).tco
    assert quoted.prices_on_request == () and quoted.valid
    assert quoted.capex.servers == Decimal(2_000_000) and quoted.tokens is not None
    owned = _plan({**data, "commercial": {"server_unit_price": "0"}}).tco
    assert owned.prices_on_request == () and owned.capex.servers == Decimal(0)


def test_an_unpriced_switch_is_on_request_not_zero():
    """Two DGX A100 (8 × 200G HDR each) limited to the QM8700, which the seeded list does not price:
    the switch is on request and no total is shown; with the priced QM9700 (NDR takes HDR) it is whole."""
    data = {
        "model": "qwen3-32b",
        "server": "dgx-a100",
        "topology": {"kind": "single", "nodes": 2},
        "commercial": {"server_unit_price": "1000000"},
    }
    hdr = _plan({**data, "switches": ["nvidia-qm8700-hdr", "eth-100ge-service", "mgmt-1ge"]})
    assert hdr.tco.prices_on_request == ("switch:nvidia-qm8700-hdr",) and hdr.tco.valid is False
    check = next(c for c in hdr.checks if c.code == "commercial.price_on_request")
    assert "NVIDIA Quantum QM8700" in check.message_en and "nvidia-qm8700-hdr" not in check.message_en
    ndr = _plan(data).tco
    assert ndr.prices_on_request == () and ndr.valid and ndr.switch_counts.get("nvidia-qm9700")


def result_dict(result) -> dict:
    from configurator.engine.serialize import plan_to_dict

    return plan_to_dict(result)
