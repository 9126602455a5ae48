"""The memory model against real vLLM / vLLM-Ascend start-up logs (tests/data/vllm_startup_logs.yaml).

Issue 14's acceptance: median |KV-cache error| ≤ 5 %, none worse than 15 %, and every start-up
vLLM refused is reported as an error.  The expected values are what vLLM logged (each entry links
its public source); the engine's terms are its own mechanisms (memory.py), not fitted to these logs.
"""

import pytest

from configurator.calibration.data import load_entries
from configurator.engine.calibration import predict, request_for, summarise, table
from configurator.engine.memory import kv_error_margin, size_memory

ENTRIES = load_entries()
GIB = 2**30


def test_the_set_has_at_least_25_public_start_ups_with_their_flags():
    # Issue 24's acceptance: at least 25 start-up records with sources.
    assert len(ENTRIES) >= 25
    # Several vLLM versions, MoE, MLA, sliding-window and FP8 / MXFP4 releases.
    assert len({e["vllm_version"] for e in ENTRIES}) >= 4
    assert any(e["arch"].get("num_experts") for e in ENTRIES)
    assert any(e["arch"].get("mla_layers") for e in ENTRIES)
    assert any(e["arch"].get("sliding_layers") for e in ENTRIES)
    assert {"mxfp4", "fp8"} <= {str(e["quantization"]).split()[-1] for e in ENTRIES if e["quantization"]}
    ids = [e["id"] for e in ENTRIES]
    assert len(set(ids)) == len(ids)
    for e in ENTRIES:
        assert e["source"].startswith("https://"), e["id"]
        for key in ("device", "device_total_gib", "model", "arch", "tp", "pp", "dp", "ep", "max_model_len"):
            assert key in e, (e["id"], key)
        assert e["gpu_memory_utilization"] and e["vllm_version"] and e["dtype"]
        assert e["outcome"] in ("ok", "refused")
        if e["outcome"] == "ok":
            assert e["logged"]["kv_gib"] > 0
    assert {e["engine"] for e in ENTRIES} == {"vllm", "vllm-ascend"}
    assert sum(e["outcome"] == "refused" for e in ENTRIES) >= 3


def test_median_kv_error_is_within_5_percent_and_none_worse_than_15():
    summary = summarise(ENTRIES)
    assert len(summary.kv_errors) >= 15
    assert summary.median_kv_error <= 0.05, table(summary)
    derived = summarise([e for e in ENTRIES if not e.get("known_gap")])
    assert derived.worst_kv_error <= 0.15, table(derived)


@pytest.mark.parametrize("entry", ENTRIES, ids=[e["id"] for e in ENTRIES])
def test_each_start_up(entry):
    p = predict(entry)
    # vLLM refused ⇔ the engine reports an error check: no false "does not fit".
    assert p.agrees, (p.outcome, p.error_codes)
    # A start-up whose gap is a term the engine assumes (the CUDA-graph pool of vLLM ≥ 0.21) is held to
    # the KV error band the plan warns with (memory.kv_error_margin).
    if entry.get("known_gap"):
        assert entry["known_gap"] == "graph pool"
        request, layout = request_for(entry)
        rank = size_memory(request, layout).groups[0].per_rank
        assert rank.graph_bytes > 0 and request.serving.graph_memory_bytes is None
        # memory.kv_error_margin: 5 % of KV, activations and buffers, plus the whole assumed graph pool.
        margin = 0.05 * (rank.kv_cache_bytes + rank.activation_bytes + rank.buffer_bytes) + rank.graph_bytes
        assert kv_error_margin(
            rank.kv_cache_bytes, rank.activation_bytes, rank.buffer_bytes, rank.graph_bytes
        ) == pytest.approx(margin, abs=1)
        assert abs(p.predicted_kv_gib - p.logged_kv_gib) * GIB <= margin
        return
    if p.kv_error is not None:
        assert abs(p.kv_error) <= 0.15
    if p.token_error is not None:
        assert abs(p.token_error) <= 0.15


def test_one_entry_recomputed_by_hand():
    # llm-d H100 log, Llama-3.1-8B, vLLM 0.11.0: budget 0.9 × 79.18 GiB; weights 14.99 GiB;
    # the sampler warm-up (1,024 dummy requests × 128,256 vocab × 38 B) is the activation peak
    # (the forward pass over 8,192 tokens × 4,096 × 2 B × 24 is smaller); 0.13 GiB non-torch;
    # vLLM 0.11 does not subtract CUDA graphs.  vLLM logged 51.38 GiB.
    entry = next(e for e in ENTRIES if e["id"] == "llmd-llama-3.1-8b-h100-tp1")
    sampler = 1024 * 128_256 * 38
    assert sampler > 8192 * 4096 * 2 * 24
    expected = 0.9 * 79.18 - 14.99 - sampler / GIB - 0.13
    p = predict(entry)
    assert p.predicted_kv_gib == pytest.approx(expected, abs=0.01)
    assert abs(expected - 51.38) / 51.38 < 0.01


def test_logged_token_counts_follow_from_bytes_per_token():
    # Qwen2-7B: 28 layers × 2 × 4 KV heads × 128 × 2 B = 57,344 B per token; vLLM blocks of 16.
    entry = next(e for e in ENTRIES if e["id"] == "dennislee-qwen2-7b-a100-80gb-util0.5")
    per_token = 28 * 2 * 4 * 128 * 2
    assert int(24.83 * GIB // (per_token * 16)) * 16 == pytest.approx(entry["logged"]["kv_tokens"], rel=0.001)


@pytest.mark.parametrize(
    "device, total, usage, expected",
    [
        ("NVIDIA H100 80GB HBM3", 79.18, None, (1024, 8192)),
        ("NVIDIA H100 80GB HBM3", 79.18, "llm_class", (1024, 16384)),
        ("NVIDIA A100 80GB", 79.25, None, (256, 2048)),
        ("NVIDIA A100-SXM4-40GB", 39.39, "llm_class", (256, 8192)),
    ],
)
def test_unlogged_limits_follow_vllm_get_batch_defaults(device, total, usage, expected):
    # vllm/engine/arg_utils.py EngineArgs.get_batch_defaults: >= 70 GiB and not an A100 → large defaults.
    from configurator.engine.calibration import vllm_default_limits

    entry = {"device": device, "device_total_gib": total, "usage": usage}
    assert vllm_default_limits(entry) == expected
    # The logged entries agree with the rule wherever they state the limits.
    for e in ENTRIES:
        if e["engine"] == "vllm" and e.get("max_num_seqs") and "flashinfer_sampler" not in e:
            bare = {k: v for k, v in e.items() if k not in ("max_num_seqs", "max_num_batched_tokens")}
            bare["usage"] = "llm_class" if "LLM class" in e.get("defaults_note", "") else None
            assert vllm_default_limits(bare) == (e["max_num_seqs"], e["max_num_batched_tokens"]), e["id"]


def test_the_vllm_0_19_start_ups_follow_their_versions_terms():
    # llm-d-planner's five vLLM 0.19.0 H100 start-ups print their own terms ("Actual usage is … GiB for
    # peak activation, … GiB for non-torch memory"): the Triton top-k/top-p sampler (≈ 15 B per request
    # per vocabulary entry, not the sort path's 38 B) and 0.25 GiB / 2.1 GiB of non-torch memory at
    # TP1 / TP2.  With the 0.10–0.11 terms they came out 3–10 % low; with their own, within 3 %.
    v019 = [e for e in ENTRIES if e["vllm_version"] == "0.19.0"]
    assert len(v019) == 5
    for e in v019:
        p = predict(e)
        assert abs(p.kv_error) <= 0.03, (e["id"], p.kv_error)
