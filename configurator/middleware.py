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

from django.conf import settings

from .api import declared_length, json_error


class BodyLimitMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
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
