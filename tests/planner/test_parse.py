"""Validation of planner requests: every problem names its field."""

import pytest

from configurator import planner
from configurator.io.requests import RequestError
from configurator.web.planner.services import DjangoPlannerCatalog

pytestmark = pytest.mark.django_db


def errors_of(data):
    with pytest.raises(RequestError) as info:
        planner.parse_query(data, DjangoPlannerCatalog())
    return info.value.errors


@pytest.mark.parametrize(
    "data, field, fragment",
    [
        ([], "request", "JSON object"),
        ({"scenario": "no-such-scenario"}, "scenario", "unknown scenario"),
        ({"model": "no-such-model"}, "model", "unknown model"),
        ({}, "model", "is required"),
        ({"model": "kimi-k3", "bogus": 1}, "bogus", "not a known field"),
        ({"model": "kimi-k3", "workload": {"nope": 1}}, "workload.nope", "not a known field"),
        ({"model": "kimi-k3", "constraints": {"max_capex": -5}}, "constraints.max_capex", "negative"),
        ({"model": "kimi-k3", "constraints": {"max_capex": "lots"}}, "constraints.max_capex", "number"),
        ({"model": "kimi-k3", "constraints": {"max_racks": 1.5}}, "constraints.max_racks", "whole number"),
        ({"model": "kimi-k3", "constraints": {"purchase": "rent"}}, "constraints.purchase", "buy or lease"),
        ({"model": "kimi-k3", "constraints": {"currency": "yuan"}}, "constraints.currency", "three-letter"),
        (
            {"model": "kimi-k3", "constraints": {"max_lease_per_month": 5}},
            "constraints.max_lease_per_month",
            "lease",
        ),
        (
            {"model": "kimi-k3", "constraints": {"domestic_only": "yes"}},
            "constraints.domestic_only",
            "true or false",
        ),
        ({"model": "kimi-k3", "workload": {"concurrency": 0}}, "workload.concurrency", "at least 1"),
        (
            {"model": "kimi-k3", "workload": {"concurrency": 4, "requests_per_s": 2}},
            "workload.requests_per_s",
            "not both",
        ),
        (
            {"model": "kimi-k3", "workload": {"input_tokens": 9000, "context": 8192}},
            "workload.context",
            "do not fit",
        ),
        ({"model": "kimi-k3", "workload": {"context": 2_000_000}}, "workload.context", "at most 1,048,576"),
        ({"model": "llama-3-1-8b", "workload": {"needs_vision": True}}, "workload.needs_vision", "no vision"),
        (
            {"model": "kimi-k3", "workload": {"availability_target": 2}},
            "workload.availability_target",
            "at most",
        ),
        ({"model": "kimi-k3", "workload": {"ttft_target_s": "NaN"}}, "workload.ttft_target_s", "finite"),
        ({"model": "kimi-k3", "options": {"max_nodes": 1000}}, "options.max_nodes", "at most 64"),
        (
            {"model": "kimi-k3", "options": {"servers": ["atlas-800-a9"]}},
            "options.servers[0]",
            "unknown server",
        ),
        (
            {"model": "kimi-k3", "options": {"sort": "speed"}},
            "options.sort",
            "cost_per_m, tco or design_capacity",
        ),
        ({"model": "kimi-k3", "site": "moon-base"}, "site", "unknown site"),
    ],
)
def test_bad_requests_name_the_field(seeded, data, field, fragment):
    errors = errors_of(data)
    assert field in errors, errors
    assert any(fragment in m for m in errors[field]), errors[field]


def test_a_scenario_prefills_the_workload_and_edits_win(seeded):
    q = planner.parse_query(
        {"scenario": "software-engineering-agent", "workload": {"concurrency": 100}}, DjangoPlannerCatalog()
    )
    # docs/domain.md §10 coding agents; the seeded scenario's figures, concurrency edited.
    assert (q.workload.input_tokens, q.workload.output_tokens, q.workload.context) == (24_576, 1_536, 133_120)
    assert q.workload.concurrency == 100
    assert q.model.slug == "kimi-k3"
    assert q.price_list == "cny-2026"


def test_a_request_rate_replaces_the_scenario_concurrency(seeded):
    q = planner.parse_query(
        {"scenario": "government-policy-qa", "workload": {"requests_per_s": 0.5}}, DjangoPlannerCatalog()
    )
    assert q.workload.concurrency is None and q.workload.requests_per_s == 0.5


def test_the_context_may_be_given_under_the_serving_fields_name(seeded):
    """The planner's workload.context is the plan request's serving.max_model_len: either name is taken."""
    catalog = DjangoPlannerCatalog()
    by_name = planner.parse_query({"model": "kimi-k3", "workload": {"max_model_len": 65536}}, catalog)
    assert by_name.workload.context == 65536
    assert "workload.max_model_len" in errors_of(
        {"model": "kimi-k3", "workload": {"max_model_len": 65536, "context": 65536}}
    )
    # Neither: each candidate's serving default (engine/defaults.py), not a planner constant.
    assert planner.parse_query({"model": "kimi-k3"}, catalog).workload.context is None
