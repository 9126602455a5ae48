"""Issue 13 at the catalog boundary: names that reach generated files refuse control characters
in the admin (model validator), and the config.json importer refuses hostile JSON (3,000-level
nesting, 1e308, NaN) with a form error instead of a 500.  Each failed on the pre-issue-13 code.
"""

from __future__ import annotations

import json

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from catalog.importers.hf_config import ConfigError, parse_hf_config
from catalog.models import LlmModel, ServerModel, SwitchModel

from .conftest import CONFIG_DIR
from .test_admin import field_errors, post_change

pytestmark = pytest.mark.django_db
IMPORT_URL = "admin:catalog_llmmodel_import_hf_config"
LLAMA = CONFIG_DIR / "meta-llama--Meta-Llama-3.1-8B.config.json"


@pytest.mark.parametrize(
    "model,slug,name",
    [
        (LlmModel, "kimi-k3", "Kimi K3\ntouch /tmp/x\n#"),  # the finding: a command in every bundle
        (ServerModel, "atlas-800-a3", "Atlas 800 A3\r\nrm -rf /"),
        (ServerModel, "atlas-800-a3", "Atlas\u2028800"),  # Unicode line separator
        (SwitchModel, None, "Switch\x1b[2J"),  # terminal escape
    ],
)
def test_admin_refuses_control_characters_in_names(admin_client, seeded, model, slug, name):
    obj = model.objects.get(slug=slug) if slug else model.objects.first()
    before = obj.name
    response = post_change(admin_client, obj, name=name)
    errors = field_errors(response, "name")
    assert errors and "control or line-break" in " ".join(errors)
    obj.refresh_from_db()
    assert obj.name == before


def test_model_full_clean_refuses_a_control_character_in_a_parser_name(seeded):
    k3 = LlmModel.objects.get(slug="kimi-k3")
    k3.vllm_tool_call_parser = "kimi_k3\n--evil"
    with pytest.raises(ValidationError) as exc:
        k3.full_clean()
    assert "vllm_tool_call_parser" in exc.value.message_dict


def test_plain_names_with_chinese_and_symbols_still_save(admin_client, seeded):
    server = ServerModel.objects.get(slug="atlas-800-a3")
    response = post_change(admin_client, server, name="Atlas 800 A3（超节点）")
    assert response.status_code == 302
    server.refresh_from_db()
    assert server.name == "Atlas 800 A3（超节点）"


def _import(admin_client, text):
    response = admin_client.post(reverse(IMPORT_URL), {"config_text": text, "slug": "hostile"})
    assert response.status_code == 200, response.status_code
    assert not LlmModel.objects.filter(slug="hostile").exists()
    return " ".join(response.context["form"].errors.get("config_text", []))


def test_importer_refuses_3000_level_nesting(admin_client):
    assert "3,000 levels" in _import(admin_client, "[" * 3000 + "]" * 3000)


@pytest.mark.parametrize("value", ["1e308", "1e999", "NaN", "Infinity", "-1e308", "9" * 5000])
def test_importer_refuses_extreme_numbers(admin_client, value):
    text = LLAMA.read_text().replace('"vocab_size": 128256', f'"vocab_size": {value}')
    assert text != LLAMA.read_text()
    message = _import(admin_client, text)
    assert message, value


def test_importer_refuses_1e308_in_a_nested_float_and_a_huge_layer_count():
    config = json.loads(LLAMA.read_text())
    with pytest.raises(ConfigError, match="rope_scaling.factor"):
        parse_hf_config({**config, "rope_scaling": {**config["rope_scaling"], "factor": 1e308}})
    with pytest.raises(ConfigError, match="at most 4,096"):
        parse_hf_config({**config, "num_hidden_layers": 100_000_000})  # would build 10^8-long lists
    with pytest.raises(ConfigError, match="beyond any real model"):
        parse_hf_config({**config, "vocab_size": 2**31 - 1, "hidden_size": 2**31 - 1})


def test_importer_refuses_a_control_character_in_the_name():
    config = json.loads(LLAMA.read_text())
    with pytest.raises(ConfigError, match="one line"):
        parse_hf_config(config, name="Llama\ntouch /tmp/x")
    with pytest.raises(ConfigError, match="one line"):
        parse_hf_config({**config, "_name_or_path": "meta/llama\u2028x"})
