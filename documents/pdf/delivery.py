"""The proposal's delivery chapters: what ``proposals.delivery`` says about building, accepting and
running the cluster, and the acceptance benchmark the launch bundle writes.

* :func:`benchmark_appendix` — the acceptance benchmark (the launch bundle's ``benchmark.sh`` and its
  workload) as an appendix of both editions, so the acceptance criteria refer to something attached;
* :func:`delivery_context` — everything the delivery partials show (``quotes/templates/quotes/pdf/_*.html``).
"""

from __future__ import annotations

from configurator.public import benchmark_file
from proposals.delivery import compliance, facilities, implementation_plan, network_planes
from proposals.terms import acceptance_figures, terms_for

from ..exports import BundleUnavailable, revision_launch_result


def benchmark_appendix(revision) -> dict | None:
    """The acceptance benchmark as the launch bundle writes it (``benchmark.sh``), its workload and the
    figures it is held to; None when the revision has no launch configuration."""
    try:
        script = benchmark_file(revision_launch_result(revision))
    except BundleUnavailable:
        return None
    if not script:
        return None
    # the commands only: the script's comments are for the engineer who runs it
    commands = "\n".join(
        line.split("  #")[0].rstrip()
        for line in script.splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    )
    result = revision.result_json if isinstance(revision.result_json, dict) else {}
    resolved = revision.resolved_json if isinstance(revision.resolved_json, dict) else {}
    # The concurrencies the script runs, read from its own loop, so the text says what it does.
    loop = next((line for line in commands.splitlines() if line.startswith("for concurrency in ")), "")
    levels = loop.removeprefix("for concurrency in ").split(";")[0].split()
    sweep = ", ".join(f"{int(c):,}" for c in levels if c.isdigit())
    return {"commands": commands, "figures": acceptance_figures(result, resolved), "sweep": sweep}


def delivery_context(revision, lang: str) -> dict:
    """Everything the delivery partials of the proposal show for ``revision``."""
    result = revision.result_json if isinstance(revision.result_json, dict) else {}
    resolved = revision.resolved_json if isinstance(revision.resolved_json, dict) else {}
    terms = terms_for(revision.quote)
    return {
        "network_planes": network_planes(result, lang),
        "facilities": facilities(result, resolved),
        "implementation": implementation_plan(result, resolved, terms),
        "compliance": compliance(result, resolved, lang),
        "benchmark_appendix": benchmark_appendix(revision),
    }
