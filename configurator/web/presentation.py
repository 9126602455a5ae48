"""Turn a plan (its JSON dict) into what the page and the PDF show.

Both the configurator page and the proposal PDF call :func:`context_from_dict`
on the same plan dict (the PDF on the revision's frozen copy), so they show the
same figures and the same drawings.  Nothing here computes a new figure: it
picks, labels, formats and draws what the engine returned.
"""

from __future__ import annotations

import json
import shlex
import threading
from collections import OrderedDict
from decimal import Decimal, InvalidOperation
from typing import Any

from configurator.drawings.charts import bar_chart_svg, line_chart_svg, tornado_svg
from configurator.drawings.fmt import format_money, money_axis_formatter
from configurator.drawings.memory import memory_bar_svg, memory_segments
from configurator.drawings.racks import rack_elevation_svg
from configurator.drawings.topology import topology_groups, topology_svg
from configurator.engine.checks import CheckCatalogueError, definitions
from configurator.engine.names import node_name
from configurator.engine.serialize import group_layout_from_dict, rack_layout_from_dict, rank_memory_from_dict
from configurator.engine.vocabulary import (
    area_label,
    fabric_label,
    group_label,
    is_zh,
    node_role_label,
    plane_label,
    role_label,
)

AREAS = ("memory", "power", "network", "racks", "cooling", "layout", "performance", "commercial")
SEVERITY_ORDER = {"ok": 0, "warning": 1, "error": 2}


def _pick(en: str, zh: str, lang: str) -> str:
    return zh if is_zh(lang) and zh else en


def _dec(value: Any) -> Decimal | None:
    if value is None:
        return None
    try:
        return Decimal(str(value))
    except (InvalidOperation, ValueError):
        return None


def verdicts(checks: list[dict], lang: str) -> list[dict]:
    """The verdict strip: the worst severity per area, in a fixed order."""
    worst: dict[str, str] = {}
    for c in checks:
        area = c.get("area") or "layout"
        sev = c.get("severity", "ok")
        if SEVERITY_ORDER.get(sev, 0) >= SEVERITY_ORDER.get(worst.get(area, "ok"), 0):
            worst[area] = sev
    out = []
    for area in ("memory", "power", "network", "racks", "cooling"):
        out.append({"area": area, "label": area_label(area, lang), "severity": worst.get(area, "ok")})
    # A model problem (context too long, image input on a text-only server) is
    # its own badge, never "Memory: error".
    for area in ("model", "layout", "performance", "commercial"):
        if worst.get(area) in ("warning", "error"):
            out.append({"area": area, "label": area_label(area, lang), "severity": worst[area]})
    return out


_REQUIREMENT_NAMES = {
    "workload.concurrency": ("concurrent requests", "并发请求数"),
    "workload.input_tokens": ("input tokens per request", "每请求输入 Token 数"),
    "workload.output_tokens": ("output tokens per request", "每请求输出 Token 数"),
    "workload.needs_vision": ("image input", "图像输入"),
    "serving.max_model_len": ("context length", "上下文长度"),
}


def _requirement_text(requirement: dict, lang: str) -> str:
    """A proven change of the customer's requirement, in words ("concurrent requests → 10")."""
    parts = []
    for path, value in requirement.items():
        en, zh = _REQUIREMENT_NAMES.get(path, (path, path))
        shown = f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)
        parts.append(f"{_pick(en, zh, lang)} → {shown}")
    return "; ".join(parts)


def _reaches_customer(code: str) -> bool:
    try:
        return definitions()[code].customer
    except CheckCatalogueError:
        return False


def localized_checks(checks: list[dict], lang: str, proven: dict[int, dict] | None = None) -> list[dict]:
    """Checks in the page's language, errors first, 'ok' notes last.

    ``proven`` maps a check's index to the re-planned request its fix gives
    (``fixes.proven_fixes``); only those fixes get an "Apply" button."""
    out = []
    proven = proven or {}
    for index, c in enumerate(checks):
        area = c.get("area", "")
        out.append(
            {
                "code": c.get("code", ""),
                "severity": c.get("severity", "ok"),
                "area": area_label(area, lang),
                "message": _pick(c.get("message", ""), c.get("message_zh", ""), lang),
                "fix_text": _pick(c.get("fix_en", ""), c.get("fix_zh", ""), lang),
                "fix": c.get("fix") or {},
                "fix_json": json.dumps(c.get("fix") or {}, ensure_ascii=False),
                "fix_request": (
                    json.dumps(proven[index], ensure_ascii=False, sort_keys=True) if index in proven else ""
                ),
                "field": c.get("field", ""),
                # The customer edition states it as a risk: accepting it asks for the reason (book.CheckDef).
                "customer": _reaches_customer(c.get("code", "")),
                "requirement": _requirement_text(c.get("requirement") or {}, lang),
                "figures": c.get("figures") or {},
            }
        )
    out.sort(key=lambda c: -SEVERITY_ORDER.get(c["severity"], 0))
    return out


def problem_groups(problems: list[dict]) -> list[dict]:
    """The findings grouped by severity (errors first) and, within it, by area in the order the
    areas first appear: each group one collapsible list on the page."""
    groups: dict[tuple[str, str], dict] = {}
    for c in problems:
        key = (c["severity"], c["area"])
        if key not in groups:
            groups[key] = {"severity": c["severity"], "area": c["area"], "items": []}
        groups[key]["items"].append(c)
    return sorted(groups.values(), key=lambda g: -SEVERITY_ORDER.get(g["severity"], 0))


def _memory_panels(result: dict, lang: str) -> list[dict]:
    memory = result.get("memory") or {}
    layout = result.get("layout") or {}
    groups_layout = {g["name"]: g for g in layout.get("groups", [])}
    panels: list[dict] = []
    seen: set = set()
    for group in memory.get("groups", []):
        rank = group.get("per_rank") or {}
        lay = groups_layout.get(group.get("group"), {})
        parallel = lay.get("parallel", {})
        signature = (json.dumps(rank, sort_keys=True), json.dumps(parallel, sort_keys=True))
        if signature in seen:  # identical groups (a pair) are drawn once
            continue
        seen.add(signature)
        segments = memory_segments(rank_memory_from_dict(rank))
        prefix = "memory.per_rank" if not panels else f"memory.{group.get('group')}.per_rank"
        panels.append(
            {
                "group": group.get("group"),
                "role": role_label(lay.get("role", "cluster"), lang),
                "parallel": parallel,
                "experts_per_rank": lay.get("experts_per_rank"),
                "rank": rank,
                "group_data": group,
                "figure_prefix": prefix,
                "group_prefix": prefix.rsplit(".per_rank", 1)[0],
                "svg": memory_bar_svg(segments, rank.get("device_bytes", 0), lang),
            }
        )
    return panels


def _topology(result: dict, lang: str, server_name: str = "") -> str:
    layout_groups = (result.get("layout") or {}).get("groups", [])
    if not layout_groups:
        return ""
    roles = {g.get("role") for g in layout_groups}
    return topology_svg(
        topology_groups([group_layout_from_dict(g) for g in layout_groups], lang, node_name=server_name),
        lang,
        gateway=True,
        storage="standby" in roles and "prefill" not in roles,
        kv_transfer="prefill" in roles,
    )


def _racks(result: dict, lang: str) -> list[dict]:
    racks = (result.get("racks") or {}).get("racks", [])
    out = []
    for rack in racks:
        out.append({"rack": rack, "svg": rack_elevation_svg(rack_layout_from_dict(rack), lang=lang)})
    return out


def _tco(result: dict, lang: str, *, api: bool = True) -> dict | None:
    tco = result.get("tco")
    if not tco or not tco.get("valid", True):
        return tco
    currency = tco.get("currency", "CNY")
    monthly = tco.get("monthly") or []
    zh = is_zh(lang)
    series: list[dict[str, Any]] = [
        {
            "name": "购买（累计）" if zh else "Buy (cumulative)",
            "points": [(row["month"], float(row["buy_cumulative"])) for row in monthly],
            "style": "solid",
            "color": "#1f4e79",
        },
    ]
    if tco.get("lease_offered", True):  # no lease line without a lease offer in the catalog
        series.append(
            {
                "name": "租赁（累计）" if zh else "Lease (cumulative)",
                "points": [(row["month"], float(row["lease_cumulative"])) for row in monthly],
                "style": "dashed",
                "color": "#d99a00",
            }
        )
    markers = []
    if tco.get("break_even_month"):
        markers.append({"x": tco["break_even_month"], "label": "盈亏平衡" if zh else "break-even"})
    max_y = max((y for s in series for _, y in s["points"]), default=0)
    chart = line_chart_svg(
        series,
        "月" if zh else "month",
        currency,
        lang,
        markers=markers,
        y_format=money_axis_formatter(currency, lang, max_y),
    )
    tokens = tco.get("tokens") or {}
    bars: str | list = []  # the bar chart's SVG, [] without one
    if tokens.get("cost_per_m_output_buy") is not None and tokens.get("api_price_output_per_m") is not None:

        def money(v):
            return format_money(float(v), currency, lang, scale=1, decimals=2)

        bars_rows = [
            {
                "label": "自建·购买（输出）" if zh else "Self-hosted, buy (output)",
                "value": float(tokens["cost_per_m_output_buy"]),
            },
            *(
                [
                    {
                        "label": "自建·租赁（输出）" if zh else "Self-hosted, lease (output)",
                        "value": float(tokens["cost_per_m_output_lease"]),
                    }
                ]
                if tokens.get("cost_per_m_output_lease") is not None
                else []
            ),
        ]
        if api:  # no API bar where the public API is no alternative (data that stays on premises)
            bars_rows.append(
                {
                    "label": "公有 API（输出）" if zh else "Public API (output)",
                    "value": float(tokens["api_price_output_per_m"]),
                }
            )
        bars = bar_chart_svg(bars_rows, lang, money)
    sens_rows = []
    base = None
    for row in tco.get("sensitivity") or []:
        if row.get("basis", "buy") != "buy":
            continue
        base = float(row["cost_at_base"])
        sens_rows.append(
            {
                "label": _pick(row.get("label_en", ""), row.get("label_zh", ""), lang),
                "low_value": float(row["cost_at_low"]),
                "high_value": float(row["cost_at_high"]),
                "low_label": "−20%",
                "high_label": "+20%",
            }
        )
    tornado = ""
    if sens_rows and base is not None:
        tornado = tornado_svg(
            sens_rows, base, lang, lambda v: format_money(v, currency, lang, scale=1, decimals=2)
        )
    return {**tco, "chart_svg": chart, "bars_svg": bars, "tornado_svg": tornado}


def display_command(argv: list[str]) -> str:
    """A command as an operator reads it: one flag per line, shell-quoted."""
    parts: list[str] = []
    for word in argv:
        quoted = shlex.quote(word)
        if word.startswith("--") and parts:
            parts.append(" \\\n    " + quoted)
        else:
            parts.append((" " if parts else "") + quoted)
    return "".join(parts)


def _launch(result: dict, lang: str = "en") -> dict | None:
    launch = result.get("launch")
    if not launch:
        return launch
    nodes = []
    for node in launch.get("nodes", []):
        argv = node.get("argv") or []
        commands = [display_command(a) for a in argv if a] if argv and isinstance(argv[0], list) else []
        env_vars = node.get("env") or {}
        env = "".join(f"export {k}={shlex.quote(str(env_vars[k]))}\n" for k in sorted(env_vars))
        nodes.append(
            {
                **node,
                "name": node_name(node.get("index", 0)),
                "display": env + "\n".join(commands or [node.get("command", "")]),
                "group_label": group_label(node.get("group", ""), lang),
                "role_label": node_role_label(node.get("role", ""), lang),
            }
        )
    return {**launch, "nodes": nodes}


def _layout(result: dict, lang: str) -> dict | None:
    layout = result.get("layout")
    if not layout:
        return layout
    groups = [
        {
            **g,
            "label": group_label(g["name"], lang),
            "role_label": role_label(g["role"], lang),
        }
        for g in layout.get("groups", [])
    ]
    return {**layout, "groups": groups}


def _network(result: dict, lang: str) -> dict | None:
    network = result.get("network")
    if not network:
        return network
    rows = [
        {
            **row,
            "figure_key": f"network.{row.get('role', '')}.{row.get('fabric', '')}.{row.get('scope', '')}",
            "fabric_label": fabric_label(row.get("fabric", ""), lang),
            "plane_label": plane_label(row.get("role", ""), lang),
        }
        for row in network.get("rows", [])
    ]
    return {**network, "rows": rows}


def _sla(result: dict, lang: str) -> dict | None:
    """Latency targets, load curve and error band of the performance estimate (issue 15)."""
    perf = result.get("performance") or None
    if not perf:
        return None
    from configurator.drawings.throughput_latency import (
        MAX_OVER_API,
        curve_svg,
        economics_left_off,
        economics_svg,
    )

    econ = result.get("economics") or None

    sla = perf.get("sla") or None
    band = perf.get("error_band") or (0, 0)
    low, high = (band[0], band[1]) if len(band) == 2 else (0, 0)
    # The likely measured range is the engine's (PerformanceResult.output_tokens_per_s_range).
    likely: Any = perf.get("output_tokens_per_s_range") or ()
    likely = likely if len(likely) == 2 and not perf.get("measured") else (None, None)
    return {
        "curve_svg": curve_svg(perf.get("curve") or (), lang, quoted=perf.get("concurrency")),
        "capacity": perf.get("capacity_concurrency") or 0,
        "queue_wait_s": perf.get("queue_wait_s") or 0,
        "ttft_p90_s": perf.get("ttft_p90_s") or 0,
        "tpot_p90_s": perf.get("tpot_p90_s") or 0,
        "range_low": likely[0],
        "range_high": likely[1],
        "band_low": low,
        "band_high": high,
        "has_targets": bool(sla),
        "met": (sla or {}).get("met"),
        "max_concurrency": (sla or {}).get("max_concurrency"),
        "targets": (sla or {}).get("targets") or {},
        "values": (sla or {}).get("values") or {},
        "economics_svg": economics_svg(econ, lang),
        # loads dearer than MAX_OVER_API × the API price: off the chart's scale, named under it
        "economics_left_off": economics_left_off(econ),
        "economics_over_api": MAX_OVER_API,
        "break_even": (econ or {}).get("break_even_concurrency"),
        "has_api": bool(econ and econ.get("api_price_output_per_m") is not None),
    }


UNREACHABLE = "performance.design_point_unreachable"
OVER_CAPACITY = "performance.concurrency_above_capacity"


def context_from_dict(
    result: dict, lang: str, proven: dict[int, dict] | None = None, *, api_comparison: bool = True
) -> dict:
    """Everything the results panel (and the PDF) shows, from a plan dict.

    ``api_comparison`` False leaves the public API out of the cost chart (a deployment whose data
    must stay on the customer's premises has no API alternative)."""
    checks = result.get("checks") or []
    localized = localized_checks(checks, lang, proven)
    # A latency target out of this hardware's reach opens the results as one statement (what the
    # hardware achieves, the smallest catalog deployment that meets the target); the stated-load
    # findings on the same target add nothing to it and are folded into it.
    # Within reach of the targets, a stated load above what the cluster runs at once is the one
    # statement instead (its "the rest queue" says why latency at the stated load is not held).
    headline = next((c for c in localized if c["code"] == UNREACHABLE), None) or next(
        (c for c in localized if c["code"] == OVER_CAPACITY), None
    )
    unreachable = headline is not None and headline["code"] == UNREACHABLE
    design = (result.get("performance") or {}).get("design_point") or {}
    unmet = {str(t).split("_")[0] for t in design.get("unmet_targets") or ()} if unreachable else set()
    folded = {f"performance.{kind}_above_target" for kind in unmet} | (
        {headline["code"]} if headline else set()
    )
    if headline and (not unreachable or "stated_concurrency" in (headline.get("figures") or {})):
        # The statement also says what the cluster runs of the stated load (the capacity shortfall):
        # the per-group "the rest queue" findings, and the latency at that load, say it again.
        folded |= {
            "performance.batch_limited_by_max_num_seqs",
            "performance.batch_limited_by_kv",
            "performance.ttft_above_target",  # the queue's added TTFT is in the statement
            "performance.tpot_above_target",
        }
    problems = [
        c
        for c in localized
        if c["severity"] != "ok"
        and c["code"] != "performance.serving_settings_recommended"
        and c["code"] not in folded
    ]
    return {
        "result": result,
        "ok": result.get("ok", False),
        "verdicts": verdicts(checks, lang),
        "checks": localized,
        "problems": problems,
        "problem_groups": problem_groups(problems),
        "headline": headline,
        "recommendation": next(
            (c for c in localized if c["code"] == "performance.serving_settings_recommended"), None
        ),
        "configuration_front": _configuration_front(localized, lang),
        "figures": result.get("figures") or {},
        "memory_panels": _memory_panels(result, lang),
        "topology_svg": _topology(result, lang),
        "racks": _racks(result, lang),
        "power": result.get("power"),
        "network": _network(result, lang),
        "performance": result.get("performance"),
        "sla": _sla(result, lang),
        "tco": _tco(result, lang, api=api_comparison),
        "launch": _launch(result, lang),
        "layout": _layout(result, lang),
        "lang": lang,
    }


def _configuration_front(checks: list[dict], lang: str) -> list[dict]:
    """The serving-configuration search's capacity-vs-TPOT front (the recommended settings' figures,
    engine/serving_search.py), the chosen configuration first, in the page's language."""
    rec = next((c for c in checks if c["code"] == "performance.serving_settings_recommended"), None)
    front = ((rec or {}).get("figures") or {}).get("front") or []
    return [
        {
            **point,
            "label": _pick(point.get("label_en", ""), point.get("label_zh", ""), lang),
            "trade": _pick(point.get("trade_en", ""), point.get("trade_zh", ""), lang),
        }
        for point in front
        if isinstance(point, dict)
    ]


# The results context of a plan without proven fixes, by plan (the object the plan cache hands out,
# kept alive here so its id is not reused) and language: the page's update, a language switch and the
# same form posted again share one plan object (configurator/port/plan_cache.py), and serialising it and
# drawing its charts was a quarter of an update.  Read-only: the callers replace the context's keys
# (acknowledged warnings, the price basis) on their own shallow copy and mutate nothing inside.
CONTEXTS_MAX = 32
_contexts: OrderedDict[tuple[int, str], tuple[Any, dict]] = OrderedDict()
_contexts_lock = threading.Lock()


def _results_context(result, lang: str) -> dict:
    """``context_from_dict(plan_to_dict(result), lang)``, computed once per plan object and language."""
    from configurator.engine.serialize import plan_to_dict

    key = (id(result), lang)
    with _contexts_lock:
        hit = _contexts.get(key)
        if hit is not None and hit[0] is result:
            _contexts.move_to_end(key)
            return hit[1]
    context = context_from_dict(plan_to_dict(result), lang)
    with _contexts_lock:
        _contexts[key] = (result, context)
        while len(_contexts) > CONTEXTS_MAX:
            _contexts.popitem(last=False)
    return context


def plan_context(plan_request, result, request_json: dict, lang: str, proven=None) -> dict:
    """The page context for a live plan (``proven``: see ``localized_checks``)."""
    from configurator.engine.serialize import plan_to_dict

    if proven:
        context = context_from_dict(plan_to_dict(result), lang, proven)
    else:
        context = dict(_results_context(result, lang))
    context["request_json"] = json.dumps(request_json, ensure_ascii=False)
    context["request"] = plan_request
    return context
