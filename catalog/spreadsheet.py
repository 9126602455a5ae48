"""Spreadsheet formula injection: text that a spreadsheet would run stays text.

A cell whose text starts with ``=``, ``+``, ``-``, ``@`` (or a tab or carriage
return, which some spreadsheets skip before looking for those) is evaluated
as a formula by Excel and LibreOffice: ``=HYPERLINK(...)`` or ``=cmd|...`` in a
price-item description would run on the finance desk (OWASP, "CSV Injection",
https://owasp.org/www-community/attacks/CSV_Injection).

* XLSX written by the app (``documents/exports.py``): such text is written as a
  string cell (``data_type = "s"``), never as a formula: it shows exactly as
  typed and is not evaluated.  Formulas the workbook means to have are written
  by :func:`formula` only, never from user text.
* CSV (admin exports, the pipeline CSV): such text gets OWASP's leading
  apostrophe; the admin import strips that apostrophe again, so an
  export-edit-import round trip keeps the data as it was.
* Admin XLSX exports (django-import-export) are post-processed the same way as
  the app's workbook.
"""

from __future__ import annotations

import io
from typing import Any

from import_export.formats.base_formats import CSV, XLSX

DANGEROUS_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def is_dangerous(value: Any) -> bool:
    """True for text a spreadsheet would read as a formula."""
    return isinstance(value, str) and value.startswith(DANGEROUS_PREFIXES)


def _needs_apostrophe(value: Any) -> bool:
    """Formula text, or text that already starts with apostrophes before formula text (so that
    :func:`csv_unescape` can tell an apostrophe it must remove from one that was typed)."""
    return isinstance(value, str) and is_dangerous(value.lstrip("'"))


def csv_safe(value: Any) -> Any:
    """The value for a CSV cell: dangerous text behind an apostrophe (OWASP), anything else unchanged."""
    return "'" + value if _needs_apostrophe(value) else value


def csv_unescape(value: Any) -> Any:
    """Undo :func:`csv_safe` on import (exactly one apostrophe, only where csv_safe added one)."""
    if isinstance(value, str) and value.startswith("'") and _needs_apostrophe(value):
        return value[1:]
    return value


def set_text(cell, value: Any) -> None:
    """Write ``value`` into an openpyxl cell; a string is always a string cell, never a formula."""
    cell.value = value
    if isinstance(value, str):
        cell.data_type = "s"


def formula(cell, text: str) -> None:
    """Write a formula the workbook itself builds (never from user input)."""
    if not text.startswith("="):
        raise ValueError("a formula starts with '='")
    cell.value = text
    cell.data_type = "f"


def neutralise_workbook(content: bytes) -> bytes:
    """Re-save an XLSX so that every cell holding a formula is a string cell instead.

    For workbooks written by libraries (tablib) from data: none of their cells
    is meant to be a formula, so every one that became one was text.
    """
    from openpyxl import load_workbook

    book = load_workbook(io.BytesIO(content))
    changed = False
    for sheet in book.worksheets:
        for row in sheet.iter_rows():
            for cell in row:
                if cell.data_type == "f" or is_dangerous(cell.value):
                    cell.data_type = "s"
                    changed = True
    if not changed:
        return content
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


class SafeCSV(CSV):
    """django-import-export's CSV with formula-looking text behind an apostrophe (and back on import)."""

    def export_data(self, dataset, **kwargs):
        for index in range(len(dataset)):
            dataset[index] = tuple(csv_safe(value) for value in dataset[index])
        return super().export_data(dataset, **kwargs)

    def create_dataset(self, in_stream, **kwargs):
        dataset = super().create_dataset(in_stream, **kwargs)
        for index in range(len(dataset)):
            dataset[index] = tuple(csv_unescape(value) for value in dataset[index])
        return dataset


class SafeXLSX(XLSX):
    """django-import-export's XLSX with every text cell written as text, never as a formula."""

    def export_data(self, dataset, **kwargs):
        return neutralise_workbook(super().export_data(dataset, **kwargs))
