"""Issue 31: one language per user — a notice and its e-mail are written in the language the
recipient reads the site in (their last choice in the page's switch, else the site's), with an
absolute link (``SITE_URL``) and the time in the site's time zone with the zone named (the
acceptance notice read "14:14 UTC" beside "22:14" everywhere else)."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from django.core import mail
from django.urls import reverse

from accounts.models import Profile
from accounts.timefmt import local_stamp
from quotes.models import Quote
from quotes.services.sharing import share_create
from quotes.workflow import notify
from quotes.workflow.models import CustomerAcceptance, Notification

pytestmark = pytest.mark.django_db

REQUEST = {"model": "kimi-k3", "server": "atlas-800-a3", "topology": {"kind": "single", "nodes": 4}}


@pytest.fixture
def revision(client, users, catalog, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    settings.CELERY_TASK_ALWAYS_EAGER = True
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    settings.SITE_URL = "https://quotes.example.com"
    settings.TIME_ZONE = "Asia/Shanghai"
    users["engineer"].email = "engineer@example.com"
    users["engineer"].save()
    client.force_login(users["engineer"])
    response = client.post(
        reverse("quotes:create"), {"request_json": json.dumps(REQUEST), "customer_name": "Bank of Example"}
    )
    assert response.status_code == 302
    return Quote.objects.get().revisions.get()


def _accept(revision, by, when: dt.datetime) -> CustomerAcceptance:
    link, _token = share_create(revision=revision, by=by)
    acceptance = CustomerAcceptance.objects.create(
        revision=revision, link=link, name="Zhao Lei", title="CIO", confirmation="ok", ip="203.0.113.7"
    )
    CustomerAcceptance.objects.filter(pk=acceptance.pk).update(accepted_at=when)
    acceptance.refresh_from_db()
    return acceptance


def test_the_switch_remembers_the_language_and_the_notice_follows_it(client, users, revision):
    when = dt.datetime(2026, 12, 1, 14, 14, tzinfo=dt.UTC)  # 22:14 in Asia/Shanghai (UTC+8)
    client.post(reverse("set_language"), {"language": "en", "next": "/"})
    assert Profile.objects.get(user=users["engineer"]).language == "en"
    mail.outbox.clear()
    acceptance = _accept(revision, users["engineer"], when)
    notice = notify.customer_accepted(acceptance)[0]
    assert notice.subject.startswith("Accepted by the customer:")
    assert "2026-12-01 22:14 (UTC+08:00)" in notice.body and "UTC\n" not in notice.body
    assert f"https://quotes.example.com/quotes/{revision.quote_id}/?rev=" in notice.body

    # The same event for a user who switched to Chinese.
    client.post(reverse("set_language"), {"language": "zh-hans", "next": "/"})
    Notification.objects.all().delete()
    notice = notify.customer_accepted(CustomerAcceptance.objects.get(pk=acceptance.pk))[
        0
    ]  # as a new event loads it
    # locale/zh_Hans/workflow.tsv: "Accepted by the customer: …" → "客户已接受：…"
    assert notice.subject.startswith("客户已接受：")


def test_two_recipients_get_their_own_language(users, revision):
    Profile.objects.update_or_create(user=users["engineer"], defaults={"language": "en"})
    Profile.objects.update_or_create(user=users["engineer2"], defaults={"language": "zh-hans"})
    rows = notify.notify(
        recipients=[users["engineer"], users["engineer2"]],
        kind=Notification.Kind.CUSTOMER_QUESTION,
        revision=revision,
        compose=lambda: (notify._("Accepted by the customer"), "body"),
    )
    by_user = {n.recipient.username: n.subject for n in rows}
    assert by_user == {"engineer": "Accepted by the customer", "engineer2": "客户已接受"}


def test_a_user_who_never_chose_gets_the_sites_language(users, revision, settings):
    settings.LANGUAGE_CODE = "zh-hans"
    Profile.objects.filter(user=users["engineer"]).update(language="")
    rows = notify.notify(
        recipients=[users["engineer"]],
        kind=Notification.Kind.CUSTOMER_QUESTION,
        revision=revision,
        compose=lambda: (notify._("Accepted by the customer"), "body"),
    )
    assert rows[0].subject == "客户已接受"


def test_local_stamp_names_the_zone_and_reads_iso_strings(settings):
    settings.TIME_ZONE = "Asia/Shanghai"
    assert local_stamp("2026-12-01T14:14:05+00:00") == "2026-12-01 22:14 (UTC+08:00)"
    assert local_stamp(None) == "" and local_stamp("not a time") == "not a time"
