"""What makes a proposal signable: who sells (the seller profile) and on what terms (per quote).

The seller profile is one row kept in the admin (company, logo, contact,
signer).  :class:`QuoteTerms` holds a quote's commercial terms (VAT rates,
payment milestones, delivery, warranty and support, acceptance criteria,
exclusions); a quote without a row of its own gets the defaults of
:func:`proposals.terms.terms_for` — the customary terms of a server sale in
China (VAT 13 % on goods and 6 % on services; 30 % on signing, 60 % on
delivery, 10 % on acceptance; see docs/domain.md).
"""

from __future__ import annotations

from decimal import Decimal

from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.utils.translation import gettext_lazy as _

LOGO_MAX_BYTES = 512 * 1024
LOGO_SIGNATURES = {b"\x89PNG\r\n\x1a\n": "image/png", b"\xff\xd8\xff": "image/jpeg"}
RATE = {"max_digits": 5, "decimal_places": 4}
CONTROL_CHARS = {chr(c) for c in range(32) if chr(c) not in "\n\t"} | {chr(127)}


def no_control_chars(value: str) -> None:
    """Printed text holds no control characters (line breaks and tabs excepted)."""
    if any(ch in CONTROL_CHARS for ch in str(value)):
        raise ValidationError(_("Remove the control characters from this text."))


def logo_kind(data: bytes) -> str | None:
    """The MIME type of a PNG or JPEG logo from its first bytes, or None for anything else."""
    for signature, kind in LOGO_SIGNATURES.items():
        if data.startswith(signature):
            return kind
    return None


def validate_logo(upload) -> None:
    """A logo is a PNG or JPEG file of at most 512 KB (the PDF embeds it; nothing else is fetched)."""
    if upload.size > LOGO_MAX_BYTES:
        raise ValidationError(_("The logo is larger than 512 KB; upload a smaller PNG or JPEG."))
    position = upload.tell() if hasattr(upload, "tell") else 0
    head = upload.read(16)
    upload.seek(position)
    if logo_kind(head) is None:
        raise ValidationError(_("The logo must be a PNG or JPEG image."))


def _text(name: str, max_length: int = 200, **kwargs) -> models.CharField:
    return models.CharField(name, max_length=max_length, blank=True, validators=[no_control_chars], **kwargs)


class SellerProfile(models.Model):
    """The selling company as it appears on the cover, the terms and the signature page."""

    company_en = _text(_("company (English)"))
    company_zh = _text(_("company (Chinese)"))
    address_en = _text(_("address (English)"), 300)
    address_zh = _text(_("address (Chinese)"), 300)
    contact_name = _text(_("contact person"), 100)
    contact_phone = _text(_("contact phone"), 50)
    contact_email = models.EmailField(_("contact e-mail"), blank=True)
    signer_name = _text(_("authorised signer"), 100)
    signer_title_en = _text(_("signer's title (English)"), 100)
    signer_title_zh = _text(_("signer's title (Chinese)"), 100)
    logo = models.FileField(
        _("logo (PNG or JPEG)"), upload_to="seller/", blank=True, validators=[validate_logo]
    )
    is_demo = models.BooleanField(
        _("demo data"),
        default=False,
        help_text=_(
            "Sample data to start from: every proposal's cover says so until the profile is edited here."
        ),
    )
    updated_at = models.DateTimeField(_("updated"), auto_now=True)

    class Meta:
        verbose_name = _("seller profile")
        verbose_name_plural = _("seller profile")

    def __str__(self) -> str:
        return self.company_zh or self.company_en or str(_("seller profile"))

    @classmethod
    def current(cls) -> SellerProfile | None:
        """The profile the proposals print (the most recently edited one), or None."""
        return cls.objects.order_by("-updated_at", "-id").first()


class SupportLevel(models.TextChoices):
    NBD = "5x8-nbd", _("5×8, next-business-day on-site")
    H4 = "7x24-4h", _("7×24, 4-hour on-site")
    H2 = "7x24-2h", _("7×24, 2-hour on-site with spare parts kept on site")


class ServicesBilling(models.TextChoices):
    QUARTER = "quarter", _("quarterly in arrears")
    YEAR = "year", _("yearly in arrears")


class QuoteTerms(models.Model):
    """One quote's commercial terms; every field has the customary default."""

    quote = models.OneToOneField(
        "quotes.Quote", verbose_name=_("quote"), on_delete=models.CASCADE, related_name="terms"
    )
    vat_rate_goods = models.DecimalField(
        _("VAT rate on goods"),
        **RATE,
        default=Decimal("0.13"),
        validators=[MinValueValidator(Decimal("0")), MaxValueValidator(Decimal("0.5"))],
        help_text=_("China: 13 percent on hardware and software products."),
    )
    vat_rate_services = models.DecimalField(
        _("VAT rate on services"),
        **RATE,
        default=Decimal("0.06"),
        validators=[MinValueValidator(Decimal("0")), MaxValueValidator(Decimal("0.5"))],
        help_text=_("China: 6 percent on software support and operations (modern services)."),
    )
    vat_rate_installation = models.DecimalField(
        _("VAT rate on installation"),
        **RATE,
        default=Decimal("0.09"),
        validators=[MinValueValidator(Decimal("0")), MaxValueValidator(Decimal("0.5"))],
        help_text=_(
            "China: 9 percent; installation is a construction service, invoiced apart from the goods."
        ),
    )
    services_billing = models.CharField(
        _("services billed"),
        max_length=10,
        choices=ServicesBilling.choices,
        default=ServicesBilling.QUARTER,
        help_text=_(
            "Yearly services (software support, operations) are paid per period as delivered, in arrears."
        ),
    )
    payment_on_signing = models.PositiveSmallIntegerField(
        _("payment on signing (%)"), default=30, validators=[MaxValueValidator(100)]
    )
    payment_on_delivery = models.PositiveSmallIntegerField(
        _("payment on delivery (%)"), default=60, validators=[MaxValueValidator(100)]
    )
    payment_on_acceptance = models.PositiveSmallIntegerField(
        _("payment on acceptance (%)"), default=10, validators=[MaxValueValidator(100)]
    )
    delivery_weeks = models.PositiveSmallIntegerField(
        _("delivery lead time (weeks after signing)"),
        default=8,
        validators=[MinValueValidator(1), MaxValueValidator(104)],
    )
    delivery_place = _text(_("place of delivery"), 200)
    warranty_years = models.PositiveSmallIntegerField(
        _("warranty (years)"), default=3, validators=[MinValueValidator(1), MaxValueValidator(10)]
    )
    support_level = models.CharField(
        _("support level"), max_length=10, choices=SupportLevel.choices, default=SupportLevel.H4
    )
    acceptance_extra = models.TextField(
        _("further acceptance criteria"), blank=True, max_length=2000, validators=[no_control_chars]
    )
    exclusions_extra = models.TextField(
        _("further exclusions"), blank=True, max_length=2000, validators=[no_control_chars]
    )
    updated_at = models.DateTimeField(_("updated"), auto_now=True)

    class Meta:
        verbose_name = _("quote terms")
        verbose_name_plural = _("quote terms")
        constraints = [
            models.CheckConstraint(
                condition=models.Q(
                    payment_on_signing__lte=100, payment_on_delivery__lte=100, payment_on_acceptance__lte=100
                ),
                name="proposals_terms_payment_percent",
            )
        ]

    def __str__(self) -> str:
        return f"{self.quote.number}"

    def clean(self) -> None:
        total = (
            (self.payment_on_signing or 0)
            + (self.payment_on_delivery or 0)
            + (self.payment_on_acceptance or 0)
        )
        if total != 100:
            raise ValidationError(
                _("The payment milestones add up to %(total)s percent; they must add up to 100 percent.")
                % {"total": total}
            )


class ProposalOption(models.Model):
    """An alternative configuration offered beside the quoted one (good / better / best).

    Each option freezes its own plan (the same four snapshots a revision keeps,
    planned on the server by ``quotes.services.planning.configuration_plan``), so the
    proposal compares them without replanning.  A quote carries at most
    :data:`MAX_OPTIONS` options besides the quoted configuration; at most one of
    all of them is recommended (none marked: the quoted one is).
    """

    MAX_OPTIONS = 2  # with the quoted configuration: three columns

    quote = models.ForeignKey(
        "quotes.Quote", verbose_name=_("quote"), on_delete=models.CASCADE, related_name="options"
    )
    position = models.PositiveSmallIntegerField(_("position"), default=1)
    label = _text(_("label"), 60)
    recommended = models.BooleanField(_("recommended"), default=False)
    request_json = models.JSONField(_("configuration request"), default=dict)
    resolved_json = models.JSONField(_("resolved request"), default=dict)
    result_json = models.JSONField(_("plan result"), default=dict)
    prices_json = models.JSONField(_("prices used"), default=dict)
    created_at = models.DateTimeField(_("created"), auto_now_add=True)

    class Meta:
        ordering = ["quote", "position", "id"]
        verbose_name = _("proposal option")
        verbose_name_plural = _("proposal options")
        constraints = [
            models.UniqueConstraint(fields=["quote", "position"], name="proposals_option_quote_position"),
            models.UniqueConstraint(
                fields=["quote"],
                condition=models.Q(recommended=True),
                name="proposals_option_one_recommended",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.quote.number} · {self.label or self.position}"
