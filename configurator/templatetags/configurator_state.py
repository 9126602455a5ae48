"""What the configurator page shows of its own state: the settings that differ from the
scenario's preset, each with a reset, and "start over" (``configurator/web/presets.py`` computes the
differences; this only labels them for the page)."""

from __future__ import annotations

import json

from django import template

from configurator.web import presets

register = template.Library()


def display_value(field, value: str) -> str:
    """A form value as the page shows it: a choice's label, yes/no for a checkbox, "—" for blank."""
    from django.utils.translation import gettext as _

    if getattr(field.widget, "input_type", "") == "checkbox":
        return str(_("yes") if value not in ("", None, "false", "off") else _("no"))
    choices = getattr(field, "choices", None)
    if choices is not None:
        for key, label in choices:
            if str(key) == str(value):
                return str(label)
    return str(value) if value not in ("", None) else "—"


@register.inclusion_tag("configurator/_differences.html", takes_context=True)
def preset_differences(context, form):
    """The settings of ``form`` that differ from its scenario's preset, with reset and start over."""
    data = {k: v for k, v in form.data.items() if isinstance(v, str)} if form.is_bound else {}
    if not data:
        return {"rows": [], "read_only": context.get("read_only")}
    names = list(form.fields)
    rows = []
    initials = {name: form.fields[name].initial for name in names}
    preset = presets.preset_data(data.get("scenario") or None)  # once: the differences and start over
    for diff in presets.differences_from_preset(data, initials, preset):
        field = form.fields[diff["name"]]
        rows.append(
            {
                "name": diff["name"],
                "label": field.label,
                "current": display_value(field, diff["current"]),
                "preset": display_value(field, diff["preset"]),
                "reset_json": json.dumps({diff["name"]: diff["preset"]}, ensure_ascii=False),
            }
        )
    start_over = {name: preset.get(name, "") for name in names}
    return {
        "rows": rows,
        "scenario_chosen": bool(data.get("scenario")),
        "start_over_json": json.dumps(start_over, ensure_ascii=False),
        # Without JavaScript the form does not come along: the whole current form is the base.
        "base_json": json.dumps(data, ensure_ascii=False),
        "read_only": context.get("read_only"),
        "csrf_token": context.get("csrf_token"),
    }
