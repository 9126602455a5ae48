"""What is asked: the planner request, validated and resolved against the catalog.

:func:`parse_query` turns a request (docs/planner.md) into a :class:`PlannerQuery` or raises
:class:`RequestError` with every field's problem; :class:`PlannerCatalog` is the port through
which the catalog comes in (``web.planner.services.DjangoPlannerCatalog`` is the Django one);
:func:`query_dict` is the query as the response echoes it.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any, Protocol

from ..engine.formatting import format_plain
from ..engine.types import CommercialSpec, ModelSpec, RackSpec, ServerSpec, SiteSpec, SwitchSpec, TopologyKind
from ..io.requests import RequestError

HA_AVAILABILITY = 0.999  # at or above: only a primary/standby pair meets it (docs/domain.md §4)
KV_DTYPES = ("auto", "fp8")
# Rankings: cost per million tokens at the stated load, 3-year TCO, or the design capacity within the
# latency targets (the most load carried within them first; engine/performance/design.py).
SORTS = ("cost_per_m", "tco", "design_capacity")
MEMORY_UTILISATIONS = (0.85, 0.9)

DEFAULT_WORKLOAD: dict[str, Any] = {
    "input_tokens": 8192,
    "output_tokens": 1024,
    "context": None,  # None: each server's serving default (engine/defaults.py serving_defaults)
    "concurrency": 16,
    "availability_target": 0.995,
    "needs_vision": False,
}


@dataclass(frozen=True)
class Workload:
    """What the deployment must serve (a scenario pre-fills it)."""

    input_tokens: int
    output_tokens: int
    # vLLM --max-model-len; None: each candidate's serving default (the launch recipe's, else 131,072,
    # clamped to the model), raised to one whole request, as the API plans a request naming none
    context: int | None
    concurrency: int | None  # None when a request rate is given instead
    requests_per_s: float | None
    ttft_target_s: float | None
    tpot_target_ms: float | None
    availability_target: float
    needs_vision: bool


@dataclass(frozen=True)
class Constraints:
    purchase: str = "buy"  # buy | lease
    currency: str = "CNY"
    max_capex: Decimal | None = None  # purchase: capex ceiling
    max_lease_per_month: Decimal | None = None  # lease: monthly rent ceiling
    max_power_kw: float | None = None  # IT load at maximum input
    max_racks: int | None = None
    air_cooled_only: bool = False
    domestic_only: bool = False


@dataclass(frozen=True)
class Options:
    max_nodes: int = 32
    limit: int = 10
    sort: str = "cost_per_m"  # cost_per_m | tco | design_capacity
    servers: tuple[str, ...] = ()  # restrict the families (slugs); empty: every server
    topologies: tuple[str, ...] = ()  # restrict the topology kinds; empty: every applicable kind
    kv_cache_dtypes: tuple[str, ...] = KV_DTYPES
    gpu_memory_utilizations: tuple[float, ...] = MEMORY_UTILISATIONS


@dataclass(frozen=True)
class PlannerQuery:
    """A validated planner request, resolved against the catalog."""

    model: ModelSpec
    servers: tuple[ServerSpec, ...]
    site: SiteSpec
    racks: tuple[RackSpec, ...]  # catalog rack types, the default first
    switches: tuple[SwitchSpec, ...]
    workload: Workload
    constraints: Constraints
    options: Options = Options()
    scenario: str = ""
    price_list: str | None = None  # slug of the list in force for the currency


class PlannerCatalog(Protocol):
    """What the planner needs from the catalog (``web.planner.services.DjangoPlannerCatalog``)."""

    def scenario(self, slug: str) -> Mapping[str, Any] | None: ...
    def model(self, slug: str) -> ModelSpec | None: ...
    def servers(self, model_slug: str) -> tuple[ServerSpec, ...]: ...
    def site(self, slug: str | None) -> SiteSpec | None: ...
    def racks(self) -> tuple[RackSpec, ...]: ...
    def switches(self) -> tuple[SwitchSpec, ...]: ...
    def price_list(self, currency: str) -> str | None: ...
    def commercial(
        self, server: ServerSpec, nodes: int, rack: RackSpec, price_list: str | None, currency: str
    ) -> CommercialSpec: ...


# --------------------------------------------------------------------------- parsing

TOP_KEYS = {"scenario", "model", "workload", "constraints", "site", "options"}
WORKLOAD_KEYS = {
    "input_tokens",
    "output_tokens",
    "context",
    "max_model_len",  # the serving field's own name for the context (configurator requests, vLLM's flag)
    "concurrency",
    "requests_per_s",
    "ttft_target_s",
    "tpot_target_ms",
    "availability_target",
    "needs_vision",
}
CONSTRAINT_KEYS = {f.name for f in dataclasses.fields(Constraints)}
OPTION_KEYS = {f.name for f in dataclasses.fields(Options)}
SLUG_RE = re.compile(r"^[-a-zA-Z0-9_]{1,80}$")
CURRENCY_RE = re.compile(r"^[A-Z]{3}$")


class _Errors:
    def __init__(self) -> None:
        self.errors: dict[str, list[str]] = {}

    def add(self, path: str, message: str) -> None:
        self.errors.setdefault(path, []).append(message)


def plain_number(x: Decimal | float | int) -> str:
    return format_plain(Decimal(str(x)))


def _number(value: Any, path: str, errs: _Errors, lo, hi, *, integer: bool = False) -> Decimal | None:
    """A finite number within [lo, hi] (JSON number or numeric text), else an error."""
    kind = "a whole number" if integer else "a number"
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        errs.add(path, f"must be {kind}.")
        return None
    if isinstance(value, str) and len(value) > 40:
        errs.add(path, f"must be {kind}.")
        return None
    try:
        d = Decimal(str(value).strip())
    except InvalidOperation:
        errs.add(path, f"must be {kind}.")
        return None
    if not d.is_finite():
        errs.add(path, "must be a finite number.")
        return None
    if integer and d != d.to_integral_value():
        errs.add(path, "must be a whole number.")
        return None
    if d < Decimal(str(lo)):
        if lo == 0:
            errs.add(path, f"cannot be negative (got {plain_number(d)}).")
        else:
            errs.add(path, f"must be at least {plain_number(lo)} (got {plain_number(d)}).")
        return None
    if d > Decimal(str(hi)):
        errs.add(path, f"must be at most {plain_number(hi)} (got {plain_number(d)}).")
        return None
    return d


def _bool(value: Any, path: str, errs: _Errors) -> bool | None:
    if isinstance(value, bool):
        return value
    errs.add(path, "must be true or false.")
    return None


def _slug(value: Any, path: str, errs: _Errors) -> str | None:
    if not isinstance(value, str) or not SLUG_RE.match(value):
        errs.add(path, "must be a catalog slug (letters, digits, - and _).")
        return None
    return value


def _section(data: Mapping, name: str, errs: _Errors, keys: set[str]) -> dict:
    raw = data.get(name, {})
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        errs.add(name, "must be an object.")
        return {}
    for key in sorted(set(raw) - keys, key=str):
        errs.add(f"{name}.{str(key)[:60]}", "is not a known field.")
    return raw


def _slug_list(value: Any, path: str, errs: _Errors, allowed: set[str], what: str) -> tuple[str, ...]:
    if not isinstance(value, list) or len(value) > 200:
        errs.add(path, f"must be a list of {what}.")
        return ()
    out = []
    for i, item in enumerate(value):
        if not isinstance(item, str) or item not in allowed:
            shown = item[:60] if isinstance(item, str) else type(item).__name__
            errs.add(f"{path}[{i}]", f"unknown {what[:-1]} '{shown}'.")
            continue
        out.append(item)
    return tuple(dict.fromkeys(out))


def parse_query(data: Any, catalog: PlannerCatalog) -> PlannerQuery:
    """Validate a planner request (docs/planner.md) against the catalog, or raise RequestError."""
    errs = _Errors()
    if not isinstance(data, dict):
        raise RequestError({"request": ["must be a JSON object."]})
    for key in sorted(set(data) - TOP_KEYS, key=str):
        errs.add(str(key)[:60], "is not a known field.")

    scenario_slug = ""
    scenario: Mapping[str, Any] | None = None
    if data.get("scenario") not in (None, ""):
        slug = _slug(data["scenario"], "scenario", errs)
        if slug is not None:
            scenario = catalog.scenario(slug)
            if scenario is None:
                errs.add("scenario", f"unknown scenario '{slug}'.")
            else:
                scenario_slug = slug

    model = None
    model_slug = data.get("model")
    if model_slug in (None, "") and scenario is not None:
        model_slug = scenario.get("model")
    if model_slug in (None, ""):
        errs.add("model", "is required (or choose a scenario that recommends a model).")
    else:
        slug = _slug(model_slug, "model", errs)
        if slug is not None:
            model = catalog.model(slug)
            if model is None:
                errs.add("model", f"unknown model '{slug}'.")

    workload = _parse_workload(data, scenario, model, errs)
    constraints = _parse_constraints(data, errs)

    site = None
    if data.get("site") not in (None, ""):
        slug = _slug(data["site"], "site", errs)
        if slug is not None:
            site = catalog.site(slug)
            if site is None:
                errs.add("site", f"unknown site '{slug}'.")
    else:
        site = catalog.site(None) or SiteSpec()

    servers: tuple[ServerSpec, ...] = ()
    if model is not None:
        servers = catalog.servers(model.slug)
    options = _parse_options(data, errs, {s.slug for s in servers})
    if options.servers:
        servers = tuple(s for s in servers if s.slug in options.servers)

    if errs.errors:
        raise RequestError(errs.errors)
    assert model is not None and workload is not None and site is not None
    racks = catalog.racks()
    return PlannerQuery(
        model=model,
        servers=servers,
        site=site,
        racks=racks,
        switches=catalog.switches(),
        workload=workload,
        constraints=constraints,
        options=options,
        scenario=scenario_slug,
        price_list=catalog.price_list(constraints.currency),
    )


def _parse_workload(data, scenario, model: ModelSpec | None, errs: _Errors) -> Workload | None:
    raw = _section(data, "workload", errs, WORKLOAD_KEYS)
    if "max_model_len" in raw:
        # One field, two names: the planner's "context" is the plan request's serving.max_model_len.
        raw = dict(raw)
        if "context" in raw:
            errs.add("workload.max_model_len", "give context or max_model_len (the same field), not both.")
        raw["context"] = raw.pop("max_model_len")
    base = dict(DEFAULT_WORKLOAD)
    if scenario is not None:
        for key in DEFAULT_WORKLOAD:
            if scenario.get(key) is not None:
                base[key] = scenario[key]
    if "requests_per_s" in raw and raw["requests_per_s"] is not None and raw.get("concurrency") is None:
        base["concurrency"] = None  # a rate replaces the scenario's concurrency
    values: dict[str, Any] = dict(base)
    if scenario is not None:
        for key in ("ttft_target_s", "tpot_target_ms"):  # the scenario's latency targets carry over
            if scenario.get(key) is not None:
                values[key] = scenario[key]
    values.setdefault("requests_per_s", None)
    values.setdefault("ttft_target_s", None)
    values.setdefault("tpot_target_ms", None)
    specs = {
        "input_tokens": (1, 16_777_216, True),
        "output_tokens": (1, 16_777_216, True),
        "context": (2, 16_777_216, True),
        "concurrency": (1, 1_000_000, True),
        "requests_per_s": (Decimal("0.001"), 1_000_000, False),
        "ttft_target_s": (Decimal("0.001"), 86_400, False),
        "tpot_target_ms": (Decimal("0.01"), 100_000, False),
        "availability_target": (Decimal("0.5"), Decimal("0.99999"), False),
    }
    ok = True
    for key, (lo, hi, integer) in specs.items():
        if key not in raw:
            continue
        if raw[key] is None and key in (
            "context",
            "concurrency",
            "requests_per_s",
            "ttft_target_s",
            "tpot_target_ms",
        ):
            values[key] = None
            continue
        d = _number(raw[key], f"workload.{key}", errs, lo, hi, integer=integer)
        if d is None:
            ok = False
            continue
        values[key] = int(d) if integer else float(d)
    if "needs_vision" in raw:
        b = _bool(raw["needs_vision"], "workload.needs_vision", errs)
        if b is None:
            ok = False
        else:
            values["needs_vision"] = b
    if not ok:
        return None
    if values.get("concurrency") is not None and values.get("requests_per_s") is not None:
        errs.add("workload.requests_per_s", "give either concurrency or requests_per_s, not both.")
        return None
    if values.get("concurrency") is None and values.get("requests_per_s") is None:
        errs.add("workload.concurrency", "give the concurrent requests or a request rate (requests_per_s).")
        return None
    if values["context"] is not None and values["input_tokens"] + values["output_tokens"] > values["context"]:
        errs.add(
            "workload.context",
            f"input {values['input_tokens']:,} + output {values['output_tokens']:,} tokens do not fit a context "
            f"of {values['context']:,} tokens.",
        )
        return None
    if model is not None:
        context = (
            values["context"]
            if values["context"] is not None
            else values["input_tokens"] + values["output_tokens"]
        )
        if model.max_context and context > model.max_context:
            errs.add("workload.context", f"{model.name} supports at most {model.max_context:,} tokens.")
            return None
        if values["needs_vision"] and not model.has_vision:
            errs.add("workload.needs_vision", f"{model.name} has no vision encoder; it cannot read images.")
            return None
    return Workload(
        input_tokens=int(values["input_tokens"]),
        output_tokens=int(values["output_tokens"]),
        context=None if values["context"] is None else int(values["context"]),
        concurrency=None if values["concurrency"] is None else int(values["concurrency"]),
        requests_per_s=values["requests_per_s"],
        ttft_target_s=values["ttft_target_s"],
        tpot_target_ms=values["tpot_target_ms"],
        availability_target=float(values["availability_target"]),
        needs_vision=bool(values["needs_vision"]),
    )


def _parse_constraints(data, errs: _Errors) -> Constraints:
    raw = _section(data, "constraints", errs, CONSTRAINT_KEYS)
    kw: dict[str, Any] = {}
    purchase = raw.get("purchase", "buy")
    if purchase not in ("buy", "lease"):
        errs.add("constraints.purchase", "must be buy or lease.")
        purchase = "buy"
    kw["purchase"] = purchase
    currency = raw.get("currency", "CNY")
    if not isinstance(currency, str) or not CURRENCY_RE.match(currency):
        errs.add("constraints.currency", "must be a three-letter currency code such as CNY or USD.")
    else:
        kw["currency"] = currency
    for key, hi in (("max_capex", 10**13), ("max_lease_per_month", 10**12)):
        if raw.get(key) is not None:
            d = _number(raw[key], f"constraints.{key}", errs, 0, hi)
            if d is not None:
                kw[key] = d
    if raw.get("max_power_kw") is not None:
        d = _number(raw["max_power_kw"], "constraints.max_power_kw", errs, 0, 1_000_000)
        if d is not None:
            kw["max_power_kw"] = float(d)
    if raw.get("max_racks") is not None:
        d = _number(raw["max_racks"], "constraints.max_racks", errs, 0, 100_000, integer=True)
        if d is not None:
            kw["max_racks"] = int(d)
    for key in ("air_cooled_only", "domestic_only"):
        if key in raw:
            b = _bool(raw[key], f"constraints.{key}", errs)
            if b is not None:
                kw[key] = b
    if purchase == "buy" and kw.get("max_lease_per_month") is not None:
        errs.add("constraints.max_lease_per_month", "applies when purchase is lease; give max_capex to buy.")
    if purchase == "lease" and kw.get("max_capex") is not None:
        errs.add("constraints.max_capex", "applies when purchase is buy; give max_lease_per_month to lease.")
    return Constraints(**kw)


def _parse_options(data, errs: _Errors, server_slugs: set[str]) -> Options:
    raw = _section(data, "options", errs, OPTION_KEYS)
    kw: dict[str, Any] = {}
    if raw.get("max_nodes") is not None:
        d = _number(raw["max_nodes"], "options.max_nodes", errs, 1, 64, integer=True)
        if d is not None:
            kw["max_nodes"] = int(d)
    if raw.get("limit") is not None:
        d = _number(raw["limit"], "options.limit", errs, 1, 100, integer=True)
        if d is not None:
            kw["limit"] = int(d)
    if raw.get("sort") is not None:
        if raw["sort"] not in SORTS:
            errs.add("options.sort", "must be cost_per_m, tco or design_capacity.")
        else:
            kw["sort"] = raw["sort"]
    if raw.get("servers") is not None:
        kw["servers"] = _slug_list(raw["servers"], "options.servers", errs, server_slugs, "servers")
    if raw.get("topologies") is not None:
        kinds = {k.value for k in TopologyKind}
        kw["topologies"] = _slug_list(raw["topologies"], "options.topologies", errs, kinds, "topologies")
    if raw.get("kv_cache_dtypes") is not None:
        dtypes = _slug_list(raw["kv_cache_dtypes"], "options.kv_cache_dtypes", errs, set(KV_DTYPES), "dtypes")
        if not dtypes and "options.kv_cache_dtypes" not in errs.errors:
            errs.add("options.kv_cache_dtypes", "name at least one of auto, fp8.")
        kw["kv_cache_dtypes"] = tuple(d for d in KV_DTYPES if d in dtypes) or KV_DTYPES
    if raw.get("gpu_memory_utilizations") is not None:
        value = raw["gpu_memory_utilizations"]
        if not isinstance(value, list) or not 1 <= len(value) <= 4:
            errs.add("options.gpu_memory_utilizations", "must be a list of one to four fractions.")
        else:
            utils = []
            for i, v in enumerate(value):
                d = _number(v, f"options.gpu_memory_utilizations[{i}]", errs, Decimal("0.5"), Decimal("0.99"))
                if d is not None:
                    utils.append(float(d))
            if utils:
                kw["gpu_memory_utilizations"] = tuple(sorted(set(utils)))
    return Options(**kw)


def query_dict(q: PlannerQuery) -> dict:
    w, c, o = q.workload, q.constraints, q.options
    return {
        "scenario": q.scenario or None,
        "model": q.model.slug,
        "site": q.site.slug,
        "price_list": q.price_list,
        "workload": {
            "input_tokens": w.input_tokens,
            "output_tokens": w.output_tokens,
            "context": w.context,
            "concurrency": w.concurrency,
            "requests_per_s": w.requests_per_s,
            "ttft_target_s": w.ttft_target_s,
            "tpot_target_ms": w.tpot_target_ms,
            "availability_target": w.availability_target,
            "needs_vision": w.needs_vision,
        },
        "constraints": {
            "purchase": c.purchase,
            "currency": c.currency,
            "max_capex": str(c.max_capex) if c.max_capex is not None else None,
            "max_lease_per_month": str(c.max_lease_per_month) if c.max_lease_per_month is not None else None,
            "max_power_kw": c.max_power_kw,
            "max_racks": c.max_racks,
            "air_cooled_only": c.air_cooled_only,
            "domestic_only": c.domestic_only,
        },
        "options": {
            "max_nodes": o.max_nodes,
            "limit": o.limit,
            "sort": o.sort,
            "servers": list(o.servers),
            "topologies": list(o.topologies),
            "kv_cache_dtypes": list(o.kv_cache_dtypes),
            "gpu_memory_utilizations": list(o.gpu_memory_utilizations),
        },
        "servers_searched": [s.slug for s in q.servers],
    }
