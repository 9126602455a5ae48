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


class InvalidText(JsonLimitError):
    """A string (or key) holding a code point no text may: ``field`` is its dotted path."""

    def __init__(self, message: str, field: str):
        super().__init__(message)
        self.field = field


def invalid_code_point(text: str) -> str:
    """The first code point of ``text`` that no stored or generated text may hold, described ("" if
    none): a lone surrogate (U+D800–U+DFFF: not a character, cannot be encoded as UTF-8, which is what
    SQLite, PostgreSQL and every generated file need), NUL (PostgreSQL text cannot hold it) and the
    noncharacters U+FFFE / U+FFFF."""
    for ch in text:
        code = ord(ch)
        if 0xD800 <= code <= 0xDFFF:
            return f"U+{code:04X}, a lone surrogate"
        if code == 0 or code in (0xFFFE, 0xFFFF):
            return f"U+{code:04X}, not a character"
    return ""


def find_invalid_text(data: Any, path: str = "") -> tuple[str, str] | None:
    """(dotted path, description) of the first string or key in ``data`` with an invalid code point
    (:func:`invalid_code_point`), or None.  List items are named by index (``options.2``)."""
    stack: list[tuple[Any, str]] = [(data, path)]
    while stack:
        node, where = stack.pop()
        if isinstance(node, str):
            bad = invalid_code_point(node)
            if bad:
                return where or "request", bad
        elif isinstance(node, dict):
            for key, value in reversed(list(node.items())):
                child = f"{where}.{key}" if where else str(key)
                bad = invalid_code_point(str(key))
                if bad:
                    return child.encode("utf-8", "backslashreplace").decode("utf-8"), bad
                stack.append((value, child))
        elif isinstance(node, list):
            stack.extend(
                (value, f"{where}.{i}" if where else str(i)) for i, value in reversed(list(enumerate(node)))
            )
    return None


def _refuse_constant(name: str):
    raise JsonLimitError(f"{name} is not a number JSON allows.")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise JsonLimitError(f"the number {text[:40]} is too large.")
    return value


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise JsonLimitError(f"the key {key[:60]!r} appears twice in one object.")
        out[key] = value
    return out


def loads(
    text: str | bytes,
    *,
    what: str = "body",
    max_bytes: int = MAX_BYTES,
    max_depth: int = MAX_DEPTH,
    unique_keys: bool = False,
) -> Any:
    """``json.loads`` with a size limit, a depth limit and finite numbers only; no string or key with a
    lone surrogate or another invalid code point (:class:`InvalidText`, naming its path); with
    ``unique_keys`` no object with a key twice (the last would silently win).

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
        data = json.loads(
            text,
            parse_constant=_refuse_constant,
            parse_float=_finite_float,
            object_pairs_hook=_unique_pairs if unique_keys else None,
        )
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
    bad = find_invalid_text(data)
    if bad is not None:
        field, description = bad
        raise InvalidText(f"{field} holds an invalid character ({description}).", field)
    return data
