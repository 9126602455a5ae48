"""The check catalogue: every check of a plan is declared once and raised by its code.

A module that finds something does one thing::

    raise_("memory.block_size_invalid", block=block, accelerator=acc.name, allowed=allowed, default=default)

and the catalogue (``engine/checks/catalogue/<area>.py``) holds, once, the check's
code, area, severity, the message in English and Chinese as templates over
named values, the request field it points at, the fixes it may offer (the
request change and its label in both languages) and its source.  The module
keeps the arithmetic and the decision; the sentence lives once, in the
catalogue.

Rules a definition follows (``tests/engine/test_check_catalogue.py`` checks them):

* Templates are ``str.format`` templates over simple names (``{block}``).  A
  number is passed raw and formatted where the template is rendered, by a spec
  naming one of ``explain.py``'s formatters: ``{weights:gb}`` (``gb(weights)``),
  ``{weights:gb:2}`` (two decimals), ``{tokens:thousands}``, ``{share:pct}``,
  ``{util:ratio}``, ``{kw:number:1}`` (``format_number``, which they are built
  on), and likewise ``gib``, ``tb``, ``mb``; any other spec is Python's
  (``{x:.1f}``, ``{x:g}``).  A word that follows a count is chosen by the
  template too: ``{n:plural:node:nodes}`` ("1 node", "4 nodes"),
  ``{n:one:fits:fit}`` (the word alone).  Names (a server's, a list already
  joined) are passed as strings; a value that differs by language is passed
  twice, ``x_en`` for the English template and ``x_zh`` for the Chinese.
* ``field`` is the request field the check points at, itself a template
  (``"{pfield}.tp"``).
* ``fix`` is the fix always offered; ``fixes`` holds fixes the raise chooses
  by name (``raise_(…, fix="nodes")``) when the finding can be cleared more
  than one way or only sometimes.  A :class:`Fix`'s ``change`` maps request
  fields (templates) to the names of the values they take, or is one name whose
  value is the whole change (a mapping the engine built, e.g. a node count and
  its layout); ``sets`` names the value the check's own field takes (one fix
  shared by checks of different fields); ``field`` points the check at the
  field the fix changes.
* ``variants`` holds other wordings of the same finding (a :class:`Variant`,
  which may carry its own severity and field), chosen by
  ``raise_(…, variant="…")``; ``severities`` lists the further severities a
  raise may choose with ``severity=`` when the finding's weight depends on the
  plan.
* ``raise_`` must receive every name the chosen wording, field and fix use,
  and nothing no template of the check names (a missing or extra value is an
  error); the values of a wording or fix it did not choose may be passed (as
  None or empty) so that one call serves every branch.  ``figures`` (the
  numbers the check carries for the API) is passed through unchanged.

Nothing outside this module constructs a :class:`~configurator.engine.types.Check`
(a test scans the code for it), and every ``raise_`` names a declared code.

The auto-planner's reasons for ruling a deployment out are declared here too
(``catalogue/planner.py``, area ``planner``) and worded by :func:`words`, which
renders a definition's field and message without making a ``Check``;
``planner.results.rejection`` is the one place a planner rejection is built.
"""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
import string
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import cache, lru_cache
from typing import Any

from .. import explain
from ..formatting import format_number
from ..types import Check, Severity, stored_init

#: The formatters a template's spec may name (``{x:gb}``), all ``explain.py``'s.
FORMATTERS: Mapping[str, Callable[..., str]] = {
    "thousands": explain.thousands,
    "gb": explain.gb,
    "gib": explain.gib,
    "tb": explain.tb,
    "mb": explain.mb,
    "pct": explain.pct,
    "ratio": explain.ratio,
    "number": format_number,
}
RESERVED = frozenset({"fix", "variant", "severity", "figures"})
_EMPTY: Mapping[str, Any] = {}


class CheckCatalogueError(LookupError):
    """A check raised with an unknown code, an unknown fix or variant, or values its templates do not name."""


#: Specs that choose a word by a count: ``{n:plural:node:nodes}`` → "1 node" / "4 nodes" (the count
#: with ``thousands``), ``{n:one:fits:fit}`` → "fits" / "fit" (the word alone).
WORD_SPECS = frozenset({"plural", "one"})


class _Formatter(string.Formatter):
    def format_field(self, value: Any, format_spec: str) -> str:
        name, _, digits = format_spec.partition(":")
        if name in WORD_SPECS:
            one, _, many = digits.partition(":")
            word = one if value == 1 else many
            return f"{explain.thousands(value)} {word}" if name == "plural" else word
        formatter = FORMATTERS.get(name)
        if formatter is None:
            return super().format_field(value, format_spec)
        return formatter(value, int(digits)) if digits else formatter(value)


_FORMATTER = _Formatter()


@cache
def template_names(template: str) -> frozenset[str]:
    """The names a template uses (``"{a:gb} of {b}"`` → ``{"a", "b"}``); refuses ``{a.b}`` and ``{0}``."""
    names = set()
    for _, name, spec, _ in _FORMATTER.parse(template):
        if name is None:
            continue
        if not name.isidentifier():
            raise ValueError(f"template {template!r}: {{{name}}} is not a simple name")
        head = (spec or "").partition(":")[0]
        if head in WORD_SPECS and (spec or "").count(":") != 2:
            raise ValueError(f"template {template!r}: {{{name}:{spec}}} needs both words")
        if head.isidentifier() and len(head) > 1 and head not in FORMATTERS and head not in WORD_SPECS:
            raise ValueError(f"template {template!r}: no formatter {head!r} (one of {sorted(FORMATTERS)})")
        names.add(name)
    return frozenset(names)


@lru_cache(maxsize=4096)
def _parsed(template: str) -> tuple[tuple[str, str | None, str | None, str | None], ...] | None:
    """The template's parts (literal text, name, spec, conversion), parsed once; None when a field is
    more than a simple name or its spec holds a nested field (``render`` then leaves it to ``vformat``)."""
    parts = tuple(_FORMATTER.parse(template))
    for _, name, spec, _ in parts:
        if name is not None and (not name.isidentifier() or "{" in (spec or "") or "}" in (spec or "")):
            return None
    return parts


# How ``render`` fills a field, decided once per template from its spec (``_Formatter.format_field``'s
# branches, taken in advance): a plain field, a named formatter, a word chosen by a count, Python's spec,
# or (digits that are not a plain number) ``format_field`` itself.
_PLAIN, _NAMED, _WORD, _PYTHON, _FIELD = range(5)


@lru_cache(maxsize=4096)
def _compiled(template: str) -> tuple[tuple[str, str | None, str | None, int, Any, Any], ...] | None:
    """``_parsed(template)`` with each field's spec decided (:data:`_PLAIN` …): (literal, name, conversion,
    how, and the formatter's name and digits, the two words, or the spec).  A findings' message is
    rendered every plan, 100 fields a plan, and the spec's reading does not change between them."""
    parts = _parsed(template)
    if parts is None:
        return None
    out: list[tuple[str, str | None, str | None, int, Any, Any]] = []
    for literal, name, spec, conversion in parts:
        spec = spec or ""
        head, _, digits = spec.partition(":")
        if name is None:
            out.append((literal, None, None, _PLAIN, None, None))
        elif not spec:
            out.append((literal, name, conversion, _PLAIN, None, None))
        elif head in WORD_SPECS:
            one, _, many = digits.partition(":")
            out.append((literal, name, conversion, _WORD, head == "plural", (one, many)))
        elif head not in FORMATTERS:
            out.append((literal, name, conversion, _PYTHON, spec, None))
        elif not digits or (digits.isascii() and digits.isdigit()):
            out.append((literal, name, conversion, _NAMED, head, int(digits) if digits else None))
        else:
            out.append((literal, name, conversion, _FIELD, spec, None))
    return tuple(out)


def render(template: str, values: Mapping[str, Any]) -> str:
    """``template`` filled from ``values``: what ``_FORMATTER.vformat`` gives, over the template parsed
    and its specs read once (:func:`_compiled`)."""
    parts = _compiled(template)
    if parts is None:
        return _FORMATTER.vformat(template, (), dict(values))
    out = []
    for literal, name, conversion, how, a, b in parts:
        out.append(literal)
        if name is None:
            continue
        value = values[name]
        if conversion is not None:
            value = _FORMATTER.convert_field(value, conversion)
        if how == _PLAIN:
            out.append(value if type(value) is str else format(value))
        elif how == _NAMED:
            formatter = FORMATTERS[a]
            out.append(formatter(value) if b is None else formatter(value, b))
        elif how == _WORD:
            word = b[0] if value == 1 else b[1]
            out.append(f"{explain.thousands(value)} {word}" if a else word)
        elif how == _PYTHON:
            out.append(format(value, a))
        else:
            out.append(_FORMATTER.format_field(value, a))
    return "".join(out)


@dataclass(frozen=True)
class Fix:
    """A change of the request that clears the finding, and its label in both languages."""

    en: str
    zh: str
    #: request field (a template) → the name of the value it takes; or one name whose value is the change
    change: Mapping[str, str] | str = field(default_factory=dict)
    #: the request field the check points at when this fix is offered (default: the check's)
    field: str | None = None
    #: the name of the value the check's own field takes (a fix shared by checks of different fields)
    sets: str = ""

    def names(self) -> frozenset[str]:
        out = template_names(self.en) | template_names(self.zh) | template_names(self.field or "")
        if self.sets:
            out |= {self.sets}
        if isinstance(self.change, str):
            return out | {self.change}
        for key, name in self.change.items():
            out |= template_names(key) | {name}
        return out

    def build(self, values: Mapping[str, Any], field: str = "") -> dict[str, Any]:
        """The change of the request; ``field`` is the check's field, rendered (for ``sets``)."""
        if isinstance(self.change, str):
            return dict(values[self.change])
        out = {render(key, values): values[name] for key, name in self.change.items()}
        if self.sets:
            out[field] = values[self.sets]
        return out


@stored_init
@dataclass(frozen=True)
class Variant:
    """Another wording of a finding, with its own severity and field when they differ from the check's."""

    en: str
    zh: str
    severity: Severity | None = None
    field: str | None = None


@dataclass(frozen=True)
class CheckDef:
    """What a check is, written once: code, area, severity, message, field, fixes, source."""

    code: str
    area: str
    severity: Severity
    en: str
    zh: str
    field: str = ""
    fix: Fix | None = None
    fixes: Mapping[str, Fix] = dataclasses.field(default_factory=dict)
    #: other wordings of the finding, chosen by name
    variants: Mapping[str, Variant] = dataclasses.field(default_factory=dict)
    #: further severities a raise may choose (``severity=``)
    severities: tuple[Severity, ...] = ()
    #: where the rule comes from: docs/domain.md, a vLLM source file, an issue (empty: the engine's own arithmetic)
    source: str = ""
    #: the customer edition of the proposal states this finding as a risk in the customer's words
    #: (documents.pdf.story.RISKS, or its target risks): the page asks an engineer who accepts such a
    #: warning for the reason the manager reads; a warning that stays internal is read, not accepted.
    customer: bool = False

    def variant(self, name: str | None) -> Variant:
        if name is None:
            return Variant(self.en, self.zh, self.severity, self.field)
        if name not in self.variants:
            raise CheckCatalogueError(f"check {self.code!r} has no variant {name!r}")
        v = self.variants[name]
        return Variant(v.en, v.zh, v.severity or self.severity, self.field if v.field is None else v.field)

    def chosen_fix(self, name: str | None) -> Fix | None:
        if name is None:
            return self.fix
        if name not in self.fixes:
            raise CheckCatalogueError(f"check {self.code!r} has no fix {name!r}")
        return self.fixes[name]

    def names(self, variant: str | None = None, fix: str | None = None) -> frozenset[str]:
        """The values a raise of this variant with this fix must pass."""
        v = self.variant(variant)
        out = template_names(v.en) | template_names(v.zh) | template_names(v.field or "")
        chosen = self.chosen_fix(fix)
        return out | (chosen.names() if chosen else frozenset())

    def fix_names(self) -> frozenset[str]:
        """The values any of the check's fixes names (a raise may pass those of the fixes it did not choose)."""
        out: frozenset[str] = self.fix.names() if self.fix else frozenset()
        for f in self.fixes.values():
            out |= f.names()
        return out

    def all_names(self) -> frozenset[str]:
        out = self.names()
        for v in self.variants:
            out |= self.names(variant=v)
        for f in self.fixes:
            out |= self.names(fix=f)
        return out


class Catalogue:
    """Every check definition, from the modules of ``engine/checks/catalogue``."""

    def __init__(self, defs: list[CheckDef]) -> None:
        self.defs: dict[str, CheckDef] = {}
        for d in defs:
            if d.code in self.defs:
                raise ValueError(f"check {d.code!r} is defined twice")
            clash = d.all_names() & RESERVED
            if clash:
                raise ValueError(f"check {d.code!r} uses reserved value names {sorted(clash)}")
            self.defs[d.code] = d

    def __iter__(self) -> Iterator[CheckDef]:
        yield from self.defs.values()

    def __getitem__(self, code: str) -> CheckDef:
        try:
            return self.defs[code]
        except KeyError:
            raise CheckCatalogueError(f"no check definition for {code!r} (engine/checks/catalogue)") from None


@cache
def definitions() -> Catalogue:
    """Load every ``DEFS`` tuple of ``configurator.engine.checks.catalogue.*`` once."""
    from . import catalogue as package

    defs: list[CheckDef] = []
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        defs.extend(getattr(module, "DEFS", ()))
    return Catalogue(defs)


@lru_cache(maxsize=4096)
def _names(code: str, variant: str | None, fix: str | None) -> tuple[frozenset[str], frozenset[str]]:
    """The values a raise of ``code`` with this wording and fix must pass, and those it may pass,
    worked out once (they follow from the frozen definitions alone)."""
    d = definitions()[code]
    return d.names(variant, fix), d.all_names()


def _check_values(code: str, variant: str | None, fix: str | None, values: Mapping[str, Any]) -> None:
    """Refuse a value no template of ``code`` names, and a missing one the chosen wording and fix name."""
    expected, allowed = _names(code, variant, fix)
    if not expected <= values.keys() <= allowed:
        missing = sorted(expected - values.keys())
        extra = sorted(values.keys() - allowed)
        raise CheckCatalogueError(
            f"check {code!r}: values do not match its templates"
            + (f"; missing {missing}" if missing else "")
            + (f"; not in the templates {extra}" if extra else "")
        )


_UNWORDED: ContextVar[bool] = ContextVar("checks_unworded", default=False)


@contextmanager
def unworded() -> Iterator[None]:
    """Within the block, a warning or a note is raised without its words (messages and fix left empty):
    the auto-planner's screening of serving variants (planner/serving.py) judges a variant by its errors
    alone, and plans the one it keeps in full — every finding worded — with ``plan()``.  An error is
    always worded: the planner shows it as the reason a variant fails."""
    token = _UNWORDED.set(True)
    try:
        yield
    finally:
        _UNWORDED.reset(token)


def raise_(
    code: str,
    /,
    *,
    fix: str | None = None,
    variant: str | None = None,
    severity: Severity | None = None,
    figures: Mapping[str, Any] | None = None,
    **values: Any,
) -> Check:
    """The check ``code``: its wording (``variant``), field and fix (``fix``) rendered from ``values``."""
    d = definitions()[code]
    _check_values(code, variant, fix, values)
    v = d.variant(variant)
    stated = v.severity or d.severity
    if severity is None:
        severity = stated
    elif severity != stated and severity not in d.severities:
        raise CheckCatalogueError(f"check {code!r} is never {severity.value}")
    chosen = d.chosen_fix(fix)
    where = render(
        (chosen.field if chosen is not None and chosen.field is not None else v.field) or "", values
    )
    if severity != Severity.ERROR and _UNWORDED.get():
        # A screening pass (see ``unworded``): the finding's code, severity and field, without its words.
        return Check(code=code, severity=severity, area=d.area, message_en="", message_zh="", field=where)
    return Check(
        code=code,
        severity=severity,
        area=d.area,
        message_en=render(v.en, values),
        message_zh=render(v.zh, values),
        figures=figures if figures is not None else _EMPTY,
        field=where,
        fix=chosen.build(values, where) if chosen else _EMPTY,
        fix_en=render(chosen.en, values) if chosen else "",
        fix_zh=render(chosen.zh, values) if chosen else "",
    )


@dataclass(frozen=True)
class Words:
    """A finding's words without a plan check: its field and message in both languages."""

    code: str
    field: str
    message_en: str
    message_zh: str


def words(code: str, /, *, variant: str | None = None, **values: Any) -> Words:
    """The field and message of ``code`` (its wording ``variant``) rendered from ``values``, checked as
    ``raise_`` checks them, for a finding that is not a plan's check: the auto-planner's reasons a
    deployment is ruled out (``catalogue/planner.py``; ``planner.results.rejection`` makes the
    rejection).  Always worded, whatever ``unworded`` says."""
    d = definitions()[code]
    _check_values(code, variant, None, values)
    v = d.variant(variant)
    return Words(code, render(v.field or "", values), render(v.en, values), render(v.zh, values))
