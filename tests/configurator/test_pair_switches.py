"""Switch sharing in a primary/standby pair is the engineer's choice (issue 17):
shared (the default, warned about) or separate, priced both ways."""

from __future__ import annotations

import pytest

from configurator.io.requests import RequestError
from configurator.planning import plans
from configurator.web import fixes, form_data

pytestmark = pytest.mark.django_db

PAIR = {
    "model": "kimi-k3",
    "server": "atlas-800-a3",
    "topology": {"kind": "primary_standby", "nodes": 8},
}


def _plan(pair_switches):
    request = {**PAIR, "topology": {**PAIR["topology"], "pair_switches": pair_switches}}
    return plans.plan_from_json(request)


def test_separate_switches_remove_the_warning_and_are_priced(catalog):
    _, shared = _plan("shared")
    _, separate = _plan("separate")
    codes_shared = [c.code for c in shared.checks]
    codes_separate = [c.code for c in separate.checks]
    assert "network.pair_shares_switch" in codes_shared
    assert "network.pair_shares_switch" not in codes_separate
    # Every parameter-plane switch serves one cluster only.
    plane = [s for s in separate.network.switches if s.role in ("scale_up", "scale_out")]
    assert plane and all(len(s.groups) == 1 for s in plane)
    assert {s.groups[0] for s in plane} == {"cluster-a", "cluster-b"}
    # More (or as many) switches, and the capital cost follows them.
    assert len(separate.network.switches) >= len(shared.network.switches)
    assert separate.tco.capex.total >= shared.tco.capex.total
    if len(separate.network.switches) > len(shared.network.switches):
        assert separate.tco.capex.total > shared.tco.capex.total


def test_the_page_offers_separate_switches_as_a_proven_fix(catalog):
    request_json = {**PAIR, "topology": {**PAIR["topology"], "pair_switches": "shared"}}
    request_json = form_data.form_request(request_json)
    plan_request, result = plans.plan_from_json(request_json)
    proven = fixes.proven_fixes(request_json, plan_request, result)
    index = next(i for i, c in enumerate(result.checks) if c.code == "network.pair_shares_switch")
    assert proven[index]["topology"]["pair_switches"] == "separate"


def test_an_unknown_choice_is_a_field_error(catalog):
    with pytest.raises(RequestError) as exc:
        _plan("sometimes")
    assert "topology.pair_switches" in exc.value.errors
