"""Issue 27's acceptance: no path creates, issues or sends a quote with a line below its list
price in the quote's currency without a recorded approval.

Hypothesis drives the services through random sequences of what an engineer and the catalog
admin can do — create (any currency, a server price override, a discount), change the server's
list price, clone or revise (re-priced, or keeping the old prices), approve, send — against the
real planner and the seeded catalog.  After every step the invariant is checked with figures
read here, not from the code under test: the server line's price after its line and quote
discounts, against the server's price in the list in force today (``price_list_in_force``).  A
cut beyond ``QUOTE_DISCOUNT_APPROVAL_THRESHOLD`` (10 %) must show as a pending or approved
revision at creation, and an issued revision must carry a manager's approval — its own
``Approval`` row, or the one it inherited (``approved_earlier``) from a revision with the same
prices and discounts.  A currency with no price list never makes a quote at all.
"""

from __future__ import annotations

import copy
from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError
from django.db import transaction
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from catalog.selectors import price_list_in_force
from configurator.port import cache as catalog_cache
from quotes.models import Approval, Quote, QuoteRevision
from quotes.services.approvals import revision_approve
from quotes.services.cloning import quote_clone
from quotes.services.planning import configuration_plan, request_with_discount
from quotes.services.quotes import quote_create_from_configuration
from quotes.services.revisions import revision_create_from
from quotes.services.transitions import quote_transition
from quotes.statuses import ApprovalDecision, ApprovalState, QuoteStatus, RevisionStatus
from quotes.workflow.changes import revise_configuration

pytestmark = pytest.mark.django_db

THRESHOLD = Decimal("0.10")  # settings.QUOTE_DISCOUNT_APPROVAL_THRESHOLD
REQUEST = {
    "model": "kimi-k3",
    "server": "atlas-800-a3",
    "topology": {"kind": "primary_standby", "nodes": 8},
    "scenario": "finance-research",
    # The scenario brings its workload; its 32 concurrent 34,816-token requests need more than this
    # 4 + 4 pair's KV cache once the K3 draft's layers are counted (28 at once), which this test is not
    # about: it states a load the pair carries.
    "workload": {"concurrency": 16},
}
DISCOUNTS = st.sampled_from(["0", "0.05", "0.1", "0.12", "0.3"])
FACTORS = st.sampled_from([None, "0.5", "0.89", "0.9", "0.95", "1", "1.2"])

create_step = st.tuples(st.sampled_from(["CNY", "CNY", "USD", "EUR"]), FACTORS, DISCOUNTS)
step = st.one_of(
    st.tuples(st.just("price"), st.sampled_from(["0.8", "1", "1.25", "1.5"])),
    st.tuples(st.just("clone"), st.booleans()),
    st.tuples(st.just("revise"), st.booleans(), st.one_of(st.none(), DISCOUNTS)),
    st.tuples(st.just("override"), FACTORS),
    st.tuples(st.just("approve")),
    st.tuples(st.just("send")),
)


def server_list_price(currency: str) -> Decimal | None:
    price_list = price_list_in_force(currency)
    if price_list is None:
        return None
    return price_list.items.get(kind="server", item_slug="atlas-800-a3").unit_price


def cut_below_list(revision: QuoteRevision) -> Decimal:
    """1 − what the customer pays for a server ÷ today's list price (quote discount: capex lines)."""
    listed = server_list_price(revision.currency)
    assert listed is not None, f"{revision.number} exists in {revision.currency}, which has no price list"
    line = revision.lines.get(category="server")
    paid = line.unit_price * (1 - line.discount) * (1 - revision.discount)
    return 1 - paid / listed


def recorded_approval(revision: QuoteRevision) -> Approval | None:
    """The manager's decision this revision rests on: its own, or the one it inherited."""
    own = Approval.objects.filter(revision=revision, decision=ApprovalDecision.APPROVED).first()
    if own is not None:
        return own
    for reason in revision.approval_reasons or []:
        if reason.get("code") == "approved_earlier":
            return Approval.objects.filter(
                pk=reason.get("approval"), decision=ApprovalDecision.APPROVED
            ).first()
    return None


def check_created(revision: QuoteRevision) -> None:
    if cut_below_list(revision) > THRESHOLD or revision.discount > THRESHOLD:
        assert revision.approval_state in (ApprovalState.PENDING, ApprovalState.APPROVED), revision.number
        if revision.approval_state == ApprovalState.APPROVED:
            assert recorded_approval(revision) is not None, revision.number


def check_issued(revision: QuoteRevision) -> None:
    # Measured when it was issued: against the list in force at that moment (today).
    if cut_below_list(revision) > THRESHOLD or revision.discount > THRESHOLD:
        assert revision.approval_state == ApprovalState.APPROVED, revision.number
        assert recorded_approval(revision) is not None, revision.number


def request_for(currency: str, factor: str | None, base: Decimal) -> dict:
    request = copy.deepcopy(REQUEST)
    commercial = {}
    if currency != "CNY":
        commercial["currency"] = currency
    if factor is not None:
        commercial["server_unit_price"] = str(base * Decimal(factor))
    if commercial:
        request["commercial"] = commercial
    return request


def set_server_list_price(price: Decimal) -> None:
    item = price_list_in_force("CNY").items.get(kind="server", item_slug="atlas-800-a3")
    item.unit_price = price
    item.save()


def run(users, create, steps) -> None:
    engineer, manager = users["engineer"], users["manager"]
    currency, factor, discount = create
    base = server_list_price("CNY")
    try:
        plan = configuration_plan(
            request_with_discount(request_for(currency, factor, base), Decimal(discount))
        )
        quote = quote_create_from_configuration(
            by=engineer, customer="Bank of Example", request_json=plan.request_json,
            resolved_json=plan.resolved_json, result_json=plan.result_json, prices_json=plan.prices_json,
            usd_rate=plan.usd_rate, currency=plan.currency, language="en", discount=discount,
        )  # fmt: skip
    except ValidationError:
        return  # refused with a message (a currency without a price list always is)
    check_created(quote.revisions.get())
    for action, *args in steps:
        quote = Quote.objects.order_by("-pk").first()
        latest = quote.revisions.order_by("-index").first()
        try:
            if action == "price":
                set_server_list_price(base * Decimal(args[0]))
            elif action == "clone":
                new = quote_clone(revision=latest, by=engineer, customer="Another Bank", keep_prices=args[0])
                check_created(new.revisions.get())
            elif action == "revise":
                keep, new_discount = args
                changes = {"keep_prices": keep, "note": "step"}
                if new_discount is not None:
                    changes["discount"] = new_discount
                check_created(revision_create_from(revision=latest, changes=changes, by=engineer))
            elif action == "override":
                request = request_for(latest.currency, args[0], base)
                check_created(revise_configuration(revision=latest, request_json=request, by=engineer))
            elif action == "approve":
                if latest.approval_state == ApprovalState.PENDING:
                    revision_approve(revision=latest, by=manager)
            elif action == "send":
                quote_transition(quote=quote, to_status=QuoteStatus.SENT, by=engineer, comment="")
                latest.refresh_from_db()
                assert latest.status == RevisionStatus.ISSUED
                check_issued(latest)
        except ValidationError:
            continue  # refused, with a message: nothing was created, issued or sent


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(create=create_step, steps=st.lists(step, min_size=1, max_size=5))
# The findings themselves, always tried: a currency without a price list (1); a clone of an old
# revision after a list price rise, kept or re-priced (5); a draft planned before the rise, sent
# after it; an override on a revision of an approved quote.
@example(create=("USD", "1", "0"), steps=[("send",)])
@example(create=("EUR", None, "0"), steps=[("send",)])
@example(create=("CNY", None, "0"), steps=[("price", "1.5"), ("clone", True), ("send",)])
@example(create=("CNY", None, "0"), steps=[("price", "1.5"), ("clone", False), ("send",)])
@example(create=("CNY", None, "0"), steps=[("price", "1.5"), ("send",)])
@example(create=("CNY", None, "0.12"), steps=[("approve",), ("override", "0.5"), ("send",)])
@example(
    create=("CNY", None, "0.12"), steps=[("approve",), ("price", "1.5"), ("revise", True, None), ("send",)]
)
def test_no_path_creates_issues_or_sends_a_line_below_list_without_approval(users, catalog, create, steps):
    with transaction.atomic():
        try:
            run(users, create, steps)
        finally:
            transaction.set_rollback(True)  # each example starts from the seeded catalog
            catalog_cache.clear()
    # Every issued revision of the example was checked when it was issued; a currency without a
    # price list never made a quote.
    assert not Quote.objects.exists()
