"""The Celery pool processes render at a lower priority than the web (config/celery.py, README "Sizing the
server"): nice 10 by default, and on Linux with autogroup scheduling the worker's session too, since a
process's nice counts only within its session there; CELERY_NICE 0 leaves the worker as it was."""

from __future__ import annotations

from pathlib import Path

from django.test import override_settings

import config.celery as celery_config


class _Autogroup:
    def __init__(self):
        self.written: list[str] = []

    def exists(self) -> bool:
        return True

    def write_text(self, text: str) -> None:
        self.written.append(text)


def test_a_pool_process_takes_the_lower_priority(monkeypatch):
    niced: list[int] = []
    group = _Autogroup()
    monkeypatch.setattr(celery_config.os, "nice", lambda n: niced.append(n) or n)
    monkeypatch.setattr(
        celery_config, "Path", lambda path: group if path == "/proc/self/autogroup" else Path(path)
    )
    with override_settings(CELERY_WORKER_NICE=10):
        celery_config.lower_priority()
    assert niced == [10] and group.written == ["10"]


def test_nice_zero_leaves_the_worker_as_it_was(monkeypatch):
    niced: list[int] = []
    group = _Autogroup()
    monkeypatch.setattr(celery_config.os, "nice", lambda n: niced.append(n) or n)
    monkeypatch.setattr(celery_config, "Path", lambda path: group)
    with override_settings(CELERY_WORKER_NICE=0):
        celery_config.lower_priority()
    assert niced == [] and group.written == []


def test_a_refused_change_is_logged_not_raised(monkeypatch, caplog):
    def refuse(_n):
        raise PermissionError("not permitted")

    monkeypatch.setattr(celery_config.os, "nice", refuse)
    monkeypatch.setattr(celery_config, "Path", lambda path: _Autogroup())
    with override_settings(CELERY_WORKER_NICE=10):
        celery_config.lower_priority()
    assert "kept its priority" in caplog.text


def test_the_default_is_nice_ten():
    from django.conf import settings

    assert settings.CELERY_WORKER_NICE == 10
