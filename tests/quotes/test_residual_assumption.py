"""The residual value is a stated assumption with its source and its effect (the TCO with and without
it), read from the plan's own figures.

16 × Atlas 800 A3 at the seeded list price of ¥3,000,000 a server (catalog/seed/price_lists.yaml), no
quote discount, 3-year horizon, 5-year depreciation: the default residual is the straight-line book
value 1 − 3 ÷ 5 = 40 % (configurator.engine.tco.lease.book_value_fraction) = ¥19,200,000.
"""

from __future__ import annotations

from decimal import Decimal

from configurator import reference
from configurator.engine.plan import plan
from configurator.engine.serialize import plan_to_dict, to_jsonable
from documents.pdf.context import _residual


def _planned(commercial: dict | None = None):
    request = reference.case("a3-16-8p8d")
    if commercial:
        request = {**request, "commercial": {**request["commercial"], **commercial}}
    req = reference.request(request)
    return request, to_jsonable(req), plan_to_dict(plan(req))


def test_the_default_residual_is_the_book_value_and_its_effect_is_stated():
    request, resolved, data = _planned()
    r = _residual(data["figures"], resolved, request)
    servers = Decimal(16 * 3_000_000)
    assert r["fraction"] == 0.4 and r["stated"] is False and r["depreciation_years"] == 5
    assert Decimal(str(r["amount"])) == servers * Decimal("0.4") == Decimal(19_200_000)
    with_it, without = Decimal(str(r["tco_with"])), Decimal(str(r["tco_without"]))
    assert with_it == Decimal(data["tco"]["buy_total"])
    assert without - with_it == Decimal(19_200_000)


def test_a_stated_residual_says_so_and_none_says_nothing_is_recovered():
    request, resolved, data = _planned({"residual_value_fraction": "0.1"})
    r = _residual(data["figures"], resolved, request)
    assert r["stated"] is True and Decimal(str(r["amount"])) == Decimal(4_800_000)
    request, resolved, data = _planned({"residual_value_fraction": "0"})
    assert _residual(data["figures"], resolved, request) is None
