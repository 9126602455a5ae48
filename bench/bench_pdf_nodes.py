"""Proposal size and render time against the node count: the basis of ``PDF_MAX_NODES`` (issue 13).

Run: ``.venv/bin/python bench/bench_pdf_nodes.py [node counts…]`` (default 8 64 128 256).
Creates a throw-away database with the seeded catalog, plans Kimi K3 on N ×
Atlas 800 A3 (single cluster, the planner's own layout) through
``configurator.planning.quoting.plan_for_quote``, creates the quote and times
``render_proposal_pdf``; prints pages (pdfinfo), seconds and MB per node
count.  Figures only, no assertion.  The ceiling keeps one render within
about a quarter of a minute, so one engineer's document cannot hold the
shared worker (2 renders per user at most) for long.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from io import StringIO
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("LOG_LEVEL", "WARNING")

import django  # noqa: E402

django.setup()

from django.db import connection  # noqa: E402
from django.test.utils import setup_test_environment  # noqa: E402


def pages(pdf: bytes) -> str:
    try:
        done = subprocess.run(["pdfinfo", "-"], input=pdf, capture_output=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return "?"
    match = re.search(r"^Pages:\s+(\d+)", done.stdout.decode(), re.M)
    return match.group(1) if match else "?"


def main() -> int:
    counts = [int(a) for a in sys.argv[1:]] or [8, 64, 128, 256]
    setup_test_environment()
    connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    try:
        from django.contrib.auth import get_user_model
        from django.core.management import call_command

        from accounts.services import demo_users_create
        from configurator.planning.quoting import plan_for_quote
        from documents.pdf import render_proposal_pdf
        from quotes.services.quotes import quote_create_from_configuration

        call_command("load_catalog", stdout=StringIO())
        demo_users_create()
        engineer = get_user_model().objects.get(username="engineer")
        print("case: Kimi K3 on N × Atlas 800 A3, single cluster, English proposal")
        for nodes in counts:
            request = {
                "model": "kimi-k3",
                "server": "atlas-800-a3",
                "topology": {"kind": "single", "nodes": nodes},
            }
            resolved, result, prices, usd_rate, currency = plan_for_quote(request)
            quote = quote_create_from_configuration(
                by=engineer, customer=f"Bench {nodes}", request_json=request, resolved_json=resolved,
                result_json=result, prices_json=prices, usd_rate=usd_rate, currency=currency, language="en",
            )  # fmt: skip
            revision = quote.revisions.get()
            t0, c0 = time.perf_counter(), time.process_time()
            pdf = render_proposal_pdf(revision)
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
            print(
                f"{nodes:5d} nodes: {pages(pdf):>4s} pages, {wall:6.2f} s (CPU {cpu:.2f} s), {len(pdf) / 1e6:.2f} MB"
            )
        try:
            print(f"load average while measuring: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
        except OSError:
            pass
    finally:
        connection.creation.destroy_test_db(connection.settings_dict["NAME"], verbosity=0)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
