"""Throughput-vs-latency curve of one plan: tokens/s per device against TPOT, one point per concurrency.

Built on the planner's scatter chart (plain SVG, inline on the page and in the PDF).
Points come from ``PerformanceResult.curve`` (serialised), so the drawing never
computes anything: the engine's figures are what it shows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from configurator.engine.vocabulary import is_zh

from .fmt import format_number
from .scatter import scatter_svg

LABELS: dict[str, dict[str, Any]] = {
    "x": {"en": "Time per output token, mean (ms)", "zh": "每字延迟 TPOT 均值（毫秒）"},
    "y": {"en": "Output tokens/s per device", "zh": "单卡每秒输出 Token 数"},
    "title": {
        "en": "Throughput vs latency (one point per concurrency)",
        "zh": "吞吐-时延曲线（每点一个并发数）",
    },
    "legend": {
        "en": ("served at once", "queueing (above capacity)"),
        "zh": ("可同时服务", "排队（超出容量）"),
    },
}


def _lang(lang: str) -> str:
    return "zh" if is_zh(lang) else "en"


def curve_svg(curve: Sequence[Mapping[str, Any]], lang: str, *, quoted: int | None = None) -> str:
    """SVG for the serialised curve points (``concurrency``, ``tpot_s``, ``output_tokens_per_s_per_device``)."""
    key = _lang(lang)
    points = []
    for p in curve or ():
        try:
            c = int(p["concurrency"])
            x = float(p["tpot_s"]) * 1000
            y = float(p["output_tokens_per_s_per_device"])
        except (KeyError, TypeError, ValueError):
            continue
        label = f"{c}" + (" ◀" if quoted is not None and c == quoted else "")
        points.append({"x": x, "y": y, "label": label, "highlight": not bool(p.get("saturated"))})
    return scatter_svg(
        points,
        LABELS["x"][key],
        LABELS["y"][key],
        lang,
        x_format=lambda v: format_number(v, 0),
        title=LABELS["title"][key],
        legend=LABELS["legend"][key],
        height=360,
    )


ECON_LABELS = {
    "x": {"en": "Concurrent requests", "zh": "并发请求数"},
    "y": {"en": "Cost per million output tokens", "zh": "每百万输出 Token 成本"},
    "title": {
        "en": "Cost per million output tokens over load, against the API",
        "zh": "每百万输出 Token 成本随负载变化（对比 API）",
    },
    "self": {"en": "this cluster", "zh": "本集群"},
    "api": {"en": "public API", "zh": "官方 API"},
}
MAX_OVER_API = (
    10  # points dearer than 10 × the API price are left off the chart (their figures stay in the table)
)


def _cost_points(economics: Mapping[str, Any]) -> list[tuple[int, float]]:
    """(concurrency, cost per million output tokens) of every readable point with a positive load."""
    out = []
    for p in economics.get("points") or ():
        try:
            c, cost = int(p["concurrency"]), float(p["cost_per_m_output"])
        except (KeyError, TypeError, ValueError):
            continue
        if c > 0:
            out.append((c, cost))
    return out


def _api_price(economics: Mapping[str, Any]) -> float | None:
    try:
        api = economics.get("api_price_output_per_m")
        return float(api) if api is not None else None
    except (TypeError, ValueError):
        return None


def economics_left_off(economics: Mapping[str, Any] | None) -> list[int]:
    """The loads (concurrent requests) :func:`economics_svg` leaves off: a million output tokens costs
    more than ``MAX_OVER_API`` × the API price there, so the page says so under the chart."""
    if not economics:
        return []
    api_price = _api_price(economics)
    if not api_price or api_price <= 0:
        return []
    return sorted(c for c, cost in _cost_points(economics) if cost > api_price * MAX_OVER_API)


def economics_svg(economics: Mapping[str, Any] | None, lang: str) -> str:
    """Self-hosted cost per million output tokens against concurrency (log₂ axis) and the API's price."""
    import math

    from .charts import line_chart_svg
    from .fmt import money_axis_formatter

    if not economics:
        return ""
    key = _lang(lang)
    api_price = _api_price(economics)
    left_off = set(economics_left_off(economics))
    pts = [(math.log2(c), cost) for c, cost in _cost_points(economics) if c not in left_off]
    if not pts:
        return ""
    series = [{"name": ECON_LABELS["self"][key], "points": pts}]
    if api_price is not None:
        xs = [x for x, _ in pts]
        series.append(
            {
                "name": ECON_LABELS["api"][key],
                "points": [(min(xs), api_price), (max(xs), api_price)],
                "style": "dashed",
            }
        )
    ys = [y for _, y in pts] + ([api_price] if api_price else [])
    currency = str(economics.get("currency") or "CNY")
    ticks = sorted({round(x) for x, _ in pts})
    return line_chart_svg(
        series,
        ECON_LABELS["x"][key],
        ECON_LABELS["y"][key],
        lang,
        y_format=money_axis_formatter(currency, lang, max(ys)),
        x_format=lambda v: format_number(2**v, 0),
        x_ticks=ticks,
        title=ECON_LABELS["title"][key],
        height=320,
    )
