"""TCO: buy vs lease, NPV, break-even, cost per million tokens and validation.

Expected money is recomputed here in Decimal from the seed's commercial
figures ([S1] §6.3 and §7: ¥24 M for 8 × A3, ¥2 M a year O&M, lease
¥0.8–1.2 M a month for 8 nodes) and docs/domain.md §7/§8 (electricity = IT kW ×
load factor × 8,760 h × PUE × price).  Requests are the seeded 8-node primary/standby case
(configurator/reference.py) on the seeded site (catalog/seed/sites.yaml cn-default: PUE 1.3,
¥0.65/kWh) with the commercial terms cut down to [S1]'s (see S1_MONEY)."""

from __future__ import annotations

import math
import subprocess
import sys
from dataclasses import replace
from decimal import ROUND_HALF_UP, Decimal

import pytest

from configurator import reference
from configurator.engine.layout import resolve_layout
from configurator.engine.network import SwitchUnit, size_network
from configurator.engine.performance import PerformanceResult
from configurator.engine.plan import plan
from configurator.engine.power import size_power
from configurator.engine.racks import place_racks
from configurator.engine.serialize import to_jsonable
from configurator.engine.tco import compute_tco, tco_tables, validate_commercial

CENT = Decimal("0.01")
# 8 × 16.2 kW max input [S1] × 0.8 load × 8,760 h × PUE 1.3 × ¥0.65/kWh
# (767,460.096), billed in whole cents half up, so the yearly rows add up to the horizon totals
# (issue 18: the workbook's formulas recompute those totals from the yearly rows to the cent).
ELECTRICITY_8 = (Decimal("129.6") * Decimal("0.8") * 8760 * Decimal("1.3") * Decimal("0.65")).quantize(
    CENT, rounding=ROUND_HALF_UP
)


# [S1] §6.3 / §7 path B: 8 × A3 ≈ ¥24 M (¥3 M each), O&M ¥2 M a year for 8 nodes, lease
# ¥0.8–1.2 M a month for 8 nodes (¥100–150 k per node-month).  The seeded price list
# (catalog/seed/price_lists.yaml cny-2026) holds the same server price, O&M, rates and horizon, but
# also prices switches, optics, racks, installation, software support, the gateway and checkpoint
# storage, and leases at ¥125 k; those are set to nothing (the lease to S1's low end) so the totals
# show exactly [S1]'s components plus electricity (the network and racks the engine places for the
# case are priced at 0 here, so they cost nothing: a line with no price at all would be "price on
# request" and withhold the totals, issue 30).
S1_MONEY = {
    "server_unit_price": "3000000",
    "server_lease_per_month": "100000",
    "om_per_year": "2000000",
    "switch_unit_prices": {
        "lingqu-630-v1": "0",
        "roce-400ge-access": "0",
        "roce-400ge-core": "0",
        "mgmt-1ge": "0",
        "eth-100ge-service": "0",
        "ce6866-48s8cq": "0",  # the service and storage planes' switch pair (the complete build, issue 26)
    },
    "optics_unit_price": "0",
    "media_unit_prices": {"cat6": "0", "fiber": "0", "25g-optics": "0", "10g-optics": "0"},
    "rack_unit_price": "0",
    "rack_unit_prices_by_cooling": {},
    "installation": "0",
    "software_support_per_year": "0",
    "gateways": 0,
    "storage_price_per_tb": "0",
}
PAIR = {**reference.CASES["a3-8-primary-standby"], "commercial": {**reference.COMMERCIAL, **S1_MONEY}}


def _seed_8node(**commercial):
    """The seeded 8 × A3 primary/standby case with [S1]'s money; ``commercial``: the terms a test varies."""
    req = reference.request(PAIR)
    # [S1]'s arithmetic: no residual value, and all 8 servers (the standby too) charged at the load
    # factor; the engine's own defaults (book value, standby at idle power) are tested in test_sizing.
    seed = {
        "residual_value_fraction": Decimal(0),
        "standby_power_load_factor": req.commercial.power_load_factor,
    }
    req = replace(req, commercial=replace(req.commercial, **{**seed, **commercial}))
    return req, resolve_layout(req)


def _s1_terms():
    return reference.request(PAIR).commercial


SEED_IT_KW = 8 * 16.2  # the seed's servers alone: 8 × 16.2 kW maximum input [S1] §2.1


def _tco(req, layout, performance=None, *, it_kw=SEED_IT_KW, switches=None, optics=None):
    """The TCO over the engine's own network, power and rack results for the request.

    ``it_kw`` replaces the power result's IT load (by default the seed's servers alone, so the
    electricity is the seed's arithmetic); ``switches`` (slugs, one per switch) and ``optics``
    replace what the network module placed, and then nothing else of the network is priced.
    """
    network = size_network(req, layout)
    power = size_power(req, layout, network)
    racks = place_racks(req, layout, power, network)
    power = replace(power, it_kw=it_kw)
    if switches is not None:
        units = tuple(_switch(slug) for slug in switches)
        network = replace(network, switches=units, switch_count=len(units), optics=optics or 0, media={})
    return compute_tco(req, layout, power, racks, network, performance)


def _switch(slug: str) -> SwitchUnit:
    return SwitchUnit(
        label=slug,
        slug=slug,
        model=slug,
        fabric="roce",
        role="scale_out",
        tier="single",
        groups=("cluster-a", "cluster-b"),
        rack_units=1,
        power_kw=0.0,
    )


def _codes(result) -> set[str]:
    return {c.code for c in result.checks}


def test_seed_8node_three_year_buy_shows_every_component_and_exceeds_the_seed_30m():
    req, layout = _seed_8node()
    result = _tco(req, layout)  # IT load: the seed's 8 × 16.2 kW servers
    assert result.valid and result.currency == "CNY"
    assert ELECTRICITY_8.quantize(CENT) == Decimal("767460.10")
    assert result.annual.electricity == ELECTRICITY_8.quantize(CENT)
    assert result.capex.servers == Decimal("24000000.00")  # 8 × ¥3 M [S1]
    assert result.capex.total == Decimal("24000000.00")
    assert result.annual.om == Decimal("2000000.00")  # [S1] path B
    expected_buy = Decimal(24_000_000) + 3 * Decimal(2_000_000) + 3 * ELECTRICITY_8
    assert result.buy_total == expected_buy.quantize(CENT) == Decimal("32302380.30")
    # [S1] §6.3 says "3-year TCO incl. electricity ≈ ¥30 M": the components alone exceed it (docs/domain.md §9)
    assert result.buy_total > Decimal("30000000")
    for key in (
        "tco.capex.servers",
        "tco.capex.total",
        "tco.annual.om",
        "tco.annual.electricity",
        "tco.annual.colocation",
        "tco.annual.software_support",
        "tco.buy_total",
        "tco.lease_total",
        "tco.npv_buy",
    ):
        fig = result.figures[key]
        assert fig.unit == "CNY" and fig.label_en and fig.label_zh
    elec = result.figures["tco.annual.electricity"]
    assert elec.inputs["it_kw"] == Decimal("129.60") and elec.inputs["pue"] == Decimal("1.3")
    assert result.figures["tco.it_load_kw"].source.ref == "power module"


@pytest.mark.parametrize("per_node_month", [Decimal("100000"), Decimal("150000")])
def test_seed_8node_three_year_lease_total(per_node_month):
    # ¥0.8–1.2 M a month for 8 nodes [S1] = ¥100–150 k per node-month; power is not in the lease.
    # Same scope as the purchase (issue 16): the lease side pays the same ¥2 M a year O&M [S1 path B];
    # [S1]'s money has no network, racks or installation, so nothing else is bought up front.
    req, layout = _seed_8node(server_lease_per_month=per_node_month)
    result = _tco(req, layout)
    expected = 8 * per_node_month * 36 + 3 * ELECTRICITY_8 + 3 * Decimal(2_000_000)
    assert result.lease_total == expected.quantize(CENT)
    assert result.annual.lease_rent == (8 * per_node_month * 12).quantize(CENT)
    assert result.annual.lease_om == Decimal("2000000.00")
    assert result.yearly[-1].lease_cumulative == expected.quantize(CENT)
    assert result.yearly[-1].buy_cumulative == result.buy_total
    assert result.lease_includes == ()


def test_lease_including_power_and_om_leaves_them_out_of_the_lease():
    req, layout = _seed_8node(lease_includes_power=True)
    result = _tco(req, layout)
    assert result.annual.lease_electricity == Decimal("0.00")
    assert result.lease_total == (8 * Decimal(100_000) * 36 + 3 * Decimal(2_000_000)).quantize(CENT)
    both = _tco(*_seed_8node(lease_includes_power=True, lease_includes_om=True))
    assert both.lease_total == (8 * Decimal(100_000) * 36).quantize(CENT)
    assert both.lease_includes == ("power", "om")


def test_lease_buys_the_same_network_racks_and_installation():
    """Only the servers differ between the columns: the rest of the purchase is bought on both sides."""
    req, layout = _seed_8node(
        server_lease_per_month=Decimal("125000"),
        switch_unit_prices={"lingqu-630-v1": Decimal("1200000")},
        rack_unit_price=Decimal("30000"),
        installation=Decimal("500000"),
        quote_discount=Decimal("0.10"),
    )
    result = _tco(req, layout, switches=["lingqu-630-v1"])
    assert result.rack_count == 4  # two 16.2 kW servers a rack (engine/racks.py)
    upfront = (Decimal(1_200_000) + 4 * Decimal(30_000) + Decimal(500_000)) * Decimal("0.9")
    assert result.lease_upfront == upfront.quantize(CENT)
    assert result.capex.total - result.lease_upfront == (Decimal(24_000_000) * Decimal("0.9")).quantize(CENT)
    year = 8 * Decimal(125_000) * 12 + ELECTRICITY_8 + Decimal(2_000_000)
    assert result.lease_total == (upfront + 3 * year).quantize(CENT)
    assert result.monthly[0].lease_cumulative == upfront.quantize(CENT)


def test_residual_value_is_an_input_recovered_at_the_end():
    req, layout = _seed_8node(
        server_lease_per_month=Decimal("125000"), residual_value_fraction=Decimal("0.05")
    )
    result = _tco(req, layout)
    residual = Decimal(24_000_000) * Decimal("0.05")  # 5 % of the servers' price
    assert result.residual_value == residual.quantize(CENT) == Decimal("1200000.00")
    plain = _tco(*_seed_8node(server_lease_per_month=Decimal("125000")))
    assert plain.buy_total - result.buy_total == residual.quantize(CENT)
    assert result.monthly[-1].buy_cumulative == result.buy_total  # recovered in the last month
    assert result.monthly[-2].buy_cumulative == plain.monthly[-2].buy_cumulative
    assert result.tokens is None or result.tokens.annual_cost_buy < plain.tokens.annual_cost_buy
    bad = _tco(*_seed_8node(residual_value_fraction=Decimal("1.5")))
    assert not bad.valid and "commercial.residual_out_of_range" in _codes(bad)


def test_break_even_month_is_the_first_month_buying_is_cheaper():
    req, layout = _seed_8node(server_lease_per_month=Decimal("150000"))
    result = _tco(req, layout)
    buy_monthly = (Decimal(2_000_000) + ELECTRICITY_8) / 12
    lease_monthly = (8 * Decimal(150_000) * 12 + ELECTRICITY_8 + Decimal(2_000_000)) / 12
    expected = math.ceil(Decimal(24_000_000) / (lease_monthly - buy_monthly))  # 24 M ÷ 1.2 M = 20
    assert result.break_even_month == expected == 20
    row = result.monthly[expected]
    assert row.buy_cumulative <= row.lease_cumulative
    before = result.monthly[expected - 1]
    assert before.buy_cumulative > before.lease_cumulative


def test_no_break_even_within_the_horizon_is_said_so():
    req, layout = _seed_8node(server_lease_per_month=Decimal("60000"))
    result = _tco(req, layout)
    # 24 M ÷ (8 × 60 k rent a month, the only difference between the columns) = 50 months > 36
    assert result.break_even_month is None
    assert result.figures["tco.break_even_month"].value == "none within horizon"
    assert "commercial.no_break_even" in _codes(result)
    five = _tco(*_seed_8node(server_lease_per_month=Decimal("60000"), horizon_years=5))
    assert five.break_even_month == 50
    assert len(five.monthly) == 61 and len(five.yearly) == 5


def test_npv_discounts_monthly_at_the_annual_rate():
    req, layout = _seed_8node(server_lease_per_month=Decimal("125000"))
    result = _tco(req, layout)
    monthly_rate = Decimal("1.08") ** (Decimal(1) / 12) - 1
    buy_monthly = (Decimal(2_000_000) + ELECTRICITY_8) / 12
    lease_monthly = (8 * Decimal(125_000) * 12 + ELECTRICITY_8 + Decimal(2_000_000)) / 12
    factors = sum(1 / (1 + monthly_rate) ** m for m in range(1, 37))
    assert result.npv_buy == (Decimal(24_000_000) + buy_monthly * factors).quantize(CENT)
    assert result.npv_lease == (lease_monthly * factors).quantize(CENT)
    assert result.npv_buy < result.buy_total  # discounting lowers later payments


def test_capex_lines_read_the_power_racks_and_network_results():
    # Every price here is this test's own input (not the seeded price list's): the lines must read them.
    req, layout = _seed_8node(
        switch_unit_prices={"lingqu-630-v1": Decimal("1200000"), "roce-400ge-access": Decimal("600000")},
        optics_unit_price=Decimal("6000"),
        rack_unit_price=Decimal("30000"),
        installation=Decimal("500000"),
        software_support_per_year=Decimal("300000"),
        om_per_year=None,
        om_percent_of_capex=Decimal("0.05"),
        quote_discount=Decimal("0.10"),
    )
    req = replace(req, site=replace(req.site, colocation_per_rack_month=Decimal("8000")))
    result = _tco(
        req,
        layout,
        it_kw=140.0,
        switches=["lingqu-630-v1", "roce-400ge-access", "roce-400ge-access"],
        optics=272,
    )
    assert result.rack_count == 4
    subtotal = Decimal(24_000_000) + Decimal(1_200_000) + 2 * Decimal(600_000) + 272 * Decimal(6000)
    subtotal += 4 * Decimal(30_000) + Decimal(500_000)
    capex = subtotal * Decimal("0.9")
    assert result.switch_counts == {"lingqu-630-v1": 1, "roce-400ge-access": 2}
    assert result.capex.subtotal == subtotal.quantize(CENT)
    assert result.capex.discount == (subtotal * Decimal("0.1")).quantize(CENT)
    assert result.capex.total == capex.quantize(CENT)
    electricity = Decimal("140.0") * Decimal("0.8") * 8760 * Decimal("1.3") * Decimal("0.65")
    colocation = 4 * Decimal(8000) * 12
    om = capex * Decimal("0.05")
    assert result.annual.om == om.quantize(CENT)
    assert result.annual.electricity == electricity.quantize(CENT)
    assert result.annual.colocation == colocation.quantize(CENT)
    assert result.annual.depreciation == (capex / 5).quantize(CENT)
    assert result.buy_total == (capex + 3 * (om + Decimal(300_000) + electricity + colocation)).quantize(CENT)
    assert result.figures["tco.it_load_kw"].source.ref == "power module"


def test_unpriced_switch_is_flagged_not_hidden():
    req, layout = _seed_8node()
    # a 200G RoCE switch: not seeded, and priced neither by [S1]'s money nor by the seeded price list
    assert "roce-200ge" not in req.commercial.switch_unit_prices
    assert "roce-200ge" not in reference.commercial("atlas-800-a3", nodes=8).switch_unit_prices
    result = _tco(req, layout, switches=["roce-200ge"])
    # Issue 30: not counted at 0 but "price on request", and the totals are withheld.
    check = next(c for c in result.checks if c.code == "commercial.price_on_request")
    assert "switch:roce-200ge" in result.prices_on_request and "roce-200ge" in check.message_en
    assert result.valid is False and result.tokens is None
    assert not [c for c in result.checks if c.code == "commercial.switch_price_missing"]


def _performance(out_tps=2000.0, in_tps=16000.0, share=0.4, measured=True):
    """A load-tested throughput: the only parts of a performance result the TCO reads."""
    return PerformanceResult(
        measured=measured,
        groups=(),
        ttft_s=0.0,
        tpot_s=0.0,
        requests_per_s=0.0,
        output_tokens_per_s=out_tps,
        input_tokens_per_s=in_tps,
        output_tokens_per_s_per_dp_rank=0.0,
        serving_dp_ranks=0,
        prefill_time_share=share,
        pd_balance=None,
        note_en="",
        note_zh="",
    )


def test_cost_per_million_tokens_split_by_time_share_and_compared_with_the_api():
    req, layout = _seed_8node(server_lease_per_month=Decimal("125000"))
    result = _tco(req, layout, performance=_performance())
    t = result.tokens
    seconds = Decimal(8760 * 3600) * Decimal("0.6")
    in_m = Decimal(16000) * seconds / 10**6
    out_m = Decimal(2000) * seconds / 10**6
    annual_buy = (Decimal(24_000_000) + 3 * (Decimal(2_000_000) + ELECTRICITY_8)) / 3
    assert t.input_m_tokens_per_year == in_m.quantize(CENT)
    assert t.annual_cost_buy == annual_buy.quantize(CENT)
    assert t.cost_per_m_input_buy == (annual_buy * Decimal("0.4") / in_m).quantize(CENT)
    assert t.cost_per_m_output_buy == (annual_buy * Decimal("0.6") / out_m).quantize(CENT)
    assert t.cost_per_m_blended_buy == (annual_buy / (in_m + out_m)).quantize(CENT)
    # API: $3 / $15 per M tokens [S1] at ¥7.2 per USD
    assert t.api_price_input_per_m == Decimal("21.60") and t.api_price_output_per_m == Decimal("108.00")
    api = in_m * Decimal("21.6") + out_m * Decimal("108")
    assert t.api_cost_per_year == api.quantize(CENT)
    assert t.saving_vs_api_buy == (1 - annual_buy / api).quantize(Decimal("0.0001"))
    # [S1] §3.3 claims a 60–70 % saving.  Computed, not copied: with 8 nodes bought, 2,000 output
    # (16,000 input) tokens/s and 60 % utilisation, self-hosting costs about what the API does (≈ −1 %).
    assert t.saving_vs_api_buy == Decimal("-0.0133")
    saving = result.figures["tco.tokens.buy.saving_vs_api"]
    assert "60–70" in saving.label_en
    assert result.figures["tco.tokens.api_cost_per_year"].inputs["usd_rate"] == Decimal("7.2")


def test_self_hosting_dearer_than_the_api_is_a_warning():
    req, layout = _seed_8node()
    result = _tco(req, layout, performance=_performance(out_tps=200.0, in_tps=1600.0))
    assert result.tokens.saving_vs_api_buy < 0
    check = next(c for c in result.checks if c.code == "commercial.dearer_than_api")
    # The amounts read as the page prints money: 万/亿 in Chinese, M in English, never a raw
    # 9,208,540.70 with a currency code after it.
    assert "万" in check.message_zh and "CNY" not in check.message_zh
    assert "¥" in check.message_en and " M" in check.message_en and "CNY" not in check.message_en


def test_no_throughput_means_no_cost_per_token_but_a_check():
    req, layout = _seed_8node()
    result = _tco(req, layout, performance=None)
    assert result.tokens is None and result.sensitivity == ()
    assert "commercial.no_throughput" in _codes(result)


def _row(result, parameter, basis):
    return next(r for r in result.sensitivity if r.parameter == parameter and r.basis == basis)


def test_sensitivity_moves_cost_per_token_in_the_right_direction():
    req, layout = _seed_8node(server_lease_per_month=Decimal("125000"))
    result = _tco(req, layout, performance=_performance())
    for basis in ("buy", "lease"):
        util = _row(result, "utilisation", basis)
        assert util.cost_at_high < util.cost_at_base < util.cost_at_low  # busier cluster, cheaper tokens
        elec = _row(result, "electricity_price", basis)
        assert elec.cost_at_low < elec.cost_at_base < elec.cost_at_high  # dearer power, dearer tokens
        tput = _row(result, "throughput", basis)
        assert tput.cost_at_high < tput.cost_at_base < tput.cost_at_low
    lease = _row(result, "lease_price", "lease")
    assert lease.cost_at_low < lease.cost_at_base < lease.cost_at_high
    assert (lease.low_value, lease.base_value, lease.high_value) == (
        Decimal("100000.0000"),
        Decimal("125000.0000"),
        Decimal("150000.0000"),
    )
    elec = _row(result, "electricity_price", "buy")
    # +20 % electricity adds 20 % of the electricity bill to the annual cost
    tokens = (Decimal(18000) * Decimal(8760 * 3600) * Decimal("0.6")) / 10**6
    annual = (Decimal(24_000_000) + 3 * (Decimal(2_000_000) + ELECTRICITY_8)) / 3
    assert elec.cost_at_high == ((annual + ELECTRICITY_8 * Decimal("0.2")) / tokens).quantize(CENT)


def test_utilisation_sensitivity_is_capped_at_one():
    req, layout = _seed_8node(utilisation=Decimal("0.9"))
    result = _tco(req, layout, performance=_performance())
    assert _row(result, "utilisation", "buy").high_value == Decimal("1.0000")


@pytest.mark.parametrize(
    ("change", "code", "field"),
    [
        ({"server_unit_price": Decimal("-1")}, "commercial.negative_price", "commercial.server_unit_price"),
        ({"om_per_year": Decimal("-5")}, "commercial.negative_price", "commercial.om_per_year"),
        ({"horizon_years": 0}, "commercial.horizon_out_of_range", "commercial.horizon_years"),
        ({"horizon_years": 16}, "commercial.horizon_out_of_range", "commercial.horizon_years"),
        (
            {"discount_rate": Decimal("3")},
            "commercial.discount_rate_out_of_range",
            "commercial.discount_rate",
        ),
        (
            {"discount_rate": Decimal("-0.01")},
            "commercial.discount_rate_out_of_range",
            "commercial.discount_rate",
        ),
        ({"utilisation": Decimal("0")}, "commercial.utilisation_out_of_range", "commercial.utilisation"),
        ({"utilisation": Decimal("1.2")}, "commercial.utilisation_out_of_range", "commercial.utilisation"),
        (
            {"quote_discount": Decimal("1")},
            "commercial.quote_discount_out_of_range",
            "commercial.quote_discount",
        ),
    ],
)
def test_bad_commercial_input_is_refused_with_its_field(change, code, field):
    checks = validate_commercial(replace(_s1_terms(), **change))
    assert [(c.code, c.field) for c in checks] == [(code, field)]
    assert checks[0].severity.value == "error"
    assert checks[0].message_en and checks[0].message_zh


def test_negative_switch_price_names_the_switch():
    checks = validate_commercial(
        replace(_s1_terms(), switch_unit_prices={"roce-400ge-access": Decimal("-1")})
    )
    assert checks[0].field == "commercial.switch_unit_prices.roce-400ge-access"


def test_seed_commercial_input_is_accepted():
    assert validate_commercial(_s1_terms()) == []
    # and the seeded price list's own terms for 8 × A3 (catalog/seed/price_lists.yaml cny-2026)
    assert validate_commercial(reference.commercial("atlas-800-a3", nodes=8)) == []


def test_refused_input_gives_an_invalid_result_with_the_checks():
    req, layout = _seed_8node(horizon_years=0, discount_rate=Decimal("3"))
    result = _tco(req, layout, performance=_performance())
    assert not result.valid
    assert {"commercial.horizon_out_of_range", "commercial.discount_rate_out_of_range"} <= _codes(result)
    assert result.yearly == () and result.monthly == () and result.tokens is None
    to_jsonable(result)


def test_negative_electricity_price_is_refused_on_the_site_field():
    req, layout = _seed_8node()
    req = replace(req, site=replace(req.site, electricity_price_per_kwh=Decimal("-0.1")))
    result = _tco(req, layout)
    assert not result.valid
    assert any(c.field == "site.electricity_price_per_kwh" for c in result.checks)


def test_tables_are_built_on_demand_as_dataframes():
    req, layout = _seed_8node(server_lease_per_month=Decimal("150000"))
    result = _tco(req, layout, performance=_performance())
    tables = tco_tables(result)
    yearly, monthly = tables["yearly"], tables["monthly"]
    assert list(yearly["year"]) == [1, 2, 3]
    assert yearly["buy_cumulative"].iloc[-1] == result.buy_total
    assert len(monthly) == 37 and monthly["month"].iloc[0] == 0
    assert monthly["buy_cumulative"].iloc[0] == result.capex.total
    assert len(tables["sensitivity"]) == len(result.sensitivity)


def test_compute_tco_does_not_import_pandas():
    # plan() must stay fast: the tables are the only part that needs pandas
    code = (
        "import sys\n"
        "from configurator import reference\n"
        "from configurator.engine.plan import plan\n"
        "plan(reference.request(reference.CASES['a3-16-8p8d']))\n"
        "print('pandas' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_plan_prices_the_seeded_8p8d_from_the_network_and_racks_results():
    result = plan(reference.request(reference.CASES["a3-16-8p8d"]))
    tco = result.tco
    assert tco.valid
    assert tco.rack_count == result.racks.rack_count
    assert tco.optics_count == result.network.optics
    assert sum(tco.switch_counts.values()) == result.network.switch_count
    assert tco.it_load_kw == Decimal(str(result.power.it_kw)).quantize(CENT)
    assert tco.tokens is not None and tco.tokens.output_tokens_per_s == result.performance.output_tokens_per_s
    to_jsonable(tco)
