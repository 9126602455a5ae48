"""Auto layout for every node count (issue 17): K3 on 1–64 × A3 and A2 gets a
valid layout or a reason.

K3's public config (tests/data/model-configs/moonshotai--Kimi-K3.config.json)
has 896 routed experts (``num_experts``).  With one TP group per node, EP = DP × TP = all the
devices of a pipeline stage (vLLM forms the expert-parallel group inside a
stage: ``vllm/config/parallel.py``, branch main), so the experts divide when
896 is a multiple of the stage's devices; the expected layouts below are worked
out from that by hand, not with the engine's helpers.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from configurator import reference
from configurator.engine.layout import auto_layout
from configurator.engine.plan import plan
from configurator.engine.types import Severity, TopologyKind, TopologySpec

K3_CONFIG = Path(__file__).parents[1] / "data" / "model-configs" / "moonshotai--Kimi-K3.config.json"


def _k3_experts() -> int:
    """``num_experts`` in K3's public config (nested under the text config)."""
    found = []

    def walk(node):
        if isinstance(node, dict):
            if "num_experts" in node:
                found.append(node["num_experts"])
            for value in node.values():
                walk(value)

    walk(json.loads(K3_CONFIG.read_text()))
    assert found == [896]
    return found[0]


SERVERS = {
    "a3": (lambda: reference.request(reference.CASES["a3-4-single"]), 16),
    "a2": (lambda: reference.request(reference.CASES["a2-8-text-only-modelslim"]), 8),
}


@pytest.mark.parametrize("server", sorted(SERVERS))
def test_every_node_count_from_1_to_64_gets_a_valid_layout(server):
    experts = _k3_experts()
    build, per_node = SERVERS[server]
    base = build()
    for nodes in range(1, 65):
        p = auto_layout(base, nodes)
        result = plan(replace(base, topology=TopologySpec(TopologyKind.SINGLE, nodes, p)))
        layout_errors = [
            c.code for c in result.checks if c.severity == Severity.ERROR and c.code.startswith("layout.")
        ]
        assert layout_errors == [], (server, nodes, p, layout_errors)
        assert p.tp * p.dp * p.pp == nodes * per_node
        assert p.expert_parallel and experts % (p.tp * p.dp) == 0, (nodes, p)
        # Pipeline stages are inside a node (TP × PP = its devices) or whole nodes.
        assert p.tp * p.pp == per_node or nodes % p.pp == 0
        # Any other error names itself (memory, power …): a reason, never a silent failure.
        for c in result.checks:
            if c.severity == Severity.ERROR:
                assert c.message_en and c.message_zh


@pytest.mark.parametrize(
    "server,nodes,expected",
    [
        # 896 / (4 × 16) = 14: no pipeline needed (docs/domain.md §4 item 1).
        ("a3", 4, (16, 4, 1)),
        # 16 × 16 = 256 does not divide 896; two stages inside each node (TP8 × PP2 = 16 devices):
        # EP = 8 × 16 = 128, 7 experts per rank, every replica on one node.
        ("a3", 16, (8, 16, 2)),
        # 6 nodes: EP 96, 48, 24, 12, 6 inside nodes all fail; three stages of 2 nodes: EP 32, 28 per rank.
        ("a3", 6, (16, 2, 3)),
        # 12 nodes: 192, 96, 48, 24, 12 fail; three stages of 4 nodes: EP 64, 14 per rank.
        ("a3", 12, (16, 4, 3)),
        # 64 nodes: 1024, 512, 256 fail; TP2 × PP8 inside each node: EP 128.
        ("a3", 64, (2, 64, 8)),
        # A2, 8 devices a node: 16 × 8 = 128 divides 896 (7 per rank).
        ("a2", 16, (8, 16, 1)),
        # A2 × 64: 512 and 256 fail; TP2 × PP4 inside each node: EP 128.
        ("a2", 64, (2, 64, 4)),
    ],
)
def test_the_fewest_pipeline_stages_that_divide_the_experts(server, nodes, expected):
    build, _ = SERVERS[server]
    p = auto_layout(build(), nodes)
    assert (p.tp, p.dp, p.pp) == expected


def test_stages_across_nodes_are_flagged_and_stages_inside_a_node_are_not():
    base = reference.request(reference.CASES["a3-4-single"])
    for nodes, flagged in ((6, True), (16, False)):
        p = auto_layout(base, nodes)
        result = plan(replace(base, topology=TopologySpec(TopologyKind.SINGLE, nodes, p)))
        codes = [c.code for c in result.checks]
        assert ("layout.pipeline_across_nodes" in codes) is flagged, (nodes, p, codes)
