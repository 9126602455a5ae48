"""Server time of the configurator: the first page after log-in, and the htmx
update over the scenario presets.

First page: a GET of ``/`` by a user who has just logged in (no remembered
configuration), once as the very first request of a fresh worker (after the
start-up warm-up of config/wsgi.py; the catalog cache still cold) and then as the median and p95 of fresh
log-ins on a warm process (target: ≤ 150 ms).

Each preset's form is posted to /configurator/update as htmx would (the whole
request path: middleware, form validation, resolution against the catalog,
plan(), the results template and its SVG drawings).  Prints median and p95 per
preset and overall (target: p95 < 50 ms).  In-process, no network.
"""

from __future__ import annotations

import statistics
import time

import _django

RUNS = 30


def main() -> None:
    _django.setup()
    from django.contrib.auth import get_user_model
    from django.test import Client

    from catalog.models import Scenario
    from configurator.services import preset_data

    engineer = get_user_model().objects.get(username="engineer")

    def first_page() -> float:
        fresh = Client()
        fresh.force_login(engineer)
        start = time.perf_counter()
        response = fresh.get("/")
        elapsed = (time.perf_counter() - start) * 1000
        assert response.status_code == 200, response.status_code
        return elapsed

    # A web worker warms up at start-up (config/wsgi.py → configurator.warmup).
    from configurator.warmup import warm_up

    warm_up()
    cold = first_page()
    warm = sorted(first_page() for _ in range(RUNS))
    warm_p95 = warm[int(0.95 * len(warm)) - 1]
    print(
        f"first page after log-in: fresh worker {cold:.1f} ms; warm median {statistics.median(warm):.1f} ms, p95 {warm_p95:.1f} ms"
    )
    _django.report("first page, fresh worker", cold, "ms", "<= 150 ms")
    _django.report("first page after log-in p95", warm_p95, "ms", "<= 150 ms")

    client = Client()
    client.force_login(engineer)
    presets = [None, *Scenario.objects.values_list("slug", flat=True)]
    all_samples = []
    print(f"{'preset':32} {'median ms':>10} {'p95 ms':>8}")
    for slug in presets:
        data = preset_data(slug)
        samples = []
        for i in range(RUNS + 3):
            # Each update differs (as when typing): no request, plan or proof is served from a cache.
            data = {**data, "utilisation": f"{0.5 + (i + 1) / 1000:.3f}"}
            start = time.perf_counter()
            response = client.post("/configurator/update", data, HTTP_HX_REQUEST="true")
            elapsed = (time.perf_counter() - start) * 1000
            assert response.status_code == 200, response.status_code
            if i >= 3:  # warm-up
                samples.append(elapsed)
        samples.sort()
        all_samples += samples
        print(
            f"{slug or '(default 4 × A3)':32} {statistics.median(samples):10.1f} {samples[int(0.95 * len(samples)) - 1]:8.1f}"
        )
    all_samples.sort()
    p95 = all_samples[int(0.95 * len(all_samples)) - 1]
    print(f"{'all presets':32} {statistics.median(all_samples):10.1f} {p95:8.1f}   (target p95 < 50 ms)")
    _django.report("htmx update median", statistics.median(all_samples), "ms")
    _django.report("htmx update p95", p95, "ms", "< 50 ms")


if __name__ == "__main__":
    main()
