"""JSON endpoints of the configurator (docs/api.md, docs/planner.md); URLs: ``api_urls``.

Authentication, method, role, body limits and error mapping are the :func:`api_view`
decorator's (``configurator/api/base.py``).
"""

from __future__ import annotations

from django.http import JsonResponse

from configurator import services
from configurator.api.base import api_view
from configurator.web.planner import services as planner_services


@api_view(methods=("POST",))
def plan_api(request):
    """``POST /api/plan``: a plan request (docs/api.md) → the explained plan."""
    _, result = services.plan_from_json(request.json)
    return JsonResponse(services.plan_response(result), json_dumps_params={"ensure_ascii": False})


@api_view(methods=("POST",))
def recommend_api(request):
    """``POST /api/recommend``: a planner request (docs/planner.md) → ranked deployments."""
    return JsonResponse(planner_services.recommend(request.json), json_dumps_params={"ensure_ascii": False})
