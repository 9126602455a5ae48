"""Auto-planner: the cheapest deployments that meet a scenario, across every hardware family.

Pure search over engine types (no Django): the catalog comes in through a
:class:`PlannerCatalog` port (``configurator.planner_views`` provides the
Django one), and every candidate is judged by the same :func:`plan` the
configurator page uses.  docs/planner.md describes the request and response.

The search, per server model ("hardware family"):

1. **Family filters** (no engine call): domestic hardware only, a server
   validated for text only when the workload needs images, no purchase or
   lease price in the price list, a server hotter than the site's air limit
   when only air cooling is allowed.
2. **Group sizes**: for 1 … ``max_nodes`` nodes, the proposed layout plus a
   narrower-TP alternative, kept when ``layout_is_valid`` (expert
   divisibility, heads, scale-up domain) and the weights plus one full-length
   sequence fit at the most generous serving settings (``size_memory``).
3. **Shapes**: single clusters, tenant pairs and xPyD splits built from those
   group sizes (a primary/standby pair instead when the availability target is
   99.9 % or more), in order of total nodes.  Cheap lower bounds (servers'
   capex, lease and power; racks) stop a family as soon as they pass a ceiling.
4. **Serving**: per shape, layout alternatives × (memory utilisation, KV
   dtype) escalated only when the KV cache is what limits, with
   ``max_num_seqs`` sized to the offered load; judged by layout + memory +
   performance (≈0.5 ms) for capacity (the limit ``plan()`` enforces as
   ``performance.concurrency_above_capacity``, read as a gap concurrency ÷
   capacity), queueing, TTFT/TPOT targets and request rate.
5. **Plan**: the chosen variant goes through ``plan()`` (≈2–5 ms) and must
   have no error check and meet every constraint (capex or monthly rent,
   site power, racks, air cooling).
6. A family stops growing once feasible shapes stop lowering its cost for two
   node counts in a row, or when a gap to a target stops closing.

Every rejection carries a stable code, the request field it binds on and a
message with the numbers, in English and Chinese.
"""

from __future__ import annotations

import dataclasses
import math
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal, InvalidOperation
from typing import Any, Protocol

from .drawings.fmt import format_money
from .engine.defaults import PLANNER_HCCL_BUFFSIZE_MB, SERVING_DEFAULTS, kv_dtype_supported
from .engine.layout import layout_is_valid, parallel_label, propose_layout, resolve_layout
from .engine.memory import size_memory
from .engine.performance import estimate_performance
from .engine.plan import plan
from .engine.racks import CONTAINMENT_KW_LIMIT, servers_per_rack
from .engine.types import (
    CheckpointSpec,
    CommercialSpec,
    ModelSpec,
    ParallelSpec,
    PlanRequest,
    PlanResult,
    RackSpec,
    ServerSpec,
    ServingSpec,
    Severity,
    SiteSpec,
    SwitchSpec,
    TopologyKind,
    TopologySpec,
    WorkloadSpec,
)
from .requests import RequestError, to_jsonable

# --------------------------------------------------------------------------- constants

HA_AVAILABILITY = 0.999  # at or above: only a primary/standby pair meets it (docs/domain.md §4)
MAX_NUM_SEQS_LADDER = (16, 32, 64, 128, 256)
MAX_NUM_BATCHED_TOKENS = SERVING_DEFAULTS.max_num_batched_tokens  # engine/defaults.py
COMM_BUFFER_MB = PLANNER_HCCL_BUFFSIZE_MB  # HCCL_BUFFSIZE of the K3 tutorial (engine/defaults.py)
PATIENCE = 2  # node counts without a cheaper feasible shape before a family stops
GAP_PATIENCE = 3  # node counts without closing a serving gap before a family stops
MAX_PLANS_PER_FAMILY = 8
MAX_SHAPES_PER_FAMILY = 40  # safety nets: the stops above end a family long before these
MAX_CHEAP_PER_FAMILY = 160
PROJECTION_MARGIN = 2.0  # stop when a serving gap projects past 2 × max_nodes
MAX_XPYD_RATIO = 3  # prefill:decode splits up to 1:3 and 3:1
KV_DTYPES = ("auto", "fp8")
# The engine's ERROR check for a quoted concurrency above what the cluster serves at once
# (engine/performance/, capacity_concurrency).  The planner reads it as a serving gap
# (concurrency ÷ capacity) that more nodes, DP ranks or KV cache close, not as a dead end.
CAPACITY_CHECK = "performance.concurrency_above_capacity"
MEMORY_UTILISATIONS = (0.85, 0.9)

DEFAULT_WORKLOAD: dict[str, Any] = {
    "input_tokens": 8192,
    "output_tokens": 1024,
    "context": 133_120,
    "concurrency": 16,
    "availability_target": 0.995,
    "needs_vision": False,
}

# Stages of the search, in order: the deepest one a family reached gives its reason.
STAGE_FAMILY, STAGE_LAYOUT, STAGE_MEMORY, STAGE_SERVING, STAGE_ENGINE, STAGE_CONSTRAINT, STAGE_FEASIBLE = (
    range(7)
)
STAGE_NAMES = ("family", "layout", "memory", "serving", "engine", "constraint", "feasible")

# Request fields a user sets as constraints (used to name the binding constraint).
CONSTRAINT_FIELDS = (
    "constraints.max_capex",
    "constraints.max_lease_per_month",
    "constraints.max_power_kw",
    "constraints.max_racks",
    "constraints.air_cooled_only",
    "constraints.domestic_only",
    "workload.needs_vision",
    "workload.ttft_target_s",
    "workload.tpot_target_ms",
    "workload.requests_per_s",
    "workload.concurrency",
    "workload.context",
    "options.max_nodes",
    "constraints.currency",
    "constraints.purchase",
)

KIND_ORDER = {
    TopologyKind.SINGLE: 0,
    TopologyKind.PRIMARY_STANDBY: 1,
    TopologyKind.TENANT_PAIR: 2,
    TopologyKind.DISAGGREGATED: 3,
}
KIND_EN = {
    TopologyKind.SINGLE: "single cluster",
    TopologyKind.PRIMARY_STANDBY: "primary/standby pair",
    TopologyKind.TENANT_PAIR: "tenant pair",
    TopologyKind.DISAGGREGATED: "xPyD",
}
KIND_ZH = {
    TopologyKind.SINGLE: "单集群",
    TopologyKind.PRIMARY_STANDBY: "主备双集群",
    TopologyKind.TENANT_PAIR: "租户隔离双集群",
    TopologyKind.DISAGGREGATED: "PD 分离",
}


# --------------------------------------------------------------------------- the query


@dataclass(frozen=True)
class Workload:
    """What the deployment must serve (a scenario pre-fills it)."""

    input_tokens: int
    output_tokens: int
    context: int  # vLLM --max-model-len
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
    sort: str = "cost_per_m"  # cost_per_m | tco
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
    """What the planner needs from the catalog (``planner_views.DjangoPlannerCatalog``)."""

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


def _fmt(x: Decimal | float | int) -> str:
    d = Decimal(str(x))
    return f"{int(d):,}" if d == d.to_integral_value() else f"{float(d):g}"


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
            errs.add(path, f"cannot be negative (got {_fmt(d)}).")
        else:
            errs.add(path, f"must be at least {_fmt(lo)} (got {_fmt(d)}).")
        return None
    if d > Decimal(str(hi)):
        errs.add(path, f"must be at most {_fmt(hi)} (got {_fmt(d)}).")
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
    base = dict(DEFAULT_WORKLOAD)
    if scenario is not None:
        for key in DEFAULT_WORKLOAD:
            if scenario.get(key) is not None:
                base[key] = scenario[key]
    if "requests_per_s" in raw and raw["requests_per_s"] is not None and raw.get("concurrency") is None:
        base["concurrency"] = None  # a rate replaces the scenario's concurrency
    if "context" not in raw and (scenario is None or scenario.get("context") is None):
        if model is not None and model.max_context:
            base["context"] = min(base["context"], model.max_context)  # the default, within the model
    values: dict[str, Any] = dict(base)
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
        if raw[key] is None and key in ("concurrency", "requests_per_s", "ttft_target_s", "tpot_target_ms"):
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
    if values["input_tokens"] + values["output_tokens"] > values["context"]:
        errs.add(
            "workload.context",
            f"input {values['input_tokens']:,} + output {values['output_tokens']:,} tokens do not fit a context "
            f"of {values['context']:,} tokens.",
        )
        return None
    if model is not None:
        if model.max_context and values["context"] > model.max_context:
            errs.add("workload.context", f"{model.name} supports at most {model.max_context:,} tokens.")
            return None
        if values["needs_vision"] and not model.has_vision:
            errs.add("workload.needs_vision", f"{model.name} has no vision encoder; it cannot read images.")
            return None
    return Workload(
        input_tokens=int(values["input_tokens"]),
        output_tokens=int(values["output_tokens"]),
        context=int(values["context"]),
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
        if raw["sort"] not in ("cost_per_m", "tco"):
            errs.add("options.sort", "must be cost_per_m or tco.")
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


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class Rejection:
    """Why a shape (or a whole family) does not work."""

    server: str
    server_name: str
    nodes: int
    code: str
    field: str  # the request field it binds on
    stage: int
    message_en: str
    message_zh: str
    figures: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Shape:
    """How many nodes of one server, in which topology."""

    kind: TopologyKind
    nodes: int
    group_nodes: tuple[int, ...]  # the serving groups: (n,), (n/2, n/2), (prefill, decode)

    @property
    def prefill_nodes(self) -> int:
        return self.group_nodes[0] if self.kind == TopologyKind.DISAGGREGATED else 0

    @property
    def decode_nodes(self) -> int:
        return self.group_nodes[1] if self.kind == TopologyKind.DISAGGREGATED else 0


@dataclass(frozen=True)
class Candidate:
    """A feasible deployment with its figures and the configurator request that reproduces it."""

    id: str
    server: ServerSpec
    shape: Shape
    parallel: ParallelSpec
    decode_parallel: ParallelSpec | None
    serving: ServingSpec
    rack: RackSpec
    rack_inline: bool
    concurrency: int
    cost_per_m: Decimal
    tco_total: Decimal
    capex: Decimal
    lease_per_month: Decimal
    annual_cost: Decimal
    output_tokens_per_s: float
    requests_per_s: float
    ttft_s: float
    tpot_ms: float
    e2e_s: float
    it_kw: float
    racks: int
    saving_vs_api: Decimal | None
    warnings: tuple[tuple[str, str, str], ...]  # (code, en, zh)
    request_json: dict
    pareto: bool = False
    rank: int = 0


@dataclass(frozen=True)
class Evaluated:
    """One (shape, layout) the search looked at, how far it got and its figures."""

    server: str
    server_name: str
    shape: Shape
    parallel: str
    stage: int
    feasible: bool
    code: str = ""
    message_en: str = ""
    message_zh: str = ""
    figures: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class PlannerResult:
    query: PlannerQuery
    candidates: tuple[Candidate, ...]  # every feasible candidate, ranked
    pareto: tuple[Candidate, ...]
    rejected: tuple[Rejection, ...]  # one per family without a feasible candidate
    family_reasons: Mapping[str, tuple[Rejection, ...]]  # every distinct reason per family
    evaluated: tuple[Evaluated, ...]
    binding: Rejection | None
    stats: Mapping[str, Any]

    @property
    def top(self) -> tuple[Candidate, ...]:
        return self.candidates[: self.query.options.limit]


# --------------------------------------------------------------------------- helpers


def short_name(server: ServerSpec) -> str:
    """ "Atlas 800 A2 (910B, 8 NPUs)" → "Atlas 800 A2"."""
    return server.name.split("(")[0].strip() or server.slug


def shape_label(server: ServerSpec, shape: Shape, lang: str = "en") -> str:
    name = short_name(server)
    if shape.kind == TopologyKind.DISAGGREGATED:
        return f"{name} × {shape.nodes} ({shape.prefill_nodes}P{shape.decode_nodes}D)"
    if shape.kind == TopologyKind.SINGLE:
        return f"{name} × {shape.nodes}"
    kind = KIND_ZH[shape.kind] if lang == "zh" else KIND_EN[shape.kind]
    return f"{name} × {shape.nodes} ({kind})"


def _gb(value: float) -> str:
    return f"{value / 1e9:,.1f} GB"


def _money(amount: Decimal, currency: str, lang: str) -> str:
    return format_money(amount, currency, "zh-hans" if lang == "zh" else "en")


def _gap_key(r: Rejection) -> float:
    gap = r.figures.get("gap")
    return float(gap) if isinstance(gap, (int, float)) else math.inf


def _ceil(a: int, b: int) -> int:
    return -(-a // max(b, 1))


@dataclass
class _Family:
    server: ServerSpec
    reasons: list[Rejection] = field(default_factory=list)
    best: Decimal | None = None
    first_feasible: int | None = None
    plans: int = 0
    cheap: int = 0

    def reject(self, rejection: Rejection) -> Rejection:
        self.reasons.append(rejection)
        return rejection


@dataclass(frozen=True)
class _Variant:
    """A cheap (layout + memory + performance) evaluation that met the serving requirements."""

    parallel: ParallelSpec
    decode_parallel: ParallelSpec | None
    serving: ServingSpec
    concurrency: int
    requests_per_s: float
    output_tokens_per_s: float
    ttft_s: float
    tpot_s: float


class _Search:
    def __init__(self, query: PlannerQuery, catalog: PlannerCatalog):
        self.q = query
        self.catalog = catalog
        self.w = query.workload
        self.c = query.constraints
        self.o = query.options
        self.evaluated: list[Evaluated] = []
        self.candidates: list[Candidate] = []
        self.commercial_cache: dict[tuple[str, int, str], CommercialSpec] = {}
        self.memory_cache: dict[tuple, tuple[bool, Any]] = {}
        self.checkpoint_cache: dict[str, CheckpointSpec | None] = {}
        self.rack_cache: dict[tuple, tuple[RackSpec, bool, int]] = {}
        self.rack_options_cache: dict[str, list[tuple[RackSpec, bool, int]]] = {}
        self.stats = {"plans": 0, "cheap_evaluations": 0, "memory_checks": 0, "shapes": 0}
        self.ha = self.w.availability_target >= HA_AVAILABILITY - 1e-12
        self.current: _Family | None = None
        self.default_rack = (
            query.racks[0] if query.racks else RackSpec("rack-42u", "42U rack", name_zh="42U 机柜")
        )

    # ------------------------------------------------------------------ building requests

    def commercial(self, server: ServerSpec, nodes: int, rack: RackSpec) -> CommercialSpec:
        key = (server.slug, nodes, rack.slug)
        if key not in self.commercial_cache:
            self.commercial_cache[key] = self.catalog.commercial(
                server, nodes, rack, self.q.price_list, self.c.currency
            )
        return self.commercial_cache[key]

    def serving(self, server: ServerSpec, util: float, kv: str, seqs: int) -> ServingSpec:
        return ServingSpec(
            gpu_memory_utilization=util,
            max_model_len=self.w.context,
            max_num_seqs=seqs,
            max_num_batched_tokens=MAX_NUM_BATCHED_TOKENS,
            kv_cache_dtype=kv,
            comm_buffer_mb=COMM_BUFFER_MB
            if server.accelerator.software_stack == "ascend"
            else SERVING_DEFAULTS.comm_buffer_mb,
            enable_prefix_caching=True,
            language_model_only=self.language_model_only(server),
        )

    def language_model_only(self, server: ServerSpec) -> bool:
        # A server validated for text only is served as validated (--language-model-only).
        text_only = server.validated_text_only or server.slug in self.q.model.text_only_servers
        return bool(text_only and self.q.model.has_vision and not self.w.needs_vision)

    def workload(self, concurrency: int) -> WorkloadSpec:
        return WorkloadSpec(
            input_tokens=self.w.input_tokens,
            output_tokens=self.w.output_tokens,
            concurrency=concurrency,
            needs_vision=self.w.needs_vision,
            availability_target=self.w.availability_target,
            ttft_target_s=self.w.ttft_target_s,
            tpot_target_ms=self.w.tpot_target_ms,
        )

    def request(
        self,
        server: ServerSpec,
        shape: Shape,
        parallel: ParallelSpec,
        decode_parallel: ParallelSpec | None,
        serving: ServingSpec,
        concurrency: int,
        rack: RackSpec | None = None,
        commercial: CommercialSpec | None = None,
    ) -> PlanRequest:
        topology = TopologySpec(
            kind=shape.kind,
            nodes=shape.nodes,
            parallel=parallel,
            prefill_nodes=shape.prefill_nodes,
            decode_nodes=shape.decode_nodes,
            decode_parallel=decode_parallel if shape.kind == TopologyKind.DISAGGREGATED else None,
        )
        return PlanRequest(
            model=self.q.model,
            server=server,
            topology=topology,
            serving=serving,
            workload=self.workload(concurrency),
            site=self.q.site,
            rack=rack or self.default_rack,
            switches=self.q.switches,
            commercial=commercial or CommercialSpec(currency=self.c.currency),
            scenario=self.q.scenario,
            checkpoint=self.checkpoint(server),
        )

    # ------------------------------------------------------------------ family filters

    def family_filter(self, fam: _Family) -> Rejection | None:
        s = fam.server
        name = short_name(s)
        acc = s.accelerator

        def reject(code, fld, en, zh, **figures):
            return fam.reject(Rejection(s.slug, s.name, 0, code, fld, STAGE_FAMILY, en, zh, figures))

        if self.c.domestic_only and not acc.domestic:
            return reject(
                "planner.not_domestic",
                "constraints.domestic_only",
                f"{name}: {acc.name} ({acc.vendor or 'foreign vendor'}) is not domestic (Xinchuang) hardware.",
                f"{name}：{acc.name}（{acc.vendor or '国外厂商'}）不属于国产（信创）硬件。",
            )
        # The engine's own rule (engine/capability.py), so the planner and the configurator agree.
        if self.w.needs_vision and (s.validated_text_only or s.slug in self.q.model.text_only_servers):
            return reject(
                "planner.text_only_server",
                "workload.needs_vision",
                f"{name}: serves text only (validated with --language-model-only); image input needs the "
                "vision encoder.",
                f"{name}：仅验证了纯文本服务（--language-model-only），图片输入需要加载视觉编码器。",
            )
        rack = self.rack_options(s)
        if not rack and self.c.air_cooled_only:
            limit = self.q.site.air_cooling_kw_limit
            return reject(
                "planner.too_hot_for_air",
                "constraints.air_cooled_only",
                f"{name}: {s.max_input_kw:g} kW per server is over the site's air-cooling limit of {limit:g} kW "
                "per rack (or no air-cooled rack type holds it).",
                f"{name}：单台 {s.max_input_kw:g} kW，超过机房风冷单柜上限 {limit:g} kW（或没有可容纳它的风冷机柜）。",
                server_kw=s.max_input_kw,
                limit_kw=limit,
            )
        if not rack:
            return reject(
                "planner.no_rack",
                "rack",
                f"{name}: no rack type in the catalog holds a {s.rack_units}U, {s.max_input_kw:g} kW server "
                "within its power and cooling limits.",
                f"{name}：目录中没有能在功率与散热上限内容纳该服务器（{s.rack_units}U，{s.max_input_kw:g} kW）的机柜。",
                server_kw=s.max_input_kw,
                server_u=s.rack_units,
            )
        commercial = self.commercial(s, 1, rack[0][0])
        list_name = self.q.price_list or f"{self.c.currency} (none in force)"
        if self.c.purchase == "buy" and commercial.server_unit_price <= 0:
            return reject(
                "planner.no_price",
                "constraints.currency",
                f"{name}: no purchase price in price list {list_name}.",
                f"{name}：价格表 {list_name} 中没有采购价格。",
            )
        if self.c.purchase == "lease" and commercial.server_lease_per_month <= 0:
            return reject(
                "planner.no_lease_price",
                "constraints.purchase",
                f"{name}: no monthly lease price in price list {list_name}.",
                f"{name}：价格表 {list_name} 中没有月租价格。",
            )
        return None

    # ------------------------------------------------------------------ racks

    def rack_options(self, server: ServerSpec) -> list[tuple[RackSpec, bool, int]]:
        if server.slug not in self.rack_options_cache:
            self.rack_options_cache[server.slug] = self._rack_options(server)
        return self.rack_options_cache[server.slug]

    def _rack_options(self, server: ServerSpec) -> list[tuple[RackSpec, bool, int]]:
        """(rack, inline, servers per rack) that keep every rack within its cooling limit.

        Catalog rack types first (the request then names them by slug); an air
        rack capped at the site's air limit (inline in the request) only when no
        catalog rack stays within its cooling limit (A3 under "air cooling only":
        one 16.2 kW server per 25 kW rack).
        """
        site = self.q.site
        out: list[tuple[RackSpec, bool, int]] = []
        capped: list[tuple[RackSpec, bool, int]] = []
        for rack in self.q.racks or (self.default_rack,):
            if self.c.air_cooled_only and rack.cooling != "air":
                continue
            if rack.cooling == "air":
                limit: float | None = site.air_cooling_kw_limit
            elif rack.cooling == "containment":
                limit = max(CONTAINMENT_KW_LIMIT, site.air_cooling_kw_limit)
            else:
                limit = None
            probe = PlanRequest(
                model=self.q.model,
                server=server,
                topology=TopologySpec(TopologyKind.SINGLE, 1, ParallelSpec(1, 1)),
                rack=rack,
            )
            per = servers_per_rack(probe)
            usable = rack.rack_units - rack.reserved_units - rack.pdu_units
            if server.rack_units > usable or (rack.max_kw > 0 and server.max_input_kw > rack.max_kw):
                continue
            if limit is None or per * server.max_input_kw <= limit + 1e-9:
                out.append((rack, False, per))
            elif server.max_input_kw <= limit and rack.cooling == "air":
                cap = replace(rack, name=f"{rack.name} (≤ {limit:g} kW)", max_kw=float(limit))
                capped.append((cap, True, servers_per_rack(replace(probe, rack=cap))))
        if not self.q.racks:  # no rack types in the catalog: the request carries the engine's default
            out = [(r, True, per) for r, _inline, per in out]
        return out or capped

    def choose_rack(self, server: ServerSpec, shape: Shape) -> tuple[RackSpec, bool, int]:
        """The rack type with the lowest rack cost over the horizon (racks × (price + colocation))."""
        key = (server.slug, shape.group_nodes)
        if key not in self.rack_cache:
            self.rack_cache[key] = self._choose_rack(server, shape)
        return self.rack_cache[key]

    def _choose_rack(self, server: ServerSpec, shape: Shape) -> tuple[RackSpec, bool, int]:
        options = self.rack_options(server)
        best = None
        for rack, inline, per in options:
            count = sum(_ceil(g, per) for g in shape.group_nodes)
            price = self.commercial(server, 1, rack).rack_unit_price
            months = 12 * self.commercial(server, 1, rack).horizon_years
            cost = count * (price + self.q.site.colocation_per_rack_month * months)
            over = self.c.max_racks is not None and count > self.c.max_racks
            key = (over, cost, inline, count)
            if best is None or key < best[0]:
                best = (key, (rack, inline, per))
        assert best is not None
        return best[1]

    # ------------------------------------------------------------------ group sizes

    def layouts(self, server: ServerSpec, nodes: int) -> list[ParallelSpec]:
        """The proposed layout and a narrower-TP alternative, each valid for ``nodes``."""
        probe = PlanRequest(
            model=self.q.model,
            server=server,
            topology=TopologySpec(TopologyKind.SINGLE, nodes, ParallelSpec(1, 1)),
        )
        first = propose_layout(probe, nodes)
        out = []
        if layout_is_valid(probe, nodes, first):
            out.append(first)
        dpn = server.logical_devices
        tp = first.tp // 2
        heads = self.q.model.num_attention_heads
        if tp >= 1 and dpn % tp == 0 and (not heads or heads % tp == 0) and tp >= max(1, dpn // 4):
            alt = ParallelSpec(
                tp=tp,
                dp=nodes * dpn // tp,
                pp=1,
                expert_parallel=first.expert_parallel,
                dp_local=dpn // tp,
            )
            if alt != first and layout_is_valid(probe, nodes, alt):
                out.append(alt)
        return out

    def memory_fits(self, server: ServerSpec, nodes: int, p: ParallelSpec, serving: ServingSpec):
        """(fits, first memory error check) for one group, cached."""
        key = (server.slug, nodes, p, serving)
        if key not in self.memory_cache:
            self.stats["memory_checks"] += 1
            req = PlanRequest(
                model=self.q.model,
                server=server,
                topology=TopologySpec(TopologyKind.SINGLE, nodes, p),
                serving=serving,
                workload=self.workload(1),
                checkpoint=self.checkpoint(server),
            )
            memory = size_memory(req, resolve_layout(req))
            error = next((c for c in memory.checks if c.severity == Severity.ERROR), None)
            self.memory_cache[key] = (error is None, error)
        return self.memory_cache[key]

    def generous_serving(self, server: ServerSpec) -> ServingSpec:
        util = max(self.o.gpu_memory_utilizations)
        dtypes = self.kv_dtypes_for(server)
        kv = "fp8" if "fp8" in dtypes else dtypes[0]
        return self.serving(server, util, kv, MAX_NUM_SEQS_LADDER[0])

    def group_sizes(self, fam: _Family, upto: int) -> dict[int, list[ParallelSpec]]:
        s = fam.server
        name = short_name(s)
        serving = self.generous_serving(s)
        valid: dict[int, list[ParallelSpec]] = {}
        layout_reason = memory_reason = None
        fitting_tp: set[int] = set()
        for n in range(1, upto + 1):
            layouts = self.layouts(s, n)
            if not layouts:
                if layout_reason is None:
                    layout_reason = n
                continue
            fitting = []
            for p in layouts:
                # With TP fixed, a larger group only spreads the experts thinner (EP = all its
                # devices) and keeps the KV per rank: once a size fits, every larger one does.
                if p.tp in fitting_tp:
                    fitting.append(p)
                    continue
                fits, error = self.memory_fits(s, n, p, serving)
                if fits:
                    fitting.append(p)
                    fitting_tp.add(p.tp)
                elif memory_reason is None or (memory_reason[0] < n and not valid):
                    memory_reason = (n, p, error)
            if fitting:
                valid[n] = fitting
        if not valid:
            if memory_reason is not None:
                n, p, error = memory_reason
                fam.reject(self.memory_rejection(s, n, p, error, serving))
            else:
                fam.reject(
                    Rejection(
                        s.slug,
                        s.name,
                        upto,
                        "planner.no_valid_layout",
                        "options.max_nodes",
                        STAGE_LAYOUT,
                        f"{name}: no node count up to {upto} gives a valid parallel layout for "
                        f"{self.q.model.name} ({self.q.model.num_experts} experts, "
                        f"{self.q.model.num_attention_heads} heads over {s.logical_devices} devices per node).",
                        f"{name}：1–{upto} 台内没有可行的并行方式（{self.q.model.num_experts} 个专家、"
                        f"{self.q.model.num_attention_heads} 个注意力头，每节点 {s.logical_devices} 卡）。",
                    )
                )
        else:
            smallest = min(valid)
            # The largest size below the first fitting one names what is short (A2 × 1: memory).
            below = [n for n in range(1, smallest) if self.layouts(s, n)]
            if below:
                n = below[0]
                p = self.layouts(s, n)[0]
                fits, error = self.memory_fits(s, n, p, serving)
                if not fits:
                    fam.reject(self.memory_rejection(s, n, p, error, serving))
        return valid

    def memory_rejection(
        self, s: ServerSpec, n: int, p: ParallelSpec, error, serving: ServingSpec
    ) -> Rejection:
        name = short_name(s)
        label = parallel_label(p)
        figures = dict(error.figures) if error is not None else {}
        if error is not None and error.code == "memory.weights_do_not_fit":
            short = figures.get("shortfall_bytes", 0)
            en = (
                f"{name} × {n}: memory short by {short / 1e9:,.1f} GB per rank ({label}: weights "
                f"{_gb(figures.get('weights_bytes', 0))} > usable {_gb(figures.get('usable_bytes', 0))} at "
                f"{serving.gpu_memory_utilization:g} utilisation)."
            )
            zh = (
                f"{name} × {n}：每卡显存缺口 {short / 1e9:,.1f} GB（{label}：权重 "
                f"{_gb(figures.get('weights_bytes', 0))} > 可用 {_gb(figures.get('usable_bytes', 0))}，"
                f"利用率 {serving.gpu_memory_utilization:g}）。"
            )
            code = "planner.memory_short"
        elif error is not None and error.code == "memory.one_sequence_does_not_fit":
            short = figures.get("shortfall_bytes", 0)
            en = (
                f"{name} × {n}: one {self.w.context:,}-token sequence does not fit: KV cache short by "
                f"{short / 1e9:,.1f} GB per rank ({label})."
            )
            zh = (
                f"{name} × {n}：放不下一条 {self.w.context:,} tokens 的请求，每卡 KV 缓存缺口 "
                f"{short / 1e9:,.1f} GB（{label}）。"
            )
            code = "planner.sequence_does_not_fit"
        else:
            en = f"{name} × {n}: {error.message_en if error else 'memory does not fit.'}"
            zh = f"{name} × {n}：{error.message_zh if error else '显存不足。'}"
            code = "planner.memory_short"
        return Rejection(s.slug, s.name, n, code, "workload.context", STAGE_MEMORY, en, zh, figures)

    # ------------------------------------------------------------------ shapes

    def shapes(self, valid: Mapping[int, list[ParallelSpec]]) -> list[Shape]:
        kinds = {TopologyKind(k) for k in self.o.topologies} if self.o.topologies else set(TopologyKind)
        if self.ha:
            kinds &= {TopologyKind.PRIMARY_STANDBY}
        else:
            kinds -= {TopologyKind.PRIMARY_STANDBY}
        top = self.o.max_nodes
        sizes = sorted(valid)
        out: list[Shape] = []
        for g in sizes:
            if TopologyKind.SINGLE in kinds and g <= top:
                out.append(Shape(TopologyKind.SINGLE, g, (g,)))
            for kind in (TopologyKind.PRIMARY_STANDBY, TopologyKind.TENANT_PAIR):
                if kind in kinds and 2 * g <= top:
                    out.append(Shape(kind, 2 * g, (g, g)))
        if TopologyKind.DISAGGREGATED in kinds:
            for p in sizes:
                for d in sizes:
                    if p + d <= top and max(p, d) <= MAX_XPYD_RATIO * min(p, d):
                        out.append(Shape(TopologyKind.DISAGGREGATED, p + d, (p, d)))
        out.sort(key=lambda s: (s.nodes, KIND_ORDER[s.kind], s.group_nodes))
        return out

    def layout_pairs(
        self, shape: Shape, valid: Mapping[int, list[ParallelSpec]]
    ) -> list[tuple[ParallelSpec, ParallelSpec | None]]:
        first = valid[shape.group_nodes[0]]
        if shape.kind != TopologyKind.DISAGGREGATED:
            return [(p, None) for p in first]
        second = valid[shape.group_nodes[1]]
        pairs = [(p, d) for p in first for d in second if p.tp == d.tp]
        return pairs or [(first[0], second[0])]

    # ------------------------------------------------------------------ bounds

    def bound_rejection(self, fam: _Family, shape: Shape) -> Rejection | None:
        """Servers alone already exceed a ceiling: capex, rent, power, racks (monotone in nodes)."""
        s = fam.server
        n = shape.nodes
        label = shape_label(s, shape)
        label_zh = shape_label(s, shape, "zh")
        cur = self.c.currency
        rack, _inline, per = self.choose_rack(s, shape)
        commercial = self.commercial(s, n, rack)

        def reject(code, fld, en, zh, **figures):
            return Rejection(s.slug, s.name, n, code, fld, STAGE_CONSTRAINT, en, zh, figures)

        if self.c.purchase == "buy" and self.c.max_capex is not None:
            low = n * commercial.server_unit_price * (1 - commercial.quote_discount)
            if low > self.c.max_capex:
                return reject(
                    "planner.over_budget",
                    "constraints.max_capex",
                    f"{label}: the servers alone cost {_money(low, cur, 'en')}, over the budget of "
                    f"{_money(self.c.max_capex, cur, 'en')}.",
                    f"{label_zh}：仅服务器即需 {_money(low, cur, 'zh')}，超出预算 {_money(self.c.max_capex, cur, 'zh')}。",
                    needed=str(low),
                    limit=str(self.c.max_capex),
                )
        if self.c.purchase == "lease" and self.c.max_lease_per_month is not None:
            low = n * commercial.server_lease_per_month
            if low > self.c.max_lease_per_month:
                return reject(
                    "planner.over_lease",
                    "constraints.max_lease_per_month",
                    f"{label}: the rent is {_money(low, cur, 'en')} a month, over the ceiling of "
                    f"{_money(self.c.max_lease_per_month, cur, 'en')}.",
                    f"{label_zh}：月租 {_money(low, cur, 'zh')}，超出上限 {_money(self.c.max_lease_per_month, cur, 'zh')}。",
                    needed=str(low),
                    limit=str(self.c.max_lease_per_month),
                )
        if self.c.max_power_kw is not None:
            low_kw = n * s.max_input_kw
            if low_kw > self.c.max_power_kw + 1e-9:
                return reject(
                    "planner.over_power",
                    "constraints.max_power_kw",
                    f"{label}: the servers alone draw {low_kw:,.1f} kW at maximum input, over the site's "
                    f"{self.c.max_power_kw:,.1f} kW.",
                    f"{label_zh}：仅服务器最大输入功率即达 {low_kw:,.1f} kW，超过机房可用 {self.c.max_power_kw:,.1f} kW。",
                    needed=low_kw,
                    limit=self.c.max_power_kw,
                )
        if self.c.max_racks is not None:
            low_racks = sum(_ceil(g, per) for g in shape.group_nodes)
            if low_racks > self.c.max_racks:
                return reject(
                    "planner.over_racks",
                    "constraints.max_racks",
                    f"{label}: needs at least {low_racks} rack{'s' if low_racks != 1 else ''} ({per} server"
                    f"{'s' if per != 1 else ''} per {rack.name}), over the limit of {self.c.max_racks}.",
                    f"{label_zh}：至少需要 {low_racks} 个机柜（{rack.name} 每柜 {per} 台），超过上限 {self.c.max_racks} 个。",
                    needed=low_racks,
                    limit=self.c.max_racks,
                )
        return None

    # ------------------------------------------------------------------ serving

    def fam_cheap_exhausted(self, fam: _Family) -> bool:
        return fam.cheap >= MAX_CHEAP_PER_FAMILY

    def cheap(self, req: PlanRequest):
        """layout + memory + performance for one request (no power, racks, network, TCO)."""
        self.stats["cheap_evaluations"] += 1
        if self.current is not None:
            self.current.cheap += 1
        layout = resolve_layout(req)
        if any(c.severity == Severity.ERROR for c in layout.checks):
            return layout, None, None, next(c for c in layout.checks if c.severity == Severity.ERROR)
        memory = size_memory(req, layout)
        error = next((c for c in memory.checks if c.severity == Severity.ERROR), None)
        if error is not None:
            return layout, memory, None, error
        perf = estimate_performance(req, layout, memory)
        # The capacity check is judged by serving_problem() with its gap, as plan() would raise it.
        error = next(
            (c for c in perf.checks if c.severity == Severity.ERROR and c.code != CAPACITY_CHECK), None
        )
        return layout, memory, perf, error

    def serving_problem(self, perf, concurrency: int) -> tuple[str, str, str, str, float, str, dict] | None:
        """(code, field, en, zh, gap, limit, figures) of the first unmet serving requirement.

        ``gap`` = actual ÷ target (> 1); ``limit`` says what a bigger KV budget
        could help with: "kv" (the KV cache limits the batch), else "".

        First the limit ``plan()`` enforces as an ERROR (``performance.concurrency_above_capacity``):
        the concurrent requests the deployment serves at once, Σ DP ranks × min(max_num_seqs,
        sequences the KV cache holds), and for xPyD the most the prefill pool sustains
        (``PerformanceResult.capacity_concurrency``).  Its gap is concurrency ÷ capacity.
        """
        capacity = perf.capacity_concurrency
        counted = any(g.counts_toward_throughput for g in perf.groups)
        if concurrency > 0 and capacity > 0 and concurrency > capacity and counted:
            kv = any(g.counts_toward_throughput and g.batch_limited_by == "kv_capacity" for g in perf.groups)
            return (
                "planner.concurrency_above_capacity",
                "workload.concurrency",
                f"{concurrency:,} concurrent requests exceed the {capacity:,} this deployment serves at once "
                f"({'the KV cache limits the batch' if kv else 'the prefill pool or --max-num-seqs limits it'})",
                f"{concurrency:,} 路并发超过本部署可同时服务的 {capacity:,} 路"
                f"（{'受 KV 缓存限制' if kv else '受预填充能力或 --max-num-seqs 限制'}）",
                concurrency / capacity,
                "kv" if kv else "",
                {"concurrency": concurrency, "capacity": capacity},
            )
        for g in perf.groups:
            if g.counts_toward_throughput and g.batch_limited_by in ("kv_capacity", "max_num_seqs"):
                what = "KV cache" if g.batch_limited_by == "kv_capacity" else "--max-num-seqs"
                return (
                    "planner.queueing",
                    "workload.concurrency",
                    f"{concurrency:,} concurrent requests queue: the {what} runs {g.batch_per_dp_rank} sequences "
                    f"per DP rank, {g.offered_seqs_per_dp_rank} offered",
                    f"{concurrency:,} 路并发需排队：每个 DP rank 受{'KV 缓存' if what == 'KV cache' else ' --max-num-seqs '}"
                    f"限制只能运行 {g.batch_per_dp_rank} 条，需承载 {g.offered_seqs_per_dp_rank} 条",
                    g.offered_seqs_per_dp_rank / max(g.batch_per_dp_rank, 1),
                    "kv" if g.batch_limited_by == "kv_capacity" else "",
                    {},
                )
        if perf.requests_per_s <= 0 or perf.output_tokens_per_s <= 0:
            return (
                "planner.no_throughput",
                "workload.concurrency",
                "no decode throughput",
                "无解码吞吐",
                1e9,
                "",
                {},
            )
        if self.w.ttft_target_s is not None and perf.ttft_s > self.w.ttft_target_s:
            return (
                "planner.ttft_above_target",
                "workload.ttft_target_s",
                f"TTFT {perf.ttft_s:.2f} s over the {self.w.ttft_target_s:g} s target",
                f"首字延迟 {perf.ttft_s:.2f} 秒，超过目标 {self.w.ttft_target_s:g} 秒",
                perf.ttft_s / self.w.ttft_target_s,
                "",
                {},
            )
        if self.w.tpot_target_ms is not None and perf.tpot_s * 1000 > self.w.tpot_target_ms:
            return (
                "planner.tpot_above_target",
                "workload.tpot_target_ms",
                f"TPOT {perf.tpot_s * 1000:.1f} ms over the {self.w.tpot_target_ms:g} ms target",
                f"每字延迟 {perf.tpot_s * 1000:.1f} 毫秒，超过目标 {self.w.tpot_target_ms:g} 毫秒",
                perf.tpot_s * 1000 / self.w.tpot_target_ms,
                "kv",
                {},
            )
        if self.w.requests_per_s is not None and perf.requests_per_s < self.w.requests_per_s * (1 - 1e-9):
            return (
                "planner.rate_short",
                "workload.requests_per_s",
                f"{perf.requests_per_s:,.2f} requests/s, short of the {self.w.requests_per_s:g} requests/s needed",
                f"每秒 {perf.requests_per_s:,.2f} 个请求，低于所需 {self.w.requests_per_s:g} 个",
                self.w.requests_per_s / max(perf.requests_per_s, 1e-9),
                "",
                {},
            )
        return None

    def checkpoint(self, server: ServerSpec) -> CheckpointSpec | None:
        """The model's default checkpoint on the server's platform: what the configurator sizes too."""
        stack = server.accelerator.software_stack
        if stack not in self.checkpoint_cache:
            lookup = getattr(self.catalog, "default_checkpoint", None)
            self.checkpoint_cache[stack] = lookup(self.q.model.slug, stack) if lookup else None
        return self.checkpoint_cache[stack]

    def kv_dtypes_for(self, server: ServerSpec) -> tuple[str, ...]:
        """The KV-cache dtypes offered that the server's platform runs (no FP8 on Atlas A2/A3,
        vllm-ascend issue #8102; engine/defaults.py SUPPORTED_KV_DTYPES)."""
        stack = server.accelerator.software_stack
        runnable = tuple(d for d in self.o.kv_cache_dtypes if kv_dtype_supported(stack, d))
        return runnable or ("auto",)

    def ladder(self, server: ServerSpec | None = None) -> list[tuple[float, str]]:
        utils = sorted(self.o.gpu_memory_utilizations)
        dtypes = self.kv_dtypes_for(server) if server is not None else self.o.kv_cache_dtypes
        out = [(u, dtypes[0]) for u in utils]
        if len(dtypes) > 1:
            out.append((utils[-1], dtypes[-1]))
        return out

    def covering_seqs(self, offered: int) -> int:
        return next((m for m in MAX_NUM_SEQS_LADDER if m >= offered), MAX_NUM_SEQS_LADDER[-1])

    def try_variant(self, server, shape, p, d, util, kv):
        """One serving variant of one layout: (_Variant | None, problem, error check)."""
        counted = self._counted_dp(shape, p, d)
        if self.w.concurrency is not None:
            concurrency = self.w.concurrency
            seqs = self.covering_seqs(_ceil(concurrency, counted))
            req = self.request(server, shape, p, d, self.serving(server, util, kv, seqs), concurrency)
            _layout, _memory, perf, error = self.cheap(req)
            if error is not None or perf is None:
                return None, None, error, req
            problem = self.serving_problem(perf, concurrency)
            if problem is not None:
                return None, problem, None, req
            return self._variant(p, d, req, perf), None, None, req
        # A request rate: find the smallest batch whose saturated throughput reaches it,
        # then the concurrency that delivers the rate (Little's law on the engine's figures).
        rate = float(self.w.requests_per_s or 0.0)
        last: tuple = (None, None, None, None)
        for seqs in MAX_NUM_SEQS_LADDER:
            saturated = counted * seqs
            req = self.request(server, shape, p, d, self.serving(server, util, kv, seqs), saturated)
            _layout, _memory, perf, error = self.cheap(req)
            if error is not None or perf is None:
                return None, None, error, req
            problem = self.serving_problem(perf, saturated)
            kv_limited = (
                problem is not None
                and problem[0] in ("planner.queueing", "planner.concurrency_above_capacity")
                and problem[5] == "kv"
            )
            if perf.requests_per_s >= rate * (1 - 1e-9):
                concurrency = max(
                    1, min(saturated, math.ceil(rate * saturated / max(perf.requests_per_s, 1e-9)))
                )
                req2 = replace(req, workload=self.workload(concurrency))
                _l2, _m2, perf2, error2 = self.cheap(req2)
                problem2 = self.serving_problem(perf2, concurrency) if perf2 is not None else None
                if error2 is None and perf2 is not None and problem2 is None:
                    return self._variant(p, d, req2, perf2), None, None, req2
                if problem is None:
                    return self._variant(p, d, req, perf), None, None, req
                # The rate is met; what is left is latency, which a bigger batch only worsens.
                return None, problem2 or problem, error2, req2
            latency = problem is not None and problem[0] in (
                "planner.tpot_above_target",
                "planner.ttft_above_target",
            )
            last = (None, problem if latency else self.rate_problem(perf, kv_limited), None, req)
            if kv_limited or latency:
                break  # a larger batch will not run (KV cache) or only adds latency
        return last

    def rate_problem(self, perf, kv_limited: bool) -> tuple[str, str, str, str, float, str, dict]:
        rate = float(self.w.requests_per_s or 0.0)
        return (
            "planner.rate_short",
            "workload.requests_per_s",
            f"{perf.requests_per_s:,.2f} requests/s at most, short of the {rate:g} requests/s needed",
            f"最多每秒 {perf.requests_per_s:,.2f} 个请求，低于所需 {rate:g} 个",
            rate / max(perf.requests_per_s, 1e-9),
            "kv" if kv_limited else "",
            {},
        )

    def _counted_dp(self, shape: Shape, p: ParallelSpec, d: ParallelSpec | None) -> int:
        if shape.kind == TopologyKind.DISAGGREGATED:
            return (d or p).dp
        if shape.kind == TopologyKind.TENANT_PAIR:
            return 2 * p.dp
        return p.dp

    def _variant(self, p, d, req: PlanRequest, perf) -> _Variant:
        return _Variant(
            parallel=p,
            decode_parallel=d,
            serving=req.serving,
            concurrency=req.workload.concurrency,
            requests_per_s=perf.requests_per_s,
            output_tokens_per_s=perf.output_tokens_per_s,
            ttft_s=perf.ttft_s,
            tpot_s=perf.tpot_s,
        )

    def choose_serving(self, fam: _Family, shape: Shape, pairs) -> tuple[_Variant | None, Rejection | None]:
        """The best serving variant across layouts (most requests/s), or why none works."""
        s = fam.server
        best: _Variant | None = None
        worst_problem = None
        for p, d in pairs:
            label = parallel_label(p) if d is None else f"P {parallel_label(p)} · D {parallel_label(d)}"
            chosen = None
            problem = error = None
            for util, kv in self.ladder(s):
                variant, problem, error, _req = self.try_variant(s, shape, p, d, util, kv)
                if variant is not None:
                    chosen = variant
                    break
                # More memory or an FP8 KV cache helps only when the KV cache is what limits
                # (a memory error, a KV-limited batch, or TPOT from reading the KV cache).
                kv_related = (error is not None and error.code.startswith("memory.")) or (
                    problem is not None and problem[5] == "kv"
                )
                if not kv_related or self.fam_cheap_exhausted(fam):
                    break
            if chosen is not None:
                self.evaluated.append(
                    Evaluated(
                        s.slug,
                        s.name,
                        shape,
                        label,
                        STAGE_SERVING,
                        True,
                        figures={
                            "output_tokens_per_s": round(chosen.output_tokens_per_s, 1),
                            "requests_per_s": round(chosen.requests_per_s, 4),
                            "ttft_s": round(chosen.ttft_s, 3),
                            "tpot_ms": round(chosen.tpot_s * 1000, 2),
                            "gpu_memory_utilization": chosen.serving.gpu_memory_utilization,
                            "kv_cache_dtype": chosen.serving.kv_cache_dtype,
                            "max_num_seqs": chosen.serving.max_num_seqs,
                            "concurrency": chosen.concurrency,
                        },
                    )
                )
                if best is None or chosen.requests_per_s > best.requests_per_s * (1 + 1e-9):
                    best = chosen
                continue
            rejection = self.serving_rejection(s, shape, label, problem, error)
            self.evaluated.append(
                Evaluated(
                    s.slug,
                    s.name,
                    shape,
                    label,
                    rejection.stage,
                    False,
                    rejection.code,
                    rejection.message_en,
                    rejection.message_zh,
                    dict(rejection.figures),
                )
            )
            # Report the layout closest to working: a serving gap (smallest first) over an error
            # without one, so the family's gap is seen to close as it grows.
            if worst_problem is None or _gap_key(rejection) < _gap_key(worst_problem):
                worst_problem = rejection
        if best is not None:
            return best, None
        return None, worst_problem

    def serving_rejection(self, s: ServerSpec, shape: Shape, label: str, problem, error) -> Rejection:
        head = shape_label(s, shape)
        head_zh = shape_label(s, shape, "zh")
        if error is not None:
            code = (
                "planner.memory_short" if error.code.startswith("memory.") else f"planner.engine.{error.code}"
            )
            return Rejection(
                s.slug,
                s.name,
                shape.nodes,
                code,
                error.field or "workload.context",
                STAGE_MEMORY if error.code.startswith("memory.") else STAGE_ENGINE,
                f"{head} ({label}): {error.message_en}",
                f"{head_zh}（{label}）：{error.message_zh}",
                {"engine_code": error.code, **dict(error.figures)},
            )
        code, fld, en, zh, gap, limit, figures = problem
        return Rejection(
            s.slug,
            s.name,
            shape.nodes,
            code,
            fld,
            STAGE_SERVING,
            f"{head} ({label}): {en}.",
            f"{head_zh}（{label}）：{zh}。",
            {**figures, "gap": round(gap, 4), "kv_limited": limit == "kv"},
        )

    # ------------------------------------------------------------------ full plan

    def plan_shape(self, fam: _Family, shape: Shape, variant: _Variant) -> Candidate | Rejection:
        s = fam.server
        rack, inline, _per = self.choose_rack(s, shape)
        commercial = self.commercial(s, shape.nodes, rack)
        req = self.request(
            s,
            shape,
            variant.parallel,
            variant.decode_parallel,
            variant.serving,
            variant.concurrency,
            rack=rack,
            commercial=commercial,
        )
        self.stats["plans"] += 1
        fam.plans += 1
        result = plan(req)
        label = (
            parallel_label(variant.parallel)
            if variant.decode_parallel is None
            else f"P {parallel_label(variant.parallel)} · D {parallel_label(variant.decode_parallel)}"
        )
        head, head_zh = shape_label(s, shape), shape_label(s, shape, "zh")
        outcome = self.judge(s, shape, req, result, rack, inline, variant, label, head, head_zh)
        if isinstance(outcome, Rejection):
            self.evaluated.append(
                Evaluated(
                    s.slug,
                    s.name,
                    shape,
                    label,
                    outcome.stage,
                    False,
                    outcome.code,
                    outcome.message_en,
                    outcome.message_zh,
                    dict(outcome.figures),
                )
            )
        else:
            self.evaluated.append(
                Evaluated(
                    s.slug,
                    s.name,
                    shape,
                    label,
                    STAGE_FEASIBLE,
                    True,
                    figures={
                        "cost_per_m": str(outcome.cost_per_m),
                        "tco_total": str(outcome.tco_total),
                        "output_tokens_per_s": round(outcome.output_tokens_per_s, 1),
                        "ttft_s": round(outcome.ttft_s, 3),
                        "tpot_ms": round(outcome.tpot_ms, 2),
                    },
                )
            )
        return outcome

    def judge(self, s, shape, req, result: PlanResult, rack, inline, variant, label, head, head_zh):
        cur = self.c.currency

        def reject(code, fld, stage, en, zh, **figures):
            return Rejection(
                s.slug,
                s.name,
                shape.nodes,
                code,
                fld,
                stage,
                f"{head} ({label}): {en}",
                f"{head_zh}（{label}）：{zh}",
                figures,
            )

        error = next(
            (c for c in result.checks if c.severity == Severity.ERROR and c.code != CAPACITY_CHECK), None
        )
        if error is not None:
            return reject(
                f"planner.engine.{error.code}",
                error.field or "",
                STAGE_ENGINE,
                error.message_en,
                error.message_zh,
                engine_code=error.code,
            )
        codes = {c.code for c in result.checks if c.severity == Severity.WARNING}
        tco = result.tco
        perf = result.performance
        if tco is None or tco.tokens is None or perf is None:
            return reject(
                "planner.no_throughput",
                "workload.concurrency",
                STAGE_ENGINE,
                "no cost per million tokens.",
                "无法计算每百万 Token 成本。",
            )
        problem = self.serving_problem(perf, req.workload.concurrency)
        if problem is not None:
            code, fld, en, zh, gap, limit, figures = problem
            return reject(
                code,
                fld,
                STAGE_SERVING,
                en + ".",
                zh + "。",
                **figures,
                gap=round(gap, 4),
                kv_limited=limit == "kv",
            )
        lease_month = (tco.annual.lease_rent / 12).quantize(Decimal("0.01"))
        if self.c.purchase == "buy" and self.c.max_capex is not None and tco.capex.total > self.c.max_capex:
            return reject(
                "planner.over_budget",
                "constraints.max_capex",
                STAGE_CONSTRAINT,
                f"capex {_money(tco.capex.total, cur, 'en')} is over the budget of {_money(self.c.max_capex, cur, 'en')}.",
                f"采购总价 {_money(tco.capex.total, cur, 'zh')}，超出预算 {_money(self.c.max_capex, cur, 'zh')}。",
                needed=str(tco.capex.total),
                limit=str(self.c.max_capex),
            )
        if (
            self.c.purchase == "lease"
            and self.c.max_lease_per_month is not None
            and lease_month > self.c.max_lease_per_month
        ):
            return reject(
                "planner.over_lease",
                "constraints.max_lease_per_month",
                STAGE_CONSTRAINT,
                f"rent {_money(lease_month, cur, 'en')} a month is over the ceiling of "
                f"{_money(self.c.max_lease_per_month, cur, 'en')}.",
                f"月租 {_money(lease_month, cur, 'zh')}，超出上限 {_money(self.c.max_lease_per_month, cur, 'zh')}。",
                needed=str(lease_month),
                limit=str(self.c.max_lease_per_month),
            )
        if self.c.max_power_kw is not None and result.power.it_kw > self.c.max_power_kw + 1e-9:
            return reject(
                "planner.over_power",
                "constraints.max_power_kw",
                STAGE_CONSTRAINT,
                f"IT load {result.power.it_kw:,.1f} kW at maximum input is over the site's {self.c.max_power_kw:,.1f} kW.",
                f"IT 最大负载 {result.power.it_kw:,.1f} kW，超过机房可用 {self.c.max_power_kw:,.1f} kW。",
                needed=result.power.it_kw,
                limit=self.c.max_power_kw,
            )
        if self.c.max_racks is not None and result.racks.rack_count > self.c.max_racks:
            return reject(
                "planner.over_racks",
                "constraints.max_racks",
                STAGE_CONSTRAINT,
                f"{result.racks.rack_count} racks, over the limit of {self.c.max_racks}.",
                f"需要 {result.racks.rack_count} 个机柜，超过上限 {self.c.max_racks} 个。",
                needed=result.racks.rack_count,
                limit=self.c.max_racks,
            )
        if self.c.air_cooled_only and (
            req.rack.cooling != "air" or "cooling.rack_exceeds_air_limit" in codes
        ):
            return reject(
                "planner.not_air_cooled",
                "constraints.air_cooled_only",
                STAGE_CONSTRAINT,
                f"racks draw up to {result.racks.max_rack_kw:,.1f} kW, beyond air cooling "
                f"({self.q.site.air_cooling_kw_limit:g} kW per rack).",
                f"单柜功耗最高 {result.racks.max_rack_kw:,.1f} kW，超出风冷能力（每柜 {self.q.site.air_cooling_kw_limit:g} kW）。",
                needed=result.racks.max_rack_kw,
                limit=self.q.site.air_cooling_kw_limit,
            )
        tokens = tco.tokens
        if self.c.purchase == "buy":
            cost, total = tokens.cost_per_m_blended_buy, tco.buy_total
            annual, saving = tokens.annual_cost_buy, tokens.saving_vs_api_buy
        else:
            cost, total = tokens.cost_per_m_blended_lease, tco.lease_total
            annual, saving = tokens.annual_cost_lease, tokens.saving_vs_api_lease
        if cost is None:
            return reject(
                "planner.no_throughput",
                "workload.concurrency",
                STAGE_ENGINE,
                "no cost per million tokens.",
                "无法计算每百万 Token 成本。",
            )
        warnings = tuple(
            (c.code, c.message_en, c.message_zh) for c in result.checks if c.severity == Severity.WARNING
        )
        ident = f"{s.slug}:{shape.kind.value}:{'-'.join(str(g) for g in shape.group_nodes)}:tp{variant.parallel.tp}"
        return Candidate(
            id=ident,
            server=s,
            shape=shape,
            parallel=variant.parallel,
            decode_parallel=variant.decode_parallel,
            serving=variant.serving,
            rack=rack,
            rack_inline=inline,
            concurrency=req.workload.concurrency,
            cost_per_m=cost,
            tco_total=total,
            capex=tco.capex.total,
            lease_per_month=lease_month,
            annual_cost=annual,
            output_tokens_per_s=perf.output_tokens_per_s,
            requests_per_s=perf.requests_per_s,
            ttft_s=perf.ttft_s,
            tpot_ms=perf.tpot_s * 1000,
            e2e_s=perf.ttft_s + self.w.output_tokens * perf.tpot_s,
            it_kw=result.power.it_kw,
            racks=result.racks.rack_count,
            saving_vs_api=saving,
            warnings=warnings,
            request_json=self.request_json(s, shape, variant, req, rack, inline),
        )

    def request_json(self, s, shape: Shape, variant: _Variant, req: PlanRequest, rack, inline) -> dict:
        """The configurator request (docs/api.md) that replans this candidate identically."""

        def par(p: ParallelSpec) -> dict:
            return {
                "tp": p.tp,
                "dp": p.dp,
                "pp": p.pp,
                "dp_local": p.dp_local,
                "expert_parallel": p.expert_parallel,
            }

        topology: dict[str, Any] = {
            "kind": shape.kind.value,
            "nodes": shape.nodes,
            "parallel": par(variant.parallel),
        }
        if shape.kind == TopologyKind.DISAGGREGATED:
            topology["prefill_nodes"] = shape.prefill_nodes
            topology["decode_nodes"] = shape.decode_nodes
            topology["decode_parallel"] = par(variant.decode_parallel or variant.parallel)
        sv = variant.serving
        workload: dict[str, Any] = {
            "input_tokens": self.w.input_tokens,
            "output_tokens": self.w.output_tokens,
            "concurrency": variant.concurrency,
            "needs_vision": self.w.needs_vision,
            "availability_target": self.w.availability_target,
        }
        if self.w.ttft_target_s is not None:
            workload["ttft_target_s"] = self.w.ttft_target_s
        if self.w.tpot_target_ms is not None:
            workload["tpot_target_ms"] = self.w.tpot_target_ms
        commercial: dict[str, Any] = {"currency": self.c.currency}
        if self.q.price_list:
            commercial["price_list"] = self.q.price_list
        data: dict[str, Any] = {
            "model": self.q.model.slug,
            "server": s.slug,
            "topology": topology,
            "serving": {
                "gpu_memory_utilization": sv.gpu_memory_utilization,
                "max_model_len": sv.max_model_len,
                "max_num_seqs": sv.max_num_seqs,
                "max_num_batched_tokens": sv.max_num_batched_tokens,
                "kv_cache_dtype": sv.kv_cache_dtype,
                "comm_buffer_mb": sv.comm_buffer_mb,
                "enable_prefix_caching": sv.enable_prefix_caching,
                "language_model_only": sv.language_model_only,
            },
            "workload": workload,
            "site": self.q.site.slug,
            "rack": to_jsonable(rack) if inline else rack.slug,
            "commercial": commercial,
        }
        if self.q.scenario:
            data["scenario"] = self.q.scenario
        return data

    # ------------------------------------------------------------------ the family loop

    def search_family(self, fam: _Family) -> None:
        self.current = fam
        if self.family_filter(fam) is not None:
            return
        s = fam.server
        valid = self.group_sizes(fam, self.o.max_nodes)
        if not valid:
            return
        shapes = self.shapes(valid)
        if not shapes:
            kinds = "primary/standby" if self.ha else "the allowed topologies"
            fam.reject(
                Rejection(
                    s.slug,
                    s.name,
                    min(valid),
                    "planner.no_shape",
                    "options.max_nodes",
                    STAGE_LAYOUT,
                    f"{short_name(s)}: {kinds} need more than {self.o.max_nodes} nodes "
                    f"(smallest working cluster: {min(valid)} nodes).",
                    f"{short_name(s)}：所需拓扑超过 {self.o.max_nodes} 台（最小可用集群 {min(valid)} 台）。",
                )
            )
            return
        by_nodes: dict[int, list[Shape]] = {}
        for shape in shapes:
            by_nodes.setdefault(shape.nodes, []).append(shape)
        stale = 0
        gap_best: float | None = None
        no_progress = tried = 0
        for n in sorted(by_nodes):
            improved = False
            gap_here: float | None = None
            stop = False
            for shape in by_nodes[n]:
                self.stats["shapes"] += 1
                tried += 1
                bound = self.bound_rejection(fam, shape)
                if bound is not None:
                    fam.reject(bound)
                    self.evaluated.append(
                        Evaluated(
                            s.slug, s.name, shape, "", bound.stage, False, bound.code,
                            bound.message_en, bound.message_zh, dict(bound.figures),
                        )
                    )  # fmt: skip
                    if bound.code != "planner.over_racks" or shape.kind == TopologyKind.SINGLE:
                        stop = True  # servers' capex, rent and power only grow with nodes
                        break
                    continue
                variant, why = self.choose_serving(fam, shape, self.layout_pairs(shape, valid))
                if variant is None:
                    if why is not None:
                        gap = why.figures.get("gap")
                        projected = None
                        if isinstance(gap, (int, float)):
                            gap_here = gap if gap_here is None else min(gap_here, gap)
                            projected = self.projection(fam, shape, why, gap)
                        # The projection, when it stops the family, is the fuller reason.
                        fam.reject(projected or why)
                        if projected is not None:
                            stop = True
                            break
                    if self.fam_cheap_exhausted(fam):
                        stop = True
                        break
                    continue
                outcome = self.plan_shape(fam, shape, variant)
                if isinstance(outcome, Rejection):
                    fam.reject(outcome)
                    gap = outcome.figures.get("gap")
                    if isinstance(gap, (int, float)):
                        gap_here = gap if gap_here is None else min(gap_here, gap)
                    if outcome.code.startswith("planner.engine.network.") and shape.nodes > 1:
                        stop = True  # the cross-node fabric fails at every larger size too
                        break
                    if (
                        outcome.stage == STAGE_CONSTRAINT
                        and outcome.code
                        in (
                            "planner.over_budget",
                            "planner.over_lease",
                            "planner.over_power",
                        )
                        and shape.kind == TopologyKind.SINGLE
                    ):
                        stop = True
                    continue
                self.candidates.append(outcome)
                key = self.sort_key(outcome)[0]
                if fam.best is None or key < fam.best:
                    fam.best = key
                    improved = True
                if fam.first_feasible is None:
                    fam.first_feasible = n
            if stop or fam.plans >= MAX_PLANS_PER_FAMILY or tried >= MAX_SHAPES_PER_FAMILY:
                break
            if fam.first_feasible is not None:
                if n > fam.first_feasible:
                    stale = 0 if improved else stale + 1
                    if stale >= PATIENCE:
                        break
            elif gap_here is not None and (gap_best is None or gap_here < gap_best * 0.99):
                gap_best, no_progress = gap_here, 0
            else:
                # Nothing works yet and the gap to the target is not closing.
                no_progress += 1
                if no_progress >= GAP_PATIENCE:
                    break

    def projection(self, fam: _Family, shape: Shape, why: Rejection, gap: float) -> Rejection | None:
        """Stop a family whose serving gap cannot close within the nodes searched.

        Queueing and request-rate gaps shrink about as 1 ÷ nodes (the load
        spreads over more DP ranks); TPOT shrinks more slowly (the non-expert
        weights are read on every step whatever the node count) and TTFT not at
        all (prefill runs on one DP rank).  So nodes × gap is at most what is
        needed, and past twice the largest deployment searched there is no
        point in growing.
        """
        if why.code not in (
            "planner.concurrency_above_capacity",
            "planner.queueing",
            "planner.rate_short",
            "planner.tpot_above_target",
            "planner.ttft_above_target",
        ):
            return None
        if why.figures.get("kv_limited") and why.code in (
            "planner.concurrency_above_capacity",
            "planner.queueing",
        ):
            # A batch the KV cache limits grows faster than the node count: each rank holds fewer
            # experts, so more of its memory goes to KV (K3 at 24,576 + 1,536 tokens a request:
            # 4 × A3 at DP4 serve 44 at once, 8 × A3 at DP16 serve 256, 5.8 × for twice the
            # nodes).  nodes × gap is no lower bound there; the gap patience ends the family.
            return None
        projected = math.ceil(shape.nodes * gap)
        if projected <= PROJECTION_MARGIN * self.o.max_nodes:
            return None
        s = fam.server
        return Rejection(
            s.slug,
            s.name,
            shape.nodes,
            why.code,
            why.field,
            STAGE_SERVING,
            f"{why.message_en[:-1]}; about {projected:,} nodes would be needed, more than the "
            f"{self.o.max_nodes} searched.",
            f"{why.message_zh[:-1]}；约需 {projected:,} 台，超过搜索上限 {self.o.max_nodes} 台。",
            {**dict(why.figures), "projected_nodes": projected},
        )

    def sort_key(self, c: Candidate) -> tuple:
        if self.o.sort == "tco":
            return (c.tco_total, c.cost_per_m, c.shape.nodes, c.id)
        return (c.cost_per_m, c.tco_total, c.shape.nodes, c.id)

    # ------------------------------------------------------------------ entry

    def run(self) -> PlannerResult:
        started = time.perf_counter()
        families = [_Family(s) for s in self.q.servers]
        for fam in families:
            self.search_family(fam)
        ranked = sorted(self.candidates, key=self.sort_key)
        front_ids = {c.id for c in pareto_front(ranked)}
        ranked = [replace(c, rank=i + 1, pareto=c.id in front_ids) for i, c in enumerate(ranked)]
        pareto = tuple(c for c in ranked if c.pareto)
        feasible_servers = {c.server.slug for c in ranked}
        rejected = []
        reasons: dict[str, tuple[Rejection, ...]] = {}
        for fam in families:
            distinct: dict[str, Rejection] = {}
            for r in fam.reasons:
                distinct.setdefault(r.code, r)
            reasons[fam.server.slug] = tuple(distinct.values())
            if fam.server.slug not in feasible_servers:
                rejected.append(primary_reason(fam.server, fam.reasons, self.o.max_nodes))
        binding = None if ranked else binding_constraint(rejected, self.q)
        stats = dict(self.stats)
        stats["families"] = len(families)
        stats["feasible"] = len(ranked)
        stats["elapsed_ms"] = round((time.perf_counter() - started) * 1000, 1)
        return PlannerResult(
            query=self.q,
            candidates=tuple(ranked),
            pareto=pareto,
            rejected=tuple(rejected),
            family_reasons=reasons,
            evaluated=tuple(self.evaluated),
            binding=binding,
            stats=stats,
        )


def search(query: PlannerQuery, catalog: PlannerCatalog) -> PlannerResult:
    """Every feasible deployment found for ``query``, ranked, with the Pareto front and rejections."""
    return _Search(query, catalog).run()


# --------------------------------------------------------------------------- ranking helpers


def pareto_front(candidates: Sequence[Candidate]) -> list[Candidate]:
    """Candidates no other beats on cost per M tokens, throughput and end-to-end latency at once."""
    front = []
    for a in candidates:
        dominated = False
        for b in candidates:
            if b is a:
                continue
            no_worse = (
                b.cost_per_m <= a.cost_per_m
                and b.output_tokens_per_s >= a.output_tokens_per_s
                and b.e2e_s <= a.e2e_s
            )
            better = (
                b.cost_per_m < a.cost_per_m
                or b.output_tokens_per_s > a.output_tokens_per_s
                or b.e2e_s < a.e2e_s
            )
            if no_worse and better:
                dominated = True
                break
        if not dominated:
            front.append(a)
    return front


def primary_reason(server: ServerSpec, reasons: Sequence[Rejection], max_nodes: int) -> Rejection:
    """The reason of the deepest stage a family reached, at its smallest node count."""
    if not reasons:
        return Rejection(
            server.slug,
            server.name,
            0,
            "planner.not_reached",
            "options.max_nodes",
            STAGE_LAYOUT,
            f"{short_name(server)}: no deployment up to {max_nodes} nodes was found.",
            f"{short_name(server)}：{max_nodes} 台以内未找到可行部署。",
        )
    deepest = max(r.stage for r in reasons)
    at = [r for r in reasons if r.stage == deepest]
    return min(at, key=lambda r: r.nodes)


def binding_constraint(rejected: Sequence[Rejection], query: PlannerQuery) -> Rejection | None:
    """The constraint to relax first: among the families that got furthest, the one that stops most.

    A family ruled out before sizing (not domestic, no lease price) says less
    about what to change than the budget that stops every family that works.
    """
    if not rejected:
        return None
    deepest = max(r.stage for r in rejected)
    counts: dict[str, list[Rejection]] = {}
    for r in (r for r in rejected if r.stage == deepest):
        counts.setdefault(r.field or r.code, []).append(r)

    def priority(item):
        fld, rs = item
        user = fld in CONSTRAINT_FIELDS
        return (-len(rs), not user, CONSTRAINT_FIELDS.index(fld) if user else 99)

    fld, rs = min(counts.items(), key=priority)
    cur = query.constraints.currency
    example = min(rs, key=lambda r: _as_decimal(r.figures.get("needed")) or Decimal(10**18))
    needed = example.figures.get("needed")
    limit = example.figures.get("limit")
    families = len(rs)
    text = {
        "constraints.max_capex": (
            f"Budget {_money(Decimal(str(limit)), cur, 'en')}: no deployment that serves the workload is that cheap "
            f"(the least needs {_money(Decimal(str(needed)), cur, 'en')}).",
            f"预算 {_money(Decimal(str(limit)), cur, 'zh')}：满足业务的部署均超出预算（最少需 {_money(Decimal(str(needed)), cur, 'zh')}）。",
        )
        if needed is not None and limit is not None
        else None,
        "constraints.max_lease_per_month": (
            f"Monthly rent ceiling {_money(Decimal(str(limit)), cur, 'en')}: the least any working deployment "
            f"rents for is {_money(Decimal(str(needed)), cur, 'en')} a month.",
            f"月租上限 {_money(Decimal(str(limit)), cur, 'zh')}：可行部署的月租最少为 {_money(Decimal(str(needed)), cur, 'zh')}。",
        )
        if needed is not None and limit is not None
        else None,
        "constraints.max_racks": (
            f"{limit} rack{'s' if limit != 1 else ''} allowed: the smallest working deployment needs {needed}.",
            f"机柜上限 {limit} 个：最小的可行部署需要 {needed} 个。",
        )
        if needed is not None and limit is not None
        else None,
        "constraints.max_power_kw": (
            f"{_fmt(limit)} kW of site power: the smallest working deployment draws {float(needed):,.1f} kW.",
            f"机房可用功率 {_fmt(limit)} kW：最小的可行部署需 {float(needed):,.1f} kW。",
        )
        if needed is not None and limit is not None
        else None,
    }.get(fld)
    if text is None:
        text = (
            f"{families} of {len(rejected)} hardware families stop at {fld}: {example.message_en}",
            f"{len(rejected)} 个硬件系列中有 {families} 个受限于 {fld}：{example.message_zh}",
        )
    return Rejection(
        example.server,
        example.server_name,
        example.nodes,
        example.code,
        fld,
        example.stage,
        text[0],
        text[1],
        {"families": families, **dict(example.figures)},
    )


def _as_decimal(value: Any) -> Decimal | None:
    try:
        return Decimal(str(value)) if value is not None else None
    except InvalidOperation:
        return None


# --------------------------------------------------------------------------- JSON


def _num(value: Any) -> Any:
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, float):
        return round(value, 6) if math.isfinite(value) else None
    return value


def _rejection_dict(r: Rejection) -> dict:
    return {
        "server": r.server,
        "server_name": r.server_name,
        "nodes": r.nodes,
        "code": r.code,
        "field": r.field,
        "stage": STAGE_NAMES[r.stage],
        "message_en": r.message_en,
        "message_zh": r.message_zh,
        "figures": {
            str(k): _num(v) for k, v in r.figures.items() if isinstance(v, (int, float, str, Decimal, bool))
        },
    }


def candidate_dict(c: Candidate) -> dict:
    return {
        "rank": c.rank,
        "id": c.id,
        "pareto": c.pareto,
        "server": c.server.slug,
        "server_name": c.server.name,
        "vendor": c.server.vendor,
        "domestic": c.server.accelerator.domestic,
        "topology": c.shape.kind.value,
        "nodes": c.shape.nodes,
        "prefill_nodes": c.shape.prefill_nodes,
        "decode_nodes": c.shape.decode_nodes,
        "parallel": parallel_label(c.parallel),
        "decode_parallel": parallel_label(c.decode_parallel) if c.decode_parallel else None,
        "serving": {
            "gpu_memory_utilization": c.serving.gpu_memory_utilization,
            "kv_cache_dtype": c.serving.kv_cache_dtype,
            "max_num_seqs": c.serving.max_num_seqs,
            "max_model_len": c.serving.max_model_len,
            "language_model_only": c.serving.language_model_only,
        },
        "rack": c.rack.slug,
        "rack_capped_kw": c.rack.max_kw if c.rack_inline else None,
        "concurrency": c.concurrency,
        "figures": {
            "cost_per_m_tokens": str(c.cost_per_m),
            "tco_total": str(c.tco_total),
            "capex": str(c.capex),
            "lease_per_month": str(c.lease_per_month),
            "annual_cost": str(c.annual_cost),
            "output_tokens_per_s": round(c.output_tokens_per_s, 3),
            "requests_per_s": round(c.requests_per_s, 5),
            "ttft_s": round(c.ttft_s, 4),
            "tpot_ms": round(c.tpot_ms, 3),
            "e2e_s": round(c.e2e_s, 3),
            "it_kw": round(c.it_kw, 2),
            "racks": c.racks,
            "saving_vs_api": str(c.saving_vs_api) if c.saving_vs_api is not None else None,
        },
        "warnings": [{"code": code, "message_en": en, "message_zh": zh} for code, en, zh in c.warnings],
        "request": c.request_json,
    }


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


def result_dict(result: PlannerResult, *, evaluated: bool = True) -> dict:
    """The ``POST /api/recommend`` response (docs/planner.md)."""
    top = result.top
    out = {
        "query": query_dict(result.query),
        "candidates": [candidate_dict(c) for c in top],
        "pareto": [candidate_dict(c) for c in result.pareto],
        "feasible_count": len(result.candidates),
        "rejected_families": [_rejection_dict(r) for r in result.rejected],
        "family_reasons": {k: [_rejection_dict(r) for r in v] for k, v in result.family_reasons.items()},
        "binding_constraint": _rejection_dict(result.binding) if result.binding else None,
        "stats": dict(result.stats),
    }
    if evaluated:
        out["evaluated"] = [
            {
                "server": e.server,
                "topology": e.shape.kind.value,
                "nodes": e.shape.nodes,
                "prefill_nodes": e.shape.prefill_nodes,
                "decode_nodes": e.shape.decode_nodes,
                "parallel": e.parallel,
                "stage": STAGE_NAMES[e.stage],
                "feasible": e.feasible,
                "code": e.code,
                "message_en": e.message_en,
                "message_zh": e.message_zh,
                "figures": {str(k): _num(v) for k, v in e.figures.items()},
            }
            for e in result.evaluated
        ]
    return out


__all__ = [
    "Candidate",
    "Constraints",
    "Options",
    "PlannerCatalog",
    "PlannerQuery",
    "PlannerResult",
    "Rejection",
    "Workload",
    "binding_constraint",
    "candidate_dict",
    "pareto_front",
    "parse_query",
    "result_dict",
    "search",
    "shape_label",
    "short_name",
]
