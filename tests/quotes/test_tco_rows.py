"""The proposal's buy-vs-lease table is the page's: one declared section renders both."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("lang", ["en", "zh-hans"])
def test_the_page_and_the_proposal_print_the_same_table(engineer, lang):
    """One declared section (configurator.sections TCO) renders both: the same rows, labels and texts.

    Before, the page and the PDF each wrote the table out: the PDF left out the capex lines and called
    the total "TCO over 3 years" where the page said "Total over 3 years", and the lease column's NPV
    read "—" in one and an amount in the other when there was no lease offer."""
    from django.utils import translation

    from configurator.templatetags import plan_tags
    from documents.pdf.context import proposal_context
    from documents.pdf.sample import sample_quote_create

    revision = sample_quote_create(by=engineer, language=lang)
    with translation.override(lang):
        context = proposal_context(revision, lang)
    plan = revision.result_json
    with translation.override(lang):  # the page's tag, in the page's language
        page = plan_tags.tco_rows(plan["figures"], plan["tco"], revision.currency)
    assert context["tco_rows"] == page
    labels = [r["label"] for r in page]
    servers, total = {"en": ("Servers", "TCO over 3 years"), "zh-hans": ("服务器", "3 年总拥有成本")}[lang]
    assert servers in labels and total in labels
    # each cell is the figure's own value, formatted by its unit
    by_label = {r["label"]: r for r in page}
    assert by_label[total]["buy"]["value"] == plan["figures"]["tco.buy_total"]["value"]
    assert by_label[total]["lease"]["value"] == plan["figures"]["tco.lease_total"]["value"]
