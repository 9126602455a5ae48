"""Latency targets: whether the estimate meets them, the largest concurrency that does, and the checks."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

from .. import serving_model as sm
from ..checks import raise_
from ..figures import FigureBook
from ..types import Check, PlanRequest, SlaResult
from .common import ESTIMATE_SOURCE, fig_input


def stated_targets(req: PlanRequest) -> dict[str, float]:
    """The latency targets the request states (P50 and P90 of TTFT and TPOT), by name."""
    w = req.workload
    t: dict[str, float] = {}
    if w.ttft_target_s is not None:
        t["ttft_p50_s"] = w.ttft_target_s
    if w.ttft_p90_target_s is not None:
        t["ttft_p90_s"] = w.ttft_p90_target_s
    if w.tpot_target_ms is not None:
        t["tpot_p50_ms"] = w.tpot_target_ms
    if w.tpot_p90_target_ms is not None:
        t["tpot_p90_ms"] = w.tpot_p90_target_ms
    return t


def latency_values(op: sm.OperatingPoint) -> dict[str, float]:
    """An operating point's latencies under the target names (TPOT in ms)."""
    return {
        "ttft_p50_s": op.ttft_p50_s,
        "ttft_p90_s": op.ttft_p90_s,
        "tpot_p50_ms": op.tpot_s * 1000,
        "tpot_p90_ms": op.tpot_p90_s * 1000,
    }


def _meets(op: sm.OperatingPoint, targets: Mapping[str, float]) -> bool:
    if not (math.isfinite(op.ttft_s) and math.isfinite(op.tpot_s)) or op.requests_per_s <= 0:
        return False
    values = latency_values(op)
    return all(values[k] <= v * (1 + 1e-9) for k, v in targets.items())


def sla_result(
    req: PlanRequest, op: sm.OperatingPoint, point_fn: Callable[[float], sm.OperatingPoint], capacity: int
) -> SlaResult | None:
    targets = stated_targets(req)
    if not targets:
        return None
    # A point with no capacity (no slot, no KV room) has no finite latency: report it as None.
    values = {k: (v if math.isfinite(v) else None) for k, v in latency_values(op).items() if k in targets}
    met = _meets(op, targets) if req.workload.concurrency > 0 else None
    # Largest concurrency meeting every target: latencies only grow with concurrency.
    hi = max(capacity * 4, req.workload.concurrency * 2, 8)
    if not _meets(point_fn(1), targets):
        best = 0
    elif _meets(point_fn(hi), targets):
        best = hi
    else:
        lo = 1
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if _meets(point_fn(mid), targets):
                lo = mid
            else:
                hi = mid
        best = lo
    return SlaResult(targets, values, met, best)


def add_sla_figures(book: FigureBook, sla: SlaResult) -> None:
    targets, values = sla.targets, sla.values

    def shown(v: float | None) -> float | None:
        return round(v, 6) if v is not None else None

    book.put(
        "performance.sla.max_concurrency",
        sla.max_concurrency,
        source=ESTIMATE_SOURCE,
        ttft_p50_s=fig_input(targets.get("ttft_p50_s")),
        ttft_p90_s=fig_input(targets.get("ttft_p90_s")),
        tpot_p50_ms=fig_input(targets.get("tpot_p50_ms")),
        tpot_p90_ms=fig_input(targets.get("tpot_p90_ms")),
    )
    book.put(
        "performance.sla.met",
        bool(sla.met),
        source=ESTIMATE_SOURCE,
        ttft_p50_s=shown(values.get("ttft_p50_s")),
        ttft_p90_s=shown(values.get("ttft_p90_s")),
        tpot_p50_ms=shown(values.get("tpot_p50_ms")),
        tpot_p90_ms=shown(values.get("tpot_p90_ms")),
    )


_TARGET_TEXT = {
    "ttft_p50_s": ("TTFT P50", "首字延迟 P50", "s", "秒", "workload.ttft_target_s", 1.0),
    "ttft_p90_s": ("TTFT P90", "首字延迟 P90", "s", "秒", "workload.ttft_p90_target_s", 1.0),
    "tpot_p50_ms": ("TPOT P50", "每字延迟 P50", "ms", "毫秒", "workload.tpot_target_ms", 1.0),
    "tpot_p90_ms": ("TPOT P90", "每字延迟 P90", "ms", "毫秒", "workload.tpot_p90_target_ms", 1.0),
}


def target_checks(req: PlanRequest, op: sm.OperatingPoint, sla: SlaResult | None) -> list[Check]:
    if sla is None:
        return []
    out: list[Check] = []
    conc = req.workload.concurrency
    fix = "concurrency" if sla.max_concurrency > 0 else "advice"
    for key, target in sla.targets.items():
        en, zh, unit, unit_zh, fld, _ = _TARGET_TEXT[key]
        value = sla.values[key]
        if value is not None and value <= target * (1 + 1e-9):
            continue
        if value is None:
            out.append(
                raise_(
                    "performance.ttft_above_target"
                    if key.startswith("ttft")
                    else "performance.tpot_above_target",
                    fix="shorten",
                    figures={"target": target, "max_concurrency": sla.max_concurrency},
                    target_en=en,
                    target_zh=zh,
                    target=target,
                    unit_en=unit,
                    unit_zh=unit_zh,
                    conc=conc,
                    target_field=fld,
                )
            )
            continue
        out.append(
            raise_(
                "performance.ttft_above_target"
                if key.startswith("ttft")
                else "performance.tpot_above_target",
                variant="estimated",
                fix=fix,
                figures={"value": value, "target": target, "max_concurrency": sla.max_concurrency},
                target_en=en,
                target_zh=zh,
                value=value,
                target=target,
                unit_en=unit,
                unit_zh=unit_zh,
                conc=conc,
                max_concurrency=sla.max_concurrency,
                target_field=fld,
            )
        )
    if sla.met:
        out.append(
            raise_(
                "performance.latency_targets_met",
                figures={
                    **{k: round(v, 6) for k, v in sla.values.items() if v is not None},
                    "max_concurrency": sla.max_concurrency,
                },
                conc=conc,
                max_concurrency=sla.max_concurrency,
                target_field="workload.ttft_target_s"
                if "ttft_p50_s" in sla.targets
                else "workload.tpot_target_ms",
            )
        )
    return out


def over_capacity_check(
    concurrency: int,
    capacity: int,
    op: sm.OperatingPoint,
    within: tuple[str, str, dict] | None = None,
) -> Check:
    """The stated load above what runs at once.  ``within``: what the design point carries within the
    latency targets and what would carry the load (``design.within_targets_text``), said in the same
    statement — the page opens with it alone."""
    wait = op.wait_s if math.isfinite(op.wait_s) else 0.0
    design_en, design_zh, extra = within or ("", "", {})
    return raise_(
        "performance.concurrency_above_capacity",
        figures={"concurrency": concurrency, "capacity": capacity, "queue_wait_s": wait, **extra},
        concurrency=concurrency,
        capacity=capacity,
        wait=wait,
        design_en=design_en,
        design_zh=design_zh,
    )
