"""Assemble the context a generator sees: the top-k retrieved chunks after dedupe and a token budget.

Rules, in order:

1. **Dedupe**: a chunk id seen earlier in the ranking is dropped (the metrics' first-occurrence policy).
2. **Top-k**: the first ``k`` distinct chunks are considered.
3. **Token budget** (optional): chunks are added in rank order while the running total stays within
   ``token_budget``; the first chunk that does not fit ends the context (no skipping ahead to smaller
   ones, as a prompt builder that truncates would do). A first chunk larger than the budget leaves the
   context empty, and the report says how many chunks the budget dropped.

A chunk's text is what a prompt would hold: its title, a newline, its text (``Chunk.index_text``).
Texts come from the corpus: :class:`ChunkLookup` knows the chunks of a chunking and, for any id that is
a document id, the whole document. An id it does not know stays in the context with empty text and
``known = False`` (counted, never silently dropped).

When the user's generator reports the chunks it actually used (``context_chunk_ids`` in the answers
file), those ids are the context as given: deduped, but neither cut to ``k`` nor budgeted.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from ragaudit.context.tokens import TokenCounter
from ragaudit.corpus.chunkers import chunk_corpus, make_chunker
from ragaudit.corpus.loading import Corpus
from ragaudit.corpus.model import Chunk, whole_document_chunk
from ragaudit.data.schema import GoldenCase

ContextSource = Literal["retrieved", "answers"]


class ChunkLookup:
    """Chunk id -> :class:`Chunk` for one chunking of a corpus (document ids resolve to whole documents)."""

    def __init__(
        self, chunks: Iterable[Chunk], corpus: Corpus | None = None, chunking: str = "whole"
    ) -> None:
        self._chunks = {c.chunk_id: c for c in chunks}
        self._corpus = corpus
        self.chunking = chunking
        """How the chunks were made, e.g. ``whole`` or ``recursive:256:0`` (reported)."""

    @classmethod
    def for_corpus(
        cls, corpus: Corpus, strategy: str = "whole", size: int = 256, overlap: int = 0
    ) -> ChunkLookup:
        """Chunk ``corpus`` the way a pipeline would (``whole`` keeps documents whole)."""
        if strategy == "whole":
            return cls((), corpus, "whole")
        chunks = chunk_corpus(corpus, make_chunker(strategy, size, overlap))
        return cls(chunks, corpus, f"{strategy}:{size}:{overlap}")

    @property
    def chunks(self) -> list[Chunk]:
        """Every chunk of the chunking (whole documents when the chunking is ``whole``)."""
        if self._chunks or self._corpus is None:
            return list(self._chunks.values())
        return [whole_document_chunk(d) for d in self._corpus.documents]

    def get(self, chunk_id: str) -> Chunk | None:
        chunk = self._chunks.get(chunk_id)
        if chunk is None and self._corpus is not None:
            doc = self._corpus.by_id.get(chunk_id)
            chunk = whole_document_chunk(doc) if doc is not None else None
        return chunk


@dataclass(frozen=True)
class ContextChunk:
    """One chunk of an assembled context, with what the case's labels say about it."""

    chunk_id: str
    rank: int
    """1-based position in the retrieved list (or in the answer's context list)."""
    chunk: Chunk | None
    """The corpus chunk; ``None`` when the id is unknown to the corpus and chunking."""
    tokens: int
    score: float | None = None
    grade: int | None = None
    relevant: bool = False
    case_tenant: str | None = None

    @property
    def known(self) -> bool:
        return self.chunk is not None

    @property
    def text(self) -> str:
        return self.chunk.index_text if self.chunk is not None else ""

    @property
    def superseded(self) -> bool:
        return self.chunk is not None and self.chunk.metadata.get("status") == "superseded"

    @property
    def stale(self) -> bool:
        """A stale version: superseded in the corpus (``metadata.status``). A chunk judged grade 0 for the
        case is not stale for that alone: on a golden set with complete judgments most chunks are graded
        0 because they are about something else (see :attr:`judged_irrelevant`)."""
        return self.superseded

    @property
    def judged_irrelevant(self) -> bool:
        """Graded 0 for this case (judged irrelevant, or an obsolete version the corpus does not mark)."""
        return self.grade == 0

    @property
    def foreign(self) -> bool:
        """Owned by another tenant than the case's (a tenant leak reaching the prompt)."""
        return (
            self.chunk is not None
            and self.case_tenant is not None
            and self.chunk.tenant_id != self.case_tenant
        )

    @property
    def bad(self) -> bool:
        """Stale, judged irrelevant (grade 0) or foreign: a chunk an answer must not follow."""
        return self.stale or self.judged_irrelevant or self.foreign


@dataclass(frozen=True)
class AssembledContext:
    """The context of one case."""

    chunks: tuple[ContextChunk, ...]
    source: ContextSource = "retrieved"
    dropped_duplicates: int = 0
    dropped_by_budget: int = 0
    beyond_k: int = 0
    """Distinct retrieved chunks past the first ``k`` (not considered)."""

    @property
    def tokens(self) -> int:
        return sum(c.tokens for c in self.chunks)

    @property
    def chunk_ids(self) -> list[str]:
        return [c.chunk_id for c in self.chunks]

    def prompt_text(self) -> str:
        """The chunks numbered as a generator would receive them."""
        return "\n\n".join(f"[{i}] {c.text}" for i, c in enumerate(self.chunks, start=1))

    def info(self) -> dict[str, object]:
        return {
            "source": self.source,
            "chunk_ids": self.chunk_ids,
            "tokens": self.tokens,
            "dropped_duplicates": self.dropped_duplicates,
            "dropped_by_budget": self.dropped_by_budget,
            "unknown_chunks": sum(1 for c in self.chunks if not c.known),
        }


def assemble_context(
    ranked: Sequence[tuple[str, float | None]],
    case: GoldenCase,
    lookup: ChunkLookup,
    counter: TokenCounter,
    *,
    k: int | None = 5,
    token_budget: int | None = None,
    threshold: int = 1,
    source: ContextSource = "retrieved",
) -> AssembledContext:
    """The context for ``case`` from ``ranked`` ``(chunk_id, score)`` pairs (rules in the module docstring).

    ``case`` must carry labels in the ids of ``lookup``'s chunking (project them first for chunked
    corpora). ``k=None`` and ``token_budget=None`` mean no cut.
    """
    if k is not None and k <= 0:
        raise ValueError(f"k must be a positive integer (got {k})")
    if token_budget is not None and token_budget <= 0:
        raise ValueError(f"token_budget must be a positive integer (got {token_budget})")
    seen: set[str] = set()
    distinct: list[tuple[int, str, float | None]] = []
    for rank, (chunk_id, score) in enumerate(ranked, start=1):
        if chunk_id not in seen:
            seen.add(chunk_id)
            distinct.append((rank, chunk_id, score))
    duplicates = len(ranked) - len(distinct)
    considered = distinct if k is None else distinct[:k]
    grades: Mapping[str, int] = case.grades()
    relevant = case.relevant_set(threshold)
    chunks: list[ContextChunk] = []
    total = 0
    dropped = 0
    for position, (rank, chunk_id, score) in enumerate(considered):
        chunk = lookup.get(chunk_id)
        tokens = counter.count(chunk.index_text) if chunk is not None else 0
        if token_budget is not None and total + tokens > token_budget:
            dropped = len(considered) - position
            break
        total += tokens
        chunks.append(
            ContextChunk(
                chunk_id,
                rank,
                chunk,
                tokens,
                score,
                grades.get(chunk_id),
                chunk_id in relevant,
                case.tenant_id,
            )
        )
    return AssembledContext(tuple(chunks), source, duplicates, dropped, len(distinct) - len(considered))
