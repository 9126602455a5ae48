"""``checks.book.render`` reads each template's specs once (``_compiled``): it must give what
``string.Formatter.vformat`` gives through the catalogue's ``_Formatter``, for every template the
catalogue holds, whatever numbers and words it is given."""

from __future__ import annotations

import pytest

from configurator.engine.checks import book
from configurator.engine.checks.book import _FORMATTER, definitions, render, template_names


def _templates() -> list[str]:
    out: set[str] = set()
    for d in definitions():
        out |= {d.en, d.zh, d.field}
        for v in d.variants.values():
            out |= {v.en, v.zh, v.field or ""}
        for f in (d.fix, *d.fixes.values()):
            if f is not None:
                out |= {f.en, f.zh, f.field or ""}
                if isinstance(f.change, dict):
                    out |= set(f.change)
    return sorted(out)


def _renders_as_vformat(template: str, values: dict) -> None:
    """render gives vformat's text, or raises where vformat raises."""
    try:
        expected = _FORMATTER.vformat(template, (), values)
    except (ValueError, TypeError):
        with pytest.raises((ValueError, TypeError)):
            render(template, values)
        return
    assert render(template, values) == expected, template


VALUES = (0, 1, 2, -3, 1234567, 10**20, 0.5, 2.5, -0.004, 1234.5678, 29_750_000_000.0)


@pytest.mark.parametrize("value", VALUES)
def test_every_catalogue_template_renders_as_vformat(value: float) -> None:
    for template in _templates():
        _renders_as_vformat(template, dict.fromkeys(template_names(template), value))


@pytest.mark.parametrize(
    "template",
    [
        "{a} and {b!r} of {c:>6}",
        "{n:plural:node:nodes}, {n:one:fits:fit}",
        "{x:gb} {x:gb:2} {x:number:1} {x:.1f} {x:g} {x:thousands}",
        "{s} / {s!s:>4}",
        "",
        "no field",
    ],
)
@pytest.mark.parametrize("value", [1, 7, 2.25, "word"])
def test_specs_render_as_vformat(template: str, value: object) -> None:
    _renders_as_vformat(template, dict.fromkeys(template_names(template), value))


def test_a_missing_value_is_a_key_error() -> None:
    with pytest.raises(KeyError):
        render("{a} {b}", {"a": 1})
    assert book._compiled("{a:gb:x}") is not None  # digits that are no number: format_field says why
    with pytest.raises(ValueError):
        render("{a:gb:x}", {"a": 1})
