"""Hardware and model facts the launch recipes are chosen by live in the catalog, not in engine tables.

The accelerator's generation and the model's recipe family are catalog fields: seeded with a source
(catalog/seed/accelerators.yaml, models.yaml), editable in the admin, kept by load_catalog once an
administrator edits them, and carried by the database-less path (configurator/reference.py) the same.
"""

from __future__ import annotations

from decimal import Decimal

import pytest

from catalog import services
from catalog.models import Accelerator, LlmModel, ServerModel
from configurator import reference
from configurator.engine import recipes as rc
from configurator.engine.types import TopologyKind
from configurator.port import inputs

from .test_admin import post_change

pytestmark = pytest.mark.django_db

# Architectures as the vendors name them (NVIDIA Hopper: H100/H200/H20/H800; Blackwell: B200/B300;
# Ampere: A100/A800; Ada Lovelace: L20/L40S; Huawei Atlas A3: 910C, Atlas A2: 910B).
EXPECTED_GENERATION = {
    "h200-sxm": "hopper",
    "h100-sxm": "hopper",
    "h20": "hopper",
    "b200": "blackwell",
    "b300": "blackwell",
    "rtx-pro-6000": "blackwell-pcie",
    "a100-sxm-80gb": "ampere",
    "l40s": "ada",
    "mi300x": "cdna3",
    "ascend-910c": "a3",
    "ascend-910b3": "a2",
}


def test_every_seeded_accelerator_and_model_states_it_with_a_source(seeded):
    for acc in Accelerator.objects.all():
        assert acc.source_for("generation")["ref"], acc.slug
    for slug, generation in EXPECTED_GENERATION.items():
        assert Accelerator.objects.get(slug=slug).generation == generation, slug
    for model in LlmModel.objects.all():
        assert model.source_for("recipe_family")["ref"], model.slug
    assert LlmModel.objects.get(slug="deepseek-r1").recipe_family == "deepseek"
    assert LlmModel.objects.get(slug="gpt-oss-120b").recipe_family == ""  # no recipe: the generic one


def test_database_and_seed_files_give_the_same_specs(seeded):
    for acc in Accelerator.objects.all():
        assert inputs.accelerator_spec(acc).generation == reference.accelerator(acc.slug).generation
    for model in LlmModel.objects.all():
        assert inputs.model_spec(model).recipe_family == reference.model(model.slug).recipe_family


def test_an_admin_edit_of_the_generation_chooses_the_recipe_and_survives_a_reload(admin_client, seeded):
    h200 = Accelerator.objects.get(slug="h200-sxm")
    server = ServerModel.objects.filter(accelerator=h200).first()
    k3 = LlmModel.objects.get(slug="kimi-k3")
    spec = inputs.server_spec(server)
    assert rc.recipe_for(inputs.model_spec(k3), spec, TopologyKind.SINGLE).key == "cuda-hopper-kimi-k3"

    assert post_change(admin_client, h200, generation="").status_code == 302
    h200.refresh_from_db()
    assert h200.generation == ""
    report = services.load_catalog_seed()
    assert any(label == "accelerator h200-sxm" for label, _ in report.skipped), report.skipped
    h200.refresh_from_db()
    assert h200.generation == ""  # load_catalog left the administrator's edit alone
    spec = inputs.server_spec(ServerModel.objects.get(pk=server.pk))
    # Without a generation the K3 recipe's Hopper profile no longer applies: its base arguments only.
    assert rc.recipe_for(inputs.model_spec(k3), spec, TopologyKind.SINGLE).key == "cuda-kimi-k3"


def test_an_admin_edit_of_the_recipe_family_survives_a_reload(admin_client, seeded):
    model = LlmModel.objects.get(slug="qwen3-32b")
    assert post_change(admin_client, model, recipe_family="").status_code == 302
    services.load_catalog_seed()
    model.refresh_from_db()
    assert model.recipe_family == ""
    a3 = inputs.server_spec(ServerModel.objects.get(slug="atlas-800-a3"))
    hopper = inputs.server_spec(ServerModel.objects.filter(accelerator__slug="h200-sxm").first())
    assert rc.recipe_for(inputs.model_spec(model), hopper, TopologyKind.SINGLE).key == "cuda-generic"
    assert rc.recipe_for(inputs.model_spec(model), a3, TopologyKind.SINGLE).key == "ascend-generic"


def test_an_admin_edit_of_an_api_price_is_what_the_api_cost_cites(admin_client, seeded):
    """The API prices are the model record's (admin-editable, seeded with the provider's page): a price an
    administrator types replaces the seed's, the plan's API cost cites the edit, and load_catalog keeps it."""
    from configurator.planning import plans

    model = LlmModel.objects.get(slug="deepseek-v3")
    request = {"model": "deepseek-v3", "server": "atlas-800-a3", "topology": {"kind": "single", "nodes": 4}}
    _req, before = plans.plan_from_json(request, advise=False)
    cited = before.tco.figures["tco.tokens.api_cost_per_year"].source
    assert cited.kind == "public" and "api-docs.deepseek.com" in cited.ref

    response = post_change(admin_client, model, api_price_input_per_m="0.28", api_price_output_per_m="0.42")
    assert response.status_code == 302
    services.load_catalog_seed()
    model.refresh_from_db()
    assert str(model.api_price_input_per_m) == "0.2800"
    from configurator.port import cache as catalog_cache

    catalog_cache.clear()
    _req, after = plans.plan_from_json(request, advise=False)
    figure = after.tco.figures["tco.tokens.api_cost_per_year"]
    # an administrator's edit reaches the engine as a figure typed in (specs.source: admin → input), naming them
    assert figure.source.kind == "input" and "admin" in figure.source.ref
    assert figure.inputs["api_price_input_per_m"] == (Decimal("0.28") * figure.inputs["usd_rate"]).quantize(
        Decimal("0.01")
    )
