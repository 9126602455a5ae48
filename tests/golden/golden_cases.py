"""The seeded configurations whose plan JSON is kept in ``tests/golden/plans/`` (issue 20).

Shared by ``scripts/update_golden.py`` (writes the files) and ``test_golden.py`` (re-plans and
compares).  Each case is a plan request in the API format (docs/api.md) naming the seeded catalog's
rows: the topologies of docs/domain.md §4 and the platforms the catalog seeds (§3), and the five
scenario presets (§10) as the configurator page's form turns them into a request.  Every request
carries a fixed price-list date so the plan does not move with the calendar.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

# The day the plans are made and the price list is looked up (the seeded list runs from 2026-01-01).
PLAN_DATE = dt.date(2026, 11, 30)
COMMERCIAL = {"price_list": "cny-2026", "date": PLAN_DATE.isoformat()}

# name → request.  Only what the configuration is; every other field takes its default.
TOPOLOGIES: dict[str, dict[str, Any]] = {
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

# The scenario presets the catalog seeds (docs/domain.md §10): planned as the page plans them.
SCENARIOS = (
    "finance-research",
    "government-policy-qa",
    "software-engineering-agent",
    "multimodal-knowledge-base",
    "research-drug-discovery",
)


def topology_request(name: str) -> dict[str, Any]:
    request = dict(TOPOLOGIES[name])
    request["commercial"] = {**COMMERCIAL, **request.get("commercial", {})}
    return request


def scenario_request(slug: str) -> dict[str, Any]:
    """The request the configurator page plans for a fresh page with scenario ``slug`` chosen (needs the DB)."""
    from configurator import services
    from configurator.forms import ConfiguratorForm

    form = ConfiguratorForm(services.preset_data(slug))
    if not form.is_valid():
        raise ValueError(f"the seeded scenario {slug} does not make a valid form: {form.errors.as_json()}")
    request = form.to_request()
    request["commercial"] = {**request.get("commercial", {}), **COMMERCIAL}
    return request


def all_requests() -> dict[str, dict[str, Any]]:
    """Every golden case: name → request (needs the seeded catalog in the database)."""
    cases = {name: topology_request(name) for name in TOPOLOGIES}
    cases.update({f"scenario-{slug}": scenario_request(slug) for slug in SCENARIOS})
    return cases


def plan_json(request: dict[str, Any]) -> dict[str, Any]:
    """The plan's public JSON (``plan_to_dict``) for ``request``, planned on :data:`PLAN_DATE`."""
    import json

    from configurator import services
    from configurator.engine.serialize import plan_to_dict

    _, result = services.plan_from_json(request, today=PLAN_DATE)
    # Round-trip through JSON text: the file holds exactly this (tuples become lists, keys strings).
    return json.loads(json.dumps(plan_to_dict(result), ensure_ascii=False))
