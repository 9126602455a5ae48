"""The page's buy-vs-lease table lists every term of its two totals, as the proposal's does.

Before, the page showed the capex lines, O&M, electricity and rent, and a 3-year purchase total of
¥14.4 M beside ¥14.4 M of capital expenditure and ¥1.4 M a year of running costs: the residual value
the purchase recovers (¥4.8 M), software support, gateways and storage were in the total but not in
the table, and the lease column read "—" for an O&M cost the lease pays too (quotes/templates/quotes/
pdf/proposal.html lists them all).  Here the default preset (4 × A3, Kimi K3) is planned as the page
plans it and its table is read back: every term is a row, and the rows add up to the totals the
engine states (tco.buy_total = capex + years × running costs − residual; tco.lease_total likewise).
"""

from __future__ import annotations

import html
import re
from decimal import Decimal

import pytest
from django.urls import reverse

from configurator.web.presets import preset_data

pytestmark = pytest.mark.django_db


@pytest.fixture
def engineer_client(client, catalog, users):
    client.force_login(users["engineer"])
    client.cookies["django_language"] = "en"
    return client


def _rows(page: str) -> dict[str, tuple[str, str]]:
    # the "why?" of every figure carries its own small table: left out
    page = re.sub(r'<details class="why">.*?</details>', "", page, flags=re.S)
    start = page.index("Bought at the start")
    table = page[page.rindex("<table", 0, start) : page.index("</table>", start)]
    rows = {}
    for tr in re.findall(r"<tr[^>]*>(.*?)</tr>", table, re.S):
        cells = [
            html.unescape(re.sub(r"<[^>]+>", "", c)).strip()
            for c in re.findall(r"<td[^>]*>(.*?)</td>", tr, re.S)
        ]
        if len(cells) >= 3:
            rows[cells[0]] = (cells[1], cells[2])
    return rows


def test_every_term_of_the_totals_is_a_row(engineer_client):
    response = engineer_client.post(reverse("configurator:update"), preset_data(None), HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    rows = _rows(response.content.decode())
    for label in (
        "Servers",
        "Switches",
        "Optics",
        "Racks and PDUs",
        "Installation",
        "Bought at the start (the lease buys the network, racks and installation only)",
        "O&M per year",
        "Software and support per year",
        "Electricity per year",
        "Colocation per year",
        "Rent per year",
        "Residual value of the servers at the end",
        "TCO over 3 years",
        "Net present value",
    ):
        assert label in rows, label
    assert rows["Residual value of the servers at the end"][0].startswith("−¥")
    # The lease carries the same O&M as buying unless the lessor operates the servers.
    om_buy, om_lease = rows["O&M per year"]
    assert om_lease in (om_buy, "included")


def test_the_rows_add_up_to_the_engines_totals(catalog):
    """4 × A3 as seeded: every row the table prints is a term of the total it stands above."""
    from configurator.planning import plans
    from tests.golden.golden_cases import all_requests

    _, result = plans.plan_from_json(all_requests()["a3-4-single"])
    t = result.tco
    capex = t.capex
    lines = capex.servers + capex.switches + capex.optics + capex.racks + capex.installation
    lines += capex.gateway + capex.storage - capex.discount
    assert lines == capex.total and t.residual_value > 0
    a = t.annual
    years = t.horizon_years
    running_buy = a.om + a.software_support + a.electricity + a.colocation
    assert abs(capex.total + years * running_buy - t.residual_value - t.buy_total) <= Decimal("0.05")
    running_lease = (
        (a.lease_om or 0) + (a.lease_software_support or 0) + a.lease_electricity + a.lease_colocation
    )
    running_lease += a.lease_rent
    assert abs(t.lease_upfront + years * running_lease - t.lease_total) <= Decimal("0.05")


def test_without_a_lease_offer_the_lease_column_says_so():
    from configurator import sections

    figures = {
        "tco.capex.total": {"value": "100.00", "unit": "CNY"},
        "tco.lease_upfront": {"value": "40.00", "unit": "CNY"},
        "tco.buy_total": {"value": "300.00", "unit": "CNY"},
        "tco.lease_total": {"value": "0.00", "unit": "CNY"},
        "tco.break_even_month": {"value": None, "unit": "month"},
        "tco.annual.om": {"value": "10.00", "unit": "CNY"},
        "tco.annual.lease_om": {"value": "0.00", "unit": "CNY", "inputs": {"lease_includes_om": True}},
    }
    rows = {
        r["label"]: r
        for r in sections.pair_rows("tco", figures, "en", lease_offered=False, keys={"years": 3})
    }
    assert rows["TCO over 3 years"]["lease"]["text"] == "no lease offer"
    assert rows["O&M per year"]["lease"]["text"] == "—"
    assert "Break-even month (buy vs lease)" not in rows  # no lease, no break-even
    offered = {r["label"]: r for r in sections.pair_rows("tco", figures, "zh-hans", keys={"years": 3})}
    assert offered["年运维费"]["lease"]["text"] == "已包含"  # the lessor operates the servers
    assert offered["盈亏平衡月份（采购与租赁对比）"]["span"]["text"] == "不在测算期内"
