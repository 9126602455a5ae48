"""Total cost of ownership: buy vs lease, NPV, break-even and cost per million tokens.

All money is ``Decimal`` in ``commercial.currency``; the result quantises to
0.01 for display while the arithmetic keeps full precision.  The core stays
fast (no pandas): :func:`tco_tables` builds the yearly and monthly tables as
pandas DataFrames on demand.

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

import math
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from .figures import FigureBook
from .network import NetworkResult
from .performance import PerformanceResult
from .power import PowerResult
from .racks import RackResult
from .types import (
    Check,
    CommercialSpec,
    Figure,
    LayoutResult,
    PlanRequest,
    Severity,
    Source,
)

AREA = "commercial"
CENT = Decimal("0.01")
FINE = Decimal("0.0001")
HOURS_PER_YEAR = Decimal(8760)
SECONDS_PER_YEAR = Decimal(8760 * 3600)
MONTHS_PER_YEAR = 12
MAX_HORIZON_YEARS = 15
MILLION = Decimal(1_000_000)
SENSITIVITY_STEP = Decimal("0.2")


def _d(value: Any) -> Decimal:
    """A Decimal from an int, float (via its shortest repr) or Decimal."""
    if isinstance(value, Decimal):
        return value
    if isinstance(value, float):
        return Decimal(repr(value))
    return Decimal(value)


def _q(value: Decimal) -> Decimal:
    return value.quantize(CENT)


def _bill(value: Decimal) -> Decimal:
    """An amount that is invoiced (a discount, a year's bill): whole cents, half up as the BOM rounds
    (``quotes.bom.money``), so the yearly rows add up to the horizon totals and the workbook's
    formulas (Excel ROUND) give the same cents."""
    return value.quantize(CENT, rounding=ROUND_HALF_UP)


# --------------------------------------------------------------------------- what the other modules sized
# Capex and the running costs read the power, rack and network results as typed: the IT load
# (power.it_kw), the racks and the cooling each needs, every switch placed and the transceivers
# and cables.  The figures name the module each count comes from.

POWER_MODULE = Source("derived", "power module")
RACK_MODULE = Source("derived", "rack module")
NETWORK_MODULE = Source("derived", "network module")
CHECKPOINT_COPIES = 2  # the version served and the next one, side by side during an upgrade


def checkpoint_storage_tb(req: PlanRequest) -> int:
    """Shared storage for the model checkpoint in whole TB: two copies of the weights as stored on disk."""
    return math.ceil(CHECKPOINT_COPIES * req.model.weight_bytes / 10**12) if req.model.weight_bytes else 0


def rack_cooling_counts(racks: RackResult) -> dict[str, int]:
    """Racks by the cooling they need (``RackLayout.cooling_required``)."""
    counts: dict[str, int] = {}
    for rack in racks.racks:
        counts[rack.cooling_required] = counts.get(rack.cooling_required, 0) + 1
    return counts


def switch_counts(network: NetworkResult) -> dict[str, int]:
    """Switches placed by the network module, by catalog slug."""
    counts: dict[str, int] = {}
    for switch in network.switches:
        counts[switch.slug] = counts.get(switch.slug, 0) + 1
    return counts


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class CapexBreakdown:
    servers: Decimal
    switches: Decimal
    optics: Decimal
    racks: Decimal
    installation: Decimal
    subtotal: Decimal
    discount: Decimal
    total: Decimal
    gateway: Decimal = Decimal("0.00")  # gateway / load balancer servers
    storage: Decimal = Decimal("0.00")  # shared storage for the model checkpoint
    storage_tb: int = 0


@dataclass(frozen=True)
class AnnualCosts:
    """Costs of one year (buy side and lease side)."""

    depreciation: Decimal  # information only
    om: Decimal
    software_support: Decimal
    electricity: Decimal
    colocation: Decimal
    buy_opex: Decimal  # om + software_support + electricity + colocation
    lease_rent: Decimal
    lease_electricity: Decimal  # 0 when the lease includes power
    lease_colocation: Decimal
    lease_total: Decimal
    lease_om: Decimal = Decimal("0.00")  # O&M on the lease side (0 when the lessor operates)
    lease_software_support: Decimal = Decimal("0.00")


@dataclass(frozen=True)
class TcoYearRow:
    year: int
    buy_capex: Decimal
    buy_om: Decimal
    buy_software_support: Decimal
    buy_electricity: Decimal
    buy_colocation: Decimal
    buy_cost: Decimal
    buy_cumulative: Decimal
    lease_rent: Decimal
    lease_electricity: Decimal
    lease_colocation: Decimal
    lease_cost: Decimal
    lease_cumulative: Decimal
    lease_minus_buy_cumulative: Decimal
    # The rest of each side's cost, so that a row's columns add up to its cost (the workbook's
    # formulas sum them); defaults keep rows of plans stored before these columns readable.
    buy_residual: Decimal = Decimal("0.00")  # servers sold at the end of the horizon: a credit (≤ 0)
    lease_upfront: Decimal = Decimal("0.00")  # network, racks, installation bought in year 1
    lease_om: Decimal = Decimal("0.00")
    lease_software_support: Decimal = Decimal("0.00")


@dataclass(frozen=True)
class TcoMonthRow:
    month: int
    buy_cumulative: Decimal
    lease_cumulative: Decimal


@dataclass(frozen=True)
class TokenEconomics:
    """Tokens served in a year at the assumed utilisation and their unit cost."""

    measured: bool  # throughput from a load test rather than the estimate
    output_tokens_per_s: float
    input_tokens_per_s: float
    input_m_tokens_per_year: Decimal
    output_m_tokens_per_year: Decimal
    input_cost_share: Decimal  # share of the annual cost charged to input tokens
    annual_cost_buy: Decimal
    annual_cost_lease: Decimal
    cost_per_m_input_buy: Decimal | None
    cost_per_m_output_buy: Decimal | None
    cost_per_m_blended_buy: Decimal | None
    cost_per_m_input_lease: Decimal | None
    cost_per_m_output_lease: Decimal | None
    cost_per_m_blended_lease: Decimal | None
    api_price_input_per_m: Decimal | None  # converted to the result currency
    api_price_output_per_m: Decimal | None
    api_cost_per_year: Decimal | None  # the same tokens bought from the API
    saving_vs_api_buy: Decimal | None  # fraction: 1 − annual cost ÷ API cost
    saving_vs_api_lease: Decimal | None


@dataclass(frozen=True)
class SensitivityRow:
    """How the blended cost per million tokens moves when one input moves ±20 %."""

    parameter: str  # electricity_price | utilisation | lease_price | throughput
    basis: str  # buy | lease
    label_en: str
    label_zh: str
    unit: str
    low_value: Decimal
    base_value: Decimal
    high_value: Decimal
    cost_at_low: Decimal | None
    cost_at_base: Decimal | None
    cost_at_high: Decimal | None


@dataclass(frozen=True)
class TcoResult:
    """What :func:`compute_tco` returns.  Money in ``currency``, quantised to 0.01."""

    valid: bool  # False when the commercial inputs were refused (see checks)
    currency: str
    usd_rate: Decimal
    horizon_years: int
    nodes: int
    it_load_kw: Decimal
    rack_count: int
    switch_counts: Mapping[str, int]
    optics_count: int
    capex: CapexBreakdown
    annual: AnnualCosts
    buy_total: Decimal  # over the horizon
    lease_total: Decimal
    npv_buy: Decimal
    npv_lease: Decimal
    monthly_discount_rate: Decimal
    break_even_month: int | None
    yearly: tuple[TcoYearRow, ...]
    monthly: tuple[TcoMonthRow, ...]
    tokens: TokenEconomics | None
    sensitivity: tuple[SensitivityRow, ...]
    figures: Mapping[str, Figure] = field(default_factory=dict)
    checks: tuple[Check, ...] = ()
    residual_value: Decimal = Decimal("0.00")  # recovered at the end of the horizon (buy side)
    lease_upfront: Decimal = Decimal("0.00")  # network, racks, installation: bought on the lease side too
    # What the lease side includes besides the servers' rent (the same scope as the purchase).
    lease_includes: tuple[str, ...] = ()


# --------------------------------------------------------------------------- validation


def _refuse(code: str, field_name: str, en: str, zh: str, value: Any, fix_value: Any = None) -> Check:
    return Check(
        code,
        Severity.ERROR,
        AREA,
        en,
        zh,
        {"value": str(value)},
        field=field_name,
        fix={field_name: fix_value} if fix_value is not None else {},
        fix_en="Correct the value." if fix_value is None else f"Use {fix_value}.",
        fix_zh="请更正该数值。" if fix_value is None else f"建议改为 {fix_value}。",
    )


def validate_commercial(spec: CommercialSpec) -> list[Check]:
    """Refuse commercial inputs that would make the TCO meaningless; each check names its field."""
    out: list[Check] = []
    prices: list[tuple[str, Decimal | None]] = [
        ("server_unit_price", spec.server_unit_price),
        ("server_lease_per_month", spec.server_lease_per_month),
        ("optics_unit_price", spec.optics_unit_price),
        ("rack_unit_price", spec.rack_unit_price),
        ("installation", spec.installation),
        ("software_support_per_year", spec.software_support_per_year),
        ("om_per_year", spec.om_per_year),
        ("om_percent_of_capex", spec.om_percent_of_capex),
    ]
    prices += [(f"switch_unit_prices.{slug}", price) for slug, price in spec.switch_unit_prices.items()]
    prices += [(f"media_unit_prices.{code}", price) for code, price in spec.media_unit_prices.items()]
    prices += [(f"rack_unit_prices_by_cooling.{k}", v) for k, v in spec.rack_unit_prices_by_cooling.items()]
    prices += [
        ("gateway_unit_price", spec.gateway_unit_price),
        ("storage_price_per_tb", spec.storage_price_per_tb),
    ]
    for name, value in prices:
        if value is not None and value < 0:
            out.append(
                _refuse(
                    "commercial.negative_price",
                    f"commercial.{name}",
                    f"{name} is negative ({value}); prices and costs cannot be below zero.",
                    f"{name} 为负数（{value}），价格与费用不能小于零。",
                    value,
                    0,
                )
            )
    if not isinstance(spec.horizon_years, int) or not 1 <= spec.horizon_years <= MAX_HORIZON_YEARS:
        out.append(
            _refuse(
                "commercial.horizon_out_of_range",
                "commercial.horizon_years",
                f"TCO horizon {spec.horizon_years} years is outside 1–{MAX_HORIZON_YEARS} years.",
                f"TCO 测算周期 {spec.horizon_years} 年超出 1–{MAX_HORIZON_YEARS} 年范围。",
                spec.horizon_years,
                3,
            )
        )
    if not Decimal(0) <= spec.residual_value_fraction <= Decimal(1):
        out.append(
            _refuse(
                "commercial.residual_out_of_range",
                "commercial.residual_value_fraction",
                f"Residual value {spec.residual_value_fraction} is outside 0–1 of the servers' price.",
                f"残值比例 {spec.residual_value_fraction} 超出服务器价格的 0–1 范围。",
                spec.residual_value_fraction,
            )
        )
    if not isinstance(spec.depreciation_years, int) or spec.depreciation_years < 1:
        out.append(
            _refuse(
                "commercial.depreciation_years_invalid",
                "commercial.depreciation_years",
                f"Depreciation life {spec.depreciation_years} years must be at least 1 year.",
                f"折旧年限 {spec.depreciation_years} 年须至少为 1 年。",
                spec.depreciation_years,
                5,
            )
        )
    if not Decimal(0) <= spec.discount_rate <= Decimal(1):
        out.append(
            _refuse(
                "commercial.discount_rate_out_of_range",
                "commercial.discount_rate",
                f"Discount rate {spec.discount_rate * 100:.2f} % is outside 0–100 % (enter 0.08 for 8 %).",
                f"折现率 {spec.discount_rate * 100:.2f}% 超出 0–100% 范围（8% 请填 0.08）。",
                spec.discount_rate,
                Decimal("0.08"),
            )
        )
    if not Decimal(0) < spec.utilisation <= Decimal(1):
        out.append(
            _refuse(
                "commercial.utilisation_out_of_range",
                "commercial.utilisation",
                f"Utilisation {spec.utilisation} must be above 0 and at most 1.",
                f"利用率 {spec.utilisation} 须大于 0 且不超过 1。",
                spec.utilisation,
                Decimal("0.6"),
            )
        )
    if not Decimal(0) < spec.power_load_factor <= Decimal(1):
        out.append(
            _refuse(
                "commercial.load_factor_out_of_range",
                "commercial.power_load_factor",
                f"Power load factor {spec.power_load_factor} must be above 0 and at most 1.",
                f"平均负载率 {spec.power_load_factor} 须大于 0 且不超过 1。",
                spec.power_load_factor,
                Decimal("0.8"),
            )
        )
    if not Decimal(0) <= spec.quote_discount < Decimal(1):
        out.append(
            _refuse(
                "commercial.quote_discount_out_of_range",
                "commercial.quote_discount",
                f"Quote discount {spec.quote_discount} must be a fraction from 0 up to (not including) 1.",
                f"报价折扣 {spec.quote_discount} 须为 0 至 1（不含 1）之间的比例。",
                spec.quote_discount,
                0,
            )
        )
    if spec.usd_rate <= 0:
        out.append(
            _refuse(
                "commercial.usd_rate_invalid",
                "commercial.usd_rate",
                f"Exchange rate {spec.usd_rate} {spec.currency}/USD must be positive.",
                f"汇率 {spec.usd_rate} {spec.currency}/USD 须为正数。",
                spec.usd_rate,
            )
        )
    return out


def _validate_site(req: PlanRequest) -> list[Check]:
    out: list[Check] = []
    if req.site.electricity_price_per_kwh < 0:
        out.append(
            _refuse(
                "commercial.negative_price",
                "site.electricity_price_per_kwh",
                f"Electricity price {req.site.electricity_price_per_kwh}/kWh is negative.",
                f"电价 {req.site.electricity_price_per_kwh} 元/kWh 为负数。",
                req.site.electricity_price_per_kwh,
                Decimal("0.65"),
            )
        )
    if req.site.colocation_per_rack_month < 0:
        out.append(
            _refuse(
                "commercial.negative_price",
                "site.colocation_per_rack_month",
                f"Colocation price {req.site.colocation_per_rack_month} per rack-month is negative.",
                f"机柜租金 {req.site.colocation_per_rack_month} /柜/月为负数。",
                req.site.colocation_per_rack_month,
                0,
            )
        )
    if req.site.pue < 1:
        out.append(
            _refuse(
                "commercial.pue_below_one",
                "site.pue",
                f"PUE {req.site.pue} is below 1, which is physically impossible.",
                f"PUE {req.site.pue} 小于 1，物理上不可能。",
                req.site.pue,
                1.3,
            )
        )
    return out


# --------------------------------------------------------------------------- core


@dataclass(frozen=True)
class _Inputs:
    """The scalar drivers of the annual cost, so sensitivity can vary one at a time."""

    capex: Decimal
    horizon: int
    om: Decimal
    software: Decimal
    electricity: Decimal
    colocation: Decimal
    lease_rent: Decimal
    lease_includes_power: bool
    output_tps: Decimal
    input_tps: Decimal
    utilisation: Decimal
    input_share: Decimal

    residual: Decimal = Decimal(0)
    lease_upfront: Decimal = Decimal(0)
    lease_om: Decimal = Decimal(0)

    def annual_buy(self) -> Decimal:
        """Horizon TCO ÷ horizon years: (capex − residual) ÷ N + the yearly running cost."""
        running = self.om + self.software + self.electricity + self.colocation
        return (self.capex - self.residual) / self.horizon + running

    def annual_lease(self) -> Decimal:
        """Horizon lease TCO ÷ horizon years, on the purchase's scope."""
        power = Decimal(0) if self.lease_includes_power else self.electricity
        running = self.lease_rent + power + self.colocation + self.software + self.lease_om
        return self.lease_upfront / self.horizon + running

    def m_tokens(self) -> tuple[Decimal, Decimal]:
        seconds = SECONDS_PER_YEAR * self.utilisation
        return self.input_tps * seconds / MILLION, self.output_tps * seconds / MILLION

    def blended(self, basis: str) -> Decimal | None:
        tin, tout = self.m_tokens()
        if tin + tout <= 0:
            return None
        annual = self.annual_buy() if basis == "buy" else self.annual_lease()
        return annual / (tin + tout)


def _currency_factor(from_currency: str, req: PlanRequest) -> tuple[Decimal, bool]:
    """Multiplier converting an amount in ``from_currency`` to the commercial currency."""
    to = req.commercial.currency
    if from_currency == to:
        return Decimal(1), True
    if from_currency == "USD":
        return req.commercial.usd_rate, True
    if to == "USD" and req.commercial.usd_rate > 0:
        return 1 / req.commercial.usd_rate, True
    return Decimal(1), False


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
    currency = c.currency
    checks: list[Check] = [*validate_commercial(c), *_validate_site(req)]
    book = FigureBook(currency=currency)

    nodes = layout.nodes
    kw = _d(power.it_kw)
    n_racks = racks.rack_count
    sw_counts = switch_counts(network)
    n_optics = network.optics
    if any(check.severity == Severity.ERROR for check in checks):
        return _refused(req, nodes, kw, n_racks, sw_counts, n_optics, tuple(checks))

    # ---- capex
    servers = nodes * c.server_unit_price
    switches = Decimal(0)
    for slug, count in sorted(sw_counts.items()):
        price = c.switch_unit_prices.get(slug)
        if price is None:
            checks.append(
                Check(
                    "commercial.switch_price_missing",
                    Severity.WARNING,
                    AREA,
                    f"No unit price for switch {slug} (× {count}); it is counted at 0.",
                    f"交换机 {slug}（× {count}）缺少单价，暂按 0 计入。",
                    {"slug": slug, "count": count},
                    field=f"commercial.switch_unit_prices.{slug}",
                    fix_en="Enter the switch price from the price list.",
                    fix_zh="请从价格表录入该交换机单价。",
                )
            )
            continue
        switches += count * price
    media_cost = Decimal(0)
    # Transceivers below 400G and the cables, each by its media code (network.link_media).
    media_counts = dict(network.media)
    for code, count in sorted(media_counts.items()):
        price = c.media_unit_prices.get(code)
        if price is None:
            checks.append(
                Check(
                    "commercial.media_price_missing",
                    Severity.WARNING,
                    AREA,
                    f"No unit price for {code} (× {count}); it is counted at 0.",
                    f"{code}（× {count}）缺少单价，暂按 0 计入。",
                    {"media": code, "count": count},
                    field=f"commercial.media_unit_prices.{code}",
                    fix_en="Enter the price from the price list.",
                    fix_zh="请从价格表录入该单价。",
                )
            )
            continue
        media_cost += count * price
    optics = n_optics * c.optics_unit_price + media_cost
    # Racks priced by the cooling each needs (racks.RackLayout.cooling_required): a rack over the
    # air-cooling limit is a containment or liquid-cooled rack, at its own price.
    rack_cooling = rack_cooling_counts(racks)
    rack_cost = Decimal(0)
    for cooling, count in sorted(rack_cooling.items()):
        if cooling == req.rack.cooling:
            rack_cost += count * c.rack_unit_price
            continue
        price = c.rack_unit_prices_by_cooling.get(cooling)
        if price is None:
            checks.append(
                Check(
                    "commercial.rack_price_missing",
                    Severity.WARNING,
                    AREA,
                    f"{count} rack(s) need {cooling} cooling but no {cooling} rack is priced; "
                    "they are counted at the price of the rack type requested.",
                    f"{count} 个机柜需要{'液冷' if cooling == 'liquid' else '冷/热通道封闭'}，但价格表中没有该类机柜，"
                    "暂按所选机柜单价计入。",
                    {"cooling": cooling, "count": count},
                    field=f"commercial.rack_unit_prices_by_cooling.{cooling}",
                    fix_en="Enter the price of the rack type from the price list.",
                    fix_zh="请从价格表录入该类机柜单价。",
                )
            )
            price = c.rack_unit_price
        rack_cost += count * price
    gateway = c.gateways * c.gateway_unit_price if c.gateway_unit_price > 0 else Decimal(0)
    storage_tb = checkpoint_storage_tb(req) if c.storage_price_per_tb > 0 else 0
    storage = storage_tb * c.storage_price_per_tb
    subtotal = servers + switches + optics + rack_cost + c.installation + gateway + storage
    discount = _bill(subtotal * c.quote_discount)
    capex = subtotal - discount
    capex_bd = CapexBreakdown(
        _q(servers),
        _q(switches),
        _q(optics),
        _q(rack_cost),
        _q(c.installation),
        _q(subtotal),
        _q(discount),
        _q(capex),
        _q(gateway),
        _q(storage),
        storage_tb,
    )
    book.put(
        "tco.capex.gateway",
        _q(gateway),
        source=Source("input", "commercial.gateway_unit_price"),
        gateways=c.gateways,
        gateway_unit_price=c.gateway_unit_price,
    )
    book.put(
        "tco.capex.storage",
        _q(storage),
        source=Source("input", "commercial.storage_price_per_tb"),
        copies=CHECKPOINT_COPIES,
        checkpoint_bytes=req.model.weight_bytes,
        tb=storage_tb,
        storage_price_per_tb=c.storage_price_per_tb,
    )
    book.put(
        "tco.capex.servers",
        _q(servers),
        source=Source("input", "commercial.server_unit_price"),
        nodes=nodes,
        server_unit_price=c.server_unit_price,
    )
    book.put(
        "tco.capex.switches",
        _q(switches),
        source=NETWORK_MODULE,
        counts=dict(sw_counts),
        prices={k: str(v) for k, v in c.switch_unit_prices.items()},
    )
    book.put(
        "tco.capex.optics",
        _q(optics),
        source=NETWORK_MODULE,
        optics=n_optics,
        optics_unit_price=c.optics_unit_price,
        media_cost=media_cost,
        media=media_counts,
        media_unit_prices={k: str(v) for k, v in c.media_unit_prices.items()},
    )
    book.put(
        "tco.capex.racks",
        _q(rack_cost),
        source=RACK_MODULE,
        racks=dict(rack_cooling),
        rack_unit_price=c.rack_unit_price,
        by_cooling={k: str(v) for k, v in c.rack_unit_prices_by_cooling.items()},
    )
    book.put(
        "tco.capex.installation",
        _q(c.installation),
        source=Source("input", "commercial.installation"),
        installation=c.installation,
    )
    book.put(
        "tco.capex.discount",
        _q(discount),
        source=Source("input", "commercial.quote_discount"),
        subtotal=_q(subtotal),
        quote_discount=c.quote_discount,
    )
    book.put("tco.capex.total", _q(capex), subtotal=_q(subtotal), discount=_q(discount))

    # ---- annual costs
    elec_factor, elec_ok = _currency_factor(req.site.currency, req)
    if not elec_ok:
        checks.append(
            Check(
                "commercial.currency_mismatch",
                Severity.WARNING,
                AREA,
                f"Site prices are in {req.site.currency}, the quote in {currency}; no rate is known, "
                "so they are used as they are.",
                f"机房价格币种为 {req.site.currency}，报价币种为 {currency}，无可用汇率，按原值计入。",
                field="site.currency",
            )
        )
    price_kwh = req.site.electricity_price_per_kwh * elec_factor
    pue = _d(req.site.pue)
    electricity = _bill(kw * c.power_load_factor * HOURS_PER_YEAR * pue * price_kwh)
    colocation = _bill(n_racks * req.site.colocation_per_rack_month * elec_factor * MONTHS_PER_YEAR)
    om = _bill(c.om_per_year if c.om_per_year is not None else c.om_percent_of_capex * capex)
    software = c.software_support_per_year
    depreciation = capex / c.depreciation_years
    buy_opex = om + software + electricity + colocation
    lease_rent = nodes * c.server_lease_per_month * MONTHS_PER_YEAR
    lease_elec = Decimal(0) if c.lease_includes_power else electricity
    lease_om = Decimal(0) if c.lease_includes_om else om
    lease_year = lease_rent + lease_elec + colocation + software + lease_om
    # Same scope: on the lease side the servers are rented; the rest of the purchase (network, racks,
    # installation, after the same discount) is bought at month 0 as on the buy side.
    # Both in whole cents (half up, as invoiced): the workbook's ROUND gives the same cents.
    servers_net = _bill(servers * (1 - c.quote_discount))
    lease_upfront = capex - servers_net
    residual = _bill(servers_net * c.residual_value_fraction)
    annual = AnnualCosts(
        _q(depreciation),
        _q(om),
        _q(software),
        _q(electricity),
        _q(colocation),
        _q(buy_opex),
        _q(lease_rent),
        _q(lease_elec),
        _q(colocation),
        _q(lease_year),
        _q(lease_om),
        _q(software),
    )
    book.put("tco.it_load_kw", _q(kw), source=POWER_MODULE, it_kw=kw)
    book.put(
        "tco.annual.electricity",
        _q(electricity),
        source=Source("input", "site.electricity_price_per_kwh, site.pue, commercial.power_load_factor"),
        it_kw=_q(kw),
        power_load_factor=c.power_load_factor,
        hours=8760,
        pue=pue,
        price_per_kwh=price_kwh,
    )
    om_fixed = c.om_per_year is not None
    book.put(
        "tco.annual.om",
        _q(om),
        variant="per_year" if om_fixed else "percent_of_capex",
        source=Source("input", "commercial.om_per_year" if om_fixed else "commercial.om_percent_of_capex"),
        om_per_year=c.om_per_year,
        om_percent_of_capex=c.om_percent_of_capex,
        capex=_q(capex),
    )
    book.put(
        "tco.annual.software_support",
        _q(software),
        source=Source("input", "commercial.software_support_per_year"),
        software_support_per_year=software,
    )
    book.put(
        "tco.annual.colocation",
        _q(colocation),
        source=Source("input", "site.colocation_per_rack_month"),
        racks=n_racks,
        colocation_per_rack_month=req.site.colocation_per_rack_month,
        site_currency_rate=elec_factor,
    )
    book.put(
        "tco.annual.depreciation",
        _q(depreciation),
        capex=_q(capex),
        depreciation_years=c.depreciation_years,
    )
    book.put(
        "tco.annual.buy_opex",
        _q(buy_opex),
        om=_q(om),
        software_support=_q(software),
        electricity=_q(electricity),
        colocation=_q(colocation),
    )
    book.put(
        "tco.annual.lease_rent",
        _q(lease_rent),
        source=Source("input", "commercial.server_lease_per_month"),
        nodes=nodes,
        server_lease_per_month=c.server_lease_per_month,
    )
    book.put(
        "tco.annual.lease_total",
        _q(lease_year),
        lease_rent=_q(lease_rent),
        colocation=_q(colocation),
        software_support=_q(software),
        lease_electricity=_q(lease_elec),
        lease_om=_q(lease_om),
        lease_includes_power=c.lease_includes_power,
        lease_includes_om=c.lease_includes_om,
    )
    book.put(
        "tco.lease_upfront",
        _q(lease_upfront),
        capex=_q(capex),
        servers=_q(servers),
        quote_discount=c.quote_discount,
    )
    book.put(
        "tco.residual_value",
        _q(residual),
        source=Source("input", "commercial.residual_value_fraction"),
        servers=_q(servers),
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
    monthly_rows = [TcoMonthRow(0, _q(capex), _q(lease_upfront))]
    break_even: int | None = None
    for m in range(1, months + 1):
        running *= factor
        discount_sum += running
        buy_cum = capex + buy_month * m - (residual if m == months else 0)
        lease_cum = lease_upfront + lease_month * m
        monthly_rows.append(TcoMonthRow(m, _q(buy_cum), _q(lease_cum)))
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
                _q(capex if y == 1 else Decimal(0)),
                _q(om),
                _q(software),
                _q(electricity),
                _q(colocation),
                _q(buy_cost),
                _q(capex + buy_opex * y - end),
                _q(lease_rent),
                _q(lease_elec),
                _q(colocation),
                _q(lease_year + upfront),
                _q(lease_upfront + lease_year * y),
                _q(lease_upfront + lease_year * y - (capex + buy_opex * y - end)),
                buy_residual=_q(-end) if end else Decimal("0.00"),
                lease_upfront=_q(upfront),
                lease_om=_q(lease_om),
                lease_software_support=_q(software),
            )
        )

    book.put(
        "tco.buy_total",
        _q(buy_total),
        label={"horizon": horizon},
        capex=_q(capex),
        horizon_years=horizon,
        om=_q(om),
        software_support=_q(software),
        electricity=_q(electricity),
        colocation=_q(colocation),
        residual_value=_q(residual),
    )
    book.put(
        "tco.lease_total",
        _q(lease_total),
        label={"horizon": horizon},
        lease_upfront=_q(lease_upfront),
        horizon_years=horizon,
        lease_rent=_q(lease_rent),
        software_support=_q(software),
        lease_om=_q(lease_om),
        electricity=_q(lease_elec),
        colocation=_q(colocation),
    )
    monthly_shown = monthly_rate.quantize(Decimal("0.000001"))
    book.put(
        "tco.npv_buy",
        _q(npv_buy),
        discount_rate=c.discount_rate,
        monthly_rate=monthly_shown,
        months=months,
        capex=_q(capex),
        buy_monthly=_q(buy_month),
        residual_value=_q(residual),
    )
    book.put(
        "tco.npv_lease",
        _q(npv_lease),
        discount_rate=c.discount_rate,
        monthly_rate=monthly_shown,
        months=months,
        lease_upfront=_q(lease_upfront),
        lease_monthly=_q(lease_month),
    )
    book.put(
        "tco.break_even_month",
        break_even if break_even is not None else "none within horizon",
        buy_monthly=_q(buy_month),
        lease_monthly=_q(lease_month),
        capex=_q(capex),
        lease_upfront=_q(lease_upfront),
    )
    if c.server_lease_per_month == 0:
        checks.append(
            Check(
                "commercial.lease_price_missing",
                Severity.WARNING,
                AREA,
                "No lease price per server-month: the lease side and the break-even point are not meaningful.",
                "未录入单台月租价格，租赁测算及盈亏平衡点无参考意义。",
                field="commercial.server_lease_per_month",
                fix_en="Enter the monthly rent per server.",
                fix_zh="请录入单台服务器月租。",
            )
        )
    elif break_even is None:
        checks.append(
            Check(
                "commercial.no_break_even",
                Severity.OK,
                AREA,
                f"Buying does not break even against leasing within {horizon} years "
                f"(buy {_q(buy_total):,} vs lease {_q(lease_total):,} {currency}).",
                f"{horizon} 年内采购相对租赁未达到盈亏平衡（采购 {_q(buy_total):,} 对比租赁 {_q(lease_total):,} {currency}）。",
                {"buy_total": str(_q(buy_total)), "lease_total": str(_q(lease_total))},
                field="commercial.horizon_years",
            )
        )
    if c.server_unit_price == 0:
        checks.append(
            Check(
                "commercial.server_price_missing",
                Severity.WARNING,
                AREA,
                "No server unit price: the purchase side is incomplete.",
                "未录入服务器单价，采购测算不完整。",
                field="commercial.server_unit_price",
            )
        )

    # ---- tokens
    tokens, sensitivity = _token_economics(
        req,
        performance,
        capex,
        horizon,
        om,
        software,
        electricity,
        colocation,
        lease_rent,
        book,
        checks,
        buy_total=buy_total,
        lease_total=lease_total,
        residual=residual,
        lease_upfront=lease_upfront,
        lease_om=lease_om,
    )

    return TcoResult(
        valid=True,
        currency=currency,
        usd_rate=c.usd_rate,
        horizon_years=horizon,
        nodes=nodes,
        it_load_kw=_q(kw),
        rack_count=n_racks,
        switch_counts=dict(sw_counts),
        optics_count=n_optics,
        capex=capex_bd,
        annual=annual,
        buy_total=_q(buy_total),
        lease_total=_q(lease_total),
        npv_buy=_q(npv_buy),
        npv_lease=_q(npv_lease),
        monthly_discount_rate=monthly_rate,
        break_even_month=break_even,
        yearly=tuple(yearly_rows),
        monthly=tuple(monthly_rows),
        tokens=tokens,
        sensitivity=sensitivity,
        figures=book.figures,
        checks=tuple(checks),
        residual_value=_q(residual),
        lease_upfront=_q(lease_upfront),
        lease_includes=tuple(
            name
            for name, included in (("power", c.lease_includes_power), ("om", c.lease_includes_om))
            if included
        ),
    )


def _token_economics(
    req: PlanRequest,
    performance: PerformanceResult | None,
    capex: Decimal,
    horizon: int,
    om: Decimal,
    software: Decimal,
    electricity: Decimal,
    colocation: Decimal,
    lease_rent: Decimal,
    book: FigureBook,
    checks: list[Check],
    *,
    buy_total: Decimal,
    lease_total: Decimal,
    residual: Decimal = Decimal(0),
    lease_upfront: Decimal = Decimal(0),
    lease_om: Decimal = Decimal(0),
) -> tuple[TokenEconomics | None, tuple[SensitivityRow, ...]]:
    c = req.commercial
    currency = c.currency
    if performance is None or performance.output_tokens_per_s <= 0:
        checks.append(
            Check(
                "commercial.no_throughput",
                Severity.WARNING,
                AREA,
                "No throughput figure: the cost per million tokens cannot be computed.",
                "缺少吞吐数据，无法计算每百万 Token 成本。",
                field="workload.measured_output_tokens_per_s",
                fix_en="Fix the performance inputs or enter a measured throughput.",
                fix_zh="请修正性能输入，或录入压测实测吞吐。",
            )
        )
        return None, ()
    out_tps = performance.output_tokens_per_s
    in_tps = performance.input_tokens_per_s
    share = performance.prefill_time_share
    base = _Inputs(
        capex=capex,
        horizon=horizon,
        om=om,
        software=software,
        electricity=electricity,
        colocation=colocation,
        lease_rent=lease_rent,
        lease_includes_power=c.lease_includes_power,
        output_tps=_d(float(out_tps)),
        input_tps=_d(float(in_tps)),
        utilisation=c.utilisation,
        input_share=_d(round(float(share), 6)),
        residual=residual,
        lease_upfront=lease_upfront,
        lease_om=lease_om,
    )
    tin, tout = base.m_tokens()
    annual_buy = base.annual_buy()
    annual_lease = base.annual_lease()

    def per_m(annual: Decimal, part: Decimal, tokens_m: Decimal) -> Decimal | None:
        return _q(annual * part / tokens_m) if tokens_m > 0 else None

    in_share, out_share = base.input_share, 1 - base.input_share
    blended_buy, blended_lease = base.blended("buy"), base.blended("lease")

    api_in = api_out = api_cost = saving_buy = saving_lease = None
    m = req.model
    if m.api_price_input_per_m is not None and m.api_price_output_per_m is not None:
        factor, ok = _currency_factor(m.api_price_currency, req)
        if ok:
            api_in = m.api_price_input_per_m * factor
            api_out = m.api_price_output_per_m * factor
            api_cost = tin * api_in + tout * api_out
            if api_cost > 0:
                saving_buy = (1 - annual_buy / api_cost).quantize(Decimal("0.0001"))
                saving_lease = (1 - annual_lease / api_cost).quantize(Decimal("0.0001"))

    measured = performance.measured
    tokens = TokenEconomics(
        measured=measured,
        output_tokens_per_s=float(out_tps),
        input_tokens_per_s=float(in_tps),
        input_m_tokens_per_year=tin.quantize(CENT),
        output_m_tokens_per_year=tout.quantize(CENT),
        input_cost_share=in_share,
        annual_cost_buy=_q(annual_buy),
        annual_cost_lease=_q(annual_lease),
        cost_per_m_input_buy=per_m(annual_buy, in_share, tin),
        cost_per_m_output_buy=per_m(annual_buy, out_share, tout),
        cost_per_m_blended_buy=_q(blended_buy) if blended_buy is not None else None,
        cost_per_m_input_lease=per_m(annual_lease, in_share, tin),
        cost_per_m_output_lease=per_m(annual_lease, out_share, tout),
        cost_per_m_blended_lease=_q(blended_lease) if blended_lease is not None else None,
        api_price_input_per_m=_q(api_in) if api_in is not None else None,
        api_price_output_per_m=_q(api_out) if api_out is not None else None,
        api_cost_per_year=_q(api_cost) if api_cost is not None else None,
        saving_vs_api_buy=saving_buy,
        saving_vs_api_lease=saving_lease,
    )

    tput_src = Source("input", "load test") if measured else Source("derived", "performance estimate")
    book.put(
        "tco.tokens.input_m_per_year",
        tin.quantize(CENT),
        source=tput_src,
        tokens_per_s=float(in_tps),
        seconds_per_year=31_536_000,
        utilisation=c.utilisation,
    )
    book.put(
        "tco.tokens.output_m_per_year",
        tout.quantize(CENT),
        source=tput_src,
        tokens_per_s=float(out_tps),
        seconds_per_year=31_536_000,
        utilisation=c.utilisation,
    )
    book.put(
        "tco.tokens.input_cost_share",
        in_share,
        source=Source("derived", "performance estimate"),
        prefill_time_share=float(share),
    )
    for basis, annual, total in (("buy", annual_buy, buy_total), ("lease", annual_lease, lease_total)):
        basis_zh = "采购" if basis == "buy" else "租赁"
        book.put(
            f"tco.tokens.{basis}.annual_cost",
            _q(annual),
            label={"basis_zh": basis_zh},
            horizon_total=_q(total),
            horizon_years=horizon,
        )
        for side, side_zh, part, tokens_m in (
            ("input", "输入", in_share, tin),
            ("output", "输出", out_share, tout),
        ):
            value = per_m(annual, part, tokens_m)
            if value is None:
                continue
            book.put(
                f"tco.tokens.{basis}.cost_per_m_{side}",
                value,
                label={"basis_zh": basis_zh, "side_zh": side_zh},
                annual_cost=_q(annual),
                share=part,
                m_tokens=tokens_m.quantize(CENT),
            )
    # api_in, api_out and api_cost are set together above; testing all three narrows their types.
    if api_cost is not None and api_in is not None and api_out is not None:
        book.put(
            "tco.tokens.api_cost_per_year",
            _q(api_cost),
            source=Source("seed", "S1 §3.3 (API price $3 / $15 per M tokens)"),
            input_m_tokens=tin.quantize(CENT),
            output_m_tokens=tout.quantize(CENT),
            api_price_input_per_m=_q(api_in),
            api_price_output_per_m=_q(api_out),
            api_currency=m.api_price_currency,
            usd_rate=c.usd_rate,
        )
        for basis, saving in (("buy", saving_buy), ("lease", saving_lease)):
            if saving is None:
                continue
            book.put(
                f"tco.tokens.{basis}.saving_vs_api",
                saving,
                label={"basis_zh": "采购" if basis == "buy" else "租赁"},
                annual_cost=_q(annual_buy if basis == "buy" else annual_lease),
                api_cost=_q(api_cost),
            )
        if saving_buy is not None and saving_buy < 0:
            checks.append(
                Check(
                    "commercial.dearer_than_api",
                    Severity.WARNING,
                    AREA,
                    f"At {c.utilisation:.0%} utilisation, self-hosting costs more than the public API "
                    f"({_q(annual_buy):,} vs {_q(api_cost):,} {currency} a year).",
                    f"在 {c.utilisation:.0%} 利用率下，私有化部署成本高于官方 API（每年 {_q(annual_buy):,} 对比 "
                    f"{_q(api_cost):,} {currency}）。",
                    {"saving": str(saving_buy)},
                    field="commercial.utilisation",
                    fix_en="Check utilisation and throughput (load test), or consider leasing.",
                    fix_zh="请核实利用率与吞吐（压测），或考虑租赁方案。",
                )
            )

    price_kwh = req.site.electricity_price_per_kwh * _currency_factor(req.site.currency, req)[0]
    return tokens, _sensitivity(base, currency, price_kwh, c.server_lease_per_month)


def _sensitivity(
    base: _Inputs, currency: str, price_kwh: Decimal, lease_per_month: Decimal
) -> tuple[SensitivityRow, ...]:
    """Blended cost per million tokens with one driver at −20 % and +20 %, the others at base.

    Closed forms (no re-run of the whole TCO): electricity moves the annual cost
    by electricity × (f − 1), the lease price by rent × (f − 1); utilisation and
    throughput scale the tokens served.  Utilisation is capped at 1.
    """
    tin, tout = base.m_tokens()
    tokens = tin + tout
    if tokens <= 0:
        return ()
    annual = {"buy": base.annual_buy(), "lease": base.annual_lease()}
    steps = (1 - SENSITIVITY_STEP, Decimal(1), 1 + SENSITIVITY_STEP)
    u = base.utilisation
    rows: list[SensitivityRow] = []

    def row(
        parameter: str,
        basis: str,
        en: str,
        zh: str,
        unit: str,
        base_value: Decimal,
        # called as cost_at(f); ``...`` because the callers bind the loop's annual cost as a default (a=a)
        cost_at: Callable[..., Decimal],
    ) -> None:
        values = [
            min(base_value * f, Decimal(1)) if parameter == "utilisation" else base_value * f for f in steps
        ]
        costs = [_q(cost_at(f)) for f in steps]
        rows.append(SensitivityRow(parameter, basis, en, zh, unit, *values, *costs))

    for basis in ("buy", "lease"):
        a = annual[basis]
        if basis == "buy" or not base.lease_includes_power:
            row(
                "electricity_price",
                basis,
                "Electricity price",
                "电价",
                f"{currency}/kWh",
                price_kwh,
                lambda f, a=a: (a + base.electricity * (f - 1)) / tokens,
            )
        row(
            "utilisation",
            basis,
            "Utilisation",
            "利用率",
            "fraction",
            u,
            lambda f, a=a: a / (tokens * min(u * f, Decimal(1)) / u),
        )
        row(
            "throughput",
            basis,
            "Throughput",
            "吞吐",
            "output tokens/s",
            base.output_tps,
            lambda f, a=a: a / (tokens * f),
        )
    row(
        "lease_price",
        "lease",
        "Lease price per server-month",
        "单台月租",
        f"{currency}/server-month",
        lease_per_month,
        lambda f: (annual["lease"] + base.lease_rent * (f - 1)) / tokens,
    )
    return tuple(rows)


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
        it_load_kw=_q(kw),
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
