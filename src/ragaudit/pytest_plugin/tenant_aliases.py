"""``tenant_aliases``: the tenant ids your tests use mapped to the ids in the indexed corpus
(``tenant_acme=acme``). The retriever is asked for ``acme``, and chunks owned by ``acme`` come back
labelled ``tenant_acme``; chunks of any other tenant keep their owner, so a leak still shows. The
corpus's ownership index is asked on the callers' behalf under the same aliases."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ragaudit.retrieval.protocol import RetrievedChunk, Retriever


@dataclass(frozen=True)
class AliasedOwner:
    """An attribution whose caller is named by a tenant alias (``tenant_acme`` for the corpus's ``acme``)."""

    found: Any
    aliases: Mapping[str, str]

    @property
    def attributed(self) -> bool:
        return bool(self.found.attributed)

    @property
    def text_unfound(self) -> bool:
        return bool(self.found.text_unfound)

    def foreign_owners(self, caller: str) -> frozenset[str]:
        return frozenset(self.found.foreign_owners(self.aliases.get(caller, caller)))


@dataclass(frozen=True)
class AliasedOwnership:
    """The corpus's ownership index, asked on behalf of callers named by ``tenant_aliases``."""

    index: Any
    aliases: Mapping[str, str]

    def attribute_item(self, item: Any) -> AliasedOwner:
        return AliasedOwner(self.index.attribute_item(item), self.aliases)


class TenantAliasRetriever:
    """Ask the index for the aliased tenant; label the caller's own chunks with the caller's tenant id."""

    def __init__(self, inner: Retriever, aliases: Mapping[str, str]) -> None:
        self.inner = inner
        self.aliases = dict(aliases)

    async def search(self, *, tenant_id: str, query: str, top_k: int) -> list[RetrievedChunk]:
        index_tenant = self.aliases.get(tenant_id, tenant_id)
        chunks = await self.inner.search(tenant_id=index_tenant, query=query, top_k=top_k)
        if index_tenant == tenant_id:
            return chunks
        relabelled: list[RetrievedChunk] = []
        for chunk in chunks:
            if chunk.get("tenant_id") == index_tenant:
                chunk = {**chunk, "tenant_id": tenant_id}
            relabelled.append(chunk)
        return relabelled

    async def start_session(self, *, concurrency: int) -> None:
        """Pass the runner's session hooks through (an HTTP retriever sizes its pool there)."""
        start = getattr(self.inner, "start_session", None)
        if start is not None:
            await start(concurrency=concurrency)

    async def end_session(self) -> None:
        end = getattr(self.inner, "end_session", None)
        if end is not None:
            await end()
