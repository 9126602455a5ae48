"""The seeded Kimi K3 on 2 × HGX H200 opens without an error: its serving defaults carry its load.

The K3 Hopper recipe publishes --max-num-seqs 5 (configurator/engine/recipes.py, the recipe's
ServingDefaults); 16 concurrent requests over DP 2 are 8 per DP rank, so a default of 5 queued 6 of
them (performance.concurrency_above_capacity: 10 served of 16).  A request that states no max_num_seqs
now has it sized to what the KV cache holds (engine/memory.py size_admission); a value it states is kept.
"""

from __future__ import annotations

import math

from configurator import reference
from configurator.engine.plan import plan

CASE = reference.case("hgx-h200-2-single")


def test_the_default_max_num_seqs_carries_the_stated_load():
    req = reference.request(CASE)
    per_rank = math.ceil(req.workload.concurrency / req.topology.parallel.dp)
    assert (req.workload.concurrency, req.topology.parallel.dp, per_rank) == (16, 2, 8)
    assert req.serving.max_num_seqs == 0  # left to the plan
    result = plan(req)
    assert result.ok, [c.code for c in result.checks if c.severity.value == "error"]
    assert result.request.serving.max_num_seqs >= per_rank
    assert result.performance.capacity_concurrency >= req.workload.concurrency
    assert result.performance.queue_wait_s == 0


def test_a_stated_max_num_seqs_is_kept_and_judged():
    req = reference.request({**CASE, "serving": {"max_num_seqs": 5}})
    assert req.serving.max_num_seqs == 5
    codes = {c.code for c in plan(req).checks if c.severity.value == "error"}
    assert "performance.concurrency_above_capacity" in codes


def test_a_recipe_batch_is_not_the_default_setting():
    """4 × A3: the tutorial's 16 is one example batch; the plan runs what the KV cache holds."""
    req = reference.request(reference.case("a3-4-single"))
    assert req.serving.max_num_seqs == 0
    assert plan(req).request.serving.max_num_seqs > 16
