"""Power: server and IT load, facility load, and A/B feed (circuit) sizing.

Two feed-sizing methods are reported side by side:

* **seed** — the method behind [S1]'s "200 A dedicated circuit × 2" (8 × A3)
  and "400 A × 2" (16 × A3): three-phase current at power factor 1 with no
  continuous-load derating, rounded up to the next breaker rating.  It leaves
  no headroom: 196.9 A on a 200 A breaker is 98 % of its rating.
* **recommended** — the site's power factor, the current divided by the
  continuous-load derating (a breaker carries at most 80 % of its rating
  continuously: NEC 210.19, NetBox ``max_utilization`` 80 %), then the next
  rating on ``site.breaker_ladder_amps``.  This is the method the plan uses.

A/B redundant feeds: each of the two feeds is sized for the FULL load, so
either can carry the deployment alone.

Three-phase current: I = P ÷ (√3 × V_LL × PF); single-phase: I = P ÷ (V × PF).

``rack_feed(kw, site)`` sizes the A and B feeds of one rack; the racks module
calls it for every rack it fills.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import TYPE_CHECKING

from .checks import raise_
from .figures import FigureBook
from .seed_references import power_source
from .types import (
    Check,
    FeedSizing,
    GroupPower,
    LayoutResult,
    PlanRequest,
    PowerResult,
    SiteSpec,
    Source,
)
from .vocabulary import POWER_METHODS, group_label

if TYPE_CHECKING:  # pragma: no cover
    from .network import NetworkResult

SQRT3 = math.sqrt(3.0)
FEEDS_AB = 2  # A and B feeds, each carrying the full load
DERATING_SOURCE = Source("public", "NEC 210.19 / NetBox max_utilization 80 %")
SEED_METHOD_REF = "S1 §3.2, §4.3 (PF 1, no derating)"
_SEED_METHOD_SOURCE = Source("seed", SEED_METHOD_REF)
_EPS = 1e-9
DERIVED = Source("derived")
_PF_SOURCE = Source("assumed", "site power factor")
PSU_EFFICIENCY = 0.94  # assumed: titanium/platinum PSUs at high load


# --------------------------------------------------------------------------- arithmetic


def line_current_amps(kw: float, voltage_ll: float, power_factor: float, phases: int = 3) -> float:
    """Line current of a load: three-phase I = P ÷ (√3·V_LL·PF), single-phase I = P ÷ (V·PF)."""
    if kw <= 0:
        return 0.0
    factor = SQRT3 if phases == 3 else 1.0
    return kw * 1000.0 / (factor * voltage_ll * power_factor)


def next_breaker_amps(amps: float, ladder: tuple[int, ...]) -> int | None:
    """Smallest rating on the ladder that is ≥ ``amps`` (None when beyond the ladder)."""
    for rating in sorted(ladder):
        if rating + _EPS >= amps:
            return rating
    return None


def _site_source(site: SiteSpec, name: str, default: Source) -> Source:
    return site.sources.get(name, default) if site.sources else default


def _size_feed(
    kw: float, site: SiteSpec, method: str, key: str, seed_source: Source, detail: bool = True
) -> FeedSizing:
    """Size an A/B pair of feeds for ``kw`` with the named method (no checks).

    ``detail=False`` (per rack) keeps the four figures a rack row shows; the
    power factor, derating and load figures are then the deployment's.
    """
    if method == "seed":
        pf, derating = 1.0, 1.0
        pf_source = derating_source = out_source = seed_source
        method_en, method_zh = POWER_METHODS["seed"].en, POWER_METHODS["seed"].zh
    else:
        pf, derating = site.power_factor, site.continuous_derating
        pf_source = _site_source(site, "power_factor", _PF_SOURCE)
        derating_source = _site_source(site, "continuous_derating", DERATING_SOURCE)
        out_source = DERIVED
        method_en, method_zh = POWER_METHODS["recommended"].en, POWER_METHODS["recommended"].zh
    derating = derating if derating > 0 else 1.0
    current = line_current_amps(kw, site.voltage_ll, pf, site.phases)
    required = current / derating
    ladder = site.breaker_ladder_amps or (max(1, math.ceil(required)),)
    largest = max(ladder)
    circuits = 1
    breaker = next_breaker_amps(required, ladder)
    exceeds = breaker is None
    if breaker is None:
        circuits = math.ceil(required / largest - _EPS)
        breaker = next_breaker_amps(required / circuits, ladder) or largest
    utilisation = current / (breaker * circuits) if breaker else 0.0

    current_1, required_1 = round(current, 1), round(required, 1)
    book = FigureBook()
    method_label = {"method_en": method_en, "method_zh": method_zh}
    book.put(
        f"{key}.current_amps",
        current_1,
        variant="three_phase" if site.phases == 3 else "single_phase",
        label=method_label,
        source=out_source,
        P_kw=round(kw, 3),
        V_LL=site.voltage_ll,
        PF=pf,
        phases=site.phases,
    )
    book.put(f"{key}.required_amps", required_1, source=out_source, current_amps=current_1, derating=derating)
    book.put(
        f"{key}.breaker_amps",
        breaker,
        variant="split" if circuits > 1 else "one_circuit",
        source=out_source,
        required_amps=required_1,
        circuits=circuits,
        largest_amps=largest,
    )
    book.put(
        f"{key}.utilisation",
        round(utilisation, 4),
        current_amps=current_1,
        breaker_amps=breaker,
        circuits=circuits,
    )
    if detail:
        book.put(f"{key}.load_kw", round(kw, 3), label=method_label, load_kw=round(kw, 3))
        book.put(f"{key}.power_factor", pf, source=pf_source)
        book.put(f"{key}.derating", derating, source=derating_source)
        book.put(f"{key}.circuits", circuits, required_amps=required_1, largest_amps=largest)
    return FeedSizing(
        method=method,
        load_kw=kw,
        voltage_ll=site.voltage_ll,
        phases=site.phases,
        power_factor=pf,
        derating=derating,
        current_amps=current,
        required_amps=required,
        breaker_amps=breaker,
        circuits=circuits,
        feeds=FEEDS_AB,
        utilisation=utilisation,
        exceeds_largest_breaker=exceeds,
        figures=book.figures,
    )


def _exceeds_check(feed: FeedSizing, site: SiteSpec, rack: str | None) -> Check:
    """A rack's feed beyond the site's largest breaker (an error), or the whole deployment's (a warning)."""
    largest = max(site.breaker_ladder_amps) if site.breaker_ladder_amps else feed.breaker_amps
    figures = {
        "load_kw": round(feed.load_kw, 1),
        "required_amps": round(feed.required_amps, 1),
        "largest_breaker_amps": largest,
        "circuits": feed.circuits,
        "breaker_amps": feed.breaker_amps,
    }
    feed_kw, required, current = feed.load_kw, feed.required_amps, feed.current_amps
    if rack is None:
        return raise_(
            "power.total_feed_split",
            figures=figures,
            load_kw=feed_kw,
            required_amps=required,
            current_amps=current,
            derating=feed.derating,
            largest=largest,
            circuits=feed.circuits,
            breaker_amps=feed.breaker_amps,
        )
    return raise_(
        "power.feed_exceeds_largest_breaker",
        figures=figures,
        rack=rack,
        load_kw=feed_kw,
        required_amps=required,
        current_amps=current,
        derating=feed.derating,
        largest=largest,
        circuits=feed.circuits,
        breaker_amps=feed.breaker_amps,
    )


def rack_feed(
    kw: float, site: SiteSpec, *, method: str = "recommended", key: str = "racks.feed", name: str = "rack"
) -> FeedSizing:
    """Size the A and B feeds (PDUs) of one rack for its full load ``kw``.

    Each rack gets an A and a B feed, each able to carry the whole rack.  An
    ERROR check ``power.feed_exceeds_largest_breaker`` is attached when even
    the largest breaker on the site's ladder cannot carry it.
    """
    feed = _size_feed(kw, site, method, key, _SEED_METHOD_SOURCE, detail=False)
    if feed.exceeds_largest_breaker:
        check = _exceeds_check(feed, site, name)
        feed = replace(feed, checks=(check,))
    return feed


def _seed_source(req: PlanRequest, nodes: int, servers_kw: float) -> Source:
    """The seed paragraph whose figures this load reproduces (seed_references.yaml: the same server, node
    count and load), else the seed's method."""
    return power_source(req, nodes, servers_kw) or _SEED_METHOD_SOURCE


# --------------------------------------------------------------------------- module entry


def size_power(req: PlanRequest, layout: LayoutResult, network: NetworkResult | None = None) -> PowerResult:
    """Size server, IT and facility load and the A/B feeds of the deployment.

    ``network`` supplies the switches' kW; when omitted it is computed with
    :func:`configurator.engine.network.size_network` (plain arithmetic).
    """
    if network is None:
        from .network import size_network

        network = size_network(req, layout)

    server, site = req.server, req.site
    server_src = (
        server.sources.get("max_input_kw", Source("input", "server catalog"))
        if server.sources
        else Source("input", "server catalog")
    )
    lf = server.typical_load_factor
    per_kw = server.max_input_kw
    per_design = per_kw * lf
    nodes = layout.nodes
    servers_kw = nodes * per_kw
    switches_kw = network.switch_kw
    it_kw = servers_kw + switches_kw
    it_design_kw = servers_kw * lf + switches_kw
    pue = site.pue
    facility_kw = it_kw * pue
    facility_design_kw = it_design_kw * pue
    pue_src = _site_source(site, "pue", Source("assumed", "site PUE"))
    seed_source = _seed_source(req, nodes, servers_kw)

    book = FigureBook()
    book.put("power.server.max_input_kw", per_kw, source=server_src)
    book.put("power.server.design_kw", round(per_design, 3), max_input_kw=per_kw, typical_load_factor=lf)
    book.put(
        "power.servers.max_kw",
        round(servers_kw, 3),
        source=seed_source if seed_source.ref != SEED_METHOD_REF else None,
        nodes=nodes,
        max_input_kw=per_kw,
    )
    book.put("power.switches.max_kw", round(switches_kw, 3), switches=len(network.switches))
    book.put(
        "power.it.max_kw",
        round(it_kw, 3),
        servers_kw=round(servers_kw, 3),
        switches_kw=round(switches_kw, 3),
    )
    book.put(
        "power.it.design_kw",
        round(it_design_kw, 3),
        servers_kw=round(servers_kw, 3),
        typical_load_factor=lf,
        switches_kw=round(switches_kw, 3),
    )
    book.put("power.pue", pue, source=pue_src)
    book.put("power.facility.max_kw", round(facility_kw, 3), it_kw=round(it_kw, 3), pue=pue)
    book.put(
        "power.facility.design_kw", round(facility_design_kw, 3), it_design_kw=round(it_design_kw, 3), pue=pue
    )

    # Per group: servers + the switches that serve only this group, on the group's own feeds.
    groups: list[GroupPower] = []
    attributed = 0.0
    for g in layout.groups:
        g_switch_kw = sum(s.power_kw for s in network.switches if tuple(s.groups) == (g.name,))
        attributed += g_switch_kw
        g_servers = g.nodes * per_kw
        g_it = g_servers + g_switch_kw
        g_design = g_servers * lf + g_switch_kw
        g_feed = _size_feed(
            g_it, site, "recommended", f"power.group.{g.name}.feed", seed_source, detail=False
        )
        g_book = FigureBook()
        names = {"group_en": group_label(g.name, "en"), "group_zh": group_label(g.name, "zh")}
        g_book.put(
            f"power.group.{g.name}.servers_kw",
            round(g_servers, 3),
            label=names,
            nodes=g.nodes,
            max_input_kw=per_kw,
        )
        g_book.put(
            f"power.group.{g.name}.it_kw",
            round(g_it, 3),
            label=names,
            servers_kw=round(g_servers, 3),
            switches_kw=round(g_switch_kw, 3),
        )
        g_book.update(g_feed.figures)
        groups.append(
            GroupPower(
                group=g.name,
                role=g.role,
                nodes=g.nodes,
                servers_kw=g_servers,
                switches_kw=g_switch_kw,
                it_kw=g_it,
                design_kw=g_design,
                facility_kw=g_it * pue,
                feed=g_feed,
                figures=g_book.figures,
            )
        )
        book.update(g_book.figures)
    shared_kw = max(0.0, switches_kw - attributed)
    book.put(
        "power.switches.shared_kw",
        round(shared_kw, 3),
        switches_kw=round(switches_kw, 3),
        attributed_kw=round(attributed, 3),
    )

    seed_feed = _size_feed(servers_kw, site, "seed", "power.feed.seed", seed_source)
    rec_feed = _size_feed(it_kw, site, "recommended", "power.feed.recommended", seed_source)
    book.update(seed_feed.figures)
    book.update(rec_feed.figures)

    checks: list[Check] = []
    checks.extend(_feed_checks(seed_feed, rec_feed, site, servers_kw, switches_kw))
    psu = _psu_check(req)
    if psu is not None:
        checks.append(psu)

    return PowerResult(
        per_server_kw=per_kw,
        per_server_design_kw=per_design,
        servers=nodes,
        servers_kw=servers_kw,
        switches_kw=switches_kw,
        shared_switches_kw=shared_kw,
        it_kw=it_kw,
        it_design_kw=it_design_kw,
        facility_kw=facility_kw,
        facility_design_kw=facility_design_kw,
        pue=pue,
        groups=tuple(groups),
        seed_feed=seed_feed,
        recommended_feed=rec_feed,
        method_used="recommended",
        figures=book.figures,
        checks=tuple(checks),
    )


def _feed_checks(
    seed: FeedSizing,
    rec: FeedSizing,
    site: SiteSpec,
    servers_kw: float,
    switches_kw: float,
) -> list[Check]:
    """The seed method's missing headroom, as a note (also where the seed states that circuit:
    8 × A3 → 200 A, 16 × A3 → 400 A): the plan itself always sizes the feeds by the recommended
    method, so the engineer has nothing to act on or accept; the note tells one who sizes
    circuits the seed's way why the plan's breakers are larger."""
    checks: list[Check] = []
    if servers_kw <= 0:
        return checks
    v = f"{site.voltage_ll:g}"
    phase_en = "three-phase" if site.phases == 3 else "single-phase"
    phase_zh = "三相" if site.phases == 3 else "单相"
    limit_pct = round(site.continuous_derating * 100)
    if seed.utilisation > site.continuous_derating + _EPS:
        checks.append(
            raise_(
                "power.seed_circuit_no_headroom",
                figures={
                    "seed_current_amps": round(seed.current_amps, 1),
                    "seed_breaker_amps": seed.breaker_amps,
                    "seed_utilisation": round(seed.utilisation, 4),
                    "recommended_current_amps": round(rec.current_amps, 1),
                    "recommended_required_amps": round(rec.required_amps, 1),
                    "recommended_breaker_amps": rec.breaker_amps,
                    "circuits": rec.circuits,
                },
                fix="split" if rec.circuits > 1 else "one_circuit",
                seed_breaker=seed.breaker_amps,
                current_amps=seed.current_amps,
                servers_kw=servers_kw,
                phase_en=phase_en,
                voltage=v,
                utilisation=seed.utilisation,
                limit_pct=limit_pct,
                description_en=rec.description_en,
                load_kw=rec.load_kw,
                power_factor=rec.power_factor,
                derating=rec.derating,
                phase_zh=phase_zh,
                description_zh=rec.description_zh,
                rec_breaker=rec.breaker_amps,
                circuits=rec.circuits,
            )
        )
    if rec.exceeds_largest_breaker:
        checks.append(_exceeds_check(rec, site, None))
    checks.append(
        raise_(
            "power.method",
            figures={"recommended_breaker_amps": rec.breaker_amps, "seed_breaker_amps": seed.breaker_amps},
            load_kw=rec.load_kw,
            servers_kw=servers_kw,
            switches_kw=switches_kw,
            current_amps=rec.current_amps,
            power_factor=rec.power_factor,
            required_amps=rec.required_amps,
            derating=rec.derating,
            description_en=rec.description_en,
            seed_description_en=seed.description_en,
            description_zh=rec.description_zh,
            seed_description_zh=seed.description_zh,
        )
    )
    return checks


def _psu_check(req: PlanRequest) -> Check | None:
    """Warn when the PSUs on one feed cannot carry the server.

    PSUs are split evenly over the A and B feeds.  An N+N set is built for
    that and passes; otherwise the output rating of one side's PSUs is compared
    with the server's maximum input × PSU efficiency (the output it must deliver).
    """
    s = req.server
    if s.psu_count < 2 or s.psu_watts <= 0 or s.max_input_kw <= 0:
        return None
    if s.psu_redundant * 2 >= s.psu_count:
        return None
    per_side = s.psu_count // 2
    side_kw = per_side * s.psu_watts / 1000.0
    if side_kw + _EPS >= s.max_input_kw * PSU_EFFICIENCY:
        return None
    redundancy = f"{s.psu_count - s.psu_redundant}+{s.psu_redundant}" if s.psu_redundant else f"{s.psu_count}"
    return raise_(
        "power.psu_not_ab_redundant",
        figures={
            "psu_count": s.psu_count,
            "psu_watts": s.psu_watts,
            "per_feed_kw": round(side_kw, 2),
            "max_input_kw": s.max_input_kw,
        },
        server_en=s.name,
        psu_count=s.psu_count,
        psu_kw=s.psu_watts / 1000,
        redundancy=redundancy,
        per_side=per_side,
        side_kw=side_kw,
        max_input_kw=s.max_input_kw,
        server_zh=s.name_zh or s.name,
    )
