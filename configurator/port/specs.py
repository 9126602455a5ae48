"""Catalog values → engine input types: the one conversion, pure (no Django).

Every function takes the catalog's stored values as keyword arguments, named as the catalog's
fields (``memory_gb``, ``max_input_kw``, ``tflops_bf16`` …), and returns the engine's spec.  Two
adapters feed them: ``configurator.port.inputs`` with database rows (the Django catalog) and
``configurator.reference`` with the seed's records (``catalog/seed/*.yaml`` read by
``catalog.seed.loader``), so a plan from the seed files and a plan from the database after
``load_catalog`` are the same plan.  Fields a function does not use are accepted and ignored, so an
adapter may pass a whole row's values.

Units change here: the catalog stores what vendors quote (GB, TB/s, kW, Gbit/s, Decimal
fractions); the engine takes bytes, bytes/s, float kW and Decimal money.  Every figure's source
travels along as ``engine.types.Source`` so a proposal can list the assumptions it used.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from catalog.importers.hf_config import parse_hf_config

from ..engine import types as et

TB = 10**12

# Catalog source kinds → engine source kinds (an admin's edit is an input, not an assumption).
_KIND = {"seed": "seed", "public": "public", "assumed": "assumed", "admin": "input"}


def source(entry: Mapping[str, str] | None) -> et.Source:
    """One catalog ``{"kind", "ref"}`` entry as an engine Source (unknown → assumed)."""
    if not entry:
        return et.Source("assumed", "not recorded in the catalog")
    return et.Source(_KIND.get(entry.get("kind", ""), "assumed"), entry.get("ref", ""))


def _sources(
    stored: Mapping[str, Any] | None, names: Iterable[str], prefix: str = ""
) -> dict[str, et.Source]:
    """The Sources of the figures ``names`` from a row's stored ``sources`` (missing → assumed)."""
    stored = stored or {}
    out = {}
    for name in names:
        entry = stored.get(name)
        out[f"{prefix}{name}"] = source(entry if isinstance(entry, Mapping) else None)
    return out


def _f(value: Decimal | float | int | None) -> float:
    return float(value) if value is not None else 0.0


# --------------------------------------------------------------------------- model

# LlmModel fields the engine's ModelSpec takes under the same name.
MODEL_FIELDS = (
    "slug",
    "name",
    "total_params",
    "active_params",
    "num_layers",
    "hidden_size",
    "vocab_size",
    "num_attention_heads",
    "num_kv_heads",
    "head_dim",
    "gqa_layers",
    "mla_layers",
    "linear_layers",
    "sliding_layers",
    "sliding_window",
    "kv_lora_rank",
    "qk_rope_head_dim",
    "index_head_dim",
    "index_topk",
    "index_n_heads",
    "linear_num_heads",
    "linear_head_dim",
    "linear_state_dtype_bytes",
    "linear_conv_kernel",
    "linear_conv_dim",
    "linear_conv_dtype_bytes",
    "num_experts",
    "experts_per_token",
    "shared_experts",
    "moe_layers",
    "expert_weight_bytes",
    "non_expert_weight_bytes",
    "weight_format",
    "activation_format",
    "max_context",
    "has_vision",
    "vision_params",
    "vision_bytes",
    "tie_word_embeddings",
    "api_price_input_per_m",
    "api_price_output_per_m",
    "api_price_cached_input_per_m",
    "api_price_currency",
    "licence_note",
    "hf_model_id",
    "recipe_family",
    "vllm_tokenizer_mode",
    "vllm_reasoning_parser",
    "vllm_tool_call_parser",
)


def model_spec(
    *,
    text_only_servers: Iterable[str],
    sources: Mapping[str, Any] | None,
    sourced: Iterable[str],
    **fields: Any,
) -> et.ModelSpec:
    """An LLM's stored fields as the engine's ModelSpec (same names, bytes and counts as stored).

    ``text_only_servers``: slugs of the servers it is validated text-only on; ``sources``: the
    stored ``{field: {kind, ref}}``; ``sourced``: the fields whose source the spec carries."""
    given = {name: fields[name] for name in MODEL_FIELDS if name in fields}
    return et.ModelSpec(
        **given,
        text_only_servers=tuple(sorted(text_only_servers)),
        sources=_sources(sources, sourced),
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


def checkpoint_spec(
    *,
    slug: str,
    name: str,
    expert_bytes: int,
    non_expert_bytes: int,
    architecture: str = "",
    embedding_bytes: int = 0,
    vision_bytes: int = 0,
    weight_format: str = "",
    non_expert_format: str = "",
    activation_format: str = "",
    quant_method: str = "",
    platforms: Iterable[str] | None = None,
    launch_flags: Iterable[str] | None = None,
    param_groups: Mapping[str, Any] | None = None,
    group_formats: Mapping[str, str] | None = None,
    hf_repo: str = "",
    notes: str = "",
    **_other: Any,
) -> et.CheckpointSpec:
    """A checkpoint as the engine's CheckpointSpec (bytes, formats, platforms, flags)."""
    return et.CheckpointSpec(
        slug=slug,
        name=name,
        expert_bytes=expert_bytes,
        non_expert_bytes=non_expert_bytes,
        architecture=architecture,
        embedding_bytes=embedding_bytes,
        vision_bytes=vision_bytes,
        weight_format=weight_format,
        non_expert_format=non_expert_format,
        activation_format=activation_format,
        quant_method=quant_method,
        platforms=tuple(platforms or ()),
        launch_flags=tuple(launch_flags or ()),
        param_groups={k: int(v) for k, v in (param_groups or {}).items()},
        group_formats=dict(group_formats or {}),
        source=hf_repo or notes,
    )


def speculator_spec(
    *,
    slug: str,
    name: str,
    target: str,
    method: str,
    hf_repo: str = "",
    parameters: int = 0,
    weight_bytes: int = 0,
    num_layers: int = 1,
    num_kv_heads: int = 0,
    head_dim: int = 0,
    num_speculative_tokens: int = 1,
    acceptance_rate: Decimal | float = 0.7,
    platforms: Iterable[str] | None = None,
    min_versions: Mapping[str, str] | None = None,
    eager_on: Iterable[str] | None = None,
    sources: Mapping[str, Any] | None = None,
    notes: str = "",
    **_other: Any,
) -> et.SpeculatorSpec:
    """A speculative draft as the engine's SpeculatorSpec; its source is where its acceptance was published."""
    ref = ((sources or {}).get("acceptance_rate") or {}).get("ref", "")
    return et.SpeculatorSpec(
        slug=slug,
        name=name,
        target=target,
        method=method,
        hf_repo=hf_repo,
        parameters=int(parameters or 0),
        weight_bytes=int(weight_bytes or 0),
        num_layers=int(num_layers or 0),
        num_kv_heads=int(num_kv_heads or 0),
        head_dim=int(head_dim or 0),
        num_speculative_tokens=int(num_speculative_tokens or 0),
        acceptance_rate=float(acceptance_rate),
        platforms=tuple(platforms or ()),
        min_versions={str(k): str(v) for k, v in (min_versions or {}).items()},
        eager_on=tuple(eager_on or ()),
        source=" ".join(str(ref).split()) or notes,
    )


# --------------------------------------------------------------------------- hardware


def accelerator_spec(
    *,
    slug: str,
    name: str,
    memory_gb: Decimal,
    memory_bandwidth_tbps: Decimal,
    tflops_bf16: Decimal | None = None,
    tflops_fp16: Decimal | None = None,
    tflops_fp8: Decimal | None = None,
    tflops_int8: Decimal | None = None,
    tflops_mxfp4: Decimal | None = None,
    tdp_w: Decimal | None = None,
    logical_devices_per_package: int = 1,
    vendor: str = "",
    domestic: bool = False,
    software_stack: str = "cuda",
    runtime_memory_gib: Decimal | None = None,
    sources: Mapping[str, Any] | None = None,
    vllm_support: str = "supported",
    vllm_support_note: str = "",
    generation: str = "",
    **_other: Any,
) -> et.AcceleratorSpec:
    """Per logical device: GB → bytes (10⁹), TB/s → bytes/s; TFLOPS only where supported (> 0)."""
    tflops = {
        "bf16": tflops_bf16,
        "fp16": tflops_fp16,
        "fp8": tflops_fp8,
        "int8": tflops_int8,
        "mxfp4": tflops_mxfp4,
    }
    return et.AcceleratorSpec(
        slug=slug,
        name=name,
        memory_bytes=int(memory_gb * et.GB),
        memory_bandwidth_bytes_s=float(memory_bandwidth_tbps * TB),
        tflops={k: float(v) for k, v in tflops.items() if v and v > 0},
        tdp_watts=_f(tdp_w),
        logical_devices_per_package=logical_devices_per_package,
        vendor=vendor,
        domestic=domestic,
        software_stack=software_stack,
        runtime_memory_bytes=int((runtime_memory_gib or 0) * et.GIB),
        runtime_memory_source=((sources or {}).get("runtime_memory_gib") or {}).get("ref", ""),
        vllm_support=vllm_support or "supported",
        vllm_support_note=vllm_support_note or "",
        generation=generation or "",
    )


def nic_spec(*, fabric: str, count: int, speed_gbps: int, role: str, **_other: Any) -> et.NicSpec:
    return et.NicSpec(fabric=fabric, count=count, speed_gbps=speed_gbps, role=role)


def server_spec(
    *,
    slug: str,
    name: str,
    accelerator: et.AcceleratorSpec,
    packages: int,
    rack_units: int,
    max_input_kw: Decimal | None,
    nics: Iterable[et.NicSpec],
    sources: Mapping[str, Any] | None,
    sourced: Iterable[str],
    accelerator_sources: Mapping[str, Any] | None,
    accelerator_sourced: Iterable[str],
    name_zh: str = "",
    typical_load_factor: Decimal | None = None,
    psu_count: int = 0,
    psu_watts: int = 0,
    psu_redundant: int = 0,
    scale_up_fabric: str = "pcie",
    scale_up_bandwidth_gbps: Decimal | None = None,
    scale_up_domain_devices: int = 0,
    cpu: str = "",
    ram_gb: int = 0,
    storage: str = "",
    vendor: str = "",
    origin: str = "",
    validated_text_only: bool = False,
    weight_kg: Decimal | None = None,
    **_other: Any,
) -> et.ServerSpec:
    """A server with its accelerator (already converted; its sources are listed as ``accelerator.*``)
    and NICs.

    ``validated_text_only``: the server's own flag, or true when the planned model lists the server
    among those it was validated text-only on (the adapter decides)."""
    return et.ServerSpec(
        slug=slug,
        name=name,
        name_zh=name_zh,
        accelerator=accelerator,
        packages=packages,
        rack_units=rack_units,
        max_input_kw=_f(max_input_kw),
        typical_load_factor=_f(typical_load_factor),
        psu_count=psu_count,
        psu_watts=psu_watts,
        psu_redundant=psu_redundant,
        nics=tuple(nics),
        scale_up_fabric=scale_up_fabric,
        scale_up_bandwidth_gbps=_f(scale_up_bandwidth_gbps),
        scale_up_domain_devices=scale_up_domain_devices,
        cpu=cpu,
        ram_gb=ram_gb,
        storage=storage,
        vendor=vendor,
        origin=origin or "",
        validated_text_only=validated_text_only,
        weight_kg=_f(weight_kg),
        sources={
            **_sources(sources, sourced),
            **_sources(accelerator_sources, accelerator_sourced, prefix="accelerator."),
        },
    )


def switch_spec(
    *,
    slug: str,
    name: str,
    fabric: str,
    ports: int,
    port_speed_gbps: int,
    sources: Mapping[str, Any] | None,
    sourced: Iterable[str],
    name_zh: str = "",
    vendor: str | None = "",
    origin: str | None = "",
    rack_units: int = 1,
    power_kw: Decimal | None = None,
    weight_kg: Decimal | None = None,
    **_other: Any,
) -> et.SwitchSpec:
    return et.SwitchSpec(
        slug=slug,
        name=name,
        name_zh=name_zh,
        vendor=vendor or "",
        origin=origin or "",
        fabric=fabric,
        ports=ports,
        port_speed_gbps=port_speed_gbps,
        rack_units=rack_units,
        power_kw=_f(power_kw),
        weight_kg=_f(weight_kg),
        sources=_sources(sources, sourced),
    )


def rack_spec(
    *,
    slug: str,
    name: str,
    name_zh: str = "",
    rack_units: int = 42,
    max_kw: Decimal | None = None,
    cooling: str = "air",
    pdu_units: int = 0,
    reserved_units: int = 2,
    weight_kg: Decimal | None = None,
    width_mm: int = 600,
    depth_mm: int = 1200,
    sources: Mapping[str, Any] | None = None,
    sourced: Iterable[str] = (),
    **_other: Any,
) -> et.RackSpec:
    return et.RackSpec(
        slug=slug,
        name=name,
        name_zh=name_zh,
        rack_units=rack_units,
        max_kw=_f(max_kw),
        cooling=cooling,
        pdu_units=pdu_units,
        reserved_units=reserved_units,
        weight_kg=_f(weight_kg),
        width_mm=width_mm,
        depth_mm=depth_mm,
        sources=_sources(sources, sourced),
    )


def site_spec(
    *,
    slug: str,
    name: str,
    voltage_ll: Decimal,
    phases: int,
    power_factor: Decimal,
    continuous_derating: Decimal,
    pue: Decimal,
    electricity_price_per_kwh: Decimal,
    colocation_per_rack_month: Decimal,
    air_cooling_kw_limit: Decimal,
    sources: Mapping[str, Any] | None,
    sourced: Iterable[str],
    currency: str = "CNY",
    breaker_ladder_amps: Iterable[int] | None = None,
    floor_load_kg_m2: int = 0,
    **_other: Any,
) -> et.SiteSpec:
    """A site profile; no breaker ladder given → the engine's standard ladder."""
    ladder = tuple(breaker_ladder_amps) if breaker_ladder_amps else et.SiteSpec().breaker_ladder_amps
    return et.SiteSpec(
        slug=slug,
        name=name,
        voltage_ll=_f(voltage_ll),
        phases=phases,
        power_factor=_f(power_factor),
        continuous_derating=_f(continuous_derating),
        pue=_f(pue),
        electricity_price_per_kwh=electricity_price_per_kwh,
        colocation_per_rack_month=colocation_per_rack_month,
        air_cooling_kw_limit=_f(air_cooling_kw_limit),
        floor_load_kg_m2=_f(floor_load_kg_m2),
        currency=currency,
        breaker_ladder_amps=ladder,
        sources=_sources(sources, sourced),
    )


def workload_spec(
    *,
    input_tokens: int,
    output_tokens: int,
    concurrency: int,
    needs_vision: bool,
    availability_target: Decimal | None,
    ttft_target_s: Decimal | None = None,
    tpot_target_ms: Decimal | None = None,
    **_other: Any,
) -> et.WorkloadSpec:
    """A scenario's workload defaults (the engineer edits them in the form)."""
    return et.WorkloadSpec(
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        concurrency=concurrency,
        needs_vision=needs_vision,
        availability_target=_f(availability_target),
        ttft_target_s=_f(ttft_target_s) if ttft_target_s is not None else None,
        tpot_target_ms=_f(tpot_target_ms) if tpot_target_ms is not None else None,
    )


# --------------------------------------------------------------------------- money


@dataclass(frozen=True)
class PriceLine:
    """One item of a price list, as the commercial terms read it (the adapter builds it from a row)."""

    sku: str
    kind: str  # server, switch, optics, rack, install, software, om, other …
    item_slug: str
    unit: str  # each, per_rack, per_node, per_node_month, per_node_year
    unit_price: Decimal
    lease_per_month: Decimal | None = None
    description: str = ""


PER_NODE = "per_node"
PER_NODE_MONTH = "per_node_month"
PER_NODE_YEAR = "per_node_year"

_DECIMAL_FIELDS = {
    f.name
    for f in dataclasses.fields(et.CommercialSpec)
    if f.name
    not in (
        "currency",
        "horizon_years",
        "depreciation_years",
        "lease_includes_power",
        "switch_unit_prices",
        "prices_on_request",
    )
}


def _yearly(item: PriceLine, nodes: int) -> Decimal:
    """An item's amount per year for ``nodes`` nodes (one-off items count once)."""
    if item.unit == PER_NODE_YEAR:
        return item.unit_price * nodes
    if item.unit == PER_NODE_MONTH:
        return item.unit_price * nodes * 12
    if item.unit == PER_NODE:
        return item.unit_price * nodes
    return item.unit_price


def commercial_spec(
    *,
    currency: str,
    usd_rate: Decimal,
    items: Sequence[PriceLine],
    server_slug: str,
    rack_slug: str,
    rack_cooling: Mapping[str, str],
    nodes: int | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> et.CommercialSpec:
    """Commercial terms from one price list's items (``items`` sorted by SKU).

    * server price and monthly lease: the ``server`` item priced for ``server_slug``;
    * switches: every ``switch`` item by its catalog slug; optics: the first ``optics`` item
      without a media code;
    * rack: the ``rack`` item for ``rack_slug``; other racks by their cooling class
      (``rack_cooling``: rack slug → cooling), for racks over the air-cooling limit;
    * installation, software support and O&M: per-node items × ``nodes``.  When ``nodes`` is not
      given, O&M per node-year becomes ``om_percent_of_capex`` (÷ the server price, so it still
      scales with the cluster) and installation and software support are priced for one node.
    * ``overrides`` replace any CommercialSpec field (unknown names raise ValueError).
    """

    def first(kind: str, slug: str | None = None) -> PriceLine | None:
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
            and all(i.unit in (PER_NODE_YEAR, PER_NODE_MONTH) for i in om_items)
        ):
            per_node = sum((_yearly(i, 1) for i in om_items), Decimal("0"))
            om_percent = per_node / server_item.unit_price
        else:
            om_per_year = sum((_yearly(i, count) for i in om_items), Decimal("0"))

    by_cooling: dict[str, Decimal] = {}
    for item in items:
        if item.kind == "rack" and item.item_slug and item.item_slug != rack_slug:
            kind = rack_cooling.get(item.item_slug)
            if kind and kind not in by_cooling:
                by_cooling[kind] = item.unit_price

    spec = et.CommercialSpec(
        currency=currency,
        usd_rate=usd_rate,
        server_unit_price=server_item.unit_price if server_item else Decimal("0"),
        server_lease_per_month=(server_item.lease_per_month or Decimal("0")) if server_item else Decimal("0"),
        switch_unit_prices={i.item_slug: i.unit_price for i in items if i.kind == "switch" and i.item_slug},
        optics_unit_price=optics.unit_price if optics else Decimal("0"),
        media_unit_prices={i.item_slug: i.unit_price for i in items if i.kind == "optics" and i.item_slug},
        rack_unit_prices_by_cooling=by_cooling,
        gateway_unit_price=gateway.unit_price if gateway else Decimal("0"),
        storage_price_per_tb=storage.unit_price if storage else Decimal("0"),
        rack_unit_price=rack_item.unit_price if rack_item else Decimal("0"),
        installation=installation,
        software_support_per_year=software,
        om_per_year=om_per_year,
        om_percent_of_capex=om_percent,
        # No server item on the list: the server is priced on request, never counted at 0.
        prices_on_request=() if server_item is not None else ("server",),
    )
    return apply_overrides(spec, overrides)


def apply_overrides(spec: et.CommercialSpec, overrides: Mapping[str, Any] | None) -> et.CommercialSpec:
    """``spec`` with some fields replaced (money as Decimal); unknown names raise ValueError."""
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
        elif name == "prices_on_request":
            value = tuple(str(v) for v in value or ())
        changes[name] = value
    if changes.get("server_unit_price") is not None and "prices_on_request" not in changes:
        # A price typed in (0 for servers the customer already owns) replaces "on request".
        changes["prices_on_request"] = tuple(p for p in spec.prices_on_request if p != "server")
    return dataclasses.replace(spec, **changes)


def bom_items(items: Sequence[PriceLine], *, server_slug: str = "") -> tuple[et.BomItem, ...]:
    """A price list's items as engine BomItems (the server's own item first, then by kind and SKU)."""
    ordered = sorted(
        items, key=lambda i: (not (i.kind == "server" and i.item_slug == server_slug), i.kind, i.sku)
    )
    category = {"om": "other", "lease": "other"}
    return tuple(
        et.BomItem(
            sku=i.sku,
            description=i.description,
            unit_price=i.unit_price,
            category=category.get(i.kind, i.kind),
            lease_per_month=i.lease_per_month,
        )
        for i in ordered
    )
