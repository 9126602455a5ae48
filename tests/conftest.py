"""Shared fixtures.  Expected figures in tests are computed in the tests themselves."""

import pytest
from django.core.signals import setting_changed
from django.dispatch import receiver


@receiver(setting_changed)
def _celery_follows_the_setting(*, setting, value, **kwargs):
    """``settings.CELERY_TASK_ALWAYS_EAGER = …`` in a test reaches Celery.

    The Celery app copies its configuration from Django's settings once, at its first use in the
    process (config/celery.py ``config_from_object``); a test that overrides the setting afterwards
    would otherwise send its job to the broker — in .ci/run's Redis pass a queue no worker reads — or
    not, depending on which test of the same xdist worker touched Celery first."""
    if setting == "CELERY_TASK_ALWAYS_EAGER":
        from config.celery import app

        app.conf.task_always_eager = bool(value)


@pytest.fixture(autouse=True)
def _no_axes_lockouts(settings):
    # Login throttling is tested on purpose in tests/accounts; elsewhere a test
    # client that logs in many times must not lock itself out.
    settings.AXES_ENABLED = False
    # A fast hasher: the real one (PBKDF2) costs ~0.5 s per password.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker):
    """Load the seeded catalog once per test database."""
    from io import StringIO

    from django.core.management import call_command

    with django_db_blocker.unblock():
        call_command("load_catalog", stdout=StringIO())


@pytest.fixture
def catalog(db):
    """The seeded catalog (reloaded if a transactional test emptied the tables)."""
    from io import StringIO

    from django.core.management import call_command

    from catalog.models import LlmModel

    if not LlmModel.objects.exists():
        call_command("load_catalog", stdout=StringIO())
    _ensure_seller_profile()


def _ensure_seller_profile():
    """The demo seller profile its data migration creates (a transactional test's flush removes it)."""
    import importlib

    from django.apps import apps

    migration = importlib.import_module("proposals.migrations.0002_demo_seller_profile")
    migration.create(apps, None)  # does nothing when a profile exists


@pytest.fixture
def seller(db):
    """The seller profile every proposal prints."""
    from proposals.models import SellerProfile

    _ensure_seller_profile()
    return SellerProfile.current()


@pytest.fixture
def users(db):
    """The demo users, one per role: {"engineer", "engineer2", "manager", "catalog"}."""
    from django.contrib.auth import get_user_model

    from accounts.services import demo_users_create

    demo_users_create()
    User = get_user_model()
    return {
        u.username: u
        for u in User.objects.filter(username__in=["engineer", "engineer2", "manager", "catalog"])
    }


@pytest.fixture(autouse=True)
def _plans_not_shared_between_tests(settings):
    """Each test plans afresh: a test that patches the engine or a setting never reads a plan another
    test cached (configurator/port/plan_cache.py keys on the request, the catalog version and the day).
    The shared tier too: under the PostgreSQL pass it is Redis, which outlives a test and a run (every
    test database loads the same catalog version), so a test reads a shared plan only where it sets
    one up itself (tests/configurator/test_plan_cache.py)."""
    from configurator.port import plan_cache

    settings.CACHES = {alias: conf for alias, conf in settings.CACHES.items() if alias != plan_cache.ALIAS}
    plan_cache.clear()
    yield
    plan_cache.clear()
