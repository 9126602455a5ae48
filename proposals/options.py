"""Good / better / best: alternative configurations offered beside the quoted one.

:func:`option_add` plans a configuration request on the server (the same
``quotes.services.planning.configuration_plan`` as a quote) and freezes it on the quote;
:func:`options_from_candidates` adds the auto-planner's next-best candidates.  The proposal's
"Options compared" chapter reads them in ``documents/pdf/options.py``.
"""

from __future__ import annotations

from collections.abc import Mapping
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
