"""The launch bundle's checks: site values, placeholders and port collisions."""

from __future__ import annotations

from .. import recipes as rc
from .. import site_values as sv
from ..types import Check, LaunchSpec, LayoutResult, PlanRequest, Severity, TopologyKind, TopologySpec
from .nodes import PLACEHOLDER_MODEL_PATH, PLACEHOLDER_NIC, Site

AREA = "launch"


def _port_clashes(topology: TopologySpec, lp: LaunchSpec) -> list[tuple[str, str, int]]:
    """Every pair of bundle ports that would collide on one host: (field, other, port).

    Each node serves ``api_port`` (and, with several engines per node in P/D, ``api_port + 1`` …); the DP
    RPC port is ``rpc_port`` (``rpc_port + 1`` for the decode side); the P/D proxy listens on ``proxy_port``
    on the prefill master, beside that node's engines; the two-cluster gateway listens on ``proxy_port``
    (and ``proxy_port + 1`` for the second tenant).
    """
    disaggregated = topology.kind == TopologyKind.DISAGGREGATED
    engines = 1
    if disaggregated:
        sides = [topology.parallel, topology.decode_parallel or topology.parallel]
        engines = max(p.dp_local for p in sides)
    ports: list[tuple[str, int]] = [("launch.api_port", lp.api_port)]
    ports += [
        (f"launch.api_port + {i} (engine {i + 1} on a node)", lp.api_port + i) for i in range(1, engines)
    ]
    ports.append(("launch.rpc_port", lp.rpc_port))
    if disaggregated:
        ports.append(("launch.rpc_port + 1 (decode side)", lp.rpc_port + 1))
    if disaggregated or topology.kind in (TopologyKind.PRIMARY_STANDBY, TopologyKind.TENANT_PAIR):
        ports.append(("launch.proxy_port", lp.proxy_port))
    if topology.kind == TopologyKind.TENANT_PAIR:
        ports.append(("launch.proxy_port + 1 (second tenant)", lp.proxy_port + 1))
    seen: dict[int, str] = {}
    out = []
    for name, port in ports:
        if port in seen:
            out.append((name, seen[port], port))
        seen.setdefault(port, name)
    return out


def launch_port_conflicts(topology: TopologySpec, lp: LaunchSpec) -> dict[str, list[str]]:
    """Port collisions as request errors (field → messages): the request boundary answers them with a 400."""
    errors: dict[str, list[str]] = {}
    for name, other, port in _port_clashes(topology, lp):
        field_name = name.split(" ")[0]
        errors.setdefault(field_name, []).append(
            f"{name} would be {port}, the same port as {other}; choose ports that do not overlap."
        )
    return errors


def launch_checks(req: PlanRequest, layout: LayoutResult, site: Site) -> list[Check]:
    lp = req.launch
    out: list[Check] = []
    n = layout.nodes or req.topology.nodes
    for field_name, problem in site.rejected:
        out.append(
            Check(
                "launch.site_value_invalid",
                Severity.ERROR,
                AREA,
                f"{field_name} {problem} The bundle holds a placeholder instead.",
                f"{field_name} 的取值不合规（只允许地址、网卡名、路径或镜像名的合法字符），启动包中改用占位符。",
                field=field_name.split("[")[0],
            )
        )
    missing_ips = [ip for ip in site.ips if ip.startswith("__")]
    if missing_ips:
        out.append(
            Check(
                "launch.node_ips_missing",
                Severity.OK,
                AREA,
                f"{len(missing_ips)} of {n} node IPs are not entered; the scripts hold placeholders "
                f"({', '.join(missing_ips[:4])}{'…' if len(missing_ips) > 4 else ''}) and refuse to start.",
                f"{n} 个节点中有 {len(missing_ips)} 个未填写 IP，启动脚本中保留占位符，替换前脚本拒绝启动。",
                {"missing": len(missing_ips)},
                field="launch.node_ips",
                fix_en="Enter every node's data-network IP in node order.",
                fix_zh="请按节点顺序填写各节点业务/参数面 IP。",
            )
        )
    if len(lp.node_ips) > n:
        out.append(
            Check(
                "launch.node_ips_extra",
                Severity.WARNING,
                AREA,
                f"{len(lp.node_ips)} IPs entered for {n} nodes; the extra ones are ignored.",
                f"为 {n} 个节点填写了 {len(lp.node_ips)} 个 IP，多余的将被忽略。",
                field="launch.node_ips",
            )
        )
    given = [ip for ip in site.ips if not sv.is_placeholder(ip)]
    dupes = sorted({ip for ip in given if given.count(ip) > 1})
    if dupes:
        out.append(
            Check(
                "launch.node_ip_duplicate",
                Severity.ERROR,
                AREA,
                f"Node IPs repeat ({', '.join(dupes)}); every node needs its own address.",
                f"节点 IP 重复（{', '.join(dupes)}），每个节点须使用独立地址。",
                field="launch.node_ips",
            )
        )
    for ip in given:
        if sv.ip_literal(ip) is None:
            out.append(
                Check(
                    "launch.node_ip_not_an_address",
                    Severity.WARNING,
                    AREA,
                    f"'{ip}' is not an IP address; HCCL_IF_IP and VLLM_HOST_IP need the node's IP.",
                    f"“{ip}” 不是 IP 地址，HCCL_IF_IP 与 VLLM_HOST_IP 需填写节点 IP。",
                    field="launch.node_ips",
                )
            )
    if site.model_path == PLACEHOLDER_MODEL_PATH:
        out.append(
            Check(
                "launch.model_path_missing",
                Severity.OK,
                AREA,
                "The model path is not entered; the scripts hold __MODEL_PATH__ and refuse to start.",
                "未填写模型权重路径，脚本中保留 __MODEL_PATH__ 占位符，替换前拒绝启动。",
                field="launch.model_path",
                fix_en="Enter the path of the weights on the shared storage (same on every node).",
                fix_zh="请填写共享存储上的权重路径（各节点一致）。",
            )
        )
    if site.nic == PLACEHOLDER_NIC:
        out.append(
            Check(
                "launch.data_nic_missing",
                Severity.OK,
                AREA,
                "The data NIC name is not entered; the scripts hold __DATA_NIC__ and refuse to start.",
                "未填写业务网卡名称，脚本中保留 __DATA_NIC__ 占位符，替换前拒绝启动。",
                field="launch.data_nic",
                fix_en="Enter the interface that owns each node's IP (e.g. enp189s0f0).",
                fix_zh="请填写持有节点 IP 的网卡名（如 enp189s0f0）。",
            )
        )
    disaggregated = req.topology.kind == TopologyKind.DISAGGREGATED
    for name, other, port in _port_clashes(req.topology, lp):
        out.append(
            Check(
                "launch.port_conflict",
                Severity.ERROR,
                AREA,
                f"{name} and {other} are both {port}.",
                f"{name} 与 {other} 端口同为 {port}，存在冲突。",
                field=name.split(" ")[0],
            )
        )
    if disaggregated and site.ascend:
        floor = 20000 + site.devices_per_node * 1000
        for name, port in (
            ("launch.kv_port_prefill", lp.kv_port_prefill),
            ("launch.kv_port_decode", lp.kv_port_decode),
        ):
            if port < floor:
                out.append(
                    Check(
                        "launch.kv_port_in_reserved_range",
                        Severity.ERROR,
                        AREA,
                        f"{name} {port} falls in [20000, {floor}), the range Mooncake picks random ports from on "
                        f"{site.devices_per_node}-NPU nodes; startup would fail intermittently.",
                        f"{name} {port} 位于 [20000, {floor}) 区间，该区间为 {site.devices_per_node} 卡节点上 "
                        "Mooncake 随机端口的保留范围，启动会偶发失败。",
                        {"floor": floor},
                        field=name,
                        fix={name: floor if name.endswith("prefill") else floor + 200},
                        fix_en=f"Use a kv_port of {floor} or above.",
                        fix_zh=f"kv_port 请设为 {floor} 及以上。",
                    )
                )
    if disaggregated and not site.ascend:
        out.append(
            Check(
                "launch.pd_connector_unvalidated",
                Severity.WARNING,
                AREA,
                "P/D on CUDA uses vLLM's NixlConnector with vLLM's router, as the vLLM recipes do; no recipe "
                "validates this model on this GPU with P/D, so run benchmark.sh before go-live.",
                "CUDA 平台的 PD 分离按 vLLM 部署配方采用 NixlConnector 与 vLLM Router；该模型与 GPU 的 PD 组合尚无配方验证，上线前须用 benchmark.sh 压测。",
                field="topology.kind",
            )
        )
    return out


def recipe_checks(req: PlanRequest, layout: LayoutResult, recipe: rc.Recipe, image: str) -> list[Check]:
    """What the plan's recipe says about its image, its layout and its checkpoint."""
    from ..layout import parallel_field  # at call time: layout imports the launch checks' neighbours

    out: list[Check] = []
    platform = "ascend" if req.server.accelerator.software_stack == "ascend" else "cuda"
    family = rc.family_of(req.model)
    given = (req.launch.image or "").strip()
    hw = rc.hardware_of(req.server)
    if given and not rc.image_serves_family(given, platform, family):
        out.append(
            Check(
                "launch.image_cannot_serve_model",
                Severity.ERROR,
                AREA,
                f"The image {given} cannot serve {req.model.name}: it runs only in the {recipe.image_for(hw)} "
                "build (or another image that carries the model); vLLM would refuse the model's arguments at "
                "start.",
                f"镜像 {given} 无法运行 {req.model.name}：该模型仅在 {recipe.image_for(hw)} 等包含该模型的镜像中运行，"
                "否则 vLLM 启动时参数校验即失败。",
                field="launch.image",
                fix={"launch.image": recipe.image_for(hw)},
                fix_en=f"Use {recipe.image_for(hw)}.",
                fix_zh=f"改用 {recipe.image_for(hw)}。",
            )
        )
    soc = rc.image_soc(given) if given and platform == "ascend" else None
    if soc is not None and soc != hw and hw in ("a3", "a2"):
        want = recipe.image_for(hw)
        out.append(
            Check(
                "launch.image_for_other_soc",
                Severity.WARNING,
                AREA,
                f"The image {given} is the {soc.upper()} build; on {req.server.name} ({hw.upper()}) vLLM-Ascend "
                f"needs the {hw.upper()} build (custom operators are compiled per SoC), e.g. {want}.",
                f"镜像 {given} 为 {soc.upper()} 版本；{req.server.name}（{hw.upper()}）需使用 {hw.upper()} 版本镜像"
                f"（自定义算子按芯片型号编译），如 {want}。",
                field="launch.image",
                fix={"launch.image": want},
                fix_en=f"Use {want}.",
                fix_zh=f"改用 {want}。",
            )
        )
    for g in layout.groups:
        found = rc.unsupported_layout(recipe, req.server, g.parallel, g.nodes)
        if found is None:
            continue
        name, supported, what = found
        pfield = parallel_field(req.topology, g.name)
        fix = {f"{pfield}.expert_parallel": False} if supported == "multi_node_tp_dp" else {}
        out.append(
            Check(
                "launch.layout_unsupported_by_recipe",
                Severity.WARNING,
                AREA,
                f"{g.name}: the {req.model.name} recipe marks its {name} layout (expert parallelism across "
                f"nodes) unsupported on {rc.gpu_id(req.server).upper()}"
                + (f"; the layout it supports there is {supported}: {what}." if supported else "."),
                f"{g.name}：{req.model.name} 部署配方将跨节点专家并行布局标为在 "
                f"{rc.gpu_id(req.server).upper()} 上不支持"
                + (
                    "；该硬件上支持的布局为节点内张量并行、节点间数据并行（关闭专家并行）。"
                    if supported
                    else "。"
                ),
                {"layout": name, "supported": supported},
                field=f"{pfield}.expert_parallel",
                fix=fix,
                fix_en=(
                    f"Use {supported}: turn expert parallelism off (every node then holds a whole replica; the "
                    "memory check says whether it fits)."
                    if fix
                    else ""
                ),
                fix_zh="关闭专家并行（每个节点持有完整模型副本，显存检查会判断能否放下）。" if fix else "",
            )
        )
    ckpt = req.checkpoint
    if platform == "ascend" and family == "deepseek" and (ckpt is None or ckpt.quant_method != "ascend"):
        out.append(
            Check(
                "launch.checkpoint_not_for_ascend",
                Severity.ERROR,
                AREA,
                f"{req.model.name} on vLLM-Ascend is served from the W8A8 conversion with --quantization ascend "
                "(vLLM-Ascend DeepSeek-R1 tutorial); the FP8 release does not load there.",
                f"{req.model.name} 在 vLLM-Ascend 上须使用 W8A8 量化权重并加 --quantization ascend（vLLM-Ascend "
                "DeepSeek-R1 教程）；FP8 原版权重无法加载。",
                field="checkpoint",
            )
        )
    return out
