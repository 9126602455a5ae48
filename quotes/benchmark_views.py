"""Upload of a ``vllm bench serve --save-result`` JSON onto a quote revision, and the measured figures.

``measured_context(revision)`` is what the quote page, the XLSX and the PDF show:
the latest measurement beside the estimate, each figure marked *measured* or
*estimate*; cost per million tokens is recomputed from the revision's own yearly
cost (``tco.tokens``) and the measured throughput, the way ``engine/tco`` does
for the estimate.
"""

from __future__ import annotations

import hashlib
from decimal import Decimal
from typing import Any

from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from . import selectors
from .benchmark_import import MAX_BYTES, BenchmarkImportError, benchmark_mismatches, parse_benchmark
from .benchmark_models import MeasuredBenchmark

SECONDS_PER_YEAR = 31_536_000


def _float(value: Any) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def measured_context(revision) -> dict[str, Any] | None:
    """Estimated and measured figures of a revision, or None when nothing was measured."""
    if revision is None or revision.pk is None:
        return None
    # The latest measurement whose model, hardware, load and request lengths match the plan: a run of
    # the acceptance sweep at another load, or a file with other request lengths, gives no measured
    # figure (it stays attached as evidence).
    resolved = revision.resolved_json if isinstance(revision.resolved_json, dict) else {}
    bench = next(
        (
            b
            for b in revision.benchmarks.all()
            if not benchmark_mismatches(b.figures or {}, resolved, conditions=True)
        ),
        None,
    )
    if bench is None:
        return None
    m = bench.figures or {}
    result = revision.result_json if isinstance(revision.result_json, dict) else {}
    perf = result.get("performance") or {}
    tokens = (result.get("tco") or {}).get("tokens") or {}
    request = revision.request_json if isinstance(revision.request_json, dict) else {}
    workload = request.get("workload") or {}
    commercial = request.get("commercial") or {}
    utilisation = (
        _float(commercial.get("utilisation")) or _float((result.get("tco") or {}).get("utilisation")) or 0.6
    )
    out_tps = _float(m.get("output_throughput")) or 0.0
    total_tps = _float(m.get("total_token_throughput"))
    in_tps = (total_tps - out_tps) if total_tps is not None and total_tps >= out_tps else None
    annual = _float(tokens.get("annual_cost_buy"))
    share = _float(tokens.get("input_cost_share")) or 0.0
    cost_out = cost_in = None
    if annual and out_tps > 0:
        tout = out_tps * SECONDS_PER_YEAR * utilisation / 1e6
        cost_out = Decimal(str(round(annual * (1 - share) / tout, 2)))
        if in_tps:
            tin = in_tps * SECONDS_PER_YEAR * utilisation / 1e6
            cost_in = Decimal(str(round(annual * share / tin, 2)))
    quoted = workload.get("concurrency")
    measured_conc = m.get("max_concurrency")
    rows = [
        {
            "key": "output_tokens_per_s",
            "label": _("Output throughput (tokens/s)"),
            "estimate": _float(perf.get("output_tokens_per_s")),
            "measured": out_tps,
            "unit": "tokens/s",
        },
        {
            "key": "ttft_s",
            "label": _("Time to first token, mean (s)"),
            "estimate": _float(perf.get("ttft_s")),
            "measured": (_float(m.get("mean_ttft_ms")) or 0) / 1000,
            "unit": "s",
        },
        {
            "key": "tpot_ms",
            "label": _("Time per output token, mean (ms)"),
            "estimate": (_float(perf.get("tpot_s")) or 0) * 1000,
            "measured": _float(m.get("mean_tpot_ms")),
            "unit": "ms",
        },
        {
            "key": "cost_per_m_output",
            "label": _("Cost per million output tokens (buy)"),
            "estimate": _float(tokens.get("cost_per_m_output_buy")),
            "measured": float(cost_out) if cost_out is not None else None,
            "unit": revision.currency,
        },
    ]
    if cost_in is not None:
        rows.append(
            {
                "key": "cost_per_m_input",
                "label": _("Cost per million input tokens (buy)"),
                "estimate": _float(tokens.get("cost_per_m_input_buy")),
                "measured": float(cost_in),
                "unit": revision.currency,
            }
        )
    for p in ("p90", "p99"):
        if m.get(f"{p}_ttft_ms") is not None:
            rows.append(
                {
                    "key": f"ttft_{p}_s",
                    "label": _("Time to first token, %(p)s (s)") % {"p": p.upper()},
                    "estimate": _float(perf.get("ttft_p90_s")) if p == "p90" else None,
                    "measured": m[f"{p}_ttft_ms"] / 1000,
                    "unit": "s",
                }
            )
    return {
        "benchmark": bench,
        "figures": m,
        "rows": rows,
        "quoted_concurrency": quoted,
        "measured_concurrency": measured_conc,
        "concurrency_differs": measured_conc is not None and quoted is not None and measured_conc != quoted,
        "cost_per_m_output": cost_out,
        "cost_per_m_input": cost_in,
    }


@require_POST
def revision_benchmark_upload(request: HttpRequest, pk: int) -> HttpResponse:
    """Attach a bench result to a revision (editors of the quote only); 400 with field messages if invalid."""
    revision = selectors.revision_get_visible(user=request.user, pk=pk)
    quote = revision.quote
    if not selectors.can_edit(request.user, quote):
        raise PermissionDenied(_("Only the quote's owner or a manager of its team can attach measurements."))
    upload = request.FILES.get("file")
    errors: dict[str, list[str]] = {}
    figures = None
    digest = ""
    if upload is None:
        errors["file"] = [_("Choose the JSON file `vllm bench serve --save-result` wrote.")]
    elif upload.size is not None and upload.size > MAX_BYTES:
        errors["file"] = [_("is larger than %(mb)s MB.") % {"mb": MAX_BYTES // (1024 * 1024)}]
    else:
        raw = upload.read(MAX_BYTES + 1)
        digest = hashlib.sha256(raw).hexdigest()
        try:
            figures = parse_benchmark(raw)
        except BenchmarkImportError as exc:
            errors = exc.errors
    if not errors and figures is not None:
        # Issue 27, finding 4: a result for another model, server or node count is refused by name.
        errors = benchmark_mismatches(
            figures, revision.resolved_json if isinstance(revision.resolved_json, dict) else {}
        )
    target = revision
    if not errors and revision.is_issued:
        # An issued (sent, accepted) offer never changes: the measurement goes onto a new draft.
        try:
            target = _draft_for_measurement(revision, request.user, upload.name)
        except ValidationError as exc:
            errors = {"file": exc.messages}
    if errors:
        context = {"revision": revision, "quote": quote, "benchmark_errors": errors, "can_edit": True}
        return render(request, "quotes/_benchmark_errors.html", context, status=400)
    MeasuredBenchmark.objects.create(
        revision=target,
        uploaded_by=request.user,
        filename=("".join(ch for ch in upload.name if ch.isprintable()))[:200],
        figures=figures,
        sha256=digest,
    )
    if target.pk != revision.pk:
        messages.info(
            request,
            _(
                "%(issued)s is issued and stays as it was; the measurement is attached to the new draft %(draft)s."
            )
            % {"issued": revision.number, "draft": target.number},
        )
    url = reverse("quotes:detail", args=[quote.pk]) + f"?rev={target.index}#measured"
    return redirect(url, permanent=False)


def _draft_for_measurement(revision, by, filename: str):
    """A new draft revision of ``revision``'s quote (same configuration and prices) to carry a
    measurement; refused for a closed quote (accepted, won, lost), whose offer is settled."""
    from .services.revisions import revision_create_from
    from .statuses import CLOSED_STATUSES, QuoteStatus

    quote = revision.quote
    if quote.status in CLOSED_STATUSES:
        raise ValidationError(
            _(
                "%(number)s is %(status)s and cannot change; clone it as a new quote and import the "
                "measurement there."
            )
            % {"number": revision.number, "status": QuoteStatus(quote.status).label}
        )
    name = "".join(ch for ch in filename if ch.isprintable())[:100]
    return revision_create_from(
        revision=revision,
        changes={"keep_prices": True, "note": _("Measured results imported (%(file)s).") % {"file": name}},
        by=by,
    )
