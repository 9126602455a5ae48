from django.contrib import admin

from .models import QuoteTerms, SellerProfile


@admin.register(SellerProfile)
class SellerProfileAdmin(admin.ModelAdmin):
    list_display = ("__str__", "contact_name", "signer_name", "updated_at")
    fieldsets = (
        (None, {"fields": ("company_zh", "company_en", "address_zh", "address_en", "logo")}),
        ("Contact", {"fields": ("contact_name", "contact_phone", "contact_email")}),
        ("Signature", {"fields": ("signer_name", "signer_title_zh", "signer_title_en")}),
    )


@admin.register(QuoteTerms)
class QuoteTermsAdmin(admin.ModelAdmin):
    list_display = ("quote", "vat_rate_goods", "delivery_weeks", "warranty_years", "support_level")
    autocomplete_fields = ()
    raw_id_fields = ("quote",)
    search_fields = ("quote__number", "quote__customer__name")
