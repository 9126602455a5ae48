"""Admin for price lists (items inline) and price items (with their change history)."""

from __future__ import annotations

from django.contrib import admin
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from ..models import PriceItem, PriceList
from . import resources
from .base import CatalogAdmin


class PriceItemInline(admin.TabularInline):
    model = PriceItem
    extra = 0
    fields = ("sku", "kind", "item_slug", "description", "unit", "unit_price", "lease_per_month", "source")
    show_change_link = True


@admin.register(PriceList)
class PriceListAdmin(CatalogAdmin):
    resource_classes = [resources.PriceListResource]
    inlines = [PriceItemInline]
    list_display = (
        "name",
        "currency",
        "effective_from",
        "effective_to",
        "usd_rate",
        "items_col",
        "in_force_col",
        "assumed_count",
        "seed_status",
    )
    list_filter = ("currency",)
    search_fields = ("name", "slug", "notes")
    date_hierarchy = "effective_from"
    prepopulated_fields = {"slug": ("name",)}

    @admin.display(description=_("items"))
    def items_col(self, obj):
        return obj.items.count()

    @admin.display(description=_("in force today"), boolean=True)
    def in_force_col(self, obj):
        return obj.in_force_on(timezone.localdate())


@admin.register(PriceItem)
class PriceItemAdmin(CatalogAdmin):
    """Each price on its own page so its history shows who changed it, when, from what."""

    resource_classes = [resources.PriceItemResource]
    list_display = (
        "sku",
        "price_list",
        "kind",
        "item_slug",
        "unit_price",
        "lease_per_month",
        "unit",
        "currency_col",
        "assumed_count",
        "seed_status",
    )
    list_filter = ("price_list", "kind", "unit")
    search_fields = ("sku", "item_slug", "description", "description_zh", "source")
    list_select_related = ("price_list",)
    autocomplete_fields = ("price_list",)
    history_list_display = ("unit_price", "lease_per_month")

    @admin.display(description=_("currency"))
    def currency_col(self, obj):
        return obj.price_list.currency
