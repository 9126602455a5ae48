"""Network: fabrics, ports, switches, optics and cables, and whether the fabric
between nodes can carry the traffic the parallel layout puts on it.

Fabrics, by role:

* **scale_up** — the accelerators' own bus: PCIe / HCCS / NVLink inside the
  node (no switch), or LingQu (UB) whose external ports join nodes of a
  super-node.  External scale-up ports are switched per serving group: a
  group's ports stay on one switch (or its own leaf/spine when they exceed
  one switch); smaller groups share a switch while their ports fit (first
  fit, in group order).  A NIC group counts as scale-up when its role says so
  or its fabric is the server's ``scale_up_fabric``.
* **scale_out** — RoCE / InfiniBand / Ethernet between nodes (参数面), one
  fabric for the whole deployment (it also carries P→D KV transfer).
* **service** (业务面) and **management** (管理面) — one fabric each for the
  deployment, from the NICs of that role.

Ports cabled per node: every port of a service or management NIC group; for
scale-up and scale-out groups at most one port per accelerator package
(rail-optimised, one plane per package).  Super-node servers carry more
LingQu ports than that (Atlas 800 A3: 56 for 8 packages) for cascading
super-nodes far beyond the seeds' 4–16 nodes; the cap is an assumption the
figures show.

Switches per fabric (rule, documented in every row): with P ports per switch,
one switch if the ports fit; otherwise a two-tier leaf/spine with half of
every leaf's ports facing servers: leaves = ceil(ports ÷ (P/2)),
spines = ceil(leaves × P/2 ÷ P).  Links = server ports + leaf uplinks; one
cable per link and one transceiver at each end (optical everywhere; DAC/AEC
inside a rack would save optics).

Cross-node traffic: a group spanning several nodes with expert parallelism
(or TP wider than a node) uses its best switched scale-up or scale-out
fabric.  RDMA at ≥ 400 Gb/s per port passes ([S1] §6.3: 400GE LingQu or
RoCE); RDMA at 200 Gb/s is a warning (the public 8 × Atlas 800 A2 tutorial
runs on 200GE RoCE); anything slower, or without RDMA (ordinary Ethernet,
or RoCE NICs on an ordinary Ethernet switch), is an error.

P→D KV transfer (xPyD): the KV a prefill node produces at its full prefill
rate, against the node's scale-out bandwidth; a warning above half of it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal

from . import seed_references
from .checks import raise_
from .engine_versions import engine_for
from .figures import FigureBook
from .memory import kv_bytes_per_token, kv_dtype_bytes, linear_state_bytes_per_seq, mla_layer_kv_bytes
from .serving_model import effective_factors
from .types import (
    Check,
    CommercialSpec,
    CrossNodeLink,
    FabricRow,
    GroupLayout,
    KvTransfer,
    LayoutResult,
    NetworkResult,
    PlanRequest,
    SeedReference,
    Source,
    SwitchSpec,
    SwitchUnit,
    TopologyKind,
)
from .vocabulary import fabric_label, group_label, plane_in_text, scope_label

RDMA_FABRICS = frozenset({"lingqu", "ub", "roce", "infiniband", "nvlink", "hccs", "xgmi"})
IN_NODE_FABRICS = frozenset({"pcie", "hccs", "nvlink", "xgmi"})  # scale-up buses without external switches
MIN_CROSS_NODE_GBPS = 400  # [S1 §6.3] 400GE LingQu or RoCE between nodes
# The slowest RDMA fabric a public K3 deployment is validated on: the vLLM-Ascend tutorial's
# 8 × Atlas 800 A2 (DP8 / TP8 / EP64) on the A2's 200GE RoCE ports.  Between this and
# MIN_CROSS_NODE_GBPS cross-node EP is a warning (it runs, slower); below it, or without
# RDMA, an error.
MIN_VALIDATED_RDMA_GBPS = 200
KV_SHARE_WARN = 0.5  # warn when P→D KV transfer would take more than half of a node's scale-out bandwidth
ROLE_ORDER = ("scale_up", "scale_out", "service", "storage", "management", "oob")
SWITCH_FABRICS_FOR = {
    # NIC fabric → switch fabrics that can take it, in order of preference.  A RoCE NIC on an
    # ordinary Ethernet switch links, but without a lossless RDMA fabric.
    "roce": ("roce", "ethernet"),
    "ethernet": ("ethernet",),
    "management": ("management", "ethernet"),
    "lingqu": ("lingqu",),
    "ub": ("lingqu", "ub"),
    "infiniband": ("infiniband",),
}
_ASSUMED_CABLING = Source("assumed", "one port per accelerator package per fabric (rail-optimised)")

# Port headroom (docs/domain.md §7): every switched plane keeps at least one spare port per 16 it uses,
# so that a failed port or one more device needs no new switch, and no switch is sold full.
SPARE_PER_PORTS = 16
# Links from a plane to the customer's own network (assumed until the customer's design is known): the
# service pair to the customer's core (two per switch), management and out-of-band to the operations
# network.  The back-end fabrics (scale-up, scale-out, storage) are closed: no uplink.
EXTERNAL_UPLINKS = {"service": 4, "management": 2, "oob": 2}
# Planes built as a switch pair (M-LAG), every node dual-homed with one port on each switch.
PAIRED_PLANES = frozenset({"service", "storage"})
# Planes every deployment needs whatever NICs the server's catalog entry lists (proposal anatomy:
# 参数面 / 业务面 / 存储面 / 管理面, and out-of-band).  When the server lists no NIC of a plane the plan adds
# one: (NIC fabric, ports per node, Gb/s, how): a dual-port 25GE card for the service and storage
# planes (a BOM line), the onboard GE port for management.  The catalog's "management" NIC of every
# server is its BMC port (iBMC / BMC), which is the out-of-band plane.
ADDED_PLANES: dict[str, tuple[str, int, int, str]] = {
    "service": ("ethernet", 2, 25, "card"),
    "storage": ("ethernet", 2, 25, "card"),
    "management": ("management", 1, 1, "onboard"),
}
_ASSUMED_PLANE = Source("assumed", "plane added by the plan: the server's catalog entry lists no NIC for it")
# What else plugs into each plane (assumed): each gateway / load balancer has 2 × 25GE service ports,
# 1 management and 1 BMC port; the checkpoint storage system has 2 controllers, each with 2 × 25GE
# storage ports and 1 management port; every switch has one out-of-band management port.
GATEWAY_PORTS = {"service": 2, "management": 1, "oob": 1}
STORAGE_CONTROLLERS = 2
STORAGE_PORTS = {"storage": 2, "management": 1}  # per controller


# --------------------------------------------------------------------------- arithmetic


def switches_for_ports(ports: int, ports_per_switch: int) -> tuple[int, int, int]:
    """(leaves, spines, uplinks) for ``ports`` server ports on switches of ``ports_per_switch``.

    One switch if the ports fit (returned as one leaf, no spine); otherwise a
    two-tier leaf/spine: leaves = ceil(ports ÷ (P/2)), uplinks = leaves × P/2,
    spines = ceil(uplinks ÷ P).
    """
    if ports <= 0 or ports_per_switch <= 0:
        return 0, 0, 0
    if ports <= ports_per_switch:
        return 1, 0, 0
    half = max(1, ports_per_switch // 2)
    leaves = math.ceil(ports / half)
    uplinks = leaves * half
    spines = math.ceil(uplinks / ports_per_switch)
    return leaves, spines, uplinks


def spare_ports(used: int) -> int:
    """Ports kept free on a plane: one per :data:`SPARE_PER_PORTS` used (rounded up), none on an empty plane."""
    return math.ceil(used / SPARE_PER_PORTS) if used > 0 else 0


def size_plane(
    used: int, ports_per_switch: int, *, paired: bool = False, rails: int = 0, nodes: int = 0
) -> tuple[int, int, int, int, str]:
    """(leaves, spines, uplinks, spare, sizing) for ``used`` cabled ports on switches of ``ports_per_switch``.

    The switches must hold the ports used plus :func:`spare_ports` of them:

    * ``single`` — one switch takes them all;
    * ``pair`` — a paired plane (M-LAG) always has two switches, each node on both;
    * ``rails`` — a rail-optimised back-end fabric (``rails`` ports per node, one per accelerator
      package, ``nodes`` nodes) too big for one switch: each switch takes whole rails (the nodes' k-th
      ports) with their spare; traffic between rails crosses the node's own bus, so no spine;
    * ``leaf_spine`` — otherwise, two tiers (:func:`switches_for_ports` over used + spare ports).
    """
    if used <= 0 or ports_per_switch <= 0:
        return 0, 0, 0, 0, "none"
    spare = spare_ports(used)
    need = used + spare
    if paired:
        if need <= 2 * ports_per_switch:
            return 2, 0, 0, spare, "pair"
    elif need <= ports_per_switch:
        return 1, 0, 0, spare, "single"
    if rails > 1 and nodes > 0 and used == rails * nodes:
        per_switch = max(
            (k for k in range(1, rails + 1) if k * nodes + spare_ports(k * nodes) <= ports_per_switch),
            default=0,
        )
        if per_switch:
            switches = math.ceil(rails / per_switch)
            spare = sum(spare_ports(min(per_switch, rails - i * per_switch) * nodes) for i in range(switches))
            return switches, 0, 0, spare, "rails"
    leaves, spines, uplinks = switches_for_ports(need, ports_per_switch)
    return leaves, spines, uplinks, spare, "leaf_spine"


def _pick_switch(
    nic_fabric: str,
    speed: int,
    switches: tuple[SwitchSpec, ...],
    *,
    ports: int = 0,
    commercial: CommercialSpec | None = None,
    server_vendor: str = "",
    paired: bool = False,
    rails: int = 0,
    nodes: int = 0,
) -> SwitchSpec | None:
    """The switch model for a fabric: the first switch fabric that can take the NIC, then among its
    models fast enough for the NIC:

    1. when several vendors' switches fit, the server vendor's own switch if it takes every port in
       one tier (the vendor's reference design, e.g. S2: NF5868G8 with the Inspur X400);
    2. otherwise the cheapest design for ``ports`` cabled ports: switches (:func:`size_plane`: with
       their spare ports, a pair, whole rails or leaf/spine when one switch is too small) plus a
       transceiver at each end of every link, at the prices of ``commercial``; unpriced models come
       after priced ones;
    3. then fewer switches, then catalog order.
    """
    for fabric in SWITCH_FABRICS_FOR.get(nic_fabric, (nic_fabric,)):
        candidates = [s for s in switches if s.fabric == fabric]
        if not candidates:
            continue
        fast = [s for s in candidates if s.port_speed_gbps >= speed]
        # none fast enough: the fastest there is (a 200G NIC on a 100GE switch, not on a 25GE one)
        top = max(s.port_speed_gbps for s in candidates)
        pool = fast or [s for s in candidates if s.port_speed_gbps == top]
        if len(pool) == 1 or ports <= 0:
            return pool[0]
        prices = commercial.switch_unit_prices if commercial else {}
        # The vendor preference only chooses between vendors; among one vendor's models, cost does.
        mixed = bool(server_vendor) and len({s.vendor.lower() for s in pool}) > 1

        def rank(
            sw: SwitchSpec,
            pool: list[SwitchSpec] = pool,
            prices: Mapping[str, Decimal] = prices,
            mixed: bool = mixed,
        ) -> tuple[bool, bool, Decimal | int, int, int]:
            leaves, spines, uplinks, _spare, _how = size_plane(
                ports, sw.ports, paired=paired, rails=rails, nodes=nodes
            )
            count = leaves + spines
            optics_media, _cable = link_media(min(speed, sw.port_speed_gbps))
            if commercial is None:
                per_optic = Decimal(0)
            elif optics_media:
                per_optic = commercial.media_unit_prices.get(optics_media, Decimal(0))
            else:
                per_optic = commercial.optics_unit_price
            price = prices.get(sw.slug)
            cost = None if price is None else count * price + 2 * (ports + uplinks) * per_optic
            own = mixed and sw.vendor.lower() == server_vendor.lower() and spines == 0
            return (not own, cost is None, cost or 0, count, pool.index(sw))

        return min(pool, key=rank)
    return None


def seed_reference(req: PlanRequest, layout: LayoutResult) -> SeedReference | None:
    """The seed plan this deployment reproduces, if any (shared by power and racks): seed_references.yaml,
    matched by server and node count."""
    return seed_references.seed_reference(req, layout.nodes)


# --------------------------------------------------------------------------- module entry


@dataclass
class _NicGroup:
    fabric: str
    role: str
    count: int
    speed: int
    added: str = ""  # "" (the server's own NIC), "card" or "onboard" (ADDED_PLANES)


def _nic_groups(req: PlanRequest) -> list[_NicGroup]:
    """Merge the server's NIC groups by (fabric, effective role)."""
    merged: dict[tuple[str, str], _NicGroup] = {}
    for nic in req.server.nics:
        role = "scale_up" if nic.role == "scale_up" or nic.fabric == req.server.scale_up_fabric else nic.role
        if role == "management":
            role = "oob"  # the catalog's management NIC is the BMC port (ADDED_PLANES)
        key = (nic.fabric, role)
        if key in merged:
            merged[key].count += nic.count
            merged[key].speed = max(merged[key].speed, nic.speed_gbps)
        else:
            merged[key] = _NicGroup(nic.fabric, role, nic.count, nic.speed_gbps)
    roles = {g.role for g in merged.values()}
    for role, (fabric, count, speed, how) in ADDED_PLANES.items():
        if role not in roles:
            merged[(fabric, role)] = _NicGroup(fabric, role, count, speed, how)
    order = {r: i for i, r in enumerate(ROLE_ORDER)}
    return sorted(merged.values(), key=lambda n: (order.get(n.role, 9), n.fabric))


def _cabled(nic: _NicGroup, packages: int) -> int:
    if nic.role in ("scale_up", "scale_out") and packages > 0:
        return min(nic.count, packages)
    return nic.count


# Link media by speed.  A 400G-class link takes a transceiver at each end (network.optics, priced at
# commercial.optics_unit_price, the 400G QSFP-DD/OSFP SKU) and a fiber patch cord; slower optical
# links take their own transceivers ("100g-optics" is a QSFP28, "200g-optics" a QSFP56, "25g-optics"
# an SFP28, "10g-optics" an SFP+); GE management and BMC links are copper patch cables (RJ45, Cat6).
MEDIA = {
    "100g-optics": ("100G optical module (QSFP28)", "100G 光模块（QSFP28）"),
    "200g-optics": ("200G optical module (QSFP56)", "200G 光模块（QSFP56）"),
    "25g-optics": ("25G optical module (SFP28)", "25G 光模块（SFP28）"),
    "10g-optics": ("10G optical module (SFP+)", "10G 光模块（SFP+）"),
    "fiber": ("Fiber patch cord (MPO/LC)", "光纤跳线（MPO/LC）"),
    "cat6": ("Copper patch cable (Cat6, RJ45)", "超六类网线（RJ45）"),
}
# Copper RJ45 only for GE (BMC and onboard management ports); a 10GE port (SFP+, e.g. the NF5868G8's
# 10G service ports) takes a 10G SFP+ module into an SFP28 switch port, never Cat6 into a 100GE switch.
COPPER_MAX_GBPS = 1


def link_media(link_gbps: int) -> tuple[str, str]:
    """(optics media, cable media) of one link: ("", "fiber") for 400G-class, ("", "cat6") for copper."""
    if link_gbps <= COPPER_MAX_GBPS:
        return "", "cat6"
    if link_gbps >= 400:
        return "", "fiber"
    for speed in (200, 100, 25, 10):
        if link_gbps >= speed:
            return f"{speed}g-optics", "fiber"
    return "10g-optics", "fiber"


def _row(
    nic: _NicGroup,
    scope: str,
    groups: tuple[str, ...],
    nodes: int,
    cabled: int,
    switch: SwitchSpec | None,
    note_en: str = "",
    note_zh: str = "",
    attached: int = 0,
) -> FabricRow:
    ports = nodes * cabled
    external = EXTERNAL_UPLINKS.get(nic.role, 0) if ports > 0 else 0
    attached = attached if ports > 0 else 0
    used = ports + attached + external
    rails = cabled if nic.role in ("scale_up", "scale_out") else 0
    if switch is not None and ports > 0:
        leaves, spines, uplinks, spare, sizing = size_plane(
            used,
            switch.ports,
            paired=nic.role in PAIRED_PLANES,
            rails=rails if not attached else 0,
            nodes=nodes,
        )
    else:
        leaves = spines = uplinks = spare = 0
        sizing = "none"
    n_switches = leaves + spines
    links = (used + uplinks) if n_switches else 0
    link_gbps = min(nic.speed, switch.port_speed_gbps) if switch else nic.speed
    rdma = nic.fabric in RDMA_FABRICS and (switch is None or switch.fabric in RDMA_FABRICS)
    return FabricRow(
        fabric=nic.fabric,
        role=nic.role,
        scope=scope,
        groups=groups,
        nodes=nodes,
        port_speed_gbps=nic.speed,
        link_gbps=link_gbps,
        rdma=rdma,
        ports_per_node=nic.count,
        cabled_per_node=cabled,
        ports_needed=ports,
        switch_slug=switch.slug if switch else "",
        switch_model=switch.name if switch else "",
        switch_model_zh=(switch.name_zh or switch.name) if switch else "",
        switch_fabric=switch.fabric if switch else "",
        ports_per_switch=switch.ports if switch else 0,
        switches=n_switches,
        leaves=leaves if spines else 0,
        spines=spines,
        uplinks=uplinks,
        optics=0 if link_media(link_gbps)[1] == "cat6" else 2 * links,
        cables=links,
        optics_media=link_media(link_gbps)[0] if links else "",
        cable_media=link_media(link_gbps)[1] if links else "",
        switch_units=n_switches * (switch.rack_units if switch else 0),
        switch_kw=n_switches * (switch.power_kw if switch else 0.0),
        note_en=note_en,
        note_zh=note_zh,
        attached_ports=attached if n_switches else 0,
        external_uplinks=external if n_switches else 0,
        spare_ports=spare,
        added_nic=nic.added,
        sizing=sizing,
    )


def size_network(req: PlanRequest, layout: LayoutResult) -> NetworkResult:
    """Size every fabric of the deployment and check the fabric between nodes.

    A pure function of its arguments: ``plan()`` sizes the network once and hands the result to
    ``size_power()`` (the switches' kW) and ``place_racks()``.  The steps: the fabric rows (one per
    plane and switch domain), the checks on each row, the switch units and the deployment's totals
    on the figure book, the links between nodes, P→D KV transfer (xPyD), the seed plan this
    deployment reproduces, and what a pair of clusters shares.
    """
    rows = _fabric_rows(req, layout)
    checks = _row_checks(rows)

    switches = _switch_units(rows)
    book = FigureBook()
    _row_figures(book, rows, req.server.packages)
    totals = _network_totals(book, req, rows, switches)

    cross, cross_checks = _cross_node(book, req, layout, rows)
    checks.extend(cross_checks)

    kv = None
    if req.topology.kind == TopologyKind.DISAGGREGATED:
        kv, kv_checks = _kv_transfer(req, layout, rows, book)
        checks.extend(kv_checks)

    seed = seed_reference(req, layout)
    if seed is not None:
        checks.extend(_seed_checks(seed, switches, rows, book))

    if req.topology.kind == TopologyKind.PRIMARY_STANDBY:
        checks.extend(_standby_sharing_checks(switches))
    if req.topology.kind == TopologyKind.TENANT_PAIR:
        checks.extend(_tenant_sharing_checks(switches))

    return NetworkResult(
        rows=tuple(rows),
        switches=switches,
        switch_count=len(switches),
        switch_units=totals.switch_units,
        switch_kw=totals.switch_kw,
        optics=totals.optics,
        cables=totals.cables,
        media=totals.media,
        cross_node=cross,
        kv_transfer=kv,
        seed=seed,
        figures=book.figures,
        checks=tuple(checks),
    )


def _fabric_rows(req: PlanRequest, layout: LayoutResult) -> list[FabricRow]:
    """Every fabric row of the deployment: the in-node scale-up bus first, then one or more rows per
    NIC plane in :data:`ROLE_ORDER`, out-of-band last (it also takes every switch's management port)."""
    server = req.server
    nodes = layout.nodes
    groups: tuple[GroupLayout, ...] = layout.groups
    all_names = tuple(g.name for g in groups) or ("cluster",)
    rows: list[FabricRow] = [_in_node_row(req, nodes, all_names)]

    nic_groups = _nic_groups(req)
    # Parameter-plane switches of a pair: shared (the default) or one set per cluster.
    separate = req.topology.pair_switches == "separate" and req.topology.kind in (
        TopologyKind.PRIMARY_STANDBY,
        TopologyKind.TENANT_PAIR,
    )

    # Other devices on each plane (GATEWAY_PORTS, STORAGE_PORTS); the out-of-band plane also takes
    # every switch's management port, so it is sized last.
    gateways = req.commercial.gateways if req.commercial else 0
    attached = {
        role: gateways * GATEWAY_PORTS.get(role, 0) + STORAGE_CONTROLLERS * STORAGE_PORTS.get(role, 0)
        for role in ("service", "storage", "management", "oob")
    }
    nic_groups = [n for n in nic_groups if n.role != "oob"] + [n for n in nic_groups if n.role == "oob"]
    for nic in nic_groups:
        if nic.role == "scale_up" and nic.fabric in IN_NODE_FABRICS:
            continue
        cabled = _cabled(nic, server.packages)
        extra = attached.get(nic.role, 0)
        if nic.role == "oob":
            extra += sum(r.switches for r in rows)
        domain = nodes if nic.role != "scale_up" else max((g.nodes for g in groups), default=0)
        used = domain * cabled
        if nic.role not in ("scale_up", "scale_out"):
            used += extra + EXTERNAL_UPLINKS.get(nic.role, 0)
        switch = _pick_switch(
            nic.fabric,
            nic.speed,
            req.switches,
            ports=used,
            commercial=req.commercial,
            server_vendor=server.vendor,
            paired=nic.role in PAIRED_PLANES,
            rails=cabled if nic.role in ("scale_up", "scale_out") else 0,
            nodes=domain,
        )
        if nic.role == "scale_up":
            rows.extend(_scale_up_rows(nic, groups, cabled, switch, share=not separate))
        elif nic.role == "scale_out":
            rows.extend(_scale_out_rows(nic, groups, all_names, nodes, cabled, switch, separate=separate))
        else:
            rows.append(_plane_row(nic, all_names, nodes, cabled, switch, extra))
    return rows


def _in_node_row(req: PlanRequest, nodes: int, all_names: tuple[str, ...]) -> FabricRow:
    """The in-node scale-up bus: no switch, shown for completeness."""
    server = req.server
    return FabricRow(
        fabric=server.scale_up_fabric,
        role="scale_up",
        scope="in-node",
        groups=all_names,
        nodes=nodes,
        port_speed_gbps=int(server.scale_up_bandwidth_gbps),
        link_gbps=int(server.scale_up_bandwidth_gbps),
        rdma=server.scale_up_fabric in RDMA_FABRICS,
        ports_per_node=0,
        cabled_per_node=0,
        ports_needed=0,
        switch_slug="",
        switch_model="",
        switch_fabric="",
        ports_per_switch=0,
        switches=0,
        leaves=0,
        spines=0,
        uplinks=0,
        optics=0,
        cables=0,
        switch_units=0,
        switch_kw=0.0,
        note_en=f"{fabric_label(server.scale_up_fabric, 'en')} inside each node: no switch",
        note_zh=f"节点内{fabric_label(server.scale_up_fabric, 'zh')}互联，无需交换机",
    )


def _scale_out_rows(
    nic: _NicGroup,
    groups: tuple[GroupLayout, ...],
    all_names: tuple[str, ...],
    nodes: int,
    cabled: int,
    switch: SwitchSpec | None,
    *,
    separate: bool,
) -> list[FabricRow]:
    """The scale-out (parameter) plane: one row per cluster when a pair has separate switches, one row
    for the deployment otherwise, and a row without a fabric for a single node."""
    if separate and nodes > 1:
        return [
            _row(
                nic,
                g.name,
                (g.name,),
                g.nodes,
                cabled if g.nodes > 1 else 0,
                switch,
                f"{nic.fabric} of {g.name} only (separate switches per cluster)",
                f"{g.name} 独立的 {nic.fabric} 交换机（主备/租户各自独立）",
            )
            for g in groups
        ]
    if nodes > 1:
        return [_row(nic, "all", all_names, nodes, cabled, switch)]
    return [
        _row(
            nic,
            "all",
            all_names,
            nodes,
            0,
            None,
            "single node: no fabric between nodes",
            "单节点：无需节点间组网",
        )
    ]


def _plane_row(
    nic: _NicGroup,
    all_names: tuple[str, ...],
    nodes: int,
    cabled: int,
    switch: SwitchSpec | None,
    extra: int,
) -> FabricRow:
    """The row of a service, storage, management or out-of-band plane, with the ``extra`` ports of the
    other devices attached to it; without a switch it is the customer's network."""
    note = (
        ("", "") if switch else ("customer network (no switch in the plan)", "接入客户现网（不在本方案内）")
    )
    if nic.added and switch:
        note = _ADDED_NOTES.get(nic.role, note)
    return _row(nic, "all", all_names, nodes, cabled, switch, *note, attached=extra)


def _row_checks(rows: list[FabricRow]) -> list[Check]:
    """The checks on each fabric row: a back-end fabric that needs ports but has no switch, and a
    leaf/spine whose leaves outnumber a spine's ports."""
    checks: list[Check] = []
    for row in rows:
        if row.ports_needed > 0 and not row.switch_model and row.role in ("scale_up", "scale_out"):
            checks.append(_no_switch_check(row))
        if row.spines and row.leaves > row.ports_per_switch:
            checks.append(
                raise_(
                    "network.fabric_exceeds_two_tier",
                    figures={"leaves": row.leaves, "ports_per_switch": row.ports_per_switch},
                    role=row.role,
                    fabric=row.fabric,
                    scope=row.scope,
                    leaves=row.leaves,
                    ports_per_switch=row.ports_per_switch,
                    plane_zh=plane_in_text(row.role, "zh"),
                )
            )
    return checks


@dataclass(frozen=True)
class _NetworkTotals:
    switch_units: int
    switch_kw: float
    optics: int
    cables: int
    media: dict[str, int]


def _network_totals(
    book: FigureBook, req: PlanRequest, rows: list[FabricRow], switches: tuple[SwitchUnit, ...]
) -> _NetworkTotals:
    """The deployment's switch units, switch kW, 400G-class optics, cables and every other medium by
    code, each put on the figure book."""
    switch_units = sum(s.rack_units for s in switches)
    switch_kw = sum(s.power_kw for s in switches)
    # network.optics: 400G-class transceivers; every other transceiver and every cable by media code.
    optics = sum(r.optics for r in rows if not r.optics_media)
    cables = sum(r.cables for r in rows)
    media: dict[str, int] = {}
    for r in rows:
        if r.optics_media and r.optics:
            media[r.optics_media] = media.get(r.optics_media, 0) + r.optics
        if r.cable_media and r.cables:
            media[r.cable_media] = media.get(r.cable_media, 0) + r.cables
    book.put(
        "network.switches.count", len(switches), switches={r_key(r): r.switches for r in rows if r.switches}
    )
    book.put("network.switches.units", switch_units, rack_units={s.label: s.rack_units for s in switches})
    book.put(
        "network.switches.kw",
        round(switch_kw, 3),
        source=_switch_source(req.switches),
        kw={s.label: s.power_kw for s in switches},
    )
    book.put(
        "network.optics",
        optics,
        optics={r_key(r): r.optics for r in rows if r.optics},
        optics_below_400g=sum(r.optics for r in rows if r.optics_media),
    )
    book.put("network.cables", cables, cables={r_key(r): r.cables for r in rows if r.cables})
    return _NetworkTotals(switch_units, switch_kw, optics, cables, media)


def _cross_node(
    book: FigureBook, req: PlanRequest, layout: LayoutResult, rows: list[FabricRow]
) -> tuple[tuple[CrossNodeLink, ...], list[Check]]:
    """The link each group spanning several nodes uses between them (on the figure book) and its checks."""
    cross_rows = _cross_node_links(layout, rows)
    cross = tuple(link for link, _row in cross_rows)
    checks = list(_cross_node_checks(cross))
    switch_port_gbps = {s.slug: s.port_speed_gbps for s in req.switches}
    for link, best in cross_rows:
        book.put(
            f"network.cross_node.{link.group}.link_gbps",
            link.link_gbps,
            source=Source("seed", "S1 §6.3"),
            label={"group_en": group_label(link.group, "en"), "group_zh": group_label(link.group, "zh")},
            nic_port_gbps=best.port_speed_gbps if best else 0,
            switch_port_gbps=switch_port_gbps.get(best.switch_slug, 0) if best else 0,
            fabric=link.fabric,
            switch_fabric=link.switch_fabric,
            rdma=link.rdma,
        )
    return cross, checks


def _standby_sharing_checks(switches: tuple[SwitchUnit, ...]) -> list[Check]:
    """Primary/standby: the parameter-plane switches both clusters share (one failure domain)."""
    shared = [s for s in switches if len(s.groups) > 1 and s.role in ("scale_up", "scale_out")]
    if not shared:
        return []
    names = ", ".join(sorted({s.model for s in shared}))
    names_zh = "、".join(sorted({s.model_zh or s.model for s in shared}))
    return [
        raise_(
            "network.pair_shares_switch",
            figures={"shared_switches": len(shared)},
            shared=len(shared),
            names=names,
            names_zh=names_zh,
            pair_switches="separate",
        )
    ]


def _tenant_sharing_checks(switches: tuple[SwitchUnit, ...]) -> list[Check]:
    """Tenant pair: the switches carrying both tenants' traffic, by plane.

    Switches carrying both tenants' traffic are one failure domain and one shared data path; say so,
    so the proposal can state it (issue 16: failure domains).  The management switch carries the
    operator's out-of-band management, no tenant traffic: shared by design, said as such, not a
    warning without a fix (issue 31).
    """
    checks: list[Check] = []
    shared = [s for s in switches if len(s.groups) > 1]
    # The out-of-band (BMC) switch is management too: it carries no tenant traffic either.
    data = [s for s in shared if s.role not in ("management", "oob")]
    management = [s for s in shared if s.role in ("management", "oob")]
    # The parameter plane is what the plan can give each tenant (topology.pair_switches): its
    # sharing is one finding with that fix; the service and storage planes' sharing is another,
    # which says why no one-click fix exists, so the first fix is proven by its finding going away.
    parameter = [s for s in data if s.role in ("scale_up", "scale_out")]
    other = [s for s in data if s.role not in ("scale_up", "scale_out")]
    if parameter:
        checks.append(
            raise_(
                "network.tenants_share_switch",
                figures={"shared_switches": len(parameter)},
                shared=len(parameter),
                names=", ".join(sorted({s.model for s in parameter})),
                names_zh="、".join(sorted({s.model_zh or s.model for s in parameter})),
                pair_switches="separate",
            )
        )
    if other:
        checks.append(
            raise_(
                "network.tenants_share_data_switch",
                figures={"shared_switches": len(other)},
                shared=len(other),
                names=", ".join(sorted({s.model for s in other})),
                names_zh="、".join(sorted({s.model_zh or s.model for s in other})),
            )
        )
    if management:
        checks.append(
            raise_("network.tenants_share_management", figures={"shared_switches": len(management)})
        )
    return checks


_ADDED_NOTES = {
    "service": (
        "dual-port 25GE card added per node (dual-homed to the switch pair); gateways attached",
        "每节点加配双口 25GE 网卡（双归接入交换机对）；网关接入本平面",
    ),
    "storage": (
        "dual-port 25GE card added per node; the checkpoint storage system attached",
        "每节点加配双口 25GE 网卡；模型权重存储接入本平面",
    ),
    "management": (
        "onboard GE port of each node (operating system, monitoring, image pulls)",
        "各节点板载 GE 口（操作系统、监控、镜像拉取）",
    ),
}


def r_key(row: FabricRow) -> str:
    """Stable key of a fabric row: ``<role>.<fabric>.<scope>``."""
    return f"{row.role}.{row.fabric}.{row.scope}"


def _switch_source(specs: tuple[SwitchSpec, ...]) -> Source:
    for s in specs:
        src = s.sources.get("power_kw") if s.sources else None
        if src is not None and src.kind == "assumed":
            return src
    return Source("derived")


def _scale_up_rows(
    nic: _NicGroup,
    groups: tuple[GroupLayout, ...],
    cabled: int,
    switch: SwitchSpec | None,
    *,
    share: bool = True,
) -> list[FabricRow]:
    """Scale-up switch domains: a group's ports on one switch; small groups share while
    they fit with their spare ports (unless ``share`` is off: a pair with separate switches)."""
    multi = [g for g in groups if g.nodes > 1]
    if not multi:
        return []
    capacity = switch.ports if switch else 0
    bins: list[list[GroupLayout]] = []
    own: list[GroupLayout] = []

    def fits(ports: int) -> bool:  # with the spare ports the switch keeps free (size_plane)
        return ports + spare_ports(ports) <= capacity

    for g in multi:
        ports = g.nodes * cabled
        if not switch or not fits(ports) or not share:
            own.append(g)
            continue
        for b in bins:
            if fits(sum(x.nodes for x in b) * cabled + ports):
                b.append(g)
                break
        else:
            bins.append([g])
    rows = []
    for members in [*bins, *([g] for g in own)]:
        names = tuple(g.name for g in members)
        rows.append(
            _row(
                nic,
                "+".join(names),
                names,
                sum(g.nodes for g in members),
                cabled,
                switch,
                f"{fabric_label(nic.fabric, 'en')} between the nodes of {scope_label('+'.join(names), 'en')}",
                f"{scope_label('+'.join(names), 'zh')} 节点间{fabric_label(nic.fabric, 'zh')}互联",
            )
        )
    return rows


def _switch_units(rows: list[FabricRow]) -> tuple[SwitchUnit, ...]:
    units: list[SwitchUnit] = []
    counters: dict[str, int] = {}
    for row in rows:
        if not row.switches:
            continue
        single = row.spines == 0
        tiers = ["single"] * row.switches if single else ["leaf"] * row.leaves + ["spine"] * row.spines
        for tier in tiers:
            counters[row.switch_slug] = counters.get(row.switch_slug, 0) + 1
            units.append(
                SwitchUnit(
                    label=f"{row.switch_model} #{counters[row.switch_slug]}",
                    slug=row.switch_slug,
                    model=row.switch_model,
                    model_zh=row.switch_model_zh or row.switch_model,
                    fabric=row.switch_fabric,
                    role=row.role,
                    tier=tier,
                    groups=row.groups,
                    rack_units=row.switch_units // row.switches,
                    power_kw=row.switch_kw / row.switches,
                )
            )
    return tuple(units)


def _row_figures(book: FigureBook, rows: list[FabricRow], packages: int) -> None:
    for row in rows:
        if row.scope == "in-node":
            continue
        role, fabric, scope = row.role, row.fabric, row.scope  # the key is network.<r_key(row)>.*
        names = {
            "fabric": row.fabric,
            "scope": row.scope,
            "role_zh": plane_in_text(row.role, "zh"),
            "switch": row.switch_model or row.fabric,
            "switch_zh": row.switch_model_zh or row.switch_model or row.fabric,
        }
        if row.cabled_per_node == 0 and row.ports_per_node > 0:
            cabling = "none"
        elif row.role in ("scale_up", "scale_out") and packages > 0:
            cabling = "rail"
        else:
            cabling = "all"
        book.put(
            f"network.{role}.{fabric}.{scope}.cabled_per_node",
            row.cabled_per_node,
            variant=cabling,
            label=names,
            source=_ASSUMED_CABLING
            if row.cabled_per_node < row.ports_per_node
            else Source("input", "server NICs"),
            ports_on_server=row.ports_per_node,
            packages=packages,
        )
        book.put(
            f"network.{role}.{fabric}.{scope}.ports_needed",
            row.ports_needed,
            label=names,
            nodes=row.nodes,
            cabled_per_node=row.cabled_per_node,
        )
        used = row.ports_needed + row.attached_ports + row.external_uplinks
        if row.switches:
            book.put(
                f"network.{role}.{fabric}.{scope}.ports_used",
                row.ports_used,
                label=names,
                source=_ASSUMED_PLANE if row.added_nic else None,
                ports=row.ports_needed,
                attached=row.attached_ports,
                external_uplinks=row.external_uplinks,
                uplinks=row.uplinks,
            )
            book.put(
                f"network.{role}.{fabric}.{scope}.spare_ports",
                row.spare_ports,
                variant="rails" if row.sizing == "rails" else None,
                label=names,
                used=used,
                switches=row.switches,
            )
        book.put(
            f"network.{role}.{fabric}.{scope}.switches",
            row.switches,
            variant=row.sizing if row.sizing in ("pair", "rails") else None,
            label=names,
            need=used + row.spare_ports,
            P=row.ports_per_switch,
            leaves=row.leaves,
            spines=row.spines,
            rails=row.cabled_per_node,
        )
        if link_media(row.link_gbps)[1] == "cat6":
            optics = "copper"
        elif row.switches == 0 and row.ports_needed > 0:
            optics = "unswitched"
        else:
            optics = None
        book.put(
            f"network.{role}.{fabric}.{scope}.optics",
            row.optics,
            variant=optics,
            label=names,
            ports=used if row.switches else row.ports_needed,
            uplinks=row.uplinks,
            link_gbps=row.link_gbps,
        )


def _no_switch_check(row: FabricRow) -> Check:
    return raise_(
        "network.no_switch_for_fabric",
        figures={"ports_needed": row.ports_needed},
        fabric=row.fabric,
        role=row.role,
        ports_needed=row.ports_needed,
        plane_zh=plane_in_text(row.role, "zh"),
        fabric_zh=fabric_label(row.fabric, "zh"),
    )


def _traffic(g: GroupLayout, devices_per_node: int) -> str | None:
    """Name the cross-node collective traffic of a group, or None when it stays inside a node."""
    if g.nodes <= 1:
        return None
    p = g.parallel
    parts = []
    if p.expert_parallel and p.ep > 1:
        parts.append(f"EP{p.ep}")
    if devices_per_node and p.tp > devices_per_node:
        parts.append(f"TP{p.tp}")
    return "/".join(parts) or None


def _cross_node_links(
    layout: LayoutResult, rows: list[FabricRow]
) -> tuple[tuple[CrossNodeLink, FabricRow | None], ...]:
    """For every group with cross-node EP/TP traffic, the best switched fabric it can use (and its row)."""
    links: list[tuple[CrossNodeLink, FabricRow | None]] = []
    for g in layout.groups:
        traffic = _traffic(g, layout.devices_per_node)
        if traffic is None:
            continue
        candidates = [
            r
            for r in rows
            if r.role in ("scale_up", "scale_out")
            and r.scope != "in-node"
            and g.name in r.groups
            and r.switches > 0
        ]
        if not candidates:
            links.append((CrossNodeLink(g.name, traffic, "", "", 0, False, 0, "none"), None))
            continue
        best = max(candidates, key=lambda r: (r.rdma, r.link_gbps, r.node_bandwidth_gbps))
        if best.rdma and best.link_gbps >= MIN_CROSS_NODE_GBPS:
            verdict = "ok"
        elif best.rdma and best.link_gbps >= MIN_VALIDATED_RDMA_GBPS:
            verdict = "slow"
        else:
            verdict = "insufficient"
        link = CrossNodeLink(
            group=g.name,
            traffic=traffic,
            fabric=best.fabric,
            switch_fabric=best.switch_fabric,
            link_gbps=best.link_gbps,
            rdma=best.rdma,
            node_bandwidth_gbps=best.node_bandwidth_gbps,
            verdict=verdict,
        )
        links.append((link, best))
    return tuple(links)


def _link_en(x: CrossNodeLink) -> str:
    if not x.fabric:
        return f"{group_label(x.group, 'en')} ({x.traffic}) has no switched fabric between its nodes"
    rdma = "RDMA" if x.rdma else "without RDMA"
    return (
        f"{group_label(x.group, 'en')} ({x.traffic}) over {x.link_gbps} Gb/s "
        f"{fabric_label(x.switch_fabric or x.fabric, 'en')} {rdma}, "
        f"{x.node_bandwidth_gbps / 1000:g} Tb/s per node"
    )


def _link_zh(x: CrossNodeLink) -> str:
    if not x.fabric:
        return f"{group_label(x.group, 'zh')}（{x.traffic}）节点间没有交换网络"
    rdma = "RDMA" if x.rdma else "无 RDMA"
    return (
        f"{group_label(x.group, 'zh')}（{x.traffic}）经 {x.link_gbps} Gb/s "
        f"{fabric_label(x.switch_fabric or x.fabric, 'zh')}（{rdma}），"
        f"每节点 {x.node_bandwidth_gbps / 1000:g} Tb/s"
    )


def _cross_node_checks(links: tuple[CrossNodeLink, ...]) -> list[Check]:
    """ERROR without RDMA or below 200G, WARNING at 200G RDMA, OK at ≥ 400G RDMA ([S1] §6.3)."""
    checks = []
    bad = [x for x in links if x.verdict in ("insufficient", "none")]
    slow = [x for x in links if x.verdict == "slow"]
    good = [x for x in links if x.verdict == "ok"]
    if bad:
        checks.append(
            raise_(
                "network.cross_node_fabric_insufficient",
                figures={
                    x.group: {"traffic": x.traffic, "link_gbps": x.link_gbps, "rdma": x.rdma} for x in bad
                },
                links_en="; ".join(_link_en(x) for x in bad),
                min_gbps=MIN_CROSS_NODE_GBPS,
                links_zh="；".join(_link_zh(x) for x in bad),
            )
        )
    if slow:
        checks.append(
            raise_(
                "network.cross_node_fabric_below_400g",
                figures={x.group: {"traffic": x.traffic, "link_gbps": x.link_gbps} for x in slow},
                links_en="; ".join(_link_en(x) for x in slow),
                min_gbps=MIN_CROSS_NODE_GBPS,
                links_zh="；".join(_link_zh(x) for x in slow),
            )
        )
    if good:
        checks.append(
            raise_(
                "network.cross_node_fabric_ok",
                figures={x.group: {"traffic": x.traffic, "link_gbps": x.link_gbps} for x in good},
                links_en="; ".join(_link_en(x) for x in good),
                links_zh="；".join(_link_zh(x) for x in good),
            )
        )
    return checks


def _tflops(req: PlanRequest) -> tuple[float, str]:
    table = req.server.accelerator.tflops or {}
    act = req.model.activation_format.lower()
    for name in (act, act.removeprefix("mx"), "bf16", "fp16"):
        if table.get(name):
            return float(table[name]), name
    if table:
        name = max(table, key=lambda k: table[k])
        return float(table[name]), name
    return 0.0, ""


def _kv_transfer(
    req: PlanRequest, layout: LayoutResult, rows: list[FabricRow], book: FigureBook
) -> tuple[KvTransfer | None, list[Check]]:
    """KV moved from each prefill node to the decode pool, against the node's scale-out bandwidth.

    The rate is the most the prefill node can produce: its prefill token rate
    (devices × TFLOPS × MFU ÷ 2 × active params) divided by the prompt's new
    tokens.  On the wire the MLA latent is counted once per TP rank (every rank
    holds and sends the full latent); GQA heads are split across ranks.
    """
    model, w, perf = req.model, req.workload, req.performance
    prefill = [g for g in layout.groups if g.role == "prefill"]
    if not prefill:
        return None, []
    tp = prefill[0].parallel.tp
    b = kv_dtype_bytes(req.serving.kv_cache_dtype)
    # One copy of the cache (as a single rank would hold it): the same formulas as memory.
    engine = engine_for(req.server.accelerator.software_stack, req.serving.engine)
    per_token = kv_bytes_per_token(
        model,
        tp=1,
        kv_cache_dtype=req.serving.kv_cache_dtype,
        engine=engine,
        version=req.serving.vllm_version,
    )
    kv_heads_on_wire = tp * max(1, model.num_kv_heads // tp) if model.num_kv_heads else 0
    per_mla = (
        mla_layer_kv_bytes(model, req.serving.kv_cache_dtype, engine=engine, version=req.serving.vllm_version)
        if model.mla_layers
        else 0
    )
    wire_per_token = (
        per_mla * model.mla_layers * tp + 2 * kv_heads_on_wire * model.head_dim * b * model.gqa_layers
    )
    sliding = 2 * kv_heads_on_wire * model.head_dim * b * model.sliding_layers
    window = min(model.sliding_window or w.input_tokens, w.input_tokens)
    state = linear_state_bytes_per_seq(model, tp=1)
    per_request = w.input_tokens * wire_per_token + window * sliding + state

    out_rows = [r for r in rows if r.role == "scale_out" and r.switches > 0 and prefill[0].name in r.groups]
    best = max(out_rows, key=lambda r: r.node_bandwidth_gbps, default=None)
    link = best.node_bandwidth_gbps if best else 0

    tflops, precision = _tflops(req)
    devices = layout.devices_per_node or req.server.logical_devices
    tokens_s = None
    req_s = None
    gbps = None
    share = None
    if tflops > 0 and model.active_params > 0 and w.input_tokens > 0:
        tokens_s = (
            devices * tflops * 1e12 * effective_factors(req).prefill_efficiency / (2 * model.active_params)
        )
        new_fraction = max(1.0 - perf.prefix_cache_hit_rate, 0.05)
        req_s = tokens_s / (w.input_tokens * new_fraction)
        gbps = req_s * per_request * 8 / 1e9
        share = gbps / link if link else None

    kv = KvTransfer(per_token, wire_per_token, state, per_request, tokens_s, req_s, gbps, link, share)
    if model.index_head_dim > 0 and model.mla_layers:
        book.put(
            "network.kv_transfer.kv_bytes_per_token",
            per_token,
            variant="dsa",
            mla_layer_bytes=per_mla,
            mla_layers=model.mla_layers,
            kv_heads=model.num_kv_heads,
            head_dim=model.head_dim,
            gqa_layers=model.gqa_layers,
            bytes=b,
        )
    else:
        book.put(
            "network.kv_transfer.kv_bytes_per_token",
            per_token,
            variant="dense",
            kv_lora_rank=model.kv_lora_rank,
            qk_rope_head_dim=model.qk_rope_head_dim,
            mla_layers=model.mla_layers,
            kv_heads=model.num_kv_heads,
            head_dim=model.head_dim,
            gqa_layers=model.gqa_layers,
            bytes=b,
        )
    book.put(
        "network.kv_transfer.state_bytes_per_request",
        state,
        linear_layers=model.linear_layers,
        heads=model.linear_num_heads,
        head_dim=model.linear_head_dim,
        state_dtype_bytes=model.linear_state_dtype_bytes,
        conv_kernel=model.linear_conv_kernel,
        conv_dim=model.linear_conv_dim,
        conv_dtype_bytes=model.linear_conv_dtype_bytes,
    )
    book.put(
        "network.kv_transfer.bytes_per_request",
        per_request,
        input_tokens=w.input_tokens,
        wire_bytes_per_token=wire_per_token,
        window_tokens=window,
        sliding_bytes_per_token=sliding,
        tp=tp,
        state_bytes=state,
    )
    book.put(
        "network.kv_transfer.link_gbps_per_node",
        link,
        fabric=best.fabric if best else "",
        ports=best.cabled_per_node if best else 0,
        link_gbps=best.link_gbps if best else 0,
    )
    checks: list[Check] = []
    if gbps is not None:
        book.put(
            "network.kv_transfer.gbps_per_node",
            round(gbps, 2),
            source=Source("assumed", "roofline prefill rate, performance.prefill_mfu"),
            devices=devices,
            tflops=tflops,
            precision=precision,
            prefill_mfu=effective_factors(req).prefill_efficiency,
            active_params=model.active_params,
            input_tokens=w.input_tokens,
            prefix_cache_hit_rate=perf.prefix_cache_hit_rate,
            bytes_per_request=per_request,
            requests_per_s=round(req_s or 0, 3),
        )
    if share is not None and gbps is not None:  # share is only ever set together with gbps
        book.put("network.kv_transfer.share", round(share, 4), kv_gbps=round(gbps, 2), link_gbps=link)
        checks.append(
            raise_(
                "network.kv_transfer_share_high" if share > KV_SHARE_WARN else "network.kv_transfer_ok",
                figures={"kv_gbps": round(gbps, 2), "link_gbps": link, "share": round(share, 4)},
                gbps=gbps,
                request_mb=per_request / 1e6,
                input_tokens=w.input_tokens,
                req_s=req_s or 0,
                share=share,
                link=link,
            )
        )
    elif link == 0:
        checks.append(raise_("network.kv_transfer_no_fabric"))
    return kv, checks


def _seed_checks(
    seed: SeedReference, switches: tuple[SwitchUnit, ...], rows: list[FabricRow], book: FigureBook
) -> list[Check]:
    ours: dict[str, int] = {}
    for s in switches:
        ours[s.fabric] = ours.get(s.fabric, 0) + 1
    diffs_en, diffs_zh = [], []
    more = fewer = False
    for fabric, count in seed.switches.items():
        book.put(f"network.seed.switches.{fabric}", count, source=seed.source, seed_switches=count)
        mine = ours.get(fabric, 0)
        if mine != count:
            rws = [r for r in rows if r.switch_fabric == fabric and r.switches]
            ports = sum(r.ports_needed for r in rws)
            p = rws[0].ports_per_switch if rws else 0
            more, fewer = more or mine > count, fewer or mine < count
            en, zh = fabric_label(fabric, "en"), fabric_label(fabric, "zh")
            diffs_en.append(f"{en}: seed {count}, plan {mine} ({ports} ports on {p}-port switches)")
            diffs_zh.append(f"{zh}：种子方案 {count} 台，本方案 {mine} 台（{ports} 个端口，单台 {p} 口）")
    if not diffs_en:
        return [
            raise_(
                "network.switch_count_vs_seed",
                figures=dict(seed.switches),
                variant="match",
                seed=seed.source.ref,
            )
        ]
    # The explanation follows the direction of the difference: more switches than the seed means
    # the seed counted larger switches than the catalog's; fewer means the seed counted spares or
    # smaller switches, while the plan sizes each fabric by the ports it needs.
    return [
        raise_(
            "network.switch_count_vs_seed",
            variant=None if more and fewer else "more" if more else "fewer",
            fix="confirm_ports",
            figures={"seed": dict(seed.switches), "plan": ours},
            seed=seed.source.ref,
            diffs_en="; ".join(diffs_en),
            diffs_zh="；".join(diffs_zh),
        )
    ]


__all__ = [
    "CrossNodeLink",
    "FabricRow",
    "KvTransfer",
    "NetworkResult",
    "SeedReference",
    "SwitchUnit",
    "seed_reference",
    "size_network",
    "switches_for_ports",
]
