"""Data-centre site profiles: supply, derating, PUE, electricity and space prices."""

from __future__ import annotations

from decimal import Decimal

from django.core.exceptions import ValidationError
from django.core.validators import MinValueValidator
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _
from simple_history.models import HistoricalRecords

from catalog.validators import single_line

from .base import SourcedModel, chinese_name_field, non_negative

# IEC 60898 / 60947 rated currents used to pick a breaker (A).
DEFAULT_BREAKER_LADDER = [
    16,
    20,
    25,
    32,
    40,
    50,
    63,
    80,
    100,
    125,
    160,
    200,
    225,
    250,
    315,
    400,
    500,
    630,
    800,
    1000,
    1250,
    1600,
]


def default_breaker_ladder() -> list[int]:
    return list(DEFAULT_BREAKER_LADDER)


class SiteProfile(SourcedModel):
    """The customer's data-centre hall as the power and TCO sizing sees it."""

    slug = models.SlugField(_("slug"), max_length=80, unique=True)
    name = models.CharField(_("name"), max_length=120, validators=[single_line])
    name_zh = chinese_name_field()
    voltage_ll = models.DecimalField(
        _("line-to-line voltage (V)"),
        max_digits=6,
        decimal_places=1,
        default=Decimal("380"),
        validators=[MinValueValidator(Decimal("0"))],
    )
    phases = models.PositiveSmallIntegerField(
        _("phases"), default=3, choices=[(1, _("single-phase")), (3, _("three-phase"))]
    )
    power_factor = models.DecimalField(
        _("power factor"), max_digits=4, decimal_places=3, default=Decimal("0.95")
    )
    continuous_derating = models.DecimalField(
        _("continuous-load derating"),
        max_digits=4,
        decimal_places=3,
        default=Decimal("0.8"),
        help_text=_("Share of a breaker's rating it may carry continuously (80 % rule)."),
    )
    pue = models.DecimalField(_("PUE"), max_digits=4, decimal_places=2, default=Decimal("1.3"))
    electricity_price_per_kwh = models.DecimalField(
        _("electricity price per kWh"),
        max_digits=16,
        decimal_places=4,
        default=Decimal("0.65"),
        validators=[MinValueValidator(Decimal("0"))],
    )
    colocation_per_rack_month = models.DecimalField(
        _("colocation per rack-month"),
        max_digits=16,
        decimal_places=2,
        default=Decimal("0"),
        validators=[MinValueValidator(Decimal("0"))],
    )
    air_cooling_kw_limit = models.DecimalField(
        _("air-cooling limit per rack (kW)"),
        max_digits=6,
        decimal_places=2,
        default=Decimal("25"),
        validators=[MinValueValidator(Decimal("0"))],
    )
    floor_load_kg_m2 = models.PositiveIntegerField(
        _("floor rating (kg/m²)"),
        default=0,
        help_text=_("Distributed load the hall's (raised) floor carries; 0 = not known (not compared)."),
    )
    currency = models.CharField(_("currency"), max_length=3, default="CNY")
    breaker_ladder_amps = models.JSONField(
        _("breaker ratings (A)"),
        default=default_breaker_ladder,
        blank=True,
        help_text=_("Rated currents to choose a breaker from, ascending."),
    )
    is_default = models.BooleanField(_("default site"), default=False)
    notes = models.TextField(_("notes"), blank=True)

    history = HistoricalRecords(excluded_fields=["seed_values"])

    class Meta:
        ordering = ["-is_default", "name"]
        verbose_name = _("site profile")
        verbose_name_plural = _("site profiles")
        constraints = [
            models.UniqueConstraint(
                fields=["is_default"], condition=Q(is_default=True), name="catalog_siteprofile_single_default"
            ),
            models.CheckConstraint(
                condition=Q(pue__gte=1),
                name="catalog_siteprofile_pue_at_least_one",
                violation_error_message=_("PUE is at least 1."),
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        errors: dict[str, list] = {}
        try:
            super().clean()
        except ValidationError as exc:
            errors.update(exc.update_error_dict({}))
        non_negative(
            errors,
            self,
            ("voltage_ll", "electricity_price_per_kwh", "colocation_per_rack_month", "air_cooling_kw_limit"),
        )
        if self.voltage_ll is not None and self.voltage_ll <= 0 and "voltage_ll" not in errors:
            errors["voltage_ll"] = [ValidationError(_("The supply voltage must be positive."))]
        for name in ("power_factor", "continuous_derating"):
            value = getattr(self, name)
            if value is not None and not (0 < value <= 1):
                errors.setdefault(name, []).append(ValidationError(_("Must be above 0 and at most 1.")))
        if self.pue is not None and self.pue < 1:
            errors.setdefault("pue", []).append(
                ValidationError(_("PUE is at least 1 (facility ÷ IT power)."))
            )
        ladder = self.breaker_ladder_amps
        if ladder not in (None, []):
            if (
                not isinstance(ladder, list)
                or not all(isinstance(a, int) and a > 0 for a in ladder)
                or ladder != sorted(ladder)
            ):
                errors.setdefault("breaker_ladder_amps", []).append(
                    ValidationError(
                        _("Give the breaker ratings as ascending positive whole amps, e.g. [16, 20, 25].")
                    )
                )
        if self.currency and (len(self.currency) != 3 or not self.currency.isupper()):
            errors.setdefault("currency", []).append(
                ValidationError(_("Use a three-letter ISO code such as CNY."))
            )
        if errors:
            raise ValidationError(errors)
