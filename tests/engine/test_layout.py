"""Layout: topology → serving groups, and the start-up checks.

Expected figures are worked out here from the sources named beside them
(docs/domain.md sections, the seeds, the public Kimi K3 config), not with the
engine's helpers.
"""

from dataclasses import replace

import pytest

from configurator import reference
from configurator.engine.layout import propose_layout, resolve_layout
from configurator.engine.types import ParallelSpec, Severity, TopologyKind, TopologySpec

# One A2 node (resolves to TP8 / DP1): not a seeded case, because K3 does not fit on it ([S1]).
A2_ONE_NODE = {"model": "kimi-k3", "server": "atlas-800-a2", "topology": {"kind": "single", "nodes": 1}}
PAIRS = {
    TopologyKind.PRIMARY_STANDBY: reference.CASES["a3-8-primary-standby"],
    TopologyKind.TENANT_PAIR: reference.CASES["a3-8-tenant-pair"],
}


def codes(result, severity=None):
    return [c.code for c in result.checks if severity is None or c.severity == severity]


def only(result, code):
    found = [c for c in result.checks if c.code == code]
    assert len(found) == 1, [c.code for c in result.checks]
    return found[0]


def with_topology(req, **changes):
    return replace(req, topology=replace(req.topology, **changes))


def has_cjk(text):
    return any("\u4e00" <= ch <= "\u9fff" for ch in text)


# --------------------------------------------------------------------------- the seeds' layouts


def test_k3_on_four_a3_is_dp4_tp16_ep64_with_14_experts_per_rank():
    # docs/domain.md §4 item 1 / [S1]: 4 × A3, 16 logical NPUs each (8 × 910C × 2 dies),
    # DP4 / TP16 / EP64, 896 experts → 896 / 64 = 14 per rank.
    layout = resolve_layout(reference.request(reference.CASES["a3-4-single"]))
    assert codes(layout, Severity.ERROR) == []
    assert layout.devices_per_node == 8 * 2
    (g,) = layout.groups
    assert (g.name, g.role, g.nodes, g.first_node) == ("cluster", "serve", 4, 0)
    assert g.devices == 4 * 16
    assert (g.parallel.tp, g.parallel.dp, g.parallel.ep) == (16, 4, 16 * 4)
    assert g.experts_per_rank == 896 // 64 == 14
    ok = only(layout, "layout.ok")
    assert "DP4 / TP16 / EP64" in ok.message_en and "14" in ok.message_zh
    assert layout.figures["layout.cluster.experts_per_rank"].value == 14
    assert layout.figures["layout.total_devices"].value == 64


def test_8p8d_sides_are_dp8_tp16_ep128_with_7_experts_per_rank():
    # docs/domain.md §4 item 3: 8 prefill + 8 decode nodes, each side DP8 / TP16 / EP128 → 896 / 128 = 7.
    layout = resolve_layout(reference.request(reference.CASES["a3-16-8p8d"]))
    assert codes(layout, Severity.ERROR) == []
    prefill, decode = layout.groups
    assert (prefill.name, prefill.role, prefill.nodes, prefill.first_node) == ("prefill", "prefill", 8, 0)
    assert (decode.name, decode.role, decode.nodes, decode.first_node) == ("decode", "decode", 8, 8)
    for g in (prefill, decode):
        assert g.devices == 8 * 16
        assert g.parallel.ep == 128
        assert g.experts_per_rank == 7


def test_decode_side_falls_back_to_parallel_when_decode_parallel_is_none():
    req = reference.request(reference.CASES["a3-16-8p8d"])
    req = with_topology(req, decode_parallel=None)
    _, decode = resolve_layout(req).groups
    assert decode.parallel == req.topology.parallel


@pytest.mark.parametrize(
    "kind, roles",
    [(TopologyKind.PRIMARY_STANDBY, ("serve", "standby")), (TopologyKind.TENANT_PAIR, ("tenant", "tenant"))],
)
def test_eight_a3_pair_is_two_identical_four_node_clusters(kind, roles):
    # docs/domain.md §4 item 2: two 4-node clusters, each DP4 / TP16.
    layout = resolve_layout(reference.request(PAIRS[kind]))
    a, b = layout.groups
    assert (a.name, b.name) == ("cluster-a", "cluster-b")
    assert (a.role, b.role) == roles
    assert (a.nodes, a.first_node, b.nodes, b.first_node) == (4, 0, 4, 4)
    assert a.parallel == b.parallel
    # The identical clusters are reported once.
    assert codes(layout) == ["layout.ok"]


def test_a2_eight_nodes_text_only_is_dp8_tp8_ep64():
    # docs/domain.md §4 item 5: 8 × Atlas 800 A2 (8 × 910B), DP8 / TP8 / EP64 → 14 experts per rank.
    layout = resolve_layout(reference.request(reference.CASES["a2-8-text-only-modelslim"]))
    (g,) = layout.groups
    assert codes(layout, Severity.ERROR) == []
    assert (g.devices, g.parallel.ep, g.experts_per_rank) == (64, 64, 14)


def test_nf5868g8_pair_is_tp16_per_node_dp2_ep32():
    # docs/domain.md §4 item 4 / [S2]: 2 × 16 GPUs = 32; TP16 inside each PCIe node, DP2 across, EP32 → 28 experts.
    (g,) = resolve_layout(reference.request(reference.CASES["nf5868g8-2-single"])).groups
    assert (g.devices, g.parallel.tp, g.parallel.dp, g.parallel.ep, g.experts_per_rank) == (32, 16, 2, 32, 28)


# --------------------------------------------------------------------------- auto layout


def test_propose_layout_gives_the_validated_layouts():
    # docs/domain.md §4: DP4/TP16 on 4 × A3, DP8/TP16 on each 8-node side of 8P8D, DP8/TP8 on 8 × A2.
    assert propose_layout(reference.request(reference.CASES["a3-4-single"])) == ParallelSpec(
        tp=16, dp=4, pp=1, expert_parallel=True, dp_local=1
    )
    side = propose_layout(reference.request(reference.CASES["a3-16-8p8d"]))
    assert (side.tp, side.dp, side.ep) == (16, 8, 128)
    assert propose_layout(reference.request(reference.CASES["a3-16-8p8d"]), nodes=8) == side
    a2 = propose_layout(reference.request(reference.CASES["a2-8-text-only-modelslim"]))
    assert (a2.tp, a2.dp, a2.ep) == (8, 8, 64)


def test_propose_layout_uses_largest_head_divisor_when_node_width_does_not_divide_heads():
    # 40 heads on 16-device nodes: 16 does not divide 40; the largest divisor of 40
    # that fits a node and divides the 64 devices is 8.
    req = replace(
        reference.request(reference.CASES["a3-4-single"]),
        model=replace(reference.model("kimi-k3"), num_attention_heads=40),
    )
    p = propose_layout(req)
    assert (p.tp, p.dp, p.dp_local) == (8, 8, 2)


def test_propose_layout_leaves_expert_parallel_off_for_dense_models():
    req = replace(reference.request(A2_ONE_NODE), model=reference.model("llama-3-1-8b"))
    p = propose_layout(req)
    assert (p.tp, p.dp, p.expert_parallel) == (8, 1, False)
    (g,) = resolve_layout(with_topology(req, parallel=p)).groups
    assert g.experts_per_rank == 0


# --------------------------------------------------------------------------- checks


def test_zero_nodes_is_an_error_and_yields_no_groups():
    layout = resolve_layout(with_topology(reference.request(reference.CASES["a3-4-single"]), nodes=0))
    c = only(layout, "layout.nodes_not_positive")
    assert c.severity == Severity.ERROR and c.field == "topology.nodes"
    assert layout.groups == ()
    assert has_cjk(c.message_zh)


def test_odd_node_count_for_a_pair_is_an_error_with_a_fix():
    layout = resolve_layout(
        with_topology(reference.request(reference.CASES["a3-8-primary-standby"]), nodes=7)
    )
    c = only(layout, "layout.pair_needs_even_nodes")
    assert c.severity == Severity.ERROR
    assert c.field == "topology.nodes"
    assert c.fix == {"topology.nodes": 8}
    assert has_cjk(c.message_zh)


def test_prefill_plus_decode_must_equal_nodes():
    layout = resolve_layout(with_topology(reference.request(reference.CASES["a3-16-8p8d"]), decode_nodes=6))
    c = only(layout, "layout.prefill_decode_mismatch")
    assert c.severity == Severity.ERROR
    assert c.fix == {"topology.nodes": 8 + 6}


def test_missing_decode_side_is_an_error():
    layout = resolve_layout(with_topology(reference.request(reference.CASES["a3-16-8p8d"]), decode_nodes=0))
    assert "layout.prefill_decode_missing" in codes(layout, Severity.ERROR)


def test_world_size_mismatch_suggests_the_auto_layout():
    # TP16 × DP2 = 32 ≠ 4 nodes × 16 = 64 devices.
    req = with_topology(
        reference.request(reference.CASES["a3-4-single"]), parallel=ParallelSpec(tp=16, dp=2, dp_local=1)
    )
    c = only(resolve_layout(req), "layout.world_size_mismatch")
    assert c.severity == Severity.ERROR
    assert c.field == "topology.parallel.dp"
    assert c.fix["topology.parallel.dp"] == 4 and c.fix["topology.parallel.tp"] == 16
    assert "64" in c.message_en and "64" in c.message_zh


def test_world_size_mismatch_on_the_decode_side_names_decode_parallel():
    req = reference.request(reference.CASES["a3-16-8p8d"])
    req = with_topology(req, decode_parallel=ParallelSpec(tp=16, dp=4, dp_local=1))
    layout = resolve_layout(req)
    c = only(layout, "layout.world_size_mismatch")
    assert c.field == "topology.decode_parallel.dp"
    assert c.fix["topology.decode_parallel.dp"] == 8


def test_tp_across_two_pcie_servers_exceeds_the_scale_up_domain():
    # NF5868G8: 16 GPUs on a PCIe fabric, no scale-up link between servers ([S2]),
    # so TP32 over 2 nodes would all-reduce over RoCE every layer.
    req = with_topology(
        reference.request(reference.CASES["nf5868g8-2-single"]),
        parallel=ParallelSpec(tp=32, dp=1, dp_local=1),
    )
    c = only(resolve_layout(req), "layout.tp_exceeds_scale_up")
    assert c.severity == Severity.ERROR
    assert c.field == "topology.parallel.tp"
    assert c.fix["topology.parallel.tp"] == 16


def test_tp_across_nodes_stays_inside_a_scale_up_domain_wider_than_a_node():
    # The seeded Atlas 800 A3 counts only its own 16 NPUs as its scale-up domain
    # (catalog/seed/servers.yaml atlas-800-a3 scale_up_domain_devices 0, assumed: inter-node LingQu is
    # modelled as the 56 × 400GE LingQu ports), so TP32 over two nodes is flagged ...
    base = reference.request(reference.CASES["a3-4-single"])
    tp32 = ParallelSpec(tp=32, dp=2, dp_local=1)
    assert "layout.tp_exceeds_scale_up" in codes(resolve_layout(with_topology(base, parallel=tp32)))
    # ... while a server whose domain spans a 384-NPU super-node (a CloudMatrix-384-like domain, not a
    # seeded row: inline here) keeps TP32 inside it.
    super_node = replace(base.server, scale_up_domain_devices=384)
    req = with_topology(replace(base, server=super_node), parallel=tp32)
    assert "layout.tp_exceeds_scale_up" not in codes(resolve_layout(req))


def test_tp_that_does_not_divide_heads_is_an_error():
    # 96 heads (public config) are not divisible by 64.
    req = with_topology(
        reference.request(reference.CASES["a3-4-single"]), parallel=ParallelSpec(tp=64, dp=1, dp_local=1)
    )
    c = only(resolve_layout(req), "layout.tp_not_dividing_heads")
    assert c.severity == Severity.ERROR and "96" in c.message_en


def test_experts_not_divisible_by_ep_suggests_a_valid_node_count():
    # 5 × A3 as DP5 / TP16 → EP80, 896 / 80 = 11.2 experts per rank.
    # The nearest larger group with EP = 16 × n dividing 896 = 2^7 × 7 is n = 7 (EP112, 8 per rank).
    req = with_topology(
        reference.request(reference.CASES["a3-4-single"]),
        nodes=5,
        parallel=ParallelSpec(tp=16, dp=5, dp_local=1),
    )
    c = only(resolve_layout(req), "layout.experts_not_divisible")
    assert c.severity == Severity.ERROR
    expected_nodes = next(n for n in range(5, 64) if 896 % (16 * n) == 0)
    assert expected_nodes == 7
    assert c.fix["topology.nodes"] == expected_nodes
    assert c.fix["topology.parallel.dp"] == expected_nodes
    # Applying the fix clears every layout error.
    fixed = with_topology(
        req,
        nodes=c.fix["topology.nodes"],
        parallel=ParallelSpec(tp=c.fix["topology.parallel.tp"], dp=c.fix["topology.parallel.dp"], dp_local=1),
    )
    assert codes(resolve_layout(fixed), Severity.ERROR) == []


def test_dp_local_must_match_dp_over_nodes():
    # vLLM multi-node DP: --data-parallel-size-local × nodes = --data-parallel-size.
    req = with_topology(
        reference.request(reference.CASES["a3-4-single"]), parallel=ParallelSpec(tp=16, dp=4, dp_local=2)
    )
    c = only(resolve_layout(req), "layout.dp_local_inconsistent")
    assert c.severity == Severity.ERROR
    assert c.field == "topology.parallel.dp_local"
    assert c.fix == {"topology.parallel.dp_local": 1}


def test_two_dp_ranks_per_node_is_consistent():
    # TP8 on 16-NPU nodes: 2 DP ranks per node → DP8 over 4 nodes, dp_local 2.
    req = with_topology(
        reference.request(reference.CASES["a3-4-single"]), parallel=ParallelSpec(tp=8, dp=8, dp_local=2)
    )
    assert codes(resolve_layout(req), Severity.ERROR) == []


def test_every_check_is_bilingual_and_names_a_field():
    # TP36 × DP2 = 72 ≠ 80 devices; 96 heads % 36 ≠ 0; 896 experts % EP72 ≠ 0.
    req = with_topology(
        reference.request(reference.CASES["a3-4-single"]),
        nodes=5,
        parallel=ParallelSpec(tp=36, dp=2, dp_local=3),
    )
    layout = resolve_layout(req)
    errors = [c for c in layout.checks if c.severity == Severity.ERROR]
    assert len(errors) >= 3
    for c in errors:
        assert c.area == "layout"
        assert c.message_en and has_cjk(c.message_zh)
        assert c.field.startswith("topology.")


def test_topology_spec_single_group_uses_all_nodes():
    req = replace(
        reference.request(reference.CASES["a3-4-single"]),
        topology=TopologySpec(TopologyKind.SINGLE, 8, ParallelSpec(tp=16, dp=8, dp_local=1)),
    )
    (g,) = resolve_layout(req).groups
    assert (g.nodes, g.devices, g.experts_per_rank) == (8, 128, 7)


def test_world_size_fix_keeps_the_node_count_with_pipeline_stages_when_ep_alone_cannot_divide():
    # 5 × A3 with a wrong DP.  One stage (EP80) would not split 896 experts; five stages of
    # one node each give EP = DP1 × TP16 = 16, and 896 / 16 = 56 is whole (issue 17: the auto
    # layout is valid for every node count), so the fix keeps the 5 nodes.
    req = with_topology(
        reference.request(reference.CASES["a3-4-single"]),
        nodes=5,
        parallel=ParallelSpec(tp=16, dp=4, dp_local=1),
    )
    c = only(resolve_layout(req), "layout.world_size_mismatch")
    assert "topology.nodes" not in c.fix
    assert (c.fix["topology.parallel.tp"], c.fix["topology.parallel.dp"], c.fix["topology.parallel.pp"]) == (
        16,
        1,
        5,
    )
