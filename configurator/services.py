"""Configurator services: resolve requests against the catalog, plan, preset forms.

The views, the JSON API, ``manage.py plan`` and the quotes app all come through
here, so every figure shown anywhere comes from the same ``plan()`` call.
"""

from __future__ import annotations

import copy
import dataclasses
import datetime as dt
import hashlib
import json
import threading
from collections import OrderedDict
from decimal import Decimal, InvalidOperation
from typing import Any

from django.utils import timezone
from django.utils.translation import get_language, gettext_lazy

from catalog import selectors
from catalog.models import (
    LlmModel,
    PriceList,
    ServerModel,
)
from catalog.selectors import price_list_in_force, price_snapshot
from configurator.engine.vocabulary import is_zh

from . import catalog_cache, plan_cache
from .catalog_port import DjangoCatalog, price_lists
from .engine import types as et
from .engine.defaults import SERVING_DEFAULTS
from .engine.plan import plan
from .engine.serialize import plan_to_dict
from .io.fixes import advised
from .io.requests import RequestError, request_to_inline, resolve


def resolve_request(
    data: Any, *, today: dt.date | None = None, catalog: DjangoCatalog | None = None
) -> et.PlanRequest:
    """A request dict → PlanRequest (raises RequestError with field messages).

    ``catalog``: one :class:`DjangoCatalog` shared by the plans of a request
    (one catalog-version query instead of one per plan)."""
    return resolve(data, catalog or DjangoCatalog(), today=today or timezone.localdate())


def plan_from_json(
    data: Any,
    *,
    today: dt.date | None = None,
    catalog: DjangoCatalog | None = None,
    advise: bool = True,
    wait_for_catalog: bool = True,
) -> tuple[et.PlanRequest, et.PlanResult]:
    """Resolve and plan.  Bad input raises RequestError; the engine never raises
    on a resolved request (problems are checks).

    ``wait_for_catalog=False`` (the page's update): a target out of reach is completed with the
    smallest catalog deployment only when that search has already run; the page loads it after the
    results (``views.alternative``).  The API, the CLI and the quote wait for it."""
    catalog = catalog or DjangoCatalog()
    request = resolve_request(data, today=today, catalog=catalog)
    day = today or timezone.localdate()
    version = catalog.version

    def plain() -> et.PlanResult:
        return plan(request)

    def planned() -> et.PlanResult:
        # the plain plan is the advised one's start: the page's update plans it without advice first
        result = plan_cache.get_or_build(plain_key, plain)
        # Every fix proven by re-planning the request with it (engine/advice.py, io/fixes.py).  Each
        # proof is kept (``_remember_proof``): the page's "Apply" buttons (``proven_fixes``) re-prove
        # the same requests and find them here instead of planning them a second time.
        return advised(
            data,
            request,
            result,
            lambda d: resolve_request(d, today=day, catalog=catalog),
            lambda resolved, after: _remember_proof(_proof_key(resolved, version, day), after),
        )

    # A plan and its proven advice are a pure function of the request, the catalog version and the
    # day: planned once (plan_cache), whichever of the page, its fragments, the API or the quote asks.
    resolved = repr(request)
    plain_key = plan_cache.key("plan", version, day.isoformat(), data, resolved)
    if advise:
        advised_key = plan_cache.key("advised", version, day.isoformat(), data, resolved)
        result = plan_cache.get_or_build(advised_key, planned)
    else:
        result = plan_cache.get_or_build(plain_key, plain)
    # A target out of this hardware's reach: the smallest catalog deployment that meets it (a plan
    # without advice, the page's update, only reads an answer already searched).
    from .catalog_alternative import for_request

    result = for_request(
        request,
        result,
        today,
        lambda d: resolve_request(d, today=today, catalog=catalog),
        wait=wait_for_catalog and advise,
        version=catalog.version,
    )
    return request, result


def catalog_answer(request: et.PlanRequest, *, today: dt.date | None = None):
    """The smallest catalog deployment meeting ``request``'s latency targets where its hardware cannot
    reach them (``catalog_alternative.Alternative``; its ``server`` is '' when none does), or None when
    they are within reach or the search could not run (the page's fragment, ``views.alternative``)."""
    from .catalog_alternative import needs_search, search_for

    today = today or timezone.localdate()
    if not needs_search(plan(request)):
        return None
    return search_for(request, today, lambda d: resolve_request(d, today=today))


def plan_response(result: et.PlanResult) -> dict:
    """The JSON API response for a plan (docs/api.md)."""
    return plan_to_dict(result)


def plan_for_quote(request_json: dict) -> tuple[dict, dict, dict, Decimal, str]:
    """What a quote revision freezes: (resolved request, result, prices, USD rate, currency).

    The resolved request is fully inline, so replanning it later gives the
    same figures whatever happens to the catalog.
    """
    request, result = plan_from_json(request_json)
    resolved = request_to_inline(request)
    c = request.commercial
    prices = {
        "currency": c.currency,
        "usd_rate": str(c.usd_rate),
        "server": {
            "sku": request.server.slug,
            "unit_price": str(c.server_unit_price),
            "lease_per_month": str(c.server_lease_per_month),
        },
        "switches": {k: str(v) for k, v in c.switch_unit_prices.items()},
        "optics_unit_price": str(c.optics_unit_price),
        "media_unit_prices": {k: str(v) for k, v in c.media_unit_prices.items()},
        "rack_unit_prices_by_cooling": {k: str(v) for k, v in c.rack_unit_prices_by_cooling.items()},
        "gateway_unit_price": str(c.gateway_unit_price),
        "gateways": c.gateways,
        "storage_price_per_tb": str(c.storage_price_per_tb),
        "rack_unit_price": str(c.rack_unit_price),
        "installation": str(c.installation),
        "software_support_per_year": str(c.software_support_per_year),
        "om_per_year": None if c.om_per_year is None else str(c.om_per_year),
        "om_percent_of_capex": str(c.om_percent_of_capex),
        "price_list": None,
        "on_date": timezone.localdate().isoformat(),
        "items": [],
    }
    price_list = _price_list_for(request_json, c.currency)
    if price_list is not None:
        prices["price_list"] = price_list.name
        prices["price_list_slug"] = price_list.slug
        prices["items"] = _items_as_planned(price_snapshot(price_list), request)
    # What the catalog says today, for the quote's approval check (quotes/pricing.py, issues 13
    # and 27): None when no price list is in force in this currency (the quote refuses it).
    prices["list_terms"] = _list_terms(request_json, request)
    prices["non_catalog"] = _non_catalog_hardware(request_json, request)
    return resolved, plan_to_dict(result), prices, c.usd_rate, c.currency


def _terms_json(c: et.CommercialSpec) -> dict:
    return {
        "server": {"unit_price": str(c.server_unit_price), "lease_per_month": str(c.server_lease_per_month)},
        "switches": {k: str(v) for k, v in c.switch_unit_prices.items()},
        "optics_unit_price": str(c.optics_unit_price),
        "media_unit_prices": {k: str(v) for k, v in c.media_unit_prices.items()},
        "rack_unit_prices_by_cooling": {k: str(v) for k, v in c.rack_unit_prices_by_cooling.items()},
        "rack_unit_price": str(c.rack_unit_price),
        "installation": str(c.installation),
        "software_support_per_year": str(c.software_support_per_year),
        "om_per_year": None if c.om_per_year is None else str(c.om_per_year),
        "om_percent_of_capex": str(c.om_percent_of_capex),
    }


def _list_terms(request_json: dict, request: et.PlanRequest) -> dict | None:
    """The commercial terms of the price list in force **today** in the plan's currency, without
    the engineer's overrides — and whatever list or date the request pins: a plan priced from an
    older list (a clone or revision that keeps its prices) is compared with today's list.

    None when no list is in force in that currency: nothing to compare a price with, so the quote
    refuses the currency (``quotes.services.revisions``)."""
    today = timezone.localdate()
    price_list = price_list_in_force(request.commercial.currency, today)
    if price_list is None:
        return None
    try:
        terms = DjangoCatalog().commercial(
            server=request.server,
            price_list=price_list.slug,
            on_date=today,
            currency=request.commercial.currency,
            nodes=request.topology.nodes,
            rack=request.rack,
        )
    except (LookupError, ValueError):
        return None
    return {
        **_terms_json(terms),
        "price_list": price_list.name,
        "effective_from": price_list.effective_from.isoformat(),
    }


def _is_catalog_rack(listed: et.RackSpec | None, rack: et.RackSpec) -> bool:
    """Whether ``rack`` is the catalog's rack of its slug as the page sends it (issue 31: every
    quote called the seeded rack "typed in by hand").  The configurator sends the rack inline with
    the site's power cap per rack (25 kW where the rack is rated 40 kW) and its layout reserve: a
    cap at or below the rack's rating and the reserved units are the site's choices, not other
    hardware.  Size, cooling, PDUs and names must be the catalog's; a cap above the rating is."""
    if listed is None:
        return False
    same = dataclasses.replace(rack, max_kw=listed.max_kw, reserved_units=listed.reserved_units)
    return same == listed and rack.max_kw <= listed.max_kw


def _non_catalog_hardware(request_json: dict, request: et.PlanRequest) -> list[str]:
    """Hardware given inline that is not exactly its catalog entry (``server``, ``rack``, ``switch:<slug>``)."""
    catalog = DjangoCatalog()
    out = []
    if isinstance(request_json.get("server"), dict) and catalog.server(request.server.slug) != request.server:
        out.append("server")
    if isinstance(request_json.get("rack"), dict) and not _is_catalog_rack(
        catalog.rack(request.rack.slug), request.rack
    ):
        out.append("rack")
    raw_switches = request_json.get("switches")
    if isinstance(raw_switches, list) and any(isinstance(s, dict) for s in raw_switches):
        for switch in request.switches:
            if catalog.switches([switch.slug]) != (switch,):
                out.append(f"switch:{switch.slug}")
    return out


def _price_list_for(request_json: Any, currency: str) -> PriceList | None:
    commercial = request_json.get("commercial") if isinstance(request_json, dict) else None
    slug = commercial.get("price_list") if isinstance(commercial, dict) else None
    if isinstance(slug, str) and slug:
        return selectors.price_list_by_slug(slug)
    return price_list_in_force(currency, timezone.localdate())


# The price fields an engineer may type over the price list, as the price basis names them.
PRICE_OVERRIDES = {
    "server_unit_price": gettext_lazy("server price"),
    "server_lease_per_month": gettext_lazy("lease per node-month"),
    "om_per_year": gettext_lazy("O&M per year"),
}


def price_basis(request_json: dict, request: et.PlanRequest) -> str:
    """Where the money figures come from: the price list (or "no price list"),
    with the engineer's overrides named, in the page's language.

    The text depends on the currency, the list the request names, the day, the overrides named and the
    language alone: worked out once per catalog version (``catalog_cache``; every page update asks)."""
    commercial = request_json.get("commercial") if isinstance(request_json, dict) else None
    commercial = commercial if isinstance(commercial, dict) else {}
    slug = commercial.get("price_list")
    overridden = tuple(key for key in PRICE_OVERRIDES if commercial.get(key) not in (None, ""))
    version = catalog_cache.current_version()
    if request.commercial.currency not in price_lists(version)["currencies"]:
        # A currency no price list is in: said without a list, and not kept (any text may be typed).
        return _price_basis(request_json, request)
    key = (
        "price_basis",
        request.commercial.currency,
        slug if isinstance(slug, str) else "",
        timezone.localdate().isoformat(),
        get_language() or "",
        overridden,
    )
    return catalog_cache.cached(version, key, lambda: _price_basis(request_json, request))


def _price_basis(request_json: dict, request: et.PlanRequest) -> str:
    from django.utils.translation import gettext as _

    c = request.commercial
    price_list = _price_list_for(request_json, c.currency)
    commercial = request_json.get("commercial") if isinstance(request_json, dict) else None
    overrides = [
        str(label)
        for key, label in PRICE_OVERRIDES.items()
        if isinstance(commercial, dict) and commercial.get(key) not in (None, "")
    ]
    if price_list is None:
        text = _("No price list in force: prices are the values typed in (%(currency)s).") % {
            "currency": c.currency
        }
    else:
        text = _("Prices from the price list “%(name)s” (%(currency)s, valid from %(date)s).") % {
            "name": ((price_list.name_zh if is_zh(get_language()) else "") or price_list.name),
            "currency": c.currency,
            "date": price_list.effective_from.isoformat(),
        }
    if price_list_in_force(c.currency, timezone.localdate()) is None:
        # quotes.services.revisions.refuse_unpriceable: nothing to check the prices against.
        text += " " + _(
            "This configuration cannot be saved as a quote in %(currency)s: no price list is in force "
            "in that currency to check its prices against."
        ) % {"currency": c.currency}
    if overrides:
        text += " " + _("Overridden by the engineer: %(fields)s.") % {"fields": ", ".join(overrides)}
    return text


def _items_as_planned(items: list[dict], request: et.PlanRequest) -> list[dict]:
    """The price list's items this plan uses, with the prices it actually used:
    an engineer's override (server price, lease) replaces the list price and is
    marked so."""
    c = request.commercial
    planned = {
        ("server", request.server.slug): (c.server_unit_price, c.server_lease_per_month),
        ("optics", ""): (c.optics_unit_price, None),
        **{("optics", code): (price, None) for code, price in c.media_unit_prices.items()},
        ("rack", request.rack.slug): (c.rack_unit_price, None),
        **{("switch", slug): (price, None) for slug, price in c.switch_unit_prices.items()},
    }
    out = []
    for item in items:
        if item["category"] == "server" and item["ref"] != request.server.slug:
            continue  # other servers' prices are not part of this plan
        if item["category"] == "rack" and item["ref"] != request.rack.slug:
            continue
        if item["category"] == "other" and item["ref"] in ("gateway", "storage-tb"):
            continue  # priced by the plan's own keys (gateway_unit_price, storage_price_per_tb)
        if item["category"] in ("install", "software", "om"):
            continue  # per-node prices: the plan's totals are under their own keys
        key = (item["category"], item["ref"] or "")
        if key in planned:
            unit_price, lease = planned[key]
            overridden = str(unit_price) != item["unit_price"] or (
                lease is not None and str(lease) != (item["lease_per_month"] or "0")
            )
            listed = {
                "list_unit_price": item["unit_price"],
                "list_lease_per_month": item.get("lease_per_month"),
            }
            item = {**item, "unit_price": str(unit_price)}
            if lease is not None:
                item["lease_per_month"] = str(lease)
            if overridden:
                item["overridden"] = True
                item.update(listed)
        out.append(item)
    return out


def launch_bundle(request: et.PlanRequest, result: et.PlanResult) -> tuple[bytes | None, str]:
    """The launch bundle zip for a plan, or (None, "") when the plan has errors."""
    from .engine.launch import bundle_files, bundle_zip

    if not result.ok or result.launch is None:
        return None, ""
    files = bundle_files(result.launch)
    name = f"launch-{request.model.slug}-{request.server.slug}-{request.topology.nodes}n.zip"
    return bundle_zip(files), name


# --------------------------------------------------------------------------- presets

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

    Read once per catalog version (``catalog_cache``): every update's "differences from the preset"
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


def _obj(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def form_data_from_request(request_json: dict) -> dict[str, str]:
    """Form data that reproduces a saved request (reopen a quote's configuration,
    apply a proven fix).  Whatever the JSON holds, the answer is form data: a
    value of the wrong shape is left out and the form then says what is wrong."""
    from configurator.web.forms import ConfiguratorForm

    data = preset_data(None)
    if not isinstance(request_json, dict):
        return data
    fields = ConfiguratorForm.base_fields
    for key in ("model", "server", "site", "rack", "scenario", "checkpoint"):
        if isinstance(request_json.get(key), str):
            data[key] = request_json[key]
    rack = request_json.get("rack")
    if isinstance(rack, dict) and isinstance(rack.get("slug"), str):
        data["rack"] = rack["slug"]  # a catalog rack with its power capped (the form's rack_max_kw)
        if isinstance(rack.get("max_kw"), (int, float)) and not isinstance(rack["max_kw"], bool):
            data["rack_max_kw"] = str(rack["max_kw"])
    topo = _obj(request_json.get("topology"))
    data["topology"] = str(topo.get("kind", data["topology"]))
    data["nodes"] = str(topo.get("nodes", data["nodes"]))
    for key in ("prefill_nodes", "decode_nodes", "pair_switches"):
        if topo.get(key) and not isinstance(topo[key], (dict, list)):
            data[key] = str(topo[key])
    parallel = topo.get("parallel", "auto")
    if isinstance(parallel, dict):
        data["parallel_mode"] = "manual"
        for key in ("tp", "dp", "pp", "dp_local"):
            if key in parallel and not isinstance(parallel[key], (dict, list)):
                data[key] = str(parallel[key])
        if not parallel.get("expert_parallel", True):
            data.pop("expert_parallel", None)
        decode = topo.get("decode_parallel")
        if isinstance(decode, dict):
            data["decode_tp"] = str(decode.get("tp", ""))
            data["decode_dp"] = str(decode.get("dp", ""))
    for section in ("serving", "workload", "commercial"):
        for key, value in _obj(request_json.get(section)).items():
            if key not in fields:
                continue
            if isinstance(value, bool):
                if key in ("enable_prefix_caching", "language_model_only"):  # three states: blank, on, off
                    data[key] = "on" if value else "off"
                elif value:
                    data[key] = "on"
                else:
                    data.pop(key, None)
            elif value is not None and not isinstance(value, (dict, list)):
                data[key] = str(value)
    serving = _obj(request_json.get("serving"))
    speculative = _obj(serving.get("speculative"))
    if "speculative" in serving:  # stated: its method ("off" when empty), draft and tokens
        data["speculative_method"] = str(speculative.get("method") or "off")
        if isinstance(speculative.get("draft"), str) and speculative["draft"]:
            data["speculative_draft"] = speculative["draft"]
        if (
            isinstance(speculative.get("num_speculative_tokens"), int)
            and speculative["num_speculative_tokens"]
        ):
            data["num_speculative_tokens"] = str(speculative["num_speculative_tokens"])
    for role in ("prefill", "decode"):
        for key, value in _obj(serving.get(role)).items():
            if f"{role}_{key}" in fields and isinstance(value, int) and not isinstance(value, bool):
                data[f"{role}_{key}"] = str(value)
    launch = _obj(request_json.get("launch"))
    ips = launch.get("node_ips")
    if isinstance(ips, list) and all(isinstance(ip, str) for ip in ips):
        data["node_ips"] = "\n".join(ips)
    for key in ("data_nic", "model_path"):
        if isinstance(launch.get(key), str) and launch[key]:
            data[key] = launch[key]
    return data


# --------------------------------------------------------------------------- fixes proven before offered

# Sections of a request the configurator form can set (a fix elsewhere, such as
# ``rack.max_kw``, stays advice: the page has no field to carry it).
_FIX_SECTIONS = ("serving", "workload", "commercial", "launch")


def fixed_request(request_json: dict, fix: dict, plan_request: et.PlanRequest | None = None) -> dict | None:
    """``request_json`` with a check's suggested ``fix`` (request path → value)
    applied, on a copy; ``None`` when a path is not one the form can carry.

    A fix to one parallel size of an automatic layout turns the layout manual,
    starting from the layout the engine proposed (``plan_request``)."""
    from configurator.web.forms import ConfiguratorForm

    from .io.requests import to_jsonable

    if not isinstance(request_json, dict) or not isinstance(fix, dict) or not fix:
        return None
    data = copy.deepcopy(request_json)
    for path, value in fix.items():
        if not isinstance(path, str) or isinstance(value, (dict, list)) or value is None:
            return None
        if ConfiguratorForm.field_for_path(path) is None:
            return None
        parts = path.split(".")
        if parts[0] == "topology" and len(parts) == 3 and parts[1] in ("parallel", "decode_parallel"):
            topology = data.setdefault("topology", {})
            parallel = topology.get(parts[1])
            if not isinstance(parallel, dict):
                resolved = None
                if plan_request is not None:
                    resolved = getattr(plan_request.topology, parts[1], None)
                if resolved is None:
                    return None
                keys = ("tp", "dp", "pp", "dp_local", "expert_parallel")
                parallel = {k: v for k, v in to_jsonable(resolved).items() if k in keys}
                topology[parts[1]] = parallel
            parallel[parts[2]] = value
        elif parts[0] == "topology" and len(parts) == 2:
            data.setdefault("topology", {})[parts[1]] = value
        elif path == "rack.max_kw":
            rack = data.get("rack")
            if not isinstance(rack, dict):
                if plan_request is None:
                    return None
                rack = to_jsonable(plan_request.rack)
            data["rack"] = {**rack, "max_kw": float(value)}
        elif parts[0] == "serving" and len(parts) == 3 and parts[1] in ("speculative", "prefill", "decode"):
            serving = data.get("serving")
            if not isinstance(serving, dict):
                serving = data["serving"] = {}
            block = serving.get(parts[1])
            if not isinstance(block, dict):
                block = serving[parts[1]] = {}
            block[parts[2]] = value
        elif parts[0] in _FIX_SECTIONS and len(parts) == 2:
            section = data.get(parts[0])
            if not isinstance(section, dict):
                section = data[parts[0]] = {}
            section[parts[1]] = value
        else:
            return None
    return data


def form_request(request_json: dict) -> dict | None:
    """The request the configurator form produces for ``request_json`` (None if
    the form refuses it): what applying a configuration on the page plans."""
    from configurator.web.forms import ConfiguratorForm

    form = ConfiguratorForm(form_data_from_request(request_json))
    if not form.is_valid():
        return None
    return form.to_request()


# Proofs are plans, and a plan of a request is fixed for a catalog version and a
# day: the last few hundred are kept (per process) so a fix offered on every
# keystroke is planned once, and the advice pass (``plan_from_json``) and the
# page's "Apply" buttons (``proven_fixes``) share one plan of each fixed request.
_PROOFS: OrderedDict[tuple, tuple[frozenset, frozenset]] = OrderedDict()
_PROOFS_MAX = 512
_proofs_lock = threading.Lock()


def _forget_proofs() -> None:
    with _proofs_lock:
        _PROOFS.clear()


catalog_cache.on_clear(_forget_proofs)


def _proof_key(request: et.PlanRequest, version: Any, day: dt.date) -> tuple:
    """A proof's key: the resolved request itself (the SHA-256 of its ``repr``, which names every field
    of every part; about 30 kB, so not kept whole), so two request JSONs that resolve alike (a rack
    given by slug with its cap, or inline in full) share one plan; a ``repr`` that differs for equal
    values (a set's order) only costs a plan."""
    return (version, day, hashlib.sha256(repr(request).encode()).digest())


def _remember_proof(key: tuple, after: et.PlanResult) -> tuple[frozenset, frozenset]:
    value = (
        frozenset(c.code for c in after.checks if c.severity != et.Severity.OK),
        frozenset(c.code for c in after.checks if c.severity == et.Severity.ERROR),
    )
    with _proofs_lock:
        _PROOFS[key] = value
        _PROOFS.move_to_end(key)
        while len(_PROOFS) > _PROOFS_MAX:
            _PROOFS.popitem(last=False)
    return value


def _proof(candidate: dict, catalog: DjangoCatalog) -> tuple[frozenset, frozenset] | None:
    """(codes of warnings and errors, codes of errors) of the plan of ``candidate``: the plan the
    advice pass already made of this very request when it proved the same fix (``plan_from_json``),
    else planned here."""
    day = timezone.localdate()
    try:
        resolved = resolve_request(candidate, today=day, catalog=catalog)
    except RequestError:
        return None
    key = _proof_key(resolved, catalog.version, day)
    with _proofs_lock:
        if key in _PROOFS:
            _PROOFS.move_to_end(key)
            return _PROOFS[key]
    return _remember_proof(key, plan(resolved))


def proven_fixes(request_json: dict, plan_request: et.PlanRequest, result: et.PlanResult) -> dict[int, dict]:
    """Fixes worth offering, by the index of their check in ``result.checks``:
    each applied to a copy of the request and re-planned; kept
    only when its finding is gone and no new error appeared.  The value is the
    re-planned request, which is what applying the fix loads."""
    errors_before = {c.code for c in result.checks if c.severity == et.Severity.ERROR}
    catalog = DjangoCatalog()
    tried: dict[str, tuple[dict, tuple[frozenset, frozenset]] | None] = {}
    out: dict[int, dict] = {}
    for index, check in enumerate(result.checks):
        if not check.fix:  # the engine offers only proven fixes (engine/advice.py)
            continue
        key = json.dumps(dict(check.fix), sort_keys=True, default=str)
        if key not in tried:
            tried[key] = None
            # Only paths the form carries are applied (fixed_request), and the
            # form gives back the same request (tests/configurator/test_fixes.py
            # checks it for every offered fix), so the page plans exactly this.
            candidate = fixed_request(request_json, dict(check.fix), plan_request)
            if candidate is not None and candidate != request_json:
                proof = _proof(candidate, catalog)
                tried[key] = (candidate, proof) if proof is not None else None
        entry = tried[key]
        if entry is None:
            continue
        candidate, (codes_after, errors_after) = entry
        if check.code in codes_after or errors_after - errors_before:
            continue
        out[index] = candidate
    return out


__all__ = [
    "apply_scenario",
    "fixed_request",
    "form_request",
    "proven_fixes",
    "scenario_fields",
    "recommended_server",
    "differences_from_preset",
    "RequestError",
    "DjangoCatalog",
    "form_data_from_request",
    "launch_bundle",
    "plan_for_quote",
    "plan_from_json",
    "plan_response",
    "preset_data",
    "resolve_request",
]
