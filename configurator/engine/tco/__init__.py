"""Total cost of ownership: buy vs lease, NPV, break-even and cost per million tokens.

All money is ``Decimal`` in ``commercial.currency``; the result quantises to
0.01 for display while the arithmetic keeps full precision.  The core stays
fast (no pandas): :func:`tco_tables` builds the yearly and monthly tables as
pandas DataFrames on demand.

The parts, in the order :func:`compute_tco` runs them: ``validation`` (inputs refused, each on
its field), ``capex`` (the purchase, from the network and rack results), ``opex`` (the running
costs of a year, both columns), ``lease`` (buy against lease over the horizon: tables, NPV,
break-even) and ``tokens`` (cost per million tokens and its sensitivity); ``money`` holds the
Decimal arithmetic; the dataclasses returned are in ``engine/types.py``.  Every figure is put on the figure
book (``engine/figures/catalogue/tco.py``).

Conventions (each is shown in the result's figures):

* **Buy**: capex is paid at month 0; O&M, software/support, electricity and
  colocation are paid monthly (one twelfth of the annual figure at the end of
  each month).  Depreciation (straight line) is shown for information and is
  not a cash flow.
* **Lease, on the same scope as the purchase**: the servers are rented
  (monthly rent for every node) instead of bought; everything else is the
  same on both sides — the network, racks and installation are bought at
  month 0, and software/support, O&M (unless ``lease_includes_om``),
  electricity (unless ``lease_includes_power``) and colocation are paid
  monthly.  The two columns differ only in the servers.
* **Residual value**: the buy side recovers ``residual_value_fraction`` of the
  servers' (discounted) purchase price by selling them at the end of the
  horizon (a negative cash flow in the last month).
* **NPV** uses monthly discounting: the annual ``discount_rate`` r becomes
  the monthly rate (1 + r)^(1/12) − 1 and a payment at the end of month m is
  divided by (1 + monthly rate)^m.  Capex at month 0 is not discounted.
* **Break-even**: the first month whose cumulative buy cost is at or below the
  cumulative lease cost; ``None`` when that never happens within the horizon.
* **Cost per million tokens**: the annual cost (horizon TCO ÷ horizon years,
  on both sides, so it agrees with the TCO table; accounting depreciation
  over ``depreciation_years`` is shown for information only) is split between input and output tokens
  **by their share of accelerator time** (``performance.prefill_time_share``:
  prefill time vs decode time in an aggregated cluster, prefill vs decode
  nodes in xPyD), then divided by the tokens served in a year at
  ``commercial.utilisation``.  The saving against the model's public API price
  compares the whole annual cost with what the same token mix would cost on
  the API, so it does not depend on the split.
"""

from __future__ import annotations

from dataclasses import asdict, replace
from decimal import Decimal
from typing import Any

from ..checks import raise_
from ..figures import FigureBook
from ..network import NetworkResult
from ..performance import PerformanceResult
from ..power import PowerResult
from ..racks import RackResult
from ..types import (
    AnnualCosts,
    CapexBreakdown,
    Check,
    LayoutResult,
    PlanRequest,
    SensitivityRow,
    Severity,
    TcoMonthRow,
    TcoResult,
    TcoYearRow,
    TokenEconomics,
)
from .capex import (
    CHECKPOINT_COPIES,
    Capex,
    checkpoint_storage_tb,
    price_capex,
    rack_cooling_counts,
    switch_counts,
)
from .lease import HorizonTotals, buy_vs_lease
from .money import as_decimal, cents
from .opex import RunningCosts, running_costs
from .tokens import CostDrivers, sensitivity, token_economics
from .validation import validate_commercial, validate_site

__all__ = [
    "CHECKPOINT_COPIES",
    "AnnualCosts",
    "Capex",
    "CapexBreakdown",
    "CostDrivers",
    "HorizonTotals",
    "RunningCosts",
    "SensitivityRow",
    "TcoMonthRow",
    "TcoResult",
    "TcoYearRow",
    "TokenEconomics",
    "buy_vs_lease",
    "checkpoint_storage_tb",
    "compute_tco",
    "price_capex",
    "rack_cooling_counts",
    "running_costs",
    "sensitivity",
    "switch_counts",
    "tco_tables",
    "token_economics",
    "validate_commercial",
    "validate_site",
]


def compute_tco(
    req: PlanRequest,
    layout: LayoutResult,
    power: PowerResult,
    racks: RackResult,
    network: NetworkResult,
    performance: PerformanceResult | None = None,
) -> TcoResult:
    """Buy vs lease over the horizon, NPV, break-even and cost per million tokens (see module doc)."""
    c = req.commercial
    checks: list[Check] = [*validate_commercial(c), *validate_site(req)]
    book = FigureBook(currency=c.currency)

    nodes = layout.nodes
    kw = as_decimal(power.it_kw)
    n_racks = racks.rack_count
    sw_counts = switch_counts(network)
    n_optics = network.optics
    if any(check.severity == Severity.ERROR for check in checks):
        return _refused(req, nodes, kw, n_racks, sw_counts, n_optics, tuple(checks))

    capex = price_capex(req, nodes, racks, network, book, checks)
    on_request = _on_request_lines(req, checks)
    if on_request:
        # A line without a price: no total counts it at 0.  The result carries the counts and one
        # check naming every line on request, like a refusal but as a warning.
        kept = [x for x in checks if x.code not in _COUNTED_AT_ZERO]
        kept.append(_price_on_request_check(req, on_request))
        return replace(
            _refused(req, nodes, kw, n_racks, sw_counts, n_optics, tuple(kept)),
            prices_on_request=tuple(code for code, _en, _zh in on_request),
        )
    standby_nodes = sum(g.nodes for g in layout.groups if g.role == "standby")
    standby_kw = min(kw, as_decimal(req.server.max_input_kw) * standby_nodes)
    running = running_costs(req, nodes, kw, n_racks, capex, book, checks, standby_kw=standby_kw)
    totals = buy_vs_lease(req, capex, running, book, checks)
    if c.server_unit_price == 0:
        checks.append(raise_("commercial.server_price_missing"))
    tokens, rows = token_economics(req, performance, capex, running, totals, book, checks)

    result = TcoResult(
        valid=True,
        currency=c.currency,
        usd_rate=c.usd_rate,
        horizon_years=c.horizon_years,
        nodes=nodes,
        it_load_kw=cents(kw),
        rack_count=n_racks,
        switch_counts=dict(sw_counts),
        optics_count=n_optics,
        capex=capex.breakdown(),
        annual=running.annual(),
        buy_total=cents(totals.buy_total),
        lease_total=cents(totals.lease_total),
        npv_buy=cents(totals.npv_buy),
        npv_lease=cents(totals.npv_lease),
        monthly_discount_rate=totals.monthly_rate,
        break_even_month=totals.break_even,
        yearly=totals.yearly,
        monthly=totals.monthly,
        tokens=tokens,
        sensitivity=rows,
        figures=book.figures,
        checks=tuple(checks),
        residual_value=cents(totals.residual),
        lease_upfront=cents(totals.lease_upfront),
        lease_includes=tuple(
            name
            for name, included in (("power", c.lease_includes_power), ("om", c.lease_includes_om))
            if included
        ),
    )
    return result if c.server_lease_per_month > 0 else without_lease(result)


# A capex line without a price, as price_capex reports it: withdrawn into one price-on-request check.
_COUNTED_AT_ZERO = ("commercial.switch_price_missing", "commercial.media_price_missing")


def _on_request_lines(req: PlanRequest, checks: list[Check]) -> list[tuple[str, str, str]]:
    """(code, English, Chinese) of every line priced on request: the servers, then switches and media
    the network placed that the price list does not price."""
    lines: list[tuple[str, str, str]] = []
    if "server" in req.commercial.prices_on_request:
        lines.append(
            ("server", f"servers ({req.server.name})", f"服务器（{req.server.name_zh or req.server.name}）")
        )
    names = {s.slug: (s.name, s.name_zh or s.name) for s in req.switches}
    for x in checks:
        if x.code == "commercial.switch_price_missing":
            slug = str(x.figures.get("slug", ""))
            en, zh = names.get(slug, (slug, slug))
            lines.append((f"switch:{slug}", f"switch {en}", f"交换机 {zh}"))
        elif x.code == "commercial.media_price_missing":
            code = str(x.figures.get("media", ""))
            lines.append((f"media:{code}", code, code))
    return lines


def _price_on_request_check(req: PlanRequest, lines: list[tuple[str, str, str]]) -> Check:
    en = ", ".join(e for _c, e, _z in lines)
    zh = "、".join(z for _c, _e, z in lines)
    return raise_(
        "commercial.price_on_request",
        figures={"lines": [code for code, _e, _z in lines], "server": req.server.slug},
        lines_en=en,
        lines_zh=zh,
        price_field="commercial.server_unit_price"
        if lines[0][0] == "server"
        else "commercial.switch_unit_prices",
    )


_LEASE_FIGURES = (
    "tco.lease_total",
    "tco.npv_lease",
    "tco.break_even_month",
    "tco.annual.lease_",
    "tco.tokens.lease.",
)


def without_lease(result: TcoResult) -> TcoResult:
    """The result with every lease figure withdrawn (None): the catalog has no lease offer, and a
    lease at zero rent is not a lease.  The purchase side is unchanged."""
    annual = replace(
        result.annual,
        lease_rent=None,
        lease_electricity=None,
        lease_colocation=None,
        lease_total=None,
        lease_om=None,
        lease_software_support=None,
    )
    yearly = tuple(
        replace(
            row,
            lease_rent=None,
            lease_electricity=None,
            lease_colocation=None,
            lease_cost=None,
            lease_cumulative=None,
            lease_minus_buy_cumulative=None,
            lease_upfront=None,
            lease_om=None,
            lease_software_support=None,
        )
        for row in result.yearly
    )
    monthly = tuple(replace(row, lease_cumulative=None) for row in result.monthly)
    tokens = result.tokens
    if tokens is not None:
        tokens = replace(
            tokens,
            annual_cost_lease=None,
            cost_per_m_input_lease=None,
            cost_per_m_output_lease=None,
            cost_per_m_blended_lease=None,
            saving_vs_api_lease=None,
        )
    figures = {k: v for k, v in result.figures.items() if not k.startswith(_LEASE_FIGURES)}
    return replace(
        result,
        annual=annual,
        yearly=yearly,
        monthly=monthly,
        tokens=tokens,
        lease_total=None,
        npv_lease=None,
        break_even_month=None,
        sensitivity=tuple(r for r in result.sensitivity if r.basis != "lease"),
        figures=figures,
        lease_offered=False,
    )


def _refused(
    req: PlanRequest,
    nodes: int,
    kw: Decimal,
    n_racks: int,
    sw_counts: dict[str, int],
    n_optics: int,
    checks: tuple[Check, ...],
) -> TcoResult:
    """An empty result that carries the refusals, so the UI can show them beside the inputs."""
    zero = Decimal("0.00")
    return TcoResult(
        valid=False,
        currency=req.commercial.currency,
        usd_rate=req.commercial.usd_rate,
        horizon_years=req.commercial.horizon_years,
        nodes=nodes,
        it_load_kw=cents(kw),
        rack_count=n_racks,
        switch_counts=dict(sw_counts),
        optics_count=n_optics,
        capex=CapexBreakdown(*(zero,) * 8),
        annual=AnnualCosts(*(zero,) * 10),
        buy_total=zero,
        lease_total=zero,
        npv_buy=zero,
        npv_lease=zero,
        monthly_discount_rate=Decimal(0),
        break_even_month=None,
        yearly=(),
        monthly=(),
        tokens=None,
        sensitivity=(),
        figures={},
        checks=checks,
    )


# --------------------------------------------------------------------------- tables (on demand)


def tco_tables(result: TcoResult) -> dict[str, Any]:
    """Yearly and monthly cumulative tables as pandas DataFrames (built on demand, not in plan())."""
    import pandas as pd

    yearly = pd.DataFrame([asdict(r) for r in result.yearly])
    monthly = pd.DataFrame([asdict(r) for r in result.monthly])
    sensitivity = pd.DataFrame([asdict(r) for r in result.sensitivity])
    for frame in (yearly, monthly):
        frame.attrs["currency"] = result.currency
    return {"yearly": yearly, "monthly": monthly, "sensitivity": sensitivity}
