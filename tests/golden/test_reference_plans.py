"""The seed files plan like the database (issue 20): every golden plan, re-planned without a database
through ``configurator.reference`` (the seed files → SeedCatalog → the API's resolve and advice), is the golden
plan, compared as ``test_golden`` compares (only formula wording and newly named inputs forgiven)."""

from __future__ import annotations

import json

import pytest

from configurator import reference
from configurator.engine.serialize import plan_to_dict
from tests.golden import golden_cases
from tests.golden.test_golden import FILES, _differences, _intended


def test_the_topology_cases_are_the_reference_cases():
    assert golden_cases.TOPOLOGIES is reference.CASES
    for name in reference.CASES:
        path = next(p for p in FILES if p.stem == name)
        assert json.loads(path.read_text(encoding="utf-8"))["request"] == reference.case(name)


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_the_seed_files_plan_the_golden_plan(path):
    recorded = json.loads(path.read_text(encoding="utf-8"))
    # As the API plans it: every fix proven (configurator/io/fixes.py), which the golden plan records.
    _, result = reference.advised_plan(recorded["request"], today=reference.PLAN_DATE)
    planned = json.loads(json.dumps(plan_to_dict(result), ensure_ascii=False))
    diffs = [d for d in _differences(_without_catalog_search(recorded["plan"]), planned) if not _intended(d)]
    shown = "\n".join(diffs[:40]) + (f"\n… and {len(diffs) - 40} more" if len(diffs) > 40 else "")
    assert not diffs, f"{path.name}: the seed files plan differently ({len(diffs)} differences):\n{shown}"


def _without_catalog_search(plan: dict) -> dict:
    """The golden plan without the catalog's answer to a target out of reach: that search is the
    auto-planner's over the database catalog (configurator/catalog_alternative.py, run by the API's
    ``services.plan_from_json``); the seed files have no planner catalog, so ``reference`` leaves the
    statement at what this hardware achieves."""
    plan = json.loads(json.dumps(plan))
    for check in plan.get("checks") or []:
        figures = check.get("figures") or {}
        if "catalog_alternative" not in figures:
            continue
        del figures["catalog_alternative"]
        for key, cut in (
            ("message", " The smallest deployment"),
            ("message", " No deployment in the catalog"),
        ):
            if cut in check.get(key, ""):
                check[key] = check[key].split(cut)[0]
        if "目录中" in check.get("message_zh", ""):
            check["message_zh"] = check["message_zh"].split("目录中")[0]
    return plan
