"""plan(): the composed result for the seeds' deployments, and its JSON shape."""

import json
from dataclasses import replace

import pytest

from configurator.engine import fixtures as fx
from configurator.engine.plan import plan
from configurator.engine.serialize import plan_to_dict
from configurator.engine.types import ParallelSpec, Severity

REFERENCE_REQUESTS = [
    fx.request_k3_a3_4node,
    fx.request_k3_a3_8p8d,
    lambda: fx.request_k3_a3_8node_pair("primary_standby"),
    lambda: fx.request_k3_a3_8node_pair("tenant_pair"),
    fx.request_k3_nf5868g8_2node,
    fx.request_k3_a2_1node,
    fx.request_k3_a2_8node_text_only,
]


def error_codes(result):
    return [c.code for c in result.checks if c.severity == Severity.ERROR]


@pytest.mark.parametrize("build", REFERENCE_REQUESTS)
def test_every_reference_request_plans_and_serialises(build):
    result = plan(build())
    data = plan_to_dict(result)
    json.dumps(data, ensure_ascii=False, allow_nan=False)
    assert data["ok"] == result.ok
    assert len(data["checks"]) == len(result.checks)
    assert data["memory"]["per_rank"]["weights_bytes"] > 0


def test_k3_on_four_a3_is_ok_with_a_concurrency_warning():
    result = plan(fx.request_k3_a3_4node())
    assert result.ok
    assert result.memory.groups[0].per_rank.weights_bytes < 31e9
    codes = [c.code for c in result.checks]
    assert "memory.max_num_seqs_not_full_length" in codes
    assert "layout.ok" in codes


def test_k3_on_one_a2_is_not_ok_because_the_weights_do_not_fit():
    # [S1]: one 8-card 910B server cannot hold K3.
    result = plan(fx.request_k3_a2_1node())
    assert not result.ok
    assert "memory.weights_do_not_fit" in error_codes(result)


def test_a_layout_error_skips_memory_but_still_sizes_facilities():
    req = fx.request_k3_a3_4node()
    req = replace(req, topology=replace(req.topology, parallel=ParallelSpec(tp=16, dp=2, dp_local=1)))
    result = plan(req)
    assert error_codes(result) == ["layout.world_size_mismatch"]
    assert result.memory is None and result.power is not None
    data = plan_to_dict(result)
    assert data["memory"] is None and data["ok"] is False
