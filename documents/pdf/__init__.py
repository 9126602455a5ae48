"""The proposal PDF: rendering (WeasyPrint), the URL fetcher that keeps it sealed, fonts.

Public entry points: :func:`render_proposal_pdf` (bytes of one revision's
proposal), :func:`proposal_html`, :class:`SafeURLFetcher`,
:func:`harfbuzz_subset_available` and :func:`pdf_speed_notice`.  The job
around it (queueing, status, retries) is in :mod:`documents.pdf.jobs` and
:mod:`documents.tasks`.

Names are imported on first use, so loading the quote pages (the status
panel, the exports) never loads WeasyPrint and its system libraries; only
rendering does.
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    "RefusedURL": "fetcher",
    "SafeURLFetcher": "fetcher",
    "static_url": "fetcher",
    "harfbuzz_subset_available": "fonts",
    "pdf_speed_notice": "fonts",
    "proposal_html": "render",
    "proposal_language": "language",
    "render_proposal_pdf": "render",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
