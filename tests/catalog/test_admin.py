"""The catalog admin as a superuser: field errors on bad input, sources, history, config.json import."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from catalog import services
from catalog.models import (
    Accelerator,
    LlmModel,
    PriceItem,
    PriceList,
    RackType,
    Scenario,
    ServerModel,
    ServerNic,
    SiteProfile,
    SwitchModel,
    TopologyTemplate,
)

from .conftest import CONFIG_DIR

pytestmark = pytest.mark.django_db

ALL_MODELS = (
    Accelerator,
    ServerModel,
    ServerNic,
    SwitchModel,
    RackType,
    SiteProfile,
    TopologyTemplate,
    LlmModel,
    Scenario,
    PriceList,
    PriceItem,
)


def _url(obj, view="change"):
    meta = obj._meta
    return reverse(f"admin:{meta.app_label}_{meta.model_name}_{view}", args=[obj.pk])


def _encode(field, value):
    if value is None:
        return None
    if isinstance(value, bool):
        return "on" if value else None
    if isinstance(value, list | tuple):
        return [str(v.pk if hasattr(v, "pk") else v) for v in value]
    if hasattr(value, "pk"):
        return str(value.pk)
    return str(value)


def _form_data(form) -> dict:
    """BoundField.value() is already prepared for the widget (JSON as text, choices as keys)."""
    data = {}
    for name, field in form.fields.items():
        encoded = _encode(field, form[name].value())
        if encoded is not None:
            data[form.add_prefix(name)] = encoded
    return data


def change_form_data(response) -> dict:
    """POST data that resubmits an admin change page as it was rendered (main form and inlines)."""
    data = _form_data(response.context["adminform"].form)
    for inline in response.context["inline_admin_formsets"]:
        formset = inline.formset
        data.update(_form_data(formset.management_form))
        for form in formset.forms:
            data.update(_form_data(form))
    return data


def post_change(client, obj, **changes):
    response = client.get(_url(obj))
    assert response.status_code == 200
    data = change_form_data(response)
    data.update({k: v for k, v in changes.items()})
    return client.post(_url(obj), data)


def field_errors(response, field):
    assert response.status_code == 200, "the admin accepted the bad input"
    return response.context["adminform"].form.errors.get(field, [])


# --------------------------------------------------------------------------- refused input


def test_negative_memory_refused_in_the_admin(admin_client, seeded):
    acc = Accelerator.objects.get(slug="ascend-910c")
    response = post_change(admin_client, acc, memory_gb="-64")
    assert any("negative" in e for e in field_errors(response, "memory_gb"))
    acc.refresh_from_db()
    assert acc.memory_gb == Decimal("64")


def test_zero_rack_units_refused_in_the_admin(admin_client, seeded):
    server = ServerModel.objects.get(slug="atlas-800-a3")
    response = post_change(admin_client, server, rack_units="0")
    assert any("1 U" in e for e in field_errors(response, "rack_units"))
    server.refresh_from_db()
    assert server.rack_units == 10


def test_moe_without_experts_refused_in_the_admin(admin_client, seeded):
    model = LlmModel.objects.get(slug="deepseek-v3")
    response = post_change(admin_client, model, num_experts="0")
    assert any("no routed experts" in e for e in field_errors(response, "num_experts"))


def test_overlapping_price_list_refused_in_the_admin(admin_client, seeded):
    url = reverse("admin:catalog_pricelist_add")
    response = admin_client.get(url)
    data = change_form_data(response)
    data.update(
        {
            "slug": "cny-2026-q3",
            "name": "CNY 2026 Q3",
            "currency": "CNY",
            "effective_from": "2026-07-01",
            "effective_to": "2026-09-30",
            "usd_rate": "7.1",
            "sources": "{}",
        }
    )
    response = admin_client.post(url, data)
    assert any("overlap" in e for e in field_errors(response, "effective_from"))
    assert not PriceList.objects.filter(slug="cny-2026-q3").exists()


def test_valid_edit_saves_and_marks_the_source(admin_client, seeded, admin_user):
    server = ServerModel.objects.get(slug="atlas-800-a3")
    response = post_change(admin_client, server, max_input_kw="16.8")
    assert response.status_code == 302
    server.refresh_from_db()
    assert server.max_input_kw == Decimal("16.8")
    assert server.source_for("max_input_kw")["kind"] == "admin"
    assert admin_user.get_username() in server.source_for("max_input_kw")["ref"]
    assert server.source_for("rack_units")["kind"] == "seed"  # untouched figures keep their source
    # …and load_catalog leaves the edit alone.
    report = services.load_catalog_seed()
    assert any(label == "servermodel atlas-800-a3" for label, _ in report.skipped)
    server.refresh_from_db()
    assert server.max_input_kw == Decimal("16.8")


# --------------------------------------------------------------------------- sources and lists


def test_change_page_shows_sources_and_assumed(admin_client, seeded):
    # Every H200 SXM figure now cites the datasheet or a vLLM start-up log (the
    # placeholders it carried were replaced by public sources), so its page lists
    # sources with no assumed mark; the H800 SXM still takes its bandwidth and
    # TFLOPS as equal to the H100 SXM's, marked assumed until its datasheet confirms.
    h200 = Accelerator.objects.get(slug="h200-sxm")
    assert h200.assumed_fields == []
    html = admin_client.get(_url(h200)).content.decode()
    assert "Sources" in html
    assert "*assumed*" not in html
    h800 = Accelerator.objects.get(slug="h800-sxm")
    assert "memory_bandwidth_tbps" in h800.assumed_fields
    html = admin_client.get(_url(h800)).content.decode()
    assert "Sources" in html
    assert "*assumed*" in html
    assert "taken equal to the H100 SXM (3.35 TB/s); confirm on the H800 datasheet" in html
    a3 = ServerModel.objects.get(slug="atlas-800-a3")
    html = admin_client.get(_url(a3)).content.decode()
    assert "S1 §2.1: max input 16.2 kW" in html


@pytest.mark.parametrize("model", ALL_MODELS, ids=lambda m: m.__name__)
def test_every_table_lists_searches_and_exports(admin_client, seeded, model):
    meta = model._meta
    changelist = reverse(f"admin:{meta.app_label}_{meta.model_name}_changelist")
    assert admin_client.get(changelist).status_code == 200
    assert admin_client.get(changelist, {"q": "a"}).status_code == 200
    assert admin_client.get(reverse(f"admin:{meta.app_label}_{meta.model_name}_import")).status_code == 200
    assert admin_client.get(reverse(f"admin:{meta.app_label}_{meta.model_name}_export")).status_code == 200
    row = model.objects.first()
    assert admin_client.get(_url(row)).status_code == 200
    assert admin_client.get(_url(row, "history")).status_code == 200


def test_llm_list_shows_readable_columns(admin_client, seeded):
    html = admin_client.get(reverse("admin:catalog_llmmodel_changelist")).content.decode()
    assert "1,560.9 GB" in html  # K3 weights
    assert "27,648 B" in html  # K3 KV per token
    assert "24 MLA + 69 linear" in html
    html = admin_client.get(reverse("admin:catalog_servermodel_changelist")).content.decode()
    assert "1,024 GB" in html and "16.2 kW" in html  # A3 memory and power per node


def test_price_history_shows_who_changed_what(admin_client, seeded, admin_user):
    # A price change makes a new dated version of the list (issue 31); each item's history shows
    # who changed what: the new list's item was created by the admin at the new price.
    item = PriceItem.objects.get(sku="SRV-ATLAS-800-A3")
    start = item.price_list.effective_from + dt.timedelta(days=10)
    response = post_change(
        admin_client, item, unit_price="2900000", change_reason="Q2 list", effective_from=start.isoformat()
    )
    assert response.status_code == 302
    new = PriceItem.objects.get(sku="SRV-ATLAS-800-A3", price_list__effective_from=start)
    assert new.history.first().history_user == admin_user and new.unit_price == Decimal("2900000")
    item.refresh_from_db()
    assert item.unit_price == Decimal("3000000") and item.history.first().unit_price == Decimal("3000000")
    html = admin_client.get(_url(new, "history")).content.decode()
    assert admin_user.get_username() in html


def test_a_price_change_asks_for_a_reason_and_creates_a_new_dated_price_list(admin_client, seeded):
    item = PriceItem.objects.get(sku="SRV-ATLAS-800-A3")
    old_list = item.price_list
    items_before = old_list.items.count()
    # No reason: refused on the field, nothing changed.
    response = post_change(admin_client, item, unit_price="4500000")
    assert "Say why the price changes" in " ".join(field_errors(response, "change_reason"))
    assert PriceList.objects.count() == 1 and PriceItem.objects.get(pk=item.pk).unit_price == Decimal(
        "3000000"
    )
    # With a reason, from a date: the list in force ends the day before; a copy with the new
    # price starts that day; every other item is copied unchanged; both lists are kept.
    start = dt.date(2026, 7, 1)
    response = post_change(
        admin_client, item, unit_price="4500000", change_reason="Vendor increase, letter 2026-06-12",
        effective_from=start.isoformat(),
    )  # fmt: skip
    assert response.status_code == 302
    old_list.refresh_from_db()
    new_list = PriceList.objects.exclude(pk=old_list.pk).get()
    assert old_list.effective_to == dt.date(2026, 6, 30)
    assert (new_list.effective_from, new_list.effective_to, new_list.currency) == (start, None, "CNY")
    assert "Vendor increase, letter 2026-06-12" in new_list.notes
    assert new_list.items.count() == items_before == old_list.items.count()
    assert new_list.items.get(sku=item.sku).unit_price == Decimal("4500000")
    assert old_list.items.get(sku=item.sku).unit_price == Decimal("3000000")
    assert "Vendor increase" in new_list.items.get(sku=item.sku).source_for("unit_price")["ref"]
    others = {i.sku: i.unit_price for i in old_list.items.exclude(sku=item.sku)}
    assert {i.sku: i.unit_price for i in new_list.items.exclude(sku=item.sku)} == others
    # The price on each day is the list in force that day.
    from catalog.selectors import price_list_in_force

    assert price_list_in_force("CNY", dt.date(2026, 6, 30)) == old_list
    assert price_list_in_force("CNY", start) == new_list
    # Saving only a description edits the item in place (no new list).
    response = post_change(admin_client, item, description="Atlas 800 A3 server (new photo)")
    assert response.status_code == 302 and PriceList.objects.count() == 2


def test_inline_price_edit_is_recorded(admin_client, seeded, admin_user):
    # Prices already on a list are changed on the item's page (with a reason, issue 31): the
    # inline shows them disabled and ignores a posted change; other inline edits are recorded.
    price_list = PriceList.objects.get(slug="cny-2026")
    response = admin_client.get(_url(price_list))
    data = change_form_data(response)
    prefix = next(
        k[: -len("-sku")] for k, v in data.items() if k.endswith("-sku") and v == "SVC-OM-NODE-YEAR"
    )
    before = PriceItem.objects.get(sku="SVC-OM-NODE-YEAR").unit_price
    data[f"{prefix}-unit_price"] = "260000"
    data[f"{prefix}-description"] = "O&M per node-year (renamed)"
    assert admin_client.post(_url(price_list), data).status_code == 302
    item = PriceItem.objects.get(sku="SVC-OM-NODE-YEAR")
    assert item.unit_price == before
    assert item.description == "O&M per node-year (renamed)"
    assert item.history.first().history_user == admin_user


# --------------------------------------------------------------------------- import from config.json


IMPORT_URL = "admin:catalog_llmmodel_import_hf_config"


def test_changelist_links_to_the_importer(admin_client, seeded):
    html = admin_client.get(reverse("admin:catalog_llmmodel_changelist")).content.decode()
    assert reverse(IMPORT_URL) in html


def test_import_page_creates_a_model_from_an_upload(admin_client, empty_catalog):
    content = (CONFIG_DIR / "meta-llama--Meta-Llama-3.1-8B.config.json").read_bytes()
    upload = SimpleUploadedFile("config.json", content, content_type="application/json")
    response = admin_client.post(
        reverse(IMPORT_URL),
        {"config_file": upload, "hf_model_id": "meta-llama/Llama-3.1-8B-Instruct", "name": "Llama 8B"},
        follow=True,
    )
    model = LlmModel.objects.get(slug="llama-8b")
    assert model.total_params == 8_030_261_248 and model.gqa_layers == 32
    messages = " ".join(str(m) for m in response.context["messages"])
    assert "32 layers" in messages and "131,072 B of KV per token" in messages


def test_import_page_accepts_pasted_text(admin_client, empty_catalog):
    text = (CONFIG_DIR / "deepseek-ai--DeepSeek-V3.config.json").read_text()
    response = admin_client.post(
        reverse(IMPORT_URL), {"config_text": text, "slug": "dsv3", "weight_format": "bf16"}
    )
    assert response.status_code == 302
    assert LlmModel.objects.get(slug="dsv3").weight_format == "bf16"


def test_import_page_names_the_bad_field(admin_client):
    config = json.loads((CONFIG_DIR / "meta-llama--Meta-Llama-3.1-8B.config.json").read_text())
    del config["num_hidden_layers"]
    response = admin_client.post(reverse(IMPORT_URL), {"config_text": json.dumps(config), "slug": "x"})
    assert response.status_code == 200
    assert "num_hidden_layers is missing" in " ".join(response.context["form"].errors["config_text"])
    assert not LlmModel.objects.filter(slug="x").exists()


def test_import_page_refuses_big_or_non_json_uploads(admin_client):
    big = SimpleUploadedFile(
        "config.json", b"{" + b" " * (1024 * 1024) + b"}", content_type="application/json"
    )
    response = admin_client.post(reverse(IMPORT_URL), {"config_file": big})
    assert "1 MB" in " ".join(response.context["form"].errors["config_file"])
    text = SimpleUploadedFile("config.txt", b"{}", content_type="text/plain")
    response = admin_client.post(reverse(IMPORT_URL), {"config_file": text})
    assert ".json" in " ".join(response.context["form"].errors["config_file"])


def test_import_page_refuses_an_existing_slug_unless_asked(admin_client, seeded):
    text = (CONFIG_DIR / "moonshotai--Kimi-K3.config.json").read_text()
    response = admin_client.post(reverse(IMPORT_URL), {"config_text": text, "slug": "kimi-k3"})
    assert response.status_code == 200 and "slug" in response.context["form"].errors
    response = admin_client.post(
        reverse(IMPORT_URL),
        {"config_text": text, "slug": "kimi-k3", "update_existing": "on", "weight_format": "w4a8"},
    )
    assert response.status_code == 302
    k3 = LlmModel.objects.get(slug="kimi-k3")
    assert k3.weight_format == "w4a8" and k3.name == "Kimi K3"  # the display name stays
    assert k3.api_price_output_per_m == Decimal("15")  # prices stay


def test_importer_needs_add_permission(client, django_user_model):
    user = django_user_model.objects.create_user("viewer", password="x", is_staff=True)
    client.force_login(user)
    assert client.get(reverse(IMPORT_URL)).status_code == 403


def test_inline_nic_edit_marks_the_row_as_the_admins(admin_client, seeded):
    server = ServerModel.objects.get(slug="atlas-800-a3")
    response = admin_client.get(_url(server))
    data = change_form_data(response)
    prefix = next(k[: -len("-fabric")] for k, v in data.items() if k.endswith("-fabric") and v == "roce")
    data[f"{prefix}-count"] = "16"
    assert admin_client.post(_url(server), data).status_code == 302
    nic = ServerNic.objects.get(server=server, fabric="roce")
    assert (nic.count, nic.source_kind) == (16, "admin")
    assert ServerNic.objects.get(server=server, fabric="lingqu").source_kind == "seed"
