"""Catalog admin: one module per concern, each registering its tables."""

from . import hardware, llm, pricing, scenarios  # noqa: F401  (registers the admins)
