"""Figures of the network: fabrics, ports, switches, optics, cables, cross-node links and P→D KV
transfer (engine/network.py).

A fabric row's figures are keyed ``network.<role>.<fabric>.<scope>.*``: the role (scale_up,
scale_out, service, storage, management, oob), the NIC fabric (lingqu, roce, …) and the groups the row serves
(``all``, ``cluster``, ``prefill+decode``, …).
"""

from ..book import FigureDef, SourceKind, Unit

ROW = "network.{role}.{fabric}.{scope}"

DEFS = (
    # ---------------------------------------------------------------- one fabric row
    FigureDef(
        f"{ROW}.cabled_per_node",
        Unit.COUNT_PORTS,
        "{fabric} ports cabled per node",
        "{role_zh} 每节点接入端口",
        formulas={
            # scale-up and scale-out: one port per accelerator package (rail-optimised, one plane per package)
            "rail": "min(ports_on_server, packages)",
            # service and management: every port of the NIC group
            "all": "ports_on_server",
            # one node (or one node of a pair with separate switches): no fabric between nodes
            "none": "0 of {ports_on_server}: no fabric between the nodes",
        },
        context=("packages",),
        source=SourceKind.INPUT,
    ),
    FigureDef(
        f"{ROW}.ports_needed",
        Unit.COUNT_PORTS,
        "{fabric} ({scope}) switch ports",
        "{role_zh}（{scope}）交换机端口",
        "nodes * cabled_per_node",
    ),
    # Every port cabled to the plane's switches: the servers', the other devices' (gateways, the
    # storage system, switches' management ports) and the links to the customer's network.
    FigureDef(
        f"{ROW}.ports_used",
        Unit.COUNT_PORTS,
        "{fabric} ({scope}) switch ports used",
        "{role_zh}（{scope}）交换机已用端口",
        "ports + attached + external_uplinks + 2 * uplinks",
    ),
    # Headroom: one spare port per 16 used (network.spare_ports), kept free on the plane's switches.
    FigureDef(
        f"{ROW}.spare_ports",
        Unit.COUNT_PORTS,
        "{fabric} ({scope}) spare switch ports",
        "{role_zh}（{scope}）预留空闲端口",
        "-(-used // 16)",
        formulas={
            # rail-optimised: each switch keeps its own spare (one per 16 of its ports)
            "rails": "one per 16 of the {used} ports used, on each of the {switches} switches",
        },
        context=("switches",),
        source=SourceKind.ASSUMED,
    ),
    # With P ports per switch, sized on the ports used plus the spare (network.size_plane): one
    # switch if they fit; a pair for the service and storage planes (M-LAG); whole rails per switch
    # for a rail-optimised back-end fabric; otherwise a two-tier leaf/spine with half of every leaf's
    # ports facing down, leaves = ceil(need ÷ (P/2)), spines = ceil(leaves × P/2 ÷ P).
    FigureDef(
        f"{ROW}.switches",
        Unit.NONE,
        "{switch} switches ({scope})",
        "{switch} 交换机（{scope}）",
        "leaves + spines if spines else (1 if 0 < need <= P else 0)",
        formulas={
            "pair": "2: a pair (M-LAG) of {P}-port switches for {need} ports, every node on both",
            "rails": "ceil({rails} rails ÷ rails per {P}-port switch with their spare), {need} ports",
        },
        context=("rails", "leaves", "spines"),
    ),
    FigureDef(
        f"{ROW}.optics",
        Unit.NONE,
        "Optics ({fabric}, {scope})",
        "光模块（{fabric}，{scope}）",
        # one transceiver at each end of every link (ports used + leaf uplinks)
        "2 * (ports + uplinks)",
        formulas={
            "copper": "0: the {ports} + {uplinks} links are copper (Cat6, GE), no transceivers",
            "unswitched": "0: no switch in the plan for the {ports} + {uplinks} links",
        },
        context=("link_gbps",),
    ),
    # ---------------------------------------------------------------- the whole deployment
    FigureDef(
        "network.switches.count",
        Unit.NONE,
        "Switches",
        "交换机数量",
        "switches",
        terms="switches",
    ),
    FigureDef(
        "network.switches.units",
        Unit.RACK_UNITS,
        "Switch rack units",
        "交换机占用 U 数",
        "rack_units",
        terms="rack_units",
    ),
    FigureDef(
        "network.switches.kw",
        Unit.KW,
        "Switch power",
        "交换机功耗",
        "round(kw, 3)",
        terms="kw",
    ),
    FigureDef(
        "network.optics",
        Unit.NONE,
        "400G-class optical transceivers",
        "400G 级光模块数量",
        # 400G-class transceivers; slower ones (QSFP28/QSFP56/SFP28) are counted by media code
        "optics - optics_below_400g",
        terms="optics",
    ),
    FigureDef(
        "network.cables",
        Unit.NONE,
        "Cables (fibres)",
        "线缆数量",
        "cables",
        terms="cables",
    ),
    FigureDef(
        "network.cross_node.{group}.link_gbps",
        Unit.GBPS,
        "{group_en}: cross-node link speed",
        "{group_zh}：跨节点链路速率",
        "min(nic_port_gbps, switch_port_gbps)",
        context=("fabric", "switch_fabric", "rdma"),
        source=SourceKind.SEED,
    ),
    FigureDef(
        "network.seed.switches.{fabric}",
        Unit.NONE,
        "Seed: {fabric} switches",
        "种子方案：{fabric} 交换机",
        "seed_switches",
        source=SourceKind.SEED,
    ),
    # ---------------------------------------------------------------- P→D KV transfer (xPyD)
    FigureDef(
        "network.kv_transfer.kv_bytes_per_token",
        Unit.BYTES,
        "KV bytes per token (one copy)",
        "每 token KV 字节数（单份）",
        formulas={
            "dense": "(kv_lora_rank + qk_rope_head_dim) * bytes * mla_layers"
            " + 2 * max(1, kv_heads) * head_dim * bytes * gqa_layers",
            # DeepSeek sparse attention: the latent and the indexer's key per MLA layer, as the engine
            # lays them out (engine_versions.dsa_layer_bytes)
            "dsa": "mla_layer_bytes * mla_layers + 2 * max(1, kv_heads) * head_dim * bytes * gqa_layers",
        },
    ),
    FigureDef(
        "network.kv_transfer.state_bytes_per_request",
        Unit.BYTES,
        "Linear-attention state per request",
        "每请求线性注意力状态",
        "linear_layers * (heads * head_dim * head_dim * state_dtype_bytes"
        " + max(conv_kernel - 1, 0) * conv_dim * conv_dtype_bytes)",
    ),
    FigureDef(
        "network.kv_transfer.bytes_per_request",
        Unit.BYTES,
        "KV moved P→D per request",
        "每请求 P→D 传输 KV",
        # on the wire the MLA latent counts once per TP rank (every rank holds and sends it)
        "input_tokens * wire_bytes_per_token + window_tokens * sliding_bytes_per_token + state_bytes",
        context=("tp",),
    ),
    FigureDef(
        "network.kv_transfer.link_gbps_per_node",
        Unit.GBPS,
        "Scale-out bandwidth per prefill node",
        "每个预填充节点的参数面带宽",
        "ports * link_gbps",
        context=("fabric",),
    ),
    FigureDef(
        "network.kv_transfer.gbps_per_node",
        Unit.GBPS,
        "KV transfer per prefill node at full prefill rate",
        "预填充节点满负荷时的 KV 传输速率",
        "round(devices * tflops * 1e12 * prefill_mfu / (2 * active_params)"
        " / (input_tokens * max(1 - prefix_cache_hit_rate, 0.05)) * bytes_per_request * 8 / 1e9, 2)",
        context=("precision", "requests_per_s"),
        source=SourceKind.ASSUMED,
    ),
    FigureDef(
        "network.kv_transfer.share",
        Unit.RATIO,
        "KV transfer share of scale-out bandwidth",
        "KV 传输占参数面带宽比例",
        "round(kv_gbps / link_gbps, 4)",
    ),
)
