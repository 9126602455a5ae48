"""Speculative drafts: the MTP heads and draft models a target model is served with.

vLLM's ``--speculative-config`` (``vllm/config/speculative.py`` ``SpeculativeConfig``) names a method
and, for a separate draft, its weights.  A row here is one such draft for one catalog model, with
what the plan needs to charge it: its weights and layers (memory and the draft's step cost), its KV
heads (the draft's layers join the KV cache), the acceptance its source published at its token count,
and the first engine versions that run it.  An MTP head ships inside the target's checkpoint
(``num_nextn_predict_layers``): its bytes are counted there, so its ``weight_bytes`` is 0.
"""

from __future__ import annotations

import re

from django.core.exceptions import ValidationError
from django.db import models
from django.utils.translation import gettext_lazy as _
from simple_history.models import HistoricalRecords

from .base import SourcedModel, non_negative
from .llm import LlmModel

PLATFORMS = ("cuda", "ascend")
ENGINES = ("vllm", "vllm-ascend")
_HARDWARE = re.compile(r"^[a-z0-9][a-z0-9-]{0,19}$")
_VERSION = re.compile(r"^\d+\.\d+(\.\d+)?$")
_REPO = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}/[A-Za-z0-9][A-Za-z0-9._-]{0,95}$")


class SpeculativeMethod(models.TextChoices):
    """vLLM's ``SpeculativeMethod`` values a catalog draft can carry."""

    MTP = "mtp", _("MTP head")
    DRAFT_MODEL = "draft_model", _("draft model")
    EAGLE = "eagle", _("EAGLE head")
    EAGLE3 = "eagle3", _("EAGLE-3 head")
    DSPARK = "dspark", _("DSpark draft")


class SpeculativeDraft(SourcedModel):
    target = models.ForeignKey(
        LlmModel, on_delete=models.CASCADE, related_name="drafts", verbose_name=_("target model")
    )
    slug = models.SlugField(_("slug"), max_length=80, unique=True)
    name = models.CharField(_("name"), max_length=160)
    method = models.CharField(_("method"), max_length=16, choices=SpeculativeMethod.choices)
    hf_repo = models.CharField(
        _("where to download it"),
        max_length=200,
        blank=True,
        help_text=_("The repository --speculative-config names as its model (empty for an MTP head)."),
    )
    parameters = models.BigIntegerField(_("parameters"), default=0)
    weight_bytes = models.BigIntegerField(
        _("weight bytes"),
        default=0,
        help_text=_("0 for an MTP head: its layer is in the target's checkpoint."),
    )
    num_layers = models.PositiveIntegerField(_("layers"), default=1)
    num_kv_heads = models.PositiveIntegerField(
        _("KV heads"), default=0, help_text=_("0: the target's own attention layer (an MTP head).")
    )
    head_dim = models.PositiveIntegerField(_("head dimension"), default=0)
    num_speculative_tokens = models.PositiveIntegerField(_("speculative tokens"), default=1)
    acceptance_rate = models.DecimalField(
        _("draft acceptance rate"),
        max_digits=5,
        decimal_places=4,
        help_text=_("Accepted ÷ drafted tokens as vLLM reports it, at the published token count."),
    )
    platforms = models.JSONField(
        _("runs on"),
        default=list,
        help_text=_('Platforms or accelerator generations with a published run, e.g. ["a3"] or ["cuda"].'),
    )
    min_versions = models.JSONField(
        _("first engine versions"),
        default=dict,
        blank=True,
        help_text=_('The first version of each engine that runs it, e.g. {"vllm-ascend": "0.26.0"}.'),
    )
    eager_on = models.JSONField(
        _("eager draft on"),
        default=list,
        blank=True,
        help_text=_("Platforms whose published runs keep the draft out of graph capture."),
    )
    notes = models.TextField(_("notes"), blank=True)

    history = HistoricalRecords(excluded_fields=["seed_values"])
    extra_sourced_fields = ("method", "hf_repo")

    class Meta:
        ordering = ("target__name", "name")
        verbose_name = _("speculative draft")
        verbose_name_plural = _("speculative drafts")

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        errors: dict[str, list] = {}
        try:
            super().clean()
        except ValidationError as exc:
            errors.update(exc.update_error_dict({}))
        non_negative(errors, self, ("parameters", "weight_bytes"))
        if self.acceptance_rate is not None and not 0 <= self.acceptance_rate <= 1:
            errors.setdefault("acceptance_rate", []).append(
                ValidationError(_("A rate between 0 and 1."), code="range")
            )
        if self.method != SpeculativeMethod.MTP and (self.weight_bytes or 0) <= 0:
            errors.setdefault("weight_bytes", []).append(
                ValidationError(_("A draft model has weights of its own."), code="weights")
            )
        if self.hf_repo and not _REPO.match(self.hf_repo):
            errors.setdefault("hf_repo", []).append(
                ValidationError(_("A repository as owner/name."), code="repo")
            )
        value = self.platforms
        if (
            not isinstance(value, list)
            or not value
            or any(not isinstance(p, str) or not _HARDWARE.match(p) for p in value)
        ):
            errors.setdefault("platforms", []).append(
                ValidationError(
                    _("A list of platforms (cuda, ascend) or accelerator generations (a3, hopper …)."),
                    code="platforms",
                )
            )
        if not isinstance(self.eager_on, list) or any(p not in PLATFORMS for p in self.eager_on):
            errors.setdefault("eager_on", []).append(
                ValidationError(_("A list of platforms: cuda, ascend."), code="platforms")
            )
        versions = self.min_versions
        if not isinstance(versions, dict) or any(
            k not in ENGINES or not isinstance(v, str) or not _VERSION.match(v) for k, v in versions.items()
        ):
            errors.setdefault("min_versions", []).append(
                ValidationError(
                    _('Versions by engine (vllm, vllm-ascend), e.g. {"vllm-ascend": "0.26.0"}.'),
                    code="versions",
                )
            )
        if errors:
            raise ValidationError(errors)
