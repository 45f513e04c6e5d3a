"""The one set of word tables behind value extraction: months, number words, time units, currencies.

Keys are the normalised forms every caller shares: a month is its number (``"sept"`` -> 9), a time
unit its singular name (``"hrs"`` -> ``hour``, ``"business days"`` -> ``business day``), a currency
its ISO 4217 code (``"$"``, ``"dollars"`` -> ``USD``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

MONTH_NAMES: tuple[tuple[str, ...], ...] = (
    ("January", "Jan"),
    ("February", "Feb"),
    ("March", "Mar"),
    ("April", "Apr"),
    ("May",),
    ("June", "Jun"),
    ("July", "Jul"),
    ("August", "Aug"),
    ("September", "Sept", "Sep"),
    ("October", "Oct"),
    ("November", "Nov"),
    ("December", "Dec"),
)
"""Each month's full name first, then its abbreviations, in calendar order."""
MONTHS = {name.lower(): number for number, names in enumerate(MONTH_NAMES, start=1) for name in names}
"""Lower-cased month name or abbreviation -> month number (``"sept"`` -> 9)."""
WEEKDAYS = frozenset({"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"})

NUMBER_WORDS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
    "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16,
    "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40,
    "forty-five": 45, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90, "hundred": 100,
}  # fmt: skip
"""Number words read in durations (``two business days``) and query constraints."""

TIME_UNITS = {
    "second": "second", "seconds": "second", "sec": "second", "secs": "second",
    "minute": "minute", "minutes": "minute", "min": "minute", "mins": "minute",
    "hour": "hour", "hours": "hour", "hr": "hour", "hrs": "hour",
    "day": "day", "days": "day", "week": "week", "weeks": "week", "wk": "week", "wks": "week",
    "month": "month", "months": "month", "quarter": "quarter", "quarters": "quarter",
    "year": "year", "years": "year", "yr": "year", "yrs": "year",
}  # fmt: skip
"""A time unit as written (spaced from its number) -> its canonical singular name."""
GLUED_TIME_UNITS = {"s": "second", "h": "hour", "d": "day", "mo": "month"}
"""Unit letters that count only glued to the number (``24h``, ``30d``, ``6mo``)."""
DAY_QUALIFIERS = ("business", "working", "calendar")
BASE_UNITS = {"week": ("day", 7), "year": ("month", 12), "quarter": ("month", 3)}
"""Units compared through a base unit: ``2 years`` equals ``24 months``, ``3 weeks`` equals ``21 days``."""

CURRENCIES = {
    "$": "USD", "us$": "USD", "usd": "USD", "dollar": "USD", "dollars": "USD",
    "€": "EUR", "eur": "EUR", "euro": "EUR", "euros": "EUR",
    "£": "GBP", "gbp": "GBP", "pound": "GBP", "pounds": "GBP",
    "¥": "JPY", "jpy": "JPY", "chf": "CHF", "cad": "CAD", "aud": "AUD",
}  # fmt: skip
"""A currency symbol, code or word (lower-cased) -> its ISO 4217 code."""
SCALE = {"k": 1e3, "thousand": 1e3, "m": 1e6, "million": 1e6, "bn": 1e9, "billion": 1e9}


def alternation(words: Iterable[str]) -> str:
    """A regex alternation of ``words``, longest first, escaped."""
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))


def time_unit(text: str) -> str:
    """The canonical unit of a written time unit: ``"business-days"`` -> ``business day``, ``"h"`` -> ``hour``.

    A day qualifier (business, working, calendar) is kept in front of the unit.
    """
    words = text.lower().replace("-", " ").split()
    base = TIME_UNITS.get(words[-1]) or GLUED_TIME_UNITS.get(words[-1], words[-1])
    return f"{words[0]} {base}" if len(words) == 2 else base


def in_base_unit(amount: float, unit: str) -> tuple[float, str]:
    """``(amount, unit)`` in its base unit, day qualifiers dropped: ``(2, "year")`` -> ``(24, "month")``."""
    plain = unit.split()[-1] if unit else unit
    base, factor = BASE_UNITS.get(plain, (plain, 1))
    return amount * factor, base


def currency_code(text: str) -> str:
    """The ISO code of a currency symbol, code or word (``"euros"`` -> ``EUR``); unknown ones upper-cased."""
    return CURRENCIES.get(text.lower(), text.upper())
