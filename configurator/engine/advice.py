"""Advice proven before it is offered: a check keeps its ``fix`` only when the plan made with it is better.

``plan()`` lets every check suggest a change (``Check.fix``: request path → value).  A suggestion
is a hypothesis: setting ``max_num_seqs`` to what fits full-length requests can cut the capacity
below the load, a P:D split balanced at one load is unbalanced at another, two checks can ask for
two values of one field.  :func:`advise` re-plans the request with each suggestion, through the
caller's ``replan`` (which applies the fix to the request exactly as an API client would, so a
fix offered is a fix that works when typed in), and keeps it only when:

* the finding it answers is gone from the new plan,
* no error appears that the plan did not have,
* the capacity (concurrent requests served at once, and the design point's concurrency) does
  not fall below the stated load where it was not already below it;
* the settings keep serving the design capacity the page sells: a fix that lowers the requests
  served at once may not take them below the design point (or what was served, if less) — so the
  memory check's "max_num_seqs to what fits full-length requests" is never offered against the
  recommended serving settings that carry the design point, and the two cannot undo each other.
  A best-effort design point (no setting of the request meets the targets) is no such floor for a
  fix whose plan meets the targets: its capacity within them only has to carry the stated load.

A suggestion that changes the customer's requirement (the load, the request lengths, the
context) is not a fix of the deployment: it moves to ``Check.requirement`` ("change the
requirement"), proven the same way but without the capacity rule.  Two checks asking for
different values of one field are merged: the value that clears the most of their findings is
offered to each check it clears, the other checks keep their text only.  The plan's own proposal
(the recommended serving settings, ``extra``: the one place a P:D split is proposed) is the value of
every field it sets: a check asking another value is offered the proposal when the proposal clears
its finding, else keeps its text only.  A dropped fix whose text
names the value it set loses that text too, so no page prints a change that was refused.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping
from typing import Any

from .types import Check, PlanResult, Severity

#: Request paths that state the customer's requirement rather than the deployment's settings.
REQUIREMENT_PATHS = frozenset(
    {
        "workload.concurrency",
        "workload.input_tokens",
        "workload.output_tokens",
        "workload.needs_vision",
        "serving.max_model_len",
    }
)

Replan = Callable[[Mapping[str, Any]], PlanResult | None]


@dataclasses.dataclass(frozen=True)
class _Proof:
    codes: frozenset[str]  # warnings and errors of the plan made with the fix
    errors: frozenset[str]
    capacity: int
    design: int
    meets: bool = False  # the design point is within the targets (no best effort)


def _key(fix: Mapping[str, Any]) -> str:
    return json.dumps(dict(fix), sort_keys=True, default=str)


def _capacity(result: PlanResult) -> tuple[int, int]:
    perf = result.performance
    if perf is None:
        return 0, 0
    design = perf.design_point.concurrency if perf.design_point is not None else perf.capacity_concurrency
    return perf.capacity_concurrency, design


def _meets(result: PlanResult) -> bool:
    dp = result.performance.design_point if result.performance is not None else None
    return dp is not None and not dp.best_effort and not dp.unmet_targets


def _proof(result: PlanResult) -> _Proof:
    capacity, design = _capacity(result)
    return _Proof(
        frozenset(c.code for c in result.checks if c.severity != Severity.OK),
        frozenset(c.code for c in result.checks if c.severity == Severity.ERROR),
        capacity,
        design,
        _meets(result),
    )


def is_requirement(fix: Mapping[str, Any]) -> bool:
    return any(path in REQUIREMENT_PATHS for path in fix)


def _clears(check: Check, proof: _Proof | None, before: PlanResult, *, requirement: bool) -> bool:
    if proof is None:
        return False
    if check.code in proof.codes:
        return False
    errors_before = {c.code for c in before.checks if c.severity == Severity.ERROR}
    if proof.errors - errors_before:
        return False
    if requirement:
        return True
    stated = before.request.workload.concurrency
    capacity, design = _capacity(before)
    # What the plan sells is its design point; the settings must keep serving it (module doc). A
    # best-effort design point, outside the targets, is no floor for a fix that meets them.
    floor = stated if proof.meets and not _meets(before) else max(stated, min(capacity, design))
    if proof.capacity < capacity and proof.capacity < floor:
        return False
    return not (proof.design < design and proof.design < stated)


def _names_value(text: str, fix: Mapping[str, Any]) -> bool:
    return any(str(v) in text for v in fix.values() if not isinstance(v, bool) and str(v))


def _without_fix(check: Check) -> Check:
    if not check.fix:
        return check
    if _names_value(check.fix_en, check.fix):
        return dataclasses.replace(check, fix={}, fix_en="", fix_zh="")
    return dataclasses.replace(check, fix={})


def advise(result: PlanResult, replan: Replan, extra: tuple[Check, ...] = ()) -> PlanResult:
    """``result`` with every fix proven (module doc); ``extra`` checks (e.g. the recommended serving
    settings) are added and proven the same way."""
    checks = [*result.checks, *extra]
    proofs: dict[str, _Proof | None] = {}

    def proof_of(fix: Mapping[str, Any]) -> _Proof | None:
        key = _key(fix)
        if key not in proofs:
            after = replan(fix)
            proofs[key] = _proof(after) if after is not None else None
        return proofs[key]

    # 1. every suggestion, proven on its own
    cleared: dict[int, bool] = {}
    for i, c in enumerate(checks):
        if not c.fix:
            continue
        cleared[i] = _clears(c, proof_of(c.fix), result, requirement=is_requirement(c.fix))

    # 2. conflicting suggestions (one path, two values): the value clearing most of their findings
    offered: dict[int, int] = {i: i for i, ok in cleared.items() if ok}  # check → the check whose fix it gets
    by_path: dict[str, set[int]] = {}
    for i in cleared:
        if i >= len(result.checks):
            continue  # an added proposal stands on its own proof (it is no finding another fix clears)
        for path in checks[i].fix:
            by_path.setdefault(path, set()).add(i)
    for members in by_path.values():
        values = {_key({p: v}) for i in members for p, v in checks[i].fix.items() if p in checks[i].fix}
        owners = {_key(checks[i].fix): i for i in sorted(members, reverse=True)}  # first check per fix
        if len(owners) < 2 or len(values) < 2:
            continue
        scores = []
        for owner in sorted(owners.values()):
            fix = checks[owner].fix
            req_fix = is_requirement(fix)
            wins = [
                i for i in sorted(members) if _clears(checks[i], proof_of(fix), result, requirement=req_fix)
            ]
            scores.append((len(wins), -owner, owner, wins))
        scores.sort(key=lambda s: (s[0], s[1]), reverse=True)
        _, _, best, wins = scores[0]
        for i in members:
            if i in wins:
                offered[i] = best
            else:
                offered.pop(i, None)

    # 2b. the plan's own proposals (``extra``: the recommended serving settings, which carry the P:D split)
    # are the one value of each field they set: a check asking another value of one of them is offered
    # the proposal when the proposal clears its finding, else keeps its text only.
    n = len(result.checks)
    for j in range(n, len(checks)):
        if offered.get(j) != j:
            continue  # a proposal not proven is offered nowhere
        proposal = checks[j].fix
        for i in range(n):
            given = offered.get(i)
            if given is None:
                continue
            asked = checks[given].fix
            if not any(p in proposal and _key({p: v}) != _key({p: proposal[p]}) for p, v in asked.items()):
                continue
            if _clears(checks[i], proof_of(proposal), result, requirement=is_requirement(proposal)):
                offered[i] = j
            else:
                offered.pop(i, None)

    # 3. the checks as offered
    out: list[Check] = []
    for i, c in enumerate(checks):
        if i not in cleared:
            out.append(c)
            continue
        given = offered.get(i)
        if given is None:
            if i < len(result.checks):
                out.append(_without_fix(c))
            continue
        source = checks[given]
        if given != i:  # merged: the fix and its words are the other check's
            c = dataclasses.replace(c, fix=source.fix, fix_en=source.fix_en, fix_zh=source.fix_zh)
        if is_requirement(c.fix):
            c = dataclasses.replace(c, fix={}, requirement=dict(c.fix))
        out.append(c)
    return dataclasses.replace(result, checks=tuple(out))
