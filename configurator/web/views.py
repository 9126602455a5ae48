"""The configurator page: inputs on the left, the explained plan on the right.

The same form works three ways: a plain POST (no JavaScript) re-renders the
whole page; htmx posts to ``update`` on every change and swaps the results
panel plus the verdict strip (out of band); choosing a scenario asks
``preset`` for the form pre-filled from the catalog.
"""

from __future__ import annotations

import json
import logging
import time

from django.http import HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.utils.translation import get_language
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods
from django_htmx.http import trigger_client_event

from accounts import roles
from catalog import jsonlimits, selectors
from configurator import acknowledge
from configurator.engine.vocabulary import is_zh
from configurator.io.requests import RequestError
from configurator.planning import plans, prices
from configurator.web import fixes, form_data, presentation, presets
from configurator.web.forms import ConfiguratorForm

log = logging.getLogger(__name__)


def _lang() -> str:
    return "zh-hans" if is_zh(get_language()) else "en"


def _forbidden_unless_sales(request):
    if not (roles.is_sales(request.user) or request.user.is_superuser):
        return render(request, "403.html", status=403)
    return None


def _can_configure(user) -> bool:
    return roles.is_sales(user) or user.is_superuser


SESSION_KEY = "configurator_form"


def _form_data(data) -> dict[str, str]:
    """The configurator fields of a POST (or dict), as plain strings."""
    out = {}
    for name in ConfiguratorForm.base_fields:
        if name in data:
            value = data.get(name)
            if isinstance(value, str):
                out[name] = value
    return out


def _remember(request, form: ConfiguratorForm) -> None:
    """Keep the last configuration in the session: a reload or a language switch
    comes back to it instead of the defaults."""
    data = _form_data(form.data)
    if request.session.get(SESSION_KEY) != data:
        request.session[SESSION_KEY] = data


def _current_data(request) -> dict[str, str]:
    stored = request.session.get(SESSION_KEY)
    if isinstance(stored, dict) and stored:
        return {k: v for k, v in stored.items() if isinstance(v, str)}
    return presets.preset_data(None)


def _evaluate(
    form: ConfiguratorForm,
    request=None,
    *,
    wait_for_catalog: bool = False,
    advise: bool = True,
    remember: bool = True,
):
    """Validate the form, plan, and return the plan context (or None).

    A target out of reach: the smallest catalog deployment that meets it is a search of the
    auto-planner (up to 2 s for a new workload); the page's update never waits for it
    (``wait_for_catalog``, plans.plan_from_json): the results show it when already searched, else
    load it after themselves from :func:`alternative`.  The no-JavaScript form post waits.

    ``advise=False`` (the page's update): the plan without its advice — the proofs of the fixes and the
    serving-configuration search, about half an update's time — which :func:`advice` sends after the
    results (the findings card and the recommended settings, swapped in place)."""
    if not form.is_valid():
        return None
    request_json = form.to_request()
    try:
        plan_request, result = plans.plan_from_json(
            request_json, wait_for_catalog=wait_for_catalog, advise=advise
        )
    except RequestError as exc:
        form.add_request_errors(exc.errors)
        return None
    form.show_serving(result.request.serving)  # the plan's: a max_num_seqs left blank is sized there
    if request is not None and request.method == "POST" and remember:
        _remember(request, form)  # a plain page load changes nothing worth a session write
    started = time.perf_counter()
    proven = fixes.proven_fixes(request_json, plan_request, result) if advise else {}
    context = presentation.plan_context(plan_request, result, request_json, lang=_lang(), proven=proven)
    context["price_basis"] = prices.price_basis(request_json, plan_request)
    if request is not None:
        _fold_acknowledged(context, acknowledge.session_acks(request.session))
    context["render_ms"] = (time.perf_counter() - started) * 1000
    return context


def _fold_acknowledged(context: dict, acks: dict[str, str]) -> None:
    """Accepted warnings leave the findings list for a folded "accepted" list;
    the quote form carries them (``acknowledged``) to the revision."""
    current = acknowledge.current_for(acks, context["result"].get("checks") or [])
    context["accepted"] = [
        {**c, "reason": current[c["code"]]}
        for c in context["problems"]
        if c["severity"] == "warning" and c["code"] in current
    ]
    context["problems"] = [
        c for c in context["problems"] if not (c["severity"] == "warning" and c["code"] in current)
    ]
    context["problem_groups"] = presentation.problem_groups(context["problems"])
    context["acknowledged_json"] = json.dumps(current, ensure_ascii=False, sort_keys=True)


def _scenario_notice(before: dict[str, str], after: dict[str, str], changed: list[str]) -> dict | None:
    """What choosing a scenario changed (field label, old → new), with the
    previous values for "undo"."""
    recommended = presets.recommended_server(after.get("scenario"), after)
    if not changed and recommended is None:
        return None
    form = ConfiguratorForm()
    rows = []
    for name in changed:
        if name == "scenario":
            continue
        field = form.fields[name]
        rows.append(
            {
                "label": field.label,
                "before": _display(field, before.get(name, "")),
                "after": _display(field, after.get(name, "")),
            }
        )
    undo = {name: before.get(name, "") for name in changed}
    return {
        "rows": rows,
        "undo_json": json.dumps(undo, ensure_ascii=False),
        "base_json": json.dumps(before, ensure_ascii=False),
        # The server stays as the engineer chose it (presets.KEPT_WHEN_CHOOSING); the scenario's own
        # recommendation is one click away.
        "recommended": recommended,
        "after_json": json.dumps(after, ensure_ascii=False),
        "recommended_json": json.dumps({"server": recommended["slug"]}) if recommended else "",
    }


def _display(field, value: str) -> str:
    if getattr(field.widget, "input_type", "") == "checkbox":
        return str(_("yes") if value else _("no"))
    choices = getattr(field, "choices", None)
    if choices is not None and not hasattr(field, "queryset"):
        for key, label in choices:
            if str(key) == value:
                return str(label)
    return value or "—"


def _page(request, form, plan, **extra):
    return render(request, "configurator/home.html", {"form": form, "plan": plan, "lang": _lang(), **extra})


@require_http_methods(["GET", "POST"])
def home(request):
    """The configurator page (full render; also the no-JavaScript form target).

    Without JavaScript a changed scenario is applied when the form is posted
    (``applied_scenario`` says which one the values came from)."""
    if request.method == "GET" and not _can_configure(request.user) and roles.is_catalog_admin(request.user):
        # The landing page after log-in: a catalog admin works in the admin.
        return redirect("admin:index")
    denied = _forbidden_unless_sales(request)
    if denied:
        return denied
    notice = None
    if request.method == "POST":
        data = _form_data(request.POST)
        applied = request.POST.get("applied_scenario", data.get("scenario", ""))
        if data.get("scenario", "") != applied and data.get("scenario"):
            before = dict(data, scenario=applied)
            data, changed = presets.apply_scenario(before, data["scenario"])
            notice = _scenario_notice(before, data, changed)
        form = ConfiguratorForm(data)
        plan = _evaluate(form, request, wait_for_catalog=True)  # no JavaScript: nothing loads later
        return _page(request, form, plan, notice=notice)
    elif request.GET.get("scenario"):
        before = _current_data(request)
        data, changed = presets.apply_scenario(before, request.GET.get("scenario"))
        notice = _scenario_notice(before, data, changed)
        form = ConfiguratorForm(data)
    else:
        form = ConfiguratorForm(_current_data(request))
    plan = _evaluate(form, request)
    return _page(request, form, plan, notice=notice)


@require_http_methods(["POST"])
def update(request):
    """htmx: re-plan on every change; returns the results panel (+ OOB verdicts)."""
    denied = _forbidden_unless_sales(request)
    if denied:
        return denied
    form = ConfiguratorForm(request.POST)
    plan = _evaluate(form, request, advise=False)
    # The "why?" explanations load when opened (``why``), the findings with their proven fixes and the
    # recommended serving settings right after the results (``advice``): the full page keeps both inline.
    context = {
        "form": form,
        "plan": plan,
        "lang": _lang(),
        "oob": True,
        "why_on_demand": True,
        "advice_deferred": plan is not None,
    }
    return render(request, "configurator/_results.html", context)


@require_http_methods(["POST"])
def advice(request):
    """htmx, loaded by an updated results panel after itself: the findings card with each proven fix's
    "Apply" and the recommended serving settings, for the form as posted (the advised plan: every fix
    proven by re-planning, engine/advice.py), swapped in place of the panel's own (out of band)."""
    denied = _forbidden_unless_sales(request)
    if denied:
        return denied
    form = ConfiguratorForm(request.POST)
    plan = _evaluate(form, request, remember=False)  # the update that loaded it remembered the form
    if plan is None:
        return HttpResponse("")
    context = {"form": form, "plan": plan, "lang": _lang(), "oob": True}
    return render(request, "configurator/_advice.html", context)


@require_http_methods(["POST"])
def why(request):
    """htmx, when a "why?" of an updated results panel is opened: the figure's explanation (its formula,
    inputs and source) for the form as posted — the plan the update made, from ``port.plan_cache``.  A form
    that does not plan or a figure the plan lacks is a 400 naming the field."""
    denied = _forbidden_unless_sales(request)
    if denied:
        return denied
    from configurator.engine.serialize import figures_dict
    from configurator.templatetags.plan_tags import why_body

    key = request.POST.get("figure", "")
    form = ConfiguratorForm(request.POST)
    if not form.is_valid():
        return _bad_form(form.errors)
    try:
        _planned, result = plans.plan_from_json(form.to_request(), wait_for_catalog=False, advise=False)
    except RequestError as exc:
        return _bad_form(exc.errors)
    figures = figures_dict(result)
    if not key or key not in figures:
        return HttpResponse(_("figure: this plan has no such figure."), status=400, content_type="text/plain")
    return HttpResponse(why_body(figures, key))


def _bad_form(errors) -> HttpResponse:
    """400 naming each field that stops the form from planning, with its message."""
    text = "; ".join(f"{field}: {' '.join(str(m) for m in messages)}" for field, messages in errors.items())
    return HttpResponse(text or _("The form does not plan."), status=400, content_type="text/plain")


@require_http_methods(["GET", "POST"])
def preset(request):
    """Choose a scenario: only the fields the scenario owns change, the page says
    which (with undo).  htmx POSTs the current form and gets the results panel
    with the changed fields swapped out of band (the focused select is never
    replaced); a GET starts from the remembered configuration and returns the
    workspace."""
    denied = _forbidden_unless_sales(request)
    if denied:
        return denied
    if request.method == "POST":
        before = _form_data(request.POST)
        before["scenario"] = request.POST.get("applied_scenario", "")
        scenario = request.POST.get("scenario", "")
    else:
        before = _current_data(request)
        scenario = request.GET.get("scenario", "")
    data, changed = presets.apply_scenario(before, scenario)
    form = ConfiguratorForm(data)
    plan = _evaluate(form, request)
    notice = _scenario_notice(before, data, changed)
    context = {"form": form, "plan": plan, "lang": _lang(), "notice": notice}
    if request.method == "POST" and request.htmx:
        # The changed values are set in place by the page's script (no input is
        # replaced, so none loses focus or a keystroke); errors come out of band.
        context.update(oob=True, notice_oob=True, why_on_demand=True)
        response = render(request, "configurator/_results.html", context)
        values = {name: data.get(name, "") for name in changed if name != "scenario"}
        return trigger_client_event(response, "configurator:set-fields", {"fields": values})
    if request.htmx:
        return render(request, "configurator/_workspace.html", context)
    return render(request, "configurator/home.html", context)


@require_http_methods(["POST"])
def alternative(request):
    """htmx, loaded by the results after themselves: the smallest deployment in the catalog that meets
    the latency targets this hardware cannot reach (configurator/catalog_alternative.py), for the
    form as posted; empty when the form's targets are within reach."""
    denied = _forbidden_unless_sales(request)
    if denied:
        return denied
    from .. import catalog_alternative

    form = ConfiguratorForm(request.POST)
    answer = None
    if form.is_valid():
        try:
            request_json = form.to_request()
            plan_request = plans.resolve_request(request_json)
        except RequestError:
            plan_request = None
        if plan_request is not None:
            answer = plans.catalog_answer(plan_request)
    sentence = ""
    if answer is not None:
        en, zh = catalog_alternative.sentence(answer)
        sentence = (zh if _lang() == "zh-hans" else en).strip()
    return render(request, "configurator/_alternative.html", {"sentence": sentence})


def _json_dict(raw: str) -> dict[str, str]:
    try:
        value = jsonlimits.loads(raw or "{}", what="form state")
    except jsonlimits.JsonLimitError:
        return {}
    if not isinstance(value, dict):
        return {}
    return {str(k): v for k, v in value.items() if isinstance(v, str)}


def _undo_data(post) -> dict[str, str]:
    """Undo a scenario: its own fields go back to what they were.  With
    JavaScript the current form comes along (later edits stay); without it the
    whole form from before the scenario (``base``)."""
    current = _form_data(post)
    data = current if current else _json_dict(post.get("base", ""))
    for name, value in _json_dict(post.get("undo", "")).items():
        if name not in ConfiguratorForm.base_fields:
            continue
        if value == "":
            data.pop(name, None)
        else:
            data[name] = value
    return data


@require_http_methods(["POST"])
def apply_fix(request):
    """Load a configuration in one request, with JavaScript on or off: a proven
    fix (``request_json``, the re-planned request the results panel offered),
    an "undo" (the previous form values), or the form plus a ``fix`` (request
    path → value, as the API's checks give it)."""
    denied = _forbidden_unless_sales(request)
    if denied:
        return denied
    data = None
    raw = request.POST.get("request_json")
    if raw:
        try:
            request_json = jsonlimits.loads(raw, what="request_json")  # depth/size/finite limits (issue 13)
        except jsonlimits.JsonLimitError:
            request_json = None
        if isinstance(request_json, dict):
            data = form_data.form_data_from_request(request_json)
    if data is None and request.POST.get("undo"):
        data = _undo_data(request.POST)
    if data is None:
        data = _form_data(request.POST)
        try:
            fix = jsonlimits.loads(request.POST.get("fix", "{}"), what="fix")
        except jsonlimits.JsonLimitError:
            fix = {}
        if isinstance(fix, dict) and fix:
            form = ConfiguratorForm(data)
            if form.is_valid():
                base = form.to_request()
                try:
                    plan_request = plans.resolve_request(base)
                except RequestError:
                    plan_request = None
                fixed = fixes.fixed_request(base, fix, plan_request)
                if fixed is not None:
                    data = form_data.form_data_from_request(fixed)
    form = ConfiguratorForm(data)
    plan = _evaluate(form, request)
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
        plan_request, result = plans.plan_from_json(data)
    except RequestError as exc:
        return JsonResponse({"errors": exc.errors}, status=400)
    payload, filename = plans.launch_bundle(plan_request, result)
    if payload is None:
        return JsonResponse(
            {"errors": {"launch": ["the plan has errors; fix them before downloading a bundle."]}}, status=400
        )
    response = HttpResponse(payload, content_type="application/zip")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@require_http_methods(["POST"])
def acknowledge_warning(request):
    """Accept a warning with a reason, or withdraw the acceptance.  htmx posts
    the current form along and gets the results panel; without JavaScript the
    remembered configuration is shown again."""
    denied = _forbidden_unless_sales(request)
    if denied:
        return denied
    acks = acknowledge.session_acks(request.session)
    ack_errors = {}
    code = request.POST.get("code", "")
    try:
        code = acknowledge.clean_code(code)
        if request.POST.get("action") == "withdraw":
            acks.pop(code, None)
        else:
            acks[code] = acknowledge.clean_reason(request.POST.get("reason", ""))
            if len(acks) > acknowledge.MAX_ITEMS:
                raise ValueError(_("Too many accepted warnings."))
        request.session[acknowledge.SESSION_KEY] = acks
    except ValueError as exc:
        ack_errors[str(code)[:100]] = str(exc)
    data = _form_data(request.POST) if request.htmx else {}
    form = ConfiguratorForm(data or _current_data(request))
    plan = _evaluate(form, request)
    context = {"form": form, "plan": plan, "lang": _lang(), "ack_errors": ack_errors}
    if request.htmx:
        context["oob"] = True
        return render(request, "configurator/_results.html", context)
    return render(request, "configurator/home.html", context)


@require_GET
def preview(request):
    """The configurator with one catalog row as saved (``?server=`` or
    ``?model=``), for the catalog admin who just edited it (read-only for
    them) and for sales.  A model's context limit caps ``max_model_len``."""
    if not (_can_configure(request.user) or roles.is_catalog_admin(request.user)):
        return render(request, "403.html", status=403)
    data = _current_data(request) if _can_configure(request.user) else presets.preset_data(None)
    previewed = []
    for key, by_slug in (("server", selectors.server_by_slug), ("model", selectors.llm_model_by_slug)):
        slug = request.GET.get(key, "")
        if not slug:
            continue
        row = by_slug(slug[:80])
        if row is None:
            return render(request, "404.html", status=404)
        data[key] = row.slug
        previewed.append(row.name)
        if key == "model" and row.max_context:
            if int(data.get("max_model_len") or 0) > row.max_context:
                data["max_model_len"] = str(row.max_context)
    form = ConfiguratorForm(data)
    plan = _evaluate(form, wait_for_catalog=True)
    return _page(
        request, form, plan, preview=", ".join(previewed), read_only=not _can_configure(request.user)
    )
