"""Figures of the parallel layout (engine/layout.py)."""

from ..book import FigureDef, SourceKind, Unit

DEFS = (
    FigureDef("layout.nodes", Unit.COUNT_NODES, "Nodes", "节点数", "nodes", source=SourceKind.INPUT),
    FigureDef(
        "layout.devices_per_node",
        Unit.COUNT_DEVICES,
        "Logical devices per node",
        "每节点逻辑卡数",
        "packages * logical_per_package",
    ),
    FigureDef(
        "layout.total_devices",
        Unit.COUNT_DEVICES,
        "Logical devices in the deployment",
        "部署总卡数",
        "nodes * devices_per_node",
    ),
    FigureDef(
        "layout.scale_up_domain_devices",
        Unit.COUNT_DEVICES,
        "Scale-up domain",
        "高速互联域",
        "scale_up_domain_devices or logical_devices",
        context=("scale_up_fabric",),
    ),
    FigureDef(
        "layout.{group}.devices",
        Unit.COUNT_DEVICES,
        "Devices of {group_en}",
        "{group_zh}卡数",
        "nodes * devices_per_node",
    ),
    FigureDef(
        "layout.{group}.parallel",
        Unit.NONE,
        "Parallel layout of {group_en}",
        "{group_zh}并行方式",
        "EP = {tp} × {dp} with --enable-expert-parallel",
        context=("pp", "ep", "dp_local"),
        source=SourceKind.PUBLIC,
    ),
    FigureDef(
        "layout.{group}.experts_per_rank",
        Unit.COUNT_EXPERTS,
        "Routed experts per rank",
        "每卡路由专家数",
        "num_experts / ep",
    ),
)
