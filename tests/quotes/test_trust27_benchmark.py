"""Issue 27, findings 3 and 4: real ``vllm bench serve`` results, and only matching ones.

The stub ``vllm`` below writes its result file the way vLLM's ``vllm/benchmarks/serve.py``
(``main``) does with ``--save-result``: ``date``, ``endpoint_type``, ``label``, ``model_id``
(``--model``), ``tokenizer_id``, ``num_prompts``, one text entry per ``--metadata KEY=VALUE``
(``item.split("=", 1)``), ``request_rate`` — ``args.request_rate if args.request_rate <
float("inf") else "inf"``, the string for the default unlimited rate — ``burstiness`` and
``max_concurrency``, then the benchmark's figures, with ``json.dump`` (``allow_nan`` default).
It is fed the bundle's own ``benchmark.sh`` for the quote's plan.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from configurator.engine.launch import bundle_files
from documents.exports import launch_result_from_resolved, revision_workbook
from quotes.benchmarks.importer import benchmark_mismatches, parse_benchmark
from quotes.benchmarks.models import MeasuredBenchmark
from quotes.models import Quote
from quotes.statuses import QuoteStatus, RevisionStatus

pytestmark = pytest.mark.django_db

REQUEST = {
    "model": "kimi-k3",
    "server": "atlas-800-a3",
    "topology": {"kind": "primary_standby", "nodes": 8},
    "scenario": "finance-research",
    # The scenario brings its workload; its 32 concurrent 34,816-token requests need more than this
    # 4 + 4 pair's KV cache once the K3 draft's layers are counted (28 at once), which this test is not
    # about: it states a load the pair carries.
    "workload": {"concurrency": 16},
}

STUB_VLLM = r"""#!/usr/bin/env python3
import json, sys
from datetime import datetime

argv = sys.argv[1:]
assert argv[:2] == ["bench", "serve"], argv
opts, metadata, i = {}, [], 2
while i < len(argv):
    if argv[i] == "--metadata":
        i += 1
        while i < len(argv) and not argv[i].startswith("--"):
            metadata.append(argv[i]); i += 1
        continue
    if i + 1 < len(argv) and not argv[i + 1].startswith("--"):
        opts[argv[i]] = argv[i + 1]; i += 2
    else:
        opts[argv[i]] = True; i += 1
concurrency = int(opts["--max-concurrency"])
prompts = int(opts["--num-prompts"])
isl, osl = int(opts["--random-input-len"]), int(opts["--random-output-len"])
request_rate = float(opts.get("--request-rate", "inf"))
result_json = {}
result_json["date"] = datetime.now().strftime("%Y%m%d-%H%M%S")
result_json["endpoint_type"] = opts["--backend"]
result_json["label"] = None
result_json["model_id"] = opts["--model"]
result_json["tokenizer_id"] = opts["--tokenizer"]
result_json["num_prompts"] = prompts
for item in metadata:
    kvstring = item.split("=", 1)
    result_json[kvstring[0].strip()] = kvstring[1].strip()
result_json["request_rate"] = request_rate if request_rate < float("inf") else "inf"
result_json["burstiness"] = 1.0
result_json["max_concurrency"] = concurrency
tpot = 38.4
duration = prompts / concurrency * (1.3 + osl * tpot / 1000)
benchmark_result = {
    "duration": duration, "completed": prompts, "failed": 0,
    "total_input_tokens": prompts * isl, "total_output_tokens": prompts * osl,
    "request_throughput": prompts / duration, "request_goodput": None,
    "output_throughput": prompts * osl / duration,
    "total_token_throughput": prompts * (isl + osl) / duration,
    "input_lens": [isl] * 3, "output_lens": [osl] * 3, "ttfts": [1.3] * 3, "itls": [[0.04]] * 3,
    "generated_texts": [""] * 3, "errors": [""] * 3,
    "mean_ttft_ms": 1300.0, "median_ttft_ms": 1290.0, "std_ttft_ms": 20.0, "p90_ttft_ms": 1350.0,
    "p99_ttft_ms": 1400.0, "mean_tpot_ms": tpot, "median_tpot_ms": tpot, "std_tpot_ms": 1.0,
    "p90_tpot_ms": 40.0, "p99_tpot_ms": 41.0, "mean_itl_ms": tpot, "median_itl_ms": tpot,
    "std_itl_ms": 1.0, "p90_itl_ms": 40.0, "p99_itl_ms": 41.0, "mean_e2el_ms": 40000.0,
    "median_e2el_ms": 40000.0, "std_e2el_ms": 100.0, "p90_e2el_ms": 40100.0, "p99_e2el_ms": 40200.0,
}
result_json = {**result_json, **benchmark_result}
with open(f"{opts['--result-dir']}/{opts['--result-filename']}", "w", encoding="utf-8") as f:
    json.dump(result_json, f)
"""


@pytest.fixture
def quote(users, catalog, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.CELERY_TASK_ALWAYS_EAGER = True
    client = engineer_client(users)
    response = client.post(
        reverse("quotes:create"), {"request_json": json.dumps(REQUEST), "customer_name": "Bank of Example"}
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    return Quote.objects.get()


def engineer_client(users) -> Client:
    client = Client(HTTP_ACCEPT_LANGUAGE="en")
    client.force_login(users["engineer"])
    return client


def bundle_results(revision, tmp_path: Path) -> list[Path]:
    """Run the bundle's own benchmark.sh for the revision's plan against the stub vllm."""
    files = bundle_files(launch_result_from_resolved(revision.resolved_json))
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    (bindir / "vllm").write_text(STUB_VLLM)
    (bindir / "vllm").chmod(0o755)
    script = tmp_path / "benchmark.sh"
    # The site engineer fills in the site's values, as the script asks before it runs.
    script.write_text(
        files["benchmark.sh"]
        .replace("__GATEWAY_VIP__", "10.0.0.10")
        .replace("__MODEL_PATH__", "/models/kimi-k3")
    )
    env = {**os.environ, "PATH": f"{bindir}:{os.environ['PATH']}", "RESULT_DIR": str(tmp_path / "results")}
    proc = subprocess.run(["bash", str(script)], capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return sorted((tmp_path / "results").iterdir())


def upload(client, revision, raw: bytes, name="bench.json"):
    return client.post(
        reverse("quotes:benchmark", args=[revision.pk]),
        {"file": SimpleUploadedFile(name, raw, content_type="application/json")},
    )


def test_real_vllm_bench_serve_results_are_refused(users, quote, tmp_path):
    # Finding 3: what the bundle's benchmark.sh writes — "request_rate": "inf" — imports as-is.
    revision = quote.revisions.get()
    results = bundle_results(revision, tmp_path)
    assert results
    client = engineer_client(users)
    for path in results:
        raw = path.read_bytes()
        data = json.loads(raw)
        assert data["request_rate"] == "inf" and data["model_id"] == "kimi-k3"
        response = upload(client, revision, raw, path.name)
        assert response.status_code == 302, response.content.decode()[:2000]
        stored = MeasuredBenchmark.objects.filter(revision=revision).first()
        assert stored.sha256 == hashlib.sha256(raw).hexdigest()
        assert stored.figures["request_rate"] == "inf"
        assert stored.figures["output_throughput"] == pytest.approx(data["output_throughput"])
        assert stored.figures["nodes"] == 8
        assert stored.figures["server"] == revision.resolved_json["server"]["name"]
    assert MeasuredBenchmark.objects.filter(revision=revision).count() == len(results)


def test_a_numeric_request_rate_and_the_older_infinity_still_import():
    base = {"output_throughput": 400.0, "request_throughput": 0.4, "mean_ttft_ms": 1300.0,
            "mean_tpot_ms": 38.4, "duration": 800.0, "model_id": "kimi-k3"}  # fmt: skip
    assert parse_benchmark(json.dumps({**base, "request_rate": 4.0}))["request_rate"] == 4.0
    assert parse_benchmark(json.dumps({**base, "request_rate": float("inf")}))["request_rate"] == "inf"
    with pytest.raises(ValueError, match="request_rate"):
        parse_benchmark(json.dumps({**base, "request_rate": "fast"}))


def workbook_cells(data: bytes) -> list:
    """Every sheet's cell values (the file's bytes carry its creation time)."""
    import io

    from openpyxl import load_workbook

    book = load_workbook(io.BytesIO(data))
    return [(ws.title, [list(row) for row in ws.iter_rows(values_only=True)]) for ws in book.worksheets]


def mismatched(data: dict, **changes) -> bytes:
    return json.dumps({**data, **changes}).encode()


@pytest.mark.parametrize(
    ("changes", "field", "words"),
    [
        ({"model_id": "Qwen/Qwen2.5-0.5B-Instruct", "output_throughput": 50000.0}, "model_id",
         "is 'Qwen/Qwen2.5-0.5B-Instruct', but this plan serves Kimi K3"),
        ({"server": "NF5688M7"}, "server", "is 'NF5688M7', but this plan runs on Atlas 800 A3 (super-node server)"),
        ({"nodes": "2"}, "nodes", "is 2, but this plan has 8 nodes"),
        ({"model_id": None}, "model_id", "is missing"),
    ],
)  # fmt: skip
def test_imports_that_do_not_match_are_refused_naming_the_mismatch(
    users, quote, tmp_path, changes, field, words
):
    revision = quote.revisions.get()
    data = json.loads(bundle_results(revision, tmp_path)[0].read_bytes())
    response = upload(engineer_client(users), revision, mismatched(data, **changes))
    assert response.status_code == 400
    text = response.content.decode().replace("&#x27;", "'")
    assert field in text and words in text
    assert not MeasuredBenchmark.objects.exists()


def test_the_mismatch_check_is_a_plain_function(quote, tmp_path):
    revision = quote.revisions.get()
    figures = parse_benchmark(bundle_results(revision, tmp_path)[0].read_bytes())
    assert benchmark_mismatches(figures, revision.resolved_json) == {}
    # The published name of the weights is the same model.
    assert benchmark_mismatches({**figures, "model_id": "moonshotai/Kimi-K3"}, revision.resolved_json) == {}
    assert set(benchmark_mismatches({**figures, "model_id": "Qwen2.5-0.5B"}, revision.resolved_json)) == {
        "model_id"
    }


def test_an_import_never_changes_an_issued_or_accepted_revision(
    users, quote, tmp_path, django_capture_on_commit_callbacks
):
    client = engineer_client(users)
    r1 = quote.revisions.get()
    raw = bundle_results(r1, tmp_path)[0].read_bytes()
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("quotes:share_create", kwargs={"pk": r1.pk}))
    assert response.status_code == 302
    r1.refresh_from_db()
    assert r1.status == RevisionStatus.ISSUED
    before = workbook_cells(revision_workbook(r1))
    # Sent: the measurement goes onto a new draft R2; R1 and its workbook stay as issued.
    response = upload(client, r1, raw)
    assert response.status_code == 302
    r2 = quote.revisions.get(index=2)
    assert r2.status == RevisionStatus.DRAFT and r2.based_on_id == r1.pk
    assert list(MeasuredBenchmark.objects.values_list("revision_id", flat=True)) == [r2.pk]
    assert not r1.benchmarks.exists() and workbook_cells(revision_workbook(r1)) == before
    assert [line.unit_price for line in r2.lines.all()] == [line.unit_price for line in r1.lines.all()]
    # Accepted: nothing attaches; the message says what to do instead.
    quote.refresh_from_db()
    quote.status = QuoteStatus.ACCEPTED
    quote.save(update_fields=["status"])
    response = upload(client, r1, raw)
    assert response.status_code == 400 and "clone it as a new quote" in response.content.decode()
    assert MeasuredBenchmark.objects.count() == 1


def test_uploads_up_to_the_importers_limit_reach_it_and_larger_ones_get_a_readable_413(
    users, quote, tmp_path
):
    # Finding 13: the 2 MB form limit answered every larger upload with a raw JSON 413, so the
    # importer's 20 MB limit was never reached.  Per-request arrays make real files this size.
    revision = quote.revisions.get()
    data = json.loads(bundle_results(revision, tmp_path)[0].read_bytes())
    big = json.dumps({**data, "ttfts": [1.25] * 400_000}).encode()
    assert 2 * 1024 * 1024 < len(big) < 20 * 1024 * 1024
    client = engineer_client(users)
    assert upload(client, revision, big).status_code == 302
    huge = json.dumps({**data, "ttfts": [1.25] * 3_600_000}).encode()
    assert len(huge) > 20 * 1024 * 1024 + 64 * 1024
    response = upload(client, revision, huge)
    assert response.status_code == 413
    assert response["Content-Type"].startswith("text/html")
    assert "The file is too large: at most 20 MB can be uploaded here." in response.content.decode()
    assert MeasuredBenchmark.objects.count() == 1
