"""The TCO's money arithmetic: Decimals, cents, invoiced amounts and currency conversion.

All money is ``Decimal`` in ``commercial.currency``; results are quantised to 0.01 for display
(:func:`cents`) while the arithmetic keeps full precision; amounts that are invoiced (a discount,
a year's bill) are whole cents, half up (:func:`bill`).
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from ..types import PlanRequest

CENT = Decimal("0.01")
HOURS_PER_YEAR = Decimal(8760)
SECONDS_PER_YEAR = Decimal(8760 * 3600)
MONTHS_PER_YEAR = 12
MAX_HORIZON_YEARS = 15
MILLION = Decimal(1_000_000)


def as_decimal(value: Any) -> Decimal:
    """A Decimal from an int, float (via its shortest repr) or Decimal."""
    if isinstance(value, Decimal):
        return value
    if isinstance(value, float):
        return Decimal(repr(value))
    return Decimal(value)


def cents(value: Decimal) -> Decimal:
    """``value`` to the cent, as the result shows it."""
    return value.quantize(CENT)


def bill(value: Decimal) -> Decimal:
    """An amount that is invoiced (a discount, a year's bill): whole cents, half up as the BOM rounds
    (``quotes.bom.money``), so the yearly rows add up to the horizon totals and the workbook's
    formulas (Excel ROUND) give the same cents."""
    return value.quantize(CENT, rounding=ROUND_HALF_UP)


def currency_factor(from_currency: str, req: PlanRequest) -> tuple[Decimal, bool]:
    """Multiplier converting an amount in ``from_currency`` to the commercial currency."""
    to = req.commercial.currency
    if from_currency == to:
        return Decimal(1), True
    if from_currency == "USD":
        return req.commercial.usd_rate, True
    if to == "USD" and req.commercial.usd_rate > 0:
        return 1 / req.commercial.usd_rate, True
    return Decimal(1), False
