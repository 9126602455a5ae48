"""What comes out: rejections, shapes, candidates, the search result and its JSON (docs/planner.md).

Also the search's own bookkeeping that several steps share: :class:`Family` (what one server
model's search found so far) and :class:`Variant` (a serving variant that met the requirements).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from ..engine.checks import words
from ..engine.layout import parallel_label
from ..engine.types import ParallelSpec, RackSpec, ServerSpec, ServingSpec, TopologyKind
from .query import PlannerQuery, query_dict

# Stages of the search, in order: the deepest one a family reached gives its reason.
STAGE_FAMILY, STAGE_LAYOUT, STAGE_MEMORY, STAGE_SERVING, STAGE_ENGINE, STAGE_CONSTRAINT, STAGE_FEASIBLE = (
    range(7)
)
STAGE_NAMES = ("family", "layout", "memory", "serving", "engine", "constraint", "feasible")

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
    figures: Mapping[str, Any] = dataclasses.field(default_factory=dict)  # ``field`` is a field here


def rejection(
    code: str,
    of: ServerSpec | Rejection,
    nodes: int,
    stage: int,
    /,
    *,
    variant: str | None = None,
    figures: Mapping[str, Any] | None = None,
    as_code: str | None = None,
    **values: Any,
) -> Rejection:
    """The rejection ``code``: its field and message in both languages from its definition in the check
    catalogue (``engine/checks/catalogue/planner.py``, the wording ``variant``), rendered from ``values``.

    ``of`` is the server family (or the rejection reworded, whose server it keeps); ``as_code`` the
    code the rejection carries when its words are another definition's (an engine check passed on as
    ``planner.engine.<check code>``, a projected serving gap, the binding constraint).  The one place
    a :class:`Rejection` is made (``tests/engine/test_check_catalogue.py`` checks it)."""
    w = words(code, variant=variant, **values)
    server, name = (of.slug, of.name) if isinstance(of, ServerSpec) else (of.server, of.server_name)
    return Rejection(
        server,
        name,
        nodes,
        as_code or code,
        w.field,
        stage,
        w.message_en,
        w.message_zh,
        figures if figures is not None else {},
    )


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
    lease_per_month: Decimal | None  # None: no lease offer in the catalog
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
    # The design point (engine/performance/design.py): concurrent requests and output tokens/s carried
    # within the latency targets; 0 when a target is out of the candidate's reach.
    design_concurrency: int = 0
    design_output_tokens_per_s: float = 0.0


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
class OnRequest:
    """The smallest deployment of a server family without a price that meets the workload and the
    constraints that need no price: feasible, price on request (no cost to rank it by)."""

    server: ServerSpec
    shape: Shape
    parallel: str  # the layout as the seeds write it
    concurrency: int
    ttft_s: float
    tpot_ms: float
    output_tokens_per_s: float
    design_concurrency: int
    it_kw: float
    racks: int
    on_request: tuple[str, ...]  # the lines priced on request (server, switch …)
    request_json: Mapping[str, Any]


def on_request_dict(o: OnRequest) -> dict:
    """One "feasible, price on request" deployment as ``POST /api/recommend`` lists it."""
    return {
        "server": o.server.slug,
        "server_name": o.server.name,
        "topology": o.shape.kind.value,
        "nodes": o.shape.nodes,
        "prefill_nodes": o.shape.prefill_nodes,
        "decode_nodes": o.shape.decode_nodes,
        "label_en": shape_label(o.server, o.shape),
        "label_zh": shape_label(o.server, o.shape, "zh"),
        "parallel": o.parallel,
        "concurrency": o.concurrency,
        "ttft_s": round(o.ttft_s, 3),
        "tpot_ms": round(o.tpot_ms, 2),
        "output_tokens_per_s": round(o.output_tokens_per_s, 1),
        "design_concurrency": o.design_concurrency,
        "it_kw": round(o.it_kw, 2),
        "racks": o.racks,
        "prices_on_request": list(o.on_request),
        "price_en": "price on request",
        "price_zh": "价格待询",
        "request": dict(o.request_json),
    }


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
    # Feasible deployments on servers the price list does not price, listed after the priced ones.
    on_request: tuple[OnRequest, ...] = ()

    @property
    def top(self) -> tuple[Candidate, ...]:
        return self.candidates[: self.query.options.limit]


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


def layout_label(p: ParallelSpec, d: ParallelSpec | None) -> str:
    """A serving variant's layout as the seeds write it: "DP4 / TP16 / EP64", for xPyD "P … · D …"."""
    return parallel_label(p) if d is None else f"P {parallel_label(p)} · D {parallel_label(d)}"


def evaluated_rejection(server: ServerSpec, shape: Shape, parallel: str, r: Rejection) -> Evaluated:
    """The row of ``evaluated`` for a (shape, layout) that failed with ``r``."""
    return Evaluated(
        server.slug,
        server.name,
        shape,
        parallel,
        r.stage,
        False,
        r.code,
        r.message_en,
        r.message_zh,
        dict(r.figures),
    )


# --------------------------------------------------------------------------- search bookkeeping


@dataclass
class Family:
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
class Variant:
    """A cheap (layout + memory + performance) evaluation that met the serving requirements."""

    parallel: ParallelSpec
    decode_parallel: ParallelSpec | None
    serving: ServingSpec
    concurrency: int
    requests_per_s: float
    output_tokens_per_s: float
    ttft_s: float
    tpot_s: float


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
            "lease_per_month": str(c.lease_per_month) if c.lease_per_month is not None else None,
            "annual_cost": str(c.annual_cost),
            "output_tokens_per_s": round(c.output_tokens_per_s, 3),
            "requests_per_s": round(c.requests_per_s, 5),
            "ttft_s": round(c.ttft_s, 4),
            "tpot_ms": round(c.tpot_ms, 3),
            "e2e_s": round(c.e2e_s, 3),
            "it_kw": round(c.it_kw, 2),
            "racks": c.racks,
            "saving_vs_api": str(c.saving_vs_api) if c.saving_vs_api is not None else None,
            "design_concurrency": c.design_concurrency,
            "design_output_tokens_per_s": round(c.design_output_tokens_per_s, 3),
        },
        "warnings": [{"code": code, "message_en": en, "message_zh": zh} for code, en, zh in c.warnings],
        "request": c.request_json,
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
        "price_on_request": [on_request_dict(o) for o in result.on_request],
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
