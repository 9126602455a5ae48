"""The seed files' one loader (catalog/seed/loader.py): pure, exact, and strict about sources (issue 20)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest

from catalog.seed import loader

ROOT = Path(__file__).resolve().parents[2]


def _copy_seed(tmp_path: Path) -> Path:
    target = tmp_path / "seed"
    shutil.copytree(loader.SEED_DIR, target, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    return target


def test_the_loader_imports_no_django():
    code = "import sys, catalog.seed.loader; print(any(m == 'django' or m.startswith('django.') for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_every_kind_is_loaded_in_dependency_order():
    seed = loader.load()
    kinds = [r.kind for r in seed.records]
    assert kinds == sorted(kinds, key=list(loader.KINDS).index)
    assert {k for k in kinds} == set(loader.KINDS)
    assert seed.get("server", "atlas-800-a3").foreign_keys == {"accelerator": "ascend-910c"}
    item = seed.get("price_item", "cny-2026/SRV-ATLAS-800-A3")
    assert item.key == {"price_list": "cny-2026", "sku": "SRV-ATLAS-800-A3"}
    assert item.values["description_zh"] == "Atlas 800 A3 超节点服务器"


def test_decimals_are_read_exactly_never_through_float():
    acc = loader.load().get("accelerator", "ascend-910c")
    assert acc.values["runtime_memory_gib"] == Decimal("61.27")
    assert isinstance(acc.values["tdp_w"], Decimal) and str(acc.values["tdp_w"]) == "600"
    assert isinstance(acc.values["logical_devices_per_package"], int)
    assert acc.sources["memory_gb"]["kind"] == "seed"


def test_a_number_without_a_source_is_refused_naming_file_record_and_field(tmp_path):
    seed_dir = _copy_seed(tmp_path)
    path = seed_dir / "switches.yaml"
    text = path.read_text(encoding="utf-8")
    start = text.index("  ports:\n", text.index("slug: roce-400ge-access"))
    end = text.index("  port_speed_gbps:", start)
    path.write_text(text[:start] + "  ports: 64\n" + text[end:], encoding="utf-8")
    with pytest.raises(loader.SeedError) as err:
        loader.load_from(seed_dir)
    message = str(err.value)
    assert "switches.yaml" in message and "roce-400ge-access" in message and "ports" in message
    assert "no source" in message


def test_a_source_of_an_unknown_kind_is_refused(tmp_path):
    seed_dir = _copy_seed(tmp_path)
    path = seed_dir / "racks.yaml"
    path.write_text(
        path.read_text(encoding="utf-8").replace("kind: assumed", "kind: guessed", 1), encoding="utf-8"
    )
    with pytest.raises(loader.SeedError, match=r"racks\.yaml: record rack-42u-air: field .*guessed"):
        loader.load_from(seed_dir)


def test_a_nic_needs_its_source(tmp_path):
    seed_dir = _copy_seed(tmp_path)
    path = seed_dir / "servers.yaml"
    text = path.read_text(encoding="utf-8")
    start = text.index("  - fabric: management")
    line_end = text.index("\n", text.index("source:", start))
    path.write_text(
        text[:start]
        + "  - {fabric: management, role: management, count: 1, speed_gbps: 1}"
        + text[line_end:],
        encoding="utf-8",
    )
    with pytest.raises(loader.SeedError, match=r"servers\.yaml: record atlas-800-a3: field nics\[2\]"):
        loader.load_from(seed_dir)
