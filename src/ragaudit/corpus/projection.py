"""Project document- and span-level labels onto a chunking, and measure span coverage.

:func:`project_case` rewrites a golden case so that its labels are chunk ids of a given chunking:

* With ``evidence`` spans: a chunk overlapping a span (``chunk.start < span.end`` and
  ``span.start < chunk.end``, same document) gets the highest grade of the spans it overlaps (a span
  without a grade counts as grade 1); ``relevant_chunk_ids`` are the chunks whose grade reaches the
  threshold, in document then chunk order. Spans replace the positive labels; grade-0 labels of
  ``relevance`` (judged non-relevant, e.g. superseded) are kept, expanded like below. A span in a
  document that has no chunks keeps its document id as the label, so the case counts a miss instead of
  silently turning unanswerable.
* Without evidence: every label is mapped on its own. An id that is already a chunk id stays as it is;
  a document id expands to all chunks of that document with the document's grade (a grade-0 document
  gives grade-0 chunks); an id that is neither stays as it is (it can never be retrieved, so it counts
  as a miss). Grade-only cases (``relevant_chunk_ids`` is ``None``) stay grade-only.
* An unanswerable case (``relevant_chunk_ids == []``) stays unanswerable.

:func:`token_overlap` measures how much of the retrieved text is evidence, on character intervals
merged per document (the literature calls it token-level IoU; characters make it independent of any
tokenizer).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Protocol

from ragaudit.corpus.model import Chunk
from ragaudit.data.schema import Evidence, GoldenCase


class Span(Protocol):
    """Anything located in a document by character offsets (a :class:`Chunk`, an :class:`Evidence`)."""

    @property
    def doc_id(self) -> str: ...

    @property
    def start(self) -> int: ...

    @property
    def end(self) -> int: ...


def group_by_doc(chunks: Iterable[Chunk]) -> dict[str, list[Chunk]]:
    """``{doc_id: [chunks in order]}``: the ``chunks_by_doc`` mapping the functions here take."""
    out: dict[str, list[Chunk]] = {}
    for chunk in chunks:
        out.setdefault(chunk.doc_id, []).append(chunk)
    return out


def _overlaps(a: Span, b: Span) -> bool:
    return a.doc_id == b.doc_id and a.start < b.end and b.start < a.end


def _expand(label: str, chunk_ids: frozenset[str], chunks_by_doc: Mapping[str, Sequence[Chunk]]) -> list[str]:
    """The chunk ids a label stands for: itself if a chunk id or unknown, else all chunks of its document."""
    if label in chunk_ids or label not in chunks_by_doc:
        return [label]
    return [c.chunk_id for c in chunks_by_doc[label]]


def _evidence_grades(case: GoldenCase, chunks_by_doc: Mapping[str, Sequence[Chunk]]) -> dict[str, int]:
    grades: dict[str, int] = {}
    for doc_id in dict.fromkeys(span.doc_id for span in case.evidence):
        if doc_id not in chunks_by_doc:
            grades[doc_id] = max(_grade(s) for s in case.evidence if s.doc_id == doc_id)
            continue
        for chunk in chunks_by_doc[doc_id]:
            hits = [_grade(s) for s in case.evidence if _overlaps(s, chunk)]
            if hits:
                grades[chunk.chunk_id] = max(hits)
    return grades


def _grade(span: Evidence) -> int:
    return 1 if span.grade is None else span.grade


def project_case(
    case: GoldenCase, chunks_by_doc: Mapping[str, Sequence[Chunk]], threshold: int = 1
) -> GoldenCase:
    """``case`` with its labels turned into chunk ids of ``chunks_by_doc`` (rules in the module docstring).

    ``threshold`` is the lowest grade that makes a chunk relevant when labels come from evidence spans.
    Evidence, query, tenant, answer, tags and line are kept.
    """
    chunk_ids = frozenset(c.chunk_id for chunks in chunks_by_doc.values() for c in chunks)
    grades: dict[str, int] = {}
    if case.evidence:
        grades = _evidence_grades(case, chunks_by_doc)
        relevant: tuple[str, ...] | None = tuple(cid for cid, g in grades.items() if g >= threshold)
        for label, grade in case.relevance.items():
            if grade == 0:
                for cid in _expand(label, chunk_ids, chunks_by_doc):
                    grades.setdefault(cid, 0)
    else:
        for label, grade in case.relevance.items():
            for cid in _expand(label, chunk_ids, chunks_by_doc):
                grades[cid] = max(grade, grades.get(cid, grade))
        relevant = None
        if case.relevant_chunk_ids is not None:
            expanded = (_expand(label, chunk_ids, chunks_by_doc) for label in case.relevant_chunk_ids)
            relevant = tuple(dict.fromkeys(cid for ids in expanded for cid in ids))
    if case.relevant_chunk_ids == ():
        relevant = ()
    return replace(case, relevant_chunk_ids=relevant, relevance=MappingProxyType(grades))


def project_cases(
    cases: Iterable[GoldenCase], chunks: Iterable[Chunk], threshold: int = 1
) -> tuple[GoldenCase, ...]:
    """:func:`project_case` for every case, grouping ``chunks`` by document once."""
    by_doc = group_by_doc(chunks)
    return tuple(project_case(case, by_doc, threshold) for case in cases)


def span_split_count(case: GoldenCase, chunks_by_doc: Mapping[str, Sequence[Chunk]]) -> int:
    """How many evidence spans are split across chunk boundaries.

    A span is split when some chunk overlaps it but no single chunk contains it
    (``chunk.start <= span.start`` and ``span.end <= chunk.end``). Spans in documents without chunks are
    not counted.
    """
    split = 0
    for span in case.evidence:
        chunks = chunks_by_doc.get(span.doc_id, ())
        touched = any(_overlaps(span, c) for c in chunks)
        contained = any(c.start <= span.start and span.end <= c.end for c in chunks)
        split += touched and not contained
    return split


def merge_intervals(intervals: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted, disjoint half-open intervals covering the same positions (touching intervals merge)."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted(i for i in intervals if i[0] < i[1]):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def _intersection_length(a: Sequence[tuple[int, int]], b: Sequence[tuple[int, int]]) -> int:
    """Length of the intersection of two sorted disjoint interval lists (two-pointer sweep)."""
    i = j = total = 0
    while i < len(a) and j < len(b):
        total += max(0, min(a[i][1], b[j][1]) - max(a[i][0], b[j][0]))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return total


def _by_doc(spans: Iterable[Span]) -> dict[str, list[tuple[int, int]]]:
    out: dict[str, list[tuple[int, int]]] = {}
    for span in spans:
        out.setdefault(span.doc_id, []).append((span.start, span.end))
    return {doc_id: merge_intervals(intervals) for doc_id, intervals in out.items()}


@dataclass(frozen=True)
class TokenOverlap:
    """Overlap of retrieved text with evidence, in characters of merged intervals."""

    precision: float
    recall: float
    iou: float
    retrieved: int
    """``|R|``: characters retrieved (overlapping chunks counted once)."""
    evidence: int
    """``|E|``: characters of evidence."""
    overlap: int
    """``|R ∩ E|``."""


def token_overlap(retrieved: Iterable[Span], evidence: Iterable[Evidence]) -> TokenOverlap:
    """Precision, recall and IoU of the retrieved context against the evidence spans.

    With ``R`` the union of the retrieved chunks' character intervals and ``E`` the union of the evidence
    spans with a grade other than 0, both per document::

        precision = |R ∩ E| / |R|      (0.0 when nothing was retrieved)
        recall    = |R ∩ E| / |E|      (NaN when there is no evidence)
        IoU       = |R ∩ E| / |R ∪ E|  (NaN when both are empty)

    where ``|R ∪ E| = |R| + |E| - |R ∩ E|``. Overlapping chunks (e.g. windows with overlap) are counted
    once, so re-retrieving the same text does not raise precision or recall.
    """
    got = _by_doc(retrieved)
    wanted = _by_doc(span for span in evidence if span.grade != 0)
    size_r = sum(b - a for intervals in got.values() for a, b in intervals)
    size_e = sum(b - a for intervals in wanted.values() for a, b in intervals)
    inter = sum(_intersection_length(got[d], wanted[d]) for d in got.keys() & wanted.keys())
    union = size_r + size_e - inter
    return TokenOverlap(
        precision=inter / size_r if size_r else 0.0,
        recall=inter / size_e if size_e else math.nan,
        iou=inter / union if union else math.nan,
        retrieved=size_r,
        evidence=size_e,
        overlap=inter,
    )
