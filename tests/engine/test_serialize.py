"""JSON shaping of engine results."""

import json
import math
from dataclasses import dataclass, field, replace
from decimal import Decimal
from types import MappingProxyType

import pytest

from configurator import reference
from configurator.engine.explain import gb, plural, thousands
from configurator.engine.figures import FigureBook
from configurator.engine.layout import resolve_layout
from configurator.engine.memory import size_memory
from configurator.engine.serialize import plan_to_dict, to_jsonable
from configurator.engine.types import MemoryResult, ParallelSpec, PlanResult, Severity, TopologyKind

# One A2 node (resolves to TP8 / DP1): not a seeded case, because K3 does not fit on it ([S1]).
A2_ONE_NODE = {"model": "kimi-k3", "server": "atlas-800-a2", "topology": {"kind": "single", "nodes": 1}}


def partial_plan(req):
    """A PlanResult with only the sections this engine core computes."""
    layout = resolve_layout(req)
    memory = size_memory(req, layout)
    return PlanResult(req, layout, memory=memory, checks=(*layout.checks, *memory.checks))


def test_scalars_decimals_enums_and_containers():
    assert to_jsonable(Decimal("3000000.00")) == "3000000.00"
    assert to_jsonable(TopologyKind.DISAGGREGATED) == "disaggregated"
    assert to_jsonable(Severity.WARNING) == "warning"
    assert to_jsonable((1, 2, (3,))) == [1, 2, [3]]
    assert to_jsonable(MappingProxyType({"a": Decimal("1.5")})) == {"a": "1.5"}
    assert to_jsonable({TopologyKind.SINGLE: 1}) == {"single": 1}
    assert to_jsonable(None) is None and to_jsonable(True) is True and to_jsonable(0.5) == 0.5


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, Decimal("NaN"), Decimal("Infinity")])
def test_non_finite_numbers_raise(bad):
    with pytest.raises(ValueError):
        to_jsonable({"x": [bad]})


def test_dataclasses_include_their_properties():
    p = to_jsonable(ParallelSpec(tp=16, dp=4))
    assert p == {
        "tp": 16,
        "dp": 4,
        "pp": 1,
        "expert_parallel": True,
        "dp_local": 1,
        "ep": 64,
        "world_size": 64,
    }
    server = to_jsonable(reference.server("atlas-800-a3"))
    assert server["logical_devices"] == 16 and server["memory_bytes"] == 16 * 64 * 10**9


def test_unknown_types_raise_type_error():
    with pytest.raises(TypeError):
        to_jsonable(object())


def test_a_whole_request_is_json_safe():
    data = to_jsonable(reference.request(reference.CASES["a3-16-8p8d"]))
    text = json.dumps(data, ensure_ascii=False, allow_nan=False)
    back = json.loads(text)
    assert back["topology"]["kind"] == "disaggregated"
    # catalog/seed/price_lists.yaml cny-2026, SRV-ATLAS-800-A3 unit_price 3000000.00 (S1 §6.3 / §7 path B:
    # ≈¥24 M for 8 × A3); the seed's Decimal keeps the database's two places and the JSON keeps them.
    assert back["commercial"]["server_unit_price"] == "3000000.00"
    assert back["model"]["weight_bytes"] == 1_560_936_091_448


def test_plan_to_dict_shape_for_k3_on_four_a3():
    # max_num_seqs 16 stated (the K3 Atlas A3 tutorial's): one left to the defaults is sized to the KV
    # cache (engine/memory.py size_admission); the shape is the same
    case = {**reference.CASES["a3-4-single"], "serving": {"max_num_seqs": 16}}
    result = partial_plan(reference.request(case))
    data = plan_to_dict(result)
    json.dumps(data, allow_nan=False)
    assert set(data) == {
        "ok", "checks", "layout", "memory", "power", "racks", "network", "performance", "tco", "launch", "economics", "serving",
        "figures",
    }  # fmt: skip
    assert data["ok"] is True
    warning = next(c for c in data["checks"] if c["code"] == "memory.max_num_seqs_not_full_length")
    assert set(warning) >= {"code", "severity", "area", "message", "message_zh", "field", "fix", "figures"}
    assert warning["severity"] == "warning" and warning["area"] == "memory"
    # 16 sequences × max_model_len 131,072 (the API's default, 128 Ki tokens)
    assert warning["message"].startswith("The cluster: 16 × 131,072")

    per_rank = data["memory"]["per_rank"]
    rank = result.memory.groups[0].per_rank
    assert per_rank["weights_bytes"] == rank.weights_bytes
    assert per_rank["kv_cache_bytes"] == rank.kv_cache_bytes
    assert per_rank["kv_tokens"] == rank.kv_tokens
    assert data["memory"]["group"] == "cluster"
    assert len(data["memory"]["groups"]) == 1
    assert data["memory"]["groups"][0]["per_rank"] == per_rank

    layout = data["layout"]
    assert "figures" not in layout and "checks" not in layout
    assert layout["groups"][0]["parallel"]["ep"] == 64

    f = data["figures"]["memory.per_rank.kv_cache_bytes"]
    assert f["value"] == rank.kv_cache_bytes
    assert f["source"] == {"kind": "public", "ref": f["source"]["ref"]}
    assert data["figures"]["layout.cluster.experts_per_rank"]["value"] == 14
    assert data["power"] is None and data["tco"] is None


def test_plan_to_dict_reports_errors_and_keeps_every_group():
    data = plan_to_dict(partial_plan(reference.request(A2_ONE_NODE)))
    assert data["ok"] is False
    err = next(c for c in data["checks"] if c["code"] == "memory.weights_do_not_fit")
    assert err["fix"]["topology.nodes"] > 1
    pair = plan_to_dict(partial_plan(reference.request(reference.CASES["a3-8-tenant-pair"])))
    assert [g["group"] for g in pair["memory"]["groups"]] == ["cluster-a", "cluster-b"]


def test_plan_to_dict_refuses_a_nan_figure():
    req = reference.request(reference.CASES["a3-4-single"])
    result = partial_plan(req)
    # A real figure whose value went NaN (as a division by a zero capacity would make it).
    nan = FigureBook().put("layout.total_devices", math.nan, nodes=4, devices_per_node=math.nan)
    broken = replace(result.memory, figures={nan.key: nan})
    with pytest.raises(ValueError):
        plan_to_dict(replace(result, memory=broken))


def test_sections_without_figures_still_serialise():
    @dataclass(frozen=True)
    class Power:
        total_kw: float
        feeds: tuple = ()
        figures: dict = field(default_factory=dict)

    req = reference.request(reference.CASES["a3-4-single"])
    result = replace(partial_plan(req), power=Power(64.8, ("A", "B")), memory=MemoryResult(()))
    data = plan_to_dict(result)
    assert data["power"] == {"total_kw": 64.8, "feeds": ["A", "B"]}
    assert data["memory"] == {"group": None, "per_rank": None, "groups": []}


def test_number_formatting_helpers():
    assert thousands(133_120) == "133,120"
    assert gb(29_750_000_000) == "29.8 GB"
    assert gb(138_218_761_431) == "138.2 GB"
    assert plural(1, "node") == "1 node" and plural(4, "node") == "4 nodes"


@pytest.mark.parametrize("name", ["a3-4-single", "a3-16-8p8d", "nf5868g8-2-single", "a3-8-primary-standby"])
def test_the_drawn_parts_of_a_stored_plan_read_back_as_the_engines_types(name):
    """A rank's memory, a serving group and a rack read back from the plan dict give that dict again.

    The page and the PDF draw a frozen plan from these (configurator/web/presentation.py); the derived
    properties stored beside the fields (``top_u``, ``ep``, ``exceeds_cooling`` …) are recomputed.
    """
    from configurator.engine.plan import plan
    from configurator.engine.serialize import (
        group_layout_from_dict,
        rack_layout_from_dict,
        rank_memory_from_dict,
    )

    stored = json.loads(json.dumps(plan_to_dict(plan(reference.request(reference.CASES[name])))))
    flattened = ("figures", "checks")
    for group in stored["memory"]["groups"]:
        assert to_jsonable(rank_memory_from_dict(group["per_rank"])) == group["per_rank"]
    for group in stored["layout"]["groups"]:
        assert to_jsonable(group_layout_from_dict(group), drop=flattened) == group
    assert stored["racks"]["racks"]
    for rack in stored["racks"]["racks"]:
        assert to_jsonable(rack_layout_from_dict(rack), drop=flattened) == rack


@pytest.mark.parametrize("name", sorted(reference.CASES))
def test_the_fast_conversion_gives_what_the_path_keeping_one_gives(name):
    """to_jsonable converts without building each value's path (serialize._fast) and falls back to the
    path-keeping converter only to word an error: on every reference plan both give the same JSON,
    key order included."""
    from configurator.engine.plan import plan
    from configurator.engine.serialize import _careful

    result = plan(reference.request(reference.CASES[name]))
    for section in (result.layout, result.memory, result.performance, result.tco, result.launch, result):
        fast = to_jsonable(section, drop=("figures", "checks"))
        careful = _careful(section, drop=("figures", "checks"))
        assert json.dumps(fast, allow_nan=False) == json.dumps(careful, allow_nan=False)


def test_a_value_json_cannot_carry_is_named_by_its_path():
    @dataclass(frozen=True)
    class Inner:
        values: tuple = ()

    @dataclass(frozen=True)
    class Outer:
        inner: Inner = field(default_factory=Inner)

    with pytest.raises(ValueError, match=r"^inner\.values\[1\] is nan"):
        to_jsonable(Outer(Inner((1.0, math.nan))))
    with pytest.raises(TypeError, match=r"^inner\.values\[0\]: cannot convert object"):
        to_jsonable(Outer(Inner((object(),))))
