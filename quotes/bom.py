"""Bill-of-materials lines and engine totals, derived from a frozen plan result.

Pure functions over plain dicts (the JSON snapshots of a revision), so the same
code prices a new revision and explains an old one.  The result is the shape of
``configurator.engine.serialize.plan_to_dict``; the BOM takes its counts from
the TCO section (``tco.nodes``, ``tco.switch_counts``, ``tco.optics_count``,
``tco.rack_count``) because those are the counts the engine priced, so the
capex lines add up to the engine's ``tco.capex.subtotal``.  Each reader falls
back to the network/racks/layout sections, and every key it understands is
named in one helper, so a change of shape is fixed in one place.

Prices (``prices_json``) may come in two shapes, both understood:

* the commercial terms the engine used, as ``configurator.public.plan_for_quote``
  writes them: ``{"currency", "server": {"sku", "unit_price", "lease_per_month"},
  "switches": {slug: price}, "optics_unit_price", "rack_unit_price",
  "installation", "software_support_per_year", "om_per_year", "price_list",
  "on_date"}``;
* a list of price items under ``"items"``, one per catalog price used::

    {"category": "server", "ref": "atlas-800-a3", "sku": "A3-800-SN",
     "description_en": "…", "description_zh": "…", "unit_price": "3000000.00",
     "currency": "CNY", "lease_per_month": "125000", "unit_cost": null,
     "price_list": "CN list 2026Q1", "effective_date": "2026-01-01"}

  (``category``: server, switch, optics, rack, pdu, software, install, om,
  lease, other; ``ref``: the catalog slug priced).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any

from django.utils.translation import gettext_noop

from configurator.public import MEDIA

from . import statuses
from .statuses import BomCategory

CENT = Decimal("0.01")
# A line whose price no price list and no public source gives: quoted on request, never as 0.  It is
# stored at 0 so that no total counts it, and every document prints "price on request" instead.
PRICE_ON_REQUEST_NOTE = gettext_noop(statuses.PRICE_ON_REQUEST_NOTE)
NO_PRICE_NOTE = PRICE_ON_REQUEST_NOTE  # the former name
# A line that costs nothing by its licence (open-source or free-of-charge software): printed as such, not as 0.
NO_FEE_NOTE = gettext_noop(statuses.NO_FEE_NOTE)
gettext_noop("Price on request")  # the msgids, for makemessages
gettext_noop("No licence fee")
NOTES_WITHOUT_PRICE = frozenset({PRICE_ON_REQUEST_NOTE, NO_FEE_NOTE})
# A hardware line without a vendor part number is marked as a generic item (a class of product any
# of several vendors supply; the part number is fixed on order).  The price lists' own SKUs start so.
# A named product whose vendor part number is not public (a server, a vendor's switch) says the part
# number is fixed on order.
INTERNAL_SKU_PREFIXES = ("SRV-", "SW-", "OPT-", "CBL-", "GW-", "STO-", "RACK-", "NIC-")
NAMED_SKU_PREFIXES = ("SRV-", "SW-LINGQU", "SW-INSPUR", "SW-NVIDIA")
GENERIC_EN = " (generic item)"
GENERIC_ZH = "（通用项）"
NAMED_EN = " (vendor part number on order)"
NAMED_ZH = "（厂商料号以订货为准）"
HARDWARE_CATEGORIES = frozenset({"server", "switch", "optics", "rack", "other"})
# Cable length classes (configurator.engine.racks.CABLE_LENGTHS): the fibre and copper lines by length.
CABLE_LENGTHS = {
    "in_rack": (3, "in-rack", "柜内"),
    "adjacent": (10, "to a nearby rack", "邻近机柜"),
    "row": (30, "along the row", "列间"),
}
# The checkpoint storage as a product class (S1 §3.1: weights synchronised through shared storage,
# "e.g. OceanStor"): an all-flash, dual-controller NAS serving NFS to every node over the storage plane.
STORAGE_EN = (
    "All-flash NAS storage for the model checkpoint (dual controllers, NFS over the storage plane; "
    "OceanStor Dorado class or equivalent), usable TB, two checkpoint versions"
)
STORAGE_ZH = "全闪存 NAS 存储（双控制器，经存储面提供 NFS；OceanStor Dorado 同级或等效产品），可用容量 TB，可存两个权重版本"
# Scenarios whose customers require the domestic (信创) software stack (docs/domain.md §10: government
# documents, "国产化要求", Xinchuang cloud).
DOMESTIC_STACK_SCENARIOS = frozenset({"government-policy-qa"})


class Licence:
    """One operating-system or software line per platform: per node or per accelerator, with its source."""

    def __init__(self, ref: str, en: str, zh: str, per: str, fee: str, source: str) -> None:
        self.ref, self.en, self.zh, self.per, self.fee, self.source = ref, en, zh, per, fee, source


# Operating system and software per platform (the accelerator's software stack).  ``fee``: "none"
# (an open-source licence, no fee) or "on_request" (commercial, no public price for this market).
SOFTWARE_STACKS: dict[str, tuple[Licence, ...]] = {
    "ascend": (
        Licence(
            "os:openeuler",
            "openEuler 22.03 LTS SP4 server operating system, per node",
            "openEuler 22.03 LTS SP4 服务器操作系统（每节点）",
            "node",
            "none",
            "https://www.openeuler.org/en/ (Mulan PSL v2; no licence fee)",
        ),
        Licence(
            "cann",
            "Huawei CANN (Ascend heterogeneous compute architecture) community edition, 8.0.RC1 or later, per node",
            "华为 CANN 异构计算架构社区版（8.0.RC1 及以上，每节点）",
            "node",
            "none",
            "https://www.hiascend.com/software/cann (free download; vLLM-Ascend needs CANN ≥ 8.0.RC1, S1 §6.4)",
        ),
        Licence(
            "vllm-ascend",
            "vLLM-Ascend inference engine, per node",
            "vLLM-Ascend 推理引擎（每节点）",
            "node",
            "none",
            "https://github.com/vllm-project/vllm-ascend (Apache License 2.0)",
        ),
    ),
    "cuda": (
        Licence(
            "os:ubuntu",
            "Ubuntu Server 22.04 LTS operating system, per node",
            "Ubuntu Server 22.04 LTS 操作系统（每节点）",
            "node",
            "none",
            "https://ubuntu.com/server (free; Ubuntu Pro support is optional)",
        ),
        Licence(
            "cuda",
            "NVIDIA data-centre GPU driver and CUDA toolkit, per node",
            "NVIDIA 数据中心 GPU 驱动与 CUDA 工具包（每节点）",
            "node",
            "none",
            "https://docs.nvidia.com/cuda/eula/ (free of charge under the NVIDIA EULA)",
        ),
        Licence(
            "vllm",
            "vLLM inference engine, per node",
            "vLLM 推理引擎（每节点）",
            "node",
            "none",
            "https://github.com/vllm-project/vllm (Apache License 2.0)",
        ),
        Licence(
            "nvaie",
            "NVIDIA AI Enterprise subscription with support, per GPU, for the horizon of the quote",
            "NVIDIA AI Enterprise 软件订阅（含支持，每 GPU，覆盖报价期）",
            "device",
            "on_request",
            "https://docs.nvidia.com/ai-enterprise/planning-resource/licensing-guide/latest/licensing.html "
            "(per-GPU licence; sold through NVIDIA partners, no public price for this market)",
        ),
    ),
}
# The domestic (信创) operating system replacing openEuler where the scenario requires it.
DOMESTIC_OS = Licence(
    "os:kylin",
    "Kylin Advanced Server OS V10 (domestic operating system), per node",
    "银河麒麟高级服务器操作系统 V10（每节点）",
    "node",
    "on_request",
    "https://www.kylinos.cn/ (commercial licence; no public price)",
)
# Added NIC cards (configurator.engine.network.ADDED_PLANES): one dual-port card per two ports.
NIC_CARD_PORTS = 2
# Racks over the air-cooling limit, by the cooling they need (configurator.engine.racks).
RACKS_BY_COOLING = {
    "containment": ("Rack with hot/cold-aisle containment, with PDUs", "冷/热通道封闭机柜（含 PDU）"),
    "liquid": ("Liquid-cooled rack with PDUs", "液冷机柜（含 PDU）"),
}
# Units of BOM lines, stored as written here and translated on display.
UNITS = (gettext_noop("pcs"), gettext_noop("lot"), gettext_noop("year"), gettext_noop("month"))


def money(value: Decimal) -> Decimal:
    """Round an amount to the cent, half up (the commercial convention)."""
    return Decimal(value).quantize(CENT, rounding=ROUND_HALF_UP)


def to_decimal(value: Any, default: Decimal | None = None) -> Decimal | None:
    """A Decimal from a JSON value (text, int, or float through its shortest repr); ``default`` if none."""
    if value is None or isinstance(value, bool):
        return default
    try:
        result = value if isinstance(value, Decimal) else Decimal(str(value).strip())
    except (InvalidOperation, ValueError, TypeError):
        return default
    return result if result.is_finite() else default


def line_total(quantity: Decimal, unit_price: Decimal, discount: Decimal = Decimal("0")) -> Decimal:
    """quantity × unit price × (1 − discount), rounded to the cent."""
    return money(quantity * unit_price * (Decimal("1") - discount))


# --------------------------------------------------------------------------- reading the result


def effective_discount(line_discount: Decimal, quote_discount: Decimal, applies: bool) -> Decimal:
    """A line's whole discount: its own, and the quote discount after it where that applies
    (capex lines): 1 − (1 − line) × (1 − quote), the share the proposal's Discount column prints."""
    line_discount = Decimal(line_discount or 0)
    if not applies:
        return line_discount
    return 1 - (1 - line_discount) * (1 - Decimal(quote_discount or 0))


def _dig(data: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(data, Mapping):
            return None
        data = data.get(key)
    return data


def _first(data: Any, *paths: tuple[str, ...]) -> Any:
    for path in paths:
        value = _dig(data, *path)
        if value is not None:
            return value
    return None


def _count(value: Any) -> int | None:
    """A count given as a whole number, a list (its length) or an object with a count."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, (list, tuple)):
        return len(value)
    if isinstance(value, Mapping):
        for key in ("count", "quantity", "total"):
            if key in value:
                return _count(value[key])
    return None


def _amount(value: Any) -> Decimal | None:
    if isinstance(value, Mapping):
        value = value.get("value")
    number = to_decimal(value)
    return money(number) if number is not None else None


def plan_nodes(result: Mapping) -> int:
    """Servers in the deployment."""
    return _count(_first(result, ("tco", "nodes"), ("layout", "nodes"), ("power", "servers"))) or 0


def plan_horizon_years(result: Mapping) -> int:
    years = _count(_dig(result, "tco", "horizon_years"))
    return years if years and years > 0 else 3


def plan_switch_counts(result: Mapping) -> dict[str, int]:
    """``{switch slug: count}``: the counts the TCO priced, else one per switch unit of the network."""
    counts = _dig(result, "tco", "switch_counts")
    if isinstance(counts, Mapping):
        return {str(slug): n for slug, n in ((s, _count(v)) for s, v in counts.items()) if n}
    out: dict[str, int] = {}
    for unit in _dig(result, "network", "switches") or []:
        if isinstance(unit, Mapping) and unit.get("slug"):
            out[str(unit["slug"])] = out.get(str(unit["slug"]), 0) + (_count(unit.get("count")) or 1)
    return out


def plan_switch_names(result: Mapping) -> dict[str, str]:
    """``{switch slug: model name}`` from the network's switch units."""
    names: dict[str, str] = {}
    for unit in _dig(result, "network", "switches") or []:
        if isinstance(unit, Mapping) and unit.get("slug"):
            names.setdefault(str(unit["slug"]), str(unit.get("model") or unit["slug"]))
    return names


def plan_switch_names_zh(result: Mapping) -> dict[str, str]:
    """``{switch slug: Chinese model name}`` (the catalog's name_zh; the name when it has none)."""
    names: dict[str, str] = {}
    for unit in _dig(result, "network", "switches") or []:
        if isinstance(unit, Mapping) and unit.get("slug"):
            names.setdefault(
                str(unit["slug"]), str(unit.get("model_zh") or unit.get("model") or unit["slug"])
            )
    return names


def plan_optics(result: Mapping) -> int:
    return _count(_first(result, ("tco", "optics_count"), ("network", "optics"))) or 0


def plan_racks(result: Mapping) -> int:
    return _count(_first(result, ("tco", "rack_count"), ("racks", "rack_count"), ("racks", "racks"))) or 0


def plan_totals(result: Mapping) -> dict[str, Decimal | None]:
    """The engine's money figures (``None`` where the result has none).

    capex_total = ``tco.capex.total`` (after the engine's quote discount);
    lease_per_month = ``tco.annual.lease_rent`` ÷ 12; tco_buy_total / tco_lease_total =
    ``tco.buy_total`` / ``tco.lease_total`` over the horizon; om_per_year and
    software_per_year from ``tco.annual``; capex_subtotal and capex_discount from
    ``tco.capex``.
    """
    tco = _dig(result, "tco")
    if isinstance(tco, Mapping) and tco.get("valid") is False:
        # A TCO withheld (refused inputs, or a line priced on request) has no totals: never zeros.
        tco = None
    lease_rent = _amount(_dig(tco, "annual", "lease_rent"))
    return {
        "capex_total": _amount(_dig(tco, "capex", "total")),
        "capex_subtotal": _amount(_dig(tco, "capex", "subtotal")),
        "capex_discount": _amount(_dig(tco, "capex", "discount")),
        "lease_per_month": money(lease_rent / 12) if lease_rent else None,
        "tco_buy_total": _amount(_dig(tco, "buy_total")),
        "tco_lease_total": _amount(_dig(tco, "lease_total")),
        "tco_horizon_years": _count(_dig(tco, "horizon_years")),
        "om_per_year": _amount(_dig(tco, "annual", "om")),
        "software_per_year": _amount(_dig(tco, "annual", "software_support")),
    }


# --------------------------------------------------------------------------- prices


def price_items(prices: Any) -> list[dict]:
    """Every price as an item dict, whichever of the two shapes ``prices`` has."""
    if isinstance(prices, list):
        return [dict(i) for i in prices if isinstance(i, Mapping)]
    if not isinstance(prices, Mapping):
        return []
    items = [dict(i) for i in prices.get("items") or [] if isinstance(i, Mapping)]
    meta = {
        "currency": prices.get("currency"),
        "price_list": prices.get("price_list"),
        "effective_date": prices.get("effective_date") or prices.get("on_date"),
    }

    def add(category: str, unit_price: Any, **extra: Any) -> None:
        if unit_price is not None:
            items.append({**meta, "category": category, "unit_price": unit_price, **extra})

    server = prices.get("server")
    if isinstance(server, Mapping):
        sku = str(server.get("sku") or "")
        add(
            BomCategory.SERVER,
            server.get("unit_price"),
            ref=sku,
            sku=sku,
            lease_per_month=server.get("lease_per_month"),
        )
    switches = prices.get("switches")
    if isinstance(switches, Mapping):
        for slug, price in switches.items():
            add(BomCategory.SWITCH, price, ref=str(slug), sku=str(slug))
    for key, category in (
        ("optics_unit_price", BomCategory.OPTICS),
        ("rack_unit_price", BomCategory.RACK),
        ("installation", BomCategory.INSTALL),
        ("software_support_per_year", BomCategory.SOFTWARE),
        ("om_per_year", BomCategory.OM),
    ):
        add(category, prices.get(key))
    media = prices.get("media_unit_prices")
    if isinstance(media, Mapping):
        for code, price in media.items():
            add(BomCategory.OPTICS, price, ref=str(code))
    by_cooling = prices.get("rack_unit_prices_by_cooling")
    if isinstance(by_cooling, Mapping):
        for cooling, price in by_cooling.items():
            add(BomCategory.RACK, price, ref=f"cooling:{cooling}")
    return items


def _optics_price(items: list[dict], code: str) -> dict | None:
    """The optics/cable price of one media code; "" is the 400G-class transceiver (no media code)."""
    for item in items:
        if item.get("category") == BomCategory.OPTICS and str(item.get("ref") or "") == code:
            return item
    return None


def prices_currency(prices: Any, default: str = "CNY") -> str:
    if isinstance(prices, Mapping) and isinstance(prices.get("currency"), str):
        return prices["currency"]
    for item in price_items(prices):
        if isinstance(item.get("currency"), str):
            return item["currency"]
    return default


def _find_price(items: list[dict], category: str, ref: str = "") -> dict | None:
    candidates = [i for i in items if i.get("category") == category]
    if ref:
        for item in candidates:
            if ref in (item.get("ref"), item.get("slug"), item.get("sku")):
                return item
        if len(candidates) > 1 or category == BomCategory.SWITCH:
            return None  # several models priced, none of them this one
    return candidates[0] if candidates else None


def _line(
    category: str,
    quantity: int,
    unit: str,
    currency: str,
    item: Mapping | None,
    *,
    en: str,
    zh: str,
    unit_price: Decimal | None = None,
) -> dict:
    """One BOM line dict; ``unit_price`` overrides the item's price (an engine figure)."""
    item = item or {}
    price = unit_price if unit_price is not None else to_decimal(item.get("unit_price", item.get("price")))
    note = ""
    if not price:
        price = Decimal("0")
        note = PRICE_ON_REQUEST_NOTE
    sku = str(item.get("sku") or "")
    description_en = str(item.get("description_en") or item.get("description") or en)
    description_zh = str(item.get("description_zh") or zh)
    if category in HARDWARE_CATEGORIES and (not sku or sku.startswith(INTERNAL_SKU_PREFIXES)):
        named = sku.startswith(NAMED_SKU_PREFIXES)
        description_en += NAMED_EN if named else GENERIC_EN
        description_zh += NAMED_ZH if named else GENERIC_ZH
    return {
        "category": category,
        "sku": sku,
        "description_en": description_en,
        "description_zh": description_zh,
        "quantity": Decimal(quantity),
        "unit": unit,
        "unit_price": price,
        "unit_cost": to_decimal(item.get("unit_cost")),
        "discount": Decimal("0"),
        "currency": str(item.get("currency") or currency),
        "note": note,
    }


def _positive(value: Any) -> Decimal | None:
    number = to_decimal(value)
    return number if number is not None and number > 0 else None


def bom_lines_from_plan(
    result: Mapping, prices: Any, *, currency: str | None = None, request: Mapping | None = None
) -> list[dict]:
    """Derive the bill of materials from a plan result and the prices it used.

    Returns dicts with category, sku, description_en/zh, quantity, unit,
    unit_price, unit_cost, discount (0), currency and note, in quote order:
    servers, switches by model, optical modules, racks (with PDUs),
    installation, software/support per year and O&M per year over the horizon,
    then the lease alternative (the monthly rent of all nodes × the months of
    the horizon).  A counted item without a price gets a zero price and a
    note, so the gap is visible instead of silently dropped.  ``currency`` is
    the default for prices that name none; ``request`` (the resolved request)
    only supplies display names.
    """
    if not isinstance(result, Mapping):
        return []
    items = price_items(prices)
    currency = prices_currency(prices, default=currency or "CNY")
    years = plan_horizon_years(result)
    engine = plan_totals(result)
    lines: list[dict] = []

    nodes = plan_nodes(result)
    server_item = _find_price(items, BomCategory.SERVER)
    server = _dig(request, "server")
    server_name = str(
        (server.get("name") if isinstance(server, Mapping) else server)
        or (server_item or {}).get("sku")
        or ""
    )
    server_name_zh = str((server.get("name_zh") if isinstance(server, Mapping) else "") or server_name)
    if nodes:
        lines.append(
            _line(BomCategory.SERVER, nodes, "pcs", currency, server_item,
                  en=f"Server {server_name}".strip(), zh=f"服务器 {server_name_zh}".strip())
        )  # fmt: skip
        lines.extend(_nic_card_lines(result, currency))

    names = plan_switch_names(result)
    names_zh = plan_switch_names_zh(result)
    for slug, count in sorted(plan_switch_counts(result).items()):
        name = names.get(slug, slug)
        name_zh = names_zh.get(slug, name)
        lines.append(
            _line(BomCategory.SWITCH, count, "pcs", currency, _find_price(items, BomCategory.SWITCH, slug),
                  en=f"Switch {name}", zh=f"交换机 {name_zh}")
        )  # fmt: skip

    optics = plan_optics(result)
    if optics:
        lines.append(
            _line(BomCategory.OPTICS, optics, "pcs", currency, _optics_price(items, ""),
                  en="400G optical module (QSFP-DD)", zh="400G 光模块（QSFP-DD）")
        )  # fmt: skip
    # Slower transceivers and the cables, by media code (configurator.engine.network.link_media).
    media = _dig(result, "network", "media")
    lengths = _dig(result, "racks", "cable_lengths")
    for code, count in sorted((media or {}).items()) if isinstance(media, Mapping) else ():
        count = _count(count)
        if not count:
            continue
        en, zh = MEDIA.get(code, (code, code))
        by_length = lengths.get(code) if isinstance(lengths, Mapping) else None
        split = {k: _count(v) or 0 for k, v in by_length.items()} if isinstance(by_length, Mapping) else {}
        if split and sum(split.values()) == count:  # cables by length class, adding up to the count
            item = _optics_price(items, code)
            for length, n in split.items():
                if not n or length not in CABLE_LENGTHS:
                    continue
                metres, where_en, where_zh = CABLE_LENGTHS[length]
                line = _line(BomCategory.OPTICS, n, "pcs", currency, item, en=en, zh=zh)
                if line["sku"]:  # one SKU per length, as patch cords are ordered
                    line["sku"] = f"{line['sku']}-{metres}M"
                line["description_en"] = line["description_en"].replace(
                    en, f"{en}, {metres} m ({where_en})", 1
                )
                line["description_zh"] = line["description_zh"].replace(
                    zh, f"{zh}，{metres} m（{where_zh}）", 1
                )
                lines.append(line)
            continue
        lines.append(
            _line(BomCategory.OPTICS, count, "pcs", currency, _optics_price(items, code), en=en, zh=zh)
        )

    racks = plan_racks(result)
    rack = _dig(request, "rack")
    rack_name = str(rack.get("name") or "") if isinstance(rack, Mapping) else ""
    rack_name_zh = str(rack.get("name_zh") or rack_name) if isinstance(rack, Mapping) else ""
    own_cooling = str(rack.get("cooling") or "air") if isinstance(rack, Mapping) else "air"
    # Racks over the air-cooling limit are priced as the containment or liquid-cooled racks they need
    # (racks.RackLayout.cooling_required), as the engine's capex prices them.
    needed: dict[str, int] = {}
    for item in _dig(result, "racks", "racks") or []:
        if isinstance(item, Mapping):
            cooling = str(item.get("cooling_required") or own_cooling)
            needed[cooling] = needed.get(cooling, 0) + 1
    if not needed or sum(needed.values()) != racks:
        needed = {own_cooling: racks} if racks else {}
    rack_item = _find_price(
        [i for i in items if not str(i.get("ref") or "").startswith("cooling:")], BomCategory.RACK
    )
    pdu_en, pdu_zh = _pdu_text(result, request)
    for cooling, count in sorted(needed.items(), key=lambda kv: kv[0] != own_cooling):
        if cooling == own_cooling:
            lines.append(
                _line(BomCategory.RACK, count, "pcs", currency, rack_item,
                      en=f"Rack {rack_name} with PDUs{pdu_en}".replace("  ", " "),
                      zh=f"机柜 {rack_name_zh}（含 PDU）{pdu_zh}".replace("  ", " "))
            )  # fmt: skip
            continue
        en, zh = RACKS_BY_COOLING.get(cooling, (f"Rack ({cooling}) with PDUs", f"机柜（{cooling}，含 PDU）"))
        en, zh = en + pdu_en, zh + pdu_zh
        item = next((i for i in items if i.get("ref") == f"cooling:{cooling}"), None)
        if item is None:  # no price for this cooling: the engine counts it at the requested type's price
            item = rack_item
        lines.append(
            _line(
                BomCategory.RACK,
                count,
                "pcs",
                currency,
                {"unit_price": item.get("unit_price"), "currency": item.get("currency")} if item else None,
                en=en,
                zh=zh,
            )
        )

    # The gateway / load balancer and the checkpoint storage, as the engine's capex counts them.
    gateway_price = _positive(_dig(prices, "gateway_unit_price")) if isinstance(prices, Mapping) else None
    gateways = _count(_dig(prices, "gateways")) if isinstance(prices, Mapping) else None
    if gateway_price and gateways and _amount(_dig(result, "tco", "capex", "gateway")):
        lines.append(
            _line(BomCategory.OTHER, gateways, "pcs", currency, {"unit_price": gateway_price},
                  en="Gateway / load balancer server (active/standby; 1U, 2 × 25GE on the service plane)",
                  zh="网关 / 负载均衡服务器（主备；1U，2 × 25GE 接入业务面）")
        )  # fmt: skip
    storage_price = _positive(_dig(prices, "storage_price_per_tb")) if isinstance(prices, Mapping) else None
    storage_tb = _count(_dig(result, "tco", "capex", "storage_tb"))
    if storage_price and storage_tb:
        lines.append(
            _line(BomCategory.OTHER, storage_tb, "TB", currency, {"unit_price": storage_price},
                  en=STORAGE_EN, zh=STORAGE_ZH)
        )  # fmt: skip

    lines.extend(_licence_lines(result, request, currency, nodes))

    install_item = _find_price(items, BomCategory.INSTALL)
    if install_item and _positive(install_item.get("unit_price")):
        lines.append(
            _line(BomCategory.INSTALL, 1, "lot", currency, install_item,
                  en="Installation and commissioning", zh="安装与调试")
        )  # fmt: skip

    # Annual services: the engine's yearly figure (O&M may be a share of capex).
    for category, engine_key, en, zh in (
        (
            BomCategory.SOFTWARE,
            "software_per_year",
            "Software and support, per year",
            "软件与技术支持（每年）",
        ),
        (BomCategory.OM, "om_per_year", "Operations and maintenance (O&M), per year", "运维服务（每年）"),
    ):
        item = _find_price(items, category)
        per_year = (
            engine[engine_key]
            if engine[engine_key] is not None
            else _positive((item or {}).get("unit_price"))
        )
        if per_year:
            lines.append(_line(category, years, "year", currency, item, en=en, zh=zh, unit_price=per_year))

    lease_item = _find_price(items, BomCategory.LEASE)
    per_node = _positive((lease_item or {}).get("unit_price")) or _positive(
        (server_item or {}).get("lease_per_month")
    )
    if nodes and per_node:
        line = _line(
            BomCategory.LEASE, years * 12, "month", currency, lease_item,
            en=f"Lease of {nodes} × {server_name}, per month", zh=f"租赁 {nodes} 台 {server_name_zh}（月租）",
            unit_price=per_node * nodes,
        )  # fmt: skip
        line["unit_cost"] = None
        lines.append(line)
    return lines


def _pdu_text(result: Mapping, request: Mapping | None) -> tuple[str, str]:
    """The PDUs every rack takes: one three-phase PDU per feed, rated at the rack's feed breaker, with
    the sockets its devices' PSUs need (the largest rack's: configurator.engine.racks)."""
    racks = [r for r in _dig(result, "racks", "racks") or [] if isinstance(r, Mapping)]
    if not racks:
        return "", ""
    amps = max((_count(_dig(r, "feed", "breaker_amps")) or 0) for r in racks)
    c19 = max((_count(r.get("pdu_c19")) or 0) for r in racks)
    c13 = max((_count(r.get("pdu_c13")) or 0) for r in racks)
    volts = _count(_dig(request, "site", "voltage_ll")) or _count(_dig(racks[0], "feed", "voltage_ll")) or 380
    if not amps or not (c19 or c13):
        return "", ""
    sockets_en = " + ".join(f"{n} × {kind}" for n, kind in ((c19, "C19"), (c13, "C13")) if n)
    return (
        f"; A and B PDUs: 3-phase {volts} V {amps} A, at least {sockets_en} each",
        f"；A/B 两路 PDU：三相 {volts} V {amps} A，每路至少 {sockets_en} 插座",
    )


def _nic_card_lines(result: Mapping, currency: str) -> list[dict]:
    """A dual-port 25GE card per node for each plane the plan added (network rows with ``added_nic`` "card")."""
    out = []
    for row in _dig(result, "network", "rows") or []:
        if not isinstance(row, Mapping) or row.get("added_nic") != "card" or not row.get("switches"):
            continue
        nodes = _count(row.get("nodes")) or 0
        per_node = -(-(_count(row.get("cabled_per_node")) or 0) // NIC_CARD_PORTS)
        speed = _count(row.get("port_speed_gbps")) or 0
        plane_en, plane_zh = {"service": ("service", "业务面"), "storage": ("storage", "存储面")}.get(
            str(row.get("role")), (str(row.get("role")), str(row.get("role")))
        )
        if nodes and per_node:
            out.append(
                _line(
                    BomCategory.OTHER, nodes * per_node, "pcs", currency, None,
                    en=f"Dual-port {speed}GE NIC (PCIe, SFP28) for the {plane_en} plane, one per node",
                    zh=f"双口 {speed}GE 网卡（PCIe，SFP28，{plane_zh}），每节点 1 块",
                )
            )  # fmt: skip
    return out


def _licence_lines(result: Mapping, request: Mapping | None, currency: str, nodes: int) -> list[dict]:
    """The operating system and software of the platform (:data:`SOFTWARE_STACKS`), per node or per
    accelerator; the domestic OS where the scenario requires the domestic stack."""
    stack = str(_dig(request, "server", "accelerator", "software_stack") or "")
    scenario = str(_dig(request, "scenario") or "")
    devices = (_count(_dig(result, "layout", "devices_per_node")) or 0) * nodes
    packages = (_count(_dig(request, "server", "packages")) or 0) * nodes
    out = []
    for licence in SOFTWARE_STACKS.get(stack, ()):
        if licence.ref == "os:openeuler" and scenario in DOMESTIC_STACK_SCENARIOS:
            licence = DOMESTIC_OS
        quantity = nodes if licence.per == "node" else (packages or devices)
        if not quantity:
            continue
        line = _line(BomCategory.SOFTWARE, quantity, "pcs", currency, None, en=licence.en, zh=licence.zh)
        line["note"] = NO_FEE_NOTE if licence.fee == "none" else PRICE_ON_REQUEST_NOTE
        out.append(line)
    return out


def apply_line_discounts(lines: Iterable[dict], discounts: Mapping[str, Decimal]) -> list[dict]:
    """Set each line's discount from ``{"category:sku": fraction}`` (or ``{"sku": fraction}``)."""
    out = []
    for line in lines:
        line = dict(line)
        key = f"{line['category']}:{line['sku']}"
        if key in discounts:
            line["discount"] = discounts[key]
        elif line["sku"] and line["sku"] in discounts:
            line["discount"] = discounts[line["sku"]]
        out.append(line)
    return out
