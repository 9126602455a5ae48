"""The JSON API: ``POST /api/plan`` (and the helpers other JSON endpoints share).

Authentication is the browser session (with its CSRF token) or a per-user API
token in ``Authorization: Bearer …`` (no CSRF: no cookie is involved).
Every error is a JSON body ``{"errors": {"field.path": ["message"]}}`` with a
4xx status; nothing on bad input becomes a 500.
"""

from __future__ import annotations

import logging
from functools import wraps

from django.contrib.auth.decorators import login_not_required
from django.core.exceptions import RequestDataTooBig
from django.http import JsonResponse
from django.middleware.csrf import CsrfViewMiddleware
from django.views.decorators.csrf import csrf_exempt

from accounts import roles
from accounts.services import api_token_user
from catalog import jsonlimits
from configurator.io.requests import RequestError

log = logging.getLogger(__name__)
MAX_BODY_BYTES = jsonlimits.MAX_BYTES


def declared_length(request) -> int:
    """The body size the client declared (0 if none or unreadable)."""
    try:
        return max(0, int(request.META.get("CONTENT_LENGTH") or 0))
    except ValueError:
        return 0


def too_large() -> JsonResponse:
    return json_error({"request": [f"body too large (at most {MAX_BODY_BYTES // (1024 * 1024)} MB)."]}, 413)


def json_error(errors: dict, status: int) -> JsonResponse:
    return JsonResponse({"errors": errors}, status=status, json_dumps_params={"ensure_ascii": False})


def _csrf_failure(request):
    check = CsrfViewMiddleware(lambda r: None)
    check.process_request(request)
    return check.process_view(request, None, (), {})


def api_view(*, methods=("POST",), require_sales=True):
    """Authenticate (session + CSRF, or bearer token), check the method and the
    role, parse a JSON body into ``request.json``, and map RequestError to 400."""

    def decorate(view):
        @wraps(view)
        def wrapper(request, *args, **kwargs):
            auth = request.headers.get("Authorization", "")
            if auth.startswith("Bearer "):
                user = api_token_user(auth[7:].strip())
                if user is None:
                    return json_error({"authorization": ["invalid or revoked API token."]}, 401)
                request.user = user
            else:
                if not request.user.is_authenticated:
                    return json_error({"authorization": ["log in or send an API token."]}, 401)
                if declared_length(request) > MAX_BODY_BYTES:
                    return too_large()  # before the CSRF check reads the body
                if request.method not in ("GET", "HEAD", "OPTIONS") and _csrf_failure(request) is not None:
                    return json_error({"csrf": ["CSRF token missing or incorrect."]}, 403)
            if request.method not in methods:
                return json_error({"method": [f"use {' or '.join(methods)}."]}, 405)
            if require_sales and not (roles.is_sales(request.user) or request.user.is_superuser):
                return json_error({"authorization": ["your role cannot use the configurator API."]}, 403)
            request.json = None
            if request.method == "POST":
                try:
                    body = request.body
                except RequestDataTooBig:
                    return too_large()
                try:
                    request.json = jsonlimits.loads(body, what="body")
                except jsonlimits.InvalidText as exc:  # a lone surrogate etc.: 400 naming the field
                    return json_error({exc.field: [str(exc)]}, 400)
                except jsonlimits.JsonLimitError as exc:
                    return json_error({"request": [str(exc)]}, exc.status)
                if b"\\u0000" in body:
                    # PostgreSQL text cannot hold NUL; no field may carry one.
                    return json_error({"request": ["text must not contain NUL characters (\\u0000)."]}, 400)
            try:
                return view(request, *args, **kwargs)
            except RequestError as exc:
                return json_error(exc.errors, 400)

        return login_not_required(csrf_exempt(wrapper))

    return decorate
