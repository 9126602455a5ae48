"""Price lists with effective dates, and their items."""

from __future__ import annotations

from decimal import Decimal

from django.core.exceptions import ValidationError
from django.core.validators import MinValueValidator
from django.db import models
from django.db.models import F, Q
from django.utils.translation import gettext_lazy as _
from simple_history.models import HistoricalRecords

from catalog.validators import single_line

from .base import SourcedModel, chinese_name_field


def money(verbose, **kw) -> models.DecimalField:
    """Money: 16 digits, 2 decimals, never negative; the currency lives on the price list."""
    return models.DecimalField(
        verbose, max_digits=16, decimal_places=2, validators=[MinValueValidator(Decimal("0"))], **kw
    )


class PriceList(SourcedModel):
    """Prices in one currency for a period.  Lists of one currency never overlap in time,
    so exactly one list is in force on any date a quote is made."""

    slug = models.SlugField(_("slug"), max_length=80, unique=True)
    name = models.CharField(_("name"), max_length=120, validators=[single_line])
    name_zh = chinese_name_field()
    currency = models.CharField(_("currency"), max_length=3, default="CNY")
    effective_from = models.DateField(_("effective from"))
    effective_to = models.DateField(
        _("effective to"), null=True, blank=True, help_text=_("Inclusive; empty = open.")
    )
    usd_rate = models.DecimalField(
        _("exchange rate to USD"),
        max_digits=12,
        decimal_places=6,
        default=Decimal("1"),
        help_text=_("Units of this currency per US dollar (7.2 CNY per USD)."),
    )
    notes = models.TextField(_("notes"), blank=True)

    history = HistoricalRecords(excluded_fields=["seed_values"])

    class Meta:
        ordering = ["currency", "-effective_from"]
        verbose_name = _("price list")
        verbose_name_plural = _("price lists")
        constraints = [
            models.CheckConstraint(
                condition=Q(effective_to__isnull=True) | Q(effective_to__gte=F("effective_from")),
                name="catalog_pricelist_dates_ordered",
                violation_error_message=_("A price list cannot end before it starts."),
            ),
            models.CheckConstraint(
                condition=Q(usd_rate__gt=0),
                name="catalog_pricelist_usd_rate_positive",
                violation_error_message=_("The exchange rate must be positive."),
            ),
        ]

    def __str__(self) -> str:
        return self.label(self.name)

    def label(self, name: str) -> str:
        """``name`` (the list's name in the reader's language) with its currency and period."""
        end = self.effective_to.isoformat() if self.effective_to else "…"
        return f"{name} ({self.currency}, {self.effective_from.isoformat() if self.effective_from else '?'}–{end})"

    def in_force_on(self, day) -> bool:
        return self.effective_from <= day and (self.effective_to is None or day <= self.effective_to)

    def overlapping(self) -> models.QuerySet[PriceList]:
        """Other lists of the same currency whose effective dates overlap this one's."""
        qs = PriceList.objects.filter(currency=self.currency)
        if self.pk:
            qs = qs.exclude(pk=self.pk)
        qs = qs.filter(Q(effective_to__isnull=True) | Q(effective_to__gte=self.effective_from))
        if self.effective_to is not None:
            qs = qs.filter(effective_from__lte=self.effective_to)
        return qs

    def clean(self) -> None:
        errors: dict[str, list] = {}
        try:
            super().clean()
        except ValidationError as exc:
            errors.update(exc.update_error_dict({}))
        if self.currency and (len(self.currency) != 3 or not self.currency.isupper()):
            errors.setdefault("currency", []).append(
                ValidationError(_("Use a three-letter ISO code such as CNY."))
            )
        if self.usd_rate is not None and self.usd_rate <= 0:
            errors.setdefault("usd_rate", []).append(
                ValidationError(_("The exchange rate must be positive."))
            )
        if self.effective_from and self.effective_to and self.effective_to < self.effective_from:
            errors.setdefault("effective_to", []).append(
                ValidationError(_("A price list cannot end before it starts."), code="dates_order")
            )
        elif self.effective_from and self.currency:
            clash = self.overlapping().first()
            if clash is not None:
                errors.setdefault("effective_from", []).append(
                    ValidationError(
                        _(
                            "These dates overlap “%(other)s”: only one %(currency)s price list may be in force on a day."
                        ),
                        params={"other": str(clash), "currency": self.currency},
                        code="overlap",
                    )
                )
        if errors:
            raise ValidationError(errors)


class PriceKind(models.TextChoices):
    SERVER = "server", _("server")
    SWITCH = "switch", _("switch")
    OPTICS = "optics", _("optics and cables")
    RACK = "rack", _("rack and PDUs")
    SOFTWARE = "software", _("software and support")
    INSTALL = "install", _("installation")
    OM = "om", _("operations and maintenance")
    LEASE = "lease", _("lease")
    OTHER = "other", _("other")


class PriceUnit(models.TextChoices):
    EACH = "each", _("each")
    PER_NODE = "per_node", _("per node")
    PER_NODE_YEAR = "per_node_year", _("per node-year")
    PER_NODE_MONTH = "per_node_month", _("per node-month")
    PER_RACK = "per_rack", _("per rack")
    LUMP_SUM = "lump_sum", _("lump sum")


class PriceItem(SourcedModel):
    """One priced unit on a list: a server, switch, optic, rack, service or lease.

    ``item_slug`` names the catalog row it prices (a server or switch slug);
    ``lease_per_month`` is the monthly rent where the item can be leased.
    """

    price_list = models.ForeignKey(
        PriceList, verbose_name=_("price list"), on_delete=models.CASCADE, related_name="items"
    )
    sku = models.CharField(_("SKU"), max_length=80, validators=[single_line])
    kind = models.CharField(_("kind"), max_length=10, choices=PriceKind.choices)
    item_slug = models.SlugField(
        _("catalog item"),
        max_length=80,
        blank=True,
        help_text=_("Slug of the server, switch or rack priced."),
    )
    description = models.CharField(
        _("description (English)"), max_length=200, blank=True, validators=[single_line]
    )
    description_zh = models.CharField(
        _("description (Chinese)"), max_length=200, blank=True, validators=[single_line]
    )
    unit = models.CharField(_("unit"), max_length=16, choices=PriceUnit.choices, default=PriceUnit.EACH)
    unit_price = money(_("unit price"))
    lease_per_month = money(_("lease per month"), null=True, blank=True)
    source = models.CharField(
        _("source"), max_length=200, blank=True, help_text=_("Where the price comes from.")
    )

    history = HistoricalRecords(excluded_fields=["seed_values"])
    extra_sourced_fields = ()

    class Meta:
        ordering = ["price_list", "kind", "sku"]
        verbose_name = _("price item")
        verbose_name_plural = _("price items")
        constraints = [
            models.UniqueConstraint(
                fields=["price_list", "sku"], name="catalog_priceitem_unique_sku_per_list"
            ),
            models.CheckConstraint(
                condition=Q(unit_price__gte=0),
                name="catalog_priceitem_unit_price_non_negative",
                violation_error_message=_("Prices cannot be negative."),
            ),
            models.CheckConstraint(
                condition=Q(lease_per_month__isnull=True) | Q(lease_per_month__gte=0),
                name="catalog_priceitem_lease_non_negative",
                violation_error_message=_("Prices cannot be negative."),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.sku} ({self.get_kind_display()})"

    @property
    def currency(self) -> str:
        return self.price_list.currency

    def clean(self) -> None:
        errors: dict[str, list] = {}
        try:
            super().clean()
        except ValidationError as exc:
            errors.update(exc.update_error_dict({}))
        for name in ("unit_price", "lease_per_month"):
            value = getattr(self, name)
            if value is not None and value < 0:
                errors.setdefault(name, []).append(
                    ValidationError(_("Prices cannot be negative."), code="negative")
                )
        if errors:
            raise ValidationError(errors)
