"""A prefill pool batches waiting prompts into passes up to the token budget (serving_model).

vLLM's scheduler fills every step from the waiting queue up to ``max_num_batched_tokens``
(vllm/v1/core/sched/scheduler.py ``Scheduler.schedule``: ``token_budget``), so under load a
prefill engine of an xPyD pair runs several prompts a pass, paying the pass's fixed cost once.  The
expected figures below are worked out by hand from a made-up pass (fixed 0.3 s, compute 50 ms, weight
read 20 ms, collectives 10 ms per 1,024-token prompt, budget 8,192).
"""

from __future__ import annotations

import pytest

from configurator import reference
from configurator.engine import serving_model as sm
from configurator.engine.plan import plan

PASS = sm.PrefillBreakdown(
    compute_s=0.05,
    memory_s=0.02,
    comm_s=0.01,
    overhead_s=0.3,
    chunks=1,
    prefill_s=0.3 + max(0.05, 0.02) + 0.01,
    prompt_tokens=1024,
    chunk_tokens=8192,
)


def _pass_s(k: int) -> float:
    # one pass carrying k prompts: fixed once, compute and collectives per prompt, the read once
    return 0.3 + max(0.05 * k, 0.02) + 0.01 * k


@pytest.mark.parametrize(
    ("prompt", "budget", "expected"), [(1024, 8192, 8), (2048, 8192, 4), (8192, 8192, 1), (9000, 8192, 1)]
)
def test_prompts_per_pass_is_what_the_budget_holds(prompt, budget, expected):
    pre = sm.PrefillBreakdown(0.1, 0.0, 0.0, 0.1, 1, 0.2, prompt, budget)
    assert sm.prompts_per_pass(pre) == expected


def test_pool_capacity_is_full_passes():
    # 2 ranks × 8 prompts ÷ (0.3 + 0.4 + 0.08 = 0.78 s)
    assert sm.prefill_pool_capacity(PASS, 2) == pytest.approx(2 * 8 / _pass_s(8))
    assert sm.prefill_pool_capacity(PASS, 2) == pytest.approx(20.5128, rel=1e-4)
    # one prompt alone would carry 2 ÷ 0.36 = 5.56 prompts/s: batching is 3.7 × that
    assert sm.prefill_pool_capacity(PASS, 2) > 3.5 * 2 / PASS.prefill_s


def test_light_load_is_one_prompt_a_pass():
    # 0.01 prompts/s over 2 ranks: the M/D/c wait is negligible, the prompt rides a pass alone
    assert sm.prefill_pool_latency(PASS, 2, 0.01) == pytest.approx(0.36, rel=1e-3)


def test_beyond_one_prompt_a_pass_the_pool_batches():
    # 10 prompts/s over 2 ranks: 5 a rank.  One a pass would need 5 × 0.36 = 1.8 ranks' time: the
    # M/D/c queue diverges.  k = 2: 5 × 0.42 = 2.1 > 2 arrive during a pass; k = 3: 5 × 0.48 = 2.4 ≤ 3.
    # Busy share 2.4 ÷ 3 = 0.8; half the pass in flight, then its own: 0.8 × 0.48 ÷ 2 + 0.48 = 0.672 s.
    assert sm.mdc_wait(2, PASS.prefill_s, 10.0) == float("inf")
    assert sm.prefill_pool_latency(PASS, 2, 10.0) == pytest.approx(0.672)


def test_beyond_full_passes_the_pool_saturates():
    # 2 ranks carry 20.5 prompts/s at most
    assert sm.prefill_pool_latency(PASS, 2, 21.0) == float("inf")


def test_8p8d_prefill_pool_capacity_on_short_prompts():
    """16 × A3 8P8D (docs/domain.md §4 item 3) with 1,024-token prompts and the default 8,192-token
    budget: each prefill DP rank carries 8 prompts a pass; the pool's capacity is 8 DP × 8 ÷ T(8), T(8)
    from the plan's own prefill figures of one prompt (fixed once, compute and collectives × 8)."""
    case = reference.case("a3-16-8p8d")
    case["workload"] = {"input_tokens": 1024, "output_tokens": 1024, "concurrency": 64}
    result = plan(reference.request(case))
    figures = result.performance.figures
    cap = figures["performance.prefill.requests_per_s"]
    assert cap.inputs["prompts_per_pass"] == 8
    assert cap.inputs["DP"] == 8
    assert cap.value == pytest.approx(8 * 8 / cap.inputs["pass_s"], rel=1e-5)
    one = figures["performance.prefill.prefill_s"].value
    # a full pass costs less than 8 prompts one a pass, and more than one prompt
    assert one < cap.inputs["pass_s"] < 8 * one
    assert result.performance.pd_balance.prefill_requests_per_s == pytest.approx(cap.value, rel=1e-5)
