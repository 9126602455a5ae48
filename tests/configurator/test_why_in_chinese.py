"""The "why?" of every figure reads in Chinese on the Chinese page.

A figure's formula is code (its inputs' names, the same in both languages, ``translate="no"``), but
the Chinese reader met 106 explanations whose inputs were only code names and whose sources were
English prose ("performance curve × TCO annual cost", "server PSUs with active PFC").  Now each
input is named in words beside its code name — the label of the figure of that name, else the
input table's (``configurator/engine/input_terms.py``) — and a source is the engine's own note in
Chinese, the request fields an input comes from as the form names them, or a document's citation
kept as the original, quoted.
"""

from __future__ import annotations

import html
import re

import pytest

from configurator.engine.input_terms import INPUT_TERMS, SOURCE_REFS_ZH
from configurator.web.presets import preset_data
from tests.golden.golden_cases import all_requests

pytestmark = pytest.mark.django_db

CJK = re.compile(r"[\u4e00-\u9fff]")
WHY = re.compile(r'<details class="why">(.*?)</details>', re.S)
INPUT_ROW = re.compile(r'<tr><td>(.*?)</td><td class="mono small" translate="no">(.*?)</td>', re.S)
SOURCE = re.compile(r'<div class="small muted">来源: <span class="src-[a-z]+">[^<]*</span>(.*?)</div>', re.S)
#: Input names made from data: the things they name (a switch, a node, a rack), not quantities.
DATA_NAME = re.compile(
    r"(#\d+|^node-\d+|^R\d+$|\.all$|^scale_(up|out)\.|\.lingqu\.|^(service|storage|management|oob)\.)"
)


def _plan_inputs() -> set[str]:
    from configurator.engine.serialize import plan_to_dict
    from configurator.planning.plans import plan_from_json

    names = set()
    for request in all_requests().values():
        _request, result = plan_from_json(request, advise=False)
        figures = plan_to_dict(result)["figures"]
        last = {key.rsplit(".", 1)[-1] for key in figures}
        for figure in figures.values():
            for name in figure.get("inputs") or {}:
                if name not in last and not DATA_NAME.search(name):
                    names.add(name)
    return names


def test_every_formula_input_of_the_seeded_plans_has_a_word(catalog):
    missing = sorted(name for name in _plan_inputs() if name not in INPUT_TERMS)
    assert missing == []


def test_the_engines_own_source_notes_are_translated():
    for en, zh in SOURCE_REFS_ZH.items():
        assert CJK.search(zh), en


def test_the_chinese_8p8d_page_names_every_input_and_translates_or_quotes_every_source(
    client, users, catalog
):
    client.force_login(users["engineer"])
    client.cookies["django_language"] = "zh-hans"
    data = {
        **preset_data(None),
        "topology": "disaggregated",
        "nodes": "16",
        "prefill_nodes": "8",
        "decode_nodes": "8",
    }
    page = client.post("/", data).content.decode()
    whys = WHY.findall(page)
    assert len(whys) > 100
    unnamed, english = set(), set()
    for body in whys:
        for word, name in INPUT_ROW.findall(body):
            if not word.strip() and not DATA_NAME.search(html.unescape(name)):
                unnamed.add(html.unescape(name))
        for tail in SOURCE.findall(body):
            # What follows the kind: Chinese words, a quoted original (<q lang="en">), or code.
            prose = re.sub(r'<q class="cite" lang="en" translate="no">.*?</q>', "", tail)
            prose = re.sub(r'<span class="mono small" translate="no">.*?</span>', "", prose)
            prose = re.sub(r'<span translate="no">(.*?)</span>', r"\1", prose)
            text = html.unescape(re.sub(r"<[^>]+>", " ", prose)).strip(" ·")
            if re.search(r"[A-Za-z]{4,}", text) and not CJK.search(text):
                english.add(text)
    assert unnamed == set()
    assert english == set()
