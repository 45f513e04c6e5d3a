"""Query rewriting in front of a retriever.

:class:`RewriteRetriever` is itself a :class:`~ragaudit.retrieval.protocol.Retriever`. For a search it

1. refuses a request without a usable tenant before anything is queried;
2. asks the :class:`QueryRewriter` for a new query, passing the caller's tenant (a rewriter that
   retrieves, such as pseudo relevance feedback, may read that tenant's data only);
3. searches the base retriever with the rewritten query and the **same** tenant and ``top_k``;
4. returns the base's chunks unchanged except for two metadata keys, ``original_query`` and
   ``rewritten_query``, so a rewrite evaluation can check what was actually sent (entity and
   constraint preservation, recall delta).

A rewriter answering an empty string leaves the query as it was (``rewritten_query`` then equals
``original_query``).

To rerank after rewriting, put the rewrite *inside* the rerank stage,
``RerankRetriever(RewriteRetriever(base, rewriter), reranker)``: the rewritten query widens the
first-stage candidates, and the reranker judges them against the user's original question.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from ragaudit.retrieval.protocol import RetrievedChunk, Retriever
from ragaudit.retrieval.tenancy import require_tenant, require_top_k


@runtime_checkable
class QueryRewriter(Protocol):
    """Turns a user query into the query sent to the retriever."""

    @property
    def name(self) -> str:
        """Identifies the rewriter (type and settings) in reports."""
        ...

    async def rewrite(self, query: str, *, tenant_id: str) -> str:
        """The query to search with; ``tenant_id`` is the caller's tenant (already checked)."""
        ...


class RewriteRetriever:
    """Search ``base`` with the query ``rewriter`` produces (see the module docstring)."""

    def __init__(self, base: Retriever, rewriter: QueryRewriter) -> None:
        self.base = base
        self.rewriter = rewriter

    def info(self) -> dict[str, Any]:
        """What a report records about this stage."""
        return {"stage": "rewrite", "rewriter": self.rewriter.name}

    async def search(self, *, tenant_id: str, query: str, top_k: int) -> list[RetrievedChunk]:
        tenant = require_tenant(tenant_id)
        k = require_top_k(top_k)
        rewritten = await self.rewriter.rewrite(query, tenant_id=tenant)
        if not isinstance(rewritten, str):
            raise TypeError(
                f"query rewriter {self.rewriter.name!r} returned {type(rewritten).__name__}, expected a string"
            )
        if not rewritten.strip():
            rewritten = query
        results = await self.base.search(tenant_id=tenant, query=rewritten, top_k=k)
        return [_annotated(chunk, query, rewritten) for chunk in results]


def _annotated(chunk: RetrievedChunk, original: str, rewritten: str) -> RetrievedChunk:
    metadata: dict[str, Any] = dict(chunk.get("metadata") or {})
    metadata["original_query"] = original
    metadata["rewritten_query"] = rewritten
    out: RetrievedChunk = chunk.copy()
    out["metadata"] = metadata
    return out
