"""``types.stored_init`` gives a frozen dataclass a cheaper ``__init__``: it must make the same
instance as the dataclass's own (``__dataclass_init__``), with the same parameters and defaults."""

from __future__ import annotations

import dataclasses
import inspect
import pickle
from dataclasses import dataclass, field

import pytest

from configurator import reference
from configurator.engine import checks, placement, serving_model, types
from configurator.engine.plan import plan
from configurator.engine.types import stored_init

STORED = [
    c
    for module in (types, serving_model, placement, checks.book)
    for c in vars(module).values()
    if isinstance(c, type) and "__dataclass_init__" in vars(c)
]


def test_the_hot_types_are_stored() -> None:
    names = {c.__name__ for c in STORED}
    assert {"Source", "Check", "RackSlot", "OperatingPoint", "StepBreakdown", "Variant"} <= names


@pytest.mark.parametrize("cls", STORED, ids=lambda c: c.__name__)
def test_same_signature_as_the_dataclass(cls: type) -> None:
    ours = inspect.signature(cls.__init__).parameters
    theirs = inspect.signature(cls.__dataclass_init__).parameters
    assert list(ours) == list(theirs)
    for name, p in ours.items():
        q = theirs[name]
        assert p.kind == q.kind, name
        default_is_factory = q.default is dataclasses._HAS_DEFAULT_FACTORY  # type: ignore[attr-defined]
        assert (p.default is types._FACTORY) == default_is_factory, name
        if not default_is_factory:
            assert p.default is q.default, name


def _made_both_ways(obj: object) -> tuple[object, object]:
    cls = type(obj)
    kwargs = {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj) if f.init}  # type: ignore[arg-type]
    theirs = object.__new__(cls)
    cls.__dataclass_init__(theirs, **kwargs)  # type: ignore[attr-defined]
    return cls(**kwargs), theirs


def _walk(obj: object, seen: set[int], out: list[object]) -> None:
    if id(obj) in seen:
        return
    seen.add(id(obj))
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        if "__dataclass_init__" in vars(type(obj)):
            out.append(obj)
        for f in dataclasses.fields(obj):
            _walk(getattr(obj, f.name), seen, out)
    elif isinstance(obj, dict):
        for v in obj.values():
            _walk(v, seen, out)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            _walk(v, seen, out)


@pytest.mark.parametrize("case", ["a3-16-8p8d", "a3-4-single", "hgx-h200-2-single"])
def test_every_stored_instance_of_a_plan_is_the_dataclass_one(case: str) -> None:
    found: list[object] = []
    _walk(plan(reference.request(reference.case(case))), set(), found)
    assert len({type(o) for o in found}) >= 8
    for obj in found:
        ours, theirs = _made_both_ways(obj)
        assert ours == theirs == obj
        assert list(vars(ours).items()) == list(vars(theirs).items())
        assert repr(ours) == repr(theirs)
        assert pickle.loads(pickle.dumps(ours)) == ours


def test_defaults_factories_keywords_and_post_init() -> None:
    @stored_init
    @dataclass(frozen=True)
    class Row:
        a: int
        b: str = "x"
        c: dict = field(default_factory=dict)
        d: int = field(default=3, init=False)
        e: list = field(default_factory=list, init=False)
        k: int = field(default=7, kw_only=True)

        def __post_init__(self) -> None:
            object.__setattr__(self, "seen", self.a + self.k)

    r = Row(1)
    assert (r.a, r.b, r.c, r.d, r.e, r.k, r.seen) == (1, "x", {}, 3, [], 7, 8)  # type: ignore[attr-defined]
    assert Row(1).c is not r.c
    assert Row(2, "y", {"z": 1}, k=4) == Row(2, "y", {"z": 1}, k=4)
    assert list(vars(Row(1))) == ["a", "b", "c", "e", "k", "seen"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.a = 2  # type: ignore[misc]
    with pytest.raises(TypeError):
        Row()  # type: ignore[call-arg]
