from django.contrib import admin

from .models import ProposalOption, QuoteTerms, SellerProfile


@admin.register(SellerProfile)
class SellerProfileAdmin(admin.ModelAdmin):
    list_display = ("__str__", "contact_name", "signer_name", "updated_at")
    fieldsets = (
        (None, {"fields": ("company_zh", "company_en", "address_zh", "address_en", "logo")}),
        ("Contact", {"fields": ("contact_name", "contact_phone", "contact_email")}),
        ("Signature", {"fields": ("signer_name", "signer_title_zh", "signer_title_en")}),
        ("Status", {"fields": ("is_demo",)}),
    )

    def save_model(self, request, obj, form, change):
        # Editing the company's own details makes the profile real: the covers stop saying "demo".
        if change and set(form.changed_data) - {"is_demo"}:
            obj.is_demo = False
        super().save_model(request, obj, form, change)


@admin.register(QuoteTerms)
class QuoteTermsAdmin(admin.ModelAdmin):
    list_display = ("quote", "vat_rate_goods", "delivery_weeks", "warranty_years", "support_level")
    autocomplete_fields = ()
    raw_id_fields = ("quote",)
    search_fields = ("quote__number", "quote__customer__name")


@admin.register(ProposalOption)
class ProposalOptionAdmin(admin.ModelAdmin):
    """Options are planned by ``proposals.options.option_add`` (or ``manage.py proposal --option``);
    here they can be relabelled, marked recommended or removed, never edited by hand."""

    list_display = ("quote", "position", "label", "recommended", "created_at")
    raw_id_fields = ("quote",)
    readonly_fields = ("quote", "position", "request_json", "resolved_json", "result_json", "prices_json")
