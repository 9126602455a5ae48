"""Network: ports, switches (single or leaf/spine), optics, the cross-node EP fabric and P→D KV transfer."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from configurator.engine.memory import kv_bytes_per_token, linear_state_bytes_per_seq
from configurator.engine.network import size_network, switches_for_ports
from configurator.engine.serving_model import PLATFORM_FACTORS
from configurator.engine.types import (
    NicSpec,
    ParallelSpec,
    Severity,
    SwitchSpec,
    TopologyKind,
    TopologySpec,
    WorkloadSpec,
)

from ._builders import (
    a3_8p8d,
    a3_pair,
    a3_server,
    a3_single,
    dense_gqa_model,
    eth_100,
    gpu_server,
    k3_model,
    layout_for,
    lingqu_630,
    mgmt_1g,
    nf5868g8_server,
    request,
    roce_200,
    roce_400,
    x400,
)


def _codes(result) -> dict[str, object]:
    return {c.code: c for c in result.checks}


def _row(result, role: str, scope: str | None = None):
    rows = [r for r in result.rows if r.role == role and r.scope != "in-node"]
    if scope is not None:
        rows = [r for r in rows if r.scope == scope]
    assert len(rows) == 1, rows
    return rows[0]


def test_leaf_spine_rule():
    # one switch when the ports fit
    assert switches_for_ports(64, 64) == (1, 0, 0)
    assert switches_for_ports(0, 64) == (0, 0, 0)
    # else leaves = ceil(ports / (P/2)), uplinks = leaves × P/2, spines = ceil(uplinks / P)
    ports, p = 128, 64
    leaves = math.ceil(ports / (p // 2))
    assert switches_for_ports(ports, p) == (leaves, math.ceil(leaves * (p // 2) / p), leaves * (p // 2))
    assert switches_for_ports(65, 64) == (3, 2, 96)


def test_8_a3_pair_matches_the_seed_switches():
    req = a3_pair()
    net = size_network(req, layout_for(req))
    # S1 §3.2: 1 × 400GE LingQu switch + 1 × 400GE RoCE access switch for 8 nodes
    assert net.switches_by_fabric() == {"lingqu": 1, "roce": 1}
    roce = _row(net, "scale_out")
    assert roce.ports_needed == 8 * 8  # 8 nodes × 8 × 400GE RoCE (S1 §2.1)
    assert (roce.switches, roce.spines) == (1, 0)
    assert roce.optics == 2 * 64  # one transceiver at each end of 64 links
    assert roce.cables == 64
    lingqu = _row(net, "scale_up")
    # 56 LingQu ports per node, one cabled per 910C package (8) → 4 nodes × 8 per cluster;
    # both clusters' 64 ports fit one 64-port switch
    assert lingqu.cabled_per_node == 8 and lingqu.ports_per_node == 56
    assert lingqu.ports_needed == 64 and lingqu.groups == ("cluster-a", "cluster-b")
    assert net.figures["network.scale_up.lingqu.cluster-a+cluster-b.cabled_per_node"].source.kind == "assumed"
    assert _codes(net)["network.switch_count_vs_seed"].severity == Severity.OK
    assert net.figures["network.seed.switches.lingqu"].value == 1
    # totals for racks and power: two 2U / 2.0 kW switches
    assert net.switch_count == 2
    assert net.switch_units == 4
    assert net.switch_kw == pytest.approx(4.0)
    assert net.optics == 2 * 64 + 2 * 64


def test_16_a3_8p8d_one_lingqu_per_side_and_roce_leaf_spine():
    req = a3_8p8d()
    net = size_network(req, layout_for(req))
    lingqu = [r for r in net.rows if r.fabric == "lingqu" and r.scope != "in-node"]
    # S1 §4.3: 2 LingQu switches, one per P/D cluster (8 nodes × 8 cabled ports = 64 each)
    assert [(r.scope, r.ports_needed, r.switches) for r in lingqu] == [("prefill", 64, 1), ("decode", 64, 1)]
    roce = _row(net, "scale_out")
    # 16 × 8 = 128 RoCE ports on 64-port switches: leaves = ceil(128/32) = 4, spines = ceil(4·32/64) = 2
    assert roce.ports_needed == 128
    assert (roce.leaves, roce.spines, roce.switches) == (4, 2, 6)
    assert roce.uplinks == 4 * 32
    assert roce.optics == 2 * (128 + 128)
    # the seed's single RoCE core switch needs ≥ 128 ports: flagged, not copied
    seed = _codes(net)["network.switch_count_vs_seed"]
    assert seed.severity == Severity.WARNING
    assert "roce: seed 1, plan 6" in seed.message_en
    tiers = [s.tier for s in net.switches if s.fabric == "roce"]
    assert tiers.count("leaf") == 4 and tiers.count("spine") == 2
    assert net.switch_units == 8 * 2 and net.switch_kw == pytest.approx(16.0)


def test_nf5868g8_pair_uses_one_x400():
    req = request(
        nf5868g8_server(), TopologySpec(TopologyKind.SINGLE, 2, ParallelSpec(16, 2)), switches=(x400(),)
    )
    net = size_network(req, layout_for(req))
    # S2: two NF5868G8 through one X400, 400G RDMA
    assert net.switches_by_fabric() == {"roce": 1}
    assert _codes(net)["network.switch_count_vs_seed"].severity == Severity.OK
    assert _codes(net)["network.cross_node_fabric_ok"].severity == Severity.OK


def test_cross_node_ep_over_100ge_ethernet_is_an_error():
    # S1 §6.3: ordinary Ethernet cannot carry EP64 cross-node traffic
    server = gpu_server((NicSpec("ethernet", 2, 100, "scale_out"),))
    req = request(server, TopologySpec(TopologyKind.SINGLE, 4, ParallelSpec(8, 4)), switches=(eth_100(),))
    net = size_network(req, layout_for(req))
    check = _codes(net)["network.cross_node_fabric_insufficient"]
    assert check.severity == Severity.ERROR
    assert check.area == "network"
    assert "EP32" in check.message_en and "without RDMA" in check.message_en
    assert "普通以太网" in check.message_zh
    assert "400GE" in check.fix_en
    assert not net.cross_node[0].ok


def test_roce_nics_on_an_ordinary_ethernet_switch_is_an_error():
    server = replace(a3_server(), nics=(NicSpec("roce", 8, 400, "scale_out"),))
    req = a3_single(4, switches=(eth_100(),))
    req = replace(req, server=server)
    net = size_network(req, layout_for(req))
    link = net.cross_node[0]
    assert (link.switch_fabric, link.link_gbps, link.rdma) == ("ethernet", 100, False)
    assert _codes(net)["network.cross_node_fabric_insufficient"].severity == Severity.ERROR


@pytest.mark.parametrize(
    ("nics", "switches", "fabric"),
    [
        ((NicSpec("roce", 8, 400, "scale_out"),), (roce_400(),), "roce"),
        ((NicSpec("lingqu", 8, 400, "scale_up"),), (lingqu_630(),), "lingqu"),
        (
            (NicSpec("infiniband", 8, 400, "scale_out"),),
            (SwitchSpec("ib", "IB", "infiniband", 64, 400, 1, 1.0),),
            "infiniband",
        ),
    ],
)
def test_cross_node_ep_over_400g_rdma_passes(nics, switches, fabric):
    req = request(
        gpu_server(nics), TopologySpec(TopologyKind.SINGLE, 4, ParallelSpec(8, 4)), switches=switches
    )
    net = size_network(req, layout_for(req))
    codes = _codes(net)
    assert "network.cross_node_fabric_insufficient" not in codes
    assert codes["network.cross_node_fabric_ok"].severity == Severity.OK
    assert net.cross_node[0].fabric == fabric and net.cross_node[0].link_gbps == 400


def test_a3_cross_node_ep64_passes_over_lingqu_or_roce():
    req = a3_pair()
    net = size_network(req, layout_for(req))
    assert [(x.group, x.traffic, x.ok) for x in net.cross_node] == [
        ("cluster-a", "EP64", True),
        ("cluster-b", "EP64", True),
    ]
    assert "network.cross_node_fabric_insufficient" not in _codes(net)


def test_200g_rdma_is_a_warning_not_an_error():
    # vLLM-Ascend K3 tutorial: 8 × Atlas 800 A2 DP8 / TP8 / EP64 over 200GE RoCE (docs/domain.md §4 item 5)
    server = gpu_server((NicSpec("roce", 8, 200, "scale_out"),))
    req = request(server, TopologySpec(TopologyKind.SINGLE, 8, ParallelSpec(8, 8)), switches=(roce_200(),))
    net = size_network(req, layout_for(req))
    codes = _codes(net)
    assert codes["network.cross_node_fabric_below_400g"].severity == Severity.WARNING
    assert "network.cross_node_fabric_insufficient" not in codes


def test_single_node_groups_have_no_cross_node_check():
    server = gpu_server((NicSpec("ethernet", 2, 100, "scale_out"),))
    req = request(server, TopologySpec(TopologyKind.SINGLE, 1, ParallelSpec(8, 1)), switches=(eth_100(),))
    net = size_network(req, layout_for(req))
    assert net.cross_node == ()
    assert not any(c.code.startswith("network.cross_node") for c in net.checks)
    assert net.switch_count == 0  # one node: no fabric between nodes


def test_dense_dp_across_nodes_without_ep_is_not_checked():
    server = gpu_server((NicSpec("ethernet", 2, 100, "scale_out"),))
    p = ParallelSpec(tp=8, dp=2, expert_parallel=False)
    req = request(
        server, TopologySpec(TopologyKind.SINGLE, 2, p), switches=(eth_100(),), model=dense_gqa_model()
    )
    net = size_network(req, layout_for(req))
    assert net.cross_node == ()


def test_primary_standby_sharing_a_switch_is_flagged_tenant_pair_is_not():
    ps = a3_pair(TopologyKind.PRIMARY_STANDBY)
    check = _codes(size_network(ps, layout_for(ps)))["network.pair_shares_switch"]
    assert check.severity == Severity.WARNING
    tp = a3_pair(TopologyKind.TENANT_PAIR)
    assert "network.pair_shares_switch" not in _codes(size_network(tp, layout_for(tp)))
    # A tenant pair is not a hot standby, but its shared switches are one failure domain for both
    # tenants and one data path: said by its own check, which the proposal states as a risk.
    tenants = _codes(size_network(tp, layout_for(tp)))["network.tenants_share_switch"]
    assert tenants.severity == Severity.WARNING and tenants.figures["shared_switches"] >= 1


def test_management_fabric_counted_and_missing_switch_flagged():
    req = a3_pair(server=a3_server(management=True), switches=(lingqu_630(), roce_400(), mgmt_1g()))
    net = size_network(req, layout_for(req))
    mgmt = _row(net, "management")
    assert (mgmt.ports_needed, mgmt.switches) == (8, 1)
    assert net.switch_kw == pytest.approx(4.15)
    # no RoCE switch in the catalog: the scale-out ports are uncounted and say so
    bare = a3_pair(switches=(lingqu_630(),))
    assert (
        _codes(size_network(bare, layout_for(bare)))["network.no_switch_for_fabric"].severity
        == Severity.WARNING
    )


def test_kv_transfer_uses_the_memory_formulas_for_one_copy_of_the_cache():
    # The P→D check sizes one copy of the cache (TP 1) with memory's functions.
    # docs/domain.md §2: K3 MLA = 24 layers × (512 + 64) × 2 B = 27,648 B/token (13,824 in FP8)
    assert kv_bytes_per_token(k3_model(), tp=1) == 24 * (512 + 64) * 2 == 27_648
    assert kv_bytes_per_token(k3_model(), tp=1, kv_cache_dtype="fp8") == 13_824
    # KDA state per sequence = 69 × (96·128·128·4 + 9·96·128·2) = 449,372,160 B
    assert linear_state_bytes_per_seq(k3_model(), tp=1) == 69 * (96 * 128 * 128 * 4 + 9 * 96 * 128 * 2)
    # GQA: 2 × kv_heads × head_dim × 2 B × layers (Llama-3.3-70B shape: 8 KV heads, 128, 80 layers)
    assert kv_bytes_per_token(dense_gqa_model(), tp=1) == 2 * 8 * 128 * 2 * 80


def test_kv_transfer_for_k3_8p8d_is_a_small_share():
    req = a3_8p8d()
    net = size_network(req, layout_for(req))
    kv = net.kv_transfer
    # per request: 8,192 input tokens × 27,648 B × TP16 copies of the MLA latent + KDA state
    assert kv.bytes_per_request == 8192 * 27_648 * 16 + 449_372_160
    # prefill rate per node: 16 dies × 280 TFLOPS × the Ascend prefill MFU calibrated against
    # published vLLM-Ascend runs (docs/performance.md) ÷ (2 × 104.2 B active) tokens/s
    tokens_s = 16 * 280e12 * PLATFORM_FACTORS["ascend"].prefill_efficiency / (2 * 104.2e9)
    gbps = tokens_s / 8192 * kv.bytes_per_request * 8 / 1e9
    assert kv.kv_gbps_per_node == pytest.approx(gbps)
    assert kv.link_gbps_per_node == 8 * 400  # 8 × 400GE RoCE per node (S1 §2.1)
    assert kv.share == pytest.approx(gbps / 3200)
    assert _codes(net)["network.kv_transfer_ok"].severity == Severity.OK


def test_kv_transfer_warns_when_it_takes_a_large_share():
    # 1P1D dense GQA model on 8 × 1000-TFLOPS GPUs with one 100G RoCE port per node
    server = gpu_server((NicSpec("roce", 1, 100, "scale_out"),), tflops=1000.0)
    p = ParallelSpec(tp=8, dp=1, expert_parallel=False)
    topo = TopologySpec(TopologyKind.DISAGGREGATED, 2, p, prefill_nodes=1, decode_nodes=1, decode_parallel=p)
    small = SwitchSpec("roce-100", "RoCE 100GE", "roce", 32, 100, 1, 0.5)
    req = request(
        server, topo, switches=(small,), model=dense_gqa_model(), workload=WorkloadSpec(input_tokens=4096)
    )
    net = size_network(req, layout_for(req))
    # prefill MFU of the CUDA stack calibrated against published runs (docs/performance.md)
    tokens_s = 8 * 1000e12 * PLATFORM_FACTORS["cuda"].prefill_efficiency / (2 * 70e9)
    per_request = 4096 * 2 * 8 * 128 * 2 * 80  # GQA heads split over TP8: one copy on the wire
    gbps = tokens_s / 4096 * per_request * 8 / 1e9  # ≈ 70 Gb/s
    assert net.kv_transfer.kv_gbps_per_node == pytest.approx(gbps)
    assert net.kv_transfer.share == pytest.approx(gbps / 100) and gbps / 100 > 0.5
    check = _codes(net)["network.kv_transfer_share_high"]
    assert check.severity == Severity.WARNING
    assert "FP8" in check.fix_en


def test_service_nics_without_a_switch_are_the_customer_network():
    server = gpu_server((NicSpec("roce", 8, 400, "scale_out"), NicSpec("ethernet", 2, 10, "service")))
    req = request(server, TopologySpec(TopologyKind.SINGLE, 2, ParallelSpec(8, 2)), switches=(x400(),))
    net = size_network(req, layout_for(req))
    service = _row(net, "service")
    assert service.switches == 0 and "customer" in service.note_en
    assert "network.no_switch_for_fabric" not in _codes(net)
