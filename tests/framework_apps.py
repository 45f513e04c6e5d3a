"""Retrievers built the way a LangChain, LlamaIndex or Haystack user builds them, over the demo KB,
each framework's own in-memory store, a deterministic hashing embedder (no model, no network); named by
``--retriever langchain:framework_apps:NAME`` in tests/test_framework_adapters.py. Honest ones filter by
tenant; the ``dropping_*`` ones lose the filter the way real code does."""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
from functools import cache
from importlib import resources
from typing import Any

# Haystack reports usage through posthog unless told not to: never from the tests (no network here anyway)
os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")

DIMENSIONS = 512


def demo_documents() -> list[dict[str, Any]]:
    text = resources.files("ragaudit.demo_data").joinpath("kb/corpus.jsonl").read_text("utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _metadata(doc: dict[str, Any]) -> dict[str, Any]:
    return {"tenant_id": doc["tenant_id"], "title": doc["title"], "doc_id": doc["doc_id"]}


def hash_vector(text: str) -> list[float]:
    """Bag of words hashed into DIMENSIONS buckets, L2-normalised: same text, same vector, always."""
    vector = [0.0] * DIMENSIONS
    for word in re.findall(r"\w+", text.lower()):
        bucket = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=4).digest(), "big")
        vector[bucket % DIMENSIONS] += 1.0
    norm = math.sqrt(sum(v * v for v in vector)) or 1.0
    return [v / norm for v in vector]


# --- LangChain -----------------------------------------------------------------------------------


def _langchain_embeddings() -> Any:
    from langchain_core.embeddings import Embeddings

    class HashEmbeddings(Embeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return [hash_vector(t) for t in texts]

        def embed_query(self, text: str) -> list[float]:
            return hash_vector(text)

    return HashEmbeddings()


@cache
def _langchain_store() -> Any:
    from langchain_core.documents import Document
    from langchain_core.vectorstores import InMemoryVectorStore

    store = InMemoryVectorStore(embedding=_langchain_embeddings())
    docs = demo_documents()
    store.add_documents(
        [Document(page_content=d["text"], metadata=_metadata(d)) for d in docs],
        ids=[d["doc_id"] for d in docs],
    )
    return store


def langchain_vector() -> Any:
    """Honest: the store's retriever; the adapter sends the tenant as filter= on every call."""
    return _langchain_store().as_retriever()


def langchain_bm25_per_tenant(tenant_id: str) -> Any:
    """Honest: LangChain's BM25Retriever over the tenant's own documents (it takes no filter)."""
    from langchain_community.retrievers import BM25Retriever
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever

    docs = [d for d in demo_documents() if d["tenant_id"] == tenant_id]
    if not docs:

        class Nothing(BaseRetriever):
            def _get_relevant_documents(self, query: str, *, run_manager: Any) -> list[Document]:
                return []

        return Nothing()
    documents = [Document(id=d["doc_id"], page_content=d["text"], metadata=_metadata(d)) for d in docs]
    return BM25Retriever.from_documents(documents, k=50)


def langchain_bm25_shared() -> Any:
    """The trap: one BM25Retriever over every tenant; its invoke() drops filter= silently."""
    from langchain_community.retrievers import BM25Retriever
    from langchain_core.documents import Document

    docs = demo_documents()
    return BM25Retriever.from_documents(
        [Document(id=d["doc_id"], page_content=d["text"], metadata=_metadata(d)) for d in docs], k=50
    )


def dropping_langchain() -> Any:
    """The trap the adapter cannot see: takes **kwargs, then searches without them."""
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever

    store = _langchain_store()

    class Forgetful(BaseRetriever):
        def _get_relevant_documents(self, query: str, *, run_manager: Any, **kwargs: Any) -> list[Document]:
            return list(store.similarity_search(query, k=kwargs.get("k", 10)))

    return Forgetful()


# --- LlamaIndex ----------------------------------------------------------------------------------


@cache
def llamaindex_index() -> Any:
    """Honest: a VectorStoreIndex (SimpleVectorStore); the adapter builds a filtered retriever per request."""
    from llama_index.core import VectorStoreIndex
    from llama_index.core.embeddings import BaseEmbedding
    from llama_index.core.schema import TextNode

    class HashEmbedding(BaseEmbedding):
        def _get_text_embedding(self, text: str) -> list[float]:
            return hash_vector(text)

        def _get_query_embedding(self, query: str) -> list[float]:
            return hash_vector(query)

        async def _aget_query_embedding(self, query: str) -> list[float]:
            return hash_vector(query)

    nodes = [
        TextNode(
            id_=d["doc_id"],
            text=d["text"],
            metadata=_metadata(d),
            excluded_embed_metadata_keys=["tenant_id", "doc_id"],
        )
        for d in demo_documents()
    ]
    return VectorStoreIndex(nodes, embed_model=HashEmbedding(embed_batch_size=64))


def dropping_llamaindex(filters: Any, top_k: int) -> Any:
    """The trap: a factory that takes the filters and builds the retriever without them."""
    return llamaindex_index().as_retriever(similarity_top_k=top_k)


def llamaindex_built() -> Any:
    """Refused: a retriever built once, its filters fixed."""
    return llamaindex_index().as_retriever(similarity_top_k=10)


# --- Haystack ------------------------------------------------------------------------------------


@cache
def _haystack_store() -> Any:
    from haystack import Document
    from haystack.document_stores.in_memory import InMemoryDocumentStore

    store = InMemoryDocumentStore()
    store.write_documents(
        [Document(id=d["doc_id"], content=d["text"], meta=_metadata(d)) for d in demo_documents()]
    )
    return store


def haystack_bm25() -> Any:
    """Honest: InMemoryBM25Retriever; the adapter sends filters={"field": "meta.tenant_id", ...}."""
    from haystack.components.retrievers.in_memory import InMemoryBM25Retriever

    return InMemoryBM25Retriever(_haystack_store())


def haystack_replace_policy() -> Any:
    """Refused: built with its own filter and filter_policy=REPLACE (the default)."""
    from haystack.components.retrievers.in_memory import InMemoryBM25Retriever

    only_docs = {"field": "meta.title", "operator": "!=", "value": ""}
    return InMemoryBM25Retriever(_haystack_store(), filters=only_docs)


def dropping_haystack() -> Any:
    """The trap the adapter cannot see: a component that takes filters= and does not pass them on."""
    from haystack import Document, component
    from haystack.components.retrievers.in_memory import InMemoryBM25Retriever

    inner = InMemoryBM25Retriever(_haystack_store())

    @component
    class Forgetful:
        @component.output_types(documents=list[Document])
        def run(
            self, query: str, filters: dict[str, Any] | None = None, top_k: int | None = None
        ) -> dict[str, Any]:
            return {"documents": inner.run(query=query, top_k=top_k)["documents"]}

    return Forgetful()


def llamaindex_wrong_key() -> Any:
    """From Python: the adapter told to filter on ``customer``, a key these nodes do not have."""
    from ragaudit.retrieval.adapters.llamaindex import LlamaIndexRetriever

    return LlamaIndexRetriever(llamaindex_index(), tenant_key="customer")


# --- a second stage over a framework's retriever (a pipeline TOML's [rerank]) --------------------


class TitleWordsReranker:
    """A reranker for the tests: how many of the query's words the candidate's text holds."""

    name = "title-words"

    async def score(self, query: str, texts: list[str]) -> list[float]:
        words = set(re.findall(r"\w+", query.lower()))
        return [float(len(words & set(re.findall(r"\w+", text.lower())))) for text in texts]


# --- a plain module:factory retriever (no framework): [retriever] type = "framework_apps:word_overlap" -


class WordOverlap:
    """Ranks the demo documents by shared words; ``scoped`` keeps the caller's tenant's only."""

    def __init__(self, scoped: bool) -> None:
        self.scoped = scoped
        self.docs = [(d, set(re.findall(r"\w+", d["text"].lower()))) for d in demo_documents()]

    async def search(self, *, tenant_id: str, query: str, top_k: int) -> list[dict[str, Any]]:
        words = set(re.findall(r"\w+", query.lower()))
        mine = [(d, w) for d, w in self.docs if not self.scoped or d["tenant_id"] == tenant_id]
        ranked = sorted(mine, key=lambda dw: (-len(words & dw[1]), dw[0]["doc_id"]))[:top_k]
        return [
            {"chunk_id": d["doc_id"], "score": float(len(words & w)), "content": d["text"]} for d, w in ranked
        ]


def word_overlap(scoped: bool = True) -> WordOverlap:
    return WordOverlap(scoped)
