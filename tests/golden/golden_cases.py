"""The seeded configurations whose plan JSON is kept in ``tests/golden/plans/`` (issue 20).

Shared by ``scripts/update_golden.py`` (writes the files) and ``test_golden.py`` (re-plans and
compares).  Each case is a plan request in the API format (docs/api.md) naming the seeded catalog's
rows: the topologies of docs/domain.md §4 and the platforms the catalog seeds (§3), and the five
scenario presets (§10) as the configurator page's form turns them into a request.  Every request
carries a fixed price-list date so the plan does not move with the calendar.
"""

from __future__ import annotations

from typing import Any

from configurator import reference

# The day the plans are made and the price list is looked up, and the seeded configurations by name:
# one list, in configurator/reference.py (which plans them from the seed files without a database).
PLAN_DATE = reference.PLAN_DATE
COMMERCIAL = reference.COMMERCIAL
TOPOLOGIES: dict[str, dict[str, Any]] = reference.CASES

# The scenario presets the catalog seeds (docs/domain.md §10): planned as the page plans them.
SCENARIOS = (
    "finance-research",
    "government-policy-qa",
    "software-engineering-agent",
    "multimodal-knowledge-base",
    "research-drug-discovery",
)


def topology_request(name: str) -> dict[str, Any]:
    return reference.case(name)


def scenario_request(slug: str) -> dict[str, Any]:
    """The request the configurator page plans for a fresh page with scenario ``slug`` chosen (needs the DB)."""
    from configurator.web import presets
    from configurator.web.forms import ConfiguratorForm

    form = ConfiguratorForm(presets.preset_data(slug))
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

    from configurator.engine.serialize import plan_to_dict
    from configurator.planning import plans

    _, result = plans.plan_from_json(request, today=PLAN_DATE)
    # Round-trip through JSON text: the file holds exactly this (tuples become lists, keys strings).
    return json.loads(json.dumps(plan_to_dict(result), ensure_ascii=False))
