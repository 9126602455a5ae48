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
  −ROUND(Σ capex line totals × quote discount, 2) (``quotes.services.snapshot.revision_totals``);
  net total; discount = net − list; VAT = ROUND(net × VAT rate, 2); capex.
  Lease lines price the alternative: a 0 in "In purchase total" keeps them out.
* ``Inputs`` (``configurator.engine.tco.compute_tco``'s inputs and arithmetic):
  the quote discount, VAT rate, horizon, NPV discount rate, capex and servers
  (linked to the BOM), the yearly bills, the residual share, the lease rent and
  whether the lease includes O&M and electricity (1/0); then what follows from
  them: servers net = ROUND(servers × (1 − quote discount), 2), residual =
  ROUND(servers net × residual share, 2), lease upfront = capex − servers net
  (the network, racks and installation are bought on both sides), lease O&M and
  electricity (0 when included), lease software and colocation (as when
  buying); then the results: horizon TCOs and NPVs.  NPV discounts monthly at
  i = (1 + r)^(1/12) − 1 with payments at the end of each month, capex and the
  lease upfront at month 0 and the residual at month M:
  NPV buy = capex + buy opex/12 × (1 − (1 + i)^−M) / i − residual × (1 + i)^−M,
  NPV lease = lease upfront + lease per year/12 × (1 − (1 + i)^−M) / i.
* ``TCO yearly``: every year's bills read the inputs (capex and the lease
  upfront in year 1, the residual as a credit in the last year); cost = the
  side's columns summed; cumulative = last year's + this year's.
* ``Summary`` and ``Facilities``: the plan's declared sections (``configurator.sections``) as the
  page and the proposal print them, each a titled block of rows — at a glance, the design capacity,
  performance, buy vs lease and the cost per million tokens; racks, power, the feeds, power per serving
  group, each rack, the network and the serving groups.  Their titles and labels are the sections'
  (as are the BOM's net, VAT and gross rows, the ``TOTALS`` section's, and the yearly bills on
  ``Inputs``, the ``TCO`` section's); numbers are written as numbers in their unit's format.
* ``TCO monthly``, ``Cost per M tokens``, ``Sensitivity``, ``Assumptions``:
  figures from the frozen plan, as values.

Text is always written as text (``write_string`` with ``strings_to_formulas``
off): a description starting with ``=`` stays a description (spreadsheet
formula injection, ``catalog/spreadsheet.py``).
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from django.utils.text import capfirst
from django.utils.translation import get_language, gettext_lazy
from django.utils.translation import gettext as _

from configurator.public import formatting, sections, vocabulary

# Each line's kind of supply and the quote's VAT rates, as the proposal states them (proposals.terms).
from proposals.terms import terms_for, vat_class
from proposals.terms import vat_rate as terms_vat_rate
from quotes.bom import UNITS as BOM_UNITS
from quotes.models import BomLine
from quotes.statuses import CAPEX_CATEGORIES, BomCategory

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
        self.tenths = book.add_format({"num_format": "#,##0.0"})  # kW and A in the facilities' tables
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


# The BOM sheet's columns, in order, each named once: a line's own fields by the BOM line model's
# names for them (``quotes.models.BomLine``, as the quote's admin and forms name them), the columns
# the workbook adds (amounts and 1/0 flags the formulas read) here.
BOM_COLUMNS: tuple[tuple[str, Any], ...] = (
    ("position", None),
    ("category", None),
    ("sku", None),
    ("description", gettext_lazy("Description")),
    ("quantity", None),
    ("unit", None),
    ("unit_price", None),
    ("discount", None),
    ("line_total", None),
    ("currency", None),
    ("note", None),
    ("list_amount", gettext_lazy("List amount")),
    ("in_total", gettext_lazy("In purchase total (1/0)")),
    ("capex", gettext_lazy("Capex line (1/0)")),
    ("server", gettext_lazy("Server line (1/0)")),
    ("service", gettext_lazy("Service line, VAT at the services rate (1/0)")),
    ("discount_share", gettext_lazy("Share of the quote discount")),
    ("installation", gettext_lazy("Installation line, VAT at the installation rate (1/0)")),
)
COL = {key: i for i, (key, _label) in enumerate(BOM_COLUMNS)}


def bom_heading(key: str) -> str:
    """The heading of a BOM column in the active language."""
    label = dict(BOM_COLUMNS)[key]
    return str(label) if label is not None else str(capfirst(BomLine._meta.get_field(key).verbose_name))


@dataclass
class BomSums:
    """What the BOM's totals add up, line by line (the values written beside their formulas)."""

    list: Decimal = Decimal(0)
    after_lines: Decimal = Decimal(0)
    capex_lines: Decimal = Decimal(0)
    servers: Decimal = Decimal(0)
    services_after_lines: Decimal = Decimal(0)
    services_discount: Decimal = Decimal(0)
    installation_after_lines: Decimal = Decimal(0)
    installation_discount: Decimal = Decimal(0)


def _bom_line(w: Writer, sheet, r: int, line, zh: bool, inputs: dict[str, str], sums: BomSums) -> None:
    """One BOM line at 0-based row ``r``: its fields, its amounts as formulas, its 1/0 flags and its share
    of the quote discount; adds what it counts to ``sums``."""
    x = r + 1  # Excel row
    category = str(BomCategory(line.category).label) if line.category in BomCategory.values else line.category
    in_total = 0 if line.category == BomCategory.LEASE else 1
    capex = 1 if line.category in CAPEX_CATEGORIES else 0
    server = 1 if line.category == BomCategory.SERVER else 0
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
    w.value(sheet, r, COL["unit"], _(line.unit) if line.unit in BOM_UNITS else line.unit)  # "pcs" … in words
    # A line priced on request has no amount: its cells say so (blank amounts, which no total
    # counts), never a unit price of 0.
    on_request = line.price_on_request and not line.unit_price
    total = _cents(line.quantity * line.unit_price * (1 - line.discount))
    amount = _cents(line.quantity * line.unit_price)
    if on_request:
        w.value(sheet, r, COL["unit_price"], _("Price on request"))
        for key in ("discount", "line_total", "list_amount"):
            w.value(sheet, r, COL[key], None)
    else:
        w.value(sheet, r, COL["unit_price"], line.unit_price, w.input_money)
        w.value(sheet, r, COL["discount"], line.discount, w.input_fraction)
        w.formula(sheet, r, COL["line_total"], f"=ROUND(E{x}*G{x}*(1-H{x}),2)", total, w.money)
        w.formula(sheet, r, COL["list_amount"], f"=ROUND(E{x}*G{x},2)", amount, w.money)
    w.value(sheet, r, COL["currency"], line.currency)
    w.value(sheet, r, COL["note"], _(line.note) if line.note else line.note)  # the notes quotes.bom marks
    w.value(sheet, r, COL["in_total"], in_total, w.input)
    w.value(sheet, r, COL["capex"], capex, w.input)
    w.value(sheet, r, COL["server"], server, w.input)
    # VAT by kind of supply, as the proposal states it (proposals.terms.vat_class): installation
    # (a construction service) has its own rate; the other services theirs.
    kind = vat_class(line.category)
    service = 1 if kind == "services" else 0
    installation = 1 if kind == "installation" else 0
    w.value(sheet, r, COL["service"], service, w.input)
    w.value(sheet, r, COL["installation"], installation, w.input)
    if on_request:
        w.value(sheet, r, COL["discount_share"], None)
        return
    share = _cents(total * Decimal(inputs["quote_discount_value"])) if capex and in_total else Decimal(0)
    w.formula(
        sheet,
        r,
        COL["discount_share"],
        f"=ROUND({_col(COL['line_total'])}{x}*{_col(COL['capex'])}{x}*{_col(COL['in_total'])}{x}"
        f"*{inputs['quote_discount']},2)",
        share,
        w.money,
    )
    if not in_total:
        return
    sums.list += amount
    sums.after_lines += total
    sums.capex_lines += total if capex else 0
    sums.servers += total if server else 0
    if service:
        sums.services_after_lines += total
        sums.services_discount += share
    if installation:
        sums.installation_after_lines += total
        sums.installation_discount += share


@dataclass
class BomTotals:
    """The totals under the BOM's lines: each a labelled formula in the line-total column with its value,
    the currency beside it; ``refs`` the cells the other sheets read, by name."""

    w: Writer
    sheet: Any
    row: int
    currency: str
    refs: dict[str, str] = field(default_factory=dict)

    def add(self, key: str, label: str, formula: str, value: Decimal, fmt=None, *, bold=False) -> None:
        w = self.w
        w.value(self.sheet, self.row, COL["description"], label, w.bold if bold else None)
        w.formula(self.sheet, self.row, COL["line_total"], formula, value, fmt or w.money)
        w.value(self.sheet, self.row, COL["currency"], self.currency)
        self.refs[key] = f"${_col(COL['line_total'])}${self.row + 1}"
        self.row += 1


def _bom_vat(sums: BomSums, net: Decimal, inputs: dict[str, str]) -> dict[str, Decimal]:
    """VAT by rate, as the proposal states it (proposals.terms.vat_rows): services (support, operations)
    at the services rate and installation at its own, each net of its own shares of the quote discount;
    goods at the goods rate on the rest of the net total (the discount's rounding cent stays with the
    largest capex line, a server).  The same cents as the PDF."""
    out = {
        "services_net": sums.services_after_lines - sums.services_discount,
        "installation_net": sums.installation_after_lines - sums.installation_discount,
    }
    out["goods_net"] = net - out["services_net"] - out["installation_net"]
    for kind in ("goods", "services", "installation"):
        out[f"vat_{kind}"] = _cents(out[f"{kind}_net"] * Decimal(str(inputs[f"vat_rate_{kind}_value"])))
    out["vat"] = out["vat_goods"] + out["vat_services"] + out["vat_installation"]
    return out


def _bom_totals(t: BomTotals, sums: BomSums, rng, inputs: dict[str, str], discount: Decimal) -> dict:
    """The totals block: list, after line discounts, quote discount, net, discount, the net and VAT of each
    kind of supply, VAT, gross, capex and servers.  The quote's totals are labelled as the proposal's
    (the :data:`~configurator.sections.TOTALS` section); returns the values the other sheets start from."""
    lang = get_language() or "en"
    totals = sections.TOTALS
    quote_discount = -_cents(sums.capex_lines * discount)
    net = sums.after_lines + quote_discount
    vat = _bom_vat(sums, net, inputs)
    r = t.refs
    t.add("list", _("List total"), f"=SUMPRODUCT({rng('in_total')},{rng('list_amount')})", sums.list)
    t.add(
        "after_lines",
        _("Total after line discounts"),
        f"=SUMPRODUCT({rng('in_total')},{rng('line_total')})",
        sums.after_lines,
    )
    t.add(
        "quote_discount",
        _("Quote discount on the capex lines"),
        f"=-ROUND(SUMPRODUCT({rng('in_total')},{rng('capex')},{rng('line_total')})*{inputs['quote_discount']},2)",
        quote_discount,
    )
    net_label = sections.row_label(totals, "total_net", lang)
    t.add("net", net_label, f"={r['after_lines']}+{r['quote_discount']}", net, t.w.money_bold, bold=True)
    t.add("discount", _("Discount against the list total"), f"={r['net']}-{r['list']}", net - sums.list)
    for kind, flag, label in (
        ("services", "service", _("Net amount of the services")),
        ("installation", "installation", _("Net amount of the installation")),
    ):
        t.add(
            f"{kind}_net",
            label,
            f"=SUMPRODUCT({rng('in_total')},{rng(flag)},{rng('line_total')})"
            f"-SUMPRODUCT({rng('in_total')},{rng(flag)},{rng('discount_share')})",
            vat[f"{kind}_net"],
        )
    t.add(
        "goods_net",
        _("Net amount of the goods"),
        f"={r['net']}-{r['services_net']}-{r['installation_net']}",
        vat["goods_net"],
    )
    for kind, label, rate in (
        ("goods", _("VAT on the goods"), "vat_rate"),
        ("services", _("VAT on the services"), "vat_rate_services"),
        ("installation", _("VAT on the installation"), "vat_rate_installation"),
    ):
        t.add(f"vat_{kind}", label, f"=ROUND({r[f'{kind}_net']}*{inputs[rate]},2)", vat[f"vat_{kind}"])
    t.add(
        "vat",
        sections.row_label(totals, "vat_rows", lang),
        f"={r['vat_goods']}+{r['vat_services']}+{r['vat_installation']}",
        vat["vat"],
    )
    gross_label = sections.row_label(totals, "total_gross", lang)
    t.add("gross", gross_label, f"={r['net']}+{r['vat']}", net + vat["vat"], t.w.money_bold, bold=True)
    t.add(
        "capex",
        _("Capex"),
        f"=SUMPRODUCT({rng('in_total')},{rng('capex')},{rng('line_total')})+{r['quote_discount']}",
        sums.capex_lines + quote_discount,
    )
    t.add(
        "servers",
        _("Servers, before the quote discount (rented instead when leasing)"),
        f"=SUMPRODUCT({rng('in_total')},{rng('server')},{rng('line_total')})",
        sums.servers,
    )
    return {
        "list": sums.list,
        "net": net,
        "vat": vat["vat"],
        "capex": sums.capex_lines + quote_discount,
        "servers": sums.servers,
    }


def write_bom(w: Writer, revision, zh: bool, inputs: dict[str, str]) -> dict[str, Any]:
    """The BOM sheet: the headings, one row per line, the totals and what they leave out; returns the
    cell references of its totals (for the other sheets) and, under ``values``, their values."""
    sheet = w.book.add_worksheet("BOM")
    for key, index in COL.items():
        sheet.write_string(0, index, bom_heading(key), w.bold)
    lines = list(revision.lines.all())
    first, last = 2, len(lines) + 1  # Excel rows of the lines
    sums = BomSums()
    for r, line in enumerate(lines, start=1):
        _bom_line(w, sheet, r, line, zh, inputs, sums)

    def rng(key: str) -> str:
        letter = _col(COL[key])
        return f"{letter}{first}:{letter}{last}" if lines else f"{letter}2:{letter}2"

    # a blank row, then the totals (0-based row index = Excel row − 1)
    totals = BomTotals(w, sheet, last + 1, revision.currency)
    values = _bom_totals(totals, sums, rng, inputs, Decimal(str(revision.discount)))
    row = totals.row
    w.value(
        sheet,
        row,
        COL["description"],
        _("(lease lines are the alternative to purchase and are not part of the totals)"),
    )
    on_request = [line for line in lines if line.price_on_request and not line.unit_price]
    if on_request:
        names = "; ".join(line.description_in(zh=zh) for line in on_request)
        w.value(sheet, row + 1, COL["description"], _("Excluding the items priced on request:") + " " + names)
    widths = {"description": 56, "category": 18, "sku": 22, "note": 30}
    for key, index in COL.items():
        sheet.set_column(index, index, widths.get(key, 14))
    sheet.freeze_panes(1, 0)
    return {**totals.refs, "values": values}


# --------------------------------------------------------------------------- inputs, TCO yearly, results


@dataclass(frozen=True)
class Input:
    """A row of the Inputs sheet: ``kind`` fraction | money | number | flag (a yellow input) or link |
    formula (computed); its heading is ``label``, or the label of the buy-vs-lease section's row that
    prints the same yearly bill (``tco``); ``note`` explains it in the third column."""

    key: str
    kind: str
    label: Any = ""
    tco: str = ""
    note: Any = ""

    def heading(self, lang: str) -> str:
        return sections.row_label(sections.TCO, self.tco, lang) if self.tco else str(self.label)


# The Inputs sheet, row by row (the formulas address them by position: add rows at the end).
INPUT_ROWS: tuple[Input, ...] = (
    Input("quote_discount", "fraction", gettext_lazy("Quote discount")),
    Input("vat_rate", "fraction", gettext_lazy("VAT rate on goods")),
    Input("vat_rate_services", "fraction", gettext_lazy("VAT rate on services")),
    Input("usd_rate", "number", gettext_lazy("Exchange rate (per USD)")),
    Input("horizon", "number", gettext_lazy("Horizon (years)")),
    Input("npv_rate", "fraction", gettext_lazy("Discount rate (NPV, per year)")),
    Input(
        "capex",
        "link",
        gettext_lazy("Capex (from the BOM)"),
        note=gettext_lazy("Linked to the BOM sheet's capex; change quantities or prices there."),
    ),
    Input(
        "servers",
        "link",
        gettext_lazy("Servers (from the BOM)"),
        note=gettext_lazy("Linked to the BOM sheet's server lines: rented instead of bought when leasing."),
    ),
    Input("om", "money", tco="tco.annual.om"),
    Input("software", "money", tco="tco.annual.software_support"),
    Input("electricity", "money", tco="tco.annual.electricity"),
    Input("colocation", "money", tco="tco.annual.colocation"),
    Input(
        "residual_fraction",
        "fraction",
        gettext_lazy("Residual value (share of the servers' net price)"),
        note=gettext_lazy("The buy side sells the servers at the end of the horizon."),
    ),
    Input("lease_rent", "money", gettext_lazy("Lease rent per year")),
    Input("lease_includes_om", "flag", gettext_lazy("Lease includes O&M (1 = yes, 0 = no)")),
    Input("lease_includes_power", "flag", gettext_lazy("Lease includes electricity (1 = yes, 0 = no)")),
    Input(
        "servers_net",
        "formula",
        gettext_lazy("Servers after the quote discount"),
        note=gettext_lazy("Servers × (1 − quote discount), rounded to the cent."),
    ),
    Input(
        "residual",
        "formula",
        gettext_lazy("Residual value at the end of the horizon"),
        note=gettext_lazy(
            "Servers after the discount × residual share, rounded to the cent; credited to buying."
        ),
    ),
    Input(
        "lease_upfront",
        "formula",
        gettext_lazy("Lease: network, racks, installation (month 0)"),
        note=gettext_lazy("Capex − servers after the discount: the same network, racks and installation."),
    ),
    Input(
        "lease_om",
        "formula",
        gettext_lazy("Lease: O&M per year"),
        note=gettext_lazy("O&M per year, unless the lease includes it."),
    ),
    Input(
        "lease_software",
        "formula",
        gettext_lazy("Lease: software and support per year"),
        note=gettext_lazy("The same software and support as when buying."),
    ),
    Input(
        "lease_electricity",
        "formula",
        gettext_lazy("Lease: electricity per year"),
        note=gettext_lazy("Electricity per year, unless the lease includes it."),
    ),
    Input(
        "lease_colocation",
        "formula",
        gettext_lazy("Lease: colocation per year"),
        note=gettext_lazy("The same racks are hosted as when buying."),
    ),
    Input("vat_rate_installation", "fraction", gettext_lazy("VAT rate on installation")),
)


def input_refs() -> dict[str, str]:
    """Absolute references of the input cells (column B of the Inputs sheet, from row 2)."""
    return {row.key: f"Inputs!$B${i}" for i, row in enumerate(INPUT_ROWS, start=2)}


def _tco_values(revision) -> dict[str, Any] | None:
    """The engine's yearly bills and lease terms from the frozen plan (``configurator.engine.tco``).

    Plans stored before the lease carried O&M, software, an upfront purchase and a residual value
    (issue 16) lack ``lease_includes``: the flags then come from the request, else "not included",
    and the residual fraction defaults to 0, so the workbook shows the same model for every plan.
    """
    result = revision.result_json if isinstance(revision.result_json, dict) else {}
    tco = result.get("tco") if isinstance(result.get("tco"), dict) else None
    annual = (tco or {}).get("annual") or {}
    keys = {
        "om": "om",
        "software": "software_support",
        "electricity": "electricity",
        "colocation": "colocation",
        "lease_rent": "lease_rent",
    }
    values: dict[str, Any] = {mine: _dec(annual.get(theirs)) for mine, theirs in keys.items()}
    horizon = _dec((tco or {}).get("horizon_years"))
    if tco is None or horizon is None or any(v is None for v in values.values()):
        return None
    values["horizon"] = horizon
    resolved = revision.resolved_json if isinstance(revision.resolved_json, dict) else {}
    commercial = resolved.get("commercial") or {}
    commercial = commercial if isinstance(commercial, dict) else {}
    includes = tco.get("lease_includes")
    for name in ("om", "power"):
        if isinstance(includes, list):
            flag = name in includes
        else:
            flag = commercial.get(f"lease_includes_{name}") is True
        values[f"lease_includes_{name}"] = Decimal(1 if flag else 0)
    fraction = _dec(commercial.get("residual_value_fraction"))
    values["residual_fraction"] = fraction if fraction is not None and 0 <= fraction <= 1 else Decimal(0)
    return values


def write_inputs(w: Writer, revision, vat_rate: tuple[Decimal, Decimal, Decimal]) -> Any:
    """The Inputs sheet's headings (its rows are filled once the BOM's capex is known: :func:`fill_inputs`)."""
    sheet = w.book.add_worksheet("Inputs")
    for c, label in enumerate((_("Item"), _("Value"), _("Unit or explanation"))):
        sheet.write_string(0, c, label, w.bold)
    sheet.set_column(0, 0, 52)
    sheet.set_column(1, 1, 20)
    sheet.set_column(2, 2, 70)
    sheet.freeze_panes(1, 0)
    return sheet


def input_values(revision, bom: dict, vat_rate: tuple[Decimal, Decimal, Decimal]) -> dict[str, Decimal]:
    """The Inputs sheet's values: the quote's rates, the BOM's capex and servers, the plan's horizon and,
    where the plan has a TCO to compute, its yearly bills and lease terms and what follows from them
    (``configurator.engine.tco.compute_tco``'s arithmetic)."""
    resolved = revision.resolved_json if isinstance(revision.resolved_json, dict) else {}
    commercial = resolved.get("commercial") or {}
    commercial = commercial if isinstance(commercial, dict) else {}
    quote_discount = Decimal(str(revision.discount))
    v: dict[str, Decimal] = {
        "quote_discount": quote_discount,
        "vat_rate": vat_rate[0],
        "vat_rate_services": vat_rate[1],
        "vat_rate_installation": vat_rate[2],
        "usd_rate": Decimal(str(revision.usd_rate)),
        "npv_rate": _dec(commercial.get("discount_rate")) or Decimal("0"),
        "capex": bom["values"]["capex"],
        "servers": bom["values"]["servers"],
    }
    # The horizon the plan states (blank without one: never "0 years"), also where the workbook has no
    # TCO to compute (no lease offer, or a price on request).
    result = revision.result_json if isinstance(revision.result_json, dict) else {}
    stated_horizon = _dec(
        (result.get("tco") or {}).get("horizon_years") if isinstance(result.get("tco"), dict) else None
    )
    if stated_horizon:
        v["horizon"] = stated_horizon
    tco = _tco_values(revision)
    if tco is not None:
        v.update(tco)
        v["servers_net"] = _cents(v["servers"] * (1 - quote_discount))
        v["residual"] = _cents(v["servers_net"] * v["residual_fraction"])
        v["lease_upfront"] = v["capex"] - v["servers_net"]
        v["lease_om"] = Decimal(0) if v["lease_includes_om"] else v["om"]
        v["lease_software"] = v["software"]
        v["lease_electricity"] = Decimal(0) if v["lease_includes_power"] else v["electricity"]
        v["lease_colocation"] = v["colocation"]
    return v


def fill_inputs(w: Writer, sheet, v: dict[str, Decimal], bom: dict, currency: str) -> None:
    """The Inputs sheet's rows: the yellow inputs as values, the links to the BOM and what follows from
    the inputs as formulas with their values; a money input notes its currency."""
    refs = input_refs()
    formulas = {
        "capex": f"=BOM!{bom['capex']}",
        "servers": f"=BOM!{bom['servers']}",
        "servers_net": f"=ROUND({refs['servers']}*(1-{refs['quote_discount']}),2)",
        "residual": f"=ROUND({refs['servers_net']}*{refs['residual_fraction']},2)",
        "lease_upfront": f"={refs['capex']}-{refs['servers_net']}",
        "lease_om": f"=IF({refs['lease_includes_om']}<>0,0,{refs['om']})",
        "lease_software": f"={refs['software']}",
        "lease_electricity": f"=IF({refs['lease_includes_power']}<>0,0,{refs['electricity']})",
        "lease_colocation": f"={refs['colocation']}",
    }
    lang = get_language() or "en"
    fmt_of = {"fraction": w.input_fraction, "money": w.input_money, "number": w.input, "flag": w.input}
    for i, row in enumerate(INPUT_ROWS, start=1):
        sheet.write_string(i, 0, row.heading(lang))
        if row.key not in v:
            continue  # no TCO in the plan: only the BOM's inputs
        if row.kind in ("link", "formula"):
            w.formula(sheet, i, 1, formulas[row.key], v[row.key], w.money)
        else:
            w.value(sheet, i, 1, v[row.key], fmt_of[row.kind])
        note = str(row.note) if row.note else (currency if row.kind == "money" else "")
        if note:
            sheet.write_string(i, 2, note)


# Column of the TCO yearly sheet → (the input it reads, in the first year only | in the last year only |
# each year, its sign); the side's cost sums them, its cumulative adds last year's.
YEARLY_READS = {
    "buy_capex": ("capex", "first", 1),
    "buy_om": ("om", "each", 1),
    "buy_software_support": ("software", "each", 1),
    "buy_electricity": ("electricity", "each", 1),
    "buy_colocation": ("colocation", "each", 1),
    "buy_residual": ("residual", "last", -1),
    "lease_upfront": ("lease_upfront", "first", 1),
    "lease_rent": ("lease_rent", "each", 1),
    "lease_om": ("lease_om", "each", 1),
    "lease_software_support": ("lease_software", "each", 1),
    "lease_electricity": ("lease_electricity", "each", 1),
    "lease_colocation": ("lease_colocation", "each", 1),
}


def write_tco_yearly(
    w: Writer, v: dict[str, Decimal], yearly_columns: list[tuple[str, str]], currency: str
) -> dict[str, Any]:
    """The TCO yearly sheet: every cell reads the inputs; cost = Σ the side's columns; cumulative = last
    year's + this year's.  Returns the columns' letters and the two cumulative totals."""
    sheet = w.book.add_worksheet("TCO yearly")
    header = [_("Year")] + [label for _key, label in yearly_columns] + [_("Currency")]
    for c, label in enumerate(header):
        sheet.write_string(0, c, str(label), w.bold)
    refs = input_refs()
    letter = {key: _col(c) for c, (key, _label) in enumerate(yearly_columns, start=1)}
    horizon = int(v["horizon"])
    parts = {
        side: [k for k, _l in yearly_columns if k.startswith(side) and k in YEARLY_READS]
        for side in ("buy_", "lease_")
    }
    cumulative = {"buy_": Decimal(0), "lease_": Decimal(0)}
    for y in range(1, horizon + 1):
        x = y + 1  # Excel row
        sheet.write_number(y, 0, y)
        cost = {"buy_": Decimal(0), "lease_": Decimal(0)}
        for c, (key, _label) in enumerate(yearly_columns, start=1):
            side = "buy_" if key.startswith("buy_") else "lease_"
            if key in YEARLY_READS:
                name, when, sign = YEARLY_READS[key]
                on = when == "each" or (when == "first" and y == 1) or (when == "last" and y == horizon)
                value = sign * v[name] if on else Decimal(0)
                text = f"={'-' if sign < 0 else ''}{refs[name]}" if on else "=0"
                cost[side] += value
            elif key == f"{side}cost":
                value = cost[side]
                text = f"=SUM({letter[parts[side][0]]}{x}:{letter[parts[side][-1]]}{x})"
            elif key == f"{side}cumulative":
                own = letter[f"{side}cost"]
                cumulative[side] += cost[side]
                value = cumulative[side]
                text = f"={own}{x}" if y == 1 else f"={letter[key]}{x - 1}+{own}{x}"
            else:
                continue
            w.formula(sheet, y, c, text, value, w.money)
        sheet.write_string(y, len(yearly_columns) + 1, currency)
    sheet.set_column(0, len(header), 16)
    sheet.freeze_panes(1, 0)
    return {
        "letter": letter,
        "buy": cumulative["buy_"],
        "lease": cumulative["lease_"],
        "last_row": horizon + 1,
    }


def write_results(w: Writer, sheet, v: dict[str, Decimal], bom: dict, yearly: dict[str, Any]) -> None:
    """The results under the inputs, as formulas with their values: the monthly discount rate, the
    annuity factor, the TCO of each side over the horizon, their NPVs and the total including VAT.

    NPV as the engine: payments at the end of each month, capex and the lease's upfront purchase at
    month 0, the residual value at the last month."""
    refs = input_refs()
    npv_rate, months = v["npv_rate"], int(v["horizon"]) * 12
    buy_opex = v["om"] + v["software"] + v["electricity"] + v["colocation"]
    lease_year = sum(
        (v[k] for k in ("lease_rent", "lease_om", "lease_software", "lease_electricity", "lease_colocation")),
        Decimal(0),
    )
    monthly = (1 + npv_rate) ** (Decimal(1) / 12) - 1 if npv_rate else Decimal("0")
    annuity = (1 - (1 + monthly) ** -months) / monthly if monthly else Decimal(months)
    last_factor = (1 + monthly) ** -months
    npv_buy = _cents(v["capex"] + buy_opex / 12 * annuity - v["residual"] * last_factor)
    npv_lease = _cents(v["lease_upfront"] + lease_year / 12 * annuity)
    start = len(INPUT_ROWS) + 2  # a blank row after the inputs
    sheet.write_string(start, 0, _("Results (formulas)"), w.bold)
    i_ref, a_ref = f"$B${start + 2}", f"$B${start + 3}"
    letter, last_year = yearly["letter"], yearly["last_row"]
    gross_label = sections.row_label(sections.TOTALS, "total_gross", get_language() or "en")
    results = [
        (_("Monthly discount rate"), f"=(1+{refs['npv_rate']})^(1/12)-1", monthly, w.fraction),
        (
            _("Annuity factor (months)"),
            f"=IF({i_ref}=0,{refs['horizon']}*12,(1-(1+{i_ref})^(-{refs['horizon']}*12))/{i_ref})",
            annuity,
            None,
        ),
        (
            _("TCO over the horizon, buy"),
            f"='TCO yearly'!${letter['buy_cumulative']}${last_year}",
            yearly["buy"],
            w.money_bold,
        ),
        (
            _("TCO over the horizon, lease"),
            f"='TCO yearly'!${letter['lease_cumulative']}${last_year}",
            yearly["lease"],
            w.money_bold,
        ),
        (
            _("NPV, buy"),
            f"=ROUND({refs['capex']}+SUM({refs['om']},{refs['software']},{refs['electricity']},"
            f"{refs['colocation']})/12*{a_ref}-{refs['residual']}*(1+{i_ref})^(-{refs['horizon']}*12),2)",
            npv_buy,
            w.money_bold,
        ),
        (
            _("NPV, lease"),
            f"=ROUND({refs['lease_upfront']}+SUM({refs['lease_rent']},{refs['lease_om']},"
            f"{refs['lease_software']},{refs['lease_electricity']},{refs['lease_colocation']})/12*{a_ref},2)",
            npv_lease,
            w.money_bold,
        ),
        (gross_label, f"=BOM!{bom['gross']}", bom["values"]["net"] + bom["values"]["vat"], w.money),
    ]
    for offset, (label, formula, value, fmt) in enumerate(results, start=1):
        sheet.write_string(start + offset, 0, str(label))
        w.formula(sheet, start + offset, 1, formula, value, fmt)


def write_tco_and_results(
    w: Writer,
    sheet,
    revision,
    bom: dict,
    vat_rate: tuple[Decimal, Decimal, Decimal],
    currency: str,
    yearly_columns: list[tuple[str, str]],
) -> None:
    """Fill the Inputs sheet, write TCO yearly with formulas, and the results block under the inputs.

    The arithmetic is ``configurator.engine.tco.compute_tco``'s: lease per year = rent + O&M (unless
    included) + software + electricity (unless included) + colocation; the lease also buys at month 0
    what the purchase buys besides the servers; the buy side recovers the residual value in the last
    year.  Each value written beside a formula is computed here the same way.
    """
    v = input_values(revision, bom, vat_rate)
    fill_inputs(w, sheet, v, bom, currency)
    if "lease_rent" not in v:
        return  # no TCO in the plan: the BOM's inputs only
    yearly = write_tco_yearly(w, v, yearly_columns, currency)
    write_results(w, sheet, v, bom, yearly)


def result_rows() -> dict[str, int]:
    """Excel rows of the results on the Inputs sheet, by name (for tests and scripts)."""
    start = len(INPUT_ROWS) + 2
    names = ("monthly_rate", "annuity", "tco_buy", "tco_lease", "npv_buy", "npv_lease", "gross")
    return {name: start + i + 1 for i, name in enumerate(names, start=1)}


# --------------------------------------------------------------------------- the plan's sections


def _number_format(w: Writer, unit: str, currency: str):
    """The number format of a figure's unit: money in the currency (also per million tokens), a fraction
    as a percentage, anything else as it is."""
    if unit in (currency, "money") or unit.endswith("/M tokens"):
        return w.money
    return w.fraction if unit in ("fraction", "ratio") else None


def _cell_value(value: Any) -> Any:
    """A figure's value as a cell holds it: a number as a number, anything else (a range) as text."""
    number = _dec(value)
    return number if number is not None else value


@dataclass
class Block:
    """Sections written one under another on a sheet, each a bold title, its headings and its rows;
    ``figures`` the plan's figure book (the unit of a table's figure cell)."""

    w: Writer
    sheet: Any
    lang: str
    currency: str
    figures: dict = field(default_factory=dict)
    row: int = 0

    def title(self, text: str, headings: list[str]) -> None:
        if self.row:
            self.row += 1  # a blank row between sections
        self.sheet.write_string(self.row, 0, text, self.w.bold)
        for c, heading in enumerate(headings):
            self.sheet.write_string(self.row + 1, c, heading, self.w.bold)
        self.row += 2

    def label(self, text: str, total: bool = False, c: int = 0) -> None:
        self.w.value(self.sheet, self.row, c, text, self.w.bold if total else None)

    def rows(self, section: Any, **kw: Any) -> None:
        """A section of figure or term rows (:func:`configurator.sections.rows`): label, value (a number
        in its unit's format), unit and the value as the page and the proposal print it."""
        rows = sections.rows(section, self.figures, self.lang, currency=self.currency, **kw)
        if not rows:
            return
        title = section.title_zh if self.lang.startswith("zh") else section.title_en
        self.title(title, [_("Figure"), _("Value"), _("Unit"), _("As printed")])
        for row in rows:
            # a percentage or an amount says its unit by its format; per million tokens by its label
            unit = "" if row["unit"] in ("fraction", "ratio", "money") else row["unit"]
            unit = self.currency if unit.endswith("/M tokens") else unit
            self.label(row["label"], row["total"])
            fmt = _number_format(self.w, row["unit"], self.currency)
            self.w.value(self.sheet, self.row, 1, _cell_value(row["value"]), fmt)
            self.w.value(self.sheet, self.row, 2, vocabulary.unit_label(unit, self.lang))
            self.w.value(self.sheet, self.row, 3, row["text"])
            self.row += 1

    def pairs(self, rows: list[dict], title: str) -> None:
        """A buy-vs-lease section (:func:`configurator.sections.tco_rows`): each side's value in the
        currency (a credit negative), or the word the section prints ("included", "—")."""
        if not rows:
            return
        self.title(title, ["", _("Buy"), _("Lease")])
        for row in rows:
            self.label(row["label"], row["total"])
            cells = [row["span"]] if "span" in row else [row["buy"], row["lease"]]
            for c, cell in enumerate(cells, start=1):
                number = _dec(cell["value"])
                if number is None or not any(ch.isdigit() for ch in cell["text"]):
                    self.w.value(self.sheet, self.row, c, cell["text"])  # "included", "—", no lease
                elif "span" in row:
                    self.w.value(self.sheet, self.row, c, number)  # the break-even month
                else:
                    self.w.value(
                        self.sheet, self.row, c, -number if cell["text"][0] == "−" else number, self.w.money
                    )
            self.row += 1

    def table(self, section: Any, data: Any, **kw: Any) -> None:
        """A table section (:func:`configurator.sections.table`): its headings (a column in a unit names
        it), a line per row (an item's or a line's label first) and its total line."""
        t = sections.table(section, data, self.lang, currency=self.currency, **kw)
        if not t["rows"]:
            return
        labelled = bool(section.items or section.lines)
        cols = [section.column(h["name"]) for h in t["columns"] if h["name"]]
        heads = [h["label"] for h in t["columns"] if h["name"]]
        heads = [
            f"{h} ({c.unit})" if c.unit and c.unit not in ("fraction", "ratio") else h
            for h, c in zip(heads, cols, strict=True)
        ]
        if labelled:
            heads.insert(0, t["columns"][0]["label"] if section.items else "")
        self.title(t["title"], heads)
        for row in t["rows"]:
            if labelled:
                self.label(row["label"], row["total"])
            for c, (cell, col) in enumerate(zip(row["cells"], cols, strict=False), start=int(labelled)):
                self.cell(cell, col, c)
            if row.get("note"):
                self.w.value(self.sheet, self.row, len(cols) + int(labelled), row["note"])
            self.row += 1
        if t["total"]:
            self.label(t["total"]["label"], True)
            for c, (cell, col) in enumerate(zip(t["total"]["cells"], cols, strict=True)):
                if cell["text"]:
                    self.cell(cell, col, c)
            self.row += 1

    def cell(self, cell: dict, col: Any, c: int) -> None:
        """A table's cell: a number in its unit's format, else the words the page prints."""
        number = _dec(cell["value"])
        if (
            number is None
            or len(cell.get("parts") or ()) > 1  # optics of more than one class: "512 × 400G + 152 × 25G"
            or col.of
            or col.term
            or col.bilingual
            or not any(ch.isdigit() for ch in cell["text"])
        ):
            text = f"{cell['text']} ({cell['note']})" if cell.get("note") else cell["text"]
            if text:
                self.w.value(self.sheet, self.row, c, text)
            return
        unit = col.unit or str((self.figures.get(cell.get("figure") or "") or {}).get("unit") or "")
        fmt = _number_format(self.w, unit, self.currency) or (self.w.tenths if unit in ("kW", "A") else None)
        self.w.value(self.sheet, self.row, c, number, fmt)


def write_summary(w: Writer, result: dict, lang: str, currency: str) -> None:
    """The Summary sheet: the plan at a glance, its design capacity, its performance, buy vs lease and
    the cost per million tokens — the sections the configurator page and the proposal print."""
    sheet = w.book.add_worksheet("Summary")
    figures = result.get("figures") or {}
    block = Block(w, sheet, lang, currency, figures)
    for section in (sections.SUMMARY, sections.DESIGN, sections.PERFORMANCE):
        block.rows(section)
    tco = result.get("tco") or {}
    if tco and tco.get("valid") is not False and not tco.get("prices_on_request"):
        title = sections.TCO.title_zh if lang.startswith("zh") else sections.TCO.title_en
        block.pairs(sections.tco_rows(figures, tco, lang, currency=currency), title)
        if tco.get("tokens"):
            _cost_per_token(block, result, figures)
    sheet.set_column(0, 0, 64)
    sheet.set_column(1, 3, 20)


def _cost_per_token(block: Block, result: dict, figures: dict) -> None:
    """The cost per million tokens, with the same lines and qualifiers as the page's."""
    tco, economics = result.get("tco") or {}, result.get("economics") or {}
    concurrency = (result.get("performance") or {}).get("concurrency")
    design = (economics.get("design") or {}).get("concurrency")
    keys = {
        "stated": formatting.thousands(concurrency) if concurrency is not None else "",
        "design": formatting.thousands(design) if design is not None else "",
        "rate": formatting.thousands(tco.get("usd_rate") or 0, 2),
        "unit": block.currency,
        "basis": economics.get("basis"),
    }
    items = (
        "buy design lease api saving" if tco.get("lease_offered") is not False else "buy design api saving"
    )
    block.table(sections.COST_PER_TOKEN, figures, figures=figures, items=items, keys=keys)


def write_facilities(w: Writer, result: dict, lang: str, currency: str) -> None:
    """The Facilities sheet: racks, heat and floor loading, power, the feeds and their breakers, power per
    serving group, each rack, the network's fabrics and the serving groups — as the page prints them."""
    sheet = w.book.add_worksheet("Facilities")
    figures = result.get("figures") or {}
    power, racks = result.get("power") or {}, result.get("racks") or {}
    block = Block(w, sheet, lang, currency, figures)
    block.rows(sections.RACKS)
    block.rows(sections.POWER)
    block.table(
        sections.FEEDS,
        power,
        columns="load power_factor derating current required breaker utilisation circuit",
    )
    if len(power.get("groups") or ()) > 1:
        block.table(
            sections.POWER_GROUPS,
            power["groups"],
            columns="group nodes it_kw current_per_feed breaker utilisation circuit",
        )
    block.table(
        sections.PER_RACK,
        racks.get("racks") or (),
        columns="rack units_used servers kw design_kw cooling_limit cooling feeds heat weight floor_load",
    )
    network = result.get("network") or {}
    block.table(
        sections.NETWORK, network.get("rows") or (), figures=figures, classes=sections.optics_classes(network)
    )
    block.table(sections.GROUPS, (result.get("layout") or {}).get("groups") or ())
    sheet.set_column(0, 0, 48)
    sheet.set_column(1, 20, 16)


def build(revision, *, zh: bool, value_sheets: list[tuple[str, list[dict], list[str]]],
          yearly_columns: list[tuple[str, str]], title: str) -> bytes:  # fmt: skip
    """The workbook's bytes: BOM, Inputs, TCO yearly (formulas), the plan's sections (Summary, Facilities),
    then the value sheets."""
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
    terms = terms_for(revision.quote)  # the VAT rates of the quote's terms, as the proposal prints them
    vat_rate = (
        Decimal(str(terms.vat_rate_goods)),
        Decimal(str(terms.vat_rate_services)),
        Decimal(str(terms_vat_rate(terms, "installation"))),
    )
    refs = input_refs()
    bom = write_bom(
        w,
        revision,
        zh,
        {
            **refs,
            "quote_discount_value": str(revision.discount),
            "vat_rate_goods_value": str(vat_rate[0]),
            "vat_rate_services_value": str(vat_rate[1]),
            "vat_rate_installation_value": str(vat_rate[2]),
        },
    )
    inputs_sheet = write_inputs(w, revision, vat_rate)
    currency = revision.currency
    write_tco_and_results(w, inputs_sheet, revision, bom, vat_rate, currency, yearly_columns)
    values = {name: (rows, money_columns) for name, rows, money_columns in value_sheets}
    if book.get_worksheet_by_name("TCO yearly") is None and "TCO yearly" in values:
        w.table("TCO yearly", *values["TCO yearly"])  # no TCO to compute: the plan's years, as values
    # The plan's sections, as the page and the proposal print them.
    result = revision.result_json if isinstance(revision.result_json, dict) else {}
    lang = get_language() or "en"
    tco_currency = (result.get("tco") or {}).get("currency") or currency
    write_summary(w, result, lang, tco_currency)
    write_facilities(w, result, lang, tco_currency)
    for name, rows, money_columns in value_sheets:
        if name != "TCO yearly":
            w.table(name, rows, money_columns)
    book.close()
    return buffer.getvalue()
