"""Upload of a ``vllm bench serve --save-result`` JSON onto a quote revision, and the measured figures.

``measured_context(revision)`` is what the quote page, the XLSX and the PDF show:
the latest measurement beside the estimate, each figure marked *measured* or
*estimate*, as the section ``MEASURED`` declares them; the engine prices the measured
throughput with the plan's own yearly cost, basis and utilisation (``engine/tco/measured.py``).
"""

from __future__ import annotations

import hashlib
from typing import Any

from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import get_language
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from configurator.public import measure_benchmark, sections

from .. import selectors
from .importer import MAX_BYTES, BenchmarkImportError, benchmark_mismatches, parse_benchmark
from .models import MeasuredBenchmark


def _float(value: Any) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _unit(row: dict, figures: dict) -> str:
    """The unit a measured row's numbers are in: the figure's, or milliseconds where the section's line
    scales seconds by 1,000 (its label reads "(ms)" and so do its numbers)."""
    unit = str((figures.get(row["cells"][1]["figure"]) or {}).get("unit", ""))
    line = next((line for line in sections.MEASURED.lines if line.name == row["key"]), None)
    return "ms" if unit == "s" and line is not None and line.scale == 1000 else unit


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
    result = revision.result_json if isinstance(revision.result_json, dict) else {}
    request = revision.request_json if isinstance(revision.request_json, dict) else {}
    # The engine prices the measured throughput as the plan prices its estimate (its basis, its yearly
    # cost, its utilisation: configurator/engine/tco/measured.py); the rows are the MEASURED section's.
    measured = measure_benchmark(bench.figures or {}, result, request)
    figures = {**(result.get("figures") or {}), **measured.figures()}
    lang = get_language() or "en"
    table = sections.table(
        sections.MEASURED, figures, lang, currency=revision.currency, keys={"basis": measured.basis}
    )
    rows = [
        {
            "key": row["key"],
            "label": row["label"],
            "estimate": _float(row["cells"][0]["value"]),
            "measured": _float(row["cells"][1]["value"]),
            "unit": _unit(row, figures),
        }
        for row in table["rows"]
        if row["cells"][1]["value"] is not None
    ]
    quoted = (request.get("workload") or {}).get("concurrency")
    measured_conc = (bench.figures or {}).get("max_concurrency")
    return {
        "benchmark": bench,
        "figures": bench.figures or {},
        "title": table["title"],
        "columns": table["columns"],
        "rows": rows,
        "quoted_concurrency": quoted,
        "measured_concurrency": measured_conc,
        "concurrency_differs": measured_conc is not None and quoted is not None and measured_conc != quoted,
        "cost_per_m_output": measured.cost_per_m_output,
        "cost_per_m_input": measured.cost_per_m_input,
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
    from ..services.revisions import revision_create_from
    from ..statuses import CLOSED_STATUSES, QuoteStatus

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
