"""Limits for every parser of untrusted JSON (issue 13, "hostile input never reaches a 500").

Used by the JSON API (``configurator/api/base.py``), the form posts that carry a
configuration as JSON (``/configurator/bundle``, ``/quotes/create/``, the
planner), ``manage.py plan`` / ``launch-bundle`` and the Hugging Face config
importer.  Pure Python, no Django, so the catalog importer can use it too.

* Depth is measured *before* parsing (``json_depth``, linear in the length),
  so a 3,000-level document never reaches ``json.loads``' recursion, which
  raises ``RecursionError`` around 1,000 levels in CPython.
* ``NaN``, ``Infinity`` and numbers that overflow a float (``1e999``) are
  refused while parsing; range checks of each field happen where the field is
  read (``configurator/io/requests.py`` RANGES, the importer's ``_Reader``).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

MAX_DEPTH = 32  # a plan request with an inline hf_config nests ≈8 levels
MAX_BYTES = 2 * 1024 * 1024  # as DATA_UPLOAD_MAX_MEMORY_SIZE


class JsonLimitError(ValueError):
    """Untrusted JSON refused; ``status`` is 413 for size, 400 otherwise."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")


def json_depth(text: str) -> int:
    """How deep JSON ``text`` nests objects and lists, without parsing it.

    Strings are blanked first, so brackets inside them do not count."""
    brackets = text.count("[") + text.count("{")
    if brackets <= 1:
        return brackets
    depth = deepest = 0
    for ch in _NOT_BRACKET.sub("", _JSON_STRING.sub('""', text)):
        if ch in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
        else:
            depth -= 1
    return deepest


def _refuse_constant(name: str):
    raise JsonLimitError(f"{name} is not a number JSON allows.")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise JsonLimitError(f"the number {text[:40]} is too large.")
    return value


def loads(
    text: str | bytes, *, what: str = "body", max_bytes: int = MAX_BYTES, max_depth: int = MAX_DEPTH
) -> Any:
    """``json.loads`` with a size limit, a depth limit and finite numbers only.

    Raises :class:`JsonLimitError` (a ``ValueError``) with a message naming ``what``."""
    size = len(text) if isinstance(text, bytes) else len(text.encode("utf-8", "surrogatepass"))
    if size > max_bytes:
        raise JsonLimitError(f"{what} is too large ({size:,} bytes; at most {max_bytes:,}).", status=413)
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise JsonLimitError(f"{what} is not UTF-8 text.") from exc
    depth = json_depth(text)
    if depth > max_depth:
        raise JsonLimitError(f"{what} nests {depth:,} levels deep; at most {max_depth} are allowed.")
    try:
        return json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float)
    except JsonLimitError as exc:
        raise JsonLimitError(f"{what}: {exc}") from None
    except json.JSONDecodeError as exc:
        raise JsonLimitError(
            f"{what} is not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})."
        ) from None
    except RecursionError:  # unreachable after the depth check; kept so it can never be a 500
        raise JsonLimitError(f"{what} nests too deeply.") from None
    except ValueError as exc:  # e.g. an integer of more than 4,300 digits (CPython's int limit)
        raise JsonLimitError(f"{what} holds a value that cannot be read: {str(exc)[:120]}") from None
