"""A Qdrant-backed :class:`~ragaudit.retrieval.vector_store.VectorStore`, embedded or on a server.

One code path serves every deployment: ``location=":memory:"`` or ``path=...`` run Qdrant's embedded
local mode (tests, small collections), ``url=...`` talks to a server or cluster.

Tenancy: every point carries ``tenant_id`` in its payload, indexed as a keyword field with
``is_tenant=True`` (Qdrant co-locates a tenant's points), and **every** query, including each
prefetch of a hybrid query, carries a ``must`` filter on it, so ranking only ever sees the tenant's
points; nothing is filtered after a cross-tenant top k. Point ids are UUIDv5 of ``(tenant_id,
chunk_id)``: re-indexing replaces points in place, and two tenants using the same chunk id never
overwrite each other.

Hybrid mode stores a sparse vector next to the dense one (BM25 document weights from
:mod:`ragaudit.retrieval.sparse_weights`; the collection's sparse config has ``modifier=IDF`` so
Qdrant supplies the IDF factor) and fuses a dense and a sparse prefetch with reciprocal rank fusion
on the server, through the Query API. IDF statistics are scoped to the querying tenant's points by
default (``idf_scope="tenant"``, Qdrant >= 1.19 on a server; local mode supports it): with
collection-wide statistics (``"global"``) one tenant's documents change another tenant's scores.

At scale (a cluster, millions of chunks), the same code path: points are upserted in batches of
``batch_size``, each batch retried with backoff (:class:`~ragaudit.retry.RetryPolicy`) when the
server answers 408 / 429 / 5xx or the connection fails (an upsert of deterministic ids is
idempotent, so a retried batch never duplicates points); ``shard_number``, ``replication_factor``,
``write_consistency_factor`` and ``on_disk`` go to ``create_collection`` (a server honours them; the
embedded local mode ignores them). docs/scale.md gives the settings for a multi-million-chunk corpus.
"""

from __future__ import annotations

import json
import time
import uuid
import warnings
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType, TracebackType
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from ragaudit.corpus.model import Chunk
from ragaudit.errors import InputError, MissingDependencyError
from ragaudit.retrieval.sparse_weights import SparseEncoder, SparseScheme, SparseVec
from ragaudit.retrieval.vector_store import Hit
from ragaudit.retry import RetryPolicy

QueryMode = Literal["dense", "sparse", "hybrid"]
IdfScope = Literal["tenant", "global"]

DENSE = "dense"
SPARSE = "sparse"
TENANT_FIELD = "tenant_id"
TRANSIENT_STATUS = frozenset({408, 429, 500, 502, 503, 504})
_POINT_NAMESPACE = uuid.UUID("5b0f1a36-7d4e-4c1e-9a53-2f3c1d9e8a71")


def point_id(tenant_id: str, chunk_id: str) -> str:
    """The deterministic Qdrant point id (a UUIDv5 string) of a tenant's chunk."""
    return str(uuid.uuid5(_POINT_NAMESPACE, f"{tenant_id}\x1f{chunk_id}"))


def is_transient_write_error(exc: BaseException) -> bool:
    """Whether a failed write is worth retrying: the connection failed or timed out, or the server
    answered 408, 429 or 5xx. A 4xx such as a wrong vector size is permanent."""
    if isinstance(exc, (ConnectionError, TimeoutError)):
        return True
    try:
        from qdrant_client.http.exceptions import ResponseHandlingException, UnexpectedResponse
    except ImportError:  # pragma: no cover - the store cannot exist without qdrant-client
        return False
    if isinstance(exc, ResponseHandlingException):
        return True
    return isinstance(exc, UnexpectedResponse) and exc.status_code in TRANSIENT_STATUS


def _models() -> Any:
    try:
        from qdrant_client import models
    except ImportError:
        raise MissingDependencyError("qdrant-client", "qdrant") from None
    return models


def _json_safe(metadata: Mapping[str, Any]) -> dict[str, Any]:
    value = json.loads(json.dumps(dict(metadata), default=str))
    return value if isinstance(value, dict) else {}


def _payload(chunk: Chunk) -> dict[str, Any]:
    return {
        TENANT_FIELD: chunk.tenant_id,
        "chunk_id": chunk.chunk_id,
        "doc_id": chunk.doc_id,
        "start": chunk.start,
        "end": chunk.end,
        "text": chunk.text,
        "title": chunk.title,
        "metadata": _json_safe(chunk.metadata),
    }


def _chunk_of(payload: Mapping[str, Any]) -> Chunk:
    metadata = payload.get("metadata")
    return Chunk(
        str(payload["chunk_id"]),
        str(payload.get("doc_id", payload["chunk_id"])),
        str(payload[TENANT_FIELD]),
        int(payload.get("start", 0)),
        int(payload.get("end", 0)),
        str(payload.get("text", "")),
        str(payload.get("title", "")),
        MappingProxyType(dict(metadata) if isinstance(metadata, Mapping) else {}),
    )


class QdrantVectorStore:
    """Chunks and embeddings in a Qdrant collection, searched per tenant.

    Give exactly one of ``location`` (``":memory:"``), ``path`` (an embedded on-disk collection),
    ``url`` (a server; ``api_key`` optional) or ``client`` (an existing ``QdrantClient``).
    ``hybrid=True`` also stores sparse vectors (``sparse_scheme`` ``"bm25"`` or ``"tf"``) and makes
    hybrid the default query mode. ``rrf_k`` is the classic RRF constant (score ``sum 1 / (k + rank)``,
    rank from 1); ``None`` leaves Qdrant's default. The collection is created on the first ``add``;
    ``recreate=True`` drops an existing one first. ``shard_number``, ``replication_factor``,
    ``write_consistency_factor`` and ``on_disk`` (dense vectors on disk, memory-mapped) configure a
    new collection on a cluster; ``upsert_retry`` is the retry policy of each upsert batch.
    """

    def __init__(
        self,
        collection: str = "ragaudit",
        *,
        location: str | None = None,
        path: str | Path | None = None,
        url: str | None = None,
        api_key: str | None = None,
        client: Any = None,
        hybrid: bool = False,
        sparse_scheme: SparseScheme = "bm25",
        idf_scope: IdfScope = "tenant",
        rrf_k: int | None = 60,
        prefetch_limit: int = 100,
        batch_size: int = 256,
        recreate: bool = False,
        shard_number: int | None = None,
        replication_factor: int | None = None,
        write_consistency_factor: int | None = None,
        on_disk: bool = False,
        upsert_retry: RetryPolicy | None = None,
    ) -> None:
        given = [x for x in (location, path, url, client) if x is not None]
        if len(given) > 1:
            raise ValueError("give only one of location, path, url or client")
        if idf_scope not in ("tenant", "global"):
            raise ValueError(f"unknown idf_scope {idf_scope!r}; use 'tenant' or 'global'")
        if batch_size < 1 or prefetch_limit < 1:
            raise ValueError("batch_size and prefetch_limit must be positive integers")
        if client is None:
            try:
                from qdrant_client import QdrantClient
            except ImportError:
                raise MissingDependencyError("qdrant-client", "qdrant") from None
            if url is not None:
                client = QdrantClient(url=url, api_key=api_key)
            elif path is not None:
                client = QdrantClient(path=str(path))
            else:
                client = QdrantClient(location=location or ":memory:")
        self.client = client
        self.collection = collection
        self.hybrid = hybrid
        self.has_sparse = hybrid
        """Whether points carry sparse vectors: a hybrid store, or an existing collection that has them."""
        self.sparse = SparseEncoder(sparse_scheme)
        self.idf_scope: IdfScope = idf_scope
        self.rrf_k = rrf_k
        self.prefetch_limit = prefetch_limit
        self.batch_size = batch_size
        self.cluster = {
            k: v
            for k, v in (
                ("shard_number", shard_number),
                ("replication_factor", replication_factor),
                ("write_consistency_factor", write_consistency_factor),
            )
            if v is not None
        }
        self.on_disk = on_disk
        self.upsert_retry = upsert_retry or RetryPolicy(max_attempts=5, base_delay_s=0.5, max_delay_s=30.0)
        self.upsert_retries = 0
        """Upsert batches that failed transiently and were sent again (over this store's life)."""
        self.dim: int | None = None
        if recreate and self.client.collection_exists(collection):
            self.client.delete_collection(collection)
        elif self.client.collection_exists(collection):
            self.dim = self._check_existing()

    # -- collection ---------------------------------------------------------------------------------

    def _where(self) -> str:
        return f"qdrant collection {self.collection!r}"

    def _check_existing(self) -> int:
        params = self.client.get_collection(self.collection).config.params
        vectors = params.vectors if isinstance(params.vectors, dict) else {}
        dense = vectors.get(DENSE)
        fix = "use another collection name, or pass recreate=True to rebuild it"
        if dense is None:
            raise InputError(
                self._where(), None, f"has no {DENSE!r} vector; it was not made by ragaudit", fix
            )
        has_sparse = SPARSE in (params.sparse_vectors or {})
        if self.hybrid and not has_sparse:
            raise InputError(self._where(), None, "has no sparse vectors, so hybrid search cannot run", fix)
        self.has_sparse = has_sparse  # keep writing them so the collection stays whole
        return int(dense.size)

    def _ensure_collection(self, dim: int) -> None:
        if self.dim is not None:
            if dim != self.dim:
                raise InputError(
                    self._where(),
                    None,
                    f"holds {self.dim}-dimensional vectors, these have {dim}",
                    "embed with the collection's model, or use another collection",
                )
            return
        models = _models()
        self.client.create_collection(
            self.collection,
            vectors_config={
                DENSE: models.VectorParams(
                    size=dim, distance=models.Distance.DOT, on_disk=self.on_disk or None
                )
            },
            sparse_vectors_config=(
                {SPARSE: models.SparseVectorParams(modifier=models.Modifier.IDF)} if self.hybrid else None
            ),
            **self.cluster,
        )
        with warnings.catch_warnings():  # local mode warns that payload indexes are a no-op there
            warnings.filterwarnings("ignore", message="Payload indexes have no effect")
            self.client.create_payload_index(
                self.collection,
                TENANT_FIELD,
                field_schema=models.KeywordIndexParams(type=models.KeywordIndexType.KEYWORD, is_tenant=True),
            )
        self.dim = dim

    # -- writing ------------------------------------------------------------------------------------

    def _sparse_by_chunk(self, chunks: Sequence[Chunk]) -> dict[tuple[str, str], SparseVec]:
        """Sparse document vectors, with each tenant's chunks weighted as their own collection."""
        by_tenant: dict[str, list[Chunk]] = defaultdict(list)
        for chunk in chunks:
            by_tenant[chunk.tenant_id].append(chunk)
        out: dict[tuple[str, str], SparseVec] = {}
        for tenant, group in by_tenant.items():
            for chunk, vec in zip(group, self.sparse.documents([c.index_text for c in group]), strict=True):
                out[(tenant, chunk.chunk_id)] = vec
        return out

    def add(self, chunks: Sequence[Chunk], vectors: npt.NDArray[np.float32]) -> None:
        """Upsert ``chunks`` in batches (BM25 length statistics are per tenant over this call's chunks)."""
        matrix = np.asarray(vectors, dtype=np.float32)
        if matrix.ndim != 2 or matrix.shape[0] != len(chunks):
            raise ValueError(f"expected {len(chunks)} vectors as rows of a matrix, got shape {matrix.shape}")
        if not chunks:
            return
        self._ensure_collection(int(matrix.shape[1]))
        models = _models()
        sparse = self._sparse_by_chunk(chunks) if self.has_sparse else {}
        for start in range(0, len(chunks), self.batch_size):
            points = []
            for chunk, vector in zip(
                chunks[start : start + self.batch_size], matrix[start : start + self.batch_size], strict=True
            ):
                named: dict[str, Any] = {DENSE: vector.tolist()}
                vec = sparse.get((chunk.tenant_id, chunk.chunk_id))
                if vec is not None and len(vec):
                    named[SPARSE] = models.SparseVector(indices=list(vec.indices), values=list(vec.values))
                points.append(
                    models.PointStruct(
                        id=point_id(chunk.tenant_id, chunk.chunk_id), vector=named, payload=_payload(chunk)
                    )
                )
            self._upsert(points, start)

    def _upsert(self, points: list[Any], start: int) -> None:
        """One batch, retried under ``upsert_retry`` while the failure is transient."""
        policy = self.upsert_retry
        for attempt in range(1, policy.max_attempts + 1):
            try:
                self.client.upsert(self.collection, points=points, wait=True)
                return
            except Exception as exc:
                if attempt == policy.max_attempts or not is_transient_write_error(exc):
                    raise
                self.upsert_retries += 1
                time.sleep(policy.delay_s(f"{self.collection}:{start}", attempt))

    # -- reading ------------------------------------------------------------------------------------

    def tenants(self) -> list[str]:
        if self.dim is None:
            return []
        found: set[str] = set()
        offset = None
        while True:
            records, offset = self.client.scroll(
                self.collection, limit=1024, offset=offset, with_payload=[TENANT_FIELD], with_vectors=False
            )
            found.update(str(r.payload[TENANT_FIELD]) for r in records if r.payload)
            if offset is None:
                return sorted(found)

    def count(self, tenant_id: str | None = None) -> int:
        """Points stored (for one tenant when given)."""
        if self.dim is None:
            return 0
        flt = self._tenant_filter(tenant_id) if tenant_id is not None else None
        return int(self.client.count(self.collection, count_filter=flt, exact=True).count)

    def _tenant_filter(self, tenant_id: str) -> Any:
        models = _models()
        return models.Filter(
            must=[models.FieldCondition(key=TENANT_FIELD, match=models.MatchValue(value=tenant_id))]
        )

    def _fusion(self) -> Any:
        models = _models()
        if self.rrf_k is None:
            return models.FusionQuery(fusion=models.Fusion.RRF)
        return models.RrfQuery(rrf=models.Rrf(k=self.rrf_k + 1))  # Qdrant scores 1 / (rank0 + k)

    def _request(
        self, mode: QueryMode, vector: npt.NDArray[np.float32], sparse: SparseVec | None, flt: Any, top_k: int
    ) -> Any:
        """One Query API request, or ``None`` for a sparse query without any known term."""
        models = _models()
        dense = vector.tolist()
        sparse_query = (
            models.SparseVector(indices=list(sparse.indices), values=list(sparse.values))
            if sparse is not None and len(sparse)
            else None
        )
        idf = (
            models.SearchParams(idf=models.IdfCorpusParams(corpus=flt))
            if self.idf_scope == "tenant"
            else None
        )
        if mode == "dense":
            return models.QueryRequest(query=dense, using=DENSE, filter=flt, limit=top_k, with_payload=True)
        if mode == "sparse":
            if sparse_query is None:
                return None
            return models.QueryRequest(
                query=sparse_query, using=SPARSE, filter=flt, params=idf, limit=top_k, with_payload=True
            )
        depth = max(top_k, self.prefetch_limit)
        prefetch = [models.Prefetch(query=dense, using=DENSE, filter=flt, limit=depth)]
        if sparse_query is not None:
            prefetch.append(
                models.Prefetch(query=sparse_query, using=SPARSE, filter=flt, params=idf, limit=depth)
            )
        return models.QueryRequest(
            prefetch=prefetch, query=self._fusion(), filter=flt, limit=top_k, with_payload=True
        )

    def search_many(
        self,
        tenant_id: str,
        vectors: npt.NDArray[np.float32],
        top_k: int,
        *,
        texts: Sequence[str] | None = None,
        mode: QueryMode | None = None,
    ) -> list[list[Hit]]:
        """Best hits per query, only from ``tenant_id``'s points; ``mode`` defaults to hybrid when the
        store is hybrid, else dense. Sparse and hybrid modes need the query ``texts``."""
        queries = np.asarray(vectors, dtype=np.float32)
        mode = mode or ("hybrid" if self.hybrid else "dense")
        if mode not in ("dense", "sparse", "hybrid"):
            raise ValueError(f"unknown query mode {mode!r}; use 'dense', 'sparse' or 'hybrid'")
        if mode != "dense":
            if not self.has_sparse:
                raise ValueError(f"{mode} search needs a store built with hybrid=True")
            if texts is None or len(texts) != queries.shape[0]:
                raise ValueError(f"{mode} search needs one query text per query vector")
        if self.dim is None or queries.shape[0] == 0:
            return [[] for _ in range(queries.shape[0])]
        flt = self._tenant_filter(tenant_id)
        sparse: list[SparseVec | None] = (
            list(self.sparse.queries(texts))
            if mode != "dense" and texts is not None
            else [None] * queries.shape[0]
        )
        requests = [self._request(mode, queries[i], sparse[i], flt, top_k) for i in range(queries.shape[0])]
        live = [r for r in requests if r is not None]
        responses = iter(self.client.query_batch_points(self.collection, requests=live) if live else [])
        results: list[list[Hit]] = []
        for request in requests:
            if request is None:
                results.append([])
                continue
            hits = [Hit(_chunk_of(p.payload or {}), float(p.score)) for p in next(responses).points]
            if any(h.chunk.tenant_id != tenant_id for h in hits):  # never serve it: the filter failed
                raise RuntimeError(
                    f"{self._where()} returned another tenant's point for tenant {tenant_id!r}"
                )
            hits.sort(key=lambda h: h.chunk.chunk_id, reverse=True)  # equal scores: chunk id descending
            hits.sort(key=lambda h: -h.score)
            results.append(hits)
        return results

    def close(self) -> None:
        self.client.close()

    def __enter__(self) -> QdrantVectorStore:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
