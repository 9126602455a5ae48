"""The auto-planner's pages and the hand-over to the configurator.

* ``GET/POST /planner/``: the form (pre-filled from a scenario) and, after a
  search, the ranked candidates, the Pareto chart and the rejected families.
  A plain POST renders the whole page (no JavaScript needed); htmx posts to
  ``/planner/results`` and swaps only the results.
* ``/planner/open``: renders the configurator page for one candidate's
  request (POSTed as ``request_json``, or a signed token ``t``), through
  ``form_data.form_data_from_request``.

The search runs through ``planner_services`` (which gives the pure ``configurator.planner`` the
catalog); the form is ``planner_forms``, the formatting ``planner_presentation``, and the JSON
API (``POST /api/recommend``) is in ``api_views``.  URLs: ``planner_urls``.
"""

from __future__ import annotations

import time
from typing import Any

from django.core import signing
from django.http import HttpResponseBadRequest
from django.shortcuts import render
from django.utils.translation import get_language
from django.views.decorators.http import require_GET, require_http_methods

from accounts import roles
from catalog import jsonlimits
from configurator.engine.vocabulary import is_zh
from configurator.io.requests import RequestError
from configurator.planning import plans
from configurator.web import form_data, presentation
from configurator.web.forms import ConfiguratorForm
from configurator.web.planner.forms import PlannerForm, preset_form_data
from configurator.web.planner.presentation import results_context
from configurator.web.planner.services import OPEN_MAX_AGE, OPEN_SALT, run_search


def _lang() -> str:
    return "zh-hans" if is_zh(get_language()) else "en"


def _forbidden_unless_sales(request):
    if not (roles.is_sales(request.user) or request.user.is_superuser):
        return render(request, "403.html", status=403)
    return None


def _evaluate(form: PlannerForm) -> dict[str, Any] | None:
    if not form.is_valid():
        return None
    try:
        started = time.perf_counter()
        result = run_search(form.to_request())
    except RequestError as exc:
        form.add_request_errors(exc.errors)
        return None
    scenario = form.cleaned_data.get("scenario")
    recommended = (
        scenario.recommended_server.slug if scenario is not None and scenario.recommended_server_id else None
    )
    context = results_context(result, _lang(), recommended_server=recommended)
    context["elapsed_ms"] = round((time.perf_counter() - started) * 1000)
    return context


# --------------------------------------------------------------------------- views


@require_http_methods(["GET", "POST"])
def planner_page(request):
    """The auto-planner page (also the no-JavaScript form target)."""
    denied = _forbidden_unless_sales(request)
    if denied:
        return denied
    results = None
    if request.method == "POST":
        form = PlannerForm(request.POST)
        results = _evaluate(form)
    else:
        form = PlannerForm(preset_form_data(request.GET.get("scenario")))
        if request.GET.get("run"):
            results = _evaluate(form)
    return render(request, "configurator/planner.html", {"form": form, "results": results, "lang": _lang()})


@require_http_methods(["POST"])
def planner_results(request):
    """htmx: search and return the results panel."""
    denied = _forbidden_unless_sales(request)
    if denied:
        return denied
    form = PlannerForm(request.POST)
    results = _evaluate(form)
    return render(
        request,
        "configurator/planner_results.html",
        {"form": form, "results": results, "lang": _lang(), "oob": True},
    )


@require_GET
def planner_preset(request):
    """htmx: the form pre-filled from a scenario."""
    denied = _forbidden_unless_sales(request)
    if denied:
        return denied
    form = PlannerForm(preset_form_data(request.GET.get("scenario")))
    return render(request, "configurator/planner_form.html", {"form": form, "lang": _lang()})


def _configurator_context(request_json: dict) -> dict[str, Any]:
    form = ConfiguratorForm(form_data.form_data_from_request(request_json))
    plan = None
    if form.is_valid():
        form_request = form.to_request()
        try:
            plan_request, result = plans.plan_from_json(form_request)
        except RequestError as exc:
            form.add_request_errors(exc.errors)
        else:
            plan = presentation.plan_context(plan_request, result, form_request, lang=_lang())
    return {"form": form, "plan": plan, "lang": _lang()}


@require_http_methods(["GET", "POST"])
def planner_open(request):
    """The configurator page for a candidate: ``request_json`` (POST) or a signed token ``t``."""
    denied = _forbidden_unless_sales(request)
    if denied:
        return denied
    source = request.POST if request.method == "POST" else request.GET
    token = source.get("t")
    if token:
        try:
            data = signing.loads(token, salt=OPEN_SALT, max_age=OPEN_MAX_AGE)
        except signing.BadSignature:
            return HttpResponseBadRequest("This link is invalid or has expired.")
    else:
        try:
            data = jsonlimits.loads(source.get("request_json", "") or "", what="request_json")
        except jsonlimits.JsonLimitError as exc:
            return HttpResponseBadRequest(f"request_json must be a configuration as JSON: {exc}")
    if not isinstance(data, dict):
        return HttpResponseBadRequest("request_json must be a JSON object.")
    context = _configurator_context(data)
    # A posted configuration the form refuses (e.g. 1e308 tokens) is a bad request: the page still
    # shows every field's message, with a 400 status.
    status = 400 if not token and context["form"].errors else 200
    return render(request, "configurator/home.html", context, status=status)
