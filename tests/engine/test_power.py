"""Power: server/IT/facility load and A/B feed sizing, seed method beside the recommended one.

Requests are the seeded cases (configurator/reference.py), laid out by the layout module; the
engine picks their switches from the seeded catalog.  Power figures come from the seed:
catalog/seed/servers.yaml atlas-800-a3 (16.2 kW max input, 6 × 3 kW PSUs 5+1, load factor 0.8;
S1 §2.1) and catalog/seed/switches.yaml power_kw (lingqu-630-v1 3.0, roce-400ge-access 1.6,
roce-400ge-core 3.2, mgmt-1ge 0.15 kW; vendor datasheets as the seed cites them).
"""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from configurator import reference
from configurator.engine.layout import resolve_layout
from configurator.engine.power import line_current_amps, next_breaker_amps, rack_feed, size_power
from configurator.engine.types import Severity, SiteSpec, Source

SQRT3 = math.sqrt(3)
LADDER = SiteSpec().breaker_ladder_amps


def _next(amps: float) -> int:
    return min(r for r in LADDER if r >= amps)


def _codes(result) -> dict[str, object]:
    return {c.code: c for c in result.checks}


def _case(name: str, **replaced):
    """The seeded case ``name`` (``replaced``: fields of the resolved request swapped for odd cases)."""
    return replace(reference.request(reference.CASES[name]), **replaced)


def _power(req):
    return size_power(req, resolve_layout(req))


PAIR = "a3-8-primary-standby"
P8D8 = "a3-16-8p8d"
# The switches the engine picks for the 8-node pairs (catalog/seed/switches.yaml): 1 LingQu 630 V1
# (64 ports of its 128), 1 RoCE 400GE core switch (64 ports + 4 spare do not fit the 64-port access
# switch), the CE6866 pairs of the service and storage planes and the management and out-of-band
# switches: 3.0 + 3.2 + 4 × 0.45 + 2 × 0.15 kW.
PAIR_SWITCHES_KW = 3.0 + 3.2 + 4 * 0.45 + 2 * 0.15  # 8.3


def test_three_phase_current_is_p_over_root3_v_pf():
    # docs/domain.md §7: I = P ÷ (√3 × V_LL × PF); 129.6 kW at 380 V, PF 1 → 196.9 A
    assert line_current_amps(129.6, 380, 1.0) == pytest.approx(129_600 / (SQRT3 * 380), rel=1e-12)
    assert line_current_amps(129.6, 380, 1.0) == pytest.approx(196.9, abs=0.05)
    # single phase: I = P ÷ (V × PF)
    assert line_current_amps(2.3, 230, 1.0, phases=1) == pytest.approx(10.0)
    assert next_breaker_amps(196.9, LADDER) == 200
    assert next_breaker_amps(200.0, LADDER) == 200
    assert next_breaker_amps(2000.0, LADDER) is None


def test_8_a3_servers_129_6_kw_and_seed_200_a_per_feed():
    power = _power(_case(PAIR))
    # docs/domain.md §7 / S1 §3.2: 8 × 16.2 kW = 129.6 kW (servers alone)
    assert power.servers_kw == pytest.approx(8 * 16.2)
    assert power.figures["power.servers.max_kw"].value == pytest.approx(129.6)
    # switches reported separately (PAIR_SWITCHES_KW, catalog/seed/switches.yaml)
    assert power.switches_kw == pytest.approx(PAIR_SWITCHES_KW)
    assert power.it_kw == pytest.approx(129.6 + PAIR_SWITCHES_KW)  # 137.9
    # seed method: PF 1, no derating: 129.6 kW → 196.9 A → "200 A" per feed, two feeds (S1 §3.2)
    seed = power.seed_feed
    assert seed.current_amps == pytest.approx(129_600 / (SQRT3 * 380 * 1.0))
    assert round(seed.current_amps, 1) == 196.9
    assert seed.breaker_amps == 200
    assert seed.feeds == 2
    assert seed.utilisation == pytest.approx(196.9 / 200, abs=1e-3)
    assert power.figures["power.feed.seed.current_amps"].source == Source("seed", "S1 §3.2")


def test_16_a3_servers_259_2_kw_and_seed_400_a_per_feed():
    power = _power(_case(P8D8))
    # docs/domain.md §7 / S1 §4.3: 16 × 16.2 kW = 259.2 kW → 393.8 A at PF 1 → "400 A × 2"
    assert power.servers_kw == pytest.approx(259.2)
    assert round(power.seed_feed.current_amps, 1) == 393.8
    assert power.seed_feed.breaker_amps == 400
    assert power.figures["power.feed.seed.breaker_amps"].source == Source("seed", "S1 §4.3")


def test_recommended_feed_is_larger_and_explained_8_nodes():
    power = _power(_case(PAIR))
    rec = power.recommended_feed
    # IT load incl. switches: 129.6 + 8.3 kW; site PF 0.95, ÷ 0.8 continuous derating (NEC 210.19)
    # (catalog/seed/sites.yaml cn-default: 380 V, PF 0.95, derating 0.8)
    current = (129_600 + PAIR_SWITCHES_KW * 1000) / (SQRT3 * 380 * 0.95)  # ≈ 220.5 A
    assert rec.current_amps == pytest.approx(current)
    assert rec.required_amps == pytest.approx(current / 0.8)  # ≈ 275.7 A
    assert rec.breaker_amps == _next(current / 0.8) == 315
    assert rec.breaker_amps > power.seed_feed.breaker_amps
    assert rec.utilisation <= 0.8
    assert power.method_used == "recommended"
    # the seeded site cites its derating (catalog/seed/sites.yaml cn-default continuous_derating source;
    # the engine's own default site cites "NEC 210.19 / NetBox max_utilization 80 %")
    assert power.figures["power.feed.recommended.derating"].source == Source(
        "public", "80 % continuous-load rule (NEC; NetBox max_utilization 80 %)"
    )
    checks = _codes(power)
    headroom = checks["power.seed_circuit_no_headroom"]
    # a note, not a warning (the seed states this 200 A circuit; the plan sizes the feeds its own way)
    assert headroom.severity == Severity.OK
    assert "315 A" in headroom.fix_en and "315 A" in headroom.fix_zh
    assert "200 A" in headroom.message_en and "80 %" in headroom.message_en
    assert "独立回路" in headroom.message_zh and "A/B 路" in headroom.message_zh
    assert checks["power.method"].severity == Severity.OK


def test_recommended_feed_16_nodes():
    power = _power(_case(P8D8))
    # switches from the seeded catalog: a 128-port LingQu 630 V1 per side (64 ports + 4 spare each do
    # not fit one together: 2 × 3.0 kW), 3 RoCE access switches by whole rails (3 × 1.6 kW), the
    # CE6866 service and storage pairs (4 × 0.45 kW), management and out-of-band (2 × 0.15 kW)
    switches_kw = 2 * 3.0 + 3 * 1.6 + 4 * 0.45 + 2 * 0.15  # 12.9
    assert power.switches_kw == pytest.approx(switches_kw)
    current = (259_200 + switches_kw * 1000) / (SQRT3 * 380 * 0.95)  # ≈ 435.4 A
    assert power.recommended_feed.current_amps == pytest.approx(current)
    assert power.recommended_feed.breaker_amps == _next(current / 0.8) == 630


def test_facility_load_is_it_times_pue_and_design_load_uses_load_factor():
    power = _power(_case(PAIR))
    # docs/domain.md §7: facility = IT × PUE (catalog/seed/sites.yaml cn-default pue 1.3)
    assert power.facility_kw == pytest.approx((129.6 + PAIR_SWITCHES_KW) * 1.3)
    # design: servers × typical load factor 0.8 + switches at rating
    assert power.it_design_kw == pytest.approx(129.6 * 0.8 + PAIR_SWITCHES_KW)
    assert power.facility_design_kw == pytest.approx((129.6 * 0.8 + PAIR_SWITCHES_KW) * 1.3)
    assert power.per_server_design_kw == pytest.approx(16.2 * 0.8)


def test_pair_clusters_have_their_own_feeds():
    power = _power(_case(PAIR))
    assert [g.group for g in power.groups] == ["cluster-a", "cluster-b"]
    for g in power.groups:
        # 4 × 16.2 kW per cluster; the switches are shared (both clusters use them)
        assert g.servers_kw == pytest.approx(64.8)
        assert g.switches_kw == 0
        assert g.feed.current_amps == pytest.approx(64_800 / (SQRT3 * 380 * 0.95))
        assert g.feed.breaker_amps == _next(64_800 / (SQRT3 * 380 * 0.95) / 0.8)  # 123.1 A → 125 A
    assert power.shared_switches_kw == pytest.approx(PAIR_SWITCHES_KW)


def test_prefill_and_decode_each_carry_their_lingqu_switch():
    # S1 §4.3 gives each P/D side its own LingQu switch: with its spare ports (64 + 4 per side) the
    # seeded 128-port LingQu 630 V1 no longer takes both sides, so each side carries its own.
    switches = reference.switches("lingqu-630-v1", "roce-400ge-core", "mgmt-1ge")
    power = _power(_case(P8D8, switches=switches))
    by_name = {g.group: g for g in power.groups}
    # one 3.0 kW LingQu switch per side; shared: the RoCE core switches by whole rails (128 + 8 spare
    # > 128: 7 rails of 17 ports per switch → 2 × 3.2 kW), the management switches of the management
    # and out-of-band planes (the only Ethernet-capable switch offered: 2 × 0.15 kW)
    assert by_name["prefill"].switches_kw == pytest.approx(3.0)
    assert by_name["decode"].switches_kw == pytest.approx(3.0)
    assert power.shared_switches_kw == pytest.approx(2 * 3.2 + 2 * 0.15)


def test_rack_feed_per_rack_full_load_on_a_and_b():
    site = SiteSpec()
    # two A3 per rack: 32.4 kW → 32,400 / (√3 × 380 × 0.95) = 51.8 A → ÷ 0.8 = 64.8 A → 80 A
    feed = rack_feed(32.4, site)
    assert feed.current_amps == pytest.approx(32_400 / (SQRT3 * 380 * 0.95))
    assert feed.breaker_amps == 80
    assert feed.feeds == 2
    assert feed.checks == ()
    # the seed's method would pick 50 A (49.2 A at PF 1) with no headroom
    seed = rack_feed(32.4, site, method="seed")
    assert seed.current_amps == pytest.approx(32_400 / (SQRT3 * 380))
    assert seed.breaker_amps == 50
    assert not seed.has_continuous_headroom
    assert feed.has_continuous_headroom


def test_feed_beyond_largest_breaker_is_an_error_with_a_split():
    site = SiteSpec()
    feed = rack_feed(1500.0, site, name="R01")
    required = 1_500_000 / (SQRT3 * 380 * 0.95) / 0.8  # ≈ 3,000 A > 1,600 A
    assert feed.required_amps == pytest.approx(required)
    assert feed.exceeds_largest_breaker
    assert feed.circuits == math.ceil(required / 1600)
    assert feed.breaker_amps == _next(required / feed.circuits)
    (check,) = feed.checks
    assert check.code == "power.feed_exceeds_largest_breaker"
    assert check.severity == Severity.ERROR
    assert f"{feed.circuits} × {feed.breaker_amps} A" in check.fix_en


def test_psu_split_over_a_and_b_warns_for_5_plus_1():
    power = _power(_case(PAIR))
    # S1 §2.1: 6 × 3 kW PSUs 5+1; 3 PSUs on one feed = 9 kW < 16.2 kW
    psu = _codes(power)["power.psu_not_ab_redundant"]
    assert psu.severity == Severity.WARNING
    assert psu.figures["per_feed_kw"] == pytest.approx(9.0)
    # 3+3 is built for A/B feeds: the seeded A3 with its PSUs set 3+3 (not a seed row)
    nn = _case(PAIR, server=replace(reference.server("atlas-800-a3"), psu_redundant=3))
    assert "power.psu_not_ab_redundant" not in _codes(_power(nn))


def test_seed_headroom_note_is_informational_outside_the_seed_plans():
    power = _power(_case("a3-4-single"))
    # 4 × 16.2 = 64.8 kW → 98.5 A at PF 1 → 100 A: no headroom, but the seed states no circuit here
    assert power.seed_feed.breaker_amps == 100
    check = _codes(power)["power.seed_circuit_no_headroom"]
    assert check.severity == Severity.OK


def test_every_figure_has_a_source_and_key():
    power = _power(_case(P8D8))
    for key, figure in power.figures.items():
        assert figure.key == key
        assert figure.source.kind in {"seed", "public", "assumed", "input", "derived"}
        assert figure.label_en and figure.label_zh


@pytest.mark.parametrize(
    ("kw", "site"),
    [(1500.0, SiteSpec()), (7.0, SiteSpec(voltage_ll=230.0, phases=1))],
    ids=["split-beyond-the-ladder", "single-phase"],
)
def test_feed_figures_off_the_seeded_paths_are_what_their_formulas_give(kw, site):
    """The split and single-phase variants, which no seeded plan takes (tests/golden evaluates the rest)."""
    from configurator.engine.figures import FigureBook

    seen: list = []
    FigureBook.observer = lambda definition, variant, figure: seen.append((definition, variant, figure))
    try:
        feed = rack_feed(kw, site, key="racks.R01.feed")
    finally:
        FigureBook.observer = None
    assert {f.key for _, _, f in seen} == set(feed.figures)
    for definition, variant, figure in seen:
        expected = definition.formula_for(variant).evaluate(figure.inputs)
        if expected is not None and not definition.approximate:
            assert figure.value == pytest.approx(expected, rel=1e-6, abs=0.006), figure.key
    breaker = feed.figures["racks.R01.feed.breaker_amps"]
    assert ("÷ circuits" in breaker.formula) == (feed.circuits > 1)
    assert ("3 ^ 0.5" in feed.figures["racks.R01.feed.current_amps"].formula) == (site.phases == 3)
