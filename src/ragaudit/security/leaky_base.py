"""The shared parts of the deliberately leaky retrievers (:mod:`ragaudit.security.leaky` and the modules
beside it): one BM25 index over every tenant (the design the built-in retrievers avoid) and the honest
tenant-partitioned retriever the conditional leakers start from. **Never use these to serve anything.**

It sits below every leaky module, so the registry (:data:`ragaudit.security.leaky.LEAKY`) can import
them all without an import circle.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from ragaudit.corpus.model import Chunk
from ragaudit.retrieval.bm25 import BM25Retriever
from ragaudit.retrieval.protocol import RetrievedChunk

POOL = "__every-tenant__"


class SharedIndex:
    """One BM25 index over every tenant's chunks: the design the built-in retrievers avoid."""

    def __init__(self, chunks: Sequence[Chunk]) -> None:
        self.owner = {c.chunk_id: c.tenant_id for c in chunks}
        self.size = len(chunks)
        self.bm25 = BM25Retriever.from_chunks([replace(c, tenant_id=POOL) for c in chunks])

    def search(self, query: str, k: int) -> list[RetrievedChunk]:
        """Cross-tenant top-``k``, each chunk labelled with its real owner."""
        hits = self.bm25.search_many(POOL, [query], k)[0]
        return [{**hit, "tenant_id": self.owner[hit["chunk_id"]]} for hit in hits]

    def filtered(self, query: str, k: int, keep: Callable[[str], bool]) -> list[RetrievedChunk]:
        """The first ``k`` hits of the whole ranking whose owner passes ``keep``."""
        return [hit for hit in self.search(query, self.size) if keep(hit.get("tenant_id", ""))][:k]


class Partitioned:
    """The honest part of the conditional leakers: tenant-partitioned BM25 (exact tenant match), and the
    shared index their leak path uses. ``answer`` is synchronous; ``search`` is the protocol call."""

    def __init__(self, chunks: Sequence[Chunk]) -> None:
        self.base = BM25Retriever.from_chunks(chunks)
        self.shared = SharedIndex(chunks)

    def own(self, tenant_id: str, query: str, top_k: int) -> list[RetrievedChunk]:
        return self.base.search_many(tenant_id, [query], top_k)[0]

    def answer(self, tenant_id: str, query: str, top_k: int) -> list[RetrievedChunk]:
        return self.own(tenant_id, query, top_k)

    async def search(self, *, tenant_id: str, query: str, top_k: int) -> list[RetrievedChunk]:
        return self.answer(tenant_id, query, top_k)


class StyledService(Partitioned):
    """A red team's HTTP service in one of its ``STYLES`` (leaky, or its honest twin when ``honest``):
    tenant-partitioned BM25 beside the shared index, and the corpus's tenants."""

    STYLES: tuple[str, ...] = ()

    def __init__(self, chunks: Sequence[Chunk], style: str, honest: bool = False) -> None:
        super().__init__(chunks)
        if style not in self.STYLES:
            raise ValueError(f"unknown style {style!r}; one of {', '.join(self.STYLES)}")
        self.style = style
        self.honest = honest
        self.tenants = frozenset(c.tenant_id for c in chunks)
