"""Which serving engine and version a plan targets, and what that version takes out of the KV budget.

A request names the engine (``serving.engine``: ``vllm`` on CUDA, ``vllm-ascend`` on Ascend; empty =
the platform's) and its version (``serving.vllm_version``; vLLM-Ascend's releases follow vLLM's
numbering).  Left unset, both are the launch recipe's (``engine/recipes.py``), so the page, the API
and ``manage.py plan`` default to the same version.  The request boundary refuses an engine the
server cannot run and a version outside :data:`SUPPORTED` (``configurator/io/requests.py``).

What a version subtracts before it sizes the KV cache (the terms of ``engine/memory.py``), read in
the engines' source:

* **Weights, peak activation, non-torch memory** — every supported version: vLLM
  ``vllm/v1/worker/gpu_worker.py`` ``determine_available_memory`` (``memory_profiling`` around
  ``profile_run``: ``non_kv_cache_memory = weights + torch_peak_increase + non_torch_increase``);
  vLLM-Ascend ``vllm_ascend/worker/worker.py`` ``determine_available_memory`` (releases/v0.23.0,
  releases/v0.26.0rc; before 0.18 ``worker_v1.py`` / ``worker.py`` subtracted the absolute torch
  peak plus every non-torch allocation, v0.11.0, releases/v0.13.0 — the same terms).
* **Sampler warm-up** — inside ``profile_run`` (``gpu_model_runner._dummy_sampler_run`` on the last
  PP stage) in every supported vLLM, its peak by version: the sort-based top-k/top-p to 0.15, the
  Triton kernel that masks in place from 0.16 (:data:`TRITON_SAMPLER_FROM`), FlashInfer's by default
  from 0.20 (:data:`FLASHINFER_SAMPLER_FROM`); vLLM-Ascend's computes the logits only (``memory.py``).
* **Communicator buffers (NCCL / HCCL)** — counted: vLLM-Ascend takes its memory snapshot before
  ``_init_worker_distributed_environment()`` (worker.py ``_init_device``, releases/v0.23.0 and
  v0.26.0rc), so HCCL's buffers fall in ``non_torch_increase``; vLLM's NCCL and all-reduce buffers
  show up in the profiled non-torch memory of public TP2 logs, by version (:data:`CUDA_RUNTIME_TERMS`:
  0.54 GiB against 0.13 GiB at TP1 in vLLM 0.11.0, 2.1 GiB against 0.25 GiB in vLLM 0.19.0,
  tests/data/vllm_startup_logs.yaml).
* **CUDA-graph pool** — vLLM before 0.19 captures graphs after the KV cache is sized
  (``compile_or_warm_up_model`` → ``capture_model``), so the pool is not subtracted; 0.19 and 0.20
  profile it only with ``VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1`` (vllm/envs.py, default "0");
  from 0.21 that profiling is on by default (vllm/envs.py: "Enabled by default as of v0.21.0") and
  ``determine_available_memory`` subtracts ``profile_cudagraph_memory()``.  vLLM-Ascend records its
  peak before graph capture and never subtracts the NPU graph pool (worker.py, releases/v0.23.0:
  "Record torch peak INSIDE the context and BEFORE graph capture"; releases/v0.26.0rc the same).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

VLLM = "vllm"
VLLM_ASCEND = "vllm-ascend"
ENGINES = (VLLM, VLLM_ASCEND)
ENGINE_LABELS = {VLLM: "vLLM", VLLM_ASCEND: "vLLM-Ascend"}

# The engine each software stack runs.
ENGINE_OF_STACK = {"cuda": VLLM, "ascend": VLLM_ASCEND}

# Versions whose memory accounting is read and encoded here (inclusive bounds, major.minor): vLLM from
# 0.10 (V1 worker with the sampler warm-up in profile_run; the oldest logs of the start-up set) to 0.29
# (0.27.1 is the newest the launch recipes name; a vLLM 0.29 start-up logs the same terms: "Actual usage
# is … for consumed memory (weights + non-torch), … for peak activation, and … for CUDAGraph memory",
# tests/data/vllm_startup_logs.yaml); vLLM-Ascend from 0.10 (v0.10.0rc1) to 0.27: its accounting is
# the same in every release read (v0.10.0rc1 … releases/v0.26.0rc), and plans stored before the version
# was chosen name 0.27.1 (vLLM-Ascend pairs with the vLLM release of the same number).
SUPPORTED: dict[str, tuple[tuple[int, int], tuple[int, int]]] = {
    VLLM: ((0, 10), (0, 29)),
    VLLM_ASCEND: ((0, 10), (0, 27)),
}

# vLLM profiles the CUDA-graph pool by default from 0.21 (vllm/envs.py VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS).
GRAPHS_PROFILED_FROM = (0, 21)
GRAPHS_OPT_IN_FROM = (0, 19)
# What vLLM ≥ 0.21 subtracts for the graph pool is its own estimate, linear in the graphs it will capture:
# gpu_model_runner.profile_cudagraph_memory captures the first two descriptors of each cudagraph mode and
# charges the first capture plus the second's growth × the mode's further descriptors
# (``per_graph_estimate[mode] = per_graph * (len(descs) - 1)``, quoted in vllm-project/vllm#45178).  The
# growth per descriptor is read from public start-up logs that print "Profiling CUDA graph memory:
# PIECEWISE=n, FULL=m" (or the 0.19 "CUDA graph pool memory: … (estimated)") with the estimate:
#   0.19–0.25: it grows with the layers a graph holds (a PIECEWISE graph is one piece per layer):
#     0.53 GiB for 51 + 35 descriptors of Qwen2.5-VL-7B's 28 layers on vLLM 0.23.0 (0.225 MiB per layer
#     and descriptor), 0.84 GiB for 51 + 51 of Llama-3.1-8B's 32 (0.26) and 1.82 GiB for 51 + 51 of
#     Llama-3.3-70B's 80 at TP2 (0.23) on vLLM 0.19 (llm-d-planner logs, tests/data/vllm_startup_logs.yaml)
#     → 0.24 MiB per layer and descriptor.
#   from 0.26: a profiling transient charged to every descriptor dominates (vllm-project/vllm#50780,
#     "since v0.26.0") and the layers no longer show: 1.56 GiB for 51 + 35 descriptors of a 64-layer
#     model (Qwen3.8-27B) and 0.36 GiB for 16 PIECEWISE descriptors (gpustack/runner#251), both on
#     vLLM 0.27.1 → 20 MiB per descriptor.
# The same 28-layer Qwen2.5-7B language model is estimated at 0.53 GiB on 0.23.0 and loses 1.76 GiB of KV
# cache to graph mode on 0.27.1 (the L4 pair of the start-up set, not used for these figures).
GRAPH_BYTES_PER_LAYER_DESCRIPTOR = int(0.24 * 2**20)  # vLLM 0.21–0.25
GRAPH_BYTES_PER_DESCRIPTOR = 20 * 2**20  # vLLM ≥ 0.26
GRAPH_TRANSIENT_FROM = (0, 26)
GRAPH_DESCRIPTOR_SOURCE = (
    "vLLM gpu_model_runner.profile_cudagraph_memory: first capture + growth × further descriptors "
    "(vllm-project/vllm#45178); growth from public start-up logs: 0.24 MiB per layer and descriptor on "
    "0.21–0.25 (0.53 GiB for 86 descriptors × 28 layers on 0.23.0), 20 MiB per descriptor from 0.26 "
    "(1.56 GiB for 86 and 0.36 GiB for 16 on 0.27.1; vllm-project/vllm#50780)"
)


def graph_bytes_per_descriptor(version: str, layers: int) -> int:
    """Bytes vLLM's graph-memory estimate charges per captured descriptor at ``version`` for a rank
    holding ``layers`` decoder layers (0 before 0.21, when nothing is subtracted)."""
    v = parse_version(version) or SUPPORTED[VLLM][1]
    if v >= GRAPH_TRANSIENT_FROM:
        return GRAPH_BYTES_PER_DESCRIPTOR
    if v >= GRAPHS_PROFILED_FROM:
        return GRAPH_BYTES_PER_LAYER_DESCRIPTOR * max(layers, 1)
    return 0


def cudagraph_capture_sizes(max_num_seqs: int, max_num_batched_tokens: int) -> list[int]:
    """vLLM's default capture sizes (vllm/config/vllm.py ``_set_cudagraph_sizes``): up to
    min(max_num_seqs × 2, 512, max_num_batched_tokens), the list [1, 2, 4] + range(8, 256, 8) +
    range(256, max + 1, 16) cut at that maximum (one token per sequence a step: the scripts start no
    speculative decoding)."""
    top = min(max(max_num_seqs, 1) * 2, 512)
    if max_num_batched_tokens > 0:
        top = min(top, max_num_batched_tokens)
    sizes = [1, 2, 4, *range(8, 256, 8), *range(256, top + 1, 16)]
    return [s for s in sizes if s <= top]


def graph_descriptors(max_num_seqs: int, max_num_batched_tokens: int, mode: str) -> tuple[int, int]:
    """(PIECEWISE, FULL) descriptors vLLM captures: every capture size piecewise, and under
    FULL_AND_PIECEWISE (``mode`` "full", the default) the uniform-decode sizes up to max_num_seqs again
    as FULL graphs (vllm/v1/worker/gpu/cudagraph_utils.py ``get_cudagraph_sizes``)."""
    sizes = cudagraph_capture_sizes(max_num_seqs, max_num_batched_tokens)
    full = sum(1 for s in sizes if s <= max(max_num_seqs, 1)) if mode == "full" else 0
    return len(sizes), full


# The sampler warm-up of profile_run sorts the logits (PyTorch-native top-k/top-p) unless FlashInfer's
# sampling kernels run: vllm-project/vllm PR #26859 "Disable FlashInfer sampler by default" (2025-10),
# PR #40376 "[Perf] Enable FlashInfer top-k/top-p sampler by default" (merged after 0.19.1; vllm/envs.py
# VLLM_USE_FLASHINFER_SAMPLER "Enabled by default when the hardware supports it").  0.10 logs print
# "Using FlashInfer for top-p & top-k sampling" only where flashinfer was installed: read as off.
FLASHINFER_SAMPLER_FROM = (0, 20)
# Without FlashInfer, vLLM masks top-k/top-p with its Triton kernel instead of a full-vocabulary sort:
# vllm/v1/sample/ops/topk_topp_sampler.py ``apply_top_k_top_p`` → ``apply_top_k_top_p_triton`` whenever
# Triton is present (vllm-project/vllm PR #33538 "[Kernel] Triton-based Top-k and Top-p sampler kernels",
# opened 2026-02-02, merged after the 0.15 release branch).  The kernel masks the FP32 logits in place
# ("logits ... modified in-place", topk_topp_triton.py) with a [min(SMs, batch), vocab] scratch buffer
# (≈ 80 MiB, the PR's own figure), so nothing of the sort path's 24 B per entry is held.  Taken from 0.16,
# the first release after the merge; the five vLLM 0.19.0 start-ups of the set confirm it (peak activation
# 1.89 GiB for Llama-3.1-8B at 1,024 × 128,256 entries = 15.5 B per entry, 3.65 GiB for gemma-2-9b at
# 1,024 × 256,000 = 15.0 B; the sort path would hold 38 B, tests/data/vllm_startup_logs.yaml).
TRITON_SAMPLER_FROM = (0, 16)


@dataclass(frozen=True)
class RuntimeTerms:
    """Memory outside PyTorch's allocator that vLLM's profile counts in ``non_torch_increase``."""

    since: tuple[int, int]
    base_gib: float  # a rank with no communicator: CUDA context growth, cuBLAS workspaces
    per_communicator_gib: float  # each NCCL group of more than one rank: channels, all-reduce buffers
    source: str


# Read from the start-ups' own lines ("Actual usage is … GiB for non-torch memory"; llm-d's profile
# figures), per version: vLLM's gpu_worker.determine_available_memory takes the non-torch growth across
# profile_run (vllm/utils/mem_utils.py memory_profiling: non_torch_increase), so every communicator
# buffer allocated by then is in it, whatever allocates it.  What grew between 0.11 and 0.19 at TP2 on
# the same H100 and the same Llama-3.3-70B FP8 (0.55 → 2.1 GiB) is not traced to one allocation in
# vLLM's source (the all-reduce paths changed between them: PyTorch symmetric-memory all-reduce and
# FlashInfer's fused all-reduce workspaces); it is the measured growth, not a derived one.  Versions
# between two rows take the older row; versions after the newest row take the newest.
CUDA_RUNTIME_TERMS: tuple[RuntimeTerms, ...] = (
    RuntimeTerms(
        (0, 10),
        0.13,
        0.42,
        "vLLM 0.10–0.11 start-ups: 0.13 GiB non-torch at TP1 (four H100 logs), 0.54–0.55 GiB at TP2 "
        "(Qwen3-32B, Llama-3.3-70B FP8 on H100)",
    ),
    RuntimeTerms(
        (0, 19),
        0.25,
        1.84,
        "vLLM 0.19.0 start-ups on H100: 0.25 GiB non-torch at TP1 (three logs), 2.1 and 2.07 GiB at TP2 "
        "(Llama-3.3-70B FP8, gpt-oss-20b)",
    ),
)

_VERSION = re.compile(r"^v?(\d{1,3})\.(\d{1,3})(?:\.(\d{1,4}))?(?:\.post\d{1,3}|rc\d{1,3}|\.\d{1,3})?$")


def parse_version(text: str) -> tuple[int, int] | None:
    """``"0.11.0"``, ``"0.10.1.1"``, ``"v0.26.0rc1"``, ``"0.23"`` → (major, minor); None when malformed."""
    m = _VERSION.match(str(text).strip())
    if not m:
        return None
    return int(m.group(1)), int(m.group(2))


def engine_for(stack: str, named: str = "") -> str:
    """The engine a plan targets: the one named, else the platform's."""
    return named or ENGINE_OF_STACK.get(stack, VLLM)


def _fmt(v: tuple[int, int]) -> str:
    return f"{v[0]}.{v[1]}"


def engine_error(named: str, stack: str, server_name: str = "") -> str | None:
    """Why ``named`` cannot serve on this platform (None when it can)."""
    if not named:
        return None
    if named not in ENGINES:
        return f"must be one of: {', '.join(ENGINES)} (or empty for the platform's engine)."
    expected = ENGINE_OF_STACK.get(stack, VLLM)
    if named != expected:
        where = f" on {server_name}" if server_name else ""
        return (
            f"{ENGINE_LABELS[named]} does not run{where}: its accelerators need "
            f"{ENGINE_LABELS[expected]} ({expected})."
        )
    return None


def version_error(engine: str, text: str) -> str | None:
    """Why ``text`` is not a version of ``engine`` whose memory accounting is known (None when it is)."""
    low, high = SUPPORTED[engine]
    v = parse_version(text)
    if v is None:
        return f"must be a version such as {_fmt(high)}.0 (digits and dots; rc/post suffixes allowed)."
    if not low <= v <= high:
        return (
            f"{ENGINE_LABELS[engine]} {text} is outside the versions whose memory accounting this tool "
            f"follows ({_fmt(low)} to {_fmt(high)}.x)."
        )
    return None


def flashinfer_sampler_default(stack: str, engine: str, version: str) -> bool:
    """Whether the targeted vLLM runs FlashInfer's top-k/top-p sampler unless told otherwise."""
    engine = engine_for(stack, engine)
    if engine != VLLM:
        return False
    v = parse_version(version) or SUPPORTED[VLLM][1]
    return v >= FLASHINFER_SAMPLER_FROM


def triton_sampler_default(stack: str, engine: str, version: str) -> bool:
    """Whether the targeted vLLM masks top-k/top-p with its Triton kernel when FlashInfer's sampler is off."""
    if engine_for(stack, engine) != VLLM:
        return False
    v = parse_version(version) or SUPPORTED[VLLM][1]
    return v >= TRITON_SAMPLER_FROM


def runtime_terms(version: str) -> RuntimeTerms:
    """The non-torch terms of the targeted vLLM (an unparseable version reads as the newest supported)."""
    v = parse_version(version) or SUPPORTED[VLLM][1]
    chosen = CUDA_RUNTIME_TERMS[0]
    for row in CUDA_RUNTIME_TERMS:
        if v >= row.since:
            chosen = row
    return chosen


@dataclass(frozen=True)
class BudgetRules:
    """What one engine version takes out of the KV budget besides weights, activations and buffers."""

    engine: str
    version: tuple[int, int]
    graphs_subtracted: bool  # the graph pool is profiled and subtracted before the KV cache is sized
    graphs_source: str
    comm_source: str


def budget_rules(stack: str, engine: str, version: str) -> BudgetRules:
    """The rules of ``engine`` at ``version`` (an unparseable version reads as the newest supported)."""
    engine = engine_for(stack, engine)
    v = parse_version(version) or SUPPORTED.get(engine, SUPPORTED[VLLM])[1]
    if engine == VLLM_ASCEND:
        return BudgetRules(
            engine,
            v,
            False,
            "vllm-ascend vllm_ascend/worker/worker.py determine_available_memory: peak recorded before graph "
            "capture, NPU graph pool not subtracted (releases/v0.23.0, v0.26.0rc)",
            "vllm-ascend worker.py _init_device: memory snapshot before _init_worker_distributed_environment "
            "(HCCL buffers counted)",
        )
    if v >= GRAPHS_PROFILED_FROM:
        graphs = (
            "vLLM ≥ 0.21: VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS on by default (vllm/envs.py); "
            "gpu_worker.determine_available_memory subtracts profile_cudagraph_memory()"
        )
    elif v >= GRAPHS_OPT_IN_FROM:
        graphs = (
            "vLLM 0.19–0.20: CUDA-graph memory profiled only with VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1 "
            "(vllm/envs.py default 0): not subtracted"
        )
    else:
        graphs = (
            "vLLM before 0.19: CUDA graphs captured after the KV cache is sized "
            "(gpu_worker.compile_or_warm_up_model → capture_model): not subtracted"
        )
    return BudgetRules(
        engine,
        v,
        v >= GRAPHS_PROFILED_FROM,
        graphs,
        "vLLM gpu_worker.determine_available_memory: NCCL buffers allocated during profile_run fall in "
        "non_torch_increase",
    )


__all__ = [
    "ENGINES",
    "ENGINE_LABELS",
    "SUPPORTED",
    "BudgetRules",
    "CUDA_RUNTIME_TERMS",
    "RuntimeTerms",
    "budget_rules",
    "engine_error",
    "engine_for",
    "flashinfer_sampler_default",
    "parse_version",
    "runtime_terms",
    "triton_sampler_default",
    "version_error",
]


# --------------------------------------------------------------------------- sparse-attention KV (DSA)

#: vLLM-Ascend from this release caches a DSA layer as one MLA spec of kv_lora_rank + qk_rope_head_dim +
#: index_head_dim values (releases v0.15.0rc1 ``model_runner_v1.py`` ``_get_sparse_kv_cache_ratio``);
#: before it, as a FullAttentionSpec of the MLA head (kv_lora_rank + qk_rope_head_dim), whose K + V page is
#: twice the latent — "FullAttentionSpec allocate 2 * mla page size bytes, and we use half of that for k
#: cache in DSA" (releases/v0.13.0 ``model_runner_v1.py``).
DSA_ASCEND_SPEC_FROM = (0, 15)
#: vLLM's fp8 KV format for DeepSeek sparse attention: 512 quantized latent values + 16 bytes of scales +
#: 64 BF16 rope values per token (vllm/model_executor/models/config.py
#: ``DeepseekV32ForCausalLM.verify_and_update_config``: an fp8 cache dtype becomes "fp8_ds_mla").
FP8_DS_MLA_BYTES = 656
#: The lightning indexer's key per token (vllm/model_executor/models/deepseek_v2.py: the indexer cache's
#: head_dim = index_head_dim + index_head_dim // quant_block_size × 4, uint8: FP8 values and one FP32 scale
#: per 128 of them; ``DeepseekV32IndexerCache.get_kv_cache_spec``).
INDEXER_QUANT_BLOCK = 128


@dataclass(frozen=True)
class DsaLayerBytes:
    """KV bytes one DSA (MLA + indexer) layer stores per token on one rank, and the rule that sets them."""

    latent: int  # the MLA latent and rope key
    indexer: int  # the indexer's key (and scales)
    rule: str  # where the layout is read from, for the figure's source

    @property
    def total(self) -> int:
        return self.latent + self.indexer


def dsa_layer_bytes(
    engine: str, version: str, kv_lora_rank: int, rope_dim: int, index_head_dim: int, dtype_bytes: int
) -> DsaLayerBytes:
    """Per-token KV of one DeepSeek-sparse-attention layer as the targeted engine allocates it.

    vLLM: the MLA latent (``fp8_ds_mla`` 656 B when the cache is FP8, else (kv_lora_rank + rope) × 2)
    plus the indexer key (index_head_dim + index_head_dim ÷ 128 × 4 B).  vLLM-Ascend ≥ 0.15: one spec of
    (kv_lora_rank + rope + index_head_dim) × dtype; before 0.15: twice the latent.  GLM-5 (512 + 64,
    indexer 128): vLLM BF16 1,152 + 132 = 1,284 B, FP8 656 + 132 = 788 B; vLLM-Ascend 1,408 B (2,304 B
    before 0.15).
    """
    latent = (kv_lora_rank + rope_dim) * dtype_bytes
    if engine == VLLM_ASCEND:
        v = parse_version(version) or SUPPORTED[VLLM_ASCEND][1]
        if v >= DSA_ASCEND_SPEC_FROM:
            return DsaLayerBytes(
                latent,
                index_head_dim * dtype_bytes,
                "vLLM-Ascend ≥ 0.15 model_runner_v1.py _get_sparse_kv_cache_ratio: one MLA spec of "
                "kv_lora_rank + qk_rope_head_dim + index_head_dim values",
            )
        return DsaLayerBytes(
            latent,
            latent,
            "vLLM-Ascend < 0.15 model_runner_v1.py: a FullAttentionSpec of the latent head, half of its "
            "K + V page for the indexer key",
        )
    if dtype_bytes == 1:
        latent = FP8_DS_MLA_BYTES
    indexer = index_head_dim + index_head_dim // INDEXER_QUANT_BLOCK * 4
    return DsaLayerBytes(
        latent,
        indexer,
        "vLLM deepseek_v2.py DeepseekV32IndexerCache (index_head_dim + index_head_dim ÷ 128 × 4 B); "
        "models/config.py DeepseekV32ForCausalLM: an FP8 cache is fp8_ds_mla, 656 B",
    )
