"""Throughput and latency ESTIMATE from a calibrated step-time model, to be confirmed by a load test.

The arithmetic lives in :mod:`configurator.engine.serving_model` (step time by
parts, prefill, queueing); this package applies it to each serving group of the
layout, turns every part into an explained figure (figure book, catalogue
``figures/catalogue/performance.py``), and adds the checks:

* ``estimate``: :func:`estimate_performance`, the deployment's figures and checks;
* ``group_model``: one group's step-time model (shape, prefill, KV room, step at any batch);
* ``groups``: one group's estimate (prefill, running batch, KV transfer, capacity);
* ``decode``: the decode step's parts as figures;
* ``queueing``: the closed-loop operating point (aggregated, xPyD) and the load curve;
* ``disaggregated``: prefill vs decode capacity of xPyD;
* ``sla``: latency targets and their checks;
* ``assumptions``: efficiency factors as figures and the range check of every knob;
* ``common``: the shared constants (the result types are in ``engine/types.py``).

Per DP rank (one engine: TP devices):

* **decode step** = fixed overhead + max(memory time, compute time) + TP
  all-reduces + EP dispatch/combine, each collective = latency + bytes ÷
  bandwidth of the fabric it crosses (scale-up inside a node: HCCS / NVLink /
  LingQu-UB / PCIe; across nodes: the super-node's LingQu ports or the RoCE /
  InfiniBand NICs).  Memory traffic = non-expert weights ÷ TP + the routed
  experts the step touches (÷ EP with expert parallelism, else ÷ TP, as
  ``memory.weights_per_rank``) + the running batch's KV cache and state.
* **speculative decoding** (MTP) emits ``(1 − a^(k+1)) ÷ (1 − a)`` tokens per step.
* **prefill** = 2 × active params × prompt tokens + causal attention, at the
  checkpoint's activation precision, in chunks of ``max_num_batched_tokens``.
* **aggregated serving**: chunked prefill shares the rank: B requests per
  ``B × prefill + output ÷ tokens-per-step × step`` seconds.
* **disaggregated serving (xPyD)**: prefill is an M/D/c queue over the prefill
  DP ranks; decode runs B sequences per DP rank; KV moves P → D over the
  scale-out NICs.
* **load**: a closed loop of ``workload.concurrency`` users (the way ``vllm
  bench serve --max-concurrency`` drives a server).  Users beyond the running
  slots (``max_num_seqs`` or the KV cache) queue; their wait adds to TTFT.  The
  quoted concurrency above what the cluster serves at once is an ERROR check.

Efficiency factors are calibrated per software stack against published
measurements (``tests/data/serving_benchmarks.yaml``, docs/performance.md); the
residual spread of that fit is the error band reported beside the estimate.
``workload.measured_output_tokens_per_s`` (a load-test result) overrides the
estimated throughput everywhere and sets ``measured``.
"""

from ..types import CurvePoint, GroupPerformance, PdBalance, PerformanceResult, SlaResult
from .common import (
    CALIBRATION_SOURCE,
    COUNTED_DECODE_ROLES,
    ESTIMATE_NOTE_EN,
    ESTIMATE_NOTE_ZH,
    ESTIMATE_SOURCE,
    MEASURED_NOTE_EN,
    MEASURED_NOTE_ZH,
)
from .estimate import estimate_performance
from .queueing import CURVE_POINTS, MAX_CURVE_POINTS

__all__ = [
    "CALIBRATION_SOURCE",
    "COUNTED_DECODE_ROLES",
    "CURVE_POINTS",
    "ESTIMATE_NOTE_EN",
    "ESTIMATE_NOTE_ZH",
    "ESTIMATE_SOURCE",
    "MAX_CURVE_POINTS",
    "MEASURED_NOTE_EN",
    "MEASURED_NOTE_ZH",
    "CurvePoint",
    "GroupPerformance",
    "PdBalance",
    "PerformanceResult",
    "SlaResult",
    "estimate_performance",
]
