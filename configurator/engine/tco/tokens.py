"""Cost per million tokens: the annual cost split by accelerator time, the API comparison, sensitivity."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import NamedTuple

from ..checks import raise_
from ..figures import FigureBook
from ..formatting import format_money
from ..performance import PerformanceResult
from ..types import Check, ModelSpec, PlanRequest, SensitivityRow, Source, TokenEconomics
from .capex import Capex
from .lease import HorizonTotals
from .money import CENT, MILLION, SECONDS_PER_YEAR, as_decimal, cents, currency_factor
from .opex import RunningCosts

SENSITIVITY_STEP = Decimal("0.2")


def api_price_source(model: ModelSpec) -> Source:
    """Where the model's public-API prices come from: the sources its catalog record gives its input and
    output prices (catalog/seed/models.yaml, or an administrator's edit), so each model's API cost cites
    its own provider's price list."""
    sources = [model.sources.get(name) for name in ("api_price_input_per_m", "api_price_output_per_m")]
    found = [src for src in sources if src is not None and src.ref]
    if not found:
        return Source("input", f"{model.name}: API price per million tokens (catalog)")
    refs = list(dict.fromkeys(src.ref for src in found))
    kinds = {src.kind for src in found}
    kind = found[0].kind if len(kinds) == 1 else ("assumed" if "assumed" in kinds else found[0].kind)
    return Source(kind, "; ".join(refs))


@dataclass(frozen=True)
class CostDrivers:
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


def token_economics(
    req: PlanRequest,
    performance: PerformanceResult | None,
    capex: Capex,
    running: RunningCosts,
    totals: HorizonTotals,
    book: FigureBook,
    checks: list[Check],
) -> tuple[TokenEconomics | None, tuple[SensitivityRow, ...]]:
    """Tokens served in a year at ``commercial.utilisation`` and their cost (see the package doc).

    The steps: the cost drivers, the tokens a year and the yearly cost on each basis, the public API's
    cost of the same tokens, the result, then its figures (tokens, cost per million, the API
    comparison) and the sensitivity table.
    """
    c = req.commercial
    if performance is None or performance.output_tokens_per_s <= 0:
        checks.append(raise_("commercial.no_throughput"))
        return None, ()
    base = _cost_drivers(req, performance, capex, running, totals)
    tin, tout = base.m_tokens()
    annual_buy = base.annual_buy()
    annual_lease = base.annual_lease()
    in_share, out_share = base.input_share, 1 - base.input_share
    blended_buy, blended_lease = base.blended("buy"), base.blended("lease")
    api = _api_comparison(req, tin, tout, annual_buy, annual_lease)

    tokens = TokenEconomics(
        measured=performance.measured,
        output_tokens_per_s=float(performance.output_tokens_per_s),
        input_tokens_per_s=float(performance.input_tokens_per_s),
        input_m_tokens_per_year=tin.quantize(CENT),
        output_m_tokens_per_year=tout.quantize(CENT),
        input_cost_share=in_share,
        annual_cost_buy=cents(annual_buy),
        annual_cost_lease=cents(annual_lease),
        cost_per_m_input_buy=per_m(annual_buy, in_share, tin),
        cost_per_m_output_buy=per_m(annual_buy, out_share, tout),
        cost_per_m_blended_buy=cents(blended_buy) if blended_buy is not None else None,
        cost_per_m_input_lease=per_m(annual_lease, in_share, tin),
        cost_per_m_output_lease=per_m(annual_lease, out_share, tout),
        cost_per_m_blended_lease=cents(blended_lease) if blended_lease is not None else None,
        api_price_input_per_m=cents(api.price_in) if api.price_in is not None else None,
        api_price_output_per_m=cents(api.price_out) if api.price_out is not None else None,
        api_cost_per_year=cents(api.cost) if api.cost is not None else None,
        saving_vs_api_buy=api.saving_buy,
        saving_vs_api_lease=api.saving_lease,
    )

    _token_figures(book, req, performance, tin, tout, in_share)
    _annual_cost_figures(book, req, totals, annual_buy, annual_lease, in_share, out_share, tin, tout)
    _api_figures(book, checks, req, api, tin, tout, annual_buy, annual_lease)
    rows = sensitivity(base, c.currency, running.price_kwh, c.server_lease_per_month)
    _sensitivity_figures(book, rows)
    return tokens, rows


def _cost_drivers(
    req: PlanRequest,
    performance: PerformanceResult,
    capex: Capex,
    running: RunningCosts,
    totals: HorizonTotals,
) -> CostDrivers:
    """The scalar drivers of the yearly cost: capex, the running costs, the lease, the throughput and
    the input tokens' share of accelerator time (the prefill time share)."""
    c = req.commercial
    return CostDrivers(
        capex=capex.total,
        horizon=c.horizon_years,
        om=running.om,
        software=running.software,
        electricity=running.electricity,
        colocation=running.colocation,
        lease_rent=running.lease_rent,
        lease_includes_power=c.lease_includes_power,
        output_tps=as_decimal(float(performance.output_tokens_per_s)),
        input_tps=as_decimal(float(performance.input_tokens_per_s)),
        utilisation=c.utilisation,
        input_share=as_decimal(round(float(performance.prefill_time_share), 6)),
        residual=totals.residual,
        lease_upfront=totals.lease_upfront,
        lease_om=running.lease_om,
    )


def per_m(annual: Decimal, part: Decimal, tokens_m: Decimal) -> Decimal | None:
    """Cost per million tokens: the ``part`` of ``annual`` over ``tokens_m`` million tokens (None for none)."""
    return cents(annual * part / tokens_m) if tokens_m > 0 else None


class _ApiComparison(NamedTuple):
    """The public API's prices in the plan's currency, its cost of the year's tokens and the saving of
    each basis against it; all None when the model has no API price or its currency does not convert."""

    price_in: Decimal | None = None
    price_out: Decimal | None = None
    cost: Decimal | None = None
    saving_buy: Decimal | None = None
    saving_lease: Decimal | None = None
    factor: Decimal | None = None  # the currency factor of the prices


def _api_comparison(
    req: PlanRequest, tin: Decimal, tout: Decimal, annual_buy: Decimal, annual_lease: Decimal
) -> _ApiComparison:
    """The API's input and output prices converted to the plan's currency, its cost of ``tin`` and
    ``tout`` million tokens, and the saving of buying and of leasing against it."""
    m = req.model
    if m.api_price_input_per_m is None or m.api_price_output_per_m is None:
        return _ApiComparison()
    factor, ok = currency_factor(m.api_price_currency, req)
    if not ok:
        return _ApiComparison(factor=factor)
    api_in = m.api_price_input_per_m * factor
    api_out = m.api_price_output_per_m * factor
    api_cost = tin * api_in + tout * api_out
    saving_buy = saving_lease = None
    if api_cost > 0:
        saving_buy = (1 - annual_buy / api_cost).quantize(Decimal("0.0001"))
        saving_lease = (1 - annual_lease / api_cost).quantize(Decimal("0.0001"))
    return _ApiComparison(api_in, api_out, api_cost, saving_buy, saving_lease, factor)


def _token_figures(
    book: FigureBook,
    req: PlanRequest,
    performance: PerformanceResult,
    tin: Decimal,
    tout: Decimal,
    in_share: Decimal,
) -> None:
    """Input and output tokens a year (measured or estimated) and the input tokens' share of the cost."""
    c = req.commercial
    tput_src = (
        Source("input", "load test") if performance.measured else Source("derived", "performance estimate")
    )
    book.put(
        "tco.tokens.input_m_per_year",
        tin.quantize(CENT),
        source=tput_src,
        tokens_per_s=float(performance.input_tokens_per_s),
        seconds_per_year=31_536_000,
        utilisation=c.utilisation,
    )
    book.put(
        "tco.tokens.output_m_per_year",
        tout.quantize(CENT),
        source=tput_src,
        tokens_per_s=float(performance.output_tokens_per_s),
        seconds_per_year=31_536_000,
        utilisation=c.utilisation,
    )
    book.put(
        "tco.tokens.input_cost_share",
        in_share,
        source=Source("derived", "performance estimate"),
        prefill_time_share=float(performance.prefill_time_share),
    )


def _annual_cost_figures(
    book: FigureBook,
    req: PlanRequest,
    totals: HorizonTotals,
    annual_buy: Decimal,
    annual_lease: Decimal,
    in_share: Decimal,
    out_share: Decimal,
    tin: Decimal,
    tout: Decimal,
) -> None:
    """The yearly cost of buying and of leasing, and on each basis the cost per million input and
    output tokens (when tokens are served)."""
    horizon = req.commercial.horizon_years
    for basis, annual, total in (
        ("buy", annual_buy, totals.buy_total),
        ("lease", annual_lease, totals.lease_total),
    ):
        basis_zh = "采购" if basis == "buy" else "租赁"
        book.put(
            f"tco.tokens.{basis}.annual_cost",
            cents(annual),
            label={"basis_zh": basis_zh},
            horizon_total=cents(total),
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
                annual_cost=cents(annual),
                share=part,
                m_tokens=tokens_m.quantize(CENT),
            )


def _api_figures(
    book: FigureBook,
    checks: list[Check],
    req: PlanRequest,
    api: _ApiComparison,
    tin: Decimal,
    tout: Decimal,
    annual_buy: Decimal,
    annual_lease: Decimal,
) -> None:
    """The API's converted prices, its yearly cost of the same tokens and each basis's saving against
    it, and the finding when buying costs more than the API."""
    c = req.commercial
    m = req.model
    api_in, api_out, api_cost = api.price_in, api.price_out, api.cost
    if api_in is not None and api_out is not None:
        for side, side_zh, price, converted in (
            ("input", "输入", m.api_price_input_per_m, api_in),
            ("output", "输出", m.api_price_output_per_m, api_out),
        ):
            book.put(
                f"tco.tokens.api_price_{side}_per_m",
                cents(converted),
                source=(m.sources or {}).get(f"api_price_{side}_per_m"),
                label={"side_zh": side_zh},
                api_price=price,
                currency_factor=api.factor,
                api_currency=m.api_price_currency,
            )
    # api_in, api_out and api_cost are set together; testing all three narrows their types.
    if api_cost is None or api_in is None or api_out is None:
        return
    book.put(
        "tco.tokens.api_cost_per_year",
        cents(api_cost),
        source=api_price_source(m),
        input_m_tokens=tin.quantize(CENT),
        output_m_tokens=tout.quantize(CENT),
        api_price_input_per_m=cents(api_in),
        api_price_output_per_m=cents(api_out),
        api_currency=m.api_price_currency,
        usd_rate=c.usd_rate,
    )
    for basis, saving in (("buy", api.saving_buy), ("lease", api.saving_lease)):
        if saving is None:
            continue
        book.put(
            f"tco.tokens.{basis}.saving_vs_api",
            saving,
            label={"basis_zh": "采购" if basis == "buy" else "租赁"},
            annual_cost=cents(annual_buy if basis == "buy" else annual_lease),
            api_cost=cents(api_cost),
        )
    if api.saving_buy is not None and api.saving_buy < 0:
        checks.append(
            raise_(
                "commercial.dearer_than_api",
                figures={"saving": str(api.saving_buy)},
                utilisation=c.utilisation,
                # money as the page prints it (万/亿 in Chinese); the raw amounts are figures
                self_hosted_en=format_money(cents(annual_buy), c.currency, "en"),
                self_hosted_zh=format_money(cents(annual_buy), c.currency, "zh-hans"),
                api_en=format_money(cents(api_cost), c.currency, "en"),
                api_zh=format_money(cents(api_cost), c.currency, "zh-hans"),
            )
        )


def _sensitivity_figures(book: FigureBook, rows: tuple[SensitivityRow, ...]) -> None:
    """Each row of the sensitivity table, explained on the figure book."""
    for r in rows:
        book.put(
            f"tco.sensitivity.{r.parameter}.{r.basis}",
            r.cost_at_base,
            label={
                "parameter_en": r.label_en,
                "parameter_zh": r.label_zh,
                "basis_zh": "租赁" if r.basis == "lease" else "购买",
            },
            cost_at_base=r.cost_at_base,
            base_value=r.base_value,
            cost_at_low=r.cost_at_low,
            low_value=r.low_value,
            cost_at_high=r.cost_at_high,
            high_value=r.high_value,
        )


def sensitivity(
    base: CostDrivers, currency: str, price_kwh: Decimal, lease_per_month: Decimal
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
        costs = [cents(cost_at(f)) for f in steps]
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
