"""The project's words for its own codes, in English and Chinese, each written once.

A serving group, a role, a fabric, a network plane, a topology, a check's area and a figure's
source are stored as codes (``cluster-a``, ``scale_out``, ``lingqu`` …).  This module is where
each code gets its words, following ``docs/glossary.md`` (the words presales engineers and their
customers use: 预填充 / 解码, 灵衢 (UB), 参数面 / 业务面 / 管理面, 主备高可用 …).  The engine's
check messages and figure labels, the configurator page, the drawings and the proposal PDF all
read these tables, so the page and the PDF spell a term the same way.

Pure Python, no Django: the engine and the drawings use it outside any request.  Django choices
(``catalog.models``) and the gettext catalogue (``locale/zh_Hans/*.tsv``) keep their own
translatable labels for the admin, but spell them as here (``tests/engine/test_vocabulary.py``).

Some terms have more than one *form* because a sentence needs another grammar than a table
cell; the forms of one term sit side by side in one entry:

* ``label`` – a heading or a table cell ("Prefill (P)", "预填充（P）");
* ``in_text`` – inside a sentence ("Give the prefill (P) group 8 nodes", "预填充（P）集群改为 8 台");
* ``short`` – a tag in parentheses after a name ("node-00 (prefill, master)", "预填充：R01, R02").
"""

from __future__ import annotations

from dataclasses import dataclass


def is_zh(lang: str | None) -> bool:
    """True for zh-hans (and any other Chinese variant)."""
    return (lang or "").lower().startswith("zh")


@dataclass(frozen=True)
class Term:
    """One term in English and Chinese."""

    en: str
    zh: str

    def pick(self, lang: str | None) -> str:
        """The term in ``lang`` (English when there is no Chinese)."""
        return self.zh if is_zh(lang) and self.zh else self.en


@dataclass(frozen=True)
class GroupTerm:
    """The forms of a serving group's name (see the module docstring)."""

    label: Term
    in_text: Term
    short: Term


def _pick(table: dict[str, Term], code: str, lang: str | None) -> str:
    """``table[code]`` in ``lang``; an unknown code is shown as it is."""
    term = table.get(code)
    return term.pick(lang) if term else code


# --------------------------------------------------------------------------- serving groups
# GroupLayout.name (docs/domain.md §4): one cluster, a pair of clusters, or the P and D pools.

GROUPS: dict[str, GroupTerm] = {
    "cluster": GroupTerm(Term("Cluster", "集群"), Term("the cluster", "集群"), Term("cluster", "集群")),
    "cluster-a": GroupTerm(
        Term("Cluster A", "集群 A"), Term("cluster A", "集群 A"), Term("cluster A", "集群 A")
    ),
    "cluster-b": GroupTerm(
        Term("Cluster B", "集群 B"), Term("cluster B", "集群 B"), Term("cluster B", "集群 B")
    ),
    "prefill": GroupTerm(
        Term("Prefill (P)", "预填充（P）"),
        Term("the prefill (P) group", "预填充（P）集群"),
        Term("prefill", "预填充"),
    ),
    "decode": GroupTerm(
        Term("Decode (D)", "解码（D）"), Term("the decode (D) group", "解码（D）集群"), Term("decode", "解码")
    ),
}
GROUP_LABELS = {k: g.label for k, g in GROUPS.items()}
GROUP_IN_TEXT = {k: g.in_text for k, g in GROUPS.items()}
GROUP_SHORT = {k: g.short for k, g in GROUPS.items()}


def group_label(name: str, lang: str | None) -> str:
    """A serving group as a heading or table cell: "Cluster A", "预填充（P）"."""
    return _pick(GROUP_LABELS, name, lang)


def group_in_text(name: str, lang: str | None) -> str:
    """A serving group inside a sentence: "the prefill (P) group", "预填充（P）集群"."""
    return _pick(GROUP_IN_TEXT, name, lang)


def group_short(name: str, lang: str | None) -> str:
    """A serving group as a short tag: "prefill", "预填充"."""
    return _pick(GROUP_SHORT, name, lang)


# --------------------------------------------------------------------------- roles
# GroupLayout.role: what a group does in its topology.
ROLES: dict[str, Term] = {
    "serve": Term("serving", "主用"),
    "standby": Term("standby", "备用"),
    "tenant": Term("tenant", "租户"),
    "prefill": Term("prefill (P)", "预填充（P）"),
    "decode": Term("decode (D)", "解码（D）"),
    "cluster": Term("cluster", "集群"),
}

# A node's part in its group's launch (NodeLaunch.role): the master serves the API, workers join it.
NODE_ROLES: dict[str, Term] = {
    "master": Term("master", "主节点"),
    "worker": Term("worker", "工作节点"),
    "prefill": GROUP_SHORT["prefill"],
    "decode": GROUP_SHORT["decode"],
}


def role_label(role: str, lang: str | None) -> str:
    """A group's role: "serving", "standby", "预填充（P）"."""
    return _pick(ROLES, role, lang)


def node_role_label(role: str, lang: str | None) -> str:
    """A node's role: "master", "工作节点"."""
    return _pick(NODE_ROLES, role, lang)


# --------------------------------------------------------------------------- fabrics and planes
FABRICS: dict[str, Term] = {
    "lingqu": Term("LingQu (UB)", "灵衢（UB）"),
    "roce": Term("RoCE", "RoCE"),
    "infiniband": Term("InfiniBand", "InfiniBand"),
    "ethernet": Term("Ethernet", "以太网"),
    "management": Term("Management", "管理网"),
    "nvlink": Term("NVLink", "NVLink"),
    "pcie": Term("PCIe", "PCIe"),
    "hccs": Term("HCCS", "HCCS"),
    "xgmi": Term("Infinity Fabric (xGMI)", "Infinity Fabric（xGMI）"),
}


def fabric_label(fabric: str, lang: str | None) -> str:
    """A fabric: "LingQu (UB)", "灵衢（UB）", "RoCE"."""
    return _pick(FABRICS, fabric, lang)


SCOPE_ALL = Term("all", "全部")


def scope_label(scope: str, lang: str | None) -> str:
    """The serving groups a fabric row serves ("all", or group codes joined by "+"), as the page
    names them: "all" → 全部, "prefill+decode" → "预填充+解码" ("P+D" in English stays readable)."""
    if scope == "all":
        return SCOPE_ALL.pick(lang)
    return "+".join(group_short(code, lang) if code in GROUPS else code for code in scope.split("+"))


@dataclass(frozen=True)
class PlaneTerm:
    """The forms of a network plane (a NIC's or a switch row's role)."""

    label: Term  # the network table of the page
    short: Term  # a shared switch's scope in the rack elevation ("#1 (scale-out)")
    in_text: Term  # the network figures and checks ("参数面（roce，cluster）…")


PLANES: dict[str, PlaneTerm] = {
    "scale_up": PlaneTerm(
        Term("scale-up (parameter plane)", "超节点内互联（参数面）"),
        Term("scale-up", "灵衢/超节点"),
        Term("scale-up", "超节点互联（灵衢/卡间）"),
    ),
    "scale_out": PlaneTerm(
        Term("scale-out (parameter plane)", "节点间互联（参数面）"),
        Term("scale-out", "参数面"),
        Term("scale-out", "参数面"),
    ),
    "service": PlaneTerm(
        Term("service plane", "业务面"), Term("service", "业务面"), Term("service", "业务面")
    ),
    "storage": PlaneTerm(
        Term("storage plane", "存储面"), Term("storage", "存储"), Term("storage plane", "存储面")
    ),
    "management": PlaneTerm(
        Term("management plane", "管理面"), Term("management", "管理面"), Term("management", "管理面")
    ),
    "oob": PlaneTerm(
        Term("out-of-band management (BMC)", "带外管理（BMC）"),
        Term("out-of-band", "带外管理"),
        Term("out-of-band", "带外管理"),
    ),
}
PLANE_LABELS = {k: p.label for k, p in PLANES.items()}
PLANE_SHORT = {k: p.short for k, p in PLANES.items()}
PLANE_IN_TEXT = {k: p.in_text for k, p in PLANES.items()}


def plane_label(role: str, lang: str | None) -> str:
    """A network plane as the page's network table heads it: "service plane", "业务面"."""
    return _pick(PLANE_LABELS, role, lang)


def plane_short(role: str, lang: str | None) -> str:
    return _pick(PLANE_SHORT, role, lang)


def plane_in_text(role: str, lang: str | None) -> str:
    return _pick(PLANE_IN_TEXT, role, lang)


# A switch's tier in a two-tier (leaf–spine) parameter plane.
TIERS: dict[str, Term] = {"leaf": Term("leaf", "叶"), "spine": Term("spine", "脊")}


# --------------------------------------------------------------------------- topologies
# TopologyKind (docs/domain.md §4).  The disaggregated label is a template over {p} and {d}.
TOPOLOGIES: dict[str, Term] = {
    "single": Term("Single cluster", "单集群"),
    "primary_standby": Term("Two clusters, primary/standby high availability", "双集群主备高可用"),
    "tenant_pair": Term("Two clusters, tenant isolation / canary", "双集群租户隔离 / 灰度"),
    "disaggregated": Term("Prefill/decode disaggregation ({p}P{d}D)", "PD 分离（{p}P{d}D）"),
}


def topology_label(
    kind: str, lang: str | None, *, prefill_nodes: object = "?", decode_nodes: object = "?"
) -> str:
    """A deployment's topology in the customer's words: "双集群主备高可用", "PD 分离（8P8D）"."""
    term = TOPOLOGIES.get(kind)
    if term is None:
        return kind or "—"
    return term.pick(lang).format(p=prefill_nodes, d=decode_nodes)


# --------------------------------------------------------------------------- check areas
# Check.area: the verdict strip's badges and the checks' area column.
AREAS: dict[str, Term] = {
    "memory": Term("Memory", "显存"),
    "power": Term("Power", "供电"),
    "network": Term("Network", "网络"),
    "racks": Term("Racks", "机柜"),
    "cooling": Term("Cooling", "散热"),
    "layout": Term("Parallel layout", "并行方式"),  # as the layout figures and the proposal say
    "performance": Term("Performance", "性能"),
    "commercial": Term("Commercial", "商务"),
    "model": Term("Model", "模型"),
    "hardware": Term("Hardware", "硬件"),
    "launch": Term("Launch configuration", "启动配置"),
    # The auto-planner's reasons (checks/catalogue/planner.py), named as its page names it.
    "planner": Term("Auto-planner", "自动选型"),
}


def area_label(area: str, lang: str | None) -> str:
    return _pick(AREAS, area, lang)


# --------------------------------------------------------------------------- sources
# Source.kind of a figure: where its number comes from.  The catalog's "admin" (a value edited
# in the admin) reaches a plan as "input"-like typed data and is labelled for the admin only.
SOURCE_KINDS: dict[str, Term] = {
    "seed": Term("source document", "来源文档"),
    "public": Term("public reference", "公开资料"),
    "assumed": Term("assumed — check before quoting", "假设值，报价前请核实"),
    "input": Term("your input", "输入值"),
    "derived": Term("derived", "推算"),
}


def source_kind_label(kind: str, lang: str | None) -> str:
    return _pick(SOURCE_KINDS, kind, lang)


# --------------------------------------------------------------------------- scenarios
# Scenario slugs of the seeded catalog (docs/domain.md §10), spelled as catalog/seed/scenarios.yaml
# names them (tests/engine/test_vocabulary.py holds the two to one spelling).
SCENARIOS: dict[str, Term] = {
    "finance-research": Term("Financial research analysis", "金融研报分析"),
    "financial-research": Term("Financial research analysis", "金融研报分析"),
    "government-policy-qa": Term("Government documents & policy Q&A", "政务文档与政策问答"),
    "software-engineering-agent": Term("Software-engineering agents", "软件工程 Agent"),
    "multimodal-knowledge-base": Term("Multimodal enterprise knowledge base", "多模态企业知识库"),
    "research-drug-discovery": Term("Research & drug discovery", "科研与药物发现"),
}


def scenario_label(slug: str, lang: str | None) -> str:
    """A scenario's name; an unknown slug is shown as it is."""
    return _pick(SCENARIOS, slug, lang) if slug else ""


# --------------------------------------------------------------------------- P/D bottleneck
# Which pool of a prefill/decode split limits it (performance/disaggregated.py).
BOTTLENECKS: dict[str, Term] = {
    "prefill": Term("prefill", "预填充"),
    "decode": Term("decode", "解码"),
    "balanced": Term("balanced", "均衡"),
}


def bottleneck_label(code: str, lang: str | None) -> str:
    """The pool that limits a P/D split, in ``lang`` ("balanced" → 均衡)."""
    return _pick(BOTTLENECKS, code, lang)


# --------------------------------------------------------------------------- design point
# What stops the design capacity from growing (performance/design.py limited_by).
DESIGN_LIMITS: dict[str, Term] = {
    "kv": Term("KV cache", "KV 缓存容量"),
    "batch": Term("batch per step", "单步批次上限"),
    "ttft": Term("TTFT target", "首字延迟目标"),
    "tpot": Term("TPOT target", "每字延迟目标"),
    "prefill": Term("prefill pool capacity", "预填充池处理能力"),
    "unreachable": Term("targets out of reach", "时延目标无法达到"),
}


def design_limit_label(code: str, lang: str | None) -> str:
    """What limits the design capacity, in ``lang`` ("tpot" → 每字延迟目标)."""
    return _pick(DESIGN_LIMITS, code, lang)


# --------------------------------------------------------------------------- severities
# A check's severity as the page, the quote and the proposal name it (the glossary's 告警 / 错误).
SEVERITIES: dict[str, Term] = {
    "ok": Term("ok", "正常"),
    "warning": Term("warning", "警告"),
    "error": Term("error", "错误"),
}


def severity_label(severity: str, lang: str | None) -> str:
    """A check's severity in ``lang`` ("warning" → 警告)."""
    return _pick(SEVERITIES, severity, lang)


# --------------------------------------------------------------------------- units
# The counting units a figure carries (figures/book.py Unit) as a reader writes them after a number;
# physical units (kW, A, GB, tokens/s) are the same in both languages and are not listed.
UNITS: dict[str, Term] = {
    "nodes": Term("nodes", "节点"),
    "devices": Term("devices", "张卡"),
    "experts": Term("experts", "个专家"),
    "ports": Term("ports", "端口"),
    "processes": Term("processes", "个进程"),
    "files": Term("files", "个文件"),
    "sequences": Term("sequences", "条序列"),
    "users": Term("users", "个并发"),
    "month": Term("months", "个月"),
}


def unit_label(unit: str, lang: str | None) -> str:
    """A figure's unit after its number, in ``lang`` (a unit not listed is written as it is)."""
    return _pick(UNITS, unit, lang)


# --------------------------------------------------------------------------- hardware and site words
# A rack's cooling class (RackType.cooling), as the bill of materials and the proposal print it.
COOLING: dict[str, Term] = {
    "air": Term("air-cooled", "风冷"),
    "containment": Term("hot/cold-aisle containment", "冷/热通道封闭"),
    "liquid": Term("liquid-cooled", "液冷"),
}


def cooling_label(cooling: str, lang: str | None) -> str:
    return _pick(COOLING, cooling, lang)


# Server vendors as Chinese customers name them (the catalog stores the English name).
VENDORS: dict[str, Term] = {
    "Huawei": Term("Huawei", "华为"),
    "Inspur": Term("Inspur", "浪潮"),
    "NVIDIA": Term("NVIDIA", "英伟达"),
    "H3C": Term("H3C", "新华三"),
    "xFusion": Term("xFusion", "超聚变"),
}


def vendor_label(vendor: str, lang: str | None) -> str:
    return _pick(VENDORS, vendor, lang)


# The serving platforms (engine/defaults.py CUDA / ASCEND software stacks).
PLATFORMS: dict[str, Term] = {
    "cuda": Term("NVIDIA GPUs (vLLM)", "NVIDIA GPU（vLLM）"),
    "ascend": Term("Ascend NPUs (vLLM-Ascend)", "昇腾 NPU（vLLM-Ascend）"),
}

# How a rack's feed is sized (engine/power.py): the seed's arithmetic or the recommended one.
POWER_METHODS: dict[str, Term] = {
    "seed": Term("seed method (PF 1, no derating)", "种子方案算法（功率因数 1，不降额）"),
    "recommended": Term(
        "recommended (site PF, 80 % continuous)", "推荐算法（现场功率因数，80% 持续负载降额）"
    ),
}


# --------------------------------------------------------------------------- drawings
# The words drawn in the pictures (configurator/drawings/), from docs/glossary.md.  Drawings are
# rendered outside Django's translation machinery (the PDF task and the page must draw the same
# SVG for a language), hence this table rather than gettext; ``{placeholders}`` are filled in.
DRAWING_LABELS: dict[str, tuple[str, str]] = {
    # key: (en, zh-hans)
    # memory
    "weights": ("Weights", "权重"),
    "activations": ("Activations", "激活"),
    "buffers": ("Comm. buffers", "通信缓冲"),
    "graph": ("Graph capture", "图捕获"),
    "kv_cache": ("KV cache", "KV 缓存"),
    "reserved": ("Reserved (1 − utilisation)", "预留 (1 − 利用率)"),
    "device_capacity": ("Device memory {value}", "显存容量 {value}"),
    "short_by": ("Short by {value}", "缺口 {value}"),
    "memory_title": ("Accelerator memory per rank", "每卡显存分配"),
    "does_not_fit": ("does not fit", "放不下"),
    # topology
    "gateway": ("Gateway / load balancer", "网关 / 负载均衡"),
    "pd_proxy": ("P/D proxy (load balancer)", "PD 代理 (负载均衡)"),
    "node": ("Node {n}", "节点 {n}"),
    "more_nodes": ("+{n} more", "另 {n} 台"),
    "n_nodes": ("{n} nodes", "{n} 节点"),
    "one_node": ("1 node", "1 节点"),
    "group_devices": (
        "{servers} × {per_node} logical devices = {devices}",
        "{servers} × {per_node} 逻辑卡 = {devices} 逻辑卡",
    ),
    "group_devices_total": ("{servers} · {devices} logical devices", "{servers} · {devices} 逻辑卡"),
    "failover": ("failover ≤ 30 s", "故障切换 ≤ 30 s"),
    "shared_storage": ("Shared storage (e.g. OceanStor)", "共享存储 (如 OceanStor)"),
    "weights_sync": ("weights sync", "权重同步"),
    "kv_transfer": ("KV cache (Mooncake)", "KV 缓存 (Mooncake)"),
    "kv_pool": ("KV pool (MetaService + Memcache)", "KV 池 (MetaService + Memcache)"),
    "clients": ("Clients / applications", "客户端 / 业务应用"),
    # charts
    "no_data": ("No data", "暂无数据"),
    "base": ("Base {value}", "基准 {value}"),
    "low_input": ("Low input", "低值"),
    "high_input": ("High input", "高值"),
    "month": ("Month", "月"),
    # power
    "feed": ("Feed {name}", "{name} 路供电"),
    "pdu": ("PDU {name}", "PDU {name}"),
    "rack": ("Rack {n}", "机柜 {n}"),
    "breaker": ("{amps} A breaker", "{amps} A 断路器"),
    "power_title": ("A/B redundant feeds", "A/B 路供电 (双路)"),
    # the roles of groups and nodes, as the page and the PDF spell them
    **{f"role_{code}": (term.en, term.zh) for code, term in ROLES.items()},
    **{code: (NODE_ROLES[code].en, NODE_ROLES[code].zh) for code in ("master", "worker")},
}


def drawing_text(key: str, lang: str | None, **values: object) -> str:
    """The drawing label ``key`` in ``lang`` with ``{placeholders}`` filled in."""
    en, zh = DRAWING_LABELS[key]
    text = zh if is_zh(lang) else en
    return text.format(**values) if values else text


#: Every table of this module by name (the tests check each has both languages).
TABLES: dict[str, dict[str, Term]] = {
    "GROUP_LABELS": GROUP_LABELS,
    "GROUP_IN_TEXT": GROUP_IN_TEXT,
    "GROUP_SHORT": GROUP_SHORT,
    "ROLES": ROLES,
    "NODE_ROLES": NODE_ROLES,
    "FABRICS": FABRICS,
    "PLANE_LABELS": PLANE_LABELS,
    "PLANE_SHORT": PLANE_SHORT,
    "PLANE_IN_TEXT": PLANE_IN_TEXT,
    "TIERS": TIERS,
    "TOPOLOGIES": TOPOLOGIES,
    "AREAS": AREAS,
    "SOURCE_KINDS": SOURCE_KINDS,
    "SCENARIOS": SCENARIOS,
    "UNITS": UNITS,
    "SEVERITIES": SEVERITIES,
    "BOTTLENECKS": BOTTLENECKS,
    "DESIGN_LIMITS": DESIGN_LIMITS,
    "COOLING": COOLING,
    "VENDORS": VENDORS,
    "PLATFORMS": PLATFORMS,
    "POWER_METHODS": POWER_METHODS,
}
