"""Checks of the parallel layout (engine/layout.py): node counts, TP/DP/PP/EP against the model and the scale-up domain."""

from ...types import Severity
from ..book import CheckDef, Fix, Variant

DEFS = (
    CheckDef(
        "layout.parallel_not_positive",
        "layout",
        Severity.ERROR,
        "TP, DP and PP of {who_en} must be at least 1 (got TP{tp}, DP{dp}, PP{pp}).",
        "{who_zh}的 TP、DP、PP 均须 ≥ 1（当前 TP{tp}、DP{dp}、PP{pp}）。",
        field="{pfield}.tp",
        fix=Fix("{proposal_en}.", "{proposal_zh}。", change="proposal"),
        source="vLLM ParallelConfig (sizes are positive)",
    ),
    CheckDef(
        "layout.world_size_mismatch",
        "layout",
        Severity.ERROR,
        "TP{tp} × DP{dp} × PP{pp} = {world_size:thousands} devices, but {who_en} has {nodes} nodes × {dpn} = {devices:thousands} devices.",
        "TP{tp} × DP{dp} × PP{pp} = {world_size:thousands} 张卡，与{who_zh}的 {nodes} 台 × {dpn} 卡 = {devices:thousands} 张卡不符。",
        field="{pfield}.dp",
        fix=Fix("{proposal_en}.", "{proposal_zh}。", change="proposal"),
        source="vLLM ParallelConfig world_size = tp × dp × pp; docs/domain.md §5",
    ),
    CheckDef(
        "layout.tp_exceeds_scale_up",
        "layout",
        Severity.ERROR,
        "TP{tp} is wider than the scale-up domain of {server} ({domain} devices over {scale_up_fabric}): every layer's all-reduce would cross the scale-out network.",
        "TP{tp} 超出了 {server} 的高速互联域（{scale_up_fabric}，{domain} 张卡）：每层的 all-reduce 都要跨节点走参数面网络，性能不可接受。",
        field="{pfield}.tp",
        fix=Fix(
            "Keep TP inside the scale-up domain: {proposal_lower}.",
            "将 TP 限制在高速互联域内：{proposal_zh}。",
            change="proposal",
        ),
        source="docs/domain.md §3 (the scale-up domain per server) and §5",
    ),
    CheckDef(
        "layout.tp_not_dividing_heads",
        "layout",
        Severity.ERROR,
        "{model} has {heads} attention heads, which TP{tp} does not divide; vLLM refuses to start.",
        "{model} 的注意力头数 {heads} 不能被 TP{tp} 整除，vLLM 无法启动。",
        field="{pfield}.tp",
        fix=Fix("{proposal_en}.", "{proposal_zh}。", change="proposal"),
        source="vLLM vllm/config/model.py verify_with_parallel_config (heads divisible by TP)",
    ),
    CheckDef(
        "layout.experts_not_divisible",
        "layout",
        Severity.ERROR,
        "{num_experts} routed experts do not divide evenly over EP{ep} ({experts_per_rank:.1f} per rank).",
        "{num_experts} 个路由专家不能在 EP{ep} 上均分（每卡 {experts_per_rank:.1f} 个）。",
        field="{pfield}.dp",
        fixes={
            "nodes": Fix(
                "{nodes_en} as {layout_ok} ({experts_ok} experts per rank).",
                "{nodes_zh}，{layout_ok}（每卡 {experts_ok} 个专家）。",
                change="change",
            ),
            "expert_parallel_off": Fix(
                "Turn expert parallelism off (every rank then holds a TP slice of every expert).",
                "关闭专家并行（每张卡持有每个专家的 TP 切片）。",
                change={"{pfield}.expert_parallel": "expert_parallel"},
            ),
        },
        source="vLLM FusedMoE expert placement (experts divided over EP ranks); docs/domain.md §5",
    ),
    CheckDef(
        "layout.pipeline_across_nodes",
        "layout",
        Severity.WARNING,
        "{who_en} runs PP{pp} with TP{tp}: each model replica spans {tp_pp_dpn} nodes, because {num_experts} experts divide over EP{ep} only. vLLM then needs a multi-node executor for every replica (Ray); review the launch commands against the vLLM(-Ascend) multi-node guide before deployment.",
        "{who_zh}采用 PP{pp} × TP{tp}：{num_experts} 个专家只能在 EP{ep} 上均分，每个模型副本跨 {tp_pp_dpn} 台节点，vLLM 需为每个副本使用多节点执行器（Ray）；部署前请对照 vLLM(-Ascend) 多节点指南核对启动命令。",
        field="{pfield}.pp",
        fixes={
            "nodes": Fix(
                "{nodes_en} as {layout_ok}, one replica per node group without pipeline stages.",
                "{nodes_zh}，{layout_ok}，无需跨节点流水线。",
                change="change",
            )
        },
        source="vLLM / vLLM-Ascend multi-node guides (Ray executor per replica)",
    ),
    CheckDef(
        "layout.dp_local_inconsistent",
        "layout",
        Severity.ERROR,
        "--data-parallel-size-local {dp_local} × {nodes} nodes ≠ --data-parallel-size {dp} in {who_en}.",
        "{who_zh}中 --data-parallel-size-local {dp_local} × {nodes} 台 ≠ --data-parallel-size {dp}。",
        field="{pfield}.dp_local",
        fixes={
            "dp_local": Fix(
                "Set dp_local to {want}.", "将 dp_local 设为 {want}。", change={"{pfield}.dp_local": "want"}
            ),
            "proposal": Fix("{proposal_en}.", "{proposal_zh}。", change="proposal"),
        },
        source="vLLM --data-parallel-size-local × nodes = --data-parallel-size; docs/domain.md §11",
    ),
    CheckDef(
        "layout.nodes_not_positive",
        "layout",
        Severity.ERROR,
        "The deployment needs at least one node (got {nodes}).",
        "部署至少需要 1 台服务器（当前为 {nodes}）。",
        field="topology.nodes",
        fix=Fix("Enter a positive node count.", "请输入正的节点数。", change={"topology.nodes": "nodes_ok"}),
    ),
    CheckDef(
        "layout.pair_needs_even_nodes",
        "layout",
        Severity.ERROR,
        "A two-cluster topology splits the nodes into two identical clusters; {n} nodes cannot be split evenly.",
        "双集群拓扑需把节点平分为两个相同的集群，{n} 台无法平分。",
        field="topology.nodes",
        fix=Fix(
            "Use {even} nodes ({per_cluster} per cluster).",
            "改为 {even} 台（每个集群 {per_cluster} 台）。",
            change={"topology.nodes": "even"},
        ),
        source="docs/domain.md §4 (two identical clusters)",
    ),
    CheckDef(
        "layout.prefill_decode_missing",
        "layout",
        Severity.ERROR,
        "Prefill/decode disaggregation needs at least one prefill and one decode node (got {p_nodes}P{d_nodes}D).",
        "PD 分离至少需要 1 台预填充节点和 1 台解码节点（当前为 {p_nodes}P{d_nodes}D）。",
        field="topology.{missing}_nodes",
        fix=Fix(
            "Split the nodes {half}P{decode}D.",
            "按 {half}P{decode}D 划分节点。",
            change={"topology.prefill_nodes": "half", "topology.decode_nodes": "decode"},
        ),
        source="docs/domain.md §4 (xPyD)",
    ),
    CheckDef(
        "layout.ok",
        "layout",
        Severity.OK,
        "{who_en}: {nodes:plural:node:nodes} × {dpn} devices as {layout}.",
        "{who_zh}：{nodes} 台 × {dpn} 卡，{layout}。",
        variants={
            "moe": Variant(
                "{who_en}: {nodes:plural:node:nodes} × {dpn} devices as {layout}, {experts_per_rank} experts per rank.",
                "{who_zh}：{nodes} 台 × {dpn} 卡，{layout}，每卡 {experts_per_rank} 个专家。",
            )
        },
        field="{parallel_field}",
    ),
    CheckDef(
        "layout.prefill_decode_mismatch",
        "layout",
        Severity.ERROR,
        "{p_nodes} prefill + {d_nodes} decode nodes = {total}, but the deployment has {n} nodes.",
        "预填充 {p_nodes} 台 + 解码 {d_nodes} 台 = {total} 台，与总节点数 {n} 台不符。",
        field="topology.nodes",
        fix=Fix(
            "Set the node count to {total}.",
            "将节点总数改为 {total} 台。",
            change={"topology.nodes": "total"},
        ),
        source="docs/domain.md §4 (xPyD)",
    ),
)
