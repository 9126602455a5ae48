"""The production profile: refuses to start without its variables and passes
``check --deploy`` with them."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROD_ENV = {
    "DJANGO_ENV": "production",
    "SECRET_KEY": "k" * 20 + "-production-test-key-" + "q" * 30,
    "ALLOWED_HOSTS": "configurator.example.internal",
    "DATABASE_URL": "sqlite:////tmp/configurator-check.db",
    "CELERY_BROKER_URL": "redis://127.0.0.1:6379/0",
}


def _manage(*args, env):
    base = {k: v for k, v in os.environ.items() if k not in PROD_ENV and k != "DEBUG"}
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_production_profile_passes_check_deploy_without_warnings():
    result = _manage("check", "--deploy", "--fail-level", "WARNING", env=PROD_ENV)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


@pytest.mark.parametrize("missing", ["SECRET_KEY", "ALLOWED_HOSTS", "DATABASE_URL", "CELERY_BROKER_URL"])
def test_production_profile_names_a_missing_variable(missing):
    env = {k: v for k, v in PROD_ENV.items() if k != missing}
    result = _manage("check", env=env)
    assert result.returncode != 0
    assert f"{missing} must be set when DJANGO_ENV=production" in result.stderr


def test_unknown_profile_is_refused():
    result = _manage("check", env={"DJANGO_ENV": "staging"})
    assert result.returncode != 0
    assert "DJANGO_ENV must be 'embedded' or 'production'" in result.stderr


def test_embedded_default_is_sqlite_with_eager_celery_and_debug_off():
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"DATABASE_URL", "CELERY_BROKER_URL", "DEBUG", "DJANGO_ENV"}
    }
    code = (
        "import django,os;os.environ['DJANGO_SETTINGS_MODULE']='config.settings';django.setup();"
        "from django.conf import settings as s;"
        "print(s.DATABASES['default']['ENGINE'], s.CELERY_TASK_ALWAYS_EAGER, s.DEBUG)"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True)
    assert out.stdout.split() == ["django.db.backends.sqlite3", "True", "False"], out.stderr
