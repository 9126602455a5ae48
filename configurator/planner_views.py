"""The auto-planner page, its JSON API and the hand-over to the configurator.

* ``GET/POST /planner/``: the form (pre-filled from a scenario) and, after a
  search, the ranked candidates, the Pareto chart and the rejected families.
  A plain POST renders the whole page (no JavaScript needed); htmx posts to
  ``/planner/results`` and swaps only the results.
* ``POST /api/recommend``: planner request JSON in, result JSON out
  (docs/planner.md), with the same authentication as ``/api/plan``.
* ``/planner/open``: renders the configurator page for one candidate's
  request (POSTed as ``request_json``, or a signed token ``t``), through
  ``services.form_data_from_request``.

The search itself is pure (``configurator.planner``); this module gives it
the catalog (:class:`DjangoPlannerCatalog`) and turns its result into pages.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import logging
import time
from decimal import Decimal
from typing import Any

from django import forms
from django.core import signing
from django.http import HttpResponseBadRequest, JsonResponse
from django.shortcuts import render
from django.urls import NoReverseMatch, reverse
from django.utils import timezone
from django.utils.translation import get_language
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_GET, require_http_methods

from accounts import roles
from catalog import jsonlimits
from catalog.models import LlmModel, PriceList, RackType, Scenario, ServerModel, SiteProfile
from catalog.selectors import price_list_in_force

from . import inputs, planner, presentation, services
from .api import api_view
from .drawings.fmt import format_money, format_number
from .drawings.scatter import scatter_svg
from .engine import types as et
from .forms import ConfiguratorForm
from .io.requests import RequestError

log = logging.getLogger(__name__)

OPEN_SALT = "configurator.planner.open"
OPEN_MAX_AGE = 90 * 24 * 3600  # a shared link opens for 90 days
OPEN_PATH = "/planner/open"


# --------------------------------------------------------------------------- the catalog port


class DjangoPlannerCatalog:
    """The catalog as the planner sees it (``planner.PlannerCatalog``)."""

    def __init__(self, today: dt.date | None = None):
        self.today = today or timezone.localdate()
        self.base = services.DjangoCatalog()
        self._price_lists: dict[str, PriceList | None] = {}
        self._snapshots: dict[str, _PriceListSnapshot | None] = {}

    def scenario(self, slug: str) -> dict[str, Any] | None:
        row = Scenario.objects.select_related("recommended_model").filter(slug=slug).first()
        if row is None:
            return None
        return {
            "input_tokens": row.input_tokens,
            "output_tokens": row.output_tokens,
            "context": row.context,
            "concurrency": row.concurrency,
            "needs_vision": row.needs_vision,
            "availability_target": float(row.availability_target),
            "model": row.recommended_model.slug if row.recommended_model_id else None,
            "name_en": row.name_en,
            "name_zh": row.name_zh,
        }

    def model(self, slug: str) -> et.ModelSpec | None:
        return self.base.model(slug)

    def default_checkpoint(self, model_slug: str, software_stack: str) -> et.CheckpointSpec | None:
        return self.base.default_checkpoint(model_slug, software_stack)

    def servers(self, model_slug: str) -> tuple[et.ServerSpec, ...]:
        """Every server offered in the configurator, text-only flags as the model records them."""
        llm = LlmModel.objects.filter(slug=model_slug).first()
        text_only = set(llm.validated_text_only_on.values_list("pk", flat=True)) if llm else set()
        rows = (
            ServerModel.objects.filter(is_active=True).select_related("accelerator").prefetch_related("nics")
        )
        out = []
        for row in rows.order_by("vendor", "name"):
            spec = inputs.server_spec(row)
            if row.pk in text_only and not spec.validated_text_only:
                spec = dataclasses.replace(spec, validated_text_only=True)
            out.append(spec)
        return tuple(out)

    def site(self, slug: str | None) -> et.SiteSpec | None:
        if slug is None:
            return self.base.default_site()
        return self.base.site(slug)

    def racks(self) -> tuple[et.RackSpec, ...]:
        """Rack types, the configurator's default first (the one a request without a rack gets)."""
        default = self.base.default_rack()
        rows = [inputs.rack_spec(r) for r in RackType.objects.order_by("pk")]
        if default is not None:
            rows.sort(key=lambda r: r.slug != default.slug)
        return tuple(rows)

    def switches(self) -> tuple[et.SwitchSpec, ...]:
        return self.base.switches(None)

    def price_list(self, currency: str) -> str | None:
        if currency not in self._price_lists:
            self._price_lists[currency] = price_list_in_force(currency, self.today)
        pl = self._price_lists[currency]
        return pl.slug if pl is not None else None

    def commercial(
        self, server: et.ServerSpec, nodes: int, rack: et.RackSpec, price_list: str | None, currency: str
    ) -> et.CommercialSpec:
        """What requests.resolve() gets from ``DjangoCatalog.commercial`` for the same request.

        The list's items are read once per search and handed to the same
        ``inputs.commercial_spec``, so a candidate replans identically.
        """
        snapshot = self._snapshot(price_list) if price_list else None
        if snapshot is None:
            try:
                spec = self.base.commercial(
                    server=server,
                    price_list=price_list,
                    on_date=self.today,
                    currency=currency,
                    nodes=nodes,
                    rack=rack,
                )
            except LookupError:
                spec = et.CommercialSpec(currency=currency)
        else:
            spec = inputs.commercial_spec(
                price_list=snapshot, server=server, on_date=self.today, nodes=nodes, rack=rack
            )
        return dataclasses.replace(spec, currency=currency) if spec.currency != currency else spec

    def _snapshot(self, slug: str) -> _PriceListSnapshot | None:
        if slug not in self._snapshots:
            row = PriceList.objects.filter(slug=slug).first()
            self._snapshots[slug] = _PriceListSnapshot(row) if row is not None else None
        return self._snapshots[slug]


class _PriceListSnapshot:
    """A price list with its items read once: ``items.all().order_by(…)`` answers from memory."""

    def __init__(self, row: PriceList):
        self.row = row
        self.slug = row.slug
        self.currency = row.currency
        self.usd_rate = row.usd_rate
        self.items = self
        self._items = list(row.items.all())

    def all(self):
        return self

    def order_by(self, *fields: str):
        out = list(self._items)
        for name in reversed(fields):
            key = name.lstrip("-")
            out.sort(key=lambda item: getattr(item, key), reverse=name.startswith("-"))
        return out

    def __getattr__(self, name: str):
        return getattr(self.row, name)


def run_search(data: Any) -> planner.PlannerResult:
    """Validate and search (raises RequestError on bad input)."""
    catalog = DjangoPlannerCatalog()
    query = planner.parse_query(data, catalog)
    return planner.search(query, catalog)


def recommend(data: Any) -> dict:
    """The ``POST /api/recommend`` response for a planner request (raises RequestError)."""
    result = run_search(data)
    out = planner.result_dict(result)
    for item in (*out["candidates"], *out["pareto"]):
        item["open_url"] = open_url(item["request"])
    return out


def open_token(request_json: dict) -> str:
    return signing.dumps(request_json, salt=OPEN_SALT, compress=True)


def open_url(request_json: dict) -> str:
    """The configurator page for a request, as a link (signed, so it cannot be edited in transit)."""
    try:
        base = reverse("configurator:planner_open")
    except NoReverseMatch:  # planner URLs not mounted in this URLconf (e.g. the CLI before wiring)
        base = OPEN_PATH
    return f"{base}?t={open_token(request_json)}"


# --------------------------------------------------------------------------- the form

PURCHASE_CHOICES = [("buy", _("Buy")), ("lease", _("Lease"))]
SORT_CHOICES = [("cost_per_m", _("Cost per million tokens")), ("tco", _("3-year TCO"))]


def _int(label, lo, hi, required=False, initial=None, help_text=""):
    return forms.IntegerField(
        label=label, min_value=lo, max_value=hi, required=required, initial=initial, help_text=help_text
    )


def _dec(label, lo, hi, required=False, initial=None, places=4):
    return forms.DecimalField(
        label=label,
        min_value=Decimal(str(lo)),
        max_value=Decimal(str(hi)),
        required=required,
        initial=initial,
        decimal_places=places,
        widget=forms.NumberInput(attrs={"step": "any"}),
    )


class PlannerForm(forms.Form):
    """The auto-planner's inputs: a workload and the customer's constraints."""

    scenario = forms.ModelChoiceField(
        Scenario.objects.all(),
        to_field_name="slug",
        required=False,
        label=_("Scenario"),
        empty_label=_("— none —"),
    )
    model = forms.ModelChoiceField(
        LlmModel.objects.all(), to_field_name="slug", label=_("Model"), empty_label=None
    )
    input_tokens = _int(_("Input tokens per request"), 1, 16_777_216, True, 8192)
    output_tokens = _int(_("Output tokens per request"), 1, 16_777_216, True, 1024)
    context = _int(_("Context length (max_model_len)"), 2, 16_777_216, True, 133_120)
    concurrency = _int(_("Concurrent requests"), 1, 1_000_000, False, 16)
    requests_per_s = _dec(_("or requests per second"), "0.001", 1_000_000, places=3)
    ttft_target_s = _dec(_("TTFT target (s)"), "0.001", 86_400, places=3)
    tpot_target_ms = _dec(_("TPOT target (ms)"), "0.01", 100_000, places=2)
    availability_target = _dec(_("Availability target"), "0.5", "0.99999", True, Decimal("0.995"), places=5)
    needs_vision = forms.BooleanField(label=_("Image input needed"), required=False)

    purchase = forms.ChoiceField(choices=PURCHASE_CHOICES, label=_("Buy or lease"), initial="buy")
    currency = forms.RegexField(regex=r"^[A-Z]{3}$", max_length=3, label=_("Currency"), initial="CNY")
    max_capex = _dec(_("Budget (capex ceiling)"), 0, 10**13, places=2)
    max_lease_per_month = _dec(_("Monthly rent ceiling"), 0, 10**12, places=2)
    max_power_kw = _dec(_("Site power (kW)"), 0, 1_000_000, places=2)
    max_racks = _int(_("Racks available"), 0, 100_000)
    air_cooled_only = forms.BooleanField(label=_("Air cooling only"), required=False)
    domestic_only = forms.BooleanField(label=_("Domestic hardware only (Xinchuang)"), required=False)

    site = forms.ModelChoiceField(
        SiteProfile.objects.all(), to_field_name="slug", label=_("Site"), empty_label=None
    )
    sort = forms.ChoiceField(choices=SORT_CHOICES, label=_("Rank by"), initial="cost_per_m")
    max_nodes = _int(_("Largest deployment (nodes)"), 1, 64, True, 32)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        zh = (get_language() or "").startswith("zh")
        self.fields["scenario"].label_from_instance = lambda s: s.name_zh if zh else s.name_en

    def to_request(self) -> dict:
        d = self.cleaned_data
        workload: dict[str, Any] = {
            "input_tokens": d["input_tokens"],
            "output_tokens": d["output_tokens"],
            "context": d["context"],
            "availability_target": str(d["availability_target"]),
            "needs_vision": bool(d.get("needs_vision")),
        }
        if d.get("requests_per_s") is not None:
            workload["requests_per_s"] = str(d["requests_per_s"])
            workload["concurrency"] = None
        elif d.get("concurrency") is not None:
            workload["concurrency"] = d["concurrency"]
        for key in ("ttft_target_s", "tpot_target_ms"):
            if d.get(key) is not None:
                workload[key] = str(d[key])
        constraints: dict[str, Any] = {
            "purchase": d["purchase"],
            "currency": d["currency"],
            "air_cooled_only": bool(d.get("air_cooled_only")),
            "domestic_only": bool(d.get("domestic_only")),
        }
        money = "max_capex" if d["purchase"] == "buy" else "max_lease_per_month"
        if d.get(money) is not None:
            constraints[money] = str(d[money])
        if d.get("max_power_kw") is not None:
            constraints["max_power_kw"] = str(d["max_power_kw"])
        if d.get("max_racks") is not None:
            constraints["max_racks"] = d["max_racks"]
        data: dict[str, Any] = {
            "model": d["model"].slug,
            "workload": workload,
            "constraints": constraints,
            "site": d["site"].slug,
            "options": {"sort": d["sort"], "max_nodes": d["max_nodes"]},
        }
        if d.get("scenario"):
            data["scenario"] = d["scenario"].slug
        return data

    def add_request_errors(self, errors: dict[str, list[str]]) -> None:
        for path, messages in errors.items():
            name = path.rsplit(".", 1)[-1].split("[")[0]
            target = name if name in self.fields else None
            for message in messages:
                self.add_error(target, message if target else f"{path}: {message}")


def preset_form_data(scenario: str | None = None) -> dict[str, Any]:
    """Form data for a fresh page, or pre-filled from a scenario."""
    base = services.preset_data(None)
    data: dict[str, Any] = {
        "model": base.get("model", ""),
        "site": base.get("site", ""),
        "input_tokens": "8192",
        "output_tokens": "1024",
        "context": "133120",
        "concurrency": "16",
        "availability_target": "0.995",
        "purchase": "buy",
        "currency": "CNY",
        "sort": "cost_per_m",
        "max_nodes": "32",
    }
    row = DjangoPlannerCatalog().scenario(scenario) if scenario else None
    if row is not None:
        data["scenario"] = scenario
        for key in ("input_tokens", "output_tokens", "context", "concurrency", "availability_target"):
            data[key] = str(row[key])
        if row["needs_vision"]:
            data["needs_vision"] = "on"
        if row.get("model"):
            data["model"] = row["model"]
    return data


# --------------------------------------------------------------------------- presentation


def _lang() -> str:
    return "zh-hans" if (get_language() or "").startswith("zh") else "en"


def _pick(en: str, zh: str, lang: str) -> str:
    return zh if lang.startswith("zh") else en


def _serving_lines(serving: et.ServingSpec, lang: str) -> list[str]:
    """["util 0.85 · KV BF16", "16 seqs"]: the vLLM knobs the search chose, in short lines."""
    kv = "BF16" if serving.kv_cache_dtype in ("auto", "bf16") else serving.kv_cache_dtype.upper()
    if lang.startswith("zh"):
        lines = [
            f"利用率 {serving.gpu_memory_utilization:g} · KV {kv}",
            f"max_num_seqs {serving.max_num_seqs}",
        ]
        return lines + (["仅语言模型"] if serving.language_model_only else [])
    lines = [f"util {serving.gpu_memory_utilization:g} · KV {kv}", f"max_num_seqs {serving.max_num_seqs}"]
    return lines + (["language model only"] if serving.language_model_only else [])


def results_context(result: planner.PlannerResult, lang: str) -> dict[str, Any]:
    """Rows, chart and rejections of a search, formatted for the page."""
    cur = result.query.constraints.currency
    lease = result.query.constraints.purchase == "lease"
    short = "zh" if lang.startswith("zh") else "en"

    def row(c: planner.Candidate) -> dict[str, Any]:
        layout = [planner.parallel_label(c.parallel)]
        if c.decode_parallel is not None:
            layout = [f"P: {layout[0]}", f"D: {planner.parallel_label(c.decode_parallel)}"]
        return {
            "rank": c.rank,
            "id": c.id,
            "label": planner.shape_label(c.server, c.shape, short),
            "server": c.server.name,
            "domestic": c.server.accelerator.domestic,
            "layout": layout,
            "serving": _serving_lines(c.serving, lang),
            "cost_per_m": format_money(c.cost_per_m, cur, lang, scale=1, decimals=2),
            "tco": format_money(c.tco_total, cur, lang),
            "capex": format_money(c.lease_per_month if lease else c.capex, cur, lang),
            "tps": format_number(c.output_tokens_per_s, 0),
            "ttft": format_number(c.ttft_s, 2),
            "tpot": format_number(c.tpot_ms, 1),
            "e2e": format_number(c.e2e_s, 1),
            "kw": format_number(c.it_kw, 1),
            "racks": c.racks,
            "pareto": c.pareto,
            "warnings": [(code, _pick(en, zh, lang)) for code, en, zh in c.warnings],
            "request_json": json.dumps(c.request_json, ensure_ascii=False),
            "open_url": open_url(c.request_json),
        }

    top = [row(c) for c in result.top]
    front = [row(c) for c in result.pareto]
    points = [
        {
            "x": c.output_tokens_per_s,
            "y": float(c.cost_per_m),
            "label": f"#{c.rank} {planner.shape_label(c.server, c.shape, short)}",
            "highlight": c.pareto,
        }
        for c in result.candidates
    ]
    y_unit = f"{cur}/M tokens"
    chart = ""
    if points:
        chart = scatter_svg(
            points,
            _pick("Output throughput (tokens/s)", "输出吞吐（tokens/s）", lang),
            _pick(f"Cost per million tokens ({y_unit})", f"每百万 Token 成本（{y_unit}）", lang),
            lang,
            title=_pick("Cost vs throughput: Pareto front highlighted", "成本与吞吐：高亮为帕累托前沿", lang),
            legend=(_pick("Pareto front", "帕累托前沿", lang), _pick("Other feasible", "其他可行方案", lang)),
        )
    rejected = [
        {
            "server": r.server_name,
            "code": r.code,
            "field": r.field,
            "message": _pick(r.message_en, r.message_zh, lang),
        }
        for r in result.rejected
    ]
    binding = None
    if result.binding is not None:
        binding = {
            "field": result.binding.field,
            "code": result.binding.code,
            "message": _pick(result.binding.message_en, result.binding.message_zh, lang),
        }
    return {
        "top": top,
        "front": front,
        "chart": chart,
        "rejected": rejected,
        "binding": binding,
        "feasible_count": len(result.candidates),
        "stats": result.stats,
        "lease": lease,
        "currency": cur,
    }


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
    context = results_context(result, _lang())
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
    form = ConfiguratorForm(services.form_data_from_request(request_json))
    plan = None
    if form.is_valid():
        form_request = form.to_request()
        try:
            plan_request, result = services.plan_from_json(form_request)
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


@api_view(methods=("POST",))
def recommend_api(request):
    """``POST /api/recommend``: a planner request (docs/planner.md) → ranked deployments."""
    return JsonResponse(recommend(request.json), json_dumps_params={"ensure_ascii": False})
