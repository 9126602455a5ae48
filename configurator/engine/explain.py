"""Small helpers for explained numbers: sources and the number formatting of check texts.

Figures are put on the figure book (``engine/figures``) and checks raised from the check
catalogue (``engine/checks``); the formatting helpers (``gb``, ``thousands`` …) are what a
check's template names in its specs (``{weights:gb}``), so that the English and Chinese texts
quote a number the same way everywhere; they are the names of ``formatting.py``'s formatters
that the engine's modules know.
"""

from __future__ import annotations

from .formatting import (
    format_bytes_gb,
    format_bytes_gib,
    format_bytes_mb,
    format_bytes_tb,
    format_number,
    format_percent,
)
from .types import Source

DERIVED = Source("derived")


def assumed(ref: str = "") -> Source:
    """A placeholder an admin should check (e.g. an estimator constant)."""
    return Source("assumed", ref)


def public(ref: str) -> Source:
    """A public config, doc or source file, named by ``ref``."""
    return Source("public", ref)


def seed(ref: str) -> Source:
    """One of the Chinese source documents (``S1``/``S2`` and a section)."""
    return Source("seed", ref)


def typed(ref: str) -> Source:
    """A value the engineer typed into the request (``ref`` names the field)."""
    return Source("input", ref)


# --------------------------------------------------------------------------- number formatting


def thousands(n: int | float) -> str:
    """``133120`` → ``"133,120"``; floats are rounded to whole numbers (formatting.py)."""
    return format_number(n, 0)


def gb(n_bytes: int | float, digits: int = 1) -> str:
    """Decimal gigabytes with one decimal by default: ``29_750_000_000`` → ``"29.8 GB"``."""
    return format_bytes_gb(n_bytes, digits)


def gib(n_bytes: int | float, digits: int = 1) -> str:
    """Binary gibibytes (what vLLM logs): ``2**30`` → ``"1.0 GiB"``."""
    return format_bytes_gib(n_bytes, digits)


def tb(n_bytes: int | float, digits: int = 2) -> str:
    """Decimal terabytes: ``1_560_936_091_448`` → ``"1.56 TB"``."""
    return format_bytes_tb(n_bytes, digits)


def mb(n_bytes: int | float, digits: int = 1) -> str:
    """Decimal megabytes: ``28_085_760`` → ``"28.1 MB"``."""
    return format_bytes_mb(n_bytes, digits)


def plural(n: int, word: str, many: str | None = None) -> str:
    """``plural(1, "node")`` → ``"1 node"``, ``plural(4, "node")`` → ``"4 nodes"``."""
    return f"{thousands(n)} {word if n == 1 else (many or word + 's')}"


def sentence_start(text: str) -> str:
    """Upper-case the first letter only (``str.capitalize`` would lower the rest)."""
    return text[:1].upper() + text[1:]


def pct(fraction: float, digits: int = 0) -> str:
    """``0.85`` → ``"85 %"``."""
    return format_percent(fraction, digits)


def ratio(x: float, digits: int = 2) -> str:
    """``0.85`` → ``"0.85"`` (a utilisation as vLLM spells it on the command line)."""
    return f"{x:.{digits}f}"
