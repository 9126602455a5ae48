"""Checks of the network (engine/network.py): fabrics, switches, cross-node traffic and KV transfer."""

from ...types import Severity
from ..book import CheckDef, Fix, Variant

#: Switch counts that differ from the seed's, and why: more switches than the seed means the seed
#: counted larger switches than the catalog's; fewer means the seed counted spares or smaller switches,
#: while the plan sizes each fabric by the ports it needs.
SEED_DIFF_EN = "Switch counts differ from the seed ({seed}): {diffs_en}. "
SEED_DIFF_ZH = "交换机数量与种子方案（{seed}）不同：{diffs_zh}。"
SEED_MORE_EN = "where the plan has more, the seed's figures imply switches with more ports than the catalog's"
SEED_MORE_ZH = "本方案台数更多之处，说明种子方案按单台端口更多的交换机计算"
SEED_FEWER_EN = (
    "where the plan has fewer, it sizes the fabric by the ports it needs and the seed counts spares or "
    "smaller switches"
)
SEED_FEWER_ZH = "本方案台数更少之处，本方案按实际所需端口数配置，种子方案计入了备用或更小端口数的交换机"
SEED_PORTS_EN = " (ports per switch are assumed until confirmed with the vendor)."
SEED_PORTS_ZH = "（端口数为假设值，需与厂商确认）。"

#: The P→D KV transfer at the prefill nodes' full rate, as both KV-transfer checks say it.
KV_TRANSFER_EN = "P→D KV transfer at the prefill nodes' full rate: {gbps:number:1} Gb/s per node ({request_mb:number:1} MB per {input_tokens}-token request × {req_s:number:2} req/s), {share:.1%} of {link:,} Gb/s scale-out per node."
KV_TRANSFER_ZH = "预填充节点满负荷时 P→D 的 KV 传输：每节点 {gbps:number:1} Gb/s（每个 {input_tokens} token 请求 {request_mb:number:1} MB × {req_s:number:2} 请求/秒），占每节点 {link:,} Gb/s 参数面带宽的 {share:.1%}。"

DEFS = (
    CheckDef(
        "network.no_switch_for_fabric",
        "network",
        Severity.WARNING,
        "No switch model for the {fabric} {role} fabric ({ports_needed} ports): the plan counts no switches for it.",
        "{plane_zh}（{fabric_zh}，{ports_needed} 个端口）未选交换机型号，未计入交换机。",
        field="switches",
        fix=Fix("add a {fabric} switch to the plan", "添加{fabric_zh}交换机"),
        source="docs/domain.md §7",
        customer=True,
    ),
    CheckDef(
        "network.switch_count_vs_seed",
        "network",
        # A note, not a warning: the plan counts the switches each fabric's ports need; how the source
        # documents counted is the engineer's reference, not something to act on or accept.
        Severity.OK,
        SEED_DIFF_EN + SEED_MORE_EN.capitalize() + "; " + SEED_FEWER_EN + SEED_PORTS_EN,
        SEED_DIFF_ZH + SEED_MORE_ZH + "；" + SEED_FEWER_ZH + SEED_PORTS_ZH,
        field="switches",
        fixes={
            "confirm_ports": Fix("confirm the switch port counts with the vendor", "与厂商确认交换机端口数")
        },
        variants={
            "more": Variant(
                SEED_DIFF_EN + SEED_MORE_EN.capitalize() + SEED_PORTS_EN,
                SEED_DIFF_ZH + SEED_MORE_ZH + SEED_PORTS_ZH,
            ),
            "fewer": Variant(
                SEED_DIFF_EN + SEED_FEWER_EN.capitalize() + SEED_PORTS_EN,
                SEED_DIFF_ZH + SEED_FEWER_ZH + SEED_PORTS_ZH,
            ),
            "match": Variant(
                "Switch counts match the seed ({seed}).",
                "交换机数量与种子方案一致（{seed}）。",
                severity=Severity.OK,
                field="",
            ),
        },
        source="the seed's switch counts (S1, docs/domain.md §7 and §9)",
    ),
    CheckDef(
        "network.cross_node_fabric_insufficient",
        "network",
        Severity.ERROR,
        "Cross-node expert/tensor-parallel traffic: {links_en}. Nodes must be interconnected through {min_gbps}GE LingQu or RoCE; ordinary Ethernet cannot carry the EP all-to-all between nodes.",
        "跨节点专家并行/张量并行流量：{links_zh}。节点间必须通过 {min_gbps}GE 灵衢或 RoCE 互联，普通以太网无法满足 EP 的跨节点通信需求。",
        field="switches",
        fix=Fix(
            "use {min_gbps}GE RoCE (or LingQu / InfiniBand) NICs and switches for the parameter network",
            "参数面改用 {min_gbps}GE RoCE（或灵衢/InfiniBand）网卡与交换机",
        ),
        source="[S1] §6.3: 400GE LingQu or RoCE between nodes",
        customer=True,
    ),
    CheckDef(
        "network.cross_node_fabric_below_400g",
        "network",
        Severity.WARNING,
        "Cross-node traffic: {links_en}. RDMA below the seed's {min_gbps}GE: it runs (the public vLLM-Ascend 8 × Atlas 800 A2 deployment uses 200GE RoCE) but the EP all-to-all will be slower; confirm throughput by load test.",
        "跨节点流量：{links_zh}。RDMA 速率低于种子方案要求的 {min_gbps}GE：可以运行（vLLM-Ascend 公开教程的 8 台 Atlas 800 A2 即用 200GE RoCE），但 EP 跨节点通信更慢，吞吐需压测确认。",
        field="switches",
        fix=Fix(
            "use {min_gbps}GE RoCE (or LingQu / InfiniBand) NICs and switches for the parameter network",
            "参数面改用 {min_gbps}GE RoCE（或灵衢/InfiniBand）网卡与交换机",
        ),
        source="[S1] §6.3; the public vLLM-Ascend 8 × Atlas 800 A2 deployment (200GE RoCE)",
        customer=True,
    ),
    CheckDef(
        "network.cross_node_fabric_ok",
        "network",
        Severity.OK,
        "Cross-node traffic: {links_en}.",
        "跨节点流量：{links_zh}。",
        source="[S1] §6.3",
    ),
    CheckDef(
        "network.fabric_exceeds_two_tier",
        "network",
        Severity.WARNING,
        "{role} {fabric} ({scope}): {leaves} leaves exceed the {ports_per_switch} ports of a spine; a two-tier fabric cannot reach them all.",
        "{plane_zh} {fabric}（{scope}）：叶交换机 {leaves} 台，超过脊交换机端口数 {ports_per_switch}，两层组网无法全互联。",
        field="switches",
        fix=Fix("use a larger switch model or a three-tier fabric", "选用端口更多的交换机或三层组网"),
        source="docs/domain.md §7 (leaf-spine: leaves ≤ spine ports)",
        customer=True,
    ),
    CheckDef(
        "network.pair_shares_switch",
        "network",
        Severity.WARNING,
        "The primary and standby clusters share {shared} switch(es) ({names}): a single switch failure stops both, which defeats the hot standby.",
        "主备两个集群共用 {shared} 台交换机（{names_zh}），单台交换机故障会同时中断主备，削弱主备高可用。",
        field="topology.pair_switches",
        fix=Fix(
            "give each cluster its own switches (priced in the plan once applied), or pair the shared switches (M-LAG / dual-homing)",
            "主备集群各配独立交换机（应用后方案按独立交换机计价），或对共用交换机做堆叠/M-LAG 双归",
            change={"topology.pair_switches": "pair_switches"},
        ),
        source="docs/domain.md §4 (hot standby)",
        customer=True,
    ),
    CheckDef(
        "network.tenants_share_switch",
        "network",
        Severity.WARNING,
        "The two tenant clusters share {shared} parameter-plane switch(es) ({names}): a switch failure stops both tenants, and their traffic crosses the same switch.",
        "两个租户集群共用 {shared} 台参数面交换机（{names_zh}）：单台交换机故障会同时中断两个租户，且两者流量经过同一交换机。",
        field="topology.pair_switches",
        fix=Fix(
            "give each tenant cluster its own parameter-plane switches (priced in the plan once applied)",
            "为每个租户集群配置独立的参数面交换机（应用后方案按独立交换机计价）",
            change={"topology.pair_switches": "pair_switches"},
        ),
        source="docs/domain.md §4 (tenant pair)",
        customer=True,
    ),
    CheckDef(
        "network.tenants_share_data_switch",
        "network",
        Severity.WARNING,
        "The two tenant clusters share {shared} service or storage switch(es) ({names}): a switch failure stops both tenants' requests or storage access. No one-click fix: the plan separates the parameter plane per tenant; separate service and storage switches are added to the bill of materials by hand, or the sharing is accepted with a reason.",
        "两个租户集群共用 {shared} 台业务面或存储面交换机（{names_zh}）：单台交换机故障会同时中断两个租户的业务请求或存储访问。无一键修改：方案可按租户独立配置的只有参数面交换机；业务面、存储面交换机如需按租户独立，请手工加入物料清单，或注明理由后接受共用。",
        field="switches",
        source="docs/domain.md §4 (tenant pair)",
        customer=True,
    ),
    CheckDef(
        "network.tenants_share_management",
        "network",
        Severity.OK,
        "The tenants share the management switch: it carries the operator's out-of-band management, no tenant traffic.",
        "两个租户共用管理网交换机：该交换机只承载运维带外管理流量，不承载租户业务流量。",
        source="docs/domain.md §4 (tenant pair)",
    ),
    CheckDef(
        "network.kv_transfer_share_high",
        "network",
        Severity.WARNING,
        KV_TRANSFER_EN + " KV transfer would crowd out the EP traffic; decode will wait for KV.",
        KV_TRANSFER_ZH + " KV 传输将挤占专家并行通信，解码节点将等待 KV。",
        field="switches",
        fix=Fix(
            "add scale-out ports per node, use a faster fabric, or an FP8 KV cache",
            "增加每节点参数面端口、采用更高速组网，或使用 FP8 KV 缓存",
        ),
        source="docs/performance.md §1 (prefill rate); docs/domain.md §7",
        customer=True,
    ),
    CheckDef(
        "network.kv_transfer_ok",
        "network",
        Severity.OK,
        KV_TRANSFER_EN,
        KV_TRANSFER_ZH,
        source="docs/performance.md §1 (prefill rate); docs/domain.md §7",
    ),
    CheckDef(
        "network.kv_transfer_no_fabric",
        "network",
        Severity.ERROR,
        "Prefill and decode nodes have no switched scale-out fabric to move KV between them.",
        "预填充与解码节点之间没有参数面交换网络，无法传输 KV。",
        field="switches",
        fix=Fix("add a RoCE switch for the parameter network", "为参数面添加 RoCE 交换机"),
        source="docs/domain.md §4 (P→D KV transfer over the scale-out fabric)",
        customer=True,
    ),
)
