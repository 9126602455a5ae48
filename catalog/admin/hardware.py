"""Admin for accelerators, servers (with NIC inline), switches, racks and sites."""

from __future__ import annotations

from django.contrib import admin
from django.utils.translation import gettext_lazy as _
from import_export.admin import ImportExportModelAdmin
from simple_history.admin import SimpleHistoryAdmin

from catalog.spreadsheet import SafeCSV as CSV  # formula-injection safe (issue 13 item 9)
from catalog.spreadsheet import SafeXLSX as XLSX
from configurator.engine.formatting import format_number

from ..models import Accelerator, RackType, ServerModel, ServerNic, SiteProfile, SwitchModel
from . import resources
from .base import CatalogAdmin, preview_link


@admin.register(Accelerator)
class AcceleratorAdmin(CatalogAdmin):
    resource_classes = [resources.AcceleratorResource]
    list_display = (
        "name",
        "vendor",
        "memory_col",
        "bandwidth_col",
        "bf16_col",
        "tdp_w",
        "logical_devices_per_package",
        "domestic",
        "software_stack",
        "generation",
        "vllm_support",
        "assumed_count",
        "seed_status",
    )
    list_filter = ("vendor", "domestic", "software_stack", "generation", "vllm_support")
    search_fields = ("name", "slug", "vendor")
    prepopulated_fields = {"slug": ("name",)}

    @admin.display(description=_("memory / device"), ordering="memory_gb")
    def memory_col(self, obj):
        return f"{format_number(obj.memory_gb, 0)} GB"

    @admin.display(description=_("bandwidth / device"), ordering="memory_bandwidth_tbps")
    def bandwidth_col(self, obj):
        return f"{format_number(obj.memory_bandwidth_tbps, 2)} TB/s"

    @admin.display(description=_("BF16 TFLOPS"), ordering="tflops_bf16")
    def bf16_col(self, obj):
        return format_number(obj.tflops_bf16, 0)


class ServerNicInline(admin.TabularInline):
    model = ServerNic
    extra = 0
    fields = ("fabric", "role", "count", "speed_gbps", "source_kind", "source_ref")


@admin.register(ServerModel)
class ServerModelAdmin(CatalogAdmin):
    resource_classes = [resources.ServerModelResource]
    inlines = [ServerNicInline]
    list_display = (
        "name",
        "vendor",
        "accelerator",
        "logical_devices",
        "memory_per_node_col",
        "kw_per_node_col",
        "rack_units",
        "scale_up_fabric",
        "validated_text_only",
        "is_active",
        "assumed_count",
        "seed_status",
        "preview_col",
    )
    list_filter = ("vendor", "origin", "accelerator", "scale_up_fabric", "validated_text_only", "is_active")

    @admin.display(description=_("preview"))
    def preview_col(self, obj):
        return preview_link("server", obj.slug)

    search_fields = ("name", "slug", "vendor", "accelerator__name", "cpu")
    list_select_related = ("accelerator",)
    autocomplete_fields = ("accelerator",)
    prepopulated_fields = {"slug": ("name",)}

    @admin.display(description=_("memory per node"))
    def memory_per_node_col(self, obj):
        return f"{format_number(obj.memory_per_node_gb, 0)} GB"

    @admin.display(description=_("kW per node (max)"), ordering="max_input_kw")
    def kw_per_node_col(self, obj):
        return f"{format_number(obj.max_input_kw, 1)} kW"


@admin.register(ServerNic)
class ServerNicAdmin(ImportExportModelAdmin, SimpleHistoryAdmin):
    resource_classes = [resources.ServerNicResource]
    import_formats = [CSV, XLSX]
    export_formats = [CSV, XLSX]
    list_display = ("server", "fabric", "role", "count", "speed_gbps", "source_kind", "source_ref")
    list_filter = ("fabric", "role", "source_kind", "server")
    search_fields = ("server__name", "server__slug", "source_ref")
    list_select_related = ("server",)


@admin.register(SwitchModel)
class SwitchModelAdmin(CatalogAdmin):
    resource_classes = [resources.SwitchModelResource]
    list_display = ("name", "fabric", "ports_col", "rack_units", "power_col", "assumed_count", "seed_status")
    list_filter = ("fabric", "vendor", "origin")
    search_fields = ("name", "slug", "vendor")
    prepopulated_fields = {"slug": ("name",)}

    @admin.display(description=_("ports"), ordering="ports")
    def ports_col(self, obj):
        return f"{obj.ports} × {obj.port_speed_gbps} Gbit/s"

    @admin.display(description=_("power"), ordering="power_kw")
    def power_col(self, obj):
        return f"{format_number(obj.power_kw, 2)} kW"


@admin.register(RackType)
class RackTypeAdmin(CatalogAdmin):
    resource_classes = [resources.RackTypeResource]
    list_display = (
        "name",
        "rack_units",
        "usable_col",
        "max_kw",
        "cooling",
        "is_default",
        "assumed_count",
        "seed_status",
    )
    list_filter = ("cooling", "is_default")
    search_fields = ("name", "slug")
    prepopulated_fields = {"slug": ("name",)}

    @admin.display(description=_("usable U"))
    def usable_col(self, obj):
        return obj.usable_units


@admin.register(SiteProfile)
class SiteProfileAdmin(CatalogAdmin):
    resource_classes = [resources.SiteProfileResource]
    list_display = (
        "name",
        "voltage_ll",
        "phases",
        "power_factor",
        "continuous_derating",
        "pue",
        "price_col",
        "air_cooling_kw_limit",
        "is_default",
        "assumed_count",
        "seed_status",
    )
    list_filter = ("is_default", "currency", "phases")
    search_fields = ("name", "slug")
    prepopulated_fields = {"slug": ("name",)}

    @admin.display(description=_("electricity"), ordering="electricity_price_per_kwh")
    def price_col(self, obj):
        return f"{obj.electricity_price_per_kwh.normalize():f} {obj.currency}/kWh"
