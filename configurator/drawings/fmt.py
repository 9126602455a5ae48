"""Number formatting for the drawings: ``configurator/engine/formatting.py`` (one formatter for
the engine's messages, the drawings, the page and the PDF), re-exported under its old name."""

from configurator.engine.formatting import (
    CURRENCY_SYMBOLS,
    GB,
    GIB,
    MINUS,
    WAN,
    YI,
    Number,
    currency_symbol,
    format_bytes_gb,
    format_bytes_gib,
    format_int,
    format_money,
    format_number,
    format_percent,
    money_axis_formatter,
    money_scale,
)

__all__ = [
    "CURRENCY_SYMBOLS",
    "GB",
    "GIB",
    "MINUS",
    "WAN",
    "YI",
    "Number",
    "currency_symbol",
    "format_bytes_gb",
    "format_bytes_gib",
    "format_int",
    "format_money",
    "format_number",
    "format_percent",
    "money_axis_formatter",
    "money_scale",
]
