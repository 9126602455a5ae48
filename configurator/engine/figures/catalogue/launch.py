"""Figures of the launch bundle (engine/launch/build.py)."""

from ..book import FigureDef, SourceKind, Unit

DEFS = (
    FigureDef(
        "launch.scripts",
        Unit.COUNT_FILES,
        "Start scripts in the bundle",
        "启动脚本数量",
        # one start script per node; xPyD adds the proxy (and on Ascend the memcache MetaService)
        "nodes + services",
        source=SourceKind.PUBLIC,
    ),
    FigureDef(
        "launch.engines",
        Unit.COUNT_PROCESSES,
        "vllm serve processes",
        "vllm serve 进程数",
        # aggregated: one vllm serve per node (DP ranks of a node inside it); xPyD: one per DP rank
        "nodes * engines_per_node",
        formulas={
            "pd": "prefill_nodes * prefill_engines_per_node + decode_nodes * decode_engines_per_node",
        },
        source=SourceKind.PUBLIC,
    ),
    FigureDef(
        "launch.load_wait_s",
        Unit.SECONDS,
        "How long the P/D router and the pods' start-up probes wait for an engine",
        "路由器与启动探针等待引擎就绪的时长",
        # every node reads the checkpoint (memory.checkpoint_bytes) at the site's read rate, twice over
        # for compilation and graph capture; never below the recipe's engine-ready timeout (or 30 min)
        "ceil(max(floor_s, headroom * checkpoint_bytes / read_bytes_per_s))",
        source=SourceKind.PUBLIC,
    ),
)
