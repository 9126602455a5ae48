"""``max_num_seqs`` a request leaves to the defaults: sized to what the KV cache holds at the workload's
lengths, the design point searched within it, and the bundle launching the design point's sequences.

vLLM's ``--max-num-seqs`` caps the running batch (``vllm/v1/core/sched/scheduler.py``:
``max_num_running_reqs``); the expected figures below are computed here from the first memory sizing's
per-rank KV bytes (the memory model is tests/engine/test_memory.py's) with vLLM's block arithmetic
(``vllm/v1/core/kv_cache_utils.py``: a request takes ``ceil(tokens ÷ block_size)`` blocks)."""

from __future__ import annotations

import dataclasses
import math

from configurator import reference
from configurator.engine.layout import resolve_layout
from configurator.engine.memory import size_memory
from configurator.engine.plan import plan
from configurator.engine.speculative import with_draft


def _kv_fit(req, max_num_seqs: int = 16) -> int:
    """Sequences of input + output tokens one DP rank's KV cache holds at ``max_num_seqs`` (the first sizing)."""
    req = with_draft(req)
    probe = dataclasses.replace(req, serving=dataclasses.replace(req.serving, max_num_seqs=max_num_seqs))
    rank = size_memory(probe, resolve_layout(probe)).groups[0].per_rank
    block = 128 if req.server.accelerator.software_stack == "ascend" else 16
    tokens = req.workload.input_tokens + req.workload.output_tokens
    per_seq = math.ceil(tokens / block) * block * rank.kv_bytes_per_token + rank.state_bytes_per_seq
    return rank.kv_cache_bytes // per_seq


def test_k3_on_four_a3_admits_what_the_kv_cache_holds_and_launches_the_design_point():
    req = reference.request(reference.CASES["a3-4-single"])
    assert req.serving.max_num_seqs == 0  # left to the plan
    result = plan(req)
    fit = _kv_fit(req)
    # DSpark with 7 speculative tokens: 8,192 ÷ 8 = 1,024 sequences a step could decode, far above the KV's
    assert 20 < fit < 1024
    assert result.request.serving.max_num_seqs == fit
    design = result.performance.design_point
    # the design point is searched within the setting; here the KV cache, not a target, stops it
    assert design.max_num_seqs_per_dp_rank <= fit and design.concurrency <= 4 * fit
    assert design.limited_by == "kv" and design.concurrency == 4 * fit
    flags = result.launch.nodes[0].argv[0]
    assert flags[flags.index("--max-num-seqs") + 1] == str(design.max_num_seqs_per_dp_rank)


def test_a_stated_setting_bounds_the_capacity_the_plan_sells():
    """ "If the engineer keeps other settings, the headline is computed for them": max_num_seqs 16 on
    4 × A3 runs 4 DP ranks × 16 = 64 at once, and the design point stops there."""
    req = reference.request({**reference.CASES["a3-4-single"], "serving": {"max_num_seqs": 16}})
    result = plan(req)
    design = result.performance.design_point
    assert result.request.serving.max_num_seqs == 16
    assert design.concurrency == 64 and design.max_num_seqs_per_dp_rank == 16
    assert result.performance.capacity_concurrency == 64
    flags = result.launch.nodes[0].argv[0]
    assert flags[flags.index("--max-num-seqs") + 1] == "16"


def test_the_recommended_settings_raise_a_binding_stated_setting_and_hold_once_applied():
    """The stated 16 binds below the 27 the KV cache holds: the recommended serving settings raise it to
    the design point's sequences, and the plan with that setting stated recommends nothing more on it."""
    from configurator.engine.serving_advice import recommended_serving_check

    case = {**reference.CASES["a3-4-single"], "serving": {"max_num_seqs": 16}}
    req = reference.request(case)
    (check,) = recommended_serving_check(req, plan(req))
    raised = check.fix["serving.max_num_seqs"]
    assert raised == _kv_fit(reference.request(reference.CASES["a3-4-single"]))
    applied = reference.request({**case, "serving": {"max_num_seqs": raised}})
    after = plan(applied)
    assert after.performance.design_point.concurrency == 4 * raised
    assert "serving.max_num_seqs" not in {
        k for c in recommended_serving_check(applied, after) for k in (c.fix or {})
    }


def test_cuda_sizes_the_setting_to_its_kv_cache_and_a_target_stops_the_design_point_below_it():
    """DeepSeek-R1-class K3 on 2 × H200: the KV cache holds far more than the Hopper recipe's example batch
    of 5; the TPOT target stops the design point below that, and the engines admit the design point's."""
    req = reference.request(reference.CASES["hgx-h200-2-single"])
    result = plan(req)
    fit = _kv_fit(req)
    assert result.request.serving.max_num_seqs == fit > 5
    design = result.performance.design_point
    assert design.limited_by == "tpot" and design.max_num_seqs_per_dp_rank < fit
    flags = result.launch.nodes[0].argv[0]
    assert flags[flags.index("--max-num-seqs") + 1] == str(design.max_num_seqs_per_dp_rank)
