"""Quote pages: visibility (404, never 403, outside it), forms, errors as 4xx, htmx partials."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from django.urls import reverse

from quotes.models import Quote, QuoteRevision
from quotes.services import planning
from quotes.services.quotes import quote_update
from quotes.services.revisions import revision_create_from
from quotes.services.transitions import quote_transition
from quotes.statuses import ApprovalState, QuoteStatus, RevisionStatus

from .conftest import REQUEST


@pytest.fixture
def quote(make_quote):
    return make_quote(discount="0.15")


def _client(client, user):
    client.force_login(user)
    return client


# --------------------------------------------------------------------------- visibility


def _read_urls(quote):
    revision = quote.revisions.get()
    return [
        reverse("quotes:detail", args=[quote.pk]),
        reverse("quotes:compare", args=[quote.pk]) + "?a=1&b=1",
        reverse("quotes:edit", args=[quote.pk]),
        reverse("quotes:pdf", args=[revision.pk]),
        reverse("quotes:xlsx", args=[revision.pk]),
        reverse("quotes:bundle", args=[revision.pk]),
    ]


def _write_urls(quote):
    revision = quote.revisions.get()
    return [
        reverse("quotes:transition", args=[quote.pk]),
        reverse("quotes:revise", args=[revision.pk]),
        reverse("quotes:issue", args=[revision.pk]),
        reverse("quotes:approve", args=[revision.pk]),
        reverse("quotes:reject", args=[revision.pk]),
    ]


@pytest.mark.django_db
@pytest.mark.parametrize("username", ["engineer2", "catalog"])
def test_other_teams_and_non_sales_users_get_404_everywhere(client, users, quote, username):
    c = _client(client, users[username])
    for url in _read_urls(quote):
        assert c.get(url).status_code == 404, url
    for url in _write_urls(quote):
        assert c.post(url, {"version": quote.version, "to_status": "sent"}).status_code == 404, url
    # A number that does not exist answers exactly the same.
    assert c.get(reverse("quotes:detail", args=[quote.pk + 1000])).status_code == 404
    assert quote.number.encode() not in c.get(reverse("quotes:list")).content
    assert Quote.objects.get(pk=quote.pk).status == QuoteStatus.DRAFT


@pytest.mark.django_db
def test_team_members_see_the_quote_read_only(client, make_user, quote):
    from accounts.roles import SALES_ENGINEER

    colleague = make_user("colleague", SALES_ENGINEER, "East China")
    c = _client(client, colleague)
    page = c.get(reverse("quotes:detail", args=[quote.pk]))
    assert page.status_code == 200 and quote.number.encode() in page.content
    assert reverse("quotes:transition", args=[quote.pk]).encode() not in page.content
    # Visible, so a refusal may say so: 403.
    response = c.post(
        reverse("quotes:transition", args=[quote.pk]), {"version": quote.version, "to_status": "sent"}
    )
    assert response.status_code == 403
    assert c.get(reverse("quotes:edit", args=[quote.pk])).status_code == 403


@pytest.mark.django_db
def test_selectors_scope_by_role(users, make_quote):
    from quotes import selectors

    east = make_quote()
    north = make_quote(by=users["engineer2"], customer="Beijing Research Lab")
    visible = {name: set(selectors.quotes_visible_to(user)) for name, user in users.items()}
    assert visible["engineer"] == {east}
    assert visible["manager"] == {east}
    assert visible["engineer2"] == {north}
    assert visible["catalog"] == set()
    assert selectors.can_edit(users["manager"], east) and not selectors.can_edit(users["manager"], north)
    assert selectors.can_see_margins(users["manager"], east) and not selectors.can_see_margins(
        users["engineer"], east
    )
    admin = type(users["engineer"]).objects.create_superuser("root", password="x")
    assert set(selectors.quotes_visible_to(admin)) == {east, north}


# --------------------------------------------------------------------------- list and detail


@pytest.mark.django_db
def test_list_search_and_filters(client, users, make_quote):
    first = make_quote(customer="Shanghai Pudong Bank", title="K3 on 8 × A3")
    second = make_quote(customer="Hangzhou Gov Cloud", title="Policy Q&A pilot")
    quote_transition(quote=second, to_status=QuoteStatus.SENT, by=users["engineer"])
    c = _client(client, users["manager"])
    url = reverse("quotes:list")

    def numbers(**params):
        response = c.get(url, params)
        assert response.status_code == 200
        return {q.number for q in response.context["page"].object_list}

    assert numbers() == {first.number, second.number}
    assert numbers(q="pudong") == {first.number}
    assert numbers(q="pilot") == {second.number}
    assert numbers(q=second.number) == {second.number}
    assert numbers(status="sent") == {second.number}
    assert numbers(customer=first.customer_id) == {first.number}
    assert numbers(owner=users["engineer"].pk) == {first.number, second.number}
    assert numbers(created_from="2000-01-01", created_to="2000-12-31") == set()
    # A bad filter value is reported and ignored, never a 500.
    response = c.get(url, {"created_from": "yesterday", "status": "bogus", "customer": "x"})
    assert response.status_code == 200
    assert response.context["form"].errors


@pytest.mark.django_db
def test_list_htmx_request_gets_only_the_results(client, users, quote):
    response = _client(client, users["engineer"]).get(
        reverse("quotes:list"), {"q": quote.number}, HTTP_HX_REQUEST="true", HTTP_HX_TARGET="quote-results"
    )
    assert response.status_code == 200
    assert b"<html" not in response.content and quote.number.encode() in response.content


@pytest.mark.django_db
def test_detail_shows_bom_totals_and_actions(client, users, quote):
    page = _client(client, users["manager"]).get(reverse("quotes:detail", args=[quote.pk]))
    assert page.status_code == 200
    html = page.content.decode()
    assert quote.number in html and "-R1" in html
    assert "24,000,000.00" in html  # 8 × 3,000,000 servers
    assert "33,567,000.00" in html  # list total
    assert reverse("quotes:approve", args=[quote.revisions.get().pk]) in html  # the manager may decide
    assert reverse("quotes:pdf", args=[quote.revisions.get().pk]) in html
    assert "csrfmiddlewaretoken" in html


@pytest.mark.django_db
def test_detail_with_a_bad_revision_index_is_404(client, users, quote):
    c = _client(client, users["engineer"])
    assert c.get(reverse("quotes:detail", args=[quote.pk]), {"rev": "abc"}).status_code == 404
    assert c.get(reverse("quotes:detail", args=[quote.pk]), {"rev": "7"}).status_code == 404


# --------------------------------------------------------------------------- actions


@pytest.mark.django_db
def test_sending_a_pending_discount_is_refused_with_a_clear_message(client, users, quote):
    c = _client(client, users["engineer"])
    response = c.post(
        reverse("quotes:transition", args=[quote.pk]), {"version": quote.version, "to_status": "sent"}
    )
    assert response.status_code == 400
    assert "sales manager" in response.content.decode()
    assert Quote.objects.get(pk=quote.pk).status == QuoteStatus.DRAFT


@pytest.mark.django_db
def test_manager_approves_then_engineer_sends(client, users, quote):
    revision = quote.revisions.get()
    c = _client(client, users["manager"])
    response = c.post(
        reverse("quotes:approve", args=[revision.pk]), {"version": quote.version, "comment": "ok"}
    )
    assert response.status_code == 302
    assert QuoteRevision.objects.get(pk=revision.pk).approval_state == ApprovalState.APPROVED
    quote.refresh_from_db()
    client.logout()
    c = _client(client, users["engineer"])
    # The engineer cannot decide (it is their quote's discount).
    assert c.post(reverse("quotes:reject", args=[revision.pk]), {"version": quote.version}).status_code == 403
    response = c.post(
        reverse("quotes:transition", args=[quote.pk]), {"version": quote.version, "to_status": "sent"}
    )
    assert response.status_code == 302
    assert Quote.objects.get(pk=quote.pk).status == QuoteStatus.SENT


@pytest.mark.django_db
def test_stale_form_is_a_409_conflict(client, users, quote):
    stale = quote.version
    quote_update(quote=quote, by=users["manager"], expected_version=stale, title="changed meanwhile")
    c = _client(client, users["engineer"])
    response = c.post(reverse("quotes:transition", args=[quote.pk]), {"version": stale, "to_status": "sent"})
    assert response.status_code == 409
    assert "reload" in response.content.decode()
    edit = c.post(
        reverse("quotes:edit", args=[quote.pk]),
        {
            "version": stale,
            "title": "mine",
            "customer": quote.customer_id,
            "valid_until": quote.valid_until.isoformat(),
            "language": "en",
        },
    )
    assert edit.status_code == 409
    assert Quote.objects.get(pk=quote.pk).title == "changed meanwhile"


@pytest.mark.django_db
def test_missing_or_bad_fields_are_400_not_500(client, users, quote):
    c = _client(client, users["engineer"])
    revision = quote.revisions.get()
    assert c.post(reverse("quotes:transition", args=[quote.pk]), {}).status_code == 400
    assert (
        c.post(
            reverse("quotes:transition", args=[quote.pk]), {"version": "x", "to_status": "sent"}
        ).status_code
        == 400
    )
    response = c.post(
        reverse("quotes:revise", args=[revision.pk]), {"version": quote.version, "discount": "120%"}
    )
    assert response.status_code == 400 and "90" in response.content.decode()
    assert c.post(reverse("quotes:issue", args=[revision.pk]), {}).status_code == 400
    edit = c.post(
        reverse("quotes:edit", args=[quote.pk]), {"version": quote.version, "valid_until": "2000-01-01"}
    )
    assert edit.status_code == 400
    assert c.get(reverse("quotes:transition", args=[quote.pk])).status_code == 405


@pytest.mark.django_db
def test_revise_with_a_new_discount_replans_from_the_frozen_request(client, users, make_quote, fake_planner):
    quote = make_quote(discount="0.05")
    revision = quote.revisions.get()
    c = _client(client, users["engineer"])
    response = c.post(
        reverse("quotes:revise", args=[revision.pk]),
        {"version": quote.version, "discount": "8%", "note": "customer asked"},
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    new = quote.revisions.get(index=2)
    assert new.discount == Decimal("0.08") and new.change_note == "customer asked"
    # Planned from the inline (resolved) request, with the new discount in it.
    assert fake_planner.calls[-1]["server"] == {"slug": "atlas-800-a3", "name": "Atlas 800 A3"}
    assert fake_planner.calls[-1]["commercial"]["quote_discount"] == "0.08"
    assert new.request_json["commercial"]["quote_discount"] == "0.08"
    # 27,567,000 × 0.08 = 2,205,360.00, the engine's capex discount
    assert new.result_json["tco"]["capex"]["discount"] == "2205360.00"
    assert new.capex_total == Decimal("25361640.00")
    assert revision.discount == Decimal("0.05")  # R1 unchanged


@pytest.mark.django_db
def test_compare_shows_inputs_totals_and_checks(client, users, make_quote, engineer):
    quote = make_quote(discount="0.05")
    r1 = quote.revisions.get()
    result = dict(r1.result_json)
    result["checks"] = [
        *result["checks"][1:],
        {"code": "power.new_check", "severity": "warning", "message": "New."},
    ]
    request = {**r1.request_json, "topology": {"kind": "primary_standby", "nodes": 16}}
    revision_create_from(
        revision=r1,
        changes={
            "request_json": request,
            "resolved_json": r1.resolved_json,
            "result_json": result,
            "prices_json": r1.prices_json,
            "usd_rate": "7.2",
        },
        by=engineer,
    )
    response = _client(client, users["engineer"]).get(reverse("quotes:compare", args=[quote.pk]))
    assert response.status_code == 200
    cmp = response.context["cmp"]
    assert [(c.key, c.before, c.after) for c in cmp.inputs] == [("topology.nodes", 8, 16)]
    assert [c["code"] for c in cmp.checks_added] == ["power.new_check"]
    assert [c["code"] for c in cmp.checks_removed] == ["memory.kv_headroom"]
    html = response.content.decode()
    assert "topology.nodes" in html and "power.new_check" not in html  # the message is shown, not the code
    assert "New." in html


# --------------------------------------------------------------------------- create from the configurator


def _create(c, **data):
    payload = {
        "request_json": json.dumps(REQUEST),
        "customer": "Shenzhen Software Co",
        "title": "Agent pilot",
    }
    payload.update(data)
    return c.post(reverse("quotes:create"), payload)


@pytest.mark.django_db
def test_create_plans_on_the_server_and_ignores_posted_results(client, users, fake_planner):
    c = _client(client, users["engineer"])
    response = _create(c, discount="12%", language="en", result_json='{"tco": {"buy_total": "1"}}')
    assert response.status_code == 302
    quote = Quote.objects.get()
    assert response["Location"] == reverse("quotes:detail", args=[quote.pk])
    revision = quote.revisions.get()
    assert fake_planner.calls == [
        {**REQUEST, "commercial": {**REQUEST["commercial"], "quote_discount": "0.12"}}
    ]
    assert revision.tco_buy_total == Decimal("35964424.54")  # the planner's, not the posted "1"
    assert (quote.language, quote.title, quote.customer.name) == ("en", "Agent pilot", "Shenzhen Software Co")
    assert revision.discount == Decimal("0.12") and revision.approval_state == ApprovalState.PENDING
    assert revision.status == RevisionStatus.DRAFT


@pytest.mark.django_db
def test_create_with_an_existing_customer_id(client, users, fake_planner, make_quote):
    existing = make_quote().customer
    c = _client(client, users["engineer"])
    assert _create(c, customer=str(existing.pk)).status_code == 302
    assert Quote.objects.latest("id").customer == existing
    # Another team's customer id is unknown here.
    other = make_quote(by=users["engineer2"], customer="Beijing Lab").customer
    response = _create(c, customer=str(other.pk))
    assert response.status_code == 400 and "Unknown customer" in response.content.decode()


@pytest.mark.django_db
@pytest.mark.parametrize(
    "data, message",
    [
        ({"request_json": "{not json"}, "not valid JSON"),
        ({"request_json": "[1, 2]"}, "JSON object"),
        ({"request_json": ""}, "required"),
        ({"discount": "abc"}, "percentage"),
        ({"discount": "95%"}, "90"),
        ({"customer": ""}, "Choose a customer"),
        ({"language": "fr"}, "valid choice"),
    ],
)
def test_create_bad_input_is_400_with_field_errors(client, users, fake_planner, data, message):
    response = _create(_client(client, users["engineer"]), **data)
    assert response.status_code == 400
    assert message in response.content.decode()
    assert not Quote.objects.exists()
    assert fake_planner.calls == []


@pytest.mark.django_db
def test_create_reports_planner_errors_on_the_request_field(client, users, monkeypatch):
    class RequestError(Exception):
        def __init__(self, errors):
            super().__init__("bad request")
            self.errors = errors

    def planner(request_json):
        raise RequestError({"server": ["unknown server 'atlas-9000'."]})

    monkeypatch.setattr(planning, "_plan_for_quote", lambda: planner)
    response = _create(_client(client, users["engineer"]))
    assert response.status_code == 400
    assert "unknown server" in response.content.decode()
    assert not Quote.objects.exists()


@pytest.mark.django_db
def test_create_refuses_a_plan_with_errors(client, users, fake_planner, monkeypatch):
    def planner(request_json):
        resolved, result, prices, rate, currency = fake_planner(request_json)
        result["checks"].append(
            {"code": "memory.weights_do_not_fit", "severity": "error", "message": "Weights do not fit."}
        )
        return resolved, result, prices, rate, currency

    monkeypatch.setattr(planning, "_plan_for_quote", lambda: planner)
    response = _create(_client(client, users["engineer"]))
    assert response.status_code == 400 and "Weights do not fit." in response.content.decode()


@pytest.mark.django_db
def test_create_when_the_planner_is_missing_is_503_not_500(client, users, monkeypatch):
    monkeypatch.setattr(planning, "_plan_for_quote", lambda: None)
    response = _create(_client(client, users["engineer"]))
    assert response.status_code == 503
    assert not Quote.objects.exists()


@pytest.mark.django_db
def test_create_via_htmx_redirects_the_page_or_returns_422(client, users, fake_planner):
    c = _client(client, users["engineer"])
    ok = c.post(
        reverse("quotes:create"),
        {"request_json": json.dumps(REQUEST), "customer": "Bank"},
        HTTP_HX_REQUEST="true",
    )
    assert ok.status_code == 200 and ok["HX-Redirect"].startswith("/quotes/")
    bad = c.post(
        reverse("quotes:create"), {"request_json": "nope", "customer": "Bank"}, HTTP_HX_REQUEST="true"
    )
    assert bad.status_code == 422 and b"<html" not in bad.content


@pytest.mark.django_db
def test_catalog_admin_cannot_create(client, users, fake_planner):
    assert _create(_client(client, users["catalog"])).status_code == 403
    assert client.get(reverse("quotes:create")).status_code == 405


@pytest.mark.django_db
def test_customers_page_lists_the_team_and_adds_one(client, users, make_quote):
    make_quote(customer="Shanghai Pudong Bank")
    make_quote(by=users["engineer2"], customer="Beijing Lab")
    c = _client(client, users["engineer"])
    page = c.get(reverse("quotes:customers"))
    assert b"Shanghai Pudong Bank" in page.content and b"Beijing Lab" not in page.content
    assert (
        c.post(reverse("quotes:customers"), {"name": "Wuhan Pharma", "industry": "Pharma"}).status_code == 302
    )
    duplicate = c.post(reverse("quotes:customers"), {"name": "wuhan pharma"})
    assert duplicate.status_code == 400


@pytest.mark.django_db
def test_anonymous_users_are_sent_to_log_in(client, quote):
    for url in (reverse("quotes:list"), reverse("quotes:detail", args=[quote.pk])):
        response = client.get(url)
        assert response.status_code == 302 and "login" in response["Location"]


@pytest.mark.django_db
def test_create_form_tag_for_the_configurator_page(rf, users, make_quote, fake_planner, client):
    from django.template import Context, Template

    make_quote(customer="Shanghai Pudong Bank")
    request = rf.get("/")
    request.user = users["engineer"]
    payload = json.dumps(REQUEST)
    html = Template("{% load quote_format %}{% quote_create_form request_json %}").render(
        Context({"request": request, "request_json": payload, "csrf_token": "tok"})
    )
    assert f'action="{reverse("quotes:create")}"' in html
    assert 'value="{&quot;scenario&quot;' in html  # the JSON is escaped into the attribute
    assert "Shanghai Pudong Bank" in html
    request.user = users["catalog"]
    assert "<form" not in Template("{% load quote_format %}{% quote_create_form '{}' %}").render(
        Context({"request": request})
    )
    # What the tag's form posts creates a quote.
    c = _client(client, users["engineer"])
    response = c.post(
        reverse("quotes:create"), {"request_json": payload, "customer_name": "Shanghai Pudong Bank"}
    )
    assert response.status_code == 302


def test_compare_names_inputs_and_their_choices_in_the_page_language(client, users, make_quote, engineer):
    # The comparison said "topology.pair_switches  shared  separate" on a Chinese page: a field is
    # named by the configurator form's label and a choice by its label; the path stays, small, as code.
    quote = make_quote()
    r1 = quote.revisions.get()
    request = {
        **r1.request_json,
        "topology": {"kind": "primary_standby", "nodes": 8, "pair_switches": "separate"},
    }
    revision_create_from(
        revision=r1,
        changes={
            "request_json": request,
            "resolved_json": r1.resolved_json,
            "result_json": r1.result_json,
            "prices_json": r1.prices_json,
            "usd_rate": "7.2",
        },
        by=engineer,
    )
    page = _client(client, users["engineer"])
    page.cookies["django_language"] = "zh-hans"
    html = page.get(reverse("quotes:compare", args=[quote.pk])).content.decode()
    assert "双集群的参数面交换机" in html and "每个集群独立配置" in html
    assert '<span class="mono small muted" translate="no">topology.pair_switches</span>' in html
