"""Revisions: built from a planned configuration with their priced BOM lines, totals,
approval state and snapshot hash; a new revision is made from an earlier one with changes."""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Max
from django.utils.translation import gettext as _

from ..bom import apply_line_discounts, bom_lines_from_plan, line_total, to_decimal
from ..models import Approval, BomLine, Quote, QuoteRevision
from ..pricing import approval_assessment, mark_lines
from ..statuses import CLOSED_STATUSES, ApprovalDecision, ApprovalState, AuditAction, QuoteStatus
from .base import (
    audit,
    discount_threshold,
    full_clean,
    parse_discount,
    parse_rate,
    quote_lock,
    quote_save,
    require_edit,
)
from .planning import PlannedConfiguration, has_list_record, plan_again
from .snapshot import revision_totals, snapshot_sha256
from .transitions import transition_locked


def _planned_discount(plan: PlannedConfiguration) -> Decimal | None:
    """The quote discount the engine planned with (``commercial.quote_discount`` of the resolved request)."""
    commercial = plan.resolved_json.get("commercial") if isinstance(plan.resolved_json, dict) else None
    if not isinstance(commercial, dict) or "quote_discount" not in commercial:
        return None
    return to_decimal(commercial["quote_discount"])


def _typed_measurement(request_json: Any) -> Any:
    """The measured throughput a request types in (``workload.measured_output_tokens_per_s``), if any."""
    workload = request_json.get("workload") if isinstance(request_json, Mapping) else None
    value = workload.get("measured_output_tokens_per_s") if isinstance(workload, Mapping) else None
    return value if value not in (None, "") else None


def refuse_unpriceable(plan: PlannedConfiguration) -> None:
    """Refuse what a quote cannot carry honestly (issue 27, findings 1 and 2).

    * A currency with no price list in force: nothing to compare its prices with, so any price
      typed in (USD 1 for a server) would pass as the list.  ``plan_for_quote`` records
      ``list_terms: None`` then; plans without the record (hand-made, older) are not refused.
    * A measured throughput typed into the request: only an imported benchmark file, attached
      to the revision with its hash, marks a figure measured (``quotes.benchmarks.importer``).
    """
    prices = plan.prices_json
    if isinstance(prices, Mapping) and "list_terms" in prices and prices["list_terms"] is None:
        raise ValidationError(
            {
                "request_json": _(
                    "There is no price list in force in %(currency)s, so the prices of this configuration "
                    "cannot be checked against a list price. Quote in a currency that has a price list "
                    "(or ask an administrator to add a %(currency)s price list)."
                )
                % {"currency": plan.currency or "?"}
            }
        )
    if (
        _typed_measurement(plan.request_json) is not None
        or _typed_measurement(plan.resolved_json) is not None
    ):
        raise ValidationError(
            {
                "request_json": _(
                    "A measured throughput can only come from a benchmark file: clear “measured output "
                    "tokens/s” in the configurator, save the quote, then import the result of "
                    "“vllm bench serve” on the quote page."
                )
            }
        )


def revision_build(
    *,
    quote: Quote,
    index: int,
    by,
    plan: PlannedConfiguration,
    discount: Decimal,
    line_discounts: Mapping[str, Decimal],
    based_on: QuoteRevision | None,
    change_note: str,
    approval_basis: QuoteRevision | None = None,
) -> QuoteRevision:
    """Create a draft revision with its BOM lines and totals (inside the caller's transaction).

    ``approval_basis`` (the revision it was made from: an earlier revision, or a clone's source):
    when that one was approved and the new one has the same priced lines — every price, list
    price, discount and quantity — and the same quote discount, the approval covers it too
    (issue 31); any change there asks a sales manager again."""
    refuse_unpriceable(plan)
    planned = _planned_discount(plan)
    if planned is not None and planned != discount:
        raise ValidationError(
            {
                "discount": _(
                    "The configuration was planned with a discount of %(planned)s, not %(discount)s; "
                    "plan it again with the new discount."
                )
                % {"planned": planned, "discount": discount}
            }
        )
    lines = apply_line_discounts(
        bom_lines_from_plan(
            plan.result_json, plan.prices_json, currency=plan.currency, request=plan.resolved_json
        ),
        line_discounts,
    )
    for line in lines:
        line["line_total"] = line_total(line["quantity"], line["unit_price"], line["discount"])
        if line["currency"] != plan.currency:
            raise ValidationError(
                _("Price %(sku)s is in %(line)s but the quote is in %(quote)s; the price list must match.")
                % {
                    "sku": line["sku"] or line["description_en"],
                    "line": line["currency"],
                    "quote": plan.currency,
                }
            )
    dropped = mark_lines(
        lines,
        result=plan.result_json,
        prices=plan.prices_json,
        currency=plan.currency,
        request=plan.resolved_json,
    )
    approval_state, approval_reasons = approval_assessment(lines, dropped, discount, discount_threshold())
    if approval_state == ApprovalState.PENDING and approval_basis is not None:
        carried = approval_carried(approval_basis, lines, discount)
        if carried is not None:
            approval_state = ApprovalState.APPROVED
            approval_reasons = [*approval_reasons, carried]
    totals = revision_totals(lines, discount, plan.result_json)
    revision = QuoteRevision(
        quote=quote,
        index=index,
        number=f"{quote.number}-R{index}",
        based_on=based_on,
        change_note=change_note,
        created_by=by,
        request_json=plan.request_json,
        resolved_json=plan.resolved_json,
        result_json=plan.result_json,
        prices_json=plan.prices_json,
        usd_rate=plan.usd_rate,
        currency=plan.currency,
        discount=discount,
        approval_state=approval_state,
        approval_reasons=approval_reasons,
        **totals,
    )
    revision.snapshot_sha256 = snapshot_sha256(revision, lines)
    full_clean(revision)
    revision.save()
    rows = []
    for position, line in enumerate(lines, start=1):
        row = BomLine(revision=revision, position=position, **line)
        # positions are unique by construction; the revision was saved above
        full_clean(row, validate_unique=False, validate_constraints=False)
        rows.append(row)
    BomLine.objects.bulk_create(rows)
    audit(
        actor=by,
        action=AuditAction.REVISION_CREATED,
        obj=revision,
        quote=quote,
        detail={
            "number": revision.number,
            "based_on": based_on.number if based_on else None,
            "change_note": change_note,
            "net_total": revision.net_total,
            "currency": revision.currency,
            "discount": revision.discount,
            "approval_state": revision.approval_state,
            "lines": len(rows),
        },
    )
    return revision


def approval_signature(lines: Any, discount: Decimal) -> tuple:
    """What an approval covers: the quote discount and each priced line's item, quantity, price,
    list price, line discount and catalog status (line dicts or BomLine rows)."""

    def get(line: Any, name: str) -> Any:
        return line.get(name) if isinstance(line, Mapping) else getattr(line, name)

    def number(value: Any) -> Decimal | None:
        return None if value is None else Decimal(value).normalize()

    rows = sorted(
        (
            str(get(line, "category")),
            str(get(line, "sku")),
            number(get(line, "quantity")),
            number(get(line, "unit_price")),
            number(get(line, "list_unit_price") or None),
            number(get(line, "discount")),
            bool(get(line, "non_catalog")),
        )
        for line in lines
    )
    return (Decimal(discount).normalize(), tuple(rows))


def approval_carried(basis: QuoteRevision, lines: list[dict], discount: Decimal) -> dict | None:
    """The approval reason a new revision inherits from ``basis`` (approved, same signature), or None.

    The entry names the manager's decision it rests on (``approval``: the Approval row's id,
    followed through revisions that inherited it), so the approval stays on record."""
    if basis.approval_state != ApprovalState.APPROVED:
        return None
    if approval_signature(lines, discount) != approval_signature(basis.lines.all(), basis.discount):
        return None
    inherited = next(
        (
            r
            for r in basis.approval_reasons or []
            if isinstance(r, Mapping) and r.get("code") == "approved_earlier"
        ),
        None,
    )
    if inherited is not None:
        return dict(inherited)
    approval = Approval.objects.filter(revision=basis, decision=ApprovalDecision.APPROVED).first()
    if approval is None:
        return None
    return {
        "code": "approved_earlier",
        "revision": basis.number,
        "approval": approval.pk,
        "by": approval.decided_by.get_username(),
        "at": approval.decided_at.date().isoformat(),
    }


PLAN_CHANGE_KEYS = ("request_json", "resolved_json", "result_json", "prices_json", "usd_rate", "currency")


REVISION_CHANGE_KEYS = frozenset({*PLAN_CHANGE_KEYS, "discount", "line_discounts", "note", "keep_prices"})


def revision_create_from(
    *, revision: QuoteRevision, changes: Mapping[str, Any], by, expected_version: int | None = None
) -> QuoteRevision:
    """Make the next revision of a quote from ``revision`` with ``changes`` applied.

    ``changes`` may hold ``discount`` (fraction), ``line_discounts``
    (``{"category:sku": fraction}``), ``note`` (what changed and why) and, for a
    replanned configuration, all of ``request_json``, ``resolved_json``,
    ``result_json``, ``prices_json`` and ``usd_rate`` (plus ``currency``, which
    must stay the quote's).  Everything not changed is copied from
    ``revision``, whose row is left untouched.  A sent or expired quote goes
    back to draft; a won or lost one cannot be revised.
    """
    unknown = set(changes) - REVISION_CHANGE_KEYS
    if unknown:
        raise ValidationError(_("Unknown changes: %(keys)s.") % {"keys": ", ".join(sorted(unknown))})
    given = [key for key in PLAN_CHANGE_KEYS[:5] if key in changes]
    if given and len(given) != 5:
        raise ValidationError(
            _(
                "A new configuration needs request, resolved request, result, prices and exchange rate together."
            )
        )
    with transaction.atomic():
        quote = quote_lock(revision.quote, expected_version)
        require_edit(by, quote)
        if quote.status in CLOSED_STATUSES:
            raise ValidationError(
                _("A %(status)s quote cannot be revised.") % {"status": QuoteStatus(quote.status).label}
            )
        base = QuoteRevision.objects.get(pk=revision.pk)
        if given:
            for key in ("request_json", "resolved_json", "result_json"):
                if not isinstance(changes[key], dict):
                    raise ValidationError({key: _("Must be a JSON object.")})
            rate = parse_rate(changes["usd_rate"])
            plan = PlannedConfiguration(
                request_json=changes["request_json"],
                resolved_json=changes["resolved_json"],
                result_json=changes["result_json"],
                prices_json=changes["prices_json"],
                usd_rate=rate,
                currency=str(changes.get("currency") or quote.currency).upper(),
            )
        elif has_list_record(base.prices_json):
            # Re-priced at today's list unless the engineer keeps the old prices (issue 27,
            # finding 5); either way the approval check compares with today's list.
            plan = plan_again(
                request_json=base.request_json,
                resolved_json=base.resolved_json,
                discount=parse_discount(changes["discount"]) if "discount" in changes else base.discount,
                keep_prices=bool(changes.get("keep_prices")),
            )
        else:
            plan = PlannedConfiguration(
                request_json=base.request_json,
                resolved_json=base.resolved_json,
                result_json=base.result_json,
                prices_json=base.prices_json,
                usd_rate=base.usd_rate,
                currency=base.currency,
            )
        if plan.currency != quote.currency:
            raise ValidationError(
                _("The quote is in %(quote)s; a revision in %(new)s needs a new quote.")
                % {"quote": quote.currency, "new": plan.currency}
            )
        discount = parse_discount(changes["discount"]) if "discount" in changes else base.discount
        line_discounts = {
            f"{line.category}:{line.sku}": line.discount for line in base.lines.all() if line.discount
        }
        for key, value in (changes.get("line_discounts") or {}).items():
            line_discounts[str(key)] = parse_discount(value, "line_discounts")
        index = (quote.revisions.aggregate(top=Max("index"))["top"] or 0) + 1
        if quote.status != QuoteStatus.DRAFT:
            transition_locked(
                quote=quote, to_status=QuoteStatus.DRAFT, by=by, comment=f"new revision R{index}"
            )
        new = revision_build(
            quote=quote,
            index=index,
            by=by,
            plan=plan,
            discount=discount,
            line_discounts=line_discounts,
            based_on=base,
            change_note=str(changes.get("note", "")).strip(),
            approval_basis=base,
        )
        quote_save(quote, [])
    return new
