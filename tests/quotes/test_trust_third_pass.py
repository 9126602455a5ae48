"""Strict inputs of quote creation and acceptance, and measured figures only from matching evidence.

* a lone surrogate (``"\\ud800"``) anywhere in the posted configuration is a 400 naming its field;
* a customer's name and a quote's title are printed on one line: CR / LF, U+2028 / U+2029 and bidi
  controls (U+202E) are refused, naming the field;
* the accepted option is one of the revision's options (none: no option);
* a benchmark file measured at another load or with other request lengths gives no measured figure.
"""

from __future__ import annotations

import hashlib
import json

import pytest
from django.urls import reverse

from quotes.benchmarks.models import MeasuredBenchmark
from quotes.benchmarks.views import measured_context
from quotes.models import Customer, Quote

from .conftest import REQUEST
from .test_benchmark_import import BENCH

pytestmark = pytest.mark.django_db


def _create(client, **data):
    payload = {"request_json": json.dumps(REQUEST), "customer": "Shenzhen Software Co", "title": "Pilot"}
    payload.update(data)
    return client.post(reverse("quotes:create"), payload)


@pytest.mark.parametrize(
    "path", [("model",), ("server",), ("site",), ("rack",), ("checkpoint",), ("commercial", "price_list")]
)
def test_a_lone_surrogate_in_the_configuration_is_a_400_naming_the_field(client, users, fake_planner, path):
    client.force_login(users["engineer"])
    request = json.loads(json.dumps(REQUEST))
    node = request
    for key in path[:-1]:
        node = node.setdefault(key, {})
    node[path[-1]] = "atlas\ud800"
    # json.dumps writes the surrogate as the escape "\ud800", as a hostile client would send it.
    text = json.dumps(request)
    assert "\\ud800" in text
    response = client.post(
        reverse("quotes:create"), {"request_json": text, "customer": "Shenzhen Software Co"}
    )
    assert response.status_code == 400
    page = response.content.decode()
    assert f"field {'.'.join(path)} holds a character that is not text" in page
    assert not Quote.objects.exists() and fake_planner.calls == []


@pytest.mark.parametrize(
    "bad", ["Bank\r\nBcc: x", "Bank\u2028of X", "Bank\u2029of X", "Bank \u202eknaB", "Bank\u200f"]
)
def test_customer_names_and_titles_refuse_line_and_bidi_controls(client, users, fake_planner, bad):
    client.force_login(users["engineer"])
    response = _create(client, customer=bad)
    assert response.status_code == 400
    assert "Remove the line breaks and control characters" in response.content.decode()
    response = _create(client, title=bad)
    assert response.status_code == 400
    assert "Remove the line breaks and control characters" in response.content.decode()
    assert not Quote.objects.exists() and not Customer.objects.exists()


def test_a_draft_title_edit_refuses_a_line_break(users, make_quote):
    from django.core.exceptions import ValidationError

    from quotes.services.quotes import quote_update

    quote = make_quote()
    with pytest.raises(ValidationError) as err:
        quote_update(quote=quote, by=users["engineer"], expected_version=quote.version, title="A\nB")
    assert "title" in err.value.message_dict


def test_the_accepted_option_is_one_of_the_revisions_options(make_quote):
    from django.core.exceptions import ValidationError

    from quotes.services.sharing import accepted_option, offered_options

    revision = make_quote().revisions.get()
    # No options on the quote: the quoted configuration is the offer; any option typed is refused.
    assert offered_options(revision) == []
    assert accepted_option(revision, "") == ""
    with pytest.raises(ValidationError) as err:
        accepted_option(revision, "Option 9 (all servers at CNY 1.00)")
    assert "no options" in err.value.message_dict["option"][0]


def test_a_benchmark_at_other_conditions_gives_no_measured_figure(make_quote, users):
    revision = make_quote().revisions.get()
    workload = {"input_tokens": 8192, "output_tokens": 1024, "concurrency": 16}
    revision.resolved_json = {**revision.resolved_json, "workload": workload}
    revision.save(update_fields=["resolved_json"])

    def attach(**changes):
        raw = json.dumps({**BENCH, **changes})
        from quotes.benchmarks.importer import parse_benchmark

        return MeasuredBenchmark.objects.create(
            revision=revision,
            uploaded_by=users["engineer"],
            filename="b.json",
            figures=parse_benchmark(raw),
            sha256=hashlib.sha256(raw.encode()).hexdigest(),
        )

    # 999,999 tok/s at 1,000 users against a plan for 16; the same with 100 / 10-token requests.
    attach(output_throughput=999_999.0, max_concurrency=1000)
    assert measured_context(revision) is None
    attach(output_throughput=999_999.0, total_input_tokens=320 * 100, total_output_tokens=320 * 10)
    assert measured_context(revision) is None
    # BENCH itself: 16 users, 8,192 / 1,024 tokens, as planned: measured.
    good = attach()
    context = measured_context(revision)
    assert context is not None and context["benchmark"] == good
    assert context["rows"][0]["measured"] == BENCH["output_throughput"]
