"""One vocabulary and one formatter (issue 20): configurator/engine/vocabulary.py and formatting.py.

Every code has its words in both languages, the words are the glossary's, and the engine's message
helpers write numbers exactly as the page's and the drawings' formatters do.
"""

from __future__ import annotations

import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest

from configurator.engine import explain, formatting, vocabulary
from configurator.engine.vocabulary import Term

GLOSSARY = (Path(__file__).resolve().parents[2] / "docs" / "glossary.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", sorted(vocabulary.TABLES))
def test_every_term_has_both_languages(name):
    table = vocabulary.TABLES[name]
    assert table, name
    for code, term in table.items():
        assert isinstance(term, Term), (name, code)
        assert term.en.strip() and term.zh.strip(), (name, code, term)
        assert term.en == term.en.strip() and term.zh == term.zh.strip(), (name, code, term)


def test_every_group_and_plane_has_every_form():
    for code, group in vocabulary.GROUPS.items():
        assert {group.label.en, group.in_text.en, group.short.en} and group.label.zh, code
        assert code in vocabulary.ROLES or code.startswith("cluster-")  # a group's own role, or one of a pair
    assert set(vocabulary.PLANE_LABELS) == set(vocabulary.PLANE_SHORT) == set(vocabulary.PLANE_IN_TEXT)


def test_the_chinese_is_the_glossarys():
    """The industry's own words (docs/glossary.md), not a translation of the English."""
    assert "预填充" in GLOSSARY and "解码" in GLOSSARY
    for code, word in (("prefill", "预填充"), ("decode", "解码"), ("cluster", "集群")):
        group = vocabulary.GROUPS[code]
        for form in (group.label, group.in_text, group.short):
            assert word in form.zh, (code, form)
    assert "灵衢" in GLOSSARY and vocabulary.FABRICS["lingqu"].zh.startswith("灵衢")
    for plane, word in (("scale_out", "参数面"), ("service", "业务面"), ("management", "管理面")):
        assert word in GLOSSARY and word in vocabulary.PLANE_LABELS[plane].zh, plane
    assert "主备高可用" in vocabulary.TOPOLOGIES["primary_standby"].zh
    assert "租户隔离 / 灰度" in vocabulary.TOPOLOGIES["tenant_pair"].zh
    for term in vocabulary.SCENARIOS.values():
        assert term.zh in GLOSSARY, term


def test_chinese_labels_use_full_width_parentheses():
    """预填充（P）, never 预填充 (P): one spelling of the bracket in Chinese text."""
    for name, table in vocabulary.TABLES.items():
        for code, term in table.items():
            assert "(" not in term.zh and ")" not in term.zh, (name, code, term.zh)


def test_lookups_pick_the_language_and_show_unknown_codes_as_they_are():
    assert vocabulary.group_label("cluster-a", "en") == "Cluster A"
    assert vocabulary.group_label("cluster-a", "zh-hans") == "集群 A"
    assert vocabulary.group_in_text("prefill", "en") == "the prefill (P) group"
    assert vocabulary.group_in_text("prefill", "zh") == "预填充（P）集群"
    assert vocabulary.group_short("decode", "zh-hans") == "解码"
    assert vocabulary.fabric_label("lingqu", "en") == "LingQu (UB)"
    assert vocabulary.fabric_label("lingqu", "zh-hans") == "灵衢（UB）"
    assert vocabulary.fabric_label("tokenring", "zh-hans") == "tokenring"
    assert (
        vocabulary.topology_label("disaggregated", "zh-hans", prefill_nodes=8, decode_nodes=8)
        == "PD 分离（8P8D）"
    )
    assert vocabulary.topology_label("", "en") == "—"
    assert vocabulary.scenario_label("", "en") == ""


def test_the_vocabulary_and_the_formatter_need_no_django():
    code = (
        "import sys; import configurator.engine.vocabulary, configurator.engine.formatting; "
        "assert not [m for m in sys.modules if m.split('.')[0] == 'django'], 'django imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=Path(__file__).resolve().parents[2])


# --------------------------------------------------------------------------- one formatter


@pytest.mark.parametrize(
    ("value", "expected"),
    [(133120, "133,120"), (1_048_576.4, "1,048,576"), (2.5, "3"), (0, "0"), (-1200, "−1,200")],
)
def test_thousands(value, expected):
    assert formatting.thousands(value) == expected
    assert explain.thousands(value) == expected  # the engine's messages write numbers the same way


def test_bytes_percent_and_seconds():
    assert formatting.format_bytes_gb(29_750_000_000) == explain.gb(29_750_000_000) == "29.8 GB"
    assert formatting.format_bytes_gib(2**31) == explain.gib(2**31) == "2.0 GiB"
    assert formatting.format_bytes_tb(1_560_936_091_448) == explain.tb(1_560_936_091_448) == "1.56 TB"
    assert formatting.format_bytes_mb(28_085_760) == explain.mb(28_085_760) == "28.1 MB"
    assert formatting.format_percent(0.85) == explain.pct(0.85) == "85 %"
    assert formatting.format_percent(0.1234, 1) == "12.3 %"
    assert formatting.format_seconds(0.015) == "15 ms"
    assert formatting.format_seconds(Decimal("2.44")) == "2.4 s"
    assert formatting.format_seconds(1) == "1.0 s"


def test_the_drawings_formatter_is_this_one():
    from configurator.drawings import fmt

    assert fmt.format_money is formatting.format_money
    assert fmt.format_number is formatting.format_number
    assert fmt.money_axis_formatter is formatting.money_axis_formatter


def test_the_translation_catalogue_spells_each_term_as_the_vocabulary():
    """Where a template or a Django choice still says a term through gettext (locale/zh_Hans/*.tsv),
    the Chinese is the vocabulary's (e.g. "LingQu (UB)" → 灵衢（UB）, "prefill (P)" → 预填充（P）)."""
    msgstr: dict[str, set[str]] = {}
    for tsv in sorted((Path(__file__).resolve().parents[2] / "locale" / "zh_Hans").glob("*.tsv")):
        for line in tsv.read_text(encoding="utf-8").splitlines():
            if line.strip() and not line.startswith("#") and "\t" in line:
                en, _, zh = line.partition("\t")
                msgstr.setdefault(en, set()).add(zh)
    checked = 0
    for name, table in vocabulary.TABLES.items():
        for code, term in table.items():
            if term.en in msgstr:
                checked += 1
                assert msgstr[term.en] == {term.zh}, (name, code, term, msgstr[term.en])
    assert checked >= 20  # fabrics, roles, topologies, areas …


def test_the_seeded_scenarios_are_named_as_the_vocabulary_names_them():
    """One spelling per scenario: the seed (what the page's choices show) and the vocabulary (the
    PDF, the checks) agree, "&" and all; a seeded scenario without a term would show its slug."""
    import yaml

    seed = yaml.safe_load((Path(__file__).resolve().parents[2] / "catalog/seed/scenarios.yaml").read_text())
    assert len(seed) >= 5
    for row in seed:
        term = vocabulary.SCENARIOS[row["slug"]]
        assert (term.en, term.zh) == (row["name_en"], row["name_zh"]), row["slug"]


def test_the_side_tables_live_in_the_vocabulary():
    """Cooling, vendors, platforms, power methods and the drawings' words are read from here."""
    assert vocabulary.cooling_label("containment", "zh-hans") == "冷/热通道封闭"
    assert vocabulary.vendor_label("Inspur", "zh-hans") == "浪潮"
    assert vocabulary.vendor_label("Lenovo", "zh-hans") == "Lenovo"  # unknown: as it is
    assert vocabulary.drawing_text("node", "zh-hans", n=3) == "节点 3"
    assert vocabulary.drawing_text("role_prefill", "en") == vocabulary.ROLES["prefill"].en
    from configurator.engine.defaults import platform_labels

    assert platform_labels(["ascend", "cuda"], "zh") == "昇腾 NPU（vLLM-Ascend）、NVIDIA GPU（vLLM）"
