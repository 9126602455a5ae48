"""``manage.py proposal``: the proposal of a plan request, rendered by the quote's code, nothing saved."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest
from django.core.management import CommandError, call_command

from proposals.models import SellerProfile
from quotes.models import Customer, Quote, QuoteNumberCounter
from quotes.pdf.sample import sample_plan_kwargs

pytestmark = pytest.mark.skipif(shutil.which("pdftotext") is None, reason="poppler-utils not installed")


def text_of(path) -> str:
    done = subprocess.run(
        ["pdftotext", "-raw", "-enc", "UTF-8", str(path), "-"], capture_output=True, check=True
    )
    return re.sub(r"\s+", "", done.stdout.decode("utf-8"))


@pytest.mark.django_db
def test_the_cli_renders_the_8p8d_proposal_without_saving_a_quote(tmp_path):
    request = tmp_path / "request.json"
    request.write_text(json.dumps(sample_plan_kwargs("8p8d")["request_json"]), encoding="utf-8")
    out = tmp_path / "proposal.pdf"
    call_command("proposal", str(request), str(out), "--language", "en", "--customer", "ACME Bank")
    assert out.read_bytes().startswith(b"%PDF")
    text = text_of(out)
    assert "ACMEBank" in text
    assert "16×Atlas800A3" in text and "8P8D" in text
    assert SellerProfile.current().company_en.replace(" ", "") in text
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
