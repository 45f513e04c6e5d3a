"""Entities and constraints of a query, found by fixed rules, and a check that a rewrite keeps them.

A query rewrite may widen recall and still change the question: "Pro plan api limit koto?" rewritten
to "What is the API limit of the Enterprise plan?" asks about another plan. :func:`check_rewrite` lists
what the original query asked for that the rewrite no longer does. Everything here is regular
expressions and word lists: the same input always gives the same answer, and no model is involved.

What :func:`extract_constraints` finds (``kind``: examples → ``key``, the normalised form compared):

* ``date``: ``2024-03-01``, ``March 1, 2024``, ``1 March 2024`` → ``2024-03-01``; ``March 2024`` →
  ``2024-03``; ``Q3 2024`` → ``2024-q3``; ``FY2024`` → ``fy2024``; ``03/01/2024`` as written; a
  capitalised month alone (``in March``, but not ``May``, a modal verb) → ``month-03``; relative
  phrases (``last year``, ``this quarter``, ``yesterday``) as written, lower-cased; a bare year
  1900-2099 not followed by a unit → ``2024``.
* ``money``: ``$99``, ``€1,200``, ``99 USD``, ``EUR 49``, ``20 dollars``, ``$5k`` → ``USD 99`` (ISO code) ...
* ``percent``: ``20%``, ``20 percent`` → ``20%``.
* ``duration``: a number (digits, or a number word up to ``hundred``) and a time unit, spaced or
  hyphenated: ``30 days``, ``30-day``, ``thirty days``, ``2 business days`` → ``30 day``,
  ``2 business day``.
* ``quantity``: a number with a measure unit (``10 GB``, ``200ms``, ``5 Mbps``) → ``10 gb``; or with
  the counted noun after it (``50,000 calls``, ``5 sensors``) → ``50000 call``.
* ``number``: any other number (``version 3``) → ``3``. Thousands separators and a ``k`` suffix are
  normalised (``50,000`` and ``50k`` → ``50000``).

  Money, percentages, durations and quantities may carry a rate: ``per month``, ``/month``, ``a
  month``, ``monthly`` right after them → ``/month`` appended to the key (``USD 99/month``).
* ``comparison``: ``at least``, ``at most``, ``up to``, ``no more than``, ``more than``, ``less than``,
  ``over``, ``under``, ``above``, ``below``, ``before``, ``after``, ``since``, ``until`` directly before a
  number, amount, duration or date → ``>= 10 user`` (the operator and the key of what follows).
* ``negation``: ``not``, ``no``, ``never``, ``none``, ``nor``, ``neither``, ``without``, ``except``,
  ``excluding``, ``cannot`` and any ``...n't``, with its *scope*: up to three content words after it,
  stopping at punctuation, ``but`` or another cue (``without a receipt`` → ``not receipt``).
* ``entity``: product, plan and other names, one word at a time:

  1. a term of the caller's :class:`Vocabulary` (any case; multi-word terms match whole; aliases
     count as the same entity);
  2. an acronym or mixed-case word (``API``, ``SSO``, ``2FA``, ``iPhone``, ``GPT-4``);
  3. a capitalised word that is not a stopword, question word or common verb (``Fieldsense``,
     ``Enterprise``); at the start of a sentence only when the next word is capitalised too or a plan
     word, or when it is a plan tier (``Pro plan ...``, but not ``Refund within ...``);
  4. any word (any case) right before ``plan``, ``tier``, ``edition``, ``package``, ``subscription``,
     ``license`` or ``bundle``: ``pro plan`` → ``pro``.

  Words inside a date, amount or quantity are not entities (``USD``, ``Q3``, ``March``).

How :func:`check_rewrite` decides that a constraint *survived* the rewrite:

* an entity: its text (or a vocabulary alias) occurs in the rewrite as a whole word, any case, an
  optional plural ``s`` / ``'s`` allowed (``API`` survives as ``api``; ``Pro`` does not survive as
  ``Professional`` unless the vocabulary says they are the same);
* a number, amount, percentage, duration or quantity: the rewrite holds a number of the same value
  with the same unit and rate (a counted noun and its rate may stand anywhere in the rewrite:
  ``50,000 calls a month`` → ``50000 API calls per month`` survives; a bare number survives as any
  number of that value);
* a date or comparison: the rewrite holds one with the same key;
* a negation: the rewrite holds a negation whose scope shares a content word with the original's
  (any negation, when the original's scope is empty).

Constraints of the rewrite that the original does not hold are *added*. A lost and an added
constraint filling the same slot are a *swap*: two plan names (``Pro`` → ``Enterprise``), two amounts
in the same currency, two durations in the same unit, two dates of the same granularity.

Known limits, by design: equal values in other units are not converted (``2 weeks`` → ``14 days`` is
reported as lost: a rewrite should keep the user's units); a synonym of an entity is a loss unless the
vocabulary lists it as an alias; capitalised common words mid-sentence (``... the Refund Policy``)
count as entities, which errs on the side of flagging.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from ragaudit.data.lines import iter_lines
from ragaudit.errors import InputError
from ragaudit.experiments.entity_patterns import (
    COMPARATOR,
    COMPARATORS,
    DATE_PATTERNS,
    DURATION,
    ENTITY_STOPWORDS,
    MEASURE,
    MONEY,
    NEGATION,
    NUMBER,
    NUMERIC_KINDS,
    PERCENT,
    PLAN_TIERS,
    PLAN_WORDS,
    RATE,
    RATE_ADVERBS,
    SCOPE_STOP,
    Kind,
)
from ragaudit.text.stopwords import STOPWORDS
from ragaudit.text.tables import MONTHS, NUMBER_WORDS, TIME_UNITS, currency_code, time_unit
from ragaudit.text.words import QUERY_WORD as WORD
from ragaudit.text.words import lemma as _lemma


@dataclass(frozen=True)
class Constraint:
    """One entity or constraint of a query: what it is, how it was written, and its normalised key."""

    kind: Kind
    text: str
    """As written in the query."""
    key: str
    """The normalised form a rewrite must keep (``30 day``, ``USD 99/month``, ``pro``, ``2024-03``)."""
    start: int
    end: int
    slot: str = ""
    """What the constraint fills (``plan``, a unit, a date granularity); a lost and an added constraint
    with the same non-empty slot are a swap."""
    value: str = ""
    """Numbers: the normalised value (``50000``)."""
    unit: str = ""
    """Numbers: the unit (``day``, ``USD``, ``%``, ``gb``, a counted noun such as ``call``), else empty."""
    per: str = ""
    """Numbers: the rate's time unit (``month`` for ``per month``), else empty."""
    scope: tuple[str, ...] = ()
    """Negations: the content words negated."""
    forms: tuple[str, ...] = ()
    """Entities: every spelling that counts as this entity (the text, plus vocabulary aliases)."""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "text": self.text, "key": self.key}
        if self.slot:
            out["slot"] = self.slot
        return out


@dataclass(frozen=True)
class Vocabulary:
    """Known entity names, each with the aliases that count as the same entity.

    ``terms`` holds one tuple per entity: the canonical name first, then its aliases.
    """

    terms: tuple[tuple[str, ...], ...] = ()

    @classmethod
    def from_lines(cls, lines: Iterable[str], source: str = "vocabulary") -> Vocabulary:
        """Parse ``canonical | alias | ...`` lines; blank lines and ``#`` comments are skipped."""
        terms: list[tuple[str, ...]] = []
        for number, line in enumerate(lines, start=1):
            parsed = _vocabulary_line(line, source, number)
            if parsed:
                terms.append(parsed)
        return cls(tuple(terms))

    def forms_of(self, text: str) -> tuple[str, ...] | None:
        """All spellings of the term ``text`` belongs to (case-insensitive), or ``None``."""
        wanted = _squash(text)
        for term in self.terms:
            if wanted in (_squash(t) for t in term):
                return term
        return None


def _vocabulary_line(line: str, source: str, number: int) -> tuple[str, ...]:
    text = line.split("#", 1)[0].strip()
    if not text:
        return ()
    parts = tuple(" ".join(p.split()) for p in text.split("|"))
    if not all(parts):
        raise InputError(
            source, number, f"empty name in vocabulary line {line.strip()!r}", "write: Professional | Pro"
        )
    return parts


def load_vocabulary(path: str | Path) -> Vocabulary:
    """Read a vocabulary file: one entity per line, ``canonical | alias | ...``; ``#`` starts a comment."""
    terms: list[tuple[str, ...]] = []
    for number, text in iter_lines(path):
        if isinstance(text, InputError):
            raise text
        parsed = _vocabulary_line(text, str(path), number)
        if parsed:
            terms.append(parsed)
    return Vocabulary(tuple(terms))


# ------------------------------------------------------------------------------------------ helpers


def _squash(text: str) -> str:
    """Lower-cased, with hyphens and runs of whitespace as one space (for spelling comparisons)."""
    return " ".join(text.lower().replace("-", " ").split())


def _decimal(text: str, thousands: bool = False) -> str:
    """``"50,000"`` → ``"50000"``, ``"1.50"`` → ``"1.5"``, ``"forty"`` → ``"40"``; times 1000 if ``thousands``."""
    raw = str(NUMBER_WORDS[text.lower()]) if text.lower() in NUMBER_WORDS else text.replace(",", "")
    try:
        value = Decimal(raw) * (1000 if thousands else 1)
    except InvalidOperation:  # pragma: no cover - the patterns only let numbers through
        return raw
    return format(value.normalize(), "f")


class _Spans:
    """Character ranges already claimed by an earlier, more specific pattern."""

    def __init__(self) -> None:
        self.taken: list[tuple[int, int]] = []

    def free(self, start: int, end: int) -> bool:
        return all(end <= a or b <= start for a, b in self.taken)

    def take(self, start: int, end: int) -> None:
        self.taken.append((start, end))


def _rate(query: str, end: int) -> tuple[str, int]:
    """A rate right after position ``end`` (``per month``, ``/month``, ``monthly``): its unit and end."""
    match = RATE.match(query, end)
    if match is None:
        return "", end
    unit = TIME_UNITS[match["per"].lower()] if match["per"] else RATE_ADVERBS[match["adv"].lower()]
    return unit, match.end()


def _numeric(
    kind: Kind, query: str, start: int, end: int, value: str, unit: str, slot: str | None = None
) -> Constraint:
    per, end = _rate(query, end) if kind in ("money", "percent", "duration", "quantity") else ("", end)
    key = f"{unit} {value}" if kind == "money" else f"{value} {unit}".strip() if unit != "%" else f"{value}%"
    if per:
        key += f"/{per}"
    return Constraint(
        kind, query[start:end], key, start, end, slot if slot is not None else unit, value, unit, per
    )


# ------------------------------------------------------------------------------------------ extraction


def _dates(query: str, spans: _Spans) -> list[Constraint]:
    out: list[Constraint] = []
    for name, pattern in DATE_PATTERNS:
        for m in pattern.finditer(query):
            if not spans.free(m.start(), m.end()):
                continue
            groups = m.groupdict()
            text = m.group(0)
            if name == "iso":
                key = "-".join(g for g in (m["y"], m["m"], m["d"]) if g)
                slot = "date:day" if m["d"] else "date:month"
            elif name in ("mdy", "dmy", "my"):
                month = MONTHS[m["mon"].lower()]
                if m["mon"].lower() == "may" and not m["mon"][0].isupper():
                    continue  # "may 5 users ..." is the verb
                day = f"-{int(groups['d']):02d}" if groups.get("d") else ""
                year = m["y"] or "*"
                key, slot = f"{year}-{month:02d}{day}", "date:day" if day else "date:month"
            elif name == "quarter":
                key = f"{m['y']}-{m['q'].lower()}" if m["y"] else m["q"].lower()
                slot = "date:quarter"
            elif name == "fiscal":
                key, slot = f"fy{m['y']}", "date:year"
            elif name == "month":
                key, slot = f"month-{MONTHS[text.lower()]:02d}", "date:month"
            elif name == "numeric":
                key, slot = text, "date:day"
            else:
                key, slot = " ".join(text.lower().split()), "date:relative"
            spans.take(m.start(), m.end())
            out.append(Constraint("date", text, key, m.start(), m.end(), slot))
    return out


def _amounts(query: str, spans: _Spans) -> list[Constraint]:
    out: list[Constraint] = []
    for m in MONEY.finditer(query):
        if not spans.free(m.start(), m.end()):
            continue
        if m["sym"]:
            currency, num, k = currency_code(m["sym"]), m["num1"], m["k1"]
        elif m["code"]:
            currency, num, k = currency_code(m["code"]), m["num2"], m["k2"]
        else:
            currency, num, k = currency_code(m["word"]), m["num3"], m["k3"]
        c = _numeric("money", query, m.start(), m.end(), _decimal(num, bool(k)), currency)
        spans.take(c.start, c.end)
        out.append(c)
    patterns: tuple[tuple[re.Pattern[str], Kind], ...] = (
        (PERCENT, "percent"),
        (DURATION, "duration"),
        (MEASURE, "quantity"),
    )
    for pattern, kind in patterns:
        for m in pattern.finditer(query):
            if not spans.free(m.start(), m.end()):
                continue
            if kind == "percent":
                unit = "%"
            elif kind == "duration":
                unit = time_unit(m["unit"])
            else:
                unit = m["unit"].lower()
            c = _numeric(kind, query, m.start(), m.end(), _decimal(m["num"]), unit)
            spans.take(c.start, c.end)
            out.append(c)
    return out


def _numbers(query: str, spans: _Spans) -> list[Constraint]:
    """Numbers left over: with the counted noun after them (quantity), a bare year (date), or bare."""
    out: list[Constraint] = []
    for m in NUMBER.finditer(query):
        if not spans.free(m.start(), m.end()):
            continue
        value = _decimal(m["num"], bool(m["k"]))
        noun = WORD.match(query, m.end() + 1) if query[m.end() : m.end() + 1] == " " else None
        lemma = _lemma(noun.group(0)) if noun is not None and noun.group(0).islower() else ""
        if noun is not None and lemma.isalpha() and lemma not in ENTITY_STOPWORDS:
            c = _numeric("quantity", query, m.start(), noun.end(), value, lemma, slot=f"count:{lemma}")
        elif re.fullmatch(r"(?:19|20)\d\d", m.group(0)):
            c = Constraint("date", m.group(0), m.group(0), m.start(), m.end(), "date:year")
        else:
            c = Constraint("number", m.group(0), value, m.start(), m.end(), "", value)
        spans.take(c.start, c.end)
        out.append(c)
    return out


def _comparisons(query: str, found: Sequence[Constraint]) -> list[Constraint]:
    """A comparator directly followed by a numeric or date constraint."""
    starts = {c.start: c for c in found if c.kind in NUMERIC_KINDS or c.kind == "date"}
    out: list[Constraint] = []
    for m in COMPARATOR.finditer(query):
        target = starts.get(m.end())
        if target is None:
            continue
        op = COMPARATORS[" ".join(m["op"].lower().split())]
        out.append(
            Constraint(
                "comparison",
                query[m.start() : target.end],
                f"{op} {target.key}",
                m.start(),
                target.end,
                "",
                "",
            )
        )
    return out


def _negations(query: str, comparisons: Sequence[Constraint]) -> list[Constraint]:
    out: list[Constraint] = []
    for m in NEGATION.finditer(query):
        if any(c.start <= m.start() < c.end for c in comparisons):
            continue  # "no more than 5" is a comparison, not a negation
        stop = SCOPE_STOP.search(query, m.end())
        limit = stop.start() if stop is not None else len(query)
        scope: list[str] = []
        for word in WORD.finditer(query, m.end(), limit):
            if NEGATION.fullmatch(word.group(0)):
                break
            lemma = _lemma(word.group(0))
            if lemma not in STOPWORDS:
                scope.append(lemma)
            if len(scope) == 3:
                break
        key = "not " + " ".join(scope) if scope else "not"
        out.append(Constraint("negation", m.group(0), key.strip(), m.start(), m.end(), scope=tuple(scope)))
    return out


def _is_acronym(word: str) -> bool:
    letters = [ch for ch in word if ch.isalpha()]
    uppers = sum(ch.isupper() for ch in letters)
    has_digit = any(ch.isdigit() for ch in word)
    mixed = bool(letters) and letters[0].islower() and uppers > 0
    return bool(letters) and (uppers >= 2 or (has_digit and bool(letters)) or mixed)


def _sentence_start(query: str, start: int) -> bool:
    before = query[:start].rstrip()
    return not before or before[-1] in ".?!:;\"'(“"


def _vocabulary_entities(query: str, vocabulary: Vocabulary, spans: _Spans) -> list[Constraint]:
    out: list[Constraint] = []
    for term in vocabulary.terms:
        for form in sorted(term, key=len, reverse=True):
            for m in _form_pattern(form).finditer(query):
                if spans.free(m.start(), m.end()):
                    spans.take(m.start(), m.end())
                    slot = "plan" if any(_squash(t) in PLAN_TIERS for t in term) else ""
                    out.append(
                        Constraint(
                            "entity", m.group(0), _squash(term[0]), m.start(), m.end(), slot, forms=term
                        )
                    )
    return out


def _word_entities(query: str, spans: _Spans) -> list[Constraint]:
    words = list(WORD.finditer(query))
    out: list[Constraint] = []
    for i, m in enumerate(words):
        word = re.sub(r"['’]s$", "", m.group(0))  # possessive: "Acme's" is the entity "Acme"
        lower = word.lower()
        if not spans.free(m.start(), m.end()) or lower in ENTITY_STOPWORDS or lower in PLAN_WORDS:
            continue
        if word.replace(",", "").replace(".", "").isdigit():
            continue
        nxt = words[i + 1].group(0) if i + 1 < len(words) else ""
        before_plan_word = nxt.lower() in PLAN_WORDS and query[m.end() : words[i + 1].start()].strip() == ""
        capitalised = word[0].isupper()
        if _is_acronym(word) or (capitalised and not _sentence_start(query, m.start())):
            keep = True
        elif capitalised:
            next_capitalised = bool(nxt) and nxt[0].isupper() and nxt.lower() not in ENTITY_STOPWORDS
            keep = next_capitalised or before_plan_word or lower in PLAN_TIERS
        else:
            keep = before_plan_word and word.isalpha()
        if keep:
            slot = "plan" if before_plan_word or lower in PLAN_TIERS else ""
            end = m.start() + len(word)
            out.append(Constraint("entity", word, _squash(word), m.start(), end, slot, forms=(word,)))
    return out


def extract_constraints(query: str, vocabulary: Vocabulary | None = None) -> tuple[Constraint, ...]:
    """Every entity and constraint of ``query`` (rules in the module docstring), in query order.

    An entity written twice is listed once.
    """
    spans = _Spans()
    found = _dates(query, spans)
    found += _amounts(query, spans)
    found += _numbers(query, spans)
    comparisons = _comparisons(query, found)
    found += comparisons
    found += _negations(query, comparisons)
    entities = _vocabulary_entities(query, vocabulary or Vocabulary(), spans) + _word_entities(query, spans)
    seen: set[str] = set()
    for entity in sorted(entities, key=lambda c: c.start):
        if entity.key not in seen:
            seen.add(entity.key)
            found.append(entity)
    return tuple(sorted(found, key=lambda c: (c.start, c.end)))


# ------------------------------------------------------------------------------------------ checking


def _form_pattern(form: str) -> re.Pattern[str]:
    body = r"[\s-]+".join(re.escape(part) for part in form.replace("-", " ").split())
    return re.compile(rf"(?<![\w-]){body}(?:['’]s|s)?(?![\w-])", re.IGNORECASE)


def _survives(c: Constraint, text: str, found: Sequence[Constraint]) -> bool:
    """Whether ``text`` (with its constraints ``found``) still holds constraint ``c``."""
    if c.kind == "entity":
        return any(_form_pattern(form).search(text) for form in c.forms or (c.text,))
    if c.kind in NUMERIC_KINDS:
        numbers = [o for o in found if o.kind in NUMERIC_KINDS and o.value == c.value]
        if c.kind == "number":
            return bool(numbers)
        if c.kind == "quantity" and c.slot.startswith("count:"):
            lemmas = {_lemma(w.group(0)) for w in WORD.finditer(text)}
            rates = {o.per for o in numbers} | {_rate(text, m.start())[0] for m in RATE.finditer(text)}
            return bool(numbers) and c.unit in lemmas and (not c.per or c.per in rates)
        return any(o.unit == c.unit and o.per == c.per for o in numbers)
    if c.kind == "negation":
        others = [o for o in found if o.kind == "negation"]
        return any(set(c.scope) & set(o.scope) for o in others) if c.scope else bool(others)
    return any(o.kind == c.kind and o.key == c.key for o in found)


@dataclass(frozen=True)
class ConstraintCheck:
    """What a rewrite kept, lost, added and swapped of the original query's constraints."""

    original: str
    rewritten: str
    constraints: tuple[Constraint, ...]
    """The original query's constraints."""
    lost: tuple[Constraint, ...]
    added: tuple[Constraint, ...]
    """Constraints of the rewrite that the original does not hold."""
    swapped: tuple[tuple[Constraint, Constraint], ...] = field(default=())
    """``(lost, added)`` pairs filling the same slot: ``Pro`` → ``Enterprise``, ``30 day`` → ``14 day``."""

    @property
    def preserved(self) -> bool:
        """True when nothing of the original query was lost."""
        return not self.lost

    def to_json(self) -> dict[str, Any]:
        return {
            "preserved": self.preserved,
            "constraints": [c.to_json() for c in self.constraints],
            "lost": [c.to_json() for c in self.lost],
            "added": [c.to_json() for c in self.added],
            "swapped": [{"from": a.to_json(), "to": b.to_json()} for a, b in self.swapped],
        }


def check_rewrite(original: str, rewritten: str, vocabulary: Vocabulary | None = None) -> ConstraintCheck:
    """Compare the constraints of ``original`` and ``rewritten`` (rules in the module docstring)."""
    before = extract_constraints(original, vocabulary)
    after = extract_constraints(rewritten, vocabulary)
    lost = tuple(c for c in before if not _survives(c, rewritten, after))
    added = tuple(c for c in after if not _survives(c, original, before))
    swapped: list[tuple[Constraint, Constraint]] = []
    used: set[int] = set()
    for gone in lost:
        if not gone.slot:
            continue
        for i, new in enumerate(added):
            if i not in used and new.slot == gone.slot and new.kind == gone.kind:
                used.add(i)
                swapped.append((gone, new))
                break
    return ConstraintCheck(original, rewritten, before, lost, added, tuple(swapped))
