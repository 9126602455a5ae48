"""What :func:`~configurator.engine.tco.compute_tco` returns: money in ``currency``, to the cent."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal

from ..types import Check, Figure


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
