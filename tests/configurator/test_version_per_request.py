"""The catalog version is read once per web request, and a plan's results context once per plan.

A configurator update asked ``port.cache.current_version()`` four times (the form's choices, the
catalog port, the presets, the price basis): four queries of the catalog stamp a request, about a
seventh of an update's CPU on SQLite.  ``port.cache.VersionPerRequest`` keeps the first reading for
the rest of the request; a catalog save in the request forgets it; outside a request nothing is kept.
The page's results context (the plan serialised, its charts drawn) is built once per plan object and
language (``presentation._results_context``); nothing that renders it may change it.
"""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from catalog.models import ServerModel
from configurator.engine.serialize import plan_to_dict
from configurator.port import cache as catalog_cache
from configurator.web import presentation
from configurator.web.presets import preset_data

pytestmark = pytest.mark.django_db
STAMP = "configurator_catalogstamp"


def _stamp_reads(queries) -> int:
    return sum(1 for q in queries if STAMP in q["sql"] and q["sql"].lstrip().upper().startswith("SELECT"))


def test_an_update_reads_the_catalog_version_once(catalog, client, users):
    client.force_login(users["engineer"])
    data = preset_data(None)
    client.post("/configurator/update", data, HTTP_HX_REQUEST="true")  # warm: plan cached
    with CaptureQueriesContext(connection) as queries:
        response = client.post("/configurator/update", data, HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    assert _stamp_reads(queries.captured_queries) == 1


def test_outside_a_request_every_call_reads_the_stamp(catalog):
    with CaptureQueriesContext(connection) as queries:
        first = catalog_cache.current_version()
        second = catalog_cache.current_version()
    assert first == second
    assert _stamp_reads(queries.captured_queries) == 2


def test_a_catalog_save_in_the_request_is_seen_by_what_follows_it(catalog):
    seen: list[int] = []

    def view(request):
        seen.append(catalog_cache.current_version())
        seen.append(catalog_cache.current_version())  # from the request's memory
        server = ServerModel.objects.get(slug="atlas-800-a3")
        server.save()  # bumps the version (ConfiguratorConfig.ready wires the signal)
        seen.append(catalog_cache.current_version())
        return None

    catalog_cache.VersionPerRequest(view)(object())
    assert seen[0] == seen[1]
    assert seen[2] > seen[0]  # a save may bump more than once (its history row is a catalog row too)
    assert seen[2] == catalog_cache.current_version()  # what the stamp holds, read outside the request


def test_the_same_form_renders_the_same_results_from_the_shared_context(catalog, client, users):
    client.force_login(users["engineer"])
    data = preset_data(None)
    presentation._contexts.clear()
    first = client.post("/configurator/update", data, HTTP_HX_REQUEST="true")
    second = client.post("/configurator/update", data, HTTP_HX_REQUEST="true")
    assert first.status_code == second.status_code == 200
    assert _without_csrf(first.content) == _without_csrf(second.content)
    assert len(presentation._contexts) == 1  # the second update used the first one's context


def test_rendering_changes_nothing_in_the_shared_context(catalog, client, users):
    """Two updates rendered the shared context; it still equals one built afresh from the plan."""
    client.force_login(users["engineer"])
    presentation._contexts.clear()
    for language in ("zh-hans", "en"):
        data = {**preset_data(None), "language": language}
        client.post("/configurator/update", data, HTTP_HX_REQUEST="true", HTTP_ACCEPT_LANGUAGE=language)
        client.post("/configurator/update", data, HTTP_HX_REQUEST="true", HTTP_ACCEPT_LANGUAGE=language)
    assert len(presentation._contexts) >= 1
    for (_, lang), (result, shared) in list(presentation._contexts.items()):
        assert shared["result"] == plan_to_dict(result)
        assert shared == presentation.context_from_dict(plan_to_dict(result), lang)
        assert presentation._results_context(result, lang) is shared  # handed out again, not rebuilt


def _without_csrf(content: bytes) -> bytes:

    # The CSRF token is masked afresh in every response (Django's BREACH protection).
    return re.sub(rb'name="csrfmiddlewaretoken" value="[^"]*"', b"", content)
