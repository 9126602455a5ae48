"""Warm a fresh server process before its first request.

The first configurator page a process serves pays for loading the URL
configuration (every view module), compiling the page's templates and
importing the drawing and engine code (about 0.3 s); a web
worker does that once at start-up instead (``config/wsgi.py`` calls
:func:`warm_up`), so the first engineer after a deploy or a worker restart
gets the page as fast as everyone after them.  Nothing here touches the
database: the catalog cache fills on the first request of each catalog
version, as it must.
"""

from __future__ import annotations

import logging

log = logging.getLogger(__name__)

TEMPLATES = (
    "configurator/home.html",
    "configurator/_workspace.html",
    "configurator/_results.html",
    "configurator/_verdicts.html",
    "configurator/_field.html",
    "configurator/_quote_card.html",
    "configurator/_quote_plan.html",
    "configurator/_notice.html",
)


def warm_up() -> None:
    """Load the URL configuration (every view module), compile the configurator
    templates and import the plan and drawing code."""
    try:
        from django.template.loader import get_template
        from django.urls import get_resolver, reverse

        get_resolver()._populate()
        reverse("configurator:home")

        from . import services  # noqa: F401  (imports the engine and drawings)
        from .engine import plan  # noqa: F401

        for name in TEMPLATES:
            get_template(name)
    except Exception:  # a warm-up must never stop a worker from starting
        log.exception("configurator warm-up failed")
