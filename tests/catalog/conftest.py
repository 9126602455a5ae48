"""Fixtures for the catalog tests.  Configs come from tests/data (copies of the public Hugging Face
configs; nothing outside the repository).

The project's root conftest may load the seeded catalog once per test database,
so tests that need an empty catalog ask for ``empty_catalog`` and tests that
need the seed ask for ``seeded``; each works whichever state it starts from.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

CONFIG_DIR = Path(__file__).resolve().parent.parent / "data" / "model-configs"


def load_config(name: str) -> dict:
    return json.loads((CONFIG_DIR / f"{name}.config.json").read_text(encoding="utf-8"))


@pytest.fixture
def empty_catalog(db):
    """No catalog rows at all (inside the test's transaction, so rolled back afterwards)."""
    from catalog.models import (
        Accelerator,
        LlmModel,
        PriceItem,
        PriceList,
        RackType,
        Scenario,
        ServerModel,
        ServerNic,
        SiteProfile,
        SwitchModel,
        TopologyTemplate,
    )

    for model in (
        PriceItem,
        PriceList,
        Scenario,
        LlmModel,
        TopologyTemplate,
        SiteProfile,
        RackType,
        SwitchModel,
        ServerNic,
        ServerModel,
        Accelerator,
    ):
        model.objects.all().delete()


@pytest.fixture
def seeded(db, request):
    """The seeded catalog exactly as load_catalog leaves it (reloaded from empty if anything differs)."""
    from catalog.services import load_catalog_seed

    report = load_catalog_seed()
    if report.created or report.updated or report.skipped:
        request.getfixturevalue("empty_catalog")
        report = load_catalog_seed()
    return report


@pytest.fixture(autouse=True)
def _english(settings):
    """These tests read English validation messages; the app's default is zh-hans."""
    from django.utils import translation

    settings.LANGUAGE_CODE = "en"
    with translation.override("en"):
        yield
