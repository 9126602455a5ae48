"""Quote pages.  Thin: forms parse, ``services`` change state, ``selectors`` read.

Every object is fetched through the visibility selectors, so anything outside
the user's quotes is a 404 (never a 403 that would confirm it exists).  Bad
input re-renders the page with field errors and a 4xx status; a stale form
(optimistic-lock conflict) answers 409 with what happened.

One module per concern, as in ``quotes.services`` (``quotes/urls.py`` imports
them; this package re-exports nothing): ``quotes`` (list, detail, edit, status
changes, create from the configurator), ``revisions`` (revise, issue, compare),
``approvals`` (approve or reject a discount) and ``customers``; ``common``
holds the quote page's context and the action runner they share.  The sales
workflow and the benchmark pages are in ``quotes/workflow/views.py`` and
``quotes/benchmarks/views.py``; the proposal PDF, workbook and launch-bundle
views are the documents app's (``documents/views.py``).
"""
