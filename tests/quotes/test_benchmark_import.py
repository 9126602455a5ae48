"""Measured beats estimated: a `vllm bench serve --save-result` JSON attached to a quote revision.

The file format is vLLM's `vllm/benchmarks/serve.py` result (main): the sample below uses its
key names, per-request arrays included.  Expected cost per million tokens is recomputed here from
the revision's own yearly cost and the measured throughput (31,536,000 s × utilisation).
"""

from __future__ import annotations

import io
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from openpyxl import load_workbook

from documents.exports import revision_workbook
from documents.pdf.context import proposal_context
from documents.pdf.sample import sample_quote_create
from quotes.benchmarks.importer import MAX_BYTES, BenchmarkImportError, parse_benchmark
from quotes.benchmarks.models import MeasuredBenchmark

BENCH = {
    "date": "20261201-093000",
    "endpoint_type": "openai-chat",
    "backend": "openai-chat",
    "label": None,
    "model_id": "moonshotai/Kimi-K3",
    "tokenizer_id": "moonshotai/Kimi-K3",
    "num_prompts": 320,
    "request_rate": "inf",
    "burstiness": 1.0,
    "max_concurrency": 16,
    "duration": 812.5,
    "completed": 320,
    "failed": 0,
    "total_input_tokens": 320 * 8192,
    "total_output_tokens": 320 * 1024,
    "request_throughput": 0.3938,
    "request_goodput": None,
    "output_throughput": 403.3,
    "total_token_throughput": 3629.7,
    "input_lens": [8192] * 4,
    "output_lens": [1024] * 4,
    "ttfts": [1.2, 1.3, 1.1, 1.4],
    "itls": [[0.04, 0.04]] * 4,
    "generated_texts": ["..."] * 4,
    "errors": [""] * 4,
    "mean_ttft_ms": 1310.0,
    "median_ttft_ms": 1250.0,
    "std_ttft_ms": 210.0,
    "p90_ttft_ms": 1620.0,
    "p99_ttft_ms": 2050.0,
    "mean_tpot_ms": 38.4,
    "median_tpot_ms": 38.1,
    "std_tpot_ms": 1.2,
    "p90_tpot_ms": 40.0,
    "p99_tpot_ms": 41.7,
}


def _raw(data) -> bytes:
    return json.dumps(data).encode()


# --------------------------------------------------------------------------- parsing


def test_a_vllm_bench_serve_result_parses_to_its_scalar_figures():
    figures = parse_benchmark(_raw(BENCH))
    assert figures["output_throughput"] == 403.3
    assert figures["mean_ttft_ms"] == 1310.0 and figures["p90_tpot_ms"] == 40.0
    assert figures["max_concurrency"] == 16 and figures["completed"] == 320
    # vLLM writes the default unlimited rate as the string "inf" (vllm/benchmarks/serve.py:
    # result_json["request_rate"] = ... else "inf"); kept as it is, never a number.
    assert figures["request_rate"] == "inf"
    assert "ttfts" not in figures and "generated_texts" not in figures


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"output_throughput": None}, "output_throughput"),
        ({"mean_tpot_ms": "38.4"}, "mean_tpot_ms"),
        ({"mean_ttft_ms": float("nan")}, "mean_ttft_ms"),
        ({"request_throughput": -1}, "request_throughput"),
        ({"duration": True}, "duration"),
        ({"max_concurrency": 2.5}, "max_concurrency"),
        ({"completed": 0}, "completed"),
        ({"p99_ttft_ms": 1e400}, "p99_ttft_ms"),
        ({"model_id": {"nested": 1}}, "model_id"),
    ],
)
def test_bad_fields_are_refused_by_name(change, field):
    data = {**BENCH, **change}
    if change.get("output_throughput", 1) is None:
        del data["output_throughput"]
    with pytest.raises(BenchmarkImportError) as exc:
        parse_benchmark(_raw(data))
    assert field in exc.value.errors


@pytest.mark.parametrize(
    "raw",
    [b"", b"[1, 2]", b"{not json", b"\xff\xfe", b"[" * 100_000 + b"]" * 100_000, b"{}"],
)
def test_files_that_are_not_a_bench_result_are_refused(raw):
    with pytest.raises(BenchmarkImportError) as exc:
        parse_benchmark(raw)
    assert exc.value.errors


def test_an_oversized_file_is_refused_before_parsing():
    with pytest.raises(BenchmarkImportError) as exc:
        parse_benchmark(b" " * (MAX_BYTES + 1))
    assert "file" in exc.value.errors


# --------------------------------------------------------------------------- quote


@pytest.fixture
def revision(engineer):
    return sample_quote_create(by=engineer, language="en")


def _upload(client, revision, data: bytes, name="bench.json"):
    return client.post(
        reverse("quotes:benchmark", args=[revision.pk]),
        {"file": SimpleUploadedFile(name, data, "application/json")},
    )


def _expected_cost_per_m_output(revision, tps: float) -> float:
    tokens = revision.result_json["tco"]["tokens"]
    u = float(revision.request_json["commercial"]["utilisation"])
    per_year = tps * 31_536_000 * u / 1e6
    return float(tokens["annual_cost_buy"]) * (1 - float(tokens["input_cost_share"])) / per_year


@pytest.mark.django_db
def test_uploading_replaces_the_estimate_with_measured_figures_in_page_xlsx_and_pdf(
    client, engineer, revision
):
    client.force_login(engineer)
    response = _upload(client, revision, _raw(BENCH))
    assert response.status_code == 302
    bench = MeasuredBenchmark.objects.get(revision=revision)
    assert bench.figures["output_throughput"] == 403.3 and bench.uploaded_by == engineer

    page = client.get(reverse("quotes:detail", args=[revision.quote.pk])).content.decode()
    assert 'id="measured"' in page and "403.30" in page and "1.31" in page and "38.40" in page
    cost = _expected_cost_per_m_output(revision, 403.3)
    assert f"{cost:.2f}" in page

    book = load_workbook(io.BytesIO(revision_workbook(revision)), data_only=True)
    sheet = book["Measured"]
    header = [c.value for c in sheet[1]]
    rows = [dict(zip(header, (c.value for c in r), strict=False)) for r in sheet.iter_rows(min_row=2)]
    by_label = {r["Figure"]: r for r in rows}
    assert by_label["Output throughput (tokens/s)"]["Measured"] == pytest.approx(403.3)
    assert by_label["Cost per million output tokens (buy)"]["Measured"] == pytest.approx(cost, abs=0.01)
    assert all(r["Source"].startswith("measured: vllm bench serve (bench.json)") for r in rows)
    # The time per output token reads in milliseconds, as its label says: the unit column too (it said
    # "s" beside 20.9 and 38.4), and the estimate is the plan's seconds × 1,000.
    tpot = by_label["Time per output token, mean (ms)"]
    assert tpot["Unit"] == "ms" and tpot["Measured"] == pytest.approx(38.4)
    assert tpot["Estimate"] == pytest.approx(
        revision.result_json["figures"]["performance.tpot_s"]["value"] * 1000
    )
    assert by_label["Time to first token, mean (s)"]["Unit"] == "s"

    context = proposal_context(revision, "en")
    assert context["measured"]["rows"][0]["measured"] == pytest.approx(403.3)


@pytest.mark.django_db
def test_a_bad_file_is_a_400_naming_the_field_and_nothing_is_stored(client, engineer, revision):
    client.force_login(engineer)
    bad = {**BENCH}
    del bad["mean_tpot_ms"]
    response = _upload(client, revision, _raw(bad))
    assert response.status_code == 400
    assert "mean_tpot_ms" in response.content.decode()
    assert not MeasuredBenchmark.objects.exists()


@pytest.mark.django_db
def test_only_editors_of_the_quote_may_attach_measurements(client, engineer2, revision):
    client.force_login(engineer2)  # another team: cannot even see the quote
    response = _upload(client, revision, _raw(BENCH))
    assert response.status_code in (403, 404)
    assert not MeasuredBenchmark.objects.exists()


@pytest.mark.django_db
def test_the_proposal_gives_the_error_band_until_a_measurement_replaces_it(client, engineer, revision):
    perf = revision.result_json["performance"]
    low, high = perf["error_band"]
    context = proposal_context(revision, "en")
    # The band is the engine's figure, printed once by the performance section (no sentence of its own).
    (row,) = [r for r in context["performance_rows"] if r["key"] == "performance.output_tokens_per_s_range"]
    lo, hi = (float(v) for v in str(row["value"]).split("–"))
    assert lo == pytest.approx(perf["output_tokens_per_s"] / high, abs=1)  # whole tokens/s, as printed
    assert hi == pytest.approx(perf["output_tokens_per_s"] / low, abs=1)
    assert context["measured"] is None
    # the load curve of the plan goes into the proposal as a drawing
    assert context["load_curve"]["uri"].startswith("data:image/svg+xml")
    client.force_login(engineer)
    _upload(client, revision, _raw(BENCH))
    assert proposal_context(revision, "en")["measured"] is not None
