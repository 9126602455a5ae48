"""The proposal's "Options compared" chapter: the quoted configuration and the quote's options
(``proposals.models.ProposalOption``, added by ``proposals.options``) side by side.

:func:`comparison` turns the quoted revision and its options into the columns of the table, every
figure read from the frozen plans (capacity, latency, power, racks, capex, TCO, risks);
:func:`comparison_table` gives its figure rows and :func:`recommendation_reason` says why the
recommended column is recommended.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from django.utils.translation import gettext as _

from configurator.public import is_zh, sections
from proposals.models import ProposalOption

from . import story


def _get(data: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(data, Mapping):
            return None
        data = data.get(key)
    return data


def _num(value: Any) -> Decimal | None:
    try:
        return None if value is None else Decimal(str(value))
    except ArithmeticError:
        return None


def column(
    *, label: str, resolved: Mapping, result: Mapping, zh: bool, quoted: bool, recommended: bool
) -> dict:
    """One column of the comparison, from one frozen plan."""
    lang = "zh-hans" if zh else "en"
    server = resolved.get("server") or {}
    name = (server.get("name_zh") if zh else "") or server.get("name") or ""
    topology = resolved.get("topology") or {}
    workload = resolved.get("workload") or {}
    risks = story.customer_risks(result.get("checks") or [], {"result": result, **result}, resolved)
    kind = str(topology.get("kind", ""))
    currency = str(_get(result, "tco", "currency") or "CNY")
    rows = sections.rows(sections.OPTIONS, result.get("figures") or {}, lang, currency=currency)
    return {
        "kind": kind,
        # Every figure row of the comparison, from this option's own figure book (configurator.sections).
        "rows": {row["key"]: row for row in rows},
        "availability": AVAILABILITY.get(kind, lambda: "")(),
        "failure_domains": len(story.failure_domains(kind, result.get("layout") or {}, [], 0)),
        "label": label,
        "quoted": quoted,
        "recommended": recommended,
        "nodes": _get(result, "layout", "nodes") or topology.get("nodes"),
        "server": name,
        "topology": story.topology_label(topology, "zh-hans" if zh else "en"),
        "output_tokens_per_s": _num(_get(result, "performance", "output_tokens_per_s")),
        "concurrency": workload.get("concurrency"),
        "ttft_s": _get(result, "performance", "ttft_s"),
        "tpot_s": _get(result, "performance", "tpot_s"),
        "it_kw": _num(_get(result, "power", "it_kw")),
        "racks": _get(result, "racks", "rack_count"),
        "capex": _num(_get(result, "tco", "capex", "total")),
        "tco": _num(_get(result, "tco", "buy_total")),
        "horizon": _get(result, "tco", "horizon_years"),
        "risks": [r["title"] for r in risks],
    }


# What a failure leaves running, per topology (docs/domain.md §4).
AVAILABILITY = {
    "single": lambda: _("one instance, no standby: a server failure stops the service"),
    "disaggregated": lambda: _(
        "one prefill and one decode instance, no standby: a server failure stops the service"
    ),
    "primary_standby": lambda: _("a pair: the standby cluster takes over within about 30 seconds"),
    "tenant_pair": lambda: _("two isolated clusters: a failure stops one tenant's service, not the other's"),
}


def comparison_table(columns: list[dict]) -> list[dict]:
    """The comparison's figure rows (label, one text per column), in the section's order."""
    out = []
    for declared in sections.OPTIONS.rows:
        cells = [c["rows"].get(declared.key) for c in columns]
        present = [cell for cell in cells if cell]
        if not present:
            continue
        out.append(
            {
                "key": declared.key,
                "label": present[0]["label"],
                "total": present[0]["total"],
                "cells": [cell["text"] if cell else "—" for cell in cells],
            }
        )
    return out


def recommendation_reason(columns: list[dict], concurrency: Any, lang: str = "en") -> str:
    """Why the recommended column is recommended, in the figures of the table: what it serves at the
    stated load, how it survives a failure, and where it stands on cost against the others."""
    chosen = next((c for c in columns if c["recommended"]), None)
    if chosen is None:
        return ""
    parts = []
    capacity = (chosen["rows"].get("performance.capacity_concurrency") or {}).get("value")
    if capacity is not None and concurrency:
        if _num(capacity) >= _num(concurrency):
            parts.append(
                _("it serves the %(n)s requests in flight of the stated load before any request queues")
                % {"n": concurrency}
            )
        else:
            parts.append(
                _("it queues requests beyond %(capacity)s of the %(n)s in flight of the stated load")
                % {"capacity": capacity, "n": concurrency}
            )
    if chosen["kind"] in ("primary_standby", "tenant_pair"):
        parts.append(chosen["availability"])
    costs = {
        id(c): _num((c["rows"].get("tco.tokens.buy.cost_per_m_output") or {}).get("value")) for c in columns
    }
    known = [v for v in costs.values() if v is not None]
    if costs.get(id(chosen)) is not None and known and costs[id(chosen)] == min(known):
        parts.append(_("it has the lowest cost per million output tokens of the options"))
    if not parts:
        return ""
    return _("%(option)s is recommended: %(reasons)s.") % {
        "option": chosen["label"],
        "reasons": ("；" if is_zh(lang) else "; ").join(parts),
    }


def comparison(revision, lang: str) -> list[dict]:
    """The quoted configuration and the quote's options as comparison columns; [] without options."""
    options = list(ProposalOption.objects.filter(quote_id=revision.quote_id).order_by("position", "id"))
    if not options:
        return []
    zh = is_zh(lang)
    any_recommended = any(o.recommended for o in options)
    letters = "ABC"
    columns = [
        column(
            label=_("Option %(letter)s") % {"letter": letters[0]},
            resolved=revision.resolved_json if isinstance(revision.resolved_json, dict) else {},
            result=revision.result_json if isinstance(revision.result_json, dict) else {},
            zh=zh,
            quoted=True,
            recommended=not any_recommended,
        )
    ]
    for i, option in enumerate(options[: ProposalOption.MAX_OPTIONS], start=1):
        columns.append(
            column(
                label=_("Option %(letter)s") % {"letter": letters[i]},
                resolved=option.resolved_json,
                result=option.result_json,
                zh=zh,
                quoted=False,
                recommended=option.recommended,
            )
        )
        if option.label:
            columns[-1]["label"] += f" · {option.label}"
    return columns
