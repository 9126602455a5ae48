"""The sales workflow around quotes: a revision's configuration revised and re-planned, revisions
compared by item and the impact of price changes (``changes.py``), share links, customer acceptance,
questions and notifications (``models.py``, ``notify.py``), the manager's pipeline (``pipeline.py``)
and their pages (``views.py``).

Import from the modules (this package re-exports nothing); the models are imported at the end of
``quotes/models.py`` so Django registers them in the ``quotes`` app.
"""
