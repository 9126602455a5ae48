"""Set up Django on a scratch SQLite database with the seeded catalog, for benchmarks."""

from __future__ import annotations

import os
import sys
import tempfile
from io import StringIO
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def setup(db_dir: str | None = None) -> None:
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    if "DATABASE_URL" not in os.environ:
        os.environ["SQLITE_PATH"] = str(Path(db_dir or tempfile.mkdtemp(prefix="bench-")) / "bench.sqlite3")
    os.environ["AXES_ENABLED"] = "0"
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    call_command("load_catalog", stdout=StringIO())
    call_command("create_demo_users", stdout=StringIO())


def report(name: str, value: float, unit: str, target: str = "") -> None:
    """One machine-readable line that bench/run_all.py collects into its table."""
    print(f"BENCH\t{name}\t{value:.3f}\t{unit}\t{target}")
