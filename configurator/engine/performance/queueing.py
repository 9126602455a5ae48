"""The closed-loop operating point (aggregated and xPyD), the sustained concurrency and the load curve."""

from __future__ import annotations

import math
from collections.abc import Callable

from .. import serving_model as sm
from ..types import CurvePoint
from .group_model import GroupModel

# Concurrency points of the throughput-vs-latency curve.
CURVE_POINTS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192)
MAX_CURVE_POINTS = 12


def in_flight_step(batch: float, step_s: float) -> float:
    """Mean wait for the decode step in flight when a prompt arrives at a rank running ``batch``
    sequences, its own included: half a step while others keep the rank stepping (batch ≥ 2), none
    for a lone user (the rank is idle between its requests), in between for a fractional share."""
    return 0.5 * step_s * min(1.0, max(0.0, batch - 1.0))


def aggregated_point(
    groups: list[GroupModel], concurrency: float, output_tokens: int, *, closed_batch: bool = False
) -> sm.OperatingPoint:
    """Closed-loop operating point of aggregated groups sharing the concurrency evenly by DP rank.

    One queueing model for throughput and latency alike (the interactive response-time law with
    zero think time, as ``vllm bench serve --max-concurrency`` drives a server): a DP rank runs
    B = min(C ÷ DP, slots) sequences and serves B requests per cycle of B prefills (chunked prefill
    interleaves them with decode) + output ÷ tokens-per-step decode steps; a user's response time is
    the request overhead + that cycle, and users beyond the slots wait W = C ÷ X − R.  TTFT is the
    overhead, the user's own prefill, half a decode step when other users keep the rank stepping
    (the step in flight when the prompt arrives: none for a lone user, whose rank is idle between
    its requests) and W — the same W the throughput comes from; nothing is added outside the loop.

    ``closed_batch``: one wave of C requests sent at once and decoded together (no prompt arrives
    while they decode, so TPOT carries no prefill, and no step is in flight when they arrive); the
    wave's prompts share prefill passes up to the batched-token budget (``sm.wave_prefill``) and the
    k-th prompt's first token waits for the pass that ends it.
    """
    dp_total = sum(g.shape.dp for g in groups)
    if dp_total <= 0 or concurrency <= 0:
        return sm.OperatingPoint(concurrency, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, False)
    n = concurrency / dp_total
    lead = groups[0]
    slots = max(lead.slots, 0)
    if slots == 0:
        return sm.OperatingPoint(concurrency, 0.0, 0.0, 0.0, math.inf, math.inf, math.inf, True)
    batch = min(n, slots)
    st = lead.step(batch)
    pre = lead.prefill.prefill_s
    decode_time = output_tokens / st.tokens_per_step * st.step_s
    overhead = lead.factors.request_overhead_s
    if closed_batch:
        waves = math.ceil(n / batch) if batch > 0 else 1
        wave_s, first_token_s, _ = sm.wave_prefill(lead.prefill, round(batch))
        ttft = overhead + first_token_s
        span = overhead + wave_s + decode_time
        rps = batch * dp_total / span if span > 0 else 0.0
        wait = (waves - 1) * span / 2
        tpot = decode_time / output_tokens
        return sm.OperatingPoint(
            concurrency, batch, rps, rps * output_tokens, ttft + wait, tpot, wait, n > slots, first_token_s
        )
    cycle = decode_time + batch * pre  # seconds per `batch` requests on one rank (chunked prefill)
    # Closed loop: a user's response time is the rank's cycle plus the per-request overhead
    # (API server, tokenizer) during which the slot is free for others; the rank stays busy
    # only when more users than slots are waiting.
    x_rank = batch / (cycle + overhead) if n <= slots else batch / cycle
    if cycle <= 0:
        x_rank = 0.0
    tpot = (decode_time + max(batch - 1.0, 0.0) * pre) / output_tokens
    wait = max(0.0, n / x_rank - cycle - overhead) if x_rank > 0 and n > batch else 0.0
    ttft = overhead + pre + in_flight_step(batch, st.step_s) + wait
    rps = x_rank * dp_total
    return sm.OperatingPoint(concurrency, batch, rps, rps * output_tokens, ttft, tpot, wait, n > slots + 1e-9)


def disaggregated_point(
    prefill: list[GroupModel], decode: list[GroupModel], concurrency: float, output_tokens: int
) -> sm.OperatingPoint:
    """Closed loop over a prefill pool and a decode pool (users beyond the decode slots queue).

    The prefill pool is an M/D/c queue of one pass per prompt while prompts arrive one at a time, and
    batches the waiting prompts into passes up to the token budget under load
    (``sm.prefill_pool_latency``); its capacity is that of full passes (``sm.prefill_pool_capacity``).
    ``wait`` is what the prompt spends in the pool beyond one prompt's own prefill."""
    dp_p = sum(g.shape.dp for g in prefill)
    dp_d = sum(g.shape.dp for g in decode)
    if dp_p <= 0 or dp_d <= 0 or concurrency <= 0:
        return sm.OperatingPoint(concurrency, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, False)
    d = decode[0]
    pre = prefill[0].prefill.prefill_s
    slots = max(d.slots, 0)
    if slots == 0 or pre <= 0:
        return sm.OperatingPoint(concurrency, 0.0, 0.0, 0.0, math.inf, math.inf, math.inf, True)
    n = concurrency / dp_d
    batch = min(n, slots)
    st = d.step(batch)
    tpot = st.step_s / st.tokens_per_step
    decode_time = (output_tokens - 1) * tpot
    kv = d.kv_transfer_s
    # The pool batches waiting prompts into passes up to the token budget (sm.prefill_pool_latency).
    pool = prefill[0].prefill
    prefill_cap = sm.prefill_pool_capacity(pool, dp_p)
    decode_cap = dp_d * batch / (output_tokens * tpot) if tpot > 0 else math.inf
    cap = min(prefill_cap * 0.98, decode_cap)

    overhead = d.factors.request_overhead_s

    pool_latency = prefill[0].pool_latency(dp_p)
    step_s = st.step_s
    # The response time R(x) = overhead + pool_latency(x) + kv + step + decode_time, written out where it
    # is read (the same additions in the same order): the bisection asks for it some 14 times a point,
    # and at the capacity the pool's latency is worked out once for the test, the wait and R.

    # X · R(X) = C (Little's law) with X below capacity: bisection (R grows with X).
    lo, hi = 0.0, cap
    at_cap = pool_latency(hi)
    response_at_cap = overhead + at_cap + kv + step_s + decode_time
    if hi * response_at_cap <= concurrency:
        x = hi
        wait_extra = max(0.0, concurrency / x - response_at_cap) if x > 0 else math.inf
        wait = at_cap - pre + wait_extra
        saturated = True
    else:
        tolerance = cap * 1e-4  # 0.01 % of capacity: far below the model's error band
        while hi - lo > tolerance:
            mid = 0.5 * (lo + hi)
            if mid * (overhead + pool_latency(mid) + kv + step_s + decode_time) < concurrency:
                lo = mid
            else:
                hi = mid
        x = 0.5 * (lo + hi)
        wait = pool_latency(x) - pre
        saturated = n > slots + 1e-9 or x >= prefill_cap * 0.95
    ttft = overhead + pre + wait + kv + st.step_s
    return sm.OperatingPoint(concurrency, batch, x, x * output_tokens, ttft, tpot, wait, saturated)


def sustained_concurrency(point_fn: Callable[[float], sm.OperatingPoint], upper: int) -> int:
    """Largest concurrency not saturated (bisection; saturation only grows with concurrency)."""
    if upper <= 0:
        return 0
    if not point_fn(upper).saturated:
        return upper
    lo, hi = 0, upper
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if mid > 0 and not point_fn(mid).saturated:
            lo = mid
        else:
            hi = mid
    return lo


def load_curve(
    point_fn: Callable[[float], sm.OperatingPoint], concurrency: int, capacity: int, devices: int
) -> tuple[CurvePoint, ...]:
    top = max(2 * capacity, 2 * concurrency, 2)
    levels = sorted({c for c in CURVE_POINTS if c <= top} | ({concurrency} if concurrency > 0 else set()))
    if len(levels) > MAX_CURVE_POINTS:
        keep = {levels[0], levels[-1], concurrency}
        step = len(levels) / (MAX_CURVE_POINTS - len(keep))
        keep |= {levels[int(i * step)] for i in range(MAX_CURVE_POINTS - len(keep))}
        levels = sorted(c for c in keep if c > 0)
    out = []
    for c in levels:
        op = point_fn(c)
        if not (math.isfinite(op.ttft_s) and math.isfinite(op.tpot_s)):
            continue
        out.append(
            CurvePoint(
                concurrency=c,
                output_tokens_per_s=op.output_tokens_per_s,
                output_tokens_per_s_per_device=op.output_tokens_per_s / devices if devices else 0.0,
                ttft_s=op.ttft_s,
                ttft_p90_s=op.ttft_p90_s,
                tpot_s=op.tpot_s,
                tpot_p90_s=op.tpot_p90_s,
                saturated=op.saturated,
            )
        )
    return tuple(out)
