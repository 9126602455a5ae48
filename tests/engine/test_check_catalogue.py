"""The check catalogue (issue 29): every check declared once and raised by its code.

Read from the source, as ``test_figure_book.py`` reads every ``book.put``, so a branch no test plans
is checked too:

* every ``raise_(...)`` in the engine names a declared code, a declared fix and variant, and passes
  exactly the values that message, field and fix name;
* every declared code is raised somewhere (no dead definition);
* nothing outside ``engine/checks/book.py`` constructs a ``Check`` (nor calls a ``check()`` helper);
* ``raise_`` itself refuses a missing or an extra value and formats numbers with ``explain.py``'s
  formatters;
* the auto-planner's rejections are declared here too (``catalogue/planner.py``): every
  ``rejection(...)`` in ``configurator/planner`` is checked as a ``raise_`` is, a ``Rejection`` is made
  by ``planner.results.rejection`` only (nor its words replaced), and the planner's judging modules
  hold no words of their own.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from configurator.engine import explain
from configurator.engine.checks import CheckCatalogueError, CheckDef, Fix, definitions, raise_
from configurator.engine.checks.book import RESERVED, Catalogue, template_names
from configurator.engine.types import Severity

ROOT = Path(__file__).resolve().parents[2]
BOOK = ROOT / "configurator" / "engine" / "checks" / "book.py"
PLANNER = ROOT / "configurator" / "planner"
PLANNER_RESULTS = PLANNER / "results.py"
#: keywords of ``planner.results.rejection`` that are not template values
REJECTION_KEYWORDS = RESERVED | {"as_code"}
PROJECT_DIRS = ("configurator", "catalog", "quotes", "proposals", "accounts", "config", "scripts")


def _python_files(*dirs: str):
    for d in dirs:
        yield from sorted((ROOT / d).rglob("*.py"))


def _name(func: ast.expr) -> str:
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def _raises():
    """Every ``raise_(...)`` in the project's code, and every planner ``rejection(...)`` (worded alike)."""
    for path in _python_files("configurator"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or path == BOOK:
                continue
            if _name(node.func) == "raise_" or (
                _name(node.func) == "rejection" and path.is_relative_to(PLANNER) and path != PLANNER_RESULTS
            ):
                yield path, node


def _literal(call: ast.Call, name: str) -> tuple[bool, str | None]:
    """(known, value) of a keyword given as a literal (known False: chosen at run time)."""
    kw = next((k.value for k in call.keywords if k.arg == name), None)
    if kw is None:
        return True, None
    if isinstance(kw, ast.Constant):
        return True, kw.value
    return False, None


def _codes(node: ast.expr) -> list[str] | None:
    """The codes a raise may name: a literal, or ``"a" if … else "b"``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.IfExp):
        body, orelse = _codes(node.body), _codes(node.orelse)
        return body + orelse if body and orelse else None
    return None


def _problems(cat, where: str, code: str, call: ast.Call) -> list[str]:
    try:
        d = cat[code]
    except CheckCatalogueError as e:
        return [f"{where}: {e}"]
    given = {kw.arg for kw in call.keywords} - REJECTION_KEYWORDS
    known_v, variant = _literal(call, "variant")
    known_f, fix = _literal(call, "fix")
    variants = [variant] if known_v else [None, *d.variants]
    fixes = [fix] if known_f else [None, *d.fixes]
    try:
        candidates = [d.names(v, f) for v in variants for f in fixes]
    except CheckCatalogueError as e:
        return [f"{where}: {e}"]
    out = []
    if not any(set(names) <= given <= d.all_names() for names in candidates):
        wanted = " or ".join(str(sorted(n)) for n in candidates)
        out.append(f"{where}: {code!r} passes {sorted(given)}, its templates name {wanted}")
    if any(kw.arg == "severity" for kw in call.keywords) and not d.severities:
        out.append(f"{where}: {code!r} chooses a severity but declares no other")
    return out


def test_every_definition_is_whole_and_no_code_is_defined_twice():
    defs = list(definitions())
    assert len(defs) >= 3
    for d in defs:
        assert d.code.count(".") >= 1 and d.area, d.code
        assert d.en and d.zh, d.code
        for v in d.variants.values():
            assert v.en and v.zh, d.code
        for fix in [d.fix, *d.fixes.values()]:
            if fix is not None:
                assert bool(fix.en) == bool(fix.zh), d.code
        assert not (d.all_names() & RESERVED), d.code


def test_every_raise_names_a_declared_code_and_exactly_its_values():
    cat = definitions()
    seen = 0
    problems = []
    for path, call in _raises():
        where = f"{path.relative_to(ROOT)}:{call.lineno}"
        codes = _codes(call.args[0]) if call.args else None
        if not codes:
            problems.append(f"{where}: the code is not a literal (or a choice between literals)")
            continue
        if any(kw.arg is None for kw in call.keywords):
            problems.append(f"{where}: values passed with ** cannot be checked; name them")
            continue
        for code in codes:
            problems.extend(_problems(cat, where, code, call))
        seen += 1
    assert seen > 0
    assert not problems, "\n".join(problems)


def test_every_declared_code_is_raised_somewhere():
    raised = {code for _, call in _raises() if call.args for code in _codes(call.args[0]) or ()}
    unused = sorted(d.code for d in definitions() if d.code not in raised)
    assert not unused, f"declared but never raised: {unused}"


def test_nothing_outside_the_catalogue_constructs_a_check():
    """A ``Check`` is made by ``raise_`` only (no ``Check(...)``, no ``check(...)`` helper) anywhere in the
    project's code (tests may build one as a fixture): a check's text, field and fix live in its
    definition, not where it is raised."""
    offenders = []
    for path in _python_files(*PROJECT_DIRS):
        if path == BOOK:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and _name(node.func) in ("Check", "check"):
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not offenders, "raise checks with engine.checks.raise_: " + ", ".join(offenders)


def _functions(tree: ast.AST):
    """(function, node) for every node of every function (the innermost function that holds it)."""
    for fn in ast.walk(tree):
        if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            for node in ast.walk(fn):
                yield fn.name, node


def test_a_planner_rejection_is_built_from_the_catalogue_only():
    """The auto-planner's reasons are worded by their definitions (``catalogue/planner.py``): a
    ``Rejection`` is constructed by ``planner.results.rejection`` alone, nothing gives or replaces a
    rejection's ``message_en`` / ``message_zh`` (``dataclasses.replace`` included), and the modules
    that judge (``judge.py``, ``search.py``, ``sizing.py``, ``serving.py``, ``racks.py``) write no
    Chinese of their own, so an English sentence cannot be built there beside its words in the
    catalogue either."""
    offenders = []
    for path in _python_files(*PROJECT_DIRS):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        where = path.relative_to(ROOT)
        allowed = set()
        if path == PLANNER_RESULTS:
            allowed = {
                id(node)
                for fn, node in _functions(tree)
                if fn == "rejection" and isinstance(node, ast.Call) and _name(node.func) == "Rejection"
            }
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            if _name(node.func) == "Rejection" and id(node) not in allowed:
                offenders.append(f"{where}:{node.lineno}: Rejection(...) (use planner.results.rejection)")
            words_given = {kw.arg for kw in node.keywords} & {"message_en", "message_zh"}
            if path.is_relative_to(PLANNER) and _name(node.func) == "replace" and words_given:
                offenders.append(f"{where}:{node.lineno}: replace(..., {sorted(words_given)[0]}=...)")
    for name in ("judge.py", "search.py", "sizing.py", "serving.py", "racks.py"):
        path = PLANNER / name
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                if any("\u4e00" <= ch <= "\u9fff" for ch in node.value):
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value!r}")
    assert not offenders, "word a planner rejection in engine/checks/catalogue/planner.py:\n" + "\n".join(
        offenders
    )


def test_the_planner_reasons_are_rejections_of_their_own_area():
    """Every planner definition is an error of area ``planner`` whose code the planner's JSON carries
    (docs/planner.md, reason codes); an engine check never takes the planner's prefix."""
    planner = [d for d in definitions() if d.code.startswith("planner.")]
    assert len(planner) >= 25
    assert {d.area for d in definitions() if d.area == "planner"} == {"planner"}
    assert all(d.area == "planner" and d.severity == Severity.ERROR for d in planner)
    assert not [d.code for d in definitions() if d.area == "planner" and not d.code.startswith("planner.")]


def test_raise_refuses_values_the_templates_do_not_name():
    with pytest.raises(CheckCatalogueError, match=r"missing \['server_name'\]"):
        raise_("model.text_only_server", model_name="Qwen3-8B")
    with pytest.raises(CheckCatalogueError, match=r"not in the templates \['nodes'\]"):
        raise_("model.text_only_server", model_name="Qwen3-8B", server_name="X", nodes=2)
    with pytest.raises(CheckCatalogueError, match="no check definition"):
        raise_("model.no_such_check")


def test_templates_format_numbers_with_the_explain_formatters():
    cat = Catalogue(
        [
            CheckDef(
                "x.memory",
                "memory",
                Severity.WARNING,
                "{who}: {weights:gb} of weights, {tokens:thousands} tokens at {util:ratio} ({share:pct})",
                "{who}：权重 {weights:gb:2}，{tokens:thousands} tokens",
                field="{pfield}.tp",
                fix=Fix(
                    "Set max_num_seqs to {n}.", "将 max_num_seqs 设为 {n}。", {"{pfield}.max_num_seqs": "n"}
                ),
            )
        ]
    )
    d = cat["x.memory"]
    assert d.names() == {"who", "weights", "tokens", "util", "share", "pfield", "n"}
    assert template_names("{a:gb:2} and {b:.1f}") == {"a", "b"}
    with pytest.raises(ValueError, match="no formatter"):
        template_names("{a:gigabytes}")
    with pytest.raises(ValueError, match="not a simple name"):
        template_names("{a.b}")
    # Rendered as raise_ renders them: explain.py's formatters, the same in both languages.
    from configurator.engine.checks.book import render

    values = {"who": "Cluster", "weights": 29_750_000_000, "tokens": 133_120, "util": 0.9, "share": 0.85}
    assert render(d.en, values) == (
        f"Cluster: {explain.gb(29_750_000_000)} of weights, {explain.thousands(133_120)} tokens at "
        f"{explain.ratio(0.9)} ({explain.pct(0.85)})"
    )
    assert render(d.zh, values) == f"Cluster：权重 {explain.gb(29_750_000_000, 2)}，133,120 tokens"
    assert d.fix is not None and d.fix.build({"pfield": "parallel", "n": 4}) == {"parallel.max_num_seqs": 4}


def test_a_raise_fills_the_check_from_its_definition():
    c = raise_("model.text_only_server", model_name="Kimi-K2.5", server_name="Atlas 800I A2")
    d = definitions()["model.text_only_server"]
    assert (c.code, c.severity, c.area, c.field) == (d.code, d.severity, d.area, d.field)
    assert c.message_en.startswith(
        "The workload needs image input, but Kimi-K2.5 is validated on Atlas 800I A2"
    )
    assert "Kimi-K2.5" in c.message_zh and "Atlas 800I A2" in c.message_zh
    assert d.fix is not None and (c.fix_en, c.fix_zh) == (d.fix.en, d.fix.zh)


def test_a_raise_chooses_a_declared_fix_wording_and_severity_only():
    """``memory.one_sequence_does_not_fit`` offers a shorter context or more nodes; the values of the fix not
    chosen may be passed (one call serves both branches), a fix, wording or severity not declared may not."""
    values = {
        "who_en": "The cluster",
        "who_zh": "集群",
        "max_model_len": 262_144,
        "per_seq": 40e9,
        "kv_cache": 30e9,
        "weights": 20e9,
        "activation": 2e9,
        "buffers": 1e9,
        "graph": 1e9,
        "fit_len": 196_608,
        "change": {},
        "nodes_en": None,
        "nodes_zh": None,
        "layout_ok": None,
    }
    c = raise_("memory.one_sequence_does_not_fit", fix="max_model_len", **values)
    assert dict(c.fix) == {"serving.max_model_len": 196_608}
    assert c.fix_en == f"Lower max_model_len to {explain.thousands(196_608)} tokens."
    assert c.message_en.startswith(f"The cluster: one {explain.thousands(262_144)}-token sequence needs")
    plain = raise_("memory.one_sequence_does_not_fit", **values)
    assert (dict(plain.fix), plain.fix_en, plain.fix_zh) == ({}, "", "")
    with pytest.raises(CheckCatalogueError, match="has no fix 'quantised'"):
        raise_("memory.one_sequence_does_not_fit", fix="quantised", **values)
    with pytest.raises(CheckCatalogueError, match="has no variant"):
        raise_("memory.one_sequence_does_not_fit", variant="match", **values)
    with pytest.raises(CheckCatalogueError, match="is never ok"):
        raise_("memory.one_sequence_does_not_fit", severity=Severity.OK, **values)
    # A wording with its own severity and field: switch counts that match the seed.
    match = raise_("network.switch_count_vs_seed", variant="match", seed="S1 §6.3")
    assert (match.severity, match.field, match.message_en) == (
        Severity.OK,
        "",
        "Switch counts match the seed (S1 §6.3).",
    )


def test_every_check_area_has_a_name_in_both_languages():
    # The findings are grouped by area on the page; an area without a term printed its code
    # ("launch") on the Chinese page.
    from configurator.engine.vocabulary import AREAS

    assert {d.area for d in definitions()} <= set(AREAS)
