"""The auto-planner's search against the seeded catalog (domain.md §4, §9, §10)."""

from decimal import Decimal

import pytest

from configurator import planner, services
from configurator.engine.memory import weights_breakdown
from configurator.engine.types import (
    ParallelSpec,
    PlanRequest,
    ServingSpec,
    Severity,
    TopologyKind,
    TopologySpec,
)

from .helpers import assert_meets_every_constraint, search

pytestmark = pytest.mark.django_db

MULTIMODAL_DOMESTIC = {"scenario": "multimodal-knowledge-base", "constraints": {"domestic_only": True}}


@pytest.mark.parametrize(
    "data",
    [
        MULTIMODAL_DOMESTIC,
        {
            "scenario": "multimodal-knowledge-base",
            "constraints": {"domestic_only": True, "air_cooled_only": True},
        },
        {"scenario": "government-policy-qa"},
        {
            "scenario": "government-policy-qa",
            "constraints": {"max_capex": "40000000", "max_power_kw": 200, "max_racks": 8},
        },
        {"scenario": "government-policy-qa", "workload": {"ttft_target_s": 6, "tpot_target_ms": 30}},
        {"scenario": "finance-research"},
        {"scenario": "software-engineering-agent", "options": {"max_nodes": 16}},
        {"model": "kimi-k3", "constraints": {"purchase": "lease", "max_lease_per_month": "900000"}},
        {"model": "kimi-k3", "workload": {"requests_per_s": 1.5, "tpot_target_ms": 40}},
        {"model": "deepseek-v3", "workload": {"concurrency": 48, "context": 65536}},
        {"model": "llama-3-3-70b", "workload": {"context": 32768, "concurrency": 32}},
    ],
    ids=[
        "multimodal-domestic",
        "multimodal-domestic-air",
        "gov-text",
        "gov-budget-power-racks",
        "gov-latency-targets",
        "finance-ha",
        "coding-agents",
        "lease-ceiling",
        "request-rate",
        "deepseek",
        "dense-llama",
    ],
)
def test_every_candidate_meets_every_constraint_when_replanned(seeded, data):
    result = search(data)
    checked = assert_meets_every_constraint(result)
    assert checked == len(result.candidates)
    # Feasible or not, every family is accounted for.
    assert len(result.family_reasons) == len(result.query.servers)


def test_multimodal_knowledge_base_on_domestic_hardware_is_atlas_a3_and_a2_is_ruled_out_as_text_only(seeded):
    result = search(MULTIMODAL_DOMESTIC)
    assert result.candidates, "the 4 × A3 validated minimum serves images"
    assert {c.server.slug for c in result.candidates} == {"atlas-800-a3"}
    best = result.candidates[0]
    # domain.md §4 item 1: 4 × A3 as DP4 / TP16 / EP64 is the validated minimum and the cheapest.
    assert (best.shape.kind, best.shape.nodes) == (TopologyKind.SINGLE, 4)
    assert planner.parallel_label(best.parallel) == "DP4 / TP16 / EP64"
    assert best.request_json["serving"]["language_model_only"] is False

    by_server = {r.server: r for r in result.rejected}
    a2 = by_server["atlas-800-a2"]
    assert a2.code == "planner.text_only_server"
    assert a2.field == "workload.needs_vision"
    assert a2.message_en.startswith("Atlas 800 A2")
    assert "serves text only" in a2.message_en and "--language-model-only" in a2.message_en
    assert "视觉编码器" in a2.message_zh
    for slug in ("nf5868g8", "hgx-h200-8gpu", "dgx-b300"):
        assert by_server[slug].code == "planner.not_domestic"


def test_text_only_scenario_rules_out_8_a2_and_serves_text_only_on_more_a2(seeded):
    # The public tutorial's 8 × A2 (DP8/TP8/EP64) counted the router, latent MoE, MLA a- and KDA
    # f_a-projections as split by TP; vLLM-Ascend replicates them (vllm_ascend/models/kimi_k3.py,
    # releases/v0.26.0rc), ≈11.5 GB more per rank, so one 133,120-token sequence no longer fits
    # (issue 14).  The engine says so, and the planner's A2 plans start where one does fit.
    result = search({"scenario": "government-policy-qa"})
    request = {
        "model": "kimi-k3",
        "server": "atlas-800-a2",
        "topology": {"kind": "single", "nodes": 8, "parallel": {"tp": 8, "dp": 8, "expert_parallel": True}},
        "serving": {
            "max_model_len": result.query.workload.context,
            "language_model_only": True,
            "comm_buffer_mb": 800,
        },
    }
    _req, res = services.plan_from_json(request)
    rank = res.memory.groups[0].per_rank
    assert rank.replicated_weights_bytes > 11e9
    assert "memory.one_sequence_does_not_fit" in [c.code for c in res.checks if c.severity == Severity.ERROR]
    assert not [
        e for e in result.evaluated if e.server == "atlas-800-a2" and e.shape.nodes == 8 and e.feasible
    ]

    a2 = [c for c in result.candidates if c.server.slug == "atlas-800-a2"]
    assert a2, "more A2 nodes still serve the text-only scenario"
    cand = min(a2, key=lambda c: c.shape.nodes)
    assert cand.shape.nodes > 8
    # Served as validated: language model only.
    assert cand.request_json["serving"]["language_model_only"] is True
    assert cand.serving.language_model_only
    # Ranked on its merits: its place follows from its cost per million tokens.
    ranked = list(result.candidates)
    assert ranked.index(cand) + 1 == cand.rank
    cheaper = [c for c in ranked if c.cost_per_m < cand.cost_per_m]
    assert all(c.rank < cand.rank for c in cheaper)
    assert cand.cost_per_m > 0 and cand.output_tokens_per_s > 0


def test_a_single_a2_server_is_short_of_memory_by_the_engine_figure(seeded):
    result = search({"scenario": "government-policy-qa"})
    reasons = {r.code: r for r in result.family_reasons["atlas-800-a2"]}
    short = reasons["planner.memory_short"]
    assert short.nodes == 1
    catalog = services.DjangoCatalog()
    model, server = catalog.model("kimi-k3"), catalog.server("atlas-800-a2")
    checkpoint = catalog.default_checkpoint("kimi-k3", "ascend")
    serving = ServingSpec(gpu_memory_utilization=0.9, language_model_only=True)
    p = ParallelSpec(tp=8, dp=1, dp_local=1)
    request = PlanRequest(
        model=model,
        server=server,
        topology=TopologySpec(TopologyKind.SINGLE, 1, p),
        serving=serving,
        checkpoint=checkpoint,
    )
    non_expert, expert, _replicated = weights_breakdown(request, p)
    # vLLM multiplies the memory the runtime reports (61.27 GiB per 64 GB NPU) by the utilisation.
    assert server.accelerator.runtime_memory_bytes == int(61.27 * 2**30)
    usable = int(server.accelerator.runtime_memory_bytes * 0.9)
    expected = non_expert + expert - usable
    assert short.figures["shortfall_bytes"] == expected
    assert f"memory short by {expected / 1e9:,.1f} GB per rank" in short.message_en
    assert short.message_en.startswith("Atlas 800 A2 × 1:")


@pytest.mark.parametrize(
    "constraints, field, code",
    [
        ({"max_capex": 1}, "constraints.max_capex", "planner.over_budget"),
        ({"max_racks": 0}, "constraints.max_racks", "planner.over_racks"),
        ({"max_power_kw": 1}, "constraints.max_power_kw", "planner.over_power"),
        (
            {"purchase": "lease", "max_lease_per_month": 1},
            "constraints.max_lease_per_month",
            "planner.over_lease",
        ),
    ],
)
def test_impossible_constraints_give_no_candidates_and_name_the_binding_constraint(
    seeded, constraints, field, code
):
    result = search({"scenario": "government-policy-qa", "constraints": constraints})
    assert result.candidates == ()
    assert result.binding is not None
    assert result.binding.field == field
    assert result.binding.code == code
    assert any(r.code == code for r in result.rejected)
    assert result.binding.message_en and result.binding.message_zh


def test_budget_one_yuan_names_the_cheapest_need(seeded):
    result = search({"scenario": "government-policy-qa", "constraints": {"max_capex": 1}})
    needs = [Decimal(r.figures["needed"]) for r in result.rejected if r.code == "planner.over_budget"]
    assert needs
    assert "¥1.00" in result.binding.message_en
    assert result.binding.figures["needed"] == str(min(needs))


def test_ranking_by_cost_per_million_tokens_and_by_tco(seeded):
    by_cost = search({"model": "kimi-k3"})
    costs = [c.cost_per_m for c in by_cost.candidates]
    assert costs == sorted(costs)
    assert [c.rank for c in by_cost.candidates] == list(range(1, len(costs) + 1))
    by_tco = search({"model": "kimi-k3", "options": {"sort": "tco"}})
    totals = [c.tco_total for c in by_tco.candidates]
    assert totals == sorted(totals)
    assert {c.id for c in by_tco.candidates} == {c.id for c in by_cost.candidates}


def test_pareto_front_is_exactly_the_non_dominated_candidates(seeded):
    result = search({"scenario": "government-policy-qa"})
    cands = result.candidates

    def dominates(b, a):
        no_worse = (
            b.cost_per_m <= a.cost_per_m
            and b.output_tokens_per_s >= a.output_tokens_per_s
            and b.e2e_s <= a.e2e_s
        )
        better = (
            b.cost_per_m < a.cost_per_m or b.output_tokens_per_s > a.output_tokens_per_s or b.e2e_s < a.e2e_s
        )
        return no_worse and better

    front = {c.id for c in cands if not any(dominates(b, c) for b in cands if b is not c)}
    assert front == {c.id for c in result.pareto}
    assert all(c.pareto == (c.id in front) for c in cands)
    assert cands[0].pareto, "the cheapest is always on the front"


def test_high_availability_scenario_only_offers_primary_standby_pairs(seeded):
    result = search({"scenario": "finance-research", "constraints": {"domestic_only": True}})
    assert result.query.workload.availability_target >= 0.999
    assert result.candidates
    assert {c.shape.kind for c in result.candidates} == {TopologyKind.PRIMARY_STANDBY}
    best = result.candidates[0]
    # domain.md §10: financial research → 8 × A3 as two 4-node clusters, primary/standby.
    assert (best.server.slug, best.shape.nodes, best.shape.group_nodes) == ("atlas-800-a3", 8, (4, 4))


def test_air_cooling_only_caps_the_racks_at_the_site_limit(seeded):
    result = search(
        {
            "scenario": "multimodal-knowledge-base",
            "constraints": {"domestic_only": True, "air_cooled_only": True},
        }
    )
    best = result.candidates[0]
    site_limit = result.query.site.air_cooling_kw_limit
    assert best.rack.cooling == "air" and best.rack.max_kw == site_limit
    # One 16.2 kW A3 per 25 kW air-cooled rack (two would be 32.4 kW, domain.md §7).
    assert best.racks >= best.shape.nodes
    assert isinstance(best.request_json["rack"], dict)
    assert best.request_json["rack"]["max_kw"] == site_limit


def test_lease_rules_out_servers_without_a_monthly_price(seeded):
    result = search({"model": "kimi-k3", "constraints": {"purchase": "lease"}})
    by_server = {r.server: r for r in result.rejected}
    assert by_server["dgx-b300"].code == "planner.no_lease_price"
    assert "cny-2026" in by_server["dgx-b300"].message_en
    assert all(c.server.slug not in by_server for c in result.candidates)


def test_fabric_failure_names_the_engine_check(seeded):
    from catalog.models import SwitchModel

    # The shipped catalog has an InfiniBand switch (QM9700), so H200 plans across nodes (tests/launch);
    # without it the engine's fabric check is what rejects every H200 candidate.
    SwitchModel.objects.filter(fabric="infiniband").delete()
    result = search({"model": "kimi-k3", "options": {"servers": ["hgx-h200-8gpu"]}})
    assert result.candidates == ()
    (reason,) = result.rejected
    # One H200 server (8 × 141 GB) cannot hold K3; two need a switched cross-node fabric the catalog now lacks.
    assert reason.code == "planner.engine.network.cross_node_fabric_insufficient"
    assert reason.message_en.startswith("HGX/DGX H200 × 2")


def test_every_result_candidate_carries_a_request_the_configurator_accepts(seeded):
    result = search(MULTIMODAL_DOMESTIC)
    for c in result.candidates:
        data = c.request_json
        assert data["server"] == c.server.slug and data["model"] == "kimi-k3"
        assert data["scenario"] == "multimodal-knowledge-base"
        assert data["topology"]["nodes"] == c.shape.nodes
        services.resolve_request(data)  # raises on anything the configurator would refuse


def test_search_statistics_show_pruning(seeded):
    result = search({"model": "kimi-k3"})
    stats = result.stats
    assert stats["plans"] < stats["cheap_evaluations"] + stats["plans"]
    assert stats["plans"] <= planner.MAX_PLANS_PER_FAMILY * stats["families"]
    assert stats["feasible"] == len(result.candidates)


@pytest.mark.parametrize("scenario", ["software-engineering-agent", "government-policy-qa"])
def test_no_candidate_puts_an_fp8_kv_cache_on_ascend(seeded, scenario):
    # vllm-ascend issue #8102: FP8 KV cache is not supported on Atlas A2/A3 (engine/defaults.py).
    result = search({"scenario": scenario, "options": {"max_nodes": 16}})
    ascend = [c for c in result.candidates if c.server.accelerator.software_stack == "ascend"]
    assert ascend, "the domestic scenario should still find Ascend plans"
    for c in ascend:
        assert c.request_json["serving"]["kv_cache_dtype"] in ("auto", "bfloat16", "bf16"), c.server.slug
