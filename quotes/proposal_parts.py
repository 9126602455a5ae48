"""What the proposal adds to a quote's documents, provided by the ``proposals`` app.

The proposal PDF (``quotes/pdf/``) and the workbook print the quote's commercial terms and VAT
rates, its delivery chapters and the options compared beside the quoted configuration.  Those
live in ``proposals/``, which sits above ``quotes`` (its models point at the quote, and it plans
options through ``quotes.services.planning``), so quotes must not import it: the dependency rule
of ``docs/architecture.md``, held by ``tests/foundation/test_import_graph.py``, counts every
import.  Instead ``proposals`` hands its functions to :func:`register` when Django starts
(``proposals.apps.ProposalsConfig.ready``) and quotes calls them through this module; without the
proposals app installed a document that needs them fails with ``ImproperlyConfigured`` naming it.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Protocol

from django.core.exceptions import ImproperlyConfigured


class ProposalParts(Protocol):
    """The functions ``proposals`` provides (``proposals/parts.py`` names them)."""

    def commercial_context(
        self, revision: Any, lines: Any, lang: str, *, benchmark: dict | None = None
    ) -> dict: ...
    def comparison(self, revision: Any, lang: str) -> list[dict]: ...
    def comparison_table(self, columns: list[dict]) -> list[dict]: ...
    def delivery_context(self, revision: Any, lang: str) -> dict: ...
    def recommendation_reason(self, columns: list[dict], concurrency: Any, lang: str = "en") -> str: ...
    def terms_for(self, quote: Any) -> Any: ...
    def vat_class(self, category: str) -> str: ...
    def vat_rate(self, terms: Any, kind: str) -> Decimal: ...


_provided: ProposalParts | None = None


def register(parts: ProposalParts) -> None:
    """Called once by the proposals app when Django starts."""
    global _provided
    _provided = parts


def _parts() -> ProposalParts:
    if _provided is None:
        raise ImproperlyConfigured(
            "The proposals app is not installed: the proposal's terms, delivery and options are its."
        )
    return _provided


def commercial_context(revision: Any, lines: Any, lang: str, *, benchmark: dict | None = None) -> dict:
    """Seller, terms, VAT rows, payment schedule, acceptance and totals (``proposals.terms``)."""
    return _parts().commercial_context(revision, lines, lang, benchmark=benchmark)


def comparison(revision: Any, lang: str) -> list[dict]:
    """The quoted configuration and the quote's options as comparison columns (``proposals.options``)."""
    return _parts().comparison(revision, lang)


def comparison_table(columns: list[dict]) -> list[dict]:
    """The comparison's figure rows (``proposals.options``)."""
    return _parts().comparison_table(columns)


def delivery_context(revision: Any, lang: str) -> dict:
    """Everything the delivery chapters show (``proposals.delivery``)."""
    return _parts().delivery_context(revision, lang)


def recommendation_reason(columns: list[dict], concurrency: Any, lang: str = "en") -> str:
    """Why the recommended option is recommended (``proposals.options``)."""
    return _parts().recommendation_reason(columns, concurrency, lang)


def terms_for(quote: Any) -> Any:
    """The quote's ``QuoteTerms`` (``proposals.terms``)."""
    return _parts().terms_for(quote)


def vat_class(category: str) -> str:
    """The kind of supply of a BOM line: goods, installation or services (``proposals.terms``)."""
    return _parts().vat_class(category)


def vat_rate(terms: Any, kind: str) -> Decimal:
    """The quote's VAT rate for one kind of supply (``proposals.terms``)."""
    return _parts().vat_rate(terms, kind)
