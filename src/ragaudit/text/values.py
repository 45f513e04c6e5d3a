"""Typed, normalised values in a text: dates, times, money, percentages, durations and numbers.

Turns text into values so that "24 months", "24-month" and "2 years" compare equal and "12 months"
does not. Keys are shared with the query-constraint checks (:mod:`ragaudit.experiments.entities`):

==========  =============================================  ================================  ==========
kind        written as                                     normalised amount                 unit
==========  =============================================  ================================  ==========
date        ``1 February 2024``, ``February 1, 2024``,     ``2024-02-01``; ``2024-05``;      ``""``
            ``2024-02-01``, ``May 2024``, ``1 May``        ``--05-01`` (no year)
time        ``06:00``, ``9am``, ``5:30 pm``                ``06:00``, ``09:00``, ``17:30``   ``""``
money       ``$99``, ``EUR 2,290``, ``49 euros``, ``$10k``  99.0, 2290.0, 49.0, 10000.0       ISO code: ``USD``
percent     ``10%``, ``27 percent``                        10.0, 27.0                        ``""``
duration    ``24 months``, ``12-month``, ``2 years``,      the number as written             canonical unit:
            ``two business days``, ``4h``                  (24, 12, 2, 2, 4)                 ``month``, ``year``,
                                                                                             ``business day``, ``hour``
number      ``50,000``, ``HTTP 429``, ``0.1``, ``50k``     50000.0, 429.0, 0.1, 50000.0      ``""``
==========  =============================================  ================================  ==========

Durations keep the unit as written (canonical spelling from :data:`ragaudit.text.tables.TIME_UNITS`);
:meth:`Value.same` compares them in base units (:func:`ragaudit.text.tables.in_base_unit`: years and
quarters as months, weeks as days, business/working/calendar days as days — a known leniency).

Extraction runs in that order and masks what it took, so the year of a date is not also a number.
A bare number records the content words that follow it (``50,000 API calls per month`` ->
``{api, call, month}``): two numbers are about the same thing when those words overlap. Number words
count only in durations (``two business days``), where generators use them; elsewhere ``one`` is rarely
a claim.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Literal

from ragaudit.text.stopwords import STOPWORDS
from ragaudit.text.tables import (
    DAY_QUALIFIERS,
    GLUED_TIME_UNITS,
    MONTH_NAMES,
    MONTHS,
    NUMBER_WORDS,
    SCALE,
    TIME_UNITS,
    alternation,
    currency_code,
    in_base_unit,
    time_unit,
)
from ragaudit.text.words import WORD, singular

ValueKind = Literal["date", "time", "money", "percent", "duration", "number"]

_FULL_MONTHS = [n for names in MONTH_NAMES for n in names if len(n) > 4 or n in ("May", "June", "July")]
_SHORT_MONTHS = [n for names in MONTH_NAMES for n in names if n not in _FULL_MONTHS]
_MONTH = f"(?:{alternation(_FULL_MONTHS)}|(?:{alternation(_SHORT_MONTHS)})\\.?)"
MONTH_WORDS = frozenset(n for names in MONTH_NAMES for n in names)
"""Capitalised month names and abbreviations (``May``, ``Sept``)."""

NUM = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
"""A written number: digits with optional thousands commas and decimals."""
_BEFORE = r"(?<![\w.,])(?<!\w-)"
_AFTER = r"(?![\w]|[.,]\d)"
_ORD = r"(?:st|nd|rd|th)?"
_QUALIFIER = rf"(?:(?P<q>{'|'.join(DAY_QUALIFIERS)})[\s-])?"

_DATE_PATTERNS = (
    re.compile(rf"\b(?P<d>\d{{1,2}}){_ORD}\s+(?P<m>{_MONTH}),?\s+(?P<y>\d{{4}})\b"),
    re.compile(rf"\b(?P<m>{_MONTH})\s+(?P<d>\d{{1,2}}){_ORD},?\s+(?P<y>\d{{4}})\b"),
    re.compile(r"\b(?P<y>\d{4})-(?P<m>\d{2})-(?P<d>\d{2})\b"),
    re.compile(rf"\b(?P<m>{_MONTH})\s+(?P<y>\d{{4}})\b"),
    re.compile(rf"\b(?P<d>\d{{1,2}}){_ORD}\s+(?P<m>{_MONTH})(?![\w])"),
    re.compile(rf"\b(?P<m>{_MONTH})\s+(?P<d>\d{{1,2}}){_ORD}(?![\w:])"),
)
_TIME_24 = re.compile(
    r"(?<![\w:])(?P<h>[01]?\d|2[0-3]):(?P<mi>[0-5]\d)(?:\s?(?P<ap>a\.m\.|p\.m\.|am\b|pm\b))?(?![\w:])", re.I
)
_TIME_12 = re.compile(r"(?<![\w:.])(?P<h>1[0-2]|0?[1-9])\s?(?P<ap>a\.m\.|p\.m\.|am\b|pm\b)", re.I)
_MONEY_PREFIX = re.compile(
    rf"(?P<cur>US\$|\$|€|£|\b(?:USD|EUR|GBP))\s?(?P<n>{NUM})(?:\s?(?P<sc>k|m|bn|million|thousand|billion)\b)?",
    re.I,
)
_MONEY_SUFFIX = re.compile(
    rf"{_BEFORE}(?P<n>{NUM})\s?(?P<sc>k|m|bn|million|thousand|billion)?\s?(?P<cur>USD|EUR|GBP|euros?|dollars?|pounds?)\b",
    re.I,
)
_PERCENT = re.compile(rf"{_BEFORE}(?P<n>{NUM})\s?(?:%|percent\b|per cent\b)", re.I)
_DURATION = re.compile(
    rf"{_BEFORE}(?P<n>{NUM}|(?i:{alternation(NUMBER_WORDS)}))"
    rf"(?:[\s-]{_QUALIFIER}(?P<u>{alternation(TIME_UNITS)})|(?P<g>{alternation(GLUED_TIME_UNITS)}))\b",
    re.I,
)
_NUMBER = re.compile(rf"{_BEFORE}(?P<n>{NUM})(?P<sc>[kKM])?{_AFTER}")
CODE = re.compile(r"\b(?=[A-Za-z0-9-]*[A-Za-z])(?=[A-Za-z0-9-]*\d)[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*\b")
"""A code mixing letters and digits (``IP67``, ``AC-7731``, ``K2``)."""
_LABEL = re.compile(r"\b([A-Z][A-Za-z]*[A-Z]|[A-Z][a-z]+)[ \t]+$")
_UNIT_STOP = re.compile(r"[.,;:()\[\]\n]")


def parse_number(text: str) -> float:
    """``"50,000"`` -> 50000.0, ``"two"`` -> 2.0 (a number word of :data:`NUMBER_WORDS`)."""
    raw = text.lower()
    return float(NUMBER_WORDS[raw]) if raw in NUMBER_WORDS else float(text.replace(",", ""))


@dataclass(frozen=True)
class Value:
    """One normalised value found in a text (see the module docstring for the kinds)."""

    kind: ValueKind
    amount: float | str
    unit: str
    text: str
    start: int
    end: int
    unit_words: frozenset[str] = frozenset()
    """For numbers: the content words right after it, up to the clause end (``{api, call, month}``)."""
    numbers: tuple[float, ...] = ()
    """Every number written in ``text`` (a bare number in an answer matches any value holding it)."""
    label: str = ""
    """For numbers: the name right before it (``SAML`` in ``SAML 2.0``, ``HTTP`` in ``HTTP 429``)."""

    def base(self) -> tuple[float | str, str]:
        """``(amount, unit)`` with durations in base units (``2 year`` -> ``(24.0, "month")``)."""
        if self.kind == "duration" and isinstance(self.amount, float):
            return in_base_unit(self.amount, self.unit)
        return self.amount, self.unit

    def same(self, other: Value) -> bool:
        """The same kind, unit and amount; a date without year or day matches a fuller date that agrees."""
        if self.kind != other.kind:
            return False
        if self.kind == "date":
            a, b = str(self.amount), str(other.amount)
            return a == b or (len(a) == 7 and b.startswith(a)) or (a.startswith("--") and b.endswith(a[1:]))
        if self.kind == "money" and self.unit and other.unit and self.unit != other.unit:
            return False
        (mine, my_unit), (theirs, their_unit) = self.base(), other.base()
        if self.kind == "duration" and my_unit != their_unit:
            return False
        if isinstance(mine, float) and isinstance(theirs, float):
            return math.isclose(mine, theirs, rel_tol=1e-9)
        return mine == theirs

    def supported_by(self, other: Value) -> bool:
        """Whether ``other`` (a value in the context) states this value.

        A bare number is stated by any value that writes the same number (``2024`` by ``1 May 2024``),
        provided, when both are bare numbers with following words, those words overlap.
        """
        if self.kind != "number":
            return self.same(other)
        assert isinstance(self.amount, float)
        if other.kind != "number":
            return any(math.isclose(self.amount, n, rel_tol=1e-9) for n in other.numbers)
        if not self.same(other):
            return False
        if self.label and self.label == other.label:
            return True
        return not (self.unit_words and other.unit_words) or bool(self.unit_words & other.unit_words)

    def comparable(self, other: Value) -> bool:
        """Whether the two values answer the same question (used against a reference answer).

        Same kind and unit (durations in base units); bare numbers additionally need overlapping
        following words (or none on either side), so ``50,000 API calls`` and ``120 requests per
        minute`` are not compared.
        """
        if self.kind != other.kind:
            return False
        if self.kind == "money":
            return not (self.unit and other.unit) or self.unit == other.unit
        if self.kind == "duration":
            return self.base()[1] == other.base()[1]
        if self.kind == "number":
            if not self.unit_words and not other.unit_words:
                return True
            return bool(self.unit_words & other.unit_words)
        return True

    def to_json(self) -> dict[str, object]:
        return {"text": self.text, "kind": self.kind, "amount": self.amount, "unit": self.unit}


def _unit_words(text: str, end: int, limit: int = 3) -> frozenset[str]:
    """Content words after position ``end`` up to the clause end or the next number (at most ``limit``)."""
    tail = text[end : end + 60]
    stop = _UNIT_STOP.search(tail)
    tail = tail[: stop.start()] if stop else tail
    words: list[str] = []
    for m in WORD.finditer(tail):
        word = m.group(0).lower()
        if word[0].isdigit():
            break
        if word not in STOPWORDS and word not in {"be", "can", "is", "are"}:
            words.append(singular(word))
        if len(words) == limit:
            break
    return frozenset(words)


def _numbers_in(text: str) -> tuple[float, ...]:
    return tuple(parse_number(m.group(0)) for m in re.finditer(NUM, text))


def _date(m: re.Match[str]) -> str | None:
    month_text = m.group("m").rstrip(".")
    month = int(month_text) if month_text.isdigit() else MONTHS.get(month_text.lower())
    if month is None or not 1 <= month <= 12:
        return None
    day = int(m.group("d")) if "d" in m.groupdict() and m.group("d") else None
    if day is not None and not 1 <= day <= 31:
        return None
    year = m.group("y") if "y" in m.groupdict() else None
    if year is None:
        return f"--{month:02d}-{day:02d}"
    if day is None:
        return f"{year}-{month:02d}"
    return f"{year}-{month:02d}-{day:02d}"


def _time(m: re.Match[str]) -> str:
    hour = int(m.group("h"))
    minute = int(m.group("mi")) if "mi" in m.groupdict() and m.group("mi") else 0
    half = (m.group("ap") or "").lower().replace(".", "")
    if half == "pm" and hour < 12:
        hour += 12
    elif half == "am" and hour == 12:
        hour = 0
    return f"{hour:02d}:{minute:02d}"


Builder = Callable[[re.Match[str], str], "Value | None"]


def _build_date(m: re.Match[str], text: str) -> Value | None:
    amount = _date(m)
    if amount is None:
        return None
    return Value("date", amount, "", m.group(0), m.start(), m.end(), numbers=_numbers_in(m.group(0)))


def _build_time(m: re.Match[str], text: str) -> Value | None:
    return Value("time", _time(m), "", m.group(0), m.start(), m.end())


def _build_money(m: re.Match[str], text: str) -> Value:
    amount = parse_number(m.group("n")) * SCALE.get((m.group("sc") or "").lower(), 1.0)
    currency = currency_code(m.group("cur"))
    return Value("money", amount, currency, m.group(0), m.start(), m.end(), numbers=(amount,))


def _build_percent(m: re.Match[str], text: str) -> Value:
    amount = parse_number(m.group("n"))
    return Value("percent", amount, "", m.group(0), m.start(), m.end(), numbers=(amount,))


def _build_duration(m: re.Match[str], text: str) -> Value:
    amount = parse_number(m.group("n"))
    unit = time_unit(" ".join(w for w in (m.group("q"), m.group("u") or m.group("g")) if w))
    return Value("duration", amount, unit, m.group(0), m.start(), m.end(), numbers=(amount,))


def _build_number(m: re.Match[str], text: str) -> Value:
    amount = parse_number(m.group("n")) * {"k": 1e3, "K": 1e3, "M": 1e6}.get(m.group("sc") or "", 1.0)
    words = _unit_words(text, m.end())
    name = _LABEL.search(text, 0, m.start())
    label = name.group(1).lower() if name else ""
    return Value("number", amount, "", m.group(0), m.start(), m.end(), words, (amount,), label)


_EXTRACTORS: tuple[tuple[re.Pattern[str], Builder], ...] = (
    *((pattern, _build_date) for pattern in _DATE_PATTERNS),
    (_TIME_24, _build_time),
    (_TIME_12, _build_time),
    (_MONEY_PREFIX, _build_money),
    (_MONEY_SUFFIX, _build_money),
    (_PERCENT, _build_percent),
    (_DURATION, _build_duration),
)


def masked(text: str, spans: Iterable[tuple[int, int]]) -> str:
    """``text`` with the characters of ``spans`` replaced by spaces (offsets stay valid)."""
    chars = list(text)
    for a, b in spans:
        chars[a:b] = " " * (b - a)
    return "".join(chars)


def extract_masked(text: str) -> tuple[list[Value], str, list[tuple[int, int]]]:
    """All values in ``text``, the text with them masked out, and the spans of codes (``IP67``) in it."""
    found: list[Value] = []
    work = text
    for pattern, build in _EXTRACTORS:
        taken = []
        for m in pattern.finditer(work):
            value = build(m, text)
            if value is not None:
                found.append(value)
                taken.append((m.start(), m.end()))
        work = masked(work, taken)
    numbers = [(m, _build_number(m, text)) for m in _NUMBER.finditer(work)]
    found += [value for _, value in numbers]
    work = masked(work, [(m.start(), m.end()) for m, _ in numbers])
    codes = [(m.start(), m.end()) for m in CODE.finditer(work)]
    return sorted(found, key=lambda v: v.start), work, codes


def extract_values(text: str) -> list[Value]:
    """Every value in ``text``, in reading order (see the module docstring for what is recognised)."""
    return extract_masked(text)[0]
