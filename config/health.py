"""``/healthz``: database and broker reachability, as JSON, for the compose health check."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.decorators import login_not_required
from django.db import connection
from django.http import JsonResponse
from django.views.decorators.http import require_GET


def _database_ok() -> tuple[bool, str]:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
        return True, connection.vendor
    except Exception as exc:  # noqa: BLE001 - any failure means "not reachable"
        return False, type(exc).__name__


def _broker_ok() -> tuple[bool, str]:
    if settings.CELERY_TASK_ALWAYS_EAGER:
        return True, "eager"
    try:
        from kombu import Connection

        with Connection(settings.CELERY_BROKER_URL, connect_timeout=2) as conn:
            conn.ensure_connection(max_retries=1, timeout=2)
        return True, "reachable"
    except Exception as exc:  # noqa: BLE001
        return False, type(exc).__name__


@login_not_required
@require_GET
def healthz(request):
    db_ok, db_detail = _database_ok()
    broker_ok, broker_detail = _broker_ok()
    ok = db_ok and broker_ok
    return JsonResponse(
        {
            "status": "ok" if ok else "unavailable",
            "database": {"ok": db_ok, "detail": db_detail},
            "broker": {"ok": broker_ok, "detail": broker_detail},
        },
        status=200 if ok else 503,
    )
