"""A LlamaIndex index (or retriever factory) as a ragaudit retriever.

Tenant filter mapping: a LlamaIndex retriever takes its filters when it is built, so one is built per
request: ``index.as_retriever(similarity_top_k=k, filters=F)``, or ``factory(filters=F, top_k=k)`` for a
function of yours, with ``F = MetadataFilters(filters=[MetadataFilter(key=tenant_key, value=tenant,
operator=FilterOperator.EQ)])``; then ``await retriever.aretrieve(query)``.

What comes back: each ``NodeWithScore`` as its ``node_id``, ``get_content()``, every ``metadata`` field
and ``score`` (``1 / (1 + position)`` when it is ``None``).

The traps: a retriever that is already built has its filters fixed and cannot take the caller's tenant,
so it is refused (give the index or a factory). A factory that ignores ``filters`` cannot be told from the
outside: the tenant audit reports its LEAKs.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from ragaudit.errors import InputError
from ragaudit.retrieval.adapters.common import position_score, require, to_chunk
from ragaudit.retrieval.protocol import RetrievedChunk
from ragaudit.retrieval.tenancy import require_tenant, require_top_k


class LlamaIndexRetriever:
    """``search(tenant_id, query, top_k)`` over a LlamaIndex index or a ``(filters, top_k)`` factory."""

    def __init__(self, source: Any, *, tenant_key: str = "tenant_id", where: str = "retriever") -> None:
        self._types = require("llama_index.core.vector_stores", "llama-index-core", "llamaindex")
        self.tenant_key = tenant_key
        self.where = where
        self._build = _builder(source, where)

    def tenant_filters(self, tenant: str) -> Any:
        """The ``MetadataFilters`` that keep ``tenant``'s nodes only."""
        types = self._types
        condition = types.MetadataFilter(key=self.tenant_key, value=tenant, operator=types.FilterOperator.EQ)
        return types.MetadataFilters(filters=[condition])

    async def search(self, *, tenant_id: str, query: str, top_k: int) -> list[RetrievedChunk]:
        tenant = require_tenant(tenant_id)
        top_k = require_top_k(top_k)
        retriever = self._build(self.tenant_filters(tenant), top_k)
        nodes = await retriever.aretrieve(query)
        return [self._chunk(hit, i) for i, hit in enumerate(nodes[:top_k])]

    def _chunk(self, hit: Any, position: int) -> RetrievedChunk:
        node = hit.node
        score = hit.score if hit.score is not None else position_score(position)
        return to_chunk(node.node_id, node.get_content(), node.metadata, score, tenant_key=self.tenant_key)


def _builder(source: Any, where: str) -> Callable[[Any, int], Any]:
    if callable(getattr(source, "as_retriever", None)):
        return lambda filters, top_k: source.as_retriever(similarity_top_k=top_k, filters=filters)
    if callable(getattr(source, "aretrieve", None)) or callable(getattr(source, "retrieve", None)):
        raise InputError(
            where,
            None,
            f"got a built {type(source).__name__}: its filters were fixed when it was built, so it cannot "
            "take each caller's tenant",
            "name the index (ragaudit calls index.as_retriever(filters=...) per request) or a function "
            "def make(filters, top_k) that builds the retriever",
        )
    if callable(source) and "filters" in _parameters(source):
        return lambda filters, top_k: source(filters=filters, top_k=top_k)
    raise InputError(
        where,
        None,
        f"got a {type(source).__name__}, neither a LlamaIndex index nor a factory taking filters",
        "name the index or a function def make(filters, top_k) returning a retriever",
    )


def _parameters(function: Any) -> list[str]:
    try:
        return list(inspect.signature(function).parameters)
    except (TypeError, ValueError):
        return []


def adapt(obj: Any, *, tenant_key: str, where: str) -> LlamaIndexRetriever:
    """``obj`` (an index or a ``(filters, top_k)`` factory) as a ragaudit retriever."""
    return LlamaIndexRetriever(obj, tenant_key=tenant_key, where=where)
