"""The auto-planner's reasons (configurator/planner/): why a server family, a shape, a serving variant or a
full plan is ruled out, and the binding constraint of a search with no candidate (docs/planner.md, reason
codes).  Each is a rejection, not a plan's check: ``planner.results.rejection`` words it through
``book.words`` and the planner's JSON carries its code, field and message in both languages.

Three definitions word a rejection whose code is another's (``rejection(…, as_code=…)``):
``planner.engine`` an engine error check passed on (code ``planner.engine.<check code>``),
``planner.projected`` a serving reason that cannot close within the nodes searched (that reason's code),
``planner.binding_constraint`` the constraint to relax first (its example family's code).
"""

from ...types import Severity
from ..book import CheckDef, Variant

SOURCE = "docs/planner.md (reason codes)"

# Who a reason is about: the server family; a node count of it; a shape (servers × nodes, topology);
# a shape with its parallel layout.
FAMILY_EN, FAMILY_ZH = "{name}: ", "{name}："
NODES_EN, NODES_ZH = "{name} × {n}: ", "{name} × {n}："
SHAPE_EN, SHAPE_ZH = "{shape_en}: ", "{shape_zh}："
LAYOUT_EN, LAYOUT_ZH = "{shape_en} ({layout}): ", "{shape_zh}（{layout}）："

NOT_IN_FORCE = "{currency} (none in force)"


def _reason(code: str, field: str, en: str, zh: str, **variants: Variant) -> CheckDef:
    return CheckDef(code, "planner", Severity.ERROR, en, zh, field=field, variants=variants, source=SOURCE)


DEFS = (
    # ------------------------------------------------------------------ the family, before any sizing
    _reason(
        "planner.not_domestic",
        "constraints.domestic_only",
        FAMILY_EN + "{accelerator} ({vendor}) is not domestic (Xinchuang) hardware.",
        FAMILY_ZH + "{accelerator}（{vendor}）不属于国产（信创）硬件。",
        no_vendor=Variant(
            FAMILY_EN + "{accelerator} (foreign vendor) is not domestic (Xinchuang) hardware.",
            FAMILY_ZH + "{accelerator}（国外厂商）不属于国产（信创）硬件。",
        ),
    ),
    _reason(
        "planner.vllm_unsupported",
        "server",
        FAMILY_EN + "vLLM does not run on {accelerator} ({why}).",
        FAMILY_ZH + "vLLM 不支持 {accelerator}（{why}）。",
        no_note=Variant(
            FAMILY_EN + "vLLM does not run on {accelerator} (not in vLLM's supported hardware).",
            FAMILY_ZH + "vLLM 不支持 {accelerator}（not in vLLM's supported hardware）。",
        ),
    ),
    _reason(
        "planner.text_only_server",
        "workload.needs_vision",
        FAMILY_EN + "serves text only (validated with --language-model-only); image input needs the "
        "vision encoder.",
        FAMILY_ZH + "仅验证了纯文本服务（--language-model-only），图片输入需要加载视觉编码器。",
    ),
    _reason(
        "planner.too_hot_for_air",
        "constraints.air_cooled_only",
        FAMILY_EN + "{server_kw:g} kW per server is over the site's air-cooling limit of {limit:g} kW "
        "per rack (or no air-cooled rack type holds it).",
        FAMILY_ZH + "单台 {server_kw:g} kW，超过机房风冷单柜上限 {limit:g} kW（或没有可容纳它的风冷机柜）。",
    ),
    _reason(
        "planner.no_rack",
        "rack",
        FAMILY_EN + "no rack type in the catalog holds a {units}U, {server_kw:g} kW server "
        "within its power and cooling limits.",
        FAMILY_ZH + "目录中没有能在功率与散热上限内容纳该服务器（{units}U，{server_kw:g} kW）的机柜。",
    ),
    _reason(
        "planner.no_price",
        "constraints.currency",
        FAMILY_EN + "no purchase price in price list {price_list}.",
        FAMILY_ZH + "价格表 {price_list} 中没有采购价格。",
        no_list=Variant(
            FAMILY_EN + f"no purchase price in price list {NOT_IN_FORCE}.",
            FAMILY_ZH + f"价格表 {NOT_IN_FORCE} 中没有采购价格。",
        ),
    ),
    _reason(
        "planner.no_lease_price",
        "constraints.purchase",
        FAMILY_EN + "no monthly lease price in price list {price_list}.",
        FAMILY_ZH + "价格表 {price_list} 中没有月租价格。",
        no_list=Variant(
            FAMILY_EN + f"no monthly lease price in price list {NOT_IN_FORCE}.",
            FAMILY_ZH + f"价格表 {NOT_IN_FORCE} 中没有月租价格。",
        ),
    ),
    # ------------------------------------------------------------------ group sizes and shapes
    _reason(
        "planner.no_valid_layout",
        "options.max_nodes",
        FAMILY_EN + "no node count up to {upto} gives a valid parallel layout for {model} ({experts} "
        "experts, {heads} heads over {devices} devices per node).",
        FAMILY_ZH
        + "1–{upto} 台内没有可行的并行方式（{experts} 个专家、{heads} 个注意力头，每节点 {devices} 卡）。",
    ),
    _reason(
        "planner.no_shape",
        "options.max_nodes",
        FAMILY_EN + "the allowed topologies need more than {max_nodes} nodes (smallest working cluster: "
        "{smallest} nodes).",
        FAMILY_ZH + "所需拓扑超过 {max_nodes} 台（最小可用集群 {smallest} 台）。",
        # At 99.9 % availability or more only primary/standby pairs are searched.
        ha=Variant(
            FAMILY_EN + "primary/standby need more than {max_nodes} nodes (smallest working cluster: "
            "{smallest} nodes).",
            FAMILY_ZH + "所需拓扑超过 {max_nodes} 台（最小可用集群 {smallest} 台）。",
        ),
    ),
    _reason(
        "planner.not_reached",
        "options.max_nodes",
        FAMILY_EN + "no deployment up to {max_nodes} nodes was found.",
        FAMILY_ZH + "{max_nodes} 台以内未找到可行部署。",
    ),
    # ------------------------------------------------------------------ memory per rank
    _reason(
        "planner.memory_short",
        "workload.context",
        NODES_EN + "memory short by {short_gb:,.1f} GB per rank ({layout}: weights {weights:gb} > usable "
        "{usable:gb} at {util:g} utilisation).",
        NODES_ZH
        + "每卡显存缺口 {short_gb:,.1f} GB（{layout}：权重 {weights:gb} > 可用 {usable:gb}，利用率 {util:g}）。",
        # Another memory error of the engine, in its own words.
        check=Variant(NODES_EN + "{message_en}", NODES_ZH + "{message_zh}"),
        # Screening a serving variant: the engine's memory error, on the shape and layout.
        layout=Variant(LAYOUT_EN + "{message_en}", LAYOUT_ZH + "{message_zh}", field="{field}"),
        unknown=Variant(NODES_EN + "memory does not fit.", NODES_ZH + "显存不足。"),
    ),
    _reason(
        "planner.sequence_does_not_fit",
        "workload.context",
        NODES_EN + "one {max_model_len:,}-token sequence does not fit: KV cache short by {short_gb:,.1f} GB "
        "per rank ({layout}).",
        NODES_ZH
        + "放不下一条 {max_model_len:,} tokens 的请求，每卡 KV 缓存缺口 {short_gb:,.1f} GB（{layout}）。",
    ),
    # ------------------------------------------------------------------ serving (and the full plan's figures)
    _reason(
        "planner.concurrency_above_capacity",
        "workload.concurrency",
        LAYOUT_EN + "{concurrency:,} concurrent requests exceed the {capacity:,} this deployment serves at "
        "once (the prefill pool or --max-num-seqs limits it).",
        LAYOUT_ZH
        + "{concurrency:,} 路并发超过本部署可同时服务的 {capacity:,} 路（受预填充能力或 --max-num-seqs 限制）。",
        kv=Variant(
            LAYOUT_EN + "{concurrency:,} concurrent requests exceed the {capacity:,} this deployment serves "
            "at once (the KV cache limits the batch).",
            LAYOUT_ZH + "{concurrency:,} 路并发超过本部署可同时服务的 {capacity:,} 路（受 KV 缓存限制）。",
        ),
    ),
    _reason(
        "planner.queueing",
        "workload.concurrency",
        LAYOUT_EN + "{concurrency:,} concurrent requests queue: the KV cache runs {batch} sequences per DP "
        "rank, {offered} offered.",
        LAYOUT_ZH
        + "{concurrency:,} 路并发需排队：每个 DP rank 受KV 缓存限制只能运行 {batch} 条，需承载 {offered} 条。",
        max_num_seqs=Variant(
            LAYOUT_EN
            + "{concurrency:,} concurrent requests queue: the --max-num-seqs runs {batch} sequences "
            "per DP rank, {offered} offered.",
            LAYOUT_ZH
            + "{concurrency:,} 路并发需排队：每个 DP rank 受 --max-num-seqs 限制只能运行 {batch} 条，"
            "需承载 {offered} 条。",
        ),
    ),
    _reason(
        "planner.no_throughput",
        "workload.concurrency",
        LAYOUT_EN + "no decode throughput.",
        LAYOUT_ZH + "无解码吞吐。",
        no_cost=Variant(LAYOUT_EN + "no cost per million tokens.", LAYOUT_ZH + "无法计算每百万 Token 成本。"),
    ),
    _reason(
        "planner.ttft_above_target",
        "workload.ttft_target_s",
        LAYOUT_EN + "TTFT {ttft_s:.2f} s over the {target:g} s target.",
        LAYOUT_ZH + "首字延迟 {ttft_s:.2f} 秒，超过目标 {target:g} 秒。",
    ),
    _reason(
        "planner.tpot_above_target",
        "workload.tpot_target_ms",
        LAYOUT_EN + "TPOT {tpot_ms:.1f} ms over the {target:g} ms target.",
        LAYOUT_ZH + "每字延迟 {tpot_ms:.1f} 毫秒，超过目标 {target:g} 毫秒。",
    ),
    _reason(
        "planner.rate_short",
        "workload.requests_per_s",
        LAYOUT_EN + "{rate:,.2f} requests/s, short of the {needed:g} requests/s needed.",
        LAYOUT_ZH + "每秒 {rate:,.2f} 个请求，低于所需 {needed:g} 个。",
        # The most the layout reaches at any batch.
        at_most=Variant(
            LAYOUT_EN + "{rate:,.2f} requests/s at most, short of the {needed:g} requests/s needed.",
            LAYOUT_ZH + "最多每秒 {rate:,.2f} 个请求，低于所需 {needed:g} 个。",
        ),
    ),
    _reason(
        "planner.projected",
        "{field}",
        "{reason_en}; about {projected:,} nodes would be needed, more than the {max_nodes} searched.",
        "{reason_zh}；约需 {projected:,} 台，超过搜索上限 {max_nodes} 台。",
    ),
    # ------------------------------------------------------------------ the full plan
    _reason(
        "planner.engine",
        "{field}",
        LAYOUT_EN + "{message_en}",
        LAYOUT_ZH + "{message_zh}",
    ),
    _reason(
        "planner.price_on_request",
        "commercial.server_unit_price",
        LAYOUT_EN + "priced on request ({lines}): no cost to hold against the budget or the lease; enter a "
        "quoted price to compare it.",
        LAYOUT_ZH + "价格待询（{lines}）：无成本可与预算或租赁比较，请录入报价后再比较。",
    ),
    # ------------------------------------------------------------------ constraints: the planned figures,
    # or (``servers``) a lower bound from the servers alone, before any plan
    _reason(
        "planner.over_budget",
        "constraints.max_capex",
        LAYOUT_EN + "capex {needed_en} is over the budget of {limit_en}.",
        LAYOUT_ZH + "采购总价 {needed_zh}，超出预算 {limit_zh}。",
        servers=Variant(
            SHAPE_EN + "the servers alone cost {needed_en}, over the budget of {limit_en}.",
            SHAPE_ZH + "仅服务器即需 {needed_zh}，超出预算 {limit_zh}。",
        ),
    ),
    _reason(
        "planner.over_lease",
        "constraints.max_lease_per_month",
        LAYOUT_EN + "rent {needed_en} a month is over the ceiling of {limit_en}.",
        LAYOUT_ZH + "月租 {needed_zh}，超出上限 {limit_zh}。",
        servers=Variant(
            SHAPE_EN + "the rent is {needed_en} a month, over the ceiling of {limit_en}.",
            SHAPE_ZH + "月租 {needed_zh}，超出上限 {limit_zh}。",
        ),
    ),
    _reason(
        "planner.over_power",
        "constraints.max_power_kw",
        LAYOUT_EN + "IT load {needed:,.1f} kW at maximum input is over the site's {limit:,.1f} kW.",
        LAYOUT_ZH + "IT 最大负载 {needed:,.1f} kW，超过机房可用 {limit:,.1f} kW。",
        servers=Variant(
            SHAPE_EN + "the servers alone draw {needed:,.1f} kW at maximum input, over the site's "
            "{limit:,.1f} kW.",
            SHAPE_ZH + "仅服务器最大输入功率即达 {needed:,.1f} kW，超过机房可用 {limit:,.1f} kW。",
        ),
    ),
    _reason(
        "planner.over_racks",
        "constraints.max_racks",
        LAYOUT_EN + "{needed} racks, over the limit of {limit}.",
        LAYOUT_ZH + "需要 {needed} 个机柜，超过上限 {limit} 个。",
        servers=Variant(
            SHAPE_EN + "needs at least {needed} {needed:one:rack:racks} ({per} {per:one:server:servers} per "
            "{rack}), over the limit of {limit}.",
            SHAPE_ZH + "至少需要 {needed} 个机柜（{rack} 每柜 {per} 台），超过上限 {limit} 个。",
        ),
    ),
    _reason(
        "planner.not_air_cooled",
        "constraints.air_cooled_only",
        LAYOUT_EN + "racks draw up to {needed:,.1f} kW, beyond air cooling ({limit:g} kW per rack).",
        LAYOUT_ZH + "单柜功耗最高 {needed:,.1f} kW，超出风冷能力（每柜 {limit:g} kW）。",
    ),
    # ------------------------------------------------------------------ a search with no candidate
    _reason(
        "planner.binding_constraint",
        "{field}",
        "{families} of {total} hardware families stop at {field}: {message_en}",
        "{total} 个硬件系列中有 {families} 个受限于 {field}：{message_zh}",
        max_capex=Variant(
            "Budget {limit_en}: no deployment that serves the workload is that cheap (the least needs "
            "{needed_en}).",
            "预算 {limit_zh}：满足业务的部署均超出预算（最少需 {needed_zh}）。",
        ),
        max_lease_per_month=Variant(
            "Monthly rent ceiling {limit_en}: the least any working deployment rents for is {needed_en} a "
            "month.",
            "月租上限 {limit_zh}：可行部署的月租最少为 {needed_zh}。",
        ),
        max_racks=Variant(
            "{limit} {limit:one:rack:racks} allowed: the smallest working deployment needs {needed}.",
            "机柜上限 {limit} 个：最小的可行部署需要 {needed} 个。",
        ),
        max_power_kw=Variant(
            "{limit} kW of site power: the smallest working deployment draws {needed:,.1f} kW.",
            "机房可用功率 {limit} kW：最小的可行部署需 {needed:,.1f} kW。",
        ),
    ),
)
