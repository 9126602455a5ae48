"""django-import-export resources: every catalog table, keyed by natural keys.

Exports carry every field except the surrogate ``id`` (relations by slug,
JSON as JSON text), so a CSV or XLSX export imports back without loss, into
this database or a fresh one.  Imports run ``full_clean()`` on each row, so
they obey the same rules as the admin forms.
"""

from __future__ import annotations

import json
from typing import Any

from import_export import fields, resources, widgets

from catalog import jsonlimits

from ..models import (
    Accelerator,
    Checkpoint,
    LlmModel,
    PriceItem,
    PriceList,
    RackType,
    Scenario,
    ServerModel,
    ServerNic,
    SiteProfile,
    SpeculativeDraft,
    SwitchModel,
    TopologyTemplate,
)


class JSONValueWidget(widgets.Widget):
    """JSON text ↔ a JSON value; ``{}`` and ``[]`` survive the trip (unlike JSONWidget)."""

    def __init__(self, empty: Any = None, **kwargs):
        self.empty = empty
        super().__init__(**kwargs)

    def clean(self, value, row=None, **kwargs):
        if value is None or (isinstance(value, str) and not value.strip()):
            return self.empty() if callable(self.empty) else self.empty
        if isinstance(value, dict | list):
            return value
        return jsonlimits.loads(value, what="JSON cell")

    def render(self, value, obj=None, **kwargs):
        if value is None:
            return ""
        return json.dumps(value, ensure_ascii=False, sort_keys=True)


class TextWidget(widgets.Widget):
    """Text that stays text: an empty cell is the empty string, a number typed in a cell becomes its digits."""

    def clean(self, value, row=None, **kwargs):
        if value is None:
            return ""
        if isinstance(value, float) and value.is_integer():
            return str(int(value))
        return str(value)

    def render(self, value, obj=None, **kwargs):
        return "" if value is None else str(value)


def _slug_fk(attribute: str, model) -> fields.Field:
    return fields.Field(
        attribute=attribute, column_name=attribute, widget=widgets.ForeignKeyWidget(model, field="slug")
    )


class CatalogResource(resources.ModelResource):
    """Common behaviour: JSON columns as JSON text, text as text, validation on import."""

    @classmethod
    def widget_from_django_field(cls, f, default=widgets.Widget):
        internal = f.get_internal_type()
        if internal == "JSONField":
            return JSONValueWidget
        if internal in ("CharField", "TextField", "SlugField"):
            return TextWidget
        return super().widget_from_django_field(f, default)

    @classmethod
    def widget_kwargs_for_field(cls, field_name, django_field):
        if django_field.get_internal_type() == "JSONField":
            default = django_field.default
            return {"empty": default if callable(default) else (lambda: default)}
        if django_field.get_internal_type() in ("CharField", "TextField", "SlugField"):
            return {}
        return super().widget_kwargs_for_field(field_name, django_field)

    class Meta:
        abstract = True


class AcceleratorResource(CatalogResource):
    class Meta:
        model = Accelerator
        exclude = ("id",)
        import_id_fields = ("slug",)
        clean_model_instances = True
        skip_unchanged = True
        report_skipped = True


class ServerModelResource(CatalogResource):
    accelerator = _slug_fk("accelerator", Accelerator)

    class Meta:
        model = ServerModel
        exclude = ("id",)
        import_id_fields = ("slug",)
        clean_model_instances = True
        skip_unchanged = True
        report_skipped = True


class ServerNicResource(CatalogResource):
    server = _slug_fk("server", ServerModel)

    class Meta:
        model = ServerNic
        exclude = ("id",)
        import_id_fields = ("server", "fabric", "role")
        clean_model_instances = True
        skip_unchanged = True
        report_skipped = True


class SwitchModelResource(CatalogResource):
    class Meta:
        model = SwitchModel
        exclude = ("id",)
        import_id_fields = ("slug",)
        clean_model_instances = True
        skip_unchanged = True
        report_skipped = True


class RackTypeResource(CatalogResource):
    class Meta:
        model = RackType
        exclude = ("id",)
        import_id_fields = ("slug",)
        clean_model_instances = True
        skip_unchanged = True
        report_skipped = True


class SiteProfileResource(CatalogResource):
    class Meta:
        model = SiteProfile
        exclude = ("id",)
        import_id_fields = ("slug",)
        clean_model_instances = True
        skip_unchanged = True
        report_skipped = True


class LlmModelResource(CatalogResource):
    validated_text_only_on = fields.Field(
        attribute="validated_text_only_on",
        column_name="validated_text_only_on",
        widget=widgets.ManyToManyWidget(ServerModel, field="slug", separator="|"),
    )

    class Meta:
        model = LlmModel
        exclude = ("id",)
        import_id_fields = ("slug",)
        clean_model_instances = True
        skip_unchanged = True
        report_skipped = True


class TopologyTemplateResource(CatalogResource):
    class Meta:
        model = TopologyTemplate
        exclude = ("id",)
        import_id_fields = ("slug",)
        clean_model_instances = True
        skip_unchanged = True
        report_skipped = True


class ScenarioResource(CatalogResource):
    recommended_topology = _slug_fk("recommended_topology", TopologyTemplate)
    recommended_model = _slug_fk("recommended_model", LlmModel)
    recommended_server = _slug_fk("recommended_server", ServerModel)

    class Meta:
        model = Scenario
        exclude = ("id",)
        import_id_fields = ("slug",)
        clean_model_instances = True
        skip_unchanged = True
        report_skipped = True


class PriceListResource(CatalogResource):
    class Meta:
        model = PriceList
        exclude = ("id",)
        import_id_fields = ("slug",)
        clean_model_instances = True
        skip_unchanged = True
        report_skipped = True


class PriceItemResource(CatalogResource):
    price_list = _slug_fk("price_list", PriceList)

    class Meta:
        model = PriceItem
        exclude = ("id",)
        import_id_fields = ("price_list", "sku")
        clean_model_instances = True
        skip_unchanged = True
        report_skipped = True


# Import order for a whole-catalog restore (parents before children).
RESOURCES_IN_DEPENDENCY_ORDER = (
    AcceleratorResource,
    ServerModelResource,
    ServerNicResource,
    SwitchModelResource,
    RackTypeResource,
    SiteProfileResource,
    TopologyTemplateResource,
    LlmModelResource,
    ScenarioResource,
    PriceListResource,
    PriceItemResource,
)


class SpeculativeDraftResource(CatalogResource):
    target = fields.Field(
        attribute="target", column_name="target", widget=widgets.ForeignKeyWidget(LlmModel, field="slug")
    )

    class Meta:
        model = SpeculativeDraft
        exclude = ("id",)
        import_id_fields = ("slug",)
        clean_model_instances = True
        skip_unchanged = True
        report_skipped = True


class CheckpointResource(CatalogResource):
    model = fields.Field(
        attribute="model", column_name="model", widget=widgets.ForeignKeyWidget(LlmModel, field="slug")
    )

    class Meta:
        model = Checkpoint
        exclude = ("id",)
        import_id_fields = ("slug",)
        clean_model_instances = True
        skip_unchanged = True
        report_skipped = True
