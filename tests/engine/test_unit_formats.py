"""Each unit of the figure book owns its format (configurator/engine/formatting.py ``UNIT_FORMATS``).

Every unit a figure definition uses has a format; the table names no unit the book lacks; a unit no
entry names is written as a plain number, as before the table; and the table writes every value
exactly as the if-ladder on unit strings it replaced (kept below as the reference).
"""

from __future__ import annotations

import itertools
from decimal import Decimal, InvalidOperation
from typing import Any

import pytest

from configurator.engine import formatting
from configurator.engine.figures import Unit, definitions
from configurator.engine.formatting import PLAIN, UNIT_FORMATS, format_figure_value, unit_format

CURRENCIES = ("CNY", "USD", "EUR", "")


def _as_a_figure_carries_it(unit: str, currency: str) -> str:
    """The unit as a figure of a book in ``currency`` spells it (FigureBook fills ``{currency}``)."""
    return unit.replace("{currency}", currency)


def test_every_unit_the_figure_definitions_use_has_a_format():
    used = {d.unit for d in definitions()}
    assert used  # the catalogue is not empty
    for unit, currency in itertools.product(sorted(used | set(Unit)), CURRENCIES):
        spelt = _as_a_figure_carries_it(unit.value, currency)
        assert unit_format(spelt, currency) is not None, (unit, currency)


def test_the_table_names_only_units_of_the_figure_book():
    assert set(UNIT_FORMATS) <= {u.value for u in Unit}


def test_money_units_are_found_by_the_currency_they_are_spelt_with():
    assert unit_format("CNY", "CNY") is unit_format("USD", "CNY") is not None
    assert unit_format("CNY/M tokens", "CNY") is unit_format("/M tokens", "") is not None
    assert format_figure_value(24_000_000, "CNY", "en") == "¥24.0 M"
    assert format_figure_value(24_000_000, "CNY", "zh-hans") == "¥2,400 万"
    assert format_figure_value(Decimal("3.456"), "USD/M tokens", "en", currency="USD") == "$3.46"


def test_an_unknown_unit_is_written_as_a_plain_number_as_before():
    assert unit_format("furlongs") is None
    assert format_figure_value(1234.5, "furlongs", "en") == "1,234.5"
    assert format_figure_value(1234, "furlongs", "en") == "1,234"
    assert format_figure_value(1234.5, "furlongs", "en", decimals=0) == "1,235"
    assert format_figure_value("n/a", "furlongs", "en") == "n/a"
    assert unit_format("nodes") is PLAIN


def _number(value: Any) -> Decimal | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        return Decimal(str(value))
    except (InvalidOperation, ValueError):
        return None


def _ladder(value: Any, unit: str, lang: str, *, currency: str = "CNY", decimals: int | None = None) -> str:
    """The if-ladder on unit strings the table replaced (configurator/sections/model.py format_value)."""
    number = _number(value)
    if number is None:
        text = str(value if value not in (None, "") else "—")
        return f"{text} tok/s" if unit == "tokens/s" and value not in (None, "") else text
    if unit == "s":
        return formatting.format_seconds(number)
    if unit in ("kW", "A"):
        return f"{formatting.thousands(number, 1 if decimals is None else decimals)} {unit}"
    if unit == "tokens/s":
        return f"{formatting.thousands(number, decimals or 0)} tok/s"
    if unit in ("kg", "kg/m²", "BTU/h"):
        return f"{formatting.thousands(number, decimals or 0)} {unit}"
    if unit == "m²":
        return f"{formatting.format_number(number, 2, strip_zeros=True)} {unit}"
    if unit == "req/s":
        return formatting.thousands(number, 2 if decimals is None else decimals)
    if unit in ("fraction", "ratio"):
        return formatting.format_percent(number, decimals or 0)
    if unit == "B":
        return formatting.format_bytes_gb(number, 1 if decimals is None else decimals)
    if unit == "B/token":
        return f"{formatting.thousands(number)} B"
    if unit == "B/seq":
        return formatting.format_bytes_gb(number, 2 if decimals is None else decimals)
    if unit.endswith("/M tokens"):
        return formatting.format_money(number, currency, lang, scale=1, decimals=2)
    if unit == currency or unit in formatting.CURRENCY_SYMBOLS:
        return formatting.format_money(number, unit, lang)
    if decimals is None and number != number.to_integral_value():
        return formatting.format_number(number, 2, strip_zeros=True)
    return formatting.thousands(number, decimals or 0)


VALUES = (
    0,
    1,
    7,
    -3.2,
    0.5,
    0.015,
    0.85,
    2.44,
    16.35,
    1234.5678,
    131_072,
    24_000_000,
    4.8e8,
    10**9,
    30_200_000_000,
    Decimal("0.125"),
    Decimal("-0.004"),
    "12.5",
    "none",
    "abc",
    "",
    None,
    True,
    False,
)


@pytest.mark.parametrize("currency", CURRENCIES)
def test_the_table_writes_every_value_as_the_ladder_did(currency):
    units = sorted({_as_a_figure_carries_it(u.value, currency) for u in Unit}) + [
        "furlongs",
        "USD",
        "GBP",
        "HKD/M tokens",
        "{currency}",
    ]
    for unit, value, lang, decimals in itertools.product(units, VALUES, ("en", "zh-hans"), (None, 0, 1, 3)):
        expected = _ladder(value, unit, lang, currency=currency, decimals=decimals)
        got = format_figure_value(value, unit, lang, currency=currency, decimals=decimals)
        assert got == expected, (unit, value, lang, decimals, currency)
