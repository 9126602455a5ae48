"""The facilities figures the seed documents state for the deployments they plan, as data.

``seed_references.yaml`` beside this module holds each one (server, node count, switches per fabric,
racks, rack units, breaker, the servers' load) with its source; the network, racks and power modules
compare a plan of the same server and node count with it.  Pure Python.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from .types import PlanRequest, SeedReference, Source

PATH = Path(__file__).with_name("seed_references.yaml")
_KW_TOLERANCE = 0.05  # the paragraph's load is stated to 0.1 kW


@dataclass(frozen=True)
class _Entry:
    server: str
    nodes: int
    reference: SeedReference
    servers_kw: float | None


def _value(raw: dict[str, Any], name: str) -> Any:
    item = raw.get(name)
    if item is None:
        return None
    if not isinstance(item, dict) or "value" not in item or "source" not in item:
        raise ValueError(
            f"{PATH.name}: {raw.get('server')} × {raw.get('nodes')}: {name} needs a value and a source"
        )
    return item["value"]


@cache
def _entries() -> tuple[_Entry, ...]:
    out = []
    for raw in yaml.safe_load(PATH.read_text(encoding="utf-8")):
        source = raw["source"]
        out.append(
            _Entry(
                server=str(raw["server"]),
                nodes=int(raw["nodes"]),
                reference=SeedReference(
                    Source(str(source["kind"]), str(source["ref"])),
                    {str(k): int(v) for k, v in (_value(raw, "switches") or {}).items()},
                    racks=_value(raw, "racks"),
                    rack_units=_value(raw, "rack_units"),
                    breaker_amps=_value(raw, "breaker_amps"),
                ),
                servers_kw=None if _value(raw, "servers_kw") is None else float(_value(raw, "servers_kw")),
            )
        )
    return tuple(out)


def _entry(req: PlanRequest, nodes: int) -> _Entry | None:
    return next((e for e in _entries() if e.server == req.server.slug and e.nodes == nodes), None)


def seed_reference(req: PlanRequest, nodes: int) -> SeedReference | None:
    """The seed plan a deployment of ``nodes`` of this server reproduces, if a seed document plans one."""
    entry = _entry(req, nodes)
    return entry.reference if entry is not None else None


def power_source(req: PlanRequest, nodes: int, servers_kw: float) -> Source | None:
    """The seed paragraph whose feed arithmetic this load reproduces: the same server and node count, and
    the load the paragraph starts from (an edited server power no longer reproduces it)."""
    entry = _entry(req, nodes)
    if entry is None or entry.servers_kw is None or abs(servers_kw - entry.servers_kw) >= _KW_TOLERANCE:
        return None
    return entry.reference.source
