"""Figures of rack placement (engine/racks.py).

Each rack's A/B feeds (``racks.<rack>.feed.*``) are the feed figures of the power
catalogue, sized by ``power.rack_feed``; they are not defined again here.
"""

from ..book import FigureDef, SourceKind, Unit

DEFS = (
    FigureDef(
        "racks.{rack}.heat_btu_h",
        Unit.BTU_PER_H,
        "Rack {rack}: heat load",
        "机柜 {rack}：散热负荷",
        "round(kw * 3412.14)",
    ),
    FigureDef(
        "racks.heat_btu_h",
        Unit.BTU_PER_H,
        "Heat load of all racks",
        "全部机柜散热负荷",
        "round(kw * 3412.14)",
    ),
    # Each feed's PDU: one socket per PSU on that feed (a server's PSUs split over A and B), one per switch.
    FigureDef(
        "racks.{rack}.pdu_sockets",
        Unit.NONE,
        "Rack {rack}: PDU sockets per feed",
        "机柜 {rack}：每路 PDU 插座数",
        "servers * psus_per_feed + switches",
    ),
    FigureDef(
        "racks.cables.{medium}.{length}",
        Unit.NONE,
        "Cables ({medium}, {length}, ≤ {metres} m)",
        "线缆（{medium}，{length}，≤ {metres} m）",
        "links",
        terms="links",
        source=SourceKind.ASSUMED,
    ),
    FigureDef(
        "racks.{rack}.kw",
        Unit.KW,
        "Rack {rack}: maximum input",
        "机柜 {rack}：最大输入功率",
        "Σ maximum input of {devices}",
        itemised=("devices",),
    ),
    FigureDef(
        "racks.{rack}.units_used",
        Unit.RACK_UNITS,
        "Rack {rack}: U used",
        "机柜 {rack}：已用 U 数",
        "server_units + switch_units + pdu_units",
        context=("rack_units",),
    ),
    FigureDef(
        "racks.servers_per_rack",
        Unit.NONE,
        "Servers per rack",
        "每机柜服务器数",
        formulas={
            "space_and_power": "max(1, min(floor(usable_u / server_u), floor(rack_max_kw / server_kw)))",
            "space": "max(1, floor(usable_u / server_u))",
        },
        context=("rack_max_kw", "server_kw"),
    ),
    FigureDef(
        "racks.count",
        Unit.NONE,
        "Racks",
        "机柜数量",
        "compute_racks + network_racks",
    ),
    FigureDef(
        "racks.max_kw",
        Unit.KW,
        "Highest rack load",
        "单机柜最大功耗",
        "max over {racks}",
        itemised=("racks",),
    ),
    FigureDef(
        "racks.units_used",
        Unit.RACK_UNITS,
        "Rack units used",
        "已用 U 数",
        "server_units + switch_units + pdu_units",
        context=("racks",),
    ),
    FigureDef(
        "racks.cooling_limit_kw",
        Unit.KW,
        "Cooling limit per rack ({cooling})",
        "单机柜散热上限",
        source=SourceKind.ASSUMED,
    ),
    FigureDef("racks.seed.count", Unit.NONE, "Seed: racks", "种子方案：机柜数", source=SourceKind.SEED),
    FigureDef(
        "racks.seed.units",
        Unit.RACK_UNITS,
        "Seed: rack units incl. switches and PDUs",
        "种子方案：机柜空间（含交换机、PDU）",
        source=SourceKind.SEED,
    ),
    # Weight and floor loading (the facilities team's check of the hall floor): every device's weight
    # from the catalog (the vendor's specification), the empty cabinet with its PDUs, over the rack's
    # footprint (width × depth).  docs/domain.md §7.
    FigureDef(
        "racks.{rack}.weight_kg",
        Unit.KG,
        "Rack {rack}: weight",
        "机柜 {rack}：重量",
        "round(rack_kg + servers * server_kg + switches_kg, 1)",
    ),
    FigureDef(
        "racks.{rack}.floor_load_kg_m2",
        Unit.KG_PER_M2,
        "Rack {rack}: floor loading",
        "机柜 {rack}：地面承重负荷",
        "round(weight_kg / footprint_m2)",
    ),
    FigureDef(
        "racks.footprint_m2",
        Unit.SQUARE_METRES,
        "Rack footprint",
        "机柜占地面积",
        "round(width_mm * depth_mm / 1000000, 3)",
    ),
    FigureDef(
        "racks.weight_kg",
        Unit.KG,
        "Weight of all racks",
        "全部机柜总重量",
        "Σ weight of {racks}",
        itemised=("racks",),
    ),
    FigureDef(
        "racks.max_weight_kg",
        Unit.KG,
        "Heaviest rack",
        "单机柜最大重量",
        "max over {racks}",
        itemised=("racks",),
    ),
    FigureDef(
        "racks.max_floor_load_kg_m2",
        Unit.KG_PER_M2,
        "Highest floor loading",
        "单机柜最大地面承重负荷",
        "max over {racks}",
        itemised=("racks",),
    ),
    FigureDef(
        "racks.floor_rating_kg_m2",
        Unit.KG_PER_M2,
        "Floor rating of the hall",
        "机房地面承重能力",
        source=SourceKind.PUBLIC,
    ),
)
