"""Celery application.  Tasks are declared with ``@shared_task`` in the apps."""

import logging
import os
from pathlib import Path

from celery import Celery
from celery.signals import worker_process_init

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("config")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_process_init.connect
def lower_priority(**_kwargs) -> None:
    """A pool process renders at ``CELERY_WORKER_NICE`` (settings): the web answers first (README,
    "Sizing the server"); a worker refused the change (no permission) renders at its own priority."""
    from django.conf import settings

    nice = int(getattr(settings, "CELERY_WORKER_NICE", 0) or 0)
    if nice <= 0:
        return
    try:
        os.nice(nice)
    except OSError as exc:
        logging.getLogger(__name__).warning("Celery pool process kept its priority: %s", exc)
    # Linux with autogroup scheduling (a session per group, the default on desktops and many servers)
    # shares the CPU between sessions first, so a process's own nice counts only within its session:
    # the worker's session takes the same lower priority.  Containers are apart in the same way; compose
    # gives the worker a lower cpu_shares (docker-compose.yml).
    autogroup = Path("/proc/self/autogroup")
    if autogroup.exists():
        try:
            autogroup.write_text(str(nice))
        except OSError as exc:
            logging.getLogger(__name__).info("Celery worker session kept its priority: %s", exc)
