"""A label of a declared section is written once: in its declaration (configurator/sections/).

Every row, column, item and line of every declared section has an English label — a figure row's is
the figure book's (or the section's override), read here from the golden plans' figure books.  None of
them may be typed again in a template of the page or the proposal (``{% translate "…" %}`` or a
``{% blocktranslate %}`` body) or as a string literal in the workbook module: a view prints the
section's label, so the page, both PDF editions and the XLSX cannot drift apart.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

from configurator import sections
from configurator.sections import Fig, Pair, Term

ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = ("configurator/templates", "quotes/templates")
WORKBOOK = ("documents/workbook.py", "documents/exports.py")  # the XLSX: its main sheets, its value sheets

# Where a templated key's placeholder is filled by a view ("{rank}" in the memory section).
PLACEHOLDERS = {
    "rank": ("memory.per_rank", "memory.prefill.per_rank", "memory.decode.per_rank"),
    "group": ("memory",),
}

# A word a declared label shares with a heading of another meaning: not the section's row retyped.
OTHER_MEANING = {
    # card and column headings naming the kind of thing, not the count figure "Racks"
    ("configurator/templates/configurator/_results.html", "Racks"),
    ("configurator/templates/configurator/planner_results.html", "Racks"),
    # the sensitivity table's input (electricity price, utilisation …), not input tokens
    ("configurator/templates/configurator/_results.html", "Input"),
    ("quotes/templates/quotes/pdf/proposal.html", "Input"),
    ("documents/exports.py", "Input"),
    # a sheet's name (the workbook's sheet names stay English: scripts read them), not the column
    ("documents/exports.py", "Measured"),
    # the quote's discount field and total, not the TCO's capex discount row
    ("quotes/templates/quotes/_create_form.html", "Discount"),
    ("quotes/templates/quotes/_totals.html", "Discount"),
    ("quotes/templates/quotes/detail.html", "Discount"),
    ("quotes/templates/quotes/share/page.html", "Discount"),
    ("quotes/templates/quotes/pdf/proposal.html", "Discount"),
    # a payment milestone, not the TCO's installation cost
    ("quotes/templates/quotes/pdf/_payment_schedule.html", "Installation"),
    # the headline tile and the options' row naming the servers quoted (count × model), not the TCO's
    # server cost or a rack's server count
    ("quotes/templates/quotes/pdf/proposal.html", "Servers"),
    # a quote's share link, not a network link's speed
    ("quotes/templates/quotes/_workflow_panel.html", "Link"),
}

# Not converted yet: none (the page, the proposal's chapters and the workbook render the sections); a
# view not converted would list its (file, label) pairs here.  The list only shrinks: a new typed
# label fails.
NOT_YET: set[tuple[str, str]] = set()

_TRANSLATE = re.compile(r"""{%\s*(?:translate|trans)\s+(["'])(.*?)\1""", re.S)
_BLOCK = re.compile(r"{%\s*blocktranslate\b[^%]*%}(.*?){%\s*endblocktranslate\s*%}", re.S)


def _figure_labels() -> dict[str, str]:
    labels: dict[str, str] = {}
    for path in sorted((ROOT / "tests/golden/plans").glob("*.json")):
        figures = json.loads(path.read_text(encoding="utf-8"))["plan"].get("figures") or {}
        for key, figure in figures.items():
            labels.setdefault(key, str(figure.get("label_en") or ""))
    return labels


def _keys(key: str) -> list[str]:
    out = [key]
    for name, values in PLACEHOLDERS.items():
        if "{" + name + "}" in key:
            out = [k.replace("{" + name + "}", v) for k in out for v in values]
    return out


def declared_labels() -> dict[str, str]:
    """Every declared English label → the section part that declares it."""
    book = _figure_labels()
    found: dict[str, str] = {}
    for section in sections.SECTIONS.values():
        for row in section.rows:
            if isinstance(row, Fig):
                labels = [row.label_en] if row.label_en else [book.get(k, "") for k in _keys(row.key)]
            elif isinstance(row, Term | Pair):
                labels = [row.label_en]
            for label in labels:
                if label:
                    found.setdefault(label, f"{section.name}")
    for table in sections.TABLES.values():
        parts = [*table.columns, *table.items, *table.lines]
        for part in parts:
            found.setdefault(part.label_en, f"{table.name}")
        if table.item_label_en:
            found.setdefault(table.item_label_en, table.name)
        if table.total is not None:
            found.setdefault(table.total.label_en, table.name)
    return found


def _matcher(label: str) -> re.Pattern:
    """A declared label as a pattern over typed text: a ``{placeholder}`` stands for anything."""
    parts = re.split(r"\{[a-z_]+\}", label)
    return re.compile("^" + ".+".join(re.escape(p) for p in parts) + "$")


def typed_strings() -> list[tuple[str, str]]:
    """(file, text) of every string a template translates or the workbook module writes."""
    out: list[tuple[str, str]] = []
    for folder in TEMPLATES:
        for path in sorted((ROOT / folder).rglob("*.html")):
            text = path.read_text(encoding="utf-8")
            rel = path.relative_to(ROOT).as_posix()
            out += [(rel, m.group(2)) for m in _TRANSLATE.finditer(text)]
            out += [(rel, m.group(1).strip()) for m in _BLOCK.finditer(text)]
    for name in WORKBOOK:
        path = ROOT / name
        if path.exists():
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Constant) and isinstance(node.value, str):
                    out.append((name, node.value))
    return out


def retyped(typed: list[tuple[str, str]] | None = None) -> list[str]:
    labels = declared_labels()
    patterns = [(label, where, _matcher(label)) for label, where in labels.items()]
    found = []
    for path, text in typed_strings() if typed is None else typed:
        if (path, text) in OTHER_MEANING or (path, text) in NOT_YET:
            continue
        for label, where, pattern in patterns:
            if text == label or ("{" in label and pattern.match(text)):
                found.append(f"{path}: {text!r} is the {where} section's label")
    return found


def test_the_sections_declare_labels():
    labels = declared_labels()
    assert len(sections.SECTIONS) + len(sections.TABLES) >= 10
    assert "Ports needed" in labels and "Breaker loading" in labels and "Net total excluding VAT" in labels


def test_no_declared_label_is_typed_again_in_a_template_or_the_workbook():
    assert retyped() == []


def test_the_check_finds_a_typed_label():
    assert retyped([("t.html", "Ports needed")]) and retyped(
        [("w.py", "Cost per million output tokens (buy)")]
    )
    assert not retyped([("t.html", "Ports needed here")])
