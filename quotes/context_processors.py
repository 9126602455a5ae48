"""Navigation hints of the sales workflow: unread notifications and whether the pipeline is offered.

Both are lazy, so pages that do not show the navigation pay no query.
"""

from __future__ import annotations

from django.utils.functional import SimpleLazyObject


def workflow_nav(request) -> dict:
    user = getattr(request, "user", None)
    if user is None or not getattr(user, "is_authenticated", False):
        return {}

    def unread() -> int:
        from .workflow.models import Notification

        return Notification.objects.filter(recipient=user, read_at__isnull=True).count()

    def pipeline() -> bool:
        from .workflow.pipeline import may_see_pipeline

        return may_see_pipeline(user)

    return {
        "nav_unread_notifications": SimpleLazyObject(unread),
        "nav_pipeline": SimpleLazyObject(pipeline),
    }
