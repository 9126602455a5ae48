"""The sales workflow against the real planner and the seeded catalog (issue 18).

Revise a revision's configuration (8 → 16 nodes) into R2, compare R1 and R2
by SKU, clone for another customer, and price changes with their report and
one-click re-plan.  Expected figures come from the seed prices, which
docs/domain.md §8 cites (≈ ¥24 M for 8 Atlas 800 A3 → ¥3 M per node), and from the
revisions' own frozen lines (so the comparison is checked against data it did
not compute).
"""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from django.urls import reverse

from catalog.models import PriceItem
from quotes.models import AuditEvent, Quote
from quotes.statuses import BomCategory, QuoteStatus, RevisionStatus
from quotes.workflow import changes
from quotes.workflow.changes import compare_items
from quotes.workflow.models import Notification

pytestmark = pytest.mark.django_db

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
A3_SKU = "SRV-ATLAS-800-A3"  # the seed price list's SKU of the Atlas 800 A3
A3_UNIT_PRICE = Decimal("3000000.00")  # seed price list (docs/domain.md §8: ≈ ¥24 M for 8 nodes)


def create_quote(client, customer="Bank of Example", request=None, discount="0"):
    response = client.post(
        reverse("quotes:create"),
        {"request_json": json.dumps(request or REQUEST), "customer_name": customer, "discount": discount},
    )
    assert response.status_code == 302, response.context["form"].errors
    return Quote.objects.get(customer__name=customer)


def lines_by_key(revision):
    return {(line.category, line.sku): line for line in revision.lines.all()}


def with_nodes(request_json, nodes):
    data = json.loads(json.dumps(request_json))
    data["topology"]["nodes"] = nodes
    return data


@pytest.fixture
def r1(client, users, catalog):
    client.force_login(users["engineer"])
    quote = create_quote(client)
    revision = quote.revisions.get()
    client.post(reverse("quotes:issue", kwargs={"pk": revision.pk}), {"version": quote.version})
    revision.refresh_from_db()
    assert revision.status == RevisionStatus.ISSUED
    return revision


# --------------------------------------------------------------------------- revise the configuration


def test_revise_opens_the_configurator_with_the_revisions_request(client, r1):
    response = client.get(reverse("quotes:configure", kwargs={"pk": r1.pk}))
    assert response.status_code == 200
    html = response.content.decode()
    assert f'name="revise_of" value="{r1.pk}"' in html
    assert reverse("quotes:configure_save") in html
    assert 'id="id_nodes"' in html and 'value="8"' in html  # the revision's 8 nodes


def test_saving_a_revised_configuration_makes_r2_of_the_same_quote(client, r1):
    frozen = {
        "net_total": r1.net_total,
        "snapshot": r1.snapshot_sha256,
        "lines": [(x.sku, x.quantity, x.line_total) for x in r1.lines.order_by("position")],
    }
    response = client.post(
        reverse("quotes:configure_save"),
        {"revision": r1.pk, "request_json": json.dumps(with_nodes(r1.request_json, 16)), "note": "16 nodes"},
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    quote = r1.quote
    quote.refresh_from_db()
    assert Quote.objects.count() == 1
    r2 = quote.revisions.get(index=2)
    assert r2.number == f"{quote.number}-R2" and r2.status == RevisionStatus.DRAFT and r2.based_on_id == r1.pk
    assert r2.request_json["topology"]["nodes"] == 16
    servers = lines_by_key(r2)[("server", A3_SKU)]
    assert servers.quantity == 16 and servers.unit_price == A3_UNIT_PRICE
    # R1 is untouched.
    r1.refresh_from_db()
    assert r1.status == RevisionStatus.ISSUED and r1.net_total == frozen["net_total"]
    assert r1.snapshot_sha256 == frozen["snapshot"]
    assert [(x.sku, x.quantity, x.line_total) for x in r1.lines.order_by("position")] == frozen["lines"]


def test_a_bad_revised_configuration_is_a_clear_400_and_saves_nothing(client, r1):
    for payload in ("{not json", json.dumps([1]), json.dumps(with_nodes(r1.request_json, 0))):
        response = client.post(reverse("quotes:configure_save"), {"revision": r1.pk, "request_json": payload})
        assert response.status_code == 400, payload
        assert "Nothing was saved" in response.content.decode()
    assert r1.quote.revisions.count() == 1
    # An unknown or invisible revision is a 404.
    assert (
        client.post(reverse("quotes:configure_save"), {"revision": "x", "request_json": "{}"}).status_code
        == 404
    )
    assert (
        client.post(reverse("quotes:configure_save"), {"revision": 999999, "request_json": "{}"}).status_code
        == 404
    )


def test_another_team_cannot_revise(client, r1, users):
    client.force_login(users["engineer2"])
    assert client.get(reverse("quotes:configure", kwargs={"pk": r1.pk})).status_code == 404
    response = client.post(
        reverse("quotes:configure_save"), {"revision": r1.pk, "request_json": json.dumps(r1.request_json)}
    )
    assert response.status_code == 404
    assert r1.quote.revisions.count() == 1


# --------------------------------------------------------------------------- compare by item


def test_compare_r1_and_r2_matches_lines_by_sku_and_explains_the_total(client, r1):
    client.post(
        reverse("quotes:configure_save"),
        {"revision": r1.pk, "request_json": json.dumps(with_nodes(r1.request_json, 16))},
    )
    r2 = r1.quote.revisions.get(index=2)
    items = compare_items(r1, r2)
    rows = {(row.category, row.sku): row for row in items.rows}
    a_lines, b_lines = lines_by_key(r1), lines_by_key(r2)
    assert set(rows) == set(a_lines) | set(b_lines)
    server = rows[("server", A3_SKU)]
    assert server.kind == "changed" and (server.a.quantity, server.b.quantity) == (8, 16)
    assert server.delta == 8 * A3_UNIT_PRICE
    # Every line present in both is compared with its own SKU's line, not the one at its position.
    for key, row in rows.items():
        if key in a_lines and key in b_lines:
            assert (row.a.line_total, row.b.line_total) == (a_lines[key].line_total, b_lines[key].line_total)
    switch_rows = [row for row in rows.values() if row.category == BomCategory.SWITCH and row.kind != "same"]
    assert switch_rows, "16 nodes need more switch ports than 8"
    # The totals' difference is explained: Σ line changes − change of the quote discount = Δ net.
    purchase_delta = sum(
        (b_lines[k].line_total if k in b_lines else 0) - (a_lines[k].line_total if k in a_lines else 0)
        for k in set(a_lines) | set(b_lines)
        if k[0] != BomCategory.LEASE
    )
    assert items.lines_delta == purchase_delta
    assert items.lines_delta - items.quote_discount_delta == r2.net_total - r1.net_total == items.net_delta

    response = client.get(reverse("quotes:compare", kwargs={"pk": r1.quote.pk}) + "?a=1&b=2")
    html = response.content.decode()
    assert response.status_code == 200
    assert f'data-sku="{A3_SKU}" data-kind="changed"' in html
    for row in switch_rows:
        assert f'data-sku="{row.sku}" data-kind="{row.kind}"' in html
    assert 'id="total-explained"' in html


# --------------------------------------------------------------------------- clone


def test_clone_gives_a_new_number_for_a_new_customer_with_the_same_configuration(client, r1):
    response = client.post(
        reverse("quotes:clone", kwargs={"pk": r1.pk}), {"customer_name": "Second Bank", "title": "Copy"}
    )
    assert response.status_code == 302
    clone = Quote.objects.get(customer__name="Second Bank")
    assert clone.number != r1.quote.number and clone.status == QuoteStatus.DRAFT
    c1 = clone.revisions.get()
    assert c1.request_json == r1.request_json and c1.prices_json == r1.prices_json
    assert c1.net_total == r1.net_total and c1.discount == r1.discount
    assert [(x.sku, x.quantity, x.unit_price, x.line_total) for x in c1.lines.order_by("position")] == [
        (x.sku, x.quantity, x.unit_price, x.line_total) for x in r1.lines.order_by("position")
    ]
    assert AuditEvent.objects.filter(quote=clone, action="quote.cloned").exists()
    # No customer: a 400 that says so, nothing created.
    response = client.post(reverse("quotes:clone", kwargs={"pk": r1.pk}), {"customer_name": ""})
    assert response.status_code == 400 and Quote.objects.count() == 2


# --------------------------------------------------------------------------- price changes


def test_a3_price_change_lists_open_revisions_and_replans_one(
    client, users, catalog, monkeypatch, django_capture_on_commit_callbacks
):
    client.force_login(users["engineer"])
    issued_quote = create_quote(client, "Issued Bank")
    issued = issued_quote.revisions.get()
    client.post(reverse("quotes:transition", kwargs={"pk": issued_quote.pk}),
                {"version": issued_quote.version, "to_status": "sent"})  # fmt: skip
    issued.refresh_from_db()
    assert issued.status == RevisionStatus.ISSUED
    draft = create_quote(client, "Draft Bank").revisions.get()
    a2_request = {
        "model": "llama-3-3-70b",
        "server": "atlas-800-a2",
        "topology": {"kind": "single", "nodes": 1},
    }
    other = create_quote(client, "Other Bank", request=a2_request)
    replans = []
    real_preview = changes.priced_preview
    monkeypatch.setattr(changes, "priced_preview", lambda r: replans.append(r.number) or real_preview(r))
    assert client.get(reverse("quotes:price_impact")).context["rows"] == []
    assert replans == [], "unchanged prices are found without re-planning"

    item = PriceItem.objects.get(kind="server", item_slug="atlas-800-a3")
    item.unit_price = Decimal("3200000.00")
    with django_capture_on_commit_callbacks(execute=True):
        item.save()
    # The owner hears of it for each open quote the new price touches (not the A2 quote).
    notices = Notification.objects.filter(recipient=users["engineer"], kind="price_changed")
    assert sorted(n.revision.number for n in notices) == sorted([issued.number, draft.number])
    assert all("3,000,000.00 → 3,200,000.00" in n.subject for n in notices)

    response = client.get(reverse("quotes:price_impact"))
    assert sorted(replans) == sorted([issued.number, draft.number])  # only the A3 quotes are re-planned
    rows = {row.revision.number: row for row in response.context["rows"]}
    assert set(rows) == {issued.number, draft.number}, "the A2 quote is not affected"
    assert other.number not in response.content.decode()
    for revision in (issued, draft):
        row = rows[revision.number]
        # 8 nodes × ¥200,000 more, no discount.
        assert row.old_net == revision.net_total
        assert row.new_net - row.old_net == Decimal("1600000.00")
        assert row.changed_items == [(A3_SKU, A3_UNIT_PRICE, Decimal("3200000.00"))]

    response = client.post(reverse("quotes:replan", kwargs={"pk": issued.pk}))
    assert response.status_code == 302
    r2 = issued.quote.revisions.get(index=2)
    assert r2.status == RevisionStatus.DRAFT
    assert lines_by_key(r2)[("server", A3_SKU)].unit_price == Decimal("3200000.00")
    assert r2.net_total == rows[issued.number].new_net
    issued.refresh_from_db()
    assert lines_by_key(issued)[("server", A3_SKU)].unit_price == A3_UNIT_PRICE
    assert issued.net_total == rows[issued.number].old_net
    # The re-planned quote is no longer affected.
    numbers = {row.revision.number for row in client.get(reverse("quotes:price_impact")).context["rows"]}
    assert numbers == {draft.number}


def test_saving_the_same_revised_configuration_twice_makes_one_revision(client, r1):
    quote = r1.quote
    quote.refresh_from_db()
    form = {
        "revision": r1.pk,
        "version": quote.version,
        "request_json": json.dumps(with_nodes(r1.request_json, 16)),
    }
    first = client.post(reverse("quotes:configure_save"), form)
    second = client.post(reverse("quotes:configure_save"), form)  # double click / back-then-save
    assert first.status_code == second.status_code == 302
    assert first["Location"] == second["Location"]
    assert quote.revisions.count() == 2
    # A stale form with a different configuration is refused (409), nothing saved.
    form["request_json"] = json.dumps(with_nodes(r1.request_json, 8))
    response = client.post(reverse("quotes:configure_save"), form)
    assert response.status_code == 409 and quote.revisions.count() == 2
