"""A plan and its proven advice are planned once per request, catalog version, day and fit
(configurator/port/plan_cache.py); a catalog edit, another request or another fit plans again."""

from __future__ import annotations

import datetime as dt
import pickle
from decimal import Decimal

import pytest
from django.test import override_settings

from catalog.models import PriceItem
from configurator.engine import serving_model
from configurator.io import fixes
from configurator.planning import plans, proofs
from configurator.port import plan_cache

pytestmark = pytest.mark.django_db
REQUEST = {"model": "kimi-k3", "server": "atlas-800-a3", "topology": {"kind": "single", "nodes": 4}}
LOCMEM_PLANS = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    "plans": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "plans-test"},
}


@pytest.fixture
def counted(monkeypatch):
    """How many times the engine was asked for a plan: the request's own and each proof's."""
    calls = {"plan": 0, "proofs": 0}
    real_plan, real_fix_plan = plans.plan, fixes.plan

    def plan(request):
        calls["plan"] += 1
        return real_plan(request)

    def proof(request):
        calls["proofs"] += 1
        return real_fix_plan(request)

    monkeypatch.setattr(plans, "plan", plan)
    monkeypatch.setattr(proofs, "plan", plan)
    monkeypatch.setattr(fixes, "plan", proof)
    return calls


def test_the_same_request_is_planned_and_proven_once(catalog, counted):
    _, first = plans.plan_from_json(REQUEST)
    planned = dict(counted)
    assert planned["plan"] == 1
    _, again = plans.plan_from_json(dict(REQUEST))  # an equal request, another dict
    assert counted == planned  # neither the plan nor a proof ran again
    assert again is first


def test_another_request_or_day_plans_again(catalog, counted):
    plans.plan_from_json(REQUEST)
    plans.plan_from_json({**REQUEST, "topology": {"kind": "single", "nodes": 2}})
    plans.plan_from_json(REQUEST, today=dt.date.today() + dt.timedelta(days=1))
    assert counted["plan"] == 3


def test_a_catalog_edit_is_planned_with_the_new_price(catalog, counted):
    _, first = plans.plan_from_json(REQUEST)
    item = PriceItem.objects.get(kind="server", item_slug="atlas-800-a3")
    item.unit_price = item.unit_price + Decimal("100000")
    item.save()  # bumps the catalog version
    request, second = plans.plan_from_json(REQUEST)
    assert counted["plan"] == 2
    assert request.commercial.server_unit_price == item.unit_price
    assert second is not first


def test_a_plan_with_factors_of_its_own_is_not_cached(catalog, counted):
    with serving_model.using_calibration({}):
        plans.plan_from_json(REQUEST, advise=False)
        plans.plan_from_json(REQUEST, advise=False)
    assert counted["plan"] == 2


@override_settings(CACHES=LOCMEM_PLANS)
def test_another_worker_finds_the_plan_in_the_shared_cache(catalog, counted, monkeypatch):
    from django.core.cache import caches

    # Shared whatever its build took: the proofs another test left in their own cache can make an advised
    # plan quicker than the threshold (test_only_what_took_long_to_build_is_shared holds the threshold).
    monkeypatch.setattr(plan_cache, "SHARE_MIN_S", 0.0)
    caches["plans"].clear()
    _, first = plans.plan_from_json(REQUEST)
    plan_cache.clear()  # another process: its own LRU is empty
    before = plan_cache.stats()["shared_hits"]
    _, shared = plans.plan_from_json(REQUEST)
    assert counted["plan"] == 1
    assert plan_cache.stats()["shared_hits"] == before + 1
    assert shared is not first  # unpickled, equal in every figure
    assert pickle.dumps(shared.checks) == pickle.dumps(first.checks)
    assert shared.tco.figures.keys() == first.tco.figures.keys()


@override_settings(CACHES=LOCMEM_PLANS)
def test_a_shared_cache_that_fails_only_costs_the_plan(catalog, counted, monkeypatch):
    from django.core.cache import caches

    def down(*args, **kwargs):
        raise ConnectionError("redis down")

    monkeypatch.setattr(caches["plans"], "get", down)
    monkeypatch.setattr(plan_cache, "_down_until", [0.0])
    _, result = plans.plan_from_json(REQUEST)
    assert result.checks
    assert plan_cache._down_until[0] > 0  # left alone for a while: no later request waits on it
    assert plan_cache._shared() is None


def test_the_lru_keeps_its_bound(monkeypatch):
    monkeypatch.setattr(plan_cache, "LOCAL_MAX", 3)
    for i in range(5):
        assert plan_cache.get_or_build(f"k{i}", lambda i=i: i) == i
    assert plan_cache.stats()["entries"] == 3
    assert plan_cache.get_or_build("k4", lambda: "rebuilt") == 4  # the newest kept
    assert plan_cache.get_or_build("k0", lambda: "rebuilt") == "rebuilt"  # the oldest gone


@override_settings(CACHES=LOCMEM_PLANS)
def test_only_what_took_long_to_build_is_shared(monkeypatch):
    """A value quicker to build than to pickle, send and fetch stays in this process's LRU; a costly
    one (an advised plan, a search) goes to the shared tier too (plan_cache.SHARE_MIN_S)."""
    from django.core.cache import caches

    caches["plans"].clear()
    monkeypatch.setattr(plan_cache, "_down_until", [0.0])
    monkeypatch.setattr(plan_cache, "SHARE_MIN_S", 3600.0)  # nothing here takes an hour
    assert plan_cache.get_or_build("quick", lambda: "value") == "value"
    assert caches["plans"].get("quick") is None
    monkeypatch.setattr(plan_cache, "SHARE_MIN_S", 0.0)
    assert plan_cache.get_or_build("costly", lambda: "value") == "value"
    assert caches["plans"].get("costly") == "value"
    plan_cache.clear()
