"""Every state change of customers, quotes and revisions: one function each, one module per concern.

Each service is keyword-only, runs in one ``transaction.atomic`` block,
validates with ``full_clean()`` before saving and writes an
:class:`~quotes.models.AuditEvent` in the same transaction, so a failure
half-way leaves nothing behind.  Business refusals raise
``django.core.exceptions.ValidationError`` (with a message for the user),
authorization refusals ``PermissionDenied``, and a stale copy of a quote
:class:`~quotes.services.base.QuoteConflictError`.

Import a service from its module (this package re-exports nothing).  Lowest
first, each module importing only those above it:

- ``base``: the shared building blocks (the audit row, permission checks, the
  quote's optimistic lock, discount and rate parsing, ``QuoteConflictError``);
- ``planning``: ``configuration_plan``, ``request_with_discount``,
  ``PlannedConfiguration``, ``PlanningUnavailable``;
- ``snapshot``: a revision's totals and snapshot hash;
- ``customers``: ``customer_create``;
- ``pdf``: ``revision_pdf_queue`` / ``_start`` / ``_store`` / ``_fail``;
- ``issuing``: ``revision_issue`` and the ``revision_issued`` signal;
- ``transitions``: ``quote_transition``, ``quotes_expire_overdue`` (sending a
  quote issues its latest revision);
- ``revisions``: ``revision_create_from`` (revising a sent quote takes it back
  to draft) and ``revision_build``, which prices a new revision's lines;
- ``quotes``: ``quote_create_from_configuration``, ``quote_created_with``,
  ``quote_update``;
- ``approvals``: ``revision_approve``, ``revision_reject``.
"""
