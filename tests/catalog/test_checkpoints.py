"""Checkpoints as catalog rows (issue 14): seeded bytes per part, platforms, launch flags, admin checks."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from django.urls import reverse

from catalog.models import Accelerator, Checkpoint

from .test_admin import field_errors, post_change

pytestmark = pytest.mark.django_db


def test_k3_has_the_hf_release_and_a_modelslim_conversion(seeded):
    hf = Checkpoint.objects.get(slug="kimi-k3-hf-mxfp4")
    slim = Checkpoint.objects.get(slug="kimi-k3-modelslim-w4a8")
    assert hf.model.slug == slim.model.slug == "kimi-k3"
    # S1 / S2: 96 shards, 1,560,936,091,448 B; the routed experts are MXFP4 (4.25 bits) over
    # 92 MoE layers × 896 experts × 3 × 3584 × 3072 parameters (HF config).
    experts = 92 * 896 * 3 * 3584 * 3072
    assert hf.expert_bytes == experts * 17 // 32
    assert hf.total_bytes == 1_560_936_091_448
    assert hf.embedding_bytes == 2 * 163_840 * 7168 * 2  # embed_tokens + lm_head, BF16
    assert sorted(hf.platforms) == ["ascend", "cuda"] and hf.launch_flags == []
    assert slim.platforms == ["ascend"] and slim.launch_flags == ["--quantization", "ascend"]
    assert slim.expert_bytes == experts // 2  # int4
    assert slim.quant_method == "ascend" and slim.is_assumed("expert_bytes")
    # The platform-dependent groups, from the config (router, latent MoE, MLA a, KDA f_a).
    assert hf.param_groups == {
        "router": 92 * 7168 * 896,
        "latent_moe": 92 * 2 * 7168 * 3584,
        "mla_a": 24 * 7168 * (1536 + 512 + 64),
        "kda_f_a": 69 * 7168 * 128,
    }


def test_accelerators_carry_the_memory_the_runtime_reports(seeded):
    a3 = Accelerator.objects.get(slug="ascend-910c")
    assert a3.runtime_memory_gib == Decimal("61.27")
    assert "8289" in a3.source_for("runtime_memory_gib")["ref"]
    assert Accelerator.objects.get(slug="h200-sxm").runtime_memory_gib == Decimal("139.81")


@pytest.mark.parametrize(
    "field, value, fragment",
    [
        ("launch_flags", json.dumps(["--quantization", "ascend; rm -rf /"]), "flags and plain values"),
        ("platforms", json.dumps(["tpu"]), "cuda, ascend"),
        ("default_for", json.dumps(["cuda"]), "default where it runs"),
        ("param_groups", json.dumps({"router": -1}), "whole numbers"),
        ("embedding_bytes", "999999999999999", "part of the non-expert bytes"),
    ],
)
def test_the_admin_refuses_bad_checkpoint_fields(admin_client, seeded, field, value, fragment):
    slim = Checkpoint.objects.get(slug="kimi-k3-modelslim-w4a8")
    target = "non_expert_bytes" if field == "embedding_bytes" else field
    response = post_change(admin_client, slim, **{field: value})
    assert any(fragment in e for e in field_errors(response, target)), response.context[
        "adminform"
    ].form.errors
    slim.refresh_from_db()
    assert slim.launch_flags == ["--quantization", "ascend"]


def test_checkpoint_admin_lists_them(admin_client, seeded):
    page = admin_client.get(reverse("admin:catalog_checkpoint_changelist")).content.decode()
    assert "Kimi K3 — ModelSlim W4A8 for vLLM-Ascend" in page


def test_fp8_releases_run_on_gpus_only_and_replicate_the_gate_and_mla_a(seeded):
    ds = Checkpoint.objects.get(slug="deepseek-v3-fp8")
    # vllm-ascend issue #1526: no FP8 weights on Atlas A2/A3.
    assert ds.platforms == ["cuda"] and ds.default_for == ["cuda"]
    # DeepSeek-V3 config: 58 MoE layers (61 − first_k_dense_replace 3) × 7168 × 256 experts; 61 MLA
    # layers × 7168 × (q_lora_rank 1536 + kv_lora_rank 512 + rope 64).
    assert ds.param_groups["router"] == 58 * 7168 * 256
    assert ds.param_groups["mla_a"] == 61 * 7168 * (1536 + 512 + 64)
    assert ds.total_bytes == ds.model.expert_weight_bytes + ds.model.non_expert_weight_bytes
