"""The figure book: every explained number of a plan is put here, by key.

A module that computes a figure does one thing::

    book.put("layout.total_devices", nodes * dpn, nodes=nodes, devices_per_node=dpn)

and the book supplies the rest from the figure's *definition* in the catalogue
(``engine/figures/catalogue/<area>.py``): the unit (one :class:`Unit`), the
labels in both languages, the formula over named inputs and the kind of source.
The arithmetic stays one line; the explanation lives once, in the catalogue.

Rules a definition follows (``tests/engine/test_figure_book.py`` checks them):

* ``key`` is the figure's key, or a pattern of it: ``{name}`` matches one or
  more dotted segments (``power.group.{group}.it_kw``), ``{name?}`` also
  matches nothing (``memory.{group?}per_rank.device_bytes`` matches
  ``memory.per_rank.device_bytes`` and ``memory.decode.per_rank.device_bytes``).
* ``formula`` names its inputs.  A formula is either a Python expression over
  them (``nodes * devices_per_node``; ``ceil``/``floor``/``min``/``max``/
  ``round``/``abs`` allowed) — shown with × ÷ − and *evaluated* by the test to
  check it gives the value the code put — or prose with the inputs in braces
  (``"{device_bytes} as the runtime reports it"``) where no expression can
  say it.  ``context`` lists further inputs that describe rather than compute
  (an accelerator's name, a weight format).  ``put`` must supply exactly the
  formula's names plus ``context``: a missing or extra input is an error.
* ``terms`` names the one input (if any) that is a mapping of *dynamically named*
  terms — one per fabric row, per switch, per piece of rack equipment — whose
  names cannot be written in the catalogue.  ``put`` spreads the mapping into
  the figure's inputs (each term under its own name, as a reader wants to see
  it); in the formula the name stands for the *sum* of the terms and shows as
  ``Σ name`` (``round(switch_kw, 3)`` → ``round(Σ switch_kw, 3)``).
* ``formulas`` holds variants (``{"ep": "expert_bytes / ep / pp", "tp": …}``)
  chosen by ``put(..., variant="tp")`` when the computation takes different
  paths.
* labels may hold ``{name}`` placeholders, filled from the key pattern's
  captures and from ``put(..., label={...})``; a ``{group}`` capture also
  gives ``{group_en}``/``{group_zh}``, the group as the page names it.
* ``itemised`` names inputs whose names are known only at run time (the
  devices of a rack, by label): ``put`` takes each as one mapping
  (``devices={"node-00 (cluster, master)": 16.2, …}``) and the figure lists
  its entries as inputs.  Only a prose formula may name one.
* ``unit`` :data:`Unit.MONEY` and :data:`Unit.MONEY_PER_M_TOKENS` are spelled
  with the book's currency (``FigureBook(currency="CNY")``).

``put`` returns the :class:`~configurator.engine.types.Figure`; ``figures``
is the dict a result carries.  Nothing outside this module constructs a
``Figure`` (a test scans the code for it).
"""

from __future__ import annotations

import ast
import importlib
import math
import pkgutil
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from enum import StrEnum
from functools import cache
from typing import Any

from ..moe_routing import busiest_rank_share
from ..types import Figure, Source, new_figure
from ..vocabulary import fabric_label, group_label, scope_label


class Unit(StrEnum):
    """Every unit a figure may carry (the value is how the JSON spells it)."""

    NONE = ""
    BYTES = "B"
    BYTES_PER_TOKEN = "B/token"
    BYTES_PER_SEQUENCE = "B/seq"
    GBPS = "Gb/s"
    TFLOPS = "TFLOPS"
    KW = "kW"
    BTU_PER_H = "BTU/h"
    AMPS = "A"
    RACK_UNITS = "U"
    KG = "kg"
    KG_PER_M2 = "kg/m²"
    SQUARE_METRES = "m²"
    SECONDS = "s"
    MONTHS = "month"
    FRACTION = "fraction"
    RATIO = "ratio"
    TIMES = "×"
    COUNT_NODES = "nodes"
    COUNT_DEVICES = "devices"
    COUNT_EXPERTS = "experts"
    COUNT_PORTS = "ports"
    COUNT_PROCESSES = "processes"
    COUNT_FILES = "files"
    COUNT_SEQUENCES = "sequences"
    COUNT_USERS = "users"
    TOKENS = "tokens"
    TOKENS_PER_S = "tokens/s"
    REQUESTS_PER_S = "req/s"
    M_TOKENS = "M tokens"
    MONEY = "{currency}"
    MONEY_PER_M_TOKENS = "{currency}/M tokens"


class SourceKind(StrEnum):
    """Where a figure comes from (docs/domain.md §1)."""

    DERIVED = "derived"  # computed by the engine from other figures
    INPUT = "input"  # typed by the engineer
    PUBLIC = "public"  # a public config, document or source file
    SEED = "seed"  # one of the customer's source documents (S1/S2)
    ASSUMED = "assumed"  # a placeholder a catalog admin should check


#: Functions a formula expression may call.
FUNCTIONS: Mapping[str, Any] = {
    "ceil": math.ceil,
    "floor": math.floor,
    "min": min,
    "max": max,
    "round": round,
    "abs": abs,
    "busiest_rank_share": busiest_rank_share,  # engine/moe_routing.py
}
RESERVED = frozenset({"variant", "source", "label"})
_BRACED = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)(\??)\}")
_PRETTY = ((" * ", " × "), (" // ", " ÷ "), (" / ", " ÷ "), (" - ", " − "), ("**", "^"))


class FigureBookError(LookupError):
    """A figure put with an unknown key or with inputs its formula does not name."""


@dataclass(frozen=True)
class Formula:
    """One formula: its text, the inputs it names and whether it is an expression."""

    text: str
    names: frozenset[str]
    expression: ast.Expression | None  # None: prose

    @property
    def display(self) -> str:
        return _display(self.text, self.expression is not None)

    def evaluate(self, inputs: Mapping[str, Any]) -> float | None:
        """The expression's value over ``inputs`` (None: prose, or an input is not a number)."""
        if self.expression is None:
            return None
        env: dict[str, Any] = {}
        for name in self.names:
            v = inputs[name]
            if isinstance(v, bool) or not isinstance(v, int | float | Decimal):
                return None
            env[name] = float(v) if isinstance(v, Decimal) else v
        code = compile(self.expression, "<formula>", "eval")
        return float(eval(code, {"__builtins__": {}, **FUNCTIONS}, env))  # noqa: S307 - catalogue text only


@cache
def _display(text: str, expression: bool) -> str:
    """The formula as a reader sees it: prose without its braces, an expression with × ÷ −."""
    if not expression:
        return _BRACED.sub(r"\1", text)
    out = text
    for a, b in _PRETTY:
        out = out.replace(a, b)
    return out


@cache
def parse_formula(text: str) -> Formula:
    """Parse a catalogue formula (expression, or prose with ``{names}``)."""
    if not text:
        return Formula("", frozenset(), None)
    if "{" in text:
        return Formula(text, frozenset(_BRACED.findall(text)), None)
    tree = ast.parse(text, mode="eval")
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id not in FUNCTIONS:
            names.add(node.id)
        elif isinstance(node, ast.Call) and not (
            isinstance(node.func, ast.Name) and node.func.id in FUNCTIONS
        ):
            raise ValueError(f"formula {text!r} calls something other than {sorted(FUNCTIONS)}")
    return Formula(text, frozenset(names), tree)


@dataclass(frozen=True)
class FigureDef:
    """What a figure is, written once: unit, labels, formula over named inputs, source kind."""

    key: str
    unit: Unit
    en: str
    zh: str
    formula: str = ""
    formulas: Mapping[str, str] = field(default_factory=dict)
    context: tuple[str, ...] = ()
    source: SourceKind = SourceKind.DERIVED
    #: Why the value cannot be recomputed from the inputs exactly (the test then checks names only).
    approximate: str = ""
    #: Inputs put as one mapping whose entries become the figure's inputs (names known at run time).
    itemised: tuple[str, ...] = ()
    #: The input holding a mapping of dynamically named terms, spread into the figure's inputs (see above).
    terms: str = ""

    def formula_for(self, variant: str | None) -> Formula:
        if variant is None:
            if self.formulas and not self.formula:
                raise FigureBookError(f"figure {self.key!r} needs a variant: one of {sorted(self.formulas)}")
            return parse_formula(self.formula)
        if variant not in self.formulas:
            raise FigureBookError(f"figure {self.key!r} has no variant {variant!r}")
        return parse_formula(self.formulas[variant])

    def variants(self) -> dict[str | None, Formula]:
        out: dict[str | None, Formula] = {}
        if self.formula or not self.formulas:
            out[None] = parse_formula(self.formula)
        for name, text in self.formulas.items():
            out[name] = parse_formula(text)
        return out

    def inputs_for(self, variant: str | None) -> frozenset[str]:
        return self.formula_for(variant).names | frozenset(self.context)

    def evaluate(self, variant: str | None, inputs: Mapping[str, Any]) -> float | None:
        """The formula's value over a figure's ``inputs`` (its terms, if any, summed back under their name)."""
        formula = self.formula_for(variant)
        if self.terms:
            named = (formula.names | frozenset(self.context)) - {self.terms}
            values = [v for k, v in inputs.items() if k not in named]
            if any(isinstance(v, bool) or not isinstance(v, int | float | Decimal) for v in values):
                return None
            inputs = {**{k: inputs[k] for k in named}, self.terms: sum(float(v) for v in values)}
        return formula.evaluate(inputs)

    @property
    def pattern(self) -> re.Pattern[str] | None:
        return _compile_pattern(self.key) if "{" in self.key else None


@cache
def _compile_pattern(key: str) -> re.Pattern[str]:
    out, pos = [], 0
    for m in _PLACEHOLDER.finditer(key):
        out.append(re.escape(key[pos : m.start()]))
        out.append(f"(?P<{m.group(1)}>{'.*?' if m.group(2) else '.+?'})")
        pos = m.end()
    out.append(re.escape(key[pos:]))
    return re.compile("".join(out) + r"\Z")


#: Bound of each memo of a catalogue (keys are the catalogue's figure keys and their label arguments).
_CACHE_LIMIT = 50_000


@dataclass(frozen=True)
class _Slot:
    """A figure key put with one variant: its definition and what follows from it alone."""

    definition: FigureDef
    captures: dict[str, str]
    expected: frozenset[str]
    formula: Formula
    display: str
    labels: tuple[str, str]  # (en, zh) when put without ``label``
    source: Source
    unit: str  # the unit as the JSON spells it, ``{currency}`` still to fill
    # What ``FigureBook.put`` asks of the definition on every put, read once: the name of a terms
    # mapping, the itemised inputs, and whether the unit names the currency.
    terms: str = ""
    itemised: tuple[str, ...] = ()
    currency_unit: bool = False


def _labels(
    definition: FigureDef, captures: Mapping[str, str], label: Mapping[str, Any] | None
) -> tuple[str, str]:
    """The figure's English and Chinese labels, filled from the key's captures and ``label``."""
    args = {**captures, **(label or {})}
    if "group" in captures:  # a serving group's code in the key: its name as the page shows it
        args.setdefault("group_en", group_label(captures["group"], "en"))
        args.setdefault("group_zh", group_label(captures["group"], "zh"))
    return _label(definition.en, _in_language(args, "en")), _label(definition.zh, _in_language(args, "zh"))


class Catalogue:
    """Every figure definition, from the modules of ``engine/figures/catalogue``."""

    def __init__(self, defs: list[FigureDef]) -> None:
        self.exact: dict[str, FigureDef] = {}
        self.patterns: list[FigureDef] = []
        seen: set[str] = set()
        for d in defs:
            if d.key in seen:
                raise ValueError(f"figure {d.key!r} is defined twice")
            seen.add(d.key)
            for variant, formula in d.variants().items():
                clash = (formula.names | set(d.context)) & RESERVED
                if clash:
                    raise ValueError(
                        f"figure {d.key!r} ({variant}) uses reserved input names {sorted(clash)}"
                    )
                if d.itemised and formula.expression is not None:
                    raise ValueError(f"figure {d.key!r} ({variant}): an itemised input needs a prose formula")
                if not set(d.itemised) <= formula.names | set(d.context):
                    raise ValueError(f"figure {d.key!r} ({variant}) does not name its itemised inputs")
                if d.terms and d.terms not in formula.names | set(d.context):
                    raise ValueError(f"figure {d.key!r} ({variant}) does not name its terms {d.terms!r}")
            if "{" in d.key:
                self.patterns.append(d)
            else:
                self.exact[d.key] = d
        self._resolved: dict[str, tuple[FigureDef, dict[str, str]]] = {}
        self._slots: dict[tuple[str, str | None], _Slot] = {}
        self._labels: dict[tuple[str, tuple[tuple[str, Any], ...]], tuple[str, str]] = {}

    def __iter__(self) -> Iterator[FigureDef]:
        yield from self.exact.values()
        yield from self.patterns

    def resolve(self, key: str) -> tuple[FigureDef, dict[str, str]]:
        """The definition of ``key`` and the pattern's captures (an exact key wins)."""
        hit = self._resolved.get(key)
        if hit is not None:
            return hit
        d = self.exact.get(key)
        if d is not None:
            hit = (d, {})
        else:
            matches = []
            for p in self.patterns:
                m = p.pattern.match(key) if p.pattern else None
                if m:
                    matches.append((p, m.groupdict()))
            if not matches:
                raise FigureBookError(f"no figure definition for {key!r} (engine/figures/catalogue)")
            if len(matches) > 1:
                raise FigureBookError(f"{key!r} matches several definitions: {[p.key for p, _ in matches]}")
            hit = matches[0]
        if len(self._resolved) < _CACHE_LIMIT:
            self._resolved[key] = hit
        return hit

    def slot(self, key: str, variant: str | None) -> _Slot:
        """What ``FigureBook.put`` needs of ``key`` put as ``variant``, worked out on the first put only
        (everything here depends on the key, the variant and the definitions alone)."""
        hit = self._slots.get((key, variant))
        if hit is not None:
            return hit
        definition, captures = self.resolve(key)
        formula = definition.formula_for(variant)
        display = formula.display
        if definition.terms:
            display = re.sub(rf"\b{re.escape(definition.terms)}\b", f"Σ {definition.terms}", display)
        hit = _Slot(
            definition=definition,
            captures=captures,
            expected=formula.names | frozenset(definition.context),
            formula=formula,
            display=display,
            labels=_labels(definition, captures, None),
            source=Source(definition.source.value),
            unit=definition.unit.value,
            terms=definition.terms,
            itemised=tuple(definition.itemised),
            currency_unit="{" in definition.unit.value,
        )
        if len(self._slots) < _CACHE_LIMIT:
            self._slots[(key, variant)] = hit
        return hit

    def labels(self, slot: _Slot, key: str, label: Mapping[str, Any]) -> tuple[str, str]:
        """The figure's labels with ``label``'s arguments; remembered when every argument is a str or
        an int (the types a label is given; others, whose equal values may print differently, are not)."""
        items = tuple(label.items())
        for _, v in items:
            if type(v) is not str and type(v) is not int:
                return _labels(slot.definition, slot.captures, label)
        hit = self._labels.get((key, items))
        if hit is None:
            hit = _labels(slot.definition, slot.captures, label)
            if len(self._labels) < _CACHE_LIMIT:
                self._labels[(key, items)] = hit
        return hit


@cache
def definitions() -> Catalogue:
    """Load every ``DEFS`` tuple of ``configurator.engine.figures.catalogue.*`` once."""
    from . import catalogue as package

    defs: list[FigureDef] = []
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        defs.extend(getattr(module, "DEFS", ()))
    return Catalogue(defs)


class _Blank(dict):
    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def _in_language(args: Mapping[str, Any], lang: str) -> dict[str, Any]:
    """A label's arguments in ``lang``: a fabric code and a scope of serving groups read as the page
    names them ("lingqu" → 灵衢（UB）, "prefill+decode" → 预填充+解码), and an argument given in
    both languages (``switch`` / ``switch_zh``) in this one — the Chinese label never shows a code."""
    out = dict(args)
    if isinstance(out.get("fabric"), str):
        out["fabric"] = fabric_label(out["fabric"], lang)
    if isinstance(out.get("scope"), str):
        out["scope"] = scope_label(out["scope"], lang)
    for name in [k for k in out if k.endswith("_zh")]:
        base = name[: -len("_zh")]
        if lang == "zh" and out[name] and base in out:
            out[base] = out[name]
    return out


def _label(template: str, args: Mapping[str, Any]) -> str:
    return template.format_map(_Blank(args)) if "{" in template else template


class FigureBook:
    """The figures of one result, put by key and explained by the catalogue.

    ``observer`` (tests only) is called with ``(definition, variant, figure)`` for every put.
    """

    observer: Any = None
    #: False for a book that keeps nothing (:class:`UnrecordedBook`): callers may skip working out inputs
    recording = True

    def __init__(self, *, currency: str = "") -> None:
        self.currency = currency
        self.figures: dict[str, Figure] = {}

    def put(
        self,
        key: str,
        value: Any,
        /,
        *,
        variant: str | None = None,
        source: Source | None = None,
        label: Mapping[str, Any] | None = None,
        **inputs: Any,
    ) -> Figure:
        """Record figure ``key`` = ``value`` computed from ``inputs`` (exactly the formula's names)."""
        catalogue = definitions()
        # A plan puts some 360 figures: the slot is looked up in place (``Catalogue.slot`` makes it on
        # the first put of the key).
        slot = catalogue._slots.get((key, variant)) or catalogue.slot(key, variant)
        if inputs.keys() != slot.expected:
            missing = sorted(slot.expected - inputs.keys())
            extra = sorted(inputs.keys() - slot.expected)
            raise FigureBookError(
                f"figure {key!r}: inputs do not match its formula {slot.formula.text!r}"
                + (f"; missing {missing}" if missing else "")
                + (f"; not in the formula {extra}" if extra else "")
            )
        if slot.terms:
            terms = inputs.pop(slot.terms)
            if not isinstance(terms, Mapping):
                raise FigureBookError(f"figure {key!r}: {slot.terms} must map each term's name to its value")
            clash = sorted(terms.keys() & inputs.keys())
            if clash:
                raise FigureBookError(f"figure {key!r}: terms {clash} clash with the formula's inputs")
            inputs = {**terms, **inputs}
        label_en, label_zh = catalogue.labels(slot, key, label) if label else slot.labels
        unit = slot.unit.replace("{currency}", self.currency) if slot.currency_unit else slot.unit
        if slot.itemised:
            listed: dict[str, Any] = {}
            for name, v in inputs.items():
                listed.update(v if name in slot.itemised else {name: v})
            inputs = listed
        figure = new_figure(
            key,
            value,
            unit,
            label_en,
            label_zh,
            slot.display,
            inputs,
            source if source is not None else slot.source,
        )
        self.figures[key] = figure
        if FigureBook.observer is not None:
            FigureBook.observer(slot.definition, variant, figure)
        return figure

    def restate(self, figure: Figure, value: Any, /, *, source: Source | None = None) -> Figure:
        """The same figure with another value (and source), e.g. a measured result replacing the estimate."""
        new = Figure(
            key=figure.key,
            value=value,
            unit=figure.unit,
            label_en=figure.label_en,
            label_zh=figure.label_zh,
            formula=figure.formula,
            inputs=figure.inputs,
            source=source if source is not None else figure.source,
        )
        self.figures[figure.key] = new
        return new

    def update(self, figures: Mapping[str, Figure]) -> None:
        """Take in figures another book already explained (a sub-result's)."""
        self.figures.update(figures)

    def __contains__(self, key: object) -> bool:
        return key in self.figures

    def __getitem__(self, key: str) -> Figure:
        return self.figures[key]

    def __len__(self) -> int:
        return len(self.figures)


_UNRECORDED = new_figure("unrecorded", 0, "", "", "", "", {}, Source("derived"))


class UnrecordedBook(FigureBook):
    """A book that keeps no figure: the auto-planner's screening pass over serving variants
    (``estimate_performance(screening=True)``) reads the operating point, never its explanations, and
    the variant it keeps is planned in full — with this book's checks — by ``plan()``."""

    recording = False

    def put(self, key: str, value: Any, /, **_: Any) -> Figure:
        return _UNRECORDED
