"""Admin: customers are editable; quotes, revisions, approvals and the audit trail are
read-only here, because their state changes must go through ``quotes.services``
(validation, optimistic lock, audit row)."""

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.helpers import ActionForm
from django.utils.translation import gettext_lazy as _

from .models import Approval, AuditEvent, BomLine, Customer, Quote, QuoteRevision


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(Customer)
class CustomerAdmin(admin.ModelAdmin):
    list_display = ["name", "industry", "team", "contact", "created_at"]
    list_filter = ["team", "industry"]
    search_fields = ["name", "contact"]
    readonly_fields = ["created_by", "created_at"]


class RevisionInline(admin.TabularInline):
    model = QuoteRevision
    fields = ["number", "status", "approval_state", "net_total", "currency", "created_by", "created_at"]
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = True

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(Quote)
class QuoteAdmin(ReadOnlyAdmin):
    list_display = ["number", "customer", "title", "status", "owner", "team", "valid_until", "created_at"]
    list_filter = ["status", "team", "language"]
    search_fields = ["number", "title", "customer__name"]
    date_hierarchy = "created_at"
    inlines = [RevisionInline]


class BomLineInline(admin.TabularInline):
    model = BomLine
    fields = [
        "position",
        "category",
        "sku",
        "description_en",
        "quantity",
        "unit",
        "unit_price",
        "discount",
        "line_total",
    ]
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(QuoteRevision)
class QuoteRevisionAdmin(ReadOnlyAdmin):
    list_display = ["number", "status", "approval_state", "net_total", "currency", "pdf_status", "created_at"]
    list_filter = ["status", "approval_state", "pdf_status"]
    search_fields = ["number", "quote__customer__name"]
    inlines = [BomLineInline]


@admin.register(Approval)
class ApprovalAdmin(ReadOnlyAdmin):
    list_display = ["revision", "decision", "decided_by", "decided_at"]
    list_filter = ["decision"]


@admin.register(AuditEvent)
class AuditEventAdmin(ReadOnlyAdmin):
    list_display = ["created_at", "actor", "action", "object_type", "object_id", "quote"]
    list_filter = ["action", "object_type"]
    search_fields = ["object_id", "quote__number"]
    date_hierarchy = "created_at"


# ---- calibration set (issue 24): a catalog administrator promotes a measured bench result
from .benchmarks.calibration_models import PromotedMeasurement as _PromotedMeasurement  # noqa: E402
from .benchmarks.models import MeasuredBenchmark as _MeasuredBenchmark  # noqa: E402


class PromoteFields(forms.Form):
    """What the administrator knows was measured, passed to the mismatch check with the action, and
    the written reason an implausible measurement is promoted with (a second reviewer confirms it)."""

    server = forms.CharField(label=_("measured on server (slug)"), required=False, max_length=100)
    nodes = forms.IntegerField(label=_("nodes"), required=False, min_value=1, max_value=100_000)
    tp = forms.IntegerField(label=_("TP"), required=False, min_value=1, max_value=1_024)
    dp = forms.IntegerField(label=_("DP"), required=False, min_value=1, max_value=100_000)
    reason = forms.CharField(label=_("reason (implausible results only)"), required=False, max_length=1000)


class PromoteActionForm(ActionForm, PromoteFields):
    """The changelist's action bar with the promotion's fields beside the action."""


def _conditions(request, bench) -> dict:
    """The action form's conditions; the file's own ``server`` / ``nodes`` metadata where it is blank."""
    form = PromoteFields(request.POST)
    data = form.cleaned_data if form.is_valid() else {}
    figures = bench.figures or {}
    return {
        "server": data.get("server") or None,
        "nodes": data.get("nodes") or figures.get("nodes"),
        "tp": data.get("tp"),
        "dp": data.get("dp"),
    }


@admin.action(description=_("Promote into the performance calibration set"), permissions=["promote"])
def promote_to_calibration(modeladmin, request, queryset):
    from .benchmarks.promotion import PromotionRefused, promote

    form = PromoteFields(request.POST)
    if not form.is_valid():
        modeladmin.message_user(request, f"{form.errors.as_text()}", level=messages.ERROR)
        return
    for bench in queryset:
        try:
            promoted = promote(
                bench,
                request.user,
                conditions=_conditions(request, bench),
                reason=form.cleaned_data["reason"],
            )
        except PromotionRefused as exc:
            modeladmin.message_user(request, f"{bench}: {exc}", level=messages.ERROR)
        else:
            if promoted.awaiting_review:
                modeladmin.message_user(
                    request,
                    f"{bench}: promoted with your reason; a second reviewer must confirm it before calibrate reads it.",
                    level=messages.WARNING,
                )
            else:
                modeladmin.message_user(request, f"{bench}: promoted; run manage.py calibrate to refit.")


@admin.action(description=_("Confirm as second reviewer"), permissions=["change"])
def confirm_promotion(modeladmin, request, queryset):
    from .benchmarks.promotion import PromotionRefused, confirm

    for promoted in queryset:
        try:
            confirm(promoted, request.user)
        except PromotionRefused as exc:
            modeladmin.message_user(request, f"{promoted}: {exc}", level=messages.ERROR)
        else:
            modeladmin.message_user(request, f"{promoted}: confirmed; run manage.py calibrate to refit.")


@admin.register(_MeasuredBenchmark)
class MeasuredBenchmarkAdmin(admin.ModelAdmin):
    list_display = ("id", "revision", "filename", "uploaded_by", "uploaded_at")
    readonly_fields = ("revision", "uploaded_by", "uploaded_at", "filename", "figures", "sha256")
    actions = [promote_to_calibration]
    action_form = PromoteActionForm

    def has_promote_permission(self, request):
        return request.user.has_perm("quotes.add_promotedmeasurement")

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False  # evidence: read-only here

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(_PromotedMeasurement)
class PromotedMeasurementAdmin(admin.ModelAdmin):
    list_display = ("id", "benchmark", "promoted_by", "promoted_at", "implausible", "second_reviewer")
    readonly_fields = (
        "benchmark",
        "promoted_by",
        "promoted_at",
        "sha256",
        "implausible",
        "reason",
        "second_reviewer",
        "record",
    )
    actions = [confirm_promotion]  # demotion: the admin's delete (delete_promotedmeasurement)

    def has_add_permission(self, request):
        return False
