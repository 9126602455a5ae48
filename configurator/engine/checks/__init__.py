"""The check catalogue: every check declared once (``catalogue/<area>.py``) and raised by its code."""

from .book import CheckCatalogueError, CheckDef, Fix, Variant, Words, definitions, raise_, unworded, words

__all__ = [
    "CheckCatalogueError",
    "CheckDef",
    "Fix",
    "Variant",
    "Words",
    "definitions",
    "raise_",
    "unworded",
    "words",
]
