"""Economics over load: cost per million tokens against concurrency, and the break-even with the API.

The yearly cost of the cluster is fixed (``tco.tokens.annual_cost_buy`` /
``annual_cost_lease``: capex spread over the horizon, O&M, power, space), while the
tokens it serves grow with the concurrency it is offered until it saturates
(``performance.curve``).  So the unit cost falls with load and the public API,
priced per token, is cheaper at light load and dearer at heavy load.  This module
walks the performance curve:

* cost per million input / output tokens at each concurrency =
  annual cost × (input or output share of accelerator time) ÷ tokens a year
  (tokens/s × 31,536,000 s × utilisation), as ``engine/tco`` does at the quoted point;
* the API cost of the same tokens = input M × input price (cached inputs at the
  cached price when the model lists one and prefix caching hits) + output M × output price;
* the **break-even concurrency**: the lowest concurrency from which self-hosting is
  cheaper (linear interpolation between curve points), or none when the API stays
  cheaper even at capacity;
* the seed's "60–70 % cheaper" claim is checked the same way: the concurrency from
  which the saving reaches 60 %, if any.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any, NamedTuple

from .checks import raise_
from .figures import FigureBook
from .formatting import format_number
from .types import (
    Check,
    EconomicsPoint,
    EconomicsResult,
    PlanRequest,
    Source,
)

SECONDS_PER_YEAR = 31_536_000
MILLION = Decimal(1_000_000)
SEED_CLAIM = Decimal("0.60")  # [S1]: "unit token cost 60–70 % lower" than the API (the lower end)
CENT = Decimal("0.01")
# Below half of the design capacity the cluster is oversized for the stated load (the verdict).
RIGHT_SIZED_SHARE = 0.5
# The source of every figure computed here from the curve and the yearly cost.
_DERIVED = Source("derived", "performance curve × TCO annual cost")


def _d(x: Any) -> Decimal:
    return Decimal(str(x))


def _crossing(points: list[EconomicsPoint], threshold: Decimal) -> float | None:
    """Lowest concurrency where the saving reaches ``threshold`` (linear between curve points)."""
    prev: EconomicsPoint | None = None
    for p in points:
        if p.saving_vs_api is None:
            prev = None
            continue
        if p.saving_vs_api >= threshold:
            if prev is None or prev.saving_vs_api is None:
                return float(p.concurrency)
            span = p.saving_vs_api - prev.saving_vs_api
            if span <= 0:
                return float(p.concurrency)
            t = float((threshold - prev.saving_vs_api) / span)
            return round(prev.concurrency + t * (p.concurrency - prev.concurrency), 1)
        prev = p
    return None


def cost_per_m_output_at(req: PlanRequest, tco: Any, output_tokens_per_s: float) -> Decimal | None:
    """Cost per million output tokens of this deployment at ``output_tokens_per_s``: the yearly cost
    (buy, or lease when only a lease is priced) times the output tokens' share, over the output tokens
    of a year at the commercial utilisation — the arithmetic of :func:`compute_economics`'s points, so a
    serving configuration of the same hardware is priced as the plan prices its own design point."""
    tokens = getattr(tco, "tokens", None) if tco is not None else None
    if tokens is None:
        return None
    c = req.commercial
    basis = "lease" if c.server_lease_per_month > 0 and c.server_unit_price <= 0 else "buy"
    annual = tokens.annual_cost_lease if basis == "lease" else tokens.annual_cost_buy
    out_share = 1 - _d(tokens.input_cost_share)
    out_tps = _d(round(output_tokens_per_s, 6))
    seconds = SECONDS_PER_YEAR * _d(c.utilisation)
    tout = out_tps * seconds / MILLION
    return (annual * out_share / tout).quantize(CENT) if tout > 0 else None


def compute_economics(req: PlanRequest, performance: Any, tco: Any) -> EconomicsResult | None:
    """Cost per million tokens over the performance curve and the API break-even (None without a TCO).

    The steps: the yearly cost and the API's prices (:func:`_pricing`), one point per concurrency of
    the performance curve, the break-even and seed-claim crossings, the labelled points (design,
    conservative design, stated load) with the right-sizing verdict, then the break-even figures and
    finding when the API has a price.
    """
    tokens = getattr(tco, "tokens", None) if tco is not None else None
    curve = getattr(performance, "curve", ()) if performance is not None else ()
    if tokens is None or not curve:
        return None
    c = req.commercial
    w = req.workload
    pricing = _pricing(req, tokens)
    points = [_point(req, tco, pricing, p.concurrency, p.output_tokens_per_s) for p in curve]

    break_even = _crossing(points, Decimal(0))
    claim = _crossing(points, SEED_CLAIM)
    quoted = next((p for p in points if p.concurrency == w.concurrency), None)
    quoted_saving = quoted.saving_vs_api if quoted else None

    book = FigureBook(currency=c.currency)
    checks: list[Check] = []
    labelled = _labelled_points(req, performance, tco, pricing, quoted, book, checks)
    if pricing.effective_in is not None and pricing.api_out is not None:
        need_even, need_claim = _break_even_figures(book, pricing, points, break_even, claim)
        checks.append(
            _api_comparison_check(
                req, performance, pricing, break_even, claim, quoted_saving, need_even, need_claim
            )
        )
    return EconomicsResult(
        basis=pricing.basis,
        currency=c.currency,
        annual_cost=pricing.annual,
        points=tuple(points),
        api_name=req.model.name,
        api_price_input_per_m=pricing.api_in,
        api_price_output_per_m=pricing.api_out,
        api_price_cached_input_per_m=pricing.api_cached,
        break_even_concurrency=break_even,
        seed_claim_concurrency=claim,
        quoted_concurrency=w.concurrency,
        quoted_saving=quoted_saving,
        figures=book.figures,
        checks=tuple(checks),
        design=labelled.design,
        stated=labelled.stated,
        design_conservative=labelled.conservative,
        load_share=labelled.load_share,
        right_sized=labelled.right_sized,
    )


@dataclass(frozen=True)
class _Pricing:
    """What every point of the curve is priced with."""

    basis: str  # buy | lease
    annual: Decimal  # the yearly cost of that basis
    in_share: Decimal  # the input tokens' share of accelerator time
    out_share: Decimal
    utilisation: Decimal
    api_in: Decimal | None  # the API's prices per million tokens, in the plan's currency
    api_out: Decimal | None
    api_cached: Decimal | None  # cached input, when the model lists a price for it
    effective_in: Decimal | None  # input price with the prefix-cache hits at the cached price
    out_tokens: int  # output tokens per request (at least 1)


def _pricing(req: PlanRequest, tokens: Any) -> _Pricing:
    """The yearly cost (buy, or lease when only a lease is priced), the input and output shares of it,
    the utilisation, and the API's prices: input, output, cached input converted as the input price is,
    and the effective input price once prefix caching hits."""
    c = req.commercial
    basis = "lease" if c.server_lease_per_month > 0 and c.server_unit_price <= 0 else "buy"
    annual = tokens.annual_cost_lease if basis == "lease" else tokens.annual_cost_buy
    in_share = _d(tokens.input_cost_share)
    out_share = 1 - in_share
    utilisation = _d(c.utilisation)
    api_in = tokens.api_price_input_per_m
    api_out = tokens.api_price_output_per_m
    cached_price = getattr(req.model, "api_price_cached_input_per_m", None)
    api_cached = None
    hit = _d(req.performance.prefix_cache_hit_rate if req.serving.enable_prefix_caching else 0)
    if cached_price is not None and api_in is not None and tokens.api_price_input_per_m:
        # same currency conversion as the input price
        rate = api_in / req.model.api_price_input_per_m if req.model.api_price_input_per_m else Decimal(1)
        api_cached = (_d(cached_price) * rate).quantize(CENT)
    effective_in = None
    if api_in is not None:
        effective_in = api_in if api_cached is None else (1 - hit) * api_in + hit * api_cached
    out_tokens = max(req.workload.output_tokens, 1)
    return _Pricing(
        basis, annual, in_share, out_share, utilisation, api_in, api_out, api_cached, effective_in, out_tokens
    )


def _point(
    req: PlanRequest, tco: Any, pricing: _Pricing, concurrency: int, output_tokens_per_s: float
) -> EconomicsPoint:
    """One point of the curve: cost per million input and output tokens at ``output_tokens_per_s``, the
    API's yearly cost of the same tokens and the saving against it."""
    out_tps = _d(round(output_tokens_per_s, 6))
    in_tps = out_tps * req.workload.input_tokens / pricing.out_tokens
    seconds = SECONDS_PER_YEAR * pricing.utilisation
    tin = in_tps * seconds / MILLION
    tout = out_tps * seconds / MILLION
    cost_in = (pricing.annual * pricing.in_share / tin).quantize(CENT) if tin > 0 else None
    cost_out = cost_per_m_output_at(req, tco, output_tokens_per_s)
    api_cost = saving = None
    if pricing.effective_in is not None and pricing.api_out is not None:
        api_cost = tin * pricing.effective_in + tout * pricing.api_out
        saving = (1 - pricing.annual / api_cost).quantize(Decimal("0.0001")) if api_cost > 0 else None
        api_cost = api_cost.quantize(CENT)
    return EconomicsPoint(concurrency, output_tokens_per_s, cost_in, cost_out, api_cost, saving)


class _Labelled(NamedTuple):
    design: EconomicsPoint | None
    stated: EconomicsPoint | None
    conservative: EconomicsPoint | None
    load_share: float | None
    right_sized: bool | None


def _labelled_points(
    req: PlanRequest,
    performance: Any,
    tco: Any,
    pricing: _Pricing,
    quoted: EconomicsPoint | None,
    book: FigureBook,
    checks: list[Check],
) -> _Labelled:
    """The labelled points: the stated load (the curve's point at the stated concurrency, else priced at
    the performance estimate), the design point and its conservative end, with their figures, the share
    of the design capacity the stated load uses and, below half of it, the right-sizing finding."""
    w = req.workload
    design_dp = getattr(performance, "design_point", None)
    design = stated = conservative = None
    load_share: float | None = None
    right_sized: bool | None = None
    if quoted is not None:
        stated = quoted
    elif w.concurrency > 0:
        stated = _point(
            req, tco, pricing, w.concurrency, float(getattr(performance, "output_tokens_per_s", 0.0))
        )
    if design_dp is not None and design_dp.concurrency > 0:
        design = _point(req, tco, pricing, design_dp.concurrency, design_dp.output_tokens_per_s)
        load_share = w.concurrency / design_dp.concurrency
        right_sized = load_share >= RIGHT_SIZED_SHARE
        low_c = int(getattr(design_dp, "concurrency_low", 0) or 0)
        if low_c > 0:
            # The conservative end of the design capacity (performance/design.py band_concurrency).
            conservative = _point(req, tco, pricing, low_c, float(design_dp.output_tokens_per_s_low))
        _labelled_figures(book, req, pricing, design, conservative, stated)
        book.put(
            "economics.load_share",
            round(load_share, 6),
            source=_DERIVED,
            concurrency=w.concurrency,
            design_concurrency=design_dp.concurrency,
        )
        # Above what the request's settings run at once, the plan already says so and names the
        # settings that carry the load (performance.concurrency_above_capacity); "size a smaller
        # deployment" beside it would contradict it.  The advice returns once the settings carry it.
        runs_at_once = int(getattr(performance, "capacity_concurrency", 0) or 0)
        if not right_sized and not (0 < runs_at_once < w.concurrency):
            checks.append(right_sizing_check(req, design_dp.concurrency, load_share, design, stated))
    return _Labelled(design, stated, conservative, load_share, right_sized)


def _shown(x: Decimal | None) -> Decimal | str:
    return x if x is not None else "none"


def _labelled_figures(
    book: FigureBook,
    req: PlanRequest,
    pricing: _Pricing,
    design: EconomicsPoint,
    conservative: EconomicsPoint | None,
    stated: EconomicsPoint | None,
) -> None:
    """Cost per million output and input tokens at the design point, its conservative end (when the
    design point has one) and the stated load (when there is one), on the figure book."""
    w = req.workload
    out_tokens = pricing.out_tokens
    book.put(
        "economics.design.cost_per_m_output",
        _shown(design.cost_per_m_output),
        source=_DERIVED,
        concurrency=design.concurrency,
        output_tokens_per_s=round(design.output_tokens_per_s, 6),
        output_cost_share=str(pricing.out_share),
        annual_cost=str(pricing.annual),
        utilisation=str(pricing.utilisation),
    )
    book.put(
        "economics.design.cost_per_m_input",
        _shown(design.cost_per_m_input),
        source=_DERIVED,
        concurrency=design.concurrency,
        input_tokens_per_output_token=round(w.input_tokens / out_tokens, 6),
        input_cost_share=str(pricing.in_share),
        annual_cost=str(pricing.annual),
        utilisation=str(pricing.utilisation),
    )
    if conservative is not None:
        book.put(
            "economics.design_conservative.cost_per_m_output",
            _shown(conservative.cost_per_m_output),
            source=_DERIVED,
            concurrency=conservative.concurrency,
            output_tokens_per_s=round(conservative.output_tokens_per_s, 6),
            output_cost_share=str(pricing.out_share),
            annual_cost=str(pricing.annual),
            utilisation=str(pricing.utilisation),
        )
        book.put(
            "economics.design_conservative.cost_per_m_input",
            _shown(conservative.cost_per_m_input),
            source=_DERIVED,
            concurrency=conservative.concurrency,
            input_tokens_per_output_token=round(w.input_tokens / out_tokens, 6),
            input_cost_share=str(pricing.in_share),
            annual_cost=str(pricing.annual),
            utilisation=str(pricing.utilisation),
        )
    if stated is not None:
        book.put(
            "economics.stated.cost_per_m_output",
            _shown(stated.cost_per_m_output),
            source=_DERIVED,
            concurrency=stated.concurrency,
            output_tokens_per_s=round(stated.output_tokens_per_s, 6),
            output_cost_share=str(pricing.out_share),
            annual_cost=str(pricing.annual),
            utilisation=str(pricing.utilisation),
        )
        book.put(
            "economics.stated.cost_per_m_input",
            _shown(stated.cost_per_m_input),
            source=_DERIVED,
            concurrency=stated.concurrency,
            input_tokens_per_output_token=round(w.input_tokens / out_tokens, 6),
            input_cost_share=str(pricing.in_share),
            annual_cost=str(pricing.annual),
            utilisation=str(pricing.utilisation),
        )


def _break_even_figures(
    book: FigureBook,
    pricing: _Pricing,
    points: list[EconomicsPoint],
    break_even: float | None,
    claim: float | None,
) -> tuple[Decimal | None, Decimal | None]:
    """The break-even and seed-claim concurrencies on the figure book, and the throughput multiples at
    full load that would make the API cost equal the yearly cost and reach the seed's saving (None when
    no point has an API cost)."""
    book.put(
        "economics.break_even_concurrency",
        break_even if break_even is not None else "none",
        source=_DERIVED,
        basis=pricing.basis,
        annual_cost=str(pricing.annual),
        utilisation=str(pricing.utilisation),
    )
    book.put(
        "economics.seed_claim_concurrency",
        claim if claim is not None else "none",
        source=Source("seed", "S1: unit token cost 60–70 % lower (claim, checked here)"),
        basis=pricing.basis,
        claimed_saving=str(SEED_CLAIM),
    )
    annual = pricing.annual
    best = max(
        (p for p in points if p.api_cost_per_year),
        key=lambda p: p.api_cost_per_year or Decimal(0),  # never None or 0: filtered on the line above
        default=None,
    )
    need_even = need_claim = None
    if best is not None and best.api_cost_per_year:
        # API cost grows with the tokens served: the throughput multiple that would make them equal
        need_even = (annual / best.api_cost_per_year).quantize(Decimal("0.1"))
        need_claim = (annual / ((1 - SEED_CLAIM) * best.api_cost_per_year)).quantize(Decimal("0.1"))
        book.put(
            "economics.throughput_multiple_for_break_even",
            need_even,
            source=_DERIVED,
            annual_cost=str(annual),
            api_cost_at_full_load=str(best.api_cost_per_year),
        )
    return need_even, need_claim


def _api_comparison_check(
    req: PlanRequest,
    performance: Any,
    pricing: _Pricing,
    break_even: float | None,
    claim: float | None,
    quoted_saving: Decimal | None,
    need_even: Decimal | None,
    need_claim: Decimal | None,
) -> Check:
    """The finding against the API: cheaper at every load (with the throughput it would take to break
    even), or the concurrency from which self-hosting is cheaper and where the seed's saving holds."""
    c = req.commercial
    name = req.model.name
    basis = pricing.basis
    if break_even is None:
        capacity = getattr(performance, "capacity_concurrency", 0)
        more_en = (
            f"; it would take about {need_even} × the estimated throughput at full load to break even and "
            f"{need_claim} × for the seed's 60 % saving (a measured result, MTP or a higher utilisation)"
            if need_even is not None
            else ""
        )
        more_zh = (
            f"；满负载吞吐需达到估算值的约 {need_even} 倍方可持平，达到原方案所称 60% 节省需约 {need_claim} 倍"
            "（可通过压测实测、MTP 或提高利用率验证）"
            if need_even is not None
            else ""
        )
        return raise_(
            "commercial.api_cheaper_at_every_load",
            figures={
                "capacity": capacity,
                "throughput_multiple_for_break_even": str(need_even) if need_even is not None else None,
                "throughput_multiple_for_seed_claim": str(need_claim) if need_claim is not None else None,
            },
            name=name,
            capacity=capacity,
            utilisation=c.utilisation,
            more_en=more_en,
            more_zh=more_zh,
        )
    saving_txt = f"{float(quoted_saving):.0%}" if quoted_saving is not None else "n/a"
    claim_en = (
        f"; the seed's 60 % saving holds from about {claim:g} concurrent requests"
        if claim is not None
        else "; the seed's 60 % saving is not reached at any load"
    )
    claim_zh = (
        f"；原方案所称节省 60% 需并发约 {claim:g} 路以上"
        if claim is not None
        else "；任何负载下均达不到原方案所称 60% 的节省"
    )
    return raise_(
        "commercial.api_break_even",
        figures={
            "break_even_concurrency": break_even,
            "quoted_saving": str(quoted_saving) if quoted_saving is not None else None,
            "seed_claim_concurrency": claim,
        },
        name=name,
        break_even=break_even,
        basis_en=basis,
        utilisation=c.utilisation,
        concurrency=req.workload.concurrency,
        saving=saving_txt,
        claim_en=claim_en,
        basis_zh="采购" if basis == "buy" else "租赁",
        claim_zh=claim_zh,
    )


def _money(x: Decimal | None, currency: str) -> str:
    return "n/a" if x is None else f"{format_number(x, 2)} {currency}"


def right_sizing_check(
    req: PlanRequest,
    design_concurrency: int,
    share: float,
    design: EconomicsPoint,
    stated: EconomicsPoint | None,
) -> Check:
    """The stated load uses less than half of what the cluster carries within the targets."""
    cur = req.commercial.currency
    conc = req.workload.concurrency
    at_load = stated.cost_per_m_output if stated is not None else None
    return raise_(
        "commercial.right_sizing",
        figures={
            "concurrency": conc,
            "design_concurrency": design_concurrency,
            "load_share": round(share, 4),
            "cost_per_m_output_at_load": str(at_load) if at_load is not None else None,
            "cost_per_m_output_at_design": str(design.cost_per_m_output)
            if design.cost_per_m_output is not None
            else None,
        },
        conc=conc,
        share=share,
        design_concurrency=design_concurrency,
        at_load=_money(at_load, cur),
        at_design=_money(design.cost_per_m_output, cur),
    )
