"""The customer edition of the proposal at the design point when the targets are out of reach, and
without lease figures where the catalog has no lease price (issue 25).

* 16 × A3 8P8D with a TPOT P90 target of 50 ms (out of A3's reach: one K3 request decodes at about
  72 ms P90 per token with FULL_DECODE_ONLY graphs, docs/performance.md): the proposal states the best-effort design capacity
  (engine/performance/design.py), labelled as such, and the cost per million output tokens at it,
  recomputed here from the yearly cost and the design throughput;
* 2 × HGX H200 (no lease row in the seeded price list cny-2026, catalog/seed/price_lists.yaml): no
  lease total, no yearly lease cost, no lease rent anywhere in the customer edition.
"""

from __future__ import annotations

import html
import re
from decimal import Decimal

import pytest

from configurator.drawings.fmt import format_money
from documents.pdf import sample
from documents.pdf.render import proposal_html
from documents.pdf.sample import sample_quote_create

# ``catalog``: the seeded catalog, reloaded if a transactional test emptied its tables before this one.
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("catalog")]


def _text(markup: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", " ", markup))


def test_the_16_a3_proposal_states_its_best_effort_design_capacity_and_the_cost_there(
    engineer, seller, monkeypatch
):
    from configurator import reference

    tight = dict(reference.CASES["a3-16-8p8d"])
    # A TPOT P90 of 10 ms is out of reach even for one request: K3 on A3 decodes with the catalog's
    # DSpark draft by default (catalog/seed/drafts.yaml: mean accepted length 1 + 7 x 0.6033 = 5.22
    # tokens a step, vllm-project/vllm-ascend#14454), so a step of about 116 ms (docs/performance.md)
    # yields a token about every 116 / 5.22 = 22 ms, above the target.
    tight["workload"] = {**tight.get("workload", {}), "tpot_p90_target_ms": 10.0}
    monkeypatch.setitem(reference.CASES, "a3-16-8p8d-tpot10", tight)
    monkeypatch.setitem(sample.CASES, "8p8d-tpot10", "a3-16-8p8d-tpot10")
    monkeypatch.setitem(sample.TITLES, "8p8d-tpot10", sample.TITLES["8p8d"])
    revision = sample_quote_create(by=engineer, language="en", name="8p8d-tpot10")
    result = revision.result_json
    design = result["performance"]["design_point"]
    assert design["limited_by"] == "unreachable" and design["best_effort"]
    assert design["best_tpot_p90_s"] > 0.010
    # The best-effort capacity is the hardware's (prefill bounds it with the targets relaxed), above
    # the stated load and within the launched --max-num-seqs across the decode DP ranks.
    assert design["relaxed_limited_by"] == "prefill"
    slots = design["max_num_seqs_per_dp_rank"] * design["serving_dp_ranks"]
    assert result["economics"]["stated"]["concurrency"] < design["concurrency"] <= slots
    tokens = result["tco"]["tokens"]
    annual = Decimal(str(result["economics"]["annual_cost"]))
    out_share = 1 - Decimal(str(tokens["input_cost_share"]))
    utilisation = Decimal(str(revision.resolved_json["commercial"]["utilisation"]))
    per_year_m = Decimal(str(round(design["output_tokens_per_s"], 6))) * 31_536_000 * utilisation / 1_000_000
    expected = (annual * out_share / per_year_m).quantize(Decimal("0.01"))
    assert Decimal(str(result["economics"]["design"]["cost_per_m_output"])) == expected
    text = _text(proposal_html(revision, lang="en", edition="customer"))
    assert "Best-effort design capacity (latency targets out of reach)" in text
    assert f"{design['concurrency']:,} concurrent requests" in text
    assert f"at the design capacity of {design['concurrency']:,} concurrent requests" in text
    assert format_money(expected, "CNY", False) in text or f"{expected:,.2f}" in text


def test_2_h200_prints_no_lease_totals_without_a_lease_price(engineer, seller, monkeypatch):
    monkeypatch.setitem(sample.CASES, "h200", "hgx-h200-2-single")
    monkeypatch.setitem(sample.TITLES, "h200", ("Kimi K3 · 2 × H200", "Kimi K3 · 2 × H200"))
    revision = sample_quote_create(by=engineer, language="en", name="h200")
    tco = revision.result_json["tco"]
    assert tco["lease_offered"] is False
    text = _text(proposal_html(revision, lang="en", edition="customer"))
    assert "There is no lease offer for these servers" in text
    # The engine gives no lease figure (None, not 0) and the page prints none.
    assert tco["lease_total"] is None and tco["npv_lease"] is None
    for year in tco["yearly"]:
        assert all(year[k] is None for k in ("lease_rent", "lease_cost", "lease_cumulative")), year["year"]
    year_by_year = text[text.index("Year by year") :][:400]
    rows = re.findall(r"(?:^|\s)([123])\s+[^—]*?—\s+—", year_by_year)
    assert rows == ["1", "2", "3"], year_by_year


@pytest.mark.parametrize("lang", ["en", "zh-hans"])
def test_no_customer_edition_of_a_preset_prints_a_saving_below_minus_100_percent(engineer, seller, lang):
    """Every scenario preset as the configurator page plans it, quoted and rendered for the customer:
    every percentage printed is at least −100 % (a saving below that is the API being cheaper, which
    the customer edition says in words instead)."""
    from configurator.planning import quoting
    from quotes.services.quotes import quote_create_from_configuration
    from tests.golden.golden_cases import SCENARIOS, scenario_request

    for slug in SCENARIOS:
        request_json = scenario_request(slug)
        resolved, result, prices, usd_rate, currency = quoting.plan_for_quote(request_json)
        quote = quote_create_from_configuration(
            by=engineer,
            customer="Sample customer",
            title=slug,
            language=lang,
            discount="0",
            request_json=request_json,
            resolved_json=resolved,
            result_json=result,
            prices_json=prices,
            usd_rate=usd_rate,
            currency=currency,
        )
        revision = quote.revisions.order_by("index").first()
        text = _text(proposal_html(revision, lang=lang, edition="customer"))
        negatives = [float(m.replace("−", "-")) for m in re.findall(r"[−-]\d[\d,.]*(?=\s*%)", text)]
        assert all(v >= -100 for v in negatives), (slug, lang, negatives)
