"""Fixtures for the quote tests: the demo users and a hand-made plan.

The plan dicts follow ``configurator.engine.serialize.plan_to_dict`` and the
prices dict ``configurator.planning.quoting.plan_for_quote``.  Figures are the seed's
8 × Atlas 800 A3 purchase (S1: ≈ ¥24 M → ¥3 M per node, ¥2 M O&M per year,
lease ¥0.8–1.2 M per month for 8 nodes → ¥125,000 per node-month midpoint) plus
switch, optics and rack prices written here for these tests (a hand-made plan and price
set, so the BOM arithmetic is checked apart from the seeded catalog).
"""

from __future__ import annotations

import copy
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.utils import translation

from accounts.services import demo_users_create

SWITCH_COUNTS = {"lingqu-630-v1": 1, "roce-400ge-64": 1, "mgmt-1ge-48": 1}

RESULT = {
    "ok": True,
    "checks": [
        {
            "code": "memory.kv_headroom",
            "severity": "ok",
            "message": "KV cache fits.",
            "message_zh": "KV 缓存可容纳。",
        },
        {
            "code": "cooling.rack_exceeds_air_limit",
            "severity": "warning",
            "message": "Rack exceeds the air-cooling limit.",
            "message_zh": "机柜超出风冷上限。",
        },
    ],
    "layout": {"nodes": 8, "devices_per_node": 16},
    "network": {
        "switches": [
            {"slug": "lingqu-630-v1", "model": "LingQu 630 V1"},
            {"slug": "roce-400ge-64", "model": "RoCE 400GE 64-port"},
            {"slug": "mgmt-1ge-48", "model": "Management 1GE 48-port"},
        ],
        "switch_count": 3,
        "optics": 272,
        "cables": 136,
    },
    "racks": {"rack_count": 4},
    "tco": {
        "currency": "CNY",
        "horizon_years": 3,
        "nodes": 8,
        "rack_count": 4,
        "switch_counts": SWITCH_COUNTS,
        "optics_count": 272,
        "capex": {
            "servers": "24000000.00",
            "switches": "1815000.00",
            "optics": "1632000.00",
            "racks": "120000.00",
            "installation": "0.00",
            "subtotal": "27567000.00",
            "discount": "0.00",
            "total": "27567000.00",
        },
        "annual": {"om": "2000000.00", "software_support": "0.00", "lease_rent": "12000000.00"},
        "buy_total": "35964424.54",
        "lease_total": "38397424.54",
    },
}

PRICES = {
    "currency": "CNY",
    "usd_rate": "7.2",
    "server": {"sku": "atlas-800-a3", "unit_price": "3000000", "lease_per_month": "125000"},
    "switches": {"lingqu-630-v1": "1200000", "roce-400ge-64": "600000", "mgmt-1ge-48": "15000"},
    "optics_unit_price": "6000",
    "rack_unit_price": "30000",
    "installation": "0",
    "software_support_per_year": "0",
    "om_per_year": "2000000",
    "om_percent_of_capex": "0",
    "price_list": "cn-list-2026",
    "on_date": "2026-03-02",
}

REQUEST = {
    "scenario": "finance-research",
    # The scenario brings its workload; its 32 concurrent 34,816-token requests need more than this
    # 4 + 4 pair's KV cache once the K3 draft's layers are counted (28 at once), which this test is not
    # about: it states a load the pair carries.
    "workload": {"concurrency": 16},
    "model": "kimi-k3",
    "server": "atlas-800-a3",
    "topology": {"kind": "primary_standby", "nodes": 8},
    "commercial": {"price_list": "cn-list-2026"},
}

RESOLVED = {
    "model": {"slug": "kimi-k3", "name": "Kimi K3"},
    "server": {"slug": "atlas-800-a3", "name": "Atlas 800 A3"},
    "rack": {"slug": "rack-42u", "name": "42U rack"},
    "topology": {"kind": "primary_standby", "nodes": 8},
    "commercial": {"currency": "CNY", "server_unit_price": "3000000"},
}


def plan_kwargs(**overrides) -> dict:
    """Keyword arguments for ``quote_create_from_configuration`` (deep copies)."""
    kwargs = {
        "request_json": copy.deepcopy(REQUEST),
        "resolved_json": copy.deepcopy(RESOLVED),
        "result_json": copy.deepcopy(RESULT),
        "prices_json": copy.deepcopy(PRICES),
        "usd_rate": Decimal("7.2"),
        "currency": "CNY",
        "language": "zh-hans",
    }
    kwargs.update(overrides)
    return kwargs


@pytest.fixture(autouse=True)
def _english(client):
    # Messages are asserted in English; the Chinese wording is added separately.
    client.defaults["HTTP_ACCEPT_LANGUAGE"] = "en"
    with translation.override("en"):
        yield


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    # The demo users' passwords are hashed on creation; PBKDF2 would make
    # every test spend seconds there.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def users(db):
    """The demo users: engineer and manager (East China), engineer2 (North China), catalog admin."""
    demo_users_create()
    User = get_user_model()
    return {
        u.username: u
        for u in User.objects.filter(username__in=["engineer", "engineer2", "manager", "catalog"])
    }


@pytest.fixture
def make_user(users):
    """Another user with a role and a team: ``make_user("colleague", SALES_ENGINEER, "East China")``."""
    from django.contrib.auth.models import Group

    from accounts.models import Profile, Team

    def make(username: str, role: str, team: str | None):
        user = get_user_model().objects.create_user(username, password="not-used-in-tests")
        user.groups.add(Group.objects.get(name=role))
        Profile.objects.create(user=user, team=Team.objects.get_or_create(name=team)[0] if team else None)
        return user

    return make


@pytest.fixture
def engineer(users):
    return users["engineer"]


@pytest.fixture
def engineer2(users):
    return users["engineer2"]


@pytest.fixture
def manager(users):
    return users["manager"]


@pytest.fixture
def make_quote(engineer):
    """Create a quote through the service: ``make_quote(discount="0.05", by=user, customer="Bank")``."""
    from quotes.services.quotes import quote_create_from_configuration

    def make(*, by=None, customer="Shanghai Pudong Bank", discount="0", title="K3 on 8 × A3", **overrides):
        return quote_create_from_configuration(
            by=by or engineer, customer=customer, discount=discount, title=title, **plan_kwargs(**overrides)
        )

    return make


@pytest.fixture
def fake_planner(monkeypatch):
    """Stand in for ``configurator.planning.quoting.plan_for_quote``; records the requests it was given."""
    from quotes.services import planning

    calls = []

    def plan_for_quote(request_json):
        calls.append(copy.deepcopy(request_json))
        resolved = copy.deepcopy(RESOLVED)
        resolved["commercial"] = {**resolved["commercial"], **(request_json.get("commercial") or {})}
        resolved["commercial"].pop("price_list", None)
        result = copy.deepcopy(RESULT)
        discount = Decimal(str(resolved["commercial"].get("quote_discount", "0")))
        subtotal = Decimal(result["tco"]["capex"]["subtotal"])
        result["tco"]["capex"]["discount"] = str((subtotal * discount).quantize(Decimal("0.01")))
        result["tco"]["capex"]["total"] = str(subtotal - (subtotal * discount).quantize(Decimal("0.01")))
        return resolved, result, copy.deepcopy(PRICES), Decimal("7.2"), "CNY"

    plan_for_quote.calls = calls
    monkeypatch.setattr(planning, "_plan_for_quote", lambda: plan_for_quote)
    return plan_for_quote
