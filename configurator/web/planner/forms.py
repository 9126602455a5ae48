"""The auto-planner's form: a workload and the customer's constraints, as a planner request
(docs/planner.md), and its data for a fresh page or a scenario."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django import forms
from django.utils.translation import get_language
from django.utils.translation import gettext_lazy as _

from catalog import selectors
from configurator.engine.vocabulary import is_zh
from configurator.web import presets
from configurator.web.planner.services import DjangoPlannerCatalog

PURCHASE_CHOICES = [("buy", _("Buy")), ("lease", _("Lease"))]
SORT_CHOICES = [
    ("cost_per_m", _("Cost per million tokens")),
    ("tco", _("3-year TCO")),
    ("design_capacity", _("Design capacity within the latency targets")),
]


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
        selectors.scenarios(),
        to_field_name="slug",
        required=False,
        label=_("Scenario"),
        empty_label=_("— none —"),
    )
    model = forms.ModelChoiceField(
        selectors.llm_models(), to_field_name="slug", label=_("Model"), empty_label=None
    )
    input_tokens = _int(_("Input tokens per request"), 1, 16_777_216, True, 8192)
    output_tokens = _int(_("Output tokens per request"), 1, 16_777_216, True, 1024)
    # Blank: each server's serving default (the launch recipe's, else vLLM's; engine/defaults.py), as the
    # configurator page and the API take it.
    context = _int(_("Context length (max_model_len)"), 2, 16_777_216, False, None)
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

    site = forms.ModelChoiceField(selectors.sites(), to_field_name="slug", label=_("Site"), empty_label=None)
    sort = forms.ChoiceField(choices=SORT_CHOICES, label=_("Rank by"), initial="cost_per_m")
    max_nodes = _int(_("Largest deployment (nodes)"), 1, 64, True, 32)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        zh = is_zh(get_language())
        self.fields["scenario"].label_from_instance = lambda s: s.name_zh if zh else s.name_en
        self.fields["site"].label_from_instance = lambda row: (row.name_zh if zh else "") or row.name

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
            # The form is pre-filled with the scenario's targets: a field left blank clears the target.
            workload[key] = str(d[key]) if d.get(key) is not None else None
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
    base = presets.preset_data(None)
    data: dict[str, Any] = {
        "model": base.get("model", ""),
        "site": base.get("site", ""),
        "input_tokens": "8192",
        "output_tokens": "1024",
        "context": "",
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
            data[key] = "" if row[key] is None else str(row[key])
        for key in ("ttft_target_s", "tpot_target_ms"):  # the scenario's latency targets
            if row.get(key) is not None:
                data[key] = f"{row[key]:g}"
        if row["needs_vision"]:
            data["needs_vision"] = "on"
        if row.get("model"):
            data["model"] = row["model"]
    return data
