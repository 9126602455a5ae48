"""Issue 31: the Chinese interface names catalog rows in Chinese — sites, price lists and
checkpoints carry a Chinese name beside servers and racks (catalog/seed/*.yaml ``name_zh``), and the
page's choices and price note use it; the English page keeps the catalog's name."""

from __future__ import annotations

import pytest
from django.urls import reverse

from configurator.web.presets import preset_data

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("lang", "shown", "hidden"),
    [
        # catalog/seed/sites.yaml, price_lists.yaml, checkpoints.yaml
        (
            "zh-hans",
            [
                "国内数据中心（默认）",
                "2026 年人民币目录价 (CNY, 2026-01-01–…)",
                "Kimi K3 — ModelSlim W4A8 量化权重",
            ],
            ["China data centre (default)", "CNY list prices 2026"],
        ),
        (
            "en",
            [
                "China data centre (default)",
                "CNY list prices 2026 (seeded) (CNY, 2026-01-01–…)",
                "Kimi K3 — ModelSlim W4A8 for vLLM-Ascend",
            ],
            ["国内数据中心"],
        ),
    ],
)
def test_catalog_rows_are_named_in_the_pages_language(client, catalog, users, lang, shown, hidden):
    client.force_login(users["engineer"])
    client.cookies["django_language"] = lang
    body = client.post(
        reverse("configurator:update"), preset_data(None), HTTP_HX_REQUEST="true"
    ).content.decode()
    page = client.get("/").content.decode()
    for text in shown:
        assert text in page, text
    for text in hidden:
        assert text not in page, text
    # The price note of the results names the list the same way.
    assert ("2026 年人民币目录价" in body) == (lang == "zh-hans")
