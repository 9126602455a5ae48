"""Check definitions, one module per area; each module's ``DEFS`` tuple is read by ``book.definitions()``."""
