"""The CPU cores this process may use, for sizing the web and Celery workers.

``os.cpu_count()`` counts the host's cores; a container limited by ``cpus:`` (a cgroup v2 quota in
``/sys/fs/cgroup/cpu.max``) or pinned by ``cpuset`` has fewer.  The smallest of the three is what a
CPU-bound plan can run on at once.  Only the standard library: gunicorn's configuration imports this
before Django is set up.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

CPU_MAX = Path("/sys/fs/cgroup/cpu.max")


def quota_cores(text: str) -> float | None:
    """Cores a cgroup v2 ``cpu.max`` ("<quota> <period>" or "max <period>") allows; None for no limit."""
    parts = text.split()
    if len(parts) != 2 or parts[0] == "max":
        return None
    try:
        quota, period = int(parts[0]), int(parts[1])
    except ValueError:
        return None
    return quota / period if quota > 0 and period > 0 else None


def available_cores() -> int:
    """Whole cores available to this process (at least 1)."""
    counts = [os.cpu_count() or 1]
    if hasattr(os, "sched_getaffinity"):
        counts.append(len(os.sched_getaffinity(0)))
    try:
        quota = quota_cores(CPU_MAX.read_text())
    except OSError:
        quota = None
    if quota is not None:
        counts.append(max(1, math.ceil(quota)))
    return max(1, min(counts))


def env_int(name: str, default: int) -> int:
    """``name`` from the environment as a positive integer, else ``default``."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    value = int(raw)  # a typo stops the server at start-up with the variable's name in the traceback
    if value < 1:
        raise ValueError(f"{name} must be a positive integer, not {raw!r}")
    return value
