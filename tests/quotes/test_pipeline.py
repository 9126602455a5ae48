"""The sales manager's pipeline (issue 18): the team's quotes only, by stage, value, age and owner,
approvals waiting on the manager first, filters and a formula-injection-safe CSV export."""

from __future__ import annotations

import csv
import io

import pytest
from django.urls import reverse

from quotes.services.issuing import revision_issue
from quotes.services.transitions import quote_transition

pytestmark = pytest.mark.django_db


@pytest.fixture
def team_quotes(make_quote, engineer, engineer2, manager):
    draft = make_quote(customer="Draft Bank")
    pending = make_quote(customer="Pending Bank", discount="0.15")  # above the 10 % threshold
    issued = make_quote(customer="Issued Bank")
    revision_issue(revision=issued.revisions.get(), by=engineer)
    sent = make_quote(customer='=HYPERLINK("http://evil.example","x")')
    quote_transition(quote=sent, to_status="sent", by=engineer)
    other_team = make_quote(customer="Other Team Bank", by=engineer2)
    return {"draft": draft, "pending": pending, "issued": issued, "sent": sent, "other": other_team}


def test_the_manager_sees_the_teams_quotes_only_with_stage_and_value(client, manager, team_quotes):
    client.force_login(manager)
    response = client.get(reverse("quotes:pipeline"))
    assert response.status_code == 200
    rows = response.context["rows"]
    numbers = [row.quote.number for row in rows]
    assert team_quotes["other"].number not in numbers
    assert team_quotes["other"].number not in response.content.decode()
    expected = {"draft": "draft", "pending": "awaiting_approval", "issued": "issued", "sent": "sent"}
    by_number = {row.quote.number: row for row in rows}
    assert set(by_number) == {team_quotes[k].number for k in expected}
    for key, stage in expected.items():
        quote = team_quotes[key]
        row = by_number[quote.number]
        assert row.stage == stage
        assert row.value == quote.revisions.get().net_total
        assert row.quote.owner.username == "engineer" and row.age_days == 0
    # The approval waiting on this manager comes first.
    assert rows[0].quote.number == team_quotes["pending"].number and rows[0].waits_on_me
    assert not any(row.waits_on_me for row in rows[1:])
    # The summary adds the values of each stage.
    summary = {s["stage"]: s for s in response.context["summary"]}
    assert summary["sent"]["count"] == 1
    assert summary["sent"]["totals"] == [("CNY", team_quotes["sent"].revisions.get().net_total)]


def test_filters_and_csv_export(client, manager, team_quotes):
    client.force_login(manager)
    rows = client.get(reverse("quotes:pipeline") + "?stage=sent").context["rows"]
    assert [row.quote.number for row in rows] == [team_quotes["sent"].number]
    rows = client.get(reverse("quotes:pipeline") + "?q=Draft").context["rows"]
    assert [row.quote.number for row in rows] == [team_quotes["draft"].number]
    rows = client.get(reverse("quotes:pipeline") + "?owner=nobody").context["rows"]
    assert rows == []
    response = client.get(reverse("quotes:pipeline_csv"))
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    table = list(csv.reader(io.StringIO(response.content.decode("utf-8-sig"))))
    assert table[0][:3] == ["Quote", "Revision", "Customer"]
    body = {row[0]: row for row in table[1:]}
    assert set(body) == {team_quotes[k].number for k in ("draft", "pending", "issued", "sent")}
    sent = body[team_quotes["sent"].number]
    # The customer name that is a formula is written behind an apostrophe (OWASP), never as a formula.
    assert sent[2] == '\'=HYPERLINK("http://evil.example","x")'
    assert sent[5] == f"{team_quotes['sent'].revisions.get().net_total:.2f}" and sent[6] == "CNY"


def test_engineers_and_other_teams_have_no_pipeline(client, engineer, engineer2, team_quotes):
    for user in (engineer, engineer2):
        client.force_login(user)
        assert client.get(reverse("quotes:pipeline")).status_code == 403
        assert client.get(reverse("quotes:pipeline_csv")).status_code == 403
