"""The retriever contract (from the lesson this project implements).

Everything that retrieves implements :class:`Retriever`: the built-in pipelines, the HTTP adapter,
the run-file replayer and user plugins (``module:factory``). The list order is the ranking.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, TypedDict, runtime_checkable


class _RequiredChunk(TypedDict):
    chunk_id: str
    score: float
    content: str
    source_id: str


class RetrievedChunk(_RequiredChunk, total=False):
    """One retrieved chunk. ``tenant_id`` is the owner the retriever claims; ``metadata`` is free-form."""

    tenant_id: str
    metadata: Mapping[str, Any]


@runtime_checkable
class Retriever(Protocol):
    """Anything with ``async search(*, tenant_id, query, top_k) -> list[RetrievedChunk]``."""

    async def search(self, *, tenant_id: str, query: str, top_k: int) -> list[RetrievedChunk]:
        """Query the index with strictly enforced tenant filtering."""
        ...
