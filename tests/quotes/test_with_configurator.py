"""Quotes against the real configurator: plan_for_quote and the seeded catalog.

These check the seam between the two apps: the BOM adds up to the capex the
engine priced, and the frozen inline request replans to the same figures.
"""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from django.core.management import call_command
from django.urls import reverse

from quotes.bom import line_total
from quotes.models import Quote
from quotes.services.planning import configuration_plan
from quotes.statuses import CAPEX_CATEGORIES

plan_for_quote = pytest.importorskip("configurator.planning.quoting").plan_for_quote

REQUEST = {
    "model": "kimi-k3",
    "server": "atlas-800-a3",
    "topology": {"kind": "primary_standby", "nodes": 8},
    "scenario": "finance-research",
    # The scenario brings its workload; its 32 concurrent 34,816-token requests need more than this
    # 4 + 4 pair's KV cache once the K3 draft's layers are counted (28 at once), which this test is not
    # about: it states a load the pair carries.
    "workload": {"concurrency": 16},
}


@pytest.fixture
def catalog(db):
    call_command("load_catalog", verbosity=0)


@pytest.mark.django_db
def test_quote_from_the_real_planner_matches_the_engines_capex(client, users, catalog):
    client.force_login(users["engineer"])
    response = client.post(
        reverse("quotes:create"),
        {"request_json": json.dumps(REQUEST), "customer": "Shanghai Pudong Bank", "discount": "5%"},
    )
    assert response.status_code == 302, response.content.decode()[:3000]
    revision = Quote.objects.get().revisions.get()
    capex = revision.result_json["tco"]["capex"]
    lines = list(revision.lines.all())
    capex_lines = sum(line_total(x.quantity, x.unit_price) for x in lines if x.category in CAPEX_CATEGORIES)
    # The BOM prices the same counts at the same prices as the engine's TCO.
    assert capex_lines == Decimal(capex["subtotal"])
    assert revision.capex_total == Decimal(capex["total"])
    # The engine's 5 % capex discount and ours agree to the cent.
    assert Decimal(capex["discount"]) == (capex_lines * Decimal("0.05")).quantize(Decimal("0.01"))
    assert revision.resolved_json["commercial"]["quote_discount"] in ("0.05", 0.05)
    assert revision.tco_buy_total == Decimal(revision.result_json["tco"]["buy_total"])
    # The total is stored with its horizon (issue 16: tco_buy_3y once held a 5-year figure).
    assert revision.tco_horizon_years == revision.result_json["tco"]["horizon_years"] == 3
    assert next(x for x in lines if x.category == "server").quantity == 8


@pytest.mark.django_db
def test_the_frozen_inline_request_replans_identically(users, catalog):
    plan = configuration_plan(REQUEST)
    replanned = configuration_plan(plan.resolved_json)
    assert replanned.result_json["tco"] == plan.result_json["tco"]
    assert replanned.prices_json["server"] == plan.prices_json["server"]
