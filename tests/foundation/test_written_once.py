"""Language detection and number formatting are each written once (issue 29).

Read from the source with ``ast``: "is this language Chinese?" is answered only by
``configurator.engine.vocabulary.is_zh`` (no other module calls ``.startswith("zh")``), and a
number is given separators, decimals or a unit only by ``configurator/engine/formatting.py``: no
other function *returns* an f-string that formats a number itself (``f"{x:,.1f} GB"``).  Sentences
that quote a figure inside a longer message (a check's text) are the check catalogue's concern and
are not counted here; a helper whose whole job is to write a number is.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("accounts", "catalog", "configurator", "quotes", "proposals", "config")
LANGUAGE_HOME = "configurator/engine/vocabulary.py"
FORMATTING_HOME = "configurator/engine/formatting.py"
# Functions that write a number on purpose outside formatting.py, each with its reason.
NOT_DISPLAY = {
    # vLLM's --gpu-memory-utilization as the command line spells it: no separators, ever.
    ("configurator/engine/explain.py", "ratio"),
    # One row of the fixed-width TTFT-under-load table ``make bench`` prints to the terminal and
    # docs/performance.md §3 copies: column-aligned ratios like the other calibration tables, no page shows it.
    ("configurator/calibration/__init__.py", "_ttft_line"),
}
# A format spec that groups digits or fixes decimals: ",", "_", ".2f", ".{digits}f", ".1%".
_NUMBER_SPEC = re.compile(r"[,_]|\.(\d+|\{\})[fe%]")


def _sources() -> dict[str, ast.Module]:
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "migrations" not in path.parts:
                rel = path.relative_to(ROOT).as_posix()
                found[rel] = ast.parse(path.read_text(encoding="utf-8"), filename=rel)
    return found


def _zh_tests(tree: ast.AST) -> list[int]:
    """Lines that test a language code for Chinese by hand (``x.startswith("zh")``)."""
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "startswith"
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
        and node.args[0].value.lower().startswith("zh")
    ]


def _spec(value: ast.FormattedValue) -> str:
    if not isinstance(value.format_spec, ast.JoinedStr):
        return ""
    return "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in value.format_spec.values)


def _returned_strings(expr: ast.expr) -> list[ast.JoinedStr]:
    """The f-strings ``return expr`` can give back (through ``a if c else b``)."""
    if isinstance(expr, ast.JoinedStr):
        return [expr]
    if isinstance(expr, ast.IfExp):
        return _returned_strings(expr.body) + _returned_strings(expr.orelse)
    return []


def _number_writers(tree: ast.AST) -> list[tuple[str, int]]:
    """Functions that return an f-string formatting a number with their own spec."""
    found = []
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for node in ast.walk(fn):
            if not (isinstance(node, ast.Return) and node.value is not None):
                continue
            specs = [
                _spec(v)
                for text in _returned_strings(node.value)
                for v in text.values
                if isinstance(v, ast.FormattedValue)
            ]
            if any(_NUMBER_SPEC.search(s) for s in specs):
                found.append((fn.name, fn.lineno))
                break
    return found


def test_the_checkers_see_what_they_look_for():
    assert _zh_tests(ast.parse('lang = "zh-hans"\nzh = (lang or "").lower().startswith("zh")')) == [2]
    assert _zh_tests(ast.parse('ok = name.startswith("zhang") and False')) == [1]  # any "zh…" prefix
    assert _zh_tests(ast.parse("zh = is_zh(lang)")) == []
    samples = {
        'def gb(n):\n    return f"{n / 1e9:,.1f} GB"': [("gb", 1)],
        'def pct(x):\n    return f"{x * 100:.2f} %" if x else ""': [("pct", 1)],
        'def d(p):\n    return f"{p:.{digits}f}"': [("d", 1)],
        'def label(n):\n    return f"node-{n:02d}"': [],  # a name, not a quantity
        'def gb(n):\n    return f"{format_bytes_gb(n)} free"': [],
    }
    for source, expected in samples.items():
        assert _number_writers(ast.parse(source)) == expected, source


def test_only_the_vocabulary_says_whether_a_language_is_chinese():
    sources = _sources()
    assert LANGUAGE_HOME in sources and _zh_tests(sources[LANGUAGE_HOME])
    bad = [
        f"{path}:{line}"
        for path, tree in sources.items()
        if path != LANGUAGE_HOME
        for line in _zh_tests(tree)
    ]
    assert bad == [], (
        "use configurator.engine.vocabulary.is_zh (public.is_zh outside the configurator):\n" + "\n".join(bad)
    )


def test_only_formatting_writes_a_number():
    sources = _sources()
    home = sources[FORMATTING_HOME]  # the real one spells its specs as the checker reads them
    assert any(_NUMBER_SPEC.search(_spec(v)) for v in ast.walk(home) if isinstance(v, ast.FormattedValue))
    bad = [
        f"{path}:{line} {name}"
        for path, tree in sources.items()
        if path != FORMATTING_HOME
        for name, line in _number_writers(tree)
        if (path, name) not in NOT_DISPLAY
    ]
    assert bad == [], "write numbers with configurator/engine/formatting.py:\n" + "\n".join(bad)
