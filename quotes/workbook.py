"""The BOM/TCO workbook finance can audit: live formulas, their values, and the inputs they read.

Written with XlsxWriter, which stores each formula *with* its computed value:
Excel and LibreOffice recompute when a quantity, price, discount or rate is
changed, and any reader that does not calculate (pandas, previewers, openpyxl
with ``data_only=True``) still sees the figures.  The values written are
computed here with the same arithmetic as the formulas, and equal the
revision's frozen totals (and so the proposal PDF) to the cent:

* ``BOM``: line total = ROUND(quantity × unit price × (1 − line discount), 2)
  (``quotes.bom.line_total``); list amount = ROUND(quantity × unit price, 2);
  list total = Σ list amounts of the purchase lines; quote discount =
  −ROUND(Σ capex line totals × quote discount, 2) (``quotes.services._totals``);
  net total; discount = net − list; VAT = ROUND(net × VAT rate, 2); capex.
  Lease lines price the alternative: a 0 in "In purchase total" keeps them out.
* ``Inputs``: the quote discount, VAT rate, horizon, NPV discount rate, capex
  (linked to the BOM) and the yearly bills the TCO reads; then the results:
  horizon TCOs and NPVs.  NPV discounts monthly at (1 + r)^(1/12) − 1 with
  payments at the end of each month and capex at month 0
  (``configurator.engine.tco``): NPV = capex + opex/12 × (1 − (1 + i)^−M) / i.
* ``TCO yearly``: every year's bills read the inputs; cost = their sum;
  cumulative = last year's + this year's.
* ``TCO monthly``, ``Cost per M tokens``, ``Sensitivity``, ``Assumptions``:
  figures from the frozen plan, as values.

Text is always written as text (``write_string`` with ``strings_to_formulas``
off): a description starting with ``=`` stays a description (spreadsheet
formula injection, ``quotes/spreadsheet.py``).
"""

from __future__ import annotations

import io
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from django.utils.translation import gettext as _

from .statuses import CAPEX_CATEGORIES, BomCategory

CENT = Decimal("0.01")
MONEY_FORMAT = "#,##0.00"
FRACTION_FORMAT = "0.00%"


def _cents(value: Decimal) -> Decimal:
    return Decimal(value).quantize(CENT, rounding=ROUND_HALF_UP)


def _dec(value: Any) -> Decimal | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        number = Decimal(str(value))
    except ArithmeticError:
        return None
    except ValueError:
        return None
    return number if number.is_finite() else None


def _col(index: int) -> str:
    """0 → A, 25 → Z, 26 → AA."""
    name = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        name = chr(65 + rest) + name
    return name


class Writer:
    """Cells written by type: numbers as numbers, text as text, formulas only from this module."""

    def __init__(self, book):
        self.book = book
        self.bold = book.add_format({"bold": True})
        self.money = book.add_format({"num_format": MONEY_FORMAT})
        self.money_bold = book.add_format({"num_format": MONEY_FORMAT, "bold": True})
        self.fraction = book.add_format({"num_format": FRACTION_FORMAT})
        self.input = book.add_format({"bg_color": "#FFF2CC"})  # inputs are yellow, as finance expects
        self.input_money = book.add_format({"bg_color": "#FFF2CC", "num_format": MONEY_FORMAT})
        self.input_fraction = book.add_format({"bg_color": "#FFF2CC", "num_format": FRACTION_FORMAT})

    @staticmethod
    def value(sheet, row: int, col: int, value: Any, fmt=None) -> None:
        if value is None:
            sheet.write_blank(row, col, None, fmt)
        elif isinstance(value, bool):
            sheet.write_string(row, col, str(value), fmt)
        elif isinstance(value, (int, float, Decimal)):
            sheet.write_number(row, col, float(value), fmt)
        else:
            sheet.write_string(row, col, str(value), fmt)

    @staticmethod
    def formula(sheet, row: int, col: int, text: str, value: Decimal | int | float, fmt=None) -> None:
        if not text.startswith("="):
            raise ValueError("a formula starts with '='")
        sheet.write_formula(row, col, text, fmt, float(value))

    def table(self, name: str, rows: list[dict], money_columns=()) -> None:
        """A sheet of values: a header row from the keys of the rows, then the rows."""
        sheet = self.book.add_worksheet(name)
        columns: list[str] = []
        for row in rows:
            for key in row:
                if key not in columns:
                    columns.append(key)
        for c, column in enumerate(columns):
            sheet.write_string(0, c, str(column), self.bold)
        for r, row in enumerate(rows, start=1):
            for c, column in enumerate(columns):
                fmt = self.money if column in money_columns else None
                self.value(sheet, r, c, row.get(column), fmt)
        for c, column in enumerate(columns):
            width = max([len(str(column))] + [len(str(row.get(column) or "")) for row in rows])
            sheet.set_column(c, c, min(max(10, width * 1.1 + 2), 60))
        sheet.freeze_panes(1, 0)


# --------------------------------------------------------------------------- BOM


BOM_HEADERS = (
    ("position", "Position"),
    ("category", "Category"),
    ("sku", "SKU"),
    ("description", "Description"),
    ("quantity", "Quantity"),
    ("unit", "Unit"),
    ("unit_price", "Unit price"),
    ("discount", "Line discount"),
    ("line_total", "Line total"),
    ("currency", "Currency"),
    ("note", "Note"),
    ("list_amount", "List amount"),
    ("in_total", "In purchase total (1/0)"),
    ("capex", "Capex line (1/0)"),
)
COL = {key: i for i, (key, _label) in enumerate(BOM_HEADERS)}


def write_bom(w: Writer, revision, zh: bool, inputs: dict[str, str]) -> dict[str, str]:
    """The BOM sheet; returns the cell references of its totals (for the other sheets)."""
    sheet = w.book.add_worksheet("BOM")
    labels = {
        "position": _("Position"),
        "category": _("Category"),
        "sku": _("SKU"),
        "description": _("Description"),
        "quantity": _("Quantity"),
        "unit": _("Unit"),
        "unit_price": _("Unit price"),
        "discount": _("Line discount"),
        "line_total": _("Line total"),
        "currency": _("Currency"),
        "note": _("Note"),
        "list_amount": _("List amount"),
        "in_total": _("In purchase total (1/0)"),
        "capex": _("Capex line (1/0)"),
    }
    for key, index in COL.items():
        sheet.write_string(0, index, labels[key], w.bold)
    lines = list(revision.lines.all())
    first, last = 2, len(lines) + 1  # Excel rows of the lines
    sums = {"list": Decimal("0"), "after_lines": Decimal("0"), "capex_lines": Decimal("0")}
    for r, line in enumerate(lines, start=1):
        x = r + 1  # Excel row
        category = (
            str(BomCategory(line.category).label) if line.category in BomCategory.values else line.category
        )
        in_total = 0 if line.category == BomCategory.LEASE else 1
        capex = 1 if line.category in CAPEX_CATEGORIES else 0
        w.value(sheet, r, COL["position"], line.position)
        w.value(sheet, r, COL["category"], category)
        w.value(sheet, r, COL["sku"], line.sku)
        w.value(
            sheet,
            r,
            COL["description"],
            line.description_zh if zh and line.description_zh else line.description_en,
        )
        w.value(sheet, r, COL["quantity"], line.quantity, w.input)
        w.value(sheet, r, COL["unit"], line.unit)
        w.value(sheet, r, COL["unit_price"], line.unit_price, w.input_money)
        w.value(sheet, r, COL["discount"], line.discount, w.input_fraction)
        total = _cents(line.quantity * line.unit_price * (1 - line.discount))
        w.formula(sheet, r, COL["line_total"], f"=ROUND(E{x}*G{x}*(1-H{x}),2)", total, w.money)
        w.value(sheet, r, COL["currency"], line.currency)
        w.value(sheet, r, COL["note"], line.note)
        amount = _cents(line.quantity * line.unit_price)
        w.formula(sheet, r, COL["list_amount"], f"=ROUND(E{x}*G{x},2)", amount, w.money)
        w.value(sheet, r, COL["in_total"], in_total, w.input)
        w.value(sheet, r, COL["capex"], capex, w.input)
        if in_total:
            sums["list"] += amount
            sums["after_lines"] += total
            if capex:
                sums["capex_lines"] += total

    def rng(key: str) -> str:
        letter = _col(COL[key])
        return f"{letter}{first}:{letter}{last}" if lines else f"{letter}2:{letter}2"

    discount = Decimal(str(revision.discount))
    vat_rate = _dec(inputs.get("vat_rate_value")) or Decimal("0")
    quote_discount = -_cents(sums["capex_lines"] * discount)
    net = sums["after_lines"] + quote_discount
    vat = _cents(net * vat_rate)
    row = last + 1  # a blank row, then the totals (0-based row index = Excel row − 1)
    refs: dict[str, str] = {}
    I_, D_, J_ = COL["line_total"], COL["description"], COL["currency"]

    def total_row(key: str, label: str, formula: str, value: Decimal, fmt=None) -> None:
        nonlocal row
        w.value(sheet, row, D_, label, w.bold if key in ("net", "gross") else None)
        w.formula(sheet, row, I_, formula, value, fmt or w.money)
        w.value(sheet, row, J_, revision.currency)
        refs[key] = f"$I${row + 1}"
        row += 1

    total_row("list", _("List total"), f"=SUMPRODUCT({rng('in_total')},{rng('list_amount')})", sums["list"])
    total_row(
        "after_lines",
        _("Total after line discounts"),
        f"=SUMPRODUCT({rng('in_total')},{rng('line_total')})",
        sums["after_lines"],
    )
    total_row(
        "quote_discount",
        _("Quote discount on the capex lines"),
        f"=-ROUND(SUMPRODUCT({rng('in_total')},{rng('capex')},{rng('line_total')})*{inputs['quote_discount']},2)",
        quote_discount,
    )
    total_row("net", _("Net total"), f"={refs['after_lines']}+{refs['quote_discount']}", net, w.money_bold)
    total_row("discount", _("Discount"), f"={refs['net']}-{refs['list']}", net - sums["list"])
    total_row("vat", _("VAT"), f"=ROUND({refs['net']}*{inputs['vat_rate']},2)", vat)
    total_row("gross", _("Total including VAT"), f"={refs['net']}+{refs['vat']}", net + vat, w.money_bold)
    total_row(
        "capex",
        _("Capex"),
        f"=SUMPRODUCT({rng('in_total')},{rng('capex')},{rng('line_total')})+{refs['quote_discount']}",
        sums["capex_lines"] + quote_discount,
    )
    w.value(sheet, row, D_, _("(lease lines are the alternative to purchase and are not part of the totals)"))
    widths = {"description": 48, "category": 18, "sku": 22, "note": 30}
    for key, index in COL.items():
        sheet.set_column(index, index, widths.get(key, 14))
    sheet.freeze_panes(1, 0)
    refs["values"] = {  # type: ignore[assignment]
        "list": sums["list"],
        "net": net,
        "vat": vat,
        "capex": sums["capex_lines"] + quote_discount,
    }
    return refs


# --------------------------------------------------------------------------- inputs, TCO yearly, results


INPUT_ROWS = (
    # key, label, unit kind
    ("quote_discount", "Quote discount", "fraction"),
    ("vat_rate", "VAT rate", "fraction"),
    ("usd_rate", "Exchange rate (per USD)", "number"),
    ("horizon", "Horizon (years)", "number"),
    ("npv_rate", "Discount rate (NPV, per year)", "fraction"),
    ("capex", "Capex (from the BOM)", "money"),
    ("om", "O&M per year", "money"),
    ("software", "Software and support per year", "money"),
    ("electricity", "Electricity per year", "money"),
    ("colocation", "Colocation per year", "money"),
    ("lease_rent", "Lease rent per year", "money"),
    ("lease_electricity", "Lease: electricity per year", "money"),
    ("lease_colocation", "Lease: colocation per year", "money"),
)


def input_refs() -> dict[str, str]:
    """Absolute references of the input cells (column B of the Inputs sheet, from row 2)."""
    return {key: f"Inputs!$B${i}" for i, (key, _label, _kind) in enumerate(INPUT_ROWS, start=2)}


def _tco_values(revision) -> dict[str, Decimal] | None:
    result = revision.result_json if isinstance(revision.result_json, dict) else {}
    tco = result.get("tco") if isinstance(result.get("tco"), dict) else None
    annual = (tco or {}).get("annual") or {}
    keys = {
        "om": "om",
        "software": "software_support",
        "electricity": "electricity",
        "colocation": "colocation",
        "lease_rent": "lease_rent",
        "lease_electricity": "lease_electricity",
        "lease_colocation": "lease_colocation",
    }
    values = {mine: _dec(annual.get(theirs)) for mine, theirs in keys.items()}
    horizon = _dec((tco or {}).get("horizon_years"))
    if tco is None or horizon is None or any(v is None for v in values.values()):
        return None
    values["horizon"] = horizon
    return values


def write_inputs(w: Writer, revision, vat_rate: Decimal) -> Any:
    """The Inputs sheet (values filled in once the BOM's capex is known: see :func:`fill_inputs`)."""
    sheet = w.book.add_worksheet("Inputs")
    for c, label in enumerate((_("Item"), _("Value"), _("Note"))):
        sheet.write_string(0, c, label, w.bold)
    sheet.set_column(0, 0, 40)
    sheet.set_column(1, 1, 20)
    sheet.set_column(2, 2, 60)
    sheet.freeze_panes(1, 0)
    return sheet


def write_tco_and_results(
    w: Writer,
    sheet,
    revision,
    bom: dict,
    vat_rate: Decimal,
    currency: str,
    yearly_columns: list[tuple[str, str]],
) -> None:
    """Fill the Inputs sheet, write TCO yearly with formulas, and the results block under the inputs."""
    resolved = revision.resolved_json if isinstance(revision.resolved_json, dict) else {}
    commercial = resolved.get("commercial") if isinstance(resolved.get("commercial"), dict) else {}
    tco = _tco_values(revision)
    npv_rate = _dec(commercial.get("discount_rate")) or Decimal("0")
    labels = {
        "quote_discount": _("Quote discount"),
        "vat_rate": _("VAT rate"),
        "usd_rate": _("Exchange rate (per USD)"),
        "horizon": _("Horizon (years)"),
        "npv_rate": _("Discount rate (NPV, per year)"),
        "capex": _("Capex (from the BOM)"),
        "om": _("O&M per year"),
        "software": _("Software and support per year"),
        "electricity": _("Electricity per year"),
        "colocation": _("Colocation per year"),
        "lease_rent": _("Lease rent per year"),
        "lease_electricity": _("Lease: electricity per year"),
        "lease_colocation": _("Lease: colocation per year"),
    }
    values: dict[str, Decimal] = {
        "quote_discount": Decimal(str(revision.discount)),
        "vat_rate": vat_rate,
        "usd_rate": Decimal(str(revision.usd_rate)),
        "horizon": (tco or {}).get("horizon", Decimal("0")),
        "npv_rate": npv_rate,
        "capex": bom["values"]["capex"],
        **{k: v for k, v in (tco or {}).items() if k != "horizon"},
    }
    fmt_of = {"fraction": w.input_fraction, "money": w.input_money, "number": w.input}
    for i, (key, _label, kind) in enumerate(INPUT_ROWS, start=1):
        sheet.write_string(i, 0, labels[key])
        if key == "capex":
            w.formula(sheet, i, 1, f"=BOM!{bom['capex']}", values["capex"], w.money)
            sheet.write_string(i, 2, _("Linked to the BOM sheet's capex; change quantities or prices there."))
        elif key in values:
            w.value(sheet, i, 1, values[key], fmt_of[kind])
        if kind == "money" and key != "capex":
            sheet.write_string(i, 2, currency)
    refs = input_refs()
    if tco is None:
        return

    # TCO yearly: every cell reads the inputs; cost = Σ bills; cumulative = last + this.
    ysheet = w.book.add_worksheet("TCO yearly")
    header = [_("Year")] + [label for _key, label in yearly_columns] + [_("Currency")]
    for c, label in enumerate(header):
        ysheet.write_string(0, c, str(label), w.bold)
    horizon = int(tco["horizon"])
    buy_cum = lease_cum = Decimal("0")
    capex = values["capex"]
    buy_opex = tco["om"] + tco["software"] + tco["electricity"] + tco["colocation"]
    lease_year = tco["lease_rent"] + tco["lease_electricity"] + tco["lease_colocation"]
    for y in range(1, horizon + 1):
        r, x = y, y + 1
        ysheet.write_number(r, 0, y)
        year_capex = capex if y == 1 else Decimal("0")
        cells = [
            (f"={refs['capex']}" if y == 1 else "=0", year_capex),
            (f"={refs['om']}", tco["om"]),
            (f"={refs['software']}", tco["software"]),
            (f"={refs['electricity']}", tco["electricity"]),
            (f"={refs['colocation']}", tco["colocation"]),
        ]
        buy_cost = year_capex + buy_opex
        buy_cum += buy_cost
        cells += [
            (f"=SUM(B{x}:F{x})", buy_cost),
            (f"=G{x}" if y == 1 else f"=H{x - 1}+G{x}", buy_cum),
            (f"={refs['lease_rent']}", tco["lease_rent"]),
            (f"={refs['lease_electricity']}", tco["lease_electricity"]),
            (f"={refs['lease_colocation']}", tco["lease_colocation"]),
        ]
        lease_cum += lease_year
        cells += [
            (f"=SUM(I{x}:K{x})", lease_year),
            (f"=L{x}" if y == 1 else f"=M{x - 1}+L{x}", lease_cum),
        ]
        for c, (formula, value) in enumerate(cells, start=1):
            w.formula(ysheet, r, c, formula, value, w.money)
        ysheet.write_string(r, len(cells) + 1, currency)
    ysheet.set_column(0, len(header), 16)
    ysheet.freeze_panes(1, 0)

    # Results under the inputs.
    months = horizon * 12
    monthly = (1 + npv_rate) ** (Decimal(1) / 12) - 1 if npv_rate else Decimal("0")
    annuity = (1 - (1 + monthly) ** -months) / monthly if monthly else Decimal(months)
    npv_buy = _cents(capex + buy_opex / 12 * annuity)
    npv_lease = _cents(lease_year / 12 * annuity)
    start = len(INPUT_ROWS) + 2  # a blank row after the inputs
    sheet.write_string(start, 0, _("Results (formulas)"), w.bold)
    last_year = horizon + 1
    i_ref = f"$B${start + 2}"
    results = [
        (_("Monthly discount rate"), f"=(1+{refs['npv_rate']})^(1/12)-1", monthly, w.fraction),
        (
            _("Annuity factor (months)"),
            f"=IF({i_ref}=0,{refs['horizon']}*12,(1-(1+{i_ref})^(-{refs['horizon']}*12))/{i_ref})",
            annuity,
            None,
        ),
        (_("TCO over the horizon, buy"), f"='TCO yearly'!$H${last_year}", buy_cum, w.money_bold),
        (_("TCO over the horizon, lease"), f"='TCO yearly'!$M${last_year}", lease_cum, w.money_bold),
        (
            _("NPV, buy"),
            f"=ROUND({refs['capex']}+SUM({refs['om']},{refs['software']},{refs['electricity']},"
            f"{refs['colocation']})/12*$B${start + 3},2)",
            npv_buy,
            w.money_bold,
        ),
        (
            _("NPV, lease"),
            f"=ROUND(SUM({refs['lease_rent']},{refs['lease_electricity']},{refs['lease_colocation']})/12"
            f"*$B${start + 3},2)",
            npv_lease,
            w.money_bold,
        ),
        (
            _("Net total including VAT"),
            f"=BOM!{bom['gross']}",
            bom["values"]["net"] + bom["values"]["vat"],
            w.money,
        ),
    ]
    for offset, (label, formula, value, fmt) in enumerate(results, start=1):
        sheet.write_string(start + offset, 0, str(label))
        w.formula(sheet, start + offset, 1, formula, value, fmt)


def result_rows() -> dict[str, int]:
    """Excel rows of the results on the Inputs sheet, by name (for tests and scripts)."""
    start = len(INPUT_ROWS) + 2
    names = ("monthly_rate", "annuity", "tco_buy", "tco_lease", "npv_buy", "npv_lease", "gross")
    return {name: start + i + 1 for i, name in enumerate(names, start=1)}


def build(revision, *, zh: bool, value_sheets: list[tuple[str, list[dict], list[str]]],
          yearly_columns: list[tuple[str, str]], title: str) -> bytes:  # fmt: skip
    """The workbook's bytes: BOM, Inputs, TCO yearly (formulas), then the value sheets."""
    import xlsxwriter

    buffer = io.BytesIO()
    book = xlsxwriter.Workbook(
        buffer,
        {
            "in_memory": True,
            "strings_to_formulas": False,
            "strings_to_urls": False,
            "strings_to_numbers": False,
        },
    )
    book.set_properties({"title": title, "author": "inference-configurator"})
    w = Writer(book)
    resolved = revision.resolved_json if isinstance(revision.resolved_json, dict) else {}
    commercial = resolved.get("commercial") if isinstance(resolved.get("commercial"), dict) else {}
    vat_rate = _dec(commercial.get("vat_rate")) or Decimal("0")
    refs = input_refs()
    bom = write_bom(w, revision, zh, {**refs, "vat_rate_value": str(vat_rate)})
    inputs_sheet = write_inputs(w, revision, vat_rate)
    currency = revision.currency
    write_tco_and_results(w, inputs_sheet, revision, bom, vat_rate, currency, yearly_columns)
    for name, rows, money_columns in value_sheets:
        if name == "TCO yearly" and book.get_worksheet_by_name("TCO yearly") is not None:
            continue  # written with formulas above
        w.table(name, rows, money_columns)
    book.close()
    return buffer.getvalue()
