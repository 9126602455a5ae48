"""The proposal a customer signs: two editions, commercial terms, a plan-driven deployment path.

Every seeded topology (docs/domain.md §4: 4 × A3 single, 16 × A3 8P8D,
2 × NF5868G8, 8 × A3 tenant pair, 8 × A3 primary/standby) is rendered in both
languages as the customer edition, its text extracted with ``pdftotext``
(poppler) and read the way the issue's reviewers read it:

* no internal text: engine check codes, JSON paths, catalog field names,
  file references, "seed"/"种子", "Suggested fix"/"建议修改", group slugs;
* the Chinese edition has no English word outside a whitelist of product
  names, units and technical abbreviations (and codes: quote numbers, rack
  and node names, part numbers, which all carry a digit);
* the seller, VAT-exclusive and VAT-inclusive totals (computed here from the
  revision's lines: 13 % on goods, 9 % on installation, 6 % on services), payment, delivery,
  warranty, acceptance criteria and a signature block for both parties;
* the NF5868G8 proposal names no Atlas product, and the step marked as this
  proposal is the purchase, never a lease proof of concept.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from decimal import ROUND_HALF_UP, Decimal

import pytest

from configurator.drawings.fmt import format_money
from documents.pdf import render_proposal_pdf
from documents.pdf.delivery import benchmark_appendix
from documents.pdf.sample import SEEDED_TOPOLOGIES, sample_quote_create
from documents.pdf.story import deployment_paths
from proposals.models import QuoteTerms, SellerProfile
from quotes.statuses import CAPEX_CATEGORIES, BomCategory

weasyprint = pytest.importorskip("weasyprint")
pytestmark = pytest.mark.skipif(shutil.which("pdftotext") is None, reason="poppler-utils not installed")

CUSTOMERS = {"zh-hans": "上海浦东发展银行", "en": "Shanghai Pudong Development Bank"}

# Words an internal reader uses and a customer must never see (proposal-anatomy: "never contains").
FORBIDDEN = [
    "domain.md",
    "seed",
    "Seed",
    "种子",
    "Suggested fix",
    "建议修改",
    "check with the customer",
    "与客户确认",
    "Snapshot",
]
# Group slugs and fabric slugs (a part number such as lingqu-630-v1 may contain one).
SLUGS = re.compile(r"(?<![\w-])(?:cluster-a|cluster-b|lingqu|roce|mgmt)(?![\w-])")
# Catalog and request field names the engine reads (catalog/models, configurator/engine/types.py).
FIELD_NAMES = [
    "typical_load_factor",
    "validated_text_only",
    "max_num_seqs",
    "max_model_len",
    "gpu_memory_utilization",
    "max_num_batched_tokens",
    "power_factor",
    "activation_bytes",
    "kv_cache_bytes",
    "hf_model_id",
    "name_zh",
    "max_kw",
    "rack_units",
]
# A dotted path of identifiers, e.g. memory.per_rank.activation_bytes or power.feed.recommended.
JSON_PATH = re.compile(r"\b[a-z_]+\.[a-z_]+(?:\.[a-z_]+)+\b")
CHECK_CODE = re.compile(
    r"\b(?:memory|power|cooling|racks|network|commercial|performance|model|launch|layout)\.[a-z_]+\b"
)

# English allowed in the Chinese edition: product and vendor names, units, technical abbreviations
# the industry writes in Latin letters (docs/glossary.md: Token, TCO, TTFT/TPOT, PUE, KV, RoCE, PDU ...).
ZH_WHITELIST = {
    # products and technologies
    "Atlas", "Ascend", "Blackwell", "Hopper", "Ampere", "Kimi", "NF5868G8", "RTX", "PRO", "RoCE", "OceanStor", "Mooncake", "MetaService",
    "Memcache", "Agent", "AI", "API", "RDMA", "KV", "GE", "MXFP4", "MXFP8", "M-LAG", "InfiniBand", "NVLink",
    "HCCS", "PCIe", "UB", "vLLM", "DeepSeek", "Qwen", "GLM", "Llama", "NVIDIA",  # UB: 灵衢（UB）, docs/glossary.md
    "QSFP-DD", "OSFP", "MPO/LC", "MPO", "LC",  # optical module and connector form factors
    "CloudEngine", "SFP28", "QSFP28", "SFP+", "Dorado", "openEuler", "LTS", "CANN", "vLLM-Ascend", "Ubuntu",
    "Server", "CUDA", "Enterprise",  # products in the bill of materials
    "NAS", "NFS", "BMC", "GPU", "RACI", "R", "R/A", "BTU/h", "m",  # storage and management terms, RACI letters, units
    # abbreviations written in Latin letters in Chinese proposals
    "TCO", "NPV", "PUE", "PDU", "IT", "TTFT", "TPOT", "DP", "TP", "EP", "PD", "PF", "CNY", "VAT", "SKU",
    "Token", "tokens", "token", "tokens/s", "tok/s",
    # units and symbols
    "kW", "kWh", "GB", "TB", "Gb/s", "Tb/s", "ms", "s", "U", "A", "A/B", "B", "V", "I", "P", "D", "M", "C", "G",
    "CNY/kWh", "CNY/", "kg", "kg/m",  # weight and floor loading (kg/m² prints as "kg/m" then "²")
}  # fmt: skip
CODE = re.compile(r"\d")  # quote numbers, rack/node names, part numbers: every code carries a digit


def pdf_text(pdf: bytes) -> str:
    done = subprocess.run(
        ["pdftotext", "-raw", "-enc", "UTF-8", "-", "-"], input=pdf, capture_output=True, check=True
    )
    return done.stdout.decode("utf-8")


def squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


def cents(value: Decimal) -> Decimal:
    return value.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


def expected_vat(revision) -> tuple[Decimal, Decimal, Decimal]:
    """(net, VAT, gross) from the revision's purchase lines: the quote discount on capex lines only
    (quotes.services.snapshot.revision_totals), VAT 13 % on goods, 9 % on installation (a construction
    service) and 6 % on software support and operations (财政部 税务总局 海关总署公告 2019 年第 39 号;
    财税〔2016〕36 号)."""
    discount = revision.discount
    goods = installation = services = Decimal("0")
    for line in revision.lines.exclude(category=BomCategory.LEASE):
        net = line.line_total * (1 - discount) if line.category in CAPEX_CATEGORIES else line.line_total
        if line.category == BomCategory.INSTALL:
            installation += net
        elif line.category in (BomCategory.SOFTWARE, BomCategory.OM):
            services += net
        else:
            goods += net
    net = cents(goods) + cents(installation) + cents(services)
    vat = (
        cents(cents(goods) * Decimal("0.13"))
        + cents(cents(installation) * Decimal("0.09"))
        + cents(cents(services) * Decimal("0.06"))
    )
    return net, vat, net + vat


def user_text(revision) -> list[str]:
    """Text the users typed (customer, preparer, seller contact): not the application's words."""
    owner = revision.quote.owner
    profile = getattr(owner, "profile", None)
    seller = SellerProfile.current()
    return [
        revision.quote.customer.name,
        getattr(profile, "display_name", "") or "",
        owner.get_full_name(),
        owner.get_username(),
        str(revision.quote.team or ""),
        seller.contact_email if seller else "",
        seller.company_en if seller else "",
        seller.address_en if seller else "",
    ]


@pytest.mark.django_db
@pytest.mark.parametrize("lang", ["zh-hans", "en"])
@pytest.mark.parametrize("name", SEEDED_TOPOLOGIES)
def test_customer_edition_speaks_the_customers_language_and_can_be_signed(name, lang, engineer, seller):
    revision = sample_quote_create(by=engineer, language=lang, name=name, customer=CUSTOMERS[lang])
    text = pdf_text(render_proposal_pdf(revision))
    flat = squash(text)
    zh = lang == "zh-hans"

    # --- nothing internal
    for word in FORBIDDEN + FIELD_NAMES:
        assert word not in text, f"{name}/{lang}: customer edition contains {word!r}"
    assert not SLUGS.findall(text), f"{name}/{lang}: slugs {SLUGS.findall(text)}"
    codes = {c["code"] for c in revision.result_json["checks"]}
    assert codes, "the plan has checks, so the code test below can fail"
    for code in codes:
        assert code not in text, f"{name}/{lang}: check code {code}"
    assert not CHECK_CODE.findall(text), CHECK_CODE.findall(text)
    assert not JSON_PATH.findall(text.replace("example.com", "")), JSON_PATH.findall(text)

    # --- the Chinese edition has no stray English
    if zh:
        stripped = text
        for typed in user_text(revision):
            if typed:
                stripped = stripped.replace(typed, " ")
        words = set(re.findall(r"[A-Za-z][A-Za-z0-9_./+\-]*", stripped))
        # commands are printed as they are typed (the acceptance benchmark's appendix)
        appendix = benchmark_appendix(revision)
        commands = set(re.findall(r"[A-Za-z][A-Za-z0-9_./+\-]*", appendix["commands"])) if appendix else set()
        stray = sorted(
            w for w in words if w.rstrip(".") not in ZH_WHITELIST and not CODE.search(w) and w not in commands
        )
        assert not stray, f"{name}: English in the Chinese edition: {stray}"

    # --- signable: seller, VAT, payment, delivery, warranty, acceptance, signatures
    seller = SellerProfile.current()
    assert squash(seller.company_zh if zh else seller.company_en) in flat
    net, vat, gross = expected_vat(revision)
    assert net == revision.net_total  # the lines add up to the revision's net total
    for amount in (net, vat, gross):
        assert f"{amount:,.2f}" in flat, f"{name}/{lang}: {amount} missing"
    terms = QuoteTerms()
    words = (
        ["不含税", "含税", "增值税13%", "增值税9%", "增值税6%", "合同签订时支付30%", "硬件到货时支付60%", "验收合格时支付10%",
         "按季度后付", "附录：验收基准测试", "交货", "8周", "质保", "3年",
         "7×24，4小时上门", "验收标准", "不含项", "买方", "卖方", "签字", "公司盖章"]
        if zh
        else ["excludingVAT", "includingVAT", "VAT13%", "VAT9%", "VAT6%", "30%ofthegoodsandinstallationonsigning",
              "60%ofthegoodsandinstallationondelivery", "10%ofthegoodsandinstallationonacceptance",
              "quarterlyinarrears", "Appendix:acceptancebenchmark", "Within8weeks", "3yearsofhardwarewarranty", "7×24,4-houron-site",
              "Acceptancecriteria", "Exclusions", "Buyer", "Seller", "Signature:", "Companystamp"]
    )  # fmt: skip
    assert terms.delivery_weeks == 8 and terms.warranty_years == 3  # the defaults the words above name
    for word in words:
        assert word in flat, f"{name}/{lang}: {word!r} missing"
    assert flat.count(squash(CUSTOMERS[lang])) >= 3  # cover, terms, signature block
    # the appendix text names the concurrencies its script runs (its "for concurrency in" loop)
    appendix = benchmark_appendix(revision)
    if appendix:
        loop = next(x for x in appendix["commands"].splitlines() if x.startswith("for concurrency in "))
        runs = loop.removeprefix("for concurrency in ").split(";")[0].split()
        assert (
            appendix["sweep"] == ", ".join(f"{int(c):,}" for c in runs) and squash(appendix["sweep"]) in flat
        )
    # the acceptance benchmark holds the cluster to the lower end of the estimated throughput range
    # (estimate ÷ the calibration band, configurator.engine.performance), rounded down
    low = int(float(revision.result_json["performance"]["output_tokens_per_s_range"][0]))
    assert f"{low:,}" in flat

    # --- one headline: the summary's cost per million tokens is the TCO table's, and both columns
    # of the TCO table carry the same network, racks and installation (the lease has the same scope)
    tco = revision.result_json["tco"]
    blended = format_money(Decimal(tco["tokens"]["cost_per_m_blended_buy"]), "CNY", lang, scale=1, decimals=2)
    assert flat.count(squash(blended)) >= 2, blended
    # the TCO table reads the engine's figures: capex bought at the start (buy), and the network,
    # racks and installation the lease buys too (tco.lease_upfront), never a servers-net re-derived
    upfront = format_money(Decimal(tco["lease_upfront"]), "CNY", lang)
    assert squash(upfront) in flat, upfront
    capex = format_money(Decimal(tco["capex"]["total"]), "CNY", lang)
    assert flat.count(squash(capex)) >= 2, capex  # the headline tile and the TCO table
    assert squash(format_money(Decimal(tco["buy_total"]), "CNY", lang)) in flat
    assert ("3年总拥有成本" if zh else "TCOover3years") in flat

    # --- plan-driven deployment path
    if name == "nf5868g8":
        assert "Atlas" not in text
    current = "本方案：采购" if zh else "Thisproposal:purchaseof"
    assert current in flat
    assert ("本方案：租赁" if zh else "Thisproposal:lease") not in flat


@pytest.mark.django_db
def test_internal_edition_keeps_the_engineering_appendix(engineer, seller):
    """The same revision's internal edition has what the customer edition leaves out."""
    revision = sample_quote_create(by=engineer, language="en", name="4node")
    text = pdf_text(render_proposal_pdf(revision, edition="internal"))
    warnings = [c["code"] for c in revision.result_json["checks"] if c["severity"] != "ok"]
    assert warnings
    for code in warnings:
        assert code in squash(text)  # table cells wrap long codes
    assert "Suggested fix" in text
    assert "Internal edition: not for the customer" in text
    assert "vllm serve" in text  # the launch appendix
    assert "Assumptions and sources" in text


def test_deployment_path_marks_the_purchase_and_names_only_the_quoted_server():
    """A 4-node purchase with a lease price: the lease is an optional proof of concept, never "this proposal"."""
    steps = deployment_paths(
        topology={"kind": "single", "nodes": 4},
        layout={"nodes": 4, "groups": [{"name": "cluster", "nodes": 4}]},
        server_name="Inspur NF5868G8",
        lease_per_node_month="125000",
        delivery_weeks=8,
        topology_text="Single cluster",
    )
    assert [s["key"] for s in steps] == ["poc", "purchase", "expand"]
    assert [s["current"] for s in steps] == [False, True, False]
    assert "purchase of 4 × Inspur NF5868G8" in steps[1]["title"]
    assert all("Atlas" not in s["title"] + s["text"] for s in steps)
    # The purchase starts after the 2-month proof of concept and lasts (8 + 4) weeks ≈ 2.8 months.
    assert steps[1]["start"] == 2 and steps[1]["months"] == pytest.approx(12 / 4.33, abs=0.05)
    no_lease = deployment_paths(
        topology={"kind": "disaggregated", "nodes": 16},
        layout={"nodes": 16, "groups": [{"name": "prefill", "nodes": 8}, {"name": "decode", "nodes": 8}]},
        server_name="Atlas 800 A3",
        lease_per_node_month=None,
        delivery_weeks=8,
        topology_text="8P8D",
    )
    assert [s["key"] for s in no_lease] == ["purchase", "expand"]  # no lease price: no proof of concept


@pytest.mark.django_db
def test_data_residency_scenarios_are_not_compared_with_a_public_api(engineer):
    """A government customer whose data must stay on-premises is not told the API is cheaper."""
    from documents.pdf import proposal_html
    from documents.pdf.sample import sample_plan_kwargs
    from quotes.services.quotes import quote_create_from_configuration

    kwargs = sample_plan_kwargs("8node-tenant", scenario="government-policy-qa")
    quote = quote_create_from_configuration(by=engineer, customer="某市政务服务中心", language="en", **kwargs)
    html = proposal_html(quote.revisions.get())
    assert "a public API is not an option" in html
    assert "Saving against the API" not in html and "Public API" not in html
    other = quote_create_from_configuration(
        by=engineer, customer="ACME", language="en", **sample_plan_kwargs("8node-tenant")
    )
    other_html = proposal_html(other.revisions.get())
    assert (
        "Public API" in other_html
    )  # compared with the API: its price per million tokens beside the cluster's
    saving = other.revisions.get().result_json["tco"]["tokens"]["saving_vs_api_buy"]
    # The customer edition prints a saving only when there is one (issue 25); where the API is cheaper
    # per token it says what the cluster buys instead.
    assert ("Saving against the API" in other_html) is (float(saving) >= 0)
    assert ("what the API does not sell" in other_html) is (float(saving) < 0)


@pytest.mark.django_db
def test_the_internal_edition_downloads_for_those_who_may_see_the_quote(engineer, engineer2, client):
    from django.urls import reverse

    revision = sample_quote_create(by=engineer, language="en", name="nf5868g8")
    url = reverse("quotes:pdf_internal", args=[revision.pk])
    client.force_login(engineer)
    response = client.get(url)
    assert response.status_code == 200 and response["Content-Type"] == "application/pdf"
    assert response["Content-Disposition"] == f'attachment; filename="{revision.number}-internal.pdf"'
    assert "Internal edition: not for the customer" in pdf_text(response.content)
    client.force_login(engineer2)  # another team: as if the revision did not exist
    assert client.get(url).status_code == 404


def test_launch_commands_print_once_per_group_with_per_node_values_in_a_table():
    """16 × A3 8P8D: two command blocks (prefill, decode) instead of sixteen; every line short enough
    not to wrap (≤ 90 characters of 6.8 pt mono on A4), so no flag is broken; each node's own values
    (DP rank, KV engine id, host IP) in the table, equal to the frozen per-node commands."""
    import shlex as _shlex

    from documents.pdf.context import _launch_groups
    from documents.pdf.sample import sample_plan_kwargs

    launch = sample_plan_kwargs("8p8d")["result_json"]["launch"]
    groups = _launch_groups(launch, "Atlas 800 A3")
    assert [len(g["blocks"]) for g in groups] == [1, 1]
    for g in groups:
        command = g["blocks"][0]["command"]
        assert max(len(line) for line in command.splitlines()) <= 90
        flags = [line for line in command.splitlines()[:-1] if line.startswith("  --") and "'" not in line]
        assert flags and all(line.endswith(" \\") for line in flags)  # each argument continues the command
        assert "--data-parallel-rank <data-parallel-rank>" in command
        assert g["columns"][:2] == ["data-parallel-rank", "engine_id"]
    by_index = {n["index"]: n for n in launch["nodes"]}
    for g in groups:
        for row in g["nodes"]:
            argv = by_index[row["index"]]["argv"][0]
            rank = argv[argv.index("--data-parallel-rank") + 1]
            assert row["values"][0] == rank
            assert row["name"] == f"node-{row['index']:02d}"  # engine/names.node_name
            engine = json.loads(argv[argv.index("--kv-transfer-config") + 1])["engine_id"]
            assert row["values"][1] == engine
    # The shell still reads the printed command: quotes balance and the JSON is one argument.
    text = groups[1]["blocks"][0]["command"].replace("\\\n", " ")
    words = _shlex.split(text.replace("<engine_id>", "9").replace("<data-parallel-rank>", "1"))
    assert json.loads(words[words.index("--kv-transfer-config") + 1])["kv_role"] == "kv_consumer"
