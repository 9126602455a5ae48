"""A configuration request planned on the server for a quote (never trusting posted results).

The configurator's ``plan_for_quote`` comes through ``configurator.public``,
the one configurator module quotes may import.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.core.exceptions import ValidationError
from django.utils.translation import get_language
from django.utils.translation import gettext as _

from configurator.public import is_zh

from .base import parse_rate

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class PlannedConfiguration:
    """A configuration request planned server-side: the snapshots a revision freezes."""

    request_json: dict
    resolved_json: dict
    result_json: dict
    prices_json: Any
    usd_rate: Decimal
    currency: str


class PlanningUnavailable(Exception):
    """The configurator cannot plan quotes in this installation yet."""


def _plan_for_quote():
    """``configurator.public.plan_for_quote``, imported late (the configurator owns it)."""
    try:
        from configurator.public import plan_for_quote
    except ImportError:
        logger.warning("configurator.public.plan_for_quote is not available", exc_info=True)
        return None
    return plan_for_quote


def _result_errors(result: Mapping) -> list[str]:
    """The plan's errors in the active language, as the header above them is (a Chinese header over
    English findings read as two documents)."""
    zh = is_zh(get_language() or "")
    messages = []
    for check in result.get("checks") or []:
        if isinstance(check, Mapping) and check.get("severity") == "error":
            text = (check.get("message_zh") if zh else check.get("message_en")) or check.get("message")
            messages.append(str(text or check.get("code")))
    return messages


def request_with_discount(request_json: Mapping, discount: Decimal) -> dict:
    """A copy of a configuration request with ``commercial.quote_discount`` set (the engine prices it)."""
    data = copy.deepcopy(dict(request_json))
    commercial = data.get("commercial")
    data["commercial"] = {
        **(commercial if isinstance(commercial, dict) else {}),
        "quote_discount": f"{Decimal(discount).normalize():f}",  # 0.1200 → "0.12"
    }
    return data


def configuration_plan(request_json: Any) -> PlannedConfiguration:
    """Plan a posted configuration request on the server (never trusting posted results).

    Raises ``ValidationError`` on ``request_json`` for a bad request or a plan
    with errors, and :class:`PlanningUnavailable` when the planner is missing.
    """
    if not isinstance(request_json, dict) or not request_json:
        raise ValidationError({"request_json": _("The configuration must be a non-empty JSON object.")})
    planner = _plan_for_quote()
    if planner is None:
        raise PlanningUnavailable(_("Quoting from the configurator is not available yet."))
    try:
        resolved, result, prices, usd_rate, currency = planner(request_json)
    except ValidationError as exc:
        raise ValidationError({"request_json": exc.messages}) from exc
    except Exception as exc:
        # The configurator reports bad requests as RequestError (``errors`` maps
        # a field path to messages); ValueError/LookupError are bad input too.
        # Anything else is a bug and propagates.
        errors = getattr(exc, "errors", None)
        if isinstance(errors, Mapping):
            messages = [f"{path}: {' '.join(map(str, msgs))}" for path, msgs in errors.items()]
        elif isinstance(exc, (ValueError, LookupError)):
            messages = [str(exc)]
        else:
            raise
        raise ValidationError({"request_json": messages}) from exc
    if not isinstance(result, dict):
        raise ValidationError({"request_json": _("The planner returned no result for this configuration.")})
    errors = _result_errors(result)
    if errors:
        raise ValidationError(
            {
                "request_json": [_("The configuration has errors; fix them in the configurator first.")]
                + errors
            }
        )
    return PlannedConfiguration(
        request_json=request_json,
        resolved_json=resolved if isinstance(resolved, dict) else {},
        result_json=result,
        prices_json=prices if prices is not None else {},
        usd_rate=parse_rate(usd_rate),
        currency=str(currency or "").upper(),
    )


def has_list_record(prices: Any) -> bool:
    """Whether ``prices`` were planned with the catalog's record of its list (``list_terms``,
    ``configurator.public.plan_for_quote``); hand-made and older revisions have none and are
    copied as they are."""
    return isinstance(prices, Mapping) and "list_terms" in prices


def request_at_todays_list(request_json: Mapping) -> dict:
    """A copy of a configuration request priced from the list in force today: without the
    price list or date it may pin (``commercial.price_list``, ``commercial.date``)."""
    data = copy.deepcopy(dict(request_json))
    commercial = data.get("commercial")
    if isinstance(commercial, dict):
        data["commercial"] = {k: v for k, v in commercial.items() if k not in ("price_list", "date")}
    return data


def plan_again(*, request_json: Mapping, resolved_json: Mapping, discount: Decimal, keep_prices: bool):
    """Plan a revision's configuration again for a clone or a new revision (issue 27, finding 5).

    By default it is re-priced at today's list (its request, without a pinned list or date).
    ``keep_prices`` plans the frozen inline request instead — the same hardware and the prices it
    was quoted at — and the approval check then compares those prices with today's list, so a
    price below it asks a sales manager (``quotes.pricing``).
    """
    source = resolved_json if keep_prices else request_at_todays_list(request_json)
    try:
        plan = configuration_plan(request_with_discount(source, discount))
    except PlanningUnavailable as exc:
        raise ValidationError(str(exc)) from exc
    request = request_with_discount(request_json if keep_prices else source, discount)
    return PlannedConfiguration(
        request_json=request,
        resolved_json=plan.resolved_json,
        result_json=plan.result_json,
        prices_json=plan.prices_json,
        usd_rate=plan.usd_rate,
        currency=plan.currency,
    )
