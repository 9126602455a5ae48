"""Issue 14 through the API: checkpoints, replicated weights per platform, platform KV/block rules.

Expected figures are computed here from the public Kimi K3 config.json (tests/data/model-configs)
and the vLLM-Ascend source they follow (vllm_ascend/models/kimi_k3.py, branch releases/v0.26.0rc).
"""

import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.django_db

CONFIG = json.loads(
    (Path(__file__).resolve().parents[1] / "data/model-configs/moonshotai--Kimi-K3.config.json").read_text()
)["text_config"]
K3_4_A3 = {
    "model": "kimi-k3",
    "server": "atlas-800-a3",
    "topology": {"kind": "single", "nodes": 4, "parallel": {"tp": 16, "dp": 4, "expert_parallel": True}},
    "serving": {"max_model_len": 133120, "max_num_seqs": 16, "comm_buffer_mb": 800},
}


@pytest.fixture
def api(client, catalog, users):
    client.force_login(users["engineer"])
    return client


def post(client, body):
    return client.post("/api/plan", data=json.dumps(body), content_type="application/json")


def k3_replicated_elements():
    # vllm_ascend/models/kimi_k3.py: KimiK3MoE.gate (hidden × experts) and the latent
    # routed_expert_down/up_proj (hidden ↔ routed_expert_hidden_size) are ReplicatedLinear in every
    # MoE layer (layers after first_k_dense_replace); the MLA fused_qkv_a_proj (hidden × (q_lora_rank
    # + kv_lora_rank + qk_rope_head_dim), disable_tp=True in vLLM deepseek_v2.py) in each full-attention
    # layer; the KDA f_a_proj (hidden × head_dim) in each KDA layer.
    h = CONFIG["hidden_size"]
    moe_layers = CONFIG["num_hidden_layers"] - CONFIG["first_k_dense_replace"]
    la = CONFIG["linear_attn_config"]
    router = moe_layers * h * CONFIG["num_experts"]
    latent = moe_layers * 2 * h * CONFIG["routed_expert_hidden_size"]
    mla_a = (
        len(la["full_attn_layers"])
        * h
        * (CONFIG["q_lora_rank"] + CONFIG["kv_lora_rank"] + CONFIG["qk_rope_head_dim"])
    )
    kda_f_a = len(la["kda_layers"]) * h * la["head_dim"]
    return router, latent, mla_a, kda_f_a


def argv_flags(body):
    node = body["launch"]["nodes"][0]
    argv = node["argv"][0]
    return list(argv)


def test_k3_on_4_a3_hf_release_replicates_10_to_13_gb_per_rank_with_the_source(api):
    body = post(api, K3_4_A3).json()
    rank = body["memory"]["per_rank"]
    router, latent, mla_a, kda_f_a = k3_replicated_elements()
    # HF release: all of these are BF16 (2 B) and vLLM-Ascend keeps router and latent in BF16.
    expected = (router + latent + mla_a + kda_f_a) * 2
    assert rank["replicated_weights_bytes"] == expected == 11_488_985_088
    assert 10e9 <= rank["replicated_weights_bytes"] <= 13e9
    fig = body["figures"]["memory.per_rank.replicated_weights_bytes"]
    assert fig["source"]["kind"] == "public"
    assert "vllm_ascend/models/kimi_k3.py" in fig["source"]["ref"]
    assert "releases/v0.26.0rc" in fig["source"]["ref"]
    # The HF release needs no --quantization flag: vLLM reads compressed-tensors from config.json.
    assert "--quantization" not in argv_flags(body)


def test_modelslim_checkpoint_changes_the_replicated_figure_and_the_launch_flag(api):
    body = post(api, {**K3_4_A3, "checkpoint": "kimi-k3-modelslim-w4a8"}).json()
    rank = body["memory"]["per_rank"]
    router, latent, mla_a, kda_f_a = k3_replicated_elements()
    # ModelSlim: the router stays BF16 (quant_config=None); _routed_latent_quant_config quantises the
    # latent projections for quant method "ascend" (int8, 1 B), the MLA and KDA projections follow W8A8.
    expected = router * 2 + latent + mla_a + kda_f_a
    assert rank["replicated_weights_bytes"] == expected
    assert expected < 11_488_985_088
    flags = argv_flags(body)
    assert flags[flags.index("--quantization") + 1] == "ascend"


def test_a_checkpoint_of_another_platform_is_an_error(api):
    body = post(api, {**K3_4_A3, "server": "nf5868g8", "checkpoint": "kimi-k3-modelslim-w4a8"}).json()
    errors = [c for c in body["checks"] if c["severity"] == "error"]
    assert any(c["code"] == "model.checkpoint_wrong_platform" and c["field"] == "checkpoint" for c in errors)


def test_a_checkpoint_of_another_model_or_unknown_is_a_400(api):
    r = post(api, {**K3_4_A3, "model": "deepseek-v3", "checkpoint": "kimi-k3-hf-mxfp4"})
    assert r.status_code == 400
    assert "checkpoint" in json.dumps(r.json())
    r = post(api, {**K3_4_A3, "checkpoint": "no-such-checkpoint"})
    assert r.status_code == 400 and "checkpoint" in json.dumps(r.json())


def test_fp8_kv_on_atlas_a3_is_an_error_naming_the_platform(api):
    body = post(api, {**K3_4_A3, "serving": {**K3_4_A3["serving"], "kv_cache_dtype": "fp8"}}).json()
    (check,) = [c for c in body["checks"] if c["code"] == "memory.kv_cache_dtype_unsupported"]
    assert check["severity"] == "error"
    assert "Atlas 800 A3" in check["message"] and "#8102" in check["message"]
    assert check["field"] == "serving.kv_cache_dtype"
    assert check["fix"] == {"serving.kv_cache_dtype": "auto"}


def test_unknown_kv_cache_dtype_is_a_400_naming_the_field(api):
    r = post(api, {**K3_4_A3, "serving": {"kv_cache_dtype": "banana"}})
    assert r.status_code == 400
    assert "serving.kv_cache_dtype" in json.dumps(r.json())


def test_block_size_follows_the_platform(api):
    a3 = post(api, K3_4_A3).json()
    tokens = "memory.per_rank.kv_tokens"
    assert a3["figures"][tokens]["inputs"]["block_size"] == 128  # vllm_ascend/utils.py refresh_block_size
    gpu = post(api, {**K3_4_A3, "server": "nf5868g8", "topology": {"kind": "single", "nodes": 2}}).json()
    assert gpu["figures"][tokens]["inputs"]["block_size"] == 16  # vLLM's CUDA default
    bad = post(api, {**K3_4_A3, "serving": {**K3_4_A3["serving"], "block_size": 48}}).json()
    assert any(c["code"] == "memory.block_size_invalid" for c in bad["checks"])


def test_the_plan_carries_the_checkpoint_bytes_for_the_storage_line(api):
    hf = post(api, K3_4_A3).json()
    # S1/S2: the Hugging Face release is 96 shards, 1,560,936,091,448 bytes.
    assert hf["figures"]["memory.checkpoint_bytes"]["value"] == 1_560_936_091_448
    assert hf["memory"]["checkpoint_bytes"] == 1_560_936_091_448
    assert hf["memory"]["checkpoint_slug"] == "kimi-k3-hf-mxfp4"
    slim = post(api, {**K3_4_A3, "checkpoint": "kimi-k3-modelslim-w4a8"}).json()
    # ModelSlim W4A8: int4 experts (92 × 896 × 3 × 3584 × 3072 params × 0.5 B) and a smaller rest.
    experts = 92 * 896 * 3 * 3584 * 3072 // 2
    assert experts < slim["figures"]["memory.checkpoint_bytes"]["value"] < 1_560_936_091_448
    check = next(c for c in hf["checks"] if c["code"] == "memory.replicated_weights")
    assert check["severity"] == "ok" and "11.5 GB per rank" in check["message"]
