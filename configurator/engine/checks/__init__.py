"""The check catalogue: every check declared once (``catalogue/<area>.py``) and raised by its code."""

from .book import CheckCatalogueError, CheckDef, Fix, Variant, definitions, raise_, unworded

__all__ = ["CheckCatalogueError", "CheckDef", "Fix", "Variant", "definitions", "raise_", "unworded"]
