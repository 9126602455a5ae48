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

from configurator.public import formatting

TIMELINE_MONTHS = 12


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


def customer_risks(checks: list[Mapping], plan: Mapping, resolved: Mapping) -> list[dict]:
    """The engine's warnings the customer must know, as risks with mitigations in the customer's words."""
    serving = resolved.get("serving") or {}
    # The engine's own result: the proposal passes its page context with the plan under "result"
    # (which has no "memory" of its own), the options table passes the plan itself.
    result = plan.get("result") or plan
    memory = result.get("memory") or {}
    racks = result.get("racks") or {}
    out = []
    seen = set()
    for check in checks:
        code = str(check.get("code", ""))
        if check.get("severity") == "ok" or code in seen:
            continue
        seen.add(code)
        if code == "memory.max_num_seqs_not_full_length":
            out.append(
                {
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
            )
        elif code == "power.psu_not_ab_redundant":
            out.append(
                {
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
            )
        elif code.startswith("cooling.") or code.startswith("racks."):
            out.append(
                {
                    "title": _("Rack power above the air-cooling limit"),
                    "text": _("Racks draw up to %(kw)s kW, above the room's air-cooling limit per rack.")
                    % {"kw": formatting.thousands(float(racks.get("max_rack_kw") or 0), 1)},
                    "mitigation": _(
                        "Hot/cold-aisle containment or liquid-cooled racks, as priced in the bill of "
                        "materials, or more racks with less power each."
                    ),
                }
            )
        elif code in ("network.pair_shares_switch", "network.tenants_share_switch"):
            out.append(
                {
                    "title": _("Switches shared by the two clusters"),
                    "text": _("A failure of a shared switch affects both clusters at once."),
                    "mitigation": _(
                        "Separate switches per cluster, or stacked switches with dual-homed links (M-LAG)."
                    ),
                }
            )
    return out
