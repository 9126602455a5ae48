"""The functions the quote's documents take from this app (``quotes.proposal_parts.ProposalParts``).

Registered with quotes when Django starts (``apps.ProposalsConfig.ready``): quotes sits below this
app and reaches them through ``quotes.proposal_parts``, never by importing ``proposals``.
"""

from __future__ import annotations

from .delivery import delivery_context
from .options import comparison, comparison_table, recommendation_reason
from .terms import commercial_context, terms_for, vat_class, vat_rate

__all__ = [
    "commercial_context",
    "comparison",
    "comparison_table",
    "delivery_context",
    "recommendation_reason",
    "terms_for",
    "vat_class",
    "vat_rate",
]
