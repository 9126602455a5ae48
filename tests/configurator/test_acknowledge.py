"""Warnings accepted with a reason (issue 17): folded out of the findings,
carried to the quote revision, shown to the approving manager; errors are
never accepted."""

from __future__ import annotations

import html
import json
import re

import pytest
from django.urls import reverse

from configurator.acknowledge import clean_reason, parse_acknowledged
from configurator.web.presets import preset_data

pytestmark = pytest.mark.django_db

# docs/domain.md §9: 16 × 133,120 tokens per DP rank do not fit 4 × A3: a warning on the default plan.
WARNING = "memory.max_num_seqs_not_full_length"


@pytest.fixture
def engineer_client(client, catalog, users):
    client.force_login(users["engineer"])
    client.cookies["django_language"] = "en"
    return client


def _accept(client, code, reason, **extra):
    return client.post(
        reverse("configurator:acknowledge"),
        {**preset_data(None), "code": code, "reason": reason},
        HTTP_HX_REQUEST="true",
        **extra,
    ).content.decode()


def _acknowledged(body: str) -> dict:
    raw = re.search(r'name="acknowledged" value="([^"]*)"', body).group(1)
    return json.loads(html.unescape(raw))


def test_an_accepted_warning_is_folded_and_travels_with_the_quote_form(engineer_client):
    body = _accept(engineer_client, WARNING, "Customer runs short prompts only")
    assert f'data-accepted="{WARNING}"' in body
    assert f'<li class="warning" data-code="{WARNING}"' not in body  # out of the findings
    assert _acknowledged(body) == {WARNING: "Customer runs short prompts only"}
    # A plain page load remembers it too.
    page = engineer_client.get("/").content.decode()
    assert f'data-accepted="{WARNING}"' in page


def test_a_reason_is_required_and_cleaned():
    with pytest.raises(ValueError):
        clean_reason("   ")
    assert clean_reason("short\x00 prompts\n only") == "short prompts only"
    with pytest.raises(ValueError):
        clean_reason("x" * 301)
    with pytest.raises(ValueError):
        parse_acknowledged('{"bad code!": "x"}')


def test_an_empty_reason_is_a_message_beside_the_warning(engineer_client):
    body = _accept(engineer_client, WARNING, "  ")
    assert "Give a short reason" in body
    assert f'<li class="warning" data-code="{WARNING}"' in body


def test_an_error_cannot_be_accepted(engineer_client):
    data = preset_data(None)
    data.update(server="atlas-800-a2", nodes="1", max_model_len="32768")  # K3 does not fit one A2
    body = engineer_client.post(
        reverse("configurator:acknowledge"),
        {**data, "code": "memory.weights_do_not_fit", "reason": "trust me"},
        HTTP_HX_REQUEST="true",
    ).content.decode()
    assert 'data-code="memory.weights_do_not_fit"' in body
    assert "data-accepted=" not in body
    assert _acknowledged(body) == {}


def test_the_revision_records_them_and_the_manager_sees_them(engineer_client, client, users):
    body = _accept(engineer_client, WARNING, "Short prompts only")
    request_json = html.unescape(re.search(r'name="request_json" value="([^"]*)"', body).group(1))
    response = engineer_client.post(
        reverse("quotes:create"),
        {
            "request_json": request_json,
            "customer_name": "Example Bank",
            "discount": "0",
            "acknowledged": json.dumps({WARNING: "Short prompts only", "power.not_in_this_plan": "x"}),
        },
    )
    assert response.status_code == 302
    from quotes.models import QuoteRevision

    revision = QuoteRevision.objects.get()
    (item,) = revision.acknowledged_warnings  # codes the plan does not have are dropped
    assert item["code"] == WARNING and item["reason"] == "Short prompts only" and item["by"] == "engineer"
    assert "full-length sequences fit" in item["message_en"]
    client.force_login(users["manager"])
    detail = client.get(revision.quote.get_absolute_url()).content.decode()
    assert "Warnings accepted by the engineer" in detail and "Short prompts only" in detail


def test_only_a_warning_the_customer_edition_states_asks_for_a_reason(engineer_client):
    # The default 4 x A3 page opens with warnings of both kinds: the memory finding at full context
    # length is a risk of the proposal (documents.pdf.story.RISKS), the cost against the public API is
    # the engineer's to read (the economics chapter prints the comparison, not a risk).
    page = engineer_client.get("/").content.decode()
    items = re.findall(r'<li class="warning" data-code="([^"]+)">(.*?)</li>', page, re.S)
    codes = {code: body for code, body in items}
    assert WARNING in codes and "commercial.dearer_than_api" in codes
    assert 'name="reason"' in codes[WARNING]
    assert 'name="reason"' not in codes["commercial.dearer_than_api"]
