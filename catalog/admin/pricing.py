"""Admin for price lists (items inline) and price items (with their change history)."""

from __future__ import annotations

import datetime as dt

from django import forms
from django.contrib import admin
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from ..models import PriceItem, PriceList
from ..price_versions import PRICE_FIELDS, price_list_new_version
from . import resources
from .base import CatalogAdmin, admin_edit_ref


class PriceItemInlineForm(forms.ModelForm):
    """A price already on the list changes on the item's own page, which asks for the reason and
    starts a new dated version of the list; here it is shown, not edited (new items are priced)."""

    class Meta:
        model = PriceItem
        fields = (
            "sku",
            "kind",
            "item_slug",
            "description",
            "unit",
            "unit_price",
            "lease_per_month",
            "source",
        )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.instance.pk:
            for name in PRICE_FIELDS:
                self.fields[name].disabled = True
                self.fields[name].help_text = _("Change it on the item's page (with the reason).")


class PriceItemInline(admin.TabularInline):
    model = PriceItem
    form = PriceItemInlineForm
    extra = 0
    fields = ("sku", "kind", "item_slug", "description", "unit", "unit_price", "lease_per_month", "source")
    show_change_link = True


class PriceItemForm(forms.ModelForm):
    """The price item page: a change of price asks for the reason and the day it takes effect."""

    change_reason = forms.CharField(
        label=_("Reason for the price change"),
        required=False,
        max_length=300,
        help_text=_("Required when the price or the lease changes; kept with the new price list."),
    )
    effective_from = forms.DateField(
        label=_("New price in force from"),
        required=False,
        help_text=_(
            "A price change starts a new dated version of the price list on this day (the current one "
            "ends the day before); both are kept. Default: tomorrow."
        ),
    )

    class Meta:
        model = PriceItem
        fields = (
            "price_list", "sku", "kind", "item_slug", "description", "description_zh", "unit",
            "unit_price", "lease_per_month", "source", "sources",
        )  # fmt: skip

    def clean(self):
        cleaned = super().clean()
        if self.instance.pk and any(name in self.changed_data for name in PRICE_FIELDS):
            if not (cleaned.get("change_reason") or "").strip():
                self.add_error(
                    "change_reason", _("Say why the price changes (it is kept with the new price list).")
                )
            start = cleaned.get("effective_from") or timezone.localdate() + dt.timedelta(days=1)
            cleaned["effective_from"] = start
            price_list = self.instance.price_list
            if start <= price_list.effective_from:
                self.add_error(
                    "effective_from",
                    _("A new price list starts after the current one (which starts on %(date)s).")
                    % {"date": price_list.effective_from.isoformat()},
                )
        return cleaned


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
    form = PriceItemForm

    def save_model(self, request, obj, form, change):
        """A changed price goes into a new dated version of the list (catalog/price_versions.py);
        the item as it was stays on the current list, which ends the day before."""
        if not (change and any(name in form.changed_data for name in PRICE_FIELDS)):
            return super().save_model(request, obj, form, change)
        stored = PriceItem.objects.get(pk=obj.pk)
        edits = {
            name: form.cleaned_data[name]
            for name in form.changed_data
            if name in form.cleaned_data and name not in ("change_reason", "effective_from", "price_list")
        }
        new_list = price_list_new_version(
            price_list=stored.price_list,
            effective_from=form.cleaned_data["effective_from"],
            reason=form.cleaned_data["change_reason"],
            changes={obj.pk: edits},
            ref=admin_edit_ref(request),
        )
        # The edited object on this page is the old list's item: it keeps its stored values.
        for name in edits:
            setattr(obj, name, getattr(stored, name))
        self.message_user(
            request,
            _("The new price is in “%(new)s” from %(date)s; “%(old)s” ends the day before and is kept.")
            % {
                "new": new_list.name,
                "date": new_list.effective_from.isoformat(),
                "old": stored.price_list.name,
            },
        )
        return None

    @admin.display(description=_("currency"))
    def currency_col(self, obj):
        return obj.price_list.currency
