"""BM25 over a chunked corpus, with the tenant enforced inside the index.

:class:`BM25Retriever` keeps **one bm25s index per tenant**. A search looks up the partition of the
requested tenant (exact match, see :mod:`ragaudit.retrieval.tenancy`) and ranks only that partition;
there is no shared index whose cross-tenant top-k is filtered afterwards, so another tenant's chunk
can neither be returned nor push the tenant's own chunks out of the top-k. Corpus statistics (idf,
average length) are per tenant too, so one tenant's documents do not change another's scores.

Scoring is bm25s's (``k1``, ``b``, ``delta``, ``method`` with bm25s's defaults); for the ``lucene``
default a chunk scores ``Σ_t idf(t) · tf·(k1+1) / (tf + k1·(1 - b + b·|d|/avgdl))`` over the query
terms ``t``, ``idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5))``. Text analysis is bm25s's tokenizer:
lower-cased ``\\w\\w+`` tokens, the bm25s English stopword list, and the Snowball English stemmer
from PyStemmer (``refunds`` and ``refund`` both become ``refund``). Documents index
:attr:`~ragaudit.corpus.model.Chunk.index_text` (title, then text).

What a search returns:

- only chunks that contain at least one query term (after analysis): a chunk with no matching term
  has no BM25 evidence, and its position among the other non-matching chunks would be arbitrary;
- a query with no indexable term (empty, punctuation, only stopwords, or no term the tenant's
  vocabulary knows) returns ``[]``;
- ``top_k`` larger than the partition returns every matching chunk;
- order: score descending, ties by chunk id descending (trec_eval's order, so a ranking written to a
  run file and read back keeps its order).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ragaudit.corpus.model import Chunk
from ragaudit.errors import InputError, MissingDependencyError
from ragaudit.retrieval.protocol import RetrievedChunk, chunk_result
from ragaudit.retrieval.tenancy import require_tenant, require_top_k

BM25_METHODS = ("robertson", "lucene", "atire", "bm25l", "bm25+")
BM25_MANIFEST = "bm25.json"
"""What :meth:`BM25Retriever.save` writes beside the per-tenant bm25s folders."""


@dataclass(frozen=True)
class BM25Params:
    """BM25 and text-analysis settings; the BM25 defaults are bm25s's own."""

    k1: float = 1.5
    b: float = 0.75
    delta: float = 0.5
    """Only used by ``bm25l`` and ``bm25+``."""
    method: str = "lucene"
    """One of ``robertson``, ``lucene``, ``atire``, ``bm25l``, ``bm25+`` (bm25s's variants)."""
    stemmer: str | None = "english"
    """A Snowball language known to PyStemmer, or ``None`` for no stemming."""
    stopwords: str | None = "en"
    """A bm25s stopword list name (``en``), or ``None`` to keep every token."""

    def __post_init__(self) -> None:
        for name in ("k1", "b", "delta"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not np.isfinite(value):
                raise ValueError(f"BM25 {name} must be a finite number (got {value!r})")
        if self.k1 < 0:
            raise ValueError(f"BM25 k1 must be >= 0 (got {self.k1}); 1.2-2.0 is usual")
        if not 0 <= self.b <= 1:
            raise ValueError(f"BM25 b must be between 0 and 1 (got {self.b}); 0.75 is usual")
        if self.method not in BM25_METHODS:
            raise ValueError(f"unknown BM25 method {self.method!r}; use one of {', '.join(BM25_METHODS)}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _import_bm25s() -> Any:
    try:
        import bm25s
    except ImportError as exc:
        raise MissingDependencyError("bm25s", "bm25") from exc
    return bm25s


def _make_stemmer(language: str | None) -> Any:
    if language is None:
        return None
    try:
        import Stemmer
    except ImportError as exc:
        raise MissingDependencyError("PyStemmer", "bm25") from exc
    try:
        return Stemmer.Stemmer(language)
    except KeyError as exc:
        known = ", ".join(Stemmer.algorithms())
        raise ValueError(f"unknown stemmer language {language!r}; PyStemmer knows: {known}") from exc


QUERY_MEMO = 20_000
"""How many query texts an :class:`Analyzer` remembers the terms of."""


class Analyzer:
    """Turns text into BM25 terms, identically for documents and queries."""

    def __init__(self, params: BM25Params) -> None:
        self._params = params
        self._bm25s = _import_bm25s()
        self._stemmer = _make_stemmer(params.stemmer)
        self._stopwords = params.stopwords if params.stopwords is not None else []
        self._query_memo: dict[str, list[str]] = {}

    def __reduce__(self) -> tuple[type[Analyzer], tuple[BM25Params]]:
        """Pickled as its settings (PyStemmer's stemmer cannot be pickled): an index built once can be
        shipped to other processes (the Ray executor's object store) and analyses identically there."""
        return (Analyzer, (self._params,))

    def __call__(self, texts: Sequence[str]) -> list[list[str]]:
        if not texts:
            return []
        tokens: list[list[str]] = self._bm25s.tokenize(
            list(texts),
            stopwords=self._stopwords,
            stemmer=self._stemmer,
            return_ids=False,
            show_progress=False,
        )
        return tokens

    def query_terms(self, queries: Sequence[str]) -> list[list[str]]:
        """The terms of each query, as :meth:`__call__` gives them; a text analysed before is not analysed
        again (an audit or a load test sends each query text many times). At most :data:`QUERY_MEMO`
        texts are remembered, the memo emptied when full."""
        memo = self._query_memo
        terms: dict[str, list[str]] = {}
        for query in queries:
            known = memo.get(query)
            if known is not None:
                terms[query] = known
        new = list(dict.fromkeys(q for q in queries if q not in terms))
        if new:
            analysed = dict(zip(new, self(new), strict=True))
            if len(memo) + len(new) > QUERY_MEMO:
                memo.clear()
            memo.update(analysed)
            terms.update(analysed)
        return [list(terms[q]) for q in queries]


@dataclass(frozen=True)
class _Partition:
    """One tenant's chunks and their own index (``None`` when no chunk has an indexable term)."""

    chunks: tuple[Chunk, ...]
    index: Any
    tie_key: npt.NDArray[np.int64]
    """Position of each chunk in chunk-id-descending order: the tie-breaker of equal scores."""


def _tie_key(group: Sequence[Chunk]) -> npt.NDArray[np.int64]:
    order = sorted(range(len(group)), key=lambda i: group[i].chunk_id, reverse=True)
    tie_key = np.empty(len(group), dtype=np.int64)
    tie_key[order] = np.arange(len(group))
    return tie_key


def _group_by_tenant(chunks: Iterable[Chunk]) -> dict[str, list[Chunk]]:
    groups: dict[str, list[Chunk]] = {}
    seen: dict[str, set[str]] = {}
    for chunk in chunks:
        tenant = chunk.tenant_id
        if not isinstance(tenant, str) or not tenant.strip():
            raise InputError(
                "corpus",
                None,
                f"chunk {chunk.chunk_id!r} has no usable tenant_id ({tenant!r})",
                "give every document a non-empty tenant_id",
            )
        ids = seen.setdefault(tenant, set())
        if chunk.chunk_id in ids:
            raise InputError(
                "corpus",
                None,
                f"chunk id {chunk.chunk_id!r} appears twice in tenant {tenant!r}",
                "give every document a unique doc_id within its tenant",
            )
        ids.add(chunk.chunk_id)
        groups.setdefault(tenant, []).append(chunk)
    return groups


class BM25Retriever:
    """Tenant-partitioned BM25 (see the module docstring); build with :meth:`from_chunks`."""

    def __init__(self, partitions: dict[str, _Partition], analyzer: Analyzer, params: BM25Params) -> None:
        self._partitions = partitions
        self._analyzer = analyzer
        self.params = params
        self.build_seconds = 0.0
        """Wall-clock seconds :meth:`from_chunks` took (analysis and indexing)."""

    @classmethod
    def from_chunks(
        cls,
        chunks: Iterable[Chunk],
        *,
        k1: float = 1.5,
        b: float = 0.75,
        delta: float = 0.5,
        method: str = "lucene",
        stemmer: str | None = "english",
        stopwords: str | None = "en",
    ) -> BM25Retriever:
        """Index ``chunks``: one bm25s index per tenant, over each chunk's ``index_text``."""
        started = time.perf_counter()
        params = BM25Params(k1, b, delta, method, stemmer, stopwords)
        bm25s = _import_bm25s()
        analyzer = Analyzer(params)
        partitions: dict[str, _Partition] = {}
        for tenant, group in _group_by_tenant(chunks).items():
            tokens = analyzer([c.index_text for c in group])
            index = None
            if any(tokens):
                index = bm25s.BM25(k1=params.k1, b=params.b, delta=params.delta, method=params.method)
                index.index(tokens, show_progress=False)
            partitions[tenant] = _Partition(tuple(group), index, _tie_key(group))
        retriever = cls(partitions, analyzer, params)
        retriever.build_seconds = time.perf_counter() - started
        return retriever

    def save(self, folder: Path) -> None:
        """Write the index to ``folder`` (created): ``bm25.json`` (the settings, and each tenant's chunk
        ids in index order) and one bm25s folder per tenant (numpy ``.npy`` arrays without pickle, the
        vocabulary as JSON). :meth:`load` reads it back over the same chunks."""
        folder.mkdir(parents=True, exist_ok=True)
        tenants = []
        for position, (tenant, part) in enumerate(sorted(self._partitions.items())):
            index_dir = f"tenant-{position}" if part.index is not None else None
            if part.index is not None:
                part.index.save(str(folder / f"tenant-{position}"), show_progress=False)
            tenants.append(
                {"tenant": tenant, "chunks": [c.chunk_id for c in part.chunks], "index": index_dir}
            )
        manifest = {"params": self.params.to_dict(), "bm25s": _import_bm25s().__version__, "tenants": tenants}
        (folder / BM25_MANIFEST).write_text(json.dumps(manifest, ensure_ascii=False), encoding="utf-8")

    @classmethod
    def load(cls, folder: Path, chunks: Iterable[Chunk]) -> BM25Retriever:
        """The index :meth:`save` wrote to ``folder``, over ``chunks`` (the chunks it was built from; a
        tenant whose chunk ids differ from the saved ones is a ``ValueError``: the index is stale)."""
        started = time.perf_counter()
        manifest = json.loads((folder / BM25_MANIFEST).read_text(encoding="utf-8"))
        params = BM25Params(**manifest["params"])
        bm25s = _import_bm25s()
        groups = _group_by_tenant(chunks)
        saved = {entry["tenant"]: entry for entry in manifest["tenants"]}
        if set(saved) != set(groups):
            raise ValueError(f"{folder}: the saved index has other tenants than the chunks")
        partitions: dict[str, _Partition] = {}
        for tenant, group in groups.items():
            entry = saved[tenant]
            if entry["chunks"] != [c.chunk_id for c in group]:
                raise ValueError(f"{folder}: the saved index of tenant {tenant!r} has other chunks")
            index = None
            if entry["index"] is not None:
                index = bm25s.BM25.load(str(folder / entry["index"]), show_progress=False)
            partitions[tenant] = _Partition(tuple(group), index, _tie_key(group))
        retriever = cls(partitions, Analyzer(params), params)
        retriever.build_seconds = time.perf_counter() - started
        return retriever

    @property
    def tenants(self) -> tuple[str, ...]:
        """The tenants that own at least one chunk, sorted."""
        return tuple(sorted(self._partitions))

    def chunk_count(self, tenant_id: str) -> int:
        """How many chunks ``tenant_id`` owns (0 for an unknown tenant)."""
        part = self._partitions.get(tenant_id)
        return len(part.chunks) if part is not None else 0

    async def search(self, *, tenant_id: str, query: str, top_k: int) -> list[RetrievedChunk]:
        """The :class:`~ragaudit.retrieval.protocol.Retriever` call: rank ``tenant_id``'s chunks only."""
        return self.search_many(tenant_id, [query], top_k)[0]

    def search_many(self, tenant_id: str, queries: Sequence[str], top_k: int) -> list[list[RetrievedChunk]]:
        """Rank ``tenant_id``'s chunks for each query (synchronous, one analysis pass for all queries)."""
        tenant = require_tenant(tenant_id)
        k = require_top_k(top_k)
        for position, query in enumerate(queries):
            if not isinstance(query, str):
                raise TypeError(f"query #{position + 1} must be a string, got {type(query).__name__}")
        part = self._partitions.get(tenant)
        if part is None or part.index is None:
            return [[] for _ in queries]
        return [self._rank(part, terms, k) for terms in self._analyzer.query_terms(queries)]

    @staticmethod
    def _rank(part: _Partition, terms: list[str], top_k: int) -> list[RetrievedChunk]:
        index = part.index
        term_ids: list[int] = index.get_tokens_ids(terms)
        indptr = index.scores["indptr"]
        columns = [t for t in set(term_ids) if t < len(indptr) - 1]
        if not columns:
            return []
        matched = np.unique(
            np.concatenate([index.scores["indices"][indptr[t] : indptr[t + 1]] for t in columns])
        )
        scores = index.get_scores_from_ids(term_ids)[matched]
        order = np.lexsort((part.tie_key[matched], -scores))[:top_k]
        return [chunk_result(part.chunks[int(matched[i])], float(scores[i])) for i in order]
