"""Fixtures of the auto-planner tests: the seeded catalog and a logged-in sales engineer."""

from io import StringIO

import pytest
from django.core.management import call_command


@pytest.fixture
def seeded(db):
    """The seeded catalog, loaded with ``load_catalog`` unless the test database already has it."""
    from catalog.models import LlmModel, ServerModel

    if not (LlmModel.objects.filter(slug="kimi-k3").exists() and ServerModel.objects.exists()):
        call_command("load_catalog", stdout=StringIO())


@pytest.fixture
def engineer(client, seeded, users):
    client.force_login(users["engineer"])
    return client
