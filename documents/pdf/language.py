"""The language a proposal is written in, shared by the PDF and the exports."""

from __future__ import annotations

from quotes.frozen import revision_quote
from quotes.statuses import Language


def proposal_language(revision) -> str:
    """The language the proposal is written in: the quote's (Chinese when unset or unknown).

    An issued revision keeps the language it was issued in (``quotes.frozen``).
    """
    language = getattr(revision_quote(revision), "language", "") or ""
    return language if language in Language.values else Language.ZH_HANS
