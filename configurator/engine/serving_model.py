"""Step-time, queueing and calibration constants of the serving-performance model.

Pure arithmetic used by :mod:`configurator.engine.performance` (which turns the
numbers into explained figures and checks).  Everything is per DP rank (one
engine of TP devices) and in seconds / bytes.  The method and the fit against
published measurements are documented in ``docs/performance.md``.

Decode step (one forward pass of the running batch)::

    step = overhead + max(memory_time, compute_time) + communication
    memory_time  = dense bytes ÷ (HBM bandwidth × bandwidth_efficiency)
                   + touched expert bytes ÷ (HBM bandwidth × expert_bandwidth_efficiency)
    compute_time = 2 × active params × tokens ÷ TP ÷ (dense TFLOPS at the
                   checkpoint's activation precision × compute_efficiency)
    communication = TP all-reduces + EP dispatch/combine, each
                    latency + bytes ÷ bandwidth of the fabric it crosses

Bytes read per step follow what vLLM holds on a rank (``memory.weights_per_rank``):
non-expert weights ÷ TP; routed experts ÷ EP with expert parallelism, else ÷ TP
(vLLM shards every expert's weights over the TP group when EP is off,
``vllm/model_executor/layers/fused_moe/layer.py`` on ``main``); only the experts
the step's tokens touch are read.

Speculative decoding (MTP / EAGLE, ``--speculative-config num_speculative_tokens``)
verifies ``1 + k`` tokens per sequence per step and emits on average
``(1 − a^(k+1)) ÷ (1 − a)`` of them for a per-token acceptance rate ``a``
(vLLM's rejection sampler stops at the first rejected draft token,
``vllm/v1/sample/rejection_sampler.py`` on ``main``).

Load (closed loop, as ``vllm bench serve --max-concurrency`` drives a server):
``C`` users each send the next request as soon as the previous one ends.  A DP
rank runs ``B = min(C ÷ DP, slots)`` sequences; with chunked prefill it spends
``B × prefill + (output ÷ tokens per step) × step`` seconds per ``B`` requests, so
``X = B ÷ that`` requests/s (Little's law).  Users beyond the slots wait:
by the interactive response-time law ``W = C ÷ X − R``.  Disaggregated prefill is
an M/D/c queue (c = prefill DP ranks, deterministic service = prefill time),
approximated by Allen–Cunneen: ``Wq ≈ Erlang-C(c, ρ) ÷ (c·μ − λ) × (1 + 0) ÷ 2``.
"""

from __future__ import annotations

import json
import logging
import math
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from .moe_routing import busiest_rank_share
from .types import ERROR_BAND_HIGH as ERROR_BAND_HIGH
from .types import ERROR_BAND_LOW as ERROR_BAND_LOW
from .types import ModelSpec, PlanRequest, ServerSpec, stored_init

# --------------------------------------------------------------------------- factors

#: The factors a fit may move (per hardware family); every other field of PlatformFactors is a
#: fixed physical constant of the software stack, documented in docs/performance.md §3.
FITTED = ("layer_overhead_s", "prefill_layer_overhead_s")


@stored_init
@dataclass(frozen=True)
class PlatformFactors:
    """The step model's constants for one hardware family.

    Two are fitted to published measurements (``FITTED``): ``layer_overhead_s`` (the fixed time every
    layer of a decode step costs whatever its bytes: kernel launch gaps inside the captured graph and the
    synchronisation of its collectives) and ``prefill_layer_overhead_s`` (the same for an MoE layer of a
    prefill pass, which no engine captures: every operator of the layer is dispatched from the host, and
    the routing and the expert dispatch synchronise with it).  It is paid once per pass, whatever the
    prompts the pass carries (:func:`wave_prefill`, :func:`prefill_pool_latency`).  On the A3 a prefill
    pass leaves MC2 (vLLM-Ascend ``select_moe_comm_method``: MC2 only while the tokens fit
    ``mc2_tokens_capacity``, the decode batch; all-to-all beyond) for ``TokenDispatcherWithAll2AllV``
    (``vllm_ascend/ops/fused_moe/token_dispatcher.py``), whose ``_preprocess`` copies the per-rank split
    sizes to the host (``.to("cpu")``, and ``torch.npu.synchronize()`` with one local expert), gathers
    the token counts of every EP rank and runs an all-to-all for the tokens (and their scales) and one for
    the combine: every MoE layer of a pass stops the host until the device has caught up, so the host
    cannot dispatch ahead and the layer costs its operators' dispatch on top of its device time.  One more is estimated from the data but not
    per family: ``request_overhead_s``, vLLM's request path at one user (the median of what the dense vLLM
    measurements leave once their prefill is costed; ``configurator.calibration.estimate_request_overhead``),
    which runs on the host and is the same whatever the accelerator.  The others are fixed per software stack, among
    them ``bandwidth_efficiency`` of the dense weight and KV reads and ``expert_bandwidth_efficiency``
    of the routed-expert reads (fitted until the public data showed it does not move: every family's fit
    stayed within 4 % of its 0.60 prior).
    """

    bandwidth_efficiency: float  # fixed: achieved ÷ peak HBM bandwidth of dense weight and KV reads
    compute_efficiency: float  # fixed: achieved ÷ peak dense TFLOPS in a compute-bound decode step
    step_overhead_s: float  # fixed: per forward pass (scheduler, input preparation, sampling)
    collective_latency_s: float  # fixed: start-up latency of one collective on the scale-up fabric
    prefill_efficiency: float  # fixed: achieved ÷ peak dense TFLOPS in prefill (MFU)
    request_overhead_s: float  # estimated (prior here): per request outside the forward passes
    inter_node_latency_factor: float = 3.0  # fixed: a collective crossing nodes costs this many latencies
    layer_overhead_s: float = 0.0  # fitted: fixed cost per layer per decode step (launch + sync)
    expert_bandwidth_efficiency: float = 0.0  # fixed: of the routed-expert reads (0: as the dense reads)
    prefill_layer_overhead_s: float = 0.0  # fitted: fixed cost per MoE layer per prefill pass (eager)

    @property
    def expert_efficiency(self) -> float:
        return self.expert_bandwidth_efficiency or self.bandwidth_efficiency


# Neutral priors: physical starting values, never the last fit.  The fit (scripts/fit_performance.py,
# ``manage.py calibrate``) pulls each family's two fitted factors towards these; a family without
# measurements uses them as they are.
#
# CUDA: dense decode GEMV kernels reach ≈ 85 % of peak HBM bandwidth (a streaming read of the weight
#   matrix); the fused MoE kernels, reading each touched expert for a handful of tokens, less — their
#   prior is 60 %; inside a CUDA graph a decoder layer
#   is ≈ 10 kernels with ≈ 3 µs of launch gap and tail each (≈ 30 µs a layer); vLLM's custom
#   all-reduce over NVLink costs ≈ 10 µs for a decode-sized message; the V1 engine's scheduler,
#   input preparation and sampler ≈ 1.5 ms a step; a request spends ≈ 10 ms in the API server
#   (HTTP, chat template, tokenizer) before it is scheduled — SGLang's measurements read this prior; vLLM's
#   request path is estimated from the set (FamilyCalibration.request_overhead_s).  Prefill GEMMs reach ≈ 50 % MFU.  An
#   NCCL all-reduce of a decode-sized message across nodes over InfiniBand (intra-node reduce, the
#   NIC hop, intra-node broadcast) ≈ 80 µs: 8 × the NVLink latency.
# Ascend: the same 85 % / 60 % of HBM bandwidth; a decoder layer is ≈ 20 operators dispatched through the
#   task queue (``TASK_QUEUE_ENABLE``) at ≈ 15 µs each even in ACL-graph mode (≈ 300 µs a layer);
#   an HCCL collective on HCCS costs ≈ 30 µs; the step's host work ≈ 3 ms; prefill reaches ≈ 40 % MFU
#   (its operators run eagerly: ACL graphs capture decode only).
# Prefill MoE layer (no engine captures prefill): the captured layer's cost plus its ≈ 30 operators
#   dispatched from the host (≈ 5 µs each through PyTorch on CUDA, ≈ 20 µs through torch_npu's task
#   queue): 30 + 150 µs on CUDA, 300 + 600 µs on Ascend — what the step model charged every prefill
#   layer before this factor was fitted (EAGER_LAYER_OVERHEAD_S); dense layers still pay exactly that.
STACK_PRIORS: dict[str, PlatformFactors] = {
    "cuda": PlatformFactors(0.85, 0.50, 1.5e-3, 10e-6, 0.50, 0.010, 8.0, 30e-6, 0.60, 180e-6),
    "ascend": PlatformFactors(0.85, 0.40, 3.0e-3, 30e-6, 0.40, 0.010, 3.0, 300e-6, 0.60, 900e-6),
}
DEFAULT_STACK = "cuda"

# Bounds of the fitted factors (physical: a factor at its bound says the model misses something).
FIT_BOUNDS: dict[str, tuple[float, float]] = {
    "layer_overhead_s": (2e-6, 3e-3),
    "prefill_layer_overhead_s": (50e-6, 10e-3),
}
#: Bounds of the estimated request path (configurator/calibration estimate_request_overhead): 2 ms is
#: an HTTP round trip and a tokenizer call on a loopback; 100 ms would be a front end stalled.
REQUEST_OVERHEAD_BOUNDS = (2e-3, 0.1)

#: Hardware families: accelerators that share kernels, memory system and software stack.  Each has
#: its own fitted factors and its own cross-validated error band.
FAMILIES: dict[str, str] = {
    "ada": "cuda",
    "ampere": "cuda",
    "hopper": "cuda",
    "blackwell": "cuda",
    "ascend-a2": "ascend",
    "ascend-a3": "ascend",
}


def hardware_family(accelerator: Any) -> str:
    """The accelerator's family (``FAMILIES``), from its generation, slug and name; else its software stack."""
    text = f"{getattr(accelerator, 'slug', '')} {getattr(accelerator, 'name', '')}".lower()
    stack = getattr(accelerator, "software_stack", DEFAULT_STACK) or DEFAULT_STACK
    if stack == "ascend":
        if "910c" in text or "a3" in text:
            return "ascend-a3"
        if "910b" in text or "a2" in text:
            return "ascend-a2"
        return "ascend"
    if getattr(accelerator, "generation", "") == "ada":  # L4, L20, L40S (catalog: Ada Lovelace)
        return "ada"
    for tag, family in (
        ("a100", "ampere"),
        ("a800", "ampere"),
        ("h100", "hopper"),
        ("h200", "hopper"),
        ("h20", "hopper"),
        ("h800", "hopper"),
        ("b200", "blackwell"),
        ("b300", "blackwell"),
        ("gb200", "blackwell"),
        ("gb300", "blackwell"),
        ("rtx pro 6000", "blackwell"),
        ("rtx-pro-6000", "blackwell"),
    ):
        if tag in text:
            return family
    return stack


def prior_for(family: str) -> PlatformFactors:
    return STACK_PRIORS.get(FAMILIES.get(family, family), STACK_PRIORS[DEFAULT_STACK])


@dataclass(frozen=True)
class FamilyCalibration:
    """One family's fitted factors and its leave-one-source-out error band."""

    layer_overhead_s: float
    prefill_layer_overhead_s: float
    band_low: float  # predicted ÷ measured throughput, cross-validated
    band_high: float
    sources: int  # distinct public sources the family's records come from
    records: int
    few_sources: bool = False  # fewer than MIN_SOURCES: the band is widened and says so
    # The same prefill cost as SGLang pays it (its prefill runs op by op, uncompiled): fitted only to
    # read the set's SGLang measurements (configurator/calibration fit_stack); plans launch vLLM or
    # vLLM-Ascend and never use it.  0: no SGLang measurement on the stack.
    sglang_prefill_layer_overhead_s: float = 0.0
    # vLLM's request path (API server, engine-core hand-off, detokenizer, streaming): estimated from the
    # set's dense vLLM measurements at one user (configurator/calibration estimate_request_overhead), the
    # same for every family — the path runs on the host, in vLLM's front end, which vLLM-Ascend shares.
    # 0: the stack's prior (STACK_PRIORS).  SGLang measurements read the prior (calibration _as_served).
    request_overhead_s: float = 0.0


MIN_SOURCES = 3
#: The band a family with fewer than MIN_SOURCES sources (or none) is given at least.
WIDE_BAND = (0.5, 2.0)
#: The physical range of a band (predicted ÷ measured throughput): a measurement a quarter or four
#: times the estimate of its own plan is refused at promotion (quotes/benchmarks/promotion.py
#: PLAUSIBLE_RATIO), so no honest fit has a bound outside it.  A band bound is a divisor of the page's
#: range (estimate ÷ high … estimate ÷ low): a fit file outside it is read as broken.
BAND_BOUNDS = (0.25, 4.0)

CALIBRATION_FILE = Path(__file__).resolve().parent / "calibration_fit.json"
_CALIBRATION: dict[str, Any] = {"path": None, "mtime": None, "families": {}, "problems": {}}


def _within(value: float, bounds: tuple[float, float]) -> bool:
    return math.isfinite(value) and bounds[0] <= value <= bounds[1]


def fit_row_problem(fit: FamilyCalibration) -> str:
    """Why a family's stored fit cannot be used ("" when it can): a factor outside ``FIT_BOUNDS``, a
    request path outside ``REQUEST_OVERHEAD_BOUNDS``, a band outside ``BAND_BOUNDS`` or not around 1."""
    for name in FITTED:
        value = getattr(fit, name)
        if not _within(value, FIT_BOUNDS[name]):
            low, high = FIT_BOUNDS[name]
            return f"{name} {value!r} outside {low:g}–{high:g} s"
    sglang = fit.sglang_prefill_layer_overhead_s
    if sglang and not _within(sglang, FIT_BOUNDS["prefill_layer_overhead_s"]):
        return f"sglang_prefill_layer_overhead_s {sglang!r} outside the prefill bounds"
    if fit.request_overhead_s and not _within(fit.request_overhead_s, REQUEST_OVERHEAD_BOUNDS):
        return f"request_overhead_s {fit.request_overhead_s!r} outside {REQUEST_OVERHEAD_BOUNDS}"
    if not (
        _within(fit.band_low, BAND_BOUNDS)
        and _within(fit.band_high, BAND_BOUNDS)
        and fit.band_low <= 1.0 <= fit.band_high
    ):
        return f"band {fit.band_low!r}–{fit.band_high!r} outside {BAND_BOUNDS[0]}–{BAND_BOUNDS[1]} or not around 1"
    return ""


def _load(path: Path) -> tuple[dict[str, FamilyCalibration], dict[str, str]]:
    """The usable family fits of a fit file, and why each unusable row was set aside.

    A row that cannot be read or whose figures are outside their physical bounds (``fit_row_problem``:
    a zero, negative, NaN or absurd band or factor) is left out, so its family is planned with the
    stored priors and the wide band, and the plan says so (``calibration_problem``)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return {}, {"*": f"{path.name} cannot be read ({type(exc).__name__})"}
    out: dict[str, FamilyCalibration] = {}
    problems: dict[str, str] = {}
    rows = data.get("families") if isinstance(data, dict) else None
    if not isinstance(rows, dict):
        return {}, {"*": f"{path.name} has no families table"}
    for family, row in rows.items():
        try:
            fit = FamilyCalibration(
                float(row["layer_overhead_s"]),
                float(row["prefill_layer_overhead_s"]),
                float(row["band_low"]),
                float(row["band_high"]),
                int(row["sources"]),
                int(row["records"]),
                bool(row.get("few_sources", False)),
                float(row.get("sglang_prefill_layer_overhead_s", 0.0)),
                float(row.get("request_overhead_s", 0.0)),
            )
        except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as exc:
            problems[str(family)] = f"unreadable row ({type(exc).__name__})"
            continue
        problem = fit_row_problem(fit)
        if problem:
            problems[str(family)] = problem
            continue
        out[str(family)] = fit
    return out, problems


def calibration_path() -> Path:
    """The fit in use: ``PERFORMANCE_CALIBRATION_FILE`` from the environment, else the committed one."""
    env = os.environ.get("PERFORMANCE_CALIBRATION_FILE")
    return Path(env) if env else CALIBRATION_FILE


_OVERRIDE: list[dict[str, FamilyCalibration]] = []


@contextmanager
def using_calibration(families: dict[str, FamilyCalibration]) -> Iterator[None]:
    """Estimate with ``families`` instead of the stored fit (the fit and its cross-validation)."""
    _OVERRIDE.append(families)
    try:
        yield
    finally:
        _OVERRIDE.pop()


def calibration() -> dict[str, FamilyCalibration]:
    """Per-family fit, reloaded when the file changes (``manage.py calibrate`` rewrites it)."""
    if _OVERRIDE:
        return _OVERRIDE[-1]
    path = calibration_path()
    try:
        mtime = path.stat().st_mtime_ns
    except OSError:
        mtime = None
    if _CALIBRATION["path"] != path or _CALIBRATION["mtime"] != mtime:
        families, problems = _load(path) if mtime is not None else ({}, {})
        _CALIBRATION.update(path=path, mtime=mtime, families=families, problems=problems)
        for family, problem in sorted(problems.items()):
            logging.getLogger(__name__).warning(
                "performance fit %s: %s set aside (%s); its priors are used", path, family, problem
            )
    loaded: dict[str, FamilyCalibration] = _CALIBRATION["families"]
    return loaded


def calibration_problem(family: str) -> str:
    """Why the stored fit of ``family`` was set aside and its priors used ("" when it was not)."""
    if _OVERRIDE:
        return ""
    calibration()
    problems: dict[str, str] = _CALIBRATION["problems"]
    return problems.get(family) or problems.get("*", "")


def factors_for_family(family: str) -> PlatformFactors:
    base = prior_for(family)
    fit = calibration().get(family)
    if fit is None:
        return base
    return replace(
        base,
        layer_overhead_s=fit.layer_overhead_s,
        prefill_layer_overhead_s=fit.prefill_layer_overhead_s,
        request_overhead_s=fit.request_overhead_s or base.request_overhead_s,
    )


def error_band(family: str) -> tuple[float, float, bool]:
    """(low, high, few_sources): the cross-validated band of predicted ÷ measured throughput."""
    fit = calibration().get(family)
    if fit is None:
        return WIDE_BAND[0], WIDE_BAND[1], True
    return fit.band_low, fit.band_high, fit.few_sources


class _FactorTable(dict[str, PlatformFactors]):
    """``PLATFORM_FACTORS[family or stack]``: the fitted factors in use (read-only view)."""

    def __missing__(self, key: str) -> PlatformFactors:
        return factors_for_family(key)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and (key in FAMILIES or key in STACK_PRIORS)


PLATFORM_FACTORS: dict[str, PlatformFactors] = _FactorTable()

# Eager mode (``--enforce-eager``; no CUDA graph / ACL graph / TorchAir capture): every operator of
# every layer is dispatched from the host each step.  Assumed dispatch cost per layer (≈ 30 kernels
# × host launch latency: ≈ 5 µs on CUDA, ≈ 20 µs on Ascend), added to the captured layer's cost
# when ``performance.graph_mode`` is false.  A prefill pass pays it on its dense layers (vLLM captures
# decode only: ``cudagraph_mode`` FULL_DECODE_ONLY / PIECEWISE leaves attention of prefill eager); its
# MoE layers pay the fitted ``prefill_layer_overhead_s`` instead (``prefill_layer_counts``).
EAGER_LAYER_OVERHEAD_S = {"cuda": 0.15e-3, "ascend": 0.6e-3}
# Piecewise graphs (``cudagraph_mode`` PIECEWISE — vLLM-Ascend's default before 0.21: releases/v0.20.2rc
# ``vllm_ascend/platform.py`` turns vLLM's FULL_AND_PIECEWISE into PIECEWISE, "Full graph is fully
# supported later"; from 0.21, vllm-ascend#9572, FULL_AND_PIECEWISE is the default): the decode graph is
# split at every layer's attention op, so each layer leaves the graph — the host dispatches the
# attention block (on Ascend ``vllm::mla_forward`` is the whole MLA block, from the layer's hidden states
# to its output) and relaunches the next graph piece.  Costed at the eager dispatch cost of a layer
# (EAGER_LAYER_OVERHEAD_S): assumed, not fitted; vllm-ascend#5739 reports FULL_DECODE_ONLY "much
# faster" than the PIECEWISE default.  The launch recipes set FULL_DECODE_ONLY, so a plan pays it only
# when it asks for piecewise graphs (``performance.piecewise_graphs``; its scripts then set
# ``cudagraph_mode`` PIECEWISE, launch/nodes.decode_graph_flags) or a calibration record says it ran them.

# Residual spread of the fit (predicted ÷ measured throughput over the calibration set):
# the band shown beside every estimate, ERROR_BAND_LOW / ERROR_BAND_HIGH.  Updated with the fit, in
# types.py (PerformanceResult's default band; imported above).

# P90 ÷ mean of TPOT at steady load (InferenceX DeepSeek-R1 H200 sweep, conc 8–64:
# P99 ÷ mean 1.07–1.12; P90 sits below that).
TPOT_P90_OVER_MEAN = 1.08
# Waiting time of a saturated queue is close to exponential: P50 = ln 2 × mean, P90 = ln 10 × mean.
WAIT_P50_OVER_MEAN = math.log(2)
WAIT_P90_OVER_MEAN = math.log(10)
# Time to first token at light load has its own spread (routing, batch position):
# P90 ÷ mean of TTFT at concurrency 8 in the same sweep is far above 1; we keep a modest 1.3.
TTFT_P90_OVER_MEAN_IDLE = 1.3

ACTIVATION_COMM_BYTES = 2  # TP all-reduce and EP combine carry BF16 activations
DISPATCH_BYTES_8BIT = 1  # EP dispatch in FP8/INT8 when the checkpoint computes in 8 bits


def factors_for(server: ServerSpec) -> PlatformFactors:
    return factors_for_family(hardware_family(server.accelerator))


# --------------------------------------------------------------------------- helpers


def accepted_tokens_per_step(
    draft_tokens: int, acceptance: float, *, position_acceptance: tuple[float, ...] = ()
) -> float:
    """Mean accepted length: tokens emitted per sequence per verification step, as vLLM reports it.

    vLLM's speculative-decoding metrics (``vllm/v1/spec_decode/metrics.py``, ``SpecDecodingLogging``,
    ``main``; vLLM-Ascend logs the same) define the *draft acceptance rate* as accepted ÷ drafted
    tokens and the *mean acceptance length* as 1 + accepted ÷ drafts, so with ``k`` draft tokens
    per step the mean accepted length is ``1 + k × rate`` — the rate already counts the stop at the
    first rejected token.  With a per-position acceptance (``accepted at position i ÷ drafts``, the
    same file's per-position list) it is ``1 + Σ pᵢ``.  vllm-ascend#14454: k = 7 and 60.33 %
    acceptance → 1 + 7 × 0.6033 = 5.22, the measured mean accepted length.
    """
    k = max(0, int(draft_tokens))
    if k == 0:
        return 1.0
    if position_acceptance:
        return 1.0 + sum(min(max(p, 0.0), 1.0) for p in position_acceptance[:k])
    a = min(max(acceptance, 0.0), 1.0)
    return 1.0 + k * a


def compute_precision(server: ServerSpec, activation_format: str, weight_format: str = "") -> str:
    """The precision the kernels the recipe launches multiply in, on this device.

    * 8-bit integer activations (W8A8 / W4A8 ModelSlim releases, ``quant_method`` ascend) run the
      INT8 matmul on Ascend and on GPUs alike.
    * FP8 activations need FP8 tensor cores (Hopper, Blackwell).  The 910B/910C have none, and
      vLLM-Ascend computes an FP8/MXFP8 checkpoint in BF16 after dequantising it — never in INT8.
    * Microscaled formats (MXFP8 activations with MXFP4 weights) need the block-scaled tensor cores
      of Blackwell (a device whose catalog row lists MXFP4 TFLOPS).  On Hopper the K3 recipe runs
      ``--moe-backend marlin`` (``recipes.K3_HOPPER``): Marlin is a weight-only kernel
      (vLLM ``vllm/model_executor/layers/quantization/utils/marlin_utils_fp4.py``, ``main``) that
      dequantises the FP4 weights and multiplies BF16 activations.
    * Everything else: BF16.
    """
    table = server.accelerator.tflops
    fmt = (activation_format or "").lower()
    wfmt = (weight_format or "").lower()
    if fmt in ("w8a8", "w4a8", "int8"):
        return "int8" if table.get("int8", 0) > 0 else "bf16"
    if fmt.startswith("mx") or wfmt.startswith("mx") or wfmt == "nvfp4":
        if table.get("mxfp4", 0) > 0 and fmt in ("mxfp8", "fp8") and table.get("fp8", 0) > 0:
            return "fp8"
        if fmt == "mxfp8" or wfmt.startswith("mx") or wfmt == "nvfp4":
            return "bf16"
    if fmt in ("fp8", "nvfp8") and table.get("fp8", 0) > 0:
        return "fp8"
    return "bf16"


def tflops_for(server: ServerSpec, activation_format: str, weight_format: str = "") -> tuple[float, str]:
    """Dense TFLOPS per device at the precision the kernels compute in (:func:`compute_precision`)."""
    table = server.accelerator.tflops
    precision = compute_precision(server, activation_format, weight_format)
    for name in (precision, "bf16", "fp16"):
        if table.get(name, 0) > 0:
            return float(table[name]), name
    return 0.0, ""


# Weight formats a MoE release applies to its routed experts only, the rest of the checkpoint staying
# BF16: gpt-oss ("MXFP4 quantization of the MoE weights", openai/gpt-oss-120b model card; its
# config.json ``quantization_config.modules_to_not_convert`` lists attention, router, embeddings and
# lm_head), Kimi-K2-Thinking ("INT4 weight-only quantization to the MoE components",
# moonshotai/Kimi-K2-Thinking model card), Kimi K3 (MXFP4 experts: 1.446 TB of the 1.561 TB checkpoint
# at 4.25 bits, the other 114.5 GB at 2 B a parameter, catalog).  Their attention, shared-expert and
# dense GEMMs multiply in BF16 whatever the experts' kernel computes in.
EXPERTS_ONLY_FORMATS = ("mxfp4", "int4")


def expert_active_params(model: ModelSpec, weight_format: str = "") -> float:
    """Routed-expert parameters one token multiplies: top-k × (expert bytes ÷ experts) ÷ bytes per parameter."""
    if not model.is_moe or model.num_experts <= 0 or model.expert_weight_bytes <= 0:
        return 0.0
    from .placement import format_bytes

    per_param = format_bytes(weight_format or model.weight_format)
    active = model.experts_per_token * model.expert_weight_bytes / model.num_experts / per_param
    return float(min(active, model.active_params))


def rest_tflops(server: ServerSpec, model: ModelSpec, tflops: float, weight_format: str) -> float:
    """TFLOPS of the GEMMs outside the routed experts: BF16 when the release quantises the experts only."""
    if model.is_moe and (weight_format or "").lower() in EXPERTS_ONLY_FORMATS:
        bf16 = float(server.accelerator.tflops.get("bf16", 0) or 0)
        if bf16 > 0:
            return min(bf16, tflops) if tflops > 0 else bf16
    return tflops


def compute_seconds(
    model: ModelSpec,
    tokens: float,
    attention_per_token: float,
    tp: float,
    pp: float,
    tflops: float,
    rest: float | None,
    efficiency: float,
    weight_format: str = "",
) -> float:
    """tokens × (2 × active parameters + attention FLOPs) ÷ TP ÷ PP at ``tflops``; with ``rest`` set
    apart from it, the routed experts' GEMMs at ``tflops`` and everything else (attention, shared
    experts, dense layers) at ``rest``."""
    if tflops <= 0 or efficiency <= 0:
        return 0.0
    if not rest or rest <= 0 or rest == tflops:
        return (
            tokens * (2 * model.active_params + attention_per_token) / tp / pp / (tflops * 1e12 * efficiency)
        )
    experts = expert_active_params(model, weight_format)
    other = max(model.active_params - experts, 0.0)
    flops_experts = tokens * 2 * experts / tp / pp
    flops_other = tokens * (2 * other + attention_per_token) / tp / pp
    return (flops_experts / tflops + flops_other / rest) / (1e12 * efficiency)


def intra_node_bytes_s(server: ServerSpec) -> float:
    """One direction of a device's scale-up link (catalog figures are bidirectional)."""
    gbps = server.scale_up_bandwidth_gbps or 0.0
    if gbps <= 0:
        return 64e9  # PCIe Gen5 x16, one direction
    return gbps * 1e9 / 8 / 2


def inter_node_bytes_s_per_device(server: ServerSpec, *, scale_up_allowed: bool = True) -> tuple[float, str]:
    """Bytes/s one device can send to other nodes, and the fabric (super-node ports first)."""
    domain = server.scale_up_domain_devices or server.logical_devices
    devices = max(server.logical_devices, 1)
    if scale_up_allowed and domain > server.logical_devices:
        up = [
            n
            for n in server.nics
            if n.role == "scale_up" and n.fabric not in ("pcie", "hccs", "nvlink", "xgmi")
        ]
        if up:
            return sum(n.count * n.speed_gbps for n in up) * 1e9 / 8 / devices, up[0].fabric
    out = [n for n in server.nics if n.role == "scale_out"]
    if out:
        return sum(n.count * n.speed_gbps for n in out) * 1e9 / 8 / devices, out[0].fabric
    return 8 * 400e9 / 8 / devices, "roce"


def experts_touched(model: ModelSpec, tokens: float) -> float:
    """Expected share of a rank's routed experts that ``tokens`` routed tokens touch."""
    if not model.is_moe or model.num_experts <= 0:
        return 1.0
    p = min(1.0, model.experts_per_token / model.num_experts)
    return 1.0 - (1.0 - p) ** max(tokens, 1.0)


def attention_layers(model: ModelSpec) -> int:
    return model.gqa_layers + model.mla_layers + model.sliding_layers or model.num_layers


def is_sparse_attention(model: ModelSpec) -> bool:
    """DeepSeek sparse attention (DeepSeek-V3.2, GLM-5): each MLA query attends to its indexer's top-k."""
    return model.index_topk > 0 and model.mla_layers > 0


def mean_capped_context(prompt: float, cap: float) -> float:
    """Mean over a prompt's positions i = 0…p of min(i, cap): the tokens a causal query attends when it
    attends at most ``cap`` (p ÷ 2 when the prompt is not longer than the cap, cap − cap² ÷ 2p beyond)."""
    if cap <= 0 or prompt <= cap:
        return prompt / 2
    return cap - cap * cap / (2 * prompt)


def attention_flops_per_token(model: ModelSpec, context: float, *, prompt: bool = False) -> float:
    """Score and value products of one token against ``context`` earlier tokens, all layers.

    ``prompt``: ``context`` is a prompt's length and the figure the mean over its positions (causal
    attention: position i attends to i tokens).  A sparse-attention (DSA) layer's query attends to its
    top-k tokens only, and its lightning indexer scores the whole context (index heads × key width ×
    2 FLOPs a token; vLLM deepseek_v2.py ``Indexer``).
    """
    head_dim = model.head_dim or (model.hidden_size // max(model.num_attention_heads, 1))
    mean = context / 2 if prompt else context
    window = min(mean, model.sliding_window) if model.sliding_window else mean
    heads = 4.0 * model.num_attention_heads * head_dim
    if is_sparse_attention(model):
        attended = (
            mean_capped_context(context, model.index_topk) if prompt else min(context, model.index_topk)
        )
        indexer = 2.0 * model.index_n_heads * model.index_head_dim * mean
        return (
            heads * (model.gqa_layers * mean + model.sliding_layers * window + model.mla_layers * attended)
            + indexer * model.mla_layers
        )
    full = model.gqa_layers + model.mla_layers or (0 if model.linear_layers else model.num_layers)
    return heads * (full * mean + model.sliding_layers * window)


# --------------------------------------------------------------------------- step model


@dataclass(frozen=True)
class GroupShape:
    """What the step model needs to know about one serving group."""

    tp: int
    dp: int
    ep: int
    expert_parallel: bool
    nodes: int
    devices_per_node: int
    pp: int = 1  # pipeline stages: a token passes through every stage, with a hop between them


@dataclass(frozen=True)
class DraftSpec:
    """A speculative draft: MTP head (``params`` 0: one layer of the target per draft token) or a
    separate draft model (EAGLE / DSpark / a small LM) with its own weights and layers."""

    tokens: int = 0
    acceptance: float = 0.0  # vLLM's draft acceptance rate: accepted ÷ drafted tokens
    position_acceptance: tuple[float, ...] = ()
    weight_bytes: float = 0.0  # a separate draft model's weights (whole model), 0 = MTP head
    layers: int = 0
    graph_mode: bool = True  # the draft runs captured (False: eager, every layer host-dispatched)


@stored_init
@dataclass(frozen=True)
class StepBreakdown:
    weights_bytes: float
    experts_touched: float
    kv_bytes: float
    memory_s: float
    compute_s: float
    tp_allreduce_s: float
    ep_dispatch_combine_s: float
    overhead_s: float
    draft_s: float
    step_s: float
    tokens_per_step: float  # per sequence, after speculative acceptance
    fabric: str
    comm: CommParts | None = None  # what the collectives were computed from
    attention_flops_per_token: float = 0.0  # at the mean context
    replicated_bytes: float = 0.0  # part of weights_bytes: groups every rank holds whole (read every step)
    layer_overhead_s: float = 0.0  # layers × fixed cost per layer (launch + sync)
    pipeline_stages: int = 1
    pipeline_hop_s: float = 0.0  # (PP − 1) stage-to-stage activation hops per step
    expert_bytes_read: float = 0.0  # part of weights_bytes: the touched routed experts

    @property
    def tpot_s(self) -> float:
        return self.step_s / self.tokens_per_step if self.tokens_per_step > 0 else self.step_s


#: vLLM's custom all-reduce serves a TP group over PCIe only up to two GPUs: wider PCIe-only groups
#: fall back to NCCL (vllm/distributed/device_communicators/custom_all_reduce.py: "Custom allreduce is
#: disabled because it's not supported on more than two PCIe-only GPUs"; full NVLink connectivity is
#: required beyond two, ``current_platform.is_fully_connected``).
CUSTOM_ALLREDUCE_MAX_PCIE_GPUS = 2
#: An NCCL all-reduce of a decode-sized message over PCIe: 8-byte ``all_reduce_perf`` takes 42.1 µs
#: out of place and 40.1 µs in place on 8 × GeForce RTX 4090 over PCIe (NVIDIA/nccl#1530) and 54 µs on
#: 8 × RTX 3090 (NVIDIA/nccl#1439), against ≈ 10 µs for vLLM's custom all-reduce over NVLink.
PCIE_NCCL_ALLREDUCE_LATENCY_S = 40e-6
#: The bus bandwidth an NCCL ring reaches over PCIe Gen5 (``all_reduce_perf`` busbw, 1–8 GB messages):
#: 28 GB/s on 8 × RTX 5090 and 35 GB/s on 4 of them, two Xeon 8480+ with ACS off and 8 channels forced
#: (NVIDIA/nccl#1639) — NCCL's maintainer there: on PCI systems the CPU and memory set it, not the
#: links.  The ring's share of a 64 GB/s Gen5 x16 link is therefore ≈ 28 GB/s; the 8-GPU figure is
#: taken, since an 8- or 16-card server's rings cross its CPU sockets.
PCIE_NCCL_BUS_BYTES_S = 28e9


def nccl_over_pcie(server: ServerSpec, shape: GroupShape) -> bool:
    """A TP group inside one PCIe-only server wider than vLLM's custom all-reduce serves."""
    return (
        server.scale_up_fabric == "pcie"
        and CUSTOM_ALLREDUCE_MAX_PCIE_GPUS < shape.tp <= shape.devices_per_node
    )


def _tp_fabric(server: ServerSpec, shape: GroupShape) -> tuple[float, str]:
    if shape.tp <= shape.devices_per_node:
        link = intra_node_bytes_s(server)
        if nccl_over_pcie(server, shape):
            link = min(link, PCIE_NCCL_BUS_BYTES_S)
        return link, server.scale_up_fabric
    bw, fabric = inter_node_bytes_s_per_device(server)
    return bw, fabric


@stored_init
@dataclass(frozen=True)
class CommParts:
    """The numbers one step's collectives are computed from (the step figures name them)."""

    tokens: float  # tokens on the DP rank in this pass
    all_reduces: int  # TP all-reduces per pass (0 at TP 1)
    tp_latency_factor: float  # serving_model's inter-node latency factor when TP spans nodes, else 1
    tp_latency_s: float  # fixed latency of one all-reduce: tp_base_latency_s × tp_latency_factor
    tp_link_bytes_s: float  # one direction of the link a TP all-reduce crosses
    ep_layers: int  # MoE layers with an EP dispatch and combine (0 without expert parallelism)
    ep_latency_s: float  # fixed latency of one dispatch or combine
    dispatch_bytes: int  # per hidden element dispatched
    combine_bytes: int  # per hidden element combined
    scale_up_bytes_s: float  # intra-node link, one direction
    scale_out_bytes_s: float  # per device to other nodes (before the scale-out efficiency)
    cross_node: float  # share of the EP traffic that leaves the node: (nodes − 1) ÷ nodes
    # one all-reduce's latency before the inter-node factor: the family's collective latency, or NCCL's
    # over PCIe where vLLM's custom all-reduce does not run (nccl_over_pcie)
    tp_base_latency_s: float = 0.0
    tp_fabric: str = ""  # the fabric a TP all-reduce crosses ("" at TP 1)
    tp_nccl_over_pcie: bool = False  # the all-reduce runs NCCL over PCIe (nccl_over_pcie)


def comm_parts(
    model: ModelSpec,
    server: ServerSpec,
    shape: GroupShape,
    tokens_rank: float,
    f: PlatformFactors,
    *,
    eight_bit: bool,
) -> tuple[CommParts, str, str]:
    """The parts of :func:`comm_times` and the TP and EP fabrics."""
    tp_fabric = server.scale_up_fabric
    layers = model.num_layers
    moe_layers = model.moe_layers if model.is_moe else 0
    use_ep = model.is_moe and shape.expert_parallel and shape.ep > 1
    all_reduces = 0
    tp_latency_factor = 1.0
    tp_bw = intra_node_bytes_s(server)
    base_latency = PCIE_NCCL_ALLREDUCE_LATENCY_S if nccl_over_pcie(server, shape) else f.collective_latency_s
    if shape.tp > 1:
        tp_bw, tp_fabric = _tp_fabric(server, shape)
        # Dense path: attention and MLP outputs each end in an all-reduce; with EP the MoE
        # output is combined by the all-to-all instead (one all-reduce per MoE layer).
        all_reduces = 2 * layers - (moe_layers if use_ep else 0)
        tp_latency_factor = f.inter_node_latency_factor if shape.tp > shape.devices_per_node else 1.0
    inter, inter_fabric = inter_node_bytes_s_per_device(server)
    cross_node = (shape.nodes - 1) / shape.nodes if shape.nodes > 1 else 0.0
    parts = CommParts(
        tokens=tokens_rank,
        all_reduces=all_reduces,
        tp_latency_factor=tp_latency_factor,
        tp_latency_s=base_latency * tp_latency_factor,
        tp_link_bytes_s=tp_bw,
        ep_layers=moe_layers if use_ep else 0,
        ep_latency_s=f.collective_latency_s * (f.inter_node_latency_factor if cross_node else 1.0),
        dispatch_bytes=DISPATCH_BYTES_8BIT if eight_bit else ACTIVATION_COMM_BYTES,
        combine_bytes=ACTIVATION_COMM_BYTES,
        scale_up_bytes_s=intra_node_bytes_s(server),
        scale_out_bytes_s=inter,
        cross_node=cross_node,
        tp_base_latency_s=base_latency,
        tp_fabric=tp_fabric if shape.tp > 1 else "",
        tp_nccl_over_pcie=nccl_over_pcie(server, shape),
    )
    return parts, tp_fabric, inter_fabric


def comm_times(
    model: ModelSpec,
    server: ServerSpec,
    shape: GroupShape,
    tokens_rank: float,
    f: PlatformFactors,
    *,
    eight_bit: bool,
    scale_out_efficiency: float,
) -> tuple[float, float, str]:
    """(TP all-reduce time, EP dispatch + combine time, fabric) for ``tokens_rank`` tokens on a rank."""
    tp_s, ep_s, fabric, _ = _comm(
        model, server, shape, tokens_rank, f, eight_bit=eight_bit, scale_out_efficiency=scale_out_efficiency
    )
    return tp_s, ep_s, fabric


def _comm(
    model: ModelSpec,
    server: ServerSpec,
    shape: GroupShape,
    tokens_rank: float,
    f: PlatformFactors,
    *,
    eight_bit: bool,
    scale_out_efficiency: float,
) -> tuple[float, float, str, CommParts]:
    c, tp_fabric, inter_fabric = comm_parts(model, server, shape, tokens_rank, f, eight_bit=eight_bit)
    tp_s = ep_s = 0.0
    fabric = server.scale_up_fabric
    if shape.tp > 1:
        fabric = tp_fabric
        payload = tokens_rank * model.hidden_size * ACTIVATION_COMM_BYTES
        per = c.tp_latency_s + 2 * (shape.tp - 1) / shape.tp * payload / c.tp_link_bytes_s
        tp_s = c.all_reduces * per
    if c.ep_layers:
        intra = c.scale_up_bytes_s
        inter = c.scale_out_bytes_s * scale_out_efficiency
        remote = (shape.ep - 1) / shape.ep
        cross_node = c.cross_node
        per_token = model.experts_per_token * model.hidden_size
        # The TP ranks of a DP rank each dispatch their slice of its tokens (sequence-parallel MoE,
        # FlashComm on Ascend), so one device sends tokens ÷ TP.
        tokens_device = tokens_rank / shape.tp
        dispatch = tokens_device * per_token * c.dispatch_bytes
        combine = tokens_device * per_token * c.combine_bytes
        moved = (dispatch + combine) * remote
        transfer = moved * (1 - cross_node) / intra + moved * cross_node / inter
        ep_s = c.ep_layers * (2 * c.ep_latency_s + transfer)
        if cross_node:
            fabric = inter_fabric
    return tp_s, ep_s, fabric, c


#: Embedding tables stay BF16 in every release format the importer reads (catalog/importers/hf_config.py
#: WEIGHT_FORMAT_BYTES: "embeddings, LM head, norms, routers and vision always stay BF16").
EMBEDDING_BYTES_PER_PARAM = 2


def gathered_embedding_bytes(model: ModelSpec, tp: int, pp: int) -> float:
    """Bytes of the input embedding one rank holds (per pipeline stage, on average) that no pass streams.

    vLLM's ``VocabParallelEmbedding`` looks up one row per token in its rank's vocabulary shard
    (``F.embedding`` over vocab ÷ TP rows, then an all-reduce,
    vllm/model_executor/layers/vocab_parallel_embedding.py), while ``ParallelLMHead`` multiplies the
    hidden states by its whole shard.  A release whose LM head is tied to the embedding reads that one
    matrix as the LM head; an untied one holds a second vocab × hidden table that a step only gathers
    rows of: 1.09 GB of Qwen2.5-7B's 15.2 GB, 2.35 GB of DeepSeek-V3's 1.3 TB."""
    if model.tie_word_embeddings or model.vocab_size <= 0 or model.hidden_size <= 0:
        return 0.0
    return model.vocab_size * model.hidden_size * EMBEDDING_BYTES_PER_PARAM / max(tp, 1) / max(pp, 1)


def decode_step(
    model: ModelSpec,
    server: ServerSpec,
    shape: GroupShape,
    f: PlatformFactors,
    *,
    batch: float,
    mean_context: float,
    kv_bytes_per_token: int,
    state_bytes_per_seq: int,
    lm_non_expert_bytes: float,
    tflops: float,
    rest_tflops: float | None = None,
    weight_format: str = "",
    draft_tokens: int,
    acceptance: float,
    eight_bit: bool,
    scale_out_efficiency: float,
    rank_non_expert_bytes: float | None = None,
    rank_expert_bytes: float | None = None,
    replicated_bytes: float = 0.0,
    draft: DraftSpec | None = None,
    sparse_latent_bytes_per_token: int = 0,
    gathered_bytes: float = 0.0,
) -> StepBreakdown:
    """Time of one decode step of ``batch`` sequences on one DP rank.

    Bytes read are the bytes the rank holds (``rank_non_expert_bytes``, which includes the groups the
    platform replicates, and ``rank_expert_bytes`` — both from the memory result of the chosen
    checkpoint, per pipeline stage); without them, the model row split as vLLM splits it.  With
    pipeline parallelism the B sequences run as PP micro-batches and each token passes every stage:
    step = PP × stage step(B ÷ PP) + (PP − 1) × hop.

    ``sparse_latent_bytes_per_token``: the part of ``kv_bytes_per_token`` a sparse-attention (DSA)
    query reads for its top-k tokens only (the MLA latents of the stage's layers); the indexer keys,
    the rest of it, are read for the whole context.  ``gathered_bytes``: the input embedding the rank
    holds and only looks rows up in (:func:`gathered_embedding_bytes`), not read.
    """
    pp = max(shape.pp, 1)
    b = max(batch, 1.0)
    micro = max(b / pp, 1.0)
    dr = draft or DraftSpec(draft_tokens, acceptance)
    k = max(0, dr.tokens)
    q = 1 + k
    tokens_rank = micro * q
    layers_stage = max(model.num_layers, 1) / pp
    touched = 1.0
    if rank_non_expert_bytes is not None:
        non_expert = float(rank_non_expert_bytes)
        experts = float(rank_expert_bytes or 0.0)
    else:
        non_expert = lm_non_expert_bytes / shape.tp / pp
        experts = 0.0
        if model.is_moe:
            divisor = max(shape.ep, 1) if shape.expert_parallel else shape.tp
            experts = model.expert_weight_bytes / divisor / pp
    non_expert = max(non_expert - gathered_bytes, 0.0)
    if model.is_moe:
        group_tokens = tokens_rank * shape.dp if shape.expert_parallel else tokens_rank
        touched = experts_touched(model, group_tokens)
        if shape.expert_parallel and shape.ep > 1:
            # the step waits for the busiest EP rank (engine/moe_routing.py)
            touched = busiest_rank_share(model.num_experts / shape.ep, shape.ep, touched)
    weights = non_expert + touched * experts
    # KV bytes per token and state are per rank of one stage (memory.kv_bytes_per_token counts the
    # stage's layers).
    kv_per_seq = mean_context * kv_bytes_per_token + state_bytes_per_seq
    if is_sparse_attention(model) and sparse_latent_bytes_per_token > 0:
        kv_per_seq -= max(mean_context - model.index_topk, 0.0) * sparse_latent_bytes_per_token
    kv = micro * kv_per_seq
    peak = server.accelerator.memory_bandwidth_bytes_s
    bw = peak * f.bandwidth_efficiency
    expert_bw = peak * f.expert_efficiency
    # dense weights and KV stream at the dense efficiency, the touched experts at the MoE kernels'
    memory_s = (non_expert + kv) / bw + touched * experts / expert_bw if bw > 0 and expert_bw > 0 else 0.0
    attention = attention_flops_per_token(model, mean_context)
    compute_s = compute_seconds(
        model, tokens_rank, attention, shape.tp, pp, tflops, rest_tflops, f.compute_efficiency, weight_format
    )
    tp_s, ep_s, fabric, comm = _comm(
        model, server, shape, tokens_rank, f, eight_bit=eight_bit, scale_out_efficiency=scale_out_efficiency
    )
    tp_s, ep_s = tp_s / pp, ep_s / pp  # one stage holds layers ÷ PP of the collectives
    layer_s = layers_stage * f.layer_overhead_s
    stage = layer_s + max(memory_s, compute_s) + tp_s + ep_s
    hop_s = 0.0
    if pp > 1:
        # Stage-to-stage send of the micro-batch's hidden states (BF16): inside a node over the
        # scale-up link, across nodes over the scale-out NIC share, plus one collective latency.
        hop_bytes = tokens_rank * model.hidden_size * ACTIVATION_COMM_BYTES
        cross = shape.nodes > 1
        link = (
            inter_node_bytes_s_per_device(server)[0] * scale_out_efficiency
            if cross
            else intra_node_bytes_s(server)
        )
        latency = f.collective_latency_s * (f.inter_node_latency_factor if cross else 1.0)
        hop_s = (pp - 1) * (latency + hop_bytes / link)
    core = f.step_overhead_s + pp * stage + hop_s
    # The draft's own step cost, k sequential proposals: an MTP head is one layer of the target
    # (its weights ≈ a layer's share); a separate draft model reads its own weights ÷ TP and pays
    # its own per-layer cost (the eager cost when it is not graph-captured).
    if dr.weight_bytes > 0 and dr.layers > 0:
        stack = server.accelerator.software_stack
        per_layer = f.layer_overhead_s + (
            0.0 if dr.graph_mode else EAGER_LAYER_OVERHEAD_S.get(stack, EAGER_LAYER_OVERHEAD_S[DEFAULT_STACK])
        )
        one = dr.weight_bytes / shape.tp / bw if bw > 0 else 0.0
        draft_s = k * (one + dr.layers * per_layer)
    else:
        draft_s = k * pp * stage / max(model.num_layers, 1)
    return StepBreakdown(
        weights_bytes=weights,
        experts_touched=touched,
        kv_bytes=kv,
        memory_s=memory_s,
        compute_s=compute_s,
        tp_allreduce_s=tp_s,
        ep_dispatch_combine_s=ep_s,
        overhead_s=f.step_overhead_s,
        draft_s=draft_s,
        step_s=core + draft_s,
        tokens_per_step=accepted_tokens_per_step(
            k, dr.acceptance, position_acceptance=dr.position_acceptance
        ),
        fabric=fabric,
        comm=comm,
        attention_flops_per_token=attention,
        replicated_bytes=float(replicated_bytes),
        layer_overhead_s=layer_s,
        pipeline_stages=pp,
        pipeline_hop_s=hop_s,
        expert_bytes_read=touched * experts,
    )


@dataclass(frozen=True)
class PrefillBreakdown:
    compute_s: float
    memory_s: float
    comm_s: float
    overhead_s: float
    chunks: int
    prefill_s: float
    prompt_tokens: int = 0  # the prompt's computed tokens (after prefix-cache hits)
    chunk_tokens: int = 0  # max_num_batched_tokens: the tokens one pass carries


def wave_prefill(pre: PrefillBreakdown, prompts: int) -> tuple[float, float, int]:
    """(seconds to prefill ``prompts`` prompts queued together, mean seconds until a prompt's last pass
    ends, passes) — a closed wave sent at once.

    vLLM's scheduler fills every step up to ``max_num_batched_tokens`` from the waiting queue
    (vllm/v1/core/sched/scheduler.py ``schedule``: ``token_budget``), so queued prompts share passes:
    a pass pays the fixed cost (step and layer overheads) and reads the weights once for all the
    prompts it carries, while the compute and the collectives grow with the tokens.  Prompt k ends
    with pass ⌈k·p ÷ budget⌉.  One prompt is :func:`prefill_time` itself.
    """
    n = max(int(prompts), 1)
    p, budget = pre.prompt_tokens, pre.chunk_tokens
    if n == 1 or p <= 0 or budget <= 0:
        return n * pre.prefill_s, pre.prefill_s * (n + 1) / 2, n * pre.chunks
    passes = max(math.ceil(n * p / budget), 1)
    chunks = max(pre.chunks, 1)
    fixed = pre.overhead_s / chunks
    reads = pre.memory_s / chunks
    compute = n * pre.compute_s / passes
    comm = n * pre.comm_s / passes
    per_pass = fixed + max(compute, reads) + comm
    done = sum(math.ceil(k * p / budget) for k in range(1, n + 1)) / n
    return passes * per_pass, done * per_pass, passes


def prompts_per_pass(pre: PrefillBreakdown) -> int:
    """Prompts one prefill pass carries: as many whole prompts as the batched-token budget holds
    (vLLM's scheduler fills a step from the waiting queue up to ``max_num_batched_tokens``,
    ``vllm/v1/core/sched/scheduler.py`` ``schedule``); 1 when a prompt needs the whole budget or more."""
    p, budget = pre.prompt_tokens, pre.chunk_tokens
    if p <= 0 or budget <= 0 or p > budget:
        return 1
    return max(1, budget // p)


def prefill_pool_capacity(pre: PrefillBreakdown, ranks: int) -> float:
    """Prompts per second a prefill pool of ``ranks`` DP ranks finishes when every pass is full:
    ranks × m ÷ (time of a pass carrying m prompts, :func:`wave_prefill`)."""
    if pre.prefill_s <= 0 or ranks <= 0:
        return 0.0
    m = prompts_per_pass(pre)
    full_pass_s = wave_prefill(pre, m)[0] if m > 1 else pre.prefill_s
    return ranks * m / full_pass_s if full_pass_s > 0 else 0.0


def prefill_pool_latency(pre: PrefillBreakdown, ranks: int, arrival_per_s: float) -> float:
    """Mean seconds from a prompt's arrival at a prefill pool until its last pass ends (xPyD).

    Each prompt alone: the pool is an M/D/c queue of one pass per prompt (:func:`mdc_wait`).  vLLM's
    scheduler instead takes every waiting prompt the token budget holds into the next pass
    (:func:`prompts_per_pass`), so under load a pass carries k prompts: the smallest k whose arrivals
    during one pass of k, λ × T(k) with λ per rank, fit in the next one (a stable cycle), k ≤ m.  A
    prompt then waits for the rest of the pass in flight (busy share ρ = λ T(k) ÷ k, half a pass) and
    rides a pass of k: ρ T(k) ÷ 2 + T(k).  The scheduler batches only when prompts wait, so the latency
    is the smaller of the two readings; inf beyond the pool's capacity (:func:`prefill_pool_capacity`).
    """
    return pool_latency(pre, ranks)(arrival_per_s)


def pool_latency(pre: PrefillBreakdown, ranks: int) -> Callable[[float], float]:
    """:func:`prefill_pool_latency` of one pool as a function of the arrival rate alone: what depends
    on the pool only (its service rate, its pass times) is worked out once, and the M/D/c wait
    (:func:`mdc_wait`, :func:`erlang_c`) is taken in the same operations, so the figures are the same
    to the last bit — the closed loop's bisection (performance/queueing.py) asks for the latency at a
    dozen arrival rates per operating point, and the operating points of one plan's pool share most of
    their rates (each bisection halves the same capacity), so each rate is worked out once for the
    function's life (one plan's: ``GroupModel.pool_latency``)."""
    single = pre.prefill_s
    if single <= 0:
        return lambda arrival_per_s: 0.0
    m = prompts_per_pass(pre)
    times = _pass_times(pre) if m > 1 and ranks > 0 else ()
    mu = 1.0 / single
    c = max(int(ranks), 1)
    c_mu = c * mu
    known: dict[float, float] = {}

    def latency(arrival_per_s: float) -> float:
        hit = known.get(arrival_per_s)
        if hit is not None:
            return hit
        if arrival_per_s <= 0:
            alone = single + 0.0
        elif arrival_per_s >= c_mu:
            alone = single + math.inf
        else:
            pw = erlang_c(c, arrival_per_s / mu)
            alone = single + 0.5 * pw / (c_mu - arrival_per_s)
        out = alone
        if times and arrival_per_s > 0:
            lam = arrival_per_s / ranks
            for k, t in enumerate(times, start=2):
                if lam * t <= k:
                    busy = min(1.0, lam * t / k)
                    out = min(alone, busy * t / 2 + t)
                    break
        known[arrival_per_s] = out
        return out

    return latency


@lru_cache(maxsize=256)
def _pass_times(pre: PrefillBreakdown) -> tuple[float, ...]:
    """T(k) = ``wave_prefill(pre, k)[0]`` for k = 2 … ``prompts_per_pass(pre)``: a pool's pass times
    depend on its breakdown alone, and the closed loop's bisection asks for them at every arrival rate."""
    return tuple(wave_prefill(pre, k)[0] for k in range(2, prompts_per_pass(pre) + 1))


def prefill_layer_counts(model: ModelSpec) -> tuple[int, int]:
    """(MoE layers, other layers) of a prefill pass.  An MoE layer pays the family's fitted prefill cost
    (``prefill_layer_overhead_s``: routing, the expert dispatch's host synchronisation and its many
    operators, all eager); a dense layer its captured cost plus the eager dispatch of its ≈ 30 operators,
    which the public TTFT records (all MoE) do not measure and so do not move."""
    layers = max(model.num_layers, 1)
    moe = min(max(model.moe_layers, 0), layers) if model.is_moe else 0
    return moe, layers - moe


def prefill_time(
    model: ModelSpec,
    server: ServerSpec,
    shape: GroupShape,
    f: PlatformFactors,
    *,
    prompt_tokens: int,
    lm_non_expert_bytes: float,
    tflops: float,
    rest_tflops: float | None = None,
    weight_format: str = "",
    chunk_tokens: int,
    eight_bit: bool,
    scale_out_efficiency: float,
    rank_weight_bytes: float | None = None,
    gathered_bytes: float = 0.0,
) -> PrefillBreakdown:
    """Time to prefill one prompt on one DP rank (chunked by ``max_num_batched_tokens``).

    Each chunk is one forward pass through every pipeline stage; its layers run eagerly (vLLM
    captures decode only): each MoE layer pays the family's fitted prefill layer cost
    (``prefill_layer_overhead_s``), each dense layer its captured cost plus the eager dispatch cost
    (``prefill_layer_counts``).  ``rank_weight_bytes`` is what the rank holds (memory result, per stage);
    ``gathered_bytes`` the input embedding of it a pass looks rows up in (per stage), not streamed.
    """
    p = max(prompt_tokens, 1)
    pp = max(shape.pp, 1)
    chunks = max(1, math.ceil(p / max(chunk_tokens, 1)))
    # Causal attention: token i attends to i earlier tokens → mean context p ÷ 2.  The routed experts'
    # GEMMs at the experts' compute precision, the rest at theirs (``rest_tflops``: BF16 for a release
    # that quantises its experts only, EXPERTS_ONLY_FORMATS).
    compute_s = compute_seconds(
        model,
        p,
        attention_flops_per_token(model, p, prompt=True),
        shape.tp,
        1,
        tflops,
        rest_tflops,
        f.prefill_efficiency,
        weight_format,
    )
    # Every chunk reads the weights the rank holds (all experts are touched by a chunk).
    if rank_weight_bytes is not None:
        weights = float(rank_weight_bytes) * pp
    elif model.is_moe:
        divisor = shape.ep if shape.expert_parallel else shape.tp
        weights = lm_non_expert_bytes / shape.tp + model.expert_weight_bytes / max(divisor, 1)
    else:
        weights = lm_non_expert_bytes / shape.tp
    weights = max(weights - gathered_bytes * pp, 0.0)
    bw = server.accelerator.memory_bandwidth_bytes_s * f.bandwidth_efficiency
    memory_s = chunks * weights / bw if bw > 0 else 0.0  # a chunk streams all it holds (dense reads)
    tp_s, ep_s, _ = comm_times(
        model, server, shape, p, f, eight_bit=eight_bit, scale_out_efficiency=scale_out_efficiency
    )
    moe_layers, dense_layers = prefill_layer_counts(model)
    eager = EAGER_LAYER_OVERHEAD_S.get(
        server.accelerator.software_stack, EAGER_LAYER_OVERHEAD_S[DEFAULT_STACK]
    )
    overhead = chunks * (
        f.step_overhead_s
        + moe_layers * f.prefill_layer_overhead_s
        + dense_layers * (f.layer_overhead_s + eager)
    )
    total = overhead + max(compute_s, memory_s) + tp_s + ep_s
    return PrefillBreakdown(
        compute_s, memory_s, tp_s + ep_s, overhead, chunks, total, p, max(int(chunk_tokens), 0)
    )


# --------------------------------------------------------------------------- queueing


def erlang_c(servers: int, offered_load: float) -> float:
    """Probability an arrival waits in an M/M/c queue (offered load a = λ ÷ μ)."""
    c = max(int(servers), 1)
    a = offered_load
    if a <= 0:
        return 0.0
    if a >= c:
        return 1.0
    term = 1.0
    total = 1.0
    for k in range(1, c):
        term *= a / k
        total += term
    term *= a / c
    last = term * c / (c - a)
    return last / (total + last)


def mdc_wait(servers: int, service_s: float, arrival_per_s: float) -> float:
    """Mean queueing delay of an M/D/c queue (Allen–Cunneen: half the M/M/c delay)."""
    if service_s <= 0 or arrival_per_s <= 0:
        return 0.0
    mu = 1.0 / service_s
    c = max(int(servers), 1)
    if arrival_per_s >= c * mu:
        return math.inf
    pw = erlang_c(c, arrival_per_s / mu)
    return 0.5 * pw / (c * mu - arrival_per_s)


@stored_init
@dataclass(frozen=True)
class OperatingPoint:
    concurrency: float
    batch_per_rank: float
    requests_per_s: float
    output_tokens_per_s: float
    ttft_s: float
    tpot_s: float
    wait_s: float
    saturated: bool  # users beyond what the cluster serves at once (they queue)
    # a closed wave: the mean wait for the shared prefill pass that ends a prompt (wave_prefill); 0 otherwise
    wave_first_token_s: float = 0.0

    @property
    def ttft_p50_s(self) -> float:
        return self.ttft_s - self.wait_s + WAIT_P50_OVER_MEAN * self.wait_s

    @property
    def ttft_p90_s(self) -> float:
        base = self.ttft_s - self.wait_s
        return base * TTFT_P90_OVER_MEAN_IDLE + WAIT_P90_OVER_MEAN * self.wait_s

    @property
    def tpot_p90_s(self) -> float:
        return self.tpot_s * TPOT_P90_OVER_MEAN


def host_dispatch_per_layer_s(req: PlanRequest) -> float:
    """What every decode layer adds when decode does not replay full graphs (``PlanRequest.decode_graphs``
    "eager" or "piecewise", as the launch scripts then run it): the stack's eager dispatch cost."""
    if req.decode_graphs == "full":
        return 0.0
    stack = req.server.accelerator.software_stack
    return EAGER_LAYER_OVERHEAD_S.get(stack, EAGER_LAYER_OVERHEAD_S[DEFAULT_STACK])


def effective_factors(req: PlanRequest) -> PlatformFactors:
    """The family's factors (fitted + fixed) with the request's overrides (``performance.*``) applied.

    Eager decode and piecewise graphs (``PlanRequest.decode_graphs``) add the host dispatch cost to
    every layer (``host_dispatch_per_layer_s``).
    """
    base = factors_for(req.server)
    perf = req.performance
    step_overhead = (
        perf.step_overhead_ms / 1000.0 if perf.step_overhead_ms is not None else base.step_overhead_s
    )
    layer = base.layer_overhead_s + host_dispatch_per_layer_s(req)
    requested = perf.decode_bandwidth_efficiency
    return replace(
        base,
        # a requested decode bandwidth efficiency applies to every read, dense and expert
        bandwidth_efficiency=requested or base.bandwidth_efficiency,
        expert_bandwidth_efficiency=requested or base.expert_bandwidth_efficiency,
        prefill_efficiency=perf.prefill_mfu or base.prefill_efficiency,
        step_overhead_s=step_overhead,
        layer_overhead_s=layer,
    )
