"""A LangChain retriever (``BaseRetriever``: ``invoke`` / ``ainvoke``) as a ragaudit retriever.

Tenant filter mapping: every call is ``await retriever.ainvoke(query, filter=F)`` with ``F`` the
tenant filter on metadata key ``tenant_key``: ``{tenant_key: tenant}`` for stores that filter by dict
(Chroma, PGVector, Qdrant, ...), and ``lambda doc: doc.metadata.get(tenant_key) == tenant`` for
``InMemoryVectorStore``, whose ``filter`` is a predicate. A ``VectorStoreRetriever`` merges the call's
arguments over its ``search_kwargs`` (so ``filter`` replaces any set there) and also gets ``k=top_k``.

What comes back: a ``Document`` has no score, so the score is ``1 / (1 + position)`` (the order is the
ranking); the id is ``Document.id``, else the metadata's ``chunk_id``/``doc_id``/``id``; the text is
``page_content`` and every metadata field is kept.

Or a per-tenant retriever: a function ``make(tenant_id)`` of yours returns the retriever for that
tenant, its filter already inside (``vectorstore.as_retriever(search_kwargs={"filter": ...})``, or a
``BM25Retriever`` over the tenant's documents only); it is called once per tenant and kept, and is
invoked with the query alone.

The trap: ``BaseRetriever.invoke`` passes extra arguments only when the subclass's
``_get_relevant_documents`` declares parameters beyond ``query`` and ``run_manager``; otherwise it drops
``filter=`` without a word. Such a retriever is refused here. One that declares ``**kwargs`` and then
ignores them cannot be told from the outside: the tenant audit reports its LEAKs.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from typing import Any

from ragaudit.errors import InputError
from ragaudit.retrieval.adapters.common import position_score, require, to_chunk
from ragaudit.retrieval.protocol import RetrievedChunk
from ragaudit.retrieval.tenancy import require_tenant, require_top_k

ID_KEYS = ("chunk_id", "doc_id", "id")


class LangChainRetriever:
    """``search(tenant_id, query, top_k)`` over a LangChain retriever, the tenant sent as ``filter=``."""

    def __init__(
        self,
        retriever: Any,
        *,
        tenant_key: str = "tenant_id",
        tenant_filter: Callable[[str], Any] | None = None,
        where: str = "retriever",
    ) -> None:
        """``tenant_filter`` (optional) turns a tenant into the ``filter=`` value when the store wants
        another form than the two above (e.g. ``lambda t: {"tenant": {"$eq": t}}``)."""
        retrievers = require("langchain_core.retrievers", "langchain-core", "langchain")
        self.tenant_key = tenant_key
        self.where = where
        self._per_tenant: dict[str, Any] = {}
        self._factory: Callable[[str], Any] | None = None
        self._filter: Callable[[str], Any] = _no_filter
        if not isinstance(retriever, retrievers.BaseRetriever) and callable(retriever):
            if "tenant_id" not in _parameters(retriever):
                raise InputError(
                    where,
                    None,
                    f"got a function {getattr(retriever, '__name__', '?')} that takes no tenant_id",
                    "name a LangChain retriever, or a function make(tenant_id) returning one per tenant",
                )
            self._factory = retriever
            self._vector_store = None
            return
        if not isinstance(retriever, retrievers.BaseRetriever):
            raise InputError(
                where,
                None,
                f"got a {type(retriever).__name__}, not a LangChain BaseRetriever",
                "name the retriever (e.g. vectorstore.as_retriever()) or a function returning it",
            )
        if not getattr(type(retriever), "_expects_other_args", False):
            raise InputError(
                where,
                None,
                f"{type(retriever).__name__}._get_relevant_documents takes nothing but the query, so "
                "LangChain's invoke() silently drops the tenant filter=",
                "name a function make(tenant_id) returning one retriever per tenant (e.g. a BM25Retriever "
                "over that tenant's documents), accept the filter (def _get_relevant_documents(self, query, "
                "*, run_manager, filter=None)) and apply it, or use a VectorStoreRetriever (docs/integrations.md)",
            )
        self.retriever = retriever
        self._vector_store = _vector_store(retriever)
        self._filter = tenant_filter or self._default_filter()

    def _default_filter(self) -> Callable[[str], Any]:
        key = self.tenant_key
        in_memory = require("langchain_core.vectorstores", "langchain-core", "langchain").InMemoryVectorStore
        if isinstance(self._vector_store, in_memory):

            def predicate_for(tenant: str) -> Any:
                return lambda doc: doc.metadata.get(key) == tenant

            return predicate_for
        return lambda tenant: {key: tenant}

    async def search(self, *, tenant_id: str, query: str, top_k: int) -> list[RetrievedChunk]:
        tenant = require_tenant(tenant_id)
        top_k = require_top_k(top_k)
        if self._factory is not None:
            documents = await self._tenant_retriever(self._factory, tenant).ainvoke(query)
        else:
            arguments: dict[str, Any] = {"filter": self._filter(tenant)}
            if self._vector_store is not None:
                arguments["k"] = top_k
            documents = await self._invoke(query, arguments)
        return [self._chunk(doc, i) for i, doc in enumerate(documents[:top_k])]

    async def _invoke(self, query: str, arguments: dict[str, Any]) -> Any:
        """``ainvoke`` when the retriever has its own async path; otherwise ``invoke`` in a thread, since
        LangChain's default async path takes no extra arguments (it would fail on ``filter=``)."""
        base = require("langchain_core.retrievers", "langchain-core", "langchain").BaseRetriever
        if type(self.retriever)._aget_relevant_documents is base._aget_relevant_documents:
            return await asyncio.to_thread(self.retriever.invoke, query, **arguments)
        return await self.retriever.ainvoke(query, **arguments)

    def _tenant_retriever(self, factory: Callable[[str], Any], tenant: str) -> Any:
        made = self._per_tenant.get(tenant)
        if made is None:
            made = self._per_tenant[tenant] = factory(tenant)
        return made

    def _chunk(self, doc: Any, position: int) -> RetrievedChunk:
        metadata = dict(doc.metadata or {})
        chunk_id = getattr(doc, "id", None) or next((metadata[k] for k in ID_KEYS if metadata.get(k)), None)
        if chunk_id is None:
            raise InputError(
                self.where,
                None,
                "a returned Document has no id (Document.id) and no chunk_id/doc_id/id in its metadata",
                "give the documents ids when you add them (Document(id=...) or ids=[...])",
            )
        return to_chunk(
            str(chunk_id), doc.page_content, metadata, position_score(position), tenant_key=self.tenant_key
        )


def _no_filter(tenant: str) -> None:
    return None


def _vector_store(retriever: Any) -> Any:
    vectorstores = require("langchain_core.vectorstores", "langchain-core", "langchain")
    if isinstance(retriever, vectorstores.VectorStoreRetriever):
        return retriever.vectorstore
    return None


def _parameters(function: Any) -> list[str]:
    try:
        return list(inspect.signature(function).parameters)
    except (TypeError, ValueError):
        return []


def adapt(obj: Any, *, tenant_key: str, where: str) -> LangChainRetriever:
    """``obj`` (a LangChain retriever, or a function ``make(tenant_id)`` returning one) as a ragaudit retriever."""
    return LangChainRetriever(obj, tenant_key=tenant_key, where=where)
