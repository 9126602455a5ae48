"""Import of a ``vllm bench serve --save-result`` JSON: validated, reduced to the figures a quote uses.

The format is the result dict of vLLM's ``vllm/benchmarks/serve.py`` (``main``):
``duration``, ``completed``, ``total_input_tokens``, ``total_output_tokens``,
``request_throughput``, ``output_throughput``, ``total_token_throughput`` and,
per selected metric, ``mean_/median_/std_/p{N}_{ttft,tpot,itl,e2el}_ms``;
``--save-result`` adds ``date``, ``endpoint_type`` (``backend`` in the older
``benchmarks/benchmark_serving.py``), ``label``, ``model_id``, ``tokenizer_id``,
``num_prompts``, ``request_rate``, ``burstiness`` and ``max_concurrency``, and one
text entry per ``--metadata KEY=VALUE``.  The request rate is written as the
**string** ``"inf"`` for the default unlimited rate (``result_json["request_rate"] =
args.request_rate if args.request_rate < float("inf") else "inf"``, in both files), which
is how the bundle's ``benchmark.sh`` runs it; it is kept as ``"inf"``.  The bundle's
script also passes ``--metadata server=<server> nodes=<n>``, which
:func:`benchmark_mismatches` compares with the plan.  Per-request arrays (``ttfts``,
``itls``, ``generated_texts`` …) are not kept.

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
    "burstiness",
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
TEXT_FIELDS = ("date", "backend", "model_id", "tokenizer_id", "label", "endpoint_type", "server")
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


def _int_text(text: str) -> int | None:
    text = text.strip()
    return int(text) if text.isascii() and text.isdigit() and len(text) <= 9 else None


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
            errors.setdefault(key, []).append("must be a number ≥ 0 and below 10¹².")
        else:
            out[key] = v
    for key in OPTIONAL_NUMBERS:
        if data.get(key) is None:
            continue
        if key == "request_rate" and (
            data[key] is _NON_FINITE or (isinstance(data[key], str) and data[key].strip().lower() == "inf")
        ):
            out[key] = "inf"  # the default unlimited rate: the string "inf" (an older writer: Infinity)
            continue
        v = _number(data[key])
        if v is None:
            errors.setdefault(key, []).append(
                'must be a number ≥ 0 (the unlimited request rate is written "inf").'
                if key == "request_rate"
                else "must be a number ≥ 0 and below 10¹²."
            )
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
    nodes = data.get("nodes")  # --metadata nodes=<n>: text
    if nodes is not None:
        v = _number(nodes) if not isinstance(nodes, str) else _number(_int_text(nodes))
        if v is None or not float(v).is_integer() or v < 1:
            errors.setdefault("nodes", []).append("must be a whole number ≥ 1.")
        else:
            out["nodes"] = int(v)
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


# --------------------------------------------------------------------------- does it match the plan?


def _names(value: Any) -> str:
    """A model or hardware name compared loosely: its last path part, lower case, letters and
    digits only ("moonshotai/Kimi-K3" → "kimik3", "kimi-k3" → "kimik3")."""
    text = str(value or "").strip().rstrip("/").rsplit("/", 1)[-1]
    return "".join(ch for ch in text.lower() if ch.isalnum())


def _dig(data: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(data, Mapping):
            return None
        data = data.get(key)
    return data


def plan_identity(resolved: Mapping) -> dict[str, Any]:
    """What a measurement must match, from a revision's resolved (inline) request: the names the
    model is served and published under, the server's names and the node count."""
    model = _dig(resolved, "model")
    checkpoint = _dig(resolved, "checkpoint")
    launch = _dig(resolved, "launch")
    server = _dig(resolved, "server")
    model_names = [
        _dig(model, "slug"),
        _dig(model, "name"),
        _dig(checkpoint, "slug"),
        _dig(checkpoint, "name"),
        _dig(launch, "served_model_name"),
        _dig(launch, "model_path"),
    ]
    if isinstance(model, str):
        model_names.append(model)
    server_names = [_dig(server, "slug"), _dig(server, "name")] + (
        [server] if isinstance(server, str) else []
    )
    nodes = _dig(resolved, "topology", "nodes")
    return {
        "model": str(_dig(model, "name") or _dig(model, "slug") or model or ""),
        "model_names": {n for n in map(_names, model_names) if n},
        "server": str(_dig(server, "name") or _dig(server, "slug") or server or ""),
        "server_names": {n for n in map(_names, server_names) if n},
        "nodes": nodes if isinstance(nodes, int) and not isinstance(nodes, bool) else None,
    }


LENGTH_TOLERANCE = 0.25  # measured mean prompt / output length within ±25 % of the plan's
LOAD_TOLERANCE = 0.25  # the measured max_concurrency within ±25 % of the plan's concurrency


def _positive(value: Any) -> float:
    """A finite positive number, or 0."""
    if isinstance(value, bool):
        return 0.0
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        return 0.0
    return number if 0 < number < math.inf else 0.0


def condition_mismatches(figures: Mapping[str, Any], request: Mapping) -> list[tuple[str, str, str]]:
    """Load and request lengths of a measurement against the plan's workload, as (file field, what,
    message): the mean prompt and output lengths (``total_*_tokens ÷ completed``) within
    ±``LENGTH_TOLERANCE`` and ``max_concurrency`` within ±``LOAD_TOLERANCE`` of the plan's.  A file
    that does not state them matches nothing: a figure measured at other conditions is not this
    plan's."""
    workload = _dig(request, "workload")
    workload = workload if isinstance(workload, Mapping) else {}
    problems: list[tuple[str, str, str]] = []
    completed = _positive(figures.get("completed"))
    for field, name, planned in (
        ("total_input_tokens", "input length", workload.get("input_tokens")),
        ("total_output_tokens", "output length", workload.get("output_tokens")),
    ):
        planned_n = _positive(planned)
        total = _positive(figures.get(field))
        if not planned_n:
            continue
        if not completed or not total:
            problems.append((field, name, "the result does not state it (completed, total tokens)"))
            continue
        mean = total / completed
        if abs(mean - planned_n) > LENGTH_TOLERANCE * planned_n:
            problems.append(
                (field, name, f"measured {mean:,.0f} tokens per request, the plan has {planned_n:,.0f}")
            )
    load = _positive(figures.get("max_concurrency"))
    planned_load = _positive(workload.get("concurrency"))
    if not load:
        problems.append(
            ("max_concurrency", "load", "the result has no max_concurrency (a closed-loop run is needed)")
        )
    elif planned_load and abs(load - planned_load) > LOAD_TOLERANCE * planned_load:
        problems.append(
            ("max_concurrency", "load", f"measured at {load:,.0f} users, the plan is for {planned_load:,.0f}")
        )
    return problems


def benchmark_mismatches(
    figures: Mapping[str, Any], resolved: Mapping, *, conditions: bool = False
) -> dict[str, list[str]]:
    """Why a parsed result (:func:`parse_benchmark`) does not belong to a plan, by field; {} when it does.

    ``resolved`` is the revision's resolved request (``QuoteRevision.resolved_json``).  The model
    is always compared (``model_id``: what ``--model`` named; the bundle's ``benchmark.sh`` passes
    the served name); the server and the node count when the file carries them (the bundle's
    script writes them with ``--metadata``).  A result with no ``model_id`` is refused: nothing
    says what was measured.  With ``conditions`` the load and request lengths are compared too
    (:func:`condition_mismatches`): a figure measured at 1,000 users or with 100-token prompts is not
    this plan's.  The importer compares identity only (the bundle's acceptance sweep measures 1, 2,
    4 … users, all of them evidence); the measured figures (``measured_context``) and the calibration
    set also need the conditions.  Plain function: all three call it.
    """
    plan = plan_identity(resolved)
    errors: dict[str, list[str]] = {}
    model_id = figures.get("model_id")
    if not model_id:
        errors["model_id"] = [
            f"is missing: the file does not say which model was measured (this plan serves {plan['model']})."
        ]
    elif plan["model_names"] and _names(model_id) not in plan["model_names"]:
        errors["model_id"] = [
            f"is {model_id!r}, but this plan serves {plan['model']}: "
            "a measurement of another model cannot stand for this one."
        ]
    server = figures.get("server")
    if server and plan["server_names"] and _names(server) not in plan["server_names"]:
        errors["server"] = [f"is {server!r}, but this plan runs on {plan['server']}."]
    nodes = figures.get("nodes")
    if nodes is not None and plan["nodes"] is not None and nodes != plan["nodes"]:
        errors["nodes"] = [f"is {nodes}, but this plan has {plan['nodes']} nodes."]
    if conditions:  # load and request lengths within ±25 % of the plan's (condition_mismatches)
        for field, name, message in condition_mismatches(figures, resolved):
            errors.setdefault(field, []).append(f"{name}: {message}.")
    return errors
