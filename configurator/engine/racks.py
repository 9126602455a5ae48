"""Racks: place servers, switches and PDUs into racks, size each rack's A/B
feeds and check cooling (the elevation drawings are in ``configurator/drawings/racks.py``).

Placement rules:

* Servers per rack = min(⌊usable U ÷ server U⌋, ⌊rack.max_kw ÷ server kW⌋),
  usable U = rack U − reserved U (top, cable management) − horizontal PDU U.
  With the default 42U / 40 kW rack two 16.2 kW Atlas 800 A3 fit, which is
  the seed's layout: 8 nodes → 4 racks, 16 → 8 ([S1] §3.2, §4.3).
* Every serving group starts in its own rack, so the two clusters of a
  primary/standby or tenant pair, and the P and D pools, never share a rack
  and each rack has its own A and B feeds.  Servers fill racks bottom-up from
  U1, in node order.
* Switches are mounted top-down below the PDUs: a switch that serves one
  group goes into the first of that group's racks with room (U and kW); a
  shared switch goes into the first rack with room; otherwise into a network
  rack (N01, N02 …).
* Cooling is checked separately from placement: a rack above the site's
  air-cooling limit (≈20–25 kW) is a warning, with the alternatives
  (containment / liquid cooling, or fewer servers per rack).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field

from .checks import raise_
from .figures import FigureBook
from .names import node_name
from .network import NetworkResult, SeedReference, SwitchUnit, seed_reference
from .power import PowerResult, rack_feed
from .types import (
    CONTAINMENT_KW_LIMIT,
    Check,
    GroupLayout,
    LayoutResult,
    PlanRequest,
    RackLayout,
    RackResult,
    RackSlot,
    Source,
)
from .vocabulary import TIERS, group_short, plane_short

CONTAINMENT_SOURCE = Source("assumed", "35–40 kW per rack with hot/cold-aisle containment")
_EPS = 1e-9
# 1 kW of electrical input is 3,412.14 BTU/h of heat (1 BTU/h = 0.29307107 W, the international table BTU).
BTU_H_PER_KW = 3412.14
# Cable length classes by how far a link runs (assumed lengths, to be confirmed on the site survey):
# inside one rack (≤ 3 m), to a rack at most two positions away (≤ 10 m), along the row (≤ 30 m).
# Devices outside the racks planned here (gateways, the storage system, the customer's network) are
# reached along the row.
CABLE_LENGTHS = {"in_rack": 3, "adjacent": 10, "row": 30}
_LENGTH_SOURCE = Source("assumed", "in-rack ≤ 3 m, within two racks ≤ 10 m, along the row ≤ 30 m")
C19_MIN_PSU_WATTS = 2000  # IEC 60320 C19/C20 (16 A) for PSUs of 2 kW and more, C13/C14 (10 A) below
SWITCH_PSUS = 2  # a switch's two PSUs, one on each feed (assumed)


# --------------------------------------------------------------------------- placement


@dataclass
class _Rack:
    name: str
    kind: str
    rack_units: int
    usable: int
    bottom: int  # next free U from the bottom
    top: int  # highest free U
    slots: list[RackSlot] = field(default_factory=list)
    groups: list[str] = field(default_factory=list)
    kw: float = 0.0
    design_kw: float = 0.0
    servers: int = 0
    switches: int = 0
    nodes: list[int] = field(default_factory=list)
    switch_units: list[int] = field(default_factory=list)  # indices into NetworkResult.switches

    @property
    def free(self) -> int:
        return self.top - self.bottom + 1


def _new_rack(req: PlanRequest, name: str, kind: str, slots: bool = True) -> _Rack:
    """An empty rack: reserved units at the top, then the horizontal PDUs (A above B)."""
    spec = req.rack
    h = spec.rack_units
    reserved = max(0, min(spec.reserved_units, h))
    pdu = max(0, min(spec.pdu_units, h - reserved))
    rack = _Rack(name, kind, h, h - reserved - pdu, bottom=1, top=h - reserved - pdu)
    if not slots:
        return rack
    if reserved:
        rack.slots.append(
            RackSlot(h - reserved + 1, reserved, "blank", "Reserved (cable management)", "预留（理线）")
        )
    if pdu >= 2:
        a = math.ceil(pdu / 2)
        rack.slots.append(RackSlot(h - reserved - a + 1, a, "pdu", "PDU A", "PDU（A 路）"))
        rack.slots.append(RackSlot(h - reserved - pdu + 1, pdu - a, "pdu", "PDU B", "PDU（B 路）"))
    elif pdu == 1:
        rack.slots.append(RackSlot(h - reserved, 1, "pdu", "PDU A/B", "PDU（A/B 路）"))
    return rack


def servers_per_rack(req: PlanRequest, max_kw: float | None = None) -> int:
    """min(⌊usable U ÷ server U⌋, ⌊max kW ÷ server kW⌋), at least 1."""
    spec, server = req.rack, req.server
    usable = spec.rack_units - spec.reserved_units - spec.pdu_units
    limit_kw = spec.max_kw if max_kw is None else max_kw
    by_u = usable // server.rack_units if server.rack_units > 0 else usable
    by_kw = (
        math.floor(limit_kw / server.max_input_kw + _EPS)
        if server.max_input_kw > 0 and limit_kw > 0
        else by_u
    )
    return max(1, min(by_u, by_kw))


def _short_name(req: PlanRequest) -> str:
    # "Atlas 800 A3 (super-node server)" → "A3": the last word before any parenthesis.
    name = (req.server.name.split("(")[0].strip() or req.server.slug).split()
    return name[-1] if name else "node"


def _node_label(short: str, node: int, g: GroupLayout) -> tuple[str, str]:
    role = "master" if node == g.first_node else "worker"
    role_zh = "主节点" if role == "master" else "工作节点"
    group_zh = group_short(g.name, "zh")
    # One naming scheme everywhere (engine/names.py): node-00 is the first node, as the launch scripts.
    name = node_name(node)
    group_en = group_short(g.name, "en")
    return f"{name} ({group_en}, {role})", f"{name}（{group_zh}，{role_zh}）"


def _switch_label(sw: SwitchUnit) -> tuple[str, str]:
    scope = group_short(sw.groups[0], "en") if len(sw.groups) == 1 else plane_short(sw.role, "en")
    scope_zh = group_short(sw.groups[0], "zh") if len(sw.groups) == 1 else plane_short(sw.role, "zh")
    tier = "" if sw.tier == "single" else f", {sw.tier}"
    tier_zh = "" if sw.tier == "single" else f"，{TIERS[sw.tier].zh if sw.tier in TIERS else sw.tier}"
    label_zh = sw.label.replace(sw.model, sw.model_zh, 1) if sw.model_zh else sw.label
    return f"{sw.label} ({scope}{tier})", f"{label_zh}（{scope_zh}{tier_zh}）"


def _place(
    req: PlanRequest, layout: LayoutResult, network: NetworkResult, max_kw: float, slots: bool = True
) -> list[_Rack]:
    """Fill racks by the placement rules; ``slots=False`` when only the counts and loads matter."""
    server = req.server
    per_rack = servers_per_rack(req, max_kw)
    short = _short_name(req)
    lf = server.typical_load_factor
    racks: list[_Rack] = []
    group_racks: dict[str, list[_Rack]] = {}
    groups = layout.groups or (
        GroupLayout(
            "cluster",
            "serve",
            layout.nodes,
            0,
            req.topology.parallel,
            layout.nodes * layout.devices_per_node,
            0,
        ),
    )
    for g in groups:
        mine: list[_Rack] = []
        for i in range(g.nodes):
            node = g.first_node + i
            if not mine or mine[-1].servers >= per_rack or mine[-1].free < server.rack_units:
                rack = _new_rack(req, f"R{len(racks) + 1:02d}", "compute", slots)
                rack.groups.append(g.name)
                racks.append(rack)
                mine.append(rack)
            rack = mine[-1]
            if slots:
                label, label_zh = _node_label(short, node, g)
                rack.slots.append(
                    RackSlot(
                        rack.bottom,
                        server.rack_units,
                        "server",
                        label,
                        label_zh,
                        node,
                        g.name,
                        server.max_input_kw,
                    )
                )
            rack.bottom += server.rack_units
            rack.nodes.append(node)
            rack.kw += server.max_input_kw
            rack.design_kw += server.max_input_kw * lf
            rack.servers += 1
        group_racks[g.name] = mine

    network_racks: list[_Rack] = []
    for index, sw in enumerate(network.switches):
        if len(sw.groups) == 1 and sw.groups[0] in group_racks:
            candidates = group_racks[sw.groups[0]]
        else:
            candidates = racks
        target = next((r for r in candidates if _fits(r, sw, max_kw)), None)
        if target is None:
            target = next((r for r in network_racks if _fits(r, sw, max_kw)), None)
        if target is None:
            target = _new_rack(req, f"N{len(network_racks) + 1:02d}", "network", slots)
            network_racks.append(target)
        u = max(1, sw.rack_units)
        if slots:
            label, label_zh = _switch_label(sw)
            target.slots.append(
                RackSlot(
                    target.top - u + 1,
                    u,
                    "switch",
                    label,
                    label_zh,
                    None,
                    sw.groups[0] if len(sw.groups) == 1 else "",
                    sw.power_kw,
                )
            )
        target.top -= u
        target.switch_units.append(index)
        target.kw += sw.power_kw
        target.design_kw += sw.power_kw
        target.switches += 1
    return racks + network_racks


def _fits(rack: _Rack, sw: SwitchUnit, max_kw: float) -> bool:
    return rack.free >= max(1, sw.rack_units) and (max_kw <= 0 or rack.kw + sw.power_kw <= max_kw + _EPS)


def _cooling_limit(req: PlanRequest) -> tuple[float | None, Source]:
    cooling = req.rack.cooling
    if cooling == "air":
        src = (
            req.site.sources.get("air_cooling_kw_limit", Source("assumed", "site air-cooling limit"))
            if req.site.sources
            else Source("assumed", "site air-cooling limit")
        )
        return req.site.air_cooling_kw_limit, src
    if cooling == "containment":
        return max(CONTAINMENT_KW_LIMIT, req.site.air_cooling_kw_limit), CONTAINMENT_SOURCE
    return None, Source("input", "liquid cooling")


# --------------------------------------------------------------------------- module entry


def place_racks(
    req: PlanRequest, layout: LayoutResult, power: PowerResult | None, network: NetworkResult
) -> RackResult:
    """Place servers, switches and PDUs into racks and size each rack's A/B feeds.

    ``power`` is accepted for the composition in ``plan()``; the per-rack loads
    are summed here from the devices placed.
    """
    spec, server, site = req.rack, req.server, req.site
    built = _place(req, layout, network, spec.max_kw)
    limit, limit_src = _cooling_limit(req)
    racks: list[RackLayout] = []
    book = FigureBook()
    feed_checks: list[Check] = []
    psu_per_feed = math.ceil(server.psu_count / 2) if server.psu_count else 1
    weights = _Weights(req, network)
    server_c19 = server.psu_watts >= C19_MIN_PSU_WATTS if server.psu_watts else server.max_input_kw >= 2
    for i, r in enumerate(built):
        feed = rack_feed(r.kw, site, key=f"racks.{r.name}.feed", name=r.name)
        feed_checks.extend(feed.checks)
        used = sum(s.height_u for s in r.slots if s.kind != "blank")
        slots = tuple(sorted(r.slots, key=lambda s: s.u_position))
        heat = round(r.kw * BTU_H_PER_KW)
        c19 = r.servers * psu_per_feed if server_c19 else 0
        c13 = (0 if server_c19 else r.servers * psu_per_feed) + r.switches * (SWITCH_PSUS // 2)
        weight, floor_load = weights.rack(book, r)
        book.put(
            f"racks.{r.name}.heat_btu_h",
            heat,
            source=Source("public", "1 kW = 3,412.14 BTU/h (international table BTU)"),
            kw=round(r.kw, 3),
        )
        book.put(
            f"racks.{r.name}.pdu_sockets",
            c19 + c13,
            source=Source("input", "server PSUs") if server.psu_count else None,
            servers=r.servers,
            psus_per_feed=psu_per_feed,
            switches=r.switches,
        )
        racks.append(
            RackLayout(
                index=i,
                name=r.name,
                kind=r.kind,
                rack_units=r.rack_units,
                usable_units=r.usable,
                slots=slots,
                groups=tuple(r.groups),
                kw=r.kw,
                design_kw=r.design_kw,
                units_used=used,
                servers=r.servers,
                switches=r.switches,
                feed=feed,
                cooling=spec.cooling,
                cooling_limit_kw=limit,
                heat_btu_h=heat,
                pdu_c19=c19,
                pdu_c13=c13,
                weight_kg=weight,
                floor_load_kg_m2=floor_load,
            )
        )
        book.put(f"racks.{r.name}.kw", round(r.kw, 3), devices={s.label: s.kw for s in slots if s.kw})
        book.put(
            f"racks.{r.name}.units_used",
            used,
            server_units=_units(slots, "server"),
            switch_units=_units(slots, "switch"),
            pdu_units=_units(slots, "pdu"),
            rack_units=r.rack_units,
        )
        book.update(feed.figures)

    per_rack = servers_per_rack(req)
    usable = spec.rack_units - spec.reserved_units - spec.pdu_units
    compute = sum(1 for r in racks if r.kind == "compute")
    max_kw = max((r.kw for r in racks), default=0.0)
    total_kw = sum(r.kw for r in racks)
    units = sum(r.units_used for r in racks)
    seed = seed_reference(req, layout)

    kw_limited = server.max_input_kw > 0 and spec.max_kw > 0
    book.put(
        "racks.servers_per_rack",
        per_rack,
        variant="space_and_power" if kw_limited else "space",
        usable_u=usable,
        server_u=server.rack_units,
        rack_max_kw=spec.max_kw,
        server_kw=server.max_input_kw,
    )
    book.put(
        "racks.count",
        len(racks),
        source=seed.source if seed and seed.racks == len(racks) else None,
        compute_racks=compute,
        network_racks=len(racks) - compute,
    )
    book.put("racks.max_kw", round(max_kw, 3), racks={r.name: round(r.kw, 3) for r in racks})
    all_slots = [s for r in racks for s in r.slots]
    book.put(
        "racks.units_used",
        units,
        server_units=_units(all_slots, "server"),
        switch_units=_units(all_slots, "switch"),
        pdu_units=_units(all_slots, "pdu"),
        racks=len(racks),
    )
    if limit is not None:
        book.put("racks.cooling_limit_kw", limit, label={"cooling": spec.cooling}, source=limit_src)
    if seed is not None and seed.racks is not None:
        book.put("racks.seed.count", seed.racks, source=seed.source)
        if seed.rack_units is not None:
            book.put("racks.seed.units", seed.rack_units, source=seed.source)

    total_heat = round(total_kw * BTU_H_PER_KW)
    book.put(
        "racks.heat_btu_h",
        total_heat,
        source=Source("public", "1 kW = 3,412.14 BTU/h (international table BTU)"),
        kw=round(total_kw, 3),
    )
    floor_check = weights.totals(book, racks)
    links = _links(layout, network, built)
    lengths: dict[str, dict[str, int]] = {}  # cables by medium and length class, summing to each row's
    for medium in sorted(links):
        for length in CABLE_LENGTHS:
            by_row = links[medium][length]
            count = sum(by_row.values())
            if count:
                lengths.setdefault(medium, {})[length] = count
                book.put(
                    f"racks.cables.{medium}.{length}",
                    count,
                    source=_LENGTH_SOURCE,
                    label={"metres": CABLE_LENGTHS[length]},
                    links={k: v for k, v in by_row.items() if v},
                )

    checks: list[Check] = []
    checks.extend(_fit_checks(req, usable))
    cooling = _cooling_check(req, layout, network, racks, limit)
    if cooling is not None:
        checks.append(cooling)
    checks.extend(feed_checks)
    checks.extend(_separation_checks(layout, racks))
    if seed is not None and seed.racks is not None:
        checks.append(_seed_check(seed, racks, req))
    if floor_check is not None:
        checks.append(floor_check)

    return RackResult(
        racks=tuple(racks),
        rack_count=len(racks),
        compute_racks=compute,
        network_racks=len(racks) - compute,
        servers_per_rack=per_rack,
        max_rack_kw=max_kw,
        total_kw=total_kw,
        units_used=units,
        seed=seed,
        figures=book.figures,
        checks=tuple(checks),
        heat_btu_h=total_heat,
        cable_lengths=lengths,
    )


class _Weights:
    """Rack weight and floor loading: the empty cabinet (with its PDUs) + its servers + its switches,
    over the rack's footprint (width × depth), compared with the hall floor's rating where the site
    gives one.  Nothing is put when the server's weight or the rack's footprint is not in the catalog
    (a weight without its heaviest part would understate the load)."""

    def __init__(self, req: PlanRequest, network: NetworkResult) -> None:
        self.req = req
        self.network = network
        self.switch_kg = {s.slug: s.weight_kg for s in req.switches}
        spec = req.rack
        self.footprint = round(spec.width_mm * spec.depth_mm / 1_000_000, 3)
        self.known = req.server.weight_kg > 0 and self.footprint > 0

    def rack(self, book: FigureBook, r: _Rack) -> tuple[float, float]:
        if not self.known:
            return 0.0, 0.0
        spec, server = self.req.rack, self.req.server
        switches_kg = round(
            sum(self.switch_kg.get(self.network.switches[k].slug, 0.0) for k in r.switch_units), 2
        )
        weight = round(spec.weight_kg + r.servers * server.weight_kg + switches_kg, 1)
        book.put(
            f"racks.{r.name}.weight_kg",
            weight,
            source=self.req.server.sources.get("weight_kg") if self.req.server.sources else None,
            rack_kg=spec.weight_kg,
            servers=r.servers,
            server_kg=server.weight_kg,
            switches_kg=switches_kg,
        )
        floor_load = round(weight / self.footprint)
        book.put(
            f"racks.{r.name}.floor_load_kg_m2", floor_load, weight_kg=weight, footprint_m2=self.footprint
        )
        return weight, float(floor_load)

    def totals(self, book: FigureBook, racks: list[RackLayout]) -> Check | None:
        if not self.known or not racks:
            return None
        spec, site = self.req.rack, self.req.site
        book.put(
            "racks.footprint_m2",
            self.footprint,
            source=spec.sources.get("depth_mm") if spec.sources else None,
            width_mm=spec.width_mm,
            depth_mm=spec.depth_mm,
        )
        by_rack = {r.name: r.weight_kg for r in racks}
        book.put("racks.weight_kg", round(sum(by_rack.values()), 1), racks=by_rack)
        book.put("racks.max_weight_kg", max(by_rack.values()), racks=by_rack)
        loads = {r.name: r.floor_load_kg_m2 for r in racks}
        worst = max(loads.values())
        book.put("racks.max_floor_load_kg_m2", worst, racks=loads)
        rating = site.floor_load_kg_m2
        if rating <= 0:
            return None
        rating_src = site.sources.get("floor_load_kg_m2") if site.sources else None
        book.put("racks.floor_rating_kg_m2", rating, source=rating_src)
        return _floor_check(racks, worst, rating)


def _floor_check(racks: list[RackLayout], worst: float, rating: float) -> Check:
    """The heaviest rack's floor loading against the hall floor's rating (docs/domain.md §7)."""
    over = [r for r in racks if r.floor_load_kg_m2 > rating + _EPS]
    figures = {"max_floor_load_kg_m2": worst, "floor_rating_kg_m2": rating}
    if not over:
        return raise_("racks.floor_loading", figures=figures, worst=worst, rating=rating)
    return raise_(
        "racks.floor_loading",
        variant="over",
        fix="spread",
        figures={**figures, "racks": [r.name for r in over]},
        n=len(over),
        names=", ".join(r.name for r in over),
        worst=worst,
        rating=rating,
    )


def _length_class(distance: int) -> str:
    if distance == 0:
        return "in_rack"
    return "adjacent" if distance <= 2 else "row"


def _links(
    layout: LayoutResult, network: NetworkResult, built: list[_Rack]
) -> dict[str, dict[str, dict[str, int]]]:
    """Links by cable medium, length class (:data:`CABLE_LENGTHS`) and fabric row
    (``<role>.<fabric>.<scope>``), every class of a row counted in one pass over its nodes.

    A server's link runs to the nearest rack holding a switch of its row; the other devices' links
    and the links to the customer's network run along the row; leaf→spine links between racks of
    the row's switches.
    """
    rack_of_node = {node: i for i, r in enumerate(built) for node in r.nodes}
    rack_of_switch = {k: i for i, r in enumerate(built) for k in r.switch_units}
    out: dict[str, dict[str, dict[str, int]]] = {}
    for row in network.rows:
        if not row.switches or not row.cable_media:
            continue
        key = f"{row.role}.{row.fabric}.{row.scope}"
        homes = [
            rack_of_switch[k]
            for k, unit in enumerate(network.switches)
            if k in rack_of_switch
            and (unit.slug, unit.role, unit.groups) == (row.switch_slug, row.role, row.groups)
        ]
        counts = dict.fromkeys(CABLE_LENGTHS, 0)
        for g in layout.groups:
            if g.name not in row.groups:
                continue
            for node in range(g.first_node, g.first_node + g.nodes):
                where = rack_of_node.get(node)
                distance = min((abs(where - h) for h in homes), default=99) if where is not None else 99
                counts[_length_class(distance)] += row.cabled_per_node
        counts["row"] += row.attached_ports + row.external_uplinks
        if row.uplinks:
            spread = max(homes) - min(homes) if homes else 0
            counts[_length_class(spread)] += row.uplinks
        by_length = out.setdefault(row.cable_media, {})
        for length, count in counts.items():
            by_length.setdefault(length, {})[key] = count
    return out


def _units(slots: Iterable[RackSlot], kind: str) -> int:
    """Rack units taken by the slots of one kind (server, switch, pdu)."""
    return sum(s.height_u for s in slots if s.kind == kind)


def _fit_checks(req: PlanRequest, usable: int) -> list[Check]:
    spec, server = req.rack, req.server
    problems_en, problems_zh = [], []
    if server.rack_units > usable:
        problems_en.append(f"{server.rack_units}U server in {usable}U of usable space")
        problems_zh.append(f"{server.rack_units}U 服务器超过可用空间 {usable}U")
    if spec.max_kw > 0 and server.max_input_kw > spec.max_kw + _EPS:
        problems_en.append(f"{server.max_input_kw:g} kW server over the rack's {spec.max_kw:g} kW")
        problems_zh.append(f"单机 {server.max_input_kw:g} kW 超过机柜上限 {spec.max_kw:g} kW")
    if not problems_en:
        return []
    return [
        raise_(
            "racks.server_exceeds_rack",
            figures={
                "server_u": server.rack_units,
                "usable_u": usable,
                "server_kw": server.max_input_kw,
                "rack_max_kw": spec.max_kw,
            },
            server_en=server.name,
            server_zh=server.name_zh or server.name,
            rack_en=spec.name,
            rack_zh=spec.name_zh or spec.name,
            problems_en="; ".join(problems_en),
            problems_zh="；".join(problems_zh),
        )
    ]


def _cooling_check(
    req: PlanRequest,
    layout: LayoutResult,
    network: NetworkResult,
    racks: list[RackLayout],
    limit: float | None,
) -> Check | None:
    hot = [r for r in racks if r.exceeds_cooling]
    if not hot or limit is None:
        return None
    server = req.server
    worst = max(r.kw for r in hot)
    names = ", ".join(r.name for r in hot)
    cooling_en = "air cooling" if req.rack.cooling == "air" else "containment"
    cooling_zh = "风冷" if req.rack.cooling == "air" else "冷/热通道封闭"
    fix, per, alt_racks = "containment", 0, 0
    if server.max_input_kw <= limit + _EPS:
        fix = "containment_or_cap"
        alt_racks = len(_place(req, layout, network, limit, slots=False))
        per = servers_per_rack(req, limit)
    return raise_(
        "cooling.rack_exceeds_air_limit",
        fix=fix,
        figures={"racks": [r.name for r in hot], "max_rack_kw": round(worst, 2), "limit_kw": limit},
        hot=len(hot),
        names=names,
        worst_kw=worst,
        cooling_en=cooling_en,
        cooling_zh=cooling_zh,
        limit=limit,
        per=per,
        alt_racks=alt_racks,
    )


def _separation_checks(layout: LayoutResult, racks: list[RackLayout]) -> list[Check]:
    if len(layout.groups) < 2:
        return []
    where = {g.name: [r.name for r in racks if g.name in r.groups] for g in layout.groups}
    shared = [r.name for r in racks if len(r.groups) > 1]
    desc = "; ".join(f"{g}: {', '.join(rs)}" for g, rs in where.items())
    desc_zh = "；".join(f"{group_short(g, 'zh')}：{', '.join(rs)}" for g, rs in where.items())
    if shared:
        return [
            raise_(
                "racks.groups_share_rack",
                figures={"racks": shared},
                shared=", ".join(shared),
                desc_en=desc,
                desc_zh=desc_zh,
            )
        ]
    return [raise_("racks.groups_separate", figures=where, desc_en=desc, desc_zh=desc_zh)]


def _seed_check(seed: SeedReference, racks: list[RackLayout], req: PlanRequest) -> Check:
    n = len(racks)
    units = sum(r.units_used for r in racks)
    figures: dict[str, float | int | None] = {"racks": n, "seed_racks": seed.racks, "units_used": units}
    if n == seed.racks:
        return raise_(
            "racks.count_vs_seed",
            figures=figures,
            racks=n,
            units=units,
            seed=seed.source.ref,
            seed_units=seed.rack_units,
            seed_racks=seed.racks,
        )
    # Why the counts differ, in the terms the engineer can act on: servers per rack is
    # min(⌊usable U ÷ server U⌋, ⌊rack kW ÷ server kW⌋) (servers_per_rack); a rack cap typed in (or
    # applied as a fix) that lowers the second is the usual cause of more racks than the seed.
    spec, server = req.rack, req.server
    usable = spec.rack_units - spec.reserved_units - spec.pdu_units
    by_u = usable // server.rack_units if server.rack_units > 0 else usable
    by_kw = (
        math.floor(spec.max_kw / server.max_input_kw + _EPS)
        if server.max_input_kw > 0 and spec.max_kw > 0
        else by_u
    )
    per_rack = max(1, min(by_u, by_kw))
    figures.update(servers_per_rack=per_rack, by_space=by_u, by_power=by_kw, rack_max_kw=spec.max_kw)
    if n > (seed.racks or 0) and by_kw < by_u:
        return raise_(
            "racks.count_vs_seed",
            variant="power_limit",
            fix="raise_limit",
            figures=figures,
            racks=n,
            units=units,
            seed=seed.source.ref,
            seed_racks=seed.racks,
            max_kw=spec.max_kw,
            by_kw=by_kw,
            server_kw=server.max_input_kw,
            by_u=by_u,
        )
    if n > (seed.racks or 0):
        return raise_(
            "racks.count_vs_seed",
            variant="space",
            figures=figures,
            racks=n,
            units=units,
            seed=seed.source.ref,
            seed_racks=seed.racks,
            per_rack=per_rack,
            usable=usable,
        )
    return raise_(
        "racks.count_vs_seed",
        variant="denser",
        figures=figures,
        racks=n,
        units=units,
        seed=seed.source.ref,
        seed_racks=seed.racks,
        per_rack=per_rack,
    )


__all__ = ["RackLayout", "RackResult", "RackSlot", "place_racks", "servers_per_rack"]
