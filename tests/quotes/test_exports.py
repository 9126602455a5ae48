"""Exports of a frozen revision: the BOM/TCO workbook and the launch bundle.

Expected figures come from the revision itself (its BomLine rows, its totals,
its result_json), and the bundle is compared with what the engine renders
for the same request (documents.pdf.sample.sample_request, the seeded 8P8D configuration).
"""

from __future__ import annotations

import io
import zipfile
from decimal import Decimal

import pytest
from django.urls import reverse
from openpyxl import load_workbook

from configurator.engine.launch import build_launch, bundle_files
from configurator.engine.layout import resolve_layout
from configurator.io.requests import resolve
from documents.exports import (
    SHEETS,
    BundleUnavailable,
    RefusingCatalog,
    launch_result_from_dict,
    launch_result_from_resolved,
    revision_launch_bundle,
    revision_workbook,
)
from documents.pdf.sample import sample_quote_create, sample_request
from quotes.models import QuoteRevision

CENT = Decimal("0.01")


def as_money(value) -> Decimal:
    """A workbook number as cents (openpyxl reads numbers back as int/float)."""
    assert isinstance(value, (int, float)), f"{value!r} is not a number"
    return Decimal(str(value)).quantize(CENT)


def rows(sheet) -> list[dict]:
    header = [c.value for c in sheet[1]]
    return [dict(zip(header, (c.value for c in row), strict=False)) for row in sheet.iter_rows(min_row=2)]


@pytest.fixture
def revision(engineer):
    return sample_quote_create(by=engineer, language="en")


# --------------------------------------------------------------------------- workbook


@pytest.mark.django_db
def test_workbook_has_the_sheets_and_the_revisions_totals(revision):
    book = load_workbook(io.BytesIO(revision_workbook(revision)), data_only=True)
    assert book.sheetnames == list(SHEETS)

    bom = rows(book["BOM"])
    lines = list(revision.lines.order_by("position"))
    line_rows = [r for r in bom if r["Position"] is not None]
    assert len(line_rows) == len(lines)
    for row, line in zip(line_rows, lines, strict=True):
        assert row["Position"] == line.position
        assert row["Description"] == line.description_en
        if line.price_on_request and not line.unit_price:  # no amount, never 0
            assert row["Unit price"] == "Price on request" and row["Line total"] is None
            continue
        assert as_money(row["Line total"]) == line.line_total
        assert as_money(row["Unit price"]) == line.unit_price.quantize(CENT)
        assert row["Currency"] == revision.currency == "CNY"
    totals = {
        r["Description"]: r["Line total"]
        for r in bom
        if r["Position"] is None and r["Line total"] is not None
    }
    assert as_money(totals["List total"]) == revision.list_total
    assert as_money(totals["Discount against the list total"]) == -revision.discount_amount
    assert as_money(totals["Net total excluding VAT"]) == revision.net_total
    assert as_money(totals["Capex"]) == revision.capex_total
    # Money cells are numbers formatted as money, not text.
    money_cell = book["BOM"]["I2"]
    assert isinstance(money_cell.value, (int, float)) and money_cell.number_format == "#,##0.00"

    tco = revision.result_json["tco"]
    yearly = rows(book["TCO yearly"])
    assert [r["Year"] for r in yearly] == [y["year"] for y in tco["yearly"]]
    for row, year in zip(yearly, tco["yearly"], strict=True):
        assert as_money(row["Buy: cumulative"]) == Decimal(year["buy_cumulative"])
        assert as_money(row["Lease: cumulative"]) == Decimal(year["lease_cumulative"])
        assert row["Currency"] == "CNY"

    monthly = rows(book["TCO monthly"])
    assert len(monthly) == len(tco["monthly"]) == tco["horizon_years"] * 12 + 1
    assert as_money(monthly[0]["Buy: cumulative"]) == Decimal(tco["monthly"][0]["buy_cumulative"])

    tokens = {r["Option"]: r for r in rows(book["Cost per M tokens"]) if r["Option"]}
    assert as_money(tokens["Self-hosted, buy"]["Output, per M tokens"]) == Decimal(
        tco["tokens"]["cost_per_m_output_buy"]
    )
    assert as_money(tokens["Public API"]["Output, per M tokens"]) == Decimal(
        tco["tokens"]["api_price_output_per_m"]
    )

    sensitivity = rows(book["Sensitivity"])
    assert len(sensitivity) == len(tco["sensitivity"])
    assert {r["Basis"] for r in sensitivity} == {"buy", "lease"}

    assumptions = rows(book["Assumptions"])
    items = " ".join(str(r["Item"]) for r in assumptions)
    for key, figure in revision.result_json["figures"].items():
        if figure["source"]["kind"] == "assumed":
            assert f"({key})" in items


@pytest.mark.django_db
def test_workbook_speaks_the_quotes_language(engineer):
    revision = sample_quote_create(by=engineer, language="zh-hans")
    book = load_workbook(io.BytesIO(revision_workbook(revision)))
    assert book.sheetnames == list(SHEETS)  # sheet names stay stable for scripts
    first = revision.lines.order_by("position").first()
    descriptions = [c.value for c in book["BOM"]["D"]]
    assert (first.description_zh or first.description_en) in descriptions


# --------------------------------------------------------------------------- launch bundle


@pytest.mark.django_db
def test_bundle_has_one_script_per_node_and_matches_the_engine(revision):
    archive = zipfile.ZipFile(io.BytesIO(revision_launch_bundle(revision)))
    names = set(archive.namelist())
    nodes = revision.result_json["launch"]["nodes"]
    assert len(nodes) == 16
    for node in nodes:  # node-00-prefill-… to node-15-decode-…
        assert node["script"] in names
        script = archive.read(node["script"]).decode()
        assert script.startswith("#!")
        assert f"--data-parallel-rank {node['dp_rank']}" in script
    assert sum(1 for n in names if n.startswith("node-")) == 16
    assert {
        "start-proxy.sh",
        "start-memcache-metaservice.sh",
        "README.md",
        "monitoring/prometheus.yml",
    } <= names
    for info in archive.infolist():  # executable scripts, fixed timestamps
        if info.filename.endswith(".sh"):
            assert (info.external_attr >> 16) & 0o111
        assert info.date_time == (1980, 1, 1, 0, 0, 0)
    # Byte for byte what the engine renders for the same request.
    request = sample_request("8p8d")
    expected = bundle_files(build_launch(request, resolve_layout(request)))
    assert {name: archive.read(name).decode() for name in names} == expected


@pytest.mark.django_db
def test_bundle_rebuilds_from_the_frozen_request_without_the_catalog(revision, monkeypatch):
    frozen = launch_result_from_dict(revision.result_json["launch"])
    replanned = launch_result_from_resolved(revision.resolved_json)
    assert bundle_files(frozen) == bundle_files(replanned)
    # The inline request resolves without touching the catalog …
    resolve(dict(revision.resolved_json), RefusingCatalog())
    # … and a slug that would need it is refused.
    with pytest.raises(Exception, match="unknown model|without the catalog"):
        resolve({**revision.resolved_json, "model": "kimi-k3"}, RefusingCatalog())
    # An unreadable frozen shape falls back to the inline request.
    broken = dict(revision.result_json)
    broken["launch"] = {**broken["launch"], "context": {}}
    QuoteRevision.objects.filter(pk=revision.pk).update(result_json=broken)
    revision.refresh_from_db()
    assert zipfile.ZipFile(io.BytesIO(revision_launch_bundle(revision))).namelist()


@pytest.mark.django_db
def test_no_bundle_for_a_plan_with_errors(revision):
    broken = {**revision.result_json, "ok": False}
    QuoteRevision.objects.filter(pk=revision.pk).update(result_json=broken)
    revision.refresh_from_db()
    with pytest.raises(BundleUnavailable):
        revision_launch_bundle(revision)


# --------------------------------------------------------------------------- views


@pytest.mark.django_db
def test_download_views_are_attachments_and_hidden_from_other_teams(revision, engineer, engineer2, client):
    client.force_login(engineer)
    xlsx = client.get(reverse("quotes:xlsx", args=[revision.pk]))
    assert xlsx.status_code == 200
    assert xlsx["Content-Type"].startswith("application/vnd.openxmlformats-officedocument.spreadsheetml")
    assert xlsx["Content-Disposition"] == f'attachment; filename="{revision.number}-bom-tco.xlsx"'
    assert load_workbook(io.BytesIO(xlsx.content)).sheetnames == list(SHEETS)
    bundle = client.get(reverse("quotes:bundle", args=[revision.pk]))
    assert bundle.status_code == 200 and bundle["Content-Type"] == "application/zip"
    assert bundle["Content-Disposition"] == f'attachment; filename="launch-{revision.number}.zip"'
    assert zipfile.ZipFile(io.BytesIO(bundle.content)).testzip() is None

    client.force_login(engineer2)
    assert client.get(reverse("quotes:xlsx", args=[revision.pk])).status_code == 404
    assert client.get(reverse("quotes:bundle", args=[revision.pk])).status_code == 404


@pytest.mark.django_db
def test_bundle_view_says_why_when_there_is_none(revision, engineer, client):
    QuoteRevision.objects.filter(pk=revision.pk).update(result_json={**revision.result_json, "ok": False})
    client.force_login(engineer)
    response = client.get(reverse("quotes:bundle", args=[revision.pk]))
    assert response.status_code == 404
    assert b"no launch configuration" in response.content


@pytest.mark.django_db
@pytest.mark.parametrize("lang", ["en", "zh-hans"])
def test_the_workbooks_network_total_counts_optics_by_class_as_the_rows_add_up(engineer, lang):
    """The Facilities sheet's network total prints the optics by class, as the page and the PDF do: the
    400G-class figure alone (512 for 8P8D) was less than the column it totals (the 25G optics too)."""
    revision = sample_quote_create(by=engineer, language=lang, name="8p8d")
    sheet = load_workbook(io.BytesIO(revision_workbook(revision)))["Facilities"]
    rows = [[v for v in row if v is not None] for row in sheet.iter_rows(values_only=True)]
    start = next(i for i, r in enumerate(rows) if r and r[0] in ("Network", "网络") and len(r) == 1)
    heading = rows[start + 1]
    optics = heading.index("Optics" if lang == "en" else "光模块")
    by_speed: dict[str, int] = {}
    for row in rows[start + 2 :]:
        if row[0] in ("Total", "合计"):
            total = row
            break
        link = str(row[0]).rsplit("(", 1)[-1].rstrip(")")  # "RoCE (400G)" → "400G"
        if isinstance(row[optics], int) and row[optics]:
            by_speed[link] = by_speed.get(link, 0) + row[optics]
    # The engine counts the 400G class once for its fabrics (network.optics); the rest by their speed.
    expected = " + ".join(
        f"{n} × {speed}" for speed, n in sorted(by_speed.items(), key=lambda kv: -int(kv[0][:-1]))
    )
    assert total[2] == expected
