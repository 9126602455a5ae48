"""Customer scenarios (workload profiles) and topology templates."""

from __future__ import annotations

from decimal import Decimal

from django.core.exceptions import ValidationError
from django.core.validators import MinValueValidator
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _
from simple_history.models import HistoricalRecords

from catalog.validators import single_line

from .base import SourcedModel


class TopologyKind(models.TextChoices):
    SINGLE = "single", _("single cluster")
    PRIMARY_STANDBY = "primary_standby", _("primary/standby high availability")
    TENANT_PAIR = "tenant_pair", _("tenant isolation / canary pair")
    DISAGGREGATED = "disaggregated", _("prefill/decode disaggregation (xPyD)")


class TopologyTemplate(SourcedModel):
    """A deployment shape the configurator offers, with its default node counts."""

    slug = models.SlugField(_("slug"), max_length=80, unique=True)
    kind = models.CharField(_("kind"), max_length=16, choices=TopologyKind.choices)
    name_en = models.CharField(_("name (English)"), max_length=120, validators=[single_line])
    name_zh = models.CharField(_("name (Chinese)"), max_length=120, validators=[single_line])
    description_en = models.TextField(_("description (English)"), blank=True)
    description_zh = models.TextField(_("description (Chinese)"), blank=True)
    default_nodes = models.PositiveSmallIntegerField(_("default nodes"), validators=[MinValueValidator(1)])
    prefill_nodes = models.PositiveSmallIntegerField(_("prefill nodes"), default=0)
    decode_nodes = models.PositiveSmallIntegerField(_("decode nodes"), default=0)
    sort_order = models.PositiveSmallIntegerField(_("order"), default=0)

    history = HistoricalRecords(excluded_fields=["seed_values"])
    extra_sourced_fields = ("kind",)

    class Meta:
        ordering = ["sort_order", "slug"]
        verbose_name = _("topology template")
        verbose_name_plural = _("topology templates")

    def __str__(self) -> str:
        return self.name_en

    def clean(self) -> None:
        errors: dict[str, list] = {}
        try:
            super().clean()
        except ValidationError as exc:
            errors.update(exc.update_error_dict({}))
        if self.kind == TopologyKind.DISAGGREGATED:
            if not self.prefill_nodes or not self.decode_nodes:
                errors.setdefault("prefill_nodes", []).append(
                    ValidationError(_("Disaggregation needs both prefill and decode nodes."))
                )
            elif self.default_nodes and self.prefill_nodes + self.decode_nodes != self.default_nodes:
                errors.setdefault("default_nodes", []).append(
                    ValidationError(
                        _("Prefill %(p)s + decode %(d)s = %(sum)s nodes, not %(n)s."),
                        params={
                            "p": self.prefill_nodes,
                            "d": self.decode_nodes,
                            "sum": self.prefill_nodes + self.decode_nodes,
                            "n": self.default_nodes,
                        },
                    )
                )
        elif self.prefill_nodes or self.decode_nodes:
            errors.setdefault("prefill_nodes", []).append(
                ValidationError(_("Only a disaggregated topology splits prefill and decode nodes."))
            )
        if self.kind in (TopologyKind.PRIMARY_STANDBY, TopologyKind.TENANT_PAIR) and self.default_nodes % 2:
            errors.setdefault("default_nodes", []).append(
                ValidationError(_("A pair of identical clusters needs an even number of nodes."))
            )
        if errors:
            raise ValidationError(errors)


class Scenario(SourcedModel):
    """A customer scenario: the pain, why the model fits, and a workload the configurator pre-fills."""

    slug = models.SlugField(_("slug"), max_length=80, unique=True)
    name_en = models.CharField(_("name (English)"), max_length=120, validators=[single_line])
    name_zh = models.CharField(_("name (Chinese)"), max_length=120, validators=[single_line])
    pain_en = models.TextField(_("pain (English)"), blank=True)
    pain_zh = models.TextField(_("pain (Chinese)"), blank=True)
    why_en = models.TextField(_("why this model (English)"), blank=True)
    why_zh = models.TextField(_("why this model (Chinese)"), blank=True)
    deployment_en = models.TextField(_("recommended deployment (English)"), blank=True)
    deployment_zh = models.TextField(_("recommended deployment (Chinese)"), blank=True)

    input_tokens = models.PositiveIntegerField(
        _("input tokens per request"), validators=[MinValueValidator(1)]
    )
    output_tokens = models.PositiveIntegerField(
        _("output tokens per request"), validators=[MinValueValidator(1)]
    )
    concurrency = models.PositiveIntegerField(_("concurrent requests"), validators=[MinValueValidator(1)])
    context = models.PositiveIntegerField(
        _("context length (max_model_len)"),
        validators=[MinValueValidator(1)],
        help_text=_("Tokens per sequence, input plus output: vLLM --max-model-len."),
    )
    needs_vision = models.BooleanField(_("needs image input"), default=False)
    availability_target = models.DecimalField(
        _("availability target"),
        max_digits=6,
        decimal_places=5,
        default=Decimal("0.995"),
        help_text=_("0.999 = 99.9 %."),
    )
    recommended_topology = models.ForeignKey(
        TopologyTemplate,
        verbose_name=_("recommended topology"),
        on_delete=models.PROTECT,
        related_name="scenarios",
    )
    recommended_nodes = models.PositiveSmallIntegerField(
        _("recommended nodes"), validators=[MinValueValidator(1)]
    )
    recommended_model = models.ForeignKey(
        "catalog.LlmModel",
        verbose_name=_("recommended model"),
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="scenarios",
    )
    recommended_server = models.ForeignKey(
        "catalog.ServerModel",
        verbose_name=_("recommended server"),
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="scenarios",
    )
    sort_order = models.PositiveSmallIntegerField(_("order"), default=0)
    is_active = models.BooleanField(_("offered in the configurator"), default=True)

    history = HistoricalRecords(excluded_fields=["seed_values"])
    extra_sourced_fields = ("needs_vision",)

    class Meta:
        ordering = ["sort_order", "slug"]
        verbose_name = _("scenario")
        verbose_name_plural = _("scenarios")
        constraints = [
            models.CheckConstraint(
                condition=Q(availability_target__gt=0) & Q(availability_target__lte=1),
                name="catalog_scenario_availability_fraction",
                violation_error_message=_("The availability target is a fraction between 0 and 1."),
            ),
        ]

    def __str__(self) -> str:
        return self.name_en

    def clean(self) -> None:
        errors: dict[str, list] = {}
        try:
            super().clean()
        except ValidationError as exc:
            errors.update(exc.update_error_dict({}))
        if self.availability_target is not None and not (0 < self.availability_target <= 1):
            errors.setdefault("availability_target", []).append(
                ValidationError(_("Give availability as a fraction: 0.999 for 99.9 %."))
            )
        if self.input_tokens and self.output_tokens and self.context:
            if self.input_tokens + self.output_tokens > self.context:
                errors.setdefault("context", []).append(
                    ValidationError(
                        _("Input %(i)s + output %(o)s tokens do not fit a context of %(c)s."),
                        params={"i": self.input_tokens, "o": self.output_tokens, "c": self.context},
                    )
                )
        if self.recommended_model_id and self.context:
            model = self.recommended_model
            if model.max_context and self.context > model.max_context:
                errors.setdefault("context", []).append(
                    ValidationError(
                        _("%(model)s supports at most %(max)s tokens."),
                        params={"model": model.name, "max": model.max_context},
                    )
                )
            if self.needs_vision and not model.has_vision:
                errors.setdefault("needs_vision", []).append(
                    ValidationError(_("%(model)s does not accept images."), params={"model": model.name})
                )
        if (
            self.recommended_topology_id
            and self.recommended_nodes
            and self.recommended_topology.kind in (TopologyKind.PRIMARY_STANDBY, TopologyKind.TENANT_PAIR)
            and self.recommended_nodes % 2
        ):
            errors.setdefault("recommended_nodes", []).append(
                ValidationError(_("A pair of identical clusters needs an even number of nodes."))
            )
        if errors:
            raise ValidationError(errors)
