"""Validation: bad figures are refused with a message on the field (full_clean and ModelForm)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from django import forms
from django.core.exceptions import ValidationError

from catalog.models import (
    Accelerator,
    LlmModel,
    PriceItem,
    PriceList,
    ServerModel,
    SwitchModel,
    TopologyTemplate,
)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("empty_catalog")]


def _accelerator(**kw) -> Accelerator:
    values = {
        "slug": "npu",
        "name": "NPU",
        "vendor": "Acme",
        "memory_gb": Decimal("64"),
        "logical_devices_per_package": 2,
    }
    values.update(kw)
    return Accelerator(**values)


def _errors(obj) -> dict[str, list[str]]:
    with pytest.raises(ValidationError) as err:
        obj.full_clean()
    return err.value.message_dict


def _form_for(model, fields="__all__"):
    return forms.modelform_factory(model, fields=fields)


def _form_data(obj) -> dict:
    data = {}
    for f in obj._meta.concrete_fields:
        if f.primary_key or not f.editable:
            continue
        value = getattr(obj, f.attname)
        if f.get_internal_type() == "JSONField":
            import json

            value = json.dumps(value)
        if isinstance(value, bool):
            if value:
                data[f.name] = "on"
            continue
        data[f.name] = "" if value is None else value
    return data


# --------------------------------------------------------------------------- accelerator memory


def test_negative_memory_refused_on_the_field():
    errors = _errors(_accelerator(memory_gb=Decimal("-64")))
    assert list(errors) == ["memory_gb"]
    assert any("negative" in m for m in errors["memory_gb"])


def test_negative_memory_refused_by_the_model_form():
    form = _form_for(Accelerator)(data=_form_data(_accelerator(memory_gb=Decimal("-64"))))
    assert not form.is_valid()
    assert "memory_gb" in form.errors


def test_zero_memory_refused():
    errors = _errors(_accelerator(memory_gb=Decimal("0")))
    assert "memory_gb" in errors


# --------------------------------------------------------------------------- server rack units


def _server(acc: Accelerator, **kw) -> ServerModel:
    values = {
        "slug": "box",
        "name": "Box",
        "vendor": "Acme",
        "accelerator": acc,
        "packages": 8,
        "logical_devices": 16,
        "rack_units": 10,
        "max_input_kw": Decimal("16.2"),
        "typical_load_factor": Decimal("0.8"),
    }
    values.update(kw)
    return ServerModel(**values)


def test_zero_rack_units_refused_on_the_field():
    acc = _accelerator()
    acc.save()
    errors = _errors(_server(acc, rack_units=0))
    assert list(errors) == ["rack_units"]
    assert "1 U" in errors["rack_units"][0]


def test_zero_rack_units_refused_by_the_model_form():
    acc = _accelerator()
    acc.save()
    form = _form_for(ServerModel)(data=_form_data(_server(acc, rack_units=0)))
    assert not form.is_valid()
    assert "rack_units" in form.errors


def test_logical_devices_must_match_packages():
    acc = _accelerator()
    acc.save()
    errors = _errors(_server(acc, logical_devices=8))
    assert "8 packages × 2 logical devices per package = 16" in errors["logical_devices"][0]


def test_switch_zero_rack_units_refused():
    errors = _errors(
        SwitchModel(slug="s", name="S", fabric="roce", ports=64, port_speed_gbps=400, rack_units=0)
    )
    assert "rack_units" in errors


# --------------------------------------------------------------------------- price lists


def _price_list(slug, start, end=None, currency="CNY") -> PriceList:
    return PriceList(
        slug=slug,
        name=slug,
        currency=currency,
        effective_from=start,
        effective_to=end,
        usd_rate=Decimal("7.2"),
    )


def test_overlapping_price_lists_refused_on_the_field():
    _price_list("a", dt.date(2026, 1, 1), dt.date(2026, 6, 30)).save()
    errors = _errors(_price_list("b", dt.date(2026, 6, 1)))
    assert list(errors) == ["effective_from"]
    assert "overlap" in errors["effective_from"][0]


def test_adjacent_and_other_currency_lists_are_fine():
    _price_list("a", dt.date(2026, 1, 1), dt.date(2026, 6, 30)).save()
    _price_list("b", dt.date(2026, 7, 1)).full_clean()
    _price_list("c", dt.date(2026, 3, 1), currency="USD").full_clean()


def test_open_ended_list_overlaps_a_later_one():
    _price_list("a", dt.date(2026, 1, 1)).save()
    assert "effective_from" in _errors(_price_list("b", dt.date(2027, 1, 1), dt.date(2027, 12, 31)))


def test_dates_must_be_ordered():
    errors = _errors(_price_list("a", dt.date(2026, 6, 1), dt.date(2026, 1, 1)))
    assert "effective_to" in errors


def test_negative_price_refused_on_the_field():
    pl = _price_list("a", dt.date(2026, 1, 1))
    pl.save()
    item = PriceItem(
        price_list=pl, sku="X", kind="server", unit_price=Decimal("-1"), lease_per_month=Decimal("-5")
    )
    errors = _errors(item)
    assert {"unit_price", "lease_per_month"} <= set(errors)


# --------------------------------------------------------------------------- LLMs


def _llm(**kw) -> LlmModel:
    values = {
        "slug": "m",
        "name": "M",
        "total_params": 10**9,
        "active_params": 10**9,
        "num_layers": 4,
        "gqa_layers": 4,
        "hidden_size": 1024,
        "vocab_size": 1000,
        "num_attention_heads": 8,
        "num_kv_heads": 8,
        "head_dim": 128,
        "non_expert_weight_bytes": 2 * 10**9,
    }
    values.update(kw)
    return LlmModel(**values)


def test_valid_llm_passes():
    _llm().full_clean()


def test_moe_model_without_experts_refused_on_the_field():
    errors = _errors(_llm(moe_layers=4, experts_per_token=8, num_experts=0))
    assert "num_experts" in errors
    assert "no routed experts" in errors["num_experts"][0]


def test_moe_model_without_experts_refused_by_the_model_form():
    form = _form_for(
        LlmModel, fields=[f.name for f in LlmModel._meta.concrete_fields if f.editable and not f.primary_key]
    )(data=_form_data(_llm(moe_layers=4, experts_per_token=8, num_experts=0)))
    assert not form.is_valid()
    assert "num_experts" in form.errors


def test_experts_per_token_above_experts_refused():
    errors = _errors(_llm(num_experts=8, experts_per_token=16, moe_layers=4))
    assert "experts_per_token" in errors


def test_layer_types_must_add_up():
    errors = _errors(_llm(gqa_layers=3))
    assert "num_layers" in errors
    assert "add up to 3" in errors["num_layers"][0]


def test_negative_counts_refused():
    errors = _errors(_llm(hidden_size=-1))
    assert "hidden_size" in errors


def test_sources_must_name_fields_and_kinds():
    errors = _errors(_llm(sources={"hidden_size": {"kind": "guess"}, "nope": {"kind": "seed"}}))
    assert len(errors["sources"]) == 2


def test_source_helpers():
    m = _llm(
        sources={"hidden_size": {"kind": "assumed", "ref": "x"}, "vocab_size": {"kind": "seed", "ref": "S1"}}
    )
    assert m.is_assumed("hidden_size") and not m.is_assumed("vocab_size") and not m.is_assumed("head_dim")
    assert m.source_for("vocab_size") == {"kind": "seed", "ref": "S1"}
    assert "hidden_size" in m.assumed_fields
    row = next(r for r in m.source_rows() if r["field"] == "hidden_size")
    assert row["assumed"] and row["ref"] == "x"


def test_topology_pd_split_must_add_up():
    t = TopologyTemplate(
        slug="pd",
        kind="disaggregated",
        name_en="PD",
        name_zh="PD",
        default_nodes=16,
        prefill_nodes=8,
        decode_nodes=4,
    )
    assert "default_nodes" in _errors(t)
    pair = TopologyTemplate(slug="p", kind="primary_standby", name_en="P", name_zh="P", default_nodes=7)
    assert "default_nodes" in _errors(pair)
