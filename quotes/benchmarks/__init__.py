"""Measured ``vllm bench serve`` results on a quote revision: the model (``models.py``), the import of a
result file (``importer.py``), its upload page and the measured figures (``views.py``), and a measured
result promoted into the performance calibration set (``calibration_models.py``, ``promotion.py``).

Import from the modules (this package re-exports nothing); the models are imported at the end of
``quotes/models.py`` so Django registers them in the ``quotes`` app.
"""
