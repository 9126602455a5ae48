"""SeedCatalog (the seed files) and DjangoCatalog (the database after load_catalog) give the same specs
(issue 20): one conversion (configurator/port/specs.py) over the same records, for every seeded slug."""

from __future__ import annotations

import datetime as dt

import pytest

from catalog.seed import loader
from configurator import reference
from configurator.port import cache as catalog_cache
from configurator.port.catalog import DjangoCatalog
from configurator.port.seed import SeedCatalog

pytestmark = pytest.mark.django_db

SEED = loader.load()
DAY = reference.PLAN_DATE


def _slugs(kind: str) -> list[str]:
    return [r.slug for r in SEED.of(kind)]


@pytest.fixture
def catalogs(catalog):
    catalog_cache.clear()
    return SeedCatalog(), DjangoCatalog()


@pytest.mark.parametrize("slug", _slugs("llm_model"))
def test_models(catalogs, slug):
    seed, db = catalogs
    assert seed.model(slug) == db.model(slug) is not None


@pytest.mark.parametrize("slug", _slugs("checkpoint"))
def test_checkpoints(catalogs, slug):
    seed, db = catalogs
    assert seed.checkpoint(slug) == db.checkpoint(slug) is not None


@pytest.mark.parametrize("slug", _slugs("llm_model"))
def test_default_checkpoints(catalogs, slug):
    seed, db = catalogs
    for stack in ("ascend", "cuda"):
        assert seed.default_checkpoint(slug, stack) == db.default_checkpoint(slug, stack)


@pytest.mark.parametrize("slug", _slugs("server"))
def test_servers_and_their_commercial_terms(catalogs, slug):
    seed, db = catalogs
    server = seed.server(slug)
    assert server == db.server(slug) is not None
    for rack_slug in (None, *_slugs("rack")):
        rack = seed.rack(rack_slug) if rack_slug else None
        for nodes in (None, 1, 4, 16):
            for price_list, on_date in (("cny-2026", DAY), (None, DAY), (None, dt.date(2025, 6, 1))):
                kwargs = dict(
                    server=server,
                    price_list=price_list,
                    on_date=on_date,
                    currency=None,
                    nodes=nodes,
                    rack=rack,
                )
                assert seed.commercial(**kwargs) == db.commercial(**kwargs), (
                    rack_slug,
                    nodes,
                    price_list,
                    on_date,
                )


def test_an_unknown_price_list_is_refused_alike(catalogs):
    seed, db = catalogs
    server = seed.server("atlas-800-a3")
    kwargs = dict(server=server, price_list="nope", on_date=DAY, currency=None)
    with pytest.raises(LookupError) as from_seed:
        seed.commercial(**kwargs)
    with pytest.raises(LookupError) as from_db:
        db.commercial(**kwargs)
    assert str(from_seed.value) == str(from_db.value)


def test_switches_all_and_by_slug_in_the_same_order(catalogs):
    seed, db = catalogs
    assert seed.switches(None) == db.switches(None)
    for slug in _slugs("switch"):
        assert seed.switches([slug]) == db.switches([slug]) != ()
    assert seed.switches(["mgmt-1ge", "lingqu-630-v1"]) == db.switches(["mgmt-1ge", "lingqu-630-v1"])


@pytest.mark.parametrize("kind", ["rack", "site"])
def test_racks_and_sites(catalogs, kind):
    seed, db = catalogs
    for slug in _slugs(kind):
        assert getattr(seed, kind)(slug) == getattr(db, kind)(slug) is not None
    assert seed.default_rack() == db.default_rack()
    assert seed.default_site() == db.default_site()


def test_unknown_slugs_are_none_alike(catalogs):
    seed, db = catalogs
    for name in ("model", "server", "site", "rack", "checkpoint"):
        assert getattr(seed, name)("no-such-slug") is None is getattr(db, name)("no-such-slug")
