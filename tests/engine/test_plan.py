"""plan(): the composed result for the seeds' deployments, and its JSON shape."""

import json
from dataclasses import replace

import pytest

from configurator import reference
from configurator.engine.plan import plan
from configurator.engine.serialize import plan_to_dict
from configurator.engine.types import ParallelSpec, Severity

# One A2 node (resolves to TP8 / DP1): not a seeded case, because K3 does not fit on it ([S1]).
A2_ONE_NODE = {"model": "kimi-k3", "server": "atlas-800-a2", "topology": {"kind": "single", "nodes": 1}}
REFERENCE_REQUESTS = [*reference.CASES.values(), A2_ONE_NODE]


def error_codes(result):
    return [c.code for c in result.checks if c.severity == Severity.ERROR]


@pytest.mark.parametrize("data", REFERENCE_REQUESTS)
def test_every_reference_request_plans_and_serialises(data):
    result = plan(reference.request(data))
    data = plan_to_dict(result)
    json.dumps(data, ensure_ascii=False, allow_nan=False)
    assert data["ok"] == result.ok
    assert len(data["checks"]) == len(result.checks)
    assert data["memory"]["per_rank"]["weights_bytes"] > 0


def test_k3_on_four_a3_is_ok_with_a_concurrency_warning():
    result = plan(reference.request(reference.CASES["a3-4-single"]))
    assert result.ok
    # The seeded case loads the kimi-k3-hf-mxfp4 checkpoint (catalog/seed/checkpoints.yaml, counted from
    # the HF config moonshotai/Kimi-K3), whose router / latent-MoE / MLA-a / KDA-f-a groups vLLM-Ascend
    # keeps whole on every rank in BF16: (590,872,576 + 4,726,980,608 + 363,331,584 + 63,307,776) × 2 B
    # = 11,488,985,088 B.  Per rank (TP16, EP64):
    #   experts     1,446,456,066,048 ÷ 64                                    = 22,600,876,032
    #   language    ⌈(114,480,025,400 − 894,734,336 − 11,488,985,088) ÷ 16⌉  =  6,381,019,124
    #   replicated 11,488,985,088 + vision 894,734,336                         = 12,383,719,424
    #   total                                                                 = 41,365,614,580 B
    # (the fixture's model row, without the replication, gave 30.5 GB), and the catalog's DSpark draft the
    # defaults turn on (catalog/seed/drafts.yaml: 3.56 B BF16 parameters ÷ TP16 = 445,000,000 B).
    assert result.memory.groups[0].per_rank.weights_bytes == 41_365_614_580 + 3_560_000_000 * 2 // 16
    codes = [c.code for c in result.checks]
    assert "memory.max_num_seqs_not_full_length" in codes
    assert "layout.ok" in codes


def test_k3_on_one_a2_is_not_ok_because_the_weights_do_not_fit():
    # [S1]: one 8-card 910B server cannot hold K3.
    result = plan(reference.request(A2_ONE_NODE))
    assert not result.ok
    assert "memory.weights_do_not_fit" in error_codes(result)


def test_a_layout_error_skips_memory_but_still_sizes_facilities():
    req = reference.request(reference.CASES["a3-4-single"])
    req = replace(req, topology=replace(req.topology, parallel=ParallelSpec(tp=16, dp=2, dp_local=1)))
    result = plan(req)
    assert error_codes(result) == ["layout.world_size_mismatch"]
    assert result.memory is None and result.power is not None
    data = plan_to_dict(result)
    assert data["memory"] is None and data["ok"] is False
