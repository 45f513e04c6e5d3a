"""Second-stage reranking: rescore a first-stage retriever's candidates with a stronger model.

:class:`RerankRetriever` is itself a :class:`~ragaudit.retrieval.protocol.Retriever`. For a search it

1. refuses a request without a usable tenant (:func:`~ragaudit.retrieval.tenancy.require_tenant`)
   before anything is queried;
2. asks the base retriever for ``max(top_n, top_k)`` candidates **with the caller's tenant, unchanged**;
3. sends the query and the first ``top_n`` candidates' texts (``title`` + newline + ``content``, as the
   indexes see them) to the :class:`Reranker`, which returns one score per text (it sees texts only,
   never ids or tenants, and cannot add candidates);
4. returns the reranked candidates by the new score, descending (the sort is stable: equal new scores
   keep their first-stage order), followed — when ``top_k > top_n`` — by the remaining candidates in
   first-stage order with scores continuing downward from the lowest reranked score, cut to ``top_k``.
   So ``top_n = 30`` means 30 reranked candidates whatever the run's depth.

Each returned chunk is the base's chunk (``chunk_id``, ``content``, ``source_id``, ``tenant_id`` and
metadata unchanged) with ``score`` replaced by the reranker's score and two metadata keys added for
reranker evaluation (before/after metrics, the oracle ceiling of the candidate set):

- ``first_stage_rank``: 1-based position in the base's list;
- ``first_stage_score``: the base's score (``None`` when it gave none).

A reranker that scores from the first stage's evidence as well as the text (the learned fusion stage,
:mod:`ragaudit.retrieval.learned_fusion`) implements :class:`CandidateReranker` too: it then gets
``score_candidates(query, candidates)`` with one :class:`Candidate` per text (the text, title and
content, the first-stage rank and score, and the chunk's metadata, which holds a hybrid first stage's
per-retriever ranks and scores), still without chunk ids or tenants.

The reranker neither widens nor narrows tenant scope: whatever the base returned is what gets
reordered (a foreign chunk the base leaked stays visible to the tenant-leakage audit).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from ragaudit.retrieval.protocol import RetrievedChunk, Retriever
from ragaudit.retrieval.tenancy import require_tenant, require_top_k


@runtime_checkable
class Reranker(Protocol):
    """Scores how well each text answers a query; higher is better. One score per text, in order."""

    @property
    def name(self) -> str:
        """Identifies the reranker (type and model) in reports."""
        ...

    async def score(self, query: str, texts: Sequence[str]) -> list[float]:
        """One finite score per text of ``texts``, in the same order."""
        ...


@dataclass(frozen=True)
class Candidate:
    """What a :class:`CandidateReranker` sees of one first-stage candidate (no chunk id, no tenant)."""

    text: str
    """``title`` + newline + ``content`` (the content alone without a title), as :meth:`Reranker.score` gets it."""
    title: str
    content: str
    rank: int
    """1-based position in the first stage's list."""
    score: float | None
    metadata: Mapping[str, Any]
    """The chunk's metadata: the document's (``version``, ``status``, ``source_id``, ...) and, behind a
    hybrid first stage, ``fusion`` with every sub-retriever's rank and score."""


@runtime_checkable
class CandidateReranker(Reranker, Protocol):
    """A :class:`Reranker` that also reads the first stage's evidence about each candidate."""

    async def score_candidates(self, query: str, candidates: Sequence[Candidate]) -> list[float]:
        """One finite score per candidate, in the same order."""
        ...


def check_scores(scores: object, expected: int, reranker: str) -> list[float]:
    """``scores`` as a list of ``expected`` finite floats; a clear error naming the reranker otherwise."""
    wrong = TypeError(f"reranker {reranker!r} returned {type(scores).__name__}, expected a list of numbers")
    if isinstance(scores, (str, bytes, Mapping)) or not isinstance(scores, Iterable):
        raise wrong
    try:
        values = [float(s) for s in scores]
    except (TypeError, ValueError):
        raise wrong from None
    if len(values) != expected:
        raise ValueError(f"reranker {reranker!r} returned {len(values)} scores for {expected} candidates")
    bad = [i for i, v in enumerate(values) if not math.isfinite(v)]
    if bad:
        raise ValueError(f"reranker {reranker!r} returned a non-finite score for candidate #{bad[0] + 1}")
    return values


def candidate(chunk: object, position: int) -> Candidate:
    """The :class:`Candidate` view of the first stage's result #``position`` (1-based)."""
    if not isinstance(chunk, Mapping):
        raise TypeError(f"first-stage result #{position} is {type(chunk).__name__}, expected a chunk dict")
    content = chunk.get("content")
    if not isinstance(content, str):
        raise ValueError(
            f"first-stage result #{position} ({chunk.get('chunk_id')!r}) has no 'content' text; "
            "a reranker scores the chunk text, so the base retriever must return it"
        )
    raw_metadata = chunk.get("metadata")
    metadata: Mapping[str, Any] = raw_metadata if isinstance(raw_metadata, Mapping) else {}
    raw_title = metadata.get("title")
    title = raw_title if isinstance(raw_title, str) else ""
    score = chunk.get("score")
    return Candidate(
        f"{title}\n{content}" if title else content,
        title,
        content,
        position,
        float(score) if isinstance(score, (int, float)) and not isinstance(score, bool) else None,
        metadata,
    )


async def rerank_scores(reranker: Reranker, query: str, candidates: Sequence[Candidate]) -> list[float]:
    """The reranker's checked scores for ``candidates``: from ``score_candidates`` when it has one,
    else from ``score`` over the texts."""
    if isinstance(reranker, CandidateReranker):
        raw = await reranker.score_candidates(query, candidates)
    else:
        raw = await reranker.score(query, [c.text for c in candidates])
    return check_scores(raw, len(candidates), reranker.name)


class RerankRetriever:
    """Rerank the top ``top_n`` candidates of ``base`` with ``reranker`` (see the module docstring)."""

    def __init__(self, base: Retriever, reranker: Reranker, top_n: int = 50) -> None:
        self.base = base
        self.reranker = reranker
        self.top_n = require_top_k(top_n)

    def info(self) -> dict[str, Any]:
        """What a report records about this stage."""
        return {"stage": "rerank", "reranker": self.reranker.name, "top_n": self.top_n}

    async def search(self, *, tenant_id: str, query: str, top_k: int) -> list[RetrievedChunk]:
        tenant = require_tenant(tenant_id)
        k = require_top_k(top_k)
        candidates = list(await self.base.search(tenant_id=tenant, query=query, top_k=max(self.top_n, k)))
        if not candidates:
            return []
        head = candidates[: self.top_n]
        views = [candidate(c, i) for i, c in enumerate(head, start=1)]
        scores = await rerank_scores(self.reranker, query, views)
        order = sorted(range(len(head)), key=lambda i: -scores[i])
        reranked = [_rescored(head[i], scores[i], i + 1) for i in order]
        floor = min(scores)
        tail = [
            _rescored(c, floor - j, self.top_n + j) for j, c in enumerate(candidates[self.top_n :], start=1)
        ]
        return (reranked + tail)[:k]


def _rescored(chunk: RetrievedChunk, score: float, first_rank: int) -> RetrievedChunk:
    metadata: dict[str, Any] = dict(chunk.get("metadata") or {})
    metadata["first_stage_rank"] = first_rank
    metadata["first_stage_score"] = chunk.get("score")
    out: RetrievedChunk = chunk.copy()
    out["score"] = score
    out["metadata"] = metadata
    return out
