"""``manage.py proposal``: the proposal of a plan request, rendered by the quote's code, nothing saved."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from decimal import Decimal

import pytest
from django.core.management import CommandError, call_command

from configurator.drawings.fmt import format_money
from documents.pdf.sample import sample_plan_kwargs
from quotes.models import Customer, Quote, QuoteNumberCounter

pytestmark = pytest.mark.skipif(shutil.which("pdftotext") is None, reason="poppler-utils not installed")


def text_of(path) -> str:
    done = subprocess.run(
        ["pdftotext", "-raw", "-enc", "UTF-8", str(path), "-"], capture_output=True, check=True
    )
    return re.sub(r"\s+", "", done.stdout.decode("utf-8"))


@pytest.mark.django_db
def test_the_cli_renders_the_8p8d_proposal_without_saving_a_quote(tmp_path, seller, catalog):
    # The seeded catalog's price list: a proposal's prices are checked against a list in force
    # (issue 27, finding 1), as they are in any installation.
    request = tmp_path / "request.json"
    request.write_text(json.dumps(sample_plan_kwargs("8p8d")["request_json"]), encoding="utf-8")
    out = tmp_path / "proposal.pdf"
    call_command("proposal", str(request), str(out), "--language", "en", "--customer", "ACME Bank")
    assert out.read_bytes().startswith(b"%PDF")
    text = text_of(out)
    assert "ACMEBank" in text
    assert "16×Atlas800A3" in text and "8P8D" in text
    assert seller.company_en.replace(" ", "") in text
    assert "Signature:" in text and "includingVAT" in text
    assert "vllmserve" not in text  # customer edition by default
    # Nothing saved: no quote, no customer, no quote number used.
    assert Quote.objects.count() == 0 and Customer.objects.count() == 0
    assert QuoteNumberCounter.objects.count() == 0

    internal = tmp_path / "internal.pdf"
    call_command("proposal", str(request), str(internal), "--language", "zh-hans", "--edition", "internal")
    zh = text_of(internal)
    assert "内部版本" in zh and "vllmserve" in zh


@pytest.mark.django_db
@pytest.mark.parametrize(
    "content, message",
    [
        (None, "no such file"),
        ("{not json", "not valid JSON (line 1, column 2)"),
        ("[1, 2]", "must be a non-empty JSON object"),
        ('{"model": "no-such-model"}', "cannot be planned"),
    ],
)
def test_bad_requests_get_one_clear_line(tmp_path, content, message):
    request = tmp_path / "request.json"
    if content is not None:
        request.write_text(content, encoding="utf-8")
    with pytest.raises(CommandError, match=re.escape(message)):
        call_command("proposal", str(request), str(tmp_path / "out.pdf"))
    assert not (tmp_path / "out.pdf").exists()


@pytest.mark.django_db
def test_a_quote_with_three_options_renders_one_proposal_comparing_them(tmp_path, catalog):
    """Good / better / best: 4 × A3, 8 × A3 tenant pair and 16 × A3 8P8D side by side, one recommended."""
    paths = {}
    for name in ("4node", "8node-tenant", "8p8d"):
        paths[name] = tmp_path / f"{name}.json"
        paths[name].write_text(json.dumps(sample_plan_kwargs(name)["request_json"]), encoding="utf-8")
    out = tmp_path / "options.pdf"
    call_command(
        "proposal", str(paths["8node-tenant"]), str(out), "--language", "en",
        "--option", str(paths["4node"]), "--option", str(paths["8p8d"]), "--recommend", "1",
    )  # fmt: skip
    text = text_of(out)
    assert "Optionscompared" in text
    for letter in "ABC":
        assert f"Option{letter}" in text
    assert "recommended" in text
    # Each column from its own frozen plan: servers, capex and TCO of each configuration.
    for name, nodes in (("8node-tenant", 8), ("4node", 4), ("8p8d", 16)):
        result = sample_plan_kwargs(name)["result_json"]
        assert f"{nodes}×AtlasA3".replace("AtlasA3", "Atlas800A3") in text
        capex = format_money(Decimal(result["tco"]["capex"]["total"]), "CNY", "en")
        assert capex.replace(" ", "") in text, (name, capex)
        assert f"{round(result['performance']['output_tokens_per_s']):,}tok/s" in text
    assert Quote.objects.count() == 0


@pytest.mark.django_db
def test_at_most_two_options_besides_the_quoted_configuration(engineer):
    from django.core.exceptions import ValidationError

    from proposals.options import option_add
    from quotes.services.quotes import quote_create_from_configuration

    quote = quote_create_from_configuration(
        by=engineer, customer="ACME", language="en", **sample_plan_kwargs("4node")
    )
    request = sample_plan_kwargs("8node-tenant")["request_json"]
    option_add(quote=quote, request_json=request, recommended=True)
    option_add(quote=quote, request_json=request, label="larger", recommended=True)
    assert [o.recommended for o in quote.options.order_by("position")] == [False, True]  # one recommended
    with pytest.raises(ValidationError, match="at most 2 options"):
        option_add(quote=quote, request_json=request)
    with pytest.raises(ValidationError):
        option_add(quote=quote, request_json={"model": "no-such-model"})


@pytest.mark.django_db
def test_options_from_the_auto_planners_candidates_skip_the_quoted_one(engineer):
    """Candidates in ``configurator.planner.candidate_dict`` shape: the quoted shape is skipped,
    the next two become options B and C, the quoted configuration stays recommended."""
    from documents.pdf.options import comparison
    from proposals.options import options_from_candidates
    from quotes.services.quotes import quote_create_from_configuration

    quote = quote_create_from_configuration(
        by=engineer, customer="ACME", language="en", **sample_plan_kwargs("4node")
    )
    candidates = []
    for name in ("4node", "8node-tenant", "8p8d"):
        kwargs = sample_plan_kwargs(name)
        topology = kwargs["resolved_json"]["topology"]
        candidates.append(
            {
                "server": kwargs["resolved_json"]["server"]["slug"],
                "server_name": kwargs["resolved_json"]["server"]["name"],
                "topology": topology["kind"],
                "nodes": topology["nodes"],
                "request": kwargs["request_json"],
            }
        )
    added = options_from_candidates(quote=quote, candidates=candidates)
    a3 = sample_plan_kwargs("8p8d")["resolved_json"]["server"]["name"]  # the seeded server's name
    assert [o.label for o in added] == [f"8 × {a3}", f"16 × {a3}"]
    columns = comparison(quote.revisions.get(), "en")
    assert [(c["nodes"], c["recommended"]) for c in columns] == [(4, True), (8, False), (16, False)]


@pytest.mark.django_db
def test_an_issued_revision_renders_as_the_issued_document_without_the_draft_stamp(
    tmp_path, settings, engineer, seller, django_capture_on_commit_callbacks
):
    """``--quote Q-… --revision N`` of an issued revision: the bytes of the PDF stored on issuing."""
    from documents.pdf import render_proposal_pdf
    from documents.pdf.sample import sample_quote_create
    from quotes.models import QuoteRevision
    from quotes.services.issuing import revision_issue

    settings.MEDIA_ROOT = tmp_path / "media"
    settings.CELERY_TASK_ALWAYS_EAGER = True
    draft = sample_quote_create(by=engineer, language="en", name="4node", discount="0")
    out = tmp_path / "draft.pdf"
    call_command("proposal", "--quote", draft.quote.number, "--revision", "1", str(out))
    assert "Draft—notissued" in text_of(out)  # a draft says so
    with django_capture_on_commit_callbacks(execute=True):
        revision_issue(revision=draft, by=engineer)
    issued = QuoteRevision.objects.get(pk=draft.pk)
    stored = issued.pdf_file.read()
    assert stored.startswith(b"%PDF")
    out = tmp_path / "issued.pdf"
    call_command("proposal", "--quote", issued.quote.number, "--revision", "1", str(out))
    assert out.read_bytes() == stored
    # The rendering is deterministic: a fresh render of the issued revision is the same document.
    assert render_proposal_pdf(issued) == stored
    text = text_of(out)
    assert "Draft" not in text and "DRAFT" not in text and "草稿" not in text


@pytest.mark.django_db
def test_saved_quote_errors_are_one_line(tmp_path, engineer):
    with pytest.raises(CommandError, match="no such quote"):
        call_command("proposal", "--quote", "Q-1999-0001", str(tmp_path / "x.pdf"))
    from documents.pdf.sample import sample_quote_create

    revision = sample_quote_create(by=engineer, language="en", name="4node", discount="0")
    with pytest.raises(CommandError, match="no revision 7"):
        call_command("proposal", "--quote", revision.quote.number, "--revision", "7", str(tmp_path / "x.pdf"))
    with pytest.raises(CommandError, match="--revision needs --quote"):
        call_command("proposal", "--revision", "2", str(tmp_path / "x.pdf"))


@pytest.mark.django_db
def test_missing_compiled_translations_stop_the_chinese_proposal(tmp_path, settings, catalog):
    """Without the Chinese catalogue the proposal would print English headings: it is an error."""
    settings.LOCALE_PATHS = [str(tmp_path / "no-locale")]  # the project's django.mo is not found
    request = tmp_path / "request.json"
    request.write_text(json.dumps(sample_plan_kwargs("4node")["request_json"]), encoding="utf-8")
    with pytest.raises(CommandError, match="compiled translations for 'zh-hans' are missing"):
        call_command("proposal", str(request), str(tmp_path / "out.pdf"), "--language", "zh-hans")
    assert not (tmp_path / "out.pdf").exists()


@pytest.mark.django_db
@pytest.mark.parametrize("lang", ["en", "zh-hans"])
def test_a_plan_with_errors_is_refused_in_the_proposals_language(tmp_path, catalog, lang):
    """2 × HGX H200 with Kimi K3 at max_num_seqs 5 (the K3 Hopper recipe's, stated: left blank it is sized
    to the KV cache) runs 10 of the 16 users at once (an error): the refusal's header and the
    finding under it are both in the language asked for — not a Chinese header (the installation's
    default language) over an English finding."""
    from tests.golden.golden_cases import all_requests

    request = tmp_path / "request.json"
    body = all_requests()["hgx-h200-2-single"]
    body = {**body, "serving": {**body.get("serving", {}), "max_num_seqs": 5}}
    request.write_text(json.dumps(body), encoding="utf-8")
    with pytest.raises(CommandError) as refused:
        call_command("proposal", str(request), str(tmp_path / "out.pdf"), "--language", lang)
    message = str(refused.value)
    finding = message.split("cannot be planned: ", 1)[1]
    has_cjk = re.search(r"[\u4e00-\u9fff]", finding) is not None
    if lang == "en":
        assert not has_cjk, finding
        assert "The configuration has errors" in finding and "exceed the 10 this cluster serves" in finding
    else:
        assert "配置存在错误" in finding and "超过本集群可同时服务的 10 路" in finding
        # no English sentence in it; "DP rank" is the engine term the Chinese findings keep
        assert not re.search(r"[A-Za-z]{4,}", finding.replace("DP rank", "")), finding
    assert not (tmp_path / "out.pdf").exists()
