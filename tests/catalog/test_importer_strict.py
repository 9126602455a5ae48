"""The config.json importer refuses what vLLM would refuse, naming the field, and names a model from
its real structure.

* ``head_dim`` 0: vLLM's attention divides by it (``scale = head_dim ** -0.5``); a stated head
  dimension must be a size.
* ``layer_types`` other than full / sliding attention: not a layer the importer can count.
* The same key twice: JSON leaves it undefined; Python's ``json`` keeps the last one silently.
* ``deepseek_v32`` (and GLM-5's ``glm_moe_dsa``) without the lightning indexer's fields: vLLM's
  ``Indexer`` (``vllm/model_executor/models/deepseek_v2.py``) reads ``index_topk``, ``index_n_heads``
  and ``index_head_dim`` from the config.
"""

from __future__ import annotations

import json

import pytest

from catalog.importers.hf_config import ConfigError, load_config_text, parse_hf_config

from .conftest import load_config
from .test_importer import GEMMA3_27B


def test_head_dim_zero_or_negative_is_refused_naming_it():
    config = load_config("meta-llama--Meta-Llama-3.1-8B")
    for value in (0, -128):
        with pytest.raises(ConfigError) as err:
            parse_hf_config({**config, "head_dim": value})
        assert err.value.field == "head_dim"
        assert "head_dim must be at least 1" in str(err.value)
    with pytest.raises(ConfigError) as err:
        parse_hf_config({**config, "hidden_size": -4096})
    assert err.value.field == "hidden_size"


def test_more_heads_than_hidden_width_is_refused():
    config = load_config("meta-llama--Meta-Llama-3.1-8B")
    config.pop("head_dim", None)
    with pytest.raises(ConfigError) as err:
        parse_hf_config({**config, "hidden_size": 16, "num_attention_heads": 32, "num_key_value_heads": 8})
    assert err.value.field == "num_attention_heads"


def test_unknown_layer_types_are_refused_naming_them():
    config = json.loads(json.dumps(GEMMA3_27B))
    types = ["sliding_attention"] * 62
    types[5] = "full_attention"
    types[11] = "chunked_attention"
    config["text_config"]["layer_types"] = types
    with pytest.raises(ConfigError) as err:
        parse_hf_config(config)
    assert err.value.field == "text_config.layer_types"
    assert "'chunked_attention'" in str(err.value)


def test_a_key_given_twice_is_refused():
    text = '{"model_type": "llama", "hidden_size": 4096, "hidden_size": 8, "num_hidden_layers": 32}'
    with pytest.raises(ConfigError, match=r"the key 'hidden_size' appears twice"):
        load_config_text(text)


@pytest.mark.parametrize("missing", ["index_topk", "index_n_heads", "index_head_dim"])
def test_deepseek_v32_without_its_indexer_is_refused(missing):
    v3 = load_config("deepseek-ai--DeepSeek-V3")
    # deepseek-ai/DeepSeek-V3.2-Exp config.json: index_n_heads 64, index_head_dim 128, index_topk 2048
    v32 = dict(v3, model_type="deepseek_v32", index_n_heads=64, index_head_dim=128, index_topk=2048)
    del v32[missing]
    with pytest.raises(ConfigError) as err:
        parse_hf_config(v32)
    assert err.value.field == missing
    assert f"{missing} is missing" in str(err.value)


def test_a_dense_gemma_3_is_not_named_moe():
    f = parse_hf_config(GEMMA3_27B).fields
    # Gemma 3 has no routed experts; the name is the family and its size (27.4 B with the vision tower).
    assert f["num_experts"] == 0
    assert f["name"] == f"Gemma {f['total_params'] / 1e9:,.0f}B" == "Gemma 27B"
    assert "MoE" not in f["name"]
    # A MoE config without a name is still named with its active size.
    qwen = load_config("Qwen--Qwen3-235B-A22B")
    qwen.pop("_name_or_path", None)
    assert " MoE 235B-A22B" in parse_hf_config(qwen).fields["name"]


def test_invalid_code_points_in_a_config_are_refused_naming_the_key():
    with pytest.raises(ConfigError, match=r"model_type holds an invalid character \(U\+D800"):
        load_config_text('{"model_type": "\\ud800", "num_hidden_layers": 2}')
