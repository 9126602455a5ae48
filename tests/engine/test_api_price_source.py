"""The annual public-API cost cites the price list of the model it prices (its catalog record's sources).

Expected citations are the seed's own (catalog/seed/models.yaml): Kimi K3 at S1 §3.3's $3 / $15 per M
tokens; DeepSeek-V3 at DeepSeek's published deepseek-chat list ($0.27 cache-miss input, $1.10 output).
"""

from dataclasses import replace
from decimal import Decimal

from configurator import reference
from configurator.engine.plan import plan
from configurator.engine.types import Source

K3 = {"model": "kimi-k3", "server": "atlas-800-a3", "topology": {"kind": "single", "nodes": 4}}
DEEPSEEK = {"model": "deepseek-v3", "server": "atlas-800-a3", "topology": {"kind": "single", "nodes": 4}}


def api_cost(request):
    figure = plan(request).tco.figures["tco.tokens.api_cost_per_year"]
    return figure


def test_kimi_k3_cites_the_seed_price():
    figure = api_cost(reference.request(K3))
    assert figure.source.kind == "seed"
    assert "$3 per M input" in figure.source.ref and "$15 per M output" in figure.source.ref
    assert figure.inputs["api_price_input_per_m"] == Decimal("3.00") * figure.inputs["usd_rate"]


def test_deepseek_v3_cites_deepseeks_own_price_list_not_k3s():
    request = reference.request(DEEPSEEK)
    figure = api_cost(request)
    assert figure.source.kind == "public"
    assert "api-docs.deepseek.com" in figure.source.ref and "$0.27" in figure.source.ref
    assert "$3" not in figure.source.ref.replace("$0.", "")
    assert request.model.api_price_input_per_m == Decimal("0.27")


def test_an_edited_price_cites_its_editor():
    request = reference.request(DEEPSEEK)
    sources = {
        **request.model.sources,
        "api_price_input_per_m": Source("input", "catalog admin, 2026-12-01: DeepSeek quote"),
        "api_price_output_per_m": Source("input", "catalog admin, 2026-12-01: DeepSeek quote"),
    }
    edited = replace(request, model=replace(request.model, sources=sources))
    assert api_cost(edited).source == Source("input", "catalog admin, 2026-12-01: DeepSeek quote")
