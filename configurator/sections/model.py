"""The section model: rows declared once (figure keys, quote terms), rendered for the page, the PDF and the XLSX.

Pure Python (no Django): the callers translate nothing here; every label is the
figure book's (``label_en``/``label_zh`` of the figure's definition) or, for a quote
term, the pair declared with the row.  A row whose figure the plan does not have is
left out (a single cluster has no prefill : decode balance), never printed as 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from configurator.engine.vocabulary import is_zh

from ..engine import formatting, vocabulary


def _pick(en: str, zh: str, lang: str) -> str:
    return zh if is_zh(lang) and zh else en


@dataclass(frozen=True)
class Fig:
    """A figure of the plan's figure book, by key; label and unit from its definition.

    ``label_en``/``label_zh`` override the book's label only where the section names the
    figure more plainly than its definition (the override is declared here, once, for
    every view); ``decimals`` overrides the unit's usual precision.
    """

    key: str
    total: bool = False
    decimals: int | None = None
    label_en: str = ""
    label_zh: str = ""
    hide_zero: bool = False  # a row that says nothing at 0 (no linear-attention state) is left out


@dataclass(frozen=True)
class Term:
    """A term of the quote (``proposals.terms.commercial_context``): a total in the quote's currency."""

    key: str
    label_en: str
    label_zh: str
    total: bool = False


@dataclass(frozen=True)
class Pair:
    """A row of a two-column section (buy | lease): each column a figure of the plan's book by key.

    ``None`` for a column: not a cost of that side ("—").  ``included_by``: the lease figure's input
    that, when true, says the lease includes this cost ("included").  ``span``: one figure across both
    columns (the break-even month; ``span_none_en``/``_zh`` when it has no value).  ``credit``: a
    credit (discount, residual value), printed with a minus sign.  ``detail``: a line of a total above
    it, printed small.  Labels may name ``{years}`` (the section's ``keys``).
    """

    label_en: str
    label_zh: str
    buy: str | None = None
    lease: str | None = None
    included_by: str = ""
    credit: bool = False
    detail: bool = False
    hide_zero: bool = False
    total: bool = False
    span: str | None = None
    span_none_en: str = ""
    span_none_zh: str = ""


Row = Fig | Term | Pair


@dataclass(frozen=True)
class Section:
    name: str
    title_en: str
    title_zh: str
    rows: tuple[Row, ...]


# ----------------------------------------------------------------------------- the sections

PERFORMANCE = Section(
    "performance",
    "Performance",
    "性能",
    (
        Fig("performance.ttft_s"),
        Fig("performance.ttft_p90_s"),
        Fig("performance.tpot_s"),
        Fig("performance.tpot_p90_s"),
        Fig("performance.output_tokens_per_s", total=True),
        Fig("performance.output_tokens_per_s_range"),
        Fig("performance.input_tokens_per_s"),
        Fig("performance.requests_per_s"),
        Fig("performance.capacity_concurrency"),
    ),
)

# The design capacity with its cross-validated error band and the cost per token at both ends
# (performance/design.py band_concurrency; economics.py design_conservative): the expected figure
# and the conservative one, each labelled, as the page and the proposal print them.
DESIGN = Section(
    "design",
    "Design capacity and its error band",
    "设计容量及其误差带",
    (
        Fig(
            "performance.design.concurrency",
            label_en="Design capacity (expected)",
            label_zh="设计容量（预期）",
        ),
        Fig("performance.design.concurrency_range"),
        Fig(
            "performance.design.output_tokens_per_s",
            label_en="Output throughput at the design capacity (expected)",
            label_zh="设计容量下的输出吞吐（预期）",
        ),
        Fig("performance.design.output_tokens_per_s_low"),
        Fig(
            "economics.design.cost_per_m_output",
            label_en="Cost per million output tokens at the design capacity (expected)",
            label_zh="设计容量下每百万输出 Token 成本（预期）",
        ),
        Fig(
            "economics.design_conservative.cost_per_m_output",
            total=True,
            label_en="Cost per million output tokens at the design capacity (conservative)",
            label_zh="设计容量下每百万输出 Token 成本（保守）",
        ),
    ),
)

POWER = Section(
    "power",
    "Power",
    "供电",
    (
        Fig("power.server.max_input_kw"),
        Fig("power.servers.max_kw"),
        Fig("power.switches.max_kw"),
        Fig("power.it.max_kw", total=True),
        Fig("power.it.design_kw"),
        Fig("power.pue"),
        Fig("power.facility.max_kw"),
    ),
)

# Racks as the facilities team checks the hall: load, heat, weight and floor loading (the per-rack
# figures are in the rack table); a rack or site without a weight or rating leaves its rows out.
RACKS = Section(
    "racks",
    "Racks, heat and floor loading",
    "机柜、散热与承重",
    (
        Fig("racks.count"),
        Fig("racks.max_kw"),
        Fig("racks.heat_btu_h"),
        Fig("racks.weight_kg"),
        Fig("racks.max_weight_kg"),
        Fig("racks.footprint_m2"),
        Fig("racks.max_floor_load_kg_m2", total=True),
        Fig("racks.floor_rating_kg_m2"),
    ),
)

# The options compared side by side (proposals.options): each column renders these rows from
# its own frozen plan, so every option is measured the same way.
OPTIONS = Section(
    "options",
    "Options compared",
    "方案对比",
    (
        Fig("performance.capacity_concurrency"),
        Fig("performance.output_tokens_per_s"),
        Fig("performance.ttft_p90_s"),
        Fig("performance.tpot_p90_s"),
        Fig("power.it.max_kw"),
        Fig("racks.count"),
        Fig("tco.capex.total"),
        Fig("tco.buy_total", total=True),
        Fig("tco.tokens.buy.cost_per_m_output"),
    ),
)

# The quote's totals, as the PDF's bill of materials and the workbook's summary both print them.
TOTALS = Section(
    "totals",
    "Totals",
    "合计",
    (
        Term("total_net", "Net total excluding VAT", "不含税合计", total=True),
        Term("vat_rows", "VAT", "增值税"),
        Term("total_gross", "Total including VAT", "含税合计", total=True),
    ),
)

# One accelerator's memory, per serving group: ``{rank}`` is the group's per-rank figure prefix
# ("memory.per_rank", "memory.decode.per_rank"), ``{group}`` its group prefix ("memory", "memory.decode").
MEMORY = Section(
    "memory",
    "Accelerator memory per rank",
    "每卡显存分配",
    (
        Fig("{rank}.device_bytes"),
        Fig("{rank}.usable_bytes"),
        Fig("{rank}.weights_bytes"),
        Fig("{rank}.non_expert_weights_bytes"),
        Fig("{rank}.expert_weights_bytes", hide_zero=True),
        Fig("{rank}.activation_bytes"),
        Fig("{rank}.buffer_bytes"),
        Fig("{rank}.graph_bytes"),
        Fig("{rank}.kv_cache_bytes", total=True),
        Fig("{rank}.kv_bytes_per_token"),
        Fig("{rank}.state_bytes_per_seq", hide_zero=True),
        Fig("{group}.kv_tokens_per_dp_rank", total=True),
        Fig("{group}.full_len_seqs_per_dp_rank"),
    ),
)

# Buy vs lease over the horizon: every term of the two totals, as the page and the proposal print
# them — the capex lines, what the lease buys at the start, each yearly cost on each side, the residual
# value the purchase recovers (engine/tco: buy_total, lease_total).
TCO = Section(
    "tco",
    "Buy vs lease",
    "采购与租赁对比",
    (
        Pair("Servers", "服务器", buy="tco.capex.servers", detail=True),
        Pair("Switches", "交换机", buy="tco.capex.switches", detail=True),
        Pair("Optics", "光模块", buy="tco.capex.optics", detail=True),
        Pair("Racks and PDUs", "机柜与 PDU", buy="tco.capex.racks", detail=True),
        Pair("Installation", "安装实施", buy="tco.capex.installation", detail=True),
        Pair("Gateway servers", "网关服务器", buy="tco.capex.gateway", detail=True, hide_zero=True),
        Pair("Checkpoint storage", "模型权重存储", buy="tco.capex.storage", detail=True, hide_zero=True),
        Pair("Discount", "折扣", buy="tco.capex.discount", detail=True, hide_zero=True, credit=True),
        Pair(
            "Bought at the start (the lease buys the network, racks and installation only)",
            "期初采购（租赁模式仅采购网络、机柜与安装）",
            buy="tco.capex.total",
            lease="tco.lease_upfront",
        ),
        Pair(
            "O&M per year",
            "年运维费",
            buy="tco.annual.om",
            lease="tco.annual.lease_om",
            included_by="lease_includes_om",
        ),
        Pair(
            "Software and support per year",
            "年软件与技术支持费",
            buy="tco.annual.software_support",
            lease="tco.annual.software_support",
        ),
        Pair(
            "Electricity per year",
            "年电费",
            buy="tco.annual.electricity",
            lease="tco.annual.lease_electricity",
            included_by="lease_includes_power",
        ),
        Pair(
            "Colocation per year", "年机柜托管费", buy="tco.annual.colocation", lease="tco.annual.colocation"
        ),
        Pair("Rent per year", "年租金", lease="tco.annual.lease_rent"),
        Pair(
            "Residual value of the servers at the end",
            "期末服务器残值",
            buy="tco.residual_value",
            hide_zero=True,
            credit=True,
        ),
        Pair(
            "TCO over {years} years",
            "{years} 年总拥有成本",
            buy="tco.buy_total",
            lease="tco.lease_total",
            total=True,
        ),
        Pair("Net present value", "净现值（NPV）", buy="tco.npv_buy", lease="tco.npv_lease"),
        Pair(
            "Break-even month (buy vs lease)",
            "盈亏平衡月份（采购与租赁对比）",
            span="tco.break_even_month",
            span_none_en="not within the horizon",
            span_none_zh="不在测算期内",
        ),
    ),
)

# The answer first: what the configurator page opens with, above the findings — the capacity the
# hardware carries within the targets, what a million tokens cost at that capacity and at the
# customer's stated load (each label names its basis), the IT load, the racks and the TCO.
SUMMARY = Section(
    "summary",
    "At a glance",
    "方案概览",
    (
        Fig("performance.design.concurrency", total=True),
        Fig("performance.design.concurrency_range"),
        Fig("performance.design.output_tokens_per_s"),
        Fig(
            "economics.design.cost_per_m_output",
            label_en="Cost per million output tokens at the design capacity (expected)",
            label_zh="设计容量下每百万输出 Token 成本（预期）",
        ),
        Fig(
            "economics.design_conservative.cost_per_m_output",
            label_en="Cost per million output tokens at the design capacity (conservative)",
            label_zh="设计容量下每百万输出 Token 成本（保守）",
        ),
        Fig(
            "tco.tokens.buy.cost_per_m_output",
            label_en="Cost per million output tokens at the stated load (buy)",
            label_zh="报价负载下每百万输出 Token 成本（采购）",
        ),
        Fig("power.it.max_kw"),
        Fig("racks.count"),
        Fig("tco.buy_total"),
    ),
)

SECTIONS = {s.name: s for s in (SUMMARY, PERFORMANCE, DESIGN, POWER, RACKS, MEMORY, OPTIONS, TOTALS, TCO)}


# ----------------------------------------------------------------------------- formatting


# A figure's value as a number, or None (text, None, a boolean): the formatting module's one reading.
_number = formatting.figure_number


def format_value(
    value: Any, unit: str, lang: str, *, currency: str = "CNY", decimals: int | None = None
) -> str:
    """A figure's value as every view prints it: written by its unit's format (the figure book's
    ``Unit`` → ``formatting.UNIT_FORMATS``, one table entry a unit, money found by its currency)."""
    return formatting.format_figure_value(value, unit, lang, currency=currency, decimals=decimals)


def _figure_row(
    row: Fig, figures: Mapping[str, Any], lang: str, currency: str, keys: Mapping[str, str]
) -> dict | None:
    key = row.key.format(**keys) if keys else row.key
    figure = figures.get(key)
    if not isinstance(figure, Mapping) or figure.get("value") is None:
        return None
    if row.hide_zero and not figure["value"]:
        return None
    unit = str(figure.get("unit") or "")
    label = _pick(
        row.label_en or str(figure.get("label_en") or ""),
        row.label_zh or str(figure.get("label_zh") or ""),
        lang,
    )
    return {
        "key": key,
        "label": label,
        "value": figure["value"],
        "unit": unit,
        "text": format_value(figure["value"], unit, lang, currency=currency, decimals=row.decimals),
        "total": row.total,
        "kind": "figure",
        "formula": str(figure.get("formula") or ""),
        "source_kind": str((figure.get("source") or {}).get("kind") or ""),
    }


def _term_rows(row: Term, terms: Mapping[str, Any], lang: str) -> list[dict]:
    value = terms.get(row.key)
    if value is None:
        return []
    if row.key == "vat_rows":  # one row per VAT rate, labelled by what it taxes
        out = []
        for vat in value:
            vat = vat if isinstance(vat, Mapping) else vars(vat)
            rate = vat.get("rate_label") or formatting.format_percent(vat["rate"])
            label = f"{vat['label']}增值税 {rate}" if is_zh(lang) else f"VAT {rate} on {vat['label']}"
            out.append(
                {
                    "key": f"vat.{vat['rate']}",
                    "label": label,
                    "value": vat["vat"],
                    "unit": "money",
                    "text": formatting.format_number(vat["vat"], 2),
                    "total": False,
                    "kind": "term",
                }
            )
        return out
    return [
        {
            "key": row.key,
            "label": _pick(row.label_en, row.label_zh, lang),
            "value": value,
            "unit": "money",
            "text": formatting.format_number(value, 2),
            "total": row.total,
            "kind": "term",
        }
    ]


def rows(
    section: Section | str,
    figures: Mapping[str, Any],
    lang: str,
    *,
    currency: str = "CNY",
    terms: Mapping[str, Any] | None = None,
    keys: Mapping[str, str] | None = None,
) -> list[dict]:
    """The rows of ``section`` for one plan (its figure book, ``result_json["figures"]``) in ``lang``.

    Each row: ``key``, ``label``, ``value`` (the figure's own value), ``unit``, ``text`` (formatted),
    ``total`` (drawn as a total line) and ``kind`` ("figure" or "term"); a figure row also has its
    ``formula`` and ``source_kind``.  ``keys`` fills the placeholders of templated keys ("{rank}").
    """
    if isinstance(section, str):
        section = SECTIONS[section]
    out: list[dict] = []
    for row in section.rows:
        if isinstance(row, Fig):
            rendered = _figure_row(row, figures, lang, currency, keys or {})
            if rendered is not None:
                out.append(rendered)
        elif isinstance(row, Term):
            out.extend(_term_rows(row, terms or {}, lang))
    return out


NO_LEASE = ("no lease offer", "无租赁报价")
INCLUDED = ("included", "已包含")


def _cell(key: str | None, figures: Mapping[str, Any], lang: str, currency: str, credit: bool) -> dict:
    figure = figures.get(key) if key else None
    if not isinstance(figure, Mapping) or figure.get("value") is None:
        return {"key": "", "text": "—", "value": None}
    unit = str(figure.get("unit") or "")
    text = format_value(figure["value"], unit, lang, currency=currency)
    return {"key": key, "text": f"−{text}" if credit else text, "value": figure["value"]}


def pair_rows(
    section: Section | str,
    figures: Mapping[str, Any],
    lang: str,
    *,
    currency: str = "CNY",
    lease_offered: bool = True,
    keys: Mapping[str, Any] | None = None,
) -> list[dict]:
    """The rows of a two-column section (:class:`Pair` rows) for one plan in ``lang``.

    Each row: ``label``, ``buy`` and ``lease`` cells (``key`` of the figure, ``text``, ``value``) or
    one ``span`` cell, ``total`` and ``detail``.  Without a lease offer the lease column is "—" and its
    total says so; a break-even month is then left out.  A row whose figures the plan lacks is left out.
    """
    if isinstance(section, str):
        section = SECTIONS[section]
    fill = {k: str(v) for k, v in (keys or {}).items()}
    out: list[dict] = []
    for row in section.rows:
        if not isinstance(row, Pair):
            continue
        label = (
            _pick(row.label_en, row.label_zh, lang).format(**fill)
            if fill
            else _pick(row.label_en, row.label_zh, lang)
        )
        if row.span is not None:
            if not lease_offered or row.span not in figures:
                continue
            cell = _cell(row.span, figures, lang, currency, False)
            if cell["value"] is None:
                cell = {
                    "key": row.span,
                    "text": _pick(row.span_none_en, row.span_none_zh, lang),
                    "value": None,
                }
            out.append({"label": label, "span": cell, "total": row.total, "detail": row.detail})
            continue
        if not any(k and k in figures for k in (row.buy, row.lease)):
            continue
        buy = _cell(row.buy, figures, lang, currency, row.credit)
        if row.hide_zero and not _number(buy["value"]) and row.lease is None:
            continue
        lease = _cell(row.lease, figures, lang, currency, row.credit)
        if not lease_offered:
            lease = {"key": "", "text": _pick(*NO_LEASE, lang) if row.total else "—", "value": None}
        elif row.included_by and (figures.get(row.lease or "") or {}).get("inputs", {}).get(row.included_by):
            lease = {"key": row.lease or "", "text": _pick(*INCLUDED, lang), "value": lease["value"]}
        out.append({"label": label, "buy": buy, "lease": lease, "total": row.total, "detail": row.detail})
    return out


def tco_rows(
    figures: Mapping[str, Any], tco: Mapping[str, Any] | None, lang: str, *, currency: str
) -> list[dict]:
    """The buy-vs-lease table (:data:`TCO`) of one plan, as the page and the proposal both print it: the
    plan's ``tco`` says whether the lease is offered and over how many years."""
    tco = tco or {}
    return pair_rows(
        TCO,
        figures,
        lang,
        currency=currency,
        lease_offered=tco.get("lease_offered") is not False,
        keys={"years": tco.get("horizon_years", "")},
    )


def row_label(section: Section | str, key: str, lang: str) -> str:
    """The declared label of the row of ``section`` that prints ``key``: a :class:`Term`'s key, a
    :class:`Pair`'s buy, lease or span figure, or a :class:`Fig` with a label of its own — for a view
    that prints the row's heading beside a number of its own (the workbook's inputs and totals)."""
    if isinstance(section, str):
        section = SECTIONS[section]
    for row in section.rows:
        if isinstance(row, Pair):
            keys: tuple[str | None, ...] = (row.buy, row.lease, row.span)
        else:  # a figure's label is the book's unless the section names it
            keys = (row.key,) if isinstance(row, Term) or row.label_en else ()
        if key in keys:
            return _pick(row.label_en, row.label_zh, lang)
    raise KeyError(f"{section.name}.{key}")


def severity_word(severity: str, lang: str) -> str:
    """The word for a check's severity: a warning reads "warning"/"警告", never "error" (the one
    vocabulary's ``SEVERITIES``)."""
    return vocabulary.severity_label(str(severity), lang)


def worst_severity(checks: Sequence[Mapping[str, Any]], prefix: str) -> str:
    """The worst severity among the checks whose code starts with ``prefix`` ("ok" when none)."""
    order = {"ok": 0, "warning": 1, "error": 2}
    worst = "ok"
    for check in checks:
        severity = str(check.get("severity", "ok"))
        if str(check.get("code", "")).startswith(prefix) and order.get(severity, 0) > order[worst]:
            worst = severity
    return worst
