"""Every figure on the configurator page has a "why?" that explains it (issue 17).

The test walks the rendered results panel for several configurations: every
table row that shows a number carries at least one "why?", and every "why?"
explains its figure with a formula, the inputs it came from, or a named source
— never only the figure's own value under another name (the old page explained
"TPOT 15 ms" as "0.01 s").
"""

from __future__ import annotations

import html
import re

import pytest

from configurator.web.presets import preset_data

pytestmark = pytest.mark.django_db

CONFIGS = {
    "4 × A3 (default)": {},
    "8 × A3 primary/standby": {"topology": "primary_standby", "nodes": "8"},
    "16 × A3 8P8D": {"topology": "disaggregated", "nodes": "16", "prefill_nodes": "8", "decode_nodes": "8"},
    "8 × A2 text only": {"server": "atlas-800-a2", "nodes": "8", "max_model_len": "32768"},
}

ROW = re.compile(r"<tr[^>]*>(.*?)</tr>", re.S)
NUM_CELL = re.compile(r'<td class="num[^"]*"[^>]*>(.*?)</td>', re.S)
WHY = re.compile(r'<details class="why">(.*?)</details>', re.S)
TAG = re.compile(r"<[^>]+>")


def _text(fragment: str) -> str:
    return " ".join(html.unescape(TAG.sub(" ", fragment)).split())


def _rows(fragment: str) -> list[tuple[str, list[str]]]:
    """(row HTML with each "why?" replaced by a marker, the row's "why?" bodies):
    a "why?" holds its own little table, so it is lifted out before rows are split."""
    whys: list[str] = []

    def lift(match):
        whys.append(match.group(1))
        return f"[[why {len(whys) - 1}]]"

    flat = WHY.sub(lift, fragment)
    out = []
    for row in ROW.findall(flat):
        out.append((row, [whys[int(i)] for i in re.findall(r"\[\[why (\d+)\]\]", row)]))
    return out


def _explains(why: str) -> bool:
    """A formula, an input table with rows, or a named source (not only 'derived')."""
    if 'class="formula"' in why or "<tr>" in why:
        return True
    source = re.search(r'class="src-([a-z]+)"', why)
    return bool(source and source.group(1) in {"input", "seed", "public", "assumed"})


@pytest.fixture
def engineer_client(client, catalog, users):
    client.force_login(users["engineer"])
    client.cookies["django_language"] = "en"
    return client


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_every_number_in_the_results_has_a_non_circular_why(engineer_client, name):
    data = preset_data(None)
    data.update(CONFIGS[name])
    page = engineer_client.post("/", data).content.decode()
    results = page.split('<section id="results"', 1)[1].split("</section>", 1)[0]
    rows = _rows(results)
    numeric = [(r, w) for r, w in rows if any(re.search(r"\d", _text(c)) for c in NUM_CELL.findall(r))]
    assert len(numeric) >= 25, (name, len(numeric))  # the walk really covers the page
    money_rows = 0
    for row, whys in numeric:
        assert whys, f"{name}: no why? for row {_text(row)[:120]!r}"
        for why in whys:
            assert _explains(why), f"{name}: circular why? {_text(why)[:160]!r}"
        if re.search(r"[¥$€]", _text(row)):
            money_rows += 1
    assert money_rows >= 10, money_rows  # money figures are explained too


def test_tpot_is_explained_by_its_parts_in_the_units_the_page_shows(engineer_client):
    page = engineer_client.post("/", preset_data(None)).content.decode()
    row, whys = next((r, w) for r, w in _rows(page) if "Time per output token" in r)
    shown = _text(NUM_CELL.findall(row)[0])
    assert shown.endswith("ms")
    why = _text(whys[0])
    assert f"= {shown}" in why  # the same value as the table, not "0.01 s"
    # one level further: what the decode step is made of (engine/performance/decode.py, docs/performance.md)
    assert (
        "decode_step_s = overhead_s + stages × (layer_overhead_s + max(memory_time_s, compute_time_s)"
        " + tp_allreduce_s + all_to_all_s) + pipeline_hop_s + draft_s" in why
    )
    # the bytes the step reads, of which the groups the platform keeps whole on every rank (issue 24)
    # (K3 on 4 × A3: vLLM-Ascend keeps the router, latent and MLA-a groups whole, 11.49 GB per rank)
    assert "replicated_weights_bytes 11,488,985,088 B (11.5 GB)" in why and "weights_bytes_read" in why


def test_money_figures_name_their_price_list_and_unit_prices(engineer_client):
    page = engineer_client.post("/", preset_data(None)).content.decode()
    assert 'id="price-basis"' in page
    basis = _text(page.split('id="price-basis">', 1)[1].split("</td>", 1)[0])
    assert basis.startswith("Prices from the price list") or basis.startswith("No price list")
    row, whys = next((r, w) for r, w in _rows(page) if ">Servers<" in r)
    why = _text(whys[0])
    assert "nodes × server_unit_price" in why and "server_unit_price" in why


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_no_why_prints_a_python_dict_or_list(engineer_client, name):
    # Issue 31: inputs such as a rack's devices printed as "{'lingqu-630-v1': …}" and media counts as
    # "{'fiber': 64, …}"; they read as "name: value" items.
    data = preset_data(None)
    data.update(CONFIGS[name])
    page = engineer_client.post("/", data).content.decode()
    for why in WHY.findall(page):
        text = _text(why)
        assert not re.search(r"\{'|\['|': ", text), text[:300]
