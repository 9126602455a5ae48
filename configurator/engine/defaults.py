"""One source of serving defaults and of the platform rules vLLM and vLLM-Ascend enforce.

:func:`serving_defaults` is the one function that fills the serving fields a request leaves unset.
The JSON API and ``manage.py plan`` (through the request boundary, ``configurator/io/requests.py``),
the configurator page (its serving fields left blank are left out of the request it posts) and the
auto-planner (``planner/build.py``: every field it does not search) all call it, so that the same
request with no serving fields plans the same deployment everywhere.  The order, per field:

1. the value the request gives;
2. the launch recipe's published value for that model family on that hardware
   (``recipes.py``: ``Recipe.defaults``, e.g. the vLLM recipe for Kimi K3 on H200 runs
   ``--max-model-len 32768 --max-num-seqs 5 --gpu-memory-utilization 0.97``), and the engine
   version the recipe was validated with;
3. :data:`SERVING_DEFAULTS` (``ServingSpec``'s own values, below);

and a context length the model supports: vLLM refuses ``--max-model-len`` above the model's own
limit, so an unset context is clamped to the model's ``max_context``.  Pure Python.

Platform rules (each with its public source):

* KV-cache dtypes: vLLM on CUDA accepts ``auto``, ``bfloat16``, ``fp8``,
  ``fp8_e4m3``, ``fp8_e5m2`` (vLLM ``vllm/config/cache.py`` ``CacheDType``);
  vLLM-Ascend on Atlas A2/A3 does not support an FP8 KV cache (vllm-ascend
  issue #8102, "FP8 is not support in A3"), so only the model dtype (``auto``
  / ``bfloat16``) is offered there.
* ``block_size``: vLLM's CUDA default is 16 tokens (``CacheConfig.block_size``
  is set per platform in ``vllm/platforms/cuda.py``
  ``check_and_update_config``); vLLM-Ascend uses 128
  (``vllm_ascend/utils.py`` ``refresh_block_size``, called from
  ``vllm_ascend/platform.py`` ``check_and_update_config``, branch
  ``releases/v0.26.0rc``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

from .types import KvCacheDtype, ModelSpec, ServerSpec, ServingSpec, SpeculatorSpec, TopologyKind
from .vocabulary import PLATFORMS

# --------------------------------------------------------------------------- KV-cache dtype


def kv_dtype(value: str | KvCacheDtype) -> KvCacheDtype:
    """The enum member for ``value``; ValueError names the allowed values."""
    try:
        return KvCacheDtype(str(value).lower())
    except ValueError:
        allowed = ", ".join(m.value for m in KvCacheDtype)
        raise ValueError(f"unknown KV-cache dtype {value!r}; one of: {allowed}") from None


# --------------------------------------------------------------------------- platforms

CUDA = "cuda"
ASCEND = "ascend"

#: KV-cache dtypes each software stack can run.
SUPPORTED_KV_DTYPES: dict[str, tuple[KvCacheDtype, ...]] = {
    CUDA: tuple(KvCacheDtype),
    ASCEND: (KvCacheDtype.AUTO, KvCacheDtype.BFLOAT16, KvCacheDtype.BF16),
}
KV_DTYPE_SOURCE = {
    CUDA: "vLLM vllm/config/cache.py CacheDType",
    ASCEND: "vllm-ascend issue #8102 (FP8 KV cache not supported on Atlas A2/A3)",
}

#: vLLM's default paged-attention block, in tokens, per software stack.
DEFAULT_BLOCK_SIZE = {CUDA: 16, ASCEND: 128}
#: Block sizes offered: vLLM's --block-size choices on CUDA; on Ascend powers of two from 32
#: (the INT8 KV path asserts a multiple of 32, vllm_ascend/attention/attention_v1.py; 128 is the
#: default and the one vllm_ascend/ascend_config.py recommends).
VALID_BLOCK_SIZES = {CUDA: (1, 8, 16, 32, 64, 128, 256), ASCEND: (32, 64, 128, 256, 512)}
BLOCK_SIZE_SOURCE = {
    CUDA: "vLLM vllm/platforms/cuda.py check_and_update_config (default 16); vllm/config/cache.py BlockSize",
    ASCEND: "vllm-ascend vllm_ascend/utils.py refresh_block_size (128), attention_v1.py, branch releases/v0.26.0rc",
}


def platform_labels(stacks: Iterable[str], lang: str = "en") -> str:
    i = 0 if lang == "en" else 1
    sep = ", " if lang == "en" else "、"
    words = []
    for stack in stacks:
        term = PLATFORMS.get(stack)
        words.append((term.en, term.zh)[i] if term else stack)
    return sep.join(words)


def stack_of(software_stack: str) -> str:
    return ASCEND if software_stack == ASCEND else CUDA


def kv_dtype_supported(software_stack: str, value: str | KvCacheDtype) -> bool:
    try:
        member = kv_dtype(value)
    except ValueError:
        return False
    return member in SUPPORTED_KV_DTYPES[stack_of(software_stack)]


def block_size_for(serving: ServingSpec, software_stack: str) -> int:
    """The block size vLLM uses: the request's, or the platform default when 0."""
    return serving.block_size if serving.block_size > 0 else DEFAULT_BLOCK_SIZE[stack_of(software_stack)]


# --------------------------------------------------------------------------- serving defaults

#: The serving parameters no recipe sets (ServingSpec's own values).  Against vLLM's own defaults
#: (vllm/engine/arg_utils.py, vllm/config/cache.py, v0.27.1):
#:
#: * ``gpu_memory_utilization`` 0.9: vLLM's default (``CacheConfig.gpu_memory_utilization``).
#: * ``max_model_len`` 131,072, clamped to the model's limit: vLLM's default is the model's own
#:   ``max_position_embeddings``; a 128K ceiling keeps the KV budget of a 1M-context model meaningful.
#: * ``max_num_seqs`` 16 and ``max_num_batched_tokens`` 8,192: the Kimi K3 vLLM-Ascend tutorial's
#:   batch (docs/domain.md §5); vLLM's own defaults for the OpenAI server (256-1,024 sequences,
#:   ``EngineArgs._set_default_args``) are throughput settings the design point replaces anyway.
#: * ``comm_buffer_mb`` 800: HCCL_BUFFSIZE of the K3 tutorial (CANN's default is 200); unused on CUDA.
#: * prefix caching on: vLLM V1's default.
SERVING_DEFAULTS = ServingSpec()
# serving.max_num_seqs left to the plan: sized to what the KV cache holds (engine/memory.py size_admission AUTO).
AUTO_MAX_NUM_SEQS = 0

#: The serving fields a launch recipe may set (``recipes.ServingDefaults``).
RECIPE_FIELDS = (
    "max_model_len",
    "max_num_seqs",
    "max_num_batched_tokens",
    "gpu_memory_utilization",
    "comm_buffer_mb",
    "enable_prefix_caching",
)

#: The ranges a request may give each serving field (the API's 400s and the form's bounds).
SERVING_RANGES: dict[str, tuple[float, float]] = {
    "gpu_memory_utilization": (0.05, 0.99),
    "max_model_len": (1, 16_777_216),
    "max_num_seqs": (0, 65_536),  # 0: sized to the KV cache (AUTO_MAX_NUM_SEQS)
    "max_num_batched_tokens": (1, 4_194_304),
    "comm_buffer_mb": (0, 65_536),
    "comm_buffer_groups": (0, 64),
    "graph_memory_bytes": (0, 10**13),
    "activation_bytes": (0, 10**13),
    "non_torch_bytes": (0, 10**13),
    "block_size": (0, 4096),  # 0: the platform default
}


def serving_defaults(
    model: ModelSpec,
    server: ServerSpec,
    kind: TopologyKind,
    serving: ServingSpec = SERVING_DEFAULTS,
    given: Iterable[str] = (),
    needs_vision: bool = False,
    speculators: tuple[SpeculatorSpec, ...] = (),
) -> ServingSpec:
    """The serving settings for ``model`` on ``server`` in a ``kind`` topology: ``serving``'s values for
    the fields named in ``given`` (what the request states), the launch recipe's published values for
    the others where it has them, else :data:`SERVING_DEFAULTS`; an unset context clamped to the model;
    a vision model on a server validated for text only served as validated (``--language-model-only``)
    unless the workload reads images; speculative decoding with the first of the model's catalog drafts
    (``speculators``) the platform runs, the engine version raised to that draft's first release when the
    recipe's predates it and the request names none (engine/speculative.py).  A value the request gave
    is left for the checks to judge.

    ``max_num_seqs`` a request leaves unset is :data:`AUTO_MAX_NUM_SEQS`: a recipe publishes one example
    batch (the Kimi K3 Hopper profile runs 5, the Atlas A3 tutorial 16), an operator runs what the KV
    cache holds; plan() sizes it (engine/memory.py size_admission) and the memory checks judge that value.
    The one serving-defaults path."""
    from .recipes import recipe_for  # recipes.py imports types only; defaults are read at call time

    stated = set(given)
    recipe = recipe_for(model, server, kind)
    # Each value is read from the recipe's defaults under the ServingSpec field of the same name, so it has
    # that field's type; the mapping mixes int, float and bool, which only Any can say to ``replace``.
    changes: dict[str, Any] = {}
    for name in RECIPE_FIELDS:
        if name in stated:
            continue
        value = getattr(recipe.defaults, name)
        changes[name] = getattr(SERVING_DEFAULTS, name) if value is None else value
    # The engine version the recipe was validated with (vLLM-Ascend's on Ascend): the plan's memory budget
    # follows what that version subtracts (engine/engine_versions.py) unless the request names another.
    if "vllm_version" not in stated:
        changes["vllm_version"] = recipe.vllm_ascend or recipe.vllm
    if "max_num_seqs" not in stated:
        # Not the recipe's example batch: what the KV cache holds at the workload's lengths, resolved
        # once the layout is known (engine/memory.py size_admission).
        changes["max_num_seqs"] = AUTO_MAX_NUM_SEQS
    if "max_model_len" not in stated and model.max_context > 0:
        changes["max_model_len"] = min(int(changes["max_model_len"]), model.max_context)
    if "language_model_only" not in stated:
        text_only = server.validated_text_only or server.slug in model.text_only_servers
        changes["language_model_only"] = bool(text_only and model.has_vision and not needs_vision)
    out = dataclasses.replace(serving, **changes)
    if "speculative" not in stated and speculators:
        out = _speculative_default(out, server, speculators, version_stated="vllm_version" in stated)
    elif "vllm_version" not in stated and out.speculative.on and out.speculative.draft:
        out = _version_for_draft(out, server, speculators)
    return out


def _version_for_draft(
    serving: ServingSpec, server: ServerSpec, speculators: tuple[SpeculatorSpec, ...]
) -> ServingSpec:
    """A stated catalog draft with no stated engine version: the recipe's version raised to the draft's
    first release when it predates it (as the default draft's is), so the setting is not refused for a
    version the request never chose."""
    from .engine_versions import engine_for, parse_version, version_error
    from .speculative import engine_name

    draft = next((s for s in speculators if s.slug == serving.speculative.draft), None)
    stack = server.accelerator.software_stack
    first = draft.min_versions.get(engine_name(stack, serving.engine)) if draft else None
    have, need = parse_version(serving.vllm_version), parse_version(first or "")
    if (
        first
        and have
        and need
        and have < need
        and version_error(engine_for(stack, serving.engine), first) is None
    ):
        return dataclasses.replace(serving, vllm_version=first)
    return serving


def _speculative_default(
    serving: ServingSpec, server: ServerSpec, speculators: tuple[SpeculatorSpec, ...], *, version_stated: bool
) -> ServingSpec:
    """Speculative decoding on with the first catalog draft the platform and engine version run; when
    the recipe's version predates every draft and the request named none, the draft's first release."""
    from .engine_versions import engine_for, version_error
    from .speculative import default_speculative, engine_name, platform_reason

    stack, generation = server.accelerator.software_stack, server.accelerator.generation
    drafts = tuple(s for s in speculators if not platform_reason(s, stack, generation))
    spec = default_speculative(drafts, stack, serving.engine, serving.vllm_version, generation)
    if not spec.on and drafts and not version_stated:
        first = drafts[0].min_versions.get(engine_name(stack, serving.engine))
        if first and version_error(engine_for(stack, serving.engine), first) is None:
            serving = dataclasses.replace(serving, vllm_version=first)
            spec = default_speculative(drafts, stack, serving.engine, serving.vllm_version, generation)
    return dataclasses.replace(serving, speculative=spec) if spec.on else serving


def batch_cap(max_num_batched_tokens: int, draft_tokens: int) -> int:
    """Sequences one scheduler step can decode: ``max_num_batched_tokens ÷ (1 + k)``.  vLLM v1 schedules
    running requests first, each taking ``1 + num_spec_tokens`` tokens of the step's budget
    (``vllm/v1/core/sched/scheduler.py`` ``Scheduler.schedule``; performance/design.py)."""
    return max(1, max_num_batched_tokens // (1 + max(0, draft_tokens)))


def resolve_serving(serving: ServingSpec, software_stack: str) -> ServingSpec:
    """Fill the platform-dependent defaults (``block_size`` 0 → 16 on CUDA, 128 on Ascend)."""
    block = block_size_for(serving, software_stack)
    if block == serving.block_size:
        return serving
    return dataclasses.replace(serving, block_size=block)


__all__ = [
    "ASCEND",
    "BLOCK_SIZE_SOURCE",
    "CUDA",
    "DEFAULT_BLOCK_SIZE",
    "KV_DTYPE_SOURCE",
    "SERVING_DEFAULTS",
    "SERVING_RANGES",
    "SUPPORTED_KV_DTYPES",
    "RECIPE_FIELDS",
    "VALID_BLOCK_SIZES",
    "KvCacheDtype",
    "batch_cap",
    "block_size_for",
    "kv_dtype",
    "kv_dtype_supported",
    "resolve_serving",
    "serving_defaults",
    "stack_of",
]
