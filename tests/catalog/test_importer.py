"""The config.json importer: layer types, KV bytes, parameter counts, weight bytes, errors.

Expected figures are computed here from the published architecture (docs/domain.md
§2 and the model cards), not taken from the importer.
"""

from __future__ import annotations

import copy
import json

import pytest
from django.core.management import CommandError, call_command

from catalog.importers.hf_config import (
    ConfigError,
    kv_bytes_per_token,
    linear_state_bytes_per_sequence,
    load_config_text,
    parse_hf_config,
    parse_hf_config_text,
)

from .conftest import CONFIG_DIR, load_config


def within(value: float, expected: float, tolerance: float = 0.02) -> bool:
    return abs(value / expected - 1) <= tolerance


# --------------------------------------------------------------------------- Kimi K3


def test_kimi_k3_layers_kv_and_state():
    m = parse_hf_config(load_config("moonshotai--Kimi-K3"))
    f = m.fields
    # docs/domain.md §2: 93 layers = 24 gated-MLA (4, 8, …, 92 and 93) + 69 KDA.
    assert (f["num_layers"], f["mla_layers"], f["linear_layers"], f["gqa_layers"]) == (93, 24, 69, 0)
    assert (f["kv_lora_rank"], f["qk_rope_head_dim"]) == (512, 64)
    # docs/domain.md §2: MLA KV per token = 24 × (512 + 64) × 2 B = 27,648 B in BF16 (13,824 B in FP8).
    assert kv_bytes_per_token(f) == 24 * 576 * 2 == 27_648
    assert kv_bytes_per_token(f, dtype_bytes=1) == 13_824
    # docs/domain.md §2: KDA state per sequence = 69 × (96·128·128·4 + 9·96·128·2) = 449,372,160 B.
    assert linear_state_bytes_per_sequence(f) == 69 * (96 * 128 * 128 * 4 + 9 * 96 * 128 * 2) == 449_372_160
    assert (f["linear_num_heads"], f["linear_head_dim"], f["linear_conv_kernel"]) == (96, 128, 4)
    assert (f["hidden_size"], f["num_attention_heads"], f["num_kv_heads"], f["vocab_size"]) == (
        7168,
        96,
        96,
        163_840,
    )
    assert f["max_context"] == 1_048_576
    assert f["has_vision"] is True


def test_kimi_k3_parameter_counts_and_weights():
    f = parse_hf_config(load_config("moonshotai--Kimi-K3")).fields
    # docs/domain.md §2 [pub]: 2,779,931,837,184 total, ≈104.2 B active.
    assert within(f["total_params"], 2_779_931_837_184)
    assert within(f["active_params"], 104.2e9)
    # 896 routed experts, top-16, 2 shared; the first layer is dense → 92 MoE layers.
    assert (f["num_experts"], f["experts_per_token"], f["shared_experts"], f["moe_layers"]) == (
        896,
        16,
        2,
        92,
    )
    # Routed experts in MXFP4 (4.25 bits): 92 layers × 896 × 3 matrices × 3584 (latent width) × 3072.
    assert f["expert_weight_bytes"] == 92 * 896 * 3 * 3584 * 3072 * 17 // 32
    assert f["weight_format"] == "mxfp4"
    # [S1][S2]: 96 shards, 1,560,936,091,448 bytes.
    assert within(f["expert_weight_bytes"] + f["non_expert_weight_bytes"], 1_560_936_091_448, 0.005)
    # Vision: MoonViT-V2 ≈401 M [S1] plus its patch-merger projector.
    assert 400e6 < f["vision_params"] < 460e6


# --------------------------------------------------------------------------- DeepSeek-V3, Kimi-K2


def test_deepseek_v3():
    m = parse_hf_config(load_config("deepseek-ai--DeepSeek-V3"), hf_model_id="deepseek-ai/DeepSeek-V3")
    f = m.fields
    assert (f["num_layers"], f["mla_layers"], f["gqa_layers"]) == (61, 61, 0)
    # docs/domain.md §2: MLA 512 + 64 → 61 × 576 × 2 B per token in BF16.
    assert kv_bytes_per_token(f) == 61 * 576 * 2 == 70_272
    # 256 experts top-8, first 3 layers dense; 671 B / 37 B (MTP layer excluded).
    assert (f["num_experts"], f["experts_per_token"], f["moe_layers"]) == (256, 8, 58)
    assert within(f["total_params"], 671e9)
    assert within(f["active_params"], 37e9)
    # FP8 release: ≈1 byte per weight, embeddings and LM head in BF16.
    assert f["weight_format"] == "fp8"
    assert within(f["expert_weight_bytes"] + f["non_expert_weight_bytes"], 671e9 + 2 * 129_280 * 7168, 0.01)
    assert any("multi-token" in w for w in m.warnings)
    assert f["hf_model_id"] == "deepseek-ai/DeepSeek-V3"


def test_deepseek_v32_is_deepseek_v3_with_sparse_attention():
    """DeepSeek-V3.2's config.json is DeepSeek-V3's with model_type deepseek_v32 and the lightning
    indexer (deepseek-ai/DeepSeek-V3.2-Exp config.json: index_n_heads 64, index_head_dim 128,
    index_topk 2048; vLLM DeepseekV32ForCausalLM)."""
    v3 = load_config("deepseek-ai--DeepSeek-V3")
    v32 = dict(v3, model_type="deepseek_v32", index_n_heads=64, index_head_dim=128, index_topk=2048)
    v32["architectures"] = ["DeepseekV32ForCausalLM"]
    f3, f = parse_hf_config(v3).fields, parse_hf_config(v32).fields
    assert (f["mla_layers"], f["index_head_dim"], f["index_n_heads"], f["index_topk"]) == (61, 128, 64, 2048)
    assert f["num_experts"] == f3["num_experts"] and f["moe_layers"] == f3["moe_layers"]
    # the indexer's weights per layer: wq_b (q_lora 1536 → 64 heads × 128), wk (7168 → 128), its norm
    # (weight and bias, 2 × 128) and weights_proj (7168 → 64 heads)
    indexer = 1536 * 64 * 128 + 7168 * 128 + 2 * 128 + 7168 * 64
    assert f["total_params"] - f3["total_params"] == 61 * indexer
    # the importer's display figure: latent + indexer key at 2 B (the engine sizes per engine)
    assert kv_bytes_per_token(f) == 61 * (512 + 64 + 128) * 2


def test_mistral_7b_is_a_llama_with_a_window_on_every_layer():
    """Mistral-7B-v0.1's public config.json: 32 layers, 32 / 8 heads of 128, MLP 14,336, vocabulary
    32,000, untied embeddings, sliding_window 4,096; Mistral AI's model card: 7.24 B parameters."""
    config = {
        "architectures": ["MistralForCausalLM"],
        "model_type": "mistral",
        "hidden_size": 4096,
        "intermediate_size": 14336,
        "num_hidden_layers": 32,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "vocab_size": 32000,
        "max_position_embeddings": 32768,
        "sliding_window": 4096,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
    }
    f = parse_hf_config(config).fields
    assert f["total_params"] == 7_241_732_096
    assert (f["gqa_layers"], f["sliding_layers"], f["sliding_window"]) == (0, 32, 4096)


#: google/gemma-3-27b-it config.json as published: the text_config names only what differs from
#: transformers' Gemma3TextConfig defaults (vocabulary 262,208, tied embeddings, a global layer every
#: sixth, ``sliding_window_pattern`` 6).
GEMMA3_27B = {
    "architectures": ["Gemma3ForConditionalGeneration"],
    "model_type": "gemma3",
    "text_config": {
        "head_dim": 128,
        "hidden_size": 5376,
        "intermediate_size": 21504,
        "model_type": "gemma3_text",
        "num_attention_heads": 32,
        "num_hidden_layers": 62,
        "num_key_value_heads": 16,
        "query_pre_attn_scalar": 168,
        "rope_scaling": {"factor": 8.0, "rope_type": "linear"},
        "sliding_window": 1024,
    },
    "vision_config": {
        "hidden_size": 1152,
        "image_size": 896,
        "intermediate_size": 4304,
        "model_type": "siglip_vision_model",
        "num_attention_heads": 16,
        "num_hidden_layers": 27,
        "patch_size": 14,
        "vision_use_head": False,
    },
    "torch_dtype": "bfloat16",
}


def test_gemma3_27b_layers_window_and_parameters():
    f = parse_hf_config(GEMMA3_27B).fields
    # layers 5, 11, …, 59 are global: 10 full-attention layers, 52 with the 1,024-token window
    assert (f["num_layers"], f["gqa_layers"], f["sliding_layers"], f["sliding_window"]) == (62, 10, 52, 1024)
    assert (f["num_attention_heads"], f["num_kv_heads"], f["head_dim"]) == (32, 16, 128)
    hidden, inter, vocab = 5376, 21504, 262_208
    per_layer = (
        hidden * 32 * 128 * 2  # q, o
        + hidden * 16 * 128 * 2  # k, v
        + 2 * 128  # q_norm, k_norm
        + 3 * hidden * inter  # gate, up, down
        + 4 * hidden  # four RMSNorms
    )
    text = vocab * hidden + 62 * per_layer + hidden  # tied embeddings, final norm
    # SigLIP so400m: patch embedding and bias, 4,096 positions, 27 layers (attention with biases, MLP,
    # two LayerNorms), post-LayerNorm; projector 1,152 → 5,376 and its RMSNorm
    siglip = (
        3 * 14 * 14 * 1152
        + 1152
        + 4096 * 1152
        + 27 * (4 * 1152**2 + 4 * 1152 + 2 * 1152 * 4304 + 4304 + 1152 + 4 * 1152)
        + 2 * 1152
    )
    projector = 1152 * 5376 + 1152
    assert f["vision_params"] == siglip + projector
    assert f["total_params"] == text + siglip + projector
    # Google's model card: 27 B; the checkpoint's 27.4 B counts the vision tower
    assert round(f["total_params"] / 1e9, 1) == 27.4
    assert f["has_vision"]
    assert f["tie_word_embeddings"] is True  # Gemma's default: one matrix, counted once above


def test_gemma3_4b_text_config_takes_transformers_defaults():
    """google/gemma-3-4b-it's text_config names width, depth, MLP and window only: 8 heads, 4 KV heads of
    256, vocabulary 262,208 come from Gemma3TextConfig's defaults."""
    config = {
        "model_type": "gemma3",
        "text_config": {
            "hidden_size": 2560,
            "intermediate_size": 10240,
            "model_type": "gemma3_text",
            "num_hidden_layers": 34,
            "sliding_window": 1024,
        },
        "torch_dtype": "bfloat16",
    }
    f = parse_hf_config(config).fields
    assert (f["num_attention_heads"], f["num_kv_heads"], f["head_dim"]) == (8, 4, 256)
    assert (f["gqa_layers"], f["sliding_layers"]) == (5, 29)  # layers 5, 11, 17, 23, 29
    assert kv_bytes_per_token(f) == 34 * 2 * 4 * 256 * 2


def test_gemma2_alternates_local_and_global_layers():
    """google/gemma-2-9b config.json: 42 layers of 3,584, 16 / 8 heads of 256, window 4,096."""
    config = {
        "model_type": "gemma2",
        "hidden_size": 3584,
        "intermediate_size": 14336,
        "num_hidden_layers": 42,
        "num_attention_heads": 16,
        "num_key_value_heads": 8,
        "head_dim": 256,
        "sliding_window": 4096,
        "vocab_size": 256000,
        "torch_dtype": "float32",
    }
    f = parse_hf_config(config).fields
    assert (f["gqa_layers"], f["sliding_layers"], f["sliding_window"]) == (21, 21, 4096)
    # Google's model card: 9.24 B parameters
    assert round(f["total_params"] / 1e9, 2) == 9.24


def test_kimi_k2():
    f = parse_hf_config(load_config("moonshotai--Kimi-K2-Instruct")).fields
    # docs/domain.md §2: 61 layers, MLA, 384 experts, ≈1.04 T / 32 B.
    assert (f["num_layers"], f["mla_layers"], f["num_experts"]) == (61, 61, 384)
    assert within(f["total_params"], 1.04e12)
    assert within(f["active_params"], 32e9)


# --------------------------------------------------------------------------- Qwen3, Llama, gpt-oss


def test_qwen3_235b_a22b():
    f = parse_hf_config(load_config("Qwen--Qwen3-235B-A22B")).fields
    # docs/domain.md §2: 94 layers, GQA 64/4 heads, head 128.
    assert (f["num_layers"], f["gqa_layers"], f["num_attention_heads"], f["num_kv_heads"], f["head_dim"]) == (
        94,
        94,
        64,
        4,
        128,
    )
    # K and V for 4 KV heads × 128 dims × 2 B × 94 layers.
    assert kv_bytes_per_token(f) == 94 * 2 * 4 * 128 * 2 == 192_512
    assert within(f["total_params"], 235e9)
    assert within(f["active_params"], 22e9)
    # BF16 release: 2 bytes per weight.
    assert f["weight_format"] == "bf16"
    assert f["expert_weight_bytes"] + f["non_expert_weight_bytes"] == 2 * f["total_params"]


def test_llama_3_1_8b_exact_count():
    f = parse_hf_config(load_config("meta-llama--Meta-Llama-3.1-8B")).fields
    hidden, inter, vocab, layers, kv = 4096, 14336, 128_256, 32, 8
    per_layer = (
        hidden * hidden  # q
        + 2 * hidden * kv * 128  # k, v
        + hidden * hidden  # o
        + 3 * hidden * inter  # gate, up, down
        + 2 * hidden  # two RMSNorms
    )
    expected = 2 * vocab * hidden + layers * per_layer + hidden  # untied embeddings + final norm
    # Meta model card: 8.03 B.
    assert f["total_params"] == expected == 8_030_261_248
    assert (f["gqa_layers"], f["num_kv_heads"], f["head_dim"]) == (32, 8, 128)
    assert kv_bytes_per_token(f) == 32 * 2 * 8 * 128 * 2 == 131_072
    assert f["num_experts"] == 0 and f["expert_weight_bytes"] == 0
    # Active excludes the input embedding table (a look-up, no FLOPs).
    assert f["active_params"] == expected - vocab * hidden
    # config.json "tie_word_embeddings": false — the LM head is its own matrix (counted twice above)
    assert f["tie_word_embeddings"] is False
    tied = parse_hf_config(
        {**load_config("meta-llama--Meta-Llama-3.1-8B"), "tie_word_embeddings": True}
    ).fields
    assert tied["tie_word_embeddings"] is True and f["total_params"] - tied["total_params"] == vocab * hidden


def test_gpt_oss_120b_sliding_window_and_mxfp4():
    f = parse_hf_config(load_config("openai--gpt-oss-120b")).fields
    # docs/domain.md §2: 36 layers, GQA 64/8, head 64, alternating 128-token sliding window.
    assert (f["num_layers"], f["gqa_layers"], f["sliding_layers"], f["sliding_window"]) == (36, 18, 18, 128)
    assert (f["num_attention_heads"], f["num_kv_heads"], f["head_dim"]) == (64, 8, 64)
    # OpenAI model card: 117 B total, 5.1 B active; MXFP4 experts.
    assert within(f["total_params"], 117e9)
    assert within(f["active_params"], 5.1e9)
    assert f["weight_format"] == "mxfp4"
    assert within(f["expert_weight_bytes"], 36 * 128 * 3 * 2880 * 2880 * 4.25 / 8, 0.01)


def test_weight_format_override_changes_bytes():
    config = load_config("moonshotai--Kimi-K3")
    mxfp4 = parse_hf_config(config).fields
    w4a8 = parse_hf_config(config, weight_format="w4a8").fields
    assert w4a8["weight_format"] == "w4a8"
    assert w4a8["expert_weight_bytes"] != mxfp4["expert_weight_bytes"]
    assert w4a8["total_params"] == mxfp4["total_params"]
    with pytest.raises(ConfigError) as err:
        parse_hf_config(config, weight_format="fp3")
    assert err.value.field == "weight_format"


def test_kimi_linear_top_level_config():
    text = copy.deepcopy(load_config("moonshotai--Kimi-K3")["text_config"])
    f = parse_hf_config(text).fields
    assert f["family"] == "Kimi"
    assert (f["mla_layers"], f["linear_layers"], f["has_vision"]) == (24, 69, False)


# --------------------------------------------------------------------------- malformed input


def test_missing_field_is_named():
    config = load_config("meta-llama--Meta-Llama-3.1-8B")
    del config["num_hidden_layers"]
    with pytest.raises(ConfigError) as err:
        parse_hf_config(config)
    assert err.value.field == "num_hidden_layers"
    assert str(err.value) == "num_hidden_layers is missing"


def test_nested_missing_field_is_named_with_its_path():
    config = load_config("moonshotai--Kimi-K3")
    del config["text_config"]["num_hidden_layers"]
    with pytest.raises(ConfigError, match=r"text_config\.num_hidden_layers is missing"):
        parse_hf_config(config)


def test_wrong_type_is_named():
    config = load_config("Qwen--Qwen3-235B-A22B")
    config["hidden_size"] = "4096x"
    with pytest.raises(ConfigError, match="hidden_size must be an integer"):
        parse_hf_config(config)


def test_unknown_model_type_is_named():
    with pytest.raises(ConfigError, match="model_type 'bert' is not supported") as err:
        parse_hf_config({"model_type": "bert", "num_hidden_layers": 12})
    assert err.value.field == "model_type"
    with pytest.raises(ConfigError, match="model_type is missing"):
        parse_hf_config({"num_hidden_layers": 12})


def test_kda_layers_must_cover_every_layer():
    config = load_config("moonshotai--Kimi-K3")
    config["text_config"]["linear_attn_config"]["kda_layers"].remove(1)
    with pytest.raises(ConfigError) as err:
        parse_hf_config(config)
    assert err.value.field == "text_config.linear_attn_config.kda_layers"


def test_unsupported_quantisation_is_named():
    config = load_config("meta-llama--Meta-Llama-3.1-8B")
    config["quantization_config"] = {"quant_method": "bitnet"}
    with pytest.raises(ConfigError) as err:
        parse_hf_config(config)
    assert err.value.field == "quantization_config.quant_method"


def test_experts_per_token_above_experts_is_refused():
    config = load_config("Qwen--Qwen3-235B-A22B")
    config["num_experts_per_tok"] = 200
    with pytest.raises(ConfigError, match="exceeds the routed expert count"):
        parse_hf_config(config)


def test_text_that_is_not_a_json_object():
    with pytest.raises(ConfigError, match="not valid JSON"):
        load_config_text("{model_type: llama")
    with pytest.raises(ConfigError, match="must be a JSON object"):
        load_config_text("[1, 2]")
    with pytest.raises(ConfigError, match="larger than 1 MB"):
        load_config_text(b"{" + b" " * (1024 * 1024) + b"}")
    with pytest.raises(ConfigError, match="UTF-8"):
        load_config_text(b"\xff\xfe{}")


def test_parse_text_round_trip():
    text = (CONFIG_DIR / "meta-llama--Meta-Llama-3.1-8B.config.json").read_text()
    assert parse_hf_config_text(text).fields["num_layers"] == 32


# --------------------------------------------------------------------------- management command


@pytest.mark.django_db
def test_import_hf_config_command_creates_and_refuses_duplicates(capsys):
    from catalog.models import LlmModel

    path = CONFIG_DIR / "deepseek-ai--DeepSeek-V3.config.json"
    call_command("import_hf_config", str(path), "--slug", "dsv3", "--hf-model-id", "deepseek-ai/DeepSeek-V3")
    row = LlmModel.objects.get(slug="dsv3")
    assert row.mla_layers == 61 and row.weight_format == "fp8"
    assert row.source_for("total_params")["kind"] == "public"
    assert "61 layers" in capsys.readouterr().out
    with pytest.raises(CommandError, match="exists"):
        call_command("import_hf_config", str(path), "--slug", "dsv3")
    call_command("import_hf_config", str(path), "--slug", "dsv3", "--weight-format", "bf16", "--update")
    row.refresh_from_db()
    assert row.weight_format == "bf16"


@pytest.mark.django_db
def test_import_hf_config_command_names_the_bad_field(tmp_path):
    config = load_config("meta-llama--Meta-Llama-3.1-8B")
    del config["vocab_size"]
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    with pytest.raises(CommandError, match="vocab_size is missing"):
        call_command("import_hf_config", str(path))
    with pytest.raises(CommandError, match="No such file"):
        call_command("import_hf_config", str(tmp_path / "missing.json"))
