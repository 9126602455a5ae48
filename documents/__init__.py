"""The quote's documents: the proposal PDF (and its render job), the BOM/TCO workbook and the
launch bundle download, with their views.

The top app under ``config``: it reads quotes (the frozen revision, its BOM) and proposals (terms,
options, delivery) and neither imports it (``docs/architecture.md``).
"""
