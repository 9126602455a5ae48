"""Import of a ``vllm bench serve --save-result`` JSON: validated, reduced to the figures a quote uses.

The format is the result dict of vLLM's ``vllm/benchmarks/serve.py`` (``main``):
``duration``, ``completed``, ``total_input_tokens``, ``total_output_tokens``,
``request_throughput``, ``output_throughput``, ``total_token_throughput`` and,
per selected metric, ``mean_/median_/std_/p{N}_{ttft,tpot,itl,e2el}_ms``;
``--save-result`` adds ``date``, ``backend``, ``model_id``, ``num_prompts``,
``request_rate``, ``burstiness`` and ``max_concurrency``.  Per-request arrays
(``ttfts``, ``itls``, ``generated_texts`` …) are not kept.

:func:`parse_benchmark` never raises anything but :class:`BenchmarkImportError`,
whose ``errors`` maps a field to messages (the view answers 400 with them).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

MAX_BYTES = 20 * 1024 * 1024  # per-request arrays make real files a few MB for thousands of prompts
MAX_TEXT = 200

REQUIRED_NUMBERS = ("output_throughput", "request_throughput", "mean_ttft_ms", "mean_tpot_ms", "duration")
OPTIONAL_NUMBERS = (
    "total_token_throughput",
    "median_ttft_ms",
    "p90_ttft_ms",
    "p99_ttft_ms",
    "median_tpot_ms",
    "p90_tpot_ms",
    "p99_tpot_ms",
    "mean_itl_ms",
    "mean_e2el_ms",
    "request_rate",
)
OPTIONAL_COUNTS = ("completed", "failed", "total_input_tokens", "total_output_tokens", "num_prompts")
TEXT_FIELDS = ("date", "backend", "model_id", "tokenizer_id", "label", "endpoint_type")
UPPER = 1e12  # no serving figure is this large; guards against 1e308-style input
_NON_FINITE = object()  # what NaN / Infinity / -Infinity parse to


class BenchmarkImportError(ValueError):
    def __init__(self, errors: Mapping[str, list[str]]):
        self.errors = dict(errors)
        super().__init__("; ".join(f"{k}: {' '.join(v)}" for k, v in self.errors.items()))


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    v = float(value)
    return v if math.isfinite(v) and 0 <= v <= UPPER else None


def parse_benchmark(raw: bytes | str) -> dict[str, Any]:
    """The validated figures of a bench result, or :class:`BenchmarkImportError`."""
    if isinstance(raw, str):
        raw = raw.encode("utf-8")
    if len(raw) > MAX_BYTES:
        raise BenchmarkImportError({"file": [f"is larger than {MAX_BYTES // (1024 * 1024)} MB."]})
    if not raw.strip():
        raise BenchmarkImportError({"file": ["is empty."]})
    try:
        data = json.loads(raw.decode("utf-8"), parse_constant=lambda name: _NON_FINITE)
    except UnicodeDecodeError:
        raise BenchmarkImportError({"file": ["is not UTF-8 text."]}) from None
    except RecursionError:
        raise BenchmarkImportError({"file": ["is nested too deeply to be a benchmark result."]}) from None
    except json.JSONDecodeError as exc:
        raise BenchmarkImportError(
            {"file": [f"is not valid JSON (line {exc.lineno}, column {exc.colno})."]}
        ) from None
    if not isinstance(data, dict):
        raise BenchmarkImportError(
            {"file": ["must be a JSON object (the file `vllm bench serve --save-result` writes)."]}
        )

    errors: dict[str, list[str]] = {}
    out: dict[str, Any] = {}
    for key in REQUIRED_NUMBERS:
        if key not in data:
            errors.setdefault(key, []).append(
                "is missing (is this a `vllm bench serve --save-result` file?)."
            )
            continue
        v = _number(data[key])
        if v is None:
            errors.setdefault(key, []).append("must be a finite number ≥ 0.")
        else:
            out[key] = v
    for key in OPTIONAL_NUMBERS:
        if data.get(key) is None:
            continue
        if key == "request_rate" and data[key] is _NON_FINITE:
            continue  # vLLM saves an unlimited rate (the default "inf") as Infinity
        v = _number(data[key])
        if v is None:
            errors.setdefault(key, []).append("must be a finite number ≥ 0.")
        else:
            out[key] = v
    for key in OPTIONAL_COUNTS:
        if data.get(key) is None:
            continue
        v = _number(data[key])
        if v is None or not float(v).is_integer():
            errors.setdefault(key, []).append("must be a whole number ≥ 0.")
        else:
            out[key] = int(v)
    conc = data.get("max_concurrency")
    if conc is not None:
        v = _number(conc)
        if v is None or not float(v).is_integer() or v < 1:
            errors.setdefault("max_concurrency", []).append("must be a whole number ≥ 1 (or null).")
        else:
            out["max_concurrency"] = int(v)
    for key in TEXT_FIELDS:
        value = data.get(key)
        if value is None:
            continue
        if not isinstance(value, str):
            errors.setdefault(key, []).append("must be text.")
            continue
        clean = "".join(ch for ch in value if ch.isprintable())[:MAX_TEXT]
        out[key] = clean
    if not errors:
        if out.get("output_throughput", 0) <= 0:
            errors.setdefault("output_throughput", []).append("is 0: the run produced no tokens.")
        if "completed" in out and out["completed"] == 0:
            errors.setdefault("completed", []).append("is 0: no request completed.")
    if errors:
        raise BenchmarkImportError(errors)
    return out
