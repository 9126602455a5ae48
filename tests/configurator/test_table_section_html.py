"""The page's table sections written by ``plan_tags.table_section_html`` (not a template: a table was some
600 template nodes): headings, cells, notes, spans, the total line and each row's "why?", every text
escaped as the template's autoescape did."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from django.template import Context, engines
from django.utils.safestring import mark_safe
from django.utils.translation import override

from configurator import reference, sections
from configurator.engine.plan import plan
from configurator.engine.serialize import plan_to_dict
from configurator.templatetags.plan_tags import table_section_html

TABLE = {
    "columns": [
        {"label": "Rack <A>", "num": False},
        {"label": "kW", "num": True},
        {"label": "Note", "num": False},
    ],
    "rows": [
        {
            "label": "R01 & R02",
            "note": "<b>hot</b>",
            "cells": [
                {"text": "12.5", "num": True, "flag": True, "note": "max"},
                {"text": mark_safe("<em>kept</em>"), "num": False},
            ],
            "figures": ["racks.r01.kw"],
        },
        {"label": "", "span": True, "cells": [{"text": "spans", "num": False}], "figures": []},
    ],
    "total": {
        "label": "Total",
        "cells": [
            {"text": "—", "figure": ""},
            {"text": "25", "num": True, "figure": "racks.total_kw"},
            {"text": None},
        ],
    },
}
FIGURES = {
    "racks.r01.kw": {
        "value": 12.5,
        "unit": "kW",
        "label_en": "Rack kW",
        "label_zh": "",
        "formula": "a",
        "inputs": {},
    },
    "racks.total_kw": {
        "value": 25,
        "unit": "kW",
        "label_en": "Total",
        "label_zh": "",
        "formula": "b",
        "inputs": {},
    },
}


class Cells(HTMLParser):
    """The table's rows as lists of (tag, attributes, text)."""

    def __init__(self):
        super().__init__()
        self.rows, self.cell, self.depth = [], None, 0

    def handle_starttag(self, tag, attrs):
        if tag == "tr" and self.cell is None:
            self.rows.append([])
        elif tag in ("td", "th") and self.cell is None:
            self.cell = [tag, dict(attrs), ""]
        elif self.cell is not None:
            self.depth += 1

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self.depth == 0 and self.cell is not None:
            self.rows[-1].append(tuple(self.cell))
            self.cell = None
        elif self.cell is not None:
            self.depth -= 1

    def handle_data(self, data):
        if self.cell is not None:
            self.cell[2] += data


def parsed(markup: str) -> list:
    p = Cells()
    p.feed(markup)
    return p.rows


def test_every_text_is_escaped_and_every_part_is_where_the_template_put_it():
    with override("en"):
        markup = table_section_html(Context({}), TABLE, FIGURES)
    assert markup.startswith("<table>\n  <thead><tr>") and markup.endswith("\n  </tbody>\n</table>\n")
    assert "Rack &lt;A&gt;" in markup and "R01 &amp; R02" in markup and "&lt;b&gt;hot&lt;/b&gt;" in markup
    assert "<em>kept</em>" in markup  # a safe string stays as it is, as {{ }} leaves it
    head, first, spanned, total = parsed(markup)
    assert [(tag, attrs.get("class")) for tag, attrs, _ in head] == [
        ("th", None), ("th", "num"), ("th", None), ("th", None)
    ]  # fmt: skip
    assert first[0][2] == "R01 & R02 (<b>hot</b>)"  # the note, escaped, read back as text
    assert first[1][1] == {"class": "num sev warning"} and first[1][2] == "12.5 max"
    assert first[2][1] == {"class": ""}
    assert "依据" in first[3][2] or "why?" in first[3][2]  # the row's why?
    assert spanned[0][1] == {"class": "", "colspan": "2"} and spanned[0][2] == "spans"
    assert [c[2] for c in total[:3]] == ["Total", "25", "None"]  # {{ None }} prints None, as before
    assert total[1][1] == {"class": "num"} and total[2][1] == {}
    assert total[3][2].count("why?") == 1  # the total's why? (of its cells with a figure)


@pytest.mark.parametrize("lang", ["en", "zh-hans"])
def test_the_network_table_of_a_plan_reads_as_its_section(lang):
    result = plan_to_dict(plan(reference.request(reference.CASES["a3-16-8p8d"])))
    with override(lang):
        t = sections.table(
            "network", result["network"]["rows"], lang, figures=result["figures"],
            classes=sections.optics_classes(result["network"]),
        )  # fmt: skip
        rendered = engines["django"].from_string("{% load plan_tags %}{% table_section_html t figures %}")
        markup = rendered.render({"t": t, "figures": result["figures"]})
    rows = parsed(markup)
    assert [c[2] for c in rows[0][:-1]] == [c["label"] for c in t["columns"]]
    body = rows[1 : 1 + len(t["rows"])]
    whys = 0
    for r, row in zip(body, t["rows"], strict=True):
        first = 1 if row.get("label") else 0  # a row's own label, when it has one, before its cells
        expected = [str(c["text"]) + (f" {c['note']}" if c.get("note") else "") for c in row["cells"]]
        assert [c[2] for c in r[first : first + len(row["cells"])]] == expected
        explained = [k for k in row["figures"] if k in result["figures"]]  # a figure the plan lacks has none
        assert r[-1][2].count("依据" if lang == "zh-hans" else "why?") == len(explained)
        whys += len(explained)
    assert whys >= 10


def test_figure_rows_escape_their_words_and_mark_the_total():
    from configurator.templatetags.plan_tags import figure_rows_html

    rows = [
        {"key": "racks.r01.kw", "label": "Rack <1>", "text": "12.5 kW", "total": False},
        {"key": "racks.total_kw", "label": "Total & all", "text": "25 kW", "total": True},
        {"key": "no.such.figure", "label": "Unexplained", "text": "—"},
    ]
    with override("en"):
        markup = figure_rows_html(Context({}), rows, FIGURES)
    first, total, unexplained = parsed(f"<table>{markup}</table>")
    assert [c[2] for c in first[:2]] == ["Rack <1>", "12.5 kW"] and "Rack &lt;1&gt;" in markup
    assert markup.count('<tr class="total">') == 1 and "Total &amp; all" in markup
    assert first[1][1] == {"class": "num"} and "why?" in first[2][2] and "why?" in total[2][2]
    assert unexplained[2][2] == ""  # a figure the plan lacks has no why?


def test_tco_rows_span_both_columns_or_explain_buy_and_lease_once_each():
    from configurator.templatetags.plan_tags import tco_rows_html

    rows = [
        {
            "label": "Servers",
            "buy": {"text": "¥1", "key": "racks.r01.kw"},
            "lease": {"text": "¥2", "key": "racks.r01.kw"},
        },
        {"label": "Power <both>", "detail": True, "span": {"text": "¥3", "key": "racks.total_kw"}},
        {
            "label": "Total",
            "total": True,
            "buy": {"text": "¥4", "key": "racks.r01.kw"},
            "lease": {"text": "¥5", "key": "racks.total_kw"},
        },
    ]
    with override("en"):
        markup = tco_rows_html(Context({}), rows, FIGURES)
    servers, power, total = parsed(f"<table>{markup}</table>")
    assert [c[2] for c in servers[:3]] == ["Servers", "¥1", "¥2"] and servers[3][2].count("why?") == 1
    assert power[0][1] == {"class": "small"} and power[0][2] == "Power <both>"
    assert power[1][1] == {"class": "num", "colspan": "2"} and power[2][2].count("why?") == 1
    assert total[3][2].count("why?") == 2 and markup.count('<tr class="total">') == 1


def test_every_field_gets_its_error_slot_with_its_errors_escaped():
    from django import forms

    from configurator.templatetags.plan_tags import field_error_slots

    class Form(forms.Form):
        nodes = forms.IntegerField(min_value=1)
        name = forms.CharField()

        def clean_name(self):
            raise forms.ValidationError("<b>%(v)s</b> is taken", params={"v": self.cleaned_data["name"]})

    markup = field_error_slots(Form({"nodes": "0", "name": "a&b"}))
    slots = dict(re.findall(r'<div class="errs" id="err-(\w+)" hx-swap-oob="true">(.*?)</div>', markup))
    assert list(slots) == ["nodes", "name"]
    assert slots["nodes"].count('<p class="field-error">') == 1
    assert slots["name"] == '<p class="field-error">&lt;b&gt;a&amp;b&lt;/b&gt; is taken</p>'
    assert field_error_slots(Form({"nodes": "3", "name": ""})).count("field-error") == 1  # required name only
