"""Speculative decoding as a serving setting, and the per-role prefill/decode settings (engine/speculative.py).

Expected figures are worked out here from the draft's public numbers (catalog/seed/drafts.yaml):
the Kimi K3 GQA DSpark draft of vLLM-Ascend's four-node A3 runs has 5 layers of 16 KV heads × 64
(NVIDIA/TensorRT-LLM#19040: "16 KV heads x 64, K and V both", 20,480 B a token unsharded), ≈ 3.56 B
BF16 parameters (lightseekorg/tokenspeed#879), 7 speculative tokens at 60.33 % acceptance
(vllm-project/vllm-ascend#14454).
"""

from __future__ import annotations

import json
import math
import shlex

import pytest

from configurator import reference
from configurator.engine.plan import plan
from configurator.engine.serialize import plan_to_dict
from configurator.io.requests import RequestError

DRAFT_BYTES = 3_560_000_000 * 2  # BF16
DRAFT_LAYERS, DRAFT_KV_HEADS, DRAFT_HEAD_DIM = 5, 16, 64
TOKENS, ACCEPTANCE = 7, 0.6033


def _plan(case: str, **changes):
    data = reference.case(case)
    for key, value in changes.items():
        data[key] = value
    request = reference.request(data)
    return request, plan_to_dict(plan(request))


def _argv(node: dict) -> list[str]:
    return shlex.split(node["command"].splitlines()[0])


def _flag(argv: list[str], name: str) -> str | None:
    return argv[argv.index(name) + 1] if name in argv else None


def test_k3_on_4_a3_plans_with_the_catalog_dspark_draft_and_its_source():
    request, body = _plan("a3-4-single")
    # The draft runs on vLLM-Ascend from 0.26.0 (vllm-ascend#12950, the v0.26.0rc branch); the K3 recipe
    # is the v0.23.0 tutorial, so an unstated version becomes the draft's first release.
    assert request.serving.vllm_version == "0.26.0"
    (role,) = body["serving"]
    assert role["role"] == "serve"
    assert (role["speculative_method"], role["draft"], role["num_speculative_tokens"]) == (
        "dspark",
        "kimi-k3-dspark-gqa",
        TOKENS,
    )
    assert role["acceptance_rate"] == pytest.approx(ACCEPTANCE)
    assert "vllm-ascend#14454" in role["draft_source"]
    assert (role["tp"], role["dp"]) == (16, 4)
    # vLLM's mean acceptance length: 1 + k × a (vllm/v1/spec_decode/metrics.py).
    assert body["figures"]["performance.tokens_per_step"]["value"] == pytest.approx(
        1 + TOKENS * ACCEPTANCE, abs=1e-4
    )


def test_memory_counts_the_drafts_weights_and_kv_per_rank():
    _, on = _plan("a3-4-single")
    _, off = _plan("a3-4-single", serving={"speculative": {"method": ""}, "vllm_version": "0.26.0"})
    f_on, f_off = on["figures"], off["figures"]
    # The draft loads at the target's TP (vLLM SpeculativeConfig draft_tensor_parallel_size): ÷ 16.
    per_rank = math.ceil(DRAFT_BYTES / 16)
    assert per_rank == 445_000_000
    assert f_on["memory.per_rank.draft_weights_bytes"]["value"] == per_rank
    assert "memory.per_rank.draft_weights_bytes" not in f_off
    weights_on = f_on["memory.per_rank.weights_bytes"]["value"]
    assert weights_on - f_off["memory.per_rank.weights_bytes"]["value"] == per_rank
    # Its 5 GQA layers join the KV cache: K and V of max(1, 16 ÷ 16) heads × 64 × 2 bytes each.
    draft_kv = DRAFT_LAYERS * 2 * max(1, DRAFT_KV_HEADS // 16) * DRAFT_HEAD_DIM * 2
    assert draft_kv == 1280
    assert f_on["memory.per_rank.draft_kv_bytes_per_token"]["value"] == draft_kv
    bpt_on = f_on["memory.per_rank.kv_bytes_per_token"]["value"]
    assert bpt_on - f_off["memory.per_rank.kv_bytes_per_token"]["value"] == draft_kv
    # The pool shrinks by the draft's weights and each token costs the draft's KV more.
    kv_on = on["memory"]["per_rank"]["kv_cache_bytes"]
    assert kv_on == off["memory"]["per_rank"]["kv_cache_bytes"] - per_rank
    assert on["memory"]["per_rank"]["kv_tokens"] < off["memory"]["per_rank"]["kv_tokens"]


def test_the_step_model_charges_the_draft():
    _, on = _plan("a3-4-single")
    _, off = _plan("a3-4-single", serving={"speculative": {"method": ""}, "vllm_version": "0.26.0"})
    # The decode step pays the draft's 7 sequential proposals (serving_model.DraftSpec) and emits
    # 1 + 7 × 0.6033 tokens a sequence, so the time per output token falls.
    step_on = on["figures"]["performance.cluster.decode_step_s"]
    step_off = off["figures"]["performance.cluster.decode_step_s"]
    assert step_on["inputs"]["draft_s"] > 0
    assert step_off["inputs"]["draft_s"] == 0
    assert on["figures"]["performance.tpot_s"]["value"] < off["figures"]["performance.tpot_s"]["value"]


def test_the_bundle_launches_the_exact_speculative_config():
    _, body = _plan("a3-4-single")
    codes = {c["code"] for c in body["checks"]}
    assert "launch.speculative_not_launched" not in codes
    for node in body["launch"]["nodes"]:
        config = json.loads(_flag(_argv(node), "--speculative-config"))
        # vllm/config/speculative.py SpeculativeConfig fields; the Ascend 910C entry of the vLLM recipes'
        # Kimi-K3 (vllm-project/recipes#842) runs the draft eager.
        assert config == {
            "method": "dspark",
            "model": "RadixArk/Kimi-K3-DSpark",
            "num_speculative_tokens": TOKENS,
            "enforce_eager": True,
        }


def test_a_draft_given_only_as_performance_inputs_is_still_flagged_as_not_launched():
    _, body = _plan("a3-4-single", serving={"vllm_version": "0.23.0"}, performance={"speculative_tokens": 3})
    assert body["serving"][0]["speculative_method"] == ""
    assert "launch.speculative_not_launched" in {c["code"] for c in body["checks"]}
    assert all("--speculative-config" not in _argv(n) for n in body["launch"]["nodes"])


def test_version_aware_defaults_and_refusals():
    # A stated version older than the draft's first release: the default stays off ...
    _, body = _plan("a3-4-single", serving={"vllm_version": "0.23.0"})
    assert body["serving"][0]["speculative_method"] == ""
    # ... and naming the draft there is a 400 on the draft, saying which version runs it.
    with pytest.raises(RequestError) as err:
        _plan(
            "a3-4-single",
            serving={
                "vllm_version": "0.23.0",
                "speculative": {"method": "dspark", "draft": "kimi-k3-dspark-gqa"},
            },
        )
    assert "0.26.0" in err.value.errors["serving.speculative.draft"][0]
    # The catalog lists no CUDA draft for K3: off on H200, said by the plan.
    _, body = _plan("hgx-h200-2-single")
    assert body["serving"][0]["speculative_method"] == ""


@pytest.mark.parametrize(
    ("serving", "field"),
    [
        ({"speculative": "dspark"}, "serving.speculative"),
        ({"speculative": {"method": "eagle9"}}, "serving.speculative.method"),
        ({"speculative": {"method": "dspark", "draft": "no-such-draft"}}, "serving.speculative.draft"),
        ({"speculative": {"method": "eagle3", "draft": "kimi-k3-dspark-gqa"}}, "serving.speculative.method"),
        (
            {"speculative": {"method": "dspark", "num_speculative_tokens": 99}},
            "serving.speculative.num_speculative_tokens",
        ),
        ({"speculative": {"method": "ngram"}}, "serving.speculative.num_speculative_tokens"),
        ({"speculative": {"draft": "kimi-k3-dspark-gqa"}}, "serving.speculative.method"),
        ({"prefill": {"max_num_seqs": 2}}, "serving.prefill"),
    ],
)
def test_bad_speculative_or_role_settings_name_their_field(serving, field):
    with pytest.raises(RequestError) as err:
        _plan("a3-4-single", serving=serving)
    assert field in err.value.errors


def test_ngram_needs_no_draft_and_launches_its_method():
    _, body = _plan("a3-4-single", serving={"speculative": {"method": "ngram", "num_speculative_tokens": 3}})
    config = json.loads(_flag(_argv(body["launch"]["nodes"][0]), "--speculative-config"))
    assert config == {"method": "ngram", "num_speculative_tokens": 3}
    assert "memory.per_rank.draft_weights_bytes" not in body["figures"]


def test_xpyd_roles_carry_their_own_settings_in_request_plan_and_bundle():
    serving = {
        "prefill": {"max_num_seqs": 4, "max_num_batched_tokens": 32768, "speculative": {"method": ""}},
        "decode": {"max_num_seqs": 64, "max_num_batched_tokens": 2048, "tp": 8, "dp": 16},
    }
    request, body = _plan("a3-16-8p8d", serving=serving)
    assert request.serving.prefill.max_num_seqs == 4
    roles = {r["role"]: r for r in body["serving"]}
    assert (roles["prefill"]["max_num_seqs"], roles["prefill"]["max_num_batched_tokens"]) == (4, 32768)
    # the decode side's setting is the request's 64; its engines launch the design point's sequences per
    # DP rank within it (launch/build.py launched_max_num_seqs), which is what the plan's serving row says
    assert request.serving.decode.max_num_seqs == 64
    design = body["performance"]["design_point"]
    assert roles["decode"]["max_num_seqs"] == design["max_num_seqs_per_dp_rank"] <= 64
    assert roles["decode"]["max_num_batched_tokens"] == 2048
    assert roles["prefill"]["speculative_method"] == ""
    assert roles["decode"]["speculative_method"] == "dspark"
    # 8 decode nodes × 16 NPUs = 128 devices, laid out TP8 × DP16 as the role asks.
    assert (roles["decode"]["tp"], roles["decode"]["dp"]) == (8, 16)
    decode_group = next(g for g in body["layout"]["groups"] if g["role"] == "decode")
    assert (decode_group["parallel"]["tp"], decode_group["parallel"]["dp"]) == (8, 16)
    for node in body["launch"]["nodes"]:
        argv = _argv(node)
        side = roles[node["role"]]
        assert int(_flag(argv, "--max-num-seqs")) == side["max_num_seqs"]
        assert int(_flag(argv, "--max-num-batched-tokens")) == side["max_num_batched_tokens"]
        assert int(_flag(argv, "--tensor-parallel-size")) == side["tp"]
        assert ("--speculative-config" in argv) == (node["role"] == "decode")
    # The prefill side holds no draft; the decode side does.
    assert "memory.per_rank.draft_weights_bytes" not in body["figures"]  # the first group is prefill
    assert body["figures"]["memory.decode.per_rank.draft_weights_bytes"]["value"] == math.ceil(
        DRAFT_BYTES / 8
    )


def test_a_role_layout_must_use_its_sides_devices():
    with pytest.raises(RequestError) as err:
        _plan("a3-16-8p8d", serving={"decode": {"tp": 7}})
    assert "serving.decode.tp" in err.value.errors


def test_a_role_layout_that_contradicts_the_topology_is_refused():
    data = reference.case("a3-16-8p8d")
    data["topology"] = {**data["topology"], "decode_parallel": {"tp": 16, "dp": 8, "dp_local": 1}}
    data["serving"] = {"decode": {"tp": 8, "dp": 16}}
    with pytest.raises(RequestError) as err:
        reference.request(data)
    assert "serving.decode.tp" in err.value.errors


def test_the_draft_is_on_only_where_its_runs_were_published():
    # The K3 DSpark runs are on Atlas A3 (vllm-ascend#12950, #14454); Atlas A2 keeps the tutorial's
    # version and no draft, and naming it there is refused on the draft.
    request, body = _plan("a2-8-text-only-modelslim")
    assert (request.serving.vllm_version, body["serving"][0]["speculative_method"]) == ("0.23.0", "")
    data = reference.case("a2-8-text-only-modelslim")
    data["serving"] = {
        **data.get("serving", {}),
        "vllm_version": "0.26.0",
        "speculative": {"method": "dspark", "draft": "kimi-k3-dspark-gqa"},
    }
    with pytest.raises(RequestError) as err:
        reference.request(data)
    assert "A2" in err.value.errors["serving.speculative.draft"][0]
