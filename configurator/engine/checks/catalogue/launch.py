"""Checks of the launch bundle (engine/launch/): site values, placeholders, ports, the recipe's image, layout and checkpoint."""

from ...types import Severity
from ..book import CheckDef, Fix, Variant

DEFS = (
    CheckDef(
        "launch.site_value_invalid",
        "launch",
        Severity.ERROR,
        "{field_name} {problem} The bundle holds a placeholder instead.",
        "{field_name} 的取值不合规（只允许地址、网卡名、路径或镜像名的合法字符），启动包中改用占位符。",
        field="{field_path}",
        source="engine/site_values.py (the grammar of every value written into a generated file)",
    ),
    CheckDef(
        "launch.node_ips_missing",
        "launch",
        Severity.OK,
        "{missing} of {n} node IPs are not entered; the scripts hold placeholders ({shown}{more}) and refuse to start.",
        "{n} 个节点中有 {missing} 个未填写 IP，启动脚本中保留占位符，替换前脚本拒绝启动。",
        field="launch.node_ips",
        fix=Fix(
            "Enter every node's data-network IP in node order.", "请按节点顺序填写各节点业务/参数面 IP。"
        ),
        source="docs/domain.md §5",
    ),
    CheckDef(
        "launch.node_ips_extra",
        "launch",
        Severity.WARNING,
        "{entered} IPs entered for {n} nodes; the extra ones are ignored.",
        "为 {n} 个节点填写了 {entered} 个 IP，多余的将被忽略。",
        field="launch.node_ips",
    ),
    CheckDef(
        "launch.node_ip_duplicate",
        "launch",
        Severity.ERROR,
        "Node IPs repeat ({dupes}); every node needs its own address.",
        "节点 IP 重复（{dupes}），每个节点须使用独立地址。",
        field="launch.node_ips",
        source="docs/domain.md §5",
    ),
    CheckDef(
        "launch.model_path_missing",
        "launch",
        Severity.OK,
        "The model path is not entered; the scripts hold __MODEL_PATH__ and refuse to start.",
        "未填写模型权重路径，脚本中保留 __MODEL_PATH__ 占位符，替换前拒绝启动。",
        field="launch.model_path",
        fix=Fix(
            "Enter the path of the weights on the shared storage (same on every node).",
            "请填写共享存储上的权重路径（各节点一致）。",
        ),
        source="docs/domain.md §5",
    ),
    CheckDef(
        "launch.data_nic_missing",
        "launch",
        Severity.OK,
        "The data NIC name is not entered; the scripts hold __DATA_NIC__ and refuse to start.",
        "未填写业务网卡名称，脚本中保留 __DATA_NIC__ 占位符，替换前拒绝启动。",
        field="launch.data_nic",
        fix=Fix(
            "Enter the interface that owns each node's IP (e.g. enp189s0f0).",
            "请填写持有节点 IP 的网卡名（如 enp189s0f0）。",
        ),
        source="docs/domain.md §5 (HCCL_SOCKET_IFNAME / GLOO_SOCKET_IFNAME)",
    ),
    CheckDef(
        "launch.port_conflict",
        "launch",
        Severity.ERROR,
        "{name} and {other} are both {port}.",
        "{name} 与 {other} 端口同为 {port}，存在冲突。",
        field="{port_field}",
        source="the bundle's ports (launch/checks.py _port_clashes)",
    ),
    CheckDef(
        "launch.pd_connector_unvalidated",
        "launch",
        Severity.WARNING,
        "P/D on CUDA uses vLLM's NixlConnector with vLLM's router, as the vLLM recipes do; no recipe validates this model on this GPU with P/D, so run benchmark.sh before go-live.",
        "CUDA 平台的 PD 分离按 vLLM 部署配方采用 NixlConnector 与 vLLM Router；该模型与 GPU 的 PD 组合尚无配方验证，上线前须用 benchmark.sh 压测。",
        field="topology.kind",
        source="vLLM recipes (NixlConnector, vLLM router)",
    ),
    CheckDef(
        "launch.speculative_not_launched",
        "launch",
        Severity.WARNING,
        "The estimate assumes speculative decoding ({tokens} draft tokens a step, {kind_en}); the launch bundle does not start it: the request gives the draft only as performance inputs, not as serving.speculative, so there is no draft to write into --speculative-config. Until the decode engines get it, the served time per output token is slower than the estimate.",
        "性能估算按投机解码（每步 {tokens} 个草稿 token，{kind_zh}）计算，但启动包未启用投机解码：请求只在性能假设中给出草稿，未在投机解码设置中指定目录里的草稿模型，因此没有可写入 --speculative-config 的草稿。在解码引擎补上该配置之前，实际每字延迟将慢于估算。",
        field="performance.speculative_tokens",
        fix=Fix(
            "Choose the catalog's draft in serving.speculative so the bundle launches it, or set the speculative tokens to 0 so the estimate describes the bundle.",
            "在投机解码设置中选择目录里的草稿模型，使启动包启用它；或将投机 token 数设为 0，使估算与启动包一致。",
        ),
        source="engine/launch/nodes.py (--speculative-config is written from serving.speculative and its catalog draft)",
    ),
    CheckDef(
        "launch.image_cannot_serve_model",
        "launch",
        Severity.ERROR,
        "The image {given} cannot serve {model}: it runs only in the {image_for} build (or another image that carries the model); vLLM would refuse the model's arguments at start.",
        "镜像 {given} 无法运行 {model}：该模型仅在 {image_for} 等包含该模型的镜像中运行，否则 vLLM 启动时参数校验即失败。",
        field="launch.image",
        fix=Fix("Use {image_for}.", "改用 {image_for}。", change={"launch.image": "image_for"}),
        source="engine/recipes.py (the image each recipe runs)",
    ),
    CheckDef(
        "launch.image_for_other_soc",
        "launch",
        Severity.WARNING,
        "The image {given} is the {soc} build; on {server} ({hw}) vLLM-Ascend needs the {hw} build (custom operators are compiled per SoC), e.g. {want}.",
        "镜像 {given} 为 {soc} 版本；{server}（{hw}）需使用 {hw} 版本镜像（自定义算子按芯片型号编译），如 {want}。",
        field="launch.image",
        fix=Fix("Use {want}.", "改用 {want}。", change={"launch.image": "want"}),
        source="vLLM-Ascend images per SoC (custom operators compiled per chip)",
    ),
    CheckDef(
        "launch.layout_unsupported_by_recipe",
        "launch",
        Severity.WARNING,
        "{group}: the {model} recipe marks its {layout} layout (expert parallelism across nodes) unsupported on {gpu}.",
        "{group}：{model} 部署配方将跨节点专家并行布局标为在 {gpu} 上不支持。",
        field="{pfield}.expert_parallel",
        fixes={
            "expert_parallel_off": Fix(
                "Use {supported}: turn expert parallelism off (every node then holds a whole replica; the "
                "memory check says whether it fits).",
                "关闭专家并行（每个节点持有完整模型副本，显存检查会判断能否放下）。",
                change={"{pfield}.expert_parallel": "expert_parallel"},
            )
        },
        variants={
            "supported": Variant(
                "{group}: the {model} recipe marks its {layout} layout (expert parallelism across nodes) "
                "unsupported on {gpu}; the layout it supports there is {supported}: {what}.",
                "{group}：{model} 部署配方将跨节点专家并行布局标为在 {gpu} 上不支持；"
                "该硬件上支持的布局为节点内张量并行、节点间数据并行（关闭专家并行）。",
            )
        },
        source="engine/recipes.py (the layouts a recipe marks unsupported)",
    ),
    CheckDef(
        "launch.checkpoint_not_for_ascend",
        "launch",
        Severity.ERROR,
        "{model} on vLLM-Ascend is served from the W8A8 conversion with --quantization ascend (vLLM-Ascend DeepSeek-R1 tutorial); the FP8 release does not load there.",
        "{model} 在 vLLM-Ascend 上须使用 W8A8 量化权重并加 --quantization ascend（vLLM-Ascend DeepSeek-R1 教程）；FP8 原版权重无法加载。",
        field="checkpoint",
        source="vLLM-Ascend DeepSeek-R1 tutorial (W8A8, --quantization ascend)",
    ),
    CheckDef(
        "launch.node_ip_not_an_address",
        "launch",
        Severity.WARNING,
        "'{ip}' is not an IP address; HCCL_IF_IP and VLLM_HOST_IP need the node's IP.",
        "“{ip}” 不是 IP 地址，HCCL_IF_IP 与 VLLM_HOST_IP 需填写节点 IP。",
        field="launch.node_ips",
        source="vLLM-Ascend multi-node guide (HCCL_IF_IP, VLLM_HOST_IP)",
    ),
    CheckDef(
        "launch.kv_port_in_reserved_range",
        "launch",
        Severity.ERROR,
        "{name} {port} falls in [20000, {floor}), the range Mooncake picks random ports from on {devices_per_node}-NPU nodes; startup would fail intermittently.",
        "{name} {port} 位于 [20000, {floor}) 区间，该区间为 {devices_per_node} 卡节点上 Mooncake 随机端口的保留范围，启动会偶发失败。",
        field="{name}",
        fix=Fix(
            "Use a kv_port of {floor} or above.",
            "kv_port 请设为 {floor} 及以上。",
            change={"{name}": "port_ok"},
        ),
        source="vLLM-Ascend Mooncake connector: random ports from 20000 + 1000 per NPU",
    ),
)
