"""Resolved catalog entries are cached, and a catalog edit is seen by the next plan."""

from decimal import Decimal

import pytest

from catalog.models import PriceItem, ServerModel
from configurator.planning.plans import plan_from_json
from configurator.port import cache as catalog_cache

pytestmark = pytest.mark.django_db
REQUEST = {"model": "kimi-k3", "server": "atlas-800-a3", "topology": {"kind": "single", "nodes": 4}}


def test_a_price_edit_reaches_the_next_plan(catalog):
    first, _ = plan_from_json(REQUEST)
    item = PriceItem.objects.get(kind="server", item_slug="atlas-800-a3")
    item.unit_price = item.unit_price + Decimal("100000")
    item.save()
    second, _ = plan_from_json(REQUEST)
    assert second.commercial.server_unit_price == first.commercial.server_unit_price + Decimal("100000")


def test_a_hardware_edit_reaches_the_next_plan(catalog):
    first, _ = plan_from_json(REQUEST)
    server = ServerModel.objects.get(slug="atlas-800-a3")
    server.max_input_kw = Decimal("17.0")
    server.save()
    second, _ = plan_from_json(REQUEST)
    assert first.server.max_input_kw == pytest.approx(16.2)
    assert second.server.max_input_kw == pytest.approx(17.0)


def test_unchanged_catalog_is_served_from_memory(catalog, django_assert_max_num_queries):
    plan_from_json(REQUEST)  # fills the cache
    # One query reads the catalog version; nothing else touches the catalog tables.
    with django_assert_max_num_queries(1):
        plan_from_json(REQUEST)


def test_versions_rolled_back_by_another_transaction_do_not_serve_stale_entries(catalog):
    version = catalog_cache.current_version()
    catalog_cache.cached(version + 1, ("model", "kimi-k3"), lambda: "stale")
    spec, _ = plan_from_json(REQUEST)
    assert spec.model.name != "stale"
