"""Plan requests as JSON: parse, validate and resolve into engine types.

One format serves the JSON API (``POST /api/plan``), ``manage.py plan``, the
configurator form (which builds the same dict) and the quote snapshots.  A
request names catalog entries by slug or gives them inline; ``resolve()``
returns a :class:`~configurator.engine.types.PlanRequest` and
``request_to_inline()`` turns one back into a fully inline dict, so a quote can
be replanned identically after the catalog changes.

Every problem is reported as ``{"field.path": ["message", …]}`` through
:class:`RequestError`; nothing here raises anything else on bad input.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
import types as pytypes
import typing
from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from enum import Enum
from functools import cache
from typing import Any

from configurator.engine import site_values as sv
from configurator.engine import types as et
from configurator.engine.defaults import SERVING_RANGES, serving_defaults
from configurator.engine.engine_versions import engine_error, engine_for, version_error
from configurator.engine.formatting import format_plain
from configurator.engine.launch import launch_port_conflicts
from configurator.engine.placement import checkpoint_flag_problem
from configurator.engine.speculative import version_reason


class RequestError(Exception):
    """Bad request: ``errors`` maps a dotted field path to messages."""

    def __init__(self, errors: Mapping[str, list[str]]):
        super().__init__("; ".join(f"{k}: {' '.join(v)}" for k, v in errors.items()))
        self.errors = {k: list(v) for k, v in errors.items()}


# Limits on what a request may say.  The engine judges whether a deployment
# works; these only keep out values that mean nothing (or would take the server
# down), each with a message naming the field.
RANGES: dict[str, tuple[float, float]] = {
    "topology.nodes": (1, 1024),
    "topology.prefill_nodes": (0, 1024),
    "topology.decode_nodes": (0, 1024),
    "parallel.tp": (1, 1024),
    "parallel.dp": (1, 1024),
    "parallel.pp": (1, 128),
    "parallel.dp_local": (1, 64),
    **{f"serving.{name}": bounds for name, bounds in SERVING_RANGES.items()},  # engine/defaults.py
    "workload.input_tokens": (1, 16_777_216),
    "workload.output_tokens": (1, 16_777_216),
    "workload.concurrency": (1, 1_000_000),
    "workload.availability_target": (0.5, 0.99999),
    "workload.ttft_target_s": (0.001, 86_400),
    "workload.tpot_target_ms": (0.01, 100_000),
    "workload.ttft_p90_target_s": (0.001, 86_400),
    "workload.tpot_p90_target_ms": (0.01, 100_000),
    "workload.measured_output_tokens_per_s": (0.001, 10**9),
    "site.voltage_ll": (100, 1000),
    "site.phases": (1, 3),
    "site.power_factor": (0.5, 1.0),
    "site.continuous_derating": (0.5, 1.0),
    "site.pue": (1.0, 3.0),
    "site.electricity_price_per_kwh": (0, 100),
    "site.colocation_per_rack_month": (0, 10**7),
    "site.air_cooling_kw_limit": (1, 200),
    "rack.rack_units": (1, 60),
    "rack.max_kw": (1, 200),
    "rack.pdu_units": (0, 10),
    "rack.reserved_units": (0, 20),
    "commercial.usd_rate": (0.0001, 100_000),
    "commercial.server_unit_price": (0, 10**12),
    "commercial.server_lease_per_month": (0, 10**11),
    "commercial.optics_unit_price": (0, 10**9),
    "commercial.rack_unit_price": (0, 10**9),
    "commercial.installation": (0, 10**12),
    "commercial.software_support_per_year": (0, 10**12),
    "commercial.om_per_year": (0, 10**12),
    "commercial.om_percent_of_capex": (0, 1),
    "commercial.residual_value_fraction": (0, 1),
    "commercial.horizon_years": (1, 15),
    "commercial.depreciation_years": (1, 15),
    "commercial.discount_rate": (0, 1),
    "commercial.utilisation": (0.01, 1),
    "commercial.power_load_factor": (0.05, 1),
    "commercial.standby_power_load_factor": (0.0, 1),
    "commercial.quote_discount": (0, 0.9),
    "performance.decode_bandwidth_efficiency": (0.01, 1),
    "performance.prefill_mfu": (0.01, 1),
    "performance.scale_out_efficiency": (0.01, 1),
    "performance.prefix_cache_hit_rate": (0, 0.99),
    "performance.step_overhead_ms": (0, 1000),
    "performance.speculative_tokens": (0, 16),
    "speculative.num_speculative_tokens": (0, 16),
    "prefill.max_num_seqs": (1, 65_536),
    "decode.max_num_seqs": (1, 65_536),
    "prefill.max_num_batched_tokens": (1, 4_194_304),
    "decode.max_num_batched_tokens": (1, 4_194_304),
    "prefill.tp": (1, 4096),
    "decode.tp": (1, 4096),
    "prefill.dp": (1, 4096),
    "decode.dp": (1, 4096),
    "performance.speculative_acceptance_rate": (0, 1),
    "performance.draft_model_gb": (0, 2000),
    "performance.draft_model_layers": (0, 200),
    "launch.rpc_port": (1024, 65535),
    "launch.api_port": (1024, 65535),
    "launch.proxy_port": (1024, 65535),
    "launch.kv_port_prefill": (1024, 65535),
    "launch.kv_port_decode": (1024, 65535),
    "launch.weight_read_gb_s": (0.01, 1000),
    "model.num_layers": (1, 100_000),
    "model.hidden_size": (1, 10**7),
    "server.packages": (1, 1024),
    "server.rack_units": (1, 60),
    "server.max_input_kw": (0.01, 1000),
}

SECTIONS = {
    "serving": et.ServingSpec,
    "workload": et.WorkloadSpec,
    "performance": et.PerformanceSpec,
    "launch": et.LaunchSpec,
}
TOP_LEVEL_KEYS = {
    "scenario", "model", "server", "topology", "serving", "workload", "site", "rack",
    "switches", "commercial", "performance", "launch", "checkpoint", "speculators",
}  # fmt: skip


# --------------------------------------------------------------------------- typed conversion


@cache
def _hints(cls) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _type_name(tp) -> str:
    names = {
        int: "a whole number",
        float: "a number",
        Decimal: "a number",
        bool: "true or false",
        str: "text",
    }
    return names.get(tp, getattr(tp, "__name__", str(tp)))


class _Collector:
    def __init__(self):
        self.errors: dict[str, list[str]] = {}

    def add(self, path: str, message: str) -> None:
        self.errors.setdefault(path, []).append(message)


def _range_key(path: str) -> str:
    """``topology.parallel.tp`` and ``topology.decode_parallel.tp`` share ``parallel.tp``."""
    parts = path.split(".")
    if len(parts) >= 2 and parts[-2] in {"parallel", "decode_parallel"}:
        return "parallel." + parts[-1]
    if parts[0] in {"model", "server", "site", "rack"} and len(parts) == 2:
        return path
    return ".".join(parts[-2:]) if len(parts) >= 2 else path


def _check_range(value, path: str, errs: _Collector) -> None:
    bounds = RANGES.get(_range_key(path))
    if bounds is None or isinstance(value, bool):
        return
    low, high = bounds
    if not (low <= float(value) <= high):
        errs.add(
            path, f"must be between {format_plain(low)} and {format_plain(high)} (got {format_plain(value)})."
        )


# Free-text catalog fields that may span lines (they reach no generated file).
MULTILINE_FIELDS = {"licence_note", "description", "notes"}


def _multiline(path: str) -> bool:
    return path.rsplit(".", 1)[-1] in MULTILINE_FIELDS


def _check_launch(launch: et.LaunchSpec | None, errs: _Collector) -> None:
    """The one validation boundary for site values that reach the launch bundle (issue 13):
    each must match its grammar in ``engine/site_values.py`` exactly (no trimming), or the
    request is refused naming the field.  Empty means "not entered" (a placeholder)."""
    if launch is None:
        return
    for i, ip in enumerate(launch.node_ips):
        if ip and (problem := sv.node_address_error(ip)):
            errs.add("launch.node_ips", f"entry {i + 1} {problem}")
    checks = (
        ("launch.data_nic", launch.data_nic, sv.nic_error),
        ("launch.model_path", launch.model_path, sv.model_path_error),
        ("launch.image", launch.image, sv.image_error),
        ("launch.served_model_name", launch.served_model_name, sv.served_name_error),
    )
    for path, value, rule in checks:
        if value and (problem := rule(value)):
            errs.add(path, problem)
    for key, value in (launch.node_selector or {}).items():
        if problem := sv.label_key_error(key):
            errs.add("launch.node_selector", f"key {problem}")
        elif isinstance(value, str) and (problem := sv.label_value_error(value)):
            errs.add(f"launch.node_selector.{key}", problem)


def _convert(value, tp, path: str, errs: _Collector):
    """Convert a JSON value to ``tp``; on failure record an error and return None."""
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin in (typing.Union, pytypes.UnionType):
        if value is None and type(None) in args:
            return None
        non_none = [a for a in args if a is not type(None)]
        if len(non_none) == 1:
            return _convert(value, non_none[0], path, errs)
        for candidate in non_none:  # e.g. float | int | Decimal | str: first that fits
            trial = _Collector()
            out = _convert(value, candidate, path, trial)
            if not trial.errors:
                return out
        errs.add(path, "has an unsupported value.")
        return None
    if value is None:
        errs.add(path, "is required (null given).")
        return None
    if tp is bool:
        if isinstance(value, bool):
            return value
        errs.add(path, "must be true or false.")
        return None
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            errs.add(path, "must be a whole number.")
            return None
        try:
            number = Decimal(str(value).strip())
        except InvalidOperation:
            errs.add(path, "must be a whole number.")
            return None
        if not number.is_finite() or number != number.to_integral_value():
            errs.add(path, "must be a whole number.")
            return None
        if abs(number) > 10**18:
            errs.add(path, "is too large.")
            return None
        out = int(number)
        _check_range(out, path, errs)
        return out
    if tp in (float, Decimal):
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            errs.add(path, "must be a number.")
            return None
        try:
            number = Decimal(str(value).strip())
        except InvalidOperation:
            errs.add(path, "must be a number.")
            return None
        if not number.is_finite() or abs(number) > Decimal(10) ** 18:
            errs.add(path, "must be a finite number.")
            return None
        _check_range(number, path, errs)
        return number if tp is Decimal else float(number)
    if tp is str:
        if not isinstance(value, str):
            errs.add(path, "must be text.")
            return None
        if "\x00" in value:
            errs.add(path, "must not contain NUL characters.")
            return None
        if len(value) > 2000:
            errs.add(path, "is too long (at most 2,000 characters).")
            return None
        bad = sv.control_chars(value.replace("\n", "").replace("\t", "") if _multiline(path) else value)
        if bad and not path.startswith("launch."):  # launch.* get their exact grammar in _check_launch
            # Names and codes reach scripts, comments and proposals: one printable line only.
            errs.add(path, f"must not contain control or line-separator characters ({', '.join(bad[:5])}).")
            return None
        return value
    if isinstance(tp, type) and issubclass(tp, Enum):
        try:
            return tp(value)
        except ValueError:
            allowed = ", ".join(m.value for m in tp)
            errs.add(path, f"must be one of: {allowed}.")
            return None
    if dataclasses.is_dataclass(tp):
        return _dataclass_from(tp, value, path, errs)
    if origin is tuple:
        if not isinstance(value, (list, tuple)):
            errs.add(path, "must be a list.")
            return None
        if len(value) > 4096:
            errs.add(path, "has too many entries.")
            return None
        item_tp = args[0] if args else Any
        return tuple(_convert(v, item_tp, f"{path}[{i}]", errs) for i, v in enumerate(value))
    if origin in (Mapping, dict, typing.Mapping) or tp in (Mapping, dict):
        if not isinstance(value, dict):
            errs.add(path, "must be an object.")
            return None
        val_tp = args[1] if len(args) == 2 else Any
        if val_tp is Any:
            return dict(value)
        return {str(k): _convert(v, val_tp, f"{path}.{k}", errs) for k, v in value.items()}
    return value  # Any


def _dataclass_from(cls, data, path: str, errs: _Collector, *, base=None):
    """Build ``cls`` from a dict; unknown keys are errors; missing keys take the
    defaults of ``base`` (an instance) or of the class."""
    if not isinstance(data, dict):
        errs.add(path, "must be an object.")
        return None
    hints = _hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - set(fields))
    for key in unknown:
        errs.add(f"{path}.{key}" if path else key, "is not a known field.")
    kwargs = {}
    before = len(errs.errors)
    for name, f in fields.items():
        sub = f"{path}.{name}" if path else name
        if name in data:
            kwargs[name] = _convert(data[name], hints[name], sub, errs)
        elif base is not None:
            kwargs[name] = getattr(base, name)
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            errs.add(sub, "is required.")
    if len(errs.errors) > before or unknown:
        return None
    try:
        return cls(**kwargs)
    except (TypeError, ValueError) as exc:
        errs.add(path or cls.__name__, f"is not valid: {exc}")
        return None


def to_jsonable(obj):
    """Dataclass/Decimal/Enum/tuple → JSON-safe structures (Decimal as string)."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_jsonable(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, Enum):
        return obj.value
    if isinstance(obj, Decimal):
        return str(obj)
    if isinstance(obj, float):
        if not math.isfinite(obj):
            raise ValueError("non-finite float in a request")
        return obj
    if isinstance(obj, Mapping):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, (dt.date, dt.datetime)):
        return obj.isoformat()
    return obj


# --------------------------------------------------------------------------- resolution


class CatalogPort(typing.Protocol):
    """What resolution needs from the catalog (``configurator.port.inputs`` provides it)."""

    def model(self, slug: str) -> et.ModelSpec | None: ...
    def model_from_hf_config(
        self, config: dict, weight_format: str | None, weight_bytes: int | None
    ) -> et.ModelSpec: ...
    def server(self, slug: str) -> et.ServerSpec | None: ...
    def site(self, slug: str) -> et.SiteSpec | None: ...
    def rack(self, slug: str) -> et.RackSpec | None: ...
    def switches(self, slugs: list[str] | None) -> tuple[et.SwitchSpec, ...]: ...
    def commercial(
        self,
        *,
        server: et.ServerSpec,
        price_list: str | None,
        on_date: dt.date,
        currency: str | None,
        nodes: int | None = None,
        rack: et.RackSpec | None = None,
    ) -> et.CommercialSpec: ...
    def default_site(self) -> et.SiteSpec | None: ...
    def default_rack(self) -> et.RackSpec | None: ...

    # Optional: a catalog without scenarios leaves a request's workload as the request states it.
    # def scenario_workload(self, slug: str) -> dict[str, Any] | None: ...


# The workload fields a scenario carries (catalog ``Scenario``): a request naming the scenario takes
# them unless its own ``workload`` states them.
SCENARIO_WORKLOAD_FIELDS = (
    "input_tokens",
    "output_tokens",
    "concurrency",
    "needs_vision",
    "availability_target",
    "ttft_target_s",
    "tpot_target_ms",
)


def _scenario_workload(data: dict, catalog: CatalogPort, errs: _Collector) -> tuple[str, dict[str, Any]]:
    """The request's scenario slug and the workload fields it brings (those the request's own
    ``workload`` leaves unset); a slug that is not text is a 400 on ``scenario``."""
    scenario = data.get("scenario", "")
    if scenario is None:
        scenario = ""
    if not isinstance(scenario, str) or len(scenario) > 200 or "\x00" in scenario:
        errs.add("scenario", "must be a scenario slug.")
        return "", {}
    lookup = getattr(catalog, "scenario_workload", None)
    raw = data.get("workload")
    own: dict[str, Any] = raw if isinstance(raw, dict) else {}
    if not scenario or lookup is None or all(k in own for k in SCENARIO_WORKLOAD_FIELDS):
        return scenario, {}  # a frozen (fully inline) request never consults the catalog
    found = lookup(scenario)
    if found is None:
        # A slug the catalog does not know is refused: planning it on the default targets would quote a
        # workload nobody chose.  A saved quote is fully inline and never looks its scenario up (above).
        errs.add("scenario", f"{scenario!r} is not a scenario in the catalog.")
        return "", {}
    return scenario, {
        k: found[k] for k in SCENARIO_WORKLOAD_FIELDS if k in found and found[k] is not None and k not in own
    }


def _agreeing_with_scenario(data: dict, catalog: CatalogPort, workload: et.WorkloadSpec) -> tuple[str, ...]:
    """The workload fields whose values are the named scenario's (brought by it, or stated equal to it,
    as the page's form states them): where the plan says its targets came from."""
    lookup = getattr(catalog, "scenario_workload", None)
    scenario = data.get("scenario")
    try:
        found = lookup(scenario) if lookup is not None and isinstance(scenario, str) and scenario else None
    except LookupError:
        found = None  # a frozen revision is resolved without the catalog: no provenance to read
    if not found:
        return ()
    return tuple(
        sorted(k for k in SCENARIO_WORKLOAD_FIELDS if k in found and getattr(workload, k) == found[k])
    )


def _plain_slug(value) -> bool:
    return isinstance(value, str) and "\x00" not in value and 0 < len(value) <= 200


def _resolve_entry(kind: str, value, lookup, cls, errs: _Collector):
    if isinstance(value, str) and ("\x00" in value or len(value) > 200):
        errs.add(kind, f"is not a valid {kind} slug.")
        return None
    if isinstance(value, str):
        found = lookup(value)
        if found is None:
            errs.add(kind, f"unknown {kind} '{value[:80]}'.")
        return found
    if isinstance(value, dict):
        return _dataclass_from(cls, value, kind, errs)
    errs.add(kind, f"must be a catalog slug (text) or an inline {kind} object.")
    return None


def _resolve_model(value, catalog: CatalogPort, errs: _Collector):
    if isinstance(value, dict) and "hf_config" in value:
        extra = sorted(set(value) - {"hf_config", "weight_format", "weight_bytes", "slug", "name"})
        for key in extra:
            errs.add(f"model.{key}", "is not a known field.")
        config = value["hf_config"]
        if not isinstance(config, dict):
            errs.add("model.hf_config", "must be the JSON object of a Hugging Face config.json.")
            return None
        weight_format = value.get("weight_format")
        weight_bytes = value.get("weight_bytes")
        if weight_format is not None and not isinstance(weight_format, str):
            errs.add("model.weight_format", "must be text such as mxfp4, fp8 or bf16.")
            return None
        if weight_bytes is not None and (
            isinstance(weight_bytes, bool)
            or not isinstance(weight_bytes, int)
            or not 0 < weight_bytes <= 10**15
        ):
            errs.add("model.weight_bytes", "must be a positive whole number of bytes (at most 10^15).")
            return None
        try:
            return catalog.model_from_hf_config(config, weight_format, weight_bytes)
        except ValueError as exc:
            errs.add("model.hf_config", str(exc))
            return None
    return _resolve_entry("model", value, catalog.model, et.ModelSpec, errs)


def _resolve_checkpoint(data, model, server, catalog: CatalogPort, errs: _Collector):
    """The checkpoint the request names (slug or inline), else the model's default for the platform.

    A checkpoint of another model is a 400; one made for another platform is
    an engine error check (``model.checkpoint_wrong_platform``).
    """
    raw = data.get("checkpoint")
    if model is None or server is None:
        return None
    if raw is None and "checkpoint" in data:
        return None  # explicitly none (an inline request saved without one): the model's own bytes
    if raw is None:
        default = getattr(catalog, "default_checkpoint", None)
        try:
            return default(model.slug, server.accelerator.software_stack) if default else None
        except LookupError:  # a frozen revision resolves without the catalog
            return None
    if isinstance(raw, str):
        lookup = getattr(catalog, "checkpoint", None)
        found = lookup(raw) if lookup and "\x00" not in raw and len(raw) <= 200 else None
        if found is None:
            errs.add("checkpoint", f"unknown checkpoint '{raw[:80]}'.")
            return None
        spec, model_slug = found
        if model_slug != model.slug:
            errs.add("checkpoint", f"'{raw[:80]}' is a checkpoint of {model_slug}, not of {model.slug}.")
            return None
        return spec
    if isinstance(raw, dict):
        # Its flags reach every node script and manifest: the catalog's grammar, or a 400.
        problem = checkpoint_flag_problem(raw.get("launch_flags", []))
        if problem:
            errs.add("checkpoint.launch_flags", problem)
            return None
        return _dataclass_from(et.CheckpointSpec, raw, "checkpoint", errs)
    errs.add("checkpoint", "must be a checkpoint slug (text) or an inline checkpoint object.")
    return None


def _resolve_parallel(value, path: str, errs: _Collector) -> et.ParallelSpec | None | str:
    if value is None or value == "auto":
        return "auto"
    return _dataclass_from(et.ParallelSpec, value, path, errs)


def resolve(data, catalog: CatalogPort, *, today: dt.date | None = None) -> et.PlanRequest:
    """Validate a request dict and resolve it into a PlanRequest, or raise RequestError."""
    errs = _Collector()
    if not isinstance(data, dict):
        raise RequestError({"request": ["must be a JSON object."]})
    for key in sorted(set(data) - TOP_LEVEL_KEYS):
        errs.add(key, "is not a known field.")
    for key in ("model", "server", "topology"):
        if key not in data:
            errs.add(key, "is required.")
    if errs.errors:
        raise RequestError(errs.errors)

    model = _resolve_model(data["model"], catalog, errs)
    server = _resolve_entry("server", data["server"], catalog.server, et.ServerSpec, errs)

    site = None
    if "site" in data:
        site = _resolve_entry("site", data["site"], catalog.site, et.SiteSpec, errs)
    else:
        site = catalog.default_site() or et.SiteSpec()
    rack = None

    def default_rack() -> et.RackSpec:
        return catalog.default_rack() or et.RackSpec("rack-42u", "42U rack", name_zh="42U 机柜")

    if "rack" in data and isinstance(data["rack"], dict) and "name" not in data["rack"]:
        # A partial rack object (a fix such as {"rack": {"max_kw": 25}}) overrides the rack it names,
        # or the default rack when it names none; a full inline rack (with its name) is taken as it is.
        slug = data["rack"].get("slug")
        base = default_rack() if slug is None else (catalog.rack(slug) if _plain_slug(slug) else None)
        rack = _dataclass_from(et.RackSpec, data["rack"], "rack", errs, base=base)
    elif "rack" in data:
        rack = _resolve_entry("rack", data["rack"], catalog.rack, et.RackSpec, errs)
    else:
        rack = default_rack()

    switches: tuple[et.SwitchSpec, ...] = ()
    raw_switches = data.get("switches")
    if raw_switches is None:
        switches = catalog.switches(None)
    elif isinstance(raw_switches, list) and any(isinstance(s, str) and "\x00" in s for s in raw_switches):
        errs.add("switches", "switch slugs must not contain NUL characters.")
    elif isinstance(raw_switches, list):
        # catalog slugs and inline switches may be mixed (docs/api.md)
        slugs = [s for s in raw_switches if isinstance(s, str)]
        inline = [s for s in raw_switches if not isinstance(s, str)]
        found = tuple(catalog.switches(slugs)) if slugs else ()
        missing = sorted(set(slugs) - {s.slug for s in found})
        if missing:
            errs.add("switches", f"unknown switch: {', '.join(m[:80] for m in missing)}.")
        converted = _convert(inline, tuple[et.SwitchSpec, ...], "switches", errs) if inline else ()
        switches = found + tuple(converted or ())
    else:
        errs.add("switches", "must be a list of switch slugs or inline switches.")

    topology = _resolve_topology(data["topology"], errs)

    scenario, from_scenario = _scenario_workload(data, catalog, errs)
    sections = {}
    for name, cls in SECTIONS.items():
        if name in data:
            sections[name] = _dataclass_from(cls, data[name], name, errs)
        else:
            sections[name] = cls()
    if from_scenario and sections["workload"] is not None:
        sections["workload"] = dataclasses.replace(sections["workload"], **from_scenario)

    _check_launch(sections["launch"], errs)

    commercial = None
    raw_commercial = data.get("commercial", {})
    if not isinstance(raw_commercial, dict):
        errs.add("commercial", "must be an object.")
    elif server is not None:
        raw_commercial = dict(raw_commercial)
        price_list = raw_commercial.pop("price_list", None)
        on_date_raw = raw_commercial.pop("date", None)
        on_date = today or dt.date.today()
        if on_date_raw is not None:
            try:
                on_date = dt.date.fromisoformat(str(on_date_raw))
            except ValueError:
                errs.add("commercial.date", "must be a date as YYYY-MM-DD.")
        if price_list is not None and (not isinstance(price_list, str) or "\x00" in price_list):
            errs.add("commercial.price_list", "must be a price-list slug.")
            price_list = None
        currency = raw_commercial.get("currency")
        try:
            base_terms = catalog.commercial(
                server=server,
                price_list=price_list,
                on_date=on_date,
                currency=currency if isinstance(currency, str) else None,
                nodes=topology.nodes if topology is not None else None,
                rack=rack,
            )
        except LookupError as exc:
            errs.add("commercial.price_list", str(exc))
            base_terms = et.CommercialSpec()
        commercial = _dataclass_from(et.CommercialSpec, raw_commercial, "commercial", errs, base=base_terms)
        if (
            commercial is not None
            and raw_commercial.get("server_unit_price") is not None
            and "prices_on_request" not in raw_commercial
        ):
            # A server price typed in (0 for servers the customer owns) replaces "on request".
            commercial = dataclasses.replace(
                commercial, prices_on_request=tuple(p for p in commercial.prices_on_request if p != "server")
            )
        if (
            commercial is not None
            and "residual_value_fraction" not in raw_commercial
            and not (base_terms.residual_value_fraction)
        ):
            # No residual value stated: the servers' straight-line book value at the end of the horizon.
            from configurator.engine.tco.lease import book_value_fraction

            commercial = dataclasses.replace(
                commercial,
                residual_value_fraction=book_value_fraction(
                    commercial.horizon_years, commercial.depreciation_years
                ),
            )

    checkpoint = _resolve_checkpoint(data, model, server, catalog, errs)

    if errs.errors:
        raise RequestError(errs.errors)

    topology = _finalize_topology(topology, model, server)
    # Fields the request leaves unset: the one serving-defaults path (engine/defaults.py serving_defaults).
    given = set(data["serving"]) if isinstance(data.get("serving"), dict) else set()
    # A request that sets the step model's performance.speculative_tokens itself keeps that older form:
    # no catalog draft is turned on for it (engine/speculative.py).
    # An inline request (request_to_inline) carries its drafts and never asks the catalog for them (a
    # frozen revision resolves against a catalog that refuses every lookup); a request by slug reads them.
    speculators = () if "speculators" in data else _speculators(catalog, model)
    if "speculators" in data:
        inline_drafts = _convert(data["speculators"], tuple[et.SpeculatorSpec, ...], "speculators", errs)
        if errs.errors:
            raise RequestError(errs.errors)
        speculators = tuple(inline_drafts or ())
    legacy = "speculative_tokens" in _keys(data, "performance")
    sections["serving"] = serving_defaults(
        model,
        server,
        topology.kind,
        sections["serving"],
        given,
        sections["workload"].needs_vision,
        speculators=() if legacy else speculators,
    )
    spec_errors = _speculative_setting_errors(sections["serving"], speculators, server, topology)
    if spec_errors:
        raise RequestError(spec_errors)
    topology, role_errors = _role_parallel(sections["serving"], topology, data)
    if role_errors:
        raise RequestError(role_errors)
    version_errors = _engine_errors(sections["serving"], server)
    if version_errors:
        raise RequestError(version_errors)
    port_errors = launch_port_conflicts(topology, sections["launch"])
    if port_errors:
        raise RequestError(port_errors)

    assert commercial is not None  # every path that leaves it None has recorded an error above
    return et.PlanRequest(
        model=model,
        server=server,
        topology=topology,
        serving=sections["serving"],
        workload=sections["workload"],
        site=site,
        rack=rack,
        switches=switches,
        commercial=commercial,
        performance=sections["performance"],
        launch=sections["launch"],
        scenario=scenario,
        checkpoint=checkpoint,
        speculators=speculators,
        workload_from_scenario=_agreeing_with_scenario(data, catalog, sections["workload"]),
    )


def _keys(data: dict, section: str) -> set[str]:
    raw = data.get(section)
    return set(raw) if isinstance(raw, dict) else set()


def _speculators(catalog: CatalogPort, model: et.ModelSpec) -> tuple[et.SpeculatorSpec, ...]:
    """The catalog's drafts for the model (none for a catalog port that lists none)."""
    lookup = getattr(catalog, "speculators", None)
    return tuple(lookup(model.slug)) if lookup and model.slug else ()


def _speculative_errors(
    spec: et.SpeculativeSpec,
    path: str,
    speculators: tuple[et.SpeculatorSpec, ...],
    server: et.ServerSpec,
    serving: et.ServingSpec,
) -> dict[str, list[str]]:
    """What is wrong with a stated speculative setting, by field (engine/speculative.py)."""
    if not spec.on:
        if spec.draft or spec.num_speculative_tokens:
            return {
                f"{path}.method": ["is required when a draft or token count is given (or leave them out)."]
            }
        return {}
    if spec.method not in et.SPECULATIVE_METHODS:
        return {f"{path}.method": [f"must be one of: {', '.join(et.SPECULATIVE_METHODS)}."]}
    if spec.method in et.WEIGHTLESS_SPECULATIVE_METHODS:
        if spec.draft:
            return {f"{path}.draft": [f"{spec.method} proposes from the prompt and names no draft."]}
        if spec.num_speculative_tokens < 1:
            return {
                f"{path}.num_speculative_tokens": [
                    f"{spec.method} needs a number of speculative tokens (1 to 16)."
                ]
            }
        return {}
    names = ", ".join(s.slug for s in speculators) or "none"
    if not spec.draft:
        return {
            f"{path}.draft": [
                f"{spec.method} needs a catalog draft for this model (the catalog lists: {names})."
            ]
        }
    found = next((s for s in speculators if s.slug == spec.draft), None)
    if found is None:
        return {
            f"{path}.draft": [
                f"'{spec.draft[:80]}' is not a draft of this model (the catalog lists: {names})."
            ]
        }
    if found.method != spec.method:
        return {f"{path}.method": [f"{found.name} is a {found.method} draft, not {spec.method}."]}
    stack = server.accelerator.software_stack
    if problem := version_reason(
        found, stack, serving.engine, serving.vllm_version, server.accelerator.generation
    ):
        return {f"{path}.draft": [problem + "."]}
    return {}


def _speculative_setting_errors(
    serving: et.ServingSpec,
    speculators: tuple[et.SpeculatorSpec, ...],
    server: et.ServerSpec,
    topology: et.TopologySpec,
) -> dict[str, list[str]]:
    """What is wrong with the speculative settings and the per-role blocks (400s naming the field).
    Per-role blocks exist only in a prefill/decode-disaggregated topology."""
    errors: dict[str, list[str]] = {}
    for role in ("prefill", "decode"):
        if getattr(serving, role) is not None and topology.kind != et.TopologyKind.DISAGGREGATED:
            errors[f"serving.{role}"] = [
                "per-role settings need a prefill/decode-disaggregated topology; an aggregated one keeps one block."
            ]
    if errors:
        return errors
    errors.update(
        _speculative_errors(serving.speculative, "serving.speculative", speculators, server, serving)
    )
    for role in ("prefill", "decode"):
        over = getattr(serving, role)
        if over is not None and over.speculative is not None:
            errors.update(
                _speculative_errors(
                    over.speculative, f"serving.{role}.speculative", speculators, server, serving
                )
            )
    return errors


def _role_parallel(
    serving: et.ServingSpec, topology: et.TopologySpec, data: dict
) -> tuple[et.TopologySpec, dict[str, list[str]]]:
    """A role's stated TP/DP (``serving.prefill.tp`` …) lays out its side of xPyD: the same devices,
    another split; a side the topology lays out explicitly must agree."""
    errors: dict[str, list[str]] = {}
    raw = data.get("topology")
    raw_topology: dict = raw if isinstance(raw, dict) else {}
    for role, field_name in (("prefill", "parallel"), ("decode", "decode_parallel")):
        over = getattr(serving, role)
        if over is None or (over.tp is None and over.dp is None):
            continue
        p = getattr(topology, field_name)
        if p is None:
            continue
        tp = over.tp if over.tp is not None else p.tp
        dp = over.dp if over.dp is not None else max(1, p.world_size // (tp * p.pp))
        if tp * dp * p.pp != p.world_size:
            errors[f"serving.{role}.tp"] = [
                f"TP {tp} × DP {dp} × PP {p.pp} must use the {role} side's {p.world_size} devices."
            ]
            continue
        explicit = raw_topology.get(field_name) not in (None, "auto")
        if explicit and (tp, dp) != (p.tp, p.dp):
            errors[f"serving.{role}.tp"] = [
                f"TP {tp} / DP {dp} disagree with topology.{field_name} (TP {p.tp} / DP {p.dp}); state it once."
            ]
            continue
        per_node = max(1, p.dp // max(1, p.dp_local)) if p.dp_local else 1
        dp_local = max(1, dp // per_node) if dp % per_node == 0 else 1
        topology = dataclasses.replace(
            topology, **{field_name: dataclasses.replace(p, tp=tp, dp=dp, dp_local=dp_local)}
        )
    return topology, errors


def _engine_errors(serving: et.ServingSpec, server: et.ServerSpec) -> dict[str, list[str]]:
    """The engine the request names must run on the server, and its version must be one whose memory
    accounting the engine follows (engine/engine_versions.py)."""
    stack = server.accelerator.software_stack
    if problem := engine_error(serving.engine, stack, server.name):
        return {"serving.engine": [problem]}
    if problem := version_error(engine_for(stack, serving.engine), serving.vllm_version):
        return {"serving.vllm_version": [problem]}
    return {}


@dataclasses.dataclass(frozen=True)
class _PendingTopology:
    kind: et.TopologyKind
    nodes: int
    parallel: Any
    prefill_nodes: int = 0
    decode_nodes: int = 0
    decode_parallel: Any = None
    pair_switches: str = "shared"


PAIR_SWITCHES = ("shared", "separate")


def _resolve_topology(value, errs: _Collector):
    if not isinstance(value, dict):
        errs.add("topology", "must be an object with kind, nodes and parallel.")
        return None
    allowed = {
        "kind",
        "nodes",
        "parallel",
        "prefill_nodes",
        "decode_nodes",
        "decode_parallel",
        "pair_switches",
    }
    for key in sorted(set(value) - allowed):
        errs.add(f"topology.{key}", "is not a known field.")
    kind = _convert(value.get("kind", "single"), et.TopologyKind, "topology.kind", errs)
    if "nodes" not in value:
        errs.add("topology.nodes", "is required.")
        nodes = None
    else:
        nodes = _convert(value["nodes"], int, "topology.nodes", errs)
    prefill = _convert(value.get("prefill_nodes", 0), int, "topology.prefill_nodes", errs)
    decode = _convert(value.get("decode_nodes", 0), int, "topology.decode_nodes", errs)
    parallel = _resolve_parallel(value.get("parallel", "auto"), "topology.parallel", errs)
    decode_parallel = None
    if kind == et.TopologyKind.DISAGGREGATED:
        decode_parallel = _resolve_parallel(
            value.get("decode_parallel", "auto"), "topology.decode_parallel", errs
        )
        if nodes is not None and prefill is not None and decode is not None:
            if prefill == 0 and decode == 0:
                prefill, decode = nodes // 2, nodes - nodes // 2
            if prefill < 1 or decode < 1:
                errs.add(
                    "topology.prefill_nodes",
                    "a disaggregated (xPyD) topology needs at least one prefill and one decode node.",
                )
            elif prefill + decode != nodes:
                errs.add(
                    "topology.decode_nodes",
                    f"prefill ({prefill}) + decode ({decode}) nodes must equal nodes ({nodes}).",
                )
    elif (
        kind in (et.TopologyKind.PRIMARY_STANDBY, et.TopologyKind.TENANT_PAIR)
        and nodes is not None
        and nodes % 2
    ):
        errs.add(
            "topology.nodes", f"a {kind.value.replace('_', ' ')} pair needs an even node count (got {nodes})."
        )
    pair_switches = value.get("pair_switches", "shared")
    if pair_switches not in PAIR_SWITCHES:
        errs.add("topology.pair_switches", "must be 'shared' or 'separate'.")
        pair_switches = "shared"
    if kind is None or nodes is None:
        return None
    return _PendingTopology(kind, nodes, parallel, prefill or 0, decode or 0, decode_parallel, pair_switches)


def group_nodes(kind: et.TopologyKind, nodes: int, prefill: int, decode: int) -> list[int]:
    """Node count of each serving group of a topology."""
    if kind == et.TopologyKind.DISAGGREGATED:
        return [prefill, decode]
    if kind in (et.TopologyKind.PRIMARY_STANDBY, et.TopologyKind.TENANT_PAIR):
        return [nodes // 2, nodes // 2]
    return [nodes]


def _finalize_topology(topo: _PendingTopology, model: et.ModelSpec, server: et.ServerSpec) -> et.TopologySpec:
    sizes = group_nodes(topo.kind, topo.nodes, topo.prefill_nodes, topo.decode_nodes)
    parallel = topo.parallel
    if parallel == "auto":
        parallel = _propose(model, server, sizes[0])
    decode_parallel = topo.decode_parallel
    if topo.kind == et.TopologyKind.DISAGGREGATED and decode_parallel == "auto":
        decode_parallel = _propose(model, server, sizes[1])
    return et.TopologySpec(
        kind=topo.kind,
        nodes=topo.nodes,
        parallel=parallel,
        prefill_nodes=topo.prefill_nodes,
        decode_nodes=topo.decode_nodes,
        decode_parallel=decode_parallel if topo.kind == et.TopologyKind.DISAGGREGATED else None,
        pair_switches=topo.pair_switches,
    )


def request_to_inline(request: et.PlanRequest) -> dict:
    """The request with every catalog entry inline: replans identically later."""
    data = to_jsonable(request)
    data.pop("workload_from_scenario", None)  # provenance, not a request field: the workload is inline
    return data


def _propose(model: et.ModelSpec, server: et.ServerSpec, nodes: int) -> et.ParallelSpec:
    from configurator.engine.layout import auto_layout

    probe = et.PlanRequest(
        model=model,
        server=server,
        topology=et.TopologySpec(et.TopologyKind.SINGLE, nodes, et.ParallelSpec(1, 1)),
    )
    return auto_layout(probe, nodes)
