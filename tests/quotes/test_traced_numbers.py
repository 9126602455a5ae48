"""Every number a proposal prints is traced to the plan, a bill-of-materials line or a term of the quote.

Each seeded case (docs/domain.md §3-4: 4 × A3, 8 × A3 primary/standby, 16 × A3 8P8D,
8 × A2 text-only, 2 × NF5868G8) and a proposal comparing three options is rendered once per
module in both editions and both languages; ``pdftotext`` reads every number back, and:

1. **labelled figures**: each row of the declared sections (``configurator.sections``: performance,
   power, totals, options) is printed as its label followed by its value, the value formatted here
   from the figure book's own number (half-up rounding, as finance tables round);
2. **every number**: each number printed (with its unit marker: %, M, 万, 亿, GB, ms) equals a value of
   the frozen plan, its request, a BOM line or a term of the quote in one of the roundings the
   document uses, or is a constant of the document's own prose (its translation catalogue), a
   chapter, step or axis tick — whatever is left is reported with the line it is on;
3. **the contradictions of issue 26**: no "错误"/"ERROR" for a warning, the full-length requests of the
   summary and of the risks agree with the plan, no "16 张加速卡" for an 8-card server, the head node
   is node-00 as in the drawings, the network total lists the optics the rows count;
4. **the workbook**: its total including VAT equals the PDF's to the cent.

Rendering 24 PDFs is slow on a small machine (≈ 1.5-3 s each), so the module renders each once
(module-scoped fixture, inside a transaction rolled back at the end) and the internal editions,
which add only the engineering appendix, are marked ``heavy``.
"""

from __future__ import annotations

import io
import re
import shutil
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from pathlib import Path
from typing import Any

import pytest

weasyprint = pytest.importorskip("weasyprint")
pytestmark = [
    pytest.mark.skipif(shutil.which("pdftotext") is None, reason="poppler-utils not installed"),
    pytest.mark.django_db,  # the test database is set up for this module (the renders are rolled back)
]

CASES = ("4node", "8node-standby", "8p8d", "a2", "nf5868g8", "options")
LANGS = ("zh-hans", "en")
EDITIONS = ("customer", "internal")
LOCALE = Path(__file__).resolve().parents[2] / "locale" / "zh_Hans" / "LC_MESSAGES" / "django.po"


class _Rollback(Exception):
    pass


@dataclass
class Rendered:
    case: str
    lang: str
    edition: str
    text: str
    result: dict
    resolved: dict
    option_results: list[dict]
    lines: list[dict]
    terms: dict
    totals: dict
    xlsx_gross: Decimal | None
    server_packages: int
    devices_per_node: int
    extra: dict = field(default_factory=dict)


def pdf_text(pdf: bytes) -> str:
    done = subprocess.run(
        ["pdftotext", "-raw", "-enc", "UTF-8", "-", "-"], input=pdf, capture_output=True, check=True
    )
    return done.stdout.decode("utf-8")


def _xlsx_gross(content: bytes) -> Decimal | None:
    from openpyxl import load_workbook

    sheet = load_workbook(io.BytesIO(content), data_only=True)["BOM"]
    for cell in sheet["D"]:
        if cell.value in ("Total including VAT", "含税合计"):
            return Decimal(str(sheet[f"I{cell.row}"].value)).quantize(Decimal("0.01"))
    return None


@pytest.fixture(scope="module")
def rendered(django_db_setup, django_db_blocker) -> dict[tuple[str, str, str], Rendered]:
    """Every case × language × edition, rendered once; the quotes are rolled back afterwards."""
    from django.contrib.auth import get_user_model
    from django.db import transaction

    from accounts.services import demo_users_create
    from documents.exports import revision_workbook
    from documents.pdf import render_proposal_pdf
    from documents.pdf.sample import sample_plan_kwargs, sample_quote_create
    from proposals.options import option_add
    from proposals.terms import commercial_context
    from quotes.statuses import BomCategory

    out: dict[tuple[str, str, str], Rendered] = {}
    with django_db_blocker.unblock():
        try:
            with transaction.atomic():
                demo_users_create()
                engineer = get_user_model().objects.get(username="engineer")
                for case in CASES:
                    for lang in LANGS:
                        name = "8node-tenant" if case == "options" else case
                        revision = sample_quote_create(by=engineer, language=lang, name=name)
                        option_results = []
                        if case == "options":  # good / better / best: 4 × A3 and 8P8D beside the pair
                            for other, recommended in (("4node", False), ("8p8d", True)):
                                option = option_add(
                                    quote=revision.quote,
                                    request_json=sample_plan_kwargs(other)["request_json"],
                                    recommended=recommended,
                                )
                                option_results.append(option.result_json)
                        lines = list(revision.lines.all())
                        purchase = [x for x in lines if x.category != BomCategory.LEASE]
                        from django.utils import translation

                        with translation.override(lang):
                            commercial = commercial_context(revision, purchase, lang)
                        line_rows = [
                            {
                                "quantity": x.quantity,
                                "unit_price": x.unit_price,
                                "discount": x.discount,
                                "line_total": x.line_total,
                                "net": commercial["line_nets"].get(id(x), x.line_total),
                                "description": f"{x.description_en} {x.description_zh} {x.sku} {x.note}",
                            }
                            for x in lines
                        ]
                        terms = commercial["terms"]
                        term_values = {
                            "total_net": commercial["total_net"],
                            "total_vat": commercial["total_vat"],
                            "total_gross": commercial["total_gross"],
                            "vat_rows": [dict(r) for r in commercial["vat_rows"]],
                            "milestones": [m["percent"] for m in commercial["payment_milestones"]],
                            "numbers": [
                                terms.vat_rate_goods,
                                terms.vat_rate_services,
                                terms.delivery_weeks,
                                terms.warranty_years,
                                revision.list_total,
                                revision.discount_amount,
                                revision.net_total,
                                revision.discount,
                                revision.usd_rate,
                            ],
                        }
                        # The quote's own terms beyond the totals: the payment schedule's amounts, the
                        # acceptance criteria's limits, and the delivery chapters (planes, facilities,
                        # implementation, the benchmark appendix's script) — each a term of the quote.
                        from documents.pdf.delivery import delivery_context

                        with translation.override(lang):
                            delivery = delivery_context(revision, lang)
                        term_values["schedule"] = list(
                            walk_values(
                                [
                                    commercial.get("payment_schedule"),
                                    commercial.get("acceptance_figures"),
                                    commercial.get("acceptance"),
                                ]
                            )
                        )
                        term_values["delivery"] = list(walk_values(delivery))
                        xlsx = _xlsx_gross(revision_workbook(revision))
                        seller = commercial["seller"]
                        seller_text = [str(v) for v in seller.values() if isinstance(v, str)]
                        server = (revision.resolved_json or {}).get("server") or {}
                        for edition in EDITIONS:
                            pdf = render_proposal_pdf(revision, edition=edition)
                            out[(case, lang, edition)] = Rendered(
                                case=case,
                                lang=lang,
                                edition=edition,
                                text=pdf_text(pdf),
                                result=revision.result_json,
                                resolved=revision.resolved_json,
                                option_results=option_results,
                                lines=line_rows,
                                terms=term_values,
                                totals={"number": revision.number, "quote": revision.quote.number},
                                xlsx_gross=xlsx,
                                server_packages=int(server.get("packages") or 0),
                                devices_per_node=int(
                                    (revision.result_json.get("layout") or {}).get("devices_per_node") or 0
                                ),
                                extra={"seller": seller_text},
                            )
                raise _Rollback
        except _Rollback:
            pass
    return out


def _params():
    for case in CASES:
        for lang in LANGS:
            for edition in EDITIONS:
                marks = [pytest.mark.heavy] if edition == "internal" else []
                yield pytest.param(case, lang, edition, id=f"{case}-{lang}-{edition}", marks=marks)


# --------------------------------------------------------------------------- formatting, written here

CENT = Decimal("0.01")


def dec(value: Any) -> Decimal | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        d = Decimal(repr(value)) if isinstance(value, float) else Decimal(str(value))
    except (InvalidOperation, ValueError):
        return None
    return d if d.is_finite() else None


def fmt(value: Decimal, places: int, strip: bool = False) -> str:
    """Thousands separators, half-up rounding (docs: finance tables round half up)."""
    d = value.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
    text = f"{abs(d):,.{places}f}"
    if strip and "." in text:
        text = text.rstrip("0").rstrip(".")
    return ("−" if d < 0 and set(text) - {"0", ".", ","} else "") + text


def renderings(value: Decimal) -> set[tuple[str, str]]:
    """(number, unit marker) pairs the document may print ``value`` as."""
    out: set[tuple[str, str]] = set()
    for places in (0, 1, 2):
        out.add((fmt(value, places), ""))
        out.add((fmt(value, places, True), ""))
        out.add((fmt(value * 100, places), "%"))
        out.add((fmt(value / 10**9, places), "GB"))
        out.add((fmt(value / 10**12, places), "TB"))
        out.add((fmt(value / 10**6, places), "MB"))
        out.add((fmt(value / 10**6, places), "M"))
        out.add((fmt(value / 10**9, places), "B"))
        out.add((fmt(value / 10**3, places), "k"))
        out.add((fmt(value / 10**4, places, True), "万"))
        out.add((fmt(value / 10**8, places, True), "亿"))
    out.add((fmt(value * 1000, 0), "ms"))
    out.add((fmt(value, 4, True), ""))
    return out


NUMBER = re.compile(
    r"(?<![\w.\-/])([−-]?\d(?:[\d,]*\d)?(?:\.\d+)?)(?![\w\-]|\.\d|,\d)\s?(%|万|亿|GB|TB|MB|ms|M\b|k\b|B\b)?"
)


def tokens(text: str, skip: set[int] = frozenset()) -> Iterable[tuple[str, str, str]]:
    """(number, marker, line) for every standalone number of ``text`` (codes such as DP4, R01,
    node-00, Q-2026-0002, 10.0.0.11, 2026-12-01 and 910C are not numbers); lines in ``skip`` are left out.
    A number at the end of a line whose unit went to the next line has the marker "…"."""
    for i, line in enumerate(text.splitlines()):
        if i in skip:
            continue
        for match in NUMBER.finditer(line):
            number = match.group(1).replace("-", "−")
            marker = match.group(2) or ("…" if not line[match.end() :].strip() else "")
            yield number, marker, line


def walk_values(obj: Any) -> Iterable[Any]:
    if isinstance(obj, Mapping):
        for value in obj.values():
            yield from walk_values(value)
    elif isinstance(obj, (list, tuple)):
        for value in obj:
            yield from walk_values(value)
    else:
        yield obj


def prose_numbers() -> set[tuple[str, str]]:
    """Numbers written into the document's own sentences (the translation catalogue): constants of
    the text such as "about 30 seconds", "US$20 M over 12 months", "±20 %", not figures."""
    found: set[tuple[str, str]] = set()
    text = LOCALE.read_text(encoding="utf-8")
    for literal in re.findall(r'^(?:msgid|msgstr) "(.*)"$|^"(.*)"$', text, flags=re.M):
        for number, marker, _line in tokens("".join(literal)):
            found.add((number, marker))
            found.add(("−" + number, marker))  # "±20 %" is printed as −20% and +20%
    return found


def allowed(r: Rendered) -> set[tuple[str, str]]:
    values: list[Any] = []
    plans = [r.result, *r.option_results]
    for plan in plans:
        values += list(walk_values(plan))
    values += list(walk_values(r.resolved))
    for line in r.lines:
        values += [line["quantity"], line["unit_price"], line["discount"], line["line_total"], line["net"]]
        values.append(1 - (1 - Decimal(line["discount"])) * (1 - Decimal(r.terms["numbers"][7])))
    values += [r.terms["total_net"], r.terms["total_vat"], r.terms["total_gross"], *r.terms["milestones"]]
    values += list(walk_values(r.terms["vat_rows"])) + list(r.terms["numbers"])
    values += list(r.terms.get("schedule", [])) + list(r.terms.get("delivery", []))
    # The memory drawing's legend gives each part's share of the device: part ÷ device memory.
    for plan in plans:
        for group in (plan.get("memory") or {}).get("groups") or []:
            rank = group.get("per_rank") or {}
            device = dec(rank.get("device_bytes"))
            if device:
                values += [
                    dec(v) / device for k, v in rank.items() if k.endswith("_bytes") and dec(v) is not None
                ]
                values.append((device - dec(rank.get("usable_bytes") or 0)) / device)
    out: set[tuple[str, str]] = set()
    strings: list[str] = list(r.extra.get("seller") or [])
    for value in values:
        number = dec(value)
        if number is not None:
            out |= renderings(number)
            out |= renderings(-number)  # "Discounts −1,349,232.00": an amount taken off
        if isinstance(value, str):  # written as it is too: "7200" in a launch environment
            strings.append(value)
    for line in r.lines:
        strings.append(line["description"])
        quantity = fmt(dec(line["quantity"]), 3, True)
        out |= {(quantity, marker) for marker in ("", "TB", "GB", "M", "k")}  # "4 TB" of storage
    for percent in r.terms["milestones"]:
        out.add((fmt(dec(percent), 0), "%"))  # payment milestones are whole percents
    for s in strings:  # numbers inside the plan's own text: product names, check messages, commands
        for number, marker, _line in tokens(s):
            out.add((number, marker))
            out.add((number, ""))
    return out | prose_numbers()


def _progression(numbers: list[str]) -> bool:
    values = [dec(n.replace(",", "").replace("−", "-")) for n in numbers]
    if len(values) < 3 or any(v is None for v in values):
        return False
    steps = {b - a for a, b in zip(values, values[1:], strict=False)}
    return len(steps) == 1 and steps.pop() > 0


def axis_ticks(text: str) -> set[int]:
    """Line numbers of a chart's axis ticks: three or more numbers in even steps, on one line
    ("0 50 100 150 200") or one per line (0.0, 2.5, 5.0 … 12.5)."""
    lines = text.splitlines()
    only = re.compile(r"^\s*(?:[¥$]?[−-]?\d[\d,]*(?:\.\d+)?\s*(?:%|万|亿|GB|M|k|ms|s)?\s*)+$")
    ticks: set[int] = set()
    run: list[int] = []

    def close() -> None:
        if _progression([re.sub(r"[^\d.,−-]", "", lines[i]).strip() for i in run]):
            ticks.update(run)
        run.clear()

    for i, line in enumerate(lines):
        numbers = re.findall(r"[−-]?\d[\d,]*(?:\.\d+)?", line)
        if only.match(line) and len(numbers) >= 3 and _progression(numbers):
            ticks.add(i)
        if only.match(line) and len(numbers) == 1:
            run.append(i)
        else:
            close()
    close()
    return ticks


def strip_structure(text: str, r: Rendered) -> str:
    """Page furniture and structure: the running header/footer, the contents, chapter numbers."""
    text = re.sub(r"(Page|第)\s*\d+\s*(of|页，共)\s*\d+\s*页?", " ", text)
    text = text.replace(r.totals["number"], " ").replace(r.totals["quote"], " ")
    text = re.sub(r"\b\d{4}-\d{2}-\d{2}\b", " ", text)  # dates
    # The contents' page numbers (WeasyPrint's target-counter): pdftotext -raw prints them one per line
    # just before the "Contents" / "目录" heading, in rising order.
    text = re.sub(r"(?m)(?:^\d{1,3}\n){3,}(?=(?:Contents|目录)\s*$)", " ", text)
    return text


# --------------------------------------------------------------------------- the tests


@pytest.mark.parametrize(("case", "lang", "edition"), list(_params()))
def test_every_printed_number_is_a_figure_a_bom_line_or_a_term(rendered, case, lang, edition):
    r = rendered[(case, lang, edition)]
    ok = allowed(r)
    text = strip_structure(r.text, r)
    untraced = []
    for number, marker, line in tokens(text, axis_ticks(text)):
        if (number, marker) in ok:
            continue
        if marker == "…" and any((number, m) in ok for m in ("", "%", "GB", "M", "万", "亿", "ms", "k", "B")):
            continue  # its unit is on the next line
        if marker == "B" and (number, "") in ok:
            continue  # bytes ("27,648 B"), not billions

        untraced.append(f"{number}{marker!s:>3}  ← {line.strip()[:110]}")
    assert not untraced, f"{len(untraced)} numbers traced to nothing:\n" + "\n".join(untraced[:60])


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


@pytest.mark.parametrize(("case", "lang", "edition"), list(_params()))
def test_declared_section_rows_print_their_figure(rendered, case, lang, edition):
    """Each declared row's label is followed by the figure book's value, formatted here independently."""
    from configurator.sections import OPTIONS, PERFORMANCE, POWER, RACKS

    r = rendered[(case, lang, edition)]
    figures = r.result["figures"]
    flat = _squash(r.text)
    zh = lang.startswith("zh")
    missing = []
    for section in (PERFORMANCE, POWER, RACKS):  # RACKS: load, heat, weight and floor loading
        for row in section.rows:
            figure = figures.get(row.key)
            if not figure or figure.get("value") is None:
                continue
            label = figure["label_zh"] if zh else figure["label_en"]
            value = dec(figure["value"])
            unit = figure.get("unit", "")
            if value is None:
                expected = f"{figure['value']}tok/s" if unit == "tokens/s" else str(figure["value"])
            elif unit == "s":
                expected = f"{fmt(value * 1000, 0)}ms" if value < 1 else f"{fmt(value, 1)}s"
            elif unit in ("kW", "A"):
                expected = f"{fmt(value, 1)}{unit}"
            elif unit == "tokens/s":
                expected = f"{fmt(value, 0)}tok/s"
            elif unit == "req/s":
                expected = fmt(value, 2)
            elif unit in ("kg", "kg/m²", "BTU/h"):  # whole kilograms and BTU/h, with the unit
                expected = f"{fmt(value, 0)}{unit}"
            elif unit == "m²":
                expected = f"{fmt(value, 2, True)}{unit}"
            else:
                expected = fmt(value, 2, True)
            if _squash(label) + expected not in flat:
                missing.append(f"{row.key}: {label} {expected}")
    # The totals: net, VAT by rate, gross, to the cent, as the quote terms give them.
    for key, en, zh_label in (
        ("total_net", "Net total excluding VAT", "不含税合计"),
        ("total_gross", "Total including VAT", "含税合计"),
    ):
        expected = _squash(f"{zh_label if zh else en}(CNY){fmt(dec(r.terms[key]), 2)}")
        if expected not in flat:
            missing.append(expected)
    if case == "options":
        # Every option's cost per million output tokens and capacity, from its own plan.
        for plan in [r.result, *r.option_results]:
            for key in ("performance.capacity_concurrency", "tco.capex.total"):
                if key not in {row.key for row in OPTIONS.rows}:
                    continue
                value = dec(plan["figures"][key]["value"])
                if key == "performance.capacity_concurrency" and fmt(value, 0) not in r.text:
                    missing.append(f"option {key} {value}")
    assert not missing, "\n".join(missing)


@pytest.mark.parametrize(("case", "lang", "edition"), list(_params()))
def test_the_contradictions_are_gone(rendered, case, lang, edition):
    r = rendered[(case, lang, edition)]
    text, flat = r.text, _squash(r.text)
    checks = r.result.get("checks") or []
    if edition == "customer" and not any(c.get("severity") == "error" for c in checks):
        assert "错误" not in text and "ERROR" not in text and not re.search(r"\berror\b(?!\s+band)", text)
    # The full-length requests at once: the summary and the risks name the plan's figure.
    full = (r.result.get("memory") or {}).get("full_len_seqs_per_dp_rank")
    said = re.findall(r"只能同时处理(\d+)个|(\d+)fitatonce", flat) + re.findall(r"·(\d+)full-length", flat)
    for match in said:
        number = next(m for m in (match if isinstance(match, tuple) else (match,)) if m)
        assert int(number) == full, (number, full)
    # Accelerator cards per node: the server's packages, never its logical devices.
    for number in re.findall(r"(\d+)张加速卡", flat) + re.findall(r"(\d+)acceleratorcardspernode", flat):
        assert int(number) == r.server_packages, (number, r.server_packages)
    # The head node as the drawings and the launch scripts name it.
    if (r.resolved.get("topology") or {}).get("kind") == "single":
        assert "node-00" in text
    assert not re.search(r"\b(A2|A3|G8)-01\b|）-01", text)
    # The network's total lists the optics its rows count, by class (no 0 under a row with 128).
    network = r.result.get("network") or {}
    by_class = dict(network.get("media") or {})
    if network.get("optics"):
        by_class["400g-optics"] = network["optics"]
    for code, count in by_class.items():
        if code.endswith("-optics") and count:
            assert f"{count:,}×{code.split('-')[0].upper()}" in flat, (code, count)
    # No exchange rate with six decimals.
    assert not re.search(r"\d\.\d{6}", text)


@pytest.mark.parametrize(("case", "lang"), [(c, lang) for c in CASES for lang in LANGS])
def test_the_workbook_total_equals_the_pdfs_to_the_cent(rendered, case, lang):
    r = rendered[(case, lang, "customer")]
    gross = dec(r.terms["total_gross"]).quantize(CENT)
    label = "含税合计(CNY)" if lang.startswith("zh") else "TotalincludingVAT(CNY)"
    assert f"{label}{fmt(gross, 2)}" in _squash(r.text)
    assert r.xlsx_gross == gross
    # VAT is not zero: goods at 13 %, services at 6 % (财政部 税务总局 海关总署公告 2019 年第 39 号).
    assert r.terms["total_vat"] > 0
