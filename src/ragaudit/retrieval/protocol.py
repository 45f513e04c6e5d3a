"""The retriever contract (from the lesson this project implements).

Everything that retrieves implements :class:`Retriever`: the built-in pipelines, the HTTP adapter,
the run-file replayer and user plugins (``module:factory``). The list order is the ranking.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, TypedDict, runtime_checkable

from ragaudit.corpus.model import Chunk


class _RequiredChunk(TypedDict):
    chunk_id: str
    score: float
    content: str
    source_id: str


class RetrievedChunk(_RequiredChunk, total=False):
    """One retrieved chunk. ``tenant_id`` is the owner the retriever claims; ``metadata`` is free-form;
    ``extra`` holds any other field the service returned (``title``, ``snippet``, ``highlight``, ...),
    which the tenant checks attribute like the rest (a Python retriever may also return such fields
    at the top level of its dicts)."""

    tenant_id: str
    metadata: Mapping[str, Any]
    extra: Mapping[str, Any]


class RetrievedList(list[RetrievedChunk]):
    """A ranking that also carries the whole response it came from, so the tenant checks can read every
    value of it, not only the chunk list: ``response`` is the parsed body (an HTTP service's JSON:
    ``debug``, ``facets``, ``suggest`` beside the results) and ``items_path`` the JSON path of the chunk
    list inside it (``$.results``; ``$`` for a body that is the list). A plain ``list`` works wherever
    this does."""

    def __init__(self, chunks: list[RetrievedChunk], response: Any = None, items_path: str = "$") -> None:
        super().__init__(chunks)
        self.response = response
        self.items_path = items_path


def chunk_result(chunk: Chunk, score: float) -> RetrievedChunk:
    """The protocol's result for one indexed chunk, as every built-in retriever shapes it: the chunk text
    as content, the document's ``source_id`` (else its id), the owner's tenant, and the chunk's metadata
    plus ``doc_id`` / ``start`` / ``end`` (and ``title``)."""
    metadata: dict[str, Any] = dict(chunk.metadata)
    metadata.update(doc_id=chunk.doc_id, start=chunk.start, end=chunk.end)
    if chunk.title:
        metadata.setdefault("title", chunk.title)
    source = chunk.metadata.get("source_id")
    return {
        "chunk_id": chunk.chunk_id,
        "score": score,
        "content": chunk.text,
        "source_id": source if isinstance(source, str) and source else chunk.doc_id,
        "tenant_id": chunk.tenant_id,
        "metadata": metadata,
    }


@runtime_checkable
class Retriever(Protocol):
    """Anything with ``async search(*, tenant_id, query, top_k) -> list[RetrievedChunk]``."""

    async def search(self, *, tenant_id: str, query: str, top_k: int) -> list[RetrievedChunk]:
        """Query the index with strictly enforced tenant filtering."""
        ...
