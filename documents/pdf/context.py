"""What the proposal PDF shows, taken from one frozen quote revision.

Every figure comes from the revision's snapshots: the engine result
(``result_json``, shaped by ``configurator.engine.serialize.plan_to_dict``),
the inline request it was planned from (``resolved_json``), the prices
(``prices_json``) and the priced bill-of-materials rows (``BomLine``).
The plan part goes through :func:`configurator.web.presentation.context_from_dict`,
exactly as the configurator page does, so the page and the PDF show the same
numbers and the same drawings.  This module only selects, labels and orders;
it never computes a new figure.

Call :func:`proposal_context` inside ``translation.override(<quote language>)``
(:func:`documents.pdf.render.proposal_html` does).
"""

from __future__ import annotations

import html
import json
import re
import shlex
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.utils import timezone
from django.utils.safestring import mark_safe
from django.utils.translation import get_language
from django.utils.translation import gettext as _

from configurator.public import (
    SOURCE_KINDS,
    context_from_dict,
    figval,
    format_money,
    formatting,
    is_zh,
    node_name,
    power_feed_svg,
    seconds,
    svg_to_data_uri,
    tornado_svg,
    vocabulary,
)
from configurator.public import (
    sections as section_model,
)
from proposals.terms import commercial_context
from quotes.bom import NO_PRICE_NOTE, UNITS, effective_discount
from quotes.frozen import revision_prepared_by, revision_quote
from quotes.statuses import CAPEX_CATEGORIES, BomCategory, RevisionStatus

from . import story
from .delivery import delivery_context
from .fonts import FONT_FAMILY, MONO_FONT_FAMILY
from .options import comparison, comparison_table, recommendation_reason
from .story import topology_label
from .tables import pdf_table

# Scenarios whose data must stay on the customer's premises (government documents under 等保 2.0,
# bank research under financial-data rules): a public API is no alternative, so the proposal does
# not present its price as a comparison.
DATA_RESIDENCY_SCENARIOS = frozenset({"government-policy-qa", "finance-research", "financial-research"})

SEED_DOCUMENTS = {
    "S1": (
        "S1 — Kimi K3 deployment plan on Huawei Atlas 800 A3 (4, 8 and 16 nodes), source document",
        "S1 — Kimi K3 基于华为 Atlas 800 A3 的部署方案（4/8/16 节点），来源文档",
    ),
    "S2": (
        "S2 — Kimi K3 on 2 × Inspur NF5868G8, source document",
        "S2 — Kimi K3 基于 2 台浪潮 NF5868G8 的部署方案，来源文档",
    ),
}


def _pick(en: str, zh: str, lang: str) -> str:
    return zh if is_zh(lang) and zh else en


def _get(data: Any, *path: str, default: Any = None) -> Any:
    for key in path:
        if not isinstance(data, Mapping):
            return default
        data = data.get(key)
    return default if data is None else data


def css_string(text: str) -> str:
    """``text`` as a double-quoted CSS string that is safe inside a ``<style>`` element.

    Every character outside a small safe set is written as a CSS hex escape,
    so no quote, backslash, ``<`` or line break can end the string or the element.
    """
    out = []
    for ch in text:
        if ch.isalnum() or ch in " .,-_/()·:%":
            out.append(ch)
        else:
            out.append(f"\\{ord(ch):06x}")
    return '"' + "".join(out) + '"'


def page_counter_css(pattern: str) -> str:
    """A CSS ``content`` value from a translated "Page %(page)s of %(pages)s" pattern.

    ``%(page)s`` becomes ``counter(page)``, ``%(pages)s`` ``counter(pages)``;
    the words around them become escaped CSS strings.
    """
    tokens = []
    for part in re.split(r"(%\(pages?\)s)", pattern):
        if part == "%(page)s":
            tokens.append("counter(page)")
        elif part == "%(pages)s":
            tokens.append("counter(pages)")
        elif part:
            tokens.append(css_string(part))
    return " ".join(tokens) or "counter(page)"


# --------------------------------------------------------------------------- labels


def role_label(role: str, lang: str | None = None) -> str:
    """A group's role as the page names it ("serving", "预填充（P）")."""
    return vocabulary.role_label(role, lang or get_language())


def parallel_label(parallel: Mapping) -> str:
    """A group's parallel layout as the serving-groups section writes it ("TP16 · DP8 · EP128")."""
    return section_model.parallel_text(parallel)


def fabric_label(fabric: str, lang: str) -> str:
    """A fabric as the page names it ("LingQu (UB)", "灵衢（UB）")."""
    return vocabulary.fabric_label(fabric, lang)


def group_label(name: str, lang: str | None = None) -> str:
    """A serving group as the page names it: "cluster-a" → "Cluster A", "prefill" → "Prefill (P)"."""
    return vocabulary.group_label(name, lang or get_language())


def scenario_label(slug: str, lang: str) -> str:
    return vocabulary.scenario_label(slug, lang)


# --------------------------------------------------------------------------- sections


EDITIONS = ("customer", "internal")

# The rows of the design section printed beside the design capacity (configurator.sections.DESIGN).
DESIGN_BAND_KEYS = ("performance.design.concurrency_range", "economics.design_conservative.cost_per_m_output")

# Chapters of the internal edition only: the engineering appendix.
INTERNAL_SECTIONS = ("findings", "assumptions", "launch")


def section_titles(edition: str = "internal", *, options: bool = False) -> OrderedDict[str, str]:
    """The chapters of the proposal, in order (anchor → title); the table of contents lists them.

    The customer edition has no engineering appendix (every check with its
    code, the formulas and sources, the launch commands); both have the
    commercial terms and the signature page.
    """
    titles = OrderedDict(
        [
            ("summary", _("Executive summary")),
            ("options", _("Options compared")),
            ("architecture", _("Architecture and topology")),
            ("sizing", _("Sizing: accelerator memory and performance")),
            ("racks", _("Racks")),
            ("power", _("Power")),
            ("network", _("Network")),
            ("bom", _("Bill of materials")),
            ("terms", _("Commercial terms")),
            ("tco", _("Buy vs lease: total cost of ownership")),
            ("sensitivity", _("Sensitivity")),
            ("deployment", _("Deployment path and timeline")),
            ("risks", _("Risks and mitigations")),
            ("findings", _("Engineering checks")),
            ("assumptions", _("Assumptions and sources")),
            ("launch", _("Appendix: launch configuration")),
            ("signature", _("Signatures")),
        ]
    )
    if edition != "internal":
        for key in INTERNAL_SECTIONS:
            titles.pop(key)
    if not options:
        titles.pop("options")
    return titles


def drawing(svg: str) -> dict[str, str] | None:
    """An SVG drawing as an ``<img>`` source (a data: URI) with its accessible label.

    The proposal embeds drawings as images rather than inline markup: the HTML
    parser and the style cascade then skip thousands of SVG nodes (a faster
    render), and no document style can leak into a drawing.
    """
    if not svg:
        return None
    label = re.search(r'aria-label="([^"]*)"', svg[:2000])
    return {"uri": svg_to_data_uri(svg), "alt": html.unescape(label.group(1)) if label else ""}


def _figure_label(figure: Mapping, lang: str) -> str:
    return _pick(figure.get("label_en", ""), figure.get("label_zh", ""), lang)


def _assumed_figures(figures: Mapping, lang: str) -> list[dict]:
    """Every figure of the plan whose source is an assumption, with its value and note."""
    rows = []
    seen = set()
    for key, figure in figures.items():
        source = figure.get("source") or {}
        if source.get("kind") != "assumed":
            continue
        label = _figure_label(figure, lang)
        value = figval(figures, key)
        signature = (label, value, source.get("ref", ""))
        if signature in seen:  # identical P and D figures are listed once
            continue
        seen.add(signature)
        rows.append({"key": key, "label": label, "value": value, "ref": source.get("ref", "")})
    return rows


def _lookup_field(obj: Mapping, dotted: str) -> Any:
    value: Any = obj
    for part in dotted.split("."):
        if isinstance(value, Mapping) and part in value:
            value = value[part]
        else:
            return None
    return value


def _format_plain(value: Any) -> str:
    if value is None or isinstance(value, (dict, list)):
        return "—"
    if isinstance(value, bool):
        return _("yes") if value else _("no")
    if (isinstance(value, float) and value.is_integer()) or isinstance(value, int):
        return formatting.thousands(value)
    return str(value)


def _assumed_inputs(resolved: Mapping, used_switches: set[str]) -> list[dict]:
    """Catalog values the plan used whose source is an assumption (model, server, site, rack, switches)."""
    objects: list[Mapping] = []
    for name in ("model", "server", "site", "rack"):
        obj = resolved.get(name)
        if isinstance(obj, Mapping):
            objects.append(obj)
    for switch in resolved.get("switches") or []:
        if isinstance(switch, Mapping) and switch.get("slug") in used_switches:
            objects.append(switch)
    rows = []
    for obj in objects:
        for field, source in (obj.get("sources") or {}).items():
            if not isinstance(source, Mapping) or source.get("kind") != "assumed":
                continue
            rows.append(
                {
                    "object": str(obj.get("name") or obj.get("slug") or ""),
                    "field": field,
                    "value": _format_plain(_lookup_field(obj, field)),
                    "ref": source.get("ref", ""),
                }
            )
    return rows


def _sources(figures: Mapping, resolved: Mapping, lang: str) -> dict[str, list[dict]]:
    """Seed and public sources the plan relied on: reference → the figures that use it."""
    by_kind: dict[str, OrderedDict[str, list[str]]] = {"seed": OrderedDict(), "public": OrderedDict()}
    for figure in figures.values():
        source = figure.get("source") or {}
        kind, ref = source.get("kind"), source.get("ref", "")
        if kind in by_kind and ref:
            labels = by_kind[kind].setdefault(ref, [])
            label = _figure_label(figure, lang)
            if label and label not in labels:
                labels.append(label)
    for name in ("model", "server", "site", "rack"):
        obj = resolved.get(name)
        if not isinstance(obj, Mapping):
            continue
        for field, source in (obj.get("sources") or {}).items():
            if not isinstance(source, Mapping):
                continue
            kind, ref = source.get("kind"), source.get("ref", "")
            if kind in by_kind and ref:
                labels = by_kind[kind].setdefault(ref, [])
                label = f"{obj.get('name') or obj.get('slug')} · {field}"
                if label not in labels:
                    labels.append(label)
    return {
        kind: [{"ref": ref, "uses": uses} for ref, uses in refs.items()] for kind, refs in by_kind.items()
    }


def _seed_documents(sources: Mapping[str, list[dict]], lang: str) -> list[str]:
    used = set()
    for rows in sources.values():
        for row in rows:
            for code in SEED_DOCUMENTS:
                if re.search(rf"\b{code}\b", row["ref"]):
                    used.add(code)
    return [_pick(*SEED_DOCUMENTS[code], lang) for code in sorted(used)]


RACKS_PER_FEED_DRAWING = 4


def _power_feed_drawings(racks: list[dict], power: Mapping | None, lang: str) -> list[dict]:
    """The A/B one-line diagram of the racks (the configurator's drawing), four racks per drawing
    so that its labels stay legible on A4."""
    rows = []
    for item in racks:
        rack = item["rack"]
        feed = rack.get("feed") or {}
        rows.append(
            {
                "name": rack.get("name", ""),
                "kw": float(rack.get("kw") or 0),
                "breaker": f"{feed.get('breaker_amps', '—')} A",
                "tone": "warning" if rack.get("exceeds_cooling") else "ok",
            }
        )
    recommended = (power or {}).get("recommended_feed") or {}
    step = RACKS_PER_FEED_DRAWING
    out = []
    for i in range(0, len(rows), step):
        feeds = None
        if recommended:
            # One hall feed A and one feed B, however many drawings the racks need: each feed is
            # named with its own circuit (not "× 2 (A/B)"), and a later drawing says it continues
            # the same two feeds instead of drawing another pair of buses.
            circuits = int(recommended.get("circuits") or 1)
            circuit = (
                f"{circuits} × {recommended.get('breaker_amps')} A"
                if circuits > 1
                else f"{recommended.get('breaker_amps')} A"
            )
            text = _("%(circuit)s, three-phase %(volts)s V") % {
                "circuit": circuit,
                "volts": formatting.thousands(recommended.get("voltage_ll") or 0),
            }
            if i:
                text = _("the same feed, continued (racks %(first)s–%(last)s)") % {
                    "first": rows[i]["name"],
                    "last": rows[min(i + step, len(rows)) - 1]["name"],
                }
            feeds = {"A": text, "B": text}
        out.append(drawing(power_feed_svg(rows[i : i + step], lang, feeds=feeds)))
    return out


def _risks(plan: Mapping, resolved: Mapping, lang: str, *, internal: bool = True) -> list[dict]:
    """The risks and limits every board should read, with this plan's own figures."""
    model = resolved.get("model") or {}
    serving = story.launched_serving(plan.get("result") or plan, resolved)
    workload = resolved.get("workload") or {}
    performance = plan.get("performance") or {}
    power = plan.get("power") or {}
    racks = plan.get("result", {}).get("racks") or {}
    risks = []

    ttft = performance.get("ttft_s")
    risks.append(
        {
            "title": _("Long time to first token at very long context"),
            "text": _(
                "The model accepts up to %(max_context)s tokens of context, but prefill time grows with "
                "the prompt: at 1M tokens the first token takes tens of seconds to minutes. The estimated "
                "time to first token of this proposal (%(ttft)s) is for %(input)s-token prompts; this "
                "configuration serves at most %(max_len)s tokens per request."
            )
            % {
                "max_context": formatting.thousands(int(model.get("max_context") or 0)),
                "ttft": seconds(ttft),  # the page's and the PDF's own "seconds" filter
                "input": formatting.thousands(int(workload.get("input_tokens") or 0)),
                "max_len": formatting.thousands(int(serving.get("max_model_len") or 0)),
            },
        }
    )

    recommended = power.get("recommended_feed") or {}
    risks.append(
        {
            "title": _("Power and cooling prerequisites"),
            "text": _(
                "The hall must provide %(it_kw)s kW of IT load (%(facility_kw)s kW with PUE %(pue)s) on "
                "A/B redundant three-phase feeds of %(feeds)s, and cool up to %(rack_kw)s kW per rack. "
                "Racks above the air-cooling limit need aisle containment or liquid cooling; confirm both "
                "with the facilities team before ordering."
            )
            % {
                "it_kw": formatting.thousands(float(power.get("it_kw") or 0), 1),
                "facility_kw": formatting.thousands(float(power.get("facility_kw") or 0), 1),
                "pue": power.get("pue", "—"),
                "feeds": _pick(
                    recommended.get("description_en", "—"), recommended.get("description_zh", ""), lang
                ),
                "rack_kw": formatting.thousands(float(racks.get("max_rack_kw") or 0), 1),
            },
        }
    )

    licence = str(model.get("licence_note") or "")
    risks.append(
        {
            "title": _("Model licence threshold"),
            "text": _(
                "Commercial use is allowed, but offering the model as a service (MaaS) with revenue above "
                "US$20 M over 12 consecutive months needs a separate agreement with the model vendor. "
                "Have legal review the licence."
            ),
            "note": licence if licence and not is_zh(lang) else "",
        }
    )

    risks.append(
        {
            "title": _("Estimates to be confirmed by a load test"),
            "text": (
                _pick(performance.get("note_en", ""), performance.get("note_zh", ""), lang)
                if internal
                else ""
            )
            or _(
                "Throughput and latency are estimates from a serving model calibrated against published "
                "measurements; the acceptance test on the delivered cluster confirms them."
            ),
        }
    )

    placeholders = (plan.get("launch") or {}).get("placeholders") or []
    if placeholders and not internal:
        risks.append(
            {
                "title": _("Site values to be filled in at installation"),
                "text": _(
                    "The node addresses, network interfaces and model storage path of the customer's site "
                    "are entered into the launch configuration at installation; the cluster does not start "
                    "until they are."
                ),
            }
        )
    elif placeholders:
        risks.append(
            {
                "title": _("Site values still missing in the launch configuration"),
                "text": _(
                    "The start scripts contain placeholders (%(names)s) that must be replaced with this "
                    "site's values; the scripts refuse to start until they are."
                )
                % {"names": ", ".join(placeholders)},
            }
        )
    return risks


def _json_value(token: str) -> Any:
    if not token.startswith(("{", "[")):
        return None
    try:
        return json.loads(token)
    except ValueError:
        return None


def _json_diff(values: list[Any], path: str = "") -> tuple[Any, list[tuple[str, list[Any]]]]:
    """One JSON document for all nodes: leaves that differ become ``<path>`` markers, listed with their values."""
    first = values[0]
    if all(isinstance(v, dict) for v in values) and all(v.keys() == first.keys() for v in values):
        merged, columns = {}, []
        for key in first:
            merged[key], sub = _json_diff([v[key] for v in values], f"{path}.{key}" if path else key)
            columns += sub
        return merged, columns
    if all(isinstance(v, list) for v in values) and all(len(v) == len(first) for v in values):
        merged_list, columns = [], []
        for i in range(len(first)):
            item, sub = _json_diff([v[i] for v in values], f"{path}[{i}]")
            merged_list.append(item)
            columns += sub
        return merged_list, columns
    if all(v == first for v in values):
        return first, []
    name = path.rsplit(".", 1)[-1] or "value"
    return f"<{name}>", [(name, values)]


def _compact_json(obj: Any, indent: int = 4, width: int = 84) -> str:
    """JSON on as few lines as fit ``width``: an object or list that fits stays on one line."""
    flat = json.dumps(obj, ensure_ascii=False)
    if len(flat) + indent <= width or not isinstance(obj, (dict, list)) or not obj:
        return flat
    pad = " " * (indent + 1)
    if isinstance(obj, dict):
        items = [f"{pad}{json.dumps(k)}: {_compact_json(v, indent + 1, width)}" for k, v in obj.items()]
        return "{\n" + ",\n".join(items) + "\n" + " " * indent + "}"
    items = [pad + _compact_json(v, indent + 1, width) for v in obj]
    return "[\n" + ",\n".join(items) + "\n" + " " * indent + "]"


def _format_command(tokens: list[str]) -> str:
    """One argument per line, each line ending in a shell continuation, JSON values indented inside
    their quotes: no line is long enough to wrap, so no flag is ever broken across lines."""
    head: list[str] = []
    i = 0
    while i < len(tokens) and not tokens[i].startswith("-"):
        head.append(tokens[i])
        i += 1
    lines = [" ".join(shlex.quote(t) if not t.startswith("<") else t for t in head)]
    while i < len(tokens):
        flag = tokens[i]
        value = None
        if i + 1 < len(tokens) and not tokens[i + 1].startswith("--"):
            value = tokens[i + 1]
            i += 1
        i += 1
        if value is None:
            lines.append(f"  {flag}")
            continue
        parsed = _json_value(value)
        if parsed is not None:
            lines.append(f"  {flag} '" + _compact_json(parsed) + "'")
        elif value.startswith("<") and value.endswith(">"):
            lines.append(f"  {flag} {value}")
        else:
            lines.append(f"  {flag} {shlex.quote(value)}")
    return " \\\n".join(lines)


def _command_view(nodes: list[Mapping]) -> dict:
    """One command block for nodes whose commands differ only in values, with the per-node values in a
    table; otherwise one block per distinct command (and the nodes that run it)."""
    argvs = [[list(map(str, c)) for c in node.get("argv") or ()] for node in nodes]
    uniform = bool(argvs) and all(len(a) == 1 for a in argvs)
    if uniform:
        tokens = [a[0] for a in argvs]
        width = len(tokens[0])
        uniform = all(len(t) == width for t in tokens) and all(
            len({t[i] for t in tokens}) == 1 for i in range(width) if tokens[0][i].startswith("--")
        )
    if not uniform:
        blocks: OrderedDict[str, list[int]] = OrderedDict()
        for node, argv in zip(nodes, argvs, strict=True):
            text = "\n".join(_format_command(c) for c in argv) or str(node.get("command") or "")
            blocks.setdefault(text, []).append(int(node.get("index", 0)))
        return {"blocks": [{"command": c, "nodes": n} for c, n in blocks.items()], "columns": [], "rows": []}
    merged: list[str] = []
    columns: list[str] = []
    per_node: list[list[str]] = [[] for _ in nodes]
    for i in range(len(tokens[0])):
        values = [t[i] for t in tokens]
        if len(set(values)) == 1:
            merged.append(values[0])
            continue
        flag = tokens[0][i - 1] if i and tokens[0][i - 1].startswith("--") else f"arg{i}"
        parsed = [_json_value(v) for v in values]
        if all(p is not None for p in parsed):
            doc, diffs = _json_diff(parsed)
            merged.append(json.dumps(doc, ensure_ascii=False))
            for name, vals in diffs:
                columns.append(name)
                for row, v in zip(per_node, vals, strict=True):
                    row.append(str(v))
            continue
        name = flag.lstrip("-")
        merged.append(f"<{name}>")
        columns.append(name)
        for row, v in zip(per_node, values, strict=True):
            row.append(v)
    return {
        "blocks": [{"command": _format_command(merged), "nodes": [int(n.get("index", 0)) for n in nodes]}],
        "columns": columns,
        "rows": per_node,
    }


def _launch_groups(launch: Mapping, server_name: str = "") -> list[dict]:
    """The launch appendix, per serving group: the environment its nodes share, the command once with
    ``<name>`` markers, and a table of what differs per node (its own variables and those values)."""
    groups: OrderedDict[str, list[Mapping]] = OrderedDict()
    for node in launch.get("nodes") or []:
        groups.setdefault(str(node.get("group", "")), []).append(node)
    out = []
    for name, nodes in groups.items():
        envs = [dict(node.get("env") or {}) for node in nodes]
        common = dict(envs[0]) if envs else {}
        for env in envs[1:]:
            common = {k: v for k, v in common.items() if env.get(k) == v}
        if len(nodes) == 1:
            common = {}
        env_columns = sorted({k for env in envs for k in env if k not in common})
        view = _command_view(list(nodes))
        rows = []
        for i, (node, env) in enumerate(zip(nodes, envs, strict=True)):
            rows.append(
                {
                    "name": node_name(int(node.get("index", 0))),
                    "index": node.get("index"),
                    "host": node.get("host", ""),
                    "script": node.get("script", ""),
                    "role_label": vocabulary.node_role_label(str(node.get("role", "")), get_language())
                    if node.get("role") in ("master", "worker")
                    else role_label(str(node.get("role", ""))),
                    "env": [env.get(k, "") for k in env_columns],
                    "values": view["rows"][i] if view["rows"] else [],
                }
            )
        out.append(
            {
                "name": name,
                "label": group_label(name),
                "common_env": common,
                "env_columns": env_columns,
                "columns": view["columns"],
                "blocks": view["blocks"],
                "nodes": rows,
            }
        )
    return out


def _sensitivity_groups(tco: Mapping | None, lang: str) -> list[dict]:
    """Sensitivity rows grouped by basis (buy, lease), each with its own tornado chart.

    One chart per basis, because the bars of a tornado start at one base value:
    the purchase and the lease have different bases.
    """
    if not tco:
        return []
    currency = tco.get("currency", "CNY")

    def money(value) -> str:
        return format_money(value, currency, lang, scale=1, decimals=2)

    groups: OrderedDict[str, list[dict]] = OrderedDict()
    for row in tco.get("sensitivity") or []:
        unit = {
            "utilisation": _("share of the year"),
            "throughput": _("output tokens/s"),
            "lease_price": _("%(currency)s per server-month") % {"currency": currency},
        }.get(str(row.get("parameter", "")), row.get("unit", ""))
        groups.setdefault(row.get("basis", ""), []).append(
            {**row, "unit": unit, "label": _pick(row.get("label_en", ""), row.get("label_zh", ""), lang)}
        )
    titles = {"buy": _("Purchase"), "lease": _("Lease")}
    out = []
    for basis, rows in groups.items():
        bars = [
            {
                "label": row["label"],
                "low_value": float(row["cost_at_low"]),
                "high_value": float(row["cost_at_high"]),
                "low_label": "−20%",
                "high_label": "+20%",
            }
            for row in rows
        ]
        svg = tornado_svg(bars, float(rows[0]["cost_at_base"]), lang, money) if rows else ""
        out.append({"basis": basis, "title": titles.get(basis, basis), "rows": rows, "drawing": drawing(svg)})
    return out


def _measured(revision) -> dict[str, Any] | None:
    """A measured vllm bench serve result attached to the revision (quotes/benchmarks/views.py)."""
    from quotes.benchmarks.views import measured_context

    return measured_context(revision)


def _sizing(result: Mapping, tokens: Mapping, *, internal: bool) -> dict[str, Any] | None:
    """The design capacity and the cost per million tokens at it and at the stated load (both
    labelled), and whether the saving against the API may be printed: the customer edition never
    prints a negative saving; it says what the cluster buys instead (issue 25)."""
    design_point = _get(result, "performance", "design_point")
    economics = result.get("economics") or {}
    design, stated = economics.get("design"), economics.get("stated")
    saving = tokens.get("saving_vs_api_buy")
    saving_dec = Decimal(str(saving)) if saving is not None else None
    out: dict[str, Any] = {
        "show_saving": saving_dec is not None and (internal or saving_dec >= 0),
        "api_cheaper": saving_dec is not None and saving_dec < 0,
    }
    if not isinstance(design_point, Mapping) or not design_point.get("concurrency") or not design:
        return out
    out.update(
        design_concurrency=design_point["concurrency"],
        # A latency target out of reach: the design point is the best-effort one (performance/design.py).
        design_best_effort=design_point.get("limited_by") == "unreachable",
        design_output_tokens_per_s=design_point.get("output_tokens_per_s"),
        design_cost_per_m_input=design.get("cost_per_m_input"),
        design_cost_per_m_output=design.get("cost_per_m_output"),
        stated_concurrency=(stated or {}).get("concurrency"),
        stated_cost_per_m_input=(stated or {}).get("cost_per_m_input"),
        stated_cost_per_m_output=(stated or {}).get("cost_per_m_output"),
        load_share=economics.get("load_share"),
        right_sized=economics.get("right_sized"),
    )
    return out


def _requirement(result: Mapping, resolved: Mapping, scenario: str, lang: str) -> dict[str, Any]:
    """The customer's requirement as the plan states it: the stated load, the latency targets beside
    the estimate at that load (``performance.sla``), the availability target, and where they came
    from; ``targets_missed`` when the estimate misses a stated target (then no "recommended")."""
    workload = resolved.get("workload") or {}
    design = _get(result, "performance", "design_point") or {}
    rows = story.requirement_rows(result)
    assumed = bool(design.get("targets_assumed")) and not rows
    performance = result.get("performance") or {}
    # the estimate at the stated load beside each assumed target, as for a stated one (performance's P90s)
    at_load = {
        "ttft_p90_s": performance.get("ttft_p90_s"),
        "tpot_p90_ms": float(performance["tpot_p90_s"]) * 1000 if performance.get("tpot_p90_s") else None,
    }
    assumed_targets = [
        {
            "label": story.target_labels()[key][0],
            "target": story.target_value(key, value),
            "estimate": story.target_value(key, at_load.get(key)),
        }
        for key, value in (design.get("targets") or {}).items()
        if key in story.target_labels()
    ] if assumed else []  # fmt: skip
    availability = workload.get("availability_target")
    return {
        "concurrency": workload.get("concurrency"),
        "input_tokens": workload.get("input_tokens"),
        "output_tokens": workload.get("output_tokens"),
        "rows": rows,
        "assumed": assumed_targets,
        "availability": float(availability) if availability is not None else None,
        "scenario": scenario_label(scenario, lang) if scenario else "",
        "targets_missed": any(not row["met"] for row in rows),
    }


def _residual(figures: Mapping, resolved: Mapping, request: Mapping) -> dict[str, Any] | None:
    """The residual value as a stated assumption: its amount and share of the servers' net price, where
    it comes from (the request's own figure, or the default: the straight-line book value, an
    accounting value and not a resale price; configurator.engine.tco.lease.book_value_fraction), and
    its effect: the purchase TCO with it (``tco.buy_total``) and without it
    (``tco.buy_total_without_residual``), both figures of the plan.  None without a residual value."""

    def value(key: str) -> Any:
        figure = figures.get(key)
        return figure.get("value") if isinstance(figure, Mapping) else None

    amount = value("tco.residual_value")
    if not amount or Decimal(str(amount)) == 0:
        return None
    commercial = resolved.get("commercial") or {}
    stated = isinstance(request.get("commercial"), Mapping) and (
        "residual_value_fraction" in request["commercial"]
    )
    return {
        "amount": amount,
        "fraction": float(commercial.get("residual_value_fraction") or 0),
        "stated": stated,
        "depreciation_years": commercial.get("depreciation_years"),
        "tco_with": value("tco.buy_total"),
        "tco_without": value("tco.buy_total_without_residual"),
    }


def _cost_items(tco: Mapping, sizing: Mapping, data_residency: bool) -> list[str]:
    """The lines of the cost-per-token section the proposal prints: the design capacity's where there is
    one, the lease where it is offered, the public API where it is a comparison, and the saving where
    the edition may print it (the customer edition never prints a negative one)."""
    items = ["buy"]
    if sizing.get("design_concurrency"):
        items.append("design")
    if tco.get("lease_offered") is not False:
        items.append("lease")
    if not data_residency:
        items.append("api")
        if sizing.get("show_saving"):
            items.append("saving")
    return items


def chapter_tables(
    result: Mapping,
    figures: Mapping,
    tco: Mapping | None,
    planes: Mapping,
    sizing: Mapping,
    lang: str,
    *,
    internal: bool,
    data_residency: bool,
    currency: str,
) -> dict[str, Any]:
    """The declared table sections of the chapters (``configurator.sections`` TABLES), rendered as the
    configurator page renders them, with the PDF's column widths: the serving groups (architecture),
    the racks with their cooling and, in the facilities part, heat, PDUs and floor loading; the feeds
    and breakers (the source document's method beside the recommended one in the internal edition),
    power per serving group and per rack; the network's fabrics with the optics counted by class and
    the switched planes with their ports; the cost per million tokens."""
    racks = (result.get("racks") or {}).get("racks") or []
    power = result.get("power") or {}
    network = result.get("network") or {}
    # a fabric row with neither switches nor ports (nothing to buy or cable) is not printed
    fabrics = [r for r in network.get("rows") or [] if r.get("switches") or r.get("ports_needed")]
    tokens = (tco or {}).get("tokens") or {}
    economics = result.get("economics") or {}
    return {
        "groups_table": pdf_table(
            "groups",
            (result.get("layout") or {}).get("groups") or [],
            lang,
            widths=(14, 16, 10, 11, 34, 15),
            styles={"parallelism": "mono"},
        ),
        "racks_table": pdf_table(
            "per_rack",
            racks,
            lang,
            columns="rack units_used servers kw design_kw cooling_limit cooling feeds",
            widths=(8, 11, 9, 11, 11, 12, 16, 22),
        ),
        "facilities_table": pdf_table(
            "per_rack",
            racks,
            lang,
            columns="rack kw heat pdu sockets weight floor_load",
            widths=(9, 9, 13, 19, 20, 13, 17),
            flags=False,
        ),
        "feeds_table": pdf_table(
            "feeds",
            power,
            lang,
            columns="load power_factor derating current required utilisation circuit",
            items="seed_feed recommended_feed" if internal else "recommended_feed",
            widths=(22, 10, 5, 10, 10, 14, 13, 16),
            sub=True,
        ),
        "power_groups_table": pdf_table(
            "power_groups",
            power.get("groups") or [],
            lang,
            columns="group nodes it_kw current_per_feed utilisation circuit",
            widths=(16, 10, 16, 16, 16, 26),
        ),
        "power_racks_table": pdf_table(
            "per_rack",
            racks,
            lang,
            columns="rack kw current_per_feed required breaker utilisation circuit",
            widths=(10, 11, 14, 13, 11, 14, 27),
            flags=False,
        ),
        "network_table": pdf_table(
            "network",
            fabrics,
            lang,
            figures=figures,
            columns="fabric plane scope ports_needed switch switches optics cables"
            + (" note" if internal else ""),
            classes=section_model.optics_classes(network),
            under={"plane": "fabric"},
            styles={"note": "small"},
            widths=(15, 10, 7, 19, 8, 11, 8, 22) if internal else (20, 12, 9, 27, 9, 12, 11),
        ),
        "planes_table": pdf_table(
            "network_planes",
            planes.get("planes") or [],
            lang,
            note_under=("plane",),
            widths=(22, 7, 21, 8, 8, 8, 7, 9, 10),
        ),
        "cost_table": pdf_table(
            "cost_per_token",
            figures,
            lang,
            figures=figures,
            currency=currency,
            items=_cost_items(tco or {}, sizing, data_residency),
            keys={
                "stated": formatting.thousands(sizing.get("stated_concurrency") or 0),
                "design": formatting.thousands(sizing.get("design_concurrency") or 0),
                "rate": formatting.thousands((tco or {}).get("usd_rate") or 0, 2),
                "unit": currency,
                "basis": economics.get("basis"),
            },
            widths=(46, 27, 27),
        )
        if tokens
        else None,
    }


@dataclass
class Snapshot:
    """One revision as the chapters read it: its frozen snapshots, the plan as the configurator page
    shows it (``context_from_dict``), its checks worded, its bill of materials and commercial terms."""

    revision: Any
    lang: str
    internal: bool
    zh: bool
    quote: Any
    result: dict
    resolved: dict
    request: dict
    scenario: str
    plan: dict
    figures: dict
    server: dict
    topology: dict
    layout: dict
    tco: dict | None
    network: dict
    checks: list[dict]
    lines: list
    commercial: dict
    sizing: dict
    delivery: dict

    @property
    def currency(self) -> str:
        return str(self.revision.currency)

    @property
    def workload(self) -> dict:
        return self.resolved.get("workload") or {}

    def checks_of(self, *prefixes: str) -> list[dict]:
        return [c for c in self.checks if c["code"].startswith(prefixes)]


def _bom_lines(revision, zh: bool) -> list:
    """The revision's bill-of-materials lines, each with its description, category and unit as this
    language prints them."""
    lines = list(revision.lines.all())
    for line in lines:
        line.display_description = line.description_zh if zh and line.description_zh else line.description_en
        line.display_category = (
            str(BomCategory(line.category).label) if line.category in BomCategory.values else line.category
        )
        line.display_unit = _(line.unit) if line.unit in UNITS else line.unit  # marked in quotes.bom
    return lines


def _purchase_lines(snap: Snapshot) -> list:
    """The lines bought (not the lease alternative), each with its net after the project discount."""
    purchase = [line for line in snap.lines if line.category != BomCategory.LEASE]
    quote_discount = Decimal(snap.revision.discount or 0)
    for line in purchase:
        line.applies_quote_discount = line.category in CAPEX_CATEGORIES and bool(quote_discount)
        line.display_net = snap.commercial["line_nets"][id(line)]
        line.display_discount = effective_discount(line.discount, quote_discount, line.applies_quote_discount)
    return purchase


def snapshot(revision, lang: str, edition: str) -> Snapshot:
    """The revision's snapshots read once for every chapter: the plan, the server (by its Chinese name in
    Chinese), the checks with their severity word, the BOM lines and the quote's commercial terms."""
    if edition not in EDITIONS:
        raise ValueError(f"edition must be one of {', '.join(EDITIONS)}")
    zh = is_zh(lang)
    result = revision.result_json if isinstance(revision.result_json, dict) else {}
    resolved = revision.resolved_json if isinstance(revision.resolved_json, dict) else {}
    request = revision.request_json if isinstance(revision.request_json, dict) else {}
    scenario = str(request.get("scenario") or resolved.get("scenario") or "")
    plan = context_from_dict(result, lang, api_comparison=scenario not in DATA_RESIDENCY_SCENARIOS)
    server = resolved.get("server") or {}
    if zh:  # catalog rows carry their Chinese names (name_zh); vendors by their Chinese names
        server = {
            **server,
            "name": server.get("name_zh") or server.get("name", ""),
            "vendor": vocabulary.vendor_label(str(server.get("vendor") or ""), "zh-hans"),
        }
    lines = _bom_lines(revision, zh)
    workload = resolved.get("workload") or {}
    commercial = commercial_context(
        revision,
        [line for line in lines if line.category != BomCategory.LEASE],
        lang,
        benchmark={
            "output_tokens_per_s": (plan.get("performance") or {}).get("output_tokens_per_s"),
            "input_tokens": workload.get("input_tokens"),
            "output_tokens": workload.get("output_tokens"),
            "concurrency": workload.get("concurrency"),
        },
    )
    tco = plan.get("tco") or None
    return Snapshot(
        revision=revision,
        lang=lang,
        internal=edition == "internal",
        zh=zh,
        quote=revision_quote(revision),
        result=result,
        resolved=resolved,
        request=request,
        scenario=scenario,
        plan=plan,
        figures=plan["figures"],
        server=server,
        topology=resolved.get("topology") or {},
        layout=plan.get("layout") or {},
        tco=tco,
        network=plan.get("network") or {},
        checks=[
            {**c, "severity_label": section_model.severity_word(c["severity"], lang)} for c in plan["checks"]
        ],
        lines=lines,
        commercial=commercial,
        sizing=_sizing(result, (tco or {}).get("tokens") or {}, internal=edition == "internal"),
        delivery=delivery_context(revision, lang),
    )


def cover_context(snap: Snapshot, edition: str, option_columns: list) -> dict[str, Any]:
    """The cover, the contents and what every page prints: the quote's header as issued, the chapters
    of this edition with their numbers, the fonts and the running header and footer."""
    revision, quote = snap.revision, snap.quote
    sections = section_titles(edition, options=bool(option_columns))
    return {
        "lang": snap.lang,
        "zh": snap.zh,
        "plan": snap.plan,
        "figures": snap.figures,
        "quote": quote,
        "revision": revision,
        "customer": quote.customer,
        "title": quote.title,
        "date": timezone.localtime(revision.issued_at or revision.created_at).date(),
        "prepared_by": revision_prepared_by(revision),
        "is_draft": revision.status != RevisionStatus.ISSUED,
        "currency": revision.currency,
        "sections": sections,
        "toc": [{"anchor": k, "title": v, "number": i} for i, (k, v) in enumerate(sections.items(), 1)],
        "numbers": {k: i for i, k in enumerate(sections, 1)},
    }


def page_style_context(snap: Snapshot) -> dict[str, Any]:
    """The fonts and the running header and footer (CSS strings: the page counter, the edition, draft
    or confidential)."""
    status = _("Draft — not issued") if snap.revision.status != RevisionStatus.ISSUED else _("Confidential")
    return {
        "font_family": mark_safe(FONT_FAMILY),  # constants of this module, not user text
        "mono_font_family": mark_safe(MONO_FONT_FAMILY),
        "page_counter_css": mark_safe(page_counter_css(_("Page %(page)s of %(pages)s"))),
        "header_suffix_css": mark_safe(css_string(" · " + _("Deployment plan"))),
        "footer_status_css": mark_safe(
            css_string(
                (_("Internal edition: not for the customer") + " · " if snap.internal else "") + status
            )
        ),
    }


def summary_context(snap: Snapshot) -> dict[str, Any]:
    """The executive summary: what is deployed (model, servers, topology, the serving groups and their
    parallel layout), the requirement beside the estimate, the headline figures (the engine's blended
    cost per million tokens, the design capacity) and, in the internal edition, the verdicts."""
    lang, resolved, topology, layout, server = (
        snap.lang,
        snap.resolved,
        snap.topology,
        snap.layout,
        snap.server,
    )
    groups = [
        {
            **group,
            "label": group_label(str(group.get("name", ""))),
            "role_label": role_label(group.get("role", "")),
            "parallel_label": parallel_label(group.get("parallel") or {}),
        }
        for group in layout.get("groups") or []
    ]
    opening, closing = ("（", "）") if snap.zh else (" (", ")")
    tokens = (snap.tco or {}).get("tokens") or {}
    return {
        "model": resolved.get("model") or {},
        "server": server,
        "accelerator": server.get("accelerator") or {},
        "topology": topology,
        "topology_label": topology_label(topology, lang),
        "serving": story.launched_serving(snap.result, resolved),
        "workload": snap.workload,
        "site": resolved.get("site") or {},
        "rack_spec": resolved.get("rack") or {},
        "scenario_label": scenario_label(snap.scenario, lang),
        "nodes": layout.get("nodes") or topology.get("nodes"),
        "devices_per_node": layout.get("devices_per_node"),
        "groups": groups,
        # The engine's blended cost per million tokens (tco.tokens.cost_per_m_blended_buy); the PDF
        # computes none of its own.
        "token_headline": {"self_hosted": tokens.get("cost_per_m_blended_buy")}
        if tokens.get("cost_per_m_blended_buy") is not None
        else None,
        "sizing": snap.sizing,
        "requirement": _requirement(snap.result, resolved, snap.scenario, lang),
        "problems": [c for c in snap.checks if c["severity"] != "ok"],
        "verdicts": [
            {
                **v,
                "text": _("%(area)s: %(verdict)s")
                % {"area": v["label"], "verdict": section_model.severity_word(v["severity"], lang)},
            }
            for v in snap.plan["verdicts"]
        ],
        "layout_summary": ("；" if snap.zh else "; ").join(
            f"{g['role_label']} {g['parallel_label']}{opening}{g.get('nodes')} × {server.get('name', '')}{closing}"
            for g in groups
        ),
        "first_node_name": node_name(0),
        "paren_open": opening.strip(),
        "paren_close": closing,
        "data_residency": snap.scenario in DATA_RESIDENCY_SCENARIOS,
        "tco_valid": bool(snap.tco) and snap.tco.get("valid", True) is not False,
    }


def options_context(snap: Snapshot, option_columns: list) -> dict[str, Any]:
    """The options compared (good/better/best): their columns, the table and why one is recommended."""
    return {
        "option_columns": option_columns,
        "option_table": comparison_table(option_columns) if option_columns else [],
        "option_reason": recommendation_reason(option_columns, snap.workload.get("concurrency"), snap.lang)
        if option_columns
        else "",
        "chosen_option": next((c for c in option_columns if c["quoted"]), None),
        "recommended_option": next((c for c in option_columns if c["recommended"]), None),
    }


def sizing_context(snap: Snapshot) -> dict[str, Any]:
    """Accelerator memory per rank (one panel per serving group that differs, the MEMORY section's rows
    with the group's figure keys) and performance (the PERFORMANCE section, the design capacity's band,
    the load curve, a measured benchmark where one is attached)."""
    lang, figures, currency = snap.lang, snap.figures, snap.currency
    memory_panels = []
    for panel in snap.plan["memory_panels"]:
        rows = section_model.rows(
            section_model.MEMORY,
            figures,
            lang,
            keys={
                "rank": panel.get("figure_prefix", "memory.per_rank"),
                "group": panel.get("group_prefix", "memory"),
            },
        )
        memory_panels.append(
            {
                **panel,
                "rows": rows,
                "drawing": drawing(panel["svg"]),
                "parallel_label": parallel_label(panel["parallel"]) if panel.get("parallel") else "",
            }
        )
    return {
        "memory": snap.result.get("memory") or {},
        "memory_panels": memory_panels,
        "performance": snap.plan.get("performance") or {},
        "measured": _measured(snap.revision),
        "load_curve": drawing((snap.plan.get("sla") or {}).get("curve_svg", "")),
        "performance_rows": section_model.rows(section_model.PERFORMANCE, figures, lang, currency=currency),
        # The design capacity's error band and the cost per token at its conservative end, beside the
        # design capacity (the expected figures are the tile's own).
        "design_band_rows": [
            row
            for row in section_model.rows(section_model.DESIGN, figures, lang, currency=currency)
            if row["key"] in DESIGN_BAND_KEYS
        ],
    }


def facilities_context(snap: Snapshot) -> dict[str, Any]:
    """Racks and power: the elevations and the A/B one-line drawings, the RACKS and POWER sections'
    rows, the checks of each, and whether a server rides through the loss of one feed."""
    plan, lang, currency = snap.plan, snap.lang, snap.currency
    return {
        "power": plan.get("power") or {},
        "power_feed_drawings": _power_feed_drawings(plan["racks"], plan.get("power"), lang),
        "racks": [{**r, "drawing": drawing(r["svg"])} for r in plan["racks"]],
        "racks_summary": {k: v for k, v in (snap.result.get("racks") or {}).items() if k != "racks"},
        "power_rows": section_model.rows(section_model.POWER, snap.figures, lang, currency=currency),
        "rack_rows": section_model.rows(section_model.RACKS, snap.figures, lang, currency=currency),
        "power_checks": snap.checks_of("power."),
        "cooling_checks": snap.checks_of("cooling.", "racks."),
        # One truth about losing a feed, from the engine: the feeds are sized for the whole load, but a
        # server whose power supplies are split over A and B may not run at full power on one of them.
        "psu_split": _psu_split(snap),
    }


def _psu_split(snap: Snapshot) -> bool:
    """Whether a server's power supplies are split over the A and B feeds (the engine's check)."""
    return section_model.worst_severity(snap.checks, "power.psu_not_ab_redundant") != "ok"


def network_context(snap: Snapshot) -> dict[str, Any]:
    """The network chapter beyond its tables: the topology drawing, the cross-node expert-parallel
    links with the severity the engine's check gives a slow one (a warning where no check names it),
    and the network's checks."""
    lang, network = snap.lang, snap.network
    # A cross-node link that is not ok is as severe as the engine's check on it says (a slower
    # fabric is a warning); "warning" where no check names it.
    severity = section_model.worst_severity(snap.checks, "network.cross_node")
    if severity == "ok":
        severity = "warning"
    return {
        "topology_drawing": drawing(snap.plan.get("topology_svg", "")),
        "network": network,
        "cross_node": [
            {
                **x,
                "group_label": group_label(str(x.get("group", ""))),
                "fabric_label": fabric_label(str(x.get("fabric", "")), lang),
                # The word is the severity the engine gave its check (a slower fabric is a warning),
                # never "error" for whatever is not ok.
                "severity": "ok" if x.get("ok") else severity,
                "severity_label": section_model.severity_word("ok" if x.get("ok") else severity, lang),
            }
            for x in network.get("cross_node") or []
        ],
        "cross_node_slow": any(not x.get("ok") for x in network.get("cross_node") or []),
        "network_checks": snap.checks_of("network."),
    }


def commercial_chapters_context(snap: Snapshot) -> dict[str, Any]:
    """The bill of materials (the lines bought, those priced on request, the lease alternative; the
    TOTALS section over the quote's terms) and the total cost of ownership (the TCO section's rows,
    the drawings, the residual value as an assumption, the sensitivity per basis)."""
    lang, figures, tco, currency = snap.lang, snap.figures, snap.tco, snap.currency
    purchase_lines = _purchase_lines(snap)
    return {
        "purchase_lines": purchase_lines,
        "lease_lines": [line for line in snap.lines if line.category == BomCategory.LEASE],
        # Lines the price list has no price for (quotes.bom.NO_PRICE_NOTE): shown as "price on request".
        "lines_on_request": [
            line for line in purchase_lines if line.note == NO_PRICE_NOTE and not line.unit_price
        ],
        "total_rows": section_model.rows(
            section_model.TOTALS, figures, lang, currency=currency, terms=snap.commercial
        ),
        "tco": tco,
        "tco_chart": drawing((tco or {}).get("chart_svg", "")),
        "tco_bars": drawing((tco or {}).get("bars_svg", "")),
        "residual": _residual(figures, snap.resolved, snap.request),
        "tco_rows": section_model.tco_rows(figures, tco, lang, currency=currency),
        "sensitivity_groups": _sensitivity_groups(tco, lang),
        "commercial_checks": snap.checks_of("commercial."),
    }


def _lease_per_node(revision) -> Any:
    """The monthly lease of one server in the frozen prices (the server's, or the lease item's)."""
    prices = revision.prices_json if isinstance(revision.prices_json, dict) else {}
    return _get(prices, "server", "lease_per_month") or next(
        (
            item.get("unit_price") or item.get("lease_per_month")
            for item in prices.get("items") or []
            if isinstance(item, Mapping) and item.get("category") == "lease"
        ),
        None,
    )


def _shared_switches(snap: Snapshot) -> list[str]:
    """The switches two clusters of a primary/standby or tenant pair share (a common failure domain)."""
    shared: list[str] = []
    if snap.topology.get("kind") in ("primary_standby", "tenant_pair"):
        for unit in snap.network.get("switches") or []:
            if isinstance(unit, Mapping) and len(unit.get("groups") or ()) > 1:
                name = str(
                    (unit.get("model_zh") if snap.zh else "") or unit.get("model") or unit.get("slug") or ""
                )
                if name and name not in shared:
                    shared.append(name)
    return shared


def deployment_context(snap: Snapshot) -> dict[str, Any]:
    """Deployment and risks: the deployment path with its timeline, the failure domains, the risks the
    checks raise in the customer's words and the risks every board should read."""
    plan, result, resolved, topology, layout = (
        snap.plan,
        snap.result,
        snap.resolved,
        snap.topology,
        snap.layout,
    )
    return {
        "deployment_paths": story.deployment_paths(
            topology=topology,
            layout=layout,
            server_name=str(snap.server.get("name") or ""),
            lease_per_node_month=_lease_per_node(snap.revision),
            delivery_weeks=int(snap.commercial["terms"].delivery_weeks or 8),
            topology_text=topology_label(topology, snap.lang),
        ),
        "failure_domains": story.failure_domains(
            str(topology.get("kind", "")),
            layout,
            _shared_switches(snap),
            int((result.get("racks") or {}).get("rack_count") or 0),
            "、" if snap.zh else ", ",
            one_feed_carries_servers=not _psu_split(snap),
        ),
        "customer_risks": story.customer_risks(plan["checks"], {**plan, "result": result}, resolved),
        "risks": _risks({**plan, "result": result}, resolved, snap.lang, internal=snap.internal),
    }


def appendix_context(snap: Snapshot) -> dict[str, Any]:
    """The engineering appendix: every check by severity, the assumed figures and catalog values, the
    sources the plan relied on, and the launch configuration per serving group."""
    lang, figures, resolved = snap.lang, snap.figures, snap.resolved
    used_switches = {s.get("slug") for s in snap.network.get("switches") or [] if isinstance(s, Mapping)}
    sources = _sources(figures, resolved, lang)
    launch = snap.plan.get("launch") or {}
    return {
        "launch": launch,
        "launch_groups": _launch_groups(launch, str(snap.server.get("name") or "")),
        "checks_all": sorted(
            snap.checks, key=lambda c: ({"error": 0, "warning": 1}.get(c["severity"], 2), c["code"])
        ),
        "assumed_figures": _assumed_figures(figures, lang),
        "assumed_inputs": _assumed_inputs(resolved, used_switches),
        "sources": sources,
        "seed_documents": _seed_documents(sources, lang),
        "source_kind_labels": {k: _pick(en, zh, lang) for k, (en, zh) in SOURCE_KINDS.items()},
    }


def proposal_context(revision, lang: str, edition: str = "customer") -> dict[str, Any]:
    """Everything the proposal template shows for ``revision``, in ``lang``, for one edition.

    ``edition`` is "customer" (the default: the customer's language only) or
    "internal" (adds every engineering check with its code and fix, the
    formulas, sources and assumptions, and the launch appendix).

    The quote header (customer, title, validity) is the one the revision was
    issued with (``quotes.frozen``); a draft shows the quote as it is now.
    Each chapter's context is its own step, composed here in the order the chapters are printed.
    """
    snap = snapshot(revision, lang, edition)
    option_columns = comparison(revision, lang)
    return {
        **cover_context(snap, edition, option_columns),
        **summary_context(snap),
        **options_context(snap, option_columns),
        **sizing_context(snap),
        **facilities_context(snap),
        **network_context(snap),
        **commercial_chapters_context(snap),
        **deployment_context(snap),
        **appendix_context(snap),
        **chapter_tables(
            snap.result,
            snap.figures,
            snap.tco,
            snap.delivery.get("network_planes") or {},
            snap.sizing,
            lang,
            internal=snap.internal,
            data_residency=snap.scenario in DATA_RESIDENCY_SCENARIOS,
            currency=str((snap.tco or {}).get("currency") or revision.currency),
        ),
        "edition": edition,
        "internal": snap.internal,
        **{k: v for k, v in snap.commercial.items() if k != "line_nets"},
        **snap.delivery,
        **page_style_context(snap),
    }
