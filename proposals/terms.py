"""The commercial block of a proposal: seller, VAT, payment, delivery, warranty, acceptance, signature.

Pure selection and arithmetic over one quote's :class:`~proposals.models.QuoteTerms`
(or its defaults) and the revision's priced lines; the proposal template only
prints what :func:`commercial_context` returns.

VAT (增值税) in China: 13 % on goods (servers, network, racks), 6 % on services
(installation, software support, operations) — the rates of the VAT reform
announcement of 2019 (财政部 税务总局 海关总署公告 2019 年第 39 号).  The quote
discount applies to the one-time purchase lines (``quotes.statuses.CAPEX_CATEGORIES``),
as the revision totals compute it, so each line's net amount here adds up to the
revision's net total to the cent.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

from django.utils.translation import gettext as _

from quotes.statuses import CAPEX_CATEGORIES, BomCategory

from .models import QuoteTerms, SellerProfile, SupportLevel, logo_kind

CENT = Decimal("0.01")
SERVICE_CATEGORIES = frozenset({BomCategory.INSTALL, BomCategory.SOFTWARE, BomCategory.OM})


def _money(value: Decimal) -> Decimal:
    return Decimal(value).quantize(CENT, rounding=ROUND_HALF_UP)


def _zh(lang: str) -> bool:
    return (lang or "").lower().startswith("zh")


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
    """VAT by rate: goods at ``vat_rate_goods``, services at ``vat_rate_services``."""
    goods = sum((nets[id(x)] for x in lines if x.category not in SERVICE_CATEGORIES), Decimal("0"))
    services = sum((nets[id(x)] for x in lines if x.category in SERVICE_CATEGORIES), Decimal("0"))
    rows = []
    for label, rate, net in (  # labels read "VAT 13 % on goods (hardware)"
        (_("goods (hardware)"), terms.vat_rate_goods, goods),
        (_("services (installation, support, operations)"), terms.vat_rate_services, services),
    ):
        if net:
            vat = _money(net * Decimal(rate))
            rows.append(
                VatRow(label=label, rate=Decimal(rate), net=_money(net), vat=vat, gross=_money(net) + vat)
            )
    return rows


def seller_context(lang: str) -> dict:
    """The seller block, or an empty dict when no profile has been entered in the admin."""
    profile = SellerProfile.current()
    if profile is None:
        return {}
    zh = _zh(lang)
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
    return (
        f"{Decimal(value) * 100:.0f} %"
        if Decimal(value) * 100 == int(Decimal(value) * 100)
        else f"{Decimal(value) * 100:.1f} %"
    )


def commercial_context(revision, lines, lang: str, *, benchmark: dict | None = None) -> dict:
    """Seller, terms, VAT rows and totals for the proposal of ``revision`` (its purchase ``lines``)."""
    quote = revision.quote
    terms = terms_for(quote)
    nets = line_nets(lines, Decimal(revision.discount or 0))
    rows = vat_rows(lines, nets, terms)
    total_net = sum((r.net for r in rows), Decimal("0"))
    total_vat = sum((r.vat for r in rows), Decimal("0"))
    support = SupportLevel(terms.support_level).label if terms.support_level in SupportLevel.values else ""
    milestones = [
        (_("on signing the contract"), terms.payment_on_signing),
        (_("on delivery of the hardware"), terms.payment_on_delivery),
        (_("on acceptance"), terms.payment_on_acceptance),
    ]
    place = terms.delivery_place or _("the customer's data centre named in the contract")
    bench = benchmark or {}
    if bench.get("output_tokens_per_s"):
        acceptance_run = _(
            "The cluster starts from the delivered launch configuration and the benchmark included in it "
            "(%(input)s input and %(output)s output tokens per request, %(concurrency)s requests in flight) "
            "reaches at least %(throughput)s output tokens per second."
        ) % {
            "input": f"{int(bench.get('input_tokens') or 0):,}",
            "output": f"{int(bench.get('output_tokens') or 0):,}",
            "concurrency": f"{int(bench.get('concurrency') or 0):,}",
            "throughput": f"{round(float(bench['output_tokens_per_s'])):,}",
        }
    else:
        acceptance_run = _(
            "The cluster starts from the delivered launch configuration and passes the benchmark included in it."
        )
    acceptance = [
        _(
            "Every server, switch and rack of the bill of materials is delivered, installed and powered on both feeds."
        ),
        acceptance_run,
        _("Each node passes the vendor's hardware self-test and the accelerators report healthy."),
    ]
    if terms.acceptance_extra.strip():
        acceptance.append(terms.acceptance_extra.strip())
    exclusions = [
        _(
            "Data-centre works: floor space, power feeds and breakers up to the rack PDUs, cooling, cabling trays."
        ),
        _("Model licences and any fee owed to the model vendor."),
        _("Integration with the customer's applications beyond the serving endpoint."),
        _("Import duties and taxes other than the VAT stated here."),
    ]
    if terms.exclusions_extra.strip():
        exclusions.append(terms.exclusions_extra.strip())
    return {
        "seller": seller_context(lang),
        "terms": terms,
        "support_label": support,
        "payment_milestones": [
            {"event": event, "percent": pct, "percent_label": f"{pct} %"} for event, pct in milestones if pct
        ],
        "delivery_place": place,
        "vat_rows": [{**r.__dict__, "rate_label": _pct(r.rate)} for r in rows],
        "total_net": total_net,
        "total_vat": total_vat,
        "total_gross": total_net + total_vat,
        "line_nets": nets,
        "acceptance": acceptance,
        "exclusions": exclusions,
    }
