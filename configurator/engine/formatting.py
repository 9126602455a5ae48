"""Number formatting for the engine's messages, the drawings, the configurator page and the PDF.

Small pure functions, no Django, no locale module: the output must be the
same on every machine so that the page, the PDF and the tests agree.  The
engine's check messages (``explain.thousands``/``gb`` …), the drawings
(``configurator/drawings/fmt.py`` re-exports this module), the page's template
filters (``plan_tags``) and the proposal PDF all format numbers here, so one
figure is written one way everywhere.

Conventions
-----------
* Thousands are separated with "," in both languages (Chinese quotations
  write 2,400 万 the same way).
* Negative numbers use the typographic minus "−" (U+2212).
* Numbers round half up (2.5 → "3"), as finance tables do.
* ``GB`` is the decimal gigabyte (10⁹ bytes), the unit of vendor specs
  ("64 GB NPU").  ``GiB`` is offered for figures vLLM reports in GiB.
* Money in English is scaled to ``k``/``M``/``B`` with a fixed number of
  decimals ("¥24.0 M"); in Chinese to 万/亿 ("¥2,400 万", "¥4.8 亿"), where
  trailing zeros are dropped as Chinese quotations do.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation, getcontext, localcontext

from .vocabulary import is_zh

MINUS = "\u2212"

GB = 10**9
GIB = 2**30

WAN = 10**4  # 万
YI = 10**8  # 亿

CURRENCY_SYMBOLS = {"CNY": "¥", "RMB": "¥", "USD": "$", "EUR": "€", "GBP": "£", "HKD": "HK$"}

# Scale divisor → suffix, per language.  A divisor of 1 means "no scaling".
_EN_SUFFIXES = {1: "", 10**3: "k", 10**6: "M", 10**9: "B"}
_ZH_SUFFIXES = {1: "", WAN: "万", YI: "亿"}

Number = int | float | Decimal


def _to_decimal(value: Number) -> Decimal:
    """``value`` as a Decimal; floats go through ``repr`` so 0.1 stays 0.1."""
    if isinstance(value, Decimal):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"cannot format a non-finite number: {value!r}")
        return Decimal(repr(value))
    try:
        return Decimal(value)
    except (InvalidOperation, TypeError) as exc:  # pragma: no cover - defensive
        raise ValueError(f"not a number: {value!r}") from exc


def _round(value: Decimal, decimals: int) -> Decimal:
    """``value`` rounded half up to ``decimals`` places, at whatever precision that takes: the default
    context's 28 digits would refuse to quantize 1e28 (a hostile input echoed in a message), so the
    context is widened to the digits the result needs."""
    digits = max(value.adjusted(), 0) + decimals + 2 if value.is_finite() else 0
    if digits <= getcontext().prec:  # the usual case: no wider context to enter (a page formats hundreds)
        return value.quantize(_QUANTA.get(decimals) or Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP)
    with localcontext() as ctx:
        ctx.prec = max(ctx.prec, digits)
        return value.quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP)


_QUANTA = {d: Decimal(1).scaleb(-d) for d in range(7)}  # 1, 0.1, … 0.000001: the quanta of _round
_EXACT_INT = 10**18  # whole numbers below this format without the decimal (format_number)


def format_number(value: Number, decimals: int = 0, *, strip_zeros: bool = False) -> str:
    """``value`` with thousands separators and ``decimals`` places: 24000000 → "24,000,000".

    Rounds half up (as finance tables do).  With ``strip_zeros`` trailing
    zeros after the decimal point are dropped ("2.50" → "2.5", "3.0" → "3").
    """
    if decimals == 0 and type(value) is int and -_EXACT_INT < value < _EXACT_INT:
        # A whole number to whole units (counts, bytes, tokens: most of a plan's messages) groups its
        # own digits: the decimal's rounding and formatting give the same text, at ten times the cost,
        # while it has fewer digits than the decimal context (beyond, the decimal's text rounds them).
        return f"{MINUS}{-value:,}" if value < 0 else f"{value:,}"
    d = _round(_to_decimal(value), decimals)
    sign = MINUS if d < 0 else ""
    text = f"{abs(d):,.{decimals}f}"
    if strip_zeros and "." in text:
        text = text.rstrip("0").rstrip(".")
    if sign and set(text) <= {"0", ".", ","}:  # "−0" after rounding
        sign = ""
    return sign + text


def format_plain(value: Number) -> str:
    """A bound or input as the user typed it: whole numbers grouped ("131,072"), others in the
    shortest form ("0.9", "1e-05"), and numbers of 10¹⁵ or more as exponents ("1e+28")."""
    d = _to_decimal(value)
    if d.is_finite() and abs(d) >= 10**15:  # beyond any real bound: "1e+28", not 29 grouped digits
        return (MINUS if d < 0 else "") + f"{float(abs(d)):g}"
    return format_number(d) if d == d.to_integral_value() else f"{float(d):g}"


def format_bytes_gb(num_bytes: Number, decimals: int = 1) -> str:
    """Bytes as decimal gigabytes: 30_200_000_000 → "30.2 GB"."""
    return f"{format_number(_to_decimal(num_bytes) / GB, decimals)} GB"


def format_bytes_gib(num_bytes: Number, decimals: int = 1) -> str:
    """Bytes as binary gibibytes: 2**31 → "2.0 GiB"."""
    return f"{format_number(_to_decimal(num_bytes) / GIB, decimals)} GiB"


def format_percent(fraction: Number, decimals: int = 0) -> str:
    """A fraction as a percentage: 0.85 → "85 %" (space before %, SI style)."""
    return f"{format_number(_to_decimal(fraction) * 100, decimals)} %"


def format_bytes_tb(num_bytes: Number, decimals: int = 2) -> str:
    """Bytes as decimal terabytes: 1_560_936_091_448 → "1.56 TB"."""
    return f"{format_number(_to_decimal(num_bytes) / 10**12, decimals)} TB"


def format_bytes_mb(num_bytes: Number, decimals: int = 1) -> str:
    """Bytes as decimal megabytes: 28_085_760 → "28.1 MB"."""
    return f"{format_number(_to_decimal(num_bytes) / 10**6, decimals)} MB"


def format_seconds(seconds: Number) -> str:
    """A duration as people read it: under a second in milliseconds ("15 ms"), else "2.4 s"."""
    d = _to_decimal(seconds)
    if d < 1:
        return f"{format_number(d * 1000, 0)} ms"
    return f"{format_number(d, 1)} s"


def currency_symbol(currency: str) -> str:
    """The symbol for a currency code: ¥ for CNY, $ for USD; an unknown code comes back as "CHF "."""
    code = (currency or "").upper()
    return CURRENCY_SYMBOLS.get(code, f"{code} " if code else "")


def money_scale(amount: Number, lang: str) -> int:
    """The divisor that money of this size is shown in, for ``lang``.

    English: 1, 10³ (only when asked), 10⁶ (M) from one million, 10⁹ (B) from one
    billion.  Chinese: 万 from ten thousand, 亿 from one hundred million.
    """
    a = abs(_to_decimal(amount))
    if is_zh(lang):
        if a >= YI:
            return YI
        if a >= WAN:
            return WAN
        return 1
    if a >= 10**9:
        return 10**9
    if a >= 10**6:
        return 10**6
    return 1


def format_money(
    amount: Number,
    currency: str = "CNY",
    lang: str = "en",
    *,
    scale: int | None = None,
    decimals: int | None = None,
) -> str:
    """Money for people: 24,000,000 CNY → "¥24.0 M" (en), "¥2,400 万" (zh-hans).

    ``scale`` forces a divisor (1, 10**3, 10**4, 10**6, 10**8, 10**9) so that
    numbers in one table or one axis share a unit; by default it is
    :func:`money_scale`.  ``decimals`` defaults to 1 for k/M/B and to 0 (≥ 100)
    or 2 (< 100) for unscaled amounts; in Chinese 万/亿 figures show up to 1 / 2
    decimals with trailing zeros dropped ("¥60 万", "¥4.5 万", "¥4.8 亿").
    """
    d = _to_decimal(amount)
    zh = is_zh(lang)
    divisor = money_scale(d, lang) if scale is None else scale
    suffixes = _ZH_SUFFIXES if zh else _EN_SUFFIXES
    suffix = suffixes.get(divisor)
    if suffix is None:  # e.g. 万 asked for in English: say it in the other language's words
        suffix = {**_EN_SUFFIXES, **_ZH_SUFFIXES}.get(divisor, f"×{divisor}")
    scaled = d / divisor
    strip = False
    if decimals is None:
        if divisor == 1:
            decimals = 0 if abs(d) >= 100 else 2
        elif zh:
            strip = True
            decimals = 0 if abs(scaled) >= 100 else (1 if divisor == WAN else 2)
        else:
            decimals = 1
    text = format_number(scaled, decimals, strip_zeros=strip)
    sign = ""
    if text.startswith(MINUS):
        sign, text = MINUS, text[1:]
    return f"{sign}{currency_symbol(currency)}{text}{' ' + suffix if suffix else ''}"


def money_axis_formatter(
    currency: str, lang: str, max_abs: Number, step: Number | None = None
) -> Callable[[float], str]:
    """A money formatter for one axis or one table: every value in the same unit.

    The unit comes from the largest value shown (``max_abs``): ¥37 M of cost
    gives "¥10.0 M" (en) and "¥1,000 万" (zh-hans) for a 10 M tick.  With the
    tick ``step`` the decimals are the fewest that tell ticks apart ("¥10 M",
    "¥7.5 M").  Zero is written "¥0".  Pass it as ``y_format`` to the charts.
    """
    divisor = money_scale(max_abs, lang)
    decimals: int | None = None
    if step:
        decimals = 0
        scaled_step = abs(_to_decimal(step)) / divisor
        while decimals < 3 and _round(scaled_step, decimals) != scaled_step:
            decimals += 1

    def fmt(value: Number) -> str:
        if value == 0:
            return f"{currency_symbol(currency)}0"
        return format_money(value, currency, lang, scale=divisor, decimals=decimals)

    return fmt


def format_int(value: Number) -> str:
    """An integer count with separators: 1048576 → "1,048,576"."""
    return format_number(value, 0)


def thousands(value: Number, decimals: int = 0) -> str:
    """A count or amount with separators: 133120 → "133,120", (2.45, 1) → "2.5"."""
    return format_number(value, decimals)


# --------------------------------------------------------------------------- a figure's value by its unit
#
# Each unit of the figure book (``engine/figures``' ``Unit``, as the plan JSON spells it) owns the way
# its value is written: :data:`UNIT_FORMATS` maps the unit to a :class:`UnitFormat`.  Money units are
# spelt with the plan's currency ("CNY", "CNY/M tokens"), so they are found by :func:`unit_format`,
# not by key; a unit no entry names is written as a plain number (:data:`PLAIN`), as an unlabelled
# figure is.


@dataclass(frozen=True)
class UnitFormat:
    """How a figure of one unit is written.

    ``number(value, unit, lang, currency, decimals)`` writes a numeric value (``decimals`` is the
    caller's, None for the unit's own); ``text_suffix`` follows a value that is not a number.
    """

    number: Callable[[Decimal, str, str, str, int | None], str]
    text_suffix: str = ""


def _grouped(default: int, suffix: str = "") -> UnitFormat:
    """Thousands separators and ``default`` decimals unless the caller gives some; then ``suffix``."""

    def write(n: Decimal, unit: str, lang: str, currency: str, decimals: int | None) -> str:
        return thousands(n, default if decimals is None else decimals) + suffix

    return UnitFormat(write)


def _grouped_with_unit(default: int) -> UnitFormat:
    """:func:`_grouped`, followed by the unit's own symbol ("16.2 kW", "480 kg")."""

    def write(n: Decimal, unit: str, lang: str, currency: str, decimals: int | None) -> str:
        return f"{thousands(n, default if decimals is None else decimals)} {unit}"

    return UnitFormat(write)


def _plain(n: Decimal, unit: str, lang: str, currency: str, decimals: int | None) -> str:
    """A count or bare number: two decimals at most (trailing zeros dropped) for a fraction of one, else
    grouped with the caller's decimals; no unit written."""
    if decimals is None and n != n.to_integral_value():
        return format_number(n, 2, strip_zeros=True)
    return thousands(n, decimals or 0)


PLAIN = UnitFormat(_plain)
_MONEY = UnitFormat(lambda n, unit, lang, currency, decimals: format_money(n, unit, lang))
_MONEY_PER_M_TOKENS = UnitFormat(
    lambda n, unit, lang, currency, decimals: format_money(n, currency, lang, scale=1, decimals=2)
)

UNIT_FORMATS: dict[str, UnitFormat] = {
    "": PLAIN,
    "B": UnitFormat(lambda n, u, lang, c, d: format_bytes_gb(n, 1 if d is None else d)),
    "B/token": UnitFormat(lambda n, u, lang, c, d: f"{thousands(n)} B"),
    "B/seq": UnitFormat(lambda n, u, lang, c, d: format_bytes_gb(n, 2 if d is None else d)),
    "Gb/s": PLAIN,
    "TFLOPS": PLAIN,
    "kW": _grouped_with_unit(1),
    "BTU/h": _grouped_with_unit(0),
    "A": _grouped_with_unit(1),
    "U": PLAIN,
    "kg": _grouped_with_unit(0),
    "kg/m²": _grouped_with_unit(0),
    "m²": UnitFormat(lambda n, unit, lang, c, d: f"{format_number(n, 2, strip_zeros=True)} {unit}"),
    "s": UnitFormat(lambda n, u, lang, c, d: format_seconds(n)),
    "month": PLAIN,
    "fraction": UnitFormat(lambda n, u, lang, c, d: format_percent(n, d or 0)),
    "ratio": UnitFormat(lambda n, u, lang, c, d: format_percent(n, d or 0)),
    "×": PLAIN,
    "nodes": PLAIN,
    "devices": PLAIN,
    "experts": PLAIN,
    "ports": PLAIN,
    "processes": PLAIN,
    "files": PLAIN,
    "sequences": PLAIN,
    "users": PLAIN,
    "tokens": PLAIN,
    "tokens/s": UnitFormat(_grouped(0, " tok/s").number, text_suffix=" tok/s"),
    "req/s": _grouped(2),
    "M tokens": PLAIN,
    # Money ("{currency}", "{currency}/M tokens" in the figure book) is spelt with the plan's currency
    # code in a figure: unit_format finds it.
}


def unit_format(unit: str, currency: str = "CNY") -> UnitFormat | None:
    """The format of ``unit``: its own entry, else money per million tokens ("CNY/M tokens") or money
    (the plan's ``currency`` or any known currency code), else a plain entry ("nodes", ""); None for a
    unit no entry names (written as :data:`PLAIN`).  A unit with a format of its own is never read as
    a currency code, and a plain one only when it is not the plan's currency (an unset currency is "")."""
    found = UNIT_FORMATS.get(unit)
    if found is not None and found is not PLAIN:
        return found
    if unit.endswith("/M tokens"):
        return _MONEY_PER_M_TOKENS
    if unit == currency or unit in CURRENCY_SYMBOLS:
        return _MONEY
    return found


def figure_number(value: object) -> Decimal | None:
    """A figure's value as a number, or None when it is not one (text, None, a boolean)."""
    if isinstance(value, bool) or value is None:
        return None
    try:
        return Decimal(str(value))
    except (InvalidOperation, ValueError):
        return None


def format_figure_value(
    value: object, unit: str, lang: str, *, currency: str = "CNY", decimals: int | None = None
) -> str:
    """A figure's value as every view prints it, written by its unit's :class:`UnitFormat`; a value
    that is not a number as its text ("—" for none), with the unit's text suffix."""
    fmt = unit_format(unit, currency) or PLAIN
    number = figure_number(value)
    if number is None:
        if value in (None, ""):
            return "—"
        return str(value) + fmt.text_suffix
    return fmt.number(number, unit, lang, currency, decimals)
