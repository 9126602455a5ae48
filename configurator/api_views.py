"""JSON endpoints of the configurator."""

from __future__ import annotations

from django.http import JsonResponse

from . import services
from .api import api_view


@api_view(methods=("POST",))
def plan_api(request):
    """``POST /api/plan``: a plan request (docs/api.md) → the explained plan."""
    _, result = services.plan_from_json(request.json)
    return JsonResponse(services.plan_response(result), json_dumps_params={"ensure_ascii": False})
