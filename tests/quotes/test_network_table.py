"""The proposal's network table names each row's plane.

16 × A3 8P8D has two 25GE Ethernet planes (service and storage) and two 1GE planes (management and
out-of-band BMC) that cover all nodes alike: without the plane, two rows read "Ethernet 25G, all
nodes" and a data-centre engineer cannot tell which switch pair is which.  The plane of each row is
the one the planes table below it prints (proposals/delivery.py ``network_planes``), in both
languages.
"""

from __future__ import annotations

import pytest
from django.utils import translation

from documents.pdf.context import proposal_context
from documents.pdf.sample import sample_quote_create

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("lang", ["en", "zh-hans"])
def test_every_network_row_names_its_plane(engineer, lang):
    revision = sample_quote_create(by=engineer, language=lang, name="8p8d")
    with translation.override(lang):
        context = proposal_context(revision, lang)
    rows = context["network_rows"]
    assert rows and all(r["plane_label"] for r in rows)
    planes = {p["plane"] for p in context["network_planes"]["planes"]}
    assert {r["plane_label"] for r in rows if r.get("switches")} == planes
    # Rows alike in fabric, speed and scope differ by their plane.
    alike: dict[tuple, set[str]] = {}
    for r in rows:
        alike.setdefault((r["fabric_label"], r.get("link_gbps"), r["scope_label"]), set()).add(
            r["plane_label"]
        )
    ethernet = [labels for (fabric, speed, _), labels in alike.items() if speed == 25]
    assert ethernet and all(len(labels) == 2 for labels in ethernet)
    expected = {"en": {"Service plane", "Storage plane"}, "zh-hans": {"业务面", "存储面"}}[lang]
    assert ethernet[0] == expected
