"""Buy against lease over the horizon: the lease's scope, residual value, tables, NPV and break-even.

The two columns differ only in the servers: the lease side rents them and buys the rest of the
purchase (network, racks, installation, after the same discount) at month 0; the buy side recovers
``residual_value_fraction`` of the servers' discounted price in the last month.  Running costs are
paid monthly, a twelfth of the year's at the end of each month; NPV discounts month m by
(1 + monthly rate)^m with the monthly rate (1 + r)^(1/12) − 1.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from ..checks import raise_
from ..figures import FigureBook
from ..formatting import format_money
from ..types import Check, PlanRequest, Source, TcoMonthRow, TcoYearRow
from .capex import Capex
from .money import MONTHS_PER_YEAR, bill, cents
from .opex import RunningCosts


def book_value_fraction(horizon_years: int, depreciation_years: int) -> Decimal:
    """The default residual value: the servers' straight-line book value at the end of the horizon,
    ``1 − horizon ÷ depreciation period`` (0 once fully depreciated).  The depreciation period is the
    request's ``commercial.depreciation_years`` (default 5 years for accelerator servers; the minimum the
    PRC Enterprise Income Tax Law Implementation Regulations, art. 60, allow for electronic equipment is
    3 years).  A request that states ``residual_value_fraction`` keeps its own figure."""
    if depreciation_years <= 0:
        return Decimal(0)
    return max(Decimal(0), 1 - Decimal(horizon_years) / Decimal(depreciation_years)).quantize(
        Decimal("0.0001")
    )


@dataclass(frozen=True)
class HorizonTotals:
    """Both columns over the horizon at full precision (the rows are to the cent)."""

    lease_upfront: Decimal  # network, racks, installation: bought on the lease side too
    residual: Decimal  # recovered at the end of the horizon (buy side)
    monthly_rate: Decimal
    buy_total: Decimal
    lease_total: Decimal
    npv_buy: Decimal
    npv_lease: Decimal
    break_even: int | None  # first month buying is at or below leasing, None within the horizon
    yearly: tuple[TcoYearRow, ...]
    monthly: tuple[TcoMonthRow, ...]


def buy_vs_lease(
    req: PlanRequest,
    purchase: Capex,
    costs: RunningCosts,
    book: FigureBook,
    checks: list[Check],
) -> HorizonTotals:
    """Cumulative costs month by month and year by year, NPV and break-even; put their figures."""
    c = req.commercial
    currency = c.currency
    servers, capex = purchase.servers, purchase.total
    om, software = costs.om, costs.software
    electricity, colocation = costs.electricity, costs.colocation
    buy_opex, lease_rent = costs.buy_opex, costs.lease_rent
    lease_elec, lease_om, lease_year = costs.lease_electricity, costs.lease_om, costs.lease_year
    # Same scope: on the lease side the servers are rented; the rest of the purchase (network, racks,
    # installation, after the same discount) is bought at month 0 as on the buy side.
    # Both in whole cents (half up, as invoiced): the workbook's ROUND gives the same cents.
    servers_net = bill(servers * (1 - c.quote_discount))
    lease_upfront = capex - servers_net
    residual = bill(servers_net * c.residual_value_fraction)
    book.put(
        "tco.lease_upfront",
        cents(lease_upfront),
        capex=cents(capex),
        servers=cents(servers),
        quote_discount=c.quote_discount,
    )
    book.put(
        "tco.residual_value",
        cents(residual),
        source=Source("input", "commercial.residual_value_fraction"),
        servers=cents(servers),
        quote_discount=c.quote_discount,
        residual_value_fraction=c.residual_value_fraction,
    )

    # ---- horizon tables, NPV, break-even
    horizon = c.horizon_years
    months = horizon * MONTHS_PER_YEAR
    buy_month = buy_opex / MONTHS_PER_YEAR
    lease_month = lease_year / MONTHS_PER_YEAR
    monthly_rate = (1 + c.discount_rate) ** (Decimal(1) / MONTHS_PER_YEAR) - 1
    factor = 1 / (1 + monthly_rate)
    discount_sum = Decimal(0)
    running = Decimal(1)
    monthly_rows = [TcoMonthRow(0, cents(capex), cents(lease_upfront))]
    break_even: int | None = None
    for m in range(1, months + 1):
        running *= factor
        discount_sum += running
        buy_cum = capex + buy_month * m - (residual if m == months else 0)
        lease_cum = lease_upfront + lease_month * m
        monthly_rows.append(TcoMonthRow(m, cents(buy_cum), cents(lease_cum)))
        if break_even is None and buy_cum <= lease_cum:
            break_even = m
    npv_buy = capex + buy_month * discount_sum - residual * running
    npv_lease = lease_upfront + lease_month * discount_sum
    buy_total = capex + buy_opex * horizon - residual
    lease_total = lease_upfront + lease_year * horizon

    yearly_rows = []
    for y in range(1, horizon + 1):
        end = residual if y == horizon else Decimal(0)
        upfront = lease_upfront if y == 1 else Decimal(0)
        buy_cost = (capex if y == 1 else Decimal(0)) + buy_opex - end
        yearly_rows.append(
            TcoYearRow(
                y,
                cents(capex if y == 1 else Decimal(0)),
                cents(om),
                cents(software),
                cents(electricity),
                cents(colocation),
                cents(buy_cost),
                cents(capex + buy_opex * y - end),
                cents(lease_rent),
                cents(lease_elec),
                cents(colocation),
                cents(lease_year + upfront),
                cents(lease_upfront + lease_year * y),
                cents(lease_upfront + lease_year * y - (capex + buy_opex * y - end)),
                buy_residual=cents(-end) if end else Decimal("0.00"),
                lease_upfront=cents(upfront),
                lease_om=cents(lease_om),
                lease_software_support=cents(software),
            )
        )

    book.put(
        "tco.buy_total",
        cents(buy_total),
        label={"horizon": horizon},
        capex=cents(capex),
        horizon_years=horizon,
        om=cents(om),
        software_support=cents(software),
        electricity=cents(electricity),
        colocation=cents(colocation),
        residual_value=cents(residual),
    )
    # The same total without the residual value: the effect of that assumption, stated beside it.
    book.put(
        "tco.buy_total_without_residual",
        cents(buy_total + residual),
        label={"horizon": horizon},
        buy_total=cents(buy_total),
        residual_value=cents(residual),
    )
    book.put(
        "tco.lease_total",
        cents(lease_total),
        label={"horizon": horizon},
        lease_upfront=cents(lease_upfront),
        horizon_years=horizon,
        lease_rent=cents(lease_rent),
        software_support=cents(software),
        lease_om=cents(lease_om),
        electricity=cents(lease_elec),
        colocation=cents(colocation),
    )
    monthly_shown = monthly_rate.quantize(Decimal("0.000001"))
    book.put(
        "tco.npv_buy",
        cents(npv_buy),
        discount_rate=c.discount_rate,
        monthly_rate=monthly_shown,
        months=months,
        capex=cents(capex),
        buy_monthly=cents(buy_month),
        residual_value=cents(residual),
    )
    book.put(
        "tco.npv_lease",
        cents(npv_lease),
        discount_rate=c.discount_rate,
        monthly_rate=monthly_shown,
        months=months,
        lease_upfront=cents(lease_upfront),
        lease_monthly=cents(lease_month),
    )
    book.put(
        "tco.break_even_month",
        break_even if break_even is not None else "none within horizon",
        buy_monthly=cents(buy_month),
        lease_monthly=cents(lease_month),
        capex=cents(capex),
        lease_upfront=cents(lease_upfront),
        residual_value=cents(residual),
        months=months,
    )
    if c.server_lease_per_month == 0:
        # No lease offer: compute_tco withdraws every lease figure (never a lease at zero rent).
        checks.append(raise_("commercial.lease_price_missing"))
    elif break_even is None:
        checks.append(
            raise_(
                "commercial.no_break_even",
                figures={"buy_total": str(cents(buy_total)), "lease_total": str(cents(lease_total))},
                horizon=horizon,
                buy_en=format_money(cents(buy_total), currency, "en"),
                buy_zh=format_money(cents(buy_total), currency, "zh-hans"),
                lease_en=format_money(cents(lease_total), currency, "en"),
                lease_zh=format_money(cents(lease_total), currency, "zh-hans"),
            )
        )
    return HorizonTotals(
        lease_upfront=lease_upfront,
        residual=residual,
        monthly_rate=monthly_rate,
        buy_total=buy_total,
        lease_total=lease_total,
        npv_buy=npv_buy,
        npv_lease=npv_lease,
        break_even=break_even,
        yearly=tuple(yearly_rows),
        monthly=tuple(monthly_rows),
    )
