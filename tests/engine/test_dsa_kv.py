"""DeepSeek sparse attention (GLM-5, DeepSeek-V3.2): the indexer's keys are KV cache too.

Every MLA layer of a DSA model caches, beside the latent, one key of the lightning indexer per token.
Expected bytes per token and layer, from the engines' sources (GLM-5's public config.json: 78 layers,
kv_lora_rank 512, qk_rope_head_dim 64, index_head_dim 128):

* vLLM: the latent (512 + 64) × 2 = 1,152 B in BF16, or the ``fp8_ds_mla`` format's 656 B when the cache
  is FP8 (vllm/model_executor/models/config.py ``DeepseekV32ForCausalLM.verify_and_update_config``), plus
  the indexer key 128 + 128 ÷ 128 × 4 = 132 B (vllm/model_executor/models/deepseek_v2.py
  ``DeepseekV32IndexerCache``: FP8 values and an FP32 scale per 128).
* vLLM-Ascend ≥ 0.15: one spec of (512 + 64 + 128) × 2 = 1,408 B (``_get_sparse_kv_cache_ratio``);
  before 0.15 a FullAttentionSpec of the latent head, 2 × 1,152 = 2,304 B (releases/v0.13.0).

Before this the indexer was left out (the importer only warned): GLM-5's KV tokens came out 11 % high
in BF16 and 20 % high in FP8 on vLLM.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from configurator import reference
from configurator.engine.memory import kv_bytes_per_token
from configurator.port.inputs import model_spec_from_hf_config

SEED = Path(__file__).resolve().parents[2] / "catalog" / "seed" / "model-configs"


def _spec(name: str):
    return model_spec_from_hf_config(json.loads((SEED / f"{name}.config.json").read_text(encoding="utf-8")))


def test_glm5_imports_its_indexer_width():
    glm = _spec("zai-org--GLM-5")
    assert (glm.mla_layers, glm.kv_lora_rank, glm.qk_rope_head_dim, glm.index_head_dim) == (78, 512, 64, 128)
    assert _spec("deepseek-ai--DeepSeek-V3").index_head_dim == 0


@pytest.mark.parametrize(
    ("engine", "version", "dtype", "per_layer"),
    [
        ("vllm", "0.21.0", "auto", 1152 + 132),
        ("vllm", "0.21.0", "fp8", 656 + 132),
        ("vllm-ascend", "0.18.0", "auto", (512 + 64 + 128) * 2),
        ("vllm-ascend", "0.13.0", "auto", 2 * (512 + 64) * 2),
    ],
)
def test_glm5_kv_bytes_per_token_follow_the_engine(engine, version, dtype, per_layer):
    glm = _spec("zai-org--GLM-5")
    for tp in (1, 8):  # the latent and the indexer key are not split by TP
        assert kv_bytes_per_token(glm, tp, 1, dtype, engine=engine, version=version) == 78 * per_layer
    assert kv_bytes_per_token(glm, 8, 2, dtype, engine=engine, version=version) == 39 * per_layer


def test_dense_mla_is_unchanged():
    dsv3 = _spec("deepseek-ai--DeepSeek-V3")
    assert kv_bytes_per_token(dsv3, 8, 1, "auto", engine="vllm") == 61 * (512 + 64) * 2
    assert kv_bytes_per_token(dsv3, 8, 1, "auto", engine="vllm-ascend", version="0.13.0") == 61 * 1152


def test_a_glm5_plan_sizes_its_kv_cache_with_the_indexer():
    """GLM-5 on two HGX H200 (BF16 KV, vLLM): the plan's KV bytes per token are 78 × 1,284 = 100,152 B and
    its figure says which layout it used; the KV tokens a rank holds are its KV bytes ÷ that."""
    data = {"model": "glm-5", "server": "hgx-h200-8gpu", "topology": {"kind": "single", "nodes": 2}}
    data["commercial"] = reference.case("hgx-h200-2-single")["commercial"]
    _, result = reference.advised_plan(data)
    figure = result.memory.figures["memory.per_rank.kv_bytes_per_token"]
    assert figure.value == 78 * (1152 + 132)
    assert figure.inputs["latent_bytes"] == 1152 and figure.inputs["indexer_bytes"] == 132
    tokens = result.memory.figures["memory.per_rank.kv_tokens"]
    kv, block = tokens.inputs["kv_cache_bytes"], tokens.inputs["block_size"]
    assert tokens.inputs["kv_bytes_per_token"] == 78 * 1284
    assert tokens.value == (kv // (78 * 1284 * block)) * block
