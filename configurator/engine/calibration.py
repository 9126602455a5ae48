"""Check the memory model against real vLLM / vLLM-Ascend start-up logs.

Each log entry (``tests/data/vllm_startup_logs.yaml``) says what was launched
(model dimensions, device and the total memory the runtime reported, parallel
layout, serving flags) and what vLLM logged: the weights per rank it loaded
(the input), the KV-cache memory it made available and, when logged, the KV
tokens (what the engine must predict), and whether it started at all.

The prediction runs the engine's own per-rank arithmetic (``memory.py``): no
constant is fitted to these logs.  Pure Python; the test and ``bench/`` read
the same entries through :func:`predict`.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .defaults import kv_dtype
from .memory import size_memory
from .types import (
    GIB,
    AcceleratorSpec,
    GroupLayout,
    LayoutResult,
    ModelSpec,
    ParallelSpec,
    PlanRequest,
    ServerSpec,
    ServingSpec,
    Severity,
    TopologyKind,
    TopologySpec,
)

REFUSAL_CODES = ("memory.weights_do_not_fit", "memory.one_sequence_does_not_fit")


@dataclass(frozen=True)
class Prediction:
    id: str
    outcome: str  # what vLLM did: ok | refused
    predicted_ok: bool
    logged_kv_gib: float | None
    predicted_kv_gib: float
    logged_tokens: int | None
    predicted_tokens: int
    error_codes: tuple[str, ...]

    @property
    def kv_error(self) -> float | None:
        """(predicted − logged) ÷ logged KV memory, for start-ups that succeeded."""
        if self.outcome != "ok" or not self.logged_kv_gib:
            return None
        return (self.predicted_kv_gib - self.logged_kv_gib) / self.logged_kv_gib

    @property
    def token_error(self) -> float | None:
        if self.outcome != "ok" or not self.logged_tokens:
            return None
        return (self.predicted_tokens - self.logged_tokens) / self.logged_tokens

    @property
    def agrees(self) -> bool:
        """vLLM refused ⇔ the engine reports an error."""
        return self.predicted_ok == (self.outcome == "ok")


def _model(entry: Mapping[str, Any]) -> ModelSpec:
    arch: dict[str, Any] = dict(entry["arch"])
    layers = int(arch["num_layers"])
    mla = int(arch.get("mla_layers", 0))
    sliding = int(arch.get("sliding_layers", 0))
    tp = int(entry.get("tp", 1))
    # The log's "Model loading took" is the weights on one rank: give the engine a release that
    # splits back to exactly that (dense: everything ÷ TP; the MoE ones here run at TP1).
    weights = round(float(entry["logged"]["weights_gib"]) * GIB) * tp
    return ModelSpec(
        slug=str(entry["id"]),
        name=str(entry["model"]),
        total_params=0,
        active_params=0,
        num_layers=layers,
        hidden_size=int(arch["hidden_size"]),
        vocab_size=int(arch["vocab_size"]),
        num_attention_heads=int(arch.get("num_attention_heads", arch["num_kv_heads"])),
        num_kv_heads=int(arch["num_kv_heads"]),
        head_dim=int(arch["head_dim"]),
        gqa_layers=layers - mla - sliding,
        mla_layers=mla,
        sliding_layers=sliding,
        sliding_window=int(arch.get("sliding_window", 0)),
        kv_lora_rank=int(arch.get("kv_lora_rank", 0)),
        qk_rope_head_dim=int(arch.get("qk_rope_head_dim", 0)),
        index_head_dim=int(arch.get("index_head_dim", 0)),
        index_topk=int(arch.get("index_topk", 0)),
        index_n_heads=int(arch.get("index_n_heads", 0)),
        num_experts=int(arch.get("num_experts", 0)),
        experts_per_token=int(arch.get("experts_per_token", 0)),
        non_expert_weight_bytes=weights,
        max_context=0,
    )


def vllm_default_limits(entry: Mapping[str, Any]) -> tuple[int, int]:
    """(max_num_seqs, max_num_batched_tokens) vLLM picks when the launch did not set them.

    vLLM ``vllm/engine/arg_utils.py`` ``EngineArgs.get_batch_defaults``: on a device of at least
    70 GiB whose name does not contain "a100", 1024 sequences and 8,192 batched tokens for the API
    server (16,384 for the LLM class); otherwise 256 and 2,048 (8,192 for the LLM class); then
    max_num_seqs = min(that, max_num_batched_tokens).
    """
    big = float(entry["device_total_gib"]) >= 70 and "a100" not in str(entry.get("device", "")).lower()
    llm_class = entry.get("usage") == "llm_class"
    tokens = entry.get("max_num_batched_tokens") or (
        (16384 if llm_class else 8192) if big else (8192 if llm_class else 2048)
    )
    seqs = entry.get("max_num_seqs") or min(1024 if big else 256, int(tokens))
    return int(seqs), int(tokens)


def request_for(entry: Mapping[str, Any]) -> tuple[PlanRequest, LayoutResult]:
    """The PlanRequest and single-group layout that reproduce one logged start-up."""
    tp, pp, dp = int(entry.get("tp", 1)), int(entry.get("pp", 1)), int(entry.get("dp", 1))
    stack = "ascend" if entry.get("engine") == "vllm-ascend" else "cuda"
    devices = tp * pp * dp
    total = round(float(entry["device_total_gib"]) * GIB)
    accelerator = AcceleratorSpec(
        slug="calibration-device",
        name=str(entry["device"]),
        memory_bytes=total,
        memory_bandwidth_bytes_s=1.0,
        tflops={},
        software_stack=stack,
        runtime_memory_bytes=total,
        runtime_memory_source=str(entry["source"]),
    )
    server = ServerSpec(
        slug="calibration-server",
        name=str(entry["device"]),
        accelerator=accelerator,
        packages=devices,
        rack_units=1,
        max_input_kw=1.0,
    )
    ep = int(entry.get("ep", 1))
    parallel = ParallelSpec(tp=tp, dp=dp, pp=pp, expert_parallel=ep > 1, dp_local=dp)
    seqs, tokens = vllm_default_limits(entry)
    serving = ServingSpec(
        gpu_memory_utilization=float(entry.get("gpu_memory_utilization") or 0.9),
        max_model_len=int(entry["max_model_len"]),
        max_num_seqs=seqs,
        max_num_batched_tokens=tokens,
        kv_cache_dtype=kv_dtype(entry.get("kv_cache_dtype") or "auto"),
        # HCCL_BUFFSIZE of the launch (CANN's default 200 MB when the log does not say).
        comm_buffer_mb=int(entry.get("hccl_buffsize_mb") or 200),
        block_size=int(entry.get("block_size") or 0),
        enforce_eager=bool(entry.get("enforce_eager", False)),
        flashinfer_sampler=bool(entry.get("flashinfer_sampler", False)),
        vllm_version=str(entry.get("vllm_version", "")),
    )
    model = _model(entry)
    request = PlanRequest(
        model=model,
        server=server,
        topology=TopologySpec(TopologyKind.SINGLE, 1, parallel),
        serving=serving,
    )
    group = GroupLayout("cluster", "serve", 1, 0, parallel, devices, 0)
    return request, LayoutResult(nodes=1, devices_per_node=devices, groups=(group,))


def predict(entry: Mapping[str, Any]) -> Prediction:
    request, layout = request_for(entry)
    memory = size_memory(request, layout)
    rank = memory.groups[0].per_rank
    errors = tuple(c.code for c in memory.checks if c.severity == Severity.ERROR)
    logged = entry["logged"]
    kv = logged.get("kv_gib")
    tokens = logged.get("kv_tokens")
    return Prediction(
        id=str(entry["id"]),
        outcome=str(entry["outcome"]),
        predicted_ok=not any(code in REFUSAL_CODES for code in errors),
        logged_kv_gib=float(kv) if kv is not None else None,
        predicted_kv_gib=rank.kv_cache_bytes / GIB,
        logged_tokens=int(tokens) if tokens else None,
        predicted_tokens=rank.kv_tokens,
        error_codes=errors,
    )


@dataclass(frozen=True)
class Summary:
    predictions: tuple[Prediction, ...]

    @property
    def kv_errors(self) -> list[float]:
        return [abs(p.kv_error) for p in self.predictions if p.kv_error is not None]

    @property
    def median_kv_error(self) -> float:
        return statistics.median(self.kv_errors) if self.kv_errors else 0.0

    @property
    def worst_kv_error(self) -> float:
        return max(self.kv_errors, default=0.0)

    @property
    def disagreements(self) -> list[Prediction]:
        return [p for p in self.predictions if not p.agrees]


def summarise(entries: Iterable[Mapping[str, Any]]) -> Summary:
    return Summary(tuple(predict(e) for e in entries))


def table(summary: Summary) -> str:
    """The error table ``make bench`` prints."""
    head = f"{'start-up':46} {'vLLM':>7} {'KV GiB logged':>13} {'engine':>8} {'error':>7} {'tokens err':>10}"
    lines = [head, "-" * len(head)]
    for p in summary.predictions:
        logged = f"{p.logged_kv_gib:.2f}" if p.logged_kv_gib is not None else "—"
        err = f"{p.kv_error:+.1%}" if p.kv_error is not None else ("ok" if p.agrees else "WRONG")
        tok = f"{p.token_error:+.1%}" if p.token_error is not None else ""
        lines.append(f"{p.id:46} {p.outcome:>7} {logged:>13} {p.predicted_kv_gib:8.2f} {err:>7} {tok:>10}")
    lines.append(
        f"median |KV error| {summary.median_kv_error:.1%}, worst {summary.worst_kv_error:.1%}, "
        f"refusals matched {sum(1 for p in summary.predictions if p.outcome != 'ok' and p.agrees)}"
        f"/{sum(1 for p in summary.predictions if p.outcome != 'ok')}"
    )
    return "\n".join(lines)


__all__ = ["Prediction", "Summary", "predict", "request_for", "summarise", "table", "vllm_default_limits"]
