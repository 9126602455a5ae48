"""The htmx update sends each "why?" closed and empty; opening it loads the same explanation the full
page (also the no-JavaScript page) shows inline, from the plan the update made — without planning again."""

from __future__ import annotations

import html
import json
import re

import pytest
from django.urls import reverse

from configurator.planning import plans as planning
from configurator.planning import proofs
from configurator.web.presets import preset_data

pytestmark = pytest.mark.django_db

INLINE = re.compile(r'<details class="why"><summary[^>]*>[^<]*</summary>(.*?)</details>', re.S)
ON_DEMAND = re.compile(
    r'<details class="why" hx-post="([^"]+)"[^>]*hx-vals=\'([^\']+)\'[^>]*>(.*?)</details>', re.S
)
P8D8 = {"topology": "disaggregated", "nodes": "16", "prefill_nodes": "8", "decode_nodes": "8"}
# The searched-configurations table: each row's why? explains that row from the row's own figures
# (concurrency, output tokens/s, TPOT), not a figure of the plan the why endpoint could look up, so it
# is sent whole on the page and in the update alike.
# (Its rows' why? hold tables of their own: the outer table ends on a line of its own.)
FRONT = re.compile(r'<table class="compact configuration-front">.*?</tbody>\n\s*</table>', re.S)


@pytest.fixture
def engineer_client(client, catalog, users):
    client.force_login(users["engineer"])
    client.cookies["django_language"] = "en"
    return client


@pytest.fixture
def plans(monkeypatch):
    calls = []
    real = planning.plan

    def counted(request):
        calls.append(request)
        return real(request)

    monkeypatch.setattr(planning, "plan", counted)  # a request's own plans
    monkeypatch.setattr(proofs, "plan", counted)  # and the proofs of the fixes the page offers
    return calls


def _htmx(client, url, data):
    return client.post(url, data, HTTP_HX_REQUEST="true")


def test_an_opened_why_is_the_full_pages_explanation_without_a_second_plan(engineer_client, plans):
    data = {**preset_data(None), **P8D8}
    page = engineer_client.post("/", data).content.decode()
    results = page.split('<section id="results"', 1)[1]
    page_front = FRONT.findall(results)
    inline = INLINE.findall(FRONT.sub("", results))
    planned = len(plans)

    update = _htmx(engineer_client, reverse("configurator:update"), data)
    assert update.status_code == 200
    body = update.content.decode()
    # 8P8D searches more than one configuration: the table is there, a why? per row (a row is its own
    # <tr> and its why?'s three: concurrency, output tokens/s, TPOT).  The update sends the results
    # first; the recommended settings and their table come after them from the advice fragment, the
    # same as the full page's.
    advice = _htmx(engineer_client, reverse("configurator:advice"), data).content.decode()
    assert len(page_front) == 1 and FRONT.findall(advice) == page_front and FRONT.findall(body) == []
    assert 'hx-post="/configurator/advice" hx-trigger="load"' in body
    assert page_front[0].count('<details class="why">') == page_front[0].count("<tr") // 4 >= 2
    body = FRONT.sub("", body)
    lazy = ON_DEMAND.findall(body)
    assert len(lazy) == len(inline) >= 25  # every "why?" of the page, in the same order
    assert '<details class="why">' not in body  # none sent whole
    assert len(plans) == planned  # the update found the page's plan (port.plan_cache)
    for (url, vals, closed), explanation in list(zip(lazy, inline, strict=True))[::5]:
        assert url == reverse("configurator:why")
        assert "formula" not in closed and "<table" not in closed
        figure = json.loads(html.unescape(vals))["figure"]
        opened = _htmx(engineer_client, url, {**data, "figure": figure})
        assert opened.status_code == 200
        assert opened.content.decode() == explanation
    assert len(plans) == planned  # nor did any explanation


def test_a_why_for_a_figure_the_plan_lacks_or_a_form_that_does_not_plan_is_a_400(engineer_client):
    url = reverse("configurator:why")
    data = preset_data(None)
    missing = _htmx(engineer_client, url, {**data, "figure": "no.such.figure"})
    assert missing.status_code == 400 and missing.content.decode().startswith("figure:")
    bad = _htmx(engineer_client, url, {**data, "nodes": "many", "figure": "power.it_kw"})
    assert bad.status_code == 400 and "nodes" in bad.content.decode()
