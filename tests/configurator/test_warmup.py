"""A web worker warms up before its first request (configurator/warmup.py, called by config/wsgi.py): the
default page's plan, with its advice, is in the plan cache when the first engineer opens the page, and a
worker that starts before the database is migrated still starts."""

from __future__ import annotations

import logging

import pytest
from django.db import DatabaseError

from configurator import warmup
from configurator.planning import plans, proofs
from configurator.port import plan_cache
from configurator.web import presets

pytestmark = pytest.mark.django_db


@pytest.fixture
def engineer_client(client, catalog, users):
    client.force_login(users["engineer"])
    return client


def test_the_first_page_after_the_warm_up_plans_nothing(engineer_client, monkeypatch):
    plan_cache.clear()
    warmup.warm_up()
    planned = []
    real = plans.plan
    for module in (plans, proofs):  # a request's own plans and its fixes' proofs
        monkeypatch.setattr(module, "plan", lambda request: planned.append(request) or real(request))
    response = engineer_client.get("/")
    assert response.status_code == 200
    assert planned == []  # the default configuration and its advice came from the warm-up


def test_a_worker_starts_before_the_database_is_there(monkeypatch, caplog):
    def unreadable(_scenario=None):
        raise DatabaseError("no such table: catalog_scenario")

    monkeypatch.setattr(presets, "preset_data", unreadable)
    with caplog.at_level(logging.INFO, logger="configurator.warmup"):
        warmup.warm_up()  # no exception
    assert "the catalog is not readable yet" in caplog.text
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
