#!/usr/bin/env python
"""Write ``tests/golden/plans/*.json``: the plan JSON of every seeded configuration (issue 20).

    .venv/bin/python scripts/update_golden.py

Plans in a throw-away test database loaded with the seeded catalog (``load_catalog``), so the
developer's own database is never touched.  Run it only when a plan is meant to change, and list
every changed figure with its reason in the commit message (``git diff tests/golden/plans``
shows them): the golden files exist to prove that a restructuring changed nothing else.
"""

from __future__ import annotations

import json
import os
import sys
from io import StringIO
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "golden" / "plans"


def main() -> int:
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection
    from django.test.utils import setup_test_environment, teardown_test_environment

    from tests.golden import golden_cases

    setup_test_environment()
    old_name = connection.settings_dict["NAME"]
    connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        call_command("load_catalog", stdout=StringIO())
        GOLDEN.mkdir(parents=True, exist_ok=True)
        cases = golden_cases.all_requests()
        for stale in GOLDEN.glob("*.json"):
            if stale.stem not in cases:
                stale.unlink()
        for name, request in cases.items():
            doc = {"request": request, "plan": golden_cases.plan_json(request)}
            text = json.dumps(doc, ensure_ascii=False, indent=1, sort_keys=True) + "\n"
            (GOLDEN / f"{name}.json").write_text(text, encoding="utf-8")
            print(f"{name}: ok={doc['plan']['ok']}, {len(doc['plan']['figures'])} figures")
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)
        teardown_test_environment()
    return 0


if __name__ == "__main__":
    sys.exit(main())
