"""Fonts of the proposal, and whether WeasyPrint can subset them quickly.

The proposal embeds Noto Sans CJK SC (Chinese) and DejaVu Sans (Latin), as
installed by ``fonts-noto-cjk`` and ``fonts-dejavu-core``.  WeasyPrint embeds
only the glyphs a document uses.  WeasyPrint 70 chooses how in
``weasyprint.pdf.fonts.Font.subset``: with the HarfBuzz-Subset library
(``weasyprint.text.ffi.harfbuzz_subset`` loaded, HarfBuzz ≥ 4.1.0) it subsets
in C; otherwise it falls back to fontTools in Python, which takes about ten
seconds per render for a CJK font of 65,000 glyphs instead of a fraction of a
second.  Debian ships the library as ``libharfbuzz-subset0`` (``make``
installs it).  :func:`check_font_subsetting` logs a warning once when it is
missing and :func:`pdf_speed_notice` gives the quote page a sentence to show.
"""

from __future__ import annotations

import functools
import logging

from django.utils.translation import gettext as _

logger = logging.getLogger(__name__)

# The font stack of the proposal (and of the drawings embedded in it).
FONT_FAMILY = '"Noto Sans CJK SC", "DejaVu Sans", sans-serif'
MONO_FONT_FAMILY = '"DejaVu Sans Mono", "Noto Sans Mono CJK SC", monospace'
HARFBUZZ_MIN_VERSION = (4, 1, 0)


def harfbuzz_subset_available() -> bool:
    """True when WeasyPrint will subset fonts with HarfBuzz-Subset rather than fontTools.

    Mirrors the test in ``weasyprint.pdf.fonts.Font.subset`` (WeasyPrint 70):
    the ``harfbuzz_subset`` library handle is loaded and HarfBuzz is at least 4.1.0.
    """
    try:
        from weasyprint.text.ffi import harfbuzz, harfbuzz_subset
    except Exception:  # WeasyPrint or its system libraries missing altogether
        return False
    if harfbuzz_subset is None:
        return False
    try:
        return bool(harfbuzz.hb_version_atleast(*HARFBUZZ_MIN_VERSION))
    except Exception:
        return False


@functools.cache
def check_font_subsetting() -> bool:
    """Log a warning (once per process) when proposal PDFs will subset fonts slowly."""
    available = harfbuzz_subset_available()
    if not available:
        logger.warning(
            "HarfBuzz-Subset is not available to WeasyPrint: proposal PDFs will subset the CJK "
            "font with fontTools (about 10 s per PDF instead of about 0.2 s). "
            "Install libharfbuzz-subset0 (Debian) or run `make setup`."
        )
    return available


def pdf_speed_notice() -> str:
    """A sentence for the quote page when PDF rendering will be slow ('' when all is well)."""
    if check_font_subsetting():
        return ""
    return _(
        "Proposal PDFs render slowly on this server (about 10 seconds each): the HarfBuzz-Subset "
        "library is missing. Ask an administrator to install libharfbuzz-subset0."
    )
