"""A retriever as a Haystack user builds it: the knowledge base's documents in Haystack's own in-memory
store, each with its tenant in ``meta``, searched by ``InMemoryBM25Retriever``. Nothing here knows about
ragaudit or tenants at query time: ``--retriever haystack:examples.haystack_app:make_retriever`` wraps
it, and the adapter sends the caller's tenant as Haystack's own filter
(``{"field": "meta.tenant_id", "operator": "==", "value": ...}``; docs/integrations.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

CORPUS = Path(__file__).parent / "data" / "kb" / "corpus.jsonl"


def make_retriever() -> Any:
    """Index every document of the corpus (one JSON object a line) with its tenant and title as metadata."""
    from haystack import Document
    from haystack.components.retrievers.in_memory import InMemoryBM25Retriever
    from haystack.document_stores.in_memory import InMemoryDocumentStore

    rows = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]
    store = InMemoryDocumentStore()
    store.write_documents(
        [
            Document(
                id=r["doc_id"], content=r["text"], meta={"tenant_id": r["tenant_id"], "title": r["title"]}
            )
            for r in rows
        ]
    )
    return InMemoryBM25Retriever(store)
