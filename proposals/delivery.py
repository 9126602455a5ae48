"""What the proposal says about building, accepting and running the cluster, beyond its prices.

Pure functions over one revision's frozen JSON (``result_json``, ``resolved_json``) and its terms:

* :func:`network_planes` — every network plane with its ports used, spare ports, uplinks and the
  devices attached to it, and the cables by length class (configurator.engine.network / racks);
* :func:`facilities` — per rack: load, heat in kW and BTU/h, the PDU each feed takes;
* :func:`implementation_plan` — phases with weeks, milestones, who does what (RACI), training and
  after-sales, from the quote's delivery lead time and the size of the deployment;
* :func:`compliance` — 等保 2.0 and 信创 statements derived from the chosen hardware and software, for
  the scenarios that ask for them.

``documents/pdf/delivery.py`` gathers them, with the acceptance benchmark the launch bundle writes,
for the proposal template; each is shown by its own partial (``quotes/templates/quotes/pdf/_*.html``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from django.utils.translation import gettext as _

from configurator.public import is_zh
from quotes.bom import DOMESTIC_OS, DOMESTIC_STACK_SCENARIOS, SOFTWARE_STACKS

from .models import QuoteTerms, SupportLevel

# Scenarios whose customers need the compliance statements (docs/domain.md §10: government — domestic
# stack mandate, data stays in domain; financial research — regulated data on premises).
COMPLIANCE_SCENARIOS = frozenset({"government-policy-qa", "finance-research", "financial-research"})
# 等保 2.0 (GB/T 22239-2019 《信息安全技术 网络安全等级保护基本要求》): government services and bank systems
# handling important data are graded at level 3 as a rule (GB/T 22240-2020 定级指南); the customer grades
# and has the system evaluated by an accredited body.
DENGBAO_LEVEL = 3
DOMESTIC_CPU_WORDS = ("kunpeng", "鲲鹏", "hygon", "海光", "phytium", "飞腾", "loongson", "龙芯")
# Cable length classes as the engine names them (configurator.engine.racks.CABLE_LENGTHS).
LENGTHS = {"in_rack": 3, "adjacent": 10, "row": 30}
# Training (assumed scope, stated in the plan): days and what each course covers.
TRAINING_SEATS = 10
# Installation pace (assumed): racking, cabling and power-on of 8 nodes per week with one team.
NODES_PER_INSTALL_WEEK = 8


def _dig(data: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(data, Mapping):
            return None
        data = data.get(key)
    return data


# --------------------------------------------------------------------------- network and facilities


def network_planes(result: Mapping, lang: str) -> dict:
    """Every switched plane: the engine's fabric rows that have switches (their plane, switches, ports
    used of the capacity, spare ports, uplinks; the table section ``network_planes`` prints them) with
    the devices attached to each named (``attached_note``); and the cables by length class."""
    zh = is_zh(lang)
    rows = []
    for row in _dig(result, "network", "rows") or []:
        if not isinstance(row, Mapping) or not row.get("switches"):
            continue
        role = str(row.get("role") or "")
        attached = []
        if role == "service":
            attached.append(_("gateways"))
        if role == "storage":
            attached.append(_("checkpoint storage"))
        if role == "management":
            attached.append(_("gateways and storage management ports"))
        if role == "oob":
            attached.append(_("switch management ports, gateway BMCs"))
        devices = "、".join(attached) if zh else ", ".join(attached)
        rows.append(
            {
                **row,
                "attached_note": _("other devices: %(devices)s") % {"devices": devices} if devices else "",
            }
        )
    cables = []
    lengths = _dig(result, "racks", "cable_lengths") or {}
    names = {"fiber": _("Fibre patch cords"), "cat6": _("Copper patch cables (Cat6)")}
    for medium, classes in sorted(lengths.items()) if isinstance(lengths, Mapping) else ():
        if isinstance(classes, Mapping):
            cables.append(
                {"medium": names.get(medium, medium), **{k: int(classes.get(k) or 0) for k in LENGTHS}}
            )
    return {"planes": rows, "cables": cables, "lengths": LENGTHS}


def facilities(result: Mapping, resolved: Mapping) -> dict:
    """The racks (the engine's rows: maximum load, heat load, the PDU of each feed, weight and floor
    loading; the table section ``per_rack`` prints them) and the totals of load and heat."""
    racks = [r for r in _dig(result, "racks", "racks") or [] if isinstance(r, Mapping)]
    total_kw = sum(float(r.get("kw") or 0) for r in racks)
    return {
        "racks": racks,
        "total_kw": total_kw,
        "total_heat_btu_h": int(_dig(result, "racks", "heat_btu_h") or 0),
    }


# --------------------------------------------------------------------------- implementation plan


def implementation_plan(result: Mapping, resolved: Mapping, terms: QuoteTerms) -> dict:
    """Phases with weeks (week 1 = the week the contract is signed), milestones, RACI, training, after-sales.

    Delivery takes the quote's lead time; installation one week per :data:`NODES_PER_INSTALL_WEEK`
    nodes; software deployment and tuning one week, two for a disaggregated deployment; acceptance
    one week (a failover test with it for a primary/standby pair); training and handover one week.
    """
    nodes = int(_dig(result, "layout", "nodes") or _dig(resolved, "topology", "nodes") or 1)
    kind = str(_dig(resolved, "topology", "kind") or "")
    delivery = int(terms.delivery_weeks or 8)
    install = max(1, math.ceil(nodes / NODES_PER_INSTALL_WEEK))
    software = 2 if kind == "disaggregated" else 1
    phases = []
    week = 1

    def phase(name: str, weeks: int, start: int, seller: str, customer: str, output: str) -> int:
        end = start + weeks - 1
        phases.append(
            {
                "name": name,
                "start": start,
                "end": end,
                "seller": seller,
                "customer": customer,
                "output": output,
            }
        )
        return end

    phase(
        _("Kick-off and site survey"),
        2,
        week,
        "R/A",
        "C",
        _("Site survey report: power feeds and breakers, cooling, floor, network hand-over points"),
    )
    delivered = phase(
        _("Procurement and delivery of the hardware"),
        delivery,
        week,
        "R/A",
        "I",
        _("Hardware delivered on site"),
    )
    phase(
        _("Site preparation: feeds, breakers, cooling, cabling trays"),
        max(1, delivery - 2),
        3,
        "C",
        "R/A",
        _("Racks, A/B feeds and cooling ready"),
    )
    installed = phase(
        _("Racking, cabling and power-on"),
        install,
        delivered + 1,
        "R/A",
        "C",
        _("Every node passes the hardware self-test"),
    )
    deployed = phase(
        _("Operating system, drivers, serving engine and gateway; tuning"),
        software,
        installed + 1,
        "R/A",
        "C",
        _("The model served through the gateway"),
    )
    accepted = phase(
        _("Acceptance test") + (" " + _("with the failover test") if kind == "primary_standby" else ""),
        1,
        deployed + 1,
        "R",
        "A",
        _("Acceptance certificate signed"),
    )
    phase(
        _("Training and handover"),
        1,
        accepted + 1,
        "R",
        "A",
        _("Operators trained; documentation handed over"),
    )
    milestones = [
        {"week": 1, "name": _("Contract signed"), "payment": True},
        {"week": delivered, "name": _("Hardware delivered"), "payment": True},
        {"week": accepted, "name": _("Acceptance"), "payment": True},
        {"week": accepted + 1, "name": _("Services begin (billed per period in arrears)"), "payment": False},
    ]
    support = SupportLevel(terms.support_level).label if terms.support_level in SupportLevel.values else ""
    return {
        "phases": phases,
        "acceptance_week": accepted,
        "total_weeks": accepted + 1,
        "milestones": milestones,
        "training": [
            {
                "course": _("Cluster operations: start and stop, monitoring, alarms, replacing a node"),
                "days": 2,
                "audience": _("the customer's operators"),
            },
            {
                "course": _("Serving the model: the API, limits, reading the benchmark"),
                "days": 1,
                "audience": _("the customer's developers"),
            },
        ],
        "training_seats": TRAINING_SEATS,
        "support_label": support,
        "warranty_years": terms.warranty_years,
        "after_sales": [
            _("Service desk by telephone and e-mail; every incident gets a ticket number and a severity."),
            _(
                "Severity 1 (service down): remote engineer within 30 minutes, on site within the support level."
            ),
            _(
                "Hardware faults: part replaced on site within the support level; spare parts kept for the warranty."
            ),
            _(
                "Software: security updates and serving-engine upgrades tested on the standby or a test node first."
            ),
            _("Quarterly service report: availability, incidents, capacity against the workload."),
        ],
    }


# --------------------------------------------------------------------------- compliance


def compliance(result: Mapping, resolved: Mapping, lang: str) -> dict | None:
    """等保 2.0 and 信创 statements for the scenarios that need them (:data:`COMPLIANCE_SCENARIOS`), else None."""
    scenario = str(resolved.get("scenario") or "")
    if scenario not in COMPLIANCE_SCENARIOS:
        return None
    zh = is_zh(lang)
    server = resolved.get("server") if isinstance(resolved.get("server"), Mapping) else {}
    accelerator = server.get("accelerator") if isinstance(server.get("accelerator"), Mapping) else {}
    cpu = str(server.get("cpu") or "")
    stack = str(accelerator.get("software_stack") or "")
    software = list(SOFTWARE_STACKS.get(stack, ()))
    if scenario in DOMESTIC_STACK_SCENARIOS:
        software = [DOMESTIC_OS if s.ref == "os:openeuler" else s for s in software]
    used = _used_switches(result)
    switches = [s for s in resolved.get("switches") or [] if isinstance(s, Mapping) and s.get("slug") in used]

    def row(part: str, name: str, origin: str) -> dict:
        # origin as the catalog records it: "domestic", "foreign" or "" (not known: never domestic)
        origin = origin if origin in ("domestic", "foreign") else ""
        return {"part": part, "name": name, "origin": origin, "domestic": origin == "domestic"}

    components = [
        row(
            _("Accelerators"),
            str(accelerator.get("name") or ""),
            "domestic" if accelerator.get("domestic") else "foreign",
        ),
        row(
            _("Processors"),
            cpu.replace(" (assumed)", ""),
            "domestic" if any(w in cpu.lower() for w in DOMESTIC_CPU_WORDS) else ("foreign" if cpu else ""),
        ),
        row(
            _("Servers"),
            str((server.get("name_zh") if zh else "") or server.get("name") or ""),
            str(server.get("origin") or ""),
        ),
    ]
    for switch in switches:  # each switch model quoted, with its maker (or none named)
        name = str((switch.get("name_zh") if zh else "") or switch.get("name") or switch.get("slug"))
        vendor = str(switch.get("vendor") or "")
        if vendor and vendor.lower() not in name.lower():
            name = f"{vendor} {name}"
        components.append(row(_("Switches"), name, str(switch.get("origin") or "")))
    for licence in software:
        if licence.ref.startswith("os:"):
            components.append(
                row(
                    _("Operating system"),
                    (licence.zh if zh else licence.en).split("（")[0].split(",")[0],
                    "domestic" if licence.ref in ("os:kylin", "os:openeuler") else "foreign",
                )
            )
        elif licence.ref in ("cann", "cuda"):
            components.append(
                row(
                    _("Accelerator software stack"),
                    (licence.zh if zh else licence.en).split("（")[0].split(",")[0],
                    "domestic" if licence.ref == "cann" else "foreign",
                )
            )
    unknown = [c["name"] for c in components if not c["origin"]]
    xinchuang = all(c["domestic"] for c in components)
    roles = {
        str(r.get("role"))
        for r in _dig(result, "network", "rows") or []
        if isinstance(r, Mapping) and r.get("switches")
    }
    measures = [
        _(
            "Separate networks for service, storage, management and out-of-band access; only the service plane reaches the customer's network, through the gateway pair."
        ),
        _(
            "The model, its weights and every prompt stay in the customer's data centre; no public service is called."
        ),
        _(
            "Management and out-of-band access only from the customer's operations network; every administrator action is logged."
        ),
        _(
            "Monitoring and logs (Prometheus, engine and gateway logs) kept for the retention the customer's policy sets."
        ),
    ]
    if not {"management", "oob"} <= roles:
        measures = measures[1:]
    return {
        "dengbao_level": DENGBAO_LEVEL,
        "components": components,
        "xinchuang": xinchuang,
        # Components whose maker's origin is not known: the statement cannot be confirmed until it is.
        "origin_unknown": ("、" if zh else ", ").join(unknown),
        "foreign": any(c["origin"] == "foreign" for c in components),
        "measures": measures,
    }


def _used_switches(result: Mapping) -> set[str]:
    return {
        str(s.get("slug"))
        for s in _dig(result, "network", "switches") or []
        if isinstance(s, Mapping) and s.get("slug")
    }
