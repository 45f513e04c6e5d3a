"""The query-side vocabularies and regular expressions behind :mod:`ragaudit.experiments.entities`.

Months, number words, time units, currencies, stopwords and the word pattern are the shared ones of
:mod:`ragaudit.text`."""

from __future__ import annotations

import re
from typing import Literal

from ragaudit.text.stopwords import STOPWORDS
from ragaudit.text.tables import CURRENCIES, MONTHS, NUMBER_WORDS, TIME_UNITS, alternation

Kind = Literal[
    "entity", "money", "percent", "duration", "quantity", "number", "date", "comparison", "negation"
]
NUMERIC_KINDS = frozenset({"money", "percent", "duration", "quantity", "number"})

PLAN_WORDS = frozenset(
    {"plan", "plans", "tier", "tiers", "edition", "package", "subscription", "license", "licence", "bundle"}
)
"""Words after which the previous word names a plan: ``pro plan``, ``Enterprise tier``."""
PLAN_TIERS = frozenset(
    {
        "free", "starter", "basic", "standard", "plus", "pro", "professional", "premium", "business",
        "team", "growth", "scale", "enterprise", "ultimate",
    }
)  # fmt: skip
"""Common plan tier names: an entity spelled like one fills the ``plan`` slot (for swap detection)."""
ENTITY_STOP_TEXT = """
what whats how which who whom whose when where why is are was were do does did can could would should
will shall may might must please tell show list give find explain describe compare get need want
hi hello hey thanks thank ok okay yes i im ive id there any anything every many much
"""
ENTITY_STOPWORDS = STOPWORDS | frozenset(ENTITY_STOP_TEXT.split())
"""Words never taken for a name, even capitalised (question words, auxiliaries, common verbs)."""

RATE_ADVERBS = {
    "hourly": "hour", "daily": "day", "weekly": "week", "monthly": "month", "quarterly": "quarter",
    "yearly": "year", "annually": "year",
}  # fmt: skip
MEASURE_UNITS = (
    "kb", "mb", "gb", "tb", "pb", "kib", "mib", "gib", "tib", "ms", "kbps", "mbps", "gbps", "kg", "km",
    "cm", "mm", "ghz", "mhz", "kwh", "kw", "mah", "dpi", "px",
)  # fmt: skip
COMPARATORS = {
    "no more than": "<=", "not more than": "<=", "at most": "<=", "up to": "<=", "maximum of": "<=",
    "no less than": ">=", "not less than": ">=", "at least": ">=", "minimum of": ">=", "since": ">=",
    "more than": ">", "greater than": ">", "over": ">", "above": ">", "after": ">", "exceeding": ">",
    "less than": "<", "fewer than": "<", "under": "<", "below": "<", "before": "<", "until": "<=",
}  # fmt: skip


NUM = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"
NUMBER = re.compile(rf"(?<![\w.,/-])(?P<num>{NUM})(?P<k>[kK](?![\w]))?(?![\w]|[.,]\d)")
NUMBER_WORD = rf"(?:{alternation(NUMBER_WORDS)})"
TIME_UNIT = rf"(?:(?:business|working|calendar)[ -])?(?:{alternation(TIME_UNITS)})"
RATE = re.compile(
    rf"\s*(?:(?:/|per\s+|an?\s+|each\s+|every\s+)(?P<per>{alternation(TIME_UNITS)})"
    rf"|(?P<adv>{alternation(RATE_ADVERBS)}))\b",
    re.IGNORECASE,
)
DURATION = re.compile(
    rf"(?<![\w.,])(?P<num>{NUM}|{NUMBER_WORD})(?:\s*-\s*|\s+)(?P<unit>{TIME_UNIT})\b", re.IGNORECASE
)
MEASURE = re.compile(rf"(?<![\w.,])(?P<num>{NUM})\s?(?P<unit>{alternation(MEASURE_UNITS)})\b", re.IGNORECASE)
MONEY = re.compile(
    rf"(?:(?P<sym>[$€£¥])\s?(?P<num1>{NUM})(?P<k1>[kK]\b)?"
    rf"|\b(?P<code>usd|eur|gbp|chf|cad|aud|jpy)\s?(?P<num2>{NUM})(?P<k2>[kK]\b)?"
    rf"|(?<![\w.,])(?P<num3>{NUM})(?P<k3>[kK])?\s?(?P<word>{alternation(w for w in CURRENCIES if w.isalpha())})\b)",
    re.IGNORECASE,
)
PERCENT = re.compile(rf"(?<![\w.,])(?P<num>{NUM})\s?(?:%|percent\b|per cent\b|pct\b)", re.IGNORECASE)
MONTH = alternation(MONTHS)
DATE_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("iso", re.compile(r"\b(?P<y>(?:19|20)\d\d)-(?P<m>[01]\d)(?:-(?P<d>[0-3]\d))?\b")),
    ("numeric", re.compile(r"\b\d{1,2}[/.]\d{1,2}[/.](?:\d{4}|\d{2})\b")),
    (
        "mdy",
        re.compile(
            rf"\b(?P<mon>{MONTH})\.?\s+(?P<d>[0-3]?\d)(?:st|nd|rd|th)?(?:,?\s+(?P<y>(?:19|20)\d\d))?\b",
            re.IGNORECASE,
        ),
    ),
    (
        "dmy",
        re.compile(
            rf"\b(?P<d>[0-3]?\d)(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<mon>{MONTH})\.?(?:,?\s+(?P<y>(?:19|20)\d\d))?\b",
            re.IGNORECASE,
        ),
    ),
    ("my", re.compile(rf"\b(?P<mon>{MONTH})\.?,?\s+(?P<y>(?:19|20)\d\d)\b", re.IGNORECASE)),
    ("quarter", re.compile(r"\b(?P<q>Q[1-4])(?:\s*(?P<y>(?:19|20)\d\d))?\b", re.IGNORECASE)),
    ("fiscal", re.compile(r"\bFY\s?(?P<y>(?:19|20)?\d\d)\b", re.IGNORECASE)),
    (
        "relative",
        re.compile(
            r"\b(?:(?:last|this|next|previous|past|current)\s+(?:week|month|quarter|year)|today|yesterday|tomorrow)\b",
            re.IGNORECASE,
        ),
    ),
    (
        "month",
        re.compile(
            r"\b(?:January|February|March|April|June|July|August|September|October|November|December)\b"
        ),
    ),
)
COMPARATOR = re.compile(rf"\b(?P<op>{alternation(COMPARATORS)})\s+(?=\S)", re.IGNORECASE)
NEGATION = re.compile(
    r"\b(?:not|no|never|none|nor|neither|without|except|excluding|cannot)\b|\b\w+n[’']t\b", re.IGNORECASE
)
SCOPE_STOP = re.compile(r"[,;:.?!()]|\bbut\b", re.IGNORECASE)
