"""Large language models: architecture, weights, serving flags and API prices."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.core.validators import MinValueValidator
from django.db import models
from django.db.models import F, Q
from django.utils.translation import gettext_lazy as _
from simple_history.models import HistoricalRecords

from catalog.validators import single_line

from .base import SourcedModel, non_negative


class WeightFormat(models.TextChoices):
    BF16 = "bf16", "BF16"
    FP16 = "fp16", "FP16"
    FP32 = "fp32", "FP32"
    FP8 = "fp8", "FP8"
    INT8 = "int8", "INT8"
    W8A8 = "w8a8", "W8A8"
    W4A8 = "w4a8", "W4A8"
    INT4 = "int4", "INT4"
    MXFP4 = "mxfp4", "MXFP4"
    NVFP4 = "nvfp4", "NVFP4"


class ActivationFormat(models.TextChoices):
    BF16 = "bf16", "BF16"
    FP16 = "fp16", "FP16"
    FP8 = "fp8", "FP8"
    MXFP8 = "mxfp8", "MXFP8"
    INT8 = "int8", "INT8"


_COUNT_FIELDS = (
    "total_params",
    "active_params",
    "num_layers",
    "hidden_size",
    "vocab_size",
    "num_attention_heads",
    "num_kv_heads",
    "head_dim",
    "gqa_layers",
    "mla_layers",
    "linear_layers",
    "sliding_layers",
    "sliding_window",
    "kv_lora_rank",
    "qk_rope_head_dim",
    "index_head_dim",
    "index_topk",
    "index_n_heads",
    "linear_num_heads",
    "linear_head_dim",
    "linear_conv_kernel",
    "linear_conv_dim",
    "linear_state_dtype_bytes",
    "linear_conv_dtype_bytes",
    "num_experts",
    "experts_per_token",
    "shared_experts",
    "moe_layers",
    "expert_weight_bytes",
    "non_expert_weight_bytes",
    "max_context",
    "vision_params",
    "vision_bytes",
    "api_price_input_per_m",
    "api_price_output_per_m",
)


def _count(verbose: str, help_text: str = "", big: bool = False) -> models.Field:
    cls = models.BigIntegerField if big else models.IntegerField
    return cls(verbose, default=0, validators=[MinValueValidator(0)], help_text=help_text)


class LlmModel(SourcedModel):
    """An LLM release as served: its architecture, the weights on disk and how vLLM runs it.

    Layer counts by attention type add up to ``num_layers``; weights are split
    into routed-expert bytes (divided by expert parallelism) and the rest
    (divided by tensor parallelism).  Mirrors ``engine.types.ModelSpec``.
    """

    slug = models.SlugField(_("slug"), max_length=80, unique=True)
    name = models.CharField(_("name"), max_length=120, validators=[single_line])
    family = models.CharField(_("family"), max_length=60, blank=True, validators=[single_line])
    hf_model_id = models.CharField(
        _("Hugging Face model id"), max_length=200, blank=True, validators=[single_line]
    )
    recipe_family = models.SlugField(
        _("launch-recipe family"),
        max_length=40,
        blank=True,
        help_text=_(
            "The model family the launch recipes are written for (kimi-k3, kimi-k2, deepseek, qwen3, llama …); "
            "empty: the generic recipe."
        ),
    )
    is_active = models.BooleanField(_("offered in the configurator"), default=True)

    total_params = _count(
        _("total parameters"), _("Every weight vLLM loads, vision tower included."), big=True
    )
    active_params = _count(
        _("active parameters"),
        _("Weights one token's forward pass multiplies by (no input embedding)."),
        big=True,
    )
    num_layers = _count(_("layers"))
    hidden_size = _count(_("hidden size"))
    vocab_size = _count(_("vocabulary size"))
    num_attention_heads = _count(_("attention heads"))
    num_kv_heads = _count(_("KV heads"))
    head_dim = _count(_("head dimension"))

    gqa_layers = _count(_("full-attention (MHA/GQA) layers"))
    mla_layers = _count(_("MLA layers"))
    linear_layers = _count(_("linear-attention layers"), _("KDA / Gated DeltaNet / Mamba-style fixed state."))
    sliding_layers = _count(_("sliding-window layers"))
    sliding_window = _count(_("sliding window (tokens)"))
    kv_lora_rank = _count(_("MLA KV LoRA rank"))
    qk_rope_head_dim = _count(_("MLA rotary key dimension"))
    index_head_dim = _count(
        _("sparse-attention indexer key dimension"),
        _(
            "DeepSeek sparse attention (DeepSeek-V3.2, GLM-5): the lightning indexer caches one key of this "
            "width per token and MLA layer beside the latent; 0 for dense attention."
        ),
    )
    index_topk = _count(
        _("sparse-attention top-k tokens"),
        _(
            "DeepSeek sparse attention: each query attends to this many tokens the indexer selects, so a "
            "decode step reads this many latents per sequence and layer (plus every indexer key); 0 for "
            "dense attention."
        ),
    )
    index_n_heads = _count(_("sparse-attention indexer heads"))

    linear_num_heads = _count(_("linear-attention heads"))
    linear_head_dim = _count(_("linear-attention head dimension"))
    linear_conv_kernel = _count(_("short-convolution kernel"))
    linear_conv_dim = _count(_("short-convolution channels"))
    linear_state_dtype_bytes = models.PositiveSmallIntegerField(
        _("recurrent state bytes per value"), default=4
    )
    linear_conv_dtype_bytes = models.PositiveSmallIntegerField(
        _("convolution state bytes per value"), default=2
    )

    num_experts = _count(_("routed experts"))
    experts_per_token = _count(_("experts per token"))
    shared_experts = _count(_("shared experts"))
    moe_layers = _count(_("MoE layers"))
    expert_weight_bytes = _count(_("routed-expert weight bytes"), big=True)
    non_expert_weight_bytes = _count(_("non-expert weight bytes"), _("Includes the vision tower."), big=True)
    weight_format = models.CharField(
        _("weight format"), max_length=8, choices=WeightFormat.choices, default=WeightFormat.BF16
    )
    activation_format = models.CharField(
        _("activation format"), max_length=8, choices=ActivationFormat.choices, default=ActivationFormat.BF16
    )
    max_context = _count(_("maximum context (tokens)"))

    has_vision = models.BooleanField(_("accepts images"), default=False)
    tie_word_embeddings = models.BooleanField(
        _("LM head tied to the input embedding"),
        default=False,
        help_text=_(
            "config.json tie_word_embeddings: one vocabulary matrix serves as input embedding and LM head. "
            "Untied, the input embedding is a second table that decoding looks rows up in and never reads whole."
        ),
    )
    vision_params = _count(_("vision parameters"), _("Vision tower and projector."), big=True)
    vision_bytes = _count(_("vision weight bytes"), big=True)

    api_price_input_per_m = models.DecimalField(
        _("API price, input per million tokens"),
        max_digits=16,
        decimal_places=4,
        null=True,
        blank=True,
        validators=[MinValueValidator(0)],
    )
    api_price_output_per_m = models.DecimalField(
        _("API price, output per million tokens"),
        max_digits=16,
        decimal_places=4,
        null=True,
        blank=True,
        validators=[MinValueValidator(0)],
    )
    api_price_cached_input_per_m = models.DecimalField(
        _("API price, cached input per million tokens"),
        max_digits=16,
        decimal_places=4,
        null=True,
        blank=True,
        validators=[MinValueValidator(0)],
        help_text=_("The API's price for input tokens served from its context cache, if it has one."),
    )
    api_price_currency = models.CharField(_("API price currency"), max_length=3, default="USD")
    licence_note = models.TextField(_("licence note"), blank=True)

    vllm_tokenizer_mode = models.CharField(
        _("vLLM --tokenizer-mode"), max_length=40, blank=True, validators=[single_line]
    )
    vllm_reasoning_parser = models.CharField(
        _("vLLM --reasoning-parser"), max_length=40, blank=True, validators=[single_line]
    )
    vllm_tool_call_parser = models.CharField(
        _("vLLM --tool-call-parser"), max_length=40, blank=True, validators=[single_line]
    )
    validated_text_only_on = models.ManyToManyField(
        "catalog.ServerModel",
        verbose_name=_("validated text-only on"),
        blank=True,
        related_name="text_only_models",
        help_text=_("Servers where serving this model was validated for text input only."),
    )
    source_notes = models.TextField(_("source notes"), blank=True)

    history = HistoricalRecords(excluded_fields=["seed_values"])
    extra_sourced_fields = (
        "weight_format",
        "activation_format",
        "has_vision",
        "tie_word_embeddings",
        "recipe_family",
    )

    class Meta:
        ordering = ["family", "name"]
        verbose_name = _("LLM")
        verbose_name_plural = _("LLMs")
        constraints = [
            models.CheckConstraint(
                condition=Q(experts_per_token__lte=F("num_experts")),
                name="catalog_llm_experts_per_token_lte_experts",
                violation_error_message=_("Experts per token cannot exceed the routed experts."),
            ),
            models.CheckConstraint(
                condition=Q(active_params__lte=F("total_params")),
                name="catalog_llm_active_lte_total",
                violation_error_message=_("Active parameters cannot exceed total parameters."),
            ),
        ]

    def __str__(self) -> str:
        return self.name

    # ---------------------------------------------------------------- derived, for display

    @property
    def weight_bytes(self) -> int:
        return self.expert_weight_bytes + self.non_expert_weight_bytes

    @property
    def is_moe(self) -> bool:
        return self.num_experts > 0

    @property
    def kv_bytes_per_token_bf16(self) -> int:
        """Whole-model KV bytes per token at 2 bytes per value, TP = 1 (display only; the engine sizes)."""
        gqa = (self.gqa_layers + self.sliding_layers) * 2 * self.num_kv_heads * self.head_dim * 2
        mla = self.mla_layers * (self.kv_lora_rank + self.qk_rope_head_dim + self.index_head_dim) * 2
        return gqa + mla

    # ---------------------------------------------------------------- validation

    def clean(self) -> None:
        errors: dict[str, list] = {}
        try:
            super().clean()
        except ValidationError as exc:
            errors.update(exc.update_error_dict({}))
        non_negative(errors, self, _COUNT_FIELDS)

        layer_sum = self.gqa_layers + self.mla_layers + self.linear_layers + self.sliding_layers
        if self.num_layers and layer_sum != self.num_layers:
            errors.setdefault("num_layers", []).append(
                ValidationError(
                    _(
                        "Layers by type add up to %(sum)s (full %(gqa)s + MLA %(mla)s + linear %(lin)s + "
                        "sliding %(sw)s), not %(layers)s."
                    ),
                    params={
                        "sum": layer_sum,
                        "gqa": self.gqa_layers,
                        "mla": self.mla_layers,
                        "lin": self.linear_layers,
                        "sw": self.sliding_layers,
                        "layers": self.num_layers,
                    },
                    code="layer_sum",
                )
            )
        if self.num_layers <= 0:
            errors.setdefault("num_layers", []).append(
                ValidationError(_("A model has at least one layer."), code="no_layers")
            )
        if self.sliding_layers and self.sliding_window <= 0:
            errors.setdefault("sliding_window", []).append(
                ValidationError(_("Sliding-window layers need the window size."), code="no_window")
            )
        # DeepSeek sparse attention: the indexer's three figures come together (vLLM's Indexer reads
        # index_topk, index_n_heads and index_head_dim of the config), and top-k is a token count no
        # larger than the context (or 2**20 when the context is not stated).
        sparse = (self.index_topk, self.index_n_heads, self.index_head_dim)
        if any(sparse) and not all(v > 0 for v in sparse):
            errors.setdefault("index_topk", []).append(
                ValidationError(
                    _("Sparse attention needs its top-k, indexer heads and indexer key dimension together."),
                    code="dsa_fields",
                )
            )
        topk_limit = self.max_context if self.max_context > 0 else 2**20
        if self.index_topk > topk_limit:
            errors.setdefault("index_topk", []).append(
                ValidationError(
                    _("The sparse-attention top-k (%(topk)s) exceeds the context (%(limit)s tokens)."),
                    params={"topk": f"{self.index_topk:,}", "limit": f"{topk_limit:,}"},
                    code="dsa_topk",
                )
            )
        if self.mla_layers and (self.kv_lora_rank <= 0 or self.qk_rope_head_dim <= 0):
            errors.setdefault("kv_lora_rank", []).append(
                ValidationError(
                    _("MLA layers need the KV LoRA rank and rotary key dimension."), code="mla_dims"
                )
            )
        if (self.gqa_layers or self.sliding_layers) and (self.num_kv_heads <= 0 or self.head_dim <= 0):
            errors.setdefault("num_kv_heads", []).append(
                ValidationError(_("Attention layers need KV heads and a head dimension."), code="gqa_dims")
            )
        if self.num_kv_heads and self.num_attention_heads and self.num_attention_heads % self.num_kv_heads:
            errors.setdefault("num_kv_heads", []).append(
                ValidationError(_("KV heads must divide the attention heads."), code="kv_heads_divide")
            )
        if self.linear_layers and (self.linear_num_heads <= 0 or self.linear_head_dim <= 0):
            errors.setdefault("linear_num_heads", []).append(
                ValidationError(
                    _("Linear-attention layers need their heads and head dimension."), code="linear"
                )
            )

        moe_declared = self.moe_layers > 0 or self.experts_per_token > 0 or self.expert_weight_bytes > 0
        if self.num_experts <= 0 and moe_declared:
            errors.setdefault("num_experts", []).append(
                ValidationError(
                    _(
                        "This model is declared mixture-of-experts (MoE layers, experts per token or expert "
                        "weights are set) but has no routed experts."
                    ),
                    code="moe_without_experts",
                )
            )
        if self.num_experts > 0:
            if self.experts_per_token <= 0:
                errors.setdefault("experts_per_token", []).append(
                    ValidationError(_("A mixture-of-experts model routes each token to at least one expert."))
                )
            elif self.experts_per_token > self.num_experts:
                errors.setdefault("experts_per_token", []).append(
                    ValidationError(
                        _("Experts per token (%(k)s) cannot exceed the routed experts (%(n)s)."),
                        params={"k": self.experts_per_token, "n": self.num_experts},
                    )
                )
            if self.moe_layers <= 0 or (self.num_layers and self.moe_layers > self.num_layers):
                errors.setdefault("moe_layers", []).append(
                    ValidationError(_("MoE layers must be between 1 and the number of layers."))
                )
        if self.active_params > self.total_params:
            errors.setdefault("active_params", []).append(
                ValidationError(_("Active parameters cannot exceed total parameters."))
            )
        if self.has_vision and self.vision_params <= 0:
            errors.setdefault("vision_params", []).append(
                ValidationError(_("A model that accepts images needs its vision parameters."))
            )
        if self.vision_bytes > self.non_expert_weight_bytes:
            errors.setdefault("vision_bytes", []).append(
                ValidationError(
                    _("Vision weights are part of the non-expert weights and cannot exceed them.")
                )
            )
        if errors:
            raise ValidationError(errors)
