"""The auto-planner's results formatted for the page: ranked rows, the Pareto chart, the rejected
families and the binding constraint, in the page's language."""

from __future__ import annotations

import json
from typing import Any

from configurator import planner
from configurator.drawings.fmt import format_money, format_number
from configurator.drawings.scatter import scatter_svg
from configurator.engine import types as et
from configurator.engine.vocabulary import is_zh
from configurator.web.planner.services import open_url


def _pick(en: str, zh: str, lang: str) -> str:
    return zh if is_zh(lang) else en


def _serving_lines(serving: et.ServingSpec, lang: str) -> list[str]:
    """["util 0.85 · KV BF16", "16 seqs"]: the vLLM knobs the search chose, in short lines."""
    kv = "BF16" if serving.kv_cache_dtype in ("auto", "bf16") else serving.kv_cache_dtype.upper()
    if is_zh(lang):
        lines = [
            f"利用率 {serving.gpu_memory_utilization:g} · KV {kv}",
            f"max_num_seqs {serving.max_num_seqs}",
        ]
        return lines + (["仅语言模型"] if serving.language_model_only else [])
    lines = [f"util {serving.gpu_memory_utilization:g} · KV {kv}", f"max_num_seqs {serving.max_num_seqs}"]
    return lines + (["language model only"] if serving.language_model_only else [])


def results_context(
    result: planner.PlannerResult, lang: str, recommended_server: str | None = None
) -> dict[str, Any]:
    """Rows, chart and rejections of a search, formatted for the page.  ``recommended_server`` (the
    scenario's recommended server) always gets an answer: ranked in the table, ranked below it (its
    best row, with why), ruled out (with its reason) or not searched (with why)."""
    cur = result.query.constraints.currency
    lease = result.query.constraints.purchase == "lease"
    short = "zh" if is_zh(lang) else "en"

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
            "capex": format_money(
                c.lease_per_month if lease and c.lease_per_month is not None else c.capex, cur, lang
            ),
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
    recommended = _recommended(result, recommended_server, lang, row)
    if recommended and recommended["status"] == "top":
        for r in top:
            r["recommended"] = r["rank"] == recommended["rank"]
    return {
        "recommended": recommended,
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


def _recommended(result: planner.PlannerResult, slug: str | None, lang: str, row) -> dict[str, Any] | None:
    """Where the scenario's recommended server stands in this search, in one sentence."""
    if not slug:
        return None
    best = next((c for c in result.candidates if c.server.slug == slug), None)
    name = next((s.name for s in result.query.servers if s.slug == slug), None)
    if best is not None:
        name = best.server.name
        if best.rank <= len(result.top):
            message = _pick(
                f"The scenario's recommended server, {name}, ranks #{best.rank} (marked in the table).",
                f"场景推荐的服务器 {name} 排名第 {best.rank}（已在表中标注）。",
                lang,
            )
            return {"status": "top", "rank": best.rank, "message": message}
        first = result.candidates[0]
        cur = result.query.constraints.currency
        message = _pick(
            f"The scenario's recommended server, {name}, ranks #{best.rank} of {len(result.candidates)}: its best "
            f"deployment costs {format_money(best.cost_per_m, cur, lang, scale=1, decimals=2)} per million tokens, "
            f"against {format_money(first.cost_per_m, cur, lang, scale=1, decimals=2)} for #1 (the ranking orders "
            "by cost per million tokens within the constraints).",
            f"场景推荐的服务器 {name} 在 {len(result.candidates)} 个可行方案中排名第 {best.rank}：其最优方案每百万 Token "
            f"成本 {format_money(best.cost_per_m, cur, lang, scale=1, decimals=2)}，第 1 名为 "
            f"{format_money(first.cost_per_m, cur, lang, scale=1, decimals=2)}（在满足约束的前提下按每百万 Token 成本排序）。",
            lang,
        )
        return {
            "status": "below",
            "rank": best.rank,
            "message": message,
            "row": dict(row(best), recommended=True),
        }
    rejection = next((r for r in result.rejected if r.server == slug), None)
    if rejection is not None:
        message = _pick(
            f"The scenario's recommended server, {rejection.server_name}, is ruled out: {rejection.message_en}",
            f"场景推荐的服务器 {rejection.server_name} 被排除：{rejection.message_zh}",
            lang,
        )
        return {"status": "ruled_out", "message": message}
    if name is None:
        message = _pick(
            "The scenario's recommended server was not searched: it is not offered for this model or was left "
            "out by the search's server filter.",
            "场景推荐的服务器未参与搜索：该型号未对此模型开放，或被搜索的服务器筛选条件排除。",
            lang,
        )
        return {"status": "not_searched", "message": message}
    return None
