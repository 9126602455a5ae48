"""Table sections: columns declared once over the plan's row dicts, rendered by the page, the PDF and the XLSX.

A :class:`Table` is a section whose rows are not single figures but records of the plan — a fabric of
the network, a rack, a serving group, a feed — each printed as one line of the same columns.  A
:class:`Col` names, once, where its value is in such a record (a dotted path into the row's dict:
``"feed.current_amps"``), its heading in both languages and the unit that formats it (the figure
book's units, through :func:`~configurator.sections.model.format_value`), or the vocabulary table that
words a code (a fabric, a plane, a role).  A table whose lines are named parts of one mapping (the
source document's feed beside the recommended one) declares them as :class:`Item` rows, each with its
label.  A table of figures of the book (cost per million tokens, measured against estimated) declares
:class:`Line` rows, each naming a figure key per column.

Pure Python (no Django); :func:`table` renders one table for one plan in one language.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from configurator.engine import vocabulary

from .model import _number, _pick, format_value

DASH = "—"


@dataclass(frozen=True)
class Col:
    """A column: ``key`` a dotted path into a row's dict; heading in both languages; how the value reads.

    ``unit``: the figure book's unit formatting a number ("kW", "A", "fraction", "kg"); "" prints a
    number bare, with ``decimals``.  ``term``: the vocabulary table a code is a word of ("fabric",
    "plane", "role", "group", "cooling", "scope").  ``bilingual``: the row holds ``key``/``key_zh``
    (or ``key_en``/``key_zh``).  ``of``: a second path printed after ``of_sep`` (U used " / " the rack's U; a switch " × " how many).
    ``note``/``note_unit``: a second value printed small beside the first (a link's speed).
    ``blank_if``: ``(path, value)`` — the cell says "—" where the row's ``path`` is ``value`` (a fabric
    inside a node has no switch).  ``hide_zero``: a 0 or missing value reads "—".  ``flag``: a boolean
    path that marks the cell (a rack over its air-cooling limit).  ``figure``: the figure key of the
    plan's book that explains the cell, a template over the row's fields ("racks.{name}.kw").
    ``parts``: the cell written as words around the row's numbers, one ``(en, zh)`` template per part,
    each ``{path}`` a path into the row; a part whose numbers are all 0 is left out, the others are
    joined by " + " (a PDU's sockets: "6 × C19 + 4 × C13").
    """

    name: str
    key: str
    label_en: str
    label_zh: str
    unit: str = ""
    decimals: int | None = None
    term: str = ""
    bilingual: bool = False
    of: str = ""
    note: str = ""
    note_unit: str = ""
    blank_if: tuple[str, str] | None = None
    hide_zero: bool = False
    flag: str = ""
    figure: str = ""
    text: bool = False  # a word or a description, left-aligned; numbers are right-aligned
    of_sep: str = " / "
    parts: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Item:
    """A named line of a table over one mapping: ``key`` the part of it the line prints (``seed_feed``)."""

    key: str
    label_en: str
    label_zh: str
    total: bool = False
    figure: str = ""  # the figure that explains the line


@dataclass(frozen=True)
class Line:
    """A line of a table of figures: one figure key per column (``None``: "—"), its label in both languages.

    Labels may name ``{placeholders}`` the caller fills (``{n}`` concurrent requests).  ``span``: one
    figure across all the columns.  ``note_en``/``note_zh``: a qualifier printed small after the label.
    """

    name: str
    label_en: str
    label_zh: str
    figures: tuple[str | None, ...] = ()
    span: str | None = None
    note_en: str = ""
    note_zh: str = ""
    total: bool = False
    decimals: int | None = None
    scale: int = 1  # the value as its label's unit reads it (seconds × 1000: ms)


@dataclass(frozen=True)
class Total:
    """The total line of a list table: its label and, per column name, the figure key it prints.

    ``classes``: the column whose total is counted by class where the caller gives the counts
    (``table(..., classes=...)``): the network's optics, "512 × 400G + 152 × 25G", never one number
    under rows of different transceivers.
    """

    label_en: str
    label_zh: str
    figures: tuple[tuple[str, str], ...]
    classes: str = ""


@dataclass(frozen=True)
class Table:
    name: str
    title_en: str
    title_zh: str
    columns: tuple[Col, ...]
    items: tuple[Item, ...] = ()
    lines: tuple[Line, ...] = ()
    item_label_en: str = ""  # the heading of the items' label column ("Method")
    item_label_zh: str = ""
    total: Total | None = None

    def column(self, name: str) -> Col:
        return next(c for c in self.columns if c.name == name)


# ----------------------------------------------------------------------------- rendering


def _path(row: Any, path: str) -> Any:
    value = row
    for part in path.split("."):
        if isinstance(value, Mapping):
            value = value.get(part)
        else:
            value = getattr(value, part, None)
        if value is None:
            return None
    return value


#: The basis of a cost (engine/economics.py ``basis``), as a label names it.
BASIS_WORDS = {"buy": ("buy", "采购"), "lease": ("lease", "租赁")}

#: Where a fabric row serves, in the proposal's words (a group code joined by "+" is the group's name).
SCOPE_WORDS = {"all": ("all nodes", "全部节点"), "in-node": ("inside each node", "节点内")}


def parallel_text(parallel: Any) -> str:
    """A group's parallel layout ("TP16 · DP8 · PP2 · EP128"); pipeline and expert parallelism only
    where they are used."""
    if not isinstance(parallel, Mapping):
        return ""
    parts = [f"TP{parallel.get('tp')}", f"DP{parallel.get('dp')}"]
    if (parallel.get("pp") or 1) > 1:
        parts.append(f"PP{parallel.get('pp')}")
    if parallel.get("expert_parallel"):
        parts.append(f"EP{parallel.get('ep')}")
    return " · ".join(parts)


def _term(kind: str, code: Any, lang: str) -> str:
    if kind == "fabric":
        return vocabulary.fabric_label(code, lang)
    if kind == "plane":
        return vocabulary.plane_label(code, lang) if code in vocabulary.PLANES else ""
    if kind == "role":
        return vocabulary.role_label(code, lang)
    if kind == "group":
        return vocabulary.group_label(code, lang)
    if kind == "cooling":
        return vocabulary.cooling_label(code, lang)
    if kind == "parallel":  # a group's parallel layout, as the page writes it: TP16 · DP8 · EP128
        return parallel_text(code)
    if kind == "scope":
        if code in SCOPE_WORDS:
            return _pick(*SCOPE_WORDS[code], lang)
        return " + ".join(vocabulary.group_label(part, lang) for part in code.split("+"))
    raise KeyError(kind)


def _bilingual(row: Any, key: str, lang: str) -> str:
    en = _path(row, key) or _path(row, f"{key}_en") or ""
    zh = _path(row, f"{key}_zh") or ""
    return str(_pick(str(en), str(zh), lang))


def _fill(template: str, row: Any) -> str:
    if not template:
        return ""
    fields = row if isinstance(row, Mapping) else {}
    try:
        return template.format(**{k: v for k, v in fields.items() if isinstance(v, str | int)})
    except (KeyError, IndexError):
        return ""


_PLACEHOLDER = re.compile(r"\{([\w.]+)\}")


def _parts(col: Col, row: Any, lang: str) -> str:
    """The cell's words around the row's numbers (``Col.parts``), parts whose numbers are all 0 left out."""
    out = []
    for en, zh in col.parts:
        template = _pick(en, zh, lang)
        values = [_path(row, path) for path in _PLACEHOLDER.findall(template)]
        if values and not any(_number(v) for v in values):
            continue
        out.append(
            _PLACEHOLDER.sub(lambda m: format_value(_path(row, m.group(1)), "", lang, decimals=0), template)
        )
    return " + ".join(out)


def cell(col: Col, row: Any, lang: str, currency: str = "CNY") -> dict:
    """One cell of ``col`` for ``row``: ``text``, ``value``, ``num`` (right-aligned), ``note``, ``flag``,
    ``figure`` (the key that explains it, "" when none)."""
    out = {
        "name": col.name,
        "value": None,
        "text": DASH,
        "num": not (col.text or col.term or col.bilingual),
        "note": "",
        "flag": bool(col.flag and _path(row, col.flag)),
        "figure": _fill(col.figure, row),
    }
    if col.blank_if and str(_path(row, col.blank_if[0])) == col.blank_if[1]:
        return out
    if col.bilingual:
        out["text"] = _bilingual(row, col.key, lang) or DASH
        if col.of:
            out["text"] = f"{out['text']}{col.of_sep}{_path(row, col.of)}"
        return out
    if col.parts:
        out["text"] = _parts(col, row, lang) or DASH
        return out
    value = _path(row, col.key)
    out["value"] = value
    if col.term:
        out["text"] = _term(col.term, value if col.term == "parallel" else str(value), lang) if value else ""
    elif value is None or (col.hide_zero and not _number(value)):
        out["text"] = DASH
    elif col.unit or _number(value) is not None:
        out["text"] = format_value(value, col.unit, lang, currency=currency, decimals=col.decimals)
    else:
        out["text"] = str(value)
    if col.of:
        out["text"] = f"{out['text']}{col.of_sep}{_path(row, col.of)}"
    if col.note:
        note = _path(row, col.note)
        out["note"] = f"{note}{col.note_unit}" if note else ""
    return out


def _columns(section: Table, names: Iterable[str] | None) -> list[Col]:
    if names is None:
        return list(section.columns)
    if isinstance(names, str):
        names = names.split()
    return [section.column(name) for name in names]


def _figure_cell(key: str | None, figures: Mapping[str, Any], lang: str, currency: str, decimals) -> dict:
    figure = figures.get(key) if key else None
    if not isinstance(figure, Mapping) or figure.get("value") is None:
        return {"name": "", "value": None, "text": DASH, "num": True, "note": "", "flag": False, "figure": ""}
    unit = str(figure.get("unit") or "")
    return {
        "name": key,
        "value": figure["value"],
        "text": format_value(figure["value"], unit, lang, currency=currency, decimals=decimals),
        "num": True,
        "note": "",
        "flag": False,
        "figure": key,
    }


def _line_rows(
    section: Table,
    figures: Mapping[str, Any],
    lang: str,
    currency: str,
    only: Sequence[str] | None,
    fill: Mapping[str, Any],
) -> list[dict]:
    out = []
    for line in section.lines:
        if only is not None and line.name not in only:
            continue
        keys = tuple(
            k.format(**fill) if k and "{" in k else k for k in ((line.span,) if line.span else line.figures)
        )
        if not any(k and isinstance(figures.get(k), Mapping) for k in keys):
            continue
        cells = [_figure_cell(k, figures, lang, currency, line.decimals) for k in keys]
        if line.scale != 1:
            for c in cells:
                n = _number(c["value"])
                c["value"] = n * line.scale if n is not None else None
        out.append(
            {
                "key": line.name,
                "label": _pick(line.label_en, line.label_zh, lang).format(**fill),
                "note": _pick(line.note_en, line.note_zh, lang).format(**fill) if line.note_en else "",
                "cells": cells,
                "span": bool(line.span),
                "total": line.total,
                "figures": [c["figure"] for c in cells if c["figure"]],
            }
        )
    return out


def table(
    section: Table | str,
    data: Any,
    lang: str,
    *,
    currency: str = "CNY",
    columns: Iterable[str] | str | None = None,
    items: Sequence[str] | str | None = None,
    figures: Mapping[str, Any] | None = None,
    keys: Mapping[str, Any] | None = None,
    classes: Mapping[str, Any] | None = None,
) -> dict:
    """``section`` rendered for one plan in ``lang``: ``title``, ``columns`` (``name``, ``label``, ``num``),
    ``rows`` (``label`` for an item or a line, ``cells``, ``total``, ``figures``: the keys that explain
    the row) and ``total`` (the total line, or None).

    ``data``: the plan's list of row dicts (a list table) or the mapping whose parts the items name;
    for a table of :class:`Line` rows, the figure book (``figures``).  ``columns``/``items``: the names a
    view prints, in its order (all when None).  ``keys`` fill placeholders of the lines' labels.
    ``classes``: the counts by class code the total line prints in its ``classes`` column
    (:func:`optics_classes`); that cell then has ``parts``, one "count × class" each.
    """
    if isinstance(section, str):
        section = TABLES[section]
    if isinstance(items, str):
        items = items.split()
    keys = dict(keys or {})
    if "basis" in keys:  # the economics basis ("buy"/"lease"): its word in the labels, its code in the keys
        keys["basis_key"] = str(keys["basis"] or "buy")
        keys["basis"] = _pick(*BASIS_WORDS.get(keys["basis_key"], BASIS_WORDS["buy"]), lang)
    cols = _columns(section, columns)
    heads = [
        {
            "name": c.name,
            "label": _pick(c.label_en, c.label_zh, lang),
            "num": not (c.text or c.term or c.bilingual),
        }
        for c in cols
    ]
    if section.item_label_en:
        heads.insert(
            0, {"name": "", "label": _pick(section.item_label_en, section.item_label_zh, lang), "num": False}
        )
    rows: list[dict] = []
    if section.lines:
        rows = _line_rows(section, figures or data or {}, lang, currency, items, keys)
    elif section.items:
        chosen = (
            section.items if items is None else [i for name in items for i in section.items if i.key == name]
        )
        for item in chosen:
            row = _path(data, item.key) if data is not None else None
            if not row:
                continue
            cells = [cell(c, row, lang, currency) for c in cols]
            rows.append(
                {
                    "key": item.key,
                    "label": _pick(item.label_en, item.label_zh, lang),
                    "cells": cells,
                    "total": item.total,
                    "figures": [item.figure] if item.figure else [c["figure"] for c in cells if c["figure"]],
                }
            )
    else:
        for row in data or ():
            cells = [cell(c, row, lang, currency) for c in cols]
            rows.append(
                {
                    "key": "",
                    "label": "",
                    "cells": cells,
                    "total": False,
                    "figures": [c["figure"] for c in cells if c["figure"]],
                }
            )
    total: dict[str, Any] | None = None
    if section.total is not None and figures is not None:
        by_name = dict(section.total.figures)
        total = {
            "label": _pick(section.total.label_en, section.total.label_zh, lang),
            "cells": [
                {**_figure_cell(by_name.get(c.name), figures, lang, currency, c.decimals), "name": c.name}
                if c.name in by_name
                else {
                    "name": c.name,
                    "value": None,
                    "text": "",
                    "num": False,
                    "note": "",
                    "flag": False,
                    "figure": "",
                }
                for c in cols
            ],
        }
    if total is not None and section.total is not None and section.total.classes and classes:
        parts = [
            f"{format_value(n, '', lang)} × {code.split('-', 1)[0].upper()}" for code, n in classes.items()
        ]
        total_cells: list[dict] = total["cells"]
        for c in total_cells:
            if c["name"] == section.total.classes:
                c.update(parts=parts, text=" + ".join(parts))
    return {
        "name": section.name,
        "title": _pick(section.title_en, section.title_zh, lang),
        "columns": heads,
        "rows": rows,
        "total": total,
    }


def optics_classes(network: Mapping[str, Any] | None) -> dict[str, int]:
    """The network's optical transceivers by class, as the engine counts them: the 400G class
    (``network.optics``) and the slower ones by media code (``network.media``); classes of none left out."""
    network = network or {}
    counts = [("400g-optics", network.get("optics") or 0), *sorted((network.get("media") or {}).items())]
    return {code: int(n) for code, n in counts if code.endswith("-optics") and n}


def label(section: Table | str, name: str, lang: str) -> str:
    """The declared label of a column, an item or a line of ``section`` (a heading a view prints alone)."""
    if isinstance(section, str):
        section = TABLES[section]
    parts: list[Col | Item | Line] = [*section.columns, *section.items, *section.lines]
    for part in parts:
        if getattr(part, "name", getattr(part, "key", None)) == name:
            return _pick(part.label_en, part.label_zh, lang)
    if name == "title":
        return _pick(section.title_en, section.title_zh, lang)
    if name == "total" and section.total is not None:
        return _pick(section.total.label_en, section.total.label_zh, lang)
    raise KeyError(f"{section.name}.{name}")


# ----------------------------------------------------------------------------- the tables


def _feed_columns(prefix: str = "") -> tuple[Col, ...]:
    """The columns of a circuit (a feed's dict, under ``prefix`` in the row): one declaration for the
    feeds table, the per-rack and the per-group tables."""
    return (
        Col("load", f"{prefix}load_kw", "Load", "负载", unit="kW"),
        Col("power_factor", f"{prefix}power_factor", "PF", "PF"),
        Col("derating", f"{prefix}derating", "Derating", "降额系数"),
        Col("current", f"{prefix}current_amps", "Current", "电流", unit="A"),
        Col("current_per_feed", f"{prefix}current_amps", "Current per feed", "每路电流", unit="A"),
        Col("required", f"{prefix}required_amps", "Required", "所需额定电流", unit="A"),
        Col("breaker", f"{prefix}breaker_amps", "Breaker", "断路器", unit="A", decimals=0),
        Col("utilisation", f"{prefix}utilisation", "Breaker loading", "断路器负载率", unit="fraction"),
        Col("circuit", f"{prefix}description", "Circuit per feed", "每路回路", bilingual=True),
    )


# The network's fabrics, one line each (engine/network.py NetworkRow); a fabric inside a node has no
# switch, port or optic of its own.
_IN_NODE = ("scope", "in-node")
_NET_FIGURE = "network.{role}.{fabric}.{scope}"
NETWORK = Table(
    "network",
    "Network",
    "网络",
    (
        Col("fabric", "fabric", "Fabric", "网络", term="fabric", note="link_gbps", note_unit="G"),
        Col("plane", "role", "Plane", "网络平面", term="plane"),
        Col("scope", "scope", "Scope", "范围", term="scope"),
        Col(
            "ports_needed",
            "ports_needed",
            "Ports needed",
            "所需端口",
            blank_if=_IN_NODE,
            figure=_NET_FIGURE + ".ports_needed",
        ),
        Col("switch", "switch_model", "Switch", "交换机", bilingual=True, blank_if=_IN_NODE),
        Col(
            "switches", "switches", "Switches", "交换机", blank_if=_IN_NODE, figure=_NET_FIGURE + ".switches"
        ),
        Col("optics", "optics", "Optics", "光模块", blank_if=_IN_NODE, figure=_NET_FIGURE + ".optics"),
        Col("cables", "cables", "Cables", "线缆"),
        Col("note", "note", "Note", "备注", bilingual=True),
    ),
    total=Total(
        "Total",
        "合计",
        (("switches", "network.switches.count"), ("optics", "network.optics"), ("cables", "network.cables")),
        classes="optics",
    ),
)

# The switched planes of the network with their ports (proposals/delivery.py ``network_planes``: the
# engine's fabric rows that have switches): ports for the servers, for other devices and uplinks, spare
# ports, ports used of the switches' capacity.
NETWORK_PLANES = Table(
    "network_planes",
    "Network planes, ports and headroom",
    "网络平面、端口与余量",
    (
        Col("plane", "role", "Plane", "网络平面", term="plane", note="attached_note"),
        Col("link", "link_gbps", "Link", "链路", parts=(("{link_gbps}G", "{link_gbps}G"),)),
        Col("switch", "switch_model", "Switch", "交换机", bilingual=True, of="switches", of_sep=" × "),
        Col("server_ports", "ports_needed", "Server ports", "服务器端口"),
        Col("other_devices", "attached_ports", "Other devices", "其他设备"),
        Col("uplinks", "external_uplinks", "Uplinks", "上联"),
        Col("spare", "spare_ports", "Spare", "预留"),
        Col("used", "ports_used", "Ports used", "已用端口"),
        Col("capacity", "port_capacity", "Ports in all", "端口总数"),
    ),
)

# The feeds and their breakers (engine/power.py): the source document's method beside the recommended
# one, each circuit sized to carry the whole load alone.
FEEDS = Table(
    "feeds",
    "Feeds and breakers",
    "供电回路与断路器",
    _feed_columns(),
    items=(
        Item(
            "seed_feed",
            "Source document (PF 1, no derating)",
            "来源文档算法（功率因数 1，不降额）",
            figure="power.feed.seed.current_amps",
        ),
        Item(
            "recommended_feed",
            "Recommended (site PF, continuous-load derating)",
            "推荐算法（现场功率因数，持续负载降额）",
            total=True,
            figure="power.feed.recommended.breaker_amps",
        ),
    ),
    item_label_en="Method",
    item_label_zh="算法",
)

# One line per rack (engine/racks.py RackLoad): space, load, cooling, its A/B feeds, heat, PDUs,
# weight and floor loading; each view prints the columns it needs.
_RACK = "racks.{name}"
PER_RACK = Table(
    "per_rack",
    "Per rack",
    "按机柜",
    (
        Col("rack", "name", "Rack", "机柜", text=True),
        Col("units_used", "units_used", "U used", "已用 U 位", of="rack_units", figure=_RACK + ".units_used"),
        Col("servers", "servers", "Servers", "服务器"),
        Col("kw", "kw", "Max kW", "最大功耗 kW", decimals=1, flag="exceeds_cooling", figure=_RACK + ".kw"),
        Col("design_kw", "design_kw", "Design kW", "设计功耗 kW", decimals=1),
        Col(
            "cooling_limit",
            "cooling_limit_kw",
            "Air-cooling limit",
            "风冷上限",
            unit="kW",
            decimals=0,
            hide_zero=True,
        ),
        Col("cooling", "cooling_required", "Rack cooling", "机柜散热方式", term="cooling"),
        Col("feeds", "feed.description", "A/B feeds", "A/B 路供电", bilingual=True),
        Col("heat", "heat_btu_h", "Heat load (BTU/h)", "散热负荷（BTU/h）", decimals=0),
        Col(
            "pdu",
            "feed.breaker_amps",
            "PDU per feed",
            "每路 PDU",
            parts=(
                (
                    "3-phase {feed.voltage_ll} V, {feed.breaker_amps} A",
                    "三相 {feed.voltage_ll} V，{feed.breaker_amps} A",
                ),
            ),
            text=True,
        ),
        Col(
            "sockets",
            "pdu_c19",
            "Sockets per feed",
            "每路插座",
            parts=(("{pdu_c19} × C19", "{pdu_c19} × C19"), ("{pdu_c13} × C13", "{pdu_c13} × C13")),
            text=True,
        ),
        Col("weight", "weight_kg", "Weight", "重量", unit="kg", hide_zero=True, figure=_RACK + ".weight_kg"),
        Col(
            "floor_load",
            "floor_load_kg_m2",
            "Floor loading",
            "地面承重负荷",
            unit="kg/m²",
            hide_zero=True,
            figure=_RACK + ".floor_load_kg_m2",
        ),
        *_feed_columns("feed."),
    ),
)

_GROUP = Col("group", "role", "Group", "分组", term="role")
_NODES = Col("nodes", "nodes", "Nodes", "节点数")

# The serving groups of the layout (engine/layout.py): nodes, devices, parallelism, experts per rank.
GROUPS = Table(
    "groups",
    "Architecture",
    "部署架构",
    (
        Col("group", "name", "Group", "分组", term="group"),
        Col("role", "role", "Role", "角色", term="role"),
        _NODES,
        Col("devices", "devices", "Devices", "加速卡", figure="layout.{name}.devices"),
        Col("parallelism", "parallel", "Parallelism", "并行方式", term="parallel"),
        Col(
            "experts",
            "experts_per_rank",
            "Experts per rank",
            "每卡专家数",
            hide_zero=True,
            figure="layout.{name}.experts_per_rank",
        ),
    ),
)

# Power per serving group (engine/power.py groups), where a deployment has more than one.
POWER_GROUPS = Table(
    "power_groups",
    "Per serving group",
    "按服务集群",
    (
        _GROUP,
        _NODES,
        Col("it_kw", "it_kw", "IT load", "IT 负载", unit="kW"),
        *_feed_columns("feed."),
    ),
)

# Cost per million tokens (engine/tco/tokens.py, economics.py): the self-hosted cluster bought at the
# stated load and at the design capacity, leased, and the public API, input and output apart.
COST_PER_TOKEN = Table(
    "cost_per_token",
    "Cost per million tokens",
    "每百万 Token 成本",
    (
        Col("input", "input", "Input", "输入"),
        Col("output", "output", "Output", "输出"),
    ),
    lines=(
        Line(
            "buy",
            "Self-hosted, buy",
            "私有化部署·采购",
            ("tco.tokens.buy.cost_per_m_input", "tco.tokens.buy.cost_per_m_output"),
            note_en="at the stated load of {stated} concurrent requests",
            note_zh="报价负载 {stated} 路并发时",
        ),
        Line(
            "design",
            "Self-hosted, {basis}",
            "私有化部署·{basis}",
            ("economics.design.cost_per_m_input", "economics.design.cost_per_m_output"),
            note_en="at the design capacity of {design} concurrent requests",
            note_zh="设计容量 {design} 路并发时",
        ),
        Line(
            "lease",
            "Self-hosted, lease",
            "私有化部署·租赁",
            ("tco.tokens.lease.cost_per_m_input", "tco.tokens.lease.cost_per_m_output"),
        ),
        Line(
            "api",
            "Public API",
            "公有 API",
            ("tco.tokens.api_price_input_per_m", "tco.tokens.api_price_output_per_m"),
            note_en="at {rate} {unit}/USD",
            note_zh="按 {rate} {unit}/美元",
        ),
        Line(
            "saving",
            "Saving against the API for the same tokens (buy)",
            "相同 Token 量下相对官方 API 的节省（采购）",
            span="tco.tokens.buy.saving_vs_api",
            total=True,
        ),
    ),
)

# A load test of the delivered cluster against the estimate (engine/tco/measured.py): the measured
# figures beside the plan's, each a figure key (``measured.*`` is the measured book the engine builds).
MEASURED = Table(
    "measured",
    "Measured on the delivered cluster",
    "交付集群实测",
    (
        Col("estimate", "estimate", "Estimate", "估算"),
        Col("measured", "measured", "Measured", "实测"),
    ),
    lines=(
        Line(
            "output_tokens_per_s",
            "Output throughput (tokens/s)",
            "输出吞吐（每秒 Token 数）",
            ("performance.output_tokens_per_s", "measured.output_tokens_per_s"),
        ),
        Line(
            "ttft_s",
            "Time to first token, mean (s)",
            "首字延迟均值（秒）",
            ("performance.ttft_s", "measured.ttft_s"),
        ),
        Line(
            "tpot_ms",
            "Time per output token, mean (ms)",
            "每字延迟均值（毫秒）",
            ("performance.tpot_s", "measured.tpot_s"),
            scale=1000,
        ),
        Line(
            "cost_per_m_output",
            "Cost per million output tokens ({basis})",
            "每百万输出 Token 成本（{basis}）",
            ("tco.tokens.{basis_key}.cost_per_m_output", "measured.cost_per_m_output"),
        ),
        Line(
            "cost_per_m_input",
            "Cost per million input tokens ({basis})",
            "每百万输入 Token 成本（{basis}）",
            ("tco.tokens.{basis_key}.cost_per_m_input", "measured.cost_per_m_input"),
        ),
        Line(
            "ttft_p90_s",
            "Time to first token, P90 (s)",
            "首字延迟 P90（秒）",
            ("performance.ttft_p90_s", "measured.ttft_p90_s"),
        ),
        Line(
            "ttft_p99_s", "Time to first token, P99 (s)", "首字延迟 P99（秒）", (None, "measured.ttft_p99_s")
        ),
    ),
)

TABLES: dict[str, Table] = {
    t.name: t
    for t in (NETWORK, NETWORK_PLANES, FEEDS, PER_RACK, GROUPS, POWER_GROUPS, COST_PER_TOKEN, MEASURED)
}
