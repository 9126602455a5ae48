"""Catalog tests: importer, models, seed, admin, import/export, selectors, engine inputs."""
