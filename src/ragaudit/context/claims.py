"""Deterministic extraction of the checkable claims in an answer: values, plan names and other entities.

This module is about *answers* (and the context they are checked against). It turns text into typed,
normalised values so that "24 months", "24-month" and "2 years" compare equal and "12 months" does not:

==========  =============================================  ================================  ==========
kind        written as                                     normalised amount                 unit
==========  =============================================  ================================  ==========
date        ``1 February 2024``, ``February 1, 2024``,     ``2024-02-01``; ``2024-05``;      ``""``
            ``2024-02-01``, ``May 2024``, ``1 May``        ``--05-01`` (no year)
time        ``06:00``, ``9am``, ``5:30 pm``                ``06:00``, ``09:00``, ``17:30``   ``""``
money       ``$99``, ``EUR 2,290``, ``49 euros``, ``$10k``  99.0, 2290.0, 49.0, 10000.0       ``USD``/``EUR``/``GBP``
percent     ``10%``, ``27 percent``                        10.0, 27.0                        ``""``
duration    ``24 months``, ``12-month``, ``2 years``,      months for month/year, days for   ``month``, ``day``,
            ``two business days``, ``4 hours``             day/week, else as written         ``hour``, ...
number      ``50,000``, ``HTTP 429``, ``0.1``, ``50k``     50000.0, 429.0, 0.1, 50000.0      ``""``
==========  =============================================  ================================  ==========

Extraction runs in that order and masks what it took, so the year of a date is not also a number.
A bare number records the content words that follow it (``50,000 API calls per month`` ->
``{api, call, month}``): two numbers are about the same thing when those words overlap. Durations treat
business, working and calendar days alike (a known leniency). Number words count only in durations
(``two business days``), where generators use them; elsewhere ``one`` is rarely a claim.

Mentions are names the answer relies on: **plan names** (a closed vocabulary, harvested from the
corpus by :func:`harvest_plan_names` or given by the user), **codes** mixing letters and digits
(``IP67``, ``AC-7731``, ``K2``), **acronyms** (``SSO``, ``SCIM``), **camel-case names** (``WebAuthn``)
and **capitalised words** that do not start a sentence (``Okta``, ``Frankfurt``).

Query-side entities (what a query rewrite must keep) are a different concern, kept elsewhere; this
module only serves answer checking.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from ragaudit.context.text import STOPWORDS, WORD, singular

ValueKind = Literal["date", "time", "money", "percent", "duration", "number"]
MentionKind = Literal["plan", "code", "acronym", "name"]

_MONTHS = {
    name: number
    for number, names in enumerate(
        [
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
        ],
        start=1,
    )
    for name in names
}
_FULL_MONTHS = [name for name in _MONTHS if len(name) > 4 or name in ("May", "June", "July")]
_SHORT_MONTHS = [name for name in _MONTHS if name not in _FULL_MONTHS]
_MONTH = "(?:" + "|".join(sorted(_FULL_MONTHS, key=len, reverse=True))
_MONTH += "|(?:" + "|".join(sorted(_SHORT_MONTHS, key=len, reverse=True)) + r")\.?)"
_WEEKDAYS = frozenset({"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"})
_NUMBER_WORDS = {
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "fourteen": 14,
    "fifteen": 15,
    "eighteen": 18,
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "forty-five": 45,
    "sixty": 60,
    "ninety": 90,
}
# (canonical unit, factor): years are months, weeks are days
_DURATION_UNITS = {
    "second": ("second", 1),
    "sec": ("second", 1),
    "s": ("second", 1),
    "minute": ("minute", 1),
    "min": ("minute", 1),
    "hour": ("hour", 1),
    "hr": ("hour", 1),
    "h": ("hour", 1),
    "day": ("day", 1),
    "d": ("day", 1),
    "week": ("day", 7),
    "wk": ("day", 7),
    "month": ("month", 1),
    "mo": ("month", 1),
    "year": ("month", 12),
    "yr": ("month", 12),
}
_CURRENCIES = {
    "$": "USD",
    "us$": "USD",
    "usd": "USD",
    "dollar": "USD",
    "€": "EUR",
    "eur": "EUR",
    "euro": "EUR",
}
_CURRENCIES.update({"£": "GBP", "gbp": "GBP", "pound": "GBP"})
_SCALE = {"k": 1e3, "thousand": 1e3, "m": 1e6, "million": 1e6, "bn": 1e9, "billion": 1e9}

_NUM = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_BEFORE = r"(?<![\w.,])(?<!\w-)"
_AFTER = r"(?![\w]|[.,]\d)"
_ORD = r"(?:st|nd|rd|th)?"
_QUALIFIER = r"(?:(?:business|working|calendar)[\s-])?"
_LONG_UNITS = r"seconds?|secs?|minutes?|mins?|hours?|hrs?|days?|weeks?|wks?|months?|years?|yrs?"
_SHORT_UNITS = r"h|d|s|mo"  # only glued to the number: 24h, 30d, 6mo

_DATE_PATTERNS = (
    (re.compile(rf"\b(?P<d>\d{{1,2}}){_ORD}\s+(?P<m>{_MONTH}),?\s+(?P<y>\d{{4}})\b"), "dmy"),
    (re.compile(rf"\b(?P<m>{_MONTH})\s+(?P<d>\d{{1,2}}){_ORD},?\s+(?P<y>\d{{4}})\b"), "mdy"),
    (re.compile(r"\b(?P<y>\d{4})-(?P<m>\d{2})-(?P<d>\d{2})\b"), "iso"),
    (re.compile(rf"\b(?P<m>{_MONTH})\s+(?P<y>\d{{4}})\b"), "my"),
    (re.compile(rf"\b(?P<d>\d{{1,2}}){_ORD}\s+(?P<m>{_MONTH})(?![\w])"), "dm"),
    (re.compile(rf"\b(?P<m>{_MONTH})\s+(?P<d>\d{{1,2}}){_ORD}(?![\w:])"), "md"),
)
_TIME_24 = re.compile(
    r"(?<![\w:])(?P<h>[01]?\d|2[0-3]):(?P<mi>[0-5]\d)(?:\s?(?P<ap>a\.m\.|p\.m\.|am\b|pm\b))?(?![\w:])", re.I
)
_TIME_12 = re.compile(r"(?<![\w:.])(?P<h>1[0-2]|0?[1-9])\s?(?P<ap>a\.m\.|p\.m\.|am\b|pm\b)", re.I)
_MONEY_PREFIX = re.compile(
    rf"(?P<cur>US\$|\$|€|£|\b(?:USD|EUR|GBP))\s?(?P<n>{_NUM})(?:\s?(?P<sc>k|m|bn|million|thousand|billion)\b)?",
    re.I,
)
_MONEY_SUFFIX = re.compile(
    rf"{_BEFORE}(?P<n>{_NUM})\s?(?P<sc>k|m|bn|million|thousand|billion)?\s?(?P<cur>USD|EUR|GBP|euros?|dollars?|pounds?)\b",
    re.I,
)
_PERCENT = re.compile(rf"{_BEFORE}(?P<n>{_NUM})\s?(?:%|percent\b|per cent\b)", re.I)
_DURATION = re.compile(
    rf"{_BEFORE}(?P<n>{_NUM}|(?i:{'|'.join(sorted(_NUMBER_WORDS, key=len, reverse=True))}))"
    rf"(?:[\s-]{_QUALIFIER}(?P<u>{_LONG_UNITS})|(?P<g>{_SHORT_UNITS}))\b",
    re.I,
)
_NUMBER = re.compile(rf"{_BEFORE}(?P<n>{_NUM})(?P<sc>[kKM])?{_AFTER}")
_CODE = re.compile(r"\b(?=[A-Za-z0-9-]*[A-Za-z])(?=[A-Za-z0-9-]*\d)[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*\b")
_ACRONYM = re.compile(r"\b[A-Z]{2,}s?\b")
_CAMEL = re.compile(r"\b[A-Za-z]?[a-z]+[A-Z]\w*\b")
_CAPITALISED = re.compile(r"\b[A-Z][a-z]+(?:-[A-Za-z]+)?\b")
_SENTENCE_START = re.compile(r"(?:^|[.!?:;\n])[\s\"'(\[*#>-]*$")
_CLAUSE_BREAK = re.compile(r"[,;:()\[\]]|\s-\s|\s(?:and|but|while|whereas|or)\s")
_LABEL = re.compile(r"\b([A-Z][A-Za-z]*[A-Z]|[A-Z][a-z]+)[ \t]+$")
_UNIT_STOP = re.compile(r"[.,;:()\[\]\n]")
_PLAN_TITLE = re.compile(r"\b([A-Z][A-Za-z]+) (?:plan|tier|edition)\b")
_PLAN_TEXT = re.compile(r"\bthe ([A-Z][A-Za-z]+) (?:plan|tier|edition)\b")
_NOT_PLAN_NAMES = frozenset(
    {"The", "This", "That", "These", "Each", "Every", "Your", "Our", "Any", "All", "Which", "What", "New"}
)
_NOT_NAMES = frozenset({"I", "OK", "Yes", "No", "Note"}) | _WEEKDAYS | frozenset(_MONTHS)


def _number(text: str) -> float:
    return float(text.replace(",", ""))


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

    def same(self, other: Value) -> bool:
        """The same kind, unit and amount; a date without year or day matches a fuller date that agrees."""
        if self.kind != other.kind:
            return False
        if self.kind == "date":
            a, b = str(self.amount), str(other.amount)
            return a == b or (len(a) == 7 and b.startswith(a)) or (a.startswith("--") and b.endswith(a[1:]))
        if self.kind == "money" and self.unit and other.unit and self.unit != other.unit:
            return False
        if self.kind == "duration" and self.unit != other.unit:
            return False
        if isinstance(self.amount, float) and isinstance(other.amount, float):
            return math.isclose(self.amount, other.amount, rel_tol=1e-9)
        return self.amount == other.amount

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

        Same kind and unit; bare numbers additionally need overlapping following words (or none on
        either side), so ``50,000 API calls`` and ``120 requests per minute`` are not compared.
        """
        if self.kind != other.kind:
            return False
        if self.kind == "money":
            return not (self.unit and other.unit) or self.unit == other.unit
        if self.kind == "duration":
            return self.unit == other.unit
        if self.kind == "number":
            if not self.unit_words and not other.unit_words:
                return True
            return bool(self.unit_words & other.unit_words)
        return True

    def to_json(self) -> dict[str, object]:
        return {"text": self.text, "kind": self.kind, "amount": self.amount, "unit": self.unit}


@dataclass(frozen=True)
class Mention:
    """A name the text relies on: a plan, a code, an acronym or a capitalised name."""

    text: str
    kind: MentionKind
    start: int
    end: int


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
    return tuple(_number(m.group(0)) for m in re.finditer(_NUM, text))


def _date(m: re.Match[str], form: str) -> str | None:
    month_text = m.group("m").rstrip(".")
    month = int(month_text) if month_text.isdigit() else _MONTHS.get(month_text)
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


def _time(m: re.Match[str]) -> str | None:
    hour = int(m.group("h"))
    minute = int(m.group("mi")) if "mi" in m.groupdict() and m.group("mi") else 0
    half = (m.group("ap") or "").lower().replace(".", "")
    if half == "pm" and hour < 12:
        hour += 12
    elif half == "am" and hour == 12:
        hour = 0
    return f"{hour:02d}:{minute:02d}"


def _money(m: re.Match[str]) -> tuple[float, str]:
    scale = _SCALE.get((m.group("sc") or "").lower(), 1.0)
    currency = m.group("cur").lower().rstrip("s")
    return _number(m.group("n")) * scale, _CURRENCIES.get(currency, currency.upper())


def _duration(m: re.Match[str]) -> tuple[float, str]:
    raw = m.group("n").lower()
    amount = float(_NUMBER_WORDS[raw]) if raw in _NUMBER_WORDS else _number(raw)
    word = (m.group("u") or m.group("g")).lower()
    unit_key = word if word in _DURATION_UNITS else singular(word).rstrip("s")
    canonical, factor = _DURATION_UNITS.get(unit_key, (unit_key, 1))
    return amount * factor, canonical


Builder = Callable[[re.Match[str], str], "Value | None"]


def _build_date(form: str) -> Builder:
    def build(m: re.Match[str], text: str) -> Value | None:
        amount = _date(m, form)
        if amount is None:
            return None
        return Value("date", amount, "", m.group(0), m.start(), m.end(), numbers=_numbers_in(m.group(0)))

    return build


def _build_time(m: re.Match[str], text: str) -> Value | None:
    amount = _time(m)
    return None if amount is None else Value("time", amount, "", m.group(0), m.start(), m.end())


def _build_money(m: re.Match[str], text: str) -> Value:
    amount, currency = _money(m)
    return Value("money", amount, currency, m.group(0), m.start(), m.end(), numbers=(amount,))


def _build_percent(m: re.Match[str], text: str) -> Value:
    amount = _number(m.group("n"))
    return Value("percent", amount, "", m.group(0), m.start(), m.end(), numbers=(amount,))


def _build_duration(m: re.Match[str], text: str) -> Value:
    amount, unit = _duration(m)
    return Value("duration", amount, unit, m.group(0), m.start(), m.end(), numbers=(amount,))


def _build_number(m: re.Match[str], text: str) -> Value:
    amount = _number(m.group("n")) * {"k": 1e3, "K": 1e3, "M": 1e6}.get(m.group("sc") or "", 1.0)
    words = _unit_words(text, m.end())
    name = _LABEL.search(text, 0, m.start())
    label = name.group(1).lower() if name else ""
    return Value("number", amount, "", m.group(0), m.start(), m.end(), words, (amount,), label)


_EXTRACTORS: tuple[tuple[re.Pattern[str], Builder], ...] = (
    *((pattern, _build_date(form)) for pattern, form in _DATE_PATTERNS),
    (_TIME_24, _build_time),
    (_TIME_12, _build_time),
    (_MONEY_PREFIX, _build_money),
    (_MONEY_SUFFIX, _build_money),
    (_PERCENT, _build_percent),
    (_DURATION, _build_duration),
)


def _masked(text: str, spans: Iterable[tuple[int, int]]) -> str:
    chars = list(text)
    for a, b in spans:
        chars[a:b] = " " * (b - a)
    return "".join(chars)


def _extract(text: str) -> tuple[list[Value], str, list[tuple[int, int]]]:
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
        work = _masked(work, taken)
    numbers = [(m, _build_number(m, text)) for m in _NUMBER.finditer(work)]
    found += [value for _, value in numbers]
    work = _masked(work, [(m.start(), m.end()) for m, _ in numbers])
    codes = [(m.start(), m.end()) for m in _CODE.finditer(work)]
    return sorted(found, key=lambda v: v.start), work, codes


def extract_values(text: str) -> list[Value]:
    """Every value in ``text``, in reading order (see the module docstring for what is recognised)."""
    return _extract(text)[0]


def _at_sentence_start(text: str, position: int) -> bool:
    """True when only spaces, quotes, brackets or list marks separate ``position`` from a sentence start."""
    return _SENTENCE_START.search(text[max(0, position - 16) : position]) is not None or position == 0


def plan_mentions(text: str, plans: Iterable[str]) -> list[Mention]:
    """Case-sensitive, whole-word occurrences of the plan names in ``text``."""
    names = sorted(set(plans), key=len, reverse=True)
    if not names:
        return []
    pattern = re.compile(r"\b(?:" + "|".join(re.escape(n) for n in names) + r")\b")
    return [Mention(m.group(0), "plan", m.start(), m.end()) for m in pattern.finditer(text)]


def extract_mentions(text: str, plans: Iterable[str] = ()) -> list[Mention]:
    """Plan names, codes, acronyms, camel-case names and capitalised words not starting a sentence."""
    _, masked, codes = _extract(text)
    out = plan_mentions(text, plans)
    masked = _masked(masked, [(m.start, m.end) for m in out])
    out += [Mention(text[a:b], "code", a, b) for a, b in codes if masked[a:b].strip()]
    masked = _masked(masked, codes)
    for kind, pattern in (("acronym", _ACRONYM), ("name", _CAMEL), ("name", _CAPITALISED)):
        hits = []
        for m in pattern.finditer(masked):
            word = m.group(0)
            if word in _NOT_NAMES or (pattern is _CAPITALISED and _at_sentence_start(text, m.start())):
                continue
            hits.append(Mention(word, kind, m.start(), m.end()))  # type: ignore[arg-type]
        out += hits
        masked = _masked(masked, [(h.start, h.end) for h in hits])
    return sorted(out, key=lambda m: m.start)


def clause_bounds(text: str, position: int) -> tuple[int, int]:
    """The clause of ``text`` around ``position``: between commas, semicolons, brackets, dashes, 'and'/'but'."""
    start, end = 0, len(text)
    for m in _CLAUSE_BREAK.finditer(text):
        if m.end() <= position:
            start = m.end()
        elif m.start() >= position:
            end = m.start()
            break
    return start, end


def harvest_plan_names(titled_texts: Iterable[tuple[str, str]]) -> frozenset[str]:
    """Plan names of a corpus: ``X`` in a title ``... X plan`` (or tier/edition), or ``the X plan`` in a text.

    ``X`` is one capitalised word; determiners (``Every plan``, ``Your plan``) are left out. Plurals
    (``Annual plans``) do not count: they name billing options, not tiers.
    """
    names: set[str] = set()
    for title, text in titled_texts:
        names.update(m.group(1) for m in _PLAN_TITLE.finditer(title))
        names.update(m.group(1) for m in _PLAN_TEXT.finditer(text))
    return frozenset(names - _NOT_PLAN_NAMES)


@dataclass(frozen=True)
class AnswerClaims:
    """What one answer sentence claims: its values and mentions (offsets relative to the sentence)."""

    sentence: str
    values: tuple[Value, ...]
    mentions: tuple[Mention, ...]
    plans: tuple[Mention, ...] = field(default=())

    def bound_plan(self, value: Value) -> str | None:
        """The plan the value is said of: the nearest plan name in the value's clause, if any."""
        a, b = clause_bounds(self.sentence, value.start)
        inside = [p for p in self.plans if a <= p.start < b]
        if not inside:
            return None
        return min(inside, key=lambda p: min(abs(p.start - value.end), abs(value.start - p.end))).text


def sentence_claims(sentence: str, plans: Sequence[str]) -> AnswerClaims:
    """The values, mentions and plan mentions of one answer sentence."""
    mentions = extract_mentions(sentence, plans)
    return AnswerClaims(
        sentence,
        tuple(extract_values(sentence)),
        tuple(m for m in mentions if m.kind != "plan"),
        tuple(m for m in mentions if m.kind == "plan"),
    )
