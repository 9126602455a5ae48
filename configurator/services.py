"""Configurator services: resolve requests against the catalog, plan, preset forms.

The views, the JSON API, ``manage.py plan`` and the quotes app all come through
here, so every figure shown anywhere comes from the same ``plan()`` call.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

from django.utils import timezone

from catalog.models import LlmModel, PriceList, RackType, Scenario, ServerModel, SiteProfile, SwitchModel
from catalog.selectors import default_rack, default_site, price_list_in_force, price_snapshot

from . import catalog_cache, inputs
from .engine import types as et
from .engine.plan import plan
from .engine.serialize import plan_to_dict
from .requests import RequestError, request_to_inline, resolve


class DjangoCatalog:
    """The catalog as the request resolver sees it (see requests.CatalogPort).

    Entries are cached per process for the current catalog version (see
    ``catalog_cache``): one query for the version, then memory.
    """

    def __init__(self) -> None:
        self.version = catalog_cache.current_version()

    def _cached(self, key: tuple, build):
        return catalog_cache.cached(self.version, key, build)

    def model(self, slug: str) -> et.ModelSpec | None:
        def build():
            row = LlmModel.objects.filter(slug=slug).first()
            return inputs.model_spec(row) if row else None

        return self._cached(("model", slug), build)

    def model_from_hf_config(
        self, config: dict, weight_format: str | None, weight_bytes: int | None
    ) -> et.ModelSpec:
        return inputs.model_spec_from_hf_config(
            config, weight_format=weight_format, weight_bytes=weight_bytes
        )

    def server(self, slug: str) -> et.ServerSpec | None:
        def build():
            row = (
                ServerModel.objects.select_related("accelerator")
                .prefetch_related("nics")
                .filter(slug=slug)
                .first()
            )
            return inputs.server_spec(row) if row else None

        return self._cached(("server", slug), build)

    def site(self, slug: str) -> et.SiteSpec | None:
        def build():
            row = SiteProfile.objects.filter(slug=slug).first()
            return inputs.site_spec(row) if row else None

        return self._cached(("site", slug), build)

    def rack(self, slug: str) -> et.RackSpec | None:
        def build():
            row = RackType.objects.filter(slug=slug).first()
            return inputs.rack_spec(row) if row else None

        return self._cached(("rack", slug), build)

    def switches(self, slugs: list[str] | None) -> tuple[et.SwitchSpec, ...]:
        def build():
            rows = SwitchModel.objects.all()
            if slugs is not None:
                rows = rows.filter(slug__in=slugs)
            return tuple(inputs.switch_spec(r) for r in rows)

        return self._cached(("switches", tuple(slugs) if slugs is not None else None), build)

    def commercial(
        self,
        *,
        server: et.ServerSpec,
        price_list: str | None,
        on_date: dt.date,
        currency: str | None,
        nodes: int | None = None,
        rack: et.RackSpec | None = None,
    ) -> et.CommercialSpec:
        def build():
            if price_list:
                pl = PriceList.objects.filter(slug=price_list).first()
                if pl is None:
                    return LookupError(f"unknown price list '{price_list[:80]}'.")
            else:
                pl = price_list_in_force(currency or "CNY", on_date)
                if pl is None:
                    return et.CommercialSpec(currency=currency or "CNY")
            return inputs.commercial_spec(
                price_list=pl, server=server, on_date=on_date, nodes=nodes, rack=rack
            )

        key = ("commercial", server.slug, price_list, on_date, currency, nodes, rack.slug if rack else None)
        value = self._cached(key, build)
        if isinstance(value, LookupError):
            raise value
        return value

    def default_site(self) -> et.SiteSpec | None:
        def build():
            row = default_site()
            return inputs.site_spec(row) if row else None

        return self._cached(("default_site",), build)

    def default_rack(self) -> et.RackSpec | None:
        def build():
            row = default_rack()
            return inputs.rack_spec(row) if row else None

        return self._cached(("default_rack",), build)


def resolve_request(data: Any, *, today: dt.date | None = None) -> et.PlanRequest:
    """A request dict → PlanRequest (raises RequestError with field messages)."""
    return resolve(data, DjangoCatalog(), today=today or timezone.localdate())


def plan_from_json(data: Any, *, today: dt.date | None = None) -> tuple[et.PlanRequest, et.PlanResult]:
    """Resolve and plan.  Bad input raises RequestError; the engine never raises
    on a resolved request (problems are checks)."""
    request = resolve_request(data, today=today)
    return request, plan(request)


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
        prices["items"] = _items_as_planned(price_snapshot(price_list), request)
    return resolved, plan_to_dict(result), prices, c.usd_rate, c.currency


def _price_list_for(request_json: Any, currency: str) -> PriceList | None:
    commercial = request_json.get("commercial") if isinstance(request_json, dict) else None
    slug = commercial.get("price_list") if isinstance(commercial, dict) else None
    if isinstance(slug, str) and slug:
        return PriceList.objects.filter(slug=slug).first()
    return price_list_in_force(currency, timezone.localdate())


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
            item = {**item, "unit_price": str(unit_price)}
            if lease is not None:
                item["lease_per_month"] = str(lease)
            if overridden:
                item["overridden"] = True
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

# The validated 4 × A3 serving flags (domain.md §5, [S1]): the default form.
DEFAULT_FORM = {
    "model": "kimi-k3",
    "server": "atlas-800-a3",
    "topology": "single",
    "nodes": "4",
    "parallel_mode": "auto",
    "expert_parallel": "on",
    "gpu_memory_utilization": "0.85",
    "max_model_len": "133120",
    "max_num_seqs": "16",
    "max_num_batched_tokens": "8192",
    "kv_cache_dtype": "auto",
    "comm_buffer_mb": "800",
    "enable_prefix_caching": "on",
    "input_tokens": "8192",
    "output_tokens": "1024",
    "concurrency": "16",
    "utilisation": "0.6",
    "horizon_years": "3",
    "discount_rate": "0.08",
}


def _first_slug(model, preferred: str) -> str | None:
    if model.objects.filter(slug=preferred).exists():
        return preferred
    row = model.objects.order_by("pk").first()
    return row.slug if row else None


def preset_data(scenario: str | None = None) -> dict[str, str]:
    """Form data for a fresh page, or pre-filled from a scenario."""
    data = dict(DEFAULT_FORM)
    data["model"] = _first_slug(LlmModel, "kimi-k3") or ""
    data["server"] = _first_slug(ServerModel, "atlas-800-a3") or ""
    site = SiteProfile.objects.order_by("pk").first()
    rack = RackType.objects.order_by("pk").first()
    data["site"] = site.slug if site else ""
    data["rack"] = rack.slug if rack else ""
    row = (
        Scenario.objects.select_related("recommended_topology", "recommended_model", "recommended_server")
        .filter(slug=scenario or "")
        .first()
    )
    if row is None:
        return data
    data["scenario"] = row.slug
    data["input_tokens"] = str(row.input_tokens)
    data["output_tokens"] = str(row.output_tokens)
    data["concurrency"] = str(row.concurrency)
    if row.context:
        data["max_model_len"] = str(row.context)
    if row.needs_vision:
        data["needs_vision"] = "on"
    if row.recommended_model_id:
        data["model"] = row.recommended_model.slug
    if row.recommended_server_id:
        data["server"] = row.recommended_server.slug
    template = row.recommended_topology
    if template is not None:
        data["topology"] = template.kind
        nodes = row.recommended_nodes or template.default_nodes
        if nodes:
            data["nodes"] = str(nodes)
        if template.kind == et.TopologyKind.DISAGGREGATED.value:
            prefill = template.prefill_nodes or (int(data["nodes"]) // 2)
            data["prefill_nodes"] = str(prefill)
            data["decode_nodes"] = str(int(data["nodes"]) - prefill)
    return data


def form_data_from_request(request_json: dict) -> dict[str, str]:
    """Form data that reproduces a saved request (reopen a quote's configuration)."""
    data = preset_data(None)
    if not isinstance(request_json, dict):
        return data
    for key in ("model", "server", "site", "rack", "scenario"):
        if isinstance(request_json.get(key), str):
            data[key] = request_json[key]
    topo = request_json.get("topology") or {}
    data["topology"] = str(topo.get("kind", data["topology"]))
    data["nodes"] = str(topo.get("nodes", data["nodes"]))
    for key in ("prefill_nodes", "decode_nodes"):
        if topo.get(key):
            data[key] = str(topo[key])
    parallel = topo.get("parallel", "auto")
    if isinstance(parallel, dict):
        data["parallel_mode"] = "manual"
        for key in ("tp", "dp", "pp", "dp_local"):
            if key in parallel:
                data[key] = str(parallel[key])
        if not parallel.get("expert_parallel", True):
            data.pop("expert_parallel", None)
        decode = topo.get("decode_parallel")
        if isinstance(decode, dict):
            data["decode_tp"] = str(decode.get("tp", ""))
            data["decode_dp"] = str(decode.get("dp", ""))
    for section in ("serving", "workload", "commercial"):
        for key, value in (request_json.get(section) or {}).items():
            if isinstance(value, bool):
                if value:
                    data[key] = "on"
                else:
                    data.pop(key, None)
            elif value is not None and not isinstance(value, (dict, list)):
                data[key] = str(value)
    launch = request_json.get("launch") or {}
    if launch.get("node_ips"):
        data["node_ips"] = "\n".join(launch["node_ips"])
    for key in ("data_nic", "model_path"):
        if launch.get(key):
            data[key] = launch[key]
    return data


__all__ = [
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
