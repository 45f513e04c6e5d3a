"""Remember query vectors for a job that asks the same queries many times (the tenant audit).

A tenant audit asks each probe as its owner, as every other tenant, as hostile ids, under several
``top_k`` values and rounds: on the demo knowledge base 3,490 dense queries hold 141 distinct texts.
:class:`QueryMemo` wraps a model and embeds each distinct text once; later asks are served from a
bounded least-recently-used table (``hits`` / ``misses`` count them).

It is **opt-in and explicit**: a :class:`~ragaudit.retrieval.dense.DenseRetriever` embeds every query
with the model (its module docstring says why: latency figures in eval and bench stay honest) until
:meth:`~ragaudit.retrieval.dense.DenseRetriever.remember_queries` installs a memo;
:func:`remember_queries_in` does that for the dense parts of a composed retriever until its
``forget()``, which restores what was there. Only the tenant audit uses it.

It is **exact** for a batch-invariant model: the ONNX backends (the default ``onnx-int8`` included)
give every text bit-identical vectors alone or in any batch (:mod:`ragaudit.retrieval.embedder_onnx`),
so a remembered vector is the vector the model would compute again, and every ranking is unchanged.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ragaudit.retrieval.embedding_types import FloatMatrix, TextEncoder

DEFAULT_QUERY_MEMO = 4096
"""Distinct query texts a memo keeps (a tenant audit asks a few hundred; a vector is 1.5 KB at dim 384)."""


class QueryMemo:
    """A :class:`~ragaudit.retrieval.embedding_types.TextEncoder` that embeds each distinct text once
    through ``encoder`` and keeps at most ``limit`` vectors (least recently used dropped first)."""

    def __init__(self, encoder: TextEncoder, limit: int = DEFAULT_QUERY_MEMO) -> None:
        if limit < 1:
            raise ValueError(f"a query memo keeps at least one vector (got limit={limit})")
        self.encoder = encoder
        self.limit = limit
        self.hits = 0
        self.misses = 0
        self._vectors: OrderedDict[str, FloatMatrix] = OrderedDict()

    @property
    def fingerprint(self) -> str:
        return self.encoder.fingerprint

    @property
    def dim(self) -> int:
        return self.encoder.dim

    def __len__(self) -> int:
        return len(self._vectors)

    def encode(self, texts: Sequence[str]) -> FloatMatrix:
        """Row i embeds ``texts[i]``: remembered rows copied, the other distinct texts embedded in one batch."""
        texts = list(texts)
        missing = list(dict.fromkeys(t for t in texts if t not in self._vectors))
        fresh: dict[str, FloatMatrix] = {}
        if missing:
            embedded = np.asarray(self.encoder.encode(missing), dtype=np.float32)
            fresh = {text: embedded[i].copy() for i, text in enumerate(missing)}
        rows: list[FloatMatrix] = []
        for text in texts:
            vector = fresh.get(text)
            if vector is None:
                vector = self._vectors[text]
                self._vectors.move_to_end(text)
            rows.append(vector)
        self.misses += len(missing)
        self.hits += len(texts) - len(missing)
        for text, vector in fresh.items():
            self._vectors[text] = vector
        while len(self._vectors) > self.limit:
            self._vectors.popitem(last=False)
        if not rows:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack(rows).astype(np.float32, copy=False)

    def info(self) -> dict[str, int]:
        return {"hits": self.hits, "misses": self.misses, "kept": len(self._vectors), "limit": self.limit}


def dense_parts(retriever: object) -> Iterator[Any]:
    """The retrievers inside ``retriever`` that can remember queries: itself, the parts of a hybrid
    (``.retrievers``) and what a wrapper wraps (``.base``), as :func:`ragaudit.pipelines.build.embedding_counts`
    walks them."""
    seen: set[int] = set()
    pending: list[object] = [retriever]
    while pending:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if callable(getattr(current, "remember_queries", None)):
            yield current
        parts = getattr(current, "retrievers", None)
        if isinstance(parts, tuple):
            pending.extend(parts)
        inner = getattr(current, "base", None)
        if inner is not None:
            pending.append(inner)


@dataclass
class RememberedQueries:
    """The memos :func:`remember_queries_in` installed, and how to remove them."""

    parts: list[Any]
    memos: list[QueryMemo]

    def forget(self) -> None:
        """Each part embeds queries with its model again, as before."""
        for part in self.parts:
            part.forget_queries()


def remember_queries_in(retriever: object, limit: int = DEFAULT_QUERY_MEMO) -> RememberedQueries:
    """Every dense part of ``retriever`` remembers its query vectors until ``forget()`` is called on
    the result (a part that already remembered queries keeps its memo and is left alone)."""
    parts = [
        p for p in dense_parts(retriever) if not isinstance(getattr(p, "query_encoder", None), QueryMemo)
    ]
    return RememberedQueries(parts, [part.remember_queries(limit) for part in parts])
