"""A service with **shared documents** (a public help centre every tenant may read), honest and leaky:
the proofs of ``--shared-tenant`` (docs/security.md, "Shared documents").

**Never use these to serve anything.** :class:`SharedHelpCentreRetriever` answers the caller with its
own documents (tenant-partitioned BM25) plus the best matches of the shared tenant's documents. With
``also_from`` set, it also serves that tenant's best match to every other caller: a real leak,
whatever is shared.

- without ``--shared-tenant public``: the help centre's chunks are leaks (every tenant is served them);
- with it: they are counted as shared, and the service is clean;
- ``also_from="globex"``: still a leak with the flag (globex's documents are not shared).
"""

from __future__ import annotations

from collections.abc import Sequence

from ragaudit.corpus.model import Chunk
from ragaudit.retrieval.protocol import RetrievedChunk
from ragaudit.security.leaky_base import Partitioned as _Partitioned

SHARED_HITS = 2
"""Help-centre matches added to each answer."""


class SharedHelpCentreRetriever(_Partitioned):
    """Own documents plus the shared tenant's best matches (and, with ``also_from``, a leak)."""

    def __init__(self, chunks: Sequence[Chunk], shared: str = "public", also_from: str | None = None) -> None:
        super().__init__(chunks)
        self.shared_tenant = shared
        self.also_from = also_from

    def answer(self, tenant_id: str, query: str, top_k: int) -> list[RetrievedChunk]:
        hits = self.own(tenant_id, query, top_k)
        if tenant_id != self.shared_tenant:
            hits += self.own(self.shared_tenant, query, SHARED_HITS)
        if self.also_from is not None and tenant_id != self.also_from:
            hits += self.own(self.also_from, query, 1)  # the bug: another tenant's document rides along
        return hits
