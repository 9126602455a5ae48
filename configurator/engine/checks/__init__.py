"""The check catalogue: every check declared once (``catalogue/<area>.py``) and raised by its code."""

from .book import CheckCatalogueError, CheckDef, Fix, definitions, raise_

__all__ = ["CheckCatalogueError", "CheckDef", "Fix", "definitions", "raise_"]
