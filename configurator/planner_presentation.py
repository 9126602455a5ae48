"""The auto-planner's results formatted for the page: ranked rows, the Pareto chart, the rejected
families and the binding constraint, in the page's language."""

from __future__ import annotations

import json
from typing import Any

from . import planner
from .drawings.fmt import format_money, format_number
from .drawings.scatter import scatter_svg
from .engine import types as et
from .planner_services import open_url


def _pick(en: str, zh: str, lang: str) -> str:
    return zh if lang.startswith("zh") else en


def _serving_lines(serving: et.ServingSpec, lang: str) -> list[str]:
    """["util 0.85 · KV BF16", "16 seqs"]: the vLLM knobs the search chose, in short lines."""
    kv = "BF16" if serving.kv_cache_dtype in ("auto", "bf16") else serving.kv_cache_dtype.upper()
    if lang.startswith("zh"):
        lines = [
            f"利用率 {serving.gpu_memory_utilization:g} · KV {kv}",
            f"max_num_seqs {serving.max_num_seqs}",
        ]
        return lines + (["仅语言模型"] if serving.language_model_only else [])
    lines = [f"util {serving.gpu_memory_utilization:g} · KV {kv}", f"max_num_seqs {serving.max_num_seqs}"]
    return lines + (["language model only"] if serving.language_model_only else [])


def results_context(result: planner.PlannerResult, lang: str) -> dict[str, Any]:
    """Rows, chart and rejections of a search, formatted for the page."""
    cur = result.query.constraints.currency
    lease = result.query.constraints.purchase == "lease"
    short = "zh" if lang.startswith("zh") else "en"

    def row(c: planner.Candidate) -> dict[str, Any]:
        layout = [planner.parallel_label(c.parallel)]
        if c.decode_parallel is not None:
            layout = [f"P: {layout[0]}", f"D: {planner.parallel_label(c.decode_parallel)}"]
        return {
            "rank": c.rank,
            "id": c.id,
            "label": planner.shape_label(c.server, c.shape, short),
            "server": c.server.name,
            "domestic": c.server.accelerator.domestic,
            "layout": layout,
            "serving": _serving_lines(c.serving, lang),
            "cost_per_m": format_money(c.cost_per_m, cur, lang, scale=1, decimals=2),
            "tco": format_money(c.tco_total, cur, lang),
            "capex": format_money(c.lease_per_month if lease else c.capex, cur, lang),
            "tps": format_number(c.output_tokens_per_s, 0),
            "ttft": format_number(c.ttft_s, 2),
            "tpot": format_number(c.tpot_ms, 1),
            "e2e": format_number(c.e2e_s, 1),
            "kw": format_number(c.it_kw, 1),
            "racks": c.racks,
            "pareto": c.pareto,
            "warnings": [(code, _pick(en, zh, lang)) for code, en, zh in c.warnings],
            "request_json": json.dumps(c.request_json, ensure_ascii=False),
            "open_url": open_url(c.request_json),
        }

    top = [row(c) for c in result.top]
    front = [row(c) for c in result.pareto]
    points = [
        {
            "x": c.output_tokens_per_s,
            "y": float(c.cost_per_m),
            "label": f"#{c.rank} {planner.shape_label(c.server, c.shape, short)}",
            "highlight": c.pareto,
        }
        for c in result.candidates
    ]
    y_unit = f"{cur}/M tokens"
    chart = ""
    if points:
        chart = scatter_svg(
            points,
            _pick("Output throughput (tokens/s)", "输出吞吐（tokens/s）", lang),
            _pick(f"Cost per million tokens ({y_unit})", f"每百万 Token 成本（{y_unit}）", lang),
            lang,
            title=_pick("Cost vs throughput: Pareto front highlighted", "成本与吞吐：高亮为帕累托前沿", lang),
            legend=(_pick("Pareto front", "帕累托前沿", lang), _pick("Other feasible", "其他可行方案", lang)),
        )
    rejected = [
        {
            "server": r.server_name,
            "code": r.code,
            "field": r.field,
            "message": _pick(r.message_en, r.message_zh, lang),
        }
        for r in result.rejected
    ]
    binding = None
    if result.binding is not None:
        binding = {
            "field": result.binding.field,
            "code": result.binding.code,
            "message": _pick(result.binding.message_en, result.binding.message_zh, lang),
        }
    return {
        "top": top,
        "front": front,
        "chart": chart,
        "rejected": rejected,
        "binding": binding,
        "feasible_count": len(result.candidates),
        "stats": result.stats,
        "lease": lease,
        "currency": cur,
    }
