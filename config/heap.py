"""The garbage collector of a long-running web worker, settled after its warm-up.

CPython's cyclic collector runs a young-generation pass every 700 container objects allocated and a
full pass whenever the objects that survived since the last one reach a quarter of the old
generation.  A configurator update allocates tens of thousands of container objects (the plan, its
figure book, the page context, the template's nodes), so a worker ran about four young passes an
update, and every forty-odd updates a full pass over everything the process holds: the modules, the
URL configuration, the compiled templates, the catalog and the plan cache — some 300,000 objects.
Measured in-process over 540 updates of the six presets (CPU time, ``bench/bench_htmx.py``'s
request): 6.6 ms of collection an update on average, single full passes of up to 365 ms (the p95 of
the update is what an engineer feels, and those passes are its tail).

:func:`settle_heap`, called by ``config/wsgi.py`` once the worker is warm:

* ``gc.freeze()`` moves what the warm-up built (about 155,000 objects that live as long as the
  process) into the permanent generation, which no collection walks again (the Python
  documentation recommends it for long-lived worker processes: ``gc.freeze``);
* the young generation's threshold goes from 700 to ``YOUNG_THRESHOLD`` objects, so most of an
  update's temporaries are freed by reference counting before a pass ever sees them and far fewer
  are promoted: no full pass in the same 540 updates (there were 12), collection time 1.8 ms an
  update instead of 6.6 ms.  Cyclic garbage waits a little longer (at most that many
  container objects), which is nothing beside a worker's memory.

Idempotent; a process that never calls it keeps Python's defaults (tests, management commands,
the Celery worker, whose PDF renders pause the collector themselves: ``documents/pdf/render.py``).
"""

from __future__ import annotations

import gc

YOUNG_THRESHOLD = 10_000


def settle_heap() -> None:
    """Collect once, freeze what is left (the warm worker's long-lived heap) and raise the young
    generation's threshold (module docstring)."""
    gc.collect()
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, middle, old)
