"""Promote a quote's measured ``vllm bench serve`` result into the performance calibration set.

A catalog administrator promotes (admin action on measured benchmarks); nothing is promoted
automatically.  The record is built from the plan the result measured (the revision's frozen
request) at the measured load, with its provenance.  A result whose model, hardware, layout or
request lengths do not match its plan is refused with :class:`PromotionRefused`, whose message
names the mismatch.  ``manage.py calibrate`` refits with :func:`promoted_records` added to the
public records (docs/performance.md §3).
"""

from __future__ import annotations

import re
from typing import Any

from django.db import transaction

from .benchmark_models import MeasuredBenchmark
from .calibration_models import PromotedMeasurement

LENGTH_TOLERANCE = 0.25  # measured mean prompt / output length within ±25 % of the plan's


class PromotionRefused(ValueError):
    """Why a measurement cannot join the calibration set (the message names the mismatch)."""


def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.rsplit("/", 1)[-1].lower())


def _plan_model_names(request: dict[str, Any]) -> set[str]:
    model = request.get("model")
    names: set[str] = set()
    if isinstance(model, str):
        names.add(model)
    elif isinstance(model, dict):
        names |= {str(model.get(k)) for k in ("slug", "name", "hf_model_id", "hf_repo") if model.get(k)}
    ck = request.get("checkpoint")
    if isinstance(ck, dict):
        names |= {str(ck.get(k)) for k in ("slug", "name", "hf_repo") if ck.get(k)}
    elif isinstance(ck, str):
        names.add(ck)
    launch = request.get("launch") or {}
    if isinstance(launch, dict) and launch.get("served_model_name"):
        names.add(str(launch["served_model_name"]))
    return {_norm(n) for n in names if _norm(n)}


def _server_slug(request: dict[str, Any]) -> str:
    server = request.get("server")
    return str(server.get("slug", "")) if isinstance(server, dict) else str(server or "")


def _layout(request: dict[str, Any]) -> dict[str, Any]:
    topo = request.get("topology") or {}
    par = topo.get("parallel") or {}
    return {"nodes": topo.get("nodes"), "tp": par.get("tp"), "dp": par.get("dp"), "kind": topo.get("kind")}


def mismatches(benchmark: MeasuredBenchmark, conditions: dict[str, Any] | None = None) -> list[str]:
    """What in the measurement does not match the plan it is attached to (empty: it matches).

    ``conditions``: what the administrator knows was measured (``server``, ``nodes``, ``tp``, ``dp``);
    the bench file itself names only the model and the load.
    """
    request = benchmark.revision.request_json or {}
    figures = benchmark.figures or {}
    problems: list[str] = []
    measured_model = _norm(str(figures.get("model_id") or figures.get("tokenizer_id") or ""))
    plan_models = _plan_model_names(request)
    if not measured_model:
        problems.append("model: the result does not name the model it measured (model_id)")
    elif not any(measured_model in name or name in measured_model for name in plan_models):
        problems.append(
            f"model: the result measured {figures.get('model_id')!r}, the plan serves "
            f"{', '.join(sorted(plan_models)) or 'no named model'}"
        )
    c = conditions or {}
    if c.get("server") and str(c["server"]) != _server_slug(request):
        problems.append(f"hardware: measured on {c['server']!r}, the plan uses {_server_slug(request)!r}")
    plan_layout = _layout(request)
    for key in ("nodes", "tp", "dp"):
        if (
            c.get(key) is not None
            and plan_layout.get(key) is not None
            and int(c[key]) != int(plan_layout[key])
        ):
            problems.append(f"layout: measured {key} {c[key]}, the plan has {plan_layout[key]}")
    workload = request.get("workload") or {}
    completed = figures.get("completed") or 0
    for name, total, planned in (
        ("input length", figures.get("total_input_tokens"), workload.get("input_tokens")),
        ("output length", figures.get("total_output_tokens"), workload.get("output_tokens")),
    ):
        if completed and total and planned:
            mean = total / completed
            if abs(mean - planned) > LENGTH_TOLERANCE * planned:
                problems.append(f"{name}: measured {mean:,.0f} tokens per request, the plan has {planned:,}")
    if not figures.get("max_concurrency"):
        problems.append("load: the result has no max_concurrency (a closed-loop run is needed)")
    return problems


def build_record(benchmark: MeasuredBenchmark) -> dict[str, Any]:
    """The calibration record (configurator/calibration/__init__.py format) with its provenance."""
    rev = benchmark.revision
    figures = benchmark.figures
    completed = figures.get("completed") or 0
    request = dict(rev.request_json or {})
    workload = request.get("workload") or {}
    measured: dict[str, Any] = {"output_tokens_per_s": float(figures["output_throughput"])}
    if figures.get("mean_ttft_ms") is not None:
        measured["ttft_ms"] = float(figures["mean_ttft_ms"])
    if figures.get("mean_tpot_ms") is not None:
        measured["tpot_ms"] = float(figures["mean_tpot_ms"])
    return {
        "id": f"promoted-{rev.number or rev.pk}-bench-{benchmark.pk}",
        "request": request,
        "workload": {
            "input_tokens": round(figures["total_input_tokens"] / completed)
            if completed and figures.get("total_input_tokens")
            else int(workload.get("input_tokens", 0)),
            "output_tokens": round(figures["total_output_tokens"] / completed)
            if completed and figures.get("total_output_tokens")
            else int(workload.get("output_tokens", 0)),
            "concurrency": int(figures["max_concurrency"]),
        },
        "metric": "output_tokens_per_s",
        "measured": measured,
        "engine": str(figures.get("backend") or ""),
        "source": f"quote {rev.number or rev.pk} measured benchmark {benchmark.pk}",
        "provenance": {
            "quote_revision": rev.number or str(rev.pk),
            "benchmark_id": benchmark.pk,
            "file": benchmark.filename,
            "uploaded_by": getattr(benchmark.uploaded_by, "username", ""),
            "uploaded_at": benchmark.uploaded_at.isoformat() if benchmark.uploaded_at else "",
            "bench_date": str(figures.get("date") or ""),
        },
    }


@transaction.atomic
def promote(
    benchmark: MeasuredBenchmark, by: Any, conditions: dict[str, Any] | None = None
) -> PromotedMeasurement:
    """Promote one measurement (refused with the mismatch named, or when already promoted)."""
    if PromotedMeasurement.objects.filter(benchmark=benchmark).exists():
        raise PromotionRefused("this measurement is already in the calibration set")
    problems = mismatches(benchmark, conditions)
    if problems:
        raise PromotionRefused("; ".join(problems))
    record = build_record(benchmark)
    record["provenance"]["promoted_by"] = getattr(by, "username", "")
    return PromotedMeasurement.objects.create(benchmark=benchmark, promoted_by=by, record=record)


def promoted_records() -> list[dict[str, Any]]:
    return [dict(p.record) for p in PromotedMeasurement.objects.all()]
