"""The configurator page: inputs on the left, the explained plan on the right.

The same form works three ways: a plain POST (no JavaScript) re-renders the
whole page; htmx posts to ``update`` on every change and swaps the results
panel plus the verdict strip (out of band); choosing a scenario asks
``preset`` for the form pre-filled from the catalog.
"""

from __future__ import annotations

import logging
import time

from django.http import HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils.translation import get_language
from django.views.decorators.http import require_GET, require_http_methods

from accounts import roles
from catalog import jsonlimits

from . import presentation, services
from .forms import ConfiguratorForm
from .requests import RequestError

log = logging.getLogger(__name__)


def _lang() -> str:
    return "zh-hans" if (get_language() or "").startswith("zh") else "en"


def _forbidden_unless_sales(request):
    if not (roles.is_sales(request.user) or request.user.is_superuser):
        return render(request, "403.html", status=403)
    return None


def _evaluate(form: ConfiguratorForm):
    """Validate the form, plan, and return (plan context or None)."""
    if not form.is_valid():
        return None
    request_json = form.to_request()
    try:
        plan_request, result = services.plan_from_json(request_json)
    except RequestError as exc:
        form.add_request_errors(exc.errors)
        return None
    started = time.perf_counter()
    context = presentation.plan_context(plan_request, result, request_json, lang=_lang())
    context["render_ms"] = (time.perf_counter() - started) * 1000
    return context


@require_http_methods(["GET", "POST"])
def home(request):
    """The configurator page (full render; also the no-JavaScript form target)."""
    denied = _forbidden_unless_sales(request)
    if denied:
        return denied
    if request.method == "POST":
        form = ConfiguratorForm(request.POST)
    else:
        form = ConfiguratorForm(services.preset_data(request.GET.get("scenario")))
    plan = _evaluate(form)
    return render(request, "configurator/home.html", {"form": form, "plan": plan, "lang": _lang()})


@require_http_methods(["POST"])
def update(request):
    """htmx: re-plan on every change; returns the results panel (+ OOB verdicts)."""
    denied = _forbidden_unless_sales(request)
    if denied:
        return denied
    form = ConfiguratorForm(request.POST)
    plan = _evaluate(form)
    return render(
        request, "configurator/_results.html", {"form": form, "plan": plan, "lang": _lang(), "oob": True}
    )


@require_GET
def preset(request):
    """htmx: the form pre-filled from a scenario (every value stays editable)."""
    denied = _forbidden_unless_sales(request)
    if denied:
        return denied
    form = ConfiguratorForm(services.preset_data(request.GET.get("scenario")))
    plan = _evaluate(form)
    return render(request, "configurator/_workspace.html", {"form": form, "plan": plan, "lang": _lang()})


@require_http_methods(["POST"])
def apply_fix(request):
    """Apply a finding's suggested fix to the form and re-plan (one click)."""
    denied = _forbidden_unless_sales(request)
    if denied:
        return denied
    data = request.POST.copy()
    try:
        fix = jsonlimits.loads(request.POST.get("fix", "{}"), what="fix")
    except jsonlimits.JsonLimitError:
        fix = {}
    if isinstance(fix, dict):
        for path, value in fix.items():
            name = ConfiguratorForm.field_for_path(str(path))
            if name is None or isinstance(value, (dict, list)):
                continue
            if isinstance(value, bool):
                if value:
                    data[name] = "on"
                else:
                    data.pop(name, None)
            else:
                data[name] = str(value)
            if name in {"tp", "dp", "pp", "dp_local", "decode_tp", "decode_dp"}:
                data["parallel_mode"] = "manual"
    form = ConfiguratorForm(data)
    plan = _evaluate(form)
    template = "configurator/_workspace.html" if request.htmx else "configurator/home.html"
    return render(request, template, {"form": form, "plan": plan, "lang": _lang()})


@require_http_methods(["POST"])
def bundle(request):
    """The launch bundle (.zip) for a configuration (``request_json``, as the
    results panel posts it)."""
    denied = _forbidden_unless_sales(request)
    if denied:
        return denied
    try:
        data = jsonlimits.loads(request.POST.get("request_json", ""), what="request_json")
    except jsonlimits.JsonLimitError as exc:
        return JsonResponse({"errors": {"request_json": [str(exc)]}}, status=exc.status)
    try:
        plan_request, result = services.plan_from_json(data)
    except RequestError as exc:
        return JsonResponse({"errors": exc.errors}, status=400)
    payload, filename = services.launch_bundle(plan_request, result)
    if payload is None:
        return JsonResponse(
            {"errors": {"launch": ["the plan has errors; fix them before downloading a bundle."]}}, status=400
        )
    response = HttpResponse(payload, content_type="application/zip")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response
