"""The auto-planner's search against the seeded catalog (docs/domain.md §4, §9, §10)."""

from decimal import Decimal

import pytest

from configurator import planner
from configurator.engine.memory import weights_breakdown
from configurator.engine.types import (
    ParallelSpec,
    PlanRequest,
    ServingSpec,
    Severity,
    TopologyKind,
    TopologySpec,
)
from configurator.planning import plans
from configurator.port import catalog as catalog_port

from .helpers import NO_TARGETS, assert_meets_every_constraint, search

pytestmark = pytest.mark.django_db

MULTIMODAL_DOMESTIC = {
    "scenario": "multimodal-knowledge-base",
    "constraints": {"domestic_only": True},
    "workload": NO_TARGETS,
}


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
    # docs/domain.md §4 item 1: 4 × A3 as DP4 / TP16 / EP64 is the validated minimum and the cheapest.
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
    result = search({"scenario": "government-policy-qa", "workload": NO_TARGETS})
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
    _req, res = plans.plan_from_json(request)
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
    catalog = catalog_port.DjangoCatalog()
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


def _capacity(request_json, **serving):
    """The engine's concurrency capacity and error codes for a candidate's request, serving changed."""
    data = {**request_json, "serving": {**request_json["serving"], **serving}}
    _req, res = plans.plan_from_json(data)
    errors = {c.code for c in res.checks if c.severity == Severity.ERROR}
    return res.performance.capacity_concurrency, errors, res


def test_high_availability_scenario_only_offers_primary_standby_pairs(seeded):
    result = search(
        {"scenario": "finance-research", "constraints": {"domestic_only": True}, "workload": NO_TARGETS}
    )
    assert result.query.workload.availability_target >= 0.999
    assert result.candidates
    assert {c.shape.kind for c in result.candidates} == {TopologyKind.PRIMARY_STANDBY}
    best = result.candidates[0]
    # docs/domain.md §10 recommends 8 × A3 as two 4-node clusters for financial research (32 concurrent
    # requests of 32,768 + 2,048 tokens), a sizing made for the tutorial's engine without a draft. The
    # plan now runs the catalog's K3 DSpark draft by default, whose weights and KV take memory the target's
    # KV cache had. One 4-node DP4 / TP16 cluster at gpu_memory_utilization 0.9 keeps per rank (engine/
    # memory.py figures) 8,506,035,711 B of KV cache without the draft and 8,061,035,711 B with it (the
    # draft's 445,000,000 B of weights a rank); a token takes 27,648 B (K3 MLA, docs/domain.md §2), with
    # the draft 1,280 B more. One request is ceil(34,816 ÷ 128) × 128 tokens + 28,085,760 B of
    # linear-attention state:
    #   no draft: 34,816 × 27,648 + 28,085,760 = 990,678,528 B → 4 × floor(8,506,035,711 ÷ …) = 4 × 8 = 32
    #   draft:    34,816 × 28,928 + 28,085,760 = 1,035,243,008 B → 4 × floor(8,061,035,711 ÷ …) = 4 × 7 = 28
    # so with the draft the 4 + 4 pair holds 28 of the 32 and is refused (the engine's capacity error).
    pair = {"model": "kimi-k3", "server": "atlas-800-a3", "topology": {"kind": "primary_standby", "nodes": 8},
            "scenario": "finance-research", "serving": {"gpu_memory_utilization": 0.9}}  # fmt: skip
    capacity, errors, res = _capacity(pair)
    assert res.request.serving.speculative.on
    assert capacity == 28 and "performance.concurrency_above_capacity" in errors
    assert res.memory.groups[0].per_rank.kv_cache_bytes // 1_035_243_008 == 7
    capacity, errors, _ = _capacity(pair, speculative={"method": ""})
    assert capacity == 32 and not errors  # the recommendation holds for the engine without a draft
    assert 4 * (8_506_035_711 // 990_678_528) == 32
    # The planner grows the pair instead: 7 + 7 nodes at DP14 / TP8 (two DP ranks a node), at 0.85, keep
    # per rank 7,631,698,238 B of KV cache; a token takes 27,648 B + the draft's 2,560 B (its KV heads
    # over TP8) = 30,208 B and a request 34,816 × 30,208 + 56,171,520 B of state = 1,107,893,248 B, so
    # 14 × floor(7,631,698,238 ÷ 1,107,893,248) = 14 × 6 = 84 ≥ 32.
    assert best.server.slug == "atlas-800-a3"
    assert best.shape.group_nodes == (7, 7)
    assert (best.parallel.dp, best.parallel.tp) == (14, 8)
    assert best.serving.speculative.on and best.serving.gpu_memory_utilization == 0.85
    capacity, errors, res = _capacity(best.request_json)
    rank = res.memory.groups[0].per_rank
    assert rank.kv_bytes_per_token == 30_208 and rank.state_bytes_per_seq == 56_171_520
    assert rank.kv_cache_bytes // 1_107_893_248 == 6
    assert capacity == 84 and not errors


def test_capacity_shortfall_is_a_gap_that_grows_the_search(seeded):
    # software-engineering-agent: 256 concurrent requests of 24,576 + 1,536 tokens (catalog scenario).
    # Below 8 nodes every A3 layout serves fewer at once; the planner must read that as a gap
    # (concurrency ÷ capacity, the engine's performance.concurrency_above_capacity limit) that closes
    # as the cluster grows, not stop the family at its first node counts as it did.
    result = search(
        {
            "scenario": "software-engineering-agent",
            "options": {"max_nodes": 16, "servers": ["atlas-800-a3"]},
            "workload": NO_TARGETS,
        }
    )
    short = [e for e in result.evaluated if e.code == "planner.concurrency_above_capacity"]
    assert short and all(e.stage == planner.STAGE_SERVING and not e.feasible for e in short)
    for e in short:
        cap = e.figures["capacity"]
        assert cap < 256 and e.figures["gap"] == pytest.approx(256 / cap, abs=1e-4)
        assert f"{cap:,}" in e.message_en
    assert min(e.shape.nodes for e in short) == 4
    best = result.candidates[0]
    # With the catalog's K3 DSpark draft (on by default) a token takes 27,648 B (K3 MLA, docs/domain.md
    # §2) + the draft's 2,560 B (its KV heads over TP8) = 30,208 B, and one request 26,112 tokens ×
    # 30,208 B + 56,171,520 B of linear-attention state = 844,962,816 B. 8 × A3 at DP16 / TP8 (two DP
    # ranks per node) keeps per rank, at utilisation 0.9, 12,535,454,604 B of KV cache (engine/memory.py:
    # 13,425,454,604 B less the draft's 890,000,000 B of weights a TP8 rank), so
    # floor(12,535,454,604 ÷ 844,962,816) = 14 fit: 16 × 14 = 224 < 256, and the single 8-node cluster
    # is short. The planner grows to two 7-node tenant clusters at DP14 / TP8 each: 10,921,106,316 B a
    # rank at 0.9 → floor(÷ 844,962,816) = 12 a rank, 28 ranks × 12 = 336 ≥ 256 (128 a cluster).
    eight = {"model": "kimi-k3", "server": "atlas-800-a3", "scenario": "software-engineering-agent",
             "topology": {"kind": "single", "nodes": 8, "parallel": {"tp": 8, "dp": 16, "dp_local": 2}},
             "serving": {"gpu_memory_utilization": 0.9, "max_num_seqs": 16}}  # fmt: skip
    capacity, errors, res = _capacity(eight)
    rank = res.memory.groups[0].per_rank
    assert rank.kv_bytes_per_token == 30_208 and rank.state_bytes_per_seq == 56_171_520
    assert rank.kv_cache_bytes // 844_962_816 == 14
    assert capacity == 224 and "performance.concurrency_above_capacity" in errors
    assert best.shape.kind == TopologyKind.TENANT_PAIR and best.shape.group_nodes == (7, 7)
    assert (best.parallel.dp, best.parallel.tp) == (14, 8)
    assert best.serving.max_num_seqs == 16 and best.serving.gpu_memory_utilization == 0.9
    capacity, errors, res = _capacity(best.request_json)
    assert capacity == 336 and not errors
    assert all(g.per_rank.kv_cache_bytes // 844_962_816 == 12 for g in res.memory.groups)


def test_capacity_gap_limited_by_max_num_seqs_is_projected(seeded):
    # A capacity --max-num-seqs limits grows only with the DP ranks (256 per rank at most), so
    # nodes × gap bounds the nodes needed and a hopeless family stops early with the projection.
    result = search(
        {
            "model": "kimi-k3",
            "workload": {"concurrency": 1_000_000, "input_tokens": 16, "output_tokens": 16, "context": 4096},
            "options": {"max_nodes": 8, "servers": ["dgx-b300"]},
        }
    )
    # One B300 node at DP2 / TP4: 2 DP ranks × max_num_seqs 256 (the ladder's top; 4,096-token
    # sequences fit the KV cache far more often) = 512 at once; gap 1,000,000 ÷ 512 = 1,953.125,
    # projected ceil(1 × 1,953.125) = 1,954 nodes > 2 × 8 searched, so the first node count ends it.
    assert result.candidates == ()
    (reason,) = result.rejected
    assert reason.code == "planner.concurrency_above_capacity"
    assert reason.figures["capacity"] == 512 and reason.figures["kv_limited"] is False
    assert reason.figures["projected_nodes"] == 1954
    assert "1,954 nodes" in reason.message_en
    assert result.stats["shapes"] == 1


def test_air_cooling_only_caps_the_racks_at_the_site_limit(seeded):
    result = search(
        {
            "scenario": "multimodal-knowledge-base",
            "constraints": {"domestic_only": True, "air_cooled_only": True},
            "workload": NO_TARGETS,
        }
    )
    best = result.candidates[0]
    site_limit = result.query.site.air_cooling_kw_limit
    assert best.rack.cooling == "air" and best.rack.max_kw == site_limit
    # One 16.2 kW A3 per 25 kW air-cooled rack (two would be 32.4 kW, docs/domain.md §7).
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
        plans.resolve_request(data)  # raises on anything the configurator would refuse


def test_search_statistics_show_pruning(seeded):
    result = search({"model": "kimi-k3"})
    stats = result.stats
    assert stats["plans"] < stats["cheap_evaluations"] + stats["plans"]
    assert stats["plans"] <= planner.MAX_PLANS_PER_FAMILY * stats["families"]
    assert stats["feasible"] == len(result.candidates)


@pytest.mark.parametrize("scenario", ["software-engineering-agent", "government-policy-qa"])
def test_no_candidate_puts_an_fp8_kv_cache_on_ascend(seeded, scenario):
    # vllm-ascend issue #8102: FP8 KV cache is not supported on Atlas A2/A3 (engine/defaults.py).
    # 16 nodes suffice for Ascend in both scenarios, with a BF16 KV cache: e.g. the software agent's
    # 256 concurrent requests fit 8 × A3 at DP16 / TP8 and utilisation 0.9 (16 DP ranks ×
    # min(max_num_seqs 16, 17 requests of 26,112 tokens in 13.4 GB of KV per rank) = 256; the
    # arithmetic is in test_capacity_shortfall_is_a_gap_that_grows_the_search).
    result = search({"scenario": scenario, "options": {"max_nodes": 16}, "workload": NO_TARGETS})
    ascend = [c for c in result.candidates if c.server.accelerator.software_stack == "ascend"]
    assert ascend, "the domestic scenario should still find Ascend plans"
    assert {"atlas-800-a3"} <= {c.server.slug for c in ascend}
    for c in ascend:
        assert c.request_json["serving"]["kv_cache_dtype"] in ("auto", "bfloat16", "bf16"), c.server.slug
