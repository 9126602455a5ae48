from decimal import Decimal

import pytest

from configurator.drawings.fmt import (
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
from configurator.engine.formatting import format_plain


# docs/domain.md §8: 8 × A3 purchase ≈ ¥24 M; the brief fixes the two spellings.
@pytest.mark.parametrize(
    ("amount", "lang", "expected"),
    [
        (24_000_000, "en", "¥24.0 M"),
        (24_000_000, "zh-hans", "¥2,400 万"),
        (Decimal("24000000"), "en", "¥24.0 M"),
        (Decimal("24000000.00"), "zh-hans", "¥2,400 万"),
        # 16 × A3 3-year TCO ≈ ¥60 M (docs/domain.md §8)
        (60_000_000, "en", "¥60.0 M"),
        (60_000_000, "zh-hans", "¥6,000 万"),
        # lease 8 nodes ¥0.8 M / month: 800,000 / 10,000 = 80 万
        (800_000, "zh-hans", "¥80 万"),
        (800_000, "en", "¥800,000"),
        # 45,000 / 10,000 = 4.5 万; below 100 万 one decimal, trailing zero dropped
        (45_000, "zh-hans", "¥4.5 万"),
        (40_000, "zh-hans", "¥4 万"),
        # 480,000,000 / 10^8 = 4.8 亿
        (480_000_000, "zh-hans", "¥4.8 亿"),
        (2_500_000_000, "en", "¥2.5 B"),
        (9_999, "zh-hans", "¥9,999"),
        (0, "en", "¥0.00"),
        (-2_000_000, "en", "−¥2.0 M"),
        # half-up rounding as finance tables do: 24,050,000 → 24.05 → 24.1 (en), 2,405 万 (zh)
        (24_050_000, "en", "¥24.1 M"),
        (24_050_000, "zh-hans", "¥2,405 万"),
    ],
)
def test_format_money_cny(amount, lang, expected):
    assert format_money(amount, "CNY", lang) == expected


def test_format_money_usd_and_forced_scale():
    # Kimi K3 API price $3 / $15 per million tokens (docs/domain.md §2)
    assert format_money(Decimal("3"), "USD", "en") == "$3.00"
    assert format_money(Decimal("15"), "USD", "zh-hans") == "$15.00"
    assert format_money(1.25, "CNY", "en", decimals=2) == "¥1.25"
    # A table in one unit: 0.8 M shown in M, 24 M shown in 万
    assert format_money(800_000, "CNY", "en", scale=10**6) == "¥0.8 M"
    assert format_money(24_000_000, "CNY", "zh-hans", scale=10**8) == "¥0.24 亿"
    assert format_money(1_234_567, "EUR", "en", decimals=2) == "€1.23 M"


def test_currency_symbol():
    assert currency_symbol("CNY") == "¥"
    assert currency_symbol("usd") == "$"
    assert currency_symbol("CHF") == "CHF "


def test_money_scale():
    assert money_scale(24_000_000, "en") == 10**6
    assert money_scale(24_000_000, "zh-hans") == 10**4
    assert money_scale(480_000_000, "zh-hans") == 10**8
    assert money_scale(999, "zh-hans") == 1


def test_money_axis_formatter_shares_one_unit():
    # Ticks 0–40 M in steps of 10 M (see test_ticks): every label in M / 万
    en = money_axis_formatter("CNY", "en", 40_000_000, 10_000_000)
    zh = money_axis_formatter("CNY", "zh-hans", 40_000_000, 10_000_000)
    assert [en(v) for v in (0, 10_000_000, 40_000_000)] == ["¥0", "¥10 M", "¥40 M"]
    assert [zh(v) for v in (0, 10_000_000, 40_000_000)] == ["¥0", "¥1,000 万", "¥4,000 万"]
    # 2.5 M steps need one decimal in M: 2.5, 5.0, 7.5
    en = money_axis_formatter("CNY", "en", 10_000_000, 2_500_000)
    assert en(7_500_000) == "¥7.5 M"
    assert en(5_000_000) == "¥5.0 M"


def test_number_formats():
    assert format_number(24_000_000) == "24,000,000"
    assert format_number(1234.5678, 2) == "1,234.57"
    assert format_number(2.5, 2, strip_zeros=True) == "2.5"
    assert format_number(-1234) == "−1,234"
    assert format_number(-0.0004, 2) == "0.00"  # no "−0.00"
    assert format_int(1_048_576) == "1,048,576"
    # 64 GB NPU = 64 × 10^9 bytes (docs/domain.md §3, decimal GB)
    assert format_bytes_gb(64 * 10**9) == "64.0 GB"
    # K3 weights 1,560,936,091,448 B (docs/domain.md §2) → 1,560.9 GB
    assert format_bytes_gb(1_560_936_091_448) == "1,560.9 GB"
    assert format_bytes_gb(-4_400_000_000) == "−4.4 GB"
    assert format_bytes_gib(2**31) == "2.0 GiB"
    assert format_percent(0.85) == "85 %"
    assert format_percent(Decimal("0.925"), 1) == "92.5 %"


def test_non_finite_is_refused():
    with pytest.raises(ValueError):
        format_number(float("nan"))


def test_money_axis_formatter_without_step_uses_the_headline_style():
    en = money_axis_formatter("CNY", "en", 37_000_000)
    zh = money_axis_formatter("CNY", "zh-hans", 37_000_000)
    assert en(24_000_000) == "¥24.0 M"
    assert zh(24_000_000) == "¥2,400 万"
    # A small value on the same axis stays in the axis unit: 500,000 = 0.5 M = 50 万
    assert en(500_000) == "¥0.5 M"
    assert zh(500_000) == "¥50 万"
    assert en(0) == "¥0"


def test_numbers_beyond_decimal_precision_format_instead_of_raising():
    # Decimal's default context holds 28 digits; quantizing 1e28 to whole units needs 29.
    assert format_number(Decimal("1E+28")) == "10,000,000,000,000,000,000,000,000,000"
    assert format_number(-(10**30), 1).startswith("−1,000,000,000,000,000,000,000,000,000,000.0")
    # A bound or input echoed back reads as an exponent beyond 10^15, grouped below it.
    assert format_plain(Decimal("1E+28")) == "1e+28"
    assert format_plain(Decimal("-1E+40")) == "−1e+40"  # the typographic minus, as everywhere
    assert format_plain(131072) == "131,072"
    assert format_plain(0.9) == "0.9"
