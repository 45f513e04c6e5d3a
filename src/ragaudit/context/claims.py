"""Deterministic extraction of the checkable claims in an answer: values, plan names and other entities.

This module is about *answers* (and the context they are checked against). Values (dates, times,
money, percentages, durations, numbers) come from :mod:`ragaudit.text.values`, the extraction shared
with the query-constraint checks; this module adds the names an answer relies on.

Mentions are names the answer relies on: **plan names** (a closed vocabulary, harvested from the
corpus by :func:`harvest_plan_names` or given by the user), **codes** mixing letters and digits
(``IP67``, ``AC-7731``, ``K2``), **acronyms** (``SSO``, ``SCIM``), **camel-case names** (``WebAuthn``)
and **capitalised words** that do not start a sentence (``Okta``, ``Frankfurt``).

Query-side entities (what a query rewrite must keep) are a different concern, kept elsewhere; this
module only serves answer checking.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from ragaudit.text.tables import WEEKDAYS
from ragaudit.text.values import MONTH_WORDS, Value, extract_masked, extract_values, masked

__all__ = [
    "AnswerClaims",
    "Mention",
    "Value",
    "clause_bounds",
    "extract_mentions",
    "extract_values",
    "harvest_plan_names",
    "plan_mentions",
    "sentence_claims",
]

MentionKind = Literal["plan", "code", "acronym", "name"]

_ACRONYM = re.compile(r"\b[A-Z]{2,}s?\b")
_CAMEL = re.compile(r"\b[A-Za-z]?[a-z]+[A-Z]\w*\b")
_CAPITALISED = re.compile(r"\b[A-Z][a-z]+(?:-[A-Za-z]+)?\b")
_SENTENCE_START = re.compile(r"(?:^|[.!?:;\n])[\s\"'(\[*#>-]*$")
_CLAUSE_BREAK = re.compile(r"[,;:()\[\]]|\s-\s|\s(?:and|but|while|whereas|or)\s")
_PLAN_TITLE = re.compile(r"\b([A-Z][A-Za-z]+) (?:plan|tier|edition)\b")
_PLAN_TEXT = re.compile(r"\bthe ([A-Z][A-Za-z]+) (?:plan|tier|edition)\b")
_NOT_PLAN_NAMES = frozenset(
    {"The", "This", "That", "These", "Each", "Every", "Your", "Our", "Any", "All", "Which", "What", "New"}
)
_NOT_NAMES = frozenset({"I", "OK", "Yes", "No", "Note"}) | WEEKDAYS | MONTH_WORDS


@dataclass(frozen=True)
class Mention:
    """A name the text relies on: a plan, a code, an acronym or a capitalised name."""

    text: str
    kind: MentionKind
    start: int
    end: int


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
    _, hidden, codes = extract_masked(text)
    out = plan_mentions(text, plans)
    hidden = masked(hidden, [(m.start, m.end) for m in out])
    out += [Mention(text[a:b], "code", a, b) for a, b in codes if hidden[a:b].strip()]
    hidden = masked(hidden, codes)
    for kind, pattern in (("acronym", _ACRONYM), ("name", _CAMEL), ("name", _CAPITALISED)):
        hits = []
        for m in pattern.finditer(hidden):
            word = m.group(0)
            if word in _NOT_NAMES or (pattern is _CAPITALISED and _at_sentence_start(text, m.start())):
                continue
            hits.append(Mention(word, kind, m.start(), m.end()))  # type: ignore[arg-type]
        out += hits
        hidden = masked(hidden, [(h.start, h.end) for h in hits])
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
