"""The plan JSON of every seeded configuration is what ``tests/golden/plans/`` recorded (issue 20).

A safety net for the restructuring of the engine (figure book, seed files, typed results): each
golden file holds a request (the topologies of docs/domain.md §4 on the seeded platforms, and the
five scenario presets as the page's form plans them) and the ``plan_to_dict`` JSON it gave.  This
test re-plans the recorded request against the seeded catalog and compares the whole document:
strings, booleans, keys and list lengths exactly, numbers to a relative tolerance of 1e-9 (so float
summation order cannot fail it, and any real change of a figure does).

The files were taken before the figure book (issue 20) and are kept as they were: the book writes
each figure's formula from its catalogue entry, over the names of its inputs, so the comparison
skips ``figures.*.formula`` text and accepts inputs *added* to a figure (a formula that now names
what it was computed from); every value, unit, label, source and every input the figure already
had must be as recorded.  ``INTENDED`` lists the few other differences the restructuring made on
purpose, each with its reason.

When a change to a figure is intended, refresh the files with ``scripts/update_golden.py`` and list
every changed figure with its reason in the commit message (``git diff tests/golden/plans`` shows
them); a golden file refreshed without that list hides exactly what this test exists to show.

Needs the database only because the seeded catalog is loaded there (``load_catalog``).
"""

from __future__ import annotations

import ast
import json
import math
import re
from pathlib import Path
from typing import Any

import pytest

from tests.golden import golden_cases

pytestmark = pytest.mark.django_db
GOLDEN = Path(__file__).resolve().parent / "plans"
REL_TOL = 1e-9
FILES = sorted(GOLDEN.glob("*.json"))


@pytest.fixture(autouse=True)
def _fresh_catalog_cache():
    """Plan from the seeded rows, never from rows another test changed and rolled back in this process."""
    from configurator.port import cache as catalog_cache

    catalog_cache.clear()


#: Differences made on purpose by the restructuring: (path regex, old, new) → reason.
INTENDED: dict[tuple[str, Any, Any], str] = {
    (r"\$\.figures\.performance\.[^ ]+\.bytes_per_step_per_rank\.unit$", "bytes", "B"): (
        "one unit for bytes: every other byte figure says B (Unit.BYTES)"
    ),
}

# Figure labels that showed a serving group's code ("cluster-a: IT load") now name the group as the
# page does (configurator/engine/vocabulary.py: "Cluster A: IT load", "集群 A：IT 负载").  The names
# are written out here, not imported, so that the vocabulary cannot drift unseen.
_GROUP_NAMES = {
    "cluster": ("Cluster", "集群"),
    "cluster-a": ("Cluster A", "集群 A"),
    "cluster-b": ("Cluster B", "集群 B"),
    "prefill": ("Prefill (P)", "预填充（P）"),
    "decode": ("Decode (D)", "解码（D）"),
}
_GROUP_LABELS = (  # figure key pattern, English label, Chinese label ("{}" is the group)
    ("power.group.{}.servers_kw", "{}: servers", "{}：服务器功耗"),
    ("power.group.{}.it_kw", "{}: IT load", "{}：IT 负载"),
    ("network.cross_node.{}.link_gbps", "{}: cross-node link speed", "{}：跨节点链路速率"),
)
for _key, _en, _zh in _GROUP_LABELS:
    for _code, (_name_en, _name_zh) in _GROUP_NAMES.items():
        _path = r"\$\.figures\." + re.escape(_key.format(_code))
        _reason = f"{_key.format('<group>')}: the group as the page names it, not its code"
        INTENDED[(_path + r"\.label_en$", _en.format(_code), _en.format(_name_en))] = _reason
        INTENDED[(_path + r"\.label_zh$", _zh.format(_code), _zh.format(_name_zh))] = _reason

_FIGURE_FORMULA = re.compile(r"^\$\.figures\.[^ ]+\.formula$")
_FIGURE_INPUT_ADDED = re.compile(r"^\$\.figures\.[^ ]+\.inputs\.[^.]+: added$")


_PERFORMANCE_LABEL = re.compile(r"^\$\.figures\.performance\.([a-z-]+)\.[a-z_0-9]+\.label_(en|zh)$")


def _group_named(path: str, change: str) -> bool:
    """A performance figure's label whose leading group code became the group's name, nothing else."""
    m = _PERFORMANCE_LABEL.match(path)
    if not m or m.group(1) not in _GROUP_NAMES:
        return False
    code, lang = m.groups()
    name = _GROUP_NAMES[code][0 if lang == "en" else 1]
    colon = ": " if lang == "en" else "："
    for m in re.finditer(" → ", change):  # the labels may hold an arrow of their own
        try:
            old_text = ast.literal_eval(change[: m.start()])
            new_text = ast.literal_eval(change[m.end() :])
        except (ValueError, SyntaxError):
            continue
        return (
            isinstance(old_text, str)
            and old_text.startswith(code + colon)
            and new_text == name + colon + old_text[len(code + colon) :]
        )
    return False


def _intended(diff: str) -> bool:
    if _FIGURE_INPUT_ADDED.match(diff):
        return True
    path, _, change = diff.partition(": ")
    if _group_named(path, change):
        return True
    if _FIGURE_FORMULA.match(path):
        return True
    for (pattern, old, new), _reason in INTENDED.items():
        if re.match(pattern, path) and change == f"{old!r} → {new!r}":
            return True
    return False


def _differences(old: Any, new: Any, path: str = "$") -> list[str]:
    """Where ``new`` differs from ``old`` (numbers within ``REL_TOL`` are equal)."""
    if isinstance(old, bool) or isinstance(new, bool):
        return [] if old is new else [f"{path}: {old!r} → {new!r}"]
    if isinstance(old, int | float) and isinstance(new, int | float):
        same = math.isclose(old, new, rel_tol=REL_TOL, abs_tol=0.0) or (math.isnan(old) and math.isnan(new))
        return [] if same else [f"{path}: {old!r} → {new!r}"]
    if isinstance(old, dict) and isinstance(new, dict):
        out = [f"{path}.{k}: removed" for k in sorted(old.keys() - new.keys())]
        out += [f"{path}.{k}: added" for k in sorted(new.keys() - old.keys())]
        for k in sorted(old.keys() & new.keys()):
            out += _differences(old[k], new[k], f"{path}.{k}")
        return out
    if isinstance(old, list) and isinstance(new, list):
        out = [] if len(old) == len(new) else [f"{path}: {len(old)} items → {len(new)}"]
        for i, (a, b) in enumerate(zip(old, new, strict=False)):
            out += _differences(a, b, f"{path}[{i}]")
        return out
    return [] if old == new and type(old) is type(new) else [f"{path}: {old!r} → {new!r}"]


def test_the_comparison_sees_real_changes_and_ignores_rounding_noise():
    base = {"figures": {"memory.kv_tokens": {"value": 1_234_567, "inputs": {"util": 0.9}}}, "ok": True}
    noise = {
        "figures": {"memory.kv_tokens": {"value": 1_234_567 * (1 + 1e-12), "inputs": {"util": 0.9}}},
        "ok": True,
    }
    assert _differences(base, noise) == []
    changed = {"figures": {"memory.kv_tokens": {"value": 1_234_568, "inputs": {"util": 0.9}}}, "ok": True}
    assert _differences(base, changed) == ["$.figures.memory.kv_tokens.value: 1234567 → 1234568"]
    assert _differences({"ok": True, "a": [1]}, {"ok": 1, "b": [1, 2]}) == [
        "$.a: removed",
        "$.b: added",
        "$.ok: True → 1",
    ]
    assert _differences("3.00", "3.0") == ["$: '3.00' → '3.0'"]


def test_only_formula_text_and_added_inputs_are_forgiven():
    """The comparison forgives a figure's formula wording and a newly named input, nothing else."""
    assert _intended(
        "$.figures.layout.total_devices.formula: 'nodes × devices per node' → 'nodes × devices_per_node'"
    )
    assert _intended("$.figures.layout.nodes.inputs.nodes: added")
    assert not _intended("$.figures.layout.nodes.inputs.nodes: removed")
    assert not _intended("$.figures.layout.nodes.value: 4 → 5")
    assert not _intended("$.figures.layout.nodes.inputs.nodes: 4 → 5")
    assert not _intended("$.figures.layout.nodes.label_en: 'Nodes' → 'Node count'")
    assert not _intended("$.layout.formula: 'a' → 'b'")
    # A performance label may name its group instead of the code, and change nothing else.
    assert _intended(
        "$.figures.performance.cluster-a.decode_step_s.label_en: "
        "'cluster-a: decode step time (estimate)' → 'Cluster A: decode step time (estimate)'"
    )
    assert _intended(
        "$.figures.performance.decode.tpot_s.label_zh: 'decode：每字延迟' → '解码（D）：每字延迟'"
    )
    assert not _intended(
        "$.figures.performance.cluster-a.decode_step_s.label_en: "
        "'cluster-a: decode step time (estimate)' → 'Cluster A: decode step (estimate)'"
    )


def test_every_seeded_configuration_has_a_golden_file():
    """The files cover the seven seeded topologies/platforms and the five scenario presets."""
    names = {p.stem for p in FILES}
    expected = set(golden_cases.TOPOLOGIES) | {f"scenario-{s}" for s in golden_cases.SCENARIOS}
    assert names == expected


def test_the_recorded_requests_are_the_seeded_configurations(catalog):
    """A file's request is the case's request today (a renamed slug or changed preset shows here first)."""
    requests = golden_cases.all_requests()
    for path in FILES:
        assert json.loads(path.read_text(encoding="utf-8"))["request"] == json.loads(
            json.dumps(requests[path.stem])
        ), path.stem


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_the_plan_is_unchanged(catalog, path):
    recorded = json.loads(path.read_text(encoding="utf-8"))
    plan = golden_cases.plan_json(recorded["request"])
    diffs = [d for d in _differences(recorded["plan"], plan) if not _intended(d)]
    shown = "\n".join(diffs[:40]) + (f"\n… and {len(diffs) - 40} more" if len(diffs) > 40 else "")
    assert not diffs, f"{path.name}: the plan changed ({len(diffs)} differences):\n{shown}"
