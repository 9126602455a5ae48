"""The seeded catalog as engine inputs, without a database: what tests, benchmarks and samples plan with.

Everything here comes from the seed files (``catalog/seed/*.yaml``, read by ``catalog.seed.loader``)
through the same conversion the configurator uses on the database (``configurator.port.specs``), so a
plan made here is the plan ``POST /api/plan`` makes after ``manage.py load_catalog`` (the golden
plans of ``tests/golden`` check it).  No Django import.

Requests — the API's JSON format (docs/api.md), resolved by ``configurator.io.requests.resolve``
against :class:`~configurator.port.seed.SeedCatalog`:

    >>> from configurator import reference
    >>> from configurator.engine.plan import plan
    >>> req = reference.request(reference.CASES["a3-4-single"])      # 4 × A3, DP4 / TP16 / EP64
    >>> req.server.slug, req.topology.nodes, req.topology.parallel.tp
    ('atlas-800-a3', 4, 16)
    >>> result = plan(req)
    >>> req = reference.request({**reference.CASES["a3-4-single"], "serving": {"max_num_seqs": 32}})
    >>> req = reference.request(reference.case("a3-16-8p8d"))           # with the golden price-list date

``CASES`` are the seeded configurations (docs/domain.md §3-4) by name; ``case(name)`` adds the fixed
price list and date the golden plans use.  ``request(json, today=PLAN_DATE)`` takes any request
dict; an invalid one raises ``configurator.io.requests.RequestError`` naming the field.

Specs — one seeded entry as the engine sees it (``KeyError`` for an unknown slug):

    >>> reference.model("kimi-k3").expert_weight_bytes               # ModelSpec
    1446456066048
    >>> reference.server("atlas-800-a3").max_input_kw                # ServerSpec (with accelerator, NICs)
    16.2
    >>> reference.accelerator("ascend-910c").tflops["bf16"]          # AcceleratorSpec
    280.0
    >>> reference.checkpoint("kimi-k3-hf-mxfp4").weight_format       # CheckpointSpec
    'mxfp4'
    >>> [s.slug for s in reference.switches("lingqu-630-v1", "mgmt-1ge")]  # SwitchSpecs
    ['lingqu-630-v1', 'mgmt-1ge']
    >>> reference.switch("inspur-x400").ports
    64
    >>> reference.site().slug, reference.rack().slug                 # the defaults a request gets
    ('cn-default', 'rack-42u-air')
    >>> reference.commercial("atlas-800-a3", nodes=4).server_unit_price  # the seeded price list's terms
    Decimal('3000000.00')

To vary an entry, ``dataclasses.replace`` the spec (``replace(reference.server("nf5868g8"),
max_input_kw=20.0)``) or give the request an inline object (docs/api.md).
"""

from __future__ import annotations

import datetime as dt
from functools import cache
from typing import Any

from .engine import types as et
from .io.requests import resolve
from .port.seed import SeedCatalog

# The day plans are made and the price list looked up (the seeded list runs from 2026-01-01).
PLAN_DATE = dt.date(2026, 11, 30)
PRICE_LIST = "cny-2026"
COMMERCIAL = {"price_list": PRICE_LIST, "date": PLAN_DATE.isoformat()}

# The seeded configurations by name: only what the configuration is; every other field takes the
# API's default.  tests/golden keeps the plan of each (tests/golden/plans/<name>.json).
CASES: dict[str, dict[str, Any]] = {
    # docs/domain.md §4 item 1: the validated minimum, DP4 / TP16 / EP64.
    "a3-4-single": {"model": "kimi-k3", "server": "atlas-800-a3", "topology": {"kind": "single", "nodes": 4}},
    # §4 item 2: two 4-node clusters, A serves and B is hot standby.
    "a3-8-primary-standby": {
        "model": "kimi-k3",
        "server": "atlas-800-a3",
        "topology": {"kind": "primary_standby", "nodes": 8},
    },
    # §4 item 2: two clusters serving different tenants.
    "a3-8-tenant-pair": {
        "model": "kimi-k3",
        "server": "atlas-800-a3",
        "topology": {"kind": "tenant_pair", "nodes": 8},
    },
    # §4 item 3: 8 prefill + 8 decode nodes.
    "a3-16-8p8d": {
        "model": "kimi-k3",
        "server": "atlas-800-a3",
        "topology": {"kind": "disaggregated", "nodes": 16, "prefill_nodes": 8, "decode_nodes": 8},
    },
    # §4 item 5: 8 × A2, language model only, with the ModelSlim W4A8 checkpoint vLLM-Ascend loads.
    "a2-8-text-only-modelslim": {
        "model": "kimi-k3",
        "server": "atlas-800-a2",
        "checkpoint": "kimi-k3-modelslim-w4a8",
        "topology": {"kind": "single", "nodes": 8},
        "serving": {"language_model_only": True},
        "workload": {"needs_vision": False},
    },
    # [S2] (docs/domain.md §3): two Inspur NF5868G8 with an X400 switch.
    "nf5868g8-2-single": {
        "model": "kimi-k3",
        "server": "nf5868g8",
        "topology": {"kind": "single", "nodes": 2},
    },
    # docs/domain.md §3: two HGX H200 8-GPU servers.
    "hgx-h200-2-single": {
        "model": "kimi-k3",
        "server": "hgx-h200-8gpu",
        "topology": {"kind": "single", "nodes": 2},
    },
}


@cache
def seed_catalog() -> SeedCatalog:
    """The seed files' catalog (read once per process)."""
    return SeedCatalog()


def case(name: str) -> dict[str, Any]:
    """The request of ``CASES[name]`` with the seeded price list and :data:`PLAN_DATE` named (a new dict)."""
    request = dict(CASES[name])
    request["commercial"] = {**COMMERCIAL, **request.get("commercial", {})}
    return request


def request(data: dict[str, Any], *, today: dt.date = PLAN_DATE) -> et.PlanRequest:
    """``data`` (the API's request JSON) resolved against the seed: what ``POST /api/plan`` resolves
    against the loaded catalog.  Raises ``RequestError`` for an invalid request."""
    return resolve(data, seed_catalog(), today=today)


def advised_plan(data: dict[str, Any], *, today: dt.date = PLAN_DATE) -> tuple[et.PlanRequest, et.PlanResult]:
    """``data`` planned as ``POST /api/plan`` plans it: resolved, planned, every fix proven
    (``configurator/io/fixes.py``).  Raises ``RequestError`` for an invalid request."""
    from .engine.plan import plan
    from .io.fixes import advised

    req = request(data, today=today)
    return req, advised(data, req, plan(req), lambda d: request(d, today=today))


def _found(value: Any, kind: str, slug: str | None) -> Any:
    if value is None:
        raise KeyError(f"no seeded {kind} {slug!r}")
    return value


def model(slug: str) -> et.ModelSpec:
    return _found(seed_catalog().model(slug), "LLM", slug)


def checkpoint(slug: str) -> et.CheckpointSpec:
    found = seed_catalog().checkpoint(slug)
    return _found(found, "checkpoint", slug)[0]


def accelerator(slug: str) -> et.AcceleratorSpec:
    return _found(seed_catalog().accelerator(slug), "accelerator", slug)


def server(slug: str) -> et.ServerSpec:
    return _found(seed_catalog().server(slug), "server", slug)


def switch(slug: str) -> et.SwitchSpec:
    found = seed_catalog().switches([slug])
    return _found(found[0] if found else None, "switch", slug)


def switches(*slugs: str) -> tuple[et.SwitchSpec, ...]:
    """The named switches in the catalog's order (all of them when no slug is given)."""
    found = seed_catalog().switches(list(slugs) if slugs else None)
    missing = sorted(set(slugs) - {s.slug for s in found})
    if missing:
        raise KeyError(f"no seeded switch {', '.join(missing)}")
    return found


def site(slug: str | None = None) -> et.SiteSpec:
    """The seeded site ``slug`` (default: the default site a request without ``site`` gets)."""
    catalog = seed_catalog()
    return _found(catalog.site(slug) if slug else catalog.default_site(), "site", slug)


def rack(slug: str | None = None) -> et.RackSpec:
    """The seeded rack type ``slug`` (default: the default rack a request without ``rack`` gets)."""
    catalog = seed_catalog()
    return _found(catalog.rack(slug) if slug else catalog.default_rack(), "rack", slug)


def commercial(
    server_slug: str = "atlas-800-a3",
    *,
    nodes: int | None = None,
    price_list: str | None = PRICE_LIST,
    on_date: dt.date = PLAN_DATE,
    rack_slug: str | None = None,
) -> et.CommercialSpec:
    """The seeded price list's terms for ``nodes`` of ``server_slug`` (what a request gets)."""
    return seed_catalog().commercial(
        server=server(server_slug),
        price_list=price_list,
        on_date=on_date,
        currency=None,
        nodes=nodes,
        rack=rack(rack_slug),
    )
