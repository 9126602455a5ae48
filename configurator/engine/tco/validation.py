"""Commercial and site inputs the TCO refuses; each refusal names its field."""

from __future__ import annotations

from decimal import Decimal

from ..checks import raise_
from ..types import Check, CommercialSpec, PlanRequest
from .money import MAX_HORIZON_YEARS


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
                raise_(
                    "commercial.negative_price",
                    fix="use",
                    figures={"value": str(value)},
                    name=name,
                    value=value,
                    fix_value=0,
                )
            )
    if not isinstance(spec.horizon_years, int) or not 1 <= spec.horizon_years <= MAX_HORIZON_YEARS:
        out.append(
            raise_(
                "commercial.horizon_out_of_range",
                fix="use",
                figures={"value": str(spec.horizon_years)},
                horizon_years=spec.horizon_years,
                max_years=MAX_HORIZON_YEARS,
                fix_value=3,
            )
        )
    if not Decimal(0) <= spec.residual_value_fraction <= Decimal(1):
        out.append(
            raise_(
                "commercial.residual_out_of_range",
                figures={"value": str(spec.residual_value_fraction)},
                residual_value_fraction=spec.residual_value_fraction,
            )
        )
    if not isinstance(spec.depreciation_years, int) or spec.depreciation_years < 1:
        out.append(
            raise_(
                "commercial.depreciation_years_invalid",
                fix="use",
                figures={"value": str(spec.depreciation_years)},
                depreciation_years=spec.depreciation_years,
                fix_value=5,
            )
        )
    if not Decimal(0) <= spec.discount_rate <= Decimal(1):
        out.append(
            raise_(
                "commercial.discount_rate_out_of_range",
                fix="use",
                figures={"value": str(spec.discount_rate)},
                discount_pct=spec.discount_rate * 100,
                fix_value=Decimal("0.08"),
            )
        )
    if not Decimal(0) < spec.utilisation <= Decimal(1):
        out.append(
            raise_(
                "commercial.utilisation_out_of_range",
                fix="use",
                figures={"value": str(spec.utilisation)},
                utilisation=spec.utilisation,
                fix_value=Decimal("0.6"),
            )
        )
    if not Decimal(0) < spec.power_load_factor <= Decimal(1):
        out.append(
            raise_(
                "commercial.load_factor_out_of_range",
                fix="use",
                figures={"value": str(spec.power_load_factor)},
                power_load_factor=spec.power_load_factor,
                fix_value=Decimal("0.8"),
            )
        )
    if not Decimal(0) <= spec.quote_discount < Decimal(1):
        out.append(
            raise_(
                "commercial.quote_discount_out_of_range",
                fix="use",
                figures={"value": str(spec.quote_discount)},
                quote_discount=spec.quote_discount,
                fix_value=0,
            )
        )
    if spec.usd_rate <= 0:
        out.append(
            raise_(
                "commercial.usd_rate_invalid",
                figures={"value": str(spec.usd_rate)},
                usd_rate=spec.usd_rate,
                currency=spec.currency,
            )
        )
    return out


def validate_site(req: PlanRequest) -> list[Check]:
    out: list[Check] = []
    if req.site.electricity_price_per_kwh < 0:
        out.append(
            raise_(
                "commercial.negative_price",
                variant="electricity",
                fix="use",
                figures={"value": str(req.site.electricity_price_per_kwh)},
                electricity_price_per_kwh=req.site.electricity_price_per_kwh,
                fix_value=Decimal("0.65"),
            )
        )
    if req.site.colocation_per_rack_month < 0:
        out.append(
            raise_(
                "commercial.negative_price",
                variant="colocation",
                fix="use",
                figures={"value": str(req.site.colocation_per_rack_month)},
                colocation_per_rack_month=req.site.colocation_per_rack_month,
                fix_value=0,
            )
        )
    if req.site.pue < 1:
        out.append(
            raise_(
                "commercial.pue_below_one",
                fix="use",
                figures={"value": str(req.site.pue)},
                pue=req.site.pue,
                fix_value=1.3,
            )
        )
    return out
