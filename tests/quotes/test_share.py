"""Customer share links (issue 18): no log-in, customer edition only, every view logged,
acceptance and questions recorded and passed on, revocation and expiry are 404s.

E-mails go through Django's locmem backend (``mail.outbox``)."""

from __future__ import annotations

import datetime as dt
import json
import re
from decimal import Decimal

import pytest
from django.core import mail
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from quotes.models import AuditEvent, Quote
from quotes.statuses import QuoteStatus, RevisionStatus
from quotes.workflow.models import CustomerAcceptance, CustomerQuestion, Notification, ShareLink, ShareView

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
SHARE_URL = re.compile(r'value="(http://testserver/quotes/shared/([A-Za-z0-9_-]+)/)"')


@pytest.fixture
def mailbox(settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    settings.LANGUAGE_CODE = "en"  # notices are written in the site's language; asserted in English here
    return mail.outbox


@pytest.fixture
def quote(client, users, catalog, settings, tmp_path, mailbox):
    settings.MEDIA_ROOT = tmp_path
    settings.CELERY_TASK_ALWAYS_EAGER = True
    for name in ("engineer", "manager", "engineer2"):
        users[name].email = f"{name}@example.com"
        users[name].save()
    client.force_login(users["engineer"])
    response = client.post(
        reverse("quotes:create"), {"request_json": json.dumps(REQUEST), "customer_name": "Bank of Example"}
    )
    assert response.status_code == 302
    return Quote.objects.get()


def share(client, revision, django_capture_on_commit_callbacks) -> tuple[str, str]:
    with django_capture_on_commit_callbacks(execute=True):  # the PDF job is sent on commit
        response = client.post(reverse("quotes:share_create", kwargs={"pk": revision.pk}))
    assert response.status_code == 302, response.content.decode()[:2000]
    page = client.get(response["Location"]).content.decode()
    url, token = SHARE_URL.search(page).groups()
    # Shown once: the next visit of the page no longer has it.
    again = client.get(response["Location"]).content.decode()
    assert token not in again
    return url, token


def test_a_share_link_shows_the_customer_edition_without_log_in(
    client, quote, users, django_capture_on_commit_callbacks
):
    r1 = quote.revisions.get()
    other = Quote.objects.create(
        number="Q-2026-9999", year=2026, sequence=9999, title="Secret other deal", customer=quote.customer,
        owner=users["engineer"], team=quote.team, currency="CNY", language="en", valid_until=quote.valid_until,
    )  # fmt: skip
    url, token = share(client, r1, django_capture_on_commit_callbacks)
    # Creating the link sent the draft quote: R1 was issued first.
    quote.refresh_from_db()
    r1.refresh_from_db()
    assert quote.status == QuoteStatus.SENT and r1.status == RevisionStatus.ISSUED
    # Only a hash of the 256-bit token is stored.
    link = ShareLink.objects.get()
    assert len(token) >= 43 and token not in json.dumps(list(ShareLink.objects.values()), default=str)
    assert not AuditEvent.objects.filter(detail__icontains=token).exists()

    customer = Client()  # a fresh client: no session, no log-in
    response = customer.get(url)
    assert response.status_code == 200
    html = response.content.decode()
    assert "Bank of Example" in html and r1.number in html
    assert response["Cache-Control"] == "no-store" and response["Referrer-Policy"] == "same-origin"
    # The customer edition: the priced lines and totals in the customer's language …
    assert f"{r1.net_total:,.2f}" in html and f"{r1.list_total:,.2f}" in html
    server = r1.lines.get(category="server")
    assert (server.description_zh if quote.language == "zh-hans" else server.description_en) in html
    # … and nothing internal: no other quote, no engine codes, no internal pages or margins.
    assert other.number not in html and other.title not in html
    for check in r1.result_json.get("checks") or []:
        assert check["code"] not in html
    for internal in ("/quotes/", "/admin/", "/configurator", "/planner", "Margin", "seed", "suggested fix"):
        assert internal not in re.sub(r"/quotes/shared/[A-Za-z0-9_-]+/", "", html), internal
    if r1.cost_total is not None:  # the seller's cost never shows
        assert f"{r1.cost_total:,.2f}" not in html
    # The proposal PDF downloads from the link.
    response = customer.get(reverse("quotes:share_pdf", args=[token]))
    assert response.status_code == 200 and response["Content-Type"] == "application/pdf"
    assert b"".join(response.streaming_content).startswith(b"%PDF")
    # Every view is logged.
    assert list(ShareView.objects.filter(link=link).order_by("at").values_list("what", flat=True)) == [
        "page",
        "pdf",
    ]
    assert ShareView.objects.first().ip == "127.0.0.1"


def test_the_customer_accepts_and_the_quote_becomes_accepted(
    client, quote, users, mailbox, django_capture_on_commit_callbacks
):
    r1 = quote.revisions.get()
    url, token = share(client, r1, django_capture_on_commit_callbacks)
    mailbox.clear()
    customer = Client(REMOTE_ADDR="203.0.113.9")
    accept = reverse("quotes:share_accept", args=[token])
    # Missing confirmation: a 400 that says what is missing, nothing recorded.
    response = customer.post(accept, {"name": "Li Wei", "title": "CIO"})
    assert response.status_code == 400 and "tick the box" in response.content.decode()
    assert not CustomerAcceptance.objects.exists()
    with django_capture_on_commit_callbacks(execute=True):
        response = customer.post(accept, {"name": "Li Wei", "title": "CIO", "confirm": "on"})
    assert response.status_code == 302
    acceptance = CustomerAcceptance.objects.get()
    assert (acceptance.revision_id, acceptance.name, acceptance.title, acceptance.ip) == (
        r1.pk,
        "Li Wei",
        "CIO",
        "203.0.113.9",
    )
    assert r1.number in acceptance.confirmation and "Li Wei" in acceptance.confirmation
    assert abs((timezone.now() - acceptance.accepted_at).total_seconds()) < 60
    quote.refresh_from_db()
    assert quote.status == QuoteStatus.ACCEPTED
    # The engineer hears of it by e-mail and in the app.
    assert [m.to for m in mailbox] == [["engineer@example.com"]]
    assert "Li Wei" in mailbox[0].body
    assert Notification.objects.filter(recipient=users["engineer"], kind="customer_accepted").count() == 1
    # A second acceptance is refused (the page says it was accepted).
    response = customer.post(accept, {"name": "X", "title": "Y", "confirm": "on"})
    assert response.status_code == 400 and CustomerAcceptance.objects.count() == 1
    assert "Accepted by Li Wei (CIO)" in customer.get(url).content.decode()


def test_a_customer_question_reaches_the_engineer(
    client, quote, users, mailbox, django_capture_on_commit_callbacks
):
    r1 = quote.revisions.get()
    url, token = share(client, r1, django_capture_on_commit_callbacks)
    mailbox.clear()
    customer = Client()
    ask = reverse("quotes:share_question", args=[token])
    assert customer.post(ask, {"name": "Li Wei", "text": ""}).status_code == 400
    with django_capture_on_commit_callbacks(execute=True):
        response = customer.post(
            ask, {"name": "Li Wei", "contact": "li@bank.example", "text": "=1+1 Can you deliver in May?"}
        )
    assert response.status_code == 302
    question = CustomerQuestion.objects.get()
    assert question.text == "=1+1 Can you deliver in May?"
    assert [m.to for m in mailbox] == [["engineer@example.com"]]
    assert "deliver in May" in mailbox[0].body
    page = client.get(reverse("quotes:detail", kwargs={"pk": quote.pk})).content.decode()
    assert "Can you deliver in May?" in page


def test_revoked_expired_and_unknown_links_are_404(client, quote, django_capture_on_commit_callbacks):
    r1 = quote.revisions.get()
    url, token = share(client, r1, django_capture_on_commit_callbacks)
    customer = Client()
    assert customer.get(url).status_code == 200
    link = ShareLink.objects.get()
    response = client.post(reverse("quotes:share_revoke", kwargs={"pk": link.pk}))
    assert response.status_code == 302
    for path in (
        url,
        reverse("quotes:share_pdf", args=[token]),
        reverse("quotes:share_accept", args=[token]),
        reverse("quotes:share_question", args=[token]),
    ):
        response = (
            customer.get(path) if "accept" not in path and "question" not in path else customer.post(path)
        )
        assert response.status_code == 404, path
    # Expiry: a second link, moved past its expiry date.
    url2, token2 = share(client, r1, django_capture_on_commit_callbacks)
    assert customer.get(url2).status_code == 200
    ShareLink.objects.filter(revoked_at__isnull=True).update(
        expires_at=timezone.now() - dt.timedelta(seconds=1)
    )
    assert customer.get(url2).status_code == 404
    # Unknown and malformed tokens.
    assert customer.get(reverse("quotes:share_page", args=["x" * 43])).status_code == 404
    assert customer.get(reverse("quotes:share_page", args=["x"])).status_code == 404


def test_only_an_editor_creates_or_revokes_links(client, quote, users, django_capture_on_commit_callbacks):
    r1 = quote.revisions.get()
    share(client, r1, django_capture_on_commit_callbacks)
    link = ShareLink.objects.get()
    client.force_login(users["engineer2"])  # another team
    assert client.post(reverse("quotes:share_create", kwargs={"pk": r1.pk})).status_code == 404
    assert client.post(reverse("quotes:share_revoke", kwargs={"pk": link.pk})).status_code == 404
    link.refresh_from_db()
    assert link.revoked_at is None


def test_a_draft_revision_that_is_not_the_latest_cannot_be_shared(client, quote, users):
    r1 = quote.revisions.get()
    quote.refresh_from_db()
    response = client.post(
        reverse("quotes:revise", kwargs={"pk": r1.pk}),
        {"version": quote.version, "discount": "0", "note": "x"},
    )
    assert response.status_code == 302
    response = client.post(reverse("quotes:share_create", kwargs={"pk": r1.pk}))
    assert response.status_code == 400 and "issue" in response.content.decode()
    assert not ShareLink.objects.exists()


def test_approval_request_and_decision_are_notified_by_email(
    client, users, catalog, mailbox, settings, django_capture_on_commit_callbacks
):
    for name in ("engineer", "manager"):
        users[name].email = f"{name}@example.com"
        users[name].save()
    client.force_login(users["engineer"])
    mailbox.clear()
    with django_capture_on_commit_callbacks(execute=True):  # e-mails leave after the commit
        response = client.post(
            reverse("quotes:create"),
            {"request_json": json.dumps(REQUEST), "customer_name": "Discount Bank", "discount": "15%"},
        )
    assert response.status_code == 302
    quote = Quote.objects.get()
    r1 = quote.revisions.get()
    assert r1.approval_state == "pending" and r1.discount == Decimal("0.15")
    assert [m.to for m in mailbox] == [["manager@example.com"]]
    assert r1.number in mailbox[0].subject
    assert Notification.objects.get(recipient=users["manager"]).kind == "approval_requested"
    client.force_login(users["manager"])
    assert "Notifications (1)" in client.get(reverse("quotes:list")).content.decode()
    # In the default (Chinese) site language the notice reads in Chinese.
    from quotes.workflow import notify

    settings.LANGUAGE_CODE = "zh-hans"
    assert notify.approval_requested(r1)[0].subject.startswith("折扣审批申请")
    settings.LANGUAGE_CODE = "en"
    mailbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            reverse("quotes:approve", kwargs={"pk": r1.pk}),
            {"version": quote.version, "comment": "ok for Q2"},
        )
    assert response.status_code == 302
    assert [m.to for m in mailbox] == [["engineer@example.com"]]
    assert "approved" in mailbox[0].subject and "ok for Q2" in mailbox[0].body
    client.force_login(users["engineer"])
    page = client.get(reverse("quotes:notifications")).content.decode()
    assert "Discount approved" in page
    client.post(reverse("quotes:notifications"))
    assert not Notification.objects.filter(recipient=users["engineer"], read_at__isnull=True).exists()


def test_the_customer_page_speaks_the_quotes_language_only(client, users, catalog, settings, tmp_path):
    """A Chinese quote's customer page is Chinese with no stray English (figures, the quote
    number, currency code, SKU-free descriptions and "PDF" aside)."""
    settings.MEDIA_ROOT = tmp_path
    client.force_login(users["engineer"])
    response = client.post(
        reverse("quotes:create"),
        {"request_json": json.dumps(REQUEST), "customer_name": "浦东发展银行", "language": "zh-hans"},
    )
    assert response.status_code == 302
    quote = Quote.objects.get()
    assert quote.language == "zh-hans"
    response = client.post(reverse("quotes:share_create", kwargs={"pk": quote.revisions.get().pk}))
    url = SHARE_URL.search(client.get(response["Location"]).content.decode()).group(1)
    html = Client(HTTP_ACCEPT_LANGUAGE="en").get(url).content.decode()
    body = re.sub(
        r"<(script|style)[^>]*>.*?</\1>", " ", html.split("<body", 1)[1].split(">", 1)[1], flags=re.S
    )
    text = re.sub(r"<[^>]+>", " ", body)
    allowed = {"CNY", "PDF", "UTC", "Atlas", "A3", "LingQu", "RoCE", "QSFP", "DD", "GE", "U", "PDU", "O&M"}
    words = set(re.findall(r"[A-Za-z][A-Za-z&]{1,}", text)) - allowed
    words -= set(re.findall(r"[A-Za-z][A-Za-z&]{1,}", quote.number))
    for line in quote.revisions.get().lines.all():  # product names as the price list spells them in Chinese
        words -= set(re.findall(r"[A-Za-z][A-Za-z&]{1,}", line.description_zh))
    # The engineer's name and team ("prepared by", as the proposal prints it) are names, not interface text.
    from quotes.frozen import revision_prepared_by

    words -= set(re.findall(r"[A-Za-z][A-Za-z&]{1,}", revision_prepared_by(quote.revisions.get())))
    assert words == set(), words
    assert "接受本报价" in text and "浦东发展银行" in text


def test_an_issued_but_unsent_revision_is_sent_when_shared_and_questions_are_limited(
    client, quote, users, django_capture_on_commit_callbacks
):
    r1 = quote.revisions.get()
    assert (
        client.post(reverse("quotes:issue", kwargs={"pk": r1.pk}), {"version": quote.version}).status_code
        == 302
    )
    quote.refresh_from_db()
    assert quote.status == QuoteStatus.DRAFT
    url, token = share(client, r1, django_capture_on_commit_callbacks)
    quote.refresh_from_db()
    assert quote.status == QuoteStatus.SENT  # so the customer can accept it
    customer = Client()
    ask = reverse("quotes:share_question", args=[token])
    for i in range(10):
        assert customer.post(ask, {"name": "Li Wei", "text": f"question {i}"}).status_code == 302
    response = customer.post(ask, {"name": "Li Wei", "text": "one more"})
    assert response.status_code == 400 and "last hour" in response.content.decode()
    assert CustomerQuestion.objects.count() == 10
