"""Checkpoints: the published (or converted) weights of a model that a deployment loads.

A model can have several: Kimi K3's Hugging Face MXFP4 release runs on vLLM
and vLLM-Ascend; a ModelSlim W4A8 conversion runs only on vLLM-Ascend and
needs ``--quantization ascend``.  The plan sizes the checkpoint the request
names (or the model's default for the platform), the BOM's storage line
follows its bytes and the launch scripts its flags.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import models
from django.utils.translation import gettext_lazy as _
from simple_history.models import HistoricalRecords

from configurator.engine.placement import FLAG_PATTERN, REFUSED_FLAGS, VALUE_PATTERN, checkpoint_flag_problem

from .base import SourcedModel, chinese_name_field, non_negative
from .llm import ActivationFormat, LlmModel, WeightFormat

PLATFORMS = ("cuda", "ascend")
PARAM_GROUPS = ("router", "latent_moe", "mla_a", "kda_f_a")
# A launch flag is ``--name`` or a plain value: letters, digits and . _ - = : / , only.
_FLAG = FLAG_PATTERN  # one grammar for the catalog's and a request's checkpoint flags
_VALUE = VALUE_PATTERN


class Checkpoint(SourcedModel):
    model = models.ForeignKey(
        LlmModel, on_delete=models.CASCADE, related_name="checkpoints", verbose_name=_("model")
    )
    slug = models.SlugField(_("slug"), max_length=80, unique=True)
    name = models.CharField(_("name"), max_length=160)
    name_zh = chinese_name_field(160)
    hf_repo = models.CharField(_("where to download it"), max_length=200, blank=True)
    architecture = models.CharField(
        _("architecture (HF model_type)"),
        max_length=40,
        blank=True,
        help_text=_("Selects the platform placement rules (kimi_k3, deepseek_v3 …)."),
    )
    expert_bytes = models.BigIntegerField(_("routed-expert bytes"), default=0)
    non_expert_bytes = models.BigIntegerField(
        _("non-expert bytes"), default=0, help_text=_("Everything else, embeddings and vision included.")
    )
    embedding_bytes = models.BigIntegerField(_("embedding + lm_head bytes"), default=0)
    vision_bytes = models.BigIntegerField(_("vision tower bytes"), default=0)
    weight_format = models.CharField(
        _("expert weight format"), max_length=8, choices=WeightFormat.choices, default=WeightFormat.BF16
    )
    non_expert_format = models.CharField(
        _("non-expert weight format"), max_length=8, choices=WeightFormat.choices, default=WeightFormat.BF16
    )
    activation_format = models.CharField(
        _("activation format"), max_length=8, choices=ActivationFormat.choices, default=ActivationFormat.BF16
    )
    quant_method = models.CharField(
        _("quantisation method"),
        max_length=40,
        blank=True,
        help_text=_("As vLLM reads it: compressed-tensors, fp8, ascend (ModelSlim) …"),
    )
    platforms = models.JSONField(_("platforms"), default=list, help_text=_('e.g. ["cuda", "ascend"]'))
    default_for = models.JSONField(
        _("default on platforms"),
        default=list,
        blank=True,
        help_text=_("Platforms where this is the default."),
    )
    launch_flags = models.JSONField(_("extra vllm serve flags"), default=list, blank=True)
    param_groups = models.JSONField(
        _("platform-dependent parameter groups (elements)"), default=dict, blank=True
    )
    group_formats = models.JSONField(_("stored format of those groups"), default=dict, blank=True)
    notes = models.TextField(_("notes"), blank=True)

    history = HistoricalRecords(excluded_fields=["seed_values"])
    extra_sourced_fields = ("weight_format", "non_expert_format", "quant_method")

    class Meta:
        ordering = ("model__name", "name")
        verbose_name = _("checkpoint")
        verbose_name_plural = _("checkpoints")

    def __str__(self) -> str:
        return self.name

    @property
    def total_bytes(self) -> int:
        return (self.expert_bytes or 0) + (self.non_expert_bytes or 0)

    def clean(self) -> None:
        errors: dict[str, list] = {}
        try:
            super().clean()
        except ValidationError as exc:
            errors.update(exc.update_error_dict({}))
        non_negative(errors, self, ("expert_bytes", "non_expert_bytes", "embedding_bytes", "vision_bytes"))
        if self.total_bytes <= 0 and "expert_bytes" not in errors:
            errors.setdefault("non_expert_bytes", []).append(
                ValidationError(_("A checkpoint needs some bytes."), code="empty")
            )
        parts = (self.embedding_bytes or 0) + (self.vision_bytes or 0)
        if parts > (self.non_expert_bytes or 0):
            errors.setdefault("non_expert_bytes", []).append(
                ValidationError(_("Embeddings and vision are part of the non-expert bytes."), code="parts")
            )
        for name in ("platforms", "default_for"):
            value = getattr(self, name)
            if not isinstance(value, list) or any(p not in PLATFORMS for p in value):
                errors.setdefault(name, []).append(
                    ValidationError(_("A list of platforms: cuda, ascend."), code="platforms")
                )
        if isinstance(self.platforms, list) and not self.platforms:
            errors.setdefault("platforms", []).append(
                ValidationError(_("Name at least one platform."), code="platforms")
            )
        if isinstance(self.default_for, list) and isinstance(self.platforms, list):
            if set(self.default_for) - set(self.platforms):
                errors.setdefault("default_for", []).append(
                    ValidationError(_("A checkpoint can only be the default where it runs."), code="default")
                )
        flags = self.launch_flags
        if not isinstance(flags, list) or not all(
            isinstance(f, str) and (_FLAG.match(f) or _VALUE.match(f)) for f in flags
        ):
            errors.setdefault("launch_flags", []).append(
                ValidationError(
                    _('A list like ["--quantization", "ascend"]: flags and plain values only.'), code="flags"
                )
            )
        elif checkpoint_flag_problem(flags):  # the same grammar a request's inline checkpoint passes
            errors.setdefault("launch_flags", []).append(
                ValidationError(
                    _("Start with a flag, and leave out flags every launch leaves out (%(flags)s)."),
                    params={"flags": ", ".join(sorted(REFUSED_FLAGS))},
                    code="flags",
                )
            )
        groups = self.param_groups
        if not isinstance(groups, dict) or any(
            k not in PARAM_GROUPS or not isinstance(v, int) or isinstance(v, bool) or v < 0
            for k, v in groups.items()
        ):
            errors.setdefault("param_groups", []).append(
                ValidationError(
                    _("Element counts (whole numbers ≥ 0) of: router, latent_moe, mla_a, kda_f_a."),
                    code="groups",
                )
            )
        formats = self.group_formats
        known = {c for c, _label in WeightFormat.choices}
        if not isinstance(formats, dict) or any(
            k not in PARAM_GROUPS or v not in known for k, v in formats.items()
        ):
            errors.setdefault("group_formats", []).append(
                ValidationError(
                    _("Formats (bf16, int8 …) of: router, latent_moe, mla_a, kda_f_a."), code="formats"
                )
            )
        if errors:
            raise ValidationError(errors)
