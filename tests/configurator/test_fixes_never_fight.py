"""Advice as one consistent set: following the fixes a plan offers never fights.

An engineer on the seeded 16 × A3 8P8D plan could press "use the recommended serving settings"
(max_num_seqs 35: 277 served at once), be offered by the memory check max_num_seqs 5 (40 served at
once), and then the recommendation again — a loop, with the page still selling 277. Here every fix the
API offers is applied (as a client applies it: docs/api.md), round after round up to six rounds, on the
plans the daily-use report named, and at every step:

* no applied fix leaves the settings serving fewer requests at once than the design capacity the plan
  sells, unless they served that few before the fix already (the fix did not cause it);
* no fix that was applied on the way is offered again, and no fix offers to set a field back to a
  value the path already left.
"""

from __future__ import annotations

import json

import pytest

from tests.configurator.test_proven_advice import _apply, _post
from tests.golden.golden_cases import all_requests

pytestmark = pytest.mark.django_db

ROUNDS = 6
MAX_PLANS = 40  # a bound on the walk; the seeded plans reach far fewer distinct requests


@pytest.fixture
def api(client, catalog, users):
    client.force_login(users["engineer"])
    return client


def _served_and_sold(body) -> tuple[int, int]:
    figures = body["figures"]
    served = int(figures["performance.capacity_concurrency"]["value"])
    design = figures.get("performance.design.concurrency")
    return served, int(design["value"]) if design else served


def _offered(body) -> list[dict]:
    return [c["fix"] for c in body["checks"] if c.get("fix")]


@pytest.mark.parametrize("name", ["a3-16-8p8d", "a3-8-primary-standby"])
def test_following_every_fix_never_undoes_one_or_sells_more_than_is_served(api, name):
    start = all_requests()[name]
    # Each state: the request, the fixes applied on the way there, and each path's earlier values.
    frontier = [(start, [], {})]
    seen = {json.dumps(start, sort_keys=True)}
    planned = 0
    for _round in range(ROUNDS):
        following = []
        for request, applied, history in frontier:
            body = _post(api, request)
            planned += 1
            served_before, _sold_before = _served_and_sold(body)
            for fix in _offered(body):
                assert fix not in applied, (name, "offered again after it was applied", fix, applied)
                for path, value in fix.items():
                    assert value not in history.get(path, ()), (
                        name,
                        "sets a field back",
                        path,
                        value,
                        applied,
                    )
                after_request = _apply(request, fix)
                key = json.dumps(after_request, sort_keys=True)
                if key in seen or planned >= MAX_PLANS:
                    continue
                seen.add(key)
                after = _post(api, after_request)
                planned += 1
                served, sold = _served_and_sold(after)
                assert served >= sold or served >= served_before, (
                    name,
                    fix,
                    f"serves {served} at once after the fix (was {served_before}) but sells {sold}",
                )
                earlier = {p: [*history.get(p, ()), _value_at(request, p)] for p in fix}
                following.append((after_request, [*applied, fix], {**history, **earlier}))
        frontier = following
        if not frontier:
            break
    assert planned > 1, "the walk applied no fix: the plan offered none"


def _value_at(request: dict, path: str):
    node = request
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node
