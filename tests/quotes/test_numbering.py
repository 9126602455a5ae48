"""Quote numbers: Q-YYYY-NNNN, one sequence per year, distinct under concurrent creation."""

from __future__ import annotations

import contextlib
import re
import sqlite3
import threading
from datetime import date
from decimal import Decimal

import pytest
from django.db import IntegrityError, connection, connections, transaction
from django.utils import timezone

from quotes.models import Quote, QuoteNumberCounter
from quotes.services.customers import customer_create
from quotes.services.quotes import quote_create_from_configuration

from .conftest import plan_kwargs


@pytest.mark.django_db
def test_number_format_year_and_revision_number(make_quote):
    quote = make_quote()
    year = timezone.localdate().year
    assert re.fullmatch(rf"Q-{year}-\d{{4}}", quote.number)
    assert quote.number == f"Q-{year}-0001"
    assert (quote.year, quote.sequence) == (year, 1)
    assert quote.revisions.get().number == f"Q-{year}-0001-R1"


@pytest.mark.django_db
def test_numbers_are_consecutive_and_a_new_year_starts_at_one(make_quote, monkeypatch):
    first, second = make_quote(), make_quote()
    assert (first.sequence, second.sequence) == (1, 2)
    assert second.number.endswith("-0002")
    monkeypatch.setattr(timezone, "localdate", lambda: date(2031, 1, 2))
    next_year = make_quote()
    assert next_year.number == "Q-2031-0001"
    assert QuoteNumberCounter.objects.get(year=2031).last_number == 1


@pytest.mark.django_db
def test_sequence_beyond_9999_keeps_all_digits(make_quote):
    year = timezone.localdate().year
    QuoteNumberCounter.objects.create(year=year, last_number=9999)
    assert make_quote().number == f"Q-{year}-10000"


@pytest.mark.django_db
def test_the_database_refuses_a_duplicate_number(make_quote):
    quote = make_quote()
    duplicate = Quote.objects.get(pk=quote.pk)
    duplicate.pk = None
    duplicate.sequence = 99
    with pytest.raises(IntegrityError), transaction.atomic():
        duplicate.save()


@contextlib.contextmanager
def _threads_use_a_file_database(tmp_path):
    """On in-memory SQLite, point new (thread) connections at a file copy of the test database.

    pytest-django's SQLite test database is a shared-cache in-memory database,
    where a second writer gets "database table is locked" at once instead of
    waiting; the app's embedded database is a file, where the IMMEDIATE
    transaction mode and busy timeout in settings serialise writers.  This
    copies the test database to a file for the threads and changes nothing on
    PostgreSQL.  The main thread must not use the database inside the block.
    """
    conn = connections["default"]
    if conn.vendor != "sqlite" or not conn.is_in_memory_db():
        yield
        return
    path = tmp_path / "concurrency.sqlite3"
    conn.ensure_connection()
    target = sqlite3.connect(path)
    conn.connection.backup(target)
    target.close()
    memory_name = conn.settings_dict["NAME"]
    conn.settings_dict["NAME"] = str(path)  # the dict every new connection is built from
    try:
        yield
    finally:
        conn.settings_dict["NAME"] = memory_name


def _in_a_thread(fn):
    """Run ``fn`` in a fresh thread (its own connection) and return its result."""
    box = {}

    def run():
        try:
            box["value"] = fn()
        except BaseException as exc:  # re-raised below
            box["error"] = exc
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(timeout=60)
    if "error" in box:
        raise box["error"]
    return box["value"]


@pytest.mark.django_db(transaction=True)
def test_fifty_concurrent_creations_get_fifty_distinct_numbers(users, tmp_path):
    # Each thread has its own database connection: on PostgreSQL the counter
    # row lock (SELECT … FOR UPDATE) serialises them, on SQLite the IMMEDIATE
    # transactions do; the unique constraint would turn a race into an error.
    engineer = users["engineer"]
    customer = customer_create(by=engineer, name="Concurrent Bank")
    numbers: list[str] = []
    errors: list[BaseException] = []
    start = threading.Barrier(50)
    lock = threading.Lock()

    def create():
        try:
            start.wait(timeout=30)
            quote = quote_create_from_configuration(
                by=engineer, customer=customer, discount=Decimal("0"), **plan_kwargs()
            )
            with lock:
                numbers.append(quote.number)
        except BaseException as exc:  # reported below
            with lock:
                errors.append(exc)
        finally:
            connection.close()

    with _threads_use_a_file_database(tmp_path):
        threads = [threading.Thread(target=create) for _ in range(50)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
        stored = _in_a_thread(
            lambda: (
                sorted(Quote.objects.values_list("number", flat=True)),
                QuoteNumberCounter.objects.get(year=timezone.localdate().year).last_number,
            )
        )
    assert not errors, errors[:3]
    year = timezone.localdate().year
    expected = [f"Q-{year}-{n:04d}" for n in range(1, 51)]
    assert len(numbers) == 50
    assert sorted(numbers) == expected  # 50 distinct, consecutive numbers
    assert stored == (expected, 50)
