"""Customers, quotes, revisions, bill-of-materials lines, approvals and the audit trail.

A quote is a business record: its number is allocated once and never reused,
and every revision that has been issued is frozen.  The freeze is enforced
here, in the model layer, so that no code path (service, admin, shell,
queryset ``update()``/``delete()``) can rewrite what a customer was sent;
only the proposal-PDF job fields of a revision stay writable.

State changes go through ``quotes.services`` (one function per change, each in
one transaction, each writing an :class:`AuditEvent`).
"""

from __future__ import annotations

import json
from decimal import Decimal

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.serializers.json import DjangoJSONEncoder
from django.core.validators import MaxValueValidator, MinValueValidator, RegexValidator
from django.db import models
from django.db.models.functions import Lower
from django.db.models.signals import pre_delete
from django.dispatch import receiver
from django.utils.translation import gettext_lazy as _

from accounts.models import Team

from .statuses import (
    FIRM_TOTAL_CATEGORIES,
    NO_FEE_NOTE,
    PRICE_ON_REQUEST_NOTE,
    ApprovalDecision,
    ApprovalState,
    AuditAction,
    BomCategory,
    Language,
    PdfStatus,
    QuoteStatus,
    RevisionStatus,
)

MONEY = {"max_digits": 18, "decimal_places": 2}
FRACTION = {"max_digits": 5, "decimal_places": 4}
CURRENCY_VALIDATOR = RegexValidator(r"^[A-Z]{3}$", _("Use a three-letter ISO 4217 code such as CNY or USD."))
QUOTE_NUMBER_RE = r"^Q-\d{4}-\d{4,}$"
REVISION_NUMBER_RE = r"^Q-\d{4}-\d{4,}-R\d+$"


class RevisionImmutableError(ValidationError):
    """Raised when code tries to change or delete what an issued revision froze."""


class AuditImmutableError(ValidationError):
    """Raised when code tries to change or delete an audit row."""


def _json_field(verbose_name):
    return models.JSONField(verbose_name, encoder=DjangoJSONEncoder, default=dict, blank=True)


class Customer(models.Model):
    """An enterprise a team quotes for.  Names are unique within a team (case-insensitive)."""

    name = models.CharField(_("name"), max_length=200)
    industry = models.CharField(_("industry"), max_length=100, blank=True)
    contact = models.CharField(
        _("contact"), max_length=200, blank=True, help_text=_("Name, e-mail or phone.")
    )
    notes = models.TextField(_("notes"), blank=True)
    team = models.ForeignKey(
        Team,
        verbose_name=_("team"),
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="customers",
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(_("created"), auto_now_add=True)

    class Meta:
        ordering = ["name", "id"]
        verbose_name = _("customer")
        verbose_name_plural = _("customers")
        constraints = [
            models.UniqueConstraint(
                Lower("name"),
                "team",
                name="quotes_customer_name_unique_per_team",
                violation_error_message=_("Your team already has a customer of this name."),
            ),
        ]

    def __str__(self) -> str:
        return self.name


class QuoteNumberCounter(models.Model):
    """The last quote sequence number handed out in a calendar year.

    ``quotes.services.quotes`` locks this row (``SELECT … FOR UPDATE``) while it
    allocates a number, so concurrent creations get consecutive, distinct
    numbers; the unique constraint on :class:`Quote` is the backstop.
    """

    year = models.PositiveSmallIntegerField(primary_key=True)
    last_number = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["year"]
        verbose_name = _("quote number counter")
        verbose_name_plural = _("quote number counters")

    def __str__(self) -> str:
        return f"{self.year}: {self.last_number}"


class Quote(models.Model):
    """A quotation to one customer: a number, a status, and one or more revisions.

    ``version`` is an optimistic lock: every service that changes the quote
    increments it and refuses to act when the caller's copy is older, so two
    people editing the same quote never silently overwrite each other.
    """

    number = models.CharField(
        _("number"), max_length=20, unique=True, editable=False, validators=[RegexValidator(QUOTE_NUMBER_RE)]
    )
    year = models.PositiveSmallIntegerField(_("year"), editable=False)
    sequence = models.PositiveIntegerField(_("sequence"), editable=False)
    title = models.CharField(_("title"), max_length=200, blank=True)
    customer = models.ForeignKey(
        Customer, verbose_name=_("customer"), on_delete=models.PROTECT, related_name="quotes"
    )
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, verbose_name=_("owner"), on_delete=models.PROTECT, related_name="quotes"
    )
    team = models.ForeignKey(
        Team, verbose_name=_("team"), on_delete=models.PROTECT, null=True, blank=True, related_name="quotes"
    )
    currency = models.CharField(_("currency"), max_length=3, validators=[CURRENCY_VALIDATOR])
    language = models.CharField(_("proposal language"), max_length=10, choices=Language.choices)
    valid_until = models.DateField(_("valid until"))
    status = models.CharField(
        _("status"), max_length=10, choices=QuoteStatus.choices, default=QuoteStatus.DRAFT, db_index=True
    )
    version = models.PositiveIntegerField(_("version"), default=1, editable=False)
    # The idempotency key of the form that created the quote: a second post of the same
    # form returns this quote instead of creating another (unique per owner).
    creation_key = models.CharField(_("creation key"), max_length=64, blank=True, editable=False)
    created_at = models.DateTimeField(_("created"), auto_now_add=True, db_index=True)
    updated_at = models.DateTimeField(_("updated"), auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = _("quote")
        verbose_name_plural = _("quotes")
        constraints = [
            models.UniqueConstraint(fields=["year", "sequence"], name="quotes_quote_year_sequence_unique"),
            models.UniqueConstraint(
                fields=["owner", "creation_key"],
                condition=~models.Q(creation_key=""),
                name="quotes_quote_owner_creation_key_unique",
            ),
            models.CheckConstraint(condition=models.Q(version__gte=1), name="quotes_quote_version_positive"),
            models.CheckConstraint(
                condition=models.Q(status__in=QuoteStatus.values), name="quotes_quote_status_valid"
            ),
        ]
        indexes = [models.Index(fields=["team", "status"], name="quotes_quote_team_status")]

    def __str__(self) -> str:
        return f"{self.number} {self.title}".strip()

    def get_absolute_url(self) -> str:
        from django.urls import reverse

        return reverse("quotes:detail", args=[self.pk])


# --------------------------------------------------------------------------- revisions


class RevisionQuerySet(models.QuerySet):
    """Refuses bulk updates that would rewrite an issued revision's frozen fields."""

    def update(self, **kwargs):
        frozen = set(kwargs) & QuoteRevision.frozen_field_names()
        if frozen and self.filter(status=RevisionStatus.ISSUED).exists():
            raise RevisionImmutableError(
                _("An issued revision cannot be changed (%(fields)s); make a new revision instead.")
                % {"fields": ", ".join(sorted(frozen))}
            )
        pdf = set(kwargs) & QuoteRevision.PDF_FIELDS
        if pdf and self.filter(status=RevisionStatus.ISSUED, pdf_issued=True).exists():
            raise RevisionImmutableError(
                _("The issued proposal PDF cannot be changed (%(fields)s); make a new revision instead.")
                % {"fields": ", ".join(sorted(pdf))}
            )
        return super().update(**kwargs)


def proposal_upload_to(revision: QuoteRevision, filename: str) -> str:
    """``proposals/Q-2026-0042/Q-2026-0042-R2.pdf`` under MEDIA_ROOT."""
    return f"proposals/{revision.quote.number}/{revision.number}.pdf"


class QuoteRevision(models.Model):
    """One version of a quote, with everything needed to reproduce it.

    The four JSON snapshots freeze the configuration as posted (catalog
    slugs), the same request with every catalog entry inline (so it replans
    identically after catalog edits), the engine's full result, and every
    price used.  Totals are stored as exact decimals for listing and search.

    Once ``status`` is *issued*, every field except the proposal-PDF job fields
    (``PDF_FIELDS``) is frozen: ``save()`` and ``QuerySet.update()`` refuse to
    change them and deletion is refused.
    """

    PDF_FIELDS = frozenset(
        {
            "pdf_status",
            "pdf_file",
            "pdf_sha256",
            "pdf_error",
            "pdf_attempts",
            "pdf_rendered_at",
            "pdf_task_id",
            "pdf_issued",
            "pdf_requested_by",
        }
    )

    quote = models.ForeignKey(
        Quote, verbose_name=_("quote"), on_delete=models.PROTECT, related_name="revisions"
    )
    index = models.PositiveIntegerField(_("revision"))
    number = models.CharField(
        _("number"), max_length=30, unique=True, validators=[RegexValidator(REVISION_NUMBER_RE)]
    )
    status = models.CharField(
        _("status"), max_length=10, choices=RevisionStatus.choices, default=RevisionStatus.DRAFT
    )
    based_on = models.ForeignKey(
        "self", verbose_name=_("based on"), on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    change_note = models.TextField(_("what changed"), blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, verbose_name=_("created by"), on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(_("created"), auto_now_add=True)
    issued_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        verbose_name=_("issued by"),
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
    )
    issued_at = models.DateTimeField(_("issued"), null=True, blank=True)

    # Frozen snapshots.
    request_json = _json_field(_("configuration request"))
    resolved_json = _json_field(_("resolved request"))
    result_json = _json_field(_("plan result"))
    prices_json = _json_field(_("prices used"))
    usd_rate = models.DecimalField(_("USD exchange rate"), max_digits=14, decimal_places=6)
    snapshot_sha256 = models.CharField(_("snapshot SHA-256"), max_length=64, blank=True)
    # Warnings the engineer accepted on the configurator, each with a reason:
    # [{"code", "message_en", "message_zh", "reason", "by", "at"}] (shown to the
    # approving manager and in the internal edition, never to the customer).
    acknowledged_warnings = models.JSONField(
        _("accepted warnings"), encoder=DjangoJSONEncoder, default=list, blank=True
    )

    # Totals, all in ``currency``.
    currency = models.CharField(_("currency"), max_length=3, validators=[CURRENCY_VALIDATOR])
    list_total = models.DecimalField(_("list total"), **MONEY, default=Decimal("0"))
    discount = models.DecimalField(
        _("discount"),
        **FRACTION,
        default=Decimal("0"),
        validators=[MinValueValidator(Decimal("0")), MaxValueValidator(Decimal("0.9"))],
        help_text=_("Quote-level discount as a fraction (0.12 = 12 %)."),
    )
    discount_amount = models.DecimalField(_("discount amount"), **MONEY, default=Decimal("0"))
    net_total = models.DecimalField(_("net total"), **MONEY, default=Decimal("0"))
    capex_total = models.DecimalField(_("capex"), **MONEY, default=Decimal("0"))
    lease_per_month = models.DecimalField(_("lease per month"), **MONEY, null=True, blank=True)
    # TCO over the engine's horizon (commercial.horizon_years, stored beside it): the former
    # tco_buy_3y/tco_lease_3y held whatever horizon was planned, e.g. a 5-year figure.
    tco_buy_total = models.DecimalField(_("TCO, purchase"), **MONEY, null=True, blank=True)
    tco_lease_total = models.DecimalField(_("TCO, lease"), **MONEY, null=True, blank=True)
    tco_horizon_years = models.PositiveSmallIntegerField(_("TCO horizon (years)"), null=True, blank=True)
    cost_total = models.DecimalField(_("cost"), **MONEY, null=True, blank=True)

    approval_state = models.CharField(
        _("discount approval"), max_length=12, choices=ApprovalState.choices, default=ApprovalState.NOT_NEEDED
    )
    # Why a manager's approval is needed: ``quotes.pricing.approval_assessment`` codes and figures.
    approval_reasons = models.JSONField(
        _("approval reasons"), encoder=DjangoJSONEncoder, default=list, blank=True
    )
    # The quote header (customer, title, validity, language, prepared by) as it was when the
    # revision was issued: the issued proposal prints this, whatever the quote says later.
    header_json = _json_field(_("header as issued"))

    # Proposal PDF job (written by the rendering task; stays writable after issue).
    pdf_status = models.CharField(
        _("PDF status"), max_length=10, choices=PdfStatus.choices, default=PdfStatus.NONE
    )
    pdf_file = models.FileField(_("PDF file"), upload_to=proposal_upload_to, blank=True, max_length=200)
    pdf_sha256 = models.CharField(_("PDF SHA-256"), max_length=64, blank=True)
    pdf_error = models.TextField(_("PDF error"), blank=True)
    pdf_attempts = models.PositiveIntegerField(_("PDF attempts"), default=0)
    pdf_rendered_at = models.DateTimeField(_("PDF rendered"), null=True, blank=True)
    pdf_task_id = models.CharField(_("PDF task id"), max_length=100, blank=True)
    # True once the stored PDF is the one rendered from the issued revision: from then on
    # no PDF field may change (regenerating is refused, the file is never overwritten).
    pdf_issued = models.BooleanField(_("PDF is the issued copy"), default=False)
    # Who queued the current job (the per-user limit on queued renders counts these).
    pdf_requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        verbose_name=_("PDF requested by"),
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )

    objects = RevisionQuerySet.as_manager()

    class Meta:
        ordering = ["quote", "index"]
        verbose_name = _("quote revision")
        verbose_name_plural = _("quote revisions")
        get_latest_by = "index"
        constraints = [
            models.UniqueConstraint(fields=["quote", "index"], name="quotes_revision_quote_index_unique"),
            models.CheckConstraint(condition=models.Q(index__gte=1), name="quotes_revision_index_positive"),
            models.CheckConstraint(
                condition=models.Q(discount__gte=0) & models.Q(discount__lte=Decimal("0.9")),
                name="quotes_revision_discount_range",
            ),
            models.CheckConstraint(
                condition=models.Q(status=RevisionStatus.DRAFT) | models.Q(issued_at__isnull=False),
                name="quotes_revision_issued_has_date",
            ),
        ]

    def __str__(self) -> str:
        return self.number

    def save(self, *args, **kwargs):
        changed = self._frozen_changes() + self._final_pdf_changes()
        if changed:
            raise RevisionImmutableError(
                _("%(number)s is issued and cannot be changed (%(fields)s); make a new revision instead.")
                % {"number": self.number, "fields": ", ".join(changed)}
            )
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        _refuse_revision_delete(self)
        return super().delete(*args, **kwargs)

    @classmethod
    def frozen_field_names(cls) -> frozenset[str]:
        """Every concrete field (by name and column attribute) that issue freezes."""
        names = set()
        for f in cls._meta.concrete_fields:
            if f.primary_key or f.name in cls.PDF_FIELDS:
                continue
            names.update({f.name, f.attname})
        return frozenset(names)

    @property
    def is_issued(self) -> bool:
        return self.status == RevisionStatus.ISSUED

    @property
    def effective_discount(self) -> Decimal:
        """All discounts together (line and quote level) as a fraction of the list total."""
        if not self.list_total:
            return Decimal("0")
        return ((self.list_total - self.net_total) / self.list_total).quantize(Decimal("0.0001"))

    @property
    def lines_on_request(self) -> list[BomLine]:
        """The lines priced on request: every total leaves them out and says so."""
        return [line for line in self.lines.all() if line.price_on_request and not line.unit_price]

    @property
    def lines_withholding_the_total(self) -> list[BomLine]:
        """The lines on request the plan's cost of ownership needs (statuses.FIRM_TOTAL_CATEGORIES):
        the offer is no firm total until they are priced (sending needs approval; no acceptance)."""
        return [line for line in self.lines_on_request if line.category in FIRM_TOTAL_CATEGORIES]

    @property
    def margin(self) -> Decimal | None:
        """Net total minus cost, when the price list carried costs (managers only)."""
        if self.cost_total is None:
            return None
        return self.net_total - self.cost_total

    def _final_pdf_changes(self) -> list[str]:
        """PDF fields that differ from the stored row once that row holds the issued PDF."""
        if self.pk is None:
            return []
        stored = type(self).objects.filter(pk=self.pk).first()
        if stored is None or not (stored.status == RevisionStatus.ISSUED and stored.pdf_issued):
            return []
        return [
            f.name
            for f in self._meta.concrete_fields
            if f.name in self.PDF_FIELDS and _comparable(f, self) != _comparable(f, stored)
        ]

    def _frozen_changes(self) -> list[str]:
        """Names of frozen fields whose value differs from the stored row, when that row is issued."""
        if self.pk is None:
            return []
        stored = type(self).objects.filter(pk=self.pk).first()
        if stored is None or stored.status != RevisionStatus.ISSUED:
            return []
        frozen = self.frozen_field_names()
        return [
            f.name
            for f in self._meta.concrete_fields
            if f.name in frozen and _comparable(f, self) != _comparable(f, stored)
        ]


def _comparable(field: models.Field, obj: models.Model):
    value = getattr(obj, field.attname)
    if isinstance(field, models.JSONField):
        return json.dumps(value, cls=field.encoder, sort_keys=True)
    if isinstance(field, models.FileField):
        return str(value or "")
    return field.to_python(value)


def _refuse_revision_delete(revision: QuoteRevision) -> None:
    stored_status = (
        QuoteRevision.objects.filter(pk=revision.pk).values_list("status", flat=True).first()
        if revision.pk
        else None
    )
    if RevisionStatus.ISSUED in (revision.status, stored_status):
        raise RevisionImmutableError(
            _("%(number)s is issued and cannot be deleted.") % {"number": revision.number}
        )


class BomLineQuerySet(models.QuerySet):
    """Refuses bulk writes to the lines of an issued revision."""

    def update(self, **kwargs):
        if self.filter(revision__status=RevisionStatus.ISSUED).exists():
            raise RevisionImmutableError(_("The bill of materials of an issued revision cannot be changed."))
        return super().update(**kwargs)

    def bulk_create(self, objs, *args, **kwargs):
        objs = list(objs)
        revision_ids = {o.revision_id for o in objs}
        if QuoteRevision.objects.filter(pk__in=revision_ids, status=RevisionStatus.ISSUED).exists():
            raise RevisionImmutableError(_("The bill of materials of an issued revision cannot be changed."))
        return super().bulk_create(objs, *args, **kwargs)


class BomLine(models.Model):
    """One priced line of a revision's bill of materials.

    Descriptions, SKU and prices are copied from the price list, so editing
    the catalog later never rewrites the line.  ``line_total`` = quantity ×
    unit price × (1 − discount), rounded to the cent by ``quotes.services``.
    Lines in the *lease* category price the lease alternative and are not
    part of the purchase total.
    """

    revision = models.ForeignKey(
        QuoteRevision, verbose_name=_("revision"), on_delete=models.CASCADE, related_name="lines"
    )
    position = models.PositiveIntegerField(_("position"))
    category = models.CharField(_("category"), max_length=10, choices=BomCategory.choices)
    sku = models.CharField(_("SKU"), max_length=100, blank=True)
    description_en = models.CharField(_("description (English)"), max_length=300)
    description_zh = models.CharField(_("description (Chinese)"), max_length=300, blank=True)
    quantity = models.DecimalField(
        _("quantity"), max_digits=14, decimal_places=3, validators=[MinValueValidator(Decimal("0"))]
    )
    unit = models.CharField(_("unit"), max_length=20, blank=True)
    unit_price = models.DecimalField(
        _("unit price"), max_digits=18, decimal_places=4, validators=[MinValueValidator(Decimal("0"))]
    )
    unit_cost = models.DecimalField(_("unit cost"), max_digits=18, decimal_places=4, null=True, blank=True)
    discount = models.DecimalField(
        _("line discount"),
        **FRACTION,
        default=Decimal("0"),
        validators=[MinValueValidator(Decimal("0")), MaxValueValidator(Decimal("0.9"))],
    )
    line_total = models.DecimalField(_("line total"), **MONEY)
    currency = models.CharField(_("currency"), max_length=3, validators=[CURRENCY_VALIDATOR])
    note = models.CharField(_("note"), max_length=300, blank=True)
    # The catalog price in force for this line when the engineer's price differs from it
    # (an override, marked on the quote and the proposal); empty when the list price was used.
    list_unit_price = models.DecimalField(
        _("list unit price"), max_digits=18, decimal_places=4, null=True, blank=True
    )
    # True for hardware given inline in the request instead of chosen from the catalog.
    non_catalog = models.BooleanField(_("not a catalog item"), default=False)

    objects = BomLineQuerySet.as_manager()

    class Meta:
        ordering = ["revision", "position"]
        verbose_name = _("BOM line")
        verbose_name_plural = _("BOM lines")
        constraints = [
            models.UniqueConstraint(
                fields=["revision", "position"], name="quotes_bomline_revision_position_unique"
            ),
            models.CheckConstraint(
                condition=models.Q(quantity__gte=0), name="quotes_bomline_quantity_nonnegative"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.position}. {self.description_en}"

    def save(self, *args, **kwargs):
        self._refuse_if_issued()
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        self._refuse_if_issued()
        return super().delete(*args, **kwargs)

    def _refuse_if_issued(self) -> None:
        if QuoteRevision.objects.filter(pk=self.revision_id, status=RevisionStatus.ISSUED).exists():
            raise RevisionImmutableError(_("The bill of materials of an issued revision cannot be changed."))

    def description_in(self, *, zh: bool) -> str:
        """The line's description in the reader's language (the English one when no Chinese is set)."""
        return self.description_zh if zh and self.description_zh else self.description_en

    @property
    def price_on_request(self) -> bool:
        """No price is known for this line: documents print "price on request", never 0 (quotes.bom)."""
        return self.note == PRICE_ON_REQUEST_NOTE

    @property
    def no_fee(self) -> bool:
        """Software without a licence fee: documents say so instead of printing 0."""
        return self.note == NO_FEE_NOTE


@receiver(pre_delete, sender=QuoteRevision)
def _revision_pre_delete(sender, instance, **kwargs):
    # Also covers QuerySet.delete() and cascades, which bypass Model.delete().
    _refuse_revision_delete(instance)


@receiver(pre_delete, sender=BomLine)
def _bomline_pre_delete(sender, instance, **kwargs):
    instance._refuse_if_issued()


# --------------------------------------------------------------------------- approvals and audit


class Approval(models.Model):
    """A sales manager's decision on a revision whose discount exceeds the threshold."""

    revision = models.OneToOneField(
        QuoteRevision, verbose_name=_("revision"), on_delete=models.PROTECT, related_name="approval"
    )
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, verbose_name=_("decided by"), on_delete=models.PROTECT, related_name="+"
    )
    decision = models.CharField(_("decision"), max_length=10, choices=ApprovalDecision.choices)
    comment = models.TextField(_("comment"), blank=True)
    decided_at = models.DateTimeField(_("decided"), auto_now_add=True)

    class Meta:
        ordering = ["-decided_at", "-id"]
        verbose_name = _("approval")
        verbose_name_plural = _("approvals")

    def __str__(self) -> str:
        return f"{self.revision}: {self.get_decision_display()}"


class AuditQuerySet(models.QuerySet):
    def update(self, **kwargs):
        raise AuditImmutableError(_("The audit trail is append-only."))


class AuditEvent(models.Model):
    """Who did what, when: written by every state change, in the same transaction."""

    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        verbose_name=_("by"),
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        help_text=_("Empty for changes made by the system (e.g. the PDF renderer)."),
    )
    created_at = models.DateTimeField(_("when"), auto_now_add=True, db_index=True)
    action = models.CharField(_("action"), max_length=40, choices=AuditAction.choices)
    object_type = models.CharField(_("object type"), max_length=40)
    object_id = models.CharField(_("object id"), max_length=40)
    quote = models.ForeignKey(
        Quote,
        verbose_name=_("quote"),
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="audit_events",
    )
    detail = models.JSONField(_("detail"), encoder=DjangoJSONEncoder, default=dict, blank=True)

    objects = AuditQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = _("audit event")
        verbose_name_plural = _("audit events")
        indexes = [models.Index(fields=["object_type", "object_id"], name="quotes_audit_object")]

    def __str__(self) -> str:
        return f"{self.created_at:%Y-%m-%d %H:%M} {self.action} {self.object_type}:{self.object_id}"

    def save(self, *args, **kwargs):
        if self.pk is not None and not self._state.adding:
            raise AuditImmutableError(_("The audit trail is append-only."))
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise AuditImmutableError(_("The audit trail is append-only."))


@receiver(pre_delete, sender=AuditEvent)
def _audit_pre_delete(sender, instance, **kwargs):
    raise AuditImmutableError(_("The audit trail is append-only."))


from .benchmarks.calibration_models import PromotedMeasurement  # noqa: E402,F401  (calibration set, issue 24)
from .benchmarks.models import MeasuredBenchmark  # noqa: E402,F401  (measured bench results, issue 15)

# The sales-workflow models (share links, customer acceptance and questions,
# notifications) live in their own module; importing them here registers them.
from .workflow.models import (  # noqa: E402, F401
    CustomerAcceptance,
    CustomerQuestion,
    Notification,
    ShareLink,
    ShareView,
)
