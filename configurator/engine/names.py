"""Names shown to people: one node naming scheme, and text safe for every font.

``node_name(i)`` is the single name of node ``i`` (0-based, deployment order)
used by the drawings, the tables, the launch scripts and the proposal:
``node-00``, ``node-01`` … (three digits from node 100).  Launch bundles name
their scripts ``<node_name>-<group>-<role>.sh``.

``display_text`` drops emoji (and their joiners and variation selectors)
from names typed into the catalog or a quote, so that a drawing or a PDF never
shows the empty boxes of a font without them; every other character, CJK
included, is kept.
"""

from __future__ import annotations

import re

# Emoji blocks (pictographs, transport, supplemental symbols, flags, dingbats and
# miscellaneous symbols), skin tones, keycap, joiner and variation selectors.
_EMOJI = re.compile(
    "["
    "\U0001f000-\U0001faff"
    "\U00002600-\U000027bf"
    "\U0001f1e6-\U0001f1ff"
    "\U0000fe00-\U0000fe0f"
    "\U0000200d"
    "\U000020e3"
    "\U000e0020-\U000e007f"
    "]"
)


def node_name(index: int) -> str:
    """``node-00`` for the first node of the deployment."""
    return f"node-{index:02d}"


def display_text(text: object) -> str:
    """``text`` without emoji, spaces tidied where one was removed."""
    text = str(text)
    if text.isascii():
        return text
    out = _EMOJI.sub("", text)
    return re.sub(r"  +", " ", out).strip() if out != text else out
