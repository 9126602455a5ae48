"""The only way the proposal renderer may load a resource.

WeasyPrint asks its URL fetcher for every stylesheet, image, font and SVG
reference in the document.  The proposal carries customer-supplied text
(names, titles, notes), so the renderer must never read a local file or
reach the network, whatever ends up in the HTML.  :class:`SafeURLFetcher`
serves exactly two kinds of URL:

* ``data:`` URIs (inline images, the drawings' fallbacks), decoded in memory;
* ``static:<path>`` — one of the app's own static files, found through
  ``django.contrib.staticfiles`` finders, with a path that stays inside a
  static root (no ``..``, no absolute path, no symlink leaving the root) and
  a file type from a short allow-list.

Everything else (``file:``, ``http:``, ``https:``, ``ftp:``, relative paths,
unknown schemes) raises :class:`RefusedURL`.  WeasyPrint turns a fetcher
error into a skipped resource and a logged warning, so the document still
renders, only without the refused resource.  Every URL asked for is
recorded (``requested``, ``served``, ``refused``) so tests can prove it.
"""

from __future__ import annotations

import logging
import posixpath
from pathlib import Path
from urllib.parse import unquote
from urllib.request import DataHandler, Request

from django.contrib.staticfiles import finders
from weasyprint.urls import URLFetcher, URLFetcherResponse

logger = logging.getLogger(__name__)

STATIC_SCHEME = "static:"
# What a proposal may embed from the static files: stylesheets, images, fonts.
ALLOWED_STATIC_TYPES = {
    ".css": "text/css",
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".svg": "image/svg+xml",
    ".webp": "image/webp",
    ".woff": "font/woff",
    ".woff2": "font/woff2",
    ".ttf": "font/ttf",
    ".otf": "font/otf",
}
MAX_STATIC_BYTES = 5 * 1024 * 1024
MAX_DATA_URI_CHARS = 10 * 1024 * 1024


class RefusedURL(ValueError):
    """A URL the proposal renderer will not fetch (WeasyPrint skips the resource)."""


def static_url(path: str) -> str:
    """The URL a proposal template uses for one of the app's static files: ``static:css/app.css``."""
    return f"{STATIC_SCHEME}{path.lstrip('/')}"


def _static_roots() -> list[Path]:
    """The real directories the staticfiles finders serve from."""
    roots: list[Path] = []
    for finder in finders.get_finders():
        for _prefix, root in getattr(finder, "locations", ()):  # FileSystemFinder
            roots.append(Path(root).resolve())
        for storage in getattr(finder, "storages", {}).values():  # AppDirectoriesFinder
            location = getattr(storage, "location", None)
            if location:
                roots.append(Path(location).resolve())
    return roots


def _clean_static_path(raw: str) -> str:
    """A static path as the finders expect it, or RefusedURL for anything that could escape."""
    path = unquote(raw.split("?", 1)[0].split("#", 1)[0])
    if not path or "\x00" in path or "\\" in path:
        raise RefusedURL("empty or malformed static path")
    if path.startswith("/") or path.startswith("~") or ":" in path.split("/", 1)[0]:
        raise RefusedURL("absolute static path")
    parts = path.split("/")
    if any(part in ("", ".", "..") for part in parts):
        raise RefusedURL("static path with '.', '..' or an empty segment")
    normalised = posixpath.normpath(path)
    if normalised != path:
        raise RefusedURL("static path is not in normal form")
    return path


class SafeURLFetcher(URLFetcher):
    """A WeasyPrint URL fetcher that serves data: URIs and the app's static files, nothing else."""

    def __init__(self) -> None:
        super().__init__(timeout=1, allowed_protocols=("data", "static"), allow_redirects=False)
        self.requested: list[str] = []
        self.served: list[str] = []
        self.refused: list[str] = []

    # WeasyPrint calls ``fetcher(url)``, which calls ``fetch``; ``open`` is only
    # reached through urllib's own machinery, which this fetcher never uses.
    def fetch(self, url, headers=None):
        self.requested.append(url)
        try:
            response = self._fetch(url)
        except RefusedURL as exc:
            self.refused.append(url)
            logger.warning("Proposal PDF: refused to fetch %.120r (%s)", url, exc)
            raise
        self.served.append(url)
        return response

    def open(self, url, data=None, timeout=None):
        full_url = url.full_url if isinstance(url, Request) else url
        return self.fetch(full_url)

    def _fetch(self, url: str) -> URLFetcherResponse:
        if not isinstance(url, str):
            raise RefusedURL("not a URL")
        lowered = url.lstrip().lower()
        if lowered.startswith("data:"):
            return self._data(url.lstrip())
        if lowered.startswith(STATIC_SCHEME):
            return self._static(url.lstrip()[len(STATIC_SCHEME) :])
        raise RefusedURL("only data: URIs and the app's static files may be embedded")

    def _data(self, url: str) -> URLFetcherResponse:
        if len(url) > MAX_DATA_URI_CHARS:
            raise RefusedURL("data: URI too large")
        try:
            response = DataHandler().data_open(Request(url))
        except Exception as exc:  # malformed base64 or header
            raise RefusedURL(f"malformed data: URI ({type(exc).__name__})") from None
        body = response.read()
        return URLFetcherResponse(url, body, {"Content-Type": response.headers.get("Content-Type", "")})

    def _static(self, raw_path: str) -> URLFetcherResponse:
        path = _clean_static_path(raw_path)
        suffix = posixpath.splitext(path)[1].lower()
        content_type = ALLOWED_STATIC_TYPES.get(suffix)
        if content_type is None:
            raise RefusedURL(f"static file type {suffix or '(none)'} is not embeddable")
        try:
            found = finders.find(path)
        except Exception as exc:  # SuspiciousFileOperation and friends
            raise RefusedURL(f"static path rejected by the finders ({type(exc).__name__})") from None
        if not found:
            raise RefusedURL("no such static file")
        real = Path(found).resolve()
        if not any(real.is_relative_to(root) for root in _static_roots()):
            raise RefusedURL("static file resolves outside the static roots")
        if not real.is_file():
            raise RefusedURL("not a regular file")
        if real.stat().st_size > MAX_STATIC_BYTES:
            raise RefusedURL("static file too large")
        return URLFetcherResponse(static_url(path), real.read_bytes(), {"Content-Type": content_type})
