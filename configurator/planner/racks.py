"""Which rack type holds a server family within its power and cooling limits, and the cheapest
over the horizon for a shape."""

from __future__ import annotations

from dataclasses import replace

from ..engine.racks import CONTAINMENT_KW_LIMIT, servers_per_rack
from ..engine.types import ParallelSpec, PlanRequest, RackSpec, ServerSpec, TopologyKind, TopologySpec
from .build import RequestBuilder, ceil_div
from .query import PlannerQuery
from .results import Shape


class RackChooser:
    """Rack options per server family and the cheapest per shape (both cached)."""

    def __init__(self, query: PlannerQuery, build: RequestBuilder):
        self.q = query
        self.c = query.constraints
        self.build = build
        self.default_rack = build.default_rack
        self.rack_cache: dict[tuple, tuple[RackSpec, bool, int]] = {}
        self.rack_options_cache: dict[str, list[tuple[RackSpec, bool, int]]] = {}

    def rack_options(self, server: ServerSpec) -> list[tuple[RackSpec, bool, int]]:
        if server.slug not in self.rack_options_cache:
            self.rack_options_cache[server.slug] = self._rack_options(server)
        return self.rack_options_cache[server.slug]

    def _rack_options(self, server: ServerSpec) -> list[tuple[RackSpec, bool, int]]:
        """(rack, inline, servers per rack) that keep every rack within its cooling limit.

        Catalog rack types first (the request then names them by slug); an air
        rack capped at the site's air limit (inline in the request) only when no
        catalog rack stays within its cooling limit (A3 under "air cooling only":
        one 16.2 kW server per 25 kW rack).
        """
        site = self.q.site
        out: list[tuple[RackSpec, bool, int]] = []
        capped: list[tuple[RackSpec, bool, int]] = []
        for rack in self.q.racks or (self.default_rack,):
            if self.c.air_cooled_only and rack.cooling != "air":
                continue
            if rack.cooling == "air":
                limit: float | None = site.air_cooling_kw_limit
            elif rack.cooling == "containment":
                limit = max(CONTAINMENT_KW_LIMIT, site.air_cooling_kw_limit)
            else:
                limit = None
            probe = PlanRequest(
                model=self.q.model,
                server=server,
                topology=TopologySpec(TopologyKind.SINGLE, 1, ParallelSpec(1, 1)),
                rack=rack,
            )
            per = servers_per_rack(probe)
            usable = rack.rack_units - rack.reserved_units - rack.pdu_units
            if server.rack_units > usable or (rack.max_kw > 0 and server.max_input_kw > rack.max_kw):
                continue
            if limit is None or per * server.max_input_kw <= limit + 1e-9:
                out.append((rack, False, per))
            elif server.max_input_kw <= limit and rack.cooling == "air":
                cap = replace(rack, name=f"{rack.name} (≤ {limit:g} kW)", max_kw=float(limit))
                capped.append((cap, True, servers_per_rack(replace(probe, rack=cap))))
        if not self.q.racks:  # no rack types in the catalog: the request carries the engine's default
            out = [(r, True, per) for r, _inline, per in out]
        return out or capped

    def choose_rack(self, server: ServerSpec, shape: Shape) -> tuple[RackSpec, bool, int]:
        """The rack type with the lowest rack cost over the horizon (racks × (price + colocation))."""
        key = (server.slug, shape.group_nodes)
        if key not in self.rack_cache:
            self.rack_cache[key] = self._choose_rack(server, shape)
        return self.rack_cache[key]

    def _choose_rack(self, server: ServerSpec, shape: Shape) -> tuple[RackSpec, bool, int]:
        options = self.rack_options(server)
        best = None
        for rack, inline, per in options:
            count = sum(ceil_div(g, per) for g in shape.group_nodes)
            price = self.build.commercial(server, 1, rack).rack_unit_price
            months = 12 * self.build.commercial(server, 1, rack).horizon_years
            cost = count * (price + self.q.site.colocation_per_rack_month * months)
            over = self.c.max_racks is not None and count > self.c.max_racks
            key = (over, cost, inline, count)
            if best is None or key < best[0]:
                best = (key, (rack, inline, per))
        assert best is not None
        return best[1]
