"""The catalog port: the catalog as engine inputs, and the caches keyed by its version.

``specs`` converts catalog values to engine specs (pure); ``inputs`` is its Django adapter over
catalog rows; ``catalog`` holds the catalog ports (the request resolver's and the auto-planner's) and
the one price-list rule; ``seed`` answers the same from the seed files without a database; ``cache``
is the per-process cache of resolved specs keyed by the catalog version; ``plan_cache`` holds plans
per request, catalog version and day.  The package re-exports nothing: import the module.
"""
