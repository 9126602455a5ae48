"""Inside the configurator, dependencies point down its sub-layers too.

``tests/foundation/test_import_graph.py`` holds the apps to their layers and counts ``configurator`` as
one; this holds the configurator's own modules to theirs, with the same graph (every import counted: at
module level, inside functions and under ``if TYPE_CHECKING:``).  The sub-layers, lowest first
(``docs/architecture.md`` states them):

    engine  →  catalog port  →  planning  →  web

* **engine** – ``configurator/engine/``, pure Python (its own rules are in test_import_graph).
* **catalog port** – the catalog as engine inputs and the caches keyed by its version: ``port/``
  (``specs``, ``inputs``, ``catalog`` with the one price-list rule, ``seed``, ``cache``,
  ``plan_cache``), ``models`` and ``apps`` (which ties every catalog save to the version).
* **planning** – the request boundary (``io/``), planning against the catalog (``planning/``), the
  auto-planner's search (``planner/``), the smallest catalog deployment meeting a target
  (``catalog_alternative``), the seeded catalog's requests and plans (``reference``), the performance
  model's calibration, the section model (``sections/``) and the drawings.
* **web** – what the pages, the API and the commands answer with: ``web/`` (forms, presets, form
  data, the fixes the page offers, views, the auto-planner's pages), ``urls``, ``templatetags``,
  ``api/``, ``middleware``, ``management/``, ``warmup``, ``acknowledge``, ``admin`` and ``public``
  (the interface to the other apps, which names the page's form).

A module imports its own sub-layer or a lower one: nothing below ``configurator.web`` imports it (a
form is the web's; what a plan needs of a request is in ``io/`` and ``planning/``).
"""

from __future__ import annotations

import pytest

from tests.foundation.test_import_graph import _cycles, _graph, _modules

PACKAGE = "configurator"

# Lowest first.  An entry is a module or a package (its modules with it); the longest entry wins.
SUBLAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("engine", ("configurator.engine",)),
    (
        "catalog port",
        (
            "configurator.port",
            "configurator.models",
            "configurator.apps",
        ),
    ),
    (
        "planning",
        (
            "configurator.io",
            "configurator.planning",
            "configurator.planner",
            "configurator.catalog_alternative",
            "configurator.reference",
            "configurator.calibration",
            "configurator.sections",
            "configurator.drawings",
        ),
    ),
    (
        "web",
        (
            "configurator.web",
            "configurator.urls",
            "configurator.templatetags",
            "configurator.api",
            "configurator.middleware",
            "configurator.management",
            "configurator.warmup",
            "configurator.acknowledge",
            "configurator.admin",
            "configurator.public",
        ),
    ),
)


def _sublayer(module: str) -> tuple[int, str]:
    """(index, name) of the sub-layer holding ``module``, the longest entry winning.

    The package itself (``configurator/__init__.py``, which imports nothing) is in the lowest."""
    if module == PACKAGE:
        return 0, SUBLAYERS[0][0]
    best = max(
        (
            (len(entry), index, name)
            for index, (name, entries) in enumerate(SUBLAYERS)
            for entry in entries
            if module == entry or module.startswith(entry + ".")
        ),
        default=None,
    )
    assert best is not None, f"{module} is in no sub-layer of SUBLAYERS"
    return best[1], best[2]


def _inside(module: str) -> bool:
    return module == PACKAGE or module.startswith(PACKAGE + ".")


def _upward(edges: dict[str, set[str]]) -> list[str]:
    """Imports from a configurator module to one of a higher sub-layer."""
    bad = []
    for module, targets in sorted(edges.items()):
        if not _inside(module):
            continue
        index, name = _sublayer(module)
        for target in sorted(t for t in targets if _inside(t)):
            target_index, target_name = _sublayer(target)
            if target_index > index:
                bad.append(f"{module} ({name}) imports {target} ({target_name})")
    return bad


def test_the_sublayer_checker_refuses_an_upward_import():
    """The checker itself: planning importing the web's form, the catalog port planning, and the engine
    the catalog port are refused; the web importing planning, and planning the catalog port, are not."""
    edges = {
        "configurator.planning.plans": {"configurator.web.forms", "configurator.port.catalog"},
        "configurator.port.catalog": {"configurator.planning.prices", "configurator.engine.types"},
        "configurator.engine.plan": {"configurator.port.cache"},
        "configurator.web.views": {"configurator.planning.plans", "configurator.engine.plan"},
        "configurator.io.requests": {"configurator.engine.types", "catalog.selectors"},
        "catalog.selectors": {"configurator.web.views"},  # another app: test_import_graph's to judge
    }
    assert _upward(edges) == [
        "configurator.engine.plan (engine) imports configurator.port.cache (catalog port)",
        "configurator.planning.plans (planning) imports configurator.web.forms (web)",
        "configurator.port.catalog (catalog port) imports configurator.planning.prices (planning)",
    ]
    assert _sublayer("configurator.web.planner.services") == (3, "web")
    assert _sublayer("configurator.planner.search") == (2, "planning")
    assert _sublayer("configurator.engine.plan") == (0, "engine")
    with pytest.raises(AssertionError):
        _sublayer("configurator.not_listed")


def test_every_configurator_module_is_in_one_sublayer():
    """A new module is placed on purpose (the assertion names it), and no entry names a module that is
    gone (a rename is placed again)."""
    modules = [m for m in _modules() if _inside(m)]
    assert len(modules) > 100
    for module in modules:
        _sublayer(module)
    names = set(modules)
    stale = [entry for _, entries in SUBLAYERS for entry in entries if entry not in names]
    assert stale == [], f"SUBLAYERS names modules that do not exist: {stale}"
    edges, _ = _graph()
    assert edges[PACKAGE] == set(), (
        "configurator/__init__.py imports nothing (it sits in the lowest sub-layer)"
    )


def test_every_configurator_import_points_down_its_sublayers():
    """Counting imports inside functions and under TYPE_CHECKING: nothing below the web imports
    ``configurator.web``, nothing of the catalog port imports planning."""
    edges, _ = _graph()
    bad = _upward(edges)
    assert bad == [], "imports against the configurator's sub-layers (docs/architecture.md):\n" + "\n".join(
        bad
    )


def test_no_import_cycle_inside_the_configurator():
    edges, _ = _graph()
    inside = {m: {t for t in targets if _inside(t)} for m, targets in edges.items() if _inside(m)}
    assert _cycles(inside) == []
