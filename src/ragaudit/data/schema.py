"""Typed schema of a golden dataset (the lesson's JSONL, extended).

One case per line::

    {"id": "pricing-001", "query": "...", "tenant_id": "acme",
     "relevant_chunk_ids": ["pricing-professional-v3"],
     "relevance": {"pricing-professional-v3": 3, "pricing-starter-v2": 1, "marketing-brochure-v1": 0},
     "evidence": [{"doc_id": "pricing-professional", "start": 120, "end": 310, "grade": 3}],
     "answer": "50,000 calls per month", "tags": ["pricing"]}

Grades: 3 authoritative and complete, 2 relevant and helpful, 1 related but not sufficient,
0 judged irrelevant or superseded. ``relevant_chunk_ids: []`` marks an unanswerable probe.
Binary relevance comes from ``relevant_chunk_ids``; where a case gives only grades, from the grades
at or above the policy's threshold. A relevant id without a grade has grade 1.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType


@dataclass(frozen=True)
class Evidence:
    """A labelled span of a source document: ``text[start:end]`` of ``doc_id`` supports the answer."""

    doc_id: str
    start: int
    end: int
    grade: int | None = None


@dataclass(frozen=True)
class GoldenCase:
    """One query with its judgments."""

    id: str
    query: str
    relevant_chunk_ids: tuple[str, ...] | None
    """Explicit binary labels; ``None`` when only grades were given (then the threshold decides)."""
    relevance: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    tenant_id: str | None = None
    evidence: tuple[Evidence, ...] = ()
    answer: str | None = None
    tags: tuple[str, ...] = ()
    line: int | None = None

    def relevant_set(self, threshold: int = 1) -> frozenset[str]:
        """The binary relevant set under a grade threshold (used only when no explicit ids exist)."""
        if self.relevant_chunk_ids is not None:
            return frozenset(self.relevant_chunk_ids)
        return frozenset(d for d, g in self.relevance.items() if g >= threshold)

    def grades(self) -> dict[str, int]:
        """Grades for graded metrics: the given ones, plus grade 1 for relevant ids left ungraded."""
        out = dict(self.relevance)
        for doc_id in self.relevant_chunk_ids or ():
            out.setdefault(doc_id, 1)
        return out

    def is_answerable(self, threshold: int = 1) -> bool:
        return bool(self.relevant_set(threshold))

    def to_json(self) -> dict[str, object]:
        """The case as a JSON object in the golden JSONL format."""
        out: dict[str, object] = {"id": self.id, "query": self.query}
        if self.tenant_id is not None:
            out["tenant_id"] = self.tenant_id
        if self.relevant_chunk_ids is not None:
            out["relevant_chunk_ids"] = list(self.relevant_chunk_ids)
        out["relevance"] = dict(self.relevance)
        if self.evidence:
            out["evidence"] = [
                {
                    "doc_id": e.doc_id,
                    "start": e.start,
                    "end": e.end,
                    **({"grade": e.grade} if e.grade is not None else {}),
                }
                for e in self.evidence
            ]
        if self.answer is not None:
            out["answer"] = self.answer
        if self.tags:
            out["tags"] = list(self.tags)
        return out


@dataclass(frozen=True)
class Dataset:
    """A loaded golden dataset with where it came from."""

    cases: tuple[GoldenCase, ...]
    path: str
    sha256: str
    format: str
    skipped: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    """Input records deliberately left out, by reason (e.g. BEIR queries without judgments)."""
    notes: tuple[str, ...] = ()
    """How unusual input was read (negative TREC grades, pairs judged twice), one line each."""

    def __len__(self) -> int:
        return len(self.cases)

    def by_id(self) -> dict[str, GoldenCase]:
        return {c.id: c for c in self.cases}

    def info(self) -> dict[str, object]:
        return {
            "path": self.path,
            "sha256": self.sha256,
            "format": self.format,
            "cases": len(self.cases),
            "skipped": dict(self.skipped),
        }
