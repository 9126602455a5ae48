"""Where each parameter group of a checkpoint lives, per platform: split by TP, by EP, or replicated.

The default is vLLM's usual placement: routed experts split by EP (or TP when
expert parallelism is off), everything else split by TP, the vision tower
replicated.  A few parameter groups are built as ``ReplicatedLinear`` (or
``disable_tp=True``) and so sit whole on every rank; which ones depends on the
platform's model code.  Those rules are data here, each with the source file
it was read from:

vLLM-Ascend, Kimi K3 (``vllm_ascend/models/kimi_k3.py``, branch
``releases/v0.26.0rc``):

* ``router``: ``KimiK3MoE.gate = ReplicatedLinear(hidden, num_experts,
  quant_config=None)`` → replicated, BF16 whatever the checkpoint;
* ``latent_moe``: ``routed_expert_down_proj`` / ``routed_expert_up_proj``
  (7168 ↔ 3584) are ``ReplicatedLinear`` with
  ``_routed_latent_quant_config(quant_config)``, which quantises them only for
  a ModelSlim checkpoint (``quant_config.get_name() == "ascend"``) → replicated,
  BF16 unless ModelSlim (then as stored);
* ``mla_a``: ``fused_qkv_a_proj = DeepSeekV2FusedQkvAProjLinear`` (vLLM
  ``vllm/model_executor/models/deepseek_v2.py``: ``MergedColumnParallelLinear``
  with ``disable_tp=True``) → replicated, as stored;
* ``kda_f_a``: the KDA forget-gate ``f_a_proj = ReplicatedLinear(hidden,
  head_dim)`` (vLLM ``KimiGatedDeltaNetAttention``, used by
  ``vllm_ascend/ops/kimi_kda.py``) → replicated, as stored.

vLLM on CUDA: the MLA ``fused_qkv_a_proj`` (``deepseek_v2.py``,
``disable_tp=True``) and the KDA ``f_a_proj`` stay replicated; the DeepSeek
MoE router (``DeepseekV2MoE.gate``, ``ReplicatedLinear(..., quant_config=None)``
in ``deepseek_v2.py``) is replicated.  For Kimi K3 on CUDA the router and the
latent projections are counted as split by TP (the issue's reading of vLLM's
K3 model, not re-read here: marked *assumed* in the figure).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .types import CheckpointSpec, PlanRequest, stored_init

REPLICATED = "replicated"
TP = "tp"

# How a group is held in memory: always BF16, as stored in the checkpoint, or
# BF16 unless the checkpoint is a ModelSlim conversion (quant_method "ascend").
BF16 = "bf16"
AS_STORED = "as_stored"
BF16_UNLESS_MODELSLIM = "bf16_unless_modelslim"

#: Bytes per element of the stored formats (MXFP4: 4 bits + one E8M0 scale per 32 elements).
FORMAT_BYTES = {
    "bf16": 2.0,
    "fp16": 2.0,
    "fp32": 4.0,
    "fp8": 1.0,
    "int8": 1.0,
    "w8a8": 1.0,
    "mxfp8": 1.0 + 1 / 32,
    "mxfp4": 0.5 + 1 / 32,
    "int4": 0.5,
    "w4a8": 0.5,
    "nvfp4": 0.5 + 1 / 16,
}

VLLM_ASCEND_K3 = "vllm-ascend vllm_ascend/models/kimi_k3.py (branch releases/v0.26.0rc)"
VLLM_DEEPSEEK_V2 = (
    "vLLM vllm/model_executor/models/deepseek_v2.py DeepSeekV2FusedQkvAProjLinear (disable_tp=True)"
)
VLLM_KDA = "vLLM KimiGatedDeltaNetAttention f_a_proj = ReplicatedLinear(hidden, head_dim)"


#: Every parameter group a rule may name (the replicated-weights figure names each of them).
REPLICABLE_GROUPS = ("router", "latent_moe", "mla_a", "kda_f_a")


@dataclass(frozen=True)
class GroupRule:
    group: str  # one of REPLICABLE_GROUPS
    placement: str  # REPLICATED | TP
    dtype: str  # BF16 | AS_STORED | BF16_UNLESS_MODELSLIM
    source: str
    assumed: bool = False

    def __post_init__(self) -> None:
        if self.group not in REPLICABLE_GROUPS:
            raise ValueError(f"parameter group {self.group!r} is not one of {REPLICABLE_GROUPS}")


_K3_ASCEND = (
    GroupRule(
        "router", REPLICATED, BF16, f"{VLLM_ASCEND_K3}: KimiK3MoE.gate ReplicatedLinear, quant_config=None"
    ),
    GroupRule(
        "latent_moe",
        REPLICATED,
        BF16_UNLESS_MODELSLIM,
        f"{VLLM_ASCEND_K3}: routed_expert_down_proj / routed_expert_up_proj ReplicatedLinear, "
        "_routed_latent_quant_config",
    ),
    GroupRule("mla_a", REPLICATED, AS_STORED, f"{VLLM_ASCEND_K3}: fused_qkv_a_proj; {VLLM_DEEPSEEK_V2}"),
    GroupRule("kda_f_a", REPLICATED, AS_STORED, f"vllm_ascend/ops/kimi_kda.py; {VLLM_KDA}"),
)
_K3_CUDA = (
    GroupRule("router", TP, AS_STORED, "issue 14's reading of vLLM's Kimi K3 model", assumed=True),
    GroupRule("latent_moe", TP, AS_STORED, "issue 14's reading of vLLM's Kimi K3 model", assumed=True),
    GroupRule("mla_a", REPLICATED, AS_STORED, VLLM_DEEPSEEK_V2),
    GroupRule("kda_f_a", REPLICATED, AS_STORED, VLLM_KDA),
)
_DEEPSEEK = (
    GroupRule(
        "router",
        REPLICATED,
        BF16,
        "vLLM deepseek_v2.py DeepseekV2MoE.gate ReplicatedLinear, quant_config=None",
    ),
    GroupRule("mla_a", REPLICATED, AS_STORED, VLLM_DEEPSEEK_V2),
)

#: (software stack, architecture) → rules.  Architectures not listed use the default placement.
RULES: dict[tuple[str, str], tuple[GroupRule, ...]] = {
    ("ascend", "kimi_k3"): _K3_ASCEND,
    ("cuda", "kimi_k3"): _K3_CUDA,
    ("ascend", "deepseek_v3"): _DEEPSEEK,
    ("cuda", "deepseek_v3"): _DEEPSEEK,
    ("ascend", "deepseek_v32"): _DEEPSEEK,  # DeepseekV32ForCausalLM: the DeepSeek-V3 model with DSA
    ("cuda", "deepseek_v32"): _DEEPSEEK,
    ("ascend", "kimi_k2"): _DEEPSEEK,
    ("cuda", "kimi_k2"): _DEEPSEEK,
}


def format_bytes(fmt: str) -> float:
    return FORMAT_BYTES.get((fmt or "bf16").lower(), 2.0)


@stored_init
@dataclass(frozen=True)
class ReplicatedGroup:
    group: str
    elements: int
    stored_bytes: int  # on disk (part of the checkpoint's non-expert bytes)
    loaded_bytes: int  # in device memory on every rank
    source: str
    assumed: bool = False


def replicated_groups(checkpoint: CheckpointSpec | None, software_stack: str) -> tuple[ReplicatedGroup, ...]:
    """The checkpoint's parameter groups that the platform keeps whole on every rank."""
    if checkpoint is None:
        return ()
    stack = "ascend" if software_stack == "ascend" else "cuda"
    out = []
    for rule in RULES.get((stack, checkpoint.architecture), ()):
        elements = int(checkpoint.param_groups.get(rule.group, 0))
        if rule.placement != REPLICATED or elements <= 0:
            continue
        stored_fmt = checkpoint.group_formats.get(rule.group, checkpoint.non_expert_format)
        if rule.dtype == BF16:
            loaded_fmt = "bf16"
        elif rule.dtype == BF16_UNLESS_MODELSLIM and checkpoint.quant_method != "ascend":
            loaded_fmt = "bf16"
        else:
            loaded_fmt = stored_fmt
        out.append(
            ReplicatedGroup(
                group=rule.group,
                elements=elements,
                stored_bytes=round(elements * format_bytes(stored_fmt)),
                loaded_bytes=round(elements * format_bytes(loaded_fmt)),
                source=rule.source,
                assumed=rule.assumed,
            )
        )
    return tuple(out)


def checkpoint_supports(checkpoint: CheckpointSpec | None, software_stack: str) -> bool:
    if checkpoint is None:
        return True
    return ("ascend" if software_stack == "ascend" else "cuda") in checkpoint.platforms


#: The grammar of a checkpoint's extra ``vllm serve`` flags, the catalog's and a request's alike
#: (catalog Checkpoint.clean, configurator/io/requests.py): ``--lower-case-flag`` words and plain
#: values, nothing a shell or YAML could read as more than one word.
FLAG_PATTERN = re.compile(r"^--[a-z0-9][a-z0-9-]*$")
VALUE_PATTERN = re.compile(r"^[A-Za-z0-9._=:/,-]{1,100}$")
#: Flags no checkpoint may add: the launch leaves them out on purpose and its README says so
#: (recipes.py ``_NO_MEDIA_PATH``: any API client could read files on the server).
REFUSED_FLAGS = frozenset({"--allowed-local-media-path"})


def checkpoint_flag_problem(flags: object) -> str:
    """Why a checkpoint's ``launch_flags`` cannot reach a node script or manifest ("" when they can):
    not a list of flag / value words (``FLAG_PATTERN``, ``VALUE_PATTERN``), a value first, or a flag
    of ``REFUSED_FLAGS``."""
    if not isinstance(flags, (list, tuple)) or not all(
        isinstance(f, str) and (FLAG_PATTERN.match(f) or VALUE_PATTERN.match(f)) for f in flags
    ):
        return 'must be a list like ["--quantization", "ascend"]: flags and plain values only.'
    if flags and not FLAG_PATTERN.match(str(flags[0])):
        return f"must start with a flag, not the value {str(flags[0])[:40]!r}."
    refused = sorted(set(flags) & REFUSED_FLAGS)
    if refused:
        return f"{', '.join(refused)} is left out of every launch (a security risk); remove it."
    return ""


def checkpoint_launch_flags(checkpoint: CheckpointSpec | None) -> list[tuple[str, str | None]]:
    """The checkpoint's extra ``vllm serve`` flags as (flag, value) pairs."""
    if checkpoint is None:
        return []
    out: list[tuple[str, str | None]] = []
    args = list(checkpoint.launch_flags)
    i = 0
    while i < len(args):
        flag = args[i]
        value = args[i + 1] if i + 1 < len(args) and not args[i + 1].startswith("--") else None
        out.append((flag, value))
        i += 2 if value is not None else 1
    return out


def serving_flags_for_checkpoint(req: PlanRequest) -> list[tuple[str, str | None]]:
    """The launch flags that follow the checkpoint and the platform.

    * the checkpoint's own flags (``--quantization ascend`` only for a ModelSlim
      conversion; with no checkpoint named the model's published weights are
      served and vLLM reads their quantisation from config.json: no flag);
    * ``--block-size`` when it differs from vLLM's platform default.
    """
    from .defaults import DEFAULT_BLOCK_SIZE, block_size_for, stack_of

    stack = stack_of(req.server.accelerator.software_stack)
    flags = checkpoint_launch_flags(req.checkpoint)
    block = block_size_for(req.serving, stack)
    if block != DEFAULT_BLOCK_SIZE[stack]:
        flags.append(("--block-size", str(block)))
    return flags


__all__ = [
    "REPLICABLE_GROUPS",
    "RULES",
    "GroupRule",
    "ReplicatedGroup",
    "checkpoint_flag_problem",
    "checkpoint_launch_flags",
    "checkpoint_supports",
    "format_bytes",
    "replicated_groups",
    "serving_flags_for_checkpoint",
]
