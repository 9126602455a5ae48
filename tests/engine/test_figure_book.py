"""The figure book (issue 20): one way to make a figure, each formula over the inputs it was computed from.

Three checks, none of which needs the database:

* the catalogue itself: every definition's formula parses, patterns do not overlap;
* the code: every ``book.put(...)`` in the engine names a defined key and passes exactly the
  inputs its formula (and ``context``) names — read from the source, so a branch no test plans
  is checked too; and nothing outside ``engine/figures/book.py`` constructs a ``Figure``;
* the book at run time (``put`` refuses a mismatch; this file shows it does).

The same formulas are *evaluated* against every figure of the seeded plans in
``tests/golden/test_figure_formulas.py`` (that one needs the seeded catalog).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from configurator.engine.figures import FigureBook, FigureBookError, FigureDef, Unit, definitions
from configurator.engine.figures.book import Catalogue, parse_formula

ROOT = Path(__file__).resolve().parents[2]
ENGINE = ROOT / "configurator" / "engine"
BOOK = ENGINE / "figures" / "book.py"
CONTROL = {"variant", "source", "label"}
PROJECT_DIRS = (
    "configurator",
    "catalog",
    "quotes",
    "proposals",
    "accounts",
    "config",
    "bench",
    "scripts",
    "tests",
)


def _python_files(*dirs: str):
    for d in dirs:
        yield from sorted((ROOT / d).rglob("*.py"))


def _sample_key(node: ast.expr) -> str | None:
    """A key as the code writes it: a literal, or an f-string with ``x`` for each placeholder."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        parts = []
        for v in node.values:
            if isinstance(v, ast.Constant):
                parts.append(str(v.value))
            else:
                parts.append("x")
        return "".join(parts)
    return None


def _put_calls():
    for path in _python_files("configurator/engine"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "put"
            ):
                yield path, node


def test_every_definition_parses_and_no_key_has_two_definitions():
    cat = definitions()
    defs = list(cat)
    assert len(defs) >= 7
    for d in defs:
        assert isinstance(d.unit, Unit)
        assert d.en and d.zh, d.key
        for variant, formula in d.variants().items():
            assert not (formula.names & CONTROL), (d.key, variant)
    # A key of one definition never matches another definition's pattern.
    for d in cat.exact.values():
        assert cat.resolve(d.key)[0] is d


def test_every_put_in_the_engine_names_a_defined_key_and_exactly_its_inputs():
    cat = definitions()
    seen = 0
    problems = []
    for path, call in _put_calls():
        where = f"{path.relative_to(ROOT)}:{call.lineno}"
        if not call.args:
            continue
        key = _sample_key(call.args[0])
        if key is None:
            problems.append(f"{where}: the key is neither a literal nor an f-string")
            continue
        if any(kw.arg is None for kw in call.keywords):
            problems.append(f"{where}: inputs passed with ** cannot be checked; name them")
            continue
        try:
            definition, _ = cat.resolve(key)
        except FigureBookError as e:
            problems.append(f"{where}: {e}")
            continue
        given = {kw.arg for kw in call.keywords} - CONTROL
        variant_kw = next((kw.value for kw in call.keywords if kw.arg == "variant"), None)
        if isinstance(variant_kw, ast.Constant):
            candidates = {variant_kw.value: definition.inputs_for(variant_kw.value)}
        elif variant_kw is None:
            candidates = {None: definition.inputs_for(None)}
        else:  # chosen at run time: the inputs must fit one of the variants
            candidates = {v: definition.inputs_for(v) for v in definition.formulas}
        if not any(given == set(names) for names in candidates.values()):
            wanted = " or ".join(str(sorted(n)) for n in candidates.values())
            problems.append(f"{where}: {key!r} puts {sorted(given)}, its formula names {wanted}")
        seen += 1
    assert seen > 0
    assert not problems, "\n".join(problems)


def test_nothing_outside_the_book_constructs_a_figure():
    offenders = []
    for path in _python_files(*PROJECT_DIRS):
        if path in (BOOK, Path(__file__).resolve()):  # this file holds new_figure to the constructor
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                f = node.func
                name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
                if name in ("Figure", "new_figure"):
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not offenders, "construct figures with FigureBook.put: " + ", ".join(offenders)


def test_put_refuses_inputs_the_formula_does_not_name():
    book = FigureBook()
    with pytest.raises(FigureBookError, match="missing \\['devices_per_node'\\]"):
        book.put("layout.total_devices", 64, nodes=4)
    with pytest.raises(FigureBookError, match="not in the formula \\['packages'\\]"):
        book.put("layout.total_devices", 64, nodes=4, devices_per_node=16, packages=8)
    with pytest.raises(FigureBookError, match="no figure definition"):
        book.put("layout.no_such_figure", 1)


def test_put_fills_unit_labels_formula_and_source_from_the_definition():
    book = FigureBook()
    f = book.put(
        "layout.cluster-a.devices",
        32,
        label={"group_en": "cluster A", "group_zh": "集群 A"},
        nodes=2,
        devices_per_node=16,
    )
    assert (f.key, f.value, f.unit) == ("layout.cluster-a.devices", 32, "devices")
    assert (f.label_en, f.label_zh) == ("Devices of cluster A", "集群 A卡数")
    assert f.formula == "nodes × devices_per_node"
    assert dict(f.inputs) == {"nodes": 2, "devices_per_node": 16}
    assert f.source.kind == "derived"
    assert book.figures == {"layout.cluster-a.devices": f}


def test_formulas_evaluate_and_prose_names_its_inputs():
    expr = parse_formula("ceil(required_amps / largest_breaker) * 2 - 1")
    assert expr.names == {"required_amps", "largest_breaker"}
    assert expr.evaluate({"required_amps": 250, "largest_breaker": 125}) == 3.0
    assert expr.display == "ceil(required_amps ÷ largest_breaker) × 2 − 1"
    prose = parse_formula("{device_bytes} as the runtime reports it")
    assert prose.names == {"device_bytes"} and prose.evaluate({"device_bytes": 1}) is None
    assert prose.display == "device_bytes as the runtime reports it"
    with pytest.raises(ValueError, match="calls something other than"):
        parse_formula("__import__('os')")


def test_a_pattern_matching_two_definitions_is_an_error():
    cat = Catalogue(
        [
            FigureDef("power.{group}.kw", Unit.KW, "a", "甲", "x"),
            FigureDef("power.group.{name}", Unit.KW, "b", "乙", "y"),
        ]
    )
    with pytest.raises(FigureBookError, match="several definitions"):
        cat.resolve("power.group.kw")


def test_itemised_inputs_list_their_entries_and_need_a_prose_formula():
    book = FigureBook()
    f = book.put("racks.R01.kw", 16.35, devices={"node-00 (cluster, master)": 16.2, "1GE switch #1": 0.15})
    assert dict(f.inputs) == {"node-00 (cluster, master)": 16.2, "1GE switch #1": 0.15}
    assert (f.label_en, f.formula) == ("Rack R01: maximum input", "Σ maximum input of devices")
    with pytest.raises(ValueError, match="needs a prose formula"):
        Catalogue([FigureDef("x.kw", Unit.KW, "a", "甲", "devices", itemised=("devices",))])
    with pytest.raises(ValueError, match="does not name its itemised inputs"):
        Catalogue([FigureDef("x.kw", Unit.KW, "a", "甲", "Σ {kw}", itemised=("devices",))])


def test_terms_are_spread_into_the_inputs_and_summed_in_the_formula():
    """A sum over dynamically named terms (fabric rows, switches) keeps each term as an input."""
    book = FigureBook()
    terms = {"scale_out.roce.all": 64, "management.management.all": 8}
    f = book.put("network.cables", 72, cables=terms)
    assert dict(f.inputs) == terms
    assert f.formula == "Σ cables"
    definition, _ = definitions().resolve("network.cables")
    assert definition.evaluate(None, f.inputs) == 72
    optics = book.put("network.optics", 0, optics={"scale_out.roce.all": 128}, optics_below_400g=128)
    assert optics.formula == "Σ optics − optics_below_400g"
    assert definitions().resolve("network.optics")[0].evaluate(None, optics.inputs) == 0
    with pytest.raises(FigureBookError, match="clash"):
        book.put("network.optics", 0, optics={"optics_below_400g": 1}, optics_below_400g=0)
    with pytest.raises(FigureBookError, match="must map"):
        book.put("network.cables", 1, cables=1)


def test_new_figure_is_the_dataclass_constructor_to_the_field():
    """engine/types.py ``new_figure`` skips the frozen ``__init__`` for speed: the instance it builds must be
    the one ``Figure(...)`` builds (equal, same repr, same asdict, pickles back equal), and it must set
    exactly the dataclass's fields, so a field added to Figure and not to new_figure fails here."""
    import dataclasses
    import pickle

    from configurator.engine.types import Figure, Source, new_figure

    args = ("memory.x", 1.5, "B", "Weights", "权重", "a + b", {"a": 1, "b": 0.5}, Source("public", "config"))
    names = [f.name for f in dataclasses.fields(Figure)]
    fast = new_figure(*args)
    slow = dataclasses.replace(fast)  # the dataclass's own __init__ over the same fields
    assert [getattr(fast, n) for n in names] == list(args)
    assert fast == slow and repr(fast) == repr(slow)
    assert dataclasses.asdict(fast) == dataclasses.asdict(slow)
    assert pickle.loads(pickle.dumps(fast)) == slow
    assert list(vars(fast)) == names
    with pytest.raises(dataclasses.FrozenInstanceError):
        fast.value = 2  # type: ignore[misc]
