"""Every figure of every seeded plan is what its catalogue formula gives over the inputs it was put with.

The figure book (``configurator/engine/figures``) writes each figure's formula once, in the
catalogue, as an expression over named inputs; ``put`` refuses inputs the formula does not name.
Here the formulas are *evaluated*: for the seeded configurations of ``golden_cases`` every figure
whose formula is an expression over numbers must equal the value the engine computed (to 1e-6
relative, or a cent for money).  A definition that cannot be recomputed from its inputs says why
in ``approximate``; prose formulas are checked for their names only.
"""

from __future__ import annotations

import math

import pytest

from configurator.engine.figures import FigureBook
from tests.golden import golden_cases

pytestmark = pytest.mark.django_db


@pytest.fixture
def observed():
    from configurator.port import cache as catalog_cache

    catalog_cache.clear()
    seen: list = []
    FigureBook.observer = lambda definition, variant, figure: seen.append((definition, variant, figure))
    try:
        yield seen
    finally:
        FigureBook.observer = None


def test_every_expression_formula_gives_the_value_the_engine_put(catalog, observed):
    requests = golden_cases.all_requests()
    for request in requests.values():
        golden_cases.plan_json(request)
    assert len(observed) > 100
    wrong, checked = [], 0
    for definition, variant, figure in observed:
        formula = definition.formula_for(variant)
        if definition.approximate:
            continue
        expected = definition.evaluate(variant, figure.inputs)
        if expected is None:
            continue
        value = figure.value
        if isinstance(value, bool) or not isinstance(value, int | float) and not hasattr(value, "as_tuple"):
            continue
        checked += 1
        if not math.isclose(float(value), expected, rel_tol=1e-6, abs_tol=0.006):
            wrong.append(
                f"{figure.key}: put {value!r}, {formula.text} = {expected!r} over {dict(figure.inputs)}"
            )
    assert checked > 0
    assert not wrong, "\n".join(wrong[:40])
