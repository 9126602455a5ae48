"""The TCO numbers the page shows beside its tables are figures of the engine's book, not dicts the
page builds (configurator/presentation.py used to make them up as ``page.*`` keys).

Expected values are computed here from the seed: Kimi K3's public API price is $3 / $15 per million
input / output tokens (catalog/seed/models.yaml, S1 §3.3), converted at the request's USD rate; the
lease side pays the same electricity as buying unless the lease includes power.
"""

from __future__ import annotations

from decimal import Decimal

from configurator import reference


def _plan(name: str, **commercial):
    data = reference.case(name)
    data["commercial"] = {**data["commercial"], **commercial}
    req, result = reference.advised_plan(data)
    return req, result.tco


def test_api_prices_are_the_models_usd_prices_at_the_usd_rate():
    req, tco = _plan("a3-4-single")
    rate = req.commercial.usd_rate
    for side, usd in (("input", Decimal("3")), ("output", Decimal("15"))):
        figure = tco.figures[f"tco.tokens.api_price_{side}_per_m"]
        assert Decimal(str(figure.value)) == (usd * rate).quantize(Decimal("0.01"))
        assert figure.inputs["api_price"] == usd and figure.inputs["currency_factor"] == rate
        assert figure.source.kind == "seed" and "S1 §3.3" in figure.source.ref


def test_lease_electricity_is_the_buy_sides_unless_the_lease_includes_power():
    _, tco = _plan("a3-4-single", lease_includes_power=False)
    separate = tco.figures["tco.annual.lease_electricity"]
    assert separate.value == tco.figures["tco.annual.electricity"].value
    _, tco = _plan("a3-4-single", lease_includes_power=True)
    assert tco.figures["tco.annual.lease_electricity"].value == 0


def test_every_sensitivity_row_is_a_figure_with_its_three_costs():
    _, tco = _plan("a3-4-single")
    assert tco.sensitivity
    for row in tco.sensitivity:
        figure = tco.figures[f"tco.sensitivity.{row.parameter}.{row.basis}"]
        assert figure.value == row.cost_at_base
        assert (figure.inputs["cost_at_low"], figure.inputs["cost_at_high"]) == (
            row.cost_at_low,
            row.cost_at_high,
        )
        assert figure.inputs["low_value"] < figure.inputs["base_value"] < figure.inputs["high_value"] or (
            row.parameter == "utilisation" and figure.inputs["high_value"] == 1
        )
