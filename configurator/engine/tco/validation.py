"""Commercial and site inputs the TCO refuses; each refusal names its field."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from ..types import Check, CommercialSpec, PlanRequest, Severity
from .money import AREA, MAX_HORIZON_YEARS


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


def validate_site(req: PlanRequest) -> list[Check]:
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
