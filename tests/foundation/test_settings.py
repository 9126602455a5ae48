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


@pytest.mark.parametrize(
    "key",
    [
        "change-me-to-a-long-random-string",  # deploy/production.env.example, verbatim
        "CHANGE-ME-" + "x" * 60,
        "embedded-only-not-secret-" + "x" * 40,  # the embedded default
    ],
)
def test_production_refuses_the_example_secret_key(key):
    """Issue 13: copying the example env file unedited must not start a production site."""
    result = _manage("check", env={**PROD_ENV, "SECRET_KEY": key})
    assert result.returncode != 0
    assert "SECRET_KEY is still the example value" in result.stderr


def test_the_example_env_files_secret_key_is_one_production_refuses():
    example = (ROOT / "deploy" / "production.env.example").read_text(encoding="utf-8")
    key = next(line.split("=", 1)[1] for line in example.splitlines() if line.startswith("SECRET_KEY="))
    result = _manage("check", env={**PROD_ENV, "SECRET_KEY": key})
    assert result.returncode != 0 and "SECRET_KEY is still the example value" in result.stderr


def _ignored(rules_file: str, path: str) -> bool:
    """gitignore semantics (also .dockerignore's, for these simple patterns): the last matching rule wins."""
    import fnmatch

    verdict = False
    for raw in (ROOT / rules_file).read_text(encoding="utf-8").splitlines():
        rule = raw.strip()
        if not rule or rule.startswith("#"):
            continue
        negate = rule.startswith("!")
        pattern = rule.lstrip("!").rstrip("/").lstrip("/")
        parts = path.split("/")
        candidates = ["/".join(parts[: i + 1]) for i in range(len(parts))] + parts
        if "/" not in pattern:
            hit = any(fnmatch.fnmatch(p, pattern) for p in parts)
        else:
            hit = any(fnmatch.fnmatch(c, pattern.replace("**/", "*")) for c in candidates)
        if hit:
            verdict = not negate
    return verdict


@pytest.mark.parametrize("rules_file", [".gitignore", ".dockerignore"])
@pytest.mark.parametrize(
    "path",
    [
        "deploy/production.env",
        "deploy/staging.env",
        "db.sqlite3",
        "media/proposals/Q-1.pdf",
        ".venv/bin/python",
    ],
)
def test_secrets_databases_and_media_stay_out_of_git_and_the_image(rules_file, path):
    """Issue 13: ``COPY . .`` copied deploy/production.env, db.sqlite3 and media/ into the image."""
    assert _ignored(rules_file, path), f"{path} is not covered by {rules_file}"


@pytest.mark.parametrize("rules_file", [".gitignore", ".dockerignore"])
def test_the_example_env_file_is_kept(rules_file):
    assert not _ignored(rules_file, "deploy/production.env.example")


def test_git_itself_ignores_a_real_env_file():
    import shutil as _shutil

    if _shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    done = subprocess.run(
        ["git", "check-ignore", "-q", "deploy/production.env"], cwd=ROOT, capture_output=True, timeout=30
    )
    assert done.returncode == 0
