"""load_catalog: the seeded figures, their sources, idempotence and respect for admin edits."""

from __future__ import annotations

import dataclasses
from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import call_command

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
from catalog.seed import loader as seed_loader

pytestmark = pytest.mark.django_db

SEEDED_MODELS = (
    Accelerator,
    ServerModel,
    SwitchModel,
    RackType,
    SiteProfile,
    TopologyTemplate,
    LlmModel,
    Scenario,
    PriceList,
    PriceItem,
)


def _counts():
    return {m.__name__: m.objects.count() for m in (*SEEDED_MODELS, ServerNic)}


def test_seeded_slugs(seeded):
    assert set(LlmModel.objects.values_list("slug", flat=True)) == {
        "kimi-k3",
        "deepseek-v3",
        "deepseek-r1",
        "kimi-k2",
        "qwen3-235b-a22b",
        "glm-4-5",
        "gpt-oss-120b",
        "llama-3-1-8b",
        "llama-3-3-70b",
        "qwen3-30b-a3b",
        "qwen3-32b",
        "glm-5",
        "gpt-oss-20b",
        "qwen3-coder-480b-a35b",
        "kimi-k2-0905",
        "kimi-k2-thinking",
        "glm-4-6",
        "qwen3-next-80b-a3b-instruct",
        "qwen3-next-80b-a3b-thinking",
        "deepseek-v3-1",
        "deepseek-v3-2",
        "qwen3-235b-a22b-instruct-2507",
        "qwen3-235b-a22b-thinking-2507",
        "minimax-m2",
        "qwen3-vl-235b-a22b-instruct",
    }
    assert {"atlas-800-a3", "atlas-800-a2", "nf5868g8", "hgx-h200-8gpu"} <= set(
        ServerModel.objects.values_list("slug", flat=True)
    )
    assert list(TopologyTemplate.objects.values_list("kind", flat=True)) == [
        "single",
        "primary_standby",
        "tenant_pair",
        "disaggregated",
    ]
    # docs/glossary.md: the five scenario names.
    assert list(Scenario.objects.values_list("name_zh", flat=True)) == [
        "金融研报分析",
        "政务文档与政策问答",
        "软件工程 Agent",
        "多模态企业知识库",
        "科研与药物发现",
    ]


def test_load_twice_is_idempotent(empty_catalog):
    first = services.load_catalog_seed()
    counts = _counts()
    assert first.created and not first.skipped
    second = services.load_catalog_seed()
    assert (second.created, second.updated, second.skipped) == ([], [], [])
    assert len(second.unchanged) == len(first.created)
    assert _counts() == counts


def test_kimi_k3_seeded_figures(seeded):
    k3 = LlmModel.objects.get(slug="kimi-k3")
    # [S1][S2]: 96 shards, 1,560,936,091,448 bytes; routed experts 92 × 896 × 3 × 3584 × 3072 × 4.25/8.
    assert k3.weight_bytes == 1_560_936_091_448
    assert k3.expert_weight_bytes == 92 * 896 * 3 * 3584 * 3072 * 17 // 32
    assert k3.total_params == 2_779_931_837_184
    assert (k3.mla_layers, k3.linear_layers, k3.num_layers) == (24, 69, 93)
    assert k3.kv_bytes_per_token_bf16 == 27_648
    assert (k3.weight_format, k3.activation_format) == ("mxfp4", "mxfp8")
    assert k3.api_price_input_per_m == Decimal("3") and k3.api_price_output_per_m == Decimal("15")
    assert k3.vllm_tool_call_parser == "kimi_k3"
    assert list(k3.validated_text_only_on.values_list("slug", flat=True)) == ["atlas-800-a2"]
    assert k3.source_for("non_expert_weight_bytes")["kind"] == "seed"
    assert k3.source_for("total_params")["kind"] == "public"


def test_hardware_seeded_figures(seeded):
    a3 = ServerModel.objects.get(slug="atlas-800-a3")
    # [S1 §2.1]: 8 × 910C, 16 logical NPUs × 64 GB, 10U, 16.2 kW, 6 × 3 kW 5+1.
    assert (a3.packages, a3.logical_devices, a3.rack_units) == (8, 16, 10)
    assert a3.memory_per_node_gb == Decimal("1024")
    assert a3.max_input_kw == Decimal("16.2")
    assert (a3.psu_count, a3.psu_watts, a3.psu_redundant) == (6, 3000, 1)
    assert a3.source_for("max_input_kw") == {"kind": "seed", "ref": "S1 §2.1: max input 16.2 kW"}
    nics = {(n.fabric, n.role): (n.count, n.speed_gbps) for n in a3.nics.all()}
    assert nics[("lingqu", "scale_up")] == (56, 400) and nics[("roce", "scale_out")] == (8, 400)
    nf = ServerModel.objects.get(slug="nf5868g8")
    assert (nf.logical_devices, nf.rack_units, nf.max_input_kw, nf.accelerator.memory_gb) == (
        16,
        8,
        Decimal("16.5"),
        Decimal("84"),
    )
    h200 = ServerModel.objects.get(slug="hgx-h200-8gpu")
    # NVIDIA DGX H200 datasheet: ~10.2 kW; NVIDIA H200 datasheet: 141 GB HBM3e.
    assert h200.max_input_kw == Decimal("10.2") and not h200.is_assumed("max_input_kw")
    assert not Accelerator.objects.get(slug="h200-sxm").is_assumed("memory_gb")


def test_prices_and_sites(seeded):
    a3 = PriceItem.objects.get(sku="SRV-ATLAS-800-A3")
    # [S1]: ≈¥24 M for 8 → ¥3 M; lease ¥0.8–1.2 M / month for 8 → midpoint ¥125 k per node-month.
    assert a3.unit_price == Decimal("3000000") and a3.lease_per_month == Decimal("125000")
    # [S1 §7]: ¥2 M / year O&M for 8 nodes → ¥250 k per node-year.
    assert PriceItem.objects.get(sku="SVC-OM-NODE-YEAR").unit_price == Decimal("250000")
    assert PriceList.objects.get(slug="cny-2026").usd_rate == Decimal("7.2")
    site = SiteProfile.objects.get(is_default=True)
    assert (site.voltage_ll, site.pue, site.electricity_price_per_kwh, site.air_cooling_kw_limit) == (
        Decimal("380"),
        Decimal("1.3"),
        Decimal("0.65"),
        Decimal("25"),
    )
    hub = SiteProfile.objects.get(slug="cn-hub-node")
    assert (hub.pue, hub.electricity_price_per_kwh) == (Decimal("1.25"), Decimal("0.4"))


def test_every_seeded_figure_has_a_source(seeded):
    for model in SEEDED_MODELS:
        for row in model.objects.all():
            for name in row.sourced_field_names():
                entry = row.source_for(name)
                assert entry is not None, f"{model.__name__} {row}: {name} has no source"
                assert entry["kind"] in ("seed", "public", "assumed"), (model.__name__, row, name)
                if entry["kind"] in ("seed", "public"):
                    assert entry["ref"], f"{model.__name__} {row}: {name} cites nothing"
            assert services.seed_state(row) == "seeded"
    for nic in ServerNic.objects.all():
        assert nic.source_kind in ("seed", "public", "assumed")


def test_admin_edit_is_not_overwritten(seeded):
    a3 = ServerModel.objects.get(slug="atlas-800-a3")
    a3.max_input_kw = Decimal("17.0")
    a3.mark_admin_edit(["max_input_kw"], "catalog admin, 2026-11-30")
    a3.save()
    price = PriceItem.objects.get(sku="SW-INSPUR-X400")
    price.unit_price = Decimal("280000")
    price.save()

    out = StringIO()
    call_command("load_catalog", stdout=out)
    text = out.getvalue()
    assert "skipped   servermodel atlas-800-a3: edited since the last load (max_input_kw, sources)" in text
    assert "skipped   priceitem cny-2026/SW-INSPUR-X400: edited since the last load (unit_price)" in text
    a3.refresh_from_db()
    price.refresh_from_db()
    assert a3.max_input_kw == Decimal("17.0") and price.unit_price == Decimal("280000")
    assert services.seed_state(a3) == "edited"
    assert services.changed_since_seed(a3) == ["max_input_kw", "sources"]


def test_nic_edit_counts_as_a_server_edit(seeded):
    nic = ServerNic.objects.get(server__slug="atlas-800-a3", fabric="roce")
    nic.count = 16
    nic.save()
    report = services.load_catalog_seed()
    assert any(label == "servermodel atlas-800-a3" and "nics" in reason for label, reason in report.skipped)
    nic.refresh_from_db()
    assert nic.count == 16


def test_new_seed_values_update_unedited_rows(seeded, monkeypatch):
    seed = seed_loader.load()
    first = seed.of("switch")[0]
    revised = dataclasses.replace(
        first,
        values={**first.values, "power_kw": Decimal("3.5")},
        sources={**first.sources, "power_kw": {"kind": "assumed", "ref": "revised"}},
    )
    records = tuple(revised if r is first else r for r in seed.records)
    monkeypatch.setattr(seed_loader, "load", lambda: seed_loader.Seed(records))
    report = services.load_catalog_seed()
    assert report.updated == [f"switchmodel {first.slug}"]
    row = SwitchModel.objects.get(slug=first.slug)
    assert row.power_kw == Decimal("3.5") and row.source_for("power_kw")["ref"] == "revised"
    assert services.seed_state(row) == "seeded"


def test_rows_made_outside_the_loader_are_left_alone(empty_catalog):
    Accelerator.objects.create(
        slug="ascend-910c", name="My own 910C", vendor="Huawei", memory_gb=Decimal("64")
    )
    report = services.load_catalog_seed()
    assert (
        "accelerator ascend-910c",
        "not created by load_catalog (no seed marker): left as it is",
    ) in report.skipped
    assert Accelerator.objects.get(slug="ascend-910c").name == "My own 910C"
    # The admin's 910C has one device per package, so the seeded A3 (8 packages, 16 devices) is refused
    # with the reason, and the rest of the catalog still loads.
    reasons = dict(report.skipped)
    assert "logical_devices" in reasons["servermodel atlas-800-a3"]
    assert LlmModel.objects.filter(slug="kimi-k3").exists()


def test_dry_run_writes_nothing(empty_catalog):
    out = StringIO()
    call_command("load_catalog", "--dry-run", stdout=out)
    assert "dry run" in out.getvalue()
    assert LlmModel.objects.count() == 0


def test_history_records_the_load(seeded):
    a3 = ServerModel.objects.get(slug="atlas-800-a3")
    assert a3.history.first().history_change_reason == "load_catalog"
