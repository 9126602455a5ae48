"""Proposal HTML and PDF for one quote revision.

``proposal_html`` renders the template in the quote's language (the page
text through gettext, the plan through ``context_from_dict``);
``render_proposal_pdf`` hands it to WeasyPrint with :class:`SafeURLFetcher`,
so nothing outside the document (no local file, no network) can end up in it.
The PDF is deterministic: the same revision renders to the same bytes, which
lets the rendering task skip storing a file it already has.
"""

from __future__ import annotations

import logging
import threading
import time

from django.core.exceptions import ImproperlyConfigured
from django.template.loader import render_to_string
from django.utils import translation

from .context import proposal_context, proposal_language
from .fetcher import SafeURLFetcher
from .fonts import check_font_subsetting
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
    document = HTML(string=html, base_url=None, url_fetcher=fetcher or SafeURLFetcher())
    pdf = document.write_pdf(font_config=_font_config())
    logger.info(
        "Proposal PDF %s rendered: %d bytes in %.2f s",
        revision.number,
        len(pdf),
        time.perf_counter() - started,
    )
    return pdf
