"""Auto-planner: the cheapest deployments that meet a scenario, across every hardware family.

Pure search over engine types (no Django): the catalog comes in through a
:class:`PlannerCatalog` port (``configurator.web.planner.services`` provides the
Django one), and every candidate is judged by the same :func:`plan` the
configurator page uses.  docs/planner.md describes the request and response.

The search, per server model ("hardware family"):

1. **Family filters** (no engine call): domestic hardware only, a server
   validated for text only when the workload needs images, no purchase or
   lease price in the price list, a server hotter than the site's air limit
   when only air cooling is allowed.
2. **Group sizes**: for 1 … ``max_nodes`` nodes, the proposed layout plus a
   narrower-TP alternative, kept when ``layout_is_valid`` (expert
   divisibility, heads, scale-up domain) and the weights plus one full-length
   sequence fit at the most generous serving settings (``size_memory``).
3. **Shapes**: single clusters, tenant pairs and xPyD splits built from those
   group sizes (a primary/standby pair instead when the availability target is
   99.9 % or more), in order of total nodes.  Cheap lower bounds (servers'
   capex, lease and power; racks) stop a family as soon as they pass a ceiling.
4. **Serving**: per shape, layout alternatives × (memory utilisation, KV
   dtype) escalated only when the KV cache is what limits, with
   ``max_num_seqs`` sized to the offered load; judged by layout + memory +
   performance (≈0.5 ms) for capacity (the limit ``plan()`` enforces as
   ``performance.concurrency_above_capacity``, read as a gap concurrency ÷
   capacity), queueing, TTFT/TPOT targets and request rate.
5. **Plan**: the chosen variant goes through ``plan()`` (≈2–5 ms) and must
   have no error check and meet every constraint (capex or monthly rent,
   site power, racks, air cooling).
6. A family stops growing once feasible shapes stop lowering its cost for two
   node counts in a row, or when a gap to a target stops closing.

Every rejection carries a stable code, the request field it binds on and a
message with the numbers, in English and Chinese, declared in the check
catalogue (``engine/checks/catalogue/planner.py``) and worded by
:func:`.results.rejection`.

Where things are:

* :mod:`.query` – what is asked: the request types, :func:`parse_query`, the catalog port.
* :mod:`.search` – enumerating candidates: the family loop (:func:`search`), with
  :mod:`.build` (engine requests), :mod:`.racks` (rack choice), :mod:`.sizing` (group sizes,
  shapes) and :mod:`.serving` (serving variants).
* :mod:`.judge` – scoring, ranking and explaining: every verdict and its reason, the sort
  order, the Pareto front, each family's reason and the binding constraint.
* :mod:`.results` – what comes out (:class:`PlannerResult` and its parts), its JSON
  (:func:`result_dict`) and the one maker of a rejection (:func:`.results.rejection`).
"""

from ..engine.layout import parallel_label
from .judge import binding_constraint, pareto_front, primary_reason
from .query import Constraints, Options, PlannerCatalog, PlannerQuery, Workload, parse_query, query_dict
from .results import (
    STAGE_CONSTRAINT,
    STAGE_ENGINE,
    STAGE_FAMILY,
    STAGE_FEASIBLE,
    STAGE_LAYOUT,
    STAGE_MEMORY,
    STAGE_NAMES,
    STAGE_SERVING,
    Candidate,
    Evaluated,
    PlannerResult,
    Rejection,
    Shape,
    candidate_dict,
    result_dict,
    shape_label,
    short_name,
)
from .search import MAX_PLANS_PER_FAMILY, search

__all__ = [
    "MAX_PLANS_PER_FAMILY",
    "STAGE_CONSTRAINT",
    "STAGE_ENGINE",
    "STAGE_FAMILY",
    "STAGE_FEASIBLE",
    "STAGE_LAYOUT",
    "STAGE_MEMORY",
    "STAGE_NAMES",
    "STAGE_SERVING",
    "Candidate",
    "Constraints",
    "Evaluated",
    "Options",
    "PlannerCatalog",
    "PlannerQuery",
    "PlannerResult",
    "Rejection",
    "Shape",
    "Workload",
    "binding_constraint",
    "candidate_dict",
    "parallel_label",
    "pareto_front",
    "parse_query",
    "primary_reason",
    "query_dict",
    "result_dict",
    "search",
    "shape_label",
    "short_name",
]
