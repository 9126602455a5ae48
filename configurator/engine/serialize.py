"""Engine results → JSON-safe dicts (for the JSON API, the stored quote revision and the UI).

``to_jsonable()`` converts any dataclass tree: ``Decimal`` → string (money
keeps its exact digits), ``Enum`` → its value, tuples and sets → lists,
mappings → dicts with string keys, dataclass properties (``ep``,
``world_size``, ``logical_devices``, ``ok`` …) included beside the fields.
A NaN or infinite float raises ``ValueError``: a figure the engine could not
compute must be a check, never a silent ``NaN`` in a customer's quote.

``plan_to_dict()`` shapes the public response of ``plan()``.  The ``…_from_dict`` readers go back:
the parts of a stored plan that are drawn (a rank's memory, a serving group, a rack) become the
engine's own result types again, so the page and the PDF draw a frozen plan with the same typed
code as a fresh one.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from datetime import date, datetime
from decimal import Decimal
from enum import Enum
from typing import Any

from .launch.nodes import node_command
from .types import (
    Check,
    FeedSizing,
    Figure,
    GroupLayout,
    ParallelSpec,
    PlanResult,
    RackLayout,
    RackSlot,
    RankMemory,
)

_PROPERTIES: dict[type, tuple[str, ...]] = {}
_FIELDS: dict[type, tuple[str, ...]] = {}
_SECTIONS = ("power", "racks", "network", "performance", "tco", "launch", "economics")


def _class_properties(cls: type) -> tuple[str, ...]:
    """Public read-only properties of a dataclass (cached per class)."""
    names = _PROPERTIES.get(cls)
    if names is None:
        seen: dict[str, None] = {}
        for klass in reversed(cls.__mro__):
            for name, attr in vars(klass).items():
                if isinstance(attr, property) and not name.startswith("_"):
                    seen[name] = None
        names = _PROPERTIES[cls] = tuple(seen)
    return names


def _class_fields(cls: type) -> tuple[str, ...]:
    names = _FIELDS.get(cls)
    if names is None:
        names = _FIELDS[cls] = tuple(f.name for f in dataclasses.fields(cls))
    return names


def _float(x: float, path: str) -> float:
    if math.isnan(x) or math.isinf(x):
        raise ValueError(f"{path or 'value'} is {x!r}, which JSON cannot carry")
    return x


class _Unconvertible(Exception):
    """Raised by the fast converter where the value needs the path-naming one (a NaN, an infinite
    number, a type JSON cannot carry): that one runs again to say where."""


_INF = math.inf
_NINF = -math.inf
_SCALARS = (str, int, bool, type(None))


def _fast(obj: Any, drop: tuple[str, ...]) -> Any:
    """``to_jsonable`` without the path of each value, which only an error message reads: the same
    values in the same order, dispatched on the exact type first (a plan is some 4,500 values, and
    building each one's path string was about half the conversion).  Raises :class:`_Unconvertible`
    where the careful converter would raise."""
    t = type(obj)
    if t is str or t is int or t is bool or obj is None:
        return obj
    if t is float:
        if obj != obj or obj == _INF or obj == _NINF:
            raise _Unconvertible
        return obj
    if t is dict:
        return {
            (k if type(k) is str else str(k.value if isinstance(k, Enum) else k)): _fast(v, drop)
            for k, v in obj.items()
        }
    if t is tuple or t is list:
        return [_fast(v, drop) for v in obj]
    if t is Decimal:
        if not obj.is_finite():
            raise _Unconvertible
        return str(obj)
    fields = _FIELDS.get(t)
    if fields is not None or (dataclasses.is_dataclass(obj) and not isinstance(obj, type)):
        if fields is None:
            fields = _class_fields(t)
        out: dict[str, Any] = {}
        for name in fields:
            if name not in drop:
                out[name] = _fast(getattr(obj, name), drop)
        for name in _class_properties(t):
            if name not in drop and name not in out:
                out[name] = _fast(getattr(obj, name), drop)
        return out
    if isinstance(obj, _SCALARS):
        if isinstance(obj, Enum):  # str/int enums
            return obj.value
        return obj
    if isinstance(obj, float):  # a float subclass
        if not math.isfinite(obj):
            raise _Unconvertible
        return obj
    if isinstance(obj, Enum):
        return _fast(obj.value, drop)
    if isinstance(obj, Mapping):
        return {str(k.value if isinstance(k, Enum) else k): _fast(v, drop) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set, frozenset)):
        items = sorted(obj, key=repr) if isinstance(obj, (set, frozenset)) else obj
        return [_fast(v, drop) for v in items]
    if isinstance(obj, (datetime, date)):
        return obj.isoformat()
    raise _Unconvertible


def to_jsonable(
    obj: Any, *, exclude: tuple[str, ...] = (), drop: tuple[str, ...] = (), _path: str = ""
) -> Any:
    """Convert ``obj`` (a dataclass tree) into JSON-safe values.

    ``exclude`` drops those field names at the top level only; ``drop`` drops
    them from every dataclass at any depth.
    """
    if not exclude:
        try:
            return _fast(obj, drop)
        except _Unconvertible:
            pass  # the careful converter below raises, naming the value's path
    return _careful(obj, exclude=exclude, drop=drop, _path=_path)


def _careful(obj: Any, *, exclude: tuple[str, ...] = (), drop: tuple[str, ...] = (), _path: str = "") -> Any:
    """``to_jsonable`` keeping each value's path, for the message of a value JSON cannot carry."""
    if obj is None or isinstance(obj, (bool, int, str)):
        if isinstance(obj, Enum):  # str/int enums
            return obj.value
        return obj
    if isinstance(obj, float):
        return _float(obj, _path)
    if isinstance(obj, Decimal):
        if not obj.is_finite():
            raise ValueError(f"{_path or 'value'} is {obj!r}, which JSON cannot carry")
        return str(obj)
    if isinstance(obj, Enum):
        return _careful(obj.value, _path=_path)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        cls = type(obj)
        out: dict[str, Any] = {}
        for name in _class_fields(cls):
            if name in exclude or name in drop:
                continue
            out[name] = _careful(getattr(obj, name), drop=drop, _path=f"{_path}.{name}" if _path else name)
        for name in _class_properties(cls):
            if name in exclude or name in drop or name in out:
                continue
            out[name] = _careful(getattr(obj, name), drop=drop, _path=f"{_path}.{name}" if _path else name)
        return out
    if isinstance(obj, Mapping):
        return {
            str(k.value if isinstance(k, Enum) else k): _careful(v, drop=drop, _path=f"{_path}[{k}]")
            for k, v in obj.items()
            if k not in exclude
        }
    if isinstance(obj, (list, tuple, set, frozenset)):
        items = sorted(obj, key=repr) if isinstance(obj, (set, frozenset)) else obj
        return [_careful(v, drop=drop, _path=f"{_path}[{i}]") for i, v in enumerate(items)]
    if isinstance(obj, (datetime, date)):
        return obj.isoformat()
    raise TypeError(f"{_path or 'value'}: cannot convert {type(obj).__name__} to JSON")


def check_to_dict(c: Check) -> dict[str, Any]:
    """A check as the public API spells it (``message`` is English, ``message_zh`` Chinese)."""
    return {
        "code": c.code,
        "severity": c.severity.value,
        "area": c.area,
        "message": c.message_en,
        "message_zh": c.message_zh,
        "field": c.field,
        "fix": to_jsonable(c.fix, _path=f"{c.code}.fix"),
        "fix_en": c.fix_en,
        "fix_zh": c.fix_zh,
        "requirement": to_jsonable(c.requirement, _path=f"{c.code}.requirement"),
        "figures": to_jsonable(c.figures, _path=f"{c.code}.figures"),
    }


def figure_to_dict(f: Figure) -> dict[str, Any]:
    """A figure without its key (the key indexes the ``figures`` object)."""
    return {
        "value": to_jsonable(f.value, _path=f.key),
        "unit": f.unit,
        "label_en": f.label_en,
        "label_zh": f.label_zh,
        "formula": f.formula,
        "inputs": to_jsonable(f.inputs, _path=f"{f.key}.inputs"),
        "source": {"kind": f.source.kind, "ref": f.source.ref},
    }


_FLATTENED = ("figures", "checks")


def _section(obj: Any) -> Any:
    """A module result without figures and checks at any depth: every nested
    figure is also a figure of its section, flattened into the top-level
    ``figures``, and checks are collected into the top-level ``checks``."""
    if obj is None:
        return None
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return to_jsonable(obj, drop=_FLATTENED, _path=type(obj).__name__)
    return to_jsonable(obj)


def _memory_section(memory: Any) -> Any:
    if memory is None:
        return None
    groups = [
        to_jsonable(g, drop=_FLATTENED, _path=f"memory.groups[{i}]") for i, g in enumerate(memory.groups)
    ]
    if not groups:
        return {"group": None, "per_rank": None, "groups": []}
    first = groups[0]
    # The first (serving) group's figures at the top, every group in ``groups``; the checkpoint
    # every node loads (its bytes size the storage line of the BOM).
    checkpoint = {
        "checkpoint_slug": getattr(memory, "checkpoint_slug", ""),
        "checkpoint_bytes": getattr(memory, "checkpoint_bytes", 0),
    }
    return {**first, "groups": groups, **checkpoint}


def _figures_of(result: PlanResult) -> dict[str, Any]:
    figures: dict[str, Any] = {}
    for section in (result.layout, result.memory, *(getattr(result, s) for s in _SECTIONS)):
        section_figures = getattr(section, "figures", None)
        if not section_figures:
            continue
        for key, f in section_figures.items():
            figures[key] = figure_to_dict(f) if isinstance(f, Figure) else to_jsonable(f, _path=str(key))
    return figures


# The money of a TCO the engine withheld (refused inputs, or a line priced on request): the engine's
# result carries zeros in their place, which the JSON must not pass on as amounts.
_WITHHELD_MONEY = {
    "capex": ("servers", "switches", "optics", "racks", "installation", "subtotal", "discount", "total",
              "gateway", "storage"),
    "annual": ("depreciation", "om", "software_support", "electricity", "colocation", "buy_opex",
               "lease_rent", "lease_electricity", "lease_colocation", "lease_total", "lease_om",
               "lease_software_support"),
    "": ("buy_total", "lease_total", "npv_buy", "npv_lease", "residual_value", "lease_upfront"),
}  # fmt: skip


def _withheld_tco(tco: dict[str, Any], prices_on_request: tuple[str, ...]) -> dict[str, Any]:
    """A withheld TCO as JSON: every amount ``null`` and ``withheld`` saying why ("price_on_request"
    with the lines, or "refused": the commercial inputs have errors, see the checks)."""
    out = dict(tco)
    for part, names in _WITHHELD_MONEY.items():
        target = dict(out[part]) if part else out
        for name in names:
            if name in target:
                target[name] = None
        if part:
            out[part] = target
    out["withheld"] = (
        {"reason": "price_on_request", "lines": list(prices_on_request)}
        if prices_on_request
        else {"reason": "refused", "lines": []}
    )
    return out


def figures_dict(result: PlanResult) -> dict[str, Any]:
    """``plan_to_dict(result)["figures"]`` without serialising the rest of the plan."""
    return _figures_of(result)


def plan_to_dict(result: PlanResult) -> dict[str, Any]:
    """The public JSON shape of a plan.

    ``{"ok", "checks": [{code, severity, area, message, message_zh, field, fix,
    fix_en, fix_zh, figures}], "layout", "memory": {group, per_rank: {…},
    kv_tokens_per_dp_rank, full_len_seqs_per_dp_rank, max_num_seqs_fit,
    cluster_weights_bytes, cluster_kv_bytes, groups: [...]}, "power", "racks",
    "network", "performance", "tco", "launch", "figures": {key: {value, unit,
    label_en, label_zh, formula, inputs, source}}}``; a section is ``null``
    when an earlier error made it meaningless.
    """
    out: dict[str, Any] = {
        "ok": result.ok,
        "checks": [check_to_dict(c) for c in result.checks],
        "layout": _section(result.layout),
        "memory": _memory_section(result.memory),
    }
    for name in _SECTIONS:
        out[name] = _section(getattr(result, name))
    if result.tco is not None and not result.tco.valid:
        out["tco"] = _withheld_tco(out["tco"], result.tco.prices_on_request)
    if result.launch is not None and out["launch"]:
        # Each node's start command as the shell reads it, one line per engine (engine/launch/ quotes it).
        for row, node in zip(out["launch"]["nodes"], result.launch.nodes, strict=True):
            row["command"] = node_command(node)
    # The settings each role's engines run (engine/speculative.py serving_roles).
    out["serving"] = [to_jsonable(r) for r in result.serving]
    out["figures"] = _figures_of(result)
    return out


# --------------------------------------------------------------------------- back from JSON


def _fields(cls: type, data: Mapping[str, Any], **nested: Any) -> dict[str, Any]:
    """The values of ``cls``'s fields in ``data`` (a dict ``to_jsonable`` made), ``nested`` replacing some.

    Derived properties stored beside the fields (``top_u``, ``ep`` …) are left out: the dataclass
    computes them again.  A field missing from ``data`` takes its default (a required one raises
    ``TypeError`` when ``cls`` is built).
    """
    names = _class_fields(cls)
    return {**{n: data[n] for n in names if n in data and n not in _FLATTENED}, **nested}


def rank_memory_from_dict(data: Mapping[str, Any]) -> RankMemory:
    """A group's ``per_rank`` memory from ``plan_to_dict()["memory"]``."""
    return RankMemory(**_fields(RankMemory, data))


def group_layout_from_dict(data: Mapping[str, Any]) -> GroupLayout:
    """A serving group from ``plan_to_dict()["layout"]["groups"]``."""
    parallel = ParallelSpec(**_fields(ParallelSpec, data["parallel"]))
    return GroupLayout(**_fields(GroupLayout, data, parallel=parallel))


def rack_layout_from_dict(data: Mapping[str, Any]) -> RackLayout:
    """A rack from ``plan_to_dict()["racks"]["racks"]`` (its feed without figures: the plan flattens those)."""
    return RackLayout(
        **_fields(
            RackLayout,
            data,
            slots=tuple(RackSlot(**_fields(RackSlot, slot)) for slot in data["slots"]),
            groups=tuple(data["groups"]),
            feed=FeedSizing(**_fields(FeedSizing, data["feed"])),
        )
    )
