"""The page, the proposal PDF, the drawings and the catalog spell a term the same way (issue 20).

Each names a fabric, a serving group, a role or a topology through configurator/engine/vocabulary.py;
these tests render a term through each path and compare ("LingQu (UB)" on the page was "LingQu" in
the PDF, "预填充（P）" on the page was "预填充 (P)" in the topology drawing).
"""

from __future__ import annotations

import pytest
from django.template import Context, Template
from django.utils import translation

from catalog.models.hardware import Fabric, SwitchFabric
from configurator import sections
from configurator.engine import vocabulary
from configurator.engine.vocabulary import drawing_text as t
from configurator.web import presentation
from documents.pdf import context as pdf

LANGS = ("en", "zh-hans")


def _tag(kind: str, code: str, lang: str) -> str:
    with translation.override(lang):
        return Template("{% load plan_tags %}{% term kind code %}").render(
            Context({"kind": kind, "code": code})
        )


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("fabric", sorted(vocabulary.FABRICS))
def test_a_fabric_reads_the_same_on_the_page_and_in_the_pdf(fabric, lang):
    page_row = presentation._network({"network": {"rows": [{"fabric": fabric, "role": "scale_out"}]}}, lang)
    page = page_row["rows"][0]["fabric_label"]
    with translation.override(lang):
        in_pdf = pdf.fabric_label(fabric, lang)
    assert page == in_pdf == _tag("fabric", fabric, lang) == vocabulary.FABRICS[fabric].pick(lang)


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("group", sorted(vocabulary.GROUPS))
def test_a_serving_group_and_its_role_read_the_same_on_the_page_and_in_the_pdf(group, lang):
    role = {"cluster-a": "serve", "cluster-b": "standby"}.get(group, group)
    page = presentation._layout({"layout": {"groups": [{"name": group, "role": role}]}}, lang)["groups"][0]
    with translation.override(lang):
        assert pdf.group_label(group) == page["label"] == _tag("group", group, lang)
        assert pdf.role_label(role) == page["role_label"] == _tag("role", role, lang)
    # A fabric row serving two groups: the network section's scope cell, which the page and both
    # PDF editions print (configurator.sections NETWORK, rendered by sections.table).
    network = sections.table(sections.NETWORK, [{"fabric": "roce", "scope": f"{group}+{group}"}], lang)
    (scope,) = (cell["text"] for cell in network["rows"][0]["cells"] if cell["name"] == "scope")
    assert scope == f"{page['label']} + {page['label']}"
    assert t(f"role_{role}", lang) == page["role_label"]  # the topology drawing's badge


@pytest.mark.parametrize("lang", LANGS)
def test_a_nodes_role_reads_the_same_on_the_page_in_the_pdf_and_in_the_drawing(lang):
    launch = {"nodes": [{"index": 0, "group": "prefill", "role": "master"}]}
    page = presentation._launch({"launch": launch}, lang)["nodes"][0]
    assert page["role_label"] == t("master", lang) == _tag("node_role", "master", lang)
    assert page["group_label"] == vocabulary.group_label("prefill", lang)
    with translation.override(lang):
        (in_pdf,) = pdf._launch_groups(launch)
    assert in_pdf["label"] == page["group_label"]
    assert in_pdf["nodes"][0]["role_label"] == page["role_label"]


# The proposal's topology names as the translation catalogue had them before the vocabulary took
# them over (docs/glossary.md: 单集群 / 主备 / 租户隔离 / PD 分离), written out so neither can drift.
TOPOLOGY_NAMES = {
    "single": ("Single cluster", "单集群"),
    "primary_standby": ("Two clusters, primary/standby high availability", "双集群主备高可用"),
    "tenant_pair": ("Two clusters, tenant isolation / canary", "双集群租户隔离 / 灰度"),
    "disaggregated": ("Prefill/decode disaggregation (8P8D)", "PD 分离（8P8D）"),
}


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize(
    "topology",
    [
        {"kind": "single"},
        {"kind": "primary_standby"},
        {"kind": "tenant_pair"},
        {"kind": "disaggregated", "prefill_nodes": 8, "decode_nodes": 8},
    ],
)
def test_a_topology_reads_as_the_proposal_always_named_it(topology, lang):
    """The PDF's topology names come from the vocabulary and keep the proposal's wording."""
    en, zh = TOPOLOGY_NAMES[topology["kind"]]
    assert pdf.topology_label(topology, lang) == (zh if lang.startswith("zh") else en)


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("choices", [Fabric, SwitchFabric])
def test_catalog_fabric_choices_spell_the_fabrics_as_the_vocabulary(choices, lang):
    """The admin keeps gettext labels for its choices, spelled as the page and the PDF spell them."""
    with translation.override(lang):
        for code, label in choices.choices:
            assert str(label) == vocabulary.fabric_label(code, lang), code


@pytest.mark.parametrize("lang", LANGS)
def test_the_pdf_labels_sources_and_areas_as_the_page(lang):
    with translation.override(lang):
        for kind in vocabulary.SOURCE_KINDS:
            assert _tag("source", kind, lang) == vocabulary.source_kind_label(kind, lang)
            assert pdf.SOURCE_KINDS[kind] == (
                vocabulary.SOURCE_KINDS[kind].en,
                vocabulary.SOURCE_KINDS[kind].zh,
            )
    checks = [{"area": area, "severity": "warning"} for area in vocabulary.AREAS]
    page = {c["area"] for c in presentation.localized_checks(checks, lang)}
    assert page == {_tag("area", area, lang) for area in vocabulary.AREAS}
