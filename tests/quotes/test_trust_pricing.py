"""quotes.pricing.approval_assessment on hand-made lines, figures worked out by hand below.

Threshold 10 %.  The list total counts each line at its list price (its own
price when the line has none on the list, e.g. no price list in force) plus
what the catalog prices but the plan dropped.
"""

from __future__ import annotations

from decimal import Decimal as D

from quotes.pricing import approval_assessment
from quotes.statuses import ApprovalState

T = D("0.10")


def line(category="server", qty="1", unit="100", discount="0", list_price=None, non_catalog=False):
    return {
        "category": category, "sku": category.upper(), "description_en": category, "quantity": D(qty),
        "unit_price": D(unit), "discount": D(discount), "list_unit_price": D(list_price) if list_price else None,
        "non_catalog": non_catalog,
    }  # fmt: skip


def codes(result):
    return [r["code"] for r in result[1]]


def test_line_and_quote_discounts_together_are_measured_without_a_price_list():
    # 100 × (1 − 0.05) × (1 − 0.08) = 87.40 → 12.6 % below the list: approval, though each is under 10 %.
    result = approval_assessment([line(discount="0.05")], [], D("0.08"), T)
    assert result[0] == ApprovalState.PENDING and codes(result) == ["overall"]
    assert D(result[1][0]["fraction"]) == D("0.1260")
    # 100 × 0.95 × 0.96 = 91.20 → 8.8 %: no approval.
    assert approval_assessment([line(discount="0.05")], [], D("0.04"), T) == (ApprovalState.NOT_NEEDED, [])


def test_an_override_is_measured_against_its_list_price():
    # Server at 1 instead of 3,000,000 (list): the line is 99.99997 % below the list.
    result = approval_assessment([line(unit="1", list_price="3000000")], [], D("0"), T)
    assert codes(result) == ["price_override", "overall"]
    # Exactly 10 % below the list is not above the threshold.
    assert (
        approval_assessment([line(unit="90", list_price="100")], [], D("0"), T)[0] == ApprovalState.NOT_NEEDED
    )
    # A price above the list is not a cut.
    assert (
        approval_assessment([line(unit="120", list_price="100")], [], D("0"), T)[0]
        == ApprovalState.NOT_NEEDED
    )


def test_a_dropped_catalog_line_counts_toward_the_list_total():
    # Installation (20 on the list) waived: list total 120, the customer pays 100 → 16.7 % below.
    result = approval_assessment([line()], [line("install", unit="20")], D("0"), T)
    assert codes(result) == ["overall"] and D(result[1][0]["fraction"]) == D("0.1667")


def test_non_catalog_hardware_always_needs_approval():
    assert codes(approval_assessment([line(non_catalog=True)], [], D("0"), T)) == ["non_catalog"]


def test_lease_lines_are_not_part_of_the_purchase_total_but_their_overrides_count():
    lease = line("lease", qty="36", unit="1", list_price="125000")
    result = approval_assessment([line(), lease], [], D("0"), T)
    assert codes(result) == ["price_override"]
