"""Server-side SVG drawings and charts shared by the configurator page and the PDF.

Pure Python (no Django): each public function takes plain data and a
language ("zh-hans" or "en") and returns a self-contained SVG string with
``width``, ``height`` and ``viewBox``, so the page can inline it and
WeasyPrint can render it without fetching anything.

Number and money formatting for the page and the PDF is in
:mod:`configurator.drawings.fmt`.
"""

from .charts import bar_chart_svg, line_chart_svg, tornado_svg
from .memory import memory_bar_svg, memory_segments
from .power_feed import power_feed_svg
from .racks import rack_elevation_svg
from .svg import svg_to_data_uri
from .ticks import nice_ticks
from .topology import topology_groups, topology_svg

__all__ = [
    "bar_chart_svg",
    "line_chart_svg",
    "memory_bar_svg",
    "memory_segments",
    "nice_ticks",
    "power_feed_svg",
    "rack_elevation_svg",
    "svg_to_data_uri",
    "topology_groups",
    "topology_svg",
    "tornado_svg",
]
