"""Catalog rows → engine input types.

The only place that knows both ``catalog`` models and ``configurator.engine``
types.  Units change here: the catalog stores what vendors quote (GB, TB/s,
kW, Gbit/s, Decimal fractions); the engine takes bytes, bytes/s, float kW and
Decimal money.  Every figure's source travels along as ``engine.types.Source``
so a proposal can list the assumptions it used.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any

from django.utils import timezone

from catalog.importers.hf_config import parse_hf_config
from catalog.models import (
    Accelerator,
    Checkpoint,
    LlmModel,
    PriceItem,
    PriceList,
    PriceUnit,
    RackType,
    Scenario,
    ServerModel,
    SiteProfile,
    SwitchModel,
)
from catalog.selectors import default_rack, price_list_in_force, price_snapshot

from .engine import types as et

__all__ = [
    "accelerator_spec",
    "bom_items",
    "commercial_spec",
    "model_spec",
    "model_spec_from_hf_config",
    "price_list_in_force",
    "price_snapshot",
    "rack_spec",
    "server_spec",
    "site_spec",
    "source",
    "switch_spec",
    "switch_specs",
    "workload_spec",
]

TB = 10**12

# Catalog source kinds → engine source kinds (an admin's edit is an input, not an assumption).
_KIND = {"seed": "seed", "public": "public", "assumed": "assumed", "admin": "input"}


def source(entry: Mapping[str, str] | None) -> et.Source:
    """One catalog ``{"kind", "ref"}`` entry as an engine Source (unknown → assumed)."""
    if not entry:
        return et.Source("assumed", "not recorded in the catalog")
    return et.Source(_KIND.get(entry.get("kind", ""), "assumed"), entry.get("ref", ""))


def _sources(row: Any, prefix: str = "") -> dict[str, et.Source]:
    names = row.sourced_field_names()
    return {f"{prefix}{name}": source(row.source_for(name)) for name in names}


def _f(value: Decimal | float | int | None) -> float:
    return float(value) if value is not None else 0.0


# --------------------------------------------------------------------------- model


def model_spec(row: LlmModel) -> et.ModelSpec:
    """An LlmModel row as the engine's ModelSpec (same field names, bytes and counts as stored)."""
    return et.ModelSpec(
        slug=row.slug,
        name=row.name,
        total_params=row.total_params,
        active_params=row.active_params,
        num_layers=row.num_layers,
        hidden_size=row.hidden_size,
        vocab_size=row.vocab_size,
        num_attention_heads=row.num_attention_heads,
        num_kv_heads=row.num_kv_heads,
        head_dim=row.head_dim,
        gqa_layers=row.gqa_layers,
        mla_layers=row.mla_layers,
        linear_layers=row.linear_layers,
        sliding_layers=row.sliding_layers,
        sliding_window=row.sliding_window,
        kv_lora_rank=row.kv_lora_rank,
        qk_rope_head_dim=row.qk_rope_head_dim,
        linear_num_heads=row.linear_num_heads,
        linear_head_dim=row.linear_head_dim,
        linear_state_dtype_bytes=row.linear_state_dtype_bytes,
        linear_conv_kernel=row.linear_conv_kernel,
        linear_conv_dim=row.linear_conv_dim,
        linear_conv_dtype_bytes=row.linear_conv_dtype_bytes,
        num_experts=row.num_experts,
        experts_per_token=row.experts_per_token,
        shared_experts=row.shared_experts,
        moe_layers=row.moe_layers,
        expert_weight_bytes=row.expert_weight_bytes,
        non_expert_weight_bytes=row.non_expert_weight_bytes,
        weight_format=row.weight_format,
        activation_format=row.activation_format,
        max_context=row.max_context,
        has_vision=row.has_vision,
        text_only_servers=tuple(sorted(row.validated_text_only_on.values_list("slug", flat=True))),
        vision_params=row.vision_params,
        vision_bytes=row.vision_bytes,
        api_price_input_per_m=row.api_price_input_per_m,
        api_price_output_per_m=row.api_price_output_per_m,
        api_price_cached_input_per_m=row.api_price_cached_input_per_m,
        api_price_currency=row.api_price_currency,
        licence_note=row.licence_note,
        hf_model_id=row.hf_model_id,
        vllm_tokenizer_mode=row.vllm_tokenizer_mode,
        vllm_reasoning_parser=row.vllm_reasoning_parser,
        vllm_tool_call_parser=row.vllm_tool_call_parser,
        sources=_sources(row),
    )


def model_spec_from_hf_config(
    config: Mapping[str, Any],
    *,
    weight_format: str | None = None,
    weight_bytes: int | None = None,
    slug: str = "",
    name: str = "",
) -> et.ModelSpec:
    """A ModelSpec straight from a config.json object (nothing saved).

    ``weight_bytes`` is the published checkpoint size when known: the routed
    experts keep their derived bytes and the rest takes the remainder (as the
    K3 seed does); if it is smaller than the derived expert bytes both parts
    are scaled.  Raises ``ValueError`` (``ConfigError``) naming a bad field.
    """
    imported = parse_hf_config(config, weight_format=weight_format, name=name)
    f = dict(imported.fields)
    sources = {k: source(v) for k, v in imported.sources.items()}
    if weight_bytes is not None:
        if weight_bytes <= 0:
            raise ValueError("weight_bytes must be a positive number of bytes")
        derived = f["expert_weight_bytes"] + f["non_expert_weight_bytes"]
        if weight_bytes >= f["expert_weight_bytes"]:
            f["non_expert_weight_bytes"] = weight_bytes - f["expert_weight_bytes"]
        else:
            scale = weight_bytes / derived
            f["expert_weight_bytes"] = round(f["expert_weight_bytes"] * scale)
            f["non_expert_weight_bytes"] = weight_bytes - f["expert_weight_bytes"]
        sources["non_expert_weight_bytes"] = et.Source("input", "weight_bytes given with the config")
    f.pop("family", None)
    f.pop("hf_model_id", None)
    display = f.pop("name")
    return et.ModelSpec(
        slug=slug or imported.model_type,
        name=name or display,
        hf_model_id=imported.fields["hf_model_id"],
        sources=sources,
        **f,
    )


def checkpoint_spec(row: Checkpoint) -> et.CheckpointSpec:
    """A Checkpoint row as the engine's CheckpointSpec (bytes, formats, platforms, flags)."""
    return et.CheckpointSpec(
        slug=row.slug,
        name=row.name,
        expert_bytes=row.expert_bytes,
        non_expert_bytes=row.non_expert_bytes,
        architecture=row.architecture,
        embedding_bytes=row.embedding_bytes,
        vision_bytes=row.vision_bytes,
        weight_format=row.weight_format,
        non_expert_format=row.non_expert_format,
        activation_format=row.activation_format,
        quant_method=row.quant_method,
        platforms=tuple(row.platforms or ()),
        launch_flags=tuple(row.launch_flags or ()),
        param_groups={k: int(v) for k, v in (row.param_groups or {}).items()},
        group_formats=dict(row.group_formats or {}),
        source=row.hf_repo or row.notes,
    )


# --------------------------------------------------------------------------- hardware


def accelerator_spec(row: Accelerator) -> et.AcceleratorSpec:
    """Per logical device: GB → bytes (10⁹), TB/s → bytes/s; TFLOPS only where supported (> 0)."""
    tflops = {
        "bf16": row.tflops_bf16,
        "fp16": row.tflops_fp16,
        "fp8": row.tflops_fp8,
        "int8": row.tflops_int8,
        "mxfp4": row.tflops_mxfp4,
    }
    return et.AcceleratorSpec(
        slug=row.slug,
        name=row.name,
        memory_bytes=int(row.memory_gb * et.GB),
        memory_bandwidth_bytes_s=float(row.memory_bandwidth_tbps * TB),
        tflops={k: float(v) for k, v in tflops.items() if v and v > 0},
        tdp_watts=_f(row.tdp_w),
        logical_devices_per_package=row.logical_devices_per_package,
        vendor=row.vendor,
        domestic=row.domestic,
        software_stack=row.software_stack,
        runtime_memory_bytes=int((row.runtime_memory_gib or 0) * et.GIB),
        runtime_memory_source=((row.sources or {}).get("runtime_memory_gib") or {}).get("ref", ""),
    )


def server_spec(row: ServerModel, *, model: LlmModel | None = None) -> et.ServerSpec:
    """A ServerModel with its accelerator and NICs.

    ``validated_text_only`` is the server's own flag, or true when ``model``
    lists this server among those it was validated text-only on.
    """
    text_only = row.validated_text_only
    if model is not None and not text_only:
        text_only = model.validated_text_only_on.filter(pk=row.pk).exists()
    sources = _sources(row)
    sources.update(_sources(row.accelerator, prefix="accelerator."))
    return et.ServerSpec(
        slug=row.slug,
        name=row.name,
        name_zh=row.name_zh,
        accelerator=accelerator_spec(row.accelerator),
        packages=row.packages,
        rack_units=row.rack_units,
        max_input_kw=_f(row.max_input_kw),
        typical_load_factor=_f(row.typical_load_factor),
        psu_count=row.psu_count,
        psu_watts=row.psu_watts,
        psu_redundant=row.psu_redundant,
        nics=tuple(
            et.NicSpec(fabric=n.fabric, count=n.count, speed_gbps=n.speed_gbps, role=n.role)
            for n in row.nics.all()
        ),
        scale_up_fabric=row.scale_up_fabric,
        scale_up_bandwidth_gbps=_f(row.scale_up_bandwidth_gbps),
        scale_up_domain_devices=row.scale_up_domain_devices,
        cpu=row.cpu,
        ram_gb=row.ram_gb,
        storage=row.storage,
        vendor=row.vendor,
        validated_text_only=text_only,
        sources=sources,
    )


def switch_spec(row: SwitchModel) -> et.SwitchSpec:
    return et.SwitchSpec(
        slug=row.slug,
        name=row.name,
        name_zh=row.name_zh,
        vendor=row.vendor or "",
        fabric=row.fabric,
        ports=row.ports,
        port_speed_gbps=row.port_speed_gbps,
        rack_units=row.rack_units,
        power_kw=_f(row.power_kw),
        sources=_sources(row),
    )


def switch_specs(rows: Iterable[SwitchModel] | None = None) -> tuple[et.SwitchSpec, ...]:
    """Every switch model (or the given rows) as SwitchSpecs, in catalog order."""
    return tuple(switch_spec(r) for r in (rows if rows is not None else SwitchModel.objects.all()))


def rack_spec(row: RackType) -> et.RackSpec:
    return et.RackSpec(
        slug=row.slug,
        name=row.name,
        name_zh=row.name_zh,
        rack_units=row.rack_units,
        max_kw=_f(row.max_kw),
        cooling=row.cooling,
        pdu_units=row.pdu_units,
        reserved_units=row.reserved_units,
    )


def site_spec(row: SiteProfile) -> et.SiteSpec:
    ladder = tuple(row.breaker_ladder_amps) if row.breaker_ladder_amps else et.SiteSpec().breaker_ladder_amps
    return et.SiteSpec(
        slug=row.slug,
        name=row.name,
        voltage_ll=_f(row.voltage_ll),
        phases=row.phases,
        power_factor=_f(row.power_factor),
        continuous_derating=_f(row.continuous_derating),
        pue=_f(row.pue),
        electricity_price_per_kwh=row.electricity_price_per_kwh,
        colocation_per_rack_month=row.colocation_per_rack_month,
        air_cooling_kw_limit=_f(row.air_cooling_kw_limit),
        currency=row.currency,
        breaker_ladder_amps=ladder,
        sources=_sources(row),
    )


def workload_spec(row: Scenario) -> et.WorkloadSpec:
    """A scenario's workload defaults (the engineer edits them in the form)."""
    return et.WorkloadSpec(
        input_tokens=row.input_tokens,
        output_tokens=row.output_tokens,
        concurrency=row.concurrency,
        needs_vision=row.needs_vision,
        availability_target=_f(row.availability_target),
        ttft_target_s=_f(row.ttft_target_s) if row.ttft_target_s is not None else None,
        tpot_target_ms=_f(row.tpot_target_ms) if row.tpot_target_ms is not None else None,
    )


# --------------------------------------------------------------------------- money


_DECIMAL_FIELDS = {
    f.name
    for f in dataclasses.fields(et.CommercialSpec)
    if f.name
    not in ("currency", "horizon_years", "depreciation_years", "lease_includes_power", "switch_unit_prices")
}


def _slug(obj: Any) -> str:
    if obj is None:
        return ""
    return obj if isinstance(obj, str) else obj.slug


def _yearly(item: PriceItem, nodes: int) -> Decimal:
    """An item's amount per year for ``nodes`` nodes (one-off items count once)."""
    if item.unit == PriceUnit.PER_NODE_YEAR:
        return item.unit_price * nodes
    if item.unit == PriceUnit.PER_NODE_MONTH:
        return item.unit_price * nodes * 12
    if item.unit == PriceUnit.PER_NODE:
        return item.unit_price * nodes
    return item.unit_price


def _rack_prices_by_cooling(items, rack_slug: str | None) -> dict[str, Decimal]:
    """Prices of the other rack types by their cooling class, for racks over the air-cooling limit."""
    rack_items = [i for i in items if i.kind == "rack" and i.item_slug and i.item_slug != rack_slug]
    cooling = dict(
        RackType.objects.filter(slug__in=[i.item_slug for i in rack_items]).values_list("slug", "cooling")
    )
    out: dict[str, Decimal] = {}
    for item in rack_items:
        kind = cooling.get(item.item_slug)
        if kind and kind not in out:
            out[kind] = item.unit_price
    return out


def commercial_spec(
    price_list: PriceList | None = None,
    server: ServerModel | et.ServerSpec | str | None = None,
    nodes: int | None = None,
    on_date: dt.date | None = None,
    overrides: Mapping[str, Any] | None = None,
    *,
    currency: str = "CNY",
    rack: RackType | et.RackSpec | str | None = None,
) -> et.CommercialSpec:
    """Commercial terms from the price list in force on ``on_date`` (or the one given).

    * server price and monthly lease: the ``server`` item priced for that server;
    * switches: every ``switch`` item by its catalog slug; optics: the first ``optics`` item;
    * rack: the ``rack`` item for ``rack`` (default rack type if omitted);
    * installation, software support and O&M: per-node items × ``nodes``.  When
      ``nodes`` is not given, O&M per node-year becomes ``om_percent_of_capex``
      (÷ the server price, so it still scales with the cluster) and installation
      and software support are priced for one node: pass ``nodes``.
    * ``overrides`` replace any CommercialSpec field (unknown names raise ValueError).
    """
    day = on_date or timezone.localdate()
    if price_list is None:
        price_list = price_list_in_force(currency, day)
    if price_list is None:
        return _apply_overrides(et.CommercialSpec(currency=currency), overrides)

    items = list(price_list.items.all().order_by("sku"))
    server_slug = _slug(server)
    rack_slug = _slug(rack) or _slug(default_rack())

    def first(kind: str, slug: str | None = None) -> PriceItem | None:
        for item in items:
            if item.kind == kind and (slug is None or item.item_slug == slug):
                return item
        return None

    server_item = first("server", server_slug) if server_slug else None
    optics = first("optics", "") or first("optics")  # the 400G-class transceiver has no media code
    rack_item = first("rack", rack_slug) or first("rack")
    gateway = first("other", "gateway")
    storage = first("other", "storage-tb")
    count = nodes if nodes is not None else 1
    installation = sum((_yearly(i, count) for i in items if i.kind == "install"), Decimal("0"))
    software = sum((_yearly(i, count) for i in items if i.kind == "software"), Decimal("0"))
    om_items = [i for i in items if i.kind == "om"]
    om_per_year: Decimal | None = None
    om_percent = Decimal("0")
    if om_items:
        if (
            nodes is None
            and server_item is not None
            and server_item.unit_price > 0
            and all(i.unit in (PriceUnit.PER_NODE_YEAR, PriceUnit.PER_NODE_MONTH) for i in om_items)
        ):
            per_node = sum((_yearly(i, 1) for i in om_items), Decimal("0"))
            om_percent = per_node / server_item.unit_price
        else:
            om_per_year = sum((_yearly(i, count) for i in om_items), Decimal("0"))

    spec = et.CommercialSpec(
        currency=price_list.currency,
        usd_rate=price_list.usd_rate,
        server_unit_price=server_item.unit_price if server_item else Decimal("0"),
        server_lease_per_month=(server_item.lease_per_month or Decimal("0")) if server_item else Decimal("0"),
        switch_unit_prices={i.item_slug: i.unit_price for i in items if i.kind == "switch" and i.item_slug},
        optics_unit_price=optics.unit_price if optics else Decimal("0"),
        media_unit_prices={i.item_slug: i.unit_price for i in items if i.kind == "optics" and i.item_slug},
        rack_unit_prices_by_cooling=_rack_prices_by_cooling(items, rack_slug),
        gateway_unit_price=gateway.unit_price if gateway else Decimal("0"),
        storage_price_per_tb=storage.unit_price if storage else Decimal("0"),
        rack_unit_price=rack_item.unit_price if rack_item else Decimal("0"),
        installation=installation,
        software_support_per_year=software,
        om_per_year=om_per_year,
        om_percent_of_capex=om_percent,
    )
    return _apply_overrides(spec, overrides)


def _apply_overrides(spec: et.CommercialSpec, overrides: Mapping[str, Any] | None) -> et.CommercialSpec:
    if not overrides:
        return spec
    known = {f.name for f in dataclasses.fields(et.CommercialSpec)}
    unknown = sorted(set(overrides) - known)
    if unknown:
        raise ValueError(f"unknown commercial field(s): {', '.join(unknown)}")
    changes: dict[str, Any] = {}
    for name, value in overrides.items():
        if name in _DECIMAL_FIELDS and value is not None:
            value = Decimal(str(value))
        elif name == "switch_unit_prices":
            value = {k: Decimal(str(v)) for k, v in dict(value).items()}
        changes[name] = value
    return dataclasses.replace(spec, **changes)


def bom_items(
    price_list: PriceList, *, server: ServerModel | et.ServerSpec | str | None = None
) -> tuple[et.BomItem, ...]:
    """The list's items as engine BomItems (the server's own item first when given)."""
    items = list(price_list.items.all().order_by("kind", "sku"))
    server_slug = _slug(server)
    items.sort(key=lambda i: (not (i.kind == "server" and i.item_slug == server_slug), i.kind, i.sku))
    category = {"om": "other", "lease": "other"}
    return tuple(
        et.BomItem(
            sku=i.sku,
            description=i.description,
            unit_price=i.unit_price,
            category=category.get(i.kind, i.kind),
            lease_per_month=i.lease_per_month,
        )
        for i in items
    )
