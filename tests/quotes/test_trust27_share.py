"""Issue 27, findings 6, 8 and 9: the customer's side of a share link.

The quote is made through the real planner and the seeded catalog, like
``test_share.py``; the share link's token is read back from the quote page.
"""

from __future__ import annotations

import json
import re

import pytest
from django.test import Client
from django.urls import reverse

from quotes.models import AuditEvent, Quote
from quotes.services.sharing import QUESTIONS_PER_LINK_PER_HOUR
from quotes.workflow.models import CustomerAcceptance, CustomerQuestion, ShareView

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
SHARE_URL = re.compile(r'value="http://testserver/quotes/shared/([A-Za-z0-9_-]+)/"')


@pytest.fixture
def quote(client, users, catalog, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    settings.CELERY_TASK_ALWAYS_EAGER = True
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    client.force_login(users["engineer"])
    response = client.post(
        reverse("quotes:create"), {"request_json": json.dumps(REQUEST), "customer_name": "Bank of Example"}
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    return Quote.objects.get()


def share(client, revision, django_capture_on_commit_callbacks) -> str:
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("quotes:share_create", kwargs={"pk": revision.pk}))
    assert response.status_code == 302, response.content.decode()[:2000]
    return SHARE_URL.search(client.get(response["Location"]).content.decode()).group(1)


def test_acceptance_records_the_client_address_behind_the_trusted_proxy(
    client, quote, settings, django_capture_on_commit_callbacks
):
    # docs/deployment: nginx at 172.18.0.2 in front of gunicorn, TRUSTED_PROXIES names its network.
    settings.TRUSTED_PROXIES = ["172.18.0.0/16"]
    token = share(client, quote.revisions.get(), django_capture_on_commit_callbacks)
    # The client writes a forged address into the header itself; nginx appends the one it saw.
    customer = Client(REMOTE_ADDR="172.18.0.2", HTTP_X_FORWARDED_FOR="10.9.9.9, 203.0.113.9")
    with django_capture_on_commit_callbacks(execute=True):
        response = customer.post(
            reverse("quotes:share_accept", args=[token]), {"name": "Li Wei", "title": "CIO", "confirm": "on"}
        )
    assert response.status_code == 302, response.content.decode()[:2000]
    acceptance = CustomerAcceptance.objects.get()
    assert acceptance.ip == "203.0.113.9"
    assert ShareView.objects.filter(what=ShareView.What.ACCEPT).get().ip == "203.0.113.9"
    event = AuditEvent.objects.get(action="customer.accepted")
    assert event.detail["ip"] == "203.0.113.9"


def test_acceptance_without_trusted_proxies_ignores_the_forwarded_header(
    client, quote, settings, django_capture_on_commit_callbacks
):
    settings.TRUSTED_PROXIES = []
    token = share(client, quote.revisions.get(), django_capture_on_commit_callbacks)
    customer = Client(REMOTE_ADDR="198.51.100.7", HTTP_X_FORWARDED_FOR="203.0.113.9")
    with django_capture_on_commit_callbacks(execute=True):
        customer.post(
            reverse("quotes:share_accept", args=[token]), {"name": "Li Wei", "title": "CIO", "confirm": "on"}
        )
    assert CustomerAcceptance.objects.get().ip == "198.51.100.7"


@pytest.mark.parametrize(
    ("name", "title", "bad"),
    [
        ("Bob\nBcc: boss@example.com", "CIO", "U+000A"),  # a header-like second line
        ("Li Wei", "\u202eOIC", "U+202E"),  # RIGHT-TO-LEFT OVERRIDE: "CIO" shown reversed
        ("Li\u2028Wei", "CIO", "U+2028"),  # LINE SEPARATOR
        ("Li Wei", "CIO\u200b", "U+200B"),  # ZERO WIDTH SPACE (format character)
    ],
)
def test_acceptance_name_and_title_refuse_control_and_bidi_characters(
    client, quote, django_capture_on_commit_callbacks, name, title, bad
):
    token = share(client, quote.revisions.get(), django_capture_on_commit_callbacks)
    response = Client().post(
        reverse("quotes:share_accept", args=[token]), {"name": name, "title": title, "confirm": "on"}
    )
    assert response.status_code == 400
    assert bad in response.content.decode()
    assert not CustomerAcceptance.objects.exists()
    quote.refresh_from_db()
    assert quote.status == "sent"


def test_a_question_may_have_line_breaks_but_no_bidi_override(
    client, quote, django_capture_on_commit_callbacks
):
    token = share(client, quote.revisions.get(), django_capture_on_commit_callbacks)
    ask = reverse("quotes:share_question", args=[token])
    customer = Client()
    with django_capture_on_commit_callbacks(execute=True):
        assert customer.post(ask, {"name": "Li Wei", "text": "Two lines:\nMay?"}).status_code == 302
    assert customer.post(ask, {"name": "Li Wei", "text": "pay \u202e0001"}).status_code == 400
    assert customer.post(ask, {"name": "Li\nWei", "text": "May?"}).status_code == 400
    assert list(CustomerQuestion.objects.values_list("text", flat=True)) == ["Two lines:\nMay?"]


def test_customer_questions_are_limited_per_revision_a_new_link_does_not_reset_the_count(
    client, quote, django_capture_on_commit_callbacks
):
    revision = quote.revisions.get()
    first = share(client, revision, django_capture_on_commit_callbacks)
    customer = Client()
    with django_capture_on_commit_callbacks(execute=True):
        for n in range(QUESTIONS_PER_LINK_PER_HOUR):
            response = customer.post(
                reverse("quotes:share_question", args=[first]), {"name": "Li Wei", "text": f"Q{n}"}
            )
            assert response.status_code == 302
    second = share(client, revision, django_capture_on_commit_callbacks)
    assert second != first
    response = customer.post(
        reverse("quotes:share_question", args=[second]), {"name": "Li Wei", "text": "Q11"}
    )
    assert response.status_code == 400
    assert CustomerQuestion.objects.count() == QUESTIONS_PER_LINK_PER_HOUR


# --------------------------------------------------------------------------- finding 7 (and issue 31)


def configurator_form(client) -> dict:
    """The fields of the configurator page's "Save as quote" form, as the browser would post them."""
    import html

    page = client.get("/").content.decode()
    form = re.search(r'<form[^>]*id="quote-form".*?</form>', page, re.S).group(0)
    fields = dict(
        (name, html.unescape(value))
        for name, value in re.findall(r'<input type="hidden" name="([a-z_]+)" value="([^"]*)"', form)
    )
    return {**fields, "customer_name": "Bank of Example", "discount": "0", "language": "en"}


def test_double_submit_on_the_real_page(users, catalog, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    client = Client(HTTP_ACCEPT_LANGUAGE="en")
    client.force_login(users["engineer"])
    form = configurator_form(client)
    # The real form carries its idempotency key (the one that had one was included nowhere).
    assert re.fullmatch(r"[0-9a-f]{32}", form["idempotency_key"])
    assert configurator_form(client)["idempotency_key"] != form["idempotency_key"]  # one per page load
    first = client.post(reverse("quotes:create"), form)
    second = client.post(reverse("quotes:create"), form)  # a double click
    assert first.status_code == second.status_code == 302
    assert first["Location"] == second["Location"]
    assert Quote.objects.count() == 1


def test_back_after_saving_then_save_again_leads_to_the_saved_quote(users, catalog, settings, tmp_path):
    # Back shows the first-loaded form again with the typed customer; the browser asks which quote
    # the saved form made (static/js/configurator.js, on pageshow) and opens it.  Posting it again
    # with a different configuration is the same quote, not a second one.
    settings.MEDIA_ROOT = tmp_path
    client = Client(HTTP_ACCEPT_LANGUAGE="en")
    client.force_login(users["engineer"])
    form = configurator_form(client)
    saved = client.post(reverse("quotes:create"), form)
    quote = Quote.objects.get()
    answer = client.get(reverse("quotes:created_by_key", args=[form["idempotency_key"]]))
    assert answer.status_code == 200 and answer.json()["url"] == quote.get_absolute_url() == saved["Location"]
    stale = {**form, "request_json": json.dumps({**REQUEST, "topology": {"kind": "single", "nodes": 4}})}
    again = client.post(reverse("quotes:create"), stale)
    assert again["Location"] == quote.get_absolute_url() and Quote.objects.count() == 1
    # Another engineer's key, or one nobody used, answers 404.
    other = Client()
    other.force_login(users["engineer2"])
    assert other.get(reverse("quotes:created_by_key", args=[form["idempotency_key"]])).status_code == 404
    assert client.get(reverse("quotes:created_by_key", args=["f" * 32])).status_code == 404
    # The page's script knows where to ask.
    page = client.get("/").content.decode()
    assert 'data-created-url="/quotes/created/__key__/"' in page


def test_a_customer_name_with_a_line_break_is_refused_before_any_notice(
    users, catalog, settings, tmp_path, django_capture_on_commit_callbacks
):
    # Finding 10: the name went into the subject, Django refused the header (BadHeaderError),
    # and the approval request was only logged.  A name is printed on one line as typed, so a
    # line break is refused at creation (400 naming it) and no notice goes out.
    from django.core import mail

    settings.MEDIA_ROOT = tmp_path
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    users["manager"].email = "manager@example.com"
    users["manager"].save()
    client = Client(HTTP_ACCEPT_LANGUAGE="en")
    client.force_login(users["engineer"])
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            reverse("quotes:create"),
            {
                "request_json": json.dumps(REQUEST),
                "customer_name": "Bank\r\nBcc: all@example.com",
                "discount": "0.15",
            },
        )
    assert response.status_code == 400
    assert "Remove the line breaks and control characters (U+000A, U+000D)" in response.content.decode()
    assert mail.outbox == []
