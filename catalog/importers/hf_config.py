"""Derive a catalog model from a Hugging Face ``config.json``.

Pure functions: no Django, no I/O beyond parsing the text handed in.  The
result is an :class:`ImportedModel` whose ``fields`` map one-to-one onto
``catalog.LlmModel`` fields, with a ``sources`` entry for every figure.

Conventions (they matter for the published counts):

* ``total_params`` counts every weight of the checkpoint that vLLM loads for
  serving: embeddings, LM head, all decoder layers, the vision tower and its
  projector.  Multi-token-prediction layers (``num_nextn_predict_layers``) are
  left out: vLLM only loads them for speculative decoding.
* ``active_params`` is what one token's forward pass multiplies by: total
  minus the routed experts a token does not visit, minus the input embedding
  (a table look-up, no FLOPs) and minus the vision tower.  This is how
  Moonshot (K3 ≈ 104.2 B) and OpenAI (gpt-oss-120b 5.1 B) count.
* Weight bytes follow ``quantization_config``: block FP8 is 1 byte per
  weight plus one FP32 scale per block; MXFP4 is 4.25 bits per routed-expert
  weight (4-bit element + one E8M0 byte per 32); everything that is not
  quantised stays BF16 (2 bytes).  ``expert_weight_bytes`` holds the routed
  experts (split by EP when served); the rest is ``non_expert_weight_bytes``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from catalog import jsonlimits
from configurator.engine.site_values import control_chars

MAX_CONFIG_BYTES = 1024 * 1024  # uploads and pasted text are refused above 1 MB
MAX_CONFIG_DEPTH = 32  # nesting of objects/lists; real configs use 4 or 5 levels
# Integers a config may hold (int32, as transformers' configs and vLLM's C++ kernels
# take them); layer counts far less, since the importer walks every layer.
MAX_CONFIG_INT = 2**31 - 1
MAX_LAYERS = 4096
# Derived figures beyond these describe no real model (the largest public ones are ≈2 T
# parameters); they would also overflow the catalog's 64-bit integer columns.
MAX_DERIVED = 10**15

SUPPORTED_MODEL_TYPES = (
    "llama",
    "mistral",
    "qwen2",
    "qwen3",
    "qwen3_moe",
    "qwen3_next",
    "qwen3_vl_moe",
    "mixtral",
    "deepseek_v2",
    "deepseek_v3",
    "deepseek_v32",
    "kimi_k2",
    "kimi_k3",
    "kimi_linear",
    "glm4_moe",
    "minimax_m2",
    "glm_moe_dsa",
    "gpt_oss",
    "gemma2",
    "gemma3",
    "gemma3_text",
)

#: Defaults transformers' Gemma2Config / Gemma3TextConfig give a field Google's published config.json
#: leaves out (google/gemma-3-4b-it's text_config names only its width, depth, MLP, window and RoPE):
#: transformers/models/gemma3/configuration_gemma3.py, gemma2/configuration_gemma2.py.
GEMMA_DEFAULTS: dict[str, dict[str, int]] = {
    "gemma2": {
        "vocab_size": 256_000,
        "num_attention_heads": 8,
        "num_key_value_heads": 4,
        "head_dim": 256,
        "sliding_window": 4096,
        "max_position_embeddings": 8192,
        "sliding_window_pattern": 2,  # alternating, local first (Gemma2Config.layer_types)
    },
    "gemma3_text": {
        "vocab_size": 262_208,
        "num_attention_heads": 8,
        "num_key_value_heads": 4,
        "head_dim": 256,
        "sliding_window": 4096,
        "max_position_embeddings": 131_072,
        "sliding_window_pattern": 6,
    },
}


def readable_name(model_type: str, total_params: int, active_params: int, *, moe: bool | None = None) -> str:
    """A name for a config without one: family and size ("Qwen MoE 235B-A22B"),
    never the bare ``model_type`` ("qwen3_moe").  ``moe``: whether the model routes tokens to experts
    (a dense model whose active count leaves out a vision tower is not "MoE"); None: judged from the
    counts alone."""
    family = FAMILIES.get(model_type, model_type.replace("_", " ").title())
    size = f"{total_params / 1e9:,.0f}B" if total_params >= 1e9 else f"{total_params / 1e6:,.0f}M"
    if moe is None:
        moe = bool(active_params) and active_params < total_params
    if moe and active_params and active_params < total_params:
        active = f"{active_params / 1e9:,.0f}B" if active_params >= 1e9 else f"{active_params / 1e6:,.0f}M"
        return f"{family} MoE {size}-A{active}"
    return f"{family} {size}"


FAMILIES = {
    "llama": "Llama",
    "mistral": "Mistral",
    "qwen2": "Qwen",
    "qwen3": "Qwen",
    "qwen3_moe": "Qwen",
    "qwen3_next": "Qwen",
    "qwen3_vl_moe": "Qwen",
    "mixtral": "Mistral",
    "deepseek_v2": "DeepSeek",
    "deepseek_v3": "DeepSeek",
    "deepseek_v32": "DeepSeek",
    "kimi_k2": "Kimi",
    "kimi_k3": "Kimi",
    "kimi_linear": "Kimi",
    "glm4_moe": "GLM",
    "minimax_m2": "MiniMax",
    "glm_moe_dsa": "GLM",
    "gpt_oss": "gpt-oss",
    "gemma2": "Gemma",
    "gemma3": "Gemma",
    "gemma3_text": "Gemma",
}

# Bytes per weight of the formats an admin may force with --weight-format.
# ``experts`` applies to routed experts, ``linear`` to the other linear layers
# (attention, dense and shared MLPs); embeddings, LM head, norms, routers and
# vision always stay BF16.
FP8_BLOCK_BPP = 1 + 4 / (128 * 128)  # e4m3 + one FP32 scale per 128×128 block
MXFP4_BPP = 4.25 / 8  # 4-bit E2M1 + one E8M0 scale byte per 32 elements
NVFP4_BPP = 4.5 / 8  # 4-bit E2M1 + one FP8 scale per 16 elements
INT4_G128_BPP = 0.5 + 2 / 128  # 4-bit + one BF16 scale per 128 elements
WEIGHT_FORMAT_BYTES: dict[str, dict[str, float]] = {
    "bf16": {"experts": 2.0, "linear": 2.0},
    "fp16": {"experts": 2.0, "linear": 2.0},
    "fp32": {"experts": 4.0, "linear": 4.0},
    "fp8": {"experts": FP8_BLOCK_BPP, "linear": FP8_BLOCK_BPP},
    "int8": {"experts": 1.0, "linear": 1.0},
    "w8a8": {"experts": 1.0, "linear": 1.0},
    # W4A8 MoE releases: 4-bit experts, 8-bit attention and dense layers.
    "w4a8": {"experts": INT4_G128_BPP, "linear": 1.0},
    "int4": {"experts": INT4_G128_BPP, "linear": INT4_G128_BPP},
    # MXFP4 releases (K3, gpt-oss) quantise the routed experts only.
    "mxfp4": {"experts": MXFP4_BPP, "linear": 2.0},
    "nvfp4": {"experts": NVFP4_BPP, "linear": NVFP4_BPP},
}

_DTYPE_FORMATS = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32", "half": "fp16"}
_BF16 = 2.0


class ConfigError(ValueError):
    """A config.json the importer cannot use.  ``field`` is the dotted path of the culprit."""

    def __init__(self, field: str, message: str):
        self.field = field
        super().__init__(message)


@dataclass(frozen=True)
class ImportedModel:
    """What the importer derived.  ``fields`` are ``LlmModel`` field values."""

    model_type: str
    fields: dict[str, Any]
    sources: dict[str, dict[str, str]]
    params_by_part: dict[str, int]
    warnings: tuple[str, ...] = ()

    @property
    def weight_bytes(self) -> int:
        return self.fields["expert_weight_bytes"] + self.fields["non_expert_weight_bytes"]


# --------------------------------------------------------------------------- reading


class _Reader:
    """Typed access to one JSON object, with errors naming the dotted field path."""

    def __init__(self, data: Mapping[str, Any], prefix: str = ""):
        self.data = data
        self.prefix = prefix

    def path(self, name: str) -> str:
        return f"{self.prefix}{name}"

    def has(self, name: str) -> bool:
        return self.data.get(name) is not None

    def int(
        self, name: str, default: int | None = None, *, minimum: int = 0, maximum: int = MAX_CONFIG_INT
    ) -> int:
        value = self.data.get(name)
        if value is None:
            if default is None:
                raise ConfigError(self.path(name), f"{self.path(name)} is missing")
            return default
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or (isinstance(value, float) and not math.isfinite(value))
            or int(value) != value
        ):
            raise ConfigError(self.path(name), f"{self.path(name)} must be an integer, got {value!r:.40}")
        if value < minimum:
            raise ConfigError(
                self.path(name), f"{self.path(name)} must be at least {minimum}, got {value!r:.40}"
            )
        if value > maximum:
            raise ConfigError(
                self.path(name), f"{self.path(name)} must be at most {maximum:,}, got {value!r:.40}"
            )
        return int(value)

    def bool(self, name: str, default: bool = False) -> bool:
        value = self.data.get(name)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise ConfigError(self.path(name), f"{self.path(name)} must be true or false, got {value!r}")
        return value

    def str(self, name: str, default: str = "") -> str:
        value = self.data.get(name)
        if value is None:
            return default
        if not isinstance(value, str):
            raise ConfigError(self.path(name), f"{self.path(name)} must be a string, got {value!r}")
        return value

    def int_list(self, name: str, *, required: bool = True) -> list[int]:
        value = self.data.get(name)
        if value is None:
            if required:
                raise ConfigError(self.path(name), f"{self.path(name)} is missing")
            return []
        if not isinstance(value, list) or not all(
            isinstance(v, int) and not isinstance(v, bool) and abs(v) <= MAX_CONFIG_INT for v in value
        ):
            raise ConfigError(self.path(name), f"{self.path(name)} must be a list of integers")
        return list(value)

    def str_list(self, name: str) -> list[str]:
        value = self.data.get(name)
        if value is None:
            return []
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(self.path(name), f"{self.path(name)} must be a list of strings")
        return list(value)

    def obj(self, name: str, *, required: bool = True) -> _Reader | None:
        value = self.data.get(name)
        if value is None:
            if required:
                raise ConfigError(self.path(name), f"{self.path(name)} is missing")
            return None
        if not isinstance(value, Mapping):
            raise ConfigError(self.path(name), f"{self.path(name)} must be a JSON object")
        return _Reader(value, f"{self.path(name)}.")


def check_numbers(data: Any, path: str = "", depth: int = 0) -> None:
    """Every number in a parsed config is finite and at most ``MAX_CONFIG_INT`` in size
    (a float like ``rope_theta`` may be fractional; none may be 1e308 or NaN)."""
    if depth > MAX_CONFIG_DEPTH:
        raise ConfigError(path or "config", f"config nests more than {MAX_CONFIG_DEPTH} levels deep")
    if isinstance(data, bool) or data is None or isinstance(data, str):
        return
    if isinstance(data, int | float):
        if (isinstance(data, float) and not math.isfinite(data)) or abs(data) > MAX_CONFIG_INT:
            raise ConfigError(
                path or "config", f"{path or 'config'} must be a finite number of at most {MAX_CONFIG_INT:,}"
            )
        return
    if isinstance(data, Mapping):
        for key, value in data.items():
            check_numbers(value, f"{path}.{key}" if path else str(key), depth + 1)
    elif isinstance(data, list | tuple):
        for i, value in enumerate(data):
            check_numbers(value, f"{path}[{i}]", depth + 1)


def load_config_text(text: str | bytes) -> dict[str, Any]:
    """Parse config.json text; refuses anything over 1 MB or that is not one JSON object."""
    if isinstance(text, bytes):
        if len(text) > MAX_CONFIG_BYTES:
            raise ConfigError("config", "config.json is larger than 1 MB")
        try:
            text = text.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise ConfigError("config", "config.json is not UTF-8 text") from exc
    try:
        data = jsonlimits.loads(
            text,
            what="config.json",
            max_bytes=MAX_CONFIG_BYTES,
            max_depth=MAX_CONFIG_DEPTH,
            unique_keys=True,  # "hidden_size" twice: refused, not the last one silently kept
        )
    except jsonlimits.JsonLimitError as exc:
        raise ConfigError("config", str(exc).rstrip(".")) from None
    if not isinstance(data, dict):
        raise ConfigError("config", "config.json must be a JSON object")
    return data


# --------------------------------------------------------------------------- parameter accounting


@dataclass
class _Params:
    """Parameter counts by part, plus the share of routed experts a token visits."""

    parts: dict[str, int] = field(default_factory=dict)
    active_expert_fraction: float = 1.0

    def add(self, part: str, count: int) -> None:
        self.parts[part] = self.parts.get(part, 0) + int(count)

    def get(self, part: str) -> int:
        return self.parts.get(part, 0)

    @property
    def total(self) -> int:
        return sum(self.parts.values())

    @property
    def active(self) -> int:
        experts = self.get("routed_experts") + self.get("routed_expert_biases")
        inactive = round(experts * (1 - self.active_expert_fraction))
        return self.total - inactive - self.get("embedding") - self.get("vision")


def _gqa_attention(r: _Reader, hidden: int, heads: int, kv_heads: int, head_dim: int, model_type: str) -> int:
    q = hidden * heads * head_dim
    kv = 2 * hidden * kv_heads * head_dim
    o = heads * head_dim * hidden
    count = q + kv + o
    qkv_bias = model_type == "qwen2" or r.bool("attention_bias") or r.bool("qkv_bias")
    if qkv_bias:
        count += heads * head_dim + 2 * kv_heads * head_dim
    if model_type == "gpt_oss":
        if r.bool("attention_bias"):
            count += hidden  # o_proj bias
        count += heads  # attention sinks
    if model_type == "minimax_m2" and r.bool("use_qk_norm"):
        # MiniMaxM2Attention (qk_norm_type per_layer): one RMSNorm over all query heads, one over all key heads
        count += (heads + kv_heads) * head_dim
    elif model_type in ("qwen3", "qwen3_moe", "qwen3_vl_moe", "gemma3", "gemma3_text") or r.bool(
        "use_qk_norm"
    ):
        count += 2 * head_dim
    return count


def _mla_attention(r: _Reader, hidden: int, heads: int, *, output_gate: bool = False) -> int:
    q_lora = r.int("q_lora_rank", 0)
    kv_lora = r.int("kv_lora_rank", minimum=1)
    nope = r.int("qk_nope_head_dim", minimum=1)
    rope = r.int("qk_rope_head_dim", minimum=1)
    v_dim = r.int("v_head_dim", minimum=1)
    if q_lora:
        q = hidden * q_lora + q_lora + q_lora * heads * (nope + rope)
    else:
        q = hidden * heads * (nope + rope)
    kv = hidden * (kv_lora + rope) + kv_lora + kv_lora * heads * (nope + v_dim)
    o = heads * v_dim * hidden
    count = q + kv + o
    if output_gate:
        count += hidden * heads * v_dim
    if r.has("index_n_heads"):  # GLM-5 / DeepSeek sparse attention lightning indexer
        index_heads = r.int("index_n_heads")
        index_dim = r.int("index_head_dim")
        count += (q_lora or hidden) * index_heads * index_dim + hidden * index_dim + 2 * index_dim
        count += hidden * index_heads
    return count


def _kda_attention(la: _Reader, hidden: int) -> int:
    heads = la.int("num_heads", minimum=1)
    head_dim = la.int("head_dim", minimum=1)
    kernel = la.int("short_conv_kernel_size", 4, minimum=1)
    proj = heads * head_dim
    count = 3 * hidden * proj  # q, k, v
    count += 3 * proj * kernel  # short convolutions
    count += heads + proj  # A_log, dt_bias
    count += hidden * head_dim + head_dim * proj  # f_a, f_b (decay gate)
    count += hidden * heads  # b_proj (beta)
    if la.bool("use_full_rank_gate"):
        count += hidden * proj
    else:
        count += hidden * head_dim + head_dim * proj
    count += head_dim  # o_norm
    count += proj * hidden  # o_proj
    return count


def _mlp(hidden: int, intermediate: int) -> int:
    return 3 * hidden * intermediate  # gate, up, down


def _siglip_vision_params(v: _Reader, text_hidden: int) -> int:
    """Gemma 3's SigLIP tower (so400m: 27 layers of 1,152, MLP 4,304, 14-pixel patches of 896-pixel
    images) and its projector (``mm_input_projection_weight`` to the text width, ``mm_soft_emb_norm``),
    from ``vision_config`` (transformers SiglipVisionModel, Gemma3MultiModalProjector)."""
    h = v.int("hidden_size", 1152, minimum=1)
    inter = v.int("intermediate_size", 4304, minimum=1)
    layers = v.int("num_hidden_layers", 27, minimum=1, maximum=MAX_LAYERS)
    patch = v.int("patch_size", 14, minimum=1)
    image = v.int("image_size", 896, minimum=1)
    channels = v.int("num_channels", 3, minimum=1)
    embeddings = channels * patch * patch * h + h + (image // patch) ** 2 * h
    per_layer = 4 * h * h + 4 * h + 2 * h * inter + inter + h + 2 * 2 * h  # attention, MLP, two LayerNorms
    projector = h * text_hidden + h
    return embeddings + layers * per_layer + 2 * h + projector


def _kimi_vision_params(v: _Reader, text_hidden: int) -> int:
    """MoonViT tower + patch-merger projector, from ``vision_config``."""
    layers = v.int("vt_num_hidden_layers", minimum=1)
    width = v.int("vt_hidden_size", minimum=1)
    inner = v.int("vt_intermediate_size", minimum=1)
    qkv = v.int("qkv_hidden_size", width)
    patch = v.int("patch_size", 14)
    per_layer = 3 * width * qkv + qkv * width + 2 * width * inner + 2 * width
    tower = layers * per_layer + 3 * patch * patch * width + width
    tower += v.int("init_pos_emb_height", 0) * v.int("init_pos_emb_width", 0) * width
    tower += v.int("init_pos_emb_time", 0) * width
    merge = v.data.get("merge_kernel_size") or [2, 2]
    merge_area = int(merge[0]) * int(merge[1]) if isinstance(merge, list) and len(merge) == 2 else 4
    mm_in = v.int("mm_hidden_size", width) * merge_area
    projector = mm_in * mm_in + mm_in + mm_in * text_hidden + text_hidden
    return tower + projector


# --------------------------------------------------------------------------- quantisation


@dataclass(frozen=True)
class _Quant:
    weight_format: str
    activation_format: str
    expert_bpp: float
    linear_bpp: float
    note: str


def _compressed_tensors_bpp(weights: Mapping[str, Any], fmt: str) -> tuple[str, float]:
    bits = int(weights.get("num_bits") or 16)
    kind = weights.get("type") or "int"
    group = weights.get("group_size")
    if "mxfp4" in fmt or (bits == 4 and kind == "float" and group == 32):
        return "mxfp4", MXFP4_BPP
    if "nvfp4" in fmt or (bits == 4 and kind == "float" and group == 16):
        return "nvfp4", NVFP4_BPP
    if bits == 4:
        scale_bytes = 2 / int(group) if group else 0.0
        return "int4", 0.5 + scale_bytes
    if bits == 8:
        return ("fp8" if kind == "float" else "int8"), 1.0
    return "bf16", bits / 8


def _ignored(name: str, patterns: list[str]) -> bool:
    """Whether a module is left unquantised: ``re:`` patterns, exact names and their children, and
    ``*`` wildcards for one name part (gpt-oss: ``model.layers.*.self_attn``)."""
    for pattern in patterns:
        if pattern.startswith("re:"):
            if re.match(pattern[3:], name):
                return True
        elif name == pattern or name.startswith(pattern + "."):
            return True
        elif "*" in pattern:
            wildcard = r"[^.]+".join(re.escape(part) for part in pattern.split("*"))
            if re.fullmatch(wildcard + r"(\..*)?", name):
                return True
    return False


def _quantisation(r: _Reader, weight_format: str | None) -> _Quant:
    """Bytes per weight for routed experts and for other linear layers."""
    if weight_format:
        if weight_format not in WEIGHT_FORMAT_BYTES:
            raise ConfigError(
                "weight_format",
                f"weight_format {weight_format!r} is not one of {', '.join(sorted(WEIGHT_FORMAT_BYTES))}",
            )
        bpp = WEIGHT_FORMAT_BYTES[weight_format]
        act = {"fp8": "fp8", "int8": "int8", "w8a8": "int8", "w4a8": "int8"}.get(weight_format, "bf16")
        return _Quant(weight_format, act, bpp["experts"], bpp["linear"], f"forced {weight_format}")

    q = r.obj("quantization_config", required=False)
    if q is None:
        dtype = r.str("torch_dtype") or r.str("dtype") or "bfloat16"
        fmt = _DTYPE_FORMATS.get(dtype, "bf16")
        bpp = WEIGHT_FORMAT_BYTES[fmt]["linear"]
        return _Quant(fmt, "fp16" if fmt == "fp16" else "bf16", bpp, bpp, f"unquantised {dtype}")

    method = q.str("quant_method")
    if method == "fp8":
        block = q.data.get("weight_block_size")
        if block is not None:
            if not (
                isinstance(block, list)
                and len(block) == 2
                and all(isinstance(b, int) and b > 0 for b in block)
            ):
                raise ConfigError(
                    q.path("weight_block_size"),
                    f"{q.path('weight_block_size')} must be two positive integers",
                )
            bpp = 1 + 4 / (block[0] * block[1])
            note = f"FP8 e4m3, one FP32 scale per {block[0]}×{block[1]} block"
        else:
            bpp = 1.0
            note = "FP8 e4m3, per-tensor scale"
        return _Quant("fp8", "fp8", bpp, bpp, note)
    if method == "mxfp4":
        not_converted = q.str_list("modules_to_not_convert")
        linear = 2.0 if _ignored("model.layers.0.self_attn", not_converted) else MXFP4_BPP
        return _Quant("mxfp4", "bf16", MXFP4_BPP, linear, "MXFP4 experts (4.25 bits incl. E8M0 scale per 32)")
    if method == "compressed-tensors":
        groups = q.obj("config_groups")
        first = next(iter(groups.data.values()), None)
        if not isinstance(first, Mapping) or not isinstance(first.get("weights"), Mapping):
            raise ConfigError(q.path("config_groups"), f"{q.path('config_groups')} has no weights scheme")
        fmt, bpp = _compressed_tensors_bpp(first["weights"], q.str("format"))
        ignore = q.str_list("ignore")
        # Representative module names; experts named as in the DeepSeek/Kimi checkpoints.
        expert_bpp = _BF16 if _ignored("model.layers.1.mlp.experts.0.gate_proj", ignore) else bpp
        attention_quantised = not _ignored("model.layers.1.self_attn.q_proj", ignore)
        linear_bpp = bpp if attention_quantised else _BF16
        acts = first.get("input_activations")
        act = "bf16"
        if isinstance(acts, Mapping) and acts.get("num_bits") == 8:
            act = "fp8" if acts.get("type") == "float" else "int8"
        return _Quant(fmt, act, expert_bpp, linear_bpp, f"compressed-tensors {q.str('format') or fmt}")
    if method in ("awq", "gptq"):
        bits = q.int("bits", 4, minimum=1)
        group = q.int("group_size", 128, minimum=1) if q.data.get("group_size", 128) != -1 else 0
        bpp = bits / 8 + (2 / group if group else 0.0)
        fmt = "int4" if bits == 4 else "int8"
        return _Quant(fmt, "bf16", bpp, bpp, f"{method.upper()} {bits}-bit")
    raise ConfigError(
        q.path("quant_method"),
        f"quantization_config.quant_method {method!r} is not supported (fp8, mxfp4, compressed-tensors, awq, gptq)",
    )


# --------------------------------------------------------------------------- per-family parsing


#: The attention kinds ``layer_types`` may name for the GQA families (transformers' configs: Gemma 2/3,
#: Qwen 3, Mistral write full_attention / sliding_attention); anything else is refused, not counted.
LAYER_TYPES = ("full_attention", "sliding_attention")


def _layer_types_gqa(r: _Reader, layers: int, model_type: str) -> tuple[int, int, int]:
    """(full attention layers, sliding layers, window) for GQA families."""
    types = r.str_list("layer_types")
    if types:
        if len(types) != layers:
            raise ConfigError(
                r.path("layer_types"),
                f"{r.path('layer_types')} lists {len(types)} layers but num_hidden_layers is {layers}",
            )
        unknown = sorted({t for t in types if t not in LAYER_TYPES})
        if unknown:
            raise ConfigError(
                r.path("layer_types"),
                f"{r.path('layer_types')} has layer types this importer does not know: "
                + ", ".join(repr(t[:40]) for t in unknown[:5])
                + f" (known: {', '.join(LAYER_TYPES)})",
            )
        sliding = sum(1 for t in types if t == "sliding_attention")
        window = r.int("sliding_window", minimum=1) if sliding else 0
        return layers - sliding, sliding, window
    window = r.int("sliding_window", 0)
    if not window:
        return layers, 0, 0
    if model_type in ("qwen2", "qwen3", "qwen3_moe"):
        if not r.bool("use_sliding_window"):
            return layers, 0, 0
        # Qwen: layers from max_window_layers on use the window.
        start = r.int("max_window_layers", layers)
        sliding = max(0, layers - start)
        return layers - sliding, sliding, window if sliding else 0
    return 0, layers, window  # Mistral-style: a window on every layer


def _kimi_linear_layers(r: _Reader, layers: int) -> tuple[_Reader | None, list[int], list[int]]:
    la = r.obj("linear_attn_config", required=False)
    if la is None:
        return None, list(range(1, layers + 1)), []
    full = la.int_list("full_attn_layers")
    kda = la.int_list("kda_layers")
    covered = sorted(full + kda)
    if covered != list(range(1, layers + 1)):
        raise ConfigError(
            la.path("kda_layers"),
            f"{la.path('full_attn_layers')} and {la.path('kda_layers')} (1-based) must cover layers 1…{layers} exactly once",
        )
    return la, full, kda


def _qwen3_vl_vision_params(v: _Reader) -> int:
    """Qwen3-VL's vision tower (transformers ``Qwen3VLVisionModel``, as in ``Qwen3VLMoeVisionModel``).

    A Conv3d patch embedding (in_channels × temporal_patch × patch² → hidden, with bias), a learned position
    table (num_position_embeddings × hidden), ``depth`` blocks (two LayerNorms; qkv and proj with bias; an MLP
    hidden → intermediate → hidden with biases), the merger (LayerNorm over hidden, then 4·hidden → 4·hidden →
    out_hidden_size for a 2 × 2 spatial merge) and one merger per ``deepstack_visual_indexes`` entry whose
    LayerNorm runs after the shuffle (over 4·hidden).
    """
    h = v.int("hidden_size", minimum=1)
    inter = v.int("intermediate_size", minimum=1)
    depth = v.int("depth", minimum=1, maximum=MAX_LAYERS)
    out = v.int("out_hidden_size", minimum=1)
    patch = v.int("patch_size", 16, minimum=1)
    temporal = v.int("temporal_patch_size", 2, minimum=1)
    channels = v.int("in_channels", 3, minimum=1)
    merge = v.int("spatial_merge_size", 2, minimum=1)
    positions = v.int("num_position_embeddings", 0)
    deepstack = len(v.int_list("deepstack_visual_indexes", required=False))
    block = 4 * h + (3 * h * h + 3 * h) + (h * h + h) + (2 * h * inter + inter + h)
    merged = h * merge * merge
    tail = merged * merged + merged + merged * out + out
    return (
        channels * temporal * patch * patch * h
        + h
        + positions * h
        + depth * block
        + (2 * h + tail)
        + deepstack * (2 * merged + tail)
    )


def _qwen3_next_layers(r: _Reader, layers: int) -> tuple[list[int], list[int]]:
    """(full-attention layers, Gated DeltaNet layers), 0-based, of a Qwen3-Next config.

    ``layer_types`` when the config lists them, else every ``full_attention_interval``-th layer is full
    attention (transformers ``Qwen3NextConfig``: ``(i + 1) % full_attention_interval == 0``; 4 in the
    published configs, so 12 full and 36 linear layers of 48).
    """
    types = r.str_list("layer_types")
    if types:
        if len(types) != layers:
            raise ConfigError(
                r.path("layer_types"),
                f"{r.path('layer_types')} lists {len(types)} layers but num_hidden_layers is {layers}",
            )
        unknown = sorted({t for t in types} - {"full_attention", "linear_attention"})
        if unknown:
            raise ConfigError(r.path("layer_types"), f"{r.path('layer_types')} has unknown types {unknown}")
        return (
            [i for i, t in enumerate(types) if t == "full_attention"],
            [i for i, t in enumerate(types) if t == "linear_attention"],
        )
    interval = r.int("full_attention_interval", 4, minimum=1)
    full = [i for i in range(layers) if (i + 1) % interval == 0]
    return full, [i for i in range(layers) if (i + 1) % interval]


def _qwen3_next_linear(r: _Reader, hidden: int, count: int, f: dict[str, Any], params: _Params) -> None:
    """Gated DeltaNet layers: their parameters and the recurrent state vLLM keeps per sequence.

    Parameters (transformers ``Qwen3NextGatedDeltaNet``): in_proj_qkvz hidden × (2·key_dim + 2·value_dim),
    in_proj_ba hidden × 2·v_heads, a depthwise conv1d of conv_dim × kernel (conv_dim = 2·key_dim + value_dim),
    dt_bias and A_log of v_heads, a gated RMSNorm of head_v_dim, out_proj value_dim × hidden.
    State (vLLM ``model_executor/layers/mamba/mamba_utils.py``
    ``MambaStateShapeCalculator.gated_delta_net_state_shape``): conv state (kernel − 1) × conv_dim and
    temporal state v_heads × head_v_dim × head_k_dim a layer; the conv state in the model dtype, the temporal
    state in ``mamba_ssm_dtype`` when the config names float32 (``MambaStateDtypeCalculator``: "auto" follows
    the model dtype).
    """
    if not count:
        return
    k_heads = r.int("linear_num_key_heads", minimum=1)
    v_heads = r.int("linear_num_value_heads", minimum=1)
    k_dim = r.int("linear_key_head_dim", minimum=1)
    v_dim = r.int("linear_value_head_dim", minimum=1)
    kernel = r.int("linear_conv_kernel_dim", 4, minimum=1)
    if k_dim != v_dim:
        raise ConfigError(
            r.path("linear_value_head_dim"),
            f"{r.path('linear_value_head_dim')} ({v_dim}) differs from {r.path('linear_key_head_dim')} ({k_dim}):"
            " the catalog sizes a square Gated DeltaNet state",
        )
    key_dim, value_dim = k_heads * k_dim, v_heads * v_dim
    conv_dim = 2 * key_dim + value_dim
    per_layer = hidden * (2 * key_dim + 2 * value_dim) + hidden * 2 * v_heads + conv_dim * kernel
    per_layer += 2 * v_heads + v_dim + value_dim * hidden
    params.add("attention", count * per_layer)
    f["linear_layers"] = count
    f["linear_num_heads"] = v_heads
    f["linear_head_dim"] = v_dim
    f["linear_conv_kernel"] = kernel
    f["linear_conv_dim"] = conv_dim
    f["linear_state_dtype_bytes"] = 4 if r.str("mamba_ssm_dtype") in ("float32", "fp32") else 2
    f["linear_conv_dtype_bytes"] = 2


def parse_hf_config(
    data: Mapping[str, Any],
    *,
    weight_format: str | None = None,
    hf_model_id: str = "",
    name: str = "",
) -> ImportedModel:
    """Derive ``LlmModel`` field values from a parsed config.json.

    ``weight_format`` forces the stored weight format (e.g. ``w4a8`` for a
    release whose config does not say); otherwise ``quantization_config`` or
    the dtype decides.  Raises :class:`ConfigError` naming the bad field.
    """
    if not isinstance(data, Mapping):
        raise ConfigError("config", "config.json must be a JSON object")
    check_numbers(data)
    try:
        imported = _parse(data, weight_format=weight_format, hf_model_id=hf_model_id, name=name)
    except ConfigError:
        raise
    except (TypeError, ValueError, ArithmeticError, KeyError, IndexError, AttributeError) as exc:
        # A value of a shape no public config uses (e.g. a list where a number belongs).
        raise ConfigError(
            "config", f"config.json has a value this importer cannot use ({exc})"[:300]
        ) from exc
    for key in ("name", "hf_model_id"):
        bad = control_chars(str(imported.fields.get(key) or ""))
        if bad:
            raise ConfigError(key, f"{key} must be one line of printable text (found {', '.join(bad[:5])})")
    for key, value in imported.fields.items():
        if isinstance(value, int) and not isinstance(value, bool) and value > MAX_DERIVED:
            raise ConfigError(
                "config",
                f"the derived {key} ({value:.3g}) is beyond any real model (at most {MAX_DERIVED:.0e})",
            )
    return imported


def _parse(
    data: Mapping[str, Any], *, weight_format: str | None, hf_model_id: str, name: str
) -> ImportedModel:
    """The model a config describes, in the steps of its layers: the model type, the shape (width, depth,
    heads), the parameters of the embeddings, attention, feed-forward and vision tower, the weight bytes
    their quantisation gives, and the catalog fields with their sources."""
    top = _Reader(data)
    model_type = _model_type(top)
    r = top
    if model_type in ("kimi_k3", "gemma3", "qwen3_vl_moe"):
        r = top.obj("text_config")
        vision = top.obj("vision_config", required=False)
    else:
        vision = None
    shape = _shape(top, r, model_type)

    warnings: list[str] = []
    params = _Params()
    params.add("embedding", shape.vocab * shape.hidden)
    if not shape.tie:
        params.add("lm_head", shape.vocab * shape.hidden)
    params.add("norms", shape.hidden)  # final norm

    f = dict(_ATTENTION_FIELDS)
    head_dim = _attention(r, model_type, shape, f, params)
    # two RMSNorms a layer; Gemma 2 and 3 four (before and after attention and the MLP)
    params.add("norms", shape.layers * (4 if shape.gemma else 2) * shape.hidden)

    experts = _experts(r, model_type, shape)
    shared = _feed_forward(r, model_type, shape, experts, params)
    mtp = (
        r.int("num_nextn_predict_layers", 0)
        or r.int("mtp_num_hidden_layers", 0)
        or r.int("num_mtp_modules", 0)
    )
    if mtp:
        warnings.append(
            f"{mtp} multi-token-prediction layer(s) not counted: vLLM loads them only for speculative decoding."
        )
    vision_params = _vision(top, vision, model_type, shape.hidden, params, warnings)

    # --- bytes
    quant = _quantisation(r if r.has("quantization_config") else top, weight_format)
    expert_params = params.get("routed_experts")
    expert_bytes = round(expert_params * quant.expert_bpp + params.get("routed_expert_biases") * _BF16)
    linear = params.get("attention") + params.get("dense_mlp") + params.get("shared_experts")
    other = params.total - expert_params - params.get("routed_expert_biases") - linear
    non_expert_bytes = round(linear * quant.linear_bpp + other * _BF16)
    vision_bytes = round(vision_params * _BF16)

    hf_id = hf_model_id or top.str("_name_or_path") or r.str("_name_or_path")
    display = name or (
        hf_id.split("/")[-1]
        if hf_id
        else readable_name(model_type, params.total, params.active, moe=params.get("routed_experts") > 0)
    )
    f.update(
        {
            "name": display,
            "family": FAMILIES[model_type],
            "hf_model_id": hf_id,
            "total_params": params.total,
            "active_params": params.active,
            "num_layers": shape.layers,
            "hidden_size": shape.hidden,
            "vocab_size": shape.vocab,
            "num_attention_heads": shape.heads,
            "num_kv_heads": shape.kv_heads,
            "head_dim": head_dim,
            "num_experts": experts.experts,
            "experts_per_token": experts.per_token,
            "shared_experts": shared,
            "moe_layers": len(experts.moe_layer_ids),
            "expert_weight_bytes": expert_bytes,
            "non_expert_weight_bytes": non_expert_bytes,
            "weight_format": quant.weight_format,
            "activation_format": quant.activation_format,
            "max_context": shape.max_context,
            "has_vision": vision is not None,
            "vision_params": vision_params,
            "vision_bytes": vision_bytes,
            "tie_word_embeddings": shape.tie,
        }
    )
    return ImportedModel(model_type, f, _sources(f, hf_id, quant), dict(params.parts), tuple(warnings))


def _model_type(top: _Reader) -> str:
    """The config's ``model_type``, refused when missing or not one this importer reads."""
    model_type = top.str("model_type")
    if not model_type:
        raise ConfigError("model_type", "model_type is missing")
    if model_type not in SUPPORTED_MODEL_TYPES:
        raise ConfigError(
            "model_type",
            f"model_type {model_type!r} is not supported (supported: {', '.join(SUPPORTED_MODEL_TYPES)})",
        )
    return model_type


@dataclass(frozen=True)
class _Shape:
    """The language model's shape as its config states it (Gemma's absent fields from its defaults)."""

    layers: int
    hidden: int
    vocab: int
    heads: int
    kv_heads: int
    head_dim: int  # as stated or hidden ÷ heads; an MLA model's comes from its own fields
    max_context: int
    tie: bool  # the LM head is the embedding table
    gemma: bool
    defaults: Mapping[str, int]  # GEMMA_DEFAULTS of the type, empty for others


def _shape(top: _Reader, r: _Reader, model_type: str) -> _Shape:
    """Depth, width, vocabulary, attention and KV heads, head dimension, context and tied embeddings of
    the language model ``r``, each checked (KV heads divide the heads; a head has at least one dimension)."""
    gemma = model_type.startswith("gemma")
    defaults = GEMMA_DEFAULTS["gemma2" if model_type == "gemma2" else "gemma3_text"] if gemma else {}

    layers = r.int("num_hidden_layers", minimum=1, maximum=MAX_LAYERS)
    hidden = r.int("hidden_size", minimum=1)
    vocab = r.int("vocab_size", defaults.get("vocab_size"), minimum=1)
    heads = r.int("num_attention_heads", defaults.get("num_attention_heads"), minimum=1)
    kv_heads = r.int("num_key_value_heads", defaults.get("num_key_value_heads", heads), minimum=1)
    if heads % kv_heads:
        raise ConfigError(
            r.path("num_key_value_heads"),
            f"{r.path('num_key_value_heads')} ({kv_heads}) must divide num_attention_heads ({heads})",
        )
    # A stated head_dim must be a size (vLLM divides by it); absent, transformers' hidden ÷ heads.
    head_dim = (
        r.int("head_dim", minimum=1)
        if r.has("head_dim")
        else int(defaults.get("head_dim", 0)) or hidden // heads
    )
    if head_dim < 1:
        raise ConfigError(
            r.path("num_attention_heads"),
            f"{r.path('num_attention_heads')} ({heads}) exceeds hidden_size ({hidden}): no head dimension",
        )
    max_context = r.int("max_position_embeddings", defaults.get("max_position_embeddings", 0))
    # Gemma ties its LM head to the embeddings (the configs' default)
    tie = top.bool("tie_word_embeddings", r.bool("tie_word_embeddings", gemma))
    return _Shape(layers, hidden, vocab, heads, kv_heads, head_dim, max_context, tie, gemma, defaults)


# The attention fields of a model before its layers are read (a copy is filled per config).
_ATTENTION_FIELDS: dict[str, Any] = {
    "gqa_layers": 0,
    "mla_layers": 0,
    "linear_layers": 0,
    "sliding_layers": 0,
    "sliding_window": 0,
    "kv_lora_rank": 0,
    "qk_rope_head_dim": 0,
    "index_head_dim": 0,
    "index_topk": 0,
    "index_n_heads": 0,
    "linear_num_heads": 0,
    "linear_head_dim": 0,
    "linear_conv_kernel": 0,
    "linear_conv_dim": 0,
    "linear_state_dtype_bytes": 4,
    "linear_conv_dtype_bytes": 2,
}
_MLA_FAMILY = ("deepseek_v2", "deepseek_v3", "deepseek_v32", "kimi_k2", "glm_moe_dsa")
_KIMI_LINEAR = ("kimi_linear", "kimi_k3")


def _attention(r: _Reader, model_type: str, shape: _Shape, f: dict[str, Any], params: _Params) -> int:
    """The attention layers by type (full, sliding, MLA, linear) into ``f`` and their parameters into
    ``params``; returns the head dimension (an MLA model's is its no-RoPE plus RoPE dimensions)."""
    layers, hidden, heads, kv_heads = shape.layers, shape.hidden, shape.heads, shape.kv_heads
    head_dim = shape.head_dim
    if model_type in _KIMI_LINEAR:
        head_dim = _kimi_linear_attention(r, model_type, shape, f, params)
    elif model_type == "qwen3_next":
        full, linear = _qwen3_next_layers(r, layers)
        f["gqa_layers"] = len(full)
        # transformers Qwen3NextAttention: q_proj yields the query and its output gate (2 × heads × head_dim),
        # q_norm and k_norm of head_dim each
        gated = hidden * heads * head_dim
        params.add(
            "attention",
            len(full)
            * (_gqa_attention(r, hidden, heads, kv_heads, head_dim, model_type) + gated + 2 * head_dim),
        )
        _qwen3_next_linear(r, hidden, len(linear), f, params)
    elif model_type in _MLA_FAMILY:
        head_dim = _mla_family_attention(r, model_type, shape, f, params)
    elif shape.gemma and not r.has("layer_types"):
        # transformers: Gemma 2 alternates, local first (layer i slides when i + 1 is odd); Gemma 3 slides
        # except every sliding_window_pattern-th layer
        defaults = shape.defaults
        pattern = r.int("sliding_window_pattern", defaults["sliding_window_pattern"], minimum=1)
        sliding = sum(1 for i in range(layers) if (i + 1) % pattern)
        f["gqa_layers"], f["sliding_layers"] = layers - sliding, sliding
        f["sliding_window"] = r.int("sliding_window", defaults["sliding_window"], minimum=1) if sliding else 0
        params.add("attention", layers * _gqa_attention(r, hidden, heads, kv_heads, head_dim, model_type))
    else:
        full_layers, sliding, window = _layer_types_gqa(r, layers, model_type)
        f["gqa_layers"], f["sliding_layers"], f["sliding_window"] = full_layers, sliding, window
        params.add("attention", layers * _gqa_attention(r, hidden, heads, kv_heads, head_dim, model_type))
    return head_dim


def _kimi_linear_attention(
    r: _Reader, model_type: str, shape: _Shape, f: dict[str, Any], params: _Params
) -> int:
    """Kimi Linear / K3: full-attention layers (MLA, or GQA without ``kv_lora_rank``) and KDA linear
    layers, plus the attention-residual norms when the config has them; returns the head dimension."""
    layers, hidden, heads = shape.layers, shape.hidden, shape.heads
    head_dim = shape.head_dim
    la, full, kda = _kimi_linear_layers(r, layers)
    is_mla = r.has("kv_lora_rank")
    output_gate = r.bool("mla_use_output_gate")
    if is_mla:
        f["mla_layers"] = len(full)
        f["kv_lora_rank"] = r.int("kv_lora_rank", minimum=1)
        f["qk_rope_head_dim"] = r.int("qk_rope_head_dim", minimum=1)
        head_dim = r.int("qk_nope_head_dim", minimum=1) + f["qk_rope_head_dim"]
        params.add("attention", len(full) * _mla_attention(r, hidden, heads, output_gate=output_gate))
    else:
        f["gqa_layers"] = len(full)
        params.add(
            "attention", len(full) * _gqa_attention(r, hidden, heads, shape.kv_heads, head_dim, model_type)
        )
    if la is not None and kda:
        f["linear_layers"] = len(kda)
        f["linear_num_heads"] = la.int("num_heads", minimum=1)
        f["linear_head_dim"] = la.int("head_dim", minimum=1)
        f["linear_conv_kernel"] = la.int("short_conv_kernel_size", 4, minimum=1)
        f["linear_conv_dim"] = 3 * f["linear_num_heads"] * f["linear_head_dim"]  # q, k, v convolutions
        params.add("attention", len(kda) * _kda_attention(la, hidden))
    if r.data.get("attn_res_block_size") is not None:
        params.add("norms", layers * 4 * hidden)  # attention-residual norms and score projections
    return head_dim


def _mla_family_attention(
    r: _Reader, model_type: str, shape: _Shape, f: dict[str, Any], params: _Params
) -> int:
    """DeepSeek-style MLA on every layer, with the sparse-attention indexer DeepSeek V3.2 and GLM-5 need;
    returns the head dimension (no-RoPE plus RoPE)."""
    if not r.has("kv_lora_rank"):
        raise ConfigError(r.path("kv_lora_rank"), f"{r.path('kv_lora_rank')} is missing")
    f["mla_layers"] = shape.layers
    f["kv_lora_rank"] = r.int("kv_lora_rank", minimum=1)
    f["qk_rope_head_dim"] = r.int("qk_rope_head_dim", minimum=1)
    head_dim = r.int("qk_nope_head_dim", minimum=1) + f["qk_rope_head_dim"]
    params.add("attention", shape.layers * _mla_attention(r, shape.hidden, shape.heads))
    if model_type in ("deepseek_v32", "glm_moe_dsa"):
        # DeepSeek sparse attention is what these types are: vLLM's Indexer (deepseek_v2.py) reads
        # index_topk, index_n_heads and index_head_dim from the config and fails without them.
        for key in ("index_topk", "index_n_heads", "index_head_dim"):
            if not r.has(key):
                raise ConfigError(r.path(key), f"{r.path(key)} is missing ({model_type} needs its indexer)")
    if r.has("index_n_heads"):  # DeepSeek sparse attention: the indexer's keys are cached per token
        f["index_head_dim"] = r.int("index_head_dim", minimum=1)
        f["index_topk"] = r.int("index_topk", minimum=1)
        f["index_n_heads"] = r.int("index_n_heads", minimum=1)
    return head_dim


@dataclass(frozen=True)
class _Experts:
    """The feed-forward as the config states it: routed experts, per token, shared ones, and widths."""

    experts: int
    per_token: int
    shared: int
    qwen_shared: int  # Qwen3-Next's one gated shared expert, its own width
    moe_layer_ids: list[int]
    dense_intermediate: int
    expert_intermediate: int
    expert_width: int


def _experts(r: _Reader, model_type: str, shape: _Shape) -> _Experts:
    """Routed experts, experts per token, shared experts, the MoE layers and the MLP widths, by model
    family; refused when a mixture of experts names no experts per token, or more than it has."""
    layers, hidden = shape.layers, shape.hidden
    experts = per_token = shared = 0
    qwen_shared = 0
    moe_layer_ids: list[int] = []
    dense_intermediate = r.int("intermediate_size", 0)
    expert_intermediate = 0
    expert_width = hidden
    if model_type in (
        "deepseek_v2",
        "deepseek_v3",
        "deepseek_v32",
        "kimi_k2",
        "glm4_moe",
        "glm_moe_dsa",
        "kimi_linear",
        "kimi_k3",
    ):
        if model_type in _KIMI_LINEAR:
            experts = r.int("num_experts", 0)
            per_token = r.int("num_experts_per_token", 0) if experts else 0
            shared = r.int("num_shared_experts", 0)
            expert_width = r.int("routed_expert_hidden_size", 0) or hidden
        else:
            experts = r.int("n_routed_experts", 0)
            per_token = r.int("num_experts_per_tok", 0) if experts else 0
            shared = r.int("n_shared_experts", 0)
        first_dense = r.int("first_k_dense_replace", 0)
        freq = r.int("moe_layer_freq", 1, minimum=1)
        if experts:
            expert_intermediate = r.int("moe_intermediate_size", minimum=1)
            moe_layer_ids = [i for i in range(layers) if i >= first_dense and i % freq == 0]
    elif model_type in ("qwen3_moe", "qwen3_next", "qwen3_vl_moe"):
        experts = r.int("num_experts", minimum=1)
        per_token = r.int("num_experts_per_tok", minimum=1)
        expert_intermediate = r.int("moe_intermediate_size", minimum=1)
        step = r.int("decoder_sparse_step", 1, minimum=1)
        dense_only = set(r.int_list("mlp_only_layers", required=False))
        moe_layer_ids = [i for i in range(layers) if i not in dense_only and (i + 1) % step == 0]
        if model_type == "qwen3_next":
            qwen_shared = r.int("shared_expert_intermediate_size", 0)
    elif model_type in ("mixtral", "gpt_oss", "minimax_m2"):
        experts = r.int("num_local_experts", minimum=1)
        per_token = r.int("num_experts_per_tok", 0) or r.int("experts_per_token", minimum=1)
        expert_intermediate = r.int("intermediate_size", minimum=1)
        moe_layer_ids = list(range(layers))
    if experts and not per_token:
        raise ConfigError(
            r.path("num_experts_per_tok"), "experts per token is missing for a mixture-of-experts model"
        )
    if per_token > experts:
        raise ConfigError(
            r.path("num_experts_per_tok"),
            f"experts per token ({per_token}) exceeds the routed expert count ({experts})",
        )
    return _Experts(
        experts,
        per_token,
        shared,
        qwen_shared,
        moe_layer_ids,
        dense_intermediate,
        expert_intermediate,
        expert_width,
    )


def _feed_forward(r: _Reader, model_type: str, shape: _Shape, ex: _Experts, params: _Params) -> int:
    """The dense MLPs, routed and shared experts, routers and latent projections into ``params``, and
    the share of routed experts a token visits; returns the shared expert count (Qwen3-Next's gated
    shared expert counts as one)."""
    hidden = shape.hidden
    experts, shared = ex.experts, ex.shared
    moe_layers = len(ex.moe_layer_ids)
    dense_layers = shape.layers - moe_layers
    if dense_layers:
        if not ex.dense_intermediate:
            raise ConfigError(r.path("intermediate_size"), f"{r.path('intermediate_size')} is missing")
        params.add("dense_mlp", dense_layers * _mlp(hidden, ex.dense_intermediate))
    if moe_layers:
        params.add("routed_experts", moe_layers * experts * _mlp(ex.expert_width, ex.expert_intermediate))
        router = experts * hidden
        if r.str("topk_method") == "noaux_tc" or model_type == "gpt_oss" or r.bool("use_routing_bias"):
            router += experts  # routing correction bias / router bias
        params.add("moe_other", moe_layers * router)
        if shared:
            params.add("shared_experts", moe_layers * _mlp(hidden, ex.expert_intermediate * shared))
        if ex.qwen_shared:
            shared = 1
            params.add("shared_experts", moe_layers * _mlp(hidden, ex.qwen_shared))
            params.add("moe_other", moe_layers * hidden)  # shared_expert_gate: hidden → 1
        if ex.expert_width != hidden:
            latent = 2 * hidden * ex.expert_width + (ex.expert_width if r.bool("latent_moe_use_norm") else 0)
            params.add("moe_other", moe_layers * latent)
        if model_type == "gpt_oss":
            params.add("routed_expert_biases", moe_layers * experts * (2 * ex.expert_intermediate + hidden))
        params.active_expert_fraction = ex.per_token / experts
    return shared


def _vision(
    top: _Reader,
    vision: _Reader | None,
    model_type: str,
    hidden: int,
    params: _Params,
    warnings: list[str],
) -> int:
    """The vision tower's parameters (Qwen3-VL, SigLIP for Gemma 3, MoonViT for Kimi) into ``params``;
    a ``vision_config`` this importer does not read is a warning.  Returns the tower's parameters."""
    vision_params = 0
    if vision is not None and model_type == "qwen3_vl_moe":
        vision_params = _qwen3_vl_vision_params(vision)
        params.add("vision", vision_params)
    elif vision is not None and model_type == "gemma3":
        vision_params = _siglip_vision_params(vision, hidden)
        params.add("vision", vision_params)
    elif vision is not None:
        vision_params = _kimi_vision_params(vision, hidden)
        params.add("vision", vision_params)
    elif top.has("vision_config"):
        warnings.append("vision_config present but this importer does not count the vision tower.")
    return vision_params


def _sources(f: Mapping[str, Any], hf_id: str, quant: _Quant) -> dict[str, dict[str, str]]:
    """The source of every field: the public config, the derived counts and bytes as the importer's,
    the expert bytes with the quantisation's note."""
    ref = f"HF config{(' ' + hf_id) if hf_id else ''}"
    sources = {
        key: {"kind": "public", "ref": ref} for key in f if key not in ("name", "family", "hf_model_id")
    }
    for key in (
        "total_params",
        "active_params",
        "expert_weight_bytes",
        "non_expert_weight_bytes",
        "vision_params",
        "vision_bytes",
    ):
        sources[key] = {"kind": "public", "ref": f"{ref} (derived by the importer)"}
    sources["expert_weight_bytes"]["ref"] += f"; {quant.note}"
    return sources


def parse_hf_config_text(text: str | bytes, **kwargs: Any) -> ImportedModel:
    """Parse config.json text and derive the model (see :func:`parse_hf_config`)."""
    return parse_hf_config(load_config_text(text), **kwargs)


def kv_bytes_per_token(fields: Mapping[str, Any], dtype_bytes: int = 2) -> int:
    """KV-cache bytes one token costs across all layers of an unsplit model (TP = 1).

    GQA/MHA layers store K and V for every KV head; MLA layers store the
    compressed latent plus the rotary key; linear-attention layers store no
    per-token cache; sliding-window layers are counted like full layers here
    (the window caps how many tokens they keep, not the cost of one token).
    """
    gqa = fields["gqa_layers"] + fields["sliding_layers"]
    per_gqa = 2 * fields["num_kv_heads"] * fields["head_dim"] * dtype_bytes
    per_mla = (
        fields["kv_lora_rank"] + fields["qk_rope_head_dim"] + fields.get("index_head_dim", 0)
    ) * dtype_bytes
    return gqa * per_gqa + fields["mla_layers"] * per_mla


def linear_state_bytes_per_sequence(fields: Mapping[str, Any]) -> int:
    """Recurrent + convolution state one running sequence holds in linear-attention layers."""
    heads, dim = fields["linear_num_heads"], fields["linear_head_dim"]
    recurrent = heads * dim * dim * fields["linear_state_dtype_bytes"]
    conv = (
        max(0, fields["linear_conv_kernel"] - 1)
        * fields["linear_conv_dim"]
        * fields["linear_conv_dtype_bytes"]
    )
    return fields["linear_layers"] * (recurrent + conv)


def platform_param_groups(config: Mapping[str, Any]) -> dict[str, int]:
    """Element counts of the parameter groups whose placement depends on the platform.

    ``router`` (MoE gate), ``latent_moe`` (K3's 7168 ↔ 3584 routed-expert
    projections), ``mla_a`` (the fused MLA q_a / kv_a projection) and
    ``kda_f_a`` (the KDA forget-gate down-projection); see
    ``configurator/engine/placement.py`` for which platform replicates which.
    """
    text = config.get("text_config") or config
    hidden = int(text["hidden_size"])
    layers = int(text["num_hidden_layers"])
    experts = int(text.get("num_experts") or text.get("n_routed_experts") or 0)
    moe_layers = layers - int(text.get("first_k_dense_replace", 0)) if experts else 0
    la = text.get("linear_attn_config") or {}
    if la:
        mla_layers, kda_layers = len(la.get("full_attn_layers", ())), len(la.get("kda_layers", ()))
    else:
        mla_layers, kda_layers = (layers if text.get("kv_lora_rank") else 0), 0
    a_width = int(text.get("q_lora_rank") or 0) + int(text.get("kv_lora_rank") or 0)
    a_width += int(text.get("qk_rope_head_dim") or 0) if text.get("kv_lora_rank") else 0
    latent = int(text.get("routed_expert_hidden_size") or 0)
    return {
        "router": moe_layers * hidden * experts,
        "latent_moe": moe_layers * 2 * hidden * latent,
        "mla_a": mla_layers * hidden * a_width,
        "kda_f_a": kda_layers * hidden * int(la.get("head_dim", 0)),
    }
