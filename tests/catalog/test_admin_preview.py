"""Catalog admin (issue 17): preview a row in the configurator, clone a row with
"Save as new", and readable names for imported models."""

from __future__ import annotations

import html
import re

import pytest
from django.urls import reverse

from catalog.importers.hf_config import readable_name
from catalog.models import LlmModel, ServerModel

pytestmark = pytest.mark.django_db


def test_server_and_model_rows_link_to_a_preview_that_shows_the_edited_row(client, catalog, users):
    client.force_login(users["catalog"])
    changelist = client.get(reverse("admin:catalog_servermodel_changelist")).content.decode()
    assert reverse("configurator:preview") + "?server=atlas-800-a2" in changelist
    models = client.get(reverse("admin:catalog_llmmodel_changelist")).content.decode()
    assert reverse("configurator:preview") + "?model=kimi-k3" in models

    # An edit the admin just saved shows in the preview's plan: 8 × 16.2 kW (docs/domain.md §7) → 20 kW.
    ServerModel.objects.filter(slug="atlas-800-a3").update(max_input_kw="20.0")
    from configurator.port import cache as catalog_cache

    catalog_cache.clear()
    page = client.get(reverse("configurator:preview"), {"server": "atlas-800-a3"}).content.decode()
    assert 'id="preview-note"' in page and "Atlas 800 A3" in page
    # The default 4-node plan, with the edited input power: 20 kW a server, 4 × 20 = 80 kW of servers.
    text = " ".join(re.sub(r"<[^>]+>", " ", page).split())
    assert "Maximum input per server 20.0 kW" in text and "Servers, maximum input 80.0 kW" in text
    assert 'id="quote-card"' not in page  # read-only for the catalog admin
    assert "inert" in page


def test_preview_of_a_model_caps_the_context_at_its_limit(client, catalog, users):
    client.force_login(users["engineer"])
    row = LlmModel.objects.exclude(max_context=0).order_by("max_context").first()
    page = client.get(reverse("configurator:preview"), {"model": row.slug}).content.decode()
    # The field is left blank and shows the context the plan takes: the default 131,072 tokens
    # (engine/defaults.py) clamped to the model's own limit.
    assert f'placeholder="{min(row.max_context, 131072)}"' in page
    assert client.get(reverse("configurator:preview"), {"model": "no-such"}).status_code == 404


def test_save_as_new_clones_a_row_under_a_free_slug(client, catalog, users):
    client.force_login(users["catalog"])
    server = ServerModel.objects.get(slug="atlas-800-a2")
    change = client.get(reverse("admin:catalog_servermodel_change", args=[server.pk])).content.decode()
    assert 'name="_saveasnew"' in change
    # Post the change form back as "Save as new", as the browser would.
    import re

    data = {}
    for name, value in re.findall(r'<input[^>]*name="([^"]+)"[^>]*value="([^"]*)"', change):
        data.setdefault(name, html.unescape(value))
    for name in re.findall(r'<select[^>]*name="([^"]+)"', change):
        block = change.split(f'name="{name}"', 1)[1].split("</select>", 1)[0]
        chosen = re.search(r'<option value="([^"]*)" selected', block)
        data[name] = chosen.group(1) if chosen else ""
    for name, value in re.findall(r'<textarea[^>]*name="([^"]+)"[^>]*>(.*?)</textarea>', change, re.S):
        data[name] = html.unescape(value.strip())
    for name in re.findall(r'<input type="checkbox" name="([^"]+)"[^>]*checked', change):
        data[name] = "on"
    data["_saveasnew"] = "Save as new"
    response = client.post(reverse("admin:catalog_servermodel_change", args=[server.pk]), data)
    body = response.content.decode()
    errors = re.findall(r"errorlist[^>]*>(.*?)</ul>", body, re.S)
    assert response.status_code == 302, (errors, re.findall(r"<p class=\"errornote\">(.*?)</p>", body, re.S))
    copy = ServerModel.objects.get(slug="atlas-800-a2-copy")
    assert copy.pk != server.pk and copy.name == f"{server.name} (copy)"
    assert copy.max_input_kw == server.max_input_kw


def test_an_imported_model_without_a_name_gets_a_readable_one():
    # Qwen3-235B-A22B (public config): 235 B parameters, 22 B active.
    assert readable_name("qwen3_moe", 235_093_634_560, 22_141_250_048) == "Qwen MoE 235B-A22B"
    assert readable_name("llama", 8_030_261_248, 8_030_261_248) == "Llama 8B"
    assert "qwen3_moe" not in readable_name("qwen3_moe", 30_000_000_000, 3_000_000_000)
