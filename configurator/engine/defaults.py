"""One source of serving defaults and of the platform rules vLLM and vLLM-Ascend enforce.

Read by the JSON API (``ServingSpec()``), the configurator form (its initial
values), the auto-planner and the ``manage.py`` CLI, so that the same request
with no serving fields gives the same plan everywhere.  Pure Python.

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

from .types import KvCacheDtype, ServingSpec
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

#: The serving parameters every entry point starts from (ServingSpec's own defaults).
SERVING_DEFAULTS = ServingSpec()

#: The ranges a request may give each serving field (the API's 400s and the form's bounds).
SERVING_RANGES: dict[str, tuple[float, float]] = {
    "gpu_memory_utilization": (0.05, 0.99),
    "max_model_len": (1, 16_777_216),
    "max_num_seqs": (1, 65_536),
    "max_num_batched_tokens": (1, 4_194_304),
    "comm_buffer_mb": (0, 65_536),
    "comm_buffer_groups": (0, 64),
    "graph_memory_bytes": (0, 10**13),
    "activation_bytes": (0, 10**13),
    "non_torch_bytes": (0, 10**13),
    "block_size": (0, 4096),  # 0: the platform default
}

#: HCCL_BUFFSIZE (MB) the planner proposes on Ascend for large MoE models: the K3 tutorial's value.
PLANNER_HCCL_BUFFSIZE_MB = 800


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
    "VALID_BLOCK_SIZES",
    "KvCacheDtype",
    "block_size_for",
    "kv_dtype",
    "kv_dtype_supported",
    "resolve_serving",
    "stack_of",
]
