"""Checks of racks and cooling (engine/racks.py): the server in the rack, the site's cooling limit per rack,
serving groups in their own racks, the rack count against the seed."""

from ...types import Severity
from ..book import CheckDef, Fix, Variant

#: The rack count against the seed's, before the reason it differs.
DIFFERS_EN = "{racks} racks ({units}U used) where the seed ({seed}) plans {seed_racks}: "
DIFFERS_ZH = "本方案 {racks} 个机柜（已用 {units}U），种子方案（{seed}）为 {seed_racks} 个："
CONTAINMENT_EN = "use hot/cold-aisle containment or liquid cooling"
CONTAINMENT_ZH = "采用冷/热通道封闭或液冷"

DEFS = (
    CheckDef(
        "racks.floor_loading",
        "racks",
        Severity.OK,
        "The heaviest rack loads the floor with {worst:number:0} kg/m², within the hall's rating of "
        "{rating:number:0} kg/m².",
        "单机柜最大地面承重负荷 {worst:number:0} kg/m²，在机房地面承重能力 {rating:number:0} kg/m² 以内。",
        fixes={
            "spread": Fix(
                "confirm the floor rating with the facilities team; spread the load (fewer servers per rack, "
                "load-spreading plates or a reinforced plinth)",
                "与机房方确认地面承重；分散荷载（减少每柜服务器数、加装承重底座或钢结构加固）",
            )
        },
        variants={
            "over": Variant(
                "{n} rack(s) ({names}) load the floor with up to {worst:number:0} kg/m², above the hall's "
                "rating of {rating:number:0} kg/m².",
                "{n} 个机柜（{names}）地面承重负荷最高 {worst:number:0} kg/m²，超过机房地面承重能力 "
                "{rating:number:0} kg/m²。",
                severity=Severity.WARNING,
            )
        },
        source="docs/domain.md §7 (floor loading against the hall's rating)",
        customer=True,
    ),
    CheckDef(
        "racks.server_exceeds_rack",
        "racks",
        Severity.ERROR,
        "{server_en} does not fit the {rack_en}: {problems_en}.",
        "{server_zh} 无法装入 {rack_zh}：{problems_zh}。",
        field="rack",
        fix=Fix("choose a taller or higher-power rack", "选用更高或功率更大的机柜"),
        source="the rack and server records (catalog)",
        customer=True,
    ),
    CheckDef(
        "cooling.rack_exceeds_air_limit",
        "cooling",
        Severity.WARNING,
        "{hot} rack(s) ({names}) draw up to {worst_kw:number:1} kW, beyond the site's {cooling_en} limit "
        "of {limit:g} kW per rack. 35–40 kW per rack needs hot/cold-aisle containment or liquid cooling.",
        "{hot} 个机柜（{names}）单柜功耗最高 {worst_kw:number:1} kW，超过机房{cooling_zh}单柜上限 {limit:g} kW；"
        "单柜 35–40 kW 需要冷/热通道封闭或液冷。",
        field="rack.cooling",
        fixes={
            "containment": Fix(CONTAINMENT_EN, CONTAINMENT_ZH),
            "containment_or_cap": Fix(
                CONTAINMENT_EN
                + ", or cap racks at {limit:g} kW ({per} {per:one:server:servers} per rack → {alt_racks} racks)",
                CONTAINMENT_ZH
                + "，或将单机柜功耗限制在 {limit:g} kW（每柜 {per} 台服务器 → {alt_racks} 个机柜）",
                change={"rack.max_kw": "limit"},
            ),
        },
        source="docs/domain.md §7 (≈20–25 kW per rack air-cooled; 35–40 kW needs containment or liquid cooling)",
        customer=True,
    ),
    CheckDef(
        "racks.groups_share_rack",
        "racks",
        Severity.ERROR,
        "Serving groups share racks {shared} ({desc_en}).",
        "不同集群共用机柜 {shared}（{desc_zh}）。",
        source="docs/domain.md §4 (each cluster its own racks and feeds)",
        customer=True,
    ),
    CheckDef(
        "racks.groups_separate",
        "racks",
        Severity.OK,
        "Each serving group has its own racks and A/B feeds ({desc_en}).",
        "各集群独立机柜、独立 A/B 路供电（{desc_zh}）。",
        source="docs/domain.md §4",
    ),
    CheckDef(
        "racks.count_vs_seed",
        "racks",
        # Every variant is a note: the rack count follows from the rack type and the power limit the
        # engineer chose; the source documents' count is a reference, not a finding to act on.
        Severity.OK,
        "{racks} racks, {units}U used (incl. switches and PDUs), as in the seed ({seed}: "
        "≈{seed_units}U, {seed_racks} racks).",
        "{racks} 个机柜，已用 {units}U（含交换机、PDU），与种子方案一致（{seed}：约 "
        "{seed_units}U，{seed_racks} 个机柜）。",
        fixes={
            "raise_limit": Fix(
                "raise the rack power limit if the site allows",
                "如机房允许，提高机柜功率上限",
                field="rack.max_kw",
            )
        },
        variants={
            "power_limit": Variant(
                DIFFERS_EN + "the rack's power limit of {max_kw:g} kW holds {by_kw} server(s) of "
                "{server_kw:g} kW where its space holds {by_u}.",
                DIFFERS_ZH + "机柜功率上限 {max_kw:g} kW 只能容纳 {by_kw} 台 {server_kw:g} kW 的服务器"
                "（按空间可放 {by_u} 台）。",
            ),
            "space": Variant(
                DIFFERS_EN + "{per_rack} server(s) per rack fit in {usable}U usable, with the switches and "
                "PDUs placed as well.",
                DIFFERS_ZH + "每柜可用 {usable}U 只能容纳 {per_rack} 台服务器（另需放置交换机与 PDU）。",
            ),
            "denser": Variant(
                DIFFERS_EN
                + "this rack type holds {per_rack} server(s) per rack, more than the seed assumes.",
                DIFFERS_ZH + "该机柜型号每柜可容纳 {per_rack} 台服务器，多于种子方案的假设。",
            ),
        },
        source="the seed's rack counts (S1, docs/domain.md §7)",
    ),
)
