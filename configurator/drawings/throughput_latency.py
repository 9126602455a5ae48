"""Throughput-vs-latency curve of one plan: tokens/s per device against TPOT, one point per concurrency.

Built on the planner's scatter chart (plain SVG, inline on the page and in the PDF).
Points come from ``PerformanceResult.curve`` (serialised), so the drawing never
computes anything: the engine's figures are what it shows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .fmt import format_number
from .scatter import scatter_svg

LABELS = {
    "x": {"en": "Time per output token, mean (ms)", "zh": "每字延迟 TPOT 均值（毫秒）"},
    "y": {"en": "Output tokens/s per device", "zh": "单卡输出吞吐（Token/秒）"},
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
    return "zh" if (lang or "").lower().startswith("zh") else "en"


def curve_svg(curve: Sequence[Mapping[str, object]], lang: str, *, quoted: int | None = None) -> str:
    """SVG for the serialised curve points (``concurrency``, ``tpot_s``, ``output_tokens_per_s_per_device``)."""
    key = _lang(lang)
    points = []
    for p in curve or ():
        try:
            c = int(p["concurrency"])  # type: ignore[call-overload]
            x = float(p["tpot_s"]) * 1000  # type: ignore[arg-type]
            y = float(p["output_tokens_per_s_per_device"])  # type: ignore[arg-type]
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
