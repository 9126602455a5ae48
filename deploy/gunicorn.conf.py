"""gunicorn sized for the machine it runs on (README, "Sizing the server").

A configurator update is CPU-bound (planning, proving the advice, rendering: tens of milliseconds of
one core, under Python's GIL), so one worker process per available core runs as many at once as the
machine can; more processes only take turns on the same cores and each keeps its own caches.  Each
worker runs ``threads`` threads (gthread): a status poll, a static file, a saved quote waiting on
PostgreSQL is answered by the other thread of a worker that is planning — the GIL passes between
threads every 5 ms (``sys.getswitchinterval``) — instead of queueing behind the plan for a free
worker.  Two threads, not four: CPU-bound threads only take turns on the GIL, and each request in
flight during a collection is promoted and collected again later; ``bench/load.py`` run back to back
gave 2 threads 56.0 / 53.2 requests/s over 60 s against 4 threads' 49.6 / 49.1, with a lower
update p95 (README, "Sizing the server").  WEB_WORKERS and WEB_THREADS override either.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from config.cores import available_cores, env_int  # noqa: E402

bind = "0.0.0.0:8000"
worker_class = "gthread"
workers = env_int("WEB_WORKERS", available_cores())
threads = env_int("WEB_THREADS", 2)
timeout = 60
graceful_timeout = 30
keepalive = 5
