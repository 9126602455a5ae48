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
* ``TCO monthly``, ``Cost per M tokens``, ``Sensitivity``, ``Assumptions``:
  figures from the frozen plan, as values.

Text is always written as text (``write_string`` with ``strings_to_formulas``
off): a description starting with ``=`` stays a description (spreadsheet
formula injection, ``catalog/spreadsheet.py``).
"""

from __future__ import annotations

import io
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from django.utils.translation import gettext as _

# Each line's kind of supply and the quote's VAT rates, as the proposal states them (proposals.terms).
from proposals.terms import terms_for, vat_class
from proposals.terms import vat_rate as terms_vat_rate
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
    ("server", "Server line (1/0)"),
    ("service", "Service line, VAT at the services rate (1/0)"),
    ("discount_share", "Share of the quote discount"),
    ("installation", "Installation line, VAT at the installation rate (1/0)"),
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
        "server": _("Server line (1/0)"),
        "service": _("Service line, VAT at the services rate (1/0)"),
        "discount_share": _("Share of the quote discount"),
        "installation": _("Installation line, VAT at the installation rate (1/0)"),
    }
    for key, index in COL.items():
        sheet.write_string(0, index, labels[key], w.bold)
    lines = list(revision.lines.all())
    first, last = 2, len(lines) + 1  # Excel rows of the lines
    sums = {"list": Decimal("0"), "after_lines": Decimal("0"), "capex_lines": Decimal("0")}
    sums["servers"] = Decimal("0")
    sums["services_after_lines"] = sums["services_discount"] = Decimal("0")
    sums["installation_after_lines"] = sums["installation_discount"] = Decimal("0")
    for r, line in enumerate(lines, start=1):
        x = r + 1  # Excel row
        category = (
            str(BomCategory(line.category).label) if line.category in BomCategory.values else line.category
        )
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
        w.value(sheet, r, COL["unit"], line.unit)
        # A line priced on request has no amount: its cells say so (blank amounts, which no total
        # counts), never a unit price of 0.
        on_request = line.price_on_request and not line.unit_price
        total = _cents(line.quantity * line.unit_price * (1 - line.discount))
        amount = _cents(line.quantity * line.unit_price)
        if on_request:
            w.value(sheet, r, COL["unit_price"], _("Price on request"))
            w.value(sheet, r, COL["discount"], None)
            w.value(sheet, r, COL["line_total"], None)
            w.value(sheet, r, COL["list_amount"], None)
        else:
            w.value(sheet, r, COL["unit_price"], line.unit_price, w.input_money)
            w.value(sheet, r, COL["discount"], line.discount, w.input_fraction)
            w.formula(sheet, r, COL["line_total"], f"=ROUND(E{x}*G{x}*(1-H{x}),2)", total, w.money)
            w.formula(sheet, r, COL["list_amount"], f"=ROUND(E{x}*G{x},2)", amount, w.money)
        w.value(sheet, r, COL["currency"], line.currency)
        w.value(sheet, r, COL["note"], _(line.note) if on_request else line.note)
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
        share = _cents(total * Decimal(str(revision.discount))) if capex and in_total else Decimal(0)
        if on_request:
            w.value(sheet, r, COL["discount_share"], None)
            continue
        w.formula(
            sheet,
            r,
            COL["discount_share"],
            f"=ROUND({_col(COL['line_total'])}{x}*{_col(COL['capex'])}{x}*{_col(COL['in_total'])}{x}"
            f"*{inputs['quote_discount']},2)",
            share,
            w.money,
        )
        if in_total and service:
            sums["services_after_lines"] += total
            sums["services_discount"] += share
        if in_total and installation:
            sums["installation_after_lines"] += total
            sums["installation_discount"] += share
        if in_total:
            sums["list"] += amount
            sums["after_lines"] += total
            if capex:
                sums["capex_lines"] += total
            if server:
                sums["servers"] += total

    def rng(key: str) -> str:
        letter = _col(COL[key])
        return f"{letter}{first}:{letter}{last}" if lines else f"{letter}2:{letter}2"

    discount = Decimal(str(revision.discount))
    quote_discount = -_cents(sums["capex_lines"] * discount)
    net = sums["after_lines"] + quote_discount
    # VAT by rate, as the proposal states it (proposals.terms.vat_rows): services (installation,
    # support, operations) at the services rate, their net after their own shares of the quote
    # discount; goods at the goods rate on the rest of the net total (the discount's rounding cent
    # stays with the largest capex line, a server).  The same cents as the PDF.
    services_net = sums["services_after_lines"] - sums["services_discount"]
    installation_net = sums["installation_after_lines"] - sums["installation_discount"]
    goods_net = net - services_net - installation_net
    vat_goods = _cents(goods_net * Decimal(str(inputs["vat_rate_goods_value"])))
    vat_services = _cents(services_net * Decimal(str(inputs["vat_rate_services_value"])))
    vat_installation = _cents(installation_net * Decimal(str(inputs["vat_rate_installation_value"])))
    vat = vat_goods + vat_services + vat_installation
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
    total_row(
        "services_net",
        _("Net amount of the services"),
        f"=SUMPRODUCT({rng('in_total')},{rng('service')},{rng('line_total')})"
        f"-SUMPRODUCT({rng('in_total')},{rng('service')},{rng('discount_share')})",
        services_net,
    )
    total_row(
        "installation_net",
        _("Net amount of the installation"),
        f"=SUMPRODUCT({rng('in_total')},{rng('installation')},{rng('line_total')})"
        f"-SUMPRODUCT({rng('in_total')},{rng('installation')},{rng('discount_share')})",
        installation_net,
    )
    total_row(
        "goods_net",
        _("Net amount of the goods"),
        f"={refs['net']}-{refs['services_net']}-{refs['installation_net']}",
        goods_net,
    )
    total_row(
        "vat_goods", _("VAT on the goods"), f"=ROUND({refs['goods_net']}*{inputs['vat_rate']},2)", vat_goods
    )
    total_row(
        "vat_services",
        _("VAT on the services"),
        f"=ROUND({refs['services_net']}*{inputs['vat_rate_services']},2)",
        vat_services,
    )
    total_row(
        "vat_installation",
        _("VAT on the installation"),
        f"=ROUND({refs['installation_net']}*{inputs['vat_rate_installation']},2)",
        vat_installation,
    )
    total_row("vat", _("VAT"), f"={refs['vat_goods']}+{refs['vat_services']}+{refs['vat_installation']}", vat)
    total_row("gross", _("Total including VAT"), f"={refs['net']}+{refs['vat']}", net + vat, w.money_bold)
    total_row(
        "capex",
        _("Capex"),
        f"=SUMPRODUCT({rng('in_total')},{rng('capex')},{rng('line_total')})+{refs['quote_discount']}",
        sums["capex_lines"] + quote_discount,
    )
    total_row(
        "servers",
        _("Servers, before the quote discount (rented instead when leasing)"),
        f"=SUMPRODUCT({rng('in_total')},{rng('server')},{rng('line_total')})",
        sums["servers"],
    )
    w.value(sheet, row, D_, _("(lease lines are the alternative to purchase and are not part of the totals)"))
    on_request = [line for line in lines if line.price_on_request and not line.unit_price]
    if on_request:
        row += 1
        names = "; ".join(line.description_in(zh=zh) for line in on_request)
        w.value(sheet, row, D_, _("Excluding the items priced on request:") + " " + names)
    widths = {"description": 56, "category": 18, "sku": 22, "note": 30}
    for key, index in COL.items():
        sheet.set_column(index, index, widths.get(key, 14))
    sheet.freeze_panes(1, 0)
    refs["values"] = {  # type: ignore[assignment]
        "list": sums["list"],
        "net": net,
        "vat": vat,
        "capex": sums["capex_lines"] + quote_discount,
        "servers": sums["servers"],
    }
    return refs


# --------------------------------------------------------------------------- inputs, TCO yearly, results


INPUT_ROWS = (
    # key, label, kind: fraction | money | number | flag (yellow inputs); link | formula (computed)
    ("quote_discount", "Quote discount", "fraction"),
    ("vat_rate", "VAT rate on goods", "fraction"),
    ("vat_rate_services", "VAT rate on services", "fraction"),
    ("usd_rate", "Exchange rate (per USD)", "number"),
    ("horizon", "Horizon (years)", "number"),
    ("npv_rate", "Discount rate (NPV, per year)", "fraction"),
    ("capex", "Capex (from the BOM)", "link"),
    ("servers", "Servers (from the BOM)", "link"),
    ("om", "O&M per year", "money"),
    ("software", "Software and support per year", "money"),
    ("electricity", "Electricity per year", "money"),
    ("colocation", "Colocation per year", "money"),
    ("residual_fraction", "Residual value (share of the servers' net price)", "fraction"),
    ("lease_rent", "Lease rent per year", "money"),
    ("lease_includes_om", "Lease includes O&M (1 = yes, 0 = no)", "flag"),
    ("lease_includes_power", "Lease includes electricity (1 = yes, 0 = no)", "flag"),
    ("servers_net", "Servers after the quote discount", "formula"),
    ("residual", "Residual value at the end of the horizon", "formula"),
    ("lease_upfront", "Lease: network, racks, installation (month 0)", "formula"),
    ("lease_om", "Lease: O&M per year", "formula"),
    ("lease_software", "Lease: software and support per year", "formula"),
    ("lease_electricity", "Lease: electricity per year", "formula"),
    ("lease_colocation", "Lease: colocation per year", "formula"),
    ("vat_rate_installation", "VAT rate on installation", "fraction"),
)


def input_refs() -> dict[str, str]:
    """Absolute references of the input cells (column B of the Inputs sheet, from row 2)."""
    return {key: f"Inputs!$B${i}" for i, (key, _label, _kind) in enumerate(INPUT_ROWS, start=2)}


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
    commercial = resolved.get("commercial") if isinstance(resolved.get("commercial"), dict) else {}
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
    """The Inputs sheet (values filled in once the BOM's capex is known: see :func:`fill_inputs`)."""
    sheet = w.book.add_worksheet("Inputs")
    for c, label in enumerate((_("Item"), _("Value"), _("Note"))):
        sheet.write_string(0, c, label, w.bold)
    sheet.set_column(0, 0, 52)
    sheet.set_column(1, 1, 20)
    sheet.set_column(2, 2, 70)
    sheet.freeze_panes(1, 0)
    return sheet


def _labels() -> dict[str, str]:
    return {
        "quote_discount": _("Quote discount"),
        "vat_rate": _("VAT rate on goods"),
        "vat_rate_services": _("VAT rate on services"),
        "vat_rate_installation": _("VAT rate on installation"),
        "usd_rate": _("Exchange rate (per USD)"),
        "horizon": _("Horizon (years)"),
        "npv_rate": _("Discount rate (NPV, per year)"),
        "capex": _("Capex (from the BOM)"),
        "servers": _("Servers (from the BOM)"),
        "om": _("O&M per year"),
        "software": _("Software and support per year"),
        "electricity": _("Electricity per year"),
        "colocation": _("Colocation per year"),
        "residual_fraction": _("Residual value (share of the servers' net price)"),
        "lease_rent": _("Lease rent per year"),
        "lease_includes_om": _("Lease includes O&M (1 = yes, 0 = no)"),
        "lease_includes_power": _("Lease includes electricity (1 = yes, 0 = no)"),
        "servers_net": _("Servers after the quote discount"),
        "residual": _("Residual value at the end of the horizon"),
        "lease_upfront": _("Lease: network, racks, installation (month 0)"),
        "lease_om": _("Lease: O&M per year"),
        "lease_software": _("Lease: software and support per year"),
        "lease_electricity": _("Lease: electricity per year"),
        "lease_colocation": _("Lease: colocation per year"),
    }


def _notes() -> dict[str, str]:
    return {
        "capex": _("Linked to the BOM sheet's capex; change quantities or prices there."),
        "servers": _("Linked to the BOM sheet's server lines: rented instead of bought when leasing."),
        "residual_fraction": _("The buy side sells the servers at the end of the horizon."),
        "servers_net": _("Servers × (1 − quote discount), rounded to the cent."),
        "residual": _(
            "Servers after the discount × residual share, rounded to the cent; credited to buying."
        ),
        "lease_upfront": _("Capex − servers after the discount: the same network, racks and installation."),
        "lease_om": _("O&M per year, unless the lease includes it."),
        "lease_software": _("The same software and support as when buying."),
        "lease_electricity": _("Electricity per year, unless the lease includes it."),
        "lease_colocation": _("The same racks are hosted as when buying."),
    }


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
    resolved = revision.resolved_json if isinstance(revision.resolved_json, dict) else {}
    commercial = resolved.get("commercial") if isinstance(resolved.get("commercial"), dict) else {}
    tco = _tco_values(revision)
    npv_rate = _dec(commercial.get("discount_rate")) or Decimal("0")
    refs = input_refs()
    quote_discount = Decimal(str(revision.discount))
    v: dict[str, Decimal] = {
        "quote_discount": quote_discount,
        "vat_rate": vat_rate[0],
        "vat_rate_services": vat_rate[1],
        "vat_rate_installation": vat_rate[2],
        "usd_rate": Decimal(str(revision.usd_rate)),
        "npv_rate": npv_rate,
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
    if tco is not None:
        v.update(tco)
        v["servers_net"] = _cents(v["servers"] * (1 - quote_discount))
        v["residual"] = _cents(v["servers_net"] * v["residual_fraction"])
        v["lease_upfront"] = v["capex"] - v["servers_net"]
        v["lease_om"] = Decimal(0) if v["lease_includes_om"] else v["om"]
        v["lease_software"] = v["software"]
        v["lease_electricity"] = Decimal(0) if v["lease_includes_power"] else v["electricity"]
        v["lease_colocation"] = v["colocation"]
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
    labels, notes = _labels(), _notes()
    fmt_of = {"fraction": w.input_fraction, "money": w.input_money, "number": w.input, "flag": w.input}
    for i, (key, _label, kind) in enumerate(INPUT_ROWS, start=1):
        sheet.write_string(i, 0, labels[key])
        if key not in v:
            continue  # no TCO in the plan: only the BOM's inputs
        if kind in ("link", "formula"):
            w.formula(sheet, i, 1, formulas[key], v[key], w.money)
        else:
            w.value(sheet, i, 1, v[key], fmt_of[kind])
        note = notes.get(key)
        if note is None and kind == "money":
            note = currency
        if note:
            sheet.write_string(i, 2, note)
    if tco is None:
        return

    # TCO yearly: every cell reads the inputs; cost = Σ the side's columns; cumulative = last + this.
    ysheet = w.book.add_worksheet("TCO yearly")
    header = [_("Year")] + [label for _key, label in yearly_columns] + [_("Currency")]
    for c, label in enumerate(header):
        ysheet.write_string(0, c, str(label), w.bold)
    letter = {key: _col(c) for c, (key, _label) in enumerate(yearly_columns, start=1)}
    horizon = int(v["horizon"])
    capex, residual, upfront = v["capex"], v["residual"], v["lease_upfront"]
    buy_opex = v["om"] + v["software"] + v["electricity"] + v["colocation"]
    lease_year = sum(
        (v[k] for k in ("lease_rent", "lease_om", "lease_software", "lease_electricity", "lease_colocation")),
        Decimal(0),
    )
    # Column of the yearly sheet → (input it reads, in the first year only | in the last year only | each year)
    reads = {
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
    parts = {
        side: [k for k, _l in yearly_columns if k.startswith(side) and k in reads]
        for side in ("buy_", "lease_")
    }
    buy_cum = lease_cum = Decimal("0")
    for y in range(1, horizon + 1):
        x = y + 1  # Excel row
        ysheet.write_number(y, 0, y)
        cost = {"buy_": Decimal(0), "lease_": Decimal(0)}
        for key, _label in yearly_columns:
            c = yearly_columns.index((key, _label)) + 1
            if key in reads:
                name, when, sign = reads[key]
                on = when == "each" or (when == "first" and y == 1) or (when == "last" and y == horizon)
                value = sign * v[name] if on else Decimal(0)
                text = f"={'-' if sign < 0 else ''}{refs[name]}" if on else "=0"
                cost["buy_" if key.startswith("buy_") else "lease_"] += value
            elif key in ("buy_cost", "lease_cost"):
                side = key[: key.index("_") + 1]
                cols = parts[side]
                value = cost[side]
                text = f"=SUM({letter[cols[0]]}{x}:{letter[cols[-1]]}{x})"
            elif key in ("buy_cumulative", "lease_cumulative"):
                side = key[: key.index("_") + 1]
                own = letter[f"{side}cost"]
                if side == "buy_":
                    buy_cum += cost[side]
                    value = buy_cum
                else:
                    lease_cum += cost[side]
                    value = lease_cum
                text = f"={own}{x}" if y == 1 else f"={letter[key]}{x - 1}+{own}{x}"
            else:
                continue
            w.formula(ysheet, y, c, text, value, w.money)
        ysheet.write_string(y, len(yearly_columns) + 1, currency)
    ysheet.set_column(0, len(header), 16)
    ysheet.freeze_panes(1, 0)

    # Results under the inputs.  NPV as the engine: payments at the end of each month, capex and the
    # lease's upfront purchase at month 0, the residual value at the last month.
    months = horizon * 12
    monthly = (1 + npv_rate) ** (Decimal(1) / 12) - 1 if npv_rate else Decimal("0")
    annuity = (1 - (1 + monthly) ** -months) / monthly if monthly else Decimal(months)
    last_factor = (1 + monthly) ** -months
    npv_buy = _cents(capex + buy_opex / 12 * annuity - residual * last_factor)
    npv_lease = _cents(upfront + lease_year / 12 * annuity)
    start = len(INPUT_ROWS) + 2  # a blank row after the inputs
    sheet.write_string(start, 0, _("Results (formulas)"), w.bold)
    last_year = horizon + 1
    i_ref = f"$B${start + 2}"
    a_ref = f"$B${start + 3}"
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
            buy_cum,
            w.money_bold,
        ),
        (
            _("TCO over the horizon, lease"),
            f"='TCO yearly'!${letter['lease_cumulative']}${last_year}",
            lease_cum,
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
            "vat_rate_goods_value": str(vat_rate[0]),
            "vat_rate_services_value": str(vat_rate[1]),
            "vat_rate_installation_value": str(vat_rate[2]),
        },
    )
    inputs_sheet = write_inputs(w, revision, vat_rate)
    currency = revision.currency
    write_tco_and_results(w, inputs_sheet, revision, bom, vat_rate, currency, yearly_columns)
    for name, rows, money_columns in value_sheets:
        if name == "TCO yearly" and book.get_worksheet_by_name("TCO yearly") is not None:
            continue  # written with formulas above
        w.table(name, rows, money_columns)
    book.close()
    return buffer.getvalue()
