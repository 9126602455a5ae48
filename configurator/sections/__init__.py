"""One declaration of what a section shows, rendered by the page, the proposal PDF and the workbook.

The way NetBox declares a panel once and renders it in many views
(``netbox/ui/panels.py``): each section of the plan is a declared list of
rows, and every row names where its number comes from —

* :class:`Fig` — a figure of the plan's figure book (``configurator/engine/figures``): its label
  in both languages and its unit come from the book's definition, its formatting from the unit
  (``configurator/engine/formatting.py``); nothing here computes a figure;
* :class:`Term` — a term of the quote (its totals, VAT by rate: ``proposals.terms``), money;
* :class:`Pair` — a row of a two-column section (buy | lease), each column a figure;

:func:`rows` renders one section for one plan in one language; the configurator page
(``plan_tags.section_rows``), the proposal PDF (``documents.pdf.context``) and the BOM/TCO workbook
(``quotes.workbook``) all call it, so a label is written once and a number is formatted one way.
:mod:`.tables` declares the sections that are tables (the network's fabrics, the feeds, the racks, the
serving groups, the cost per million tokens, the measured figures): columns once, each a path into the
plan's row dicts with its heading and unit; :func:`table` renders one.
:func:`severity_word` is the one word for a check's severity (a warning is never called an error).
"""

from __future__ import annotations

from .model import (
    DESIGN,
    MEMORY,
    OPTIONS,
    PERFORMANCE,
    POWER,
    RACKS,
    SECTIONS,
    SUMMARY,
    TCO,
    TOTALS,
    Fig,
    Pair,
    Section,
    Term,
    format_value,
    pair_rows,
    row_label,
    rows,
    severity_word,
    tco_rows,
    worst_severity,
)
from .tables import (
    COST_PER_TOKEN,
    FEEDS,
    GROUPS,
    MEASURED,
    NETWORK,
    NETWORK_PLANES,
    PER_RACK,
    POWER_GROUPS,
    TABLES,
    Col,
    Item,
    Line,
    Table,
    Total,
    label,
    optics_classes,
    parallel_text,
    table,
)

__all__ = [
    "COST_PER_TOKEN",
    "FEEDS",
    "GROUPS",
    "MEASURED",
    "NETWORK",
    "NETWORK_PLANES",
    "PER_RACK",
    "POWER_GROUPS",
    "TABLES",
    "Col",
    "Item",
    "Line",
    "Table",
    "Total",
    "label",
    "optics_classes",
    "parallel_text",
    "table",
    "DESIGN",
    "MEMORY",
    "OPTIONS",
    "PERFORMANCE",
    "POWER",
    "RACKS",
    "SECTIONS",
    "SUMMARY",
    "TCO",
    "TOTALS",
    "Fig",
    "Pair",
    "Section",
    "Term",
    "format_value",
    "pair_rows",
    "row_label",
    "rows",
    "severity_word",
    "tco_rows",
    "worst_severity",
]
