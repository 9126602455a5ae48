"""Figures of power (engine/power.py): server, IT and facility load, and A/B feed sizing.

The figures of one A/B pair of feeds are defined once, under a ``{prefix}``: the
deployment's two methods (``power.feed.seed``, ``power.feed.recommended``), each
serving group's feeds (``power.group.<group>.feed``) and each rack's
(``racks.<rack>.feed``, placed by engine/racks.py) are all sized by
``power._size_feed``.  A label's ``{method_en}``/``{method_zh}`` names the sizing method.
"""

from ..book import FigureDef, SourceKind, Unit

#: One feed (A or B) of a pair; ``prefix`` is the key the feeds are sized under.
FEED_DEFS = (
    FigureDef(
        "{prefix}.current_amps",
        Unit.AMPS,
        "Full-load current per feed, {method_en}",
        "每路满载电流，{method_zh}",
        formulas={
            "three_phase": "round(P_kw * 1000 / (3 ** 0.5 * V_LL * PF), 1)",
            "single_phase": "round(P_kw * 1000 / (V_LL * PF), 1)",
        },
        context=("phases",),
    ),
    FigureDef(
        "{prefix}.required_amps",
        Unit.AMPS,
        "Required breaker rating",
        "所需断路器额定电流",
        "current_amps / derating",
        approximate="current_amps is shown rounded to 0.1 A; the rating divides the unrounded current",
    ),
    FigureDef(
        "{prefix}.breaker_amps",
        Unit.AMPS,
        "Breaker per feed (A and B)",
        "每路断路器（A/B 路）",
        formulas={
            "one_circuit": "next rating on the breaker ladder ≥ {required_amps}",
            "split": "next rating on the breaker ladder ≥ {required_amps} ÷ {circuits}",
        },
        context=("circuits", "largest_amps"),
    ),
    FigureDef(
        "{prefix}.utilisation",
        Unit.RATIO,
        "Breaker loading at full load",
        "满载时断路器负载率",
        "current_amps / (breaker_amps * circuits)",
    ),
    FigureDef(
        "{prefix}.load_kw",
        Unit.KW,
        "Load per feed, {method_en}",
        "每路负载，{method_zh}",
        "load_kw",
    ),
    FigureDef("{prefix}.power_factor", Unit.NONE, "Power factor", "功率因数", source=SourceKind.ASSUMED),
    FigureDef(
        "{prefix}.derating",
        Unit.NONE,
        "Continuous-load derating",
        "持续负载降额系数",
        source=SourceKind.PUBLIC,
    ),
    FigureDef(
        "{prefix}.circuits",
        Unit.NONE,
        "Parallel circuits per feed",
        "每路并联回路数",
        "max(1, ceil(required_amps / largest_amps))",
    ),
)

DEFS = (
    *FEED_DEFS,
    FigureDef(
        "power.server.max_input_kw",
        Unit.KW,
        "Maximum input per server",
        "单机最大输入功率",
        source=SourceKind.INPUT,
    ),
    FigureDef(
        "power.server.design_kw",
        Unit.KW,
        "Design load per server",
        "单机设计负载",
        "max_input_kw * typical_load_factor",
    ),
    FigureDef(
        "power.servers.max_kw",
        Unit.KW,
        "Servers, maximum input",
        "服务器总功耗（最大输入）",
        "nodes * max_input_kw",
    ),
    FigureDef(
        "power.switches.max_kw",
        Unit.KW,
        "Switches",
        "交换机功耗",
        "Σ power of the {switches} (network module)",
    ),
    FigureDef(
        "power.switches.shared_kw",
        Unit.KW,
        "Switches shared by several groups",
        "多个集群共用的交换机功耗",
        "max(0, switches_kw - attributed_kw)",
    ),
    FigureDef(
        "power.it.max_kw",
        Unit.KW,
        "IT load (servers + switches)",
        "IT 负载（服务器 + 交换机）",
        "servers_kw + switches_kw",
    ),
    FigureDef(
        "power.it.design_kw",
        Unit.KW,
        "IT design load",
        "IT 设计负载",
        "servers_kw * typical_load_factor + switches_kw",
    ),
    FigureDef("power.pue", Unit.NONE, "PUE", "PUE", source=SourceKind.ASSUMED),
    FigureDef(
        "power.facility.max_kw",
        Unit.KW,
        "Facility load at maximum input",
        "机房总负载（最大输入）",
        "it_kw * pue",
    ),
    FigureDef(
        "power.facility.design_kw",
        Unit.KW,
        "Facility design load",
        "机房设计负载",
        "it_design_kw * pue",
    ),
    FigureDef(
        "power.group.{group}.servers_kw",
        Unit.KW,
        "{group_en}: servers",
        "{group_zh}：服务器功耗",
        "nodes * max_input_kw",
    ),
    FigureDef(
        "power.group.{group}.it_kw",
        Unit.KW,
        "{group_en}: IT load",
        "{group_zh}：IT 负载",
        "servers_kw + switches_kw",
    ),
)
