import pytest
from django.urls import reverse


@pytest.mark.django_db
def test_healthz_reports_database_and_broker_as_json_without_login(client, settings):
    response = client.get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert body["database"]["ok"] is True
    assert body["broker"]["ok"] is True


@pytest.mark.django_db
def test_healthz_reports_an_unreachable_broker_as_503(client, settings):
    settings.CELERY_TASK_ALWAYS_EAGER = False
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/0"  # nothing listens on port 1
    response = client.get("/healthz")
    assert response.status_code == 503
    assert response.json()["broker"]["ok"] is False


@pytest.mark.django_db
@pytest.mark.parametrize("url", ["/", "/quotes/", "/admin/"])
def test_pages_require_login(client, url):
    response = client.get(url)
    assert response.status_code == 302
    assert "login" in response["Location"]


@pytest.mark.django_db
def test_login_page_is_public_and_has_a_csrf_token(client):
    response = client.get(reverse("login"))
    assert response.status_code == 200
    assert b"csrfmiddlewaretoken" in response.content


@pytest.mark.django_db
def test_demo_user_can_log_in_and_see_the_configurator(client):
    from accounts.services import DEMO_USERS, demo_users_create

    demo_users_create()
    engineer = DEMO_USERS[0]
    response = client.post(reverse("login"), {"username": engineer.username, "password": engineer.password})
    assert response.status_code == 302
    assert client.get("/").status_code == 200


@pytest.mark.django_db
def test_language_switch_sets_chinese_and_english(client):
    from accounts.services import DEMO_USERS, demo_users_create

    demo_users_create()
    client.login(username=DEMO_USERS[0].username, password=DEMO_USERS[0].password)
    client.post("/i18n/setlang/", {"language": "en", "next": "/"})
    assert b'lang="en"' in client.get("/").content
    client.post("/i18n/setlang/", {"language": "zh-hans", "next": "/"})
    page = client.get("/").content.decode()
    assert 'lang="zh-hans"' in page
    assert "配置器" in page  # the navigation is translated


def test_favicon_answers_without_login_on_every_page(client):
    # Issue 31: /favicon.ico was a 404 on every page; the admin's pages do not carry base.html's <link rel="icon">.
    response = client.get("/favicon.ico")
    assert response.status_code == 301 and response["Location"].endswith("favicon.svg")
    from django.contrib.staticfiles import finders

    assert finders.find("favicon.svg"), "static/favicon.svg is what the redirect points at"
