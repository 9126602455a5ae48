"""configurator.port.inputs: catalog rows → engine types, with units converted and sources carried."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from catalog.models import LlmModel, PriceList, RackType, Scenario, ServerModel, SiteProfile
from configurator.engine import types as et
from configurator.port import inputs

from .conftest import load_config

pytestmark = pytest.mark.django_db

DAY = dt.date(2026, 11, 30)


def test_model_spec_for_kimi_k3(seeded):
    spec = inputs.model_spec(LlmModel.objects.get(slug="kimi-k3"))
    assert isinstance(spec, et.ModelSpec)
    assert spec.weight_bytes == 1_560_936_091_448
    assert spec.is_moe and spec.num_experts == 896 and spec.moe_layers == 92
    assert (spec.mla_layers, spec.linear_layers, spec.kv_lora_rank, spec.qk_rope_head_dim) == (
        24,
        69,
        512,
        64,
    )
    assert (spec.linear_num_heads, spec.linear_head_dim, spec.linear_conv_dim) == (96, 128, 3 * 96 * 128)
    assert spec.api_price_output_per_m == Decimal("15") and spec.api_price_currency == "USD"
    assert spec.sources["total_params"].kind == "public"
    assert spec.sources["non_expert_weight_bytes"] == et.Source(
        "seed", spec.sources["non_expert_weight_bytes"].ref
    )
    assert spec.has_vision and spec.vision_bytes == 2 * spec.vision_params


def test_model_spec_from_hf_config_with_published_bytes():
    spec = inputs.model_spec_from_hf_config(
        load_config("moonshotai--Kimi-K3"), weight_bytes=1_560_936_091_448
    )
    assert spec.weight_bytes == 1_560_936_091_448
    assert spec.expert_weight_bytes == 92 * 896 * 3 * 3584 * 3072 * 17 // 32
    assert spec.sources["non_expert_weight_bytes"].kind == "input"
    with pytest.raises(ValueError, match="num_hidden_layers is missing"):
        inputs.model_spec_from_hf_config({"model_type": "llama"})


def test_server_spec_for_atlas_800_a3(seeded):
    spec = inputs.server_spec(ServerModel.objects.get(slug="atlas-800-a3"))
    # [S1 §2.1]: 8 × 910C = 16 logical NPUs × 64 GB (decimal GB), 3.2 TB/s per chip = 1.6 TB/s per die.
    assert spec.logical_devices == 16
    assert spec.accelerator.memory_bytes == 64 * 10**9
    assert spec.memory_bytes == 16 * 64 * 10**9
    assert spec.accelerator.memory_bandwidth_bytes_s == 1.6e12
    assert spec.accelerator.tflops["fp16"] == 280.0 and "fp8" not in spec.accelerator.tflops
    assert spec.accelerator.software_stack == "ascend" and spec.accelerator.domestic
    assert (spec.rack_units, spec.max_input_kw, spec.psu_count, spec.psu_redundant) == (10, 16.2, 6, 1)
    assert et.NicSpec("lingqu", 56, 400, "scale_up") in spec.nics
    assert spec.scale_up_fabric == "lingqu"
    assert spec.sources["max_input_kw"].kind == "seed"
    assert spec.sources["accelerator.memory_gb"].kind == "seed"
    assert not spec.validated_text_only


def test_text_only_validation_follows_the_model(seeded):
    a2 = ServerModel.objects.get(slug="atlas-800-a2")
    assert inputs.server_spec(a2).validated_text_only
    a2.validated_text_only = False
    assert inputs.server_spec(a2, model=LlmModel.objects.get(slug="kimi-k3")).validated_text_only
    assert not inputs.server_spec(a2, model=LlmModel.objects.get(slug="llama-3-1-8b")).validated_text_only


def test_site_rack_switch_specs(seeded):
    site = inputs.site_spec(SiteProfile.objects.get(slug="cn-default"))
    assert (site.voltage_ll, site.phases, site.power_factor, site.continuous_derating, site.pue) == (
        380.0,
        3,
        0.95,
        0.8,
        1.3,
    )
    assert site.electricity_price_per_kwh == Decimal("0.65") and site.currency == "CNY"
    assert site.breaker_ladder_amps[:3] == (16, 20, 25) and 400 in site.breaker_ladder_amps
    assert site.sources["pue"].kind == "public"
    rack = inputs.rack_spec(RackType.objects.get(slug="rack-42u-air"))
    assert (rack.rack_units, rack.max_kw, rack.cooling) == (42, 40.0, "air")
    switches = inputs.switch_specs()
    lingqu = next(s for s in switches if s.slug == "lingqu-630-v1")
    assert (lingqu.fabric, lingqu.port_speed_gbps) == ("lingqu", 400)
    assert lingqu.sources["ports"].kind == "assumed"


def test_workload_spec_from_scenario(seeded):
    w = inputs.workload_spec(Scenario.objects.get(slug="finance-research"))
    assert (w.input_tokens, w.output_tokens, w.concurrency, w.needs_vision, w.availability_target) == (
        32_768,
        2_048,
        32,
        True,
        0.999,
    )


def test_commercial_spec_for_eight_a3(seeded):
    server = ServerModel.objects.get(slug="atlas-800-a3")
    c = inputs.commercial_spec(None, server, 8, DAY)
    # [S1]: ¥3 M per node; ¥125 k per node-month lease (midpoint); ¥2 M / year O&M for 8 nodes.
    assert c.currency == "CNY" and c.usd_rate == Decimal("7.2")
    assert c.server_unit_price == Decimal("3000000")
    assert c.server_lease_per_month == Decimal("125000")
    assert c.om_per_year == Decimal("2000000")
    assert c.installation == 8 * Decimal("30000")
    assert c.software_support_per_year == 8 * Decimal("50000")
    assert c.switch_unit_prices["lingqu-630-v1"] == Decimal("800000")
    assert c.rack_unit_price == Decimal("25000")  # the default (air) rack
    assert c.optics_unit_price == Decimal("4500")
    containment = inputs.commercial_spec(None, server, nodes=8, on_date=DAY, rack="rack-42u-containment")
    assert containment.rack_unit_price == Decimal("60000")


def test_commercial_spec_accepts_a_server_spec_and_no_nodes(seeded):
    server = inputs.server_spec(ServerModel.objects.get(slug="atlas-800-a3"))
    price_list = PriceList.objects.get(slug="cny-2026")
    c = inputs.commercial_spec(price_list=price_list, server=server, on_date=DAY)
    assert c.server_unit_price == Decimal("3000000")
    # Without a node count, O&M per node-year becomes a share of capex: 250 k / 3 M per year.
    assert c.om_per_year is None
    assert c.om_percent_of_capex == Decimal("250000") / Decimal("3000000")


def test_commercial_spec_overrides_and_missing_list(seeded):
    server = ServerModel.objects.get(slug="atlas-800-a3")
    c = inputs.commercial_spec(
        None, server, 4, DAY, overrides={"server_unit_price": "2800000", "horizon_years": 5}
    )
    assert c.server_unit_price == Decimal("2800000") and c.horizon_years == 5
    with pytest.raises(ValueError, match="unknown commercial field"):
        inputs.commercial_spec(None, server, 4, DAY, overrides={"discount": 1})
    none = inputs.commercial_spec(None, server, 4, dt.date(2020, 1, 1))
    # No list in force: nothing priced, the servers are on request (issue 30: never counted at 0).
    assert none == et.CommercialSpec(currency="CNY", prices_on_request=("server",))


def test_bom_items(seeded):
    items = inputs.bom_items(PriceList.objects.get(slug="cny-2026"), server="atlas-800-a3")
    assert items[0].sku == "SRV-ATLAS-800-A3" and items[0].lease_per_month == Decimal("125000")
    assert {i.category for i in items} <= {
        "server",
        "switch",
        "optics",
        "rack",
        "software",
        "install",
        "other",
    }


def test_plan_request_builds_from_catalog_rows(seeded):
    model = inputs.model_spec(LlmModel.objects.get(slug="kimi-k3"))
    server = inputs.server_spec(ServerModel.objects.get(slug="atlas-800-a3"))
    request = et.PlanRequest(
        model=model,
        server=server,
        topology=et.TopologySpec(et.TopologyKind.SINGLE, 4, et.ParallelSpec(tp=16, dp=4)),
        site=inputs.site_spec(SiteProfile.objects.get(is_default=True)),
        rack=inputs.rack_spec(RackType.objects.get(is_default=True)),
        switches=inputs.switch_specs(),
        commercial=inputs.commercial_spec(None, server, 4, DAY),
    )
    # 4 × A3 (DP4/TP16/EP64) [S1 §2.3]: 896 experts over EP64 → 14 per rank; the node holds 1,024 GB.
    assert model.num_experts % request.topology.parallel.ep == 0
    assert model.num_experts // request.topology.parallel.ep == 14
    assert request.server.memory_bytes * 4 > model.weight_bytes
