"""Admin: customers are editable; quotes, revisions, approvals and the audit trail are
read-only here, because their state changes must go through ``quotes.services``
(validation, optimistic lock, audit row)."""

from django.contrib import admin

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
