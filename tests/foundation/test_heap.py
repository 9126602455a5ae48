"""A web worker settles its collector after the warm-up (config/heap.py, called by config/wsgi.py)."""

from __future__ import annotations

import ast
import gc
from pathlib import Path

import pytest

from config import heap

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def restored_collector():
    threshold = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*threshold)


def test_settling_freezes_the_warm_heap_and_raises_the_young_threshold(restored_collector):
    before = gc.get_freeze_count()
    kept = [{"long-lived": i} for i in range(1_000)]  # what a warm-up builds and keeps
    heap.settle_heap()
    assert gc.get_freeze_count() >= before + len(kept)
    assert gc.get_threshold()[0] == heap.YOUNG_THRESHOLD == 10_000
    assert not any(o is kept[0] for o in gc.get_objects())  # no generation's pass walks it again
    heap.settle_heap()  # again: idempotent, the threshold stays
    assert gc.get_threshold()[0] == heap.YOUNG_THRESHOLD


def test_the_worker_settles_its_heap_after_warming_up():
    """config/wsgi.py: warm_up() and the PDF font check (WeasyPrint's libraries loaded before the first
    quote page, documents/pdf/fonts.py) first — they build what is to be frozen — then settle_heap()."""
    calls = [
        node.value.func.id
        for node in ast.parse((ROOT / "config" / "wsgi.py").read_text()).body
        if isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Call)
        and isinstance(node.value.func, ast.Name)
    ]
    assert calls == ["warm_up", "check_font_subsetting", "settle_heap"]
