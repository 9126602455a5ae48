"""Times as a person reads them: in the site's time zone (``settings.TIME_ZONE``, the team's), with
the zone named, whether the value is an aware datetime or an ISO string stored in JSON."""

from __future__ import annotations

import datetime as dt

from django.utils import timezone


def local_stamp(value: dt.datetime | str | None) -> str:
    """``2026-12-01 22:14 (UTC+08:00)``; "" for nothing, the text itself for an unreadable string."""
    if value in (None, ""):
        return ""
    if isinstance(value, str):
        try:
            value = dt.datetime.fromisoformat(value)
        except ValueError:
            return value
    if timezone.is_naive(value):
        value = timezone.make_aware(value, dt.UTC)
    local = timezone.localtime(value)
    offset = local.strftime("%z")  # +0800
    zone = f"UTC{offset[:3]}:{offset[3:]}" if offset else "UTC"
    return f"{local:%Y-%m-%d %H:%M} ({zone})"
