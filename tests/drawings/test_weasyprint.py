"""The PDF renders every drawing without fetching anything (WeasyPrint's own SVG renderer)."""

import pytest

from configurator.drawings import (
    bar_chart_svg,
    line_chart_svg,
    memory_bar_svg,
    power_feed_svg,
    svg_to_data_uri,
    topology_svg,
    tornado_svg,
)
from configurator.drawings.fmt import money_axis_formatter

weasyprint = pytest.importorskip("weasyprint")

GB = 10**9


def all_drawings(lang):
    money = money_axis_formatter("CNY", lang, 36e6)
    group = {"name": "P", "role": "prefill", "nodes": 8, "label": "DP8 / TP16 / EP128", "devices": 128}
    return [
        memory_bar_svg(
            [("weights", "", 55 * GB), ("kv_cache", "", -4.4 * GB), ("reserved", "", 6.4 * GB)], 64 * GB, lang
        ),
        topology_svg(
            [group, {**group, "name": "D", "role": "decode", "first_node": 8}], lang, kv_transfer=True
        ),
        line_chart_svg([{"name": "buy", "points": [(0, 24e6), (36, 30e6)]}], "m", "¥", lang, y_format=money),
        bar_chart_svg(
            [{"label": "buy", "value": 4.1}], lang, money, reference={"value": 12.4, "label": "API"}
        ),
        tornado_svg(
            [
                {
                    "label": "PUE",
                    "low_value": 29e6,
                    "high_value": 31e6,
                    "low_label": "1.2",
                    "high_label": "1.5",
                }
            ],
            30e6,
            lang,
            money,
        ),
        power_feed_svg([{"name": "R01", "kw": 32.4, "breaker": "63 A"}], lang),
    ]


class RecordingFetcher(weasyprint.urls.URLFetcher):
    def __init__(self):
        super().__init__()
        self.urls = []

    def fetch(self, url, headers=None):
        self.urls.append(url)
        return super().fetch(url, headers)


@pytest.mark.parametrize("lang", ["en", "zh-hans"])
def test_pdf_renders_inline_and_img_drawings_without_fetching(lang):
    drawings = all_drawings(lang)
    body = "".join(f"<div style='width:170mm'>{svg}</div>" for svg in drawings)
    body += f"<img style='width:170mm' src='{svg_to_data_uri(drawings[0])}'>"
    fetcher = RecordingFetcher()
    pdf = weasyprint.HTML(string=f"<html><body>{body}</body></html>", url_fetcher=fetcher).write_pdf()
    assert pdf.startswith(b"%PDF")
    # Only the data: URI of the <img> is "fetched"; nothing from disk or network.
    assert all(url.startswith("data:") for url in fetcher.urls)
    assert len(fetcher.urls) == 1
