"""JSON endpoints of the configurator (docs/api.md, docs/planner.md); URLs: ``api_urls``.

Authentication, method, role, body limits and error mapping are the :func:`api_view`
decorator's (``configurator/api/base.py``).
"""

from __future__ import annotations

from django.http import JsonResponse

from configurator.api.base import api_view
from configurator.io.requests import RequestError
from configurator.planning import plans
from configurator.web.planner import services as planner_services


@api_view(methods=("POST",))
def plan_api(request):
    """``POST /api/plan``: a plan request (docs/api.md) → the explained plan.

    A figure is *measured* only from a ``vllm bench serve`` file attached to a quote whose load and
    request lengths match its plan; a throughput typed into the request would be printed as measured,
    so ``workload.measured_output_tokens_per_s`` is refused here, naming the field."""
    workload = request.json.get("workload") if isinstance(request.json, dict) else None
    if isinstance(workload, dict) and workload.get("measured_output_tokens_per_s") not in (None, ""):
        raise RequestError(
            {
                "workload.measured_output_tokens_per_s": [
                    "a measured throughput comes only from a benchmark file attached to a quote "
                    "(vllm bench serve --save-result); leave this field out."
                ]
            }
        )
    _, result = plans.plan_from_json(request.json)
    return JsonResponse(plans.plan_response(result), json_dumps_params={"ensure_ascii": False})


@api_view(methods=("POST",))
def recommend_api(request):
    """``POST /api/recommend``: a planner request (docs/planner.md) → ranked deployments."""
    return JsonResponse(planner_services.recommend(request.json), json_dumps_params={"ensure_ascii": False})
