"""What the performance estimate returns: per group, P:D balance, load curve, SLA, the whole."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from .. import serving_model as sm
from ..types import Check, Figure


@dataclass(frozen=True)
class GroupPerformance:
    """Estimate for one serving group (a cluster, or the P or D side of xPyD)."""

    group: str
    role: str
    counts_toward_throughput: bool
    nodes: int
    tp: int
    dp: int
    ep: int
    # batch
    offered_seqs_per_dp_rank: int  # share of workload.concurrency this rank is offered
    kv_seqs_fit_per_dp_rank: int  # sequences of input+output tokens the KV budget holds
    batch_per_dp_rank: int  # running sequences per decode step
    batch_limited_by: str  # concurrency | max_num_seqs | kv_capacity | none (prefill side)
    # decode (0 on a prefill-only group)
    weights_bytes_read_per_rank: int
    experts_touched_fraction: float
    kv_bytes_read_per_rank: int
    bytes_per_step_per_rank: int
    memory_time_s: float
    all_to_all_s: float  # EP dispatch + combine per step
    decode_step_s: float
    # prefill
    prefill_s: float  # one prompt on one DP rank
    kv_transfer_s: float  # P → D KV move per request (xPyD decode side), else 0
    # throughput (capacity of this group at the workload's concurrency)
    requests_per_s: float
    output_tokens_per_s_per_dp_rank: float
    output_tokens_per_s: float
    # parts of the step (defaults keep older callers working)
    compute_time_s: float = 0.0
    tp_allreduce_s: float = 0.0
    step_overhead_s: float = 0.0
    tokens_per_step: float = 1.0
    slots_per_dp_rank: int = 0  # sequences a rank runs at once: min(max_num_seqs, KV fit)

    @property
    def tpot_s(self) -> float:
        return self.decode_step_s / self.tokens_per_step if self.tokens_per_step > 0 else self.decode_step_s


@dataclass(frozen=True)
class PdBalance:
    """Prefill vs decode capacity of an xPyD deployment."""

    prefill_requests_per_s: float
    decode_requests_per_s: float
    ratio: float  # prefill capacity ÷ decode capacity
    bottleneck: str  # prefill | decode | balanced
    suggested_prefill_nodes: int
    suggested_decode_nodes: int


@dataclass(frozen=True)
class CurvePoint:
    """One point of the throughput-vs-latency curve (one concurrency)."""

    concurrency: int
    output_tokens_per_s: float
    output_tokens_per_s_per_device: float
    ttft_s: float
    ttft_p90_s: float
    tpot_s: float
    tpot_p90_s: float
    saturated: bool


@dataclass(frozen=True)
class SlaResult:
    """The latency targets and whether the estimate meets them at the quoted concurrency."""

    targets: Mapping[str, float]  # ttft_p50_s, ttft_p90_s, tpot_p50_ms, tpot_p90_ms (those set)
    values: Mapping[str, float | None]  # the estimate for each (None: no finite latency at that point)
    met: bool | None  # None: no target set
    max_concurrency: int  # largest concurrency meeting every target (0: none; -1: no target)


@dataclass(frozen=True)
class PerformanceResult:
    """What :func:`estimate_performance` returns.  All times in seconds."""

    measured: bool
    groups: tuple[GroupPerformance, ...]
    ttft_s: float
    tpot_s: float
    requests_per_s: float
    output_tokens_per_s: float  # whole deployment, counted groups only
    input_tokens_per_s: float
    output_tokens_per_s_per_dp_rank: float
    serving_dp_ranks: int
    prefill_time_share: float  # share of accelerator time spent on prefill (input tokens)
    pd_balance: PdBalance | None
    note_en: str
    note_zh: str
    figures: Mapping[str, Figure] = field(default_factory=dict)
    checks: tuple[Check, ...] = ()
    # load, SLA and error band
    ttft_p90_s: float = 0.0
    tpot_p90_s: float = 0.0
    queue_wait_s: float = 0.0
    capacity_concurrency: int = 0  # users served at once before requests queue
    curve: tuple[CurvePoint, ...] = ()
    sla: SlaResult | None = None
    error_band: tuple[float, float] = (sm.ERROR_BAND_LOW, sm.ERROR_BAND_HIGH)
    serving_devices: int = 0
    concurrency: int = 0  # the workload's concurrency the figures are quoted at

    @property
    def is_estimate(self) -> bool:
        return not self.measured

    @property
    def output_tokens_per_s_range(self) -> tuple[float, float]:
        """Throughput the measured result is likely to fall in (estimate ÷ band)."""
        if self.measured:
            return (self.output_tokens_per_s, self.output_tokens_per_s)
        low, high = self.error_band
        return (self.output_tokens_per_s / high, self.output_tokens_per_s / low)
