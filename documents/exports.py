"""Downloads made from a frozen revision: the BOM/TCO workbook and the launch bundle.

Both read only the revision's snapshots, so a revision exports the same
files whatever happens to the catalog later.

* :func:`revision_workbook` — XLSX (XlsxWriter, ``documents/workbook.py``) with
  the sheets ``BOM``, ``Inputs``, ``TCO yearly``, ``Summary`` and ``Facilities``
  (the plan's declared sections), ``TCO monthly``, ``Cost per M tokens``,
  ``Sensitivity`` and ``Assumptions``.  BOM totals, VAT, TCO years
  and NPV are live formulas (with their values) over the ``Inputs`` sheet;
  money is written as numbers with a currency column beside it (never as
  formatted text), and text always as text (formula-injection safe).
* :func:`revision_launch_bundle` — the launch bundle (.zip) of the frozen
  plan: the ``LaunchResult`` is rebuilt from the revision's ``result_json``
  (the very commands the proposal shows) and rendered by
  ``configurator.engine.launch``; if that shape cannot be read, the launch is
  rebuilt from the inline ``resolved_json`` with a catalog that refuses every
  lookup (the frozen request needs none).
"""

from __future__ import annotations

import dataclasses
import logging
import re
from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from typing import Any

from django.utils import translation
from django.utils.translation import gettext as _

from configurator import public as configurator
from configurator.public import formatting, is_zh, sections
from quotes.bom import money

from .pdf.language import proposal_language

logger = logging.getLogger(__name__)

SHEETS = (
    "BOM",
    "Inputs",
    "TCO yearly",
    "Summary",
    "Facilities",
    "TCO monthly",
    "Cost per M tokens",
    "Sensitivity",
    "Assumptions",
)
# + "Measured" when a vllm bench serve result is attached (issue 15)
XLSX_CONTENT_TYPE = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
MONEY_FORMAT = "#,##0.00"


class BundleUnavailable(Exception):
    """The revision has no launch configuration (its plan had errors)."""


def _dec(value: Any) -> Decimal | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        number = Decimal(str(value))
    except (InvalidOperation, ValueError):
        return None
    return number if number.is_finite() else None


def _money(value: Any) -> Decimal | None:
    number = _dec(value)
    return money(number) if number is not None else None


def _pick(row: Mapping, name: str, zh: bool) -> str:
    if zh and row.get(f"{name}_zh"):
        return str(row[f"{name}_zh"])
    return str(row.get(name) or row.get(f"{name}_en") or "")


# --------------------------------------------------------------------------- workbook


def _yearly_columns() -> list[tuple[str, str]]:
    return [
        ("buy_capex", _("Buy: capex")),
        ("buy_om", _("Buy: O&M")),
        ("buy_software_support", _("Buy: software and support")),
        ("buy_electricity", _("Buy: electricity")),
        ("buy_colocation", _("Buy: colocation")),
        ("buy_residual", _("Buy: residual value (servers sold)")),
        ("buy_cost", _("Buy: cost")),
        ("buy_cumulative", _("Buy: cumulative")),
        ("lease_upfront", _("Lease: network, racks, installation")),
        ("lease_rent", _("Lease: rent")),
        ("lease_om", _("Lease: O&M")),
        ("lease_software_support", _("Lease: software and support")),
        ("lease_electricity", _("Lease: electricity")),
        ("lease_colocation", _("Lease: colocation")),
        ("lease_cost", _("Lease: cost")),
        ("lease_cumulative", _("Lease: cumulative")),
    ]


def _yearly_rows(tco: Mapping, currency: str) -> tuple[list[dict], list[str]]:
    columns = _yearly_columns()
    rows = []
    for year in tco.get("yearly") or []:
        row: dict[str, Any] = {_("Year"): year.get("year")}
        for key, label in columns:
            row[label] = _money(year.get(key))
        row[_("Currency")] = currency
        rows.append(row)
    return rows, [label for _key, label in columns]


def _monthly_rows(tco: Mapping, currency: str) -> tuple[list[dict], list[str]]:
    buy, lease = _("Buy: cumulative"), _("Lease: cumulative")
    rows = [
        {
            _("Month"): month.get("month"),
            buy: _money(month.get("buy_cumulative")),
            lease: _money(month.get("lease_cumulative")),
            _("Currency"): currency,
        }
        for month in tco.get("monthly") or []
    ]
    return rows, [buy, lease]


def _percent(value: Any) -> str | None:
    """A fraction of the plan as the percentage it means ("−383.28 %"), None when there is none."""
    number = _dec(value)
    return None if number is None else f"{formatting.thousands(float(number) * 100, 2)} %"


def _token_line_labels(result: Mapping, lang: str, currency: str) -> dict[str, str]:
    """The cost-per-token lines' labels as the page and the proposal print them (the COST_PER_TOKEN
    section, its qualifiers filled in: "Self-hosted, buy (at the design capacity of 108 …)")."""
    tco, economics = result.get("tco") or {}, result.get("economics") or {}
    concurrency = (result.get("performance") or {}).get("concurrency")
    design = (economics.get("design") or {}).get("concurrency")
    keys = {
        "stated": formatting.thousands(concurrency) if concurrency is not None else "",
        "design": formatting.thousands(design) if design is not None else "",
        "rate": formatting.thousands(tco.get("usd_rate") or 0, 2),
        "unit": currency,
        "basis": economics.get("basis"),
    }
    names = ("buy", "lease", "api", "design")
    table = sections.table(
        sections.COST_PER_TOKEN, result.get("figures") or {}, lang, currency=currency, items=names, keys=keys
    )
    labels = {name: sections.label(sections.COST_PER_TOKEN, name, lang) for name in names}
    for row in table["rows"]:
        if row.get("key") == "design":  # the line that says its basis and its load
            note = row.get("note")
            labels["design"] = (
                (f"{row['label']}（{note}）" if is_zh(lang) else f"{row['label']} ({note})")
                if note
                else row["label"]
            )
    return labels


def _token_rows(
    tco: Mapping, currency: str, economics: Mapping | None = None, labels: Mapping[str, str] | None = None
) -> tuple[list[dict], list[str]]:
    """Cost per million tokens at the stated load (blended = input and output together) and at the
    design capacity (input and output), and the savings against the public API as percentages;
    ``labels``: the lines' labels (:func:`_token_line_labels`)."""
    tokens = tco.get("tokens") or {}
    labels = labels or {}
    inp, out, blended = _("Input, per M tokens"), _("Output, per M tokens"), _("Blended, per M tokens")
    rows = []
    for label, suffix in ((labels.get("buy", "buy"), "buy"), (labels.get("lease", "lease"), "lease")):
        rows.append(
            {
                _("Option"): label,
                inp: _money(tokens.get(f"cost_per_m_input_{suffix}")),
                out: _money(tokens.get(f"cost_per_m_output_{suffix}")),
                blended: _money(tokens.get(f"cost_per_m_blended_{suffix}")),
                _("Currency"): currency,
            }
        )
    rows.append(
        {
            _("Option"): labels.get("api", "api"),
            inp: _money(tokens.get("api_price_input_per_m")),
            out: _money(tokens.get("api_price_output_per_m")),
            blended: None,
            _("Currency"): currency,
        }
    )
    # The design capacity (economics.design): the same costs at the largest load within the latency
    # targets, beside the stated load's above, each row saying its basis.
    design = (economics or {}).get("design") or {}
    if design:
        rows.append(
            {
                _("Option"): labels.get("design", "design"),
                inp: _money(design.get("cost_per_m_input")),
                out: _money(design.get("cost_per_m_output")),
                blended: None,
                _("Currency"): currency,
            }
        )
    rows.append({})
    # Savings are fractions in the plan (−3.8328 = −383.28 %): written as percentages.
    for label, key in (
        (_("Saving against the API (buy)"), "saving_vs_api_buy"),
        (_("Saving against the API (lease)"), "saving_vs_api_lease"),
    ):
        rows.append({_("Option"): label, blended: _percent(tokens.get(key))})
    if design.get("saving_vs_api") is not None:
        rows.append(
            {
                _("Option"): _("Saving against the API (buy), at the design capacity"),
                blended: _percent(design.get("saving_vs_api")),
            }
        )
    for label, key in (
        (_("Output tokens per second (estimate)"), "output_tokens_per_s"),
        (_("Input M tokens per year"), "input_m_tokens_per_year"),
        (_("Output M tokens per year"), "output_m_tokens_per_year"),
    ):
        rows.append({_("Option"): label, blended: _dec(tokens.get(key))})
    return rows, [inp, out]


def _sensitivity_rows(tco: Mapping, currency: str, zh: bool) -> tuple[list[dict], list[str]]:
    low, base, high = _("Cost at low"), _("Cost at base"), _("Cost at high")
    rows = []
    for row in tco.get("sensitivity") or []:
        rows.append(
            {
                _("Basis"): row.get("basis", ""),
                _("Input"): _pick(row, "label", zh),
                _("Unit"): row.get("unit", ""),
                _("Low"): _dec(row.get("low_value")),
                _("Base"): _dec(row.get("base_value")),
                _("High"): _dec(row.get("high_value")),
                low: _money(row.get("cost_at_low")),
                base: _money(row.get("cost_at_base")),
                high: _money(row.get("cost_at_high")),
                _("Currency"): currency,
            }
        )
    return rows, [low, base, high]


def _assumption_rows(revision, zh: bool) -> list[dict]:
    from configurator.public import SOURCE_KINDS  # labels of the source kinds, shared with the page

    result = revision.result_json if isinstance(revision.result_json, dict) else {}
    resolved = revision.resolved_json if isinstance(revision.resolved_json, dict) else {}
    kind_label = {k: (zh_ if zh else en) for k, (en, zh_) in SOURCE_KINDS.items()}
    rows = []
    commercial = resolved.get("commercial") or {}
    site = resolved.get("site") or {}
    figures = result.get("figures") or {}  # the PUE row is named as the power section names it
    for label, value in (
        (_("Exchange rate (per USD)"), revision.usd_rate),
        (_("Horizon (years)"), commercial.get("horizon_years")),
        (_("Discount rate (NPV)"), commercial.get("discount_rate")),
        (_("Utilisation"), commercial.get("utilisation")),
        (_("Power load factor"), commercial.get("power_load_factor")),
        (_("Electricity price per kWh"), site.get("electricity_price_per_kwh")),
        (_pick(figures.get("power.pue") or {}, "label", zh) or "power.pue", site.get("pue")),
    ):
        rows.append(
            {
                _("Source"): kind_label.get("input", "input"),
                _("Item"): label,
                _("Value"): _dec(value) if _dec(value) is not None else value,
                _("Unit"): "",
                _("Reference"): "",
            }
        )
    order = {"assumed": 0, "seed": 1, "public": 2}
    for key, figure in sorted(
        figures.items(), key=lambda kv: (order.get((kv[1].get("source") or {}).get("kind"), 9), kv[0])
    ):
        source = figure.get("source") or {}
        if source.get("kind") not in order:
            continue
        value = figure.get("value")
        rows.append(
            {
                _("Source"): kind_label.get(source.get("kind"), source.get("kind")),
                _("Item"): f"{_pick(figure, 'label', zh) or key} ({key})",
                _("Value"): _dec(value) if _dec(value) is not None else str(value),
                _("Unit"): figure.get("unit", ""),
                _("Reference"): source.get("ref", ""),
            }
        )
    return rows


def _measured_rows(revision) -> list[dict]:
    """Estimate beside the attached vllm bench serve measurement (quotes/benchmarks/views.py), if any."""
    from quotes.benchmarks.views import measured_context

    measured = measured_context(revision)
    if not measured:
        return []
    source = _("measured: vllm bench serve (%(file)s)") % {"file": measured["benchmark"].filename}
    lang = translation.get_language() or "en"  # the workbook's language (revision_workbook overrides it)
    estimate = sections.label(sections.MEASURED, "estimate", lang)
    measured_heading = sections.label(sections.MEASURED, "measured", lang)
    return [
        {
            _("Figure"): row["label"],
            _("Unit"): row["unit"],
            estimate: row["estimate"],
            measured_heading: row["measured"],
            _("Source"): source,
        }
        for row in measured["rows"]
    ]


def revision_workbook(revision) -> bytes:
    """The BOM and TCO workbook of a revision (XLSX bytes), in the quote's language.

    BOM totals, inputs, TCO years and NPV are live formulas with their values
    (``documents/workbook.py``); the other sheets carry the frozen plan's figures.
    """
    from . import workbook

    lang = proposal_language(revision)
    zh = is_zh(lang)
    tco = (revision.result_json or {}).get("tco") or {}
    currency = tco.get("currency") or revision.currency
    with translation.override(lang):
        value_sheets = [
            ("TCO yearly", *_yearly_rows(tco, currency)),
            ("TCO monthly", *_monthly_rows(tco, currency)),
            (
                "Cost per M tokens",
                *_token_rows(
                    tco,
                    currency,
                    (revision.result_json or {}).get("economics"),
                    _token_line_labels(revision.result_json or {}, lang, currency),
                ),
            ),
            ("Sensitivity", *_sensitivity_rows(tco, currency, zh)),
            ("Assumptions", _assumption_rows(revision, zh), []),
        ]
        measured = _measured_rows(revision)
        if measured:
            value_sheets.append(("Measured", measured, []))
        return workbook.build(
            revision,
            zh=zh,
            value_sheets=value_sheets,
            yearly_columns=_yearly_columns(),
            title=f"{revision.number} BOM / TCO",
        )


def workbook_filename(revision) -> str:
    return f"{revision.number}-bom-tco.xlsx"


# --------------------------------------------------------------------------- launch bundle


def _node_from_dict(node: Mapping) -> configurator.NodeLaunch:
    converters = {
        "index": int,
        "dp_rank": int,
        "is_master": bool,
        "env": lambda env: {str(k): str(v) for k, v in dict(env).items()},
        "argv": lambda argv: tuple(tuple(str(a) for a in one) for one in argv),
        "api_ports": lambda ports: tuple(int(p) for p in ports or ()),
    }
    kwargs = {}
    for f in dataclasses.fields(configurator.NodeLaunch):
        if f.name in node:
            kwargs[f.name] = converters.get(f.name, str)(node[f.name])
    return configurator.NodeLaunch(**kwargs)


def launch_result_from_dict(data: Mapping) -> configurator.LaunchResult:
    """A ``LaunchResult`` rebuilt from its frozen JSON (``result_json["launch"]``).

    Only the dataclasses' own fields are read (derived properties such as a
    node's ``command`` are serialised too, and recomputed by the dataclass).
    Raises ``KeyError``/``TypeError``/``ValueError`` when the shape does not match.
    """
    ctx = dict(data["context"])
    ctx_fields = {f.name for f in dataclasses.fields(configurator.BundleContext)}
    context_kwargs = {k: v for k, v in ctx.items() if k in ctx_fields}
    context_kwargs["topology"] = configurator.TopologyKind(ctx["topology"])
    context_kwargs["groups"] = tuple(
        configurator.GroupSummary(
            **{f.name: g[f.name] for f in dataclasses.fields(configurator.GroupSummary) if f.name in g}
        )
        for g in ctx["groups"]
    )
    return configurator.LaunchResult(
        nodes=tuple(_node_from_dict(node) for node in data["nodes"]),
        placeholders=tuple(str(p) for p in data.get("placeholders") or ()),
        entrypoint=str(data.get("entrypoint") or ""),
        context=configurator.BundleContext(**context_kwargs),
    )


class RefusingCatalog:
    """A catalog port for ``configurator.io.requests.resolve`` that refuses every lookup.

    A revision's ``resolved_json`` has every catalog entry inline, so resolving it
    must never consult the live catalog (which may have changed since).  Only the
    calls resolution makes unconditionally answer: no default site or rack, and a
    bare commercial base that the inline commercial terms overwrite.
    """

    def __getattr__(self, name):
        def refuse(*args, **kwargs):
            raise LookupError(f"a frozen revision is resolved without the catalog ({name})")

        return refuse

    def switches(self, slugs, *args, **kwargs):
        if slugs is None:
            return ()
        raise LookupError("a frozen revision is resolved without the catalog (switches)")

    def commercial(self, *, price_list=None, currency=None, **kwargs):
        if price_list:
            raise LookupError("a frozen revision is resolved without the catalog (price list)")
        return configurator.CommercialSpec(currency=currency or "CNY")

    def default_site(self):
        return None

    def default_rack(self):
        return None


def launch_result_from_resolved(resolved: Mapping) -> configurator.LaunchResult:
    """The launch rebuilt from the frozen inline request (no catalog lookups)."""
    return configurator.launch_from_resolved(resolved, RefusingCatalog())


def revision_launch_result(revision) -> configurator.LaunchResult:
    """The frozen launch plan of a revision; :class:`BundleUnavailable` when it has none."""
    result = revision.result_json if isinstance(revision.result_json, dict) else {}
    data = result.get("launch")
    if not result.get("ok", True) or not isinstance(data, Mapping) or not data.get("nodes"):
        raise BundleUnavailable(_("This revision has no launch configuration: its plan has errors."))
    try:
        return launch_result_from_dict(data)
    except (KeyError, TypeError, ValueError) as exc:
        logger.warning(
            "Launch of %s not readable from result_json (%s); rebuilding it from resolved_json",
            revision.number,
            exc,
        )
    try:
        return launch_result_from_resolved(revision.resolved_json)
    except Exception as exc:
        raise BundleUnavailable(_("The launch configuration of this revision cannot be rebuilt.")) from exc


def revision_launch_bundle(revision) -> bytes:
    """The launch bundle (.zip bytes) of a revision's frozen plan."""
    return configurator.launch_bundle_zip(revision_launch_result(revision))


def bundle_filename(revision) -> str:
    return f"launch-{re.sub(r'[^A-Za-z0-9._-]', '-', revision.number)}.zip"
