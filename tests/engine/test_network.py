"""Network: ports, switches (single or leaf/spine), optics, the cross-node EP fabric and P→D KV transfer.

Seeded deployments are the seeded cases (configurator/reference.py) laid out by the layout module;
the engine picks their switches from the seeded catalog (catalog/seed/switches.yaml: LingQu 630 V1
128 × 400G, 4U, 3.0 kW; RoCE 400GE access 64 × 400G, 2U, 1.6 kW; RoCE 400GE core 128 × 400G;
management 48 × 1G, 1U, 0.15 kW).  Odd cases the seed does not hold (a generic GPU server, a 200G or
100G RoCE switch, a 64-port LingQu switch) are built inline below and say why.
"""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from configurator import reference
from configurator.engine.layout import resolve_layout
from configurator.engine.memory import kv_bytes_per_token, linear_state_bytes_per_seq
from configurator.engine.network import size_network, switches_for_ports
from configurator.engine.serving_model import PLATFORM_FACTORS
from configurator.engine.types import (
    GB,
    AcceleratorSpec,
    NicSpec,
    ParallelSpec,
    ServerSpec,
    Severity,
    SwitchSpec,
    TopologyKind,
    TopologySpec,
    WorkloadSpec,
)

PAIR = "a3-8-primary-standby"
TENANTS = "a3-8-tenant-pair"
P8D8 = "a3-16-8p8d"


def _case(name: str, **replaced):
    """The seeded case ``name`` (``replaced``: fields of the resolved request swapped for odd cases)."""
    return replace(reference.request(reference.CASES[name]), **replaced)


def _net(req):
    return size_network(req, resolve_layout(req))


def gpu_server(nics: tuple[NicSpec, ...], tflops: float = 1000.0) -> ServerSpec:
    """A generic 8-GPU PCIe server (8U, 10.2 kW, 96 GB, 4 TB/s: assumed) with the given NICs.
    Not a seed row: these tests vary only the NICs, which no seeded server does."""
    return ServerSpec(
        slug="gpu-8x",
        name="GPU server 8x",
        accelerator=AcceleratorSpec(
            "gpu", "GPU 96 GB", 96 * GB, 4.0e12, {"bf16": tflops}, software_stack="cuda"
        ),
        packages=8,
        rack_units=8,
        max_input_kw=10.2,
        nics=nics,
        scale_up_fabric="pcie",
        scale_up_bandwidth_gbps=512,
    )


def request(server, topology, switches, model=None, workload=None):
    """An odd request: the seeded 4 × A3 case with its server, topology and switches (and model or
    workload) replaced."""
    base = reference.request(reference.CASES["a3-4-single"])
    return replace(
        base,
        server=server,
        topology=topology,
        switches=switches,
        model=model or base.model,
        workload=workload or base.workload,
    )


ETH_100 = reference.switch("eth-100ge-service")  # 32 × 100GE, no RDMA (catalog/seed/switches.yaml)
LLAMA_70B = reference.model("llama-3-3-70b")  # dense, GQA 64/8 heads of 128, 80 layers (public config)

# Not a seed row: the seed has no 200G RoCE switch (the vLLM-Ascend A2 tutorial's fabric); the
# seeded 400GE access switch at 200 Gb/s a port.
ROCE_200 = replace(
    reference.switch("roce-400ge-access"), slug="roce-200ge", name="200GE RoCE switch", port_speed_gbps=200
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
    net = _net(_case(PAIR))
    # S1 §3.2: 1 × 400GE LingQu switch + 1 × 400GE RoCE switch for 8 nodes.  With the seeded 64-port
    # access switch the 64 RoCE ports and their ceil(64/16) = 4 spare ports do not fit (68 > 64); the
    # 128-port core takes them in one switch (two access switches by whole rails cost the same:
    # fewer switches win, tests/engine/test_switch_choice.py).
    assert {k: net.switches_by_fabric()[k] for k in ("lingqu", "roce")} == {"lingqu": 1, "roce": 1}
    roce = _row(net, "scale_out")
    assert roce.switch_slug == "roce-400ge-core"
    assert roce.ports_needed == 8 * 8  # 8 nodes × 8 × 400GE RoCE (S1 §2.1)
    assert roce.spare_ports == math.ceil(64 / 16) == 4
    assert (roce.switches, roce.spines) == (1, 0)
    assert roce.optics == 2 * 64  # one transceiver at each end of 64 links
    assert roce.cables == 64
    lingqu = _row(net, "scale_up")
    # 56 LingQu ports per node, one cabled per 910C package (8) → 4 nodes × 8 per cluster;
    # both clusters' 64 ports and 4 spare fit one 128-port LingQu 630 V1
    assert lingqu.cabled_per_node == 8 and lingqu.ports_per_node == 56
    assert lingqu.ports_needed == 64 and lingqu.groups == ("cluster-a", "cluster-b")
    assert lingqu.ports_used + lingqu.spare_ports <= lingqu.port_capacity == 128
    assert net.figures["network.scale_up.lingqu.cluster-a+cluster-b.cabled_per_node"].source.kind == "assumed"
    assert _codes(net)["network.switch_count_vs_seed"].severity == Severity.OK
    assert net.figures["network.seed.switches.lingqu"].value == 1
    # no switch is sold full: every plane keeps ≥ one spare port per 16 used
    for row in net.rows:
        if row.switches:
            assert row.spare_ports >= math.ceil(row.ports_used / 16) - (row.sizing == "rails")
            assert row.ports_used + row.spare_ports <= row.port_capacity


def test_every_plane_is_built_with_headroom_and_its_devices():
    # Proposal anatomy §4: 参数面 / 业务面 / 存储面 / 管理面 and out-of-band.  The seeded A3 lists only its
    # RoCE, LingQu and iBMC ports (catalog/seed/servers.yaml): the plan adds a dual-port 25GE card for
    # the service and storage planes, the onboard GE port for management; the iBMC is out-of-band.
    net = _net(_case(P8D8))
    roles = {r.role for r in net.rows if r.scope != "in-node"}
    assert roles == {"scale_up", "scale_out", "service", "storage", "management", "oob"}
    service, storage = _row(net, "service"), _row(net, "storage")
    assert (service.added_nic, storage.added_nic, _row(net, "management").added_nic) == (
        "card",
        "card",
        "onboard",
    )
    # 16 nodes × 2 ports; the 2 gateways × 2 service ports; 4 uplinks to the customer's core
    assert (service.ports_needed, service.attached_ports, service.external_uplinks) == (32, 4, 4)
    assert service.spare_ports == math.ceil(40 / 16) == 3
    assert service.switches == 2 and service.sizing == "pair"  # M-LAG pair
    # the storage system's 2 controllers × 2 ports; a closed plane: no uplink
    assert (storage.ports_needed, storage.attached_ports, storage.external_uplinks) == (32, 4, 0)
    oob = _row(net, "oob")
    # every other switch's management port and the gateways' BMC ports are on the out-of-band plane
    others = sum(r.switches for r in net.rows if r.role != "oob")
    assert oob.attached_ports == others + 2
    assert oob.ports_needed == 16


def test_16_a3_8p8d_one_lingqu_per_side_and_roce_leaf_spine():
    # A 64-port LingQu switch (not a seed row: the seeded LingQu 630 V1 has 128 ports) and only the
    # seeded 64-port RoCE access switch on offer, with a 2-port RoCE server (not a seed row) so that
    # whole rails do not apply (2 rails of 16 + 1 spare fit one switch each; here one rail per switch
    # is too little: a 2-rail server with 40 nodes would); the leaf/spine rule is checked directly.
    lingqu_64 = replace(reference.switch("lingqu-630-v1"), ports=64)
    req = _case(
        P8D8, switches=(lingqu_64, *reference.switches("roce-400ge-access", "mgmt-1ge", "ce6866-48s8cq"))
    )
    net = _net(req)
    lingqu = [r for r in net.rows if r.fabric == "lingqu" and r.scope != "in-node"]
    # S1 §4.3: 2 LingQu switches, one per P/D cluster; 8 nodes × 8 = 64 ports + 4 spare > 64: each side
    # by whole rails, 3 rails (3 × 8 + 2 spare = 26... ) — k rails fit while 8k + ceil(8k/16) ≤ 64 → k = 7
    assert [(r.scope, r.ports_needed, r.switches, r.sizing) for r in lingqu] == [
        ("prefill", 64, 2, "rails"),
        ("decode", 64, 2, "rails"),
    ]
    roce = _row(net, "scale_out")
    # 16 × 8 = 128 RoCE ports: rails of 16 + 1 spare, 3 per 64-port switch (3 × 17 = 51 ≤ 64 < 68)
    assert roce.ports_needed == 128
    assert (roce.switches, roce.spines, roce.sizing) == (math.ceil(8 / 3), 0, "rails")
    assert roce.optics == 2 * 128
    seed = _codes(net)["network.switch_count_vs_seed"]
    assert seed.severity == Severity.OK  # a note: the plan counts the ports each fabric needs
    assert "RoCE: seed 1, plan 3" in seed.message_en
    # leaf/spine when whole rails cannot help: 136 ports needed on 64-port switches
    assert switches_for_ports(128 + 8, 64) == (5, 3, 5 * 32)


def test_16_a3_8p8d_seeded_switches_one_lingqu_per_side():
    net = _net(_case(P8D8))
    # the seeded 128-port LingQu 630 V1: both sides' 2 × 64 ports and their 2 × 4 spare (136) no longer
    # fit one switch, so each side has its own, as S1 §4.3 plans (one per P/D cluster)
    lingqu = [r for r in net.rows if r.fabric == "lingqu" and r.scope != "in-node"]
    assert [(r.scope, r.ports_needed, r.switches) for r in lingqu] == [("prefill", 64, 1), ("decode", 64, 1)]
    roce = _row(net, "scale_out")
    # 128 RoCE ports + 8 spare > 128: by whole rails, 3 × 350 k (access, 3 rails each) beats
    # 2 × 700 k (core, 7 rails each) at the seeded prices (catalog/seed/price_lists.yaml)
    assert (roce.switch_slug, roce.ports_needed, roce.switches, roce.spines) == (
        "roce-400ge-access",
        128,
        3,
        0,
    )
    seed = _codes(net)["network.switch_count_vs_seed"]
    assert seed.severity == Severity.OK  # a note: the plan counts the ports each fabric needs
    assert "RoCE: seed 1, plan 3" in seed.message_en
    # Issue 31: the explanation follows the direction (more switches than the seed's).
    assert "Where the plan has more, the seed's figures imply switches with more ports" in seed.message_en
    assert all(r.ports_used < r.port_capacity for r in net.rows if r.switches)  # none at 128 of 128


def test_nf5868g8_pair_uses_one_x400():
    net = _net(_case("nf5868g8-2-single"))
    # S2: two NF5868G8 through one X400, 400G RDMA
    assert net.switches_by_fabric()["roce"] == 1
    assert _row(net, "scale_out").switch_slug == "inspur-x400"
    # S2's 10G service ports go to a 25GE SFP28 switch with 10G SFP+ modules, not Cat6 into 100GE
    service = _row(net, "service")
    assert (service.switch_slug, service.link_gbps, service.optics_media) == (
        "ce6866-48s8cq",
        10,
        "10g-optics",
    )
    assert service.added_nic == ""  # the server's own NICs
    assert _codes(net)["network.switch_count_vs_seed"].severity == Severity.OK
    assert _codes(net)["network.cross_node_fabric_ok"].severity == Severity.OK


def test_cross_node_ep_over_100ge_ethernet_is_an_error():
    # S1 §6.3: ordinary Ethernet cannot carry EP64 cross-node traffic
    server = gpu_server((NicSpec("ethernet", 2, 100, "scale_out"),))
    req = request(server, TopologySpec(TopologyKind.SINGLE, 4, ParallelSpec(8, 4)), switches=(ETH_100,))
    net = _net(req)
    check = _codes(net)["network.cross_node_fabric_insufficient"]
    assert check.severity == Severity.ERROR
    assert check.area == "network"
    assert "EP32" in check.message_en and "without RDMA" in check.message_en
    assert "普通以太网" in check.message_zh
    assert "400GE" in check.fix_en
    assert not net.cross_node[0].ok


def test_roce_nics_on_an_ordinary_ethernet_switch_is_an_error():
    # the seeded A3 with only its RoCE NICs (not a seed row) and only the seeded 100GE Ethernet switch
    server = replace(reference.server("atlas-800-a3"), nics=(NicSpec("roce", 8, 400, "scale_out"),))
    req = _case("a3-4-single", server=server, switches=(ETH_100,))
    net = _net(req)
    link = net.cross_node[0]
    assert (link.switch_fabric, link.link_gbps, link.rdma) == ("ethernet", 100, False)
    assert _codes(net)["network.cross_node_fabric_insufficient"].severity == Severity.ERROR


@pytest.mark.parametrize(
    ("nics", "switches", "fabric"),
    [
        ((NicSpec("roce", 8, 400, "scale_out"),), ("roce-400ge-access",), "roce"),
        ((NicSpec("lingqu", 8, 400, "scale_up"),), ("lingqu-630-v1",), "lingqu"),
        ((NicSpec("infiniband", 8, 400, "scale_out"),), ("nvidia-qm9700",), "infiniband"),
    ],
)
def test_cross_node_ep_over_400g_rdma_passes(nics, switches, fabric):
    req = request(
        gpu_server(nics),
        TopologySpec(TopologyKind.SINGLE, 4, ParallelSpec(8, 4)),
        switches=reference.switches(*switches),
    )
    net = _net(req)
    codes = _codes(net)
    assert "network.cross_node_fabric_insufficient" not in codes
    assert codes["network.cross_node_fabric_ok"].severity == Severity.OK
    assert net.cross_node[0].fabric == fabric and net.cross_node[0].link_gbps == 400


def test_a3_cross_node_ep64_passes_over_lingqu_or_roce():
    net = _net(_case(PAIR))
    assert [(x.group, x.traffic, x.ok) for x in net.cross_node] == [
        ("cluster-a", "EP64", True),
        ("cluster-b", "EP64", True),
    ]
    assert "network.cross_node_fabric_insufficient" not in _codes(net)


def test_200g_rdma_is_a_warning_not_an_error():
    # vLLM-Ascend K3 tutorial: 8 × Atlas 800 A2 DP8 / TP8 / EP64 over 200GE RoCE (docs/domain.md §4 item 5)
    server = gpu_server((NicSpec("roce", 8, 200, "scale_out"),))
    req = request(server, TopologySpec(TopologyKind.SINGLE, 8, ParallelSpec(8, 8)), switches=(ROCE_200,))
    net = _net(req)
    codes = _codes(net)
    assert codes["network.cross_node_fabric_below_400g"].severity == Severity.WARNING
    assert "network.cross_node_fabric_insufficient" not in codes


def test_single_node_groups_have_no_cross_node_check():
    server = gpu_server((NicSpec("ethernet", 2, 100, "scale_out"),))
    req = request(server, TopologySpec(TopologyKind.SINGLE, 1, ParallelSpec(8, 1)), switches=(ETH_100,))
    net = _net(req)
    assert net.cross_node == ()
    assert not any(c.code.startswith("network.cross_node") for c in net.checks)
    # one node: no fabric between nodes; the service and storage pairs and the management plane (the
    # 100GE switch is the only one offered) for the node, its gateways and storage
    assert _row(net, "scale_out").switches == 0
    assert net.switch_count == 2 + 2 + 1


def test_dense_dp_across_nodes_without_ep_is_not_checked():
    server = gpu_server((NicSpec("ethernet", 2, 100, "scale_out"),))
    p = ParallelSpec(tp=8, dp=2, expert_parallel=False)
    req = request(server, TopologySpec(TopologyKind.SINGLE, 2, p), switches=(ETH_100,), model=LLAMA_70B)
    net = _net(req)
    assert net.cross_node == ()


def test_primary_standby_sharing_a_switch_is_flagged_tenant_pair_is_not():
    check = _codes(_net(_case(PAIR)))["network.pair_shares_switch"]
    assert check.severity == Severity.WARNING
    tp = _case(TENANTS)
    assert "network.pair_shares_switch" not in _codes(_net(tp))
    # A tenant pair is not a hot standby, but its shared switches are one failure domain for both
    # tenants and one data path: said by its own check, which the proposal states as a risk.
    tenants = _codes(_net(tp))["network.tenants_share_switch"]
    assert tenants.severity == Severity.WARNING and tenants.figures["shared_switches"] >= 1
    # Issue 31: the shared parameter-plane switches come with a fix, and the management switch (no
    # tenant traffic) is said as shared by design, not counted in the warning.
    assert tenants.fix == {"topology.pair_switches": "separate"}
    assert _codes(_net(tp))["network.tenants_share_management"].severity == Severity.OK
    separate = replace(tp, topology=replace(tp.topology, pair_switches="separate"))
    codes = _codes(_net(separate))
    # Separate parameter planes: the parameter-plane finding is gone, so its fix is proven by its
    # going away; what stays shared (the service and storage switches) is its own finding, which has
    # no one-click fix and says why.
    assert "network.tenants_share_switch" not in codes
    left = codes["network.tenants_share_data_switch"]
    assert not left.fix and "LingQu" not in left.message_en and "No one-click fix" in left.message_en
    # The out-of-band (BMC) switch carries no tenant traffic: never in the data finding.
    assert "1GE management" not in left.message_en
    assert codes["network.tenants_share_management"].severity == Severity.OK


def test_management_fabric_counted_and_missing_switch_flagged():
    # the seeded A3 has one 1GE management port (catalog/seed/servers.yaml atlas-800-a3 nics)
    req = _case(PAIR, switches=reference.switches("lingqu-630-v1", "roce-400ge-access", "mgmt-1ge"))
    net = _net(req)
    mgmt = _row(net, "management")
    assert (mgmt.ports_needed, mgmt.switches) == (8, 1)
    # LingQu 3.0 kW; RoCE: 64 + 4 spare > 64 → 2 access switches by whole rails (7 of 9 ports each);
    # management and out-of-band 1GE 0.15 kW each; no service/storage switch offered
    assert _row(net, "scale_out").switches == 2
    assert net.switch_kw == pytest.approx(3.0 + 2 * 1.6 + 2 * 0.15)
    # no RoCE (nor management) switch in the catalog: the scale-out ports are uncounted and say so
    bare = _case(PAIR, switches=reference.switches("lingqu-630-v1"))
    assert _codes(_net(bare))["network.no_switch_for_fabric"].severity == Severity.WARNING


def test_kv_transfer_uses_the_memory_formulas_for_one_copy_of_the_cache():
    # The P→D check sizes one copy of the cache (TP 1) with memory's functions.
    # docs/domain.md §2: K3 MLA = 24 layers × (512 + 64) × 2 B = 27,648 B/token (13,824 in FP8)
    k3 = reference.model("kimi-k3")
    assert kv_bytes_per_token(k3, tp=1) == 24 * (512 + 64) * 2 == 27_648
    assert kv_bytes_per_token(k3, tp=1, kv_cache_dtype="fp8") == 13_824
    # KDA state per sequence = 69 × (96·128·128·4 + 9·96·128·2) = 449,372,160 B
    assert linear_state_bytes_per_seq(k3, tp=1) == 69 * (96 * 128 * 128 * 4 + 9 * 96 * 128 * 2)
    # GQA: 2 × kv_heads × head_dim × 2 B × layers (Llama-3.3-70B public config: 8 KV heads, 128, 80 layers)
    assert kv_bytes_per_token(LLAMA_70B, tp=1) == 2 * 8 * 128 * 2 * 80


def test_kv_transfer_for_k3_8p8d_is_a_small_share():
    net = _net(_case(P8D8))
    kv = net.kv_transfer
    # per request: 8,192 input tokens × 27,648 B × TP16 copies of the MLA latent + KDA state
    assert kv.bytes_per_request == 8192 * 27_648 * 16 + 449_372_160
    # prefill rate per node: 16 dies × 280 TFLOPS × the Ascend prefill MFU calibrated against
    # published vLLM-Ascend runs (docs/performance.md) ÷ (2 × active parameters) tokens/s; the seed's
    # active count is 104,189,598,304 (catalog/seed/models.yaml kimi-k3 active_params, summed from the
    # released config; the fixture's rounded 104.2 B gave a 0.01 % larger rate)
    tokens_s = 16 * 280e12 * PLATFORM_FACTORS["ascend"].prefill_efficiency / (2 * 104_189_598_304)
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
    # Not a seed row: a 32-port 100G RoCE switch, the small fabric this case is about
    small = SwitchSpec("roce-100", "RoCE 100GE", "roce", 32, 100, 1, 0.5)
    req = request(server, topo, switches=(small,), model=LLAMA_70B, workload=WorkloadSpec(input_tokens=4096))
    net = _net(req)
    # prefill MFU of the CUDA stack calibrated against published runs (docs/performance.md) ÷ (2 × the
    # seed's 69,503,033,344 active parameters: catalog/seed/models.yaml llama-3-3-70b active_params,
    # counted from the public config; the hand-made 70 B model gave a 0.7 % lower rate)
    tokens_s = 8 * 1000e12 * PLATFORM_FACTORS["cuda"].prefill_efficiency / (2 * 69_503_033_344)
    per_request = 4096 * 2 * 8 * 128 * 2 * 80  # GQA heads split over TP8: one copy on the wire
    gbps = tokens_s / 4096 * per_request * 8 / 1e9  # ≈ 70 Gb/s
    assert net.kv_transfer.kv_gbps_per_node == pytest.approx(gbps)
    assert net.kv_transfer.share == pytest.approx(gbps / 100) and gbps / 100 > 0.5
    check = _codes(net)["network.kv_transfer_share_high"]
    assert check.severity == Severity.WARNING
    assert "FP8" in check.fix_en


def test_service_nics_without_a_switch_are_the_customer_network():
    server = gpu_server((NicSpec("roce", 8, 400, "scale_out"), NicSpec("ethernet", 2, 10, "service")))
    req = request(
        server,
        TopologySpec(TopologyKind.SINGLE, 2, ParallelSpec(8, 2)),
        switches=reference.switches("inspur-x400"),
    )
    net = _net(req)
    service = _row(net, "service")
    assert service.switches == 0 and "customer" in service.note_en
    assert "network.no_switch_for_fabric" not in _codes(net)
