"""Hybrid retrieval: fuse the rankings of several retrievers into one.

Two pure fusions over ranked lists of ``(chunk_id, score)`` (list order is the ranking; a repeated id
counts once, at its first position, as everywhere in ragaudit):

- :func:`rrf_fuse`, reciprocal-rank fusion: ``score(d) = Σ_i w_i / (k + rank_i(d))`` over the lists
  that hold ``d`` (``rank`` 1-based). Scores are ignored, so retrievers on different scales mix
  safely; a document absent from a list gets nothing from it.
- :func:`weighted_fuse`, a weighted sum of per-list normalised scores:
  ``score(d) = Σ_i w_i · n_i(d)``, where ``n_i`` is min-max (``(s - min) / (max - min)``) or z-score
  (``(s - mean) / std``, population std) within list ``i``. A document **absent** from list ``i``
  gets that list's lowest normalised value (0 under min-max): being beyond a retriever's depth is
  treated as being as weak as its weakest returned candidate. A z-score of 0 (the list's mean) would
  instead rank an absent document above the list's below-mean candidates. A list whose scores are
  all equal normalises to 1 under min-max (no evidence to separate them, but they were returned)
  and 0 under z-score; an empty list adds nothing.

Both return every candidate, score descending, ties by chunk id descending (trec_eval's order, the
same as :mod:`ragaudit.retrieval.bm25`); sums use ``math.fsum`` so equal contributions in another
order give bit-identical scores.

:class:`HybridRetriever` queries each sub-retriever for ``depth`` candidates concurrently, for the
same tenant, fuses, and returns the top ``top_k`` with each chunk's payload (content, source,
tenant, metadata) from the first sub-retriever that returned it, plus ``metadata["fusion"]`` with
the method, the chunk's rank and its score in every sub-list (``None`` where absent), which is what a
learned second stage (:mod:`ragaudit.retrieval.learned_fusion`) reads its features from. The tenant a
sub-retriever reported is passed through untouched, so a leak in one sub-retriever shows up in
ragaudit's tenant audit instead of being hidden by the fusion.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from typing import Any, Literal

from ragaudit.data.run import RankedItem, to_ranked_items
from ragaudit.retrieval.protocol import RetrievedChunk, Retriever
from ragaudit.retrieval.tenancy import require_tenant, require_top_k

FusionMethod = Literal["rrf", "weighted"]
Normalization = Literal["minmax", "zscore"]
RankedList = Sequence[tuple[str, float | None]]
"""A ranking as ``(chunk_id, score)`` pairs, best first; RRF ignores the scores."""


def _dedupe(ranking: RankedList) -> list[tuple[str, float | None]]:
    seen: set[str] = set()
    out: list[tuple[str, float | None]] = []
    for chunk_id, score in ranking:
        if chunk_id not in seen:
            seen.add(chunk_id)
            out.append((chunk_id, score))
    return out


def resolve_weights(weights: Sequence[float] | None, count: int) -> list[float]:
    """``weights`` checked against ``count`` lists (all 1.0 when ``None``)."""
    if weights is None:
        return [1.0] * count
    values = list(weights)
    if len(values) != count:
        raise ValueError(
            f"got {len(values)} fusion weights for {count} rankings; give one weight per retriever"
        )
    for w in values:
        if isinstance(w, bool) or not isinstance(w, (int, float)) or not math.isfinite(w) or w < 0:
            raise ValueError(f"fusion weights must be finite numbers >= 0 (got {w!r})")
    if count and not any(values):
        raise ValueError("fusion weights are all 0; at least one retriever must count")
    return [float(w) for w in values]


def _require_rrf_k(k: float) -> float:
    if isinstance(k, bool) or not isinstance(k, (int, float)) or not math.isfinite(k) or k < 0:
        raise ValueError(f"rrf_k must be a finite number >= 0 (got {k!r}); 60 is usual")
    return float(k)


def _ordered(totals: dict[str, list[float]]) -> list[tuple[str, float]]:
    fused = [(chunk_id, math.fsum(parts)) for chunk_id, parts in totals.items()]
    return sorted(fused, key=lambda pair: (pair[1], pair[0]), reverse=True)


def rrf_fuse(
    rankings: Sequence[RankedList], weights: Sequence[float] | None = None, k: float = 60.0
) -> list[tuple[str, float]]:
    """Reciprocal-rank fusion: ``score(d) = Σ_i w_i / (k + rank_i(d))``, summed over lists holding ``d``.

    ``rank_i`` is 1-based; ``k`` (60 in Cormack et al., 2009) damps the lead of the very top ranks.
    """
    k = _require_rrf_k(k)
    w = resolve_weights(weights, len(rankings))
    totals: dict[str, list[float]] = {}
    for weight, ranking in zip(w, rankings, strict=True):
        for rank, (chunk_id, _) in enumerate(_dedupe(ranking), start=1):
            totals.setdefault(chunk_id, []).append(weight / (k + rank))
    return _ordered(totals)


def normalize_scores(scores: Sequence[float], method: Normalization) -> list[float]:
    """Min-max ``(s - min) / (max - min)`` (1.0 for all when constant) or z-score ``(s - mean) / std``
    (population std; 0.0 for all when constant)."""
    if not scores:
        return []
    if method == "minmax":
        low, high = min(scores), max(scores)
        return [1.0] * len(scores) if high == low else [(s - low) / (high - low) for s in scores]
    if method == "zscore":
        mean = math.fsum(scores) / len(scores)
        std = math.sqrt(math.fsum((s - mean) ** 2 for s in scores) / len(scores))
        return [0.0] * len(scores) if std == 0 else [(s - mean) / std for s in scores]
    raise ValueError(f"unknown score normalisation {method!r}; use 'minmax' or 'zscore'")


def weighted_fuse(
    rankings: Sequence[RankedList],
    weights: Sequence[float] | None = None,
    normalize: Normalization = "minmax",
) -> list[tuple[str, float]]:
    """Weighted score fusion: ``score(d) = Σ_i w_i · n_i(d)`` with ``n_i`` the normalised score in list ``i``.

    A document absent from list ``i`` gets ``min_j n_i(j)`` (0 under min-max); an empty list adds nothing.
    Every list needs finite numeric scores.
    """
    w = resolve_weights(weights, len(rankings))
    normalized: list[dict[str, float]] = []
    for position, ranking in enumerate(rankings, start=1):
        unique = _dedupe(ranking)
        for chunk_id, score in unique:
            if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
                raise ValueError(
                    f"ranking #{position} has no finite score for {chunk_id!r} (got {score!r}); "
                    "weighted fusion needs scores, use method='rrf' (ranks only) instead"
                )
        values = normalize_scores([float(s) for _, s in unique if s is not None], normalize)
        normalized.append(dict(zip((c for c, _ in unique), values, strict=True)))
    candidates = {chunk_id for scores in normalized for chunk_id in scores}
    totals: dict[str, list[float]] = {chunk_id: [] for chunk_id in candidates}
    for weight, scores in zip(w, normalized, strict=True):
        if not scores:
            continue
        floor = min(scores.values())
        for chunk_id in candidates:
            totals[chunk_id].append(weight * scores.get(chunk_id, floor))
    return _ordered(totals)


def _as_chunk(item: RankedItem, score: float, fusion: dict[str, Any]) -> RetrievedChunk:
    metadata: dict[str, Any] = dict(item.metadata or {})
    metadata["fusion"] = fusion
    out: RetrievedChunk = {
        "chunk_id": item.chunk_id,
        "score": score,
        "content": item.content or "",
        "source_id": item.source_id or "",
        "metadata": metadata,
    }
    if item.tenant_id is not None:
        out["tenant_id"] = item.tenant_id
    return out


class HybridRetriever:
    """Fuses several :class:`~ragaudit.retrieval.protocol.Retriever` s (see the module docstring)."""

    def __init__(
        self,
        retrievers: Sequence[Retriever],
        method: FusionMethod = "rrf",
        weights: Sequence[float] | None = None,
        rrf_k: float = 60.0,
        normalize: Normalization = "minmax",
        depth: int = 100,
    ) -> None:
        if not retrievers:
            raise ValueError("HybridRetriever needs at least one retriever to fuse")
        if method not in ("rrf", "weighted"):
            raise ValueError(f"unknown fusion method {method!r}; use 'rrf' or 'weighted'")
        if normalize not in ("minmax", "zscore"):
            raise ValueError(f"unknown score normalisation {normalize!r}; use 'minmax' or 'zscore'")
        self.retrievers = tuple(retrievers)
        self.method: FusionMethod = method
        self.weights = resolve_weights(weights, len(self.retrievers))
        self.rrf_k = _require_rrf_k(rrf_k)
        self.normalize: Normalization = normalize
        self.depth = require_top_k(depth)

    def fuse(self, rankings: Sequence[RankedList]) -> list[tuple[str, float]]:
        """Fuse rankings with this retriever's method and parameters."""
        if self.method == "rrf":
            return rrf_fuse(rankings, self.weights, self.rrf_k)
        return weighted_fuse(rankings, self.weights, self.normalize)

    async def search(self, *, tenant_id: str, query: str, top_k: int) -> list[RetrievedChunk]:
        """Query every sub-retriever for the same tenant (``max(depth, top_k)`` each), fuse, cut to ``top_k``."""
        tenant = require_tenant(tenant_id)
        k = require_top_k(top_k)
        depth = max(self.depth, k)
        raw = await asyncio.gather(
            *(r.search(tenant_id=tenant, query=query, top_k=depth) for r in self.retrievers)
        )
        return self.fuse_results(list(raw), k)

    @property
    def batchable(self) -> bool:
        """Whether :meth:`search_many` can serve: every sub-retriever has a ``search_many`` of its own."""
        return all(callable(getattr(r, "search_many", None)) for r in self.retrievers)

    def search_many(self, tenant_id: str, queries: Sequence[str], top_k: int) -> list[list[RetrievedChunk]]:
        """Batch form of :meth:`search` over sub-retrievers that batch (see :attr:`batchable`): each is
        asked once for all ``queries``, then every query's lists are fused exactly as :meth:`search` does."""
        tenant = require_tenant(tenant_id)
        k = require_top_k(top_k)
        if not self.batchable:
            raise TypeError("a sub-retriever has no search_many; use search")
        depth = max(self.depth, k)
        per_retriever = [r.search_many(tenant, queries, depth) for r in self.retrievers]  # type: ignore[attr-defined]
        return [self.fuse_results([lists[i] for lists in per_retriever], k) for i in range(len(queries))]

    def fuse_results(self, raw: Sequence[Any], k: int) -> list[RetrievedChunk]:
        """Fuse one query's result lists (one per sub-retriever, as their ``search`` returned them) and
        cut to ``k``: what :meth:`search` returns for them."""
        lists = [to_ranked_items(results) for results in raw]
        payload: dict[str, RankedItem] = {}
        ranks: list[dict[str, int]] = []
        scores: list[dict[str, float | None]] = []
        for items in lists:
            rank_of: dict[str, int] = {}
            score_of: dict[str, float | None] = {}
            for item in items:
                payload.setdefault(item.chunk_id, item)
                if item.chunk_id not in rank_of:
                    rank_of[item.chunk_id] = len(rank_of) + 1
                    score_of[item.chunk_id] = item.score
            ranks.append(rank_of)
            scores.append(score_of)
        fused = self.fuse([[(it.chunk_id, it.score) for it in items] for items in lists])
        return [
            _as_chunk(
                payload[chunk_id],
                score,
                {
                    "method": self.method,
                    "ranks": [rank_of.get(chunk_id) for rank_of in ranks],
                    "scores": [score_of.get(chunk_id) for score_of in scores],
                },
            )
            for chunk_id, score in fused[:k]
        ]
