"""The configurator's interface to the other apps (quotes, proposals).

Everything the quotes and proposals apps use of the configurator is named here, and they import
nothing else of it (``tests/foundation/test_import_graph.py`` holds them to that; templates may
still ``{% load plan_tags %}``).  Behind this module the configurator may move its code freely:
the engine (``configurator/engine``), request resolution, the page's presentation, the drawings.

What the other apps get:

* **planning** – :func:`plan_for_quote` plans a posted configuration against the catalog and
  returns what a quote revision freezes (its prices written by :func:`prices_snapshot`, the one
  shape of frozen prices); :func:`plan_from_json` / :func:`plan_as_dict` plan a
  request (JSON, or an engine request such as ``reference.request(reference.case(name))``);
  :func:`request_to_inline` writes a request with every catalog entry inline;
  :class:`RequestError` is what an unresolvable request raises.
* **the configurator page** – :class:`ConfiguratorForm`, :func:`form_data_from_request`
  and :func:`plan_context` (a revision reopened in the configurator).
* **a frozen plan on paper** – :func:`context_from_dict` (the plan part of the page and of the
  PDF, from ``result_json``), the template helpers (:data:`SOURCE_KINDS`, :func:`figval`,
  :func:`seconds`) and the drawings (:func:`tornado_svg`, :func:`power_feed_svg`,
  :func:`svg_to_data_uri`, :func:`format_money`).
* **the numbers** – :mod:`formatting` (configurator/engine/formatting.py): thousands, bytes,
  percent, seconds and money written one way on the page, in the drawings and in the PDF.
* **the sections** – :mod:`sections` (configurator/sections/): the rows of each section (figure keys,
  quote terms) the page, the PDF and the workbook render; :func:`node_name`, the one node name.
* **the words** – :mod:`vocabulary` (configurator/engine/vocabulary.py): the English and Chinese
  names of groups, roles, fabrics, planes, topologies, areas, sources and scenarios, and
  :func:`is_zh`, the one test of "is this language Chinese?".
* **the bill of materials** – :data:`MEDIA` (transceiver and cable names by media code).
* **the launch bundle** – the result types (:class:`LaunchResult`, :class:`NodeLaunch`,
  :class:`BundleContext`, :class:`GroupSummary`, :class:`TopologyKind`), :func:`launch_from_resolved`
  (rebuilt from a frozen inline request) and :func:`launch_bundle_zip`.
* **acknowledged warnings** – :func:`parse_acknowledged`, :func:`record_on_revision`.
* :class:`CommercialSpec` – the commercial terms a catalog port returns.
* :func:`catalog_version` – the catalog's version, which every catalog save increments.
* **the performance model's calibration** – :mod:`calibration` (the public records, the fit and
  its leave-one-source-out error) and :func:`calibration_path` (where the engine reads the fit):
  ``manage.py calibrate`` (quotes/) refits it with the measurements quotes promoted.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from configurator.web.form_data import form_data_from_request
from configurator.web.forms import ConfiguratorForm
from configurator.web.presentation import context_from_dict, plan_context

from . import calibration, reference, sections
from .acknowledge import parse_acknowledged, record_on_revision
from .drawings.charts import tornado_svg
from .drawings.fmt import format_money
from .drawings.power_feed import power_feed_svg
from .drawings.svg import svg_to_data_uri
from .engine import formatting, vocabulary
from .engine.launch import benchmark_file, build_launch, bundle_files, bundle_zip
from .engine.layout import resolve_layout
from .engine.names import node_name
from .engine.network import MEDIA
from .engine.plan import plan
from .engine.serialize import plan_to_dict
from .engine.serving_model import BAND_BOUNDS, calibration_path
from .engine.tco.measured import measured as measure_benchmark
from .engine.types import (
    BundleContext,
    CommercialSpec,
    GroupSummary,
    LaunchResult,
    NodeLaunch,
    PlanRequest,
    TopologyKind,
)
from .engine.vocabulary import is_zh
from .io.requests import RequestError, request_to_inline, resolve
from .planning.plans import plan_from_json
from .planning.prices import prices_snapshot
from .planning.quoting import plan_for_quote
from .port.cache import current_version as catalog_version
from .templatetags.plan_tags import SOURCE_KINDS, figval, seconds

__all__ = [
    "BAND_BOUNDS",
    "is_zh",
    "calibration",
    "calibration_path",
    "MEDIA",
    "SOURCE_KINDS",
    "BundleContext",
    "CommercialSpec",
    "ConfiguratorForm",
    "benchmark_file",
    "GroupSummary",
    "LaunchResult",
    "NodeLaunch",
    "PlanRequest",
    "RequestError",
    "TopologyKind",
    "catalog_version",
    "context_from_dict",
    "figval",
    "form_data_from_request",
    "format_money",
    "formatting",
    "launch_bundle_zip",
    "launch_from_resolved",
    "measure_benchmark",
    "node_name",
    "parse_acknowledged",
    "plan_as_dict",
    "reference",
    "plan_context",
    "plan_for_quote",
    "plan_from_json",
    "power_feed_svg",
    "prices_snapshot",
    "record_on_revision",
    "request_to_inline",
    "seconds",
    "sections",
    "svg_to_data_uri",
    "tornado_svg",
    "vocabulary",
]


def plan_as_dict(request: PlanRequest) -> dict:
    """The plan of an engine request, as ``result_json`` stores it."""
    return plan_to_dict(plan(request))


def launch_from_resolved(resolved: Mapping[str, Any], catalog: Any) -> LaunchResult:
    """The launch plan rebuilt from a request with every catalog entry inline.

    ``catalog`` is the catalog port resolution asks (``configurator.io.requests.resolve``); a frozen
    revision passes one that refuses every lookup, so the live catalog is never consulted.
    """
    request = resolve(dict(resolved), catalog)
    return build_launch(request, resolve_layout(request))


def launch_bundle_zip(result: LaunchResult) -> bytes:
    """The launch bundle of a launch plan, as .zip bytes (equal plans give equal bytes)."""
    return bundle_zip(bundle_files(result))
