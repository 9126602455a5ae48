"""Proposal HTML and PDF for one quote revision.

``proposal_html`` renders the template in the quote's language (the page
text through gettext, the plan through ``context_from_dict``);
``render_proposal_pdf`` hands it to WeasyPrint with :class:`SafeURLFetcher`,
so nothing outside the document (no local file, no network) can end up in it.
The PDF is deterministic: the same revision renders to the same bytes, which
lets the rendering task skip storing a file it already has.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import threading
import time

from django.core.exceptions import ImproperlyConfigured
from django.template.loader import render_to_string
from django.utils import translation

from .context import proposal_context
from .fetcher import SafeURLFetcher
from .fonts import check_font_subsetting
from .language import proposal_language
from .svg_text import install as install_svg_text

logger = logging.getLogger(__name__)

TEMPLATE = "quotes/pdf/proposal.html"

# One WeasyPrint font configuration per thread, kept between renders: a new one per document
# (WeasyPrint's default) reloads Fontconfig and opens and measures the fonts again, the CJK font's
# 65,000 glyphs included.  The proposal declares no @font-face, so nothing of one document stays
# in it; the same revision still gives the same bytes.  Per thread because Pango's font map is
# not shared between threads.
_fonts = threading.local()


def _font_config():
    config = getattr(_fonts, "config", None)
    if config is None:
        from weasyprint.text.fonts import FontConfiguration

        config = _fonts.config = FontConfiguration()
    return config


# The cyclic garbage collector paused while WeasyPrint lays out and writes a document.  A render
# allocates some 300,000 container objects (boxes, computed styles, PDF objects), which made the
# collector run about twice per render over the whole process heap (Django, the catalog, the
# fonts: about 300,000 objects more), each pass finding almost nothing to free: about a third of
# the render's CPU time (1.9 s → 1.25 s for the 16-node proposal, bench/bench_pdf.py).  The
# collector runs again as soon as the last render in the process ends, and the document's
# objects are freed by reference counting as usual, so memory stays bounded by one document per
# rendering thread.  Renders may overlap in threads: the collector resumes after the last one.
_collector_lock = threading.Lock()
_collector_pauses = 0
_collector_was_enabled = True


@contextlib.contextmanager
def collector_paused():
    """Pause Python's cyclic garbage collector for the duration of the block (nesting, threads)."""
    global _collector_pauses, _collector_was_enabled
    with _collector_lock:
        if _collector_pauses == 0:
            _collector_was_enabled = gc.isenabled()
            gc.disable()
        _collector_pauses += 1
    try:
        yield
    finally:
        with _collector_lock:
            _collector_pauses -= 1
            if _collector_pauses == 0 and _collector_was_enabled:
                gc.enable()
                # The document's own reference cycles (boxes and their children, styles): everything
                # allocated during the pause is still in the youngest generation, so one young pass
                # frees them without walking the rest of the heap.
                gc.collect(0)


class TranslationsMissing(ImproperlyConfigured):
    """The proposal's language has no compiled catalogue: it would come out with English headings."""


# A heading every proposal prints; untranslated, the catalogue of that language is not loaded.
_PROBE = "Executive summary"


def require_translations(lang: str) -> None:
    """Refuse to write a proposal in a language whose compiled messages (``django.mo``) are missing."""
    if lang.split("-")[0] == "en":
        return
    with translation.override(lang):
        if translation.gettext(_PROBE) == _PROBE:
            raise TranslationsMissing(
                f"the compiled translations for {lang!r} are missing (locale/<lang>/LC_MESSAGES/django.mo): "
                "run 'manage.py compilemessages'; a proposal is not written with English headings"
            )


def proposal_html(revision, *, lang: str | None = None, edition: str = "customer") -> str:
    """The proposal as one self-contained HTML document (styles inline, drawings as inline SVG).

    ``edition``: "customer" (the default) or "internal" (adds the engineering appendix).
    Raises :class:`TranslationsMissing` when the language's compiled messages are not installed.
    """
    lang = lang or proposal_language(revision)
    require_translations(lang)
    with translation.override(lang):
        return render_to_string(TEMPLATE, proposal_context(revision, lang, edition))


def render_proposal_pdf(
    revision,
    *,
    lang: str | None = None,
    edition: str = "customer",
    fetcher: SafeURLFetcher | None = None,
) -> bytes:
    """The proposal PDF of ``revision`` as bytes (WeasyPrint; only data: and static: resources)."""
    from weasyprint import HTML

    check_font_subsetting()
    install_svg_text()  # the drawings' SVG text as whole runs, not letter by letter
    started = time.perf_counter()
    html = proposal_html(revision, lang=lang, edition=edition)
    with collector_paused():
        document = HTML(string=html, base_url=None, url_fetcher=fetcher or SafeURLFetcher())
        pdf = document.write_pdf(font_config=_font_config())
        del document
    logger.info(
        "Proposal PDF %s rendered: %d bytes in %.2f s",
        revision.number,
        len(pdf),
        time.perf_counter() - started,
    )
    return pdf
