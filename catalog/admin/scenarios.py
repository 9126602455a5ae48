"""Admin for scenarios and topology templates."""

from __future__ import annotations

from django.contrib import admin
from django.utils.translation import gettext_lazy as _

from configurator.engine.formatting import format_number, format_percent

from ..models import Scenario, TopologyTemplate
from . import resources
from .base import CatalogAdmin


@admin.register(TopologyTemplate)
class TopologyTemplateAdmin(CatalogAdmin):
    resource_classes = [resources.TopologyTemplateResource]
    list_display = (
        "name_en",
        "name_zh",
        "kind",
        "default_nodes",
        "prefill_nodes",
        "decode_nodes",
        "sort_order",
        "seed_status",
    )
    list_filter = ("kind",)
    search_fields = ("name_en", "name_zh", "slug")
    list_editable = ("sort_order",)
    prepopulated_fields = {"slug": ("name_en",)}


@admin.register(Scenario)
class ScenarioAdmin(CatalogAdmin):
    resource_classes = [resources.ScenarioResource]
    list_display = (
        "name_en",
        "name_zh",
        "tokens_col",
        "concurrency",
        "context",
        "needs_vision",
        "availability_col",
        "recommended_topology",
        "recommended_nodes",
        "is_active",
        "assumed_count",
        "seed_status",
    )
    list_filter = ("is_active", "needs_vision", "recommended_topology", "recommended_model")
    search_fields = ("name_en", "name_zh", "slug", "pain_en", "pain_zh")
    list_select_related = ("recommended_topology", "recommended_model", "recommended_server")
    autocomplete_fields = ("recommended_model", "recommended_server", "recommended_topology")
    prepopulated_fields = {"slug": ("name_en",)}

    @admin.display(description=_("input / output tokens"))
    def tokens_col(self, obj):
        return f"{format_number(obj.input_tokens)} / {format_number(obj.output_tokens)}"

    @admin.display(description=_("availability"), ordering="availability_target")
    def availability_col(self, obj):
        return format_percent(obj.availability_target, 2)
