"""Issue 27, findings 1, 2 and 5 (and issue 31's approval scope), through the real planner
and the seeded catalog (``load_catalog``).

List prices are read here straight from the price list in force
(``catalog.selectors.price_list_in_force``), never from the code under test.
"""

from __future__ import annotations

import copy
import json
from decimal import Decimal

import pytest
from django.test import Client
from django.urls import reverse

from catalog.selectors import price_list_in_force
from quotes.models import Quote, QuoteRevision
from quotes.statuses import ApprovalState

pytestmark = pytest.mark.django_db

# The seed's validated 4 × A3 finance deployment is 8 nodes primary/standby (tests/quotes/test_share.py).
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


@pytest.fixture(autouse=True)
def _media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    settings.CELERY_TASK_ALWAYS_EAGER = True


def english(user) -> Client:
    client = Client(HTTP_ACCEPT_LANGUAGE="en")
    client.force_login(user)
    return client


def post_create(client, request_json: dict, **extra):
    data = {"request_json": json.dumps(request_json), "customer_name": "Bank of Example", **extra}
    return client.post(reverse("quotes:create"), data)


def with_commercial(**commercial) -> dict:
    request = copy.deepcopy(REQUEST)
    request["commercial"] = commercial
    return request


def list_price(kind: str, slug: str, currency: str = "CNY") -> Decimal:
    return price_list_in_force(currency).items.get(kind=kind, item_slug=slug).unit_price


# --------------------------------------------------------------------------- finding 1


@pytest.mark.parametrize(
    "commercial",
    [
        {"currency": "USD", "server_unit_price": "1"},  # USD 4.00 for the servers, "approval not needed"
        {"currency": "EUR"},  # a 0.00 quote
    ],
)
def test_any_currency_without_a_price_list_skips_approval(users, catalog, commercial):
    # The seed has price lists in CNY only; a currency without one has nothing to compare with.
    assert price_list_in_force(commercial["currency"]) is None
    response = post_create(english(users["engineer"]), with_commercial(**commercial))
    assert response.status_code == 400
    text = response.content.decode()
    assert f"There is no price list in force in {commercial['currency']}" in text
    assert not Quote.objects.exists()


def test_the_configurator_says_a_currency_without_a_price_list_cannot_be_quoted(users, catalog):
    from configurator.planning.plans import resolve_request
    from configurator.planning.prices import price_basis

    request_json = with_commercial(currency="USD")
    with_translation = price_basis(request_json, resolve_request(request_json))
    assert "cannot be saved as a quote in USD" in with_translation


# --------------------------------------------------------------------------- finding 2


def test_measured_from_a_request_field_is_refused(users, catalog):
    request = copy.deepcopy(REQUEST)
    request["workload"] = {**REQUEST["workload"], "measured_output_tokens_per_s": "1000000"}
    response = post_create(english(users["engineer"]), request)
    assert response.status_code == 400
    assert "A measured throughput can only come from a benchmark file" in response.content.decode()
    assert not Quote.objects.exists()


# --------------------------------------------------------------------------- finding 5 and issue 31


def raise_list_price(kind: str, slug: str, new: Decimal) -> Decimal:
    """Change a list price in the CNY list in force as the catalog admin saves it; returns the old."""
    item = price_list_in_force("CNY").items.get(kind=kind, item_slug=slug)
    old = item.unit_price
    item.unit_price = new
    item.save()
    return old


def server_line(revision: QuoteRevision):
    return revision.lines.get(category="server")


def created(client, request_json=REQUEST, discount="0") -> QuoteRevision:
    response = post_create(client, request_json, discount=discount)
    assert response.status_code == 302, response.content.decode()[:3000]
    return Quote.objects.order_by("-pk").first().revisions.get()


def clone(client, revision, keep_prices=False) -> QuoteRevision:
    data = {"customer_name": "New Customer Ltd"}
    if keep_prices:
        data["keep_prices"] = "on"
    response = client.post(reverse("quotes:clone", args=[revision.pk]), data)
    assert response.status_code == 302, response.content.decode()[:3000]
    return Quote.objects.order_by("-pk").first().revisions.get()


def test_clone_at_a_stale_price_is_repriced_at_todays_list(users, catalog):
    engineer = english(users["engineer"])
    r1 = created(engineer)
    old = list_price("server", "atlas-800-a3")
    assert server_line(r1).unit_price == old and r1.approval_state == ApprovalState.NOT_NEEDED
    # The finding's figures: the A3 list price raised from 3.0 M to 4.5 M.
    raise_list_price("server", "atlas-800-a3", old * Decimal("1.5"))
    clone_rev = clone(engineer, r1)
    assert server_line(clone_rev).unit_price == old * Decimal("1.5")
    assert clone_rev.approval_state == ApprovalState.NOT_NEEDED
    assert "re-priced at today's list" in clone_rev.change_note
    # The source is untouched.
    assert server_line(QuoteRevision.objects.get(pk=r1.pk)).unit_price == old


def test_clone_keeping_old_prices_below_todays_list_needs_approval(users, catalog):
    engineer = english(users["engineer"])
    r1 = created(engineer)
    old = list_price("server", "atlas-800-a3")
    raise_list_price("server", "atlas-800-a3", old * Decimal("1.5"))
    kept = clone(engineer, r1, keep_prices=True)
    line = server_line(kept)
    # 1 − 3.0 / 4.5 = 33.3 % below today's list: above the 10 % threshold.
    assert (line.unit_price, line.list_unit_price) == (old, old * Decimal("1.5"))
    assert kept.approval_state == ApprovalState.PENDING
    assert [r["code"] for r in kept.approval_reasons][:1] == ["price_override"]
    assert Decimal(kept.approval_reasons[0]["fraction"]) == (1 - Decimal(1) / Decimal("1.5")).quantize(
        Decimal("0.0001")
    )
    # It cannot be sent before a manager approves.
    response = engineer.post(
        reverse("quotes:transition", args=[kept.quote.pk]),
        {"to_status": "sent", "version": kept.quote.version},
    )
    kept.quote.refresh_from_db()
    assert kept.quote.status == "draft", response.status_code


def test_a_revision_is_repriced_at_todays_list_unless_the_old_prices_are_kept(users, catalog):
    engineer = english(users["engineer"])
    r1 = created(engineer)
    old = list_price("server", "atlas-800-a3")
    raise_list_price("server", "atlas-800-a3", old * Decimal("1.5"))
    quote = r1.quote
    response = engineer.post(
        reverse("quotes:revise", args=[r1.pk]), {"discount": "0", "note": "", "version": quote.version}
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    r2 = quote.revisions.get(index=2)
    assert server_line(r2).unit_price == old * Decimal("1.5")
    assert r2.approval_state == ApprovalState.NOT_NEEDED
    quote.refresh_from_db()
    response = engineer.post(
        reverse("quotes:revise", args=[r2.pk]),
        {"discount": "0", "note": "", "version": quote.version, "keep_prices": "on"},
    )
    r3 = quote.revisions.get(index=3)
    # R2's prices are today's: keeping them needs nothing.
    assert (
        server_line(r3).unit_price == old * Decimal("1.5") and r3.approval_state == ApprovalState.NOT_NEEDED
    )
    quote.refresh_from_db()
    engineer.post(
        reverse("quotes:revise", args=[r1.pk]),
        {"discount": "0", "note": "", "version": quote.version, "keep_prices": "on"},
    )
    r4 = quote.revisions.get(index=4)
    assert server_line(r4).unit_price == old and r4.approval_state == ApprovalState.PENDING


def approve(revision, manager):
    from quotes.services.approvals import revision_approve

    revision_approve(revision=revision, by=manager, comment="ok for this bank")
    revision.refresh_from_db()
    assert revision.approval_state == ApprovalState.APPROVED


def test_cloning_an_approved_revision_with_unchanged_prices_needs_no_new_approval(users, catalog):
    engineer = english(users["engineer"])
    r1 = created(engineer, discount="0.15")  # 15 % > the 10 % threshold
    assert r1.approval_state == ApprovalState.PENDING
    approve(r1, users["manager"])
    copy_rev = clone(engineer, r1)
    assert copy_rev.approval_state == ApprovalState.APPROVED
    carried = [r for r in copy_rev.approval_reasons if r["code"] == "approved_earlier"]
    assert carried == [
        {
            "code": "approved_earlier",
            "revision": r1.number,
            "approval": r1.approval.pk,
            "by": "manager",
            "at": r1.approval.decided_at.date().isoformat(),
        }
    ]
    # The scope is shown on the quote page.
    page = engineer.get(copy_rev.quote.get_absolute_url()).content.decode()
    assert f"Approved with {r1.number} by manager" in page
    # A clone of the clone rests on the same decision.
    again = clone(engineer, copy_rev)
    assert again.approval_state == ApprovalState.APPROVED
    assert [r for r in again.approval_reasons if r["code"] == "approved_earlier"] == carried


def test_changing_a_price_or_discount_asks_for_approval_again(users, catalog):
    engineer = english(users["engineer"])
    r1 = created(engineer, discount="0.15")
    approve(r1, users["manager"])
    quote = r1.quote
    quote.refresh_from_db()
    # Same prices and discount in a new revision: still approved.
    engineer.post(reverse("quotes:revise", args=[r1.pk]), {"discount": "0.15", "version": quote.version})
    r2 = quote.revisions.get(index=2)
    assert r2.approval_state == ApprovalState.APPROVED
    # A larger discount: asked again.
    quote.refresh_from_db()
    engineer.post(reverse("quotes:revise", args=[r2.pk]), {"discount": "0.16", "version": quote.version})
    assert quote.revisions.get(index=3).approval_state == ApprovalState.PENDING
    # A price change in the catalog, then a clone of the approved R1 re-priced at today's list.
    old = list_price("server", "atlas-800-a3")
    raise_list_price("server", "atlas-800-a3", old * Decimal("1.1"))
    repriced = clone(engineer, r1)
    assert server_line(repriced).unit_price == old * Decimal("1.1")
    assert repriced.approval_state == ApprovalState.PENDING
    assert not [r for r in repriced.approval_reasons if r["code"] == "approved_earlier"]


def test_the_seeded_rack_sent_by_the_configurator_is_a_catalog_item(users, catalog):
    import html
    import re

    engineer = english(users["engineer"])
    page = engineer.get("/").content.decode()
    request_json = json.loads(html.unescape(re.search(r'name="request_json" value="([^"]*)"', page).group(1)))
    # The page sends the rack inline with the site's 25 kW cap (the catalog rates it 40 kW).
    assert request_json["rack"]["slug"] == "rack-42u-air" and request_json["rack"]["max_kw"] == 25.0
    revision = created(engineer, request_json)
    assert not revision.lines.filter(non_catalog=True).exists()
    assert "non_catalog" not in [r["code"] for r in revision.approval_reasons]
    assert "is not a catalog item" not in engineer.get(revision.quote.get_absolute_url()).content.decode()
    # A rack typed with more power than its catalog rating is other hardware, and says so.
    request_json["rack"]["max_kw"] = 60.0
    revision = created(engineer, request_json)
    assert revision.lines.filter(category="rack", non_catalog=True).exists()


def test_discounts_are_explained_line_by_line(users, catalog):
    engineer = english(users["engineer"])
    revision = created(engineer, discount="0.12")
    offer = [line for line in revision.lines.all() if line.category != "lease"]
    capex = sum(
        (
            line.line_total
            for line in offer
            if line.category in ("server", "switch", "optics", "rack", "install", "other")
        ),
        Decimal("0"),
    )
    services = sum((line.line_total for line in offer if line.category in ("software", "om")), Decimal("0"))
    assert services > 0  # O&M: the reason "all discounts" is below 12 %
    page = engineer.get(revision.quote.get_absolute_url()).content.decode()
    quote_discount = (capex * Decimal("0.12")).quantize(Decimal("0.01"))
    assert (
        f"Quote discount 12.00 % on the one-time purchase lines ({capex:,.2f}) = {quote_discount:,.2f}; "
        f"it does not apply to the yearly services ({services:,.2f})." in html_text(page)
    )
    everything = revision.list_total - revision.net_total
    assert everything == quote_discount
    share = (everything / revision.list_total * 100).quantize(Decimal("0.01"))
    assert f"All discounts together: {everything:,.2f}, {share:.2f} % of the list total" in html_text(page)


def html_text(page: str) -> str:
    import html

    return html.unescape(page)


# --------------------------------------------------------------------------- finding 12


def test_the_price_change_report_re_plans_every_affected_quote_on_each_request(
    users, catalog, monkeypatch, django_capture_on_commit_callbacks
):
    from quotes.workflow import changes

    engineer = english(users["engineer"])
    first, second = created(engineer), created(engineer)
    replans = []
    real_preview = changes.priced_preview
    monkeypatch.setattr(changes, "priced_preview", lambda r: replans.append(r.number) or real_preview(r))
    old = list_price("server", "atlas-800-a3")
    with django_capture_on_commit_callbacks(execute=True):
        raise_list_price("server", "atlas-800-a3", old + Decimal("200000"))
    rows = engineer.get(reverse("quotes:price_impact")).context["rows"]
    assert sorted(replans) == sorted([first.number, second.number])
    # 8 nodes × ¥200,000 more, no discount, both quotes.
    assert [row.new_net - row.old_net for row in rows] == [Decimal("1600000.00")] * 2
    # Computed once per price change: the next visits re-plan nothing and show the same.
    for _ in range(3):
        again = engineer.get(reverse("quotes:price_impact")).context["rows"]
        assert [(r.revision.pk, r.new_net, r.changed_items) for r in again] == [
            (r.revision.pk, r.new_net, r.changed_items) for r in rows
        ]
    assert len(replans) == 2
    # Another price change is a new computation.
    raise_list_price("server", "atlas-800-a3", old + Decimal("300000"))
    rows = engineer.get(reverse("quotes:price_impact")).context["rows"]
    assert len(replans) == 4
    assert [row.new_net - row.old_net for row in rows] == [Decimal("2400000.00")] * 2


def test_saving_only_a_price_items_description_sends_no_price_changed_notice(
    users, catalog, django_capture_on_commit_callbacks
):
    from quotes.workflow.models import Notification

    engineer = english(users["engineer"])
    created(engineer)
    item = price_list_in_force("CNY").items.get(kind="server", item_slug="atlas-800-a3")
    with django_capture_on_commit_callbacks(execute=True):
        item.unit_price = item.unit_price + 1
        item.save()
    assert Notification.objects.filter(kind="price_changed").count() == 1
    with django_capture_on_commit_callbacks(execute=True):
        item.description = item.description + " (new photo)"
        item.save()
    assert Notification.objects.filter(kind="price_changed").count() == 1
