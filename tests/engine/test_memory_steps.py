"""The steps that put one group's memory figures and raise its checks (engine/memory.py), each on its own.

Every expectation is what the full ``size_memory`` records for the same request: each step puts exactly
its part of the group's figures, in the order the full sizing records them, and a check step raises the
check the full sizing raises.
"""

from __future__ import annotations

import dataclasses

import pytest

from configurator import reference
from configurator.engine import memory as mem
from configurator.engine.defaults import resolve_serving
from configurator.engine.engine_versions import ENGINE_LABELS, budget_rules
from configurator.engine.figures import FigureBook
from configurator.engine.layout import resolve_layout
from configurator.engine.speculative import role_request, speculator, with_draft
from configurator.engine.types import Figure

CASES = sorted(reference.CASES)


def _prepared(case: str, **serving):
    req = reference.request(reference.case(case))
    req = dataclasses.replace(
        req, serving=resolve_serving(req.serving, req.server.accelerator.software_stack)
    )
    if serving:
        req = dataclasses.replace(req, serving=dataclasses.replace(req.serving, **serving))
    req = with_draft(req)
    layout = resolve_layout(req)
    return mem.size_admission(req, layout), layout


def _first_group(req, layout):
    """The first group of the layout as size_memory sizes it: its role's request, the names of the groups
    of its shape, the group, its budget and its GroupMemory."""
    groups, computed, signatures = mem._size_groups(req, layout)
    g = layout.groups[0]
    b = computed[(g.parallel, g.role == "prefill")][0]
    names = [m.name for m in next(iter(signatures.values()))]
    return role_request(req, g.role), names, g, b, groups[0]


def _steps(req, g, b, gm):
    """Each figure step as _group_figures calls it for the first group (``at`` = "")."""
    serving, p = req.serving, g.parallel
    rules = budget_rules(req.server.accelerator.software_stack, serving.engine, serving.vllm_version)
    label = f"{ENGINE_LABELS[rules.engine]} {serving.vllm_version}"
    draft = speculator(req, serving.speculative)
    return [
        lambda book: mem._device_figures(book, req, "", b),
        lambda book: mem._non_expert_weight_figures(book, req, "", p, b),
        lambda book: mem._expert_weight_figures(book, req, "", p, b, draft),
        lambda book: mem._activation_figures(book, req, "", p, b, label),
        lambda book: mem._buffer_figures(book, req, "", p, b),
        lambda book: mem._graph_and_kv_cache_figures(book, req, "", b, rules, label),
        lambda book: mem._kv_token_figures(book, req, "", p, b, draft),
        lambda book: mem._kv_pool_figures(book, req, "", p, b),
        lambda book: mem._group_total_figures(book, req, "", g, b, gm),
    ]


@pytest.mark.parametrize("case", CASES)
def test_each_figure_step_puts_its_part_of_the_groups_figures_in_the_full_order(case):
    req, layout = _prepared(case)
    full = list(mem.size_memory(req, layout).figures.items())
    role_req, _names, g, b, gm = _first_group(req, layout)
    parts: list[tuple[str, Figure]] = []
    for step in _steps(role_req, g, b, gm):
        book = FigureBook()
        step(book)
        assert len(book) > 0
        parts.extend(book.figures.items())
    # The first group's figures come first in the book; after them, another shape's (named by its group)
    # or the deployment's.
    assert parts == full[: len(parts)]
    later = tuple(f"memory.{x.name}." for x in layout.groups[1:])
    deployment = {"memory.deployment_weights_bytes", "memory.checkpoint_bytes"}
    assert all(k in deployment or k.startswith(later) for k, _ in full[len(parts) :])


@pytest.mark.parametrize("case", CASES)
def test_a_fitting_groups_last_checks_are_its_kv_room_checks(case):
    req, layout = _prepared(case)
    result = mem.size_memory(req, layout)
    role_req, names, _g, b, _gm = _first_group(req, layout)
    assert b.weights <= b.usable and b.fits_one_sequence()
    checks = mem._kv_room_checks(role_req, b, mem._who(names))
    assert checks[-1].code == "memory.kv_headroom"
    assert all(c in result.checks for c in checks)


def test_weights_that_do_not_fit_raise_the_check_the_full_sizing_raises():
    req, layout = _prepared("nf5868g8-2-single", gpu_memory_utilization=0.2)
    result = mem.size_memory(req, layout)
    role_req, names, g, b, _gm = _first_group(req, layout)
    assert b.weights > b.usable
    check = mem._weights_check(role_req, names, g, b, mem._who(names), max(64, 8 * g.nodes))
    assert check.code == "memory.weights_do_not_fit"
    assert check in result.checks
    assert mem._group_checks(role_req, names, g, b) == [check]


def test_who_names_one_group_or_each_of_several():
    assert mem._who(["cluster-a", "cluster-b"]) == ("Each cluster", "每个集群")
    en, zh = mem._who(["decode"])
    assert en[:1].isupper() and "decode" in en.lower() and zh
