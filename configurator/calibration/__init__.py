"""Compare the performance model with published measurements (``tests/data/serving_benchmarks.yaml``).

Pure Python (no database): hardware and models are the seeded catalog's
(``configurator.reference``, from ``catalog/seed/*.yaml``); a model in another
weight format than the seeded one is imported from its seeded config.json in
that format.  Used by
``tests/engine/test_performance_calibration.py``, ``bench/bench_calibration.py`` (the error
table of ``make bench``) and ``scripts/fit_performance.py`` (the fit).
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, fields, replace
from functools import cache
from pathlib import Path
from typing import Any

from catalog.seed import loader
from configurator import reference
from configurator.engine import serving_model as sm
from configurator.engine import types as et
from configurator.engine.layout import resolve_layout
from configurator.engine.memory import size_memory
from configurator.engine.performance import estimate_performance
from configurator.port import specs

DATA = Path(__file__).resolve().parents[2] / "tests" / "data" / "serving_benchmarks.yaml"


def accelerator(slug: str) -> et.AcceleratorSpec:
    return reference.accelerator(slug)


def server(slug: str) -> et.ServerSpec:
    return reference.server(slug)


CONFIGS = Path(__file__).resolve().parents[2] / "tests" / "data" / "model-configs"


@cache
def model(slug: str, weight_format: str, config: str = "") -> et.ModelSpec:
    """The seeded LLM; in another weight format, imported from its seeded config.json in that format.

    ``config``: a public config.json in ``tests/data/model-configs`` for a model the catalog does not
    seed (e.g. Qwen3-32B); ``slug`` then only names it.
    """
    if config:
        import json

        data = json.loads((CONFIGS / config).read_text(encoding="utf-8"))
        return specs.model_spec_from_hf_config(data, weight_format=weight_format, slug=slug, name=slug)
    seeded = reference.model(slug)
    if seeded.weight_format == weight_format:
        return seeded
    return specs.model_spec_from_hf_config(
        loader.model_config(slug), weight_format=weight_format, slug=slug, name=seeded.name
    )


@dataclass(frozen=True)
class Comparison:
    record_id: str
    platform: str  # the hardware family (serving_model.hardware_family)
    measured_tps: float
    predicted_tps: float
    measured_ttft_ms: float | None
    predicted_ttft_ms: float
    measured_tpot_ms: float | None
    predicted_tpot_ms: float
    source: str
    ttft_at_concurrency_1: bool = False
    concurrency: int = 0  # the measured load (users in flight, or the wave's size)
    wave: bool = False  # sent as one closed wave (workload arrival: wave)

    @property
    def ratio(self) -> float:
        return self.predicted_tps / self.measured_tps if self.measured_tps > 0 else math.inf


def load_records(path: Path = DATA) -> list[dict[str, Any]]:
    import yaml  # dev dependency (PyYAML); only the calibration tools read the file

    return yaml.safe_load(path.read_text(encoding="utf-8"))["records"]


_ACCELERATOR_OVERRIDES: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "accelerator": ("name", str),  # the device's own name (the hardware family reads it)
    "memory_gb": ("memory_bytes", lambda v: int(float(v) * et.GB)),
    "runtime_memory_gib": ("runtime_memory_bytes", lambda v: int(float(v) * 2**30)),
    "memory_bandwidth_tbps": ("memory_bandwidth_bytes_s", lambda v: float(v) * 1e12),
}


def server_for(entry: Any) -> et.ServerSpec:
    """A catalog seed server by slug, or ``{base: slug, ...}`` with accelerator/server fields overridden.

    For hardware the catalog does not list (e.g. an H100 or H800 board in a published result):
    ``{base: hgx-h200-8gpu, name: HGX H100, memory_gb: 80, memory_bandwidth_tbps: 3.35,
    tflops_fp8: 1979, scale_up_bandwidth_gbps: 7200, scale_out_gbps_per_node: 3200}``; ``accelerator``
    names the device (its hardware family is read from it), ``runtime_memory_gib`` the memory its
    runtime reports (else the stated ``memory_gb``).
    """
    if isinstance(entry, str):
        return server(entry)
    base = server(entry["base"])
    acc = base.accelerator
    changes: dict[str, Any] = {}
    for key, (field_name, convert) in _ACCELERATOR_OVERRIDES.items():
        if key in entry:
            changes[field_name] = convert(entry[key])
    if "memory_gb" in entry and "runtime_memory_gib" not in entry:
        # another board: the base's measured runtime memory is not this one's (0 = the stated memory)
        changes["runtime_memory_bytes"] = 0
    tflops = dict(acc.tflops)
    for key, value in entry.items():
        if key.startswith("tflops_"):
            tflops[key[len("tflops_") :]] = float(value)
    acc = replace(acc, tflops={k: v for k, v in tflops.items() if v > 0}, **changes)
    srv = replace(base, accelerator=acc, name=str(entry.get("name", base.name)))
    if "scale_up_domain_devices" in entry:  # a super-node (CloudMatrix384: 384 NPUs on the UB network)
        srv = replace(srv, scale_up_domain_devices=int(entry["scale_up_domain_devices"]))
    if "scale_up_bandwidth_gbps" in entry:
        srv = replace(srv, scale_up_bandwidth_gbps=float(entry["scale_up_bandwidth_gbps"]))
    if "scale_out_gbps_per_node" in entry:
        others = tuple(n for n in srv.nics if n.role != "scale_out")
        fabric = str(entry.get("scale_out_fabric", "infiniband"))
        srv = replace(srv, nics=(et.NicSpec(fabric, 1, int(entry["scale_out_gbps_per_node"])), *others))
    return srv


def request_for(rec: Mapping[str, Any]) -> et.PlanRequest:
    if "request" in rec:  # a promoted measurement: the quote's own request, at the measured load
        w = rec["workload"]
        req = reference.request(rec["request"])
        return replace(
            req,
            workload=replace(
                req.workload,
                input_tokens=int(w["input_tokens"]),
                output_tokens=int(w["output_tokens"]),
                concurrency=int(w["concurrency"]),
                measured_output_tokens_per_s=None,
            ),
        )
    srv = server_for(rec["server"])
    mdl = model(rec["model"], rec.get("weight_format", "bf16"), rec.get("config", ""))
    lay = rec["layout"]
    ep = bool(lay.get("expert_parallel", True))
    parallel = et.ParallelSpec(tp=lay["tp"], dp=lay["dp"], pp=lay.get("pp", 1), expert_parallel=ep)
    if lay["kind"] == "disaggregated":
        topo = et.TopologySpec(
            et.TopologyKind.DISAGGREGATED,
            rec["nodes"],
            parallel,
            prefill_nodes=lay["prefill_nodes"],
            decode_nodes=lay["decode_nodes"],
            decode_parallel=et.ParallelSpec(tp=lay["decode_tp"], dp=lay["decode_dp"], expert_parallel=ep),
        )
    else:
        topo = et.TopologySpec(et.TopologyKind.SINGLE, rec["nodes"], parallel)
    sv = dict(rec.get("serving", {}))
    graphs = str(sv.pop("cudagraph_mode", "")).upper()  # PIECEWISE | FULL_DECODE_ONLY | NONE (eager)
    eager = bool(sv.pop("enforce_eager", False)) or sv.pop("graph_mode", True) is False or graphs == "NONE"
    known = {f.name for f in fields(et.ServingSpec)}
    serving = et.ServingSpec(**{k: v for k, v in sv.items() if k in known})
    w = rec["workload"]
    workload = et.WorkloadSpec(
        input_tokens=w["input_tokens"], output_tokens=w["output_tokens"], concurrency=w["concurrency"]
    )
    spec = rec.get("speculative") or {}
    draft = spec.get("draft") or {}
    perf = et.PerformanceSpec(
        speculative_tokens=int(spec.get("tokens", 0)),
        speculative_acceptance_rate=float(spec.get("acceptance_rate", 0.7)),
        draft_model_gb=float(draft.get("weights_gb", 0.0)),
        draft_model_layers=int(draft.get("layers", 0)),
        draft_graph_mode=bool(draft.get("graph_mode", True)),
        prefix_cache_hit_rate=float(rec.get("prefix_cache_hit_rate", 0.0)),
        graph_mode=not eager,
        piecewise_graphs=graphs == "PIECEWISE",
        closed_batch=w.get("arrival") == "wave",
    )
    ck = reference.checkpoint(rec["checkpoint"]) if rec.get("checkpoint") else None
    return et.PlanRequest(mdl, srv, topo, serving=serving, workload=workload, performance=perf, checkpoint=ck)


@cache
def _prepared(rec_key: str) -> tuple[et.PlanRequest, et.LayoutResult, et.MemoryResult]:
    """Request, layout and memory of a record (none depends on the fitted factors)."""
    rec = _BY_KEY[rec_key]
    req = request_for(rec)
    layout = resolve_layout(req)
    return req, layout, size_memory(req, layout)


_BY_KEY: dict[str, Mapping[str, Any]] = {}


def _key(rec: Mapping[str, Any]) -> str:
    import json

    key = json.dumps(rec, sort_keys=True, default=str)
    _BY_KEY.setdefault(key, rec)
    return key


def family_of(rec: Mapping[str, Any]) -> str:
    if "request" in rec:
        return sm.hardware_family(_prepared(_key(rec))[0].server.accelerator)
    return sm.hardware_family(server_for(rec["server"]).accelerator)


_REVISION = re.compile(r"/(blob|tree)/[0-9a-f]{40}/")


def source_of(rec: Mapping[str, Any]) -> str:
    """The public source a record comes from (records of one source are left out together): one
    document cited at two revisions (a post whose later revision adds a table) is one source."""
    return _REVISION.sub(r"/\1/", str(rec["source"]).split()[0])


SGLANG = "sglang"
ENGINES = ("vllm", SGLANG)


def engine_of(rec: Mapping[str, Any]) -> str:
    """``sglang`` for a measurement SGLang served, else ``vllm`` (vLLM or vLLM-Ascend): the engines
    dispatch a prefill pass differently, so each has its own prefill layer cost (``fit_stack``)."""
    return SGLANG if "sglang" in str(rec.get("engine", "")).lower() else "vllm"


def _as_served(
    rec: Mapping[str, Any], factors: Mapping[str, sm.FamilyCalibration]
) -> dict[str, sm.FamilyCalibration]:
    """``factors`` as the record's engine pays them: an SGLang measurement reads SGLang's prefill layer
    cost where the fit has one (plans never do: they launch vLLM or vLLM-Ascend)."""
    out = dict(factors)
    if engine_of(rec) == SGLANG:
        for family, fit in out.items():
            prefill = fit.sglang_prefill_layer_overhead_s or fit.prefill_layer_overhead_s
            # SGLang's request path is its own (the stack's prior), not vLLM's estimate.
            out[family] = replace(fit, prefill_layer_overhead_s=prefill, request_overhead_s=0.0)
    return out


def compare(rec: Mapping[str, Any], factors: Mapping[str, sm.FamilyCalibration] | None = None) -> Comparison:
    req, layout, memory = _prepared(_key(rec))
    with sm.using_calibration(_as_served(rec, factors if factors is not None else sm.calibration())):
        result = estimate_performance(req, layout, memory)
    measured = rec["measured"]
    if rec["metric"] == "decode_output_tokens_per_s_per_package":
        decode = next(g for g in result.groups if g.role == "decode")
        devices = decode.nodes * req.server.logical_devices
        predicted = decode.output_tokens_per_s / devices * req.server.accelerator.logical_devices_per_package
        tpot = decode.decode_step_s / max(decode.tokens_per_step, 1e-9)
    elif rec["metric"] == "total_tokens_per_s":  # SGLang's bench reports input + output
        predicted = result.output_tokens_per_s + result.input_tokens_per_s
        tpot = result.tpot_s
    elif rec["metric"] == "output_tokens_per_s_per_device":
        predicted = result.output_tokens_per_s / max(result.serving_devices, 1)
        tpot = result.tpot_s
    elif rec["metric"] == "output_tokens_per_s":
        predicted = result.output_tokens_per_s
        tpot = result.tpot_s
    else:
        raise ValueError(f"{rec['id']}: unknown metric {rec['metric']!r}")
    return Comparison(
        record_id=rec["id"],
        platform=sm.hardware_family(req.server.accelerator),
        measured_tps=float(measured["output_tokens_per_s"]),
        predicted_tps=predicted,
        measured_ttft_ms=measured.get("ttft_ms"),
        predicted_ttft_ms=result.ttft_s * 1000,
        measured_tpot_ms=measured.get("tpot_ms"),
        predicted_tpot_ms=tpot * 1000,
        source=source_of(rec),
        ttft_at_concurrency_1=int(rec["workload"]["concurrency"]) == 1,
        concurrency=int(rec["workload"]["concurrency"]),
        wave=rec["workload"].get("arrival") == "wave",
    )


def compare_all(
    records: Iterable[Mapping[str, Any]] | None = None,
    factors: Mapping[str, sm.FamilyCalibration] | None = None,
) -> list[Comparison]:
    return [compare(r, factors) for r in (records if records is not None else load_records())]


def summary(rows: list[Comparison]) -> dict[str, float]:
    ratios = [r.ratio for r in rows]
    worst = max(ratios, key=lambda x: max(x, 1 / x))
    return {
        "median_ratio": statistics.median(ratios),
        "worst_ratio": worst,
        "worst_factor": max(worst, 1 / worst),
        "low": min(ratios),
        "high": max(ratios),
    }


def table(rows: list[Comparison]) -> str:
    lines = [
        f"{'record':44} {'meas tok/s':>11} {'pred tok/s':>11} {'pred/meas':>9} "
        f"{'TTFT ms meas/pred':>19} {'TPOT ms meas/pred':>19}"
    ]
    for r in rows:
        ttft = (
            f"{r.measured_ttft_ms:.0f}/{r.predicted_ttft_ms:.0f}"
            if r.measured_ttft_ms
            else f"–/{r.predicted_ttft_ms:.0f}"
        )
        tpot = (
            f"{r.measured_tpot_ms:.1f}/{r.predicted_tpot_ms:.1f}"
            if r.measured_tpot_ms
            else f"–/{r.predicted_tpot_ms:.1f}"
        )
        lines.append(
            f"{r.record_id:44} {r.measured_tps:11,.1f} {r.predicted_tps:11,.1f} {r.ratio:9.2f} {ttft:>19} {tpot:>19}"
        )
    s = summary(rows)
    lines.append(
        f"median predicted/measured {s['median_ratio']:.2f} ×, range {s['low']:.2f}–{s['high']:.2f} ×, "
        f"worst off by {s['worst_factor']:.2f} ×"
    )
    return "\n".join(lines)


# --------------------------------------------------------------------------- fit and cross-validation

#: Weights of the fit's objective: Σ log²(predicted ÷ measured) of throughput, TPOT and TTFT where the
#: source gives them, plus the pull of each fitted factor towards its neutral prior (log-distance).
#: TTFT weighs as much as TPOT: each identifies one fitted factor (the prefill and the decode layer
#: cost); at ¼ — chosen when TTFT had no factor of its own and leaked into the decode layer cost — the
#: prior outweighed a family's few TTFT measurements.
TPOT_WEIGHT = 0.5
TTFT_WEIGHT = 0.5
PRIOR_WEIGHT = 0.5


Fit = tuple[float, float]  # (layer_overhead_s, prefill_layer_overhead_s): sm.FITTED, in that order


def _fit_of(
    family: str, fit: Fit, sglang_prefill: float = 0.0, request_overhead: float = 0.0
) -> sm.FamilyCalibration:
    return sm.FamilyCalibration(
        fit[0], fit[1], sm.WIDE_BAND[0], sm.WIDE_BAND[1], 0, 0, True, sglang_prefill, request_overhead
    )


def request_path_records(records: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The records that measure vLLM's request path: vLLM (or vLLM-Ascend) serving a dense model to one
    user, with its TTFT.  No factor is fitted to a dense prefill's TTFT (its layers pay the captured layer
    cost and the eager prior, taken here at their priors), so what its TTFT leaves over the costed prefill
    is the path itself; an MoE prefill's layer cost is fitted to the same TTFTs, and would take the path's
    time for its own."""
    out = []
    for rec in records:
        if engine_of(rec) != "vllm" or int(rec["workload"]["concurrency"]) != 1:
            continue
        if not rec["measured"].get("ttft_ms"):
            continue
        if _prepared(_key(rec))[0].model.is_moe:
            continue
        out.append(rec)
    return out


def estimate_request_overhead(records: Iterable[Mapping[str, Any]]) -> float:
    """vLLM's request path at one user, in seconds: the median over :func:`request_path_records` of the
    measured TTFT less the prefill the step model costs (with the stacks' priors only, so the estimate
    does not depend on the fit), inside ``sm.REQUEST_OVERHEAD_BOUNDS``; 0 (the prior) without such a
    record.  The median, because one release's path differs from another's (vLLM 0.10 ≈ 21 ms, 0.11's
    chat endpoint ≈ 44 ms, 0.27 ≈ 29 ms in the set) and the plan does not know which the customer will
    run."""
    residuals = []
    for rec in request_path_records(records):
        prior = sm.prior_for(family_of(rec)).request_overhead_s
        row = compare(rec, {})  # {}: no fitted factor, the priors
        residuals.append(float(rec["measured"]["ttft_ms"]) / 1000 - (row.predicted_ttft_ms / 1000 - prior))
    if not residuals:
        return 0.0
    low, high = sm.REQUEST_OVERHEAD_BOUNDS
    return min(high, max(low, statistics.median(residuals)))


def prior_fit(family: str) -> Fit:
    prior = sm.prior_for(family)
    return prior.layer_overhead_s, prior.prefill_layer_overhead_s


def _record_loss(rows: list[Comparison]) -> float:
    total = 0.0
    for r in rows:
        total += math.log(max(r.ratio, 1e-6)) ** 2
        if r.measured_tpot_ms and r.predicted_tpot_ms > 0:
            total += TPOT_WEIGHT * math.log(r.predicted_tpot_ms / r.measured_tpot_ms) ** 2
        if r.measured_ttft_ms and r.predicted_ttft_ms > 0:
            total += TTFT_WEIGHT * math.log(r.predicted_ttft_ms / r.measured_ttft_ms) ** 2
    return total


def _pull(value: float, prior: float) -> float:
    return PRIOR_WEIGHT * math.log(value / prior) ** 2


def stack_of(family: str) -> str:
    return sm.FAMILIES.get(family, family)


def fit_stack(
    records: list[Mapping[str, Any]], stack: str, request_overhead: float = 0.0
) -> tuple[dict[str, Fit], float]:
    """Each family's decode layer overhead and the stack's prefill layer overheads, fitted together.

    The decode layer cost (launch gaps inside a captured graph, collective synchronisation) is the
    accelerator's; the prefill MoE layer cost is host-side — the eager dispatch of a prefill pass and
    its routing synchronisation run the same Python and the same kernels on every family of a software
    stack — so it is one factor per stack, shared by its families (a family without TTFT data, such as
    the A2 or Blackwell's second source, takes it from the stack's others).  It is also the engine's:
    SGLang captures decode only and compiles nothing by default (its CUDA-graph guide: "SGLang
    automatically enables CUDA graph for decode"; torch.compile only with ``--enable-torch-compile``),
    so its prefill ("extend") pass runs op by op; vLLM compiles every layer and runs mixed prefill
    batches through piecewise CUDA graphs up to its capture size (``vllm/config/compilation.py``
    ``CUDAGraphMode.FULL_AND_PIECEWISE``: FULL for decode, PIECEWISE for mixed batches).  So the SGLang
    measurements of the set get a prefill cost of their own — a nuisance factor, fitted only
    so that their TTFT and throughput do not set vLLM's; plans never use it.  Least log-squares of the
    records (``_record_loss``) plus the pull of every factor towards its neutral prior, by coordinate
    pattern search in log space inside ``sm.FIT_BOUNDS``, with vLLM's request path at
    ``request_overhead`` (:func:`estimate_request_overhead`; 0: the prior).  Returns ({family: (decode layer, vLLM prefill
    layer)} for the families that have records, the SGLang prefill layer cost)."""
    by_family: dict[str, list[Mapping[str, Any]]] = {}
    for rec in records:
        family = family_of(rec)
        if stack_of(family) == stack:
            by_family.setdefault(family, []).append(rec)
    families = sorted(by_family)
    if not families:
        return {}, 0.0
    layer = {f: prior_fit(f)[0] for f in families}
    prefill_prior = prior_fit(families[0])[1]
    prefill = {engine: prefill_prior for engine in ENGINES}
    (l_lo, l_hi), (p_lo, p_hi) = (sm.FIT_BOUNDS[name] for name in sm.FITTED)
    served = {
        engine: any(engine_of(r) == engine for r in records if family_of(r) in by_family)
        for engine in ENGINES
    }

    def family_loss(f: str, lay: float, pre: Mapping[str, float]) -> float:
        fit = _fit_of(f, (lay, pre["vllm"]), pre[SGLANG], request_overhead)
        return _record_loss(compare_all(by_family[f], {f: fit})) + _pull(lay, prior_fit(f)[0])

    def pulls(pre: Mapping[str, float]) -> float:
        return sum(_pull(pre[e], prefill_prior) for e in ENGINES)

    parts = {f: family_loss(f, layer[f], prefill) for f in families}
    best = sum(parts.values()) + pulls(prefill)
    step = 2.0
    while step > 1.03:
        improved = False
        for factor in (step, 1 / step):
            for f in families:  # one family's decode layer: only its own records move
                lay = min(l_hi, max(l_lo, layer[f] * factor))
                if lay == layer[f]:
                    continue
                part = family_loss(f, lay, prefill)
                if part < parts[f] - 1e-9:
                    best += part - parts[f]
                    parts[f], layer[f], improved = part, lay, True
            for engine in ENGINES:  # an engine's shared prefill: every family moves
                pre = min(p_hi, max(p_lo, prefill[engine] * factor))
                if pre == prefill[engine] or not served[engine]:
                    continue
                trial_prefill = {**prefill, engine: pre}
                trial_parts = {f: family_loss(f, layer[f], trial_prefill) for f in families}
                trial = sum(trial_parts.values()) + pulls(trial_prefill)
                if trial < best - 1e-9:
                    best, parts, prefill, improved = trial, trial_parts, trial_prefill, True
        if not improved:
            step = math.sqrt(step)
    sglang = prefill[SGLANG] if served[SGLANG] else 0.0
    return {f: (layer[f], prefill["vllm"]) for f in families}, sglang


@dataclass(frozen=True)
class CrossValidation:
    """Each record predicted by a fit that never saw its source (leave-one-source-out)."""

    rows: tuple[Comparison, ...]

    def families(self) -> list[str]:
        return sorted({r.platform for r in self.rows})

    def of(self, family: str) -> list[Comparison]:
        return [r for r in self.rows if r.platform == family]

    def sources(self, family: str) -> int:
        return len({r.source for r in self.of(family)})

    def band(self, family: str) -> tuple[float, float, bool]:
        """(low, high, few_sources): every cross-validated ratio of the family inside the band; a family
        with fewer than ``sm.MIN_SOURCES`` sources gets at least ``sm.WIDE_BAND``."""
        return self.band_without(family, "")

    def band_without(self, family: str, record_id: str) -> tuple[float, float, bool]:
        """The band as :meth:`band`, leaving out the cross-validated row of ``record_id``; bounded to
        ``sm.BAND_BOUNDS`` (a ratio beyond them is an outlier, reported by :func:`outliers`)."""
        rows = [r for r in self.of(family) if r.record_id != record_id]
        ratios = [r.ratio for r in rows]
        few = len({r.source for r in rows}) < sm.MIN_SOURCES
        if not ratios:
            return sm.WIDE_BAND[0], sm.WIDE_BAND[1], True
        low, high = min(min(ratios), 1.0), max(max(ratios), 1.0)
        if few:
            low, high = min(low, sm.WIDE_BAND[0]), max(high, sm.WIDE_BAND[1])
        low, high = max(low, sm.BAND_BOUNDS[0]), min(high, sm.BAND_BOUNDS[1])
        return round(low, 2), round(high, 2), few


#: A record whose own cross-validated ratio alone moves its family's band bound by more than this
#: (predicted ÷ measured, absolute) is reported by ``manage.py calibrate`` (:func:`influential`).
INFLUENCE_LIMIT = 0.25


def _ratios(row: Comparison) -> dict[str, float]:
    out = {"throughput": row.ratio}
    if row.measured_ttft_ms and row.predicted_ttft_ms > 0:
        out["TTFT"] = row.predicted_ttft_ms / row.measured_ttft_ms
    if row.measured_tpot_ms and row.predicted_tpot_ms > 0:
        out["TPOT"] = row.predicted_tpot_ms / row.measured_tpot_ms
    return out


def outliers(cv: CrossValidation) -> dict[str, str]:
    """Records whose cross-validated throughput, TTFT or TPOT is outside ``sm.BAND_BOUNDS`` of the fit
    that never saw them (a quarter to four times): no honest measurement of a plan is that far from
    it, so ``calibrate_robust`` leaves them out of the fit.  {record id: why}."""
    low, high = sm.BAND_BOUNDS
    out: dict[str, str] = {}
    for row in cv.rows:
        bad = [
            f"{name} predicted ÷ measured {ratio:.3g}"
            for name, ratio in _ratios(row).items()
            if not (math.isfinite(ratio) and low <= ratio <= high)
        ]
        if bad:
            out[row.record_id] = "; ".join(bad) + f" (outside {low}–{high})"
    return out


def influential(cv: CrossValidation, record_ids: Iterable[str]) -> dict[str, str]:
    """Of ``record_ids``, those whose own cross-validated ratio moves their family's band bound by more
    than ``INFLUENCE_LIMIT``: {record id: "family band a–b, without it c–d"}.  The fit's other rows are
    kept as they are (no refit per record): the band is the extreme of the family's ratios, and this is
    the record's direct share of it."""
    wanted = set(record_ids)
    out: dict[str, str] = {}
    for row in cv.rows:
        if row.record_id not in wanted:
            continue
        low, high, _ = cv.band(row.platform)
        low2, high2, _ = cv.band_without(row.platform, row.record_id)
        if abs(low - low2) > INFLUENCE_LIMIT or abs(high - high2) > INFLUENCE_LIMIT:
            out[row.record_id] = (
                f"{row.platform} band {low:.2f}–{high:.2f}, without it {low2:.2f}–{high2:.2f}"
            )
    return out


def fit_all(records: list[Mapping[str, Any]], request_overhead: float = 0.0) -> dict[str, tuple[Fit, float]]:
    """Every family of every stack with records: its own decode layer cost (the prior where it has no
    records), its stack's shared vLLM prefill layer cost and its stack's SGLang prefill layer cost (0: no
    SGLang records)."""
    out: dict[str, tuple[Fit, float]] = {}
    for stack in sorted({stack_of(family_of(r)) for r in records}):
        fits, sglang = fit_stack(records, stack, request_overhead)
        shared = next(iter(fits.values()))[1]
        for family in sorted(f for f, st in sm.FAMILIES.items() if st == stack):
            out[family] = (fits.get(family, (prior_fit(family)[0], shared)), sglang)
        out.update({family: (fit, sglang) for family, fit in fits.items()})
    return out


def held_out_fit(
    seen: list[Mapping[str, Any]], family: str, request_overhead: float = 0.0
) -> tuple[Fit, float]:
    """The fit a held-out record of ``family`` is predicted with: the stack fitted on ``seen`` (never the
    held-out source).  A family left without records of its own takes the decode layer cost of its
    stack's family with the most sources (the 910B and the 910C run the same vLLM-Ascend kernels, task
    queue and HCCL; the Hopper and Blackwell GPUs the same vLLM / SGLang CUDA code) and the stack's
    shared prefill costs (vLLM's, and SGLang's for an SGLang record); a stack without records, the priors."""
    stack = stack_of(family)
    fits, sglang = fit_stack(seen, stack, request_overhead)
    if family in fits:
        return fits[family], sglang
    if not fits:
        return prior_fit(family), 0.0
    sources: dict[str, set[str]] = {}
    for rec in seen:
        other = family_of(rec)
        if other in fits:
            sources.setdefault(other, set()).add(source_of(rec))
    sibling = max(sorted(fits), key=lambda f: len(sources.get(f, ())))
    return fits[sibling], sglang


def cross_validate(records: list[Mapping[str, Any]]) -> CrossValidation:
    rows: list[Comparison] = []
    for source in sorted({source_of(r) for r in records}):
        held_out = [r for r in records if source_of(r) == source]
        family = family_of(held_out[0])
        seen = [r for r in records if source_of(r) != source]
        overhead = estimate_request_overhead(seen)  # the request path without the held-out source
        fit, sglang = held_out_fit(seen, family, overhead)
        rows += compare_all(held_out, {family: _fit_of(family, fit, sglang, overhead)})
    order = {r["id"]: i for i, r in enumerate(records)}
    return CrossValidation(tuple(sorted(rows, key=lambda r: order.get(r.record_id, 0))))


def calibrate(records: list[Mapping[str, Any]]) -> tuple[dict[str, sm.FamilyCalibration], CrossValidation]:
    """The fit on every record and the bands from its leave-one-source-out cross-validation."""
    overhead = estimate_request_overhead(records)
    fitted = fit_all(records, overhead)
    cv = cross_validate(records)
    out: dict[str, sm.FamilyCalibration] = {}
    for family in sorted(set(fitted) | set(cv.families())):
        (layer, prefill_layer), sglang = fitted.get(family, (prior_fit(family), 0.0))
        low, high, few = cv.band(family)
        out[family] = sm.FamilyCalibration(
            round(layer, 7),
            round(prefill_layer, 7),
            low,
            high,
            cv.sources(family),
            len(cv.of(family)),
            few,
            round(sglang, 7),
            round(overhead, 5),
        )
    return out, cv


def calibrate_robust(
    records: list[Mapping[str, Any]],
) -> tuple[dict[str, sm.FamilyCalibration], CrossValidation, dict[str, str]]:
    """:func:`calibrate`, then again without the :func:`outliers` of the first pass; returns the fit,
    its cross-validation and the records left out with why (``manage.py calibrate`` prints them)."""
    families, cv = calibrate(records)
    left_out = outliers(cv)
    if left_out:
        families, cv = calibrate([r for r in records if str(r.get("id")) not in left_out])
    return families, cv, left_out


def write_calibration(path: Path, families: Mapping[str, sm.FamilyCalibration], note: str = "") -> None:
    import json

    data = {
        "note": note
        or "Written by scripts/fit_performance.py / manage.py calibrate; docs/performance.md §3.",
        "families": {
            name: {
                "layer_overhead_s": f.layer_overhead_s,
                "prefill_layer_overhead_s": f.prefill_layer_overhead_s,
                "band_low": f.band_low,
                "band_high": f.band_high,
                "sources": f.sources,
                "records": f.records,
                "few_sources": f.few_sources,
                **(
                    {"sglang_prefill_layer_overhead_s": f.sglang_prefill_layer_overhead_s}
                    if f.sglang_prefill_layer_overhead_s
                    else {}
                ),
                **({"request_overhead_s": f.request_overhead_s} if f.request_overhead_s else {}),
            }
            for name, f in sorted(families.items())
        },
    }
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def cv_table(cv: CrossValidation) -> str:
    """Leave-one-source-out error per hardware family (``make bench`` and docs/performance.md)."""
    head = (
        f"{'family':10} {'sources':>7} {'records':>7} {'median':>7} {'worst ×':>8} {'band':>11} "
        f"{'TTFT c1 worst ×':>15}"
    )
    lines = [head, "-" * len(head)]
    for family in cv.families():
        rows = cv.of(family)
        ratios = [r.ratio for r in rows]
        worst = max(max(x, 1 / x) for x in ratios)
        low, high, few = cv.band(family)
        ttft = [
            r.predicted_ttft_ms / r.measured_ttft_ms
            for r in rows
            if r.ttft_at_concurrency_1 and r.measured_ttft_ms
        ]
        ttft_s = f"{max(max(x, 1 / x) for x in ttft):.2f}" if ttft else "—"
        band = f"{low:.2f}–{high:.2f}" + ("*" if few else "")
        lines.append(
            f"{family:10} {cv.sources(family):7d} {len(rows):7d} {statistics.median(ratios):7.2f} "
            f"{worst:8.2f} {band:>11} {ttft_s:>15}"
        )
    allr = [r.ratio for r in cv.rows]
    lines.append(
        f"all        {len({r.source for r in cv.rows}):7d} {len(allr):7d} {statistics.median(allr):7.2f} "
        f"{max(max(x, 1 / x) for x in allr):8.2f}"
    )
    lines.append(
        f"* fewer than {sm.MIN_SOURCES} sources: the band is widened to at least "
        f"{sm.WIDE_BAND[0]}–{sm.WIDE_BAND[1]} × and the page says so"
    )
    return "\n".join(lines)


#: TTFT under load is off by at most this factor on every record (the aim docs/performance.md §3 states).
TTFT_LOAD_AIM = 2.0


def ttft_under_load(rows: Iterable[Comparison]) -> list[Comparison]:
    """The records that measure TTFT with more than one request in flight (a closed loop of C > 1 users
    or a wave of C prompts sent together)."""
    return [r for r in rows if r.measured_ttft_ms and r.concurrency > 1]


def ttft_ratio(row: Comparison) -> float:
    """Predicted ÷ measured TTFT of a record that measures it."""
    return row.predicted_ttft_ms / row.measured_ttft_ms if row.measured_ttft_ms else math.inf


def ttft_load_table(cv: CrossValidation) -> str:
    """Leave-one-source-out TTFT under load, record by record and per family (``make bench`` and
    docs/performance.md §3): predicted ÷ measured, each record predicted by a fit that never saw its
    source."""
    rows = ttft_under_load(cv.rows)
    ratios = {r.record_id: ttft_ratio(r) for r in rows}
    head = f"{'record':48} {'family':10} {'load':>8} {'TTFT ms meas':>12} {'pred':>7} {'pred/meas':>9}"
    lines = [head, "-" * len(head)]
    for r in rows:
        load = f"{'wave ' if r.wave else 'c '}{r.concurrency}"
        lines.append(
            f"{r.record_id:48} {r.platform:10} {load:>8} {r.measured_ttft_ms or 0:12,.0f} {r.predicted_ttft_ms:7,.0f} "
            f"{ratios[r.record_id]:9.2f}"
        )
    lines.append("")
    lines.append(f"{'family':10} {'records':>7} {'median':>7} {'worst ×':>8} {'within 2 ×':>10}")
    for family in sorted({r.platform for r in rows}):
        lines.append(_ttft_line(family, [ratios[r.record_id] for r in rows if r.platform == family]))
    lines.append(_ttft_line("all", list(ratios.values())))
    return "\n".join(lines)


def _ttft_line(name: str, ratios: list[float]) -> str:
    worst = max(max(x, 1 / x) for x in ratios)
    within = sum(1 for x in ratios if max(x, 1 / x) <= TTFT_LOAD_AIM)
    return f"{name:10} {len(ratios):7d} {statistics.median(ratios):7.2f} {worst:8.2f} {within:>5d} / {len(ratios)}"
