"""Formatting and "why?" derivations for plan figures (page and PDF).

The filters are thin wrappers: numbers are written by ``configurator/engine/formatting.py`` and
words come from ``configurator/engine/vocabulary.py``, as in the engine, the drawings and the PDF.
"""

from __future__ import annotations

import json
import re
from decimal import Decimal, InvalidOperation
from html import escape as _html_escape

from django import template
from django.urls import reverse
from django.utils.html import conditional_escape
from django.utils.safestring import mark_safe
from django.utils.translation import get_language

from configurator.engine import vocabulary
from configurator.engine.formatting import (
    format_bytes_gb,
    format_money,
    format_number,
    format_percent,
    format_seconds,
)
from configurator.engine.input_terms import input_label, source_ref_zh
from configurator.engine.vocabulary import is_zh
from configurator.web.forms import ConfiguratorForm

register = template.Library()

#: Where a figure's number comes from, (en, zh) by Source.kind (configurator/engine/vocabulary.py).
SOURCE_KINDS = {kind: (term.en, term.zh) for kind, term in vocabulary.SOURCE_KINDS.items()}


def _zh() -> bool:
    return is_zh(get_language())


def _num(value):
    """``value`` as a finite Decimal, or None (shown as "—")."""
    try:
        n = Decimal(str(value))
    except (InvalidOperation, ValueError, TypeError):
        return None
    return n if n.is_finite() else None


@register.filter
def gb(value, digits=1):
    """Bytes → "30.5 GB" (decimal GB, as the vendors' 64 GB)."""
    n = _num(value)
    if n is None:
        return "—"
    return format_bytes_gb(n, int(digits))


@register.filter
def thousands(value, digits=0):
    n = _num(value)
    if n is None:
        return "—"
    return format_number(n, int(digits))


@register.filter
def pct(value, digits=0):
    n = _num(value)
    if n is None:
        return "—"
    return format_percent(n, int(digits))


@register.filter
def seconds(value):
    n = _num(value)
    if n is None:
        return "—"
    return format_seconds(n)


@register.simple_tag
def money(value, currency="CNY", scaled=True):
    n = _num(value)
    if n is None:
        return "—"
    lang = "zh-hans" if _zh() else "en"
    if scaled:
        return format_money(n, currency, lang)
    return format_money(n, currency, lang, scale=1, decimals=2)


#: What ``{% term %}`` names: a table of configurator/engine/vocabulary.py by the kind of its codes.
TERM_TABLES = {
    "group": vocabulary.GROUP_LABELS,
    "role": vocabulary.ROLES,
    "node_role": vocabulary.NODE_ROLES,
    "fabric": vocabulary.FABRICS,
    "plane": vocabulary.PLANE_LABELS,
    "area": vocabulary.AREAS,
    "source": vocabulary.SOURCE_KINDS,
    "scenario": vocabulary.SCENARIOS,
}


@register.simple_tag
def term(kind, code):
    """``{% term "fabric" row.fabric %}`` → "LingQu (UB)" / "灵衢（UB）": a code in the page's language,
    as the vocabulary (and so the PDF and the drawings) spells it; an unknown code as it is."""
    found = TERM_TABLES[kind].get(str(code or ""))
    if found is None:
        return code or ""
    return found.pick("zh-hans" if _zh() else "en")


@register.simple_tag
def pick(obj, name):
    """``obj[name + '_zh']`` in Chinese (falling back to English), else ``obj[name]`` /
    ``obj[name + '_en']``."""
    if obj is None:
        return ""
    get = obj.get if isinstance(obj, dict) else (lambda k, d=None: getattr(obj, k, d))
    if _zh():
        value = get(f"{name}_zh")
        if value:
            return value
    return get(name) or get(f"{name}_en") or ""


def _format_value(value, unit):
    n = _num(value)
    if isinstance(value, bool):
        return str(_yes_no(value))
    if value is None or value == "none":  # "none": no such point (a break-even the API never reaches)
        return "—"
    if n is None:
        return str(value)
    if unit == "B":
        return gb(n)
    if unit in ("fraction", "ratio") and n <= 1:
        return pct(n, 1)
    if unit == "s":
        return seconds(n)  # as the page shows it (15 ms, not "0.01 s")
    text = format_number(n, 2, strip_zeros=True) if n != n.to_integral_value() else format_number(n, 0)
    if not unit:
        return text
    return f"{text} {vocabulary.unit_label(unit, 'zh-hans' if _zh() else 'en')}"


@register.simple_tag
def figval(figures, key, default="—"):
    """A figure's value with its unit, formatted."""
    f = (figures or {}).get(key)
    if not f:
        return default
    return _format_value(f.get("value"), f.get("unit", ""))


@register.simple_tag(takes_context=True)
def why(context, figures, key):
    """A "why?" that opens the figure's formula, inputs and source.

    On the full page (which also serves the browser without JavaScript) the explanation is inline.  In
    an htmx update (``why_on_demand`` in the context) only the "why?" is sent: opening it posts the
    form with the figure's key to ``configurator:why``, which answers with the same explanation
    (:func:`why_body`) from the plan the update made (``port.plan_cache``) — about a hundred explanations a
    page were a third of an update's rendering, and few are ever opened."""
    f = (figures or {}).get(key)
    if not f:
        return ""
    zh = _zh()
    head = [
        '<details class="why"',
        "",
        '><summary title="',
        "计算依据" if zh else "How this figure is derived",
        '">',
        "依据" if zh else "why?",
        "</summary>",
    ]
    if context.get("why_on_demand"):
        url = context.render_context.get("why_url")
        if url is None:  # once per template rendered, not once per figure
            url = context.render_context["why_url"] = _esc(reverse("configurator:why"))
        head[1] = (
            f' hx-post="{url}" hx-trigger="toggle once"'
            ' hx-target="find .why-body" hx-swap="innerHTML" hx-include="#config-form"'
            f" hx-vals='{_esc(json.dumps({'figure': key}))}'"
        )
        return mark_safe("".join(head) + '<div class="why-body small muted">…</div></details>')
    return mark_safe("".join(head) + why_body(figures, key) + "</details>")


def why_body(figures, key) -> str:
    """The explanation of figure ``key``: its label and value, formula, inputs (one level deeper where
    an input is itself a figure) and source.

    Built as one string with ``html.escape`` (``format_html`` made it the slowest part of an update)."""
    f = (figures or {}).get(key)
    if not f:
        return ""
    zh = _zh()
    source = f.get("source") or {}
    kind = source.get("kind", "derived")
    kind_label = vocabulary.source_kind_label(kind, "zh-hans" if zh else "en")
    label = (f.get("label_zh") if zh else f.get("label_en")) or f.get("label_en") or key
    parts = [
        "<div><strong>",
        _esc(label),
        "</strong> = ",
        _esc(_format_value(f.get("value"), f.get("unit", ""))),
        "</div>",
    ]
    # The formula is written over the inputs' names, as code is (the same text in both languages):
    # ``translate="no"`` says so to the browser and to the Chinese-page reader (tests/i18n).
    if f.get("formula"):
        parts += ['<div class="formula" translate="no">', _esc(f["formula"]), "</div>"]
    inputs = f.get("inputs") or {}
    if inputs:
        parts.append('<table class="small">')
        for name, value in inputs.items():
            # A value that is a code or a named mapping (a cooling kind, media counts) is data, as its name is.
            code = isinstance(value, (str, dict, list, tuple)) and _num(value) is None
            # What the name stands for, in the page's language, beside the name the formula uses.
            parts += ["<tr><td>", _esc(_input_word(figures, name, zh)), "</td>"]
            parts += ['<td class="mono small" translate="no">', _esc(name), "</td>"]
            parts.append('<td class="num" translate="no">' if code else '<td class="num">')
            parts += [_esc(_format_input(name, value)), "</td></tr>"]
        parts.append("</table>")
    parts.append(_deeper(figures, key, f, zh))
    ref = source.get("ref", "")
    parts += [
        '<div class="small muted">',
        "来源" if zh else "Source",
        ': <span class="src-',
        _esc(kind),
        '">',
        _esc(kind_label),
        "</span>",
        _source_ref(ref, kind, zh),
        "</div>",
    ]
    return mark_safe("".join(parts))


_CJK = re.compile(r"[\u4e00-\u9fff]")
_PATHS = re.compile(r"^[a-z_]+\.[a-z_.]+(, [a-z_]+\.[a-z_.]+)*$")  # an input's request fields


def _source_ref(ref: str, kind: str, zh: bool) -> str:
    """Where a figure comes from, after its kind.  In Chinese: the engine's own note translated
    (``input_terms.SOURCE_REFS_ZH``), the request fields an input comes from named as the form
    names them, and a citation of a document kept as the original, quoted (``<q lang="en">``)."""
    if not ref:
        return ""
    if not zh or _CJK.search(ref):
        return ' · <span translate="no">' + _esc(ref) + "</span>"
    if kind == "input" and _PATHS.match(ref):
        words = "、".join(_field_word(path) for path in ref.split(", "))
        return " · " + _esc(words) + ' <span class="mono small" translate="no">' + _esc(ref) + "</span>"
    translated = source_ref_zh(ref)
    if translated:
        return " · " + _esc(translated)
    return ' · 原文：<q class="cite" lang="en" translate="no">' + _esc(ref) + "</q>"


def _field_word(path: str) -> str:
    """A request field in the Chinese reader's words: the form's label, else the input table's."""
    label = str(ConfiguratorForm.describe(path, None)[0])
    if label != path:
        return label
    return input_label(path.rsplit(".", 1)[-1], "zh-hans") or path


def _input_word(figures: dict, name: str, zh: bool) -> str:
    """A formula input in words: the label of the figure of that name, else the input table's
    (``engine/input_terms.py``); empty for a name made from data (a switch, a node, a rack)."""
    keys = _by_name(figures).get(name)
    if keys:
        g = figures[keys[0]]
        label = (g.get("label_zh") if zh else g.get("label_en")) or g.get("label_en")
        if label:
            return str(label)
    return input_label(name, "zh-hans" if zh else "en")


def _esc(value) -> str:
    return _html_escape(str(value), quote=True)


_INDEX: dict = {"figures": None, "by_name": {}}


def _by_name(figures: dict) -> dict[str, list[str]]:
    """Figure keys by their last part (``decode_step_s`` → its keys), built once per plan."""
    if _INDEX["figures"] is not figures:
        by_name: dict[str, list[str]] = {}
        for k in figures:
            by_name.setdefault(k.rsplit(".", 1)[-1], []).append(k)
        _INDEX.update(figures=figures, by_name=by_name)
    return _INDEX["by_name"]


def _deeper(figures: dict, key: str, f: dict, zh: bool):
    """One level further: an input that is itself a figure shows its own
    formula, so a figure is never explained only by its own value under
    another name (TPOT = decode step time = memory time + all-to-all)."""
    by_name = _by_name(figures)
    prefix = key.rsplit(".", 1)[0]
    lines = []
    for name in f.get("inputs") or {}:
        keys = [k for k in by_name.get(name, ()) if k != key]
        if not keys:
            continue
        keys.sort(key=lambda k: (not k.startswith(prefix), k))
        g = figures[keys[0]]
        if not g.get("formula"):
            continue
        lines.append((name, g["formula"], _format_value(g.get("value"), g.get("unit", ""))))
    if not lines:
        return ""
    body = "".join(
        f'<div translate="no"><span class="mono">{_esc(name)}</span> = {_esc(formula)} = {_esc(value)}</div>'
        for name, formula, value in lines[:4]
    )
    return f'<div class="small deeper">{body}</div>'


def _yes_no(value: bool) -> str:
    return ("是" if value else "否") if _zh() else ("yes" if value else "no")


def _format_input(name, value):
    # A mapping or list input (a rack's devices, media counts) reads as "name: value" items, each
    # value formatted like a single input, never as a Python dict (issue 31).
    if isinstance(value, dict):
        return ", ".join(f"{k}: {_format_input(k, v)}" for k, v in value.items()) or "—"
    if isinstance(value, (list, tuple)):
        return ", ".join(_format_input(name, v) for v in value) or "—"
    if isinstance(value, bool):
        return _yes_no(value)
    if value is None:
        return "—"
    n = _num(value)
    if n is None:
        return str(value)
    if name.endswith("bytes") or name in {"usable", "weights", "activations", "buffers", "graphs", "device"}:
        if abs(n) >= 10**6:
            return f"{format_number(n, 0)} B ({gb(n)})"
    if n == n.to_integral_value():
        return format_number(n, 0)
    return format_number(n, 4, strip_zeros=True)


@register.filter
def severity_word(severity) -> str:
    """A check's severity in the page's language ("warning" → 警告): ``sections.severity_word``, the one
    word the page, the proposal PDF and the workbook use (the vocabulary's ``SEVERITIES``)."""
    from configurator import sections

    return sections.severity_word(str(getattr(severity, "value", severity) or ""), get_language())


@register.filter
def bottleneck_word(code) -> str:
    """The pool that limits a prefill/decode split, in the page's language."""
    return vocabulary.bottleneck_label(str(code or ""), get_language())


@register.filter
def limit_word(code) -> str:
    """What limits the design capacity, in the page's language."""
    return vocabulary.design_limit_label(str(code or ""), get_language())


@register.simple_tag
def tco_rows(figures, tco, currency="CNY"):
    """The buy-vs-lease table of this plan in the page's language: the same rows, labels and formatting
    as the proposal PDF's (``configurator.sections.tco_rows``)."""
    from configurator import sections

    return sections.tco_rows(figures or {}, tco, get_language() or "en", currency=currency or "CNY")


@register.simple_tag
def section_rows(name, figures, currency="CNY", **keys):
    """The rows of a declared section (``configurator.sections``) for this plan, in the page's language:
    the page renders the same rows, labels and formatting as the proposal PDF and the workbook.
    ``keys`` fill a templated section's keys (``rank=m.figure_prefix group=m.group_prefix``)."""
    from configurator import sections

    return sections.rows(
        name,
        figures or {},
        get_language() or "en",
        currency=currency or "CNY",
        keys={k: str(v) for k, v in keys.items()},
    )


#: The card of the configurator page a figure's key belongs to (the summary's rows link to it).
_CARD_OF_PREFIX = (
    ("performance.", "card-performance"),
    ("economics.", "card-tco"),
    ("tco.", "card-tco"),
    ("power.", "card-power"),
    ("racks.", "card-racks"),
)


@register.filter
def card_anchor(key) -> str:
    """The id of the card that explains the figure ``key`` ("power.it.max_kw" → "card-power")."""
    text = str(key or "")
    return next((card for prefix, card in _CARD_OF_PREFIX if text.startswith(prefix)), "results")


@register.simple_tag
def table_section(name, data, figures=None, currency="CNY", columns=None, items=None, classes=None, **keys):
    """A declared table section (``configurator.sections.TABLES``) for this plan, in the page's language:
    the same headings, cells and formatting as the proposal PDF and the workbook.  ``data``: the plan's
    row dicts (or the mapping the items name, or the figure book); ``columns``/``items``: the names this
    view prints, in its order; ``classes``: the counts by class its total line prints (the network's
    optics: ``plan.result.network|optics_classes``); ``keys`` fill the labels' placeholders."""
    from configurator import sections

    return sections.table(
        name,
        data,
        get_language() or "en",
        currency=currency or "CNY",
        columns=columns,
        items=items,
        figures=figures,
        keys=keys,
        classes=classes,
    )


@register.filter
def optics_classes(network):
    """The network's optical transceivers by class (``sections.optics_classes``), for a total line."""
    from configurator import sections

    return sections.optics_classes(network if isinstance(network, dict) else None)


@register.simple_tag
def section_label(name, part):
    """The declared label of a column, item or line of a table section (``part``), or its ``title``."""
    from configurator import sections

    return sections.label(name, part, get_language() or "en")


def _cell_escape(value) -> str:
    """What ``{{ value }}`` prints with autoescape on: a safe string as it is, anything else escaped."""
    return str(conditional_escape(value))


@register.simple_tag(takes_context=True)
def table_section_html(context, t, figures):
    """A declared table section (``table_section``) as the page's table: the headings, the rows with
    their cells and notes, the total line, and each row's "why?" in the last column.

    Written out here rather than by a template: a table of a dozen rows was some 600 template nodes
    (a condition, a variable and an escape per cell), a fifth of an update's rendering for the five
    tables of the results.  The markup is what the template ``configurator/_table_section.html`` printed
    before it (every update, advice and page of the six presets, both languages, compared byte for byte;
    tests/configurator/test_table_section_html.py)."""
    out = ["<table>\n  <thead><tr>"]
    for c in t["columns"]:
        out += ['<th class="num">' if c.get("num") else "<th>", _cell_escape(c.get("label", "")), "</th>"]
    out.append("<th></th></tr></thead>\n  <tbody>")
    span = f' colspan="{len(t["columns"]) - 1}"'
    for row in t["rows"]:
        out.append('\n    <tr class="total">' if row.get("total") else "\n    <tr>")
        if row.get("label"):
            out += ["<td>", _cell_escape(row["label"])]
            if row.get("note"):
                out += [' <span class="muted small">(', _cell_escape(row["note"]), ")</span>"]
            out.append("</td>")
        for c in row.get("cells") or ():
            out += [
                '<td class="',
                "num" if c.get("num") else "",
                " sev warning" if c.get("flag") else "",
                '"',
                span if row.get("span") else "",
                ">",
                _cell_escape(c.get("text", "")),
            ]
            if c.get("note"):
                out += [' <span class="muted small">', _cell_escape(c["note"]), "</span>"]
            out.append("</td>")
        out.append("<td>")
        out += [why(context, figures, k) for k in row.get("figures") or ()]
        out.append("</td></tr>\n  ")
    total = t.get("total")
    if total:
        out += ['\n    <tr class="total"><td>', _cell_escape(total.get("label", "")), "</td>"]
        for c in (total.get("cells") or [])[1:]:
            out += ['<td class="num">' if c.get("num") else "<td>", _cell_escape(c.get("text", "")), "</td>"]
        out.append("<td>")
        out += [why(context, figures, c["figure"]) for c in total.get("cells") or () if c.get("figure")]
        out.append("</td></tr>")
    out.append("\n  </tbody>\n</table>\n")
    return mark_safe("".join(out))


@register.simple_tag(takes_context=True)
def figure_rows_html(context, rows, figures):
    """Rows of a declared row section (``section_rows``) as the page's table rows: label, value and the
    figure's "why?" — the markup the template loop wrote (``<tr>`` with ``class="total"`` on a total),
    built in one string (a loop of six template nodes a row over some sixty rows an update)."""
    out = []
    for row in rows:
        out += [
            '<tr class="total"><td>' if row.get("total") else "<tr><td>",
            _cell_escape(row.get("label", "")),
            '</td><td class="num">',
            _cell_escape(row.get("text", "")),
            "</td><td>",
            why(context, figures, row.get("key", "")),
            "</td></tr>",
        ]
    return mark_safe("".join(out))


@register.simple_tag(takes_context=True)
def tco_rows_html(context, rows, figures):
    """The buy-vs-lease table's rows (``tco_rows``): a row spanning both columns or the buy and lease
    cells, each with its figures' "why?" (the lease's only when it is another figure) — the markup the
    template loop wrote, in one string."""
    out = []
    for row in rows:
        out += [
            '<tr class="total">' if row.get("total") else "<tr>",
            '<td class="small">' if row.get("detail") else "<td>",
            _cell_escape(row.get("label", "")),
            "</td>",
        ]
        span = row.get("span")
        if span:
            out += [
                '<td class="num" colspan="2">',
                _cell_escape(span.get("text", "")),
                "</td><td>",
                why(context, figures, span.get("key", "")),
                "</td>",
            ]
        else:
            buy, lease = row.get("buy") or {}, row.get("lease") or {}
            out += [
                '<td class="num">',
                _cell_escape(buy.get("text", "")),
                '</td><td class="num">',
                _cell_escape(lease.get("text", "")),
                "</td><td>",
            ]
            if buy.get("key"):
                out.append(why(context, figures, buy["key"]))
            if lease.get("key") and lease.get("key") != buy.get("key"):
                out.append(why(context, figures, lease["key"]))
            out.append("</td>")
        out.append("</tr>\n        ")
    return mark_safe("".join(out))


@register.simple_tag
def field_error_slots(form):
    """Each form field's error slot, swapped out of band by an htmx update (an emptied slot clears what a
    previous update showed): what the template's loop over the form's fields wrote, without making a
    bound field of each of its forty-odd fields an update."""
    errors = form.errors
    out = []
    for name in form.fields:
        out += ['<div class="errs" id="err-', _cell_escape(name), '" hx-swap-oob="true">']
        for e in errors.get(name) or ():
            out += ['<p class="field-error">', _cell_escape(e), "</p>"]
        out.append("</div>")
    return mark_safe("".join(out))
