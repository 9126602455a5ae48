"""Content-Security-Policy for every response (Django 5.2 has no built-in CSP).

Scripts run only from this site's own static files, or inline with the
per-request nonce (``{{ csp_nonce }}`` in templates; django-htmx's
``{% htmx_script %}`` reads the same context variable).  No ``'unsafe-eval'``:
htmx is configured with ``allowEval: false`` (templates/base.html), so its
attribute expressions (``hx-on``, ``[filter]`` triggers, ``js:`` values) are
never evaluated; the configurator's live form filters its events in
static/js/app.js instead.  Inline ``style`` attributes stay allowed (the
drawings are inline SVG with style attributes); images may be ``data:`` URIs
(drawings, previews).  Nothing may frame the site, and forms post only here.
"""

from __future__ import annotations

import secrets

from django.utils.functional import SimpleLazyObject

HEADER = "Content-Security-Policy"


def policy(nonce: str) -> str:
    directives = {
        "default-src": "'self'",
        "script-src": f"'self' 'nonce-{nonce}'",
        "style-src": "'self' 'unsafe-inline'",
        "img-src": "'self' data:",
        "font-src": "'self' data:",
        "connect-src": "'self'",
        "object-src": "'none'",
        "base-uri": "'self'",
        "form-action": "'self'",
        "frame-ancestors": "'none'",
    }
    return "; ".join(f"{name} {value}" for name, value in directives.items())


class ContentSecurityPolicyMiddleware:
    """Give each request a nonce and send the policy with each response (unless a view set its own)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        nonce = secrets.token_urlsafe(18)
        request.csp_nonce = nonce
        response = self.get_response(request)
        if HEADER not in response:
            response[HEADER] = policy(nonce)
        return response


def csp_nonce(request) -> dict:
    """Template context processor: ``csp_nonce`` (what django-htmx's script tags read too)."""
    return {"csp_nonce": SimpleLazyObject(lambda: getattr(request, "csp_nonce", ""))}
