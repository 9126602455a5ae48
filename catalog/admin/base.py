"""The catalog's admin base: import/export, change history and a Sources panel on every table."""

from __future__ import annotations

from decimal import Decimal

from django.contrib import admin
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.translation import gettext_lazy as _
from import_export.admin import ImportExportModelAdmin
from simple_history.admin import SimpleHistoryAdmin

from catalog.spreadsheet import SafeCSV as CSV  # formula-injection safe (issue 13 item 9)
from catalog.spreadsheet import SafeXLSX as XLSX
from configurator.engine.formatting import format_number

from ..services import changed_since_seed, seed_state

SEED_STATE_LABELS = {
    "seeded": _("as seeded"),
    "edited": _("edited since seed"),
    "manual": _("not seeded"),
}


def display_value(value) -> str:
    """A figure for the Sources panel: grouped digits, no trailing zeros."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return format_number(value)
    if isinstance(value, Decimal):
        exponent = value.normalize().as_tuple().exponent
        return format_number(value, max(0, -exponent) if isinstance(exponent, int) else 0)
    return str(value)


def preview_link(kind: str, slug: str):
    """A link that opens the configurator with this catalog row (as saved)."""
    from django.urls import reverse
    from django.utils.http import urlencode

    url = reverse("configurator:preview") + "?" + urlencode({kind: slug})
    return format_html(
        '<a href="{}" target="_blank" rel="noopener">{}</a>', url, _("preview in configurator")
    )


def admin_edit_ref(request) -> str:
    user = request.user.get_username() if request and request.user.is_authenticated else "?"
    return f"{user}, {timezone.localdate().isoformat()}"


def fields_to_mark(form, obj) -> list[str]:
    """Changed sourced fields whose source the admin did not set in the same edit."""
    if not form.changed_data:
        return []
    submitted_sources = form.cleaned_data.get("sources") if "sources" in form.changed_data else None
    initial_sources = form.initial.get("sources") or {}
    marked = []
    for name in form.changed_data:
        if name not in obj.sourced_field_names():
            continue
        if submitted_sources is not None and (submitted_sources or {}).get(name) != initial_sources.get(name):
            continue  # the admin wrote this field's source themselves
        marked.append(name)
    return marked


class CatalogAdmin(ImportExportModelAdmin, SimpleHistoryAdmin):
    """Import/export (CSV, XLSX), history, and a readonly Sources panel with each figure's origin."""

    import_formats = [CSV, XLSX]
    export_formats = [CSV, XLSX]
    list_per_page = 50
    save_on_top = True
    save_as = True  # "Save as new": clone a row, then edit the copy
    sources_fieldset = True

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        """ "Save as new" with the slug (and name) unchanged would only fail on the
        unique slug: the copy gets a free ``-copy`` slug and a "(copy)" name."""
        if request.method == "POST" and "_saveasnew" in request.POST:
            model = self.model
            data = request.POST.copy()
            slug = data.get("slug", "")
            if slug and model._default_manager.filter(slug=slug).exists():
                base, n = f"{slug}-copy"[:76], 1
                candidate = base
                while model._default_manager.filter(slug=candidate).exists():
                    n += 1
                    candidate = f"{base}-{n}"
                data["slug"] = candidate
                if data.get("name") and model._default_manager.filter(name=data["name"]).exists():
                    data["name"] = f"{data['name']} (copy)"[:120]
            request.POST = data
        return super().changeform_view(request, object_id, form_url, extra_context)

    # ---------------------------------------------------------------- sources panel

    @admin.display(description=_("Sources"))
    def sources_table(self, obj):
        if obj is None or obj.pk is None:
            return _("Saved rows show each figure's source here.")
        rows = obj.source_rows()
        body = format_html_join(
            "",
            "<tr><td>{}</td><td style='text-align:right'>{}</td><td>{}</td><td>{}</td></tr>",
            (
                (
                    r["label"],
                    display_value(r["value"]),
                    format_html("<em><strong>*{}*</strong></em>", r["kind_label"])
                    if r["assumed"]
                    else r["kind_label"],
                    r["ref"],
                )
                for r in rows
            ),
        )
        state = seed_state(obj)
        note = SEED_STATE_LABELS[state]
        if state == "edited":
            note = format_html("{} ({})", note, ", ".join(changed_since_seed(obj)))
        return format_html(
            "<p>{}: {}</p><table class='catalog-sources'><thead><tr><th>{}</th><th>{}</th><th>{}</th><th>{}</th>"
            "</tr></thead><tbody>{}</tbody></table>",
            _("Seed"),
            note,
            _("figure"),
            _("value"),
            _("source"),
            _("reference"),
            body,
        )

    @admin.display(description=_("assumed"))
    def assumed_count(self, obj):
        n = len(obj.assumed_fields)
        return format_html("<em>*{}*</em>", n) if n else "0"

    @admin.display(description=_("seed"))
    def seed_status(self, obj):
        return SEED_STATE_LABELS[seed_state(obj)]

    def get_readonly_fields(self, request, obj=None):
        return (*super().get_readonly_fields(request, obj), "sources_table")

    def get_fieldsets(self, request, obj=None):
        fieldsets = list(super().get_fieldsets(request, obj))
        if self.fieldsets is None:
            # Default single fieldset: move sources out into their own panels.
            name, opts = fieldsets[0]
            field_list = [f for f in opts["fields"] if f not in ("sources", "sources_table")]
            fieldsets = [(name, {**opts, "fields": field_list})]
        fieldsets.append((_("Sources"), {"fields": ("sources_table",)}))
        fieldsets.append(
            (
                _("Sources (edit as JSON)"),
                {
                    "classes": ("collapse",),
                    "fields": ("sources",),
                    "description": _(
                        "Figures you change here are marked “edited in admin” automatically unless you set their "
                        "source in the same save."
                    ),
                },
            )
        )
        return fieldsets

    # ---------------------------------------------------------------- marking admin edits

    def save_model(self, request, obj, form, change):
        if change:
            marked = fields_to_mark(form, obj)
            if marked:
                obj.mark_admin_edit(marked, admin_edit_ref(request))
        elif not obj.sources:
            obj.mark_admin_edit(obj.sourced_field_names(), admin_edit_ref(request))
        super().save_model(request, obj, form, change)

    def save_formset(self, request, form, formset, change):
        instances = formset.save(commit=False)
        for inline_form in formset.forms:
            inst = inline_form.instance
            if inst in instances and inst.pk and hasattr(inst, "mark_admin_edit"):
                marked = [n for n in inline_form.changed_data if n in inst.sourced_field_names()]
                if marked:
                    inst.mark_admin_edit(marked, admin_edit_ref(request))
            elif inst in instances and hasattr(inst, "source_kind") and inline_form.changed_data:
                # NIC groups keep one source for the row: an edit makes it the admin's.
                if (
                    "source_kind" not in inline_form.changed_data
                    and "source_ref" not in inline_form.changed_data
                ):
                    inst.source_kind = "admin"
                    inst.source_ref = admin_edit_ref(request)
            elif inst in instances and not inst.pk and hasattr(inst, "sources") and not inst.sources:
                inst.sources = {
                    n: {"kind": "admin", "ref": admin_edit_ref(request)} for n in inst.sourced_field_names()
                }
        for obj in formset.deleted_objects:
            obj.delete()
        for inst in instances:
            inst.save()
        formset.save_m2m()
