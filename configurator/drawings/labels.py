"""The words drawn in the pictures, in the industry's own Chinese and English.

Taken from ``docs/glossary.md`` so a drawing reads like the proposal around it.
Drawings are rendered outside Django's translation machinery (the PDF task
and the page must produce the same SVG for a given language), hence a small
table here rather than ``gettext``; the names of roles come from
``configurator/engine/vocabulary.py`` (the words the page and the PDF use).
"""

from __future__ import annotations

from configurator.engine.vocabulary import NODE_ROLES, ROLES, is_zh

LABELS: dict[str, tuple[str, str]] = {
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


def t(key: str, lang: str, **values: object) -> str:
    """The label ``key`` in ``lang`` with ``{placeholders}`` filled in."""
    en, zh = LABELS[key]
    text = zh if is_zh(lang) else en
    return text.format(**values) if values else text
