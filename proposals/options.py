"""Good / better / best: alternative configurations offered beside the quoted one, compared side by side.

:func:`option_add` plans a configuration request on the server (the same
``quotes.services.planning.configuration_plan`` as a quote) and freezes it on the quote;
:func:`comparison` turns the quoted revision and its options into the columns
of the proposal's "Options compared" table, every figure read from the frozen
plans (capacity, latency, power, racks, capex, TCO, risks).
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import gettext as _

from .models import ProposalOption


def option_add(*, quote, request_json: Any, label: str = "", recommended: bool = False) -> ProposalOption:
    """Plan ``request_json`` and add it to ``quote`` as an option (at most ``MAX_OPTIONS``)."""
    from quotes.services.planning import configuration_plan

    planned = configuration_plan(request_json)  # ValidationError on a bad or failing request
    with transaction.atomic():
        existing = list(ProposalOption.objects.select_for_update().filter(quote=quote))
        if len(existing) >= ProposalOption.MAX_OPTIONS:
            raise ValidationError(
                _("A proposal compares at most %(n)s options besides the quoted configuration.")
                % {"n": ProposalOption.MAX_OPTIONS}
            )
        if recommended:
            ProposalOption.objects.filter(quote=quote, recommended=True).update(recommended=False)
        option = ProposalOption(
            quote=quote,
            position=max((o.position for o in existing), default=0) + 1,
            label=label.strip(),
            recommended=recommended,
            request_json=planned.request_json,
            resolved_json=planned.resolved_json,
            result_json=planned.result_json,
            prices_json=planned.prices_json if isinstance(planned.prices_json, dict) else {},
        )
        option.full_clean()
        option.save()
    return option


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
    from quotes.pdf import story
    from quotes.pdf.context import topology_label

    server = resolved.get("server") or {}
    name = (server.get("name_zh") if zh else "") or server.get("name") or ""
    topology = resolved.get("topology") or {}
    workload = resolved.get("workload") or {}
    risks = story.customer_risks(result.get("checks") or [], {"result": result, **result}, resolved)
    return {
        "label": label,
        "quoted": quoted,
        "recommended": recommended,
        "nodes": _get(result, "layout", "nodes") or topology.get("nodes"),
        "server": name,
        "topology": topology_label(topology, "zh-hans" if zh else "en"),
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


def comparison(revision, lang: str) -> list[dict]:
    """The quoted configuration and the quote's options as comparison columns; [] without options."""
    options = list(ProposalOption.objects.filter(quote_id=revision.quote_id).order_by("position", "id"))
    if not options:
        return []
    zh = (lang or "").lower().startswith("zh")
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


def options_from_candidates(*, quote, candidates: list[Mapping], count: int = 2) -> list[ProposalOption]:
    """Add the auto-planner's next-best candidates (``configurator.planner.candidate_dict`` shapes, in
    rank order) as options, skipping the one already quoted; the quoted configuration stays recommended."""
    revision = quote.revisions.order_by("-index").first()
    resolved = (
        revision.resolved_json if revision is not None and isinstance(revision.resolved_json, dict) else {}
    )
    topology = resolved.get("topology") or {}
    quoted = (_get(resolved, "server", "slug"), topology.get("kind"), topology.get("nodes"))
    added: list[ProposalOption] = []
    for candidate in candidates:
        if (
            len(added) >= count
            or ProposalOption.objects.filter(quote=quote).count() >= ProposalOption.MAX_OPTIONS
        ):
            break
        key = (candidate.get("server"), candidate.get("topology"), candidate.get("nodes"))
        request = candidate.get("request")
        if key == quoted or not isinstance(request, Mapping):
            continue
        label = f"{candidate.get('nodes')} × {candidate.get('server_name') or candidate.get('server')}"
        added.append(option_add(quote=quote, request_json=dict(request), label=label))
    return added
