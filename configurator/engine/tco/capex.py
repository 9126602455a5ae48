"""Capital expenditure: the servers, and what the network and rack modules placed, at the quoted prices.

Counts are read from the typed results: every switch the network module placed
(``NetworkResult.switches``), its 400G-class transceivers (``optics``) and the other transceivers
and cables by media code (``media``); the racks and the cooling each needs
(``RackLayout.cooling_required``: a rack over the air-cooling limit is priced as the containment
or liquid-cooled rack it needs).  A count without a price is counted at 0 and said so in a check.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal

from ..checks import raise_
from ..figures import FigureBook
from ..network import NetworkResult
from ..racks import RackResult
from ..types import CapexBreakdown, Check, PlanRequest, Source
from .money import bill, cents

RACK_MODULE = Source("derived", "rack module")
NETWORK_MODULE = Source("derived", "network module")
CHECKPOINT_COPIES = 2  # the version served and the next one, side by side during an upgrade


def checkpoint_storage_tb(req: PlanRequest) -> int:
    """Shared storage for the model checkpoint in whole TB: two copies of the weights as stored on disk."""
    return math.ceil(CHECKPOINT_COPIES * req.model.weight_bytes / 10**12) if req.model.weight_bytes else 0


def rack_cooling_counts(racks: RackResult) -> dict[str, int]:
    """Racks by the cooling they need (``RackLayout.cooling_required``)."""
    counts: dict[str, int] = {}
    for rack in racks.racks:
        counts[rack.cooling_required] = counts.get(rack.cooling_required, 0) + 1
    return counts


def switch_counts(network: NetworkResult) -> dict[str, int]:
    """Switches placed by the network module, by catalog slug."""
    counts: dict[str, int] = {}
    for switch in network.switches:
        counts[switch.slug] = counts.get(switch.slug, 0) + 1
    return counts


@dataclass(frozen=True)
class Capex:
    """The purchase at full precision (the figures and :meth:`breakdown` show it to the cent)."""

    servers: Decimal
    switches: Decimal
    optics: Decimal  # 400G-class transceivers and the other media (transceivers, cables)
    racks: Decimal
    installation: Decimal
    gateway: Decimal
    storage: Decimal
    storage_tb: int
    subtotal: Decimal
    discount: Decimal
    total: Decimal  # subtotal − discount

    def breakdown(self) -> CapexBreakdown:
        return CapexBreakdown(
            cents(self.servers),
            cents(self.switches),
            cents(self.optics),
            cents(self.racks),
            cents(self.installation),
            cents(self.subtotal),
            cents(self.discount),
            cents(self.total),
            cents(self.gateway),
            cents(self.storage),
            self.storage_tb,
        )


def price_capex(
    req: PlanRequest,
    nodes: int,
    racks: RackResult,
    network: NetworkResult,
    book: FigureBook,
    checks: list[Check],
) -> Capex:
    """Price every item bought; put the capex figures and a check for every count without a price."""
    c = req.commercial
    sw_counts = switch_counts(network)
    n_optics = network.optics
    servers = nodes * c.server_unit_price
    switches = Decimal(0)
    for slug, count in sorted(sw_counts.items()):
        price = c.switch_unit_prices.get(slug)
        if price is None:
            checks.append(
                raise_(
                    "commercial.switch_price_missing",
                    figures={"slug": slug, "count": count},
                    slug=slug,
                    count=count,
                )
            )
            continue
        switches += count * price
    media_cost = Decimal(0)
    # Transceivers below 400G and the cables, each by its media code (network.link_media).
    media_counts = dict(network.media)
    for code, count in sorted(media_counts.items()):
        price = c.media_unit_prices.get(code)
        if price is None:
            checks.append(
                raise_(
                    "commercial.media_price_missing",
                    figures={"media": code, "count": count},
                    code=code,
                    count=count,
                )
            )
            continue
        media_cost += count * price
    optics = n_optics * c.optics_unit_price + media_cost
    # Racks priced by the cooling each needs (racks.RackLayout.cooling_required): a rack over the
    # air-cooling limit is a containment or liquid-cooled rack, at its own price.
    rack_cooling = rack_cooling_counts(racks)
    rack_cost = Decimal(0)
    for cooling, count in sorted(rack_cooling.items()):
        if cooling == req.rack.cooling:
            rack_cost += count * c.rack_unit_price
            continue
        price = c.rack_unit_prices_by_cooling.get(cooling)
        if price is None:
            checks.append(
                raise_(
                    "commercial.rack_price_missing",
                    figures={"cooling": cooling, "count": count},
                    count=count,
                    cooling=cooling,
                    cooling_zh="液冷" if cooling == "liquid" else "冷/热通道封闭",
                )
            )
            price = c.rack_unit_price
        rack_cost += count * price
    gateway = c.gateways * c.gateway_unit_price if c.gateway_unit_price > 0 else Decimal(0)
    storage_tb = checkpoint_storage_tb(req) if c.storage_price_per_tb > 0 else 0
    storage = storage_tb * c.storage_price_per_tb
    subtotal = servers + switches + optics + rack_cost + c.installation + gateway + storage
    discount = bill(subtotal * c.quote_discount)
    capex = subtotal - discount
    book.put(
        "tco.capex.gateway",
        cents(gateway),
        source=Source("input", "commercial.gateway_unit_price"),
        gateways=c.gateways,
        gateway_unit_price=c.gateway_unit_price,
    )
    book.put(
        "tco.capex.storage",
        cents(storage),
        source=Source("input", "commercial.storage_price_per_tb"),
        copies=CHECKPOINT_COPIES,
        checkpoint_bytes=req.model.weight_bytes,
        tb=storage_tb,
        storage_price_per_tb=c.storage_price_per_tb,
    )
    book.put(
        "tco.capex.servers",
        cents(servers),
        source=Source("input", "commercial.server_unit_price"),
        nodes=nodes,
        server_unit_price=c.server_unit_price,
    )
    book.put(
        "tco.capex.switches",
        cents(switches),
        source=NETWORK_MODULE,
        counts=dict(sw_counts),
        prices={k: str(v) for k, v in c.switch_unit_prices.items()},
    )
    book.put(
        "tco.capex.optics",
        cents(optics),
        source=NETWORK_MODULE,
        optics=n_optics,
        optics_unit_price=c.optics_unit_price,
        media_cost=media_cost,
        media=media_counts,
        media_unit_prices={k: str(v) for k, v in c.media_unit_prices.items()},
    )
    book.put(
        "tco.capex.racks",
        cents(rack_cost),
        source=RACK_MODULE,
        racks=dict(rack_cooling),
        rack_unit_price=c.rack_unit_price,
        by_cooling={k: str(v) for k, v in c.rack_unit_prices_by_cooling.items()},
    )
    book.put(
        "tco.capex.installation",
        cents(c.installation),
        source=Source("input", "commercial.installation"),
        installation=c.installation,
    )
    book.put(
        "tco.capex.discount",
        cents(discount),
        source=Source("input", "commercial.quote_discount"),
        subtotal=cents(subtotal),
        quote_discount=c.quote_discount,
    )
    book.put("tco.capex.total", cents(capex), subtotal=cents(subtotal), discount=cents(discount))
    return Capex(
        servers=servers,
        switches=switches,
        optics=optics,
        racks=rack_cost,
        installation=c.installation,
        gateway=gateway,
        storage=storage,
        storage_tb=storage_tb,
        subtotal=subtotal,
        discount=discount,
        total=capex,
    )
