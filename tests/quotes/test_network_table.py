"""The proposal's network table names each row's plane.

16 × A3 8P8D has two 25GE Ethernet planes (service and storage) and two 1GE planes (management and
out-of-band BMC) that cover all nodes alike: without the plane, two rows read "Ethernet 25G, all
nodes" and a data-centre engineer cannot tell which switch pair is which.  The plane of each row is
the one the planes table below it prints (proposals/delivery.py ``network_planes``), in both
languages: the vocabulary's word for the plane, through the declared sections (``network``, whose
plane the proposal prints under the fabric, and ``network_planes``).
"""

from __future__ import annotations

import pytest
from django.utils import translation

from documents.pdf.context import proposal_context
from documents.pdf.sample import sample_quote_create

pytestmark = pytest.mark.django_db


def _cells(row: dict) -> dict[str, dict]:
    return {c["name"]: c for c in row["cells"]}


@pytest.mark.parametrize("lang", ["en", "zh-hans"])
def test_every_network_row_names_its_plane(engineer, lang):
    revision = sample_quote_create(by=engineer, language=lang, name="8p8d")
    with translation.override(lang):
        context = proposal_context(revision, lang)
    rows = [_cells(r) for r in context["network_table"]["rows"]]
    # the plane is printed under the fabric (the network section's "plane" column)
    assert rows and all(r["fabric"]["lines"] for r in rows)
    planes = {_cells(r)["plane"]["text"] for r in context["planes_table"]["rows"]}
    assert {r["fabric"]["lines"][0] for r in rows if r["switches"]["value"]} == planes
    # Rows alike in fabric, speed and scope differ by their plane.
    alike: dict[tuple, set[str]] = {}
    for r in rows:
        alike.setdefault((r["fabric"]["text"], r["fabric"]["note"], r["scope"]["text"]), set()).add(
            r["fabric"]["lines"][0]
        )
    ethernet = [labels for (fabric, speed, _), labels in alike.items() if speed == "25G"]
    assert ethernet and all(len(labels) == 2 for labels in ethernet)
    expected = {"en": {"service plane", "storage plane"}, "zh-hans": {"业务面", "存储面"}}[lang]
    assert ethernet[0] == expected
