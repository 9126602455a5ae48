"""Admin: customers are editable; quotes, revisions, approvals and the audit trail are
read-only here, because their state changes must go through ``quotes.services``
(validation, optimistic lock, audit row)."""

from django.contrib import admin, messages
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
from .benchmark_models import MeasuredBenchmark as _MeasuredBenchmark  # noqa: E402
from .calibration_models import PromotedMeasurement as _PromotedMeasurement  # noqa: E402


@admin.action(description=_("Promote into the performance calibration set"), permissions=["promote"])
def promote_to_calibration(modeladmin, request, queryset):
    from .calibration_promotion import PromotionRefused, promote

    for bench in queryset:
        try:
            promote(bench, request.user)
        except PromotionRefused as exc:
            modeladmin.message_user(request, f"{bench}: {exc}", level=messages.ERROR)
        else:
            modeladmin.message_user(request, f"{bench}: promoted; run manage.py calibrate to refit.")


@admin.register(_MeasuredBenchmark)
class MeasuredBenchmarkAdmin(admin.ModelAdmin):
    list_display = ("id", "revision", "filename", "uploaded_by", "uploaded_at")
    readonly_fields = ("revision", "uploaded_by", "uploaded_at", "filename", "figures")
    actions = [promote_to_calibration]

    def has_promote_permission(self, request):
        return request.user.has_perm("quotes.add_promotedmeasurement")

    def has_add_permission(self, request):
        return False


@admin.register(_PromotedMeasurement)
class PromotedMeasurementAdmin(admin.ModelAdmin):
    list_display = ("id", "benchmark", "promoted_by", "promoted_at")
    readonly_fields = ("benchmark", "promoted_by", "promoted_at", "record")

    def has_add_permission(self, request):
        return False
