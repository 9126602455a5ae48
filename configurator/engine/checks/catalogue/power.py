"""Checks of power (engine/power.py): feeds and breakers against the site's ladder, the seed's sizing method, PSU redundancy."""

from ...types import Severity
from ..book import CheckDef, Fix

#: A feed beyond the largest breaker on the site's ladder: a rack's, or the whole deployment's.
EXCEEDS_EN = (
    "{load_kw:number:1} kW needs {required_amps:number} A per feed ({current_amps:number} A ÷ {derating:g}), "
    "more than the largest breaker on the site's ladder ({largest} A)."
)
EXCEEDS_ZH = (
    "{load_kw:number:1} kW 每路需 {required_amps:number} A（{current_amps:number} A ÷ {derating:g}），"
    "超过现场最大断路器规格 {largest} A。"
)
SPLIT_FEEDS = Fix(
    "split each of the A and B feeds into {circuits} × {breaker_amps} A circuits",
    "A/B 路各拆分为 {circuits} 个 {breaker_amps} A 独立回路",
)

DEFS = (
    CheckDef(
        "power.feed_exceeds_largest_breaker",
        "power",
        Severity.ERROR,
        "Rack {rack}: " + EXCEEDS_EN,
        "机柜 {rack}：" + EXCEEDS_ZH,
        field="site.breaker_ladder_amps",
        fix=SPLIT_FEEDS,
        source="docs/domain.md §7 (A/B feeds, the site's breaker ladder)",
        customer=True,
    ),
    CheckDef(
        "power.total_feed_split",
        "power",
        Severity.WARNING,
        "Whole deployment: " + EXCEEDS_EN,
        "整体部署：" + EXCEEDS_ZH,
        field="site.breaker_ladder_amps",
        fix=SPLIT_FEEDS,
        source="docs/domain.md §7 (A/B feeds, the site's breaker ladder)",
        customer=True,
    ),
    CheckDef(
        "power.psu_not_ab_redundant",
        "power",
        Severity.WARNING,
        "{server_en}: {psu_count} × {psu_kw:g} kW PSUs ({redundancy}) split across the A and B feeds leave {per_side} PSUs = {side_kw:number:1} kW on one feed, below the {max_input_kw:g} kW maximum input. Losing one feed may throttle or shut down the server even though each feed is sized for the full load.",
        "{server_zh}：{psu_count} 个 {psu_kw:g} kW 电源（{redundancy} 冗余）分接 A/B 路供电后，单路仅 {per_side} 个电源 = {side_kw:number:1} kW，低于最大输入功率 {max_input_kw:g} kW；即使每路按满载配电，单路失电时服务器仍可能降频或宕机。",
        field="server.psu_count",
        fix=Fix(
            "confirm the vendor's N+N (A/B) power mode or a power cap for single-feed operation",
            "与厂商确认 N+N（A/B 路）供电模式或单路供电时的功率封顶策略",
        ),
        source="the server's PSU count and rating (catalog); docs/domain.md §7",
        customer=True,
    ),
    CheckDef(
        "power.method",
        "power",
        Severity.OK,
        "Feeds sized by the recommended method: {load_kw:number:1} kW IT load ({servers_kw:number:1} kW servers + {switches_kw:number:1} kW switches) → {current_amps:number:1} A at PF {power_factor:g} → {required_amps:number:1} A after ÷ {derating:g} → {description_en}. The seed's method gives {seed_description_en} for the servers alone.",
        "配电按推荐算法：IT 负载 {load_kw:number:1} kW（服务器 {servers_kw:number:1} kW + 交换机 {switches_kw:number:1} kW）→ 功率因数 {power_factor:g} 时 {current_amps:number:1} A → ÷ {derating:g} 得 {required_amps:number:1} A → {description_zh}。种子方案算法（仅服务器）为 {seed_description_zh}。",
        source="docs/domain.md §7 and §9 (the seed's method and the recommended one)",
    ),
    CheckDef(
        "power.seed_circuit_no_headroom",
        "power",
        # A note: the plan sizes the feeds by the recommended method; the source documents'
        # tighter circuit is the engineer's reference (the breaker figure's "why?" says both).
        Severity.OK,
        "The seed's method sizes each feed at {seed_breaker} A for {current_amps:number:1} A of full load ({servers_kw:number:1} kW at {phase_en} {voltage} V, PF 1): the breaker runs at {utilisation:.0%} of its rating, while a continuous load should stay within {limit_pct} %. There is no continuous-load headroom and no margin for a power factor below 1. Recommended: {description_en} for {load_kw:number:1} kW (servers + switches) at PF {power_factor:g} ÷ {derating:g}.",
        "种子方案按功率因数 1 计算：{servers_kw:number:1} kW（{phase_zh} {voltage}V）每路满载电流 {current_amps:number:1} A，选 {seed_breaker} A 独立回路，断路器负载率 {utilisation:.0%}，而持续负载不宜超过额定电流的 {limit_pct}%，没有余量，也未考虑功率因数低于 1。推荐：{description_zh} 断路器（{load_kw:number:1} kW 含交换机，功率因数 {power_factor:g}，÷ {derating:g}）。",
        field="site.continuous_derating",
        fixes={
            "one_circuit": Fix(
                "use {rec_breaker} A breakers on each of the A and B feeds",
                "A/B 路各采用 {rec_breaker} A 断路器",
            ),
            "split": Fix(
                "use {rec_breaker} A breakers on each of the A and B feeds ({circuits} circuits per feed)",
                "A/B 路各采用 {rec_breaker} A 断路器（每路 {circuits} 个回路）",
            ),
        },
        source="docs/domain.md §9 (the seed's feeds at PF 1 without continuous-load derating)",
    ),
)
