"""The proposal states what the cluster carries and what a million tokens costs there (issue 25).

The customer edition (HTML, as WeasyPrint receives it) of every seeded configuration never prints a
negative saving against the API; where the API is cheaper per token it says what the customer buys
instead.  The 16 × A3 8P8D proposal states its design capacity and the cost per million output
tokens at it, beside the cost at the stated load.
"""

from __future__ import annotations

import html
import re
from decimal import Decimal

import pytest

from configurator import reference
from configurator.drawings.fmt import format_money
from documents.pdf import sample
from documents.pdf.context import _sizing
from documents.pdf.render import proposal_html
from documents.pdf.sample import sample_quote_create

pytestmark = pytest.mark.django_db

# The seeded topologies of the sample, plus the 8 × A2 and 2 × H200 configurations (reference.CASES).
EXTRA = {"a2": "a2-8-text-only-modelslim", "h200": "hgx-h200-2-single"}
NAMES = (*sample.SEEDED_TOPOLOGIES, *EXTRA)
SAVING = {
    "en": "Saving against the API for the same tokens (buy)",
    "zh-hans": None,  # found through the row's percentage below
}


def _text(markup: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", " ", markup))


@pytest.fixture
def more_samples(monkeypatch):
    for short, case in EXTRA.items():
        monkeypatch.setitem(sample.CASES, short, case)
        monkeypatch.setitem(sample.TITLES, short, (f"Kimi K3 · {case}", f"Kimi K3 · {case}"))


@pytest.mark.parametrize("lang", ["en", "zh-hans"])
def test_no_customer_edition_prints_a_negative_saving(engineer, seller, more_samples, lang):
    for name in NAMES:
        revision = sample_quote_create(by=engineer, language=lang, name=name)
        text = _text(proposal_html(revision, lang=lang, edition="customer"))
        # Every percentage printed, signed with an ASCII hyphen or the typographic minus.
        negatives = [float(m.replace("−", "-")) for m in re.findall(r"[−-]\d[\d,.]*(?=\s*%)", text)]
        assert all(v >= -100 for v in negatives), (name, lang, negatives)
        saving = revision.result_json["tco"]["tokens"]["saving_vs_api_buy"]
        if saving is not None and Decimal(str(saving)) < 0 and lang == "en":
            assert SAVING["en"] not in text, name
            assert "the data stays on the customer's premises" in text, name


def test_the_16_a3_proposal_states_its_design_capacity_and_the_cost_there(engineer, seller):
    # Targets the hardware can reach: the cross-validated step model puts one K3 request on A3 at
    # about 116 ms per output token (docs/performance.md), so the default TPOT P90 of 100 ms is out of
    # reach and the plan says so; at TTFT P90 10 s / TPOT P90 250 ms the design point is the hardware's.
    revision = sample_quote_create(
        by=engineer,
        language="en",
        name="8p8d",
        workload={"ttft_p90_target_s": 10.0, "tpot_p90_target_ms": 250.0},
    )
    result = revision.result_json
    design = result["performance"]["design_point"]
    # The design capacity is the hardware's: prefill bounds it, not a serving setting.  K3 on A3 decodes
    # with the catalog's DSpark draft by default (catalog/seed/drafts.yaml: mean accepted length
    # 1 + 7 x 0.6033 = 5.22 tokens a step, vllm-project/vllm-ascend#14454), so a request takes about
    # 1,024 output tokens x 22 ms ≈ 23 s to decode instead of two minutes and the 8 prefill nodes, at TTFT P90 10 s,
    # fill before the 128 slots of --max-num-seqs 16 x 8 decode DP ranks do.
    assert design["limited_by"] == "prefill" and not design["best_effort"]
    assert design["ttft_p90_s"] <= 10.0 and design["tpot_p90_s"] <= 0.250
    assert design["concurrency"] > result["economics"]["stated"]["concurrency"]
    # Little's law ties the capacity to the throughput: concurrency = requests/s x time in system.
    output_tokens = revision.resolved_json["workload"]["output_tokens"]
    in_system = design["ttft_s"] + output_tokens * design["tpot_s"]
    assert design["concurrency"] == pytest.approx(design["requests_per_s"] * in_system, rel=0.05)
    econ = result["economics"]["design"]
    # Cost per million output tokens at the design point, recomputed here: the yearly cost's output
    # share over the output tokens a year at the design throughput and the plan's utilisation.
    tokens = result["tco"]["tokens"]
    annual = Decimal(str(result["economics"]["annual_cost"]))
    out_share = 1 - Decimal(str(tokens["input_cost_share"]))
    utilisation = Decimal(str(revision.resolved_json["commercial"]["utilisation"]))
    per_year_m = Decimal(str(round(design["output_tokens_per_s"], 6))) * 31_536_000 * utilisation / 1_000_000
    expected = (annual * out_share / per_year_m).quantize(Decimal("0.01"))
    assert Decimal(str(econ["cost_per_m_output"])) == expected
    text = _text(proposal_html(revision, lang="en", edition="customer"))
    assert "Design capacity within the latency targets" in text
    assert f"{design['concurrency']:,} concurrent requests" in text
    assert f"at the design capacity of {design['concurrency']:,} concurrent requests" in text
    assert format_money(expected, "CNY", False) in text or f"{expected:,.2f}" in text
    stated = result["economics"]["stated"]
    assert f"at the stated load of {stated['concurrency']:,} concurrent requests" in text


def test_the_internal_edition_keeps_the_signed_saving_and_the_customer_edition_does_not():
    result = {
        "performance": {"design_point": {"concurrency": 229, "output_tokens_per_s": 2376.2}},
        "economics": {"design": {"cost_per_m_output": "267.35"}, "stated": {"concurrency": 16}},
    }
    tokens = {"saving_vs_api_buy": "-19.088"}
    assert _sizing(result, tokens, internal=True)["show_saving"] is True
    customer = _sizing(result, tokens, internal=False)
    assert customer["show_saving"] is False and customer["api_cheaper"] is True
    assert _sizing(result, {"saving_vs_api_buy": "0.4"}, internal=False)["show_saving"] is True


def test_reference_cases_named_here_exist():
    assert set(EXTRA.values()) <= set(reference.CASES)
