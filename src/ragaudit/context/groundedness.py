"""Is an answer supported by its context? Deterministic checks first, no LLM needed.

An answer is split into sentences; each sentence's claims (:mod:`ragaudit.context.claims`) are checked
against the context chunks:

1. **Values** (dates, times, money, percentages, durations, numbers) must be stated by some context
   chunk (or by the question, which an answer may restate): the same normalised value (``24-month`` = ``24 months`` = ``2 years``; ``12 months`` is not
   ``24 months``). A bare number must be followed by overlapping words when both sides have them
   (``50,000 API calls`` is not supported by ``50,000 assets``).
2. **Plan binding.** A value said of a plan (the nearest plan name in the value's clause; else, when the
   question names exactly one plan, that plan) must be stated *for that plan*: the plan must be named in
   the chunk's title or within one sentence of where the chunk states the value (or anywhere in the
   chunk when the chunk names no plan near it). So "the Starter plan includes 50,000 API calls" is
   unsupported by the Professional page that states 50,000 for Professional (a swapped tier).
3. **Names** (plan names, codes such as ``IP67``, acronyms, camel-case and capitalised names) must occur
   in the context or the question (case-insensitive, whole word).
4. **Sentence support.** Lexical: the share of the sentence's content words found in the best single
   chunk. Embedding (optional): the highest cosine between the sentence and any context sentence. A
   sentence with content words is unsupported when lexical < ``lexical_min`` and the embedding score
   (if computed) < ``embedding_min``.

``grounded`` is true when nothing is unsupported. An answer that declines (see
:func:`ragaudit.context.abstention.is_decline`) makes no claims and is not checked.

**Against the reference answer** (when the golden case has one): every reference value is compared
with the answer's *comparable* values (same kind and unit; numbers with overlapping following words).
If the answer states comparable values but none equals the reference value, they contradict it
(the lesson's "12 months" against "24 months"). If the reference has values and the answer states
none of them, the answer is incomplete. ``correct`` is then ``not contradicted and not incomplete``;
``None`` when there is no reference or it holds no values.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ragaudit.context.abstention import is_decline
from ragaudit.context.assemble import AssembledContext, ContextChunk
from ragaudit.context.claims import (
    AnswerClaims,
    Mention,
    Value,
    extract_values,
    plan_mentions,
    sentence_claims,
)
from ragaudit.context.text import sentence_spans, sentences
from ragaudit.retrieval.embedder import TextEncoder
from ragaudit.text.words import content_words

LEXICAL_MIN = 0.5
EMBEDDING_MIN = 0.7


@dataclass(frozen=True)
class Unsupported:
    """A claim the context does not support."""

    claim: str
    kind: str
    """A value kind (``duration``, ``money``, ...), a mention kind (``plan``, ``code``, ...) or ``sentence``."""
    sentence: str
    reason: str

    def to_json(self) -> dict[str, str]:
        return {"claim": self.claim, "kind": self.kind, "sentence": self.sentence, "reason": self.reason}


@dataclass(frozen=True)
class ValueSupport:
    """One value of the answer and the context chunks that state it (for its plan, when bound)."""

    value: Value
    sentence: str
    plan: str | None
    sources: tuple[str, ...]
    other_plan_sources: tuple[str, ...] = ()
    """Chunks stating the value, but for another plan than ``plan``."""
    in_question: bool = False
    """The question states the value (an answer may restate it: "after 14 months, ...")."""

    def to_json(self) -> dict[str, Any]:
        out = {**self.value.to_json(), "plan": self.plan, "sources": list(self.sources)}
        if self.other_plan_sources:
            out["other_plan_sources"] = list(self.other_plan_sources)
        if self.in_question:
            out["in_question"] = True
        return out


@dataclass(frozen=True)
class SentenceSupport:
    text: str
    lexical: float
    embedding: float | None
    best_chunk: str | None
    supported: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "lexical": round(self.lexical, 4),
            "embedding": None if self.embedding is None else round(self.embedding, 4),
            "best_chunk": self.best_chunk,
            "supported": self.supported,
        }


@dataclass(frozen=True)
class ReferenceCheck:
    """The answer's values against the reference answer's."""

    contradictions: tuple[tuple[Value, Value], ...]
    """``(answer value, reference value)`` pairs: comparable, different, and the reference value unstated."""
    missing: tuple[Value, ...]
    """All reference values, when the answer states none of them (incomplete); else empty."""
    compared: int
    """How many reference values there were."""

    @property
    def correct(self) -> bool | None:
        if not self.compared:
            return None
        return not self.contradictions and not self.missing

    def to_json(self) -> dict[str, Any]:
        return {
            "correct": self.correct,
            "contradictions": [
                {"answer": a.text, "reference": r.text, "kind": a.kind} for a, r in self.contradictions
            ],
            "missing": [v.text for v in self.missing],
        }


@dataclass(frozen=True)
class Groundedness:
    """The verdict on one answer."""

    declined: bool
    values: tuple[ValueSupport, ...] = ()
    unsupported: tuple[Unsupported, ...] = ()
    sentences: tuple[SentenceSupport, ...] = ()
    reference: ReferenceCheck | None = None

    @property
    def grounded(self) -> bool:
        return not self.unsupported

    @property
    def correct(self) -> bool | None:
        return self.reference.correct if self.reference is not None else None

    def sources_of(self, value: Value) -> tuple[str, ...]:
        """The chunks stating ``value``, for its plan or (after those) for another plan."""
        for support in self.values:
            if support.value == value:
                return support.sources + support.other_plan_sources
        return ()

    def to_json(self) -> dict[str, Any]:
        return {
            "declined": self.declined,
            "grounded": self.grounded,
            "unsupported": [u.to_json() for u in self.unsupported],
            "correct": self.correct,
            "reference_check": self.reference.to_json() if self.reference is not None else None,
            "values": [v.to_json() for v in self.values],
            "sentences": [s.to_json() for s in self.sentences],
        }


@dataclass
class _ChunkFacts:
    """What a context chunk states, precomputed once per chunk text."""

    chunk_id: str
    text: str
    values: list[tuple[Value, int]]
    """Each value with the index of the sentence it is in."""
    sentence_plans: list[set[str]]
    title_plans: set[str]
    all_plans: set[str]
    words: set[str]
    sentences: list[str] = field(default_factory=list)

    def plan_scope(self, sentence: int) -> set[str]:
        """Plans named in the title or within one sentence of ``sentence``; the chunk's if none there."""
        near = set(self.title_plans)
        for i in range(max(0, sentence - 1), min(len(self.sentence_plans), sentence + 2)):
            near |= self.sentence_plans[i]
        return near or self.all_plans


def _sentence_index(spans: Sequence[tuple[int, int]], position: int) -> int:
    for i, (_, end) in enumerate(spans):
        if position < end:
            return i
    return max(0, len(spans) - 1)


def _contains_word(haystack: str, needle: str) -> bool:
    return re.search(r"(?<!\w)" + re.escape(needle.lower()) + r"(?!\w)", haystack) is not None


def _spelled_out(text: str, acronym: str) -> bool:
    """Whether ``text`` holds capitalised words whose initials spell ``acronym`` (``Assertion Consumer
    Service`` for ``ACS``)."""
    letters = acronym.rstrip("s") if len(acronym) > 2 and acronym.endswith("s") else acronym
    pattern = r"[\s-]+".join(rf"{re.escape(c)}[a-z]+" for c in letters)
    return re.search(rf"\b{pattern}\b", text) is not None


def compare_with_reference(answer_values: Sequence[Value], reference: str) -> ReferenceCheck:
    """Contradictions and missing values of the answer against ``reference`` (rules in the module doc)."""
    wanted = extract_values(reference)
    contradictions: list[tuple[Value, Value]] = []
    for ref in wanted:
        comparable = [a for a in answer_values if a.comparable(ref)]
        if comparable and not any(a.same(ref) for a in comparable):
            contradictions += [(a, ref) for a in comparable if (a, ref) not in contradictions]
    stated_any = any(a.same(r) or a.supported_by(r) for a in answer_values for r in wanted)
    missing = tuple(wanted) if wanted and not stated_any else ()
    return ReferenceCheck(tuple(contradictions), missing, len(wanted))


class GroundednessChecker:
    """Checks answers against their contexts (see the module docstring).

    ``plans`` is the plan-name vocabulary (:func:`ragaudit.context.claims.harvest_plan_names`).
    ``encoder`` (optional) adds embedding support scores; its vectors must be L2-normalised (ragaudit's
    embedder and embedding cache are). Chunk analyses and embeddings are kept for the checker's life,
    so checking many answers over overlapping contexts does each chunk once.
    """

    def __init__(
        self,
        plans: Iterable[str] = (),
        *,
        encoder: TextEncoder | None = None,
        lexical_min: float = LEXICAL_MIN,
        embedding_min: float = EMBEDDING_MIN,
    ) -> None:
        self.plans = tuple(sorted(set(plans)))
        self.encoder = encoder
        self.lexical_min = lexical_min
        self.embedding_min = embedding_min
        self._facts: dict[tuple[str, str], _ChunkFacts] = {}
        self._vectors: dict[str, np.ndarray] = {}

    def info(self) -> dict[str, Any]:
        return {
            "method": "deterministic: values, plan binding, names, sentence support",
            "plans": list(self.plans),
            "lexical_min": self.lexical_min,
            "embedding_min": self.embedding_min if self.encoder is not None else None,
            "embedding_model": getattr(self.encoder, "fingerprint", None)
            if self.encoder is not None
            else None,
        }

    def _chunk_facts(self, chunk: ContextChunk) -> _ChunkFacts:
        key = (chunk.chunk_id, chunk.text)
        facts = self._facts.get(key)
        if facts is not None:
            return facts
        text = chunk.text
        spans = sentence_spans(text)
        title = chunk.chunk.title if chunk.chunk is not None else ""
        plan_hits = plan_mentions(text, self.plans)
        sentence_plans: list[set[str]] = [set() for _ in spans]
        for m in plan_hits:
            if spans:
                sentence_plans[_sentence_index(spans, m.start)].add(m.text)
        facts = _ChunkFacts(
            chunk.chunk_id,
            text,
            [(v, _sentence_index(spans, v.start)) for v in extract_values(text)],
            sentence_plans,
            {m.text for m in plan_hits if title and m.end <= len(title)},
            {m.text for m in plan_hits},
            content_words(text),
            [text[a:b] for a, b in spans],
        )
        self._facts[key] = facts
        return facts

    def embed(self, texts: Iterable[str]) -> None:
        """Embed ``texts`` not embedded yet, in one batch (call with many texts up front to go faster)."""
        if self.encoder is None:
            return
        todo = list(dict.fromkeys(t for t in texts if t not in self._vectors))
        if todo:
            vectors = self.encoder.encode(todo)
            self._vectors.update(zip(todo, np.asarray(vectors, dtype=np.float32), strict=True))

    def texts_to_embed(self, answer: str, context: AssembledContext) -> list[str]:
        """The sentences :meth:`check` would embed for this answer and context."""
        out = list(sentences(answer))
        for chunk in context.chunks:
            out += self._chunk_facts(chunk).sentences
        return out

    def _value_support(
        self, value: Value, plan: str | None, facts: Sequence[_ChunkFacts]
    ) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """Chunks stating ``value`` for ``plan``; and chunks stating it for other plans only."""
        sources: list[str] = []
        other_plan: list[str] = []
        for f in facts:
            hits = [i for v, i in f.values if value.supported_by(v)]
            if not hits:
                continue
            if plan is None or any(plan in f.plan_scope(i) for i in hits):
                sources.append(f.chunk_id)
            else:
                other_plan.append(f.chunk_id)
        return tuple(sources), tuple(other_plan)

    def _sentence_support(self, sentence: str, facts: Sequence[_ChunkFacts]) -> SentenceSupport | None:
        words = content_words(sentence)
        if not words:
            return None
        best, best_chunk = 0.0, None
        for f in facts:
            share = len(words & f.words) / len(words)
            if share > best:
                best, best_chunk = share, f.chunk_id
        embedding = None
        if self.encoder is not None and facts:
            candidates = [s for f in facts for s in f.sentences]
            self.embed([sentence, *candidates])
            if candidates:
                matrix = np.stack([self._vectors[s] for s in candidates])
                embedding = float(np.max(matrix @ self._vectors[sentence]))
        supported = best >= self.lexical_min or (embedding is not None and embedding >= self.embedding_min)
        return SentenceSupport(sentence, best, embedding, best_chunk, supported)

    def check(
        self, answer: str, context: AssembledContext, *, query: str = "", reference: str | None = None
    ) -> Groundedness:
        """The groundedness of ``answer`` given ``context`` (and the question and reference, if known)."""
        if is_decline(answer):
            return Groundedness(declined=True)
        facts = [self._chunk_facts(c) for c in context.chunks]
        original = "\n".join([query, *(f.text for f in facts)])
        haystack = original.lower()
        query_plans = {m.text for m in plan_mentions(query, self.plans)}
        query_plan = next(iter(query_plans)) if len(query_plans) == 1 else None
        query_values = extract_values(query)
        values: list[ValueSupport] = []
        unsupported: list[Unsupported] = []
        supports: list[SentenceSupport] = []
        all_values: list[Value] = []
        for sentence in sentences(answer):
            claims: AnswerClaims = sentence_claims(sentence, self.plans)
            for value in claims.values:
                all_values.append(value)
                plan = claims.bound_plan(value) or query_plan
                sources, elsewhere = self._value_support(value, plan, facts)
                asked = any(value.supported_by(q) for q in query_values)
                values.append(ValueSupport(value, sentence, plan, sources, elsewhere, asked))
                if not sources and not asked:
                    reason = (
                        f"stated for another plan than {plan} (in {', '.join(elsewhere)})"
                        if elsewhere
                        else "no context chunk states this value"
                    )
                    unsupported.append(Unsupported(value.text, value.kind, sentence, reason))
            mentions: tuple[Mention, ...] = (*claims.plans, *claims.mentions)
            for mention in dict.fromkeys(mentions):
                named = _contains_word(haystack, mention.text) or (
                    mention.kind == "acronym" and _spelled_out(original, mention.text)
                )
                if not named:
                    unsupported.append(
                        Unsupported(mention.text, mention.kind, sentence, "named nowhere in the context")
                    )
            support = self._sentence_support(sentence, facts)
            if support is not None:
                supports.append(support)
                if not support.supported:
                    unsupported.append(
                        Unsupported(
                            sentence, "sentence", sentence, "no context chunk says this (low support)"
                        )
                    )
        reference_check = compare_with_reference(all_values, reference) if reference else None
        return Groundedness(
            False, tuple(values), tuple(_unique(unsupported)), tuple(supports), reference_check
        )


def _unique(items: Iterable[Unsupported]) -> list[Unsupported]:
    seen: set[tuple[str, str]] = set()
    out = []
    for item in items:
        key = (item.claim, item.kind)
        if key not in seen:
            seen.add(key)
            out.append(item)
    return out
