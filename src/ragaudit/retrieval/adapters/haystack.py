"""A Haystack retriever component (``run(query, filters, top_k)`` -> ``{"documents": [...]}``) as a
ragaudit retriever.

Tenant filter mapping: every call is ``run(query=q, top_k=k, filters={"field": "meta.<tenant_key>",
"operator": "==", "value": tenant})``. Haystack names metadata fields ``meta.<key>``; the ``meta.`` prefix
is added here (a bare ``tenant_id`` would name a ``Document`` attribute that does not exist, and the
in-memory store would match nothing).

What comes back: ``Document.id``, ``content``, every ``meta`` field and ``score`` (``1 / (1 + position)``
when the component leaves it ``None``).

The traps: a component whose ``run`` takes no ``filters`` is refused; a component built with its own
``filters`` and ``filter_policy=REPLACE`` (Haystack's default) would have them replaced by the tenant
filter at run time, so it is refused with the fix (``FilterPolicy.MERGE``). A component that takes
``filters`` and ignores them cannot be told from the outside: the tenant audit reports its LEAKs.
"""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

from ragaudit.errors import InputError
from ragaudit.retrieval.adapters.common import position_score, require, to_chunk
from ragaudit.retrieval.protocol import RetrievedChunk
from ragaudit.retrieval.tenancy import require_tenant, require_top_k


def tenant_field(tenant_key: str) -> str:
    """The Haystack filter field of metadata key ``tenant_key``: ``meta.tenant_id`` for ``tenant_id``."""
    return tenant_key if tenant_key.startswith("meta.") else f"meta.{tenant_key}"


class HaystackRetriever:
    """``search(tenant_id, query, top_k)`` over a Haystack retriever component."""

    def __init__(self, component: Any, *, tenant_key: str = "tenant_id", where: str = "retriever") -> None:
        types = require("haystack.document_stores.types", "haystack-ai", "haystack")
        run = getattr(component, "run", None)
        if not callable(run):
            raise InputError(
                where, None, f"got a {type(component).__name__} without run()", "name a retriever component"
            )
        if "filters" not in inspect.signature(run).parameters:
            raise InputError(
                where,
                None,
                f"{type(component).__name__}.run takes no filters, so the tenant filter cannot be sent",
                "use a retriever whose run() takes filters=",
            )
        own = getattr(component, "filters", None)
        if own and getattr(component, "filter_policy", None) == types.FilterPolicy.REPLACE:
            raise InputError(
                where,
                None,
                f"{type(component).__name__} was built with filters={own!r} and filter_policy=REPLACE: the "
                "tenant filter sent at run time would replace them",
                "build it with filter_policy=FilterPolicy.MERGE (or without construction-time filters)",
            )
        self.component = component
        self.field = tenant_field(tenant_key)
        self.tenant_key = tenant_key.removeprefix("meta.")
        self._run_async = getattr(component, "run_async", None)

    async def search(self, *, tenant_id: str, query: str, top_k: int) -> list[RetrievedChunk]:
        tenant = require_tenant(tenant_id)
        top_k = require_top_k(top_k)
        filters = {"field": self.field, "operator": "==", "value": tenant}
        if callable(self._run_async):
            output = await self._run_async(query=query, filters=filters, top_k=top_k)
        else:
            output = await asyncio.to_thread(self.component.run, query=query, filters=filters, top_k=top_k)
        documents = output.get("documents", []) if isinstance(output, dict) else []
        return [self._chunk(doc, i) for i, doc in enumerate(documents[:top_k])]

    def _chunk(self, doc: Any, position: int) -> RetrievedChunk:
        score = doc.score if doc.score is not None else position_score(position)
        return to_chunk(str(doc.id), doc.content or "", doc.meta, score, tenant_key=self.tenant_key)


def adapt(obj: Any, *, tenant_key: str, where: str) -> HaystackRetriever:
    """``obj`` (a Haystack retriever component) as a ragaudit retriever."""
    return HaystackRetriever(obj, tenant_key=tenant_key, where=where)
