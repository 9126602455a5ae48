"""The serving-configuration search (engine/serving_search.py), each rule checked against its source.

* DeepSeek-R1 on 2 × H200 at one user: EP16 across InfiniBand misses a 10 ms TPOT; the search proposes
  two independent TP8 engines, and the request re-planned with that one fix meets it;
* no MoE layout with DP > 1 and expert parallelism off is offered: vLLM flattens such a MoE layer's
  TP across every DP rank (``FusedMoEParallelConfig.make``, ``flatten_tp_across_dp``, vLLM
  ``model_executor/layers/fused_moe/config.py``), so it is no set of independent replicas;
* each configuration is priced as the plan prices its own design point, and the front keeps only
  configurations no other beats on both capacity and TPOT;
* the search is cached per (resolved request without its commercial terms, catalog version), and its
  answer for other terms is the search of those terms.
"""

from __future__ import annotations

import dataclasses
import time
from decimal import Decimal

import pytest

from configurator import reference
from configurator.engine import serving_search as ss
from configurator.engine.economics import cost_per_m_output_at
from configurator.engine.plan import plan
from configurator.engine.serving_advice import recommended_serving_check, search_configuration
from configurator.engine.speculative import with_draft as with_draft_of
from configurator.engine.types import SpeculativeSpec, TopologyKind
from configurator.io.fixes import apply_fix

R1_TWO_H200 = {
    "model": "deepseek-r1",
    "server": "hgx-h200-8gpu",
    "topology": {"kind": "single", "nodes": 2},
    "workload": {"concurrency": 1, "tpot_target_ms": 10},
}


def _recommended(req, result):
    (check,) = [c for c in recommended_serving_check(req, result)]
    assert check.code == "performance.serving_settings_recommended"
    return check


def test_deepseek_r1_on_two_h200_meets_10_ms_tpot_through_the_searched_layout():
    ss.clear_cache()
    req = reference.request(R1_TWO_H200)
    result = plan(req)
    # The auto layout: one DP2 / TP8 / EP16 group across the two nodes' InfiniBand.
    assert req.topology.parallel.ep == 16
    before = result.performance.design_point
    assert before.best_tpot_s * 1000 > 10  # the acceptance target: TPOT <= 10 ms at one user
    assert before.best_effort
    check = _recommended(req, result)
    fix = check.fix
    # Two independent engines of one node each: TP8 = the H200 node's 8 GPUs, no DP across nodes.
    assert fix["topology.kind"] == "tenant_pair"
    assert fix["topology.parallel.tp"] * fix["topology.parallel.dp"] == 8
    fixed = reference.request(apply_fix(R1_TWO_H200, fix, req))
    assert fixed.topology.kind == TopologyKind.TENANT_PAIR and fixed.topology.nodes == 2
    after = plan(fixed).performance.design_point
    assert after.best_tpot_s * 1000 <= 10
    assert not after.best_effort and after.unmet_targets == ()
    assert after.tpot_s * 1000 <= 10 and after.concurrency >= 1
    # The front says what the chosen configuration is, first, and what it costs per million tokens.
    front = check.figures["front"]
    assert front[0]["chosen"] and front[0]["concurrency"] == after.concurrency


def test_no_moe_layout_runs_dp_without_expert_parallelism():
    req = reference.request({**R1_TWO_H200, "workload": {}})
    for nodes in (1, 2):
        for p in ss.layout_choices(req, nodes):
            assert p.world_size == nodes * 8
            assert p.expert_parallel or p.dp == 1, p
    # A dense model's DP ranks are independent replicas in vLLM: DP without EP is offered.
    dense = reference.request({"model": "llama-3-3-70b", "server": "hgx-h200-8gpu", "topology": {"nodes": 1}})
    assert any(p.dp > 1 and not p.expert_parallel for p in ss.layout_choices(dense, 1))


def test_configurations_are_priced_as_the_plan_prices_its_design_point_and_the_front_is_undominated():
    ss.clear_cache()
    req = reference.request(reference.case("a3-16-8p8d"))
    result = plan(req)
    dp = result.performance.design_point
    # The same arithmetic as the plan's own economics.design.cost_per_m_output.
    assert (
        cost_per_m_output_at(req, result.tco, dp.output_tokens_per_s)
        == result.economics.design.cost_per_m_output
    )
    outcome = search_configuration(req, result)
    assert outcome.chosen is not None and outcome.chosen.meets
    # Lowest cost per million output tokens = the most output tokens/s on the same hardware.
    assert outcome.chosen.design.output_tokens_per_s >= dp.output_tokens_per_s
    points = outcome.front
    assert points[0].chosen and all(not p.chosen for p in points[1:])
    costs = [p.cost_per_m_output for p in points]
    assert costs[0] == min(costs)
    for a in points[1:]:
        for b in points[1:]:
            if a is not b:
                assert not (
                    b.concurrency >= a.concurrency
                    and b.tpot_ms <= a.tpot_ms
                    and (b.concurrency, b.tpot_ms) != (a.concurrency, a.tpot_ms)
                )
    # Each runner-up's cost per million output tokens is its own throughput priced as the plan does.
    chosen = outcome.chosen.design.output_tokens_per_s
    assert costs[0] == cost_per_m_output_at(req, result.tco, chosen)


def test_the_search_is_cached_per_request_and_catalog_version():
    ss.clear_cache()
    req = reference.request(reference.case("a3-16-8p8d"))
    result = plan(req)
    first = ss.search_serving(req, result, search_configuration)
    started = time.perf_counter()
    again = ss.search_serving(req, result, search_configuration)
    assert again is first and time.perf_counter() - started < 0.1
    other_version = ss.search_serving(req, result, search_configuration, catalog_version="v2")
    assert other_version is not first
    assert other_version.chosen.request == first.chosen.request
    other = dataclasses.replace(req, serving=dataclasses.replace(req.serving, max_num_batched_tokens=12_288))
    assert ss.canonical_key(other) != ss.canonical_key(req)


def _other_terms(req):
    """``req`` with other commercial terms: utilisation, server price, O&M and horizon all changed."""
    c = req.commercial
    return dataclasses.replace(
        req,
        commercial=dataclasses.replace(
            c,
            utilisation=Decimal("0.35"),
            server_unit_price=c.server_unit_price * 2 + 1,
            om_percent_of_capex=Decimal("0.11"),
            horizon_years=5,
        ),
    )


def _designs(outcome):
    return (
        outcome.chosen
        and (outcome.chosen.request.serving, outcome.chosen.request.topology, outcome.chosen.design),
        outcome.current and outcome.current.design,
        [(c.request.serving, c.request.topology, c.design, c.meets) for c in outcome.candidates],
        outcome.evaluated,
    )


@pytest.mark.parametrize("name", ["a3-16-8p8d", "a3-4-single", "hgx-h200-2-single"])
def test_a_search_cached_for_other_terms_is_the_search_of_these_terms(name):
    """The cache leaves the commercial terms out of its key (search_serving): the search must then not
    depend on them, and the answer it gives another request's terms must be what searching those terms
    gives — the same configurations and designs, each candidate carrying the caller's terms, the front
    priced for them."""
    base = reference.request(reference.case(name))
    other = _other_terms(base)
    base_result, other_result = plan(base), plan(other)
    fresh = search_configuration(other, other_result)
    # the designs searched do not read the terms
    assert _designs(fresh) == _designs(search_configuration(base, base_result))
    assert fresh.candidates
    ss.clear_cache()
    first = ss.search_serving(base, base_result, search_configuration)
    cached = ss.search_serving(other, other_result, search_configuration)
    assert cached is not first
    assert (
        cached.chosen.request == fresh.chosen.request and cached.chosen.request.commercial == other.commercial
    )
    assert all(c.request.commercial == other.commercial for c in cached.candidates)
    assert cached.current == fresh.current and cached.front == fresh.front
    # the front's cost per million tokens is that of the other terms (not the first request's)
    assert [p.cost_per_m_output for p in cached.front] != [p.cost_per_m_output for p in first.front]
    ss.clear_cache()


def test_speculative_decoding_is_searched_only_with_a_draft():
    # the catalog's K3 draft runs on A3 only (catalog/seed/drafts.yaml): none is invented for H200
    hopper = with_draft_of(reference.request(reference.case("hgx-h200-2-single")))
    assert not hopper.serving.speculative.on and list(ss.speculative_choices(hopper)) == []
    # on A3 the catalog draft's token count is the serving setting a candidate changes (the draft stays on,
    # launched as --speculative-config), each candidate charged as plan() charges it (with_draft)
    a3 = with_draft_of(reference.request(reference.case("a3-4-single")))
    assert a3.serving.speculative.on and a3.performance.speculative_tokens == 7
    cands = list(ss.speculative_choices(a3))
    assert sorted(c.serving.speculative.num_speculative_tokens for c in cands) == [3, 5]
    assert all(
        c.performance.speculative_tokens == c.serving.speculative.num_speculative_tokens for c in cands
    )
    assert all(c.serving.speculative.draft == a3.serving.speculative.draft for c in cands)
    # a request stating the step model's own draft (speculative decoding off in serving) keeps that form
    off = dataclasses.replace(a3, serving=dataclasses.replace(a3.serving, speculative=SpeculativeSpec()))
    stated = dataclasses.replace(
        off, performance=dataclasses.replace(off.performance, speculative_tokens=3, draft_model_gb=7.12)
    )
    tried = sorted(r.performance.speculative_tokens for r in ss.speculative_choices(stated))
    assert tried == [0, 1, 2, 5, 7]


def test_a_configuration_that_carries_the_stated_load_wins_over_cheaper_tokens_that_queue_it():
    """Two configurations within the targets: one with more output tokens/s whose design point holds fewer
    users than the customer states, one carrying the stated load.  The recommendation is the second: a
    configuration that queues the customer's own load is no recommendation, however cheap its tokens."""
    req = reference.request(reference.case("a3-4-single"))
    own = plan(req).performance.design_point
    load = req.workload.concurrency  # 16
    fast_but_short = dataclasses.replace(own, concurrency=load - 4, output_tokens_per_s=2000.0)
    carrying = dataclasses.replace(own, concurrency=load + 4, output_tokens_per_s=1500.0)
    batch = req.serving.max_num_batched_tokens

    def design_of(cand):
        return carrying if cand.serving.max_num_batched_tokens != batch else fast_but_short

    chosen, mine, _everyone, _tried = ss.run_search(req, design_of, lambda r: [r], (batch, 2 * batch))
    assert mine.design is fast_but_short and not mine.carries and mine.meets
    assert chosen.design is carrying and chosen.carries
    assert chosen.request.serving.max_num_batched_tokens == 2 * batch
