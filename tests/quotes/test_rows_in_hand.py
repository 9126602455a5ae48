"""``quotes.services.base.full_clean``: a model's ``full_clean`` without one ``SELECT`` per foreign key
whose row the caller holds, and nothing else left out.

Django's ``ForeignKey.validate`` asks the database whether the row a key names exists (``SELECT 1 …
LIMIT 1``, ``django/db/models/fields/related.py``); a new quote asked it 39 times, 25 of them for its
BOM lines' revision saved one statement earlier.  ``Model.full_clean(exclude=[…])`` would also skip
every unique and check constraint naming the excluded field (``Model.validate_constraints``), so the
helper leaves the keys out of the fields' checks only.
"""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.db import connection
from django.test.utils import CaptureQueriesContext

from accounts.models import Team
from quotes.models import AuditEvent, BomLine, Customer
from quotes.services.base import full_clean, rows_in_hand
from quotes.statuses import AuditAction


def _selects_of(table: str, queries) -> int:
    return sum(1 for q in queries if q["sql"].startswith("SELECT") and f'FROM "{table}"' in q["sql"])


@pytest.mark.django_db
def test_a_bom_line_of_a_saved_revision_is_validated_without_asking_for_the_revision(make_quote):
    revision = make_quote().revisions.get()
    line = revision.lines.first()
    row = BomLine(
        **{f.attname: getattr(line, f.attname) for f in BomLine._meta.concrete_fields if f.name != "id"}
    )
    row.revision, row.position = revision, 999  # the instance held, as revision_build holds it
    assert rows_in_hand(row) == ["revision"]
    with CaptureQueriesContext(connection) as django_way:
        row.full_clean(validate_unique=False, validate_constraints=False)
    with CaptureQueriesContext(connection) as helper:
        full_clean(row, validate_unique=False, validate_constraints=False)
    assert _selects_of("quotes_quoterevision", django_way.captured_queries) == 1
    assert _selects_of("quotes_quoterevision", helper.captured_queries) == 0


@pytest.mark.django_db
def test_a_key_is_still_checked_when_the_row_is_not_the_one_in_hand(make_quote, engineer):
    quote = make_quote()
    event = AuditEvent(
        actor=engineer, action=AuditAction.QUOTE_CREATED, object_type="quote", object_id="1", quote=quote
    )
    assert sorted(rows_in_hand(event)) == ["actor", "quote"]
    event.quote_id = quote.pk + 1000  # the key no longer names the instance held: the database is asked
    assert rows_in_hand(event) == ["actor"]
    with pytest.raises(ValidationError) as refused:
        full_clean(event)
    assert "quote" in refused.value.message_dict
    # a key whose instance is not in the database yet is checked (here: an unsaved team)
    assert sorted(rows_in_hand(Customer(name="New", team=Team(name="Unsaved"), created_by=engineer))) == [
        "created_by"
    ]


@pytest.mark.django_db
def test_the_constraints_naming_a_key_in_hand_are_still_checked(make_quote, engineer):
    quote = make_quote(customer="Shanghai Pudong Bank")
    twin = Customer(name="shanghai pudong bank", team=quote.team, created_by=engineer)
    assert "team" in rows_in_hand(twin)
    # Django's own exclusion would let the duplicate through to the database's unique index
    twin.full_clean(exclude=["team", "created_by"])
    with pytest.raises(ValidationError) as refused:
        full_clean(twin)
    assert Customer.objects.filter(team=quote.team, name__iexact="Shanghai Pudong Bank").count() == 1
    # the message of the constraint itself (quotes/models.py, Customer.Meta.constraints)
    assert refused.value.messages == ["Your team already has a customer of this name."]
    # errors of the fields and of the constraints are gathered together, as Model.full_clean does
    twin.contact = "x" * 10_000
    with pytest.raises(ValidationError) as both:
        full_clean(twin)
    assert "contact" in both.value.message_dict
    assert "Your team already has a customer of this name." in both.value.messages
