"""The quote header a revision was issued with, and the quote as an issued proposal shows it.

Issuing a revision snapshots the quote's header (customer, title, validity,
proposal language, currency, who prepared it) into ``QuoteRevision.header_json``.
The issued proposal prints that snapshot, so editing the quote afterwards
(title, customer, validity, language) changes only revisions made later —
never the document the customer was given.  A draft revision has no snapshot
and shows the quote as it is now.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

HEADER_VERSION = 1


def prepared_by(quote) -> str:
    """ "Name · Team" of the quote's owner, as the proposal's cover prints it."""
    owner = quote.owner
    profile = getattr(owner, "profile", None)
    name = (
        (getattr(profile, "display_name", "") or "").strip() or owner.get_full_name() or owner.get_username()
    )
    return f"{name} · {quote.team}" if quote.team_id else name


def header_snapshot(quote) -> dict[str, Any]:
    """The quote's header as plain JSON (what an issued revision freezes)."""
    customer = quote.customer
    return {
        "version": HEADER_VERSION,
        "title": quote.title,
        "customer": {
            "id": customer.pk,
            "name": customer.name,
            "industry": customer.industry,
            "contact": customer.contact,
        },
        "valid_until": quote.valid_until.isoformat(),
        "language": quote.language,
        "currency": quote.currency,
        "prepared_by": prepared_by(quote),
    }


@dataclass(frozen=True)
class FrozenCustomer:
    """The customer as the header snapshot recorded it (the fields the proposal prints)."""

    pk: int | None
    name: str
    industry: str
    contact: str

    def __str__(self) -> str:
        return self.name


class HeaderQuote:
    """The quote, with its header fields taken from an issued revision's snapshot.

    Attributes not in the snapshot (number, owner, team …) come from the quote
    itself; those never change after the quote is created.
    """

    def __init__(self, quote, header: dict[str, Any]):
        self._quote = quote
        raw_customer = header.get("customer") or {}
        self.title = str(header.get("title") or "")
        self.customer = FrozenCustomer(
            pk=raw_customer.get("id"),
            name=str(raw_customer.get("name") or ""),
            industry=str(raw_customer.get("industry") or ""),
            contact=str(raw_customer.get("contact") or ""),
        )
        self.valid_until = dt.date.fromisoformat(header["valid_until"])
        self.language = str(header.get("language") or "")
        self.currency = str(header.get("currency") or quote.currency)
        self.prepared_by = str(header.get("prepared_by") or "")

    def __getattr__(self, name: str):
        return getattr(self._quote, name)

    def __str__(self) -> str:
        return f"{self._quote.number} {self.title}".strip()


def revision_quote(revision):
    """The quote as ``revision``'s proposal shows it: the issued header, or the live quote for a draft."""
    header = revision.header_json if isinstance(revision.header_json, dict) else {}
    if header.get("valid_until"):
        return HeaderQuote(revision.quote, header)
    return revision.quote


def revision_prepared_by(revision) -> str:
    quote = revision_quote(revision)
    return getattr(quote, "prepared_by", "") or prepared_by(revision.quote)
