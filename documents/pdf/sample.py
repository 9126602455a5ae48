"""A reference quote for the PDF benchmark, the screenshots and the tests.

Kimi K3 on 16 × Atlas 800 A3 with 8P8D prefill/decode disaggregation
(docs/domain.md §4 item 3), planned from the seed files through ``configurator.reference``
(the seeded configurations, resolved as the API resolves them) so it needs no
catalog rows: the request is fully inline, the prices are the seeded price list's
terms in the shape ``configurator.public.plan_for_quote`` freezes, and the quote
is created through ``quotes.services`` like any other.
"""

from __future__ import annotations

import dataclasses
from decimal import Decimal
from typing import Any

from configurator.public import is_zh, plan_as_dict, prices_snapshot, reference, request_to_inline

# Sample name → the seeded configuration it plans (configurator.reference.CASES).
CASES = {
    "8p8d": "a3-16-8p8d",
    "4node": "a3-4-single",
    "8node": "a3-8-primary-standby",
    "8node-standby": "a3-8-primary-standby",
    "8node-tenant": "a3-8-tenant-pair",
    "nf5868g8": "nf5868g8-2-single",
    "a2": "a2-8-text-only-modelslim",
}

# The seeded topologies every proposal test renders (docs/domain.md §4).
SEEDED_TOPOLOGIES = ("4node", "8p8d", "nf5868g8", "8node-tenant", "8node-standby")

# A title per sample, in the proposal's language (en, zh-hans).
TITLES = {
    "8p8d": (
        "Kimi K3 private deployment · 16 × Atlas 800 A3 8P8D",
        "Kimi K3 私有化部署 · 16 × Atlas 800 A3 8P8D",
    ),
    "4node": ("Kimi K3 private deployment · 4 × Atlas 800 A3", "Kimi K3 私有化部署 · 4 × Atlas 800 A3"),
    "8node": ("Kimi K3 private deployment · 8 × Atlas 800 A3", "Kimi K3 私有化部署 · 8 × Atlas 800 A3"),
    "8node-standby": (
        "Kimi K3 private deployment · 8 × Atlas 800 A3, primary/standby",
        "Kimi K3 私有化部署 · 8 × Atlas 800 A3 主备",
    ),
    "8node-tenant": (
        "Kimi K3 private deployment · 8 × Atlas 800 A3, tenant isolation",
        "Kimi K3 私有化部署 · 8 × Atlas 800 A3 租户隔离",
    ),
    "nf5868g8": ("Kimi K3 private deployment · 2 × NF5868G8", "Kimi K3 私有化部署 · 2 × NF5868G8"),
    "a2": ("Kimi K3 private deployment · 8 × Atlas 800 A2", "Kimi K3 私有化部署 · 8 × Atlas 800 A2"),
}


# Where the sample deploys: the launch section of its request (the bundle and the PDF's commands).
LAUNCH_A3 = {"data_nic": "enp189s0f0", "image": "quay.io/ascend/vllm-ascend:kimi-k3-a3"}
LAUNCH_NF5868G8 = {"data_nic": "ens1f0np0", "image": "vllm/vllm-openai:v0.27.1"}


def sample_request_json(name: str = "8p8d") -> dict[str, Any]:
    """The sample's request: its seeded configuration (``configurator.reference.CASES``) with a launch section."""
    data = reference.case(CASES[name])
    nodes = data["topology"]["nodes"]
    data["launch"] = {
        "model_path": "/data/models/Kimi-K3",
        "served_model_name": "kimi-k3",
        "node_ips": [f"10.0.0.{11 + i}" for i in range(nodes)],
        **(LAUNCH_NF5868G8 if data["server"] == "nf5868g8" else LAUNCH_A3),
    }
    return data


def sample_request(name: str = "8p8d"):
    """The sample's PlanRequest: its request resolved from the seed files as the API resolves it."""
    return reference.request(sample_request_json(name))


def _prices(request) -> dict[str, Any]:
    """The prices a revision freezes (``configurator.public.prices_snapshot``, as ``plan_for_quote``
    writes them), from the seeded terms: no catalog price list, so none named and no date."""
    return {**prices_snapshot(request.commercial, request.server.slug), "price_list": None, "on_date": None}


def sample_plan_kwargs(
    name: str = "8p8d",
    *,
    scenario: str = "software-engineering-agent",
    discount: str = "0",
    workload: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Keyword arguments of ``quotes.services.quotes.quote_create_from_configuration`` for a sample plan.

    ``discount`` is planned in (``commercial.quote_discount``), as the quote
    services require: the engine's capex and TCO then include it.  ``workload`` replaces fields of
    the sample's workload (latency targets, say).
    """
    request = sample_request(name)
    request = dataclasses.replace(
        request, commercial=dataclasses.replace(request.commercial, quote_discount=Decimal(discount))
    )
    if workload:
        request = dataclasses.replace(request, workload=dataclasses.replace(request.workload, **workload))
    resolved = request_to_inline(request)
    resolved["scenario"] = scenario
    request_json = dict(resolved)
    return {
        "request_json": request_json,
        "resolved_json": resolved,
        "result_json": plan_as_dict(request),
        "prices_json": _prices(request),
        "usd_rate": Decimal(str(request.commercial.usd_rate)),
        "currency": request.commercial.currency,
    }


def sample_quote_create(
    *,
    by,
    customer: str = "上海浦东发展银行 Shanghai Pudong Development Bank",
    title: str | None = None,
    language: str = "zh-hans",
    name: str = "8p8d",
    discount: str = "0.05",
    workload: dict[str, Any] | None = None,
):
    """Create the reference quote through the quote services; returns its first revision."""
    from quotes.services.quotes import quote_create_from_configuration

    if title is None:
        title = TITLES[name][1 if is_zh(language) else 0]
    quote = quote_create_from_configuration(
        by=by,
        customer=customer,
        title=title,
        language=language,
        discount=discount,
        **sample_plan_kwargs(name, discount=discount, workload=workload),
    )
    return quote.revisions.order_by("index").first()
