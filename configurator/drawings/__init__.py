"""Server-side SVG drawings and charts shared by the configurator page and the PDF.

Pure Python (no Django): each public function takes plain data and a
language ("zh-hans" or "en") and returns a self-contained SVG string with
``width``, ``height`` and ``viewBox``, so the page can inline it and
WeasyPrint can render it without fetching anything.  Rack elevations live
with the rack engine (``configurator.engine.racks``), not here.
"""

from .memory import memory_bar_svg
from .svg import svg_to_data_uri

__all__ = [
    "memory_bar_svg",
    "svg_to_data_uri",
]
