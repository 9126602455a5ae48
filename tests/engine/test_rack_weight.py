"""Rack weight and floor loading (engine/racks.py ``_Weights``), recomputed from the seed files.

A rack weighs its empty cabinet with PDUs (catalog/seed/racks.yaml rack-42u-air: 150 kg, 600 × 1,200 mm,
assumed), its servers (catalog/seed/servers.yaml weight_kg) and its switches (catalog/seed/switches.yaml);
floor loading is that weight over the footprint, 0.6 m × 1.2 m = 0.72 m², compared with the site's floor
rating (catalog/seed/sites.yaml cn-default: 815 kg/m², GB 50174-2017's lower bound of 8 kN/m²).
The expected figures below are summed by hand from the seed files, not read from the engine.
"""

from __future__ import annotations

from dataclasses import replace

from catalog.seed import loader
from configurator import reference
from configurator.engine.layout import resolve_layout
from configurator.engine.network import size_network
from configurator.engine.power import size_power
from configurator.engine.racks import place_racks
from configurator.engine.types import Severity

SEED = loader.load()


def _seed(kind: str, slug: str, field: str) -> float:
    return float(SEED.get(kind, slug).values[field])


def _place(req):
    layout = resolve_layout(req)
    network = size_network(req, layout)
    return place_racks(req, layout, size_power(req, layout, network), network), network


def _request(name: str, **site):
    req = reference.request(reference.CASES[name])
    return replace(req, site=replace(req.site, **site)) if site else req


def test_a3_rack_weight_is_cabinet_servers_and_switches_over_its_footprint():
    racks, network = _place(_request("a3-16-8p8d"))
    cabinet = _seed("rack", "rack-42u-air", "weight_kg")  # 150 kg
    footprint = _seed("rack", "rack-42u-air", "width_mm") * _seed("rack", "rack-42u-air", "depth_mm") / 1e6
    assert footprint == 0.72
    a3 = _seed("server", "atlas-800-a3", "weight_kg")  # 150 kg
    switch_kg = {r.slug: float(r.values["weight_kg"]) for r in SEED.of("switch")}
    for rack in racks.racks:
        names = [s.label for s in rack.slots if s.kind == "switch"]
        placed = [u for u in network.switches if any(n.startswith(u.label) for n in names)]
        expected = cabinet + rack.servers * a3 + sum(switch_kg[u.slug] for u in placed)
        assert rack.weight_kg == round(expected, 1), rack.name
        assert racks.figures[f"racks.{rack.name}.weight_kg"].value == round(expected, 1)
        assert rack.floor_load_kg_m2 == round(expected / footprint)
    # R03 holds two A3 and nothing else (the elevation of the 8P8D seed: node-04, node-05):
    # 150 + 2 × 150 = 450 kg over 0.72 m² = 625 kg/m².
    r03 = next(r for r in racks.racks if r.name == "R03")
    assert (r03.servers, r03.switches) == (2, 0)
    assert (r03.weight_kg, r03.floor_load_kg_m2) == (450.0, 625.0)
    total = sum(r.weight_kg for r in racks.racks)
    assert racks.figures["racks.weight_kg"].value == round(total, 1)
    assert racks.figures["racks.max_floor_load_kg_m2"].value == max(r.floor_load_kg_m2 for r in racks.racks)
    rating = racks.figures["racks.floor_rating_kg_m2"]
    assert rating.value == 815 and rating.source.kind == "public" and "GB 50174" in rating.source.ref


def test_floor_loading_above_the_site_rating_is_a_warning_naming_the_racks():
    # A hall rated 600 kg/m² (an older raised floor): the 625 kg/m² racks of two A3 exceed it.
    racks, _ = _place(_request("a3-16-8p8d", floor_load_kg_m2=600.0))
    found = [c for c in racks.checks if c.code == "racks.floor_loading"]
    assert len(found) == 1 and found[0].severity == Severity.WARNING
    over = [r.name for r in racks.racks if r.floor_load_kg_m2 > 600]
    assert found[0].figures["racks"] == over and "R03" in over
    assert "600 kg/m²" in found[0].message_en and "600 kg/m²" in found[0].message_zh


def test_within_the_rating_is_stated_and_no_rating_means_no_comparison():
    racks, _ = _place(_request("a3-16-8p8d"))
    (found,) = [c for c in racks.checks if c.code == "racks.floor_loading"]
    assert found.severity == Severity.OK
    unrated, _ = _place(_request("a3-16-8p8d", floor_load_kg_m2=0.0))
    assert not [c for c in unrated.checks if c.code == "racks.floor_loading"]
    assert "racks.floor_rating_kg_m2" not in unrated.figures
    assert "racks.max_floor_load_kg_m2" in unrated.figures


def test_no_server_weight_in_the_catalog_gives_no_weight_rather_than_a_light_rack():
    req = _request("a3-4-single")
    req = replace(req, server=replace(req.server, weight_kg=0.0))
    racks, _ = _place(req)
    assert all(r.weight_kg == 0 for r in racks.racks)
    assert not [k for k in racks.figures if "weight" in k or "floor" in k]
    assert not [c for c in racks.checks if c.code == "racks.floor_loading"]


def test_nvidia_weights_are_the_public_datasheet_figures():
    # NVIDIA DGX H100/H200 user guide: 130.45 kg (287.6 lb); DGX B200 datasheet ≈ 142 kg (313 lb).
    for slug, kg in (("hgx-h200-8gpu", 130.45), ("dgx-h100", 130.45), ("dgx-b200", 142.0)):
        assert _seed("server", slug, "weight_kg") == kg
        assert SEED.get("server", slug).sources["weight_kg"]["kind"] == "public"
    assert abs(287.6 * 0.45359237 - 130.45) < 0.01


def test_unsourced_weights_are_not_below_their_public_comparators():
    # NVIDIA SN5000 datasheet: SN5600 (2U, 64 × 800GbE) 23.5 kg; Quantum-X800 Q3400-RA (4U) 60 kg. No public weight was
    # found for the Huawei, Inspur and H3C switches (catalog/seed/switches.yaml notes), so each is taken at its
    # same-size comparator, never below it: a light placeholder would understate the floor loading.
    def kind(kind_: str, slug: str) -> str:
        return SEED.get(kind_, slug).sources["weight_kg"]["kind"]

    def ref(kind_: str, slug: str) -> str:
        return SEED.get(kind_, slug).sources["weight_kg"]["ref"]

    assert (
        _seed("switch", "nvidia-sn5600", "weight_kg") == 23.5 and kind("switch", "nvidia-sn5600") == "public"
    )
    for slug in ("roce-400ge-access", "huawei-ce-400ge", "inspur-x400", "h3c-s9827-800g"):
        assert _seed("switch", slug, "weight_kg") >= 23.5 and "SN5600" in ref("switch", slug), slug
        assert kind("switch", slug) == "assumed", slug
    for slug in ("lingqu-630-v1", "roce-400ge-core"):
        assert _seed("switch", slug, "weight_kg") >= 60.0 and "Q3400" in ref("switch", slug), slug
    # The Atlas 800 A3 (10U, 16 NPU dies) is taken above the heaviest 8–10U DGX datasheet figure, the B200's 142 kg.
    assert _seed("server", "atlas-800-a3", "weight_kg") > _seed("server", "dgx-b200", "weight_kg")
    assert kind("server", "atlas-800-a3") == "assumed" and "DGX B200" in ref("server", "atlas-800-a3")
    # The 4U Atlas A2 class: a 4U eight-card barebone weighs 45.3 kg (Supermicro SYS-4029GP-TRT) before its modules.
    for slug in ("atlas-800-a2", "atlas-800t-a2-910b3", "atlas-800i-a2", "atlas-800-9000"):
        assert _seed("server", slug, "weight_kg") > 45.3 and "SYS-4029GP-TRT" in ref("server", slug), slug
