"""The web and Celery workers are sized from the cores the container may use (config/cores.py,
deploy/gunicorn.conf.py)."""

from __future__ import annotations

import os
import runpy
from pathlib import Path

import pytest

from config import cores

CONF = Path(__file__).resolve().parents[2] / "deploy" / "gunicorn.conf.py"


@pytest.mark.parametrize(
    ("text", "expected"),
    [("max 100000", None), ("200000 100000", 2.0), ("150000 100000", 1.5), ("50000 100000", 0.5), ("", None)],
)
def test_a_cgroup_quota_reads_as_cores(text, expected):
    assert cores.quota_cores(text) == expected


def test_a_quota_below_the_machine_limits_the_cores(monkeypatch, tmp_path):
    cpu_max = tmp_path / "cpu.max"
    cpu_max.write_text("150000 100000\n")  # docker compose "cpus: 1.5"
    monkeypatch.setattr(cores, "CPU_MAX", cpu_max)
    monkeypatch.setattr(os, "cpu_count", lambda: 16)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(16)))
    assert cores.available_cores() == 2  # 1.5 cores: two processes still share them
    cpu_max.write_text("max 100000\n")
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2})  # cpuset 0-2
    assert cores.available_cores() == 3


def test_gunicorn_runs_one_worker_a_core_with_threads(monkeypatch):
    monkeypatch.delenv("WEB_WORKERS", raising=False)
    monkeypatch.delenv("WEB_THREADS", raising=False)
    conf = runpy.run_path(str(CONF))
    assert conf["workers"] == cores.available_cores()
    assert conf["worker_class"] == "gthread" and conf["threads"] == 2
    monkeypatch.setenv("WEB_WORKERS", "5")
    assert runpy.run_path(str(CONF))["workers"] == 5
    monkeypatch.setenv("WEB_THREADS", "0")
    with pytest.raises(ValueError, match="WEB_THREADS"):
        runpy.run_path(str(CONF))
