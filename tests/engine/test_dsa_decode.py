"""DeepSeek sparse attention (GLM-5, DeepSeek-V3.2): a decode step reads the top-k latents, not the context.

vLLM's DSA layer (vllm/model_executor/models/deepseek_v2.py ``Indexer``: ``topk_tokens =
config.index_topk``, ``n_head = config.index_n_heads``, ``head_dim = config.index_head_dim``) scores the
whole context with the lightning indexer — reading every cached indexer key — and the sparse MLA kernel
then gathers the latents of the ``index_topk`` tokens it selected.  GLM-5's public config.json: 78 MLA
layers, kv_lora_rank 512, qk_rope_head_dim 64, index_head_dim 128, index_n_heads 32, index_topk 2048.

Expected bytes one sequence's decode step reads per token of context and layer (vLLM, BF16 cache): the
latent (512 + 64) × 2 = 1,152 B for at most 2,048 tokens, the indexer key 128 + 4 = 132 B for all.
Before this the step read the whole latent for the whole context: at 100,000 tokens 78 × 1,284 B ×
100,000 = 10.0 GB a sequence instead of 78 × (2,048 × 1,152 + 100,000 × 132) = 1.21 GB.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from configurator import reference
from configurator.engine import serving_model as sm
from configurator.engine.memory import kv_bytes_per_token
from configurator.port.inputs import model_spec_from_hf_config

SEED = Path(__file__).resolve().parents[2] / "catalog" / "seed" / "model-configs"
LAYERS, LATENT, INDEXER, TOPK = 78, (512 + 64) * 2, 128 + 128 // 128 * 4, 2048


def _glm5():
    return model_spec_from_hf_config(
        json.loads((SEED / "zai-org--GLM-5.config.json").read_text(encoding="utf-8"))
    )


def test_importer_reads_top_k_and_indexer_heads():
    glm = _glm5()
    assert (glm.index_topk, glm.index_n_heads, glm.index_head_dim) == (2048, 32, 128)
    dense = model_spec_from_hf_config(
        json.loads((SEED / "deepseek-ai--DeepSeek-V3.config.json").read_text(encoding="utf-8"))
    )
    assert (dense.index_topk, dense.index_n_heads) == (0, 0)
    assert not sm.is_sparse_attention(dense)


def _step(model, context: float):
    server = reference.server("hgx-h200-8gpu")
    shape = sm.GroupShape(tp=8, dp=1, ep=8, expert_parallel=False, nodes=1, devices_per_node=8)
    bpt = kv_bytes_per_token(model, 8)
    return sm.decode_step(
        model,
        server,
        shape,
        sm.prior_for("hopper"),
        batch=1,
        mean_context=context,
        kv_bytes_per_token=bpt,
        state_bytes_per_seq=0,
        lm_non_expert_bytes=model.non_expert_weight_bytes,
        tflops=989.0,
        draft_tokens=0,
        acceptance=0.0,
        eight_bit=False,
        scale_out_efficiency=0.8,
        sparse_latent_bytes_per_token=LAYERS * LATENT if model.index_topk else 0,
    )


@pytest.mark.parametrize("context", [1_000, 2_048, 32_000, 100_000])
def test_decode_reads_top_k_latents_and_every_indexer_key(context):
    glm = _glm5()
    assert kv_bytes_per_token(glm, 8) == LAYERS * (LATENT + INDEXER)  # the pool holds the whole context
    expected = LAYERS * (min(context, TOPK) * LATENT + context * INDEXER)
    assert _step(glm, context).kv_bytes == pytest.approx(expected)


def test_long_context_decode_is_cheaper_than_dense_attention_would_be():
    glm = _glm5()
    dense = replace(glm, index_topk=0, index_n_heads=0)
    sparse_step, dense_step = _step(glm, 100_000), _step(dense, 100_000)
    assert dense_step.kv_bytes == pytest.approx(LAYERS * 100_000 * (LATENT + INDEXER))
    assert dense_step.kv_bytes / sparse_step.kv_bytes == pytest.approx(
        100_000 * (LATENT + INDEXER) / (TOPK * LATENT + 100_000 * INDEXER)
    )
    assert sparse_step.step_s < dense_step.step_s
    # short of the top-k the two attend to the same tokens: the same bytes
    assert _step(glm, 1_500).kv_bytes == pytest.approx(_step(dense, 1_500).kv_bytes)


def test_attention_flops_attend_top_k_plus_the_indexer_over_the_context():
    glm = _glm5()
    heads = 4.0 * 64 * 256  # score + value products: 4 × heads × head_dim (192 nope + 64 rope) a token
    indexer = 2.0 * 32 * 128
    assert sm.attention_flops_per_token(glm, 100_000) == pytest.approx(
        LAYERS * (heads * TOPK + indexer * 100_000)
    )
    # prefill: position i attends min(i, 2048) tokens; mean over an 8,192-token prompt
    # = 2048 − 2048² ÷ (2 × 8192) = 1,792, the indexer the causal mean 4,096
    assert sm.mean_capped_context(8192, 2048) == pytest.approx(1792)
    assert sm.attention_flops_per_token(glm, 8192, prompt=True) == pytest.approx(
        LAYERS * (heads * 1792 + indexer * 4096)
    )
    assert sm.mean_capped_context(1000, 2048) == 500  # shorter than the top-k: the causal mean p ÷ 2


def test_a_glm5_plan_reads_the_latents_its_engine_lays_out():
    """Through plan(): GLM-5 on 2 × H200 (vLLM, BF16 cache, no PP) sets the sparse part to the stage's
    78 MLA layers × the 1,152-byte latent, and the figure's value is its own formula."""
    from configurator.engine.plan import plan

    req = reference.request(
        {
            "commercial": {"date": "2026-11-30", "price_list": "cny-2026"},
            "model": "glm-5",
            "server": "hgx-h200-8gpu",
            "topology": {"kind": "single", "nodes": 2},
            "workload": {"input_tokens": 60_000, "output_tokens": 1000, "concurrency": 16},
        }
    )
    figures = plan(req).performance.figures
    fig = next(v for k, v in figures.items() if k.endswith(".kv_bytes_read_per_seq"))
    inputs = fig.inputs
    assert inputs["top_k"] == TOPK and inputs["latent_bytes_per_token"] == LAYERS * LATENT
    ctx = float(inputs["mean_context"])
    expected = (
        ctx * inputs["kv_bytes_per_token"] - (ctx - TOPK) * LAYERS * LATENT + inputs["state_bytes_per_seq"]
    )
    value = float(fig.value)
    assert value == pytest.approx(expected, rel=1e-6)
    assert inputs["kv_bytes_per_token"] == LAYERS * (LATENT + INDEXER)
