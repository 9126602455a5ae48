"""Refuse oversized request bodies with a JSON 413 before anything reads them (issue 13).

Django raises ``RequestDataTooBig`` when a view, or the CSRF middleware, first
reads a form body over ``DATA_UPLOAD_MAX_MEMORY_SIZE``; that becomes an HTML
400.  Every endpoint that takes a configuration as JSON (``/api/…``,
``/configurator/bundle``, ``/quotes/create/``, the planner) is answered here
instead, from the declared ``Content-Length``: a 413 whose body is JSON naming
the limit.  Multipart uploads to the admin are left to Django (their files do
not count towards that limit; the catalog import pages check their own sizes).
"""

from __future__ import annotations

import re

from django.conf import settings
from django.http import HttpResponse
from django.utils.html import escape
from django.utils.translation import gettext as _

from configurator.api.base import declared_length, json_error

# File uploads with a larger limit of their own (path regex → bytes): the benchmark import
# reads results of up to 20 MB (quotes/benchmarks/importer.py MAX_BYTES), which the 2 MB form
# limit refused with a JSON 413 before the importer ever saw them (issue 27).
UPLOAD_LIMITS = ((re.compile(r"^/quotes/revisions/\d+/benchmark/$"), 20 * 1024 * 1024 + 64 * 1024),)


def _upload_limit(request) -> int | None:
    if not (request.content_type or "").startswith("multipart/"):
        return None
    for pattern, limit in UPLOAD_LIMITS:
        if pattern.match(request.path_info):
            return limit
    return None


class BodyLimitMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        upload_limit = _upload_limit(request)
        if upload_limit is not None and request.method == "POST":
            if declared_length(request) > upload_limit:
                # A browser's file form: a page that says so, in the user's language.
                message = _("The file is too large: at most %(mb)s MB can be uploaded here.") % {
                    "mb": upload_limit // (1024 * 1024)
                }
                return HttpResponse(f"<!DOCTYPE html><p>{escape(message)}</p>", status=413)
            return self.get_response(request)
        if (
            limit is not None
            and request.method not in ("GET", "HEAD", "OPTIONS")
            and declared_length(request) > limit
            and not (
                request.path_info.startswith("/admin/")
                and (request.content_type or "").startswith("multipart/")
            )
        ):
            return json_error({"request": [f"body too large (at most {limit:,} bytes)."]}, 413)
        return self.get_response(request)
