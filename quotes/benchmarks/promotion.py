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

from configurator.public import BAND_BOUNDS
from configurator.public import calibration as cal

from .calibration_models import PromotedMeasurement
from .importer import benchmark_mismatches, condition_mismatches
from .models import MeasuredBenchmark

#: Throughput, TTFT and TPOT within a quarter to four times the estimate of the measurement's own plan
#: (the engine's physical band bounds, serving_model.BAND_BOUNDS); beyond, only with a second
#: reviewer and a written reason (:func:`confirm`).
PLAUSIBLE_RATIO = BAND_BOUNDS
MIN_REASON = 20  # characters of the written reason an implausible measurement is promoted with


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
    # The server and node count the file itself names (the bundle's benchmark.sh --metadata).
    resolved = benchmark.revision.resolved_json if isinstance(benchmark.revision.resolved_json, dict) else {}
    identity = benchmark_mismatches(figures, resolved)
    for field, messages in identity.items():
        if field != "model_id":  # the model is compared above, by every name the plan serves it under
            label = "hardware" if field == "server" else "layout"
            problems += [f"{label}: the file's {field} {m}" for m in messages]
    problems += [f"{label}: {message}" for _, label, message in condition_mismatches(figures, request)]
    return problems


def implausibility(record: dict[str, Any]) -> list[str]:
    """How far the measurement is from the estimate of its own plan at the measured load (the engine
    with the fit in use, as ``manage.py calibrate`` predicts it): each of throughput, TTFT and TPOT whose
    predicted ÷ measured ratio is outside ``PLAUSIBLE_RATIO``.  Empty: plausible."""
    row = cal.compare(record)
    low, high = PLAUSIBLE_RATIO
    out = []
    for name, predicted, measured, unit in (
        ("throughput", row.predicted_tps, row.measured_tps, "tokens/s"),
        ("TTFT", row.predicted_ttft_ms, row.measured_ttft_ms, "ms"),
        ("TPOT", row.predicted_tpot_ms, row.measured_tpot_ms, "ms"),
    ):
        if measured is None:
            continue
        ratio = predicted / measured if measured > 0 else float("inf")
        if not (low <= ratio <= high):
            out.append(
                f"{name}: measured {measured:,.6g} {unit}, its plan estimates {predicted:,.6g} {unit} "
                f"(outside {1 / high:g}–{1 / low:g} × the estimate)"
            )
    return out


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
        # One source per quote (source_of reads the first word): its measurements are left out together.
        "source": f"quote:{rev.quote.number or rev.quote_id} measured benchmark {benchmark.pk}",
        "provenance": {
            "quote_revision": rev.number or str(rev.pk),
            "benchmark_id": benchmark.pk,
            "file": benchmark.filename,
            "uploaded_by": getattr(benchmark.uploaded_by, "username", ""),
            "uploaded_at": benchmark.uploaded_at.isoformat() if benchmark.uploaded_at else "",
            "bench_date": str(figures.get("date") or ""),
        },
    }


def _evidence_problems(benchmark: MeasuredBenchmark) -> list[str]:
    """The file behind the measurement: one was uploaded (its SHA-256 recorded), and no promoted
    measurement rests on the same bytes."""
    digest = (benchmark.sha256 or "").strip().lower()
    if not digest or not benchmark.filename:
        return ["file: the measurement has no uploaded file (SHA-256) behind it"]
    same = PromotedMeasurement.objects.filter(sha256=digest).exclude(benchmark=benchmark)
    if same.exists():
        first = same.first()
        return [f"file: the same file (SHA-256 {digest[:12]}…) is already in the calibration set as {first}"]
    return []


@transaction.atomic
def promote(
    benchmark: MeasuredBenchmark,
    by: Any,
    conditions: dict[str, Any] | None = None,
    reason: str = "",
) -> PromotedMeasurement:
    """Promote one measurement, or refuse it with :class:`PromotionRefused` naming why.

    Refused outright: already promoted, no file, the same file (SHA-256) already promoted, or a model,
    hardware, layout, load or request length other than its plan's.  A measurement implausible
    against its plan (:func:`implausibility`) is refused unless ``reason`` (at least ``MIN_REASON``
    characters) is written; then it waits for a second reviewer (:func:`confirm`) before
    ``calibrate`` reads it."""
    # Lock the measurement's row, so two administrators promoting it at once make one promotion.
    MeasuredBenchmark.objects.select_for_update().filter(pk=benchmark.pk).first()
    if PromotedMeasurement.objects.filter(benchmark=benchmark).exists():
        raise PromotionRefused("this measurement is already in the calibration set")
    problems = _evidence_problems(benchmark) + mismatches(benchmark, conditions)
    if problems:
        raise PromotionRefused("; ".join(problems))
    record = build_record(benchmark)
    record["provenance"]["promoted_by"] = getattr(by, "username", "")
    record["provenance"]["sha256"] = benchmark.sha256
    far = implausibility(record)
    reason = " ".join((reason or "").split())
    if far and len(reason) < MIN_REASON:
        raise PromotionRefused(
            "implausible against its own plan: "
            + "; ".join(far)
            + f". Promote it again with a written reason (at least {MIN_REASON} characters) for a second "
            "reviewer to confirm"
        )
    return PromotedMeasurement.objects.create(
        benchmark=benchmark,
        promoted_by=by,
        record=record,
        sha256=benchmark.sha256.strip().lower(),
        implausible="; ".join(far),
        reason=reason if far else "",
    )


@transaction.atomic
def confirm(promoted: PromotedMeasurement, by: Any) -> PromotedMeasurement:
    """A second reviewer confirms an implausible measurement promoted with a written reason: someone
    other than who promoted it and who uploaded it."""
    promoted = PromotedMeasurement.objects.select_for_update().get(pk=promoted.pk)
    if not promoted.awaiting_review:
        raise PromotionRefused("this measurement does not wait for a second review")
    if by.pk in (promoted.promoted_by_id, promoted.benchmark.uploaded_by_id):
        raise PromotionRefused("the second reviewer must be someone other than who uploaded and promoted it")
    promoted.second_reviewer = by
    promoted.save(update_fields=["second_reviewer"])
    return promoted


def promoted_records() -> list[dict[str, Any]]:
    """The calibration records ``calibrate`` adds: every promotion but those awaiting a second review."""
    return [dict(p.record) for p in PromotedMeasurement.objects.all() if not p.awaiting_review]
