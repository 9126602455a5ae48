"""The proposal PDF: rendering (WeasyPrint), the URL fetcher that keeps it sealed, fonts.

Public entry points: :func:`render_proposal_pdf` (bytes of one revision's
proposal), :func:`proposal_html`, :class:`SafeURLFetcher`,
:func:`harfbuzz_subset_available` and :func:`pdf_speed_notice`.  The job
around it (queueing, status, retries) is in :mod:`quotes.pdf.jobs` and
:mod:`quotes.tasks`.
"""

from .fetcher import RefusedURL, SafeURLFetcher, static_url
from .fonts import harfbuzz_subset_available, pdf_speed_notice
from .render import proposal_html, proposal_language, render_proposal_pdf

__all__ = [
    "RefusedURL",
    "SafeURLFetcher",
    "harfbuzz_subset_available",
    "pdf_speed_notice",
    "proposal_html",
    "proposal_language",
    "render_proposal_pdf",
    "static_url",
]
