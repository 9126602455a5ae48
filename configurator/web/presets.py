"""The page's presets: the form data of a fresh page and of a scenario, choosing a scenario on a page
already filled in, and every field that differs from the preset (each with a reset, and "start over").

Catalog rows alone (scenarios, the first model, server, site and rack), read once per catalog version.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any

from django.utils.translation import get_language

from catalog import selectors
from catalog.models import LlmModel, ServerModel

from ..engine import types as et
from ..engine.defaults import SERVING_DEFAULTS
from ..engine.vocabulary import is_zh
from ..port import cache as catalog_cache

# The validated 4 × A3 serving flags (docs/domain.md §5, [S1]): the default form.
DEFAULT_FORM = {
    "model": "kimi-k3",
    "server": "atlas-800-a3",
    "topology": "single",
    "nodes": "4",
    "parallel_mode": "auto",
    "expert_parallel": "on",
    # Serving values are left blank: the request then leaves them to the one serving-defaults path
    # (engine/defaults.py serving_defaults) the API, the planner and the CLI use.
    "kv_cache_dtype": SERVING_DEFAULTS.kv_cache_dtype.value,
    "input_tokens": "8192",
    "output_tokens": "1024",
    "concurrency": "16",
    "utilisation": "0.6",
    "horizon_years": "3",
    "discount_rate": "0.08",
}


def _first_slug(model, preferred: str) -> str | None:
    return selectors.slug_or_first(model, preferred)


# The form fields a scenario owns: choosing a scenario changes these and
# nothing else (the server only when the scenario recommends one; the
# commercial terms, serving flags and launch fields never).
SCENARIO_FIELDS = (
    "scenario",
    "model",
    "server",
    "topology",
    "nodes",
    "prefill_nodes",
    "decode_nodes",
    "parallel_mode",
    "input_tokens",
    "output_tokens",
    "concurrency",
    "max_model_len",
    "needs_vision",
    "ttft_target_s",  # the scenario's latency targets, P50 (issue 15)
    "tpot_target_ms",
)


def _scenario_row(scenario: str | None):
    if not scenario:
        return None
    return selectors.scenario_row(scenario)


def scenario_fields(scenario: str | None) -> dict[str, str] | None:
    """The form values a scenario sets (``None`` for an unknown scenario).

    A checkbox the scenario clears is given as ``""`` (unchecked)."""
    row = _scenario_row(scenario)
    if row is None:
        return None
    data = {
        "scenario": row.slug,
        "input_tokens": str(row.input_tokens),
        "output_tokens": str(row.output_tokens),
        "concurrency": str(row.concurrency),
        "needs_vision": "on" if row.needs_vision else "",
    }
    for name in ("ttft_target_s", "tpot_target_ms"):  # the scenario's latency targets (issue 15)
        value = getattr(row, name, None)
        data[name] = "" if value is None else str(value)
    if row.context:
        data["max_model_len"] = str(row.context)
    if row.recommended_model_id:
        data["model"] = row.recommended_model.slug
    if row.recommended_server_id:
        data["server"] = row.recommended_server.slug
    template = row.recommended_topology
    if template is not None:
        data["topology"] = template.kind
        data["parallel_mode"] = "auto"
        nodes = row.recommended_nodes or template.default_nodes
        if nodes:
            data["nodes"] = str(nodes)
        if template.kind == et.TopologyKind.DISAGGREGATED.value and data.get("nodes"):
            prefill = template.prefill_nodes or (int(data["nodes"]) // 2)
            data["prefill_nodes"] = str(prefill)
            data["decode_nodes"] = str(int(data["nodes"]) - prefill)
        else:  # a P/D split left over from an xPyD scenario means nothing here: cleared, not carried
            data["prefill_nodes"] = ""
            data["decode_nodes"] = ""
    return data


def preset_data(scenario: str | None = None) -> dict[str, str]:
    """Form data for a fresh page, or pre-filled from a scenario.

    Read once per catalog version (``port.cache``): every update's "differences from the preset"
    asks for it, and it is catalog rows alone."""
    built = catalog_cache.cached(
        catalog_cache.current_version(), ("preset_data", scenario or ""), lambda: _preset_data(scenario)
    )
    return dict(built)


def _preset_data(scenario: str | None) -> dict[str, str]:
    data = dict(DEFAULT_FORM)
    data["model"] = _first_slug(LlmModel, "kimi-k3") or ""
    data["server"] = _first_slug(ServerModel, "atlas-800-a3") or ""
    site = selectors.first_site()
    rack = selectors.first_rack()
    data["site"] = site.slug if site else ""
    data["rack"] = rack.slug if rack else ""
    owned = scenario_fields(scenario)
    if owned:
        for key, value in owned.items():
            if value == "":
                data.pop(key, None)
            else:
                data[key] = value
    return data


# Choosing a scenario on a page that already has a server keeps that server: the page's promise
# is that the scenario sets the workload and the topology, not the hardware the engineer chose.  The
# notice offers the scenario's recommended server with one click (``recommended_server``); a fresh
# page and "start over" (``preset_data``) take it.
KEPT_WHEN_CHOOSING = ("server",)


def apply_scenario(current: dict[str, str], scenario: str | None) -> tuple[dict[str, str], list[str]]:
    """The current form data with the scenario's own fields set; and the names
    of the fields that changed (the page says what it changed, with undo).

    Choosing "none" only clears the scenario: the values stay as they are.  The
    server stays as it is (``KEPT_WHEN_CHOOSING``) unless the form had none."""
    data = dict(current)
    owned = scenario_fields(scenario)
    if owned is None:
        data["scenario"] = ""
        return data, (["scenario"] if current.get("scenario") else [])
    changed = []
    for key, value in owned.items():
        if key in KEPT_WHEN_CHOOSING and current.get(key):
            continue
        before = current.get(key, "") or ""
        if str(before) != value:
            changed.append(key)
        if value == "":
            data.pop(key, None)
        else:
            data[key] = value
    return data, changed


def recommended_server(scenario: str | None, data: dict[str, str]) -> dict[str, str] | None:
    """The scenario's recommended server when the form runs another one (slug and name), for the
    notice's "use the recommended server"; ``None`` when they agree or the scenario names none."""
    row = _scenario_row(scenario)
    if row is None or not row.recommended_server_id:
        return None
    if data.get("server") == row.recommended_server.slug:
        return None
    server = row.recommended_server
    zh = is_zh(get_language())
    return {"slug": server.slug, "name": (server.name_zh if zh and server.name_zh else server.name)}


def _comparable(value: Any) -> str:
    """A form value as compared with the preset's: blank, unchecked and "false" are one thing, and
    numbers compare by value ("0.90" is "0.9", "16" is "16.0")."""
    text = str(value if value is not None else "").strip()
    if text.lower() in ("", "false", "off"):
        return ""
    if text.lower() in ("on", "true"):
        return "on"
    try:
        number = Decimal(text)
    except (InvalidOperation, ValueError):
        return text
    if not number.is_finite():
        return text
    return format(number.normalize(), "f")


def differences_from_preset(
    data: dict[str, str], initials: dict[str, Any], preset: dict[str, str] | None = None
) -> list[dict[str, str]]:
    """Every form field whose value differs from what the current scenario's preset (or, with no
    scenario, a fresh page) sets: name, current value and preset value, in the form's order.  The
    page lists them with a reset each and "start over", so a fix or a cap applied under one
    scenario never carries silently into the next.  ``initials`` maps each field to the value the
    form shows where the preset sets none (a select's initial choice).  ``preset``: the preset's data
    when the caller already has it (``preset_data(data.get("scenario") or None)``), saving its queries."""
    if preset is None:
        preset = preset_data(data.get("scenario") or None)
    out = []
    for name, initial in initials.items():
        if name == "scenario":
            continue
        shown = "" if initial is None or isinstance(initial, bool) else str(initial)
        current, original = data.get(name) or shown, preset.get(name, shown)
        if _comparable(current) != _comparable(original):
            out.append({"name": name, "current": current, "preset": original})
    return out
