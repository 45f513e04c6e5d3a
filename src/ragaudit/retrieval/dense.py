"""Dense retrieval: embed chunks once (through the on-disk cache), search a tenant-partitioned store.

::

    retriever = DenseRetriever.from_chunks(chunks)                        # exact in-process store
    retriever = DenseRetriever.from_chunks(chunks, store="qdrant", hybrid=True)   # Qdrant, dense + BM25
    hits = await retriever.search(tenant_id="acme", query="refund window", top_k=5)
    batches = retriever.search_many("acme", ["q1", "q2"], top_k=5)      # sync, one embedding batch

Every request names its tenant: ``require_tenant`` refuses ``None`` / empty / whitespace before
anything is read, and the store only ever ranks that tenant's chunks (an unknown tenant gets ``[]``).

Concurrent ``search`` calls on one event loop are batched: requests that arrive while a batch is
being served are embedded and searched together in the next one (per tenant and ``top_k``), on a
worker thread so the loop stays free. ``timings`` records corpus embedding, index build, query
embedding and search seconds.

Queries are embedded by the model itself, not through the on-disk cache: the cache holds the corpus,
and a query's latency is then the same on the first run and the tenth, and the same for ``dense``
and for the dense half of ``hybrid`` (which would otherwise find the queries ``dense`` embedded).
``info()["cache"]`` counts the corpus texts served from the cache (``hits``) and embedded (``misses``).
A job that asks the same queries many times (the tenant audit) may opt in to remembering query
vectors in memory for its length (:meth:`DenseRetriever.remember_queries`,
:mod:`ragaudit.retrieval.query_memo`); nothing else does.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

from ragaudit.corpus.model import Chunk
from ragaudit.retrieval.embedder import Embedder, TextEncoder
from ragaudit.retrieval.embedding_cache import EmbeddingCache
from ragaudit.retrieval.protocol import RetrievedChunk, chunk_result
from ragaudit.retrieval.query_memo import DEFAULT_QUERY_MEMO, QueryMemo
from ragaudit.retrieval.tenancy import require_tenant, require_top_k
from ragaudit.retrieval.vector_store import ExactVectorStore, VectorStore

StoreKind = Literal["exact", "qdrant"]
_Request = tuple[str, str, int, "asyncio.Future[list[RetrievedChunk]]"]


def make_encoder(
    model: str | Path | TextEncoder | None = None,
    cache: bool | str | Path | EmbeddingCache = True,
    *,
    backend: str | None = None,
    progress: bool | None = None,
) -> TextEncoder:
    """An encoder for ``model`` (``None`` = the packaged all-MiniLM-L6-v2, a local folder, or an encoder)
    run by ``backend`` (see :class:`~ragaudit.retrieval.embedder.Embedder`), wrapped in the on-disk
    cache unless ``cache=False`` (``cache`` may name the cache file or folder)."""
    if isinstance(cache, EmbeddingCache):
        return cache
    base: TextEncoder = (
        Embedder(model, backend=backend) if model is None or isinstance(model, (str, Path)) else model
    )
    if isinstance(base, EmbeddingCache) or cache is False:
        return base
    return EmbeddingCache(base, None if cache is True else cache, progress=progress)


def make_store(store: StoreKind | VectorStore, **options: Any) -> VectorStore:
    """A vector store by name (``exact`` or ``qdrant``, with the Qdrant store's options) or as given."""
    if not isinstance(store, str):
        if options:
            raise ValueError(f"store options {sorted(options)} only apply when the store is named")
        return store
    if store == "exact":
        if options:
            raise ValueError(f"the exact store takes no options (got {sorted(options)})")
        return ExactVectorStore()
    if store == "qdrant":
        from ragaudit.retrieval.qdrant_store import QdrantVectorStore

        return QdrantVectorStore(**options)
    raise ValueError(f"unknown vector store {store!r}; use 'exact' or 'qdrant'")


class DenseRetriever:
    """A :class:`~ragaudit.retrieval.protocol.Retriever` over embedded chunks in a vector store."""

    def __init__(self, encoder: TextEncoder, store: VectorStore) -> None:
        self.encoder = encoder
        self.query_encoder: TextEncoder = encoder.encoder if isinstance(encoder, EmbeddingCache) else encoder
        """Embeds queries: the model without the disk cache (see the module docstring)."""
        self.store = store
        self.chunks_indexed = 0
        self.queries_served = 0
        self.timings: dict[str, float] = {
            "embed_s": 0.0,
            "index_s": 0.0,
            "query_embed_s": 0.0,
            "search_s": 0.0,
        }
        self._lock = threading.Lock()
        self._pending: list[_Request] = []
        self._drainer: asyncio.Task[None] | None = None

    @classmethod
    def from_chunks(
        cls,
        chunks: Iterable[Chunk],
        *,
        store: StoreKind | VectorStore = "exact",
        model: str | Path | TextEncoder | None = None,
        backend: str | None = None,
        cache: bool | str | Path | EmbeddingCache = True,
        progress: bool | None = None,
        **store_options: Any,
    ) -> DenseRetriever:
        """Embed ``chunks`` (``Chunk.index_text``: title + text) and index them.

        ``store`` is ``"exact"`` (in process), ``"qdrant"`` (``store_options`` go to
        :class:`~ragaudit.retrieval.qdrant_store.QdrantVectorStore`, e.g. ``location=":memory:"``,
        ``url=...``, ``hybrid=True``) or a store object. ``backend`` runs ``model`` (``onnx-int8``,
        ``onnx`` or ``torch``; default: ``onnx-int8`` for the packaged model). ``cache`` is the
        embedding cache: on (default file), off (``False``), a file or folder, or an
        :class:`EmbeddingCache`.
        """
        encoder = make_encoder(model, cache, backend=backend, progress=progress)
        retriever = cls(encoder, make_store(store, **store_options))
        retriever.add(list(chunks))
        return retriever

    def add(self, chunks: Sequence[Chunk]) -> None:
        """Embed and index more chunks (a chunk already stored for its tenant is replaced)."""
        with self._lock:
            started = time.perf_counter()
            vectors = self.encoder.encode([c.index_text for c in chunks])
            embedded = time.perf_counter()
            self.store.add(chunks, vectors)
            self.timings["embed_s"] += embedded - started
            self.timings["index_s"] += time.perf_counter() - embedded
            self.chunks_indexed += len(chunks)

    def add_embedded(self, chunks: Sequence[Chunk], vectors: Any) -> None:
        """Index chunks whose embeddings are given (row i for chunk i), e.g. read back from a saved
        index: what :meth:`add` does after embedding them."""
        with self._lock:
            started = time.perf_counter()
            self.store.add(chunks, vectors)
            self.timings["index_s"] += time.perf_counter() - started
            self.chunks_indexed += len(chunks)

    def remember_queries(self, limit: int = DEFAULT_QUERY_MEMO) -> QueryMemo:
        """Embed each distinct query once from now on, keeping up to ``limit`` vectors in memory (the
        memo in use when there is one); :meth:`forget_queries` undoes it. For jobs that repeat queries
        (the tenant audit), never for latency measurements."""
        with self._lock:
            if not isinstance(self.query_encoder, QueryMemo):
                self.query_encoder = QueryMemo(self.query_encoder, limit)
            return self.query_encoder

    def forget_queries(self) -> None:
        """Embed every query with the model again (drops the memo of :meth:`remember_queries`)."""
        with self._lock:
            if isinstance(self.query_encoder, QueryMemo):
                self.query_encoder = self.query_encoder.encoder

    def search_many(self, tenant_id: str, queries: Sequence[str], top_k: int) -> list[list[RetrievedChunk]]:
        """Rankings for many queries of one tenant: one embedding batch, one store batch."""
        tenant = require_tenant(tenant_id)
        k = require_top_k(top_k)
        texts = list(queries)
        for position, query in enumerate(texts):
            if not isinstance(query, str):
                raise TypeError(f"query #{position + 1} must be a string, got {type(query).__name__}")
        if not texts:
            return []
        with self._lock:
            started = time.perf_counter()
            vectors = self.query_encoder.encode(texts)
            embedded = time.perf_counter()
            hits = self.store.search_many(tenant, vectors, k, texts=texts)
            self.timings["query_embed_s"] += embedded - started
            self.timings["search_s"] += time.perf_counter() - embedded
            self.queries_served += len(texts)
        return [[chunk_result(h.chunk, h.score) for h in row] for row in hits]

    async def search(self, *, tenant_id: str, query: str, top_k: int) -> list[RetrievedChunk]:
        """Query the index with strictly enforced tenant filtering (batched with concurrent calls)."""
        tenant = require_tenant(tenant_id)
        k = require_top_k(top_k)
        loop = asyncio.get_running_loop()
        future: asyncio.Future[list[RetrievedChunk]] = loop.create_future()
        self._pending.append((tenant, query, k, future))
        drainer = self._drainer
        if drainer is None or drainer.done() or drainer.get_loop() is not loop:
            self._drainer = loop.create_task(self._drain())
        return await future

    async def _drain(self) -> None:
        """Serve queued requests in batches until the queue stays empty."""
        loop = asyncio.get_running_loop()
        await asyncio.sleep(0)  # let callers scheduled in the same turn join the first batch
        while self._pending:
            batch, self._pending = self._pending, []
            groups: dict[tuple[str, int], list[_Request]] = defaultdict(list)
            for request in batch:
                future = request[3]
                if future.get_loop() is loop and not future.done():
                    groups[(request[0], request[2])].append(request)
            for (tenant, k), requests in groups.items():
                try:
                    rows = await asyncio.to_thread(self.search_many, tenant, [r[1] for r in requests], k)
                except Exception as exc:  # each waiting caller gets the failure, none hangs
                    for request in requests:
                        if not request[3].done():
                            request[3].set_exception(exc)
                    continue
                for request, row in zip(requests, rows, strict=True):
                    if not request[3].done():
                        request[3].set_result(row)

    def info(self) -> dict[str, Any]:
        """What a report records about this retriever: model, cache, store, sizes and timings."""
        encoder: Any = self.encoder
        base = encoder.encoder if isinstance(encoder, EmbeddingCache) else encoder
        return {
            "retriever": "dense",
            "model": base.info() if hasattr(base, "info") else {"fingerprint": encoder.fingerprint},
            "cache": encoder.info() if isinstance(encoder, EmbeddingCache) else None,
            "store": type(self.store).__name__,
            "chunks_indexed": self.chunks_indexed,
            "queries_served": self.queries_served,
            "timings": dict(self.timings),
        }

    def close(self) -> None:
        """Release the cache file and the store's client, where they have one."""
        for resource in (self.encoder, self.store):
            closer = getattr(resource, "close", None)
            if callable(closer):
                closer()
