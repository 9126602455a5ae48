"""The parts of the proposal told from what is quoted: deployment path, failure domains, risks.

Nothing here is a fixed story: the server, the topology, the node counts, the
lease price and the delivery terms of the frozen revision decide every
sentence.  A purchase quote is labelled a purchase; a proof-of-concept lease is
offered only when the revision carries a lease price, and it is never the
highlighted step; only the quoted server is named.

The customer edition turns the engine's findings into risks with mitigations
(:func:`customer_risks`): findings that are sales or engineering notes (prices
missing, the source document's method, a node split still to tune) stay in
the internal edition.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.utils.translation import gettext as _

from configurator.public import formatting, vocabulary

TIMELINE_MONTHS = 12


def topology_label(topology: Mapping, lang: str) -> str:
    """The deployment's topology in the customer's words (docs/glossary.md)."""
    return vocabulary.topology_label(
        str(topology.get("kind", "")),
        lang,
        prefill_nodes=topology.get("prefill_nodes", "?"),
        decode_nodes=topology.get("decode_nodes", "?"),
    )


def _int(value: Any) -> int:
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0


def _group_nodes(layout: Mapping) -> list[int]:
    return [_int(g.get("nodes")) for g in layout.get("groups") or [] if _int(g.get("nodes"))]


def deployment_paths(
    *,
    topology: Mapping,
    layout: Mapping,
    server_name: str,
    lease_per_node_month: Any,
    delivery_weeks: int,
    topology_text: str,
) -> list[dict]:
    """Steps from a proof of concept (when a lease is priced) through this purchase to expansion.

    The highlighted step is always the quoted purchase.  Its bar starts after
    the proof of concept (if any) and lasts the delivery lead time plus four
    weeks of installation and acceptance.
    """
    kind = str(topology.get("kind", ""))
    nodes = _int(layout.get("nodes") or topology.get("nodes"))
    groups = _group_nodes(layout)
    smallest = min(groups) if groups else nodes
    steps: list[dict] = []
    start = 0.0
    if _int(lease_per_node_month) > 0 and smallest:
        steps.append(
            {
                "key": "poc",
                "title": _("Optional proof of concept: lease %(n)s × %(server)s")
                % {"n": smallest, "server": server_name},
                "months": 2,
                "duration": _("1–2 months"),
                "text": _(
                    "Before the purchase, the model and the customer's own workload run on %(n)s leased "
                    "servers, the smallest serving group of this configuration, and the load test confirms "
                    "the throughput and latency quoted here."
                )
                % {"n": smallest},
            }
        )
    build_months = round((delivery_weeks + 4) / 4.33, 1)
    steps.append(
        {
            "key": "purchase",
            "title": _("This proposal: purchase of %(n)s × %(server)s, %(topology)s")
            % {"n": nodes, "server": server_name, "topology": topology_text},
            "months": build_months,
            "duration": _("%(weeks)s weeks to delivery, then about 4 weeks to acceptance")
            % {"weeks": delivery_weeks},
            "text": _(
                "Delivery, installation in the racks of this proposal, start from the delivered launch "
                "configuration and the acceptance test."
            ),
        }
    )
    expansion = _expansion(kind, nodes, groups, server_name, topology)
    if expansion:
        steps.append({"key": "expand", **expansion, "months": 3, "duration": _("when demand grows")})
    for step in steps:
        step["current"] = step["key"] == "purchase"
        step["start"] = start
        step["left_pct"] = round(min(start, TIMELINE_MONTHS) / TIMELINE_MONTHS * 100, 2)
        width = min(step["months"], TIMELINE_MONTHS - min(start, TIMELINE_MONTHS - 1))
        step["width_pct"] = round(width / TIMELINE_MONTHS * 100, 2)
        start += step["months"]
    return steps


def _expansion(kind: str, nodes: int, groups: list[int], server: str, topology: Mapping) -> dict | None:
    if not nodes:
        return None
    if kind == "single":
        return {
            "title": _("Expansion: a second cluster of %(n)s × %(server)s") % {"n": nodes, "server": server},
            "text": _(
                "A second, identical cluster doubles the capacity and can serve as a standby or as an "
                "isolated cluster for other tenants; the racks, power and network of this proposal are "
                "sized per cluster, so the second one repeats them."
            ),
        }
    if kind in ("primary_standby", "tenant_pair"):
        return {
            "title": _("Expansion: prefill/decode disaggregation on %(n)s × %(server)s")
            % {"n": nodes * 2, "server": server},
            "text": _(
                "For more concurrent users, the clusters are extended into one deployment that separates "
                "prompt processing (prefill) from generation (decode), so each side scales on its own."
            ),
        }
    if kind == "disaggregated":
        return {
            "title": _("Expansion: more prefill or decode nodes (%(server)s)") % {"server": server},
            "text": _(
                "Prefill and decode nodes are added separately, according to which side the measured load "
                "saturates first."
            ),
        }
    return None


def failure_domains(
    kind: str,
    layout: Mapping,
    shared_switches: list[str],
    rack_count: int,
    separator: str = ", ",
    *,
    one_feed_carries_servers: bool = True,
) -> list[str]:
    """What fails together and what the availability of this design assumes, in plain words."""
    groups = _group_nodes(layout)
    nodes = sum(groups)
    lines = []
    if kind == "single":
        lines.append(
            _(
                "The %(n)s servers form one serving instance: the model is split across all of them, so the "
                "failure of one server or of its network links stops the service until that server is "
                "repaired or the instance is restarted on the remaining capacity. There is no standby."
            )
            % {"n": nodes}
        )
    elif kind == "primary_standby":
        lines.append(
            _(
                "Two independent clusters of %(n)s servers: when the primary fails, the gateway sends the "
                "traffic to the standby, which holds the same model."
            )
            % {"n": groups[0] if groups else nodes}
        )
    elif kind == "tenant_pair":
        lines.append(
            _(
                "Two clusters of %(n)s servers serve separate tenants; a failure in one cluster does not stop "
                "the other."
            )
            % {"n": groups[0] if groups else nodes}
        )
    elif kind == "disaggregated":
        lines.append(
            _(
                "Prefill and decode run on separate servers; each side is one instance spread across its "
                "servers, so the failure of any one server stops the service until it is repaired. There is "
                "no standby."
            )
        )
    if shared_switches:
        lines.append(
            _(
                "Both clusters share these switches: %(switches)s. A switch failure affects both clusters; "
                "separate switches per cluster remove this shared point of failure."
            )
            % {"switches": separator.join(shared_switches)}
        )
    if rack_count and one_feed_carries_servers:
        lines.append(
            _(
                "Every rack is fed from two independent power feeds (A and B); either feed carries the whole "
                "load of the rack alone."
            )
        )
    elif (
        rack_count
    ):  # the engine's power.psu_not_ab_redundant: the feeds can, a server's PSUs on one feed cannot
        lines.append(
            _(
                "Every rack is fed from two independent power feeds (A and B), each sized for the whole load "
                "of the rack; a server's power supplies are split across the two feeds, so if one feed fails "
                "the servers keep running but may slow down."
            )
        )
    return lines


# Findings of the facilities and network areas that are comparisons with the reference design the
# plan started from, not a risk of the customer's installation: the internal edition shows them with
# their code; the customer edition has the figures they compare in its own tables (feeds, switches).
INTERNAL_ONLY = {
    "power.seed_circuit_no_headroom": "the reference design's breaker sizing; the quoted feeds follow "
    "the recommended sizing printed in the facilities chapter",
    "network.switch_count_vs_seed": "a comparison with the reference design's switch count; the bill "
    "of materials lists the switches quoted",
}


def _figures(check: Mapping) -> Mapping:
    figures = check.get("figures")
    return figures if isinstance(figures, Mapping) else {}


def _number(value: Any, places: int = 0) -> str:
    try:
        return formatting.thousands(float(value), places) if places else formatting.thousands(float(value))
    except (TypeError, ValueError):
        return "—"


def _names(value: Any) -> str:
    return ", ".join(str(v) for v in value) if isinstance(value, (list, tuple)) else str(value or "")


def _floor_loading(check: Mapping, ctx: Mapping) -> dict:
    f = _figures(check)
    return {
        "title": _("Floor loading above the hall floor's rating"),
        "text": _(
            "Rack(s) %(racks)s load the floor with up to %(worst)s kg/m², above the hall floor's rating of "
            "%(rating)s kg/m²."
        )
        % {
            "racks": _names(f.get("racks")),
            "worst": _number(f.get("max_floor_load_kg_m2")),
            "rating": _number(f.get("floor_rating_kg_m2")),
        },
        "mitigation": _(
            "Before installation the site's facilities engineer confirms the floor rating; the load is spread "
            "(load-spreading plates, or fewer servers per rack) or the floor under these racks is reinforced "
            "(a steel plinth)."
        ),
    }


def _air_limit(check: Mapping, ctx: Mapping) -> dict:
    f = _figures(check)
    kw = f.get("max_rack_kw") or (ctx.get("racks") or {}).get("max_rack_kw") or 0
    return {
        "title": _("Rack power above the air-cooling limit"),
        "text": _(
            "Racks %(racks)s draw up to %(kw)s kW, above the room's air-cooling limit of %(limit)s kW per rack."
        )
        % {"racks": _names(f.get("racks")), "kw": _number(kw, 1), "limit": _number(f.get("limit_kw"))},
        "mitigation": _(
            "Hot/cold-aisle containment or liquid-cooled racks, as priced in the bill of materials, or more "
            "racks with less power each."
        ),
    }


def _server_exceeds_rack(check: Mapping, ctx: Mapping) -> dict:
    return {
        "title": _("The server does not fit the chosen rack"),
        "text": _("The server exceeds the chosen rack's height, depth or power rating."),
        "mitigation": _("A taller or higher-power rack is agreed before the order."),
    }


def _groups_share_rack(check: Mapping, ctx: Mapping) -> dict:
    return {
        "title": _("The clusters share racks"),
        "text": _(
            "The clusters share rack(s) %(racks)s: a power or cooling failure of one rack affects both."
        )
        % {"racks": _names(_figures(check).get("racks"))},
        "mitigation": _("Each cluster in its own racks on its own A/B feeds."),
    }


def _feed_breaker(check: Mapping, ctx: Mapping) -> dict:
    f = _figures(check)
    values = {
        "amps": _number(f.get("required_amps"), 1),
        "largest": _number(f.get("largest_breaker_amps")),
        "circuits": _number(f.get("circuits")),
        "breaker": _number(f.get("breaker_amps")),
    }
    return {
        "title": _("Circuits per feed"),
        "text": _(
            "The load needs %(amps)s A on each of the A and B feeds, more than the largest breaker of the room "
            "(%(largest)s A)."
        )
        % values,
        "mitigation": _(
            "Each feed is split into %(circuits)s circuits of %(breaker)s A, provided by the room's power "
            "distribution."
        )
        % values,
    }


def _psu_split(check: Mapping, ctx: Mapping) -> dict:
    return {
        "title": _("Server power supplies on the two feeds"),
        "text": _(
            "With its power supplies split across feeds A and B, one feed alone may not carry a "
            "server at its maximum draw: if a feed fails, servers can slow down."
        ),
        "mitigation": _(
            "The power-supply configuration and the power-capping policy on one feed are agreed "
            "with the server vendor before delivery."
        ),
    }


def _no_switch(check: Mapping, ctx: Mapping) -> dict:
    return {
        "title": _("Switch model to be confirmed"),
        "text": _(
            "No switch of the offer has the %(ports)s ports one of the networks between the nodes needs."
        )
        % {"ports": _number(_figures(check).get("ports_needed"))},
        "mitigation": _(
            "The switch model and its price are confirmed with the network vendor before the order."
        ),
    }


def _shared_switch(check: Mapping, ctx: Mapping) -> dict:
    return {
        "title": _("Switches shared by the two clusters"),
        "text": _("A failure of a shared switch affects both clusters at once."),
        "mitigation": _("Separate switches per cluster, or stacked switches with dual-homed links (M-LAG)."),
    }


def _fabric_insufficient(check: Mapping, ctx: Mapping) -> dict:
    return {
        "title": _("Network between the nodes too slow"),
        "text": _(
            "The network between the nodes cannot carry the traffic of the parallel layout that spans them."
        ),
        "mitigation": _("An RDMA network of at least 400 Gb/s per accelerator between the nodes."),
    }


def _fabric_slow(check: Mapping, ctx: Mapping) -> dict:
    return {
        "title": _("Network between the nodes below 400 Gb/s"),
        "text": _(
            "The links between the nodes run below 400 Gb/s: the deployment runs, and its throughput may be "
            "lower than estimated."
        ),
        "mitigation": _("The throughput is confirmed by the acceptance test; a 400 Gb/s network raises it."),
    }


def _two_tier(check: Mapping, ctx: Mapping) -> dict:
    f = _figures(check)
    return {
        "title": _("Network beyond two switch tiers"),
        "text": _(
            "One network needs %(leaves)s leaf switches, more than a spine switch of %(ports)s ports connects."
        )
        % {"leaves": _number(f.get("leaves")), "ports": _number(f.get("ports_per_switch"))},
        "mitigation": _("A larger spine switch or a third switch tier, designed with the network vendor."),
    }


def _kv_share(check: Mapping, ctx: Mapping) -> dict:
    f = _figures(check)
    return {
        "title": _("Prefill-to-decode network load"),
        "text": _(
            "Moving each request's KV cache from the prefill to the decode nodes uses %(share)s of their links."
        )
        % {"share": formatting.format_percent(f.get("share"), 0) if f.get("share") is not None else "—"},
        "mitigation": _(
            "Faster links between prefill and decode nodes, or another split of prefill and decode nodes; "
            "the acceptance test measures it."
        ),
    }


def _kv_no_fabric(check: Mapping, ctx: Mapping) -> dict:
    return {
        "title": _("No network between prefill and decode nodes"),
        "text": _(
            "The prefill and decode nodes have no switched RDMA network to move the KV cache between them."
        ),
        "mitigation": _("An RDMA network between the prefill and decode nodes, added to the offer."),
    }


def _full_length(check: Mapping, ctx: Mapping) -> dict:
    serving, memory = ctx["serving"], ctx["memory"]
    return {
        "title": _("Concurrency at the full context length"),
        "text": _(
            "Each serving replica runs up to %(seqs)s requests at once; when every request uses "
            "the full context of %(len)s tokens, %(full)s fit at once and the others wait."
        )
        % {
            "seqs": formatting.thousands(_int(serving.get("max_num_seqs"))),
            "len": formatting.thousands(_int(serving.get("max_model_len"))),
            "full": formatting.thousands(_int(memory.get("full_len_seqs_per_dp_rank"))),
        },
        "mitigation": _(
            "Typical requests are far shorter and run at full concurrency; the acceptance test "
            "measures the concurrency at the agreed request length."
        ),
    }


# Each finding the customer must know, by check code: its risk in the customer's words.  Every
# warning or error of the racks, cooling, power and network areas has one here or a reason in
# INTERNAL_ONLY (tests/quotes/test_customer_risks.py keeps it so).
RISKS = {
    "memory.max_num_seqs_not_full_length": _full_length,
    "racks.floor_loading": _floor_loading,
    "racks.server_exceeds_rack": _server_exceeds_rack,
    "racks.groups_share_rack": _groups_share_rack,
    "cooling.rack_exceeds_air_limit": _air_limit,
    "power.feed_exceeds_largest_breaker": _feed_breaker,
    "power.total_feed_split": _feed_breaker,
    "power.psu_not_ab_redundant": _psu_split,
    "network.no_switch_for_fabric": _no_switch,
    "network.pair_shares_switch": _shared_switch,
    "network.tenants_share_switch": _shared_switch,
    "network.tenants_share_data_switch": _shared_switch,
    "network.cross_node_fabric_insufficient": _fabric_insufficient,
    "network.cross_node_fabric_below_400g": _fabric_slow,
    "network.fabric_exceeds_two_tier": _two_tier,
    "network.kv_transfer_share_high": _kv_share,
    "network.kv_transfer_no_fabric": _kv_no_fabric,
}


def launched_serving(result: Mapping, resolved: Mapping) -> dict:
    """The request's serving settings with ``max_num_seqs`` as the decoding engines launch it: the plan's
    own figure (``plan()["serving"]``, the design point's sequences per DP rank), not the request's
    setting, which a request may leave to the plan (0: sized to the KV cache)."""
    serving = dict(resolved.get("serving") or {})
    roles = [r for r in (result.get("serving") or []) if isinstance(r, Mapping)]
    decoding = next((r for r in roles if r.get("role") in ("serve", "decode")), None)
    if decoding is not None and decoding.get("max_num_seqs"):
        serving["max_num_seqs"] = decoding["max_num_seqs"]
    return serving


def customer_risks(checks: list[Mapping], plan: Mapping, resolved: Mapping) -> list[dict]:
    """The engine's warnings the customer must know, as risks with mitigations in the customer's words
    (:data:`RISKS`), then the latency targets the plan misses (:func:`target_risks`)."""
    # The engine's own result: the proposal passes its page context with the plan under "result"
    # (which has no "memory" of its own), the options table passes the plan itself.
    result = plan.get("result") or plan
    ctx = {
        "serving": launched_serving(result, resolved),
        "memory": result.get("memory") or {},
        "racks": result.get("racks") or {},
    }
    out = []
    seen = set()
    for check in checks:
        code = str(check.get("code", ""))
        if check.get("severity") == "ok" or code in seen or code not in RISKS:
            continue
        seen.add(code)
        risk = RISKS[code](check, ctx)
        if risk is not None and risk not in out:
            out.append(risk)
    out.extend(target_risks(result, resolved))
    return out


def target_labels() -> dict[str, tuple[str, str]]:
    """Each latency target's name and unit (performance/sla.py: TPOT in ms, TTFT in s)."""
    return {
        "ttft_p50_s": (_("Time to first token, median (P50)"), "s"),
        "ttft_p90_s": (_("Time to first token, 90th percentile (P90)"), "s"),
        "tpot_p50_ms": (_("Time per output token, median (P50)"), "ms"),
        "tpot_p90_ms": (_("Time per output token, 90th percentile (P90)"), "ms"),
    }


def target_value(key: str, value: Any) -> str:
    """A latency in its target's unit: seconds to 0.1, milliseconds whole."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return "—"
    if key.endswith("_s"):
        return f"{formatting.thousands(number, 1)} s"
    return f"{formatting.thousands(number)} ms"


def requirement_rows(result: Mapping) -> list[dict]:
    """The customer's latency targets beside the estimate at the stated load (``performance.sla``),
    and whether each is met; [] when the request states no target."""
    sla = (result.get("performance") or {}).get("sla") or {}
    targets = sla.get("targets") or {}
    values = sla.get("values") or {}
    labels = target_labels()
    rows = []
    for key, label_unit in labels.items():
        if key not in targets:
            continue
        target, value = targets[key], values.get(key)
        met = value is not None and float(value) <= float(target) * (1 + 1e-9)
        rows.append(
            {
                "key": key,
                "label": label_unit[0],
                "target": target_value(key, target),
                "estimate": target_value(key, value) if value is not None else "—",
                "met": met,
            }
        )
    return rows


def target_risks(result: Mapping, resolved: Mapping) -> list[dict]:
    """A risk when the estimate at the stated load misses a latency target the customer stated, with
    what would meet it: the largest load that meets every target on this cluster (``sla.max_concurrency``),
    or, when one request already misses, the best this hardware reaches (the design point's ``best_*``)."""
    rows = [row for row in requirement_rows(result) if not row["met"]]
    if not rows:
        return []
    sla = (result.get("performance") or {}).get("sla") or {}
    design = (result.get("performance") or {}).get("design_point") or {}
    workload = resolved.get("workload") or {}
    missed = "; ".join(
        _("%(what)s %(estimate)s against your target of %(target)s") % {
            "what": row["label"], "estimate": row["estimate"], "target": row["target"]
        }
        for row in rows
    )  # fmt: skip
    most = _int(sla.get("max_concurrency"))
    if most > 0:
        mitigation = _(
            "On this cluster every target holds up to %(most)s concurrent requests: the stated load is met "
            "with more serving replicas (more nodes), or with targets agreed at what this cluster reaches."
        ) % {"most": formatting.thousands(most)}
    else:
        best = {
            "ttft_p50_s": design.get("best_ttft_s"),
            "ttft_p90_s": design.get("best_ttft_p90_s"),
            "tpot_p50_ms": (design.get("best_tpot_s") or 0) * 1000 or None,
            "tpot_p90_ms": (design.get("best_tpot_p90_s") or 0) * 1000 or None,
        }
        reach = "; ".join(
            f"{row['label']} {target_value(row['key'], best[row['key']])}"
            for row in rows
            if best.get(row["key"]) is not None
        )
        mitigation = _(
            "Even a single request misses it on this hardware (at best: %(reach)s): faster accelerators or "
            "speculative decoding would meet it, or targets agreed at what this hardware reaches."
        ) % {"reach": reach or "—"}
    return [
        {
            "title": _("Your latency targets at the stated load"),
            "text": _(
                "At the stated load of %(n)s concurrent requests the estimate misses your targets: %(missed)s."
            )
            % {"n": formatting.thousands(_int(workload.get("concurrency"))), "missed": missed},
            "mitigation": mitigation,
            "targets_missed": True,
        }
    ]
