import pytest
from configurator.services import plan_from_json

@pytest.mark.django_db
def test_probe(catalog):
    for data in [
        {"model": "kimi-k3", "server": "hgx-h200-8gpu", "topology": {"kind": "single", "nodes": 2}},
        {"model": "llama-3-3-70b", "server": "hgx-h200-8gpu", "topology": {"kind": "disaggregated", "nodes": 2, "prefill_nodes": 1, "decode_nodes": 1}},
        {"model": "qwen3-235b-a22b", "server": "hgx-h200-8gpu", "topology": {"kind": "disaggregated", "nodes": 2, "prefill_nodes": 1, "decode_nodes": 1}},
    ]:
        req, result = plan_from_json(data)
        print(data["model"], req.topology.parallel, req.topology.decode_parallel, req.serving)
        print([ (c.code, c.message_en) for c in result.checks if c.severity.value == "error"])
        print([ (l.sku, l.quantity, l.unit_price) for l in result.tco.lines] if hasattr(result.tco,'lines') else type(result.tco))
        print(result.launch.context.recipe, result.launch.nodes[0].command[:600])

@pytest.mark.django_db
def test_probe_planner(catalog):
    from configurator.planner_views import run_search as search
    r = search({"model": "kimi-k3"})
    print([(c.server.slug, c.nodes if hasattr(c,'nodes') else None) for c in r.candidates])
    print([(x.server, x.code) for x in r.rejected])
    r = search({"model": "kimi-k3", "options": {"servers": ["hgx-h200-8gpu"]}})
    print([(c.server.slug, getattr(c,'nodes',None)) for c in r.candidates], [(x.server, x.code, x.message_en) for x in r.rejected])
