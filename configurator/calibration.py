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
import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields, replace
from functools import cache
from pathlib import Path
from typing import Any

from catalog.seed import loader

from . import reference, specs
from .engine import serving_model as sm
from .engine import types as et
from .engine.layout import resolve_layout
from .engine.memory import size_memory
from .engine.performance import estimate_performance

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "serving_benchmarks.yaml"


def accelerator(slug: str) -> et.AcceleratorSpec:
    return reference.accelerator(slug)


def server(slug: str) -> et.ServerSpec:
    return reference.server(slug)


@cache
def model(slug: str, weight_format: str) -> et.ModelSpec:
    """The seeded LLM; in another weight format, imported from its seeded config.json in that format."""
    seeded = reference.model(slug)
    if seeded.weight_format == weight_format:
        return seeded
    return specs.model_spec_from_hf_config(
        loader.model_config(slug), weight_format=weight_format, slug=slug, name=seeded.name
    )


@dataclass(frozen=True)
class Comparison:
    record_id: str
    platform: str
    measured_tps: float
    predicted_tps: float
    measured_ttft_ms: float | None
    predicted_ttft_ms: float
    measured_tpot_ms: float | None
    predicted_tpot_ms: float
    source: str

    @property
    def ratio(self) -> float:
        return self.predicted_tps / self.measured_tps if self.measured_tps > 0 else math.inf


def load_records(path: Path = DATA) -> list[dict[str, Any]]:
    import yaml  # dev dependency (PyYAML); only the calibration tools read the file

    return yaml.safe_load(path.read_text(encoding="utf-8"))["records"]


_ACCELERATOR_OVERRIDES = {
    "memory_gb": ("memory_bytes", lambda v: int(float(v) * et.GB)),
    "memory_bandwidth_tbps": ("memory_bandwidth_bytes_s", lambda v: float(v) * 1e12),
}


def server_for(entry: Any) -> et.ServerSpec:
    """A catalog seed server by slug, or ``{base: slug, ...}`` with accelerator/server fields overridden.

    For hardware the catalog does not list (e.g. an H100 or H800 board in a published result):
    ``{base: hgx-h200-8gpu, name: HGX H100, memory_gb: 80, memory_bandwidth_tbps: 3.35,
    tflops_fp8: 1979, scale_up_bandwidth_gbps: 7200, scale_out_gbps_per_node: 3200}``.
    """
    if isinstance(entry, str):
        return server(entry)
    base = server(entry["base"])
    acc = base.accelerator
    changes: dict[str, Any] = {}
    for key, (field_name, convert) in _ACCELERATOR_OVERRIDES.items():
        if key in entry:
            changes[field_name] = convert(entry[key])
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


def request_for(
    rec: Mapping[str, Any], factors: Mapping[str, sm.PlatformFactors] | None = None
) -> et.PlanRequest:
    srv = server_for(rec["server"])
    mdl = model(rec["model"], rec.get("weight_format", "bf16"))
    lay = rec["layout"]
    ep = bool(lay.get("expert_parallel", True))
    parallel = et.ParallelSpec(tp=lay["tp"], dp=lay["dp"], expert_parallel=ep)
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
    eager = bool(sv.pop("enforce_eager", False)) or sv.pop("graph_mode", True) is False
    known = {f.name for f in fields(et.ServingSpec)}
    serving = et.ServingSpec(**{k: v for k, v in sv.items() if k in known})
    w = rec["workload"]
    workload = et.WorkloadSpec(
        input_tokens=w["input_tokens"], output_tokens=w["output_tokens"], concurrency=w["concurrency"]
    )
    spec = rec.get("speculative") or {}
    perf = et.PerformanceSpec(
        speculative_tokens=int(spec.get("tokens", 0)),
        speculative_acceptance_rate=float(spec.get("acceptance", 0.7)),
        prefix_cache_hit_rate=float(rec.get("prefix_cache_hit_rate", 0.0)),
        graph_mode=not eager,
    )
    if factors is not None:
        f = factors[srv.accelerator.software_stack]
        perf = replace(
            perf,
            decode_bandwidth_efficiency=f.bandwidth_efficiency,
            prefill_mfu=f.prefill_efficiency,
            step_overhead_ms=f.step_overhead_s * 1000,
        )
    return et.PlanRequest(mdl, srv, topo, serving=serving, workload=workload, performance=perf)


def compare(rec: Mapping[str, Any], factors: Mapping[str, sm.PlatformFactors] | None = None) -> Comparison:
    req = request_for(rec, factors)
    if factors is not None:
        saved = dict(sm.PLATFORM_FACTORS)
        sm.PLATFORM_FACTORS.update(factors)  # collective latency is not a request knob
    try:
        layout = resolve_layout(req)
        result = estimate_performance(req, layout, size_memory(req, layout))
    finally:
        if factors is not None:
            sm.PLATFORM_FACTORS.clear()
            sm.PLATFORM_FACTORS.update(saved)
    measured = rec["measured"]
    if rec["metric"] == "decode_output_tokens_per_s_per_package":
        decode = next(g for g in result.groups if g.role == "decode")
        devices = decode.nodes * req.server.logical_devices
        predicted = decode.output_tokens_per_s / devices * req.server.accelerator.logical_devices_per_package
        tpot = decode.tpot_s
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
        platform=req.server.accelerator.software_stack,
        measured_tps=float(measured["output_tokens_per_s"]),
        predicted_tps=predicted,
        measured_ttft_ms=measured.get("ttft_ms"),
        predicted_ttft_ms=result.ttft_s * 1000,
        measured_tpot_ms=measured.get("tpot_ms"),
        predicted_tpot_ms=tpot * 1000,
        source=str(rec["source"]),
    )


def compare_all(
    records: Iterable[Mapping[str, Any]] | None = None,
    factors: Mapping[str, sm.PlatformFactors] | None = None,
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
