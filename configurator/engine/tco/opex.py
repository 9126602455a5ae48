"""Running costs per year: electricity, colocation, O&M, software/support, and the lease's rent.

Electricity is IT kW (the power module's maximum input) × ``power_load_factor`` × 8,760 h × PUE ×
the price per kWh, except the servers of a hot standby, which serve nothing and are charged at
``standby_power_load_factor`` of their maximum input (default 0.25, assumed: an engine with the
model loaded and no request keeps its accelerators at idle power, roughly 10–15 % of their TDP as
``nvidia-smi`` / ``npu-smi`` report it, while the host's CPUs, fans, memory and NICs keep running); site prices are converted to the quote's currency when a rate is known.  On the
lease side power and O&M are paid unless the lease includes them.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from ..checks import raise_
from ..figures import FigureBook
from ..types import AnnualCosts, Check, PlanRequest, Source
from .capex import Capex
from .money import HOURS_PER_YEAR, MONTHS_PER_YEAR, as_decimal, bill, cents, currency_factor

POWER_MODULE = Source("derived", "power module")


@dataclass(frozen=True)
class RunningCosts:
    """A year's running costs at full precision (in whole cents where they are billed)."""

    price_kwh: Decimal  # in the quote's currency
    electricity: Decimal
    colocation: Decimal
    om: Decimal
    software: Decimal
    depreciation: Decimal  # information only, not a cash flow
    buy_opex: Decimal  # om + software + electricity + colocation
    lease_rent: Decimal
    lease_electricity: Decimal  # 0 when the lease includes power
    lease_om: Decimal  # 0 when the lessor operates
    lease_year: Decimal

    def annual(self) -> AnnualCosts:
        return AnnualCosts(
            cents(self.depreciation),
            cents(self.om),
            cents(self.software),
            cents(self.electricity),
            cents(self.colocation),
            cents(self.buy_opex),
            cents(self.lease_rent),
            cents(self.lease_electricity),
            cents(self.colocation),
            cents(self.lease_year),
            cents(self.lease_om),
            cents(self.software),
        )


def running_costs(
    req: PlanRequest,
    nodes: int,
    kw: Decimal,
    n_racks: int,
    capex: Capex,
    book: FigureBook,
    checks: list[Check],
    *,
    standby_kw: Decimal = Decimal(0),
) -> RunningCosts:
    """The yearly costs of both columns; put their figures (and the IT load they start from)."""
    c = req.commercial
    currency = c.currency
    elec_factor, elec_ok = currency_factor(req.site.currency, req)
    if not elec_ok:
        checks.append(
            raise_("commercial.currency_mismatch", site_currency=req.site.currency, currency=currency)
        )
    price_kwh = req.site.electricity_price_per_kwh * elec_factor
    pue = as_decimal(req.site.pue)
    # A hot standby serves nothing: its servers draw idle power (standby_power_load_factor), the
    # serving servers and the switches their average draw (power_load_factor).
    serving_kw = kw - standby_kw
    average_kw = serving_kw * c.power_load_factor + standby_kw * c.standby_power_load_factor
    electricity = bill(average_kw * HOURS_PER_YEAR * pue * price_kwh)
    colocation = bill(n_racks * req.site.colocation_per_rack_month * elec_factor * MONTHS_PER_YEAR)
    om = bill(c.om_per_year if c.om_per_year is not None else c.om_percent_of_capex * capex.total)
    software = c.software_support_per_year
    depreciation = capex.total / c.depreciation_years
    buy_opex = om + software + electricity + colocation
    lease_rent = nodes * c.server_lease_per_month * MONTHS_PER_YEAR
    lease_elec = Decimal(0) if c.lease_includes_power else electricity
    lease_om = Decimal(0) if c.lease_includes_om else om
    lease_year = lease_rent + lease_elec + colocation + software + lease_om
    book.put("tco.it_load_kw", cents(kw), source=POWER_MODULE, it_kw=kw)
    book.put(
        "tco.annual.electricity",
        cents(electricity),
        source=Source("input", "site.electricity_price_per_kwh, site.pue, commercial.power_load_factor"),
        it_kw=cents(kw),
        standby_kw=cents(standby_kw),
        power_load_factor=c.power_load_factor,
        standby_power_load_factor=c.standby_power_load_factor,
        hours=8760,
        pue=pue,
        price_per_kwh=price_kwh,
    )
    om_fixed = c.om_per_year is not None
    book.put(
        "tco.annual.om",
        cents(om),
        variant="per_year" if om_fixed else "percent_of_capex",
        source=Source("input", "commercial.om_per_year" if om_fixed else "commercial.om_percent_of_capex"),
        om_per_year=c.om_per_year,
        om_percent_of_capex=c.om_percent_of_capex,
        capex=cents(capex.total),
    )
    book.put(
        "tco.annual.software_support",
        cents(software),
        source=Source("input", "commercial.software_support_per_year"),
        software_support_per_year=software,
    )
    book.put(
        "tco.annual.colocation",
        cents(colocation),
        source=Source("input", "site.colocation_per_rack_month"),
        racks=n_racks,
        colocation_per_rack_month=req.site.colocation_per_rack_month,
        site_currency_rate=elec_factor,
    )
    book.put(
        "tco.annual.depreciation",
        cents(depreciation),
        capex=cents(capex.total),
        depreciation_years=c.depreciation_years,
    )
    book.put(
        "tco.annual.buy_opex",
        cents(buy_opex),
        om=cents(om),
        software_support=cents(software),
        electricity=cents(electricity),
        colocation=cents(colocation),
    )
    book.put(
        "tco.annual.lease_rent",
        cents(lease_rent),
        source=Source("input", "commercial.server_lease_per_month"),
        nodes=nodes,
        server_lease_per_month=c.server_lease_per_month,
    )
    if c.lease_includes_power:
        book.put(
            "tco.annual.lease_electricity", cents(lease_elec), variant="included", lease_includes_power=True
        )
    else:
        book.put(
            "tco.annual.lease_electricity",
            cents(lease_elec),
            variant="separate",
            electricity=cents(electricity),
            lease_includes_power=False,
        )
    if c.lease_includes_om:
        book.put("tco.annual.lease_om", cents(lease_om), variant="included", lease_includes_om=True)
    else:
        book.put(
            "tco.annual.lease_om", cents(lease_om), variant="separate", om=cents(om), lease_includes_om=False
        )
    book.put(
        "tco.annual.lease_total",
        cents(lease_year),
        lease_rent=cents(lease_rent),
        colocation=cents(colocation),
        software_support=cents(software),
        lease_electricity=cents(lease_elec),
        lease_om=cents(lease_om),
        lease_includes_power=c.lease_includes_power,
        lease_includes_om=c.lease_includes_om,
    )
    return RunningCosts(
        price_kwh=price_kwh,
        electricity=electricity,
        colocation=colocation,
        om=om,
        software=software,
        depreciation=depreciation,
        buy_opex=buy_opex,
        lease_rent=lease_rent,
        lease_electricity=lease_elec,
        lease_om=lease_om,
        lease_year=lease_year,
    )
