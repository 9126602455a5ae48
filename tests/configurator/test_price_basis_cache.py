"""The page's price basis ("Prices from the price list … valid from …") is worked out once per catalog version,
currency, named list, day, language and overrides (configurator/planning/prices.py ``price_basis``): the next update
reads no price list, and a price list saved in the admin (a new catalog version) is read again."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import translation

from catalog.selectors import price_list_in_force
from configurator.planning.plans import resolve_request
from configurator.planning.prices import price_basis

pytestmark = pytest.mark.django_db
REQUEST = {"model": "kimi-k3", "server": "atlas-800-a3", "topology": {"kind": "single", "nodes": 4}}


def test_the_price_basis_is_read_once_and_again_after_a_catalog_save(catalog):
    resolved = resolve_request(REQUEST)
    in_force = price_list_in_force("CNY")
    with translation.override("en"):
        first = price_basis(REQUEST, resolved)
        assert f"“{in_force.name}”" in first
        with CaptureQueriesContext(connection) as queries:
            assert price_basis(REQUEST, resolved) == first
        assert not [q for q in queries.captured_queries if "pricelist" in q["sql"].lower()]
        in_force.name = "Framework agreement 2027"
        in_force.save()  # the admin's save: a new catalog version
        assert "“Framework agreement 2027”" in price_basis(REQUEST, resolved)
        overridden = {**REQUEST, "commercial": {"server_unit_price": "1"}}
        assert "Overridden by the engineer: server price." in price_basis(
            overridden, resolve_request(overridden)
        )
    with translation.override("zh-hans"):
        chinese = price_basis(REQUEST, resolved)  # the same key in another language: its own text
    assert chinese != first and "价目表" in chinese


def test_a_currency_no_price_list_is_in_is_said_and_not_kept(catalog):
    """The currency is free text in a request: its commercial terms and price basis, for a currency no list
    is in, are worked out each time and kept nowhere, so posting many such currencies cannot grow the
    process's catalog cache (configurator/port/catalog.py ``price_lists``)."""
    from configurator.port import cache as catalog_cache

    request = {**REQUEST, "commercial": {"currency": "ZZQ"}}
    resolved = resolve_request(request)
    with translation.override("en"):
        before = len(catalog_cache._state["entries"])
        text = price_basis(request, resolved)
        assert "No price list in force" in text and "cannot be saved as a quote in ZZQ" in text
        assert price_basis(request, resolved) == text
    assert not [k for k in catalog_cache._state["entries"] if "ZZQ" in k]
    assert len(catalog_cache._state["entries"]) <= before + 1  # at most the catalog's list of price lists
