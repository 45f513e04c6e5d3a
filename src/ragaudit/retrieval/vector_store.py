"""Vector stores: the small interface the dense retriever searches, and the exact in-process store.

A store holds chunks with their embeddings, **partitioned by tenant**: a search names one tenant and
only ever reads that tenant's vectors (it never ranks across tenants and filters afterwards). An
unknown tenant has no partition and gets empty results.

:class:`ExactVectorStore` keeps one float32 matrix per tenant and scores each query with its own
matrix-vector product (inner product; the embedder's vectors are unit length, so this is cosine
similarity), then selects the top k with ``argpartition``. One product per query, not one matrix
product per batch: a matrix product's blocking depends on how many queries it holds, which moved
scores by about 1e-7 between a query searched alone and in a batch; per query, a query's scores are
the same bytes whichever batch it comes in (issue 23.2). Equal scores are ordered by chunk id descending
(trec_eval's order, as in the ``bm25`` retriever and fusion), so equal inputs always give the same
ranking and a ranking written to a run file reads back in the same order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from ragaudit.corpus.model import Chunk

QUERY_BLOCK = 256
"""Queries scored per block (bounds memory at ``QUERY_BLOCK x tenant size`` floats)."""


@dataclass(frozen=True)
class Hit:
    """One search result: the stored chunk and its score (higher is better)."""

    chunk: Chunk
    score: float


@runtime_checkable
class VectorStore(Protocol):
    """Tenant-partitioned storage of chunk embeddings."""

    def add(self, chunks: Sequence[Chunk], vectors: npt.NDArray[np.float32]) -> None:
        """Store ``chunks`` with their embeddings (row i for chunk i); a stored ``(tenant, chunk_id)`` is replaced."""
        ...

    def search_many(
        self,
        tenant_id: str,
        vectors: npt.NDArray[np.float32],
        top_k: int,
        *,
        texts: Sequence[str] | None = None,
    ) -> list[list[Hit]]:
        """The ``top_k`` best hits of ``tenant_id`` for each query vector (row), best first.

        ``texts`` are the query strings, for stores that also match words (hybrid); others ignore them.
        """
        ...

    def tenants(self) -> list[str]:
        """The tenants that own at least one stored chunk."""
        ...


class _Partition:
    """One tenant's chunks and matrix, rows sorted by chunk id descending (the tie order)."""

    def __init__(self) -> None:
        self.rows: dict[str, tuple[Chunk, npt.NDArray[np.float32]]] = {}
        self.chunks: list[Chunk] = []
        self.matrix: npt.NDArray[np.float32] = np.zeros((0, 0), dtype=np.float32)
        self.dirty = False

    def freeze(self) -> None:
        if not self.dirty:
            return
        ordered = sorted(self.rows, reverse=True)
        self.chunks = [self.rows[cid][0] for cid in ordered]
        self.matrix = np.ascontiguousarray(np.stack([self.rows[cid][1] for cid in ordered]), dtype=np.float32)
        self.dirty = False


def top_k_rows(scores: npt.NDArray[np.float32], k: int) -> list[npt.NDArray[np.intp]]:
    """Per row of ``scores``, the column indexes of the ``k`` largest values, best first.

    Ties go to the lower column index (the store's columns are in tie order), including ties at the
    k-th place: every column tied with the k-th score is considered before the cut.
    """
    n = scores.shape[1]
    if k >= n:
        order = np.argsort(-scores, axis=1, kind="stable")
        return [order[i] for i in range(scores.shape[0])]
    part = np.argpartition(-scores, k - 1, axis=1)[:, :k]
    kth = np.take_along_axis(scores, part, axis=1).min(axis=1)
    result = []
    for i in range(scores.shape[0]):
        row = scores[i]
        candidates = np.flatnonzero(row >= kth[i])
        order = candidates[np.argsort(-row[candidates], kind="stable")]
        result.append(order[:k])
    return result


class ExactVectorStore:
    """Exact inner-product search in process memory, one matrix per tenant."""

    def __init__(self) -> None:
        self._partitions: dict[str, _Partition] = {}
        self.dim: int | None = None

    def add(self, chunks: Sequence[Chunk], vectors: npt.NDArray[np.float32]) -> None:
        matrix = np.asarray(vectors, dtype=np.float32)
        if matrix.ndim != 2 or matrix.shape[0] != len(chunks):
            raise ValueError(f"expected {len(chunks)} vectors as rows of a matrix, got shape {matrix.shape}")
        if len(chunks) == 0:
            return
        if self.dim is None:
            self.dim = int(matrix.shape[1])
        elif matrix.shape[1] != self.dim:
            raise ValueError(f"vectors have {matrix.shape[1]} dimensions, the store holds {self.dim}")
        for chunk, vector in zip(chunks, matrix, strict=True):
            part = self._partitions.setdefault(chunk.tenant_id, _Partition())
            part.rows[chunk.chunk_id] = (chunk, vector)
            part.dirty = True

    def tenants(self) -> list[str]:
        return sorted(self._partitions)

    def __len__(self) -> int:
        return sum(len(p.rows) for p in self._partitions.values())

    def search_many(
        self,
        tenant_id: str,
        vectors: npt.NDArray[np.float32],
        top_k: int,
        *,
        texts: Sequence[str] | None = None,
    ) -> list[list[Hit]]:
        queries = np.asarray(vectors, dtype=np.float32)
        if queries.ndim != 2:
            raise ValueError(f"query vectors must be a matrix (one row per query), got shape {queries.shape}")
        part = self._partitions.get(tenant_id)
        if part is None or not part.rows:
            return [[] for _ in range(queries.shape[0])]
        part.freeze()
        if queries.shape[1] != part.matrix.shape[1]:
            raise ValueError(f"query vectors have {queries.shape[1]} dimensions, the store holds {self.dim}")
        results: list[list[Hit]] = []
        for start in range(0, queries.shape[0], QUERY_BLOCK):
            block = queries[start : start + QUERY_BLOCK]
            scores = np.empty((block.shape[0], part.matrix.shape[0]), dtype=np.float32)
            for row, query in enumerate(block):
                np.matmul(part.matrix, query, out=scores[row])  # the same call alone or in a batch
            for i, columns in enumerate(top_k_rows(scores, top_k)):
                results.append([Hit(part.chunks[c], float(scores[i, c])) for c in columns])
        return results
