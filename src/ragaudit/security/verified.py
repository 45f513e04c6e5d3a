"""A retriever wrapper whose ``tenant_id`` labels come from the corpus, for label-trusting checks.

The lesson's security test asserts ``item.get("tenant_id") == caller`` for every returned chunk. On
its own that trusts the retriever's own label, so a service that relabels another tenant's chunk as
the caller's passes. Wrapped in :class:`CorpusLabeledRetriever`, the same unchanged test is sound:
every returned chunk's ``tenant_id`` is replaced by the owner the corpus gives
(:mod:`ragaudit.security.ownership`):

- a chunk foreign to the caller is labelled with a foreign owner (the first in sort order);
- a chunk the corpus attributes to the caller is labelled with the caller;
- a chunk nobody can be shown to own gets ``tenant_id: None`` (so a strict test flags it).

The retriever's own label is kept in ``metadata["claimed_tenant_id"]``; every finding is also
appended to :attr:`CorpusLabeledRetriever.leaks`, so a fixture can report them after the test.
Requests are passed through unchanged (including unusable tenant ids: refusing them is the wrapped
retriever's job, and the audit checks that it does).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ragaudit.data.run import to_ranked_items
from ragaudit.retrieval.protocol import RetrievedChunk, Retriever
from ragaudit.security.ownership import OwnershipIndex


@dataclass(frozen=True)
class ObservedLeak:
    """A foreign chunk seen through :class:`CorpusLabeledRetriever`."""

    caller: str | None
    query: str
    chunk_id: str
    rank: int
    owners: tuple[str, ...]
    claimed_tenant: str | None


@dataclass
class CorpusLabeledRetriever:
    """Wrap ``inner``; relabel its chunks with their corpus owner (see the module docstring)."""

    inner: Retriever
    ownership: OwnershipIndex
    leaks: list[ObservedLeak] = field(default_factory=list)

    async def search(self, *, tenant_id: str, query: str, top_k: int) -> list[RetrievedChunk]:
        results = await self.inner.search(tenant_id=tenant_id, query=query, top_k=top_k)
        return [self._relabel(tenant_id, query, rank, hit) for rank, hit in enumerate(results, start=1)]

    def _relabel(self, caller: str, query: str, rank: int, hit: Any) -> RetrievedChunk:
        chunk: dict[str, Any] = dict(hit) if isinstance(hit, dict) else dict(vars(hit))
        chunk_id = str(chunk.get("chunk_id"))
        who = self.ownership.attribute_item(to_ranked_items([{**chunk, "chunk_id": chunk_id or "?"}])[0])
        foreign = sorted(who.foreign_owners(caller))
        claimed = chunk.get("tenant_id")
        claimed = claimed if isinstance(claimed, str) else None
        if foreign:
            self.leaks.append(ObservedLeak(caller, query, chunk_id, rank, tuple(foreign), claimed))
        metadata = dict(chunk.get("metadata") or {})
        metadata["claimed_tenant_id"] = claimed
        chunk["metadata"] = metadata
        chunk["tenant_id"] = foreign[0] if foreign else (caller if who.attributed else None)
        return chunk  # type: ignore[return-value]
