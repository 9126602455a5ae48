"""One source for the reference hardware and models (issue 20): the seed files.

The engine tests, the sample proposal and the benchmarks plan what users plan: the records of
``catalog/seed/*.yaml``, read by the pure loader that ``load_catalog`` also uses, through
``configurator/reference.py``.  No second copy (the former ``configurator/engine/fixtures.py`` and
the test builders) may come back; ``tests/configurator/test_seed_catalog.py`` shows the files and
the loaded database give the same engine inputs.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = ("." * node.level) + (node.module or "")
            out.add(base)
            out.update(f"{base}.{a.name}" for a in node.names)
    return out


def test_no_second_copy_of_the_reference_data_exists():
    assert not (ROOT / "configurator" / "engine" / "fixtures.py").exists()
    assert not list((ROOT / "tests").rglob("_builders.py"))
    assert not list((ROOT / "tests").rglob("_money_builders.py"))


def test_nothing_imports_a_fixture_module_of_specs():
    offenders = []
    for folder in ("configurator", "catalog", "quotes", "proposals", "bench", "scripts", "tests"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for name in _imports(path):
                last = name.rsplit(".", 1)[-1]
                if last in {"fixtures", "_builders", "_money_builders"} and "pytest" not in name:
                    offenders.append(f"{path.relative_to(ROOT)}: {name}")
    assert not offenders, offenders


def test_the_sample_proposal_and_the_benchmarks_plan_from_the_seed_files():
    sample = _imports(ROOT / "documents" / "pdf" / "sample.py")
    assert "configurator.public.reference" in sample
    for bench in ("bench_plan.py", "bench_launch.py"):
        names = _imports(ROOT / "bench" / bench)
        assert any("reference" in n or "sample" in n for n in names), bench


def test_the_seed_loader_imports_no_django():
    names = _imports(ROOT / "catalog" / "seed" / "loader.py")
    assert not any(n.startswith("django") for n in names)
