"""docker-compose.yml cannot be started here (no Docker engine), so check its
shape: the four services, their health checks, and that every command they
run exists in the project."""

from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def test_services_are_web_worker_db_redis():
    assert set(COMPOSE["services"]) == {"web", "worker", "db", "redis"}


@pytest.mark.parametrize("name", ["web", "worker", "db", "redis"])
def test_every_service_has_a_health_check(name):
    check = COMPOSE["services"][name]["healthcheck"]["test"]
    assert check[0] == "CMD" and len(check) > 1


def test_web_runs_migrations_then_gunicorn_on_the_project_wsgi():
    command = COMPOSE["services"]["web"]["command"]
    assert "python manage.py migrate" in command
    assert "gunicorn config.wsgi:application" in command
    assert (ROOT / "config" / "wsgi.py").is_file()
    assert "/healthz" in " ".join(COMPOSE["services"]["web"]["healthcheck"]["test"])


def test_worker_runs_celery_on_the_project_app():
    command = COMPOSE["services"]["worker"]["command"]
    assert command.startswith("celery -A config worker")
    from config.celery import app

    assert app.main == "config"


def test_app_services_wait_for_healthy_db_and_redis_and_share_the_pdf_volume():
    for name in ("web", "worker"):
        service = COMPOSE["services"][name]
        assert service["depends_on"] == {
            "db": {"condition": "service_healthy"},
            "redis": {"condition": "service_healthy"},
        }
        assert "pdfs:/app/media" in service["volumes"]
        env_file = ROOT / service["env_file"].replace("production.env", "production.env.example")
        assert env_file.is_file()
    assert set(COMPOSE["volumes"]) == {"pgdata", "pdfs"}
    assert "pgdata:/var/lib/postgresql/data" in COMPOSE["services"]["db"]["volumes"]


def test_env_example_names_every_required_production_variable():
    text = (ROOT / "deploy" / "production.env.example").read_text()
    for name in ("SECRET_KEY", "ALLOWED_HOSTS", "DATABASE_URL", "CELERY_BROKER_URL"):
        assert f"\n{name}=" in text


def test_manage_py_commands_named_in_compose_and_makefile_exist():
    from django.core.management import get_commands

    commands = set(get_commands())
    wanted = {"migrate", "load_catalog", "create_demo_users", "compilemessages"}
    assert wanted <= commands, wanted - commands
    makefile = (ROOT / "Makefile").read_text()
    for name in ("load_catalog", "create_demo_users", "migrate"):
        assert f"manage.py {name}" in makefile


def test_dockerfile_installs_the_fast_font_subsetter():
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert "libharfbuzz-subset0" in dockerfile and "fonts-noto-cjk" in dockerfile
