"""Fixtures for the catalog tests.  Configs come from tests/data (never ../shared)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

CONFIG_DIR = Path(__file__).resolve().parent.parent / "data" / "model-configs"


def load_config(name: str) -> dict:
    return json.loads((CONFIG_DIR / f"{name}.config.json").read_text(encoding="utf-8"))


@pytest.fixture
def seeded(db):
    """The seeded catalog, loaded once for the test."""
    from catalog.services import load_catalog_seed

    return load_catalog_seed()
