"""Quality of an assembled context: precision, evidence coverage, redundancy, staleness, token cost.

For one case with context chunks ``C`` (after dedupe, top-k and token budget), relevant set ``R`` and
token counts ``t(c)``::

    precision_chunks   = |C ∩ R| / |C|                           (share of chunks that are relevant)
    precision_tokens   = Σ_{c ∈ C ∩ R} t(c) / Σ_{c ∈ C} t(c)      (share of tokens that are relevant)
    evidence_coverage  = |{s ∈ S : s lies inside the context}| / |S|
    evidence_char_recall = |chars(C) ∩ chars(S)| / |chars(S)|    (``corpus.projection.token_overlap``)
    redundancy         = |{c_j : ∃ i < j, J(c_i, c_j) >= τ}| / |C|
    staleness          = |{c : superseded in the corpus (metadata.status)}| / |C|
    tokens             = Σ_{c ∈ C} t(c)

``S`` are the case's required evidence spans (grade at or above the relevance threshold; a span without
a grade counts as grade 1). A span *lies inside the context* when the union of the context chunks'
character intervals in its document contains it whole (a span split across two chunks needs both; whitespace a chunker trimmed between them does not count).
Without spans, coverage falls back to chunk labels: ``|C ∩ R| / |R|``. ``J`` is the Jaccard similarity
of word 3-shingle sets (word sets for chunks under 3 words) and ``τ`` the near-duplicate threshold
(0.8 by default). Exact Jaccard is cheap at context sizes (k² pairs of small sets); MinHash, which
estimates it, only pays off across a whole corpus.

Empty contexts have precision 0 (nothing useful was given), redundancy and staleness 0, coverage 0.
Precision and coverage are undefined (NaN) for unanswerable cases; summaries average them over
answerable cases only, and every other figure over all cases with a context.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from ragaudit.context.assemble import AssembledContext, ContextChunk
from ragaudit.corpus.projection import merge_intervals, token_overlap
from ragaudit.data.schema import Evidence, GoldenCase
from ragaudit.text.words import WORD

DUPLICATE_THRESHOLD = 0.8
SHINGLE = 3


def shingles(text: str, n: int = SHINGLE) -> frozenset[tuple[str, ...]]:
    """Word ``n``-grams of ``text`` (lower-cased); a text under ``n`` words gives its words as 1-grams."""
    words = [m.group(0).lower() for m in WORD.finditer(text)]
    if len(words) < n:
        return frozenset((w,) for w in words)
    return frozenset(tuple(words[i : i + n]) for i in range(len(words) - n + 1))


def jaccard(a: frozenset[Any], b: frozenset[Any]) -> float:
    """``|a ∩ b| / |a ∪ b|``; two empty sets are identical (1.0)."""
    union = len(a | b)
    return len(a & b) / union if union else 1.0


def near_duplicates(
    chunks: Sequence[ContextChunk], threshold: float = DUPLICATE_THRESHOLD
) -> list[tuple[str, str, float]]:
    """``(earlier_id, later_id, jaccard)`` for every pair at or above ``threshold``, in rank order."""
    sets = [shingles(c.text) for c in chunks]
    pairs = []
    for j in range(len(chunks)):
        for i in range(j):
            similarity = jaccard(sets[i], sets[j])
            if similarity >= threshold:
                pairs.append((chunks[i].chunk_id, chunks[j].chunk_id, round(similarity, 4)))
    return pairs


def required_spans(case: GoldenCase, threshold: int = 1) -> list[Evidence]:
    """The case's evidence spans with grade >= ``threshold`` (ungraded spans count as grade 1)."""
    return [s for s in case.evidence if (1 if s.grade is None else s.grade) >= threshold]


def _close_blank_gaps(intervals: list[tuple[int, int]], text: str | None) -> list[tuple[int, int]]:
    """Merge neighbouring intervals separated only by whitespace in ``text`` (chunkers trim it away)."""
    if text is None:
        return intervals
    out: list[tuple[int, int]] = []
    for start, end in intervals:
        if out and not text[out[-1][1] : start].strip():
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def spans_outside(
    chunks: Iterable[ContextChunk], spans: Sequence[Evidence], texts: Mapping[str, str] | None = None
) -> list[Evidence]:
    """The spans that do not lie whole inside the context (rules in the module docstring)."""
    by_doc: dict[str, list[tuple[int, int]]] = {}
    for c in chunks:
        if c.chunk is not None:
            by_doc.setdefault(c.chunk.doc_id, []).append((c.chunk.start, c.chunk.end))
    merged = {
        doc: _close_blank_gaps(merge_intervals(intervals), (texts or {}).get(doc))
        for doc, intervals in by_doc.items()
    }
    outside = []
    for span in spans:
        start, end = span.start, span.end
        text = (texts or {}).get(span.doc_id)
        if text is not None:  # the span without its surrounding whitespace
            piece = text[start:end]
            start += len(piece) - len(piece.lstrip())
            end -= len(piece) - len(piece.rstrip())
        if not any(a <= start and end <= b for a, b in merged.get(span.doc_id, ())):
            outside.append(span)
    return outside


@dataclass(frozen=True)
class ContextMetrics:
    """The context figures of one case (formulas in the module docstring)."""

    chunks: int
    tokens: int
    precision_chunks: float
    precision_tokens: float
    evidence_coverage: float
    evidence_char_recall: float
    evidence_present: bool
    """At least one relevant chunk is in the context."""
    redundancy: float
    staleness: float
    stale_chunks: tuple[str, ...] = ()
    foreign_chunks: tuple[str, ...] = ()
    duplicate_pairs: tuple[tuple[str, str, float], ...] = field(default=())
    unknown_chunks: int = 0

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["stale_chunks"] = list(self.stale_chunks)
        out["foreign_chunks"] = list(self.foreign_chunks)
        out["duplicate_pairs"] = [list(p) for p in self.duplicate_pairs]
        return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in out.items()}


def context_metrics(
    context: AssembledContext,
    case: GoldenCase,
    *,
    threshold: int = 1,
    duplicate_threshold: float = DUPLICATE_THRESHOLD,
    texts: Mapping[str, str] | None = None,
) -> ContextMetrics:
    """The context figures of ``case`` (labels in the ids of the context's chunking).

    ``texts`` (document id -> text) lets a span split across adjacent chunks count as inside the context
    even though the chunker trimmed the whitespace between them.
    """
    chunks = context.chunks
    n = len(chunks)
    tokens = context.tokens
    answerable = case.is_answerable(threshold)
    relevant_tokens = sum(c.tokens for c in chunks if c.relevant)
    hits = sum(1 for c in chunks if c.relevant)
    spans = required_spans(case, threshold)
    nan = math.nan
    if not answerable:
        precision_chunks = precision_tokens = coverage = char_recall = nan
    else:
        precision_chunks = hits / n if n else 0.0
        precision_tokens = relevant_tokens / tokens if tokens else 0.0
        if spans:
            coverage = 1 - len(spans_outside(chunks, spans, texts)) / len(spans)
            located = [c.chunk for c in chunks if c.chunk is not None]
            char_recall = token_overlap(located, spans).recall
        else:
            wanted = case.relevant_set(threshold)
            coverage = len(wanted & {c.chunk_id for c in chunks}) / len(wanted)
            char_recall = nan
    pairs = near_duplicates(chunks, duplicate_threshold)
    redundant = len({later for _, later, _ in pairs})
    stale = tuple(c.chunk_id for c in chunks if c.stale)
    return ContextMetrics(
        chunks=n,
        tokens=tokens,
        precision_chunks=precision_chunks,
        precision_tokens=precision_tokens,
        evidence_coverage=coverage,
        evidence_char_recall=char_recall,
        evidence_present=hits > 0,
        redundancy=redundant / n if n else 0.0,
        staleness=len(stale) / n if n else 0.0,
        stale_chunks=stale,
        foreign_chunks=tuple(c.chunk_id for c in chunks if c.foreign),
        duplicate_pairs=tuple(pairs),
        unknown_chunks=sum(1 for c in chunks if not c.known),
    )


def _mean(values: Iterable[float]) -> float | None:
    kept = [v for v in values if not math.isnan(v)]
    return sum(kept) / len(kept) if kept else None


def summarize_context(metrics: Sequence[tuple[bool, ContextMetrics]]) -> dict[str, Any]:
    """Means over cases: precision and coverage over answerable cases, the rest over every case given.

    ``metrics`` holds ``(answerable, ContextMetrics)`` per case that has a context.
    """
    answerable = [m for a, m in metrics if a]
    every = [m for _, m in metrics]
    tokens = sorted(m.tokens for m in every)
    return {
        "cases": len(every),
        "answerable_cases": len(answerable),
        "precision_chunks": _mean(m.precision_chunks for m in answerable),
        "precision_tokens": _mean(m.precision_tokens for m in answerable),
        "evidence_coverage": _mean(m.evidence_coverage for m in answerable),
        "evidence_char_recall": _mean(m.evidence_char_recall for m in answerable),
        "evidence_present_rate": _mean(float(m.evidence_present) for m in answerable),
        "redundancy": _mean(m.redundancy for m in every),
        "staleness": _mean(m.staleness for m in every),
        "cases_with_stale_chunks": sum(1 for m in every if m.stale_chunks),
        "cases_with_foreign_chunks": sum(1 for m in every if m.foreign_chunks),
        "tokens_mean": _mean(float(t) for t in tokens),
        "tokens_max": tokens[-1] if tokens else None,
        "tokens_total": sum(tokens),
        "unknown_chunks": sum(m.unknown_chunks for m in every),
    }
