"""Warm a fresh server process before its first request.

The first configurator page a process serves pays for loading the URL
configuration (every view module), compiling the page's templates and
importing the drawing and engine code (about 0.3 s), then reading the
catalog and planning the page's default configuration; a web worker does
that once at start-up instead (``config/wsgi.py`` calls :func:`warm_up`), so
the first engineer after a deploy or a worker restart gets the page as fast
as everyone after them.  The catalog read is keyed by its version, so a
catalog saved later is read anew by the first request that sees it.
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

        from .engine import plan  # noqa: F401
        from .planning import plans  # noqa: F401  (imports the engine and drawings)

        for name in TEMPLATES:
            get_template(name)
    except Exception:  # a warm-up must never stop a worker from starting
        log.exception("configurator warm-up failed")
        return
    _plan_the_default_page()


def _plan_the_default_page() -> None:
    """Read the catalog and plan the configuration a fresh page opens with, with its advice, as the
    first page will (``views.home``): the catalog cache (``port.cache``) and the plan cache
    (``port.plan_cache``) hold them for the first engineer, and the engine's definitions and fitted factors
    are loaded.  A database that is not there yet (a worker started before ``migrate``) is no fault:
    the first request reads it then."""
    from django.db import DatabaseError

    from .planning import plans
    from .web import presets
    from .web.forms import ConfiguratorForm

    try:
        form = ConfiguratorForm(presets.preset_data(None))
        if form.is_valid():
            plans.plan_from_json(form.to_request())
    except DatabaseError as exc:
        log.info("configurator warm-up: the catalog is not readable yet (%s); the first page reads it", exc)
    except Exception:  # a warm-up must never stop a worker from starting
        log.exception("configurator warm-up: planning the default page failed")
