"""The declared table sections as the proposal prints them (``quotes/pdf/_table_section.html``).

A table's headings, cells and total line are the section's (:func:`configurator.sections.table`,
the same call the configurator page makes through ``{% table_section %}``); this module only adds what
is the page's business alone: the PDF's column widths, a cell's print style (a monospaced layout, a
small note), whether a flagged cell is marked "▲", a column printed under another one's text (the
plane under its fabric) and how wide the total line's label is.  It words nothing and computes no
figure.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from configurator.public import sections as section_model

FLAG_MARK = "▲"


def _cell(cell: dict, css: str, *, flags: bool) -> dict:
    classes = ["num"] if cell["num"] else []
    if css:
        classes.append(css)
    return {
        **cell,
        "css": " ".join(classes),
        "mark": FLAG_MARK if flags and cell.get("flag") else "",
        "lines": [],
    }


def pdf_table(
    name: str,
    data: Any,
    lang: str,
    *,
    widths: Sequence[int] = (),
    columns: Iterable[str] | str | None = None,
    items: Sequence[str] | str | None = None,
    figures: Mapping[str, Any] | None = None,
    currency: str = "CNY",
    keys: Mapping[str, Any] | None = None,
    classes: Mapping[str, Any] | None = None,
    flags: bool = True,
    styles: Mapping[str, str] | None = None,
    under: Mapping[str, str] | None = None,
    note_under: Iterable[str] = (),
    sub: bool = False,
) -> dict:
    """The section ``name`` rendered for the proposal in ``lang``: :func:`sections.table`'s ``title``,
    ``columns``, ``rows`` and ``total``, each cell with its print ``css``, ``mark`` ("▲" for a flagged
    cell when ``flags``) and ``lines`` (the cells printed under it); and ``widths`` (per cent, one per
    printed column), ``labelled`` (the rows start with their label) and the total line's ``colspan``.

    ``styles``: column name → extra CSS class of its cells ("mono", "small").  ``under``: column name →
    the column whose cell it is printed under (its heading left out).  ``note_under``: columns whose
    note goes on a line of its own.  ``sub``: an item row that is not the total is set in grey.
    """
    table = section_model.table(
        name,
        data,
        lang,
        currency=currency,
        columns=columns,
        items=items,
        figures=figures,
        keys=keys,
        classes=classes,
    )
    styles = dict(styles or {})
    under = dict(under or {})
    below = set(note_under)
    section = section_model.TABLES[name]
    labelled = bool(section.items or section.lines)
    heads = [c for c in table["columns"] if c["name"] not in under]
    if labelled and not section.item_label_en:
        heads.insert(0, {"name": "", "label": "", "num": False})
    rows = []
    for row in table["rows"]:
        cells = {c["name"]: _cell(c, styles.get(c["name"], ""), flags=flags) for c in row["cells"]}
        for c in cells.values():
            c["note_under"] = c["name"] in below
        for name_, host in under.items():
            if name_ in cells and cells[name_]["text"] not in ("", "—"):
                cells[host]["lines"].append(cells[name_]["text"])
        printed = (
            [c for c in cells.values() if c["name"] not in under]
            if not row.get("span")
            else list(cells.values())
        )
        css = "total" if row["total"] else ("sub" if sub and section.items else "")
        rows.append({**row, "cells": printed, "css": css, "colspan": len(heads) - 1})
    total = table["total"]
    if total is not None:
        cells = [_cell(c, "", flags=False) for c in total["cells"] if c["name"] not in under]
        lead = 0
        while lead < len(cells) and not cells[lead]["text"]:
            lead += 1
        total = {**total, "colspan": max(lead, 1), "cells": cells[max(lead, 1) :]}
    return {
        **table,
        "columns": heads,
        "rows": rows,
        "total": total,
        "widths": list(widths),
        "labelled": labelled,
    }
