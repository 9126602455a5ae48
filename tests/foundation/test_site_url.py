"""Absolute links (notifications, e-mails) come from one setting, ``SITE_URL``, and ``make run``
sets it to the address it serves on, so a link never points at port 8000 while the app runs on
another (README, "The two commands")."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _make_run_commands(*args: str) -> list[str]:
    """The commands ``make run`` would execute (``make -n`` prints them and runs none)."""
    env = {k: v for k, v in os.environ.items() if k not in {"SITE_URL", "HOST", "PORT"}}
    out = subprocess.run(
        ["make", "-n", "run", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    return [line for line in out.stdout.splitlines() if "runserver" in line]


def test_make_run_points_links_at_the_address_it_serves_on():
    (line,) = _make_run_commands("HOST=10.20.30.40", "PORT=9001")
    assert line.startswith("SITE_URL='http://10.20.30.40:9001' ")
    assert line.endswith("runserver 10.20.30.40:9001")


def test_make_run_keeps_a_site_url_the_operator_names():
    (line,) = _make_run_commands("HOST=0.0.0.0", "SITE_URL=https://presales.example.cn")
    assert line.startswith("SITE_URL='https://presales.example.cn' ")


def test_settings_take_site_url_from_the_environment():
    env = {k: v for k, v in os.environ.items() if k not in {"DJANGO_ENV", "DATABASE_URL"}}
    env["SITE_URL"] = "http://192.0.2.7:8123"
    code = (
        "import django,os;os.environ['DJANGO_SETTINGS_MODULE']='config.settings';django.setup();"
        "from django.conf import settings;print(settings.SITE_URL)"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True)
    assert out.stdout.strip() == "http://192.0.2.7:8123", out.stderr
