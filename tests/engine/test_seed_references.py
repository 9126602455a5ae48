"""The seed documents' facilities figures are data (configurator/engine/seed_references.yaml), matched by
server and node count, each with its source; not constants recognised by a server's kW in code.

Expected figures: S1 §3.2 (8 × Atlas 800 A3: 1 LingQu + 1 RoCE switch, ≈80U → 4 racks, 200 A × 2 for
8 × 16.2 kW = 129.6 kW), S1 §4.3 (16 × A3 8P8D: 2 LingQu + 1 RoCE, ≈160U → 8 racks, 400 A × 2 for
259.2 kW), S2 (2 × NF5868G8 on one RoCE switch); docs/domain.md §7.
"""

from dataclasses import replace

import pytest
import yaml

from configurator import reference
from configurator.engine import seed_references
from configurator.engine.layout import resolve_layout
from configurator.engine.network import seed_reference
from configurator.engine.power import size_power
from configurator.engine.types import Source


def _req(case: str):
    return reference.request(reference.CASES[case])


def test_every_entry_names_its_source_and_each_figure_has_one():
    entries = yaml.safe_load(seed_references.PATH.read_text(encoding="utf-8"))
    assert {(e["server"], e["nodes"]) for e in entries} == {
        ("atlas-800-a3", 8),
        ("atlas-800-a3", 16),
        ("nf5868g8", 2),
    }
    for entry in entries:
        assert entry["source"]["kind"] == "seed" and entry["source"]["ref"]
        for name in ("switches", "racks", "rack_units", "breaker_amps", "servers_kw"):
            if name in entry:
                assert entry[name]["source"]["ref"], (entry["server"], name)


def test_a_figure_without_a_source_is_refused(tmp_path, monkeypatch):
    path = tmp_path / "seed_references.yaml"
    path.write_text("- {server: s, nodes: 2, source: {kind: seed, ref: S9}, racks: 4}\n", encoding="utf-8")
    monkeypatch.setattr(seed_references, "PATH", path)
    seed_references._entries.cache_clear()
    try:
        with pytest.raises(ValueError, match="racks needs a value and a source"):
            seed_references._entries()
    finally:
        seed_references._entries.cache_clear()


def test_the_seeded_deployments_find_their_paragraph():
    for case, ref, racks, breaker, switches in (
        ("a3-8-primary-standby", "S1 §3.2", 4, 200, {"lingqu": 1, "roce": 1}),
        ("a3-16-8p8d", "S1 §4.3", 8, 400, {"lingqu": 2, "roce": 1}),
    ):
        req = _req(case)
        seed = seed_reference(req, resolve_layout(req))
        assert seed is not None and seed.source == Source("seed", ref)
        assert (seed.racks, seed.breaker_amps, dict(seed.switches)) == (racks, breaker, switches)
        assert size_power(req, resolve_layout(req)).figures["power.feed.seed.breaker_amps"].source.ref == ref
    nf = _req("nf5868g8-2-single")
    assert seed_reference(nf, resolve_layout(nf)).source == Source("seed", "S2")


def test_another_server_of_the_same_power_is_not_the_seed_plan():
    # Matched by the server record, not by 16.2 kW and a LingQu fabric: a copy under another slug is not
    # the deployment S1 plans, and its feed figures cite the seed's method, not a paragraph.
    req = _req("a3-8-primary-standby")
    copy = replace(req, server=replace(req.server, slug="atlas-800-a3-lab"))
    assert seed_reference(copy, resolve_layout(copy)) is None
    source = size_power(copy, resolve_layout(copy)).figures["power.feed.seed.breaker_amps"].source
    assert source.ref == "S1 §3.2, §4.3 (PF 1, no derating)"  # the method (power.py SEED_METHOD_REF)


def test_an_edited_server_power_keeps_the_comparison_but_not_the_feed_citation():
    # 8 × 17 kW = 136 kW is not the 129.6 kW S1 §3.2's "200 A × 2" is computed from.
    req = _req("a3-8-primary-standby")
    edited = replace(req, server=replace(req.server, max_input_kw=17.0))
    assert seed_reference(edited, resolve_layout(edited)).racks == 4
    source = size_power(edited, resolve_layout(edited)).figures["power.feed.seed.breaker_amps"].source
    assert source.ref == "S1 §3.2, §4.3 (PF 1, no derating)"
