"""Shared fixtures.  Expected figures in tests are computed in the tests themselves."""

import pytest


@pytest.fixture(autouse=True)
def _no_axes_lockouts(settings):
    # Login throttling is tested on purpose in tests/accounts; elsewhere a test
    # client that logs in many times must not lock itself out.
    settings.AXES_ENABLED = False
