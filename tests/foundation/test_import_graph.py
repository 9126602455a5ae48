"""The project's dependency rule holds: no import cycle, nothing imports upward, the engine is pure.

Built from the source with ``ast``, not by importing: an edge A → B is an ``import`` anywhere in
A that names B, a module of the project's own packages.  Every import counts: at module level,
in ``try:``/``if`` blocks, in class bodies and **inside functions** (a late import is still a
dependency, and the loop it hides is one a reader has to untangle), and under
``if TYPE_CHECKING:`` too (a type named from a module is a dependency on that module; a cycle
through type-only imports is still a knot, and none is needed: a shared type goes to the lower
module, as ``engine/types.py`` holds the launch bundle's ``Deviation``).  ``from pkg import name``
points at ``pkg.name`` when that is a module, else at ``pkg``.

The layers, lowest first (``docs/architecture.md`` states this and only this):

    configurator.engine  →  accounts | catalog  →  configurator  →  quotes  →  proposals  →  documents  →  config

A module imports its own layer or a lower one; ``accounts`` and ``catalog`` share a layer and
import neither each other.  ``documents`` (the proposal PDF, the workbook, the exports) reads
``quotes`` and ``proposals`` directly; neither of them imports it.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("accounts", "catalog", "configurator", "quotes", "proposals", "documents", "config")
ENGINE = "configurator.engine"
# What the pure engine must never import (it runs without Django, in the CLI and the benchmarks).
ENGINE_FORBIDDEN = ("django", "catalog", "quotes", "accounts", "proposals", "documents", "config")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            found[_module_name(path)] = path
    return found


def _all_imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement of the module: module level, class bodies, functions, TYPE_CHECKING."""
    return [node for node in ast.walk(tree) if isinstance(node, ast.Import | ast.ImportFrom)]


def _imported_names(module: str, path: Path, node: ast.Import | ast.ImportFrom) -> list[str]:
    """Absolute dotted names the statement imports (``from x import y`` gives ``x.y`` and ``x``)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:
        package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
        base = package[: len(package) - (node.level - 1)]
        stem = ".".join(base + ([node.module] if node.module else []))
    else:
        stem = node.module or ""
    return [f"{stem}.{alias.name}" for alias in node.names] + [stem]


def _graph() -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """(project edges, every absolute name each module imports), counting every import."""
    modules = _modules()
    edges: dict[str, set[str]] = {m: set() for m in modules}
    raw: dict[str, set[str]] = {m: set() for m in modules}
    for module, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in _all_imports(tree):
            names = _imported_names(module, path, node)
            raw[module].update(names)
            if isinstance(node, ast.ImportFrom):
                # ``from pkg import sub`` → pkg.sub if a module, else pkg (the last name listed).
                *members, stem = names
                targets = [m for m in members if m in modules] or ([stem] if stem in modules else [])
            else:
                targets = [n for n in names if n in modules]
            edges[module].update(t for t in targets if t != module)
    return edges, raw


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    counter = 0
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(sorted(component))
    return components


def test_the_cycle_finder_finds_a_cycle():
    """The checker itself: a three-module ring and a self-contained pair are found, a chain is not."""
    ring = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"e"}, "e": set(), "f": {"g"}, "g": {"f"}}
    assert sorted(_cycles(ring)) == [["a", "b", "c"], ["f", "g"]]
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def test_relative_imports_resolve_to_the_project_modules():
    """``documents/tasks.py``'s ``from .pdf.render import …`` is an edge to documents.pdf.render (guards the resolver)."""
    edges, _ = _graph()
    assert "documents.pdf.render" in edges["documents.tasks"]
    assert "configurator.engine.types" in edges["configurator.engine.plan"]


def test_no_import_cycle_between_the_projects_modules():
    """Counting imports inside functions and under TYPE_CHECKING too."""
    edges, _ = _graph()
    cycles = _cycles(edges)
    assert cycles == [], "import cycles (every import counted): " + "; ".join(" ↔ ".join(c) for c in cycles)


# The dependency rule, lowest layer first; a module may import its own layer or a lower one, and
# two apps of one layer import neither each other.  ``configurator.engine`` is pure Python under
# everything (catalog's validators use its grammar of unsafe characters); ``config`` holds the
# settings and the root URLconf that mounts every app.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("configurator.engine",),
    ("accounts", "catalog"),
    ("configurator",),
    ("quotes",),
    ("proposals",),
    ("documents",),
    ("config",),
)


def _home(module: str) -> tuple[int, str]:
    """(layer index, the layer's package that holds ``module``), the longest package prefix winning."""
    best = max(
        (
            (len(package), index, package)
            for index, layer in enumerate(LAYERS)
            for package in layer
            if module == package or module.startswith(package + ".")
        ),
        default=None,
    )
    assert best is not None, f"{module} is in no layer of LAYERS"
    return best[1], best[2]


def _upward(edges: dict[str, set[str]]) -> list[str]:
    bad = []
    for module, targets in sorted(edges.items()):
        layer, package = _home(module)
        for target in sorted(targets):
            target_layer, target_package = _home(target)
            if target_layer > layer or (target_layer == layer and target_package != package):
                bad.append(f"{module} imports {target}")
    return bad


def test_the_layer_checker_refuses_an_upward_and_a_sideways_import():
    edges = {
        "catalog.models": {"configurator.engine.types", "accounts.roles"},
        "configurator.web.views": {"catalog.models", "configurator.engine.plan"},
        "configurator.engine.plan": {"configurator.web.forms"},
        "accounts.roles": set(),
        "configurator.web.forms": set(),
        "configurator.engine.types": set(),
    }
    assert _upward(edges) == [
        "catalog.models imports accounts.roles",
        "configurator.engine.plan imports configurator.web.forms",
    ]
    assert _home("configurator.engine") == (0, "configurator.engine")
    assert _home("configurator.public") == (2, "configurator")


def test_every_import_points_down_the_layers():
    """catalog imports no configurator module but the pure engine, nothing of quotes; quotes nothing of
    proposals or documents; the engine nothing of the rest of the configurator (every import counted)."""
    edges, _ = _graph()
    bad = _upward(edges)
    assert bad == [], "imports against the dependency rule (docs/architecture.md):\n" + "\n".join(bad)


# What proposals must not reach for: the documents built from it (the proposal PDF, the workbook,
# the exports), wherever they live.  The layers forbid ``documents``; the old homes in quotes are
# named too, so none of them comes back below proposals.
PROPOSALS_MUST_NOT_IMPORT = ("quotes.pdf", "quotes.workbook", "quotes.exports", "documents")


def _document_imports(raw: dict[str, set[str]], package: str) -> list[str]:
    return sorted(
        f"{module} imports {name}"
        for module, names in raw.items()
        if module == package or module.startswith(package + ".")
        for name in names
        if any(name == f or name.startswith(f + ".") for f in PROPOSALS_MUST_NOT_IMPORT)
    )


def test_proposals_imports_none_of_the_documents():
    """proposals (models, terms, options, delivery) imports nothing of documents/, nor quotes.pdf,
    quotes.workbook or quotes.exports: the documents are built above it, from its data."""
    assert _document_imports({"proposals.x": {"documents.pdf.story", "quotes.models"}}, "proposals") == [
        "proposals.x imports documents.pdf.story"
    ]
    _, raw = _graph()
    assert any(m.startswith("proposals.") for m in raw)
    assert _document_imports(raw, "proposals") == []


def test_the_graph_counts_imports_in_functions_and_under_type_checking():
    """The checker itself: a late import and a type-only import are edges."""
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from quotes.models import Quote\n"
        "def f():\n    from proposals import terms\n"
    )
    names = {
        name
        for node in _all_imports(ast.parse(source))
        for name in _imported_names("catalog.x", ROOT / "catalog" / "x.py", node)
    }
    assert {"quotes.models.Quote", "proposals.terms"} <= names
    edges, _ = _graph()
    assert "configurator.engine.launch.nodes" in edges["configurator.engine.serialize"]


def test_the_engine_imports_no_django_and_no_app():
    """configurator/engine is pure Python: no Django, no catalog, quotes or accounts (see its __init__)."""
    _, raw = _graph()
    engine_modules = [m for m in raw if m == ENGINE or m.startswith(ENGINE + ".")]
    assert len(engine_modules) > 10
    bad = sorted(
        f"{m} imports {name}"
        for m in engine_modules
        for name in raw[m]
        if name.split(".")[0] in ENGINE_FORBIDDEN
        or (name.startswith("configurator.") and not name.startswith(ENGINE))
    )
    assert bad == []


# The apps that use the configurator, and the one module of it they may import (issue 20).
CONFIGURATOR_CLIENTS = ("quotes", "proposals", "documents")
CONFIGURATOR_FACADE = "configurator.public"


def _configurator_imports_besides_the_facade(
    module: str, path: Path, source: str, modules: set[str]
) -> list[str]:
    """Configurator modules other than the facade that ``source`` imports, anywhere in it.

    Every import counts, inside functions too (a late import is still a dependency).
    ``from pkg import x`` names ``pkg.x`` when that is one of ``modules``, else ``pkg``.
    """
    found = []
    for node in ast.walk(ast.parse(source, filename=str(path))):
        if not isinstance(node, ast.Import | ast.ImportFrom):
            continue
        names = _imported_names(module, path, node)
        if isinstance(node, ast.ImportFrom):
            *members, stem = names
            names = [m for m in members if m in modules] or [stem]
        found += [
            f"{name} (line {node.lineno})"
            for name in names
            if (name == "configurator" or name.startswith("configurator.")) and name != CONFIGURATOR_FACADE
        ]
    return found


def test_quotes_proposals_and_documents_use_the_configurator_only_through_its_facade():
    """quotes/, proposals/ and documents/ import ``configurator.public`` and no other configurator module.

    Tests may import the internals; templates may still ``{% load plan_tags %}``.
    """
    modules = _modules()
    assert CONFIGURATOR_FACADE in modules
    names = set(modules)
    clients = {m: p for m, p in modules.items() if m.split(".")[0] in CONFIGURATOR_CLIENTS}
    assert "documents.exports" in clients and "proposals.options" in clients
    bad = [
        f"{module} imports {name}"
        for module, path in sorted(clients.items())
        for name in _configurator_imports_besides_the_facade(
            module, path, path.read_text(encoding="utf-8"), names
        )
    ]
    assert bad == [], "import the configurator through configurator.public:\n" + "\n".join(bad)


def test_the_facade_check_sees_every_form_of_import():
    """The checker itself: an internal module, a late import and ``from configurator import x`` are seen."""
    path = ROOT / "quotes" / "views.py"
    modules = set(_modules())
    samples = {
        "from configurator.engine.network import MEDIA": ["configurator.engine.network (line 1)"],
        "from configurator.engine import launch": ["configurator.engine.launch (line 1)"],
        "from configurator import not_a_module": ["configurator (line 1)"],
        "def f():\n    from configurator import planning": ["configurator.planning (line 2)"],
        "import configurator.web.forms": ["configurator.web.forms (line 1)"],
        "from configurator import public": [],
        "from configurator.public import MEDIA": [],
        "import configurator.public": [],
    }
    for source, expected in samples.items():
        assert _configurator_imports_besides_the_facade("quotes.views", path, source, modules) == expected, (
            source
        )


# The configurator's own tables (configurator/models.py); every catalog read goes through
# catalog/selectors.py, so a query's shape (select_related, order, what "default" means) is written once.
CONFIGURATOR_OWN_MODELS = {"CatalogStamp"}


def _manager_uses(source: str) -> list[tuple[str, int]]:
    """``X.objects`` uses in ``source``: (X as written, line)."""
    return [
        (ast.unparse(node.value), node.lineno)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Attribute) and node.attr == "objects"
    ]


def test_the_manager_checker_sees_a_query():
    assert _manager_uses("row = LlmModel.objects.filter(slug=s).first()") == [("LlmModel", 1)]
    assert _manager_uses("def f(model):\n    return model.objects.all()") == [("model", 2)]
    assert _manager_uses("rows = selectors.servers()") == []


def test_the_configurator_reads_the_catalog_through_selectors():
    """No configurator module (migrations aside) queries a model manager but its own tables'."""
    bad = [
        f"{module} line {line}: {owner}.objects"
        for module, path in sorted(_modules().items())
        if module.startswith("configurator.") and not module.startswith(ENGINE)
        for owner, line in _manager_uses(path.read_text(encoding="utf-8"))
        if owner not in CONFIGURATOR_OWN_MODELS
    ]
    assert bad == [], "read the catalog through catalog/selectors.py:\n" + "\n".join(bad)


def _audit_writes(source: str) -> list[int]:
    """Lines that write an audit row: ``audit(...)`` or ``AuditEvent.objects.create(...)``/``AuditEvent(...)``."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        name = ast.unparse(node.func)
        if name.split(".")[-1] == "audit" or name in ("AuditEvent", "AuditEvent.objects.create"):
            lines.append(node.lineno)
    return lines


def test_every_audited_state_change_of_a_quote_is_a_service():
    """The state changes of quotes and proposals (each with its audit row) live in quotes/services/."""
    assert _audit_writes("def f():\n    audit(actor=u, action=a, obj=o)\n") == [2]
    assert _audit_writes("AuditEvent.objects.filter(action=a).first()") == []
    modules = _modules()
    assert _audit_writes(modules["quotes.services.sharing"].read_text(encoding="utf-8"))
    bad = [
        f"{module} line {line}"
        for module, path in sorted(modules.items())
        if module.split(".")[0] in ("quotes", "proposals") and not module.startswith("quotes.services.")
        for line in _audit_writes(path.read_text(encoding="utf-8"))
    ]
    assert bad == [], "state changes belong in quotes/services/:\n" + "\n".join(bad)


def _dangling(modules: dict[str, Path]) -> list[str]:
    """Project imports (any level, functions included) naming a module that does not exist."""
    found = []
    for module, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in _all_imports(tree):
            names = _imported_names(module, path, node)
            stem = names[-1] if isinstance(node, ast.ImportFrom) else None
            wanted = [stem] if stem is not None else names
            for name in wanted:
                if name.split(".")[0] in PACKAGES and name not in modules:
                    found.append(f"{module} (line {node.lineno}): {name}")
    return found


def test_the_dangling_import_checker_sees_a_moved_module(tmp_path):
    """A function-level import of a module that was moved away is reported (a move missed one caller)."""
    path = tmp_path / "sample.py"
    path.write_text("def f():\n    from .planner_services import X\n", encoding="utf-8")
    module = "configurator.sample"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    (node,) = _all_imports(tree)
    assert _imported_names(module, path, node)[-1] == "configurator.planner_services"
    assert "configurator.planner_services" not in _modules()


def test_every_project_import_names_a_module_that_exists():
    """Imports inside functions run only when called: one left pointing at a moved module is a 500 at
    run time that no module-level import shows."""
    assert _dangling(_modules()) == []
