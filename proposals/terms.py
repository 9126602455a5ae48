"""The commercial block of a proposal: seller, VAT, payment, delivery, warranty, acceptance, signature.

Pure selection and arithmetic over one quote's :class:`~proposals.models.QuoteTerms`
(or its defaults) and the revision's priced lines; the proposal template only
prints what :func:`commercial_context` returns.

VAT (增值税) in China is charged per line by the kind of supply (:data:`VAT_RATES`, each rate with
its basis; a quote's :class:`~proposals.models.QuoteTerms` may set other rates): 13 % on goods
(servers, network, racks, storage, software products), 9 % on installation (a construction
service, invoiced apart from the goods it installs), 6 % on software support and operations.  The
quote discount applies to the one-time purchase lines (``quotes.statuses.CAPEX_CATEGORIES``), as
the revision totals compute it, so each line's net amount here adds up to the revision's net total
to the cent.

Payment: the goods and their installation are paid by milestones (signing, delivery, acceptance);
the yearly services are paid per period as they are delivered (quarterly or yearly in arrears), so
no service is paid before it is rendered.
"""

from __future__ import annotations

import base64
import math
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

from django.utils.translation import gettext as _

from configurator.public import formatting, is_zh
from quotes.statuses import CAPEX_CATEGORIES, BomCategory

from .models import QuoteTerms, SellerProfile, SupportLevel, logo_kind

CENT = Decimal("0.01")
# Yearly services, paid per period as delivered; installation is a one-time service paid with the goods.
SERVICE_CATEGORIES = frozenset({BomCategory.SOFTWARE, BomCategory.OM})
INSTALLATION_CATEGORIES = frozenset({BomCategory.INSTALL})

# VAT by the kind of supply: the default rate and its basis (the QuoteTerms fields override the rate).
VAT_RATES: dict[str, tuple[Decimal, str]] = {
    "goods": (
        Decimal("0.13"),
        "财政部 税务总局 海关总署公告 2019 年第 39 号 第一条: sale of goods 16 % → 13 % from 2019-04-01",
    ),
    "installation": (
        Decimal("0.09"),
        "same announcement: 10 % → 9 %; installation is a construction service (财税〔2016〕36 号 附件 1 "
        "销售服务注释: 建筑服务—安装服务), invoiced apart from the equipment it installs "
        "(国家税务总局公告 2018 年第 42 号 第六条)",
    ),
    "services": (
        Decimal("0.06"),
        "财税〔2016〕36 号 附件 1 第十五条: modern services (information-technology and technical "
        "services: software support, operation and maintenance) at 6 %",
    ),
}


def vat_class(category: str) -> str:
    """The kind of supply of a BOM line: goods, installation or services (:data:`VAT_RATES`)."""
    if category in INSTALLATION_CATEGORIES:
        return "installation"
    return "services" if category in SERVICE_CATEGORIES else "goods"


def vat_rate(terms: QuoteTerms, kind: str) -> Decimal:
    """The quote's rate for one kind of supply (its QuoteTerms field, else the default of VAT_RATES)."""
    field = {
        "goods": "vat_rate_goods",
        "installation": "vat_rate_installation",
        "services": "vat_rate_services",
    }
    value = getattr(terms, field[kind], None)
    return Decimal(value) if value is not None else VAT_RATES[kind][0]


def _money(value: Decimal) -> Decimal:
    return Decimal(value).quantize(CENT, rounding=ROUND_HALF_UP)


def terms_for(quote) -> QuoteTerms:
    """The quote's terms, or an unsaved row with the customary defaults."""
    if quote is not None and getattr(quote, "pk", None):
        found = QuoteTerms.objects.filter(quote_id=quote.pk).first()
        if found is not None:
            return found
    return QuoteTerms()


def line_nets(lines, quote_discount: Decimal) -> dict[int, Decimal]:
    """Each purchase line's amount after the quote discount, keyed by ``id(line)``.

    The quote discount applies to the capex lines only; the revision rounds
    the whole discount once (``round(Σ capex × d)``), so the per-line shares are
    rounded and the cent left over goes to the largest capex line — the lines
    then add up to the revision's net total exactly.
    """
    out: dict[int, Decimal] = {}
    capex = [line for line in lines if line.category in CAPEX_CATEGORIES]
    total_discount = _money(sum((line.line_total for line in capex), Decimal("0")) * quote_discount)
    shares = {id(line): _money(line.line_total * quote_discount) for line in capex}
    if capex:
        largest = max(capex, key=lambda line: line.line_total)
        shares[id(largest)] += total_discount - sum(shares.values(), Decimal("0"))
    for line in lines:
        out[id(line)] = line.line_total - shares.get(id(line), Decimal("0"))
    return out


@dataclass(frozen=True)
class VatRow:
    label: str
    rate: Decimal
    net: Decimal
    vat: Decimal
    gross: Decimal


def vat_rows(lines, nets: dict[int, Decimal], terms: QuoteTerms) -> list[VatRow]:
    """VAT by kind of supply (each line by :func:`vat_class`): goods, installation, services."""
    labels = {  # labels read "VAT 13 % on goods (hardware)"
        "goods": _("goods (hardware and software products)"),
        "installation": _("installation (construction service)"),
        "services": _("services (software support, operations)"),
    }
    rows = []
    for kind, label in labels.items():
        net = sum((nets[id(x)] for x in lines if vat_class(x.category) == kind), Decimal("0"))
        if net:
            rate = vat_rate(terms, kind)
            vat = _money(net * rate)
            rows.append(VatRow(label=label, rate=rate, net=_money(net), vat=vat, gross=_money(net) + vat))
    return rows


def payment_schedule(lines, nets: dict[int, Decimal], terms: QuoteTerms, years: int) -> dict:
    """What is paid when, including VAT: the goods and their installation by milestone; the yearly
    services per period, in arrears, from acceptance.

    Milestone amounts are rounded to the cent and the last one takes the remainder, so they add up
    to the goods' gross total exactly; so do the services' periods.
    """
    one_time = [x for x in lines if vat_class(x.category) != "services"]
    services = [x for x in lines if vat_class(x.category) == "services"]
    gross_one_time = sum(
        (_money(nets[id(x)] * (1 + vat_rate(terms, vat_class(x.category)))) for x in one_time), Decimal("0")
    )
    gross_services = sum(
        (_money(nets[id(x)] * (1 + vat_rate(terms, "services"))) for x in services), Decimal("0")
    )
    milestones = [
        (_("on signing the contract"), terms.payment_on_signing),
        (_("on delivery of the hardware"), terms.payment_on_delivery),
        (_("on acceptance"), terms.payment_on_acceptance),
    ]
    rows = []
    paid = Decimal("0")
    kept = [(event, pct) for event, pct in milestones if pct]
    for i, (event, pct) in enumerate(kept):
        amount = gross_one_time - paid if i == len(kept) - 1 else _money(gross_one_time * Decimal(pct) / 100)
        paid += amount
        rows.append({"event": event, "percent": pct, "percent_label": f"{pct} %", "amount": amount})
    per_year = 4 if terms.services_billing == "quarter" else 1
    periods = max(1, years) * per_year
    period_amount = _money(gross_services / periods) if gross_services else Decimal("0")
    return {
        "goods_gross": gross_one_time,
        "goods_milestones": rows,
        "services_gross": gross_services,
        "services_periods": periods if gross_services else 0,
        "services_period_amount": period_amount,
        "services_last_amount": gross_services - period_amount * (periods - 1)
        if gross_services
        else Decimal("0"),
        "services_billing_label": str(terms.get_services_billing_display())
        if hasattr(terms, "get_services_billing_display")
        else "",
    }


def seller_context(lang: str) -> dict:
    """The seller block, or an empty dict when no profile has been entered in the admin."""
    profile = SellerProfile.current()
    if profile is None:
        return {}
    zh = is_zh(lang)
    logo = None
    if profile.logo:
        try:
            with profile.logo.open("rb") as handle:
                data = handle.read(600 * 1024)
        except OSError:
            data = b""
        kind = logo_kind(data)
        if kind:
            logo = f"data:{kind};base64,{base64.b64encode(data).decode('ascii')}"
    return {
        "company": (profile.company_zh if zh else profile.company_en)
        or profile.company_zh
        or profile.company_en,
        "address": (profile.address_zh if zh else profile.address_en)
        or profile.address_zh
        or profile.address_en,
        "contact_name": profile.contact_name,
        "contact_phone": profile.contact_phone,
        "contact_email": profile.contact_email,
        "signer_name": profile.signer_name,
        "signer_title": (profile.signer_title_zh if zh else profile.signer_title_en)
        or profile.signer_title_zh
        or profile.signer_title_en,
        "logo": logo,
        "demo": profile.is_demo,  # the cover says the seller is sample data until edited in the admin
    }


def _pct(value) -> str:
    """A rate as the terms print it: "13 %", "6.5 %" (one decimal at most, none when whole)."""
    return f"{formatting.format_number(Decimal(value) * 100, 1, strip_zeros=True)} %"


FAILOVER_SECONDS = 30  # S1 §3.1: the gateway switches to cluster B within 30 s


def _number(value) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if number == number and number not in (float("inf"), float("-inf")) else None


def acceptance_figures(result: dict, resolved: dict) -> dict:
    """The figures the acceptance test holds the delivered cluster to.

    Throughput: the lower end of the estimate's range (``performance.output_tokens_per_s_range``,
    the estimate ÷ the calibration band) at the quoted concurrency, rounded down.  Latency: the
    90th percentiles of TTFT and TPOT within the customer's targets when the workload states them;
    otherwise the estimate's 90th percentiles scaled by the same band (throughput at the lower end
    means steps that much longer), rounded up to 0.1 s and 1 ms.
    """
    perf = result.get("performance") if isinstance(result.get("performance"), dict) else {}
    workload = resolved.get("workload") if isinstance(resolved.get("workload"), dict) else {}
    estimate = _number(perf.get("output_tokens_per_s"))
    band = perf.get("output_tokens_per_s_range") or ()
    low = _number(band[0]) if len(band) == 2 else None
    floor = int(low) if low else (int(estimate) if estimate else None)
    stretch = (estimate / low) if estimate and low else 1.0
    ttft_target = _number(workload.get("ttft_p90_target_s"))
    tpot_target = _number(workload.get("tpot_p90_target_ms"))
    # The customer's median targets (the scenarios state theirs as P50): held as stated.
    ttft_p50 = _number(workload.get("ttft_target_s"))
    tpot_p50 = _number(workload.get("tpot_target_ms"))
    stated = bool(ttft_target or tpot_target or ttft_p50 or tpot_p50)
    ttft_est = _number(perf.get("ttft_p90_s"))
    tpot_est = _number(perf.get("tpot_p90_s"))
    # Without a stated target the estimate's P90 stretched by the band; with one, only what the
    # customer stated (a laxer P90 from the estimate beside a stated median would accept a miss).
    ttft = ttft_target if ttft_target else (math.ceil(ttft_est * stretch * 10) / 10 if ttft_est else None)
    tpot = tpot_target if tpot_target else (math.ceil(tpot_est * stretch * 1000) if tpot_est else None)
    if stated:
        ttft, tpot = ttft_target, tpot_target
    return {
        "input_tokens": int(workload.get("input_tokens") or 0),
        "output_tokens": int(workload.get("output_tokens") or 0),
        "concurrency": int(workload.get("concurrency") or 0),
        "output_tokens_per_s": floor,
        "ttft_p90_s": ttft,
        "tpot_p90_ms": tpot,
        "ttft_p50_s": ttft_p50,
        "tpot_p50_ms": tpot_p50,
        "latency_from_targets": stated,
        "failover": str((resolved.get("topology") or {}).get("kind") or "") == "primary_standby",
        "failover_seconds": FAILOVER_SECONDS,
    }


def _acceptance(terms: QuoteTerms, figures: dict) -> list[str]:
    fmt = {
        "input": f"{figures['input_tokens']:,}",
        "output": f"{figures['output_tokens']:,}",
        "concurrency": f"{figures['concurrency']:,}",
    }
    items = [
        _(
            "Every server, switch and rack of the bill of materials is delivered, installed and powered on both feeds."
        ),
        _("Each node passes the vendor's hardware self-test and the accelerators report healthy."),
    ]
    if figures["output_tokens_per_s"]:
        items.append(
            _(
                "The cluster starts from the delivered launch configuration, and the acceptance benchmark of the "
                "appendix (%(input)s input and %(output)s output tokens per request, %(concurrency)s requests in "
                "flight) reaches at least %(throughput)s output tokens per second, the lower end of the "
                "estimated range."
            )
            % {**fmt, "throughput": f"{figures['output_tokens_per_s']:,}"}
        )
    else:
        items.append(
            _(
                "The cluster starts from the delivered launch configuration and passes the acceptance benchmark of the appendix."
            )
        )
    if figures["ttft_p90_s"] and figures["tpot_p90_ms"]:
        items.append(
            _(
                "In the same run, the 90th percentile of the time to first token is at most %(ttft)s s and "
                "the 90th percentile of the time per output token at most %(tpot)s ms."
            )
            % {"ttft": f"{figures['ttft_p90_s']:g}", "tpot": f"{figures['tpot_p90_ms']:g}"}
        )
    else:
        for key, text in (
            ("ttft_p90_s", _("In the same run, the 90th percentile of the time to first token is at most %(v)s s.")),
            ("tpot_p90_ms", _("In the same run, the 90th percentile of the time per output token is at most %(v)s ms.")),
        ):  # fmt: skip
            if figures[key]:
                items.append(text % {"v": f"{figures[key]:g}"})
    for key, text in (
        ("ttft_p50_s", _("In the same run, the median (50th percentile) time to first token is at most %(v)s s, your target.")),
        ("tpot_p50_ms", _("In the same run, the median (50th percentile) time per output token is at most %(v)s ms, your target.")),
    ):  # fmt: skip
        if figures.get(key):
            items.append(text % {"v": f"{figures[key]:g}"})
    if figures["failover"]:
        items.append(
            _(
                "Failover: with the benchmark running, the primary cluster is stopped (its master node switched "
                "off); the gateway sends new requests to the standby cluster within %(seconds)s seconds and the "
                "benchmark runs on, with requests failing only during the switch-over."
            )
            % {"seconds": figures["failover_seconds"]}
        )
    if terms.acceptance_extra.strip():
        items.append(terms.acceptance_extra.strip())
    return items


def commercial_context(revision, lines, lang: str, *, benchmark: dict | None = None) -> dict:
    """Seller, terms, VAT rows, payment schedule, acceptance and totals for the proposal of
    ``revision`` (its purchase ``lines``).  ``benchmark`` is accepted for the callers' sake; the
    acceptance figures are read from the revision's plan (:func:`acceptance_figures`)."""
    quote = revision.quote
    terms = terms_for(quote)
    nets = line_nets(lines, Decimal(revision.discount or 0))
    rows = vat_rows(lines, nets, terms)
    total_net = sum((r.net for r in rows), Decimal("0"))
    total_vat = sum((r.vat for r in rows), Decimal("0"))
    support = SupportLevel(terms.support_level).label if terms.support_level in SupportLevel.values else ""
    result = revision.result_json if isinstance(revision.result_json, dict) else {}
    resolved = revision.resolved_json if isinstance(revision.resolved_json, dict) else {}
    years = int(((result.get("tco") or {}).get("horizon_years")) or 3)
    schedule = payment_schedule(lines, nets, terms, years)
    place = terms.delivery_place or _("the customer's data centre named in the contract")
    figures = acceptance_figures(result, resolved)
    exclusions = [
        _(
            "Data-centre works: floor space, power feeds and breakers up to the rack PDUs, cooling, cabling trays."
        ),
        _("Model licences and any fee owed to the model vendor."),
        _("Integration with the customer's applications beyond the serving endpoint."),
        _("Import duties and taxes other than the VAT stated here."),
        _(
            'Items marked "price on request" in the bill of materials are not in the totals; they are quoted separately.'
        ),
    ]
    if terms.exclusions_extra.strip():
        exclusions.append(terms.exclusions_extra.strip())
    return {
        "seller": seller_context(lang),
        "terms": terms,
        "support_label": support,
        "payment_milestones": [
            {**m, "event": _("of the goods and installation %(event)s") % {"event": m["event"]}}
            for m in schedule["goods_milestones"]
        ],
        "payment_schedule": schedule,
        "delivery_place": place,
        "vat_rows": [{**r.__dict__, "rate_label": _pct(r.rate)} for r in rows],
        "vat_basis": [
            {"kind": kind, "rate_label": _pct(vat_rate(terms, kind)), "basis": basis}
            for kind, (_rate, basis) in VAT_RATES.items()
        ],
        "total_net": total_net,
        "total_vat": total_vat,
        "total_gross": total_net + total_vat,
        "line_nets": nets,
        "acceptance": _acceptance(terms, figures),
        "acceptance_figures": figures,
        "exclusions": exclusions,
    }
