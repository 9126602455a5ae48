"""Deployment topology: gateway, serving groups and their nodes, storage / KV pool.

One picture covers the topologies of docs/domain.md §4: a single cluster, two
clusters as primary/standby (dashed failover, shared storage for weight
sync) or as tenants, and xPyD prefill/decode disaggregation (P → D KV
transfer over Mooncake, a MetaService + Memcache KV pool, a P/D proxy in
front).  Node 0 of every group is its master (the node without
``--headless``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from configurator.engine.vocabulary import is_zh

from ..engine.names import node_name
from ..engine.vocabulary import drawing_text as t
from . import svg
from .svg import Canvas

PAD = 16
NODE_W, NODE_H, NODE_GAP = 96, 46, 8
GROUP_PAD = 12
GROUP_HEAD = 54  # name + parallel layout
GROUP_FOOT = 28
MIN_GROUP_W = 250
GATEWAY_W, GATEWAY_H = 300, 40
MAX_NODE_BOXES = 16  # beyond this a group shows 15 nodes and "+N more"

_ROLE_KEYS = {
    "serve": "role_serve",
    "standby": "role_standby",
    "tenant": "role_tenant",
    "prefill": "role_prefill",
    "decode": "role_decode",
    "cluster": "role_cluster",
}
MASTER_FILL = "#e6edf4"
STANDBY_STROKE = "#7d8894"


def topology_svg(
    groups: Sequence[Mapping[str, Any]],
    lang: str,
    gateway: bool = True,
    storage: bool = False,
    kv_transfer: bool = False,
    title: str = "",
) -> str:
    """The deployment as boxes: gateway on top, one box per serving group with its nodes.

    ``groups`` is a sequence of mappings with keys ``name`` (str), ``role``
    (``serve`` | ``standby`` | ``tenant`` | ``prefill`` | ``decode`` |
    ``cluster``), ``nodes`` (int), ``label`` (str, e.g. "DP4 / TP16 / EP64"),
    ``devices`` (int, logical devices in the whole group) and optionally
    ``first_node`` (int, index of the group's first node in the deployment,
    default 0) and ``node_name`` (str, e.g. "Atlas 800 A3").

    ``gateway`` draws the load balancer (a P/D proxy when a group is prefill
    or decode) with an arrow to each group; a standby group's arrow is dashed
    and labelled "failover ≤ 30 s".  ``storage`` draws the shared storage that
    keeps weights in sync; ``kv_transfer`` draws the P → D KV cache arrow and
    the KV pool.  Legible from 1 node up to 16 per group (more are summarised).
    """
    items = [_normalise(g) for g in groups]
    # Prefill groups sit left of decode groups so the KV arrow runs left to right.
    if kv_transfer:
        order = {"prefill": 0, "decode": 2}
        items.sort(key=lambda g: order.get(g["role"], 1))
    heading = title or _default_title(items, lang)

    cols = [_columns(g["nodes"], len(items)) for g in items]
    rows = [math.ceil(min(g["nodes"], MAX_NODE_BOXES) / c) for g, c in zip(items, cols, strict=True)]
    widths = [
        max(MIN_GROUP_W, c * NODE_W + (c - 1) * NODE_GAP + 2 * GROUP_PAD, _head_width(g, lang))
        for g, c in zip(items, cols, strict=True)
    ]
    max_rows = max(rows, default=1)
    group_h = GROUP_HEAD + max_rows * NODE_H + (max_rows - 1) * NODE_GAP + GROUP_FOOT
    kv_label_w = max(svg.text_width(p, svg.SMALL) for p in _kv_label_lines(lang)) + 24
    gap = max(70, kv_label_w) if kv_transfer else 56
    content_w = sum(widths) + gap * max(len(items) - 1, 0)
    width = max(600, content_w + 2 * PAD)

    y = PAD
    title_y = None
    if title:
        title_y = y + 14
        y += 26
    gateway_y = y if gateway else None
    groups_y = y + (GATEWAY_H + 66 if gateway else 0)
    bottom_box = storage or (kv_transfer and _has_pd(items))
    height = groups_y + group_h + (96 if bottom_box else 0) + PAD
    c = Canvas(width, height, title=heading)
    if title_y is not None:
        c.text(PAD, title_y, svg.fit_text(title, width - 2 * PAD, 15, True), size=15, bold=True)
    if not items:
        svg.empty_message(c, t("no_data", lang))
        return c.to_svg()

    # Group positions, centred.
    x = (width - content_w) / 2
    boxes = []
    for w in widths:
        boxes.append((x, groups_y, w, group_h))
        x += w + gap

    if gateway and gateway_y is not None:
        _draw_gateway(c, items, boxes, gateway_y, width, lang)
    for g, box, ncols in zip(items, boxes, cols, strict=True):
        _draw_group(c, g, box, ncols, lang)
    if kv_transfer and _has_pd(items):
        _draw_kv_transfer(c, items, boxes, lang)
    elif storage:
        _draw_storage(c, boxes, lang)
    return c.to_svg()


# Group names the layout engine uses, in the customer's words.
_GROUP_NAMES = {
    "cluster": ("Cluster", "集群"),
    "cluster-a": ("Cluster A", "集群 A"),
    "cluster-b": ("Cluster B", "集群 B"),
    "prefill": ("Prefill", "预填充"),
    "decode": ("Decode", "解码"),
}


def topology_groups(layout_groups: Sequence[object], lang: str, node_name: str = "") -> list[dict]:
    """``topology_svg`` groups from the layout engine's ``GroupLayout`` objects.

    Read by attribute name (``name``, ``role``, ``nodes``, ``first_node``,
    ``devices``, ``parallel.tp/dp/pp/ep``) so this package does not depend on
    the engine.  The label reads "DP4 / TP16 / EP64" (PP only when > 1, EP
    only when experts are spread); known group names are translated.
    """
    zh = is_zh(lang.lower())
    groups = []
    for g in layout_groups:
        parallel = getattr(g, "parallel", None)
        parts = []
        if parallel is not None:
            parts = [f"DP{parallel.dp}", f"TP{parallel.tp}"]
            if getattr(parallel, "pp", 1) > 1:
                parts.append(f"PP{parallel.pp}")
            if getattr(parallel, "ep", 1) > 1:
                parts.append(f"EP{parallel.ep}")
        name = str(getattr(g, "name", ""))
        names = _GROUP_NAMES.get(name)
        groups.append(
            {
                "name": (names[1] if zh else names[0]) if names else name,
                "role": getattr(g, "role", "cluster"),
                "nodes": getattr(g, "nodes", 0),
                "label": " / ".join(parts),
                "devices": getattr(g, "devices", 0),
                "first_node": getattr(g, "first_node", 0),
                "node_name": node_name,
            }
        )
    return groups


# --------------------------------------------------------------------------- pieces


def _normalise(g: Mapping[str, Any]) -> dict:
    nodes = max(0, int(g.get("nodes", 0) or 0))
    role = str(g.get("role", "cluster") or "cluster").lower()
    return {
        "name": str(g.get("name", "") or ""),
        "role": role if role in _ROLE_KEYS else "cluster",
        "nodes": nodes,
        "label": str(g.get("label", "") or ""),
        "devices": int(g.get("devices", 0) or 0),
        "first_node": int(g.get("first_node", 0) or 0),
        "node_name": str(g.get("node_name", "") or ""),
    }


def _columns(nodes: int, group_count: int) -> int:
    """Node boxes per row: four in a single group (8 nodes → 4 × 2), two when groups
    stand side by side, so the drawing keeps its natural width (≤ 720 px on the
    page) and its labels their size at every cluster size."""
    per_row = 4 if group_count <= 1 else 2
    return max(1, min(nodes, per_row))


def _has_pd(items: list[dict]) -> bool:
    roles = {g["role"] for g in items}
    return "prefill" in roles and "decode" in roles


def _default_title(items: list[dict], lang: str) -> str:
    return (
        " + ".join(f"{g['name'] or t(_ROLE_KEYS[g['role']], lang)} ({g['nodes']})" for g in items)
        or "topology"
    )


def _role_text(g: dict, lang: str) -> str:
    return t(_ROLE_KEYS[g["role"]], lang)


def _head_width(g: dict, lang: str) -> float:
    badge = svg.text_width(_role_text(g, lang), svg.SMALL) + 16
    # The name may be shortened, but a short name and the badge should fit side by side.
    name = min(svg.text_width(g["name"], svg.FONT_SIZE + 1, True), 200)
    foot = svg.text_width(_footer(g, lang), svg.SMALL + 1)
    return 2 * GROUP_PAD + max(name + 12 + badge, foot)


def _kv_label_lines(lang: str) -> list[str]:
    text = t("kv_transfer", lang)
    head, _, tail = text.partition(" (")
    return [head, f"({tail}"] if tail else [text]


def _draw_gateway(c: Canvas, items: list[dict], boxes: list, y: float, width: float, lang: str) -> None:
    is_pd = any(g["role"] in ("prefill", "decode") for g in items)
    label = t("pd_proxy" if is_pd else "gateway", lang)
    gw = max(GATEWAY_W, svg.text_width(label, svg.FONT_SIZE, True) + 32)
    gx = (width - gw) / 2
    c.rect(gx, y, gw, GATEWAY_H, rx=6, fill=svg.PANEL, stroke=svg.TEXT, stroke_width=1.2)
    c.text_mid(width / 2, y + GATEWAY_H / 2, label, anchor="middle", bold=True)

    n = len(boxes)
    for i, (g, (bx, by, bw, _)) in enumerate(zip(items, boxes, strict=True)):
        # Spread the arrow starts along the gateway's bottom edge.
        sx = gx + gw * (i + 1) / (n + 1)
        ex = bx + bw / 2
        sy, ey = y + GATEWAY_H, by - 2
        standby = g["role"] == "standby"
        c.arrow(sx, sy, ex, ey, color=STANDBY_STROKE if standby else svg.ACCENT, dashed=standby)
        if standby:
            # Outside the fan of arrows, so it never sits on a line.
            c.label_beside_line(
                sx, sy, ex, ey, t("failover", lang), toward_x=2 * ex - sx, fill=svg.TEXT, bold=True
            )


def _draw_group(c: Canvas, g: dict, box: tuple, ncols: int, lang: str) -> None:
    x, y, w, h = box
    standby = g["role"] == "standby"
    c.rect(
        x,
        y,
        w,
        h,
        rx=8,
        fill="#fbfcfd",
        stroke=STANDBY_STROKE if standby else svg.ACCENT,
        stroke_width=1.5,
        stroke_dasharray="7 4" if standby else None,
    )
    # Header: name on the left, role badge on the right, parallel layout below.
    role = _role_text(g, lang)
    badge_w = svg.text_width(role, svg.SMALL) + 16
    c.rect(
        x + w - GROUP_PAD - badge_w, y + 9, badge_w, 20, rx=10, fill=STANDBY_STROKE if standby else svg.ACCENT
    )
    c.text_mid(x + w - GROUP_PAD - badge_w / 2, y + 19, role, size=svg.SMALL, anchor="middle", fill=svg.PAPER)
    name_room = w - 2 * GROUP_PAD - badge_w - 10
    c.text(
        x + GROUP_PAD,
        y + 24,
        svg.fit_text(g["name"], name_room, svg.FONT_SIZE + 1, True),
        size=svg.FONT_SIZE + 1,
        bold=True,
    )
    if g["label"]:
        c.text(
            x + GROUP_PAD, y + 42, svg.fit_text(g["label"], w - 2 * GROUP_PAD, svg.FONT_SIZE), fill=svg.ACCENT
        )

    # Nodes.
    nodes = g["nodes"]
    shown = nodes if nodes <= MAX_NODE_BOXES else MAX_NODE_BOXES - 1
    grid_w = ncols * NODE_W + (ncols - 1) * NODE_GAP
    gx = x + (w - grid_w) / 2
    gy = y + GROUP_HEAD
    for i in range(shown):
        nx = gx + (i % ncols) * (NODE_W + NODE_GAP)
        ny = gy + (i // ncols) * (NODE_H + NODE_GAP)
        master = i == 0
        c.rect(
            nx,
            ny,
            NODE_W,
            NODE_H,
            rx=4,
            fill=MASTER_FILL if master else svg.PANEL,
            stroke=svg.ACCENT if master else "#b9c2cc",
            stroke_width=1.6 if master else 1,
        )
        c.text(nx + 9, ny + 19, node_name(g["first_node"] + i), size=svg.FONT_SIZE, bold=master)
        c.text(
            nx + 9,
            ny + 36,
            t("master" if master else "worker", lang),
            size=svg.SMALL + 1,
            fill=svg.ACCENT if master else svg.MUTED,
            bold=master,
        )
    if shown < nodes:
        i = shown
        nx = gx + (i % ncols) * (NODE_W + NODE_GAP)
        ny = gy + (i // ncols) * (NODE_H + NODE_GAP)
        c.rect(nx, ny, NODE_W, NODE_H, rx=4, fill=svg.PAPER, stroke="#b9c2cc", stroke_dasharray="4 3")
        c.text_mid(
            nx + NODE_W / 2,
            ny + NODE_H / 2,
            t("more_nodes", lang, n=nodes - shown),
            anchor="middle",
            size=svg.SMALL + 1,
        )

    # Footer: how many nodes and devices, with the arithmetic.
    foot = _footer(g, lang)
    c.text(
        x + GROUP_PAD,
        y + h - 10,
        svg.fit_text(foot, w - 2 * GROUP_PAD, svg.SMALL + 1),
        size=svg.SMALL + 1,
        fill=svg.MUTED,
    )


def _footer(g: dict, lang: str) -> str:
    """ "4 nodes × 16 devices = 64 devices", or "4 × Atlas 800 A3 × 16 devices = 64 devices"."""
    nodes, devices = g["nodes"], g["devices"]
    servers = (
        f"{nodes} × {g['node_name']}"
        if g["node_name"]
        else t("one_node" if nodes == 1 else "n_nodes", lang, n=nodes)
    )
    if nodes and devices and devices % nodes == 0:
        return t("group_devices", lang, servers=servers, per_node=devices // nodes, devices=devices)
    return t("group_devices_total", lang, servers=servers, devices=devices)


def _draw_kv_transfer(c: Canvas, items: list[dict], boxes: list, lang: str) -> None:
    prefill = [b for g, b in zip(items, boxes, strict=True) if g["role"] == "prefill"]
    decode = [b for g, b in zip(items, boxes, strict=True) if g["role"] == "decode"]
    p_box, d_box = prefill[-1], decode[0]
    px, py, pw, ph = p_box
    dx, _, _, _ = d_box
    mid_y = py + ph / 2
    c.arrow(px + pw + 4, mid_y, dx - 4, mid_y, color=svg.ACCENT, width=2.2, head=10)
    lines = _kv_label_lines(lang)
    centre = (px + pw + dx) / 2
    for i, line in enumerate(lines):
        c.text(
            centre,
            mid_y - 10 - (len(lines) - 1 - i) * 14,
            line,
            anchor="middle",
            size=svg.SMALL,
            fill=svg.ACCENT,
            bold=i == 0,
        )
    c.text(centre, mid_y + 20, "P → D", anchor="middle", size=svg.SMALL, fill=svg.MUTED)
    _draw_bottom_box(c, [p_box, d_box], t("kv_pool", lang), "")


def _draw_storage(c: Canvas, boxes: list, lang: str) -> None:
    _draw_bottom_box(c, boxes, t("shared_storage", lang), t("weights_sync", lang))


def _draw_bottom_box(c: Canvas, boxes: list, label: str, link_label: str) -> None:
    """A box under the groups (storage, KV pool) with a two-way link to each group."""
    bottom = max(by + bh for _, by, _, bh in boxes)
    bw = max(280, svg.text_width(label, svg.FONT_SIZE, True) + 40)
    bx = (c.width - bw) / 2
    by = bottom + 56
    bh = 34
    c.rect(bx, by, bw, bh, rx=6, fill=svg.PANEL, stroke=svg.TEXT, stroke_width=1.2)
    c.text_mid(c.width / 2, by + bh / 2, label, anchor="middle", bold=True)
    n = len(boxes)
    for i, (gx, gy, gw, gh) in enumerate(boxes):
        sx = gx + gw / 2
        ex = bx + bw * (i + 1) / (n + 1)
        c.arrow(sx, gy + gh + 2, ex, by - 2, color=svg.MUTED, width=1.3, dashed=True, head=7, both=True)
        if link_label:
            c.label_beside_line(sx, gy + gh, ex, by, link_label, toward_x=2 * sx - ex, fill=svg.MUTED)
