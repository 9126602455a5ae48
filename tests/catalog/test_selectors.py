"""Selectors: the price in force on a quote's date, scenarios, defaults."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from catalog import selectors
from catalog.models import PriceItem, PriceList, RackType, Scenario, SiteProfile

pytestmark = pytest.mark.django_db


@pytest.fixture
def two_lists(empty_catalog):
    old = PriceList.objects.create(
        slug="cny-2025",
        name="CNY 2025",
        currency="CNY",
        effective_from=dt.date(2025, 1, 1),
        effective_to=dt.date(2025, 12, 31),
        usd_rate=Decimal("7.1"),
    )
    new = PriceList.objects.create(
        slug="cny-2026",
        name="CNY 2026",
        currency="CNY",
        effective_from=dt.date(2026, 1, 1),
        usd_rate=Decimal("7.2"),
    )
    usd = PriceList.objects.create(
        slug="usd-2025", name="USD", currency="USD", effective_from=dt.date(2025, 1, 1), usd_rate=Decimal("1")
    )
    PriceItem.objects.create(
        price_list=old, sku="SRV-A3", kind="server", item_slug="atlas-800-a3", unit_price=Decimal("3200000")
    )
    PriceItem.objects.create(
        price_list=new, sku="SRV-A3", kind="server", item_slug="atlas-800-a3", unit_price=Decimal("3000000")
    )
    PriceItem.objects.create(
        price_list=usd, sku="SRV-A3", kind="server", item_slug="atlas-800-a3", unit_price=Decimal("420000")
    )
    return old, new, usd


def test_price_for_returns_the_price_in_force_on_the_date(two_lists):
    old, new, _ = two_lists
    assert selectors.price_for("SRV-A3", dt.date(2025, 6, 1)).unit_price == Decimal("3200000")
    assert selectors.price_for("SRV-A3", dt.date(2025, 12, 31)).price_list == old  # the end date is inclusive
    assert selectors.price_for("SRV-A3", dt.date(2026, 1, 1)).price_list == new
    assert selectors.price_for("SRV-A3", dt.date(2030, 1, 1)).unit_price == Decimal("3000000")  # open-ended
    assert selectors.price_for("SRV-A3", dt.date(2024, 12, 31)) is None  # before any list
    assert selectors.price_for("NOPE", dt.date(2026, 1, 1)) is None
    assert selectors.price_for("SRV-A3", dt.date(2025, 6, 1), currency="USD").unit_price == Decimal("420000")


def test_price_list_in_force(two_lists):
    old, new, usd = two_lists
    assert selectors.price_list_in_force("CNY", dt.date(2025, 3, 3)) == old
    assert selectors.price_list_in_force(currency="CNY", on_date=dt.date(2026, 3, 3)) == new
    assert selectors.price_list_in_force("USD", dt.date(2026, 3, 3)) == usd
    assert selectors.price_list_in_force("EUR", dt.date(2026, 3, 3)) is None


def test_price_for_item_and_snapshot(two_lists):
    _, new, _ = two_lists
    item = selectors.price_for_item("server", "atlas-800-a3", dt.date(2026, 2, 1))
    assert item.unit_price == Decimal("3000000")
    snap = selectors.price_snapshot(new)
    assert (
        snap[0]["sku"] == "SRV-A3" and snap[0]["unit_price"] == "3000000.00" and snap[0]["currency"] == "CNY"
    )
    assert snap[0]["effective_date"] == "2026-01-01"


def test_seeded_price_in_force_today(seeded):
    assert selectors.price_for("SRV-ATLAS-800-A3", dt.date(2026, 11, 30)).unit_price == Decimal("3000000")


def test_active_scenarios_in_order(seeded):
    slugs = list(selectors.active_scenarios().values_list("slug", flat=True))
    assert slugs[0] == "finance-research" and len(slugs) == 5
    Scenario.objects.filter(slug="finance-research").update(is_active=False)
    assert "finance-research" not in selectors.active_scenarios().values_list("slug", flat=True)
    assert selectors.scenario_by_slug("software-engineering-agent").recommended_nodes == 16


def test_defaults(seeded):
    assert selectors.default_site().slug == "cn-default"
    assert selectors.default_rack().slug == "rack-42u-air"
    SiteProfile.objects.update(is_default=False)
    RackType.objects.update(is_default=False)
    assert selectors.default_site() is not None and selectors.default_rack() is not None


@pytest.mark.parametrize("slug", ["\x00", "kimi-k3\x00", "a b", "../x", "", None, 7])
def test_a_lookup_by_something_no_slug_can_be_finds_nothing_without_asking_the_database(
    empty_catalog, django_assert_num_queries, slug
):
    # PostgreSQL refuses text with a NUL byte (psycopg DataError → a 500 on the configurator's scenario
    # field, found by tests/faults/test_hostile_form_input.py in .ci/run's PostgreSQL pass); SQLite finds
    # no row.  A SlugField holds letters, digits, "-" and "_" only, so anything else names no row.
    with django_assert_num_queries(0):
        for lookup in (
            selectors.scenario_row,
            selectors.scenario_by_slug,
            selectors.llm_model_by_slug,
            selectors.server_by_slug,
            selectors.checkpoint_by_slug,
            selectors.site_by_slug,
            selectors.rack_by_slug,
            selectors.price_list_by_slug,
        ):
            assert lookup(slug) is None
        assert list(selectors.checkpoints_of(slug)) == []
