"""Models of the sales workflow: customer share links, what the customer did there, notifications.

Imported at the end of ``quotes/models.py`` so Django registers them in the
``quotes`` app; they name ``quotes.Quote``/``quotes.QuoteRevision`` by their app label rather than importing
``quotes.models``, so the two modules do not import each other (no import cycle, issue 20).  The share link's token is never stored: only its SHA-256
(:func:`token_digest`), so a database dump gives nobody a working link.
"""

from __future__ import annotations

import hashlib

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _


def token_digest(token: str) -> str:
    """SHA-256 (hex) of a share token: what the database keeps instead of the token."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class ShareLink(models.Model):
    """A read-only, revocable, expiring link to one revision's customer edition (no log-in)."""

    revision = models.ForeignKey(
        "quotes.QuoteRevision",
        verbose_name=_("revision"),
        on_delete=models.PROTECT,
        related_name="share_links",
    )
    token_sha256 = models.CharField(_("token SHA-256"), max_length=64, unique=True, editable=False)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, verbose_name=_("created by"), on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(_("created"), auto_now_add=True)
    expires_at = models.DateTimeField(_("expires"))
    revoked_at = models.DateTimeField(_("revoked"), null=True, blank=True)
    revoked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        verbose_name=_("revoked by"),
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
    )

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = _("customer link")
        verbose_name_plural = _("customer links")

    def __str__(self) -> str:
        return f"{self.revision.number} ({self.token_sha256[:8]})"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None and self.expires_at > timezone.now()


class ShareView(models.Model):
    """One request made through a share link: the page, the PDF, an acceptance or a question."""

    class What(models.TextChoices):
        PAGE = "page", _("Page")
        PDF = "pdf", _("PDF")
        ACCEPT = "accept", _("Acceptance")
        QUESTION = "question", _("Question")

    link = models.ForeignKey(
        ShareLink, verbose_name=_("link"), on_delete=models.CASCADE, related_name="views"
    )
    at = models.DateTimeField(_("when"), auto_now_add=True)
    what = models.CharField(_("what"), max_length=10, choices=What.choices)
    ip = models.GenericIPAddressField(_("IP address"), null=True, blank=True)
    user_agent = models.CharField(_("browser"), max_length=300, blank=True)

    class Meta:
        ordering = ["-at", "-id"]
        verbose_name = _("customer link view")
        verbose_name_plural = _("customer link views")

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M} {self.what}"


class CustomerAcceptance(models.Model):
    """The customer's acceptance of a revision, as recorded on the share page."""

    revision = models.OneToOneField(
        "quotes.QuoteRevision",
        verbose_name=_("revision"),
        on_delete=models.PROTECT,
        related_name="customer_acceptance",
    )
    link = models.ForeignKey(ShareLink, verbose_name=_("link"), on_delete=models.PROTECT, related_name="+")
    name = models.CharField(_("name"), max_length=200)
    title = models.CharField(_("job title"), max_length=200)
    option = models.CharField(_("option"), max_length=200, blank=True)
    confirmation = models.TextField(_("confirmation"))
    accepted_at = models.DateTimeField(_("accepted"), auto_now_add=True)
    ip = models.GenericIPAddressField(_("IP address"), null=True, blank=True)
    user_agent = models.CharField(_("browser"), max_length=300, blank=True)

    class Meta:
        verbose_name = _("customer acceptance")
        verbose_name_plural = _("customer acceptances")

    def __str__(self) -> str:
        return f"{self.revision.number}: {self.name}"


class CustomerQuestion(models.Model):
    """A question the customer asked on the share page; it reaches the quote's owner."""

    revision = models.ForeignKey(
        "quotes.QuoteRevision",
        verbose_name=_("revision"),
        on_delete=models.PROTECT,
        related_name="customer_questions",
    )
    link = models.ForeignKey(ShareLink, verbose_name=_("link"), on_delete=models.PROTECT, related_name="+")
    name = models.CharField(_("name"), max_length=200)
    contact = models.CharField(_("contact"), max_length=200, blank=True)
    text = models.TextField(_("question"), max_length=4000)
    asked_at = models.DateTimeField(_("asked"), auto_now_add=True)
    ip = models.GenericIPAddressField(_("IP address"), null=True, blank=True)

    class Meta:
        ordering = ["-asked_at", "-id"]
        verbose_name = _("customer question")
        verbose_name_plural = _("customer questions")

    def __str__(self) -> str:
        return f"{self.revision.number}: {self.name}"


class Notification(models.Model):
    """One in-app notice (also e-mailed): approval requested or decided, customer accepted or asked."""

    class Kind(models.TextChoices):
        APPROVAL_REQUESTED = "approval_requested", _("Approval requested")
        APPROVAL_DECIDED = "approval_decided", _("Approval decided")
        CUSTOMER_ACCEPTED = "customer_accepted", _("Customer accepted")
        CUSTOMER_QUESTION = "customer_question", _("Customer question")
        PRICE_CHANGED = "price_changed", _("Price changed")

    recipient = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        verbose_name=_("recipient"),
        on_delete=models.CASCADE,
        related_name="quote_notifications",
    )
    kind = models.CharField(_("kind"), max_length=24, choices=Kind.choices)
    quote = models.ForeignKey(
        "quotes.Quote", verbose_name=_("quote"), on_delete=models.CASCADE, related_name="notifications"
    )
    revision = models.ForeignKey(
        "quotes.QuoteRevision",
        verbose_name=_("revision"),
        on_delete=models.CASCADE,
        null=True,
        related_name="+",
    )
    subject = models.CharField(_("subject"), max_length=300)
    body = models.TextField(_("text"), blank=True)
    created_at = models.DateTimeField(_("created"), auto_now_add=True, db_index=True)
    read_at = models.DateTimeField(_("read"), null=True, blank=True)
    emailed = models.BooleanField(_("e-mailed"), default=False)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = _("notification")
        verbose_name_plural = _("notifications")

    def __str__(self) -> str:
        return self.subject


class PriceImpactEntry(models.Model):
    """What the price-change report found for one open revision at one catalog version.

    Computed once per price change (the catalog's version, ``configurator.public.catalog_version``)
    and stored: re-planning every affected quote on each visit took the report from 0.32 to
    1.73 s with six 1,024-node quotes (issue 27, finding 12).
    """

    revision = models.ForeignKey(
        "quotes.QuoteRevision", verbose_name=_("revision"), on_delete=models.CASCADE, related_name="+"
    )
    catalog_version = models.PositiveIntegerField(_("catalog version"))
    affected = models.BooleanField(_("affected"), default=False)
    old_net = models.DecimalField(_("net total as quoted"), max_digits=18, decimal_places=2)
    new_net = models.DecimalField(
        _("net total at today's prices"), max_digits=18, decimal_places=2, null=True
    )
    # [[sku, old unit price, new unit price], …] as text
    changed_items = models.JSONField(_("changed items"), default=list)
    error = models.TextField(_("why it cannot be re-planned"), blank=True)
    computed_at = models.DateTimeField(_("computed"), auto_now_add=True)

    class Meta:
        verbose_name = _("price-change report entry")
        verbose_name_plural = _("price-change report entries")
        constraints = [
            models.UniqueConstraint(
                fields=["revision", "catalog_version"], name="quotes_priceimpactentry_once_per_version"
            )
        ]

    def __str__(self) -> str:
        return f"{self.revision_id} @ {self.catalog_version}"
